#version 450
// 1D and 3D storage images (rgba32f, r32ui): loads, stores at computed coordinates, and
// imageSize.
//! dispatch 1
//! image 0 storage 1d r32g32b32a32_sfloat 16 1 1 = rand f32 -8 8 60
//! image 1 storage 1d r32g32b32a32_sfloat 16 1 1
//! image 2 storage 3d r32_uint 4 4 4 = iota u32 7 3
//! image 3 storage 3d r32_uint 4 4 4
//! buffer 4 storage 64
//! check 1 exact
//! check 3 exact
//! check 4 exact
layout(local_size_x = 4, local_size_y = 4, local_size_z = 4) in;
layout(rgba32f, binding = 0) readonly uniform image1D a;
layout(rgba32f, binding = 1) writeonly uniform image1D b;
layout(r32ui, binding = 2) readonly uniform uimage3D c;
layout(r32ui, binding = 3) writeonly uniform uimage3D d;
layout(std430, binding = 4) writeonly buffer O { uint v[]; } o;

void main() {
    ivec3 p = ivec3(gl_LocalInvocationID);
    if (p.y == 0 && p.z == 0) {
        for (int k = 0; k < 4; k++) {
            int x = p.x * 4 + k;
            imageStore(b, 15 - x, imageLoad(a, x).wzyx * 2.0);
        }
    }
    uint v = imageLoad(c, p).x;
    imageStore(d, p.zxy, uvec4(v * 5u + uint(p.x), 0u, 0u, 0u));
    if (gl_LocalInvocationIndex == 0u) {
        o.v[0] = uint(imageSize(a));
        o.v[1] = uint(imageSize(b));
        ivec3 s = imageSize(c);
        o.v[2] = uint(s.x | s.y << 8 | s.z << 16);
    }
}
