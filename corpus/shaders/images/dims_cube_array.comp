#version 450
// A cube-array storage image (2 cubes, rgba16i): the third coordinate is face + 6 * cube;
// imageSize counts cubes.
//! features imageCubeArray
//! dispatch 1 1 2
//! image 0 storage cubearray r16g16b16a16_sint 2 2 1 layers 12 = rand i16 -3000 3000 64
//! image 1 storage cubearray r16g16b16a16_sint 2 2 1 layers 12
//! buffer 2 storage 16
//! check 1 exact
//! check 2 exact
layout(local_size_x = 2, local_size_y = 2, local_size_z = 6) in;
layout(rgba16i, binding = 0) readonly uniform iimageCubeArray a;
layout(rgba16i, binding = 1) writeonly uniform iimageCubeArray b;
layout(std430, binding = 2) writeonly buffer O { uint v[]; } o;

void main() {
    ivec3 p = ivec3(gl_LocalInvocationID.xy, gl_GlobalInvocationID.z);
    ivec4 v = imageLoad(a, p);
    imageStore(b, ivec3(p.y, p.x, 11 - p.z), v.wzyx / 2 + ivec4(p.z));
    if (gl_GlobalInvocationID == uvec3(0)) {
        ivec3 s = imageSize(a);
        o.v[0] = uint(s.x | s.y << 8 | s.z << 16);
    }
}
