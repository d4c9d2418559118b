#version 450
// Four descriptor sets with gaps in binding numbers, storage images and buffers mixed.
//! dispatch 1
//! buffer 0.3 storage 64 = iota u32 1
//! buffer 2.0 uniform 64 = iota u32 10
//! buffer 3.7 storage 64 = iota u32 100
//! image 1.2 storage 2d r32_uint 4 4 1 = iota u32 1000
//! buffer 3.1 storage 256
//! check 3.1 exact
layout(local_size_x = 16) in;
layout(std430, set = 0, binding = 3) readonly buffer A { uint v[16]; } a;
layout(std140, set = 2, binding = 0) uniform B { uvec4 v[4]; } b;
layout(std430, set = 3, binding = 7) readonly buffer C { uint v[16]; } c;
layout(r32ui, set = 1, binding = 2) readonly uniform uimage2D img;
layout(std430, set = 3, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    o.v[4u * i] = a.v[i];
    o.v[4u * i + 1u] = b.v[i >> 2][i & 3u];
    o.v[4u * i + 2u] = c.v[15u - i];
    o.v[4u * i + 3u] = imageLoad(img, ivec2(i & 3u, i >> 2)).x;
}
