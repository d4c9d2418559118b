#version 450
// 1D-array and 2D-array storage images (r32i, rgba8ui): the layer coordinate, loads and
// stores across layers, and imageSize with its layer count.
//! dispatch 1
//! image 0 storage 1darray r32_sint 8 1 1 layers 3 = rand i32 -1000 1000 61
//! image 1 storage 1darray r32_sint 8 1 1 layers 3
//! image 2 storage 2darray r8g8b8a8_uint 4 4 1 layers 4 = bytes 62
//! image 3 storage 2darray r8g8b8a8_uint 4 4 1 layers 4
//! buffer 4 storage 64
//! check 1 exact
//! check 3 exact
//! check 4 exact
layout(local_size_x = 4, local_size_y = 4, local_size_z = 4) in;
layout(r32i, binding = 0) readonly uniform iimage1DArray a;
layout(r32i, binding = 1) writeonly uniform iimage1DArray b;
layout(rgba8ui, binding = 2) readonly uniform uimage2DArray c;
layout(rgba8ui, binding = 3) writeonly uniform uimage2DArray d;
layout(std430, binding = 4) writeonly buffer O { uint v[]; } o;

void main() {
    ivec3 p = ivec3(gl_LocalInvocationID);
    if (p.z < 3 && p.y < 2) {
        int x = p.x * 2 + p.y;
        ivec2 at = ivec2(x, p.z);
        imageStore(b, ivec2(7 - x, 2 - p.z), imageLoad(a, at) * 2 - 1);
    }
    uvec4 t = imageLoad(c, p);
    imageStore(d, ivec3(p.y, p.x, 3 - p.z), t.yzwx / 2u);
    if (gl_LocalInvocationIndex == 0u) {
        ivec2 s = imageSize(a);
        ivec3 s3 = imageSize(c);
        o.v[0] = uint(s.x | s.y << 8);
        o.v[1] = uint(s3.x | s3.y << 8 | s3.z << 16);
    }
}
