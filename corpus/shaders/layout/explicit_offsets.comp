#version 450
#extension GL_EXT_scalar_block_layout : require
// Explicit layout(offset = N) and layout(align = N) members in std430, std140 and scalar
// blocks, members declared out of offset order, and a block whose runtime array starts at
// an explicit offset.
//! features scalarBlockLayout
//! dispatch 1
//! buffer 0 uniform 256 = iota u32 1 1
//! buffer 1 storage 256 = iota u32 100 3
//! buffer 2 storage 512
//! check 2 exact
layout(local_size_x = 8) in;
layout(std140, binding = 0) uniform U { layout(offset = 48) uvec2 late; layout(offset = 16) uint early; layout(offset = 100) uint odd; } u;
layout(scalar, binding = 1) readonly buffer S { layout(offset = 4) uvec3 v; layout(offset = 20) uint w; layout(offset = 64) uint tail[]; } s;
layout(std430, binding = 2) writeonly buffer O { layout(offset = 32) uvec4 a[8]; layout(align = 64) uint b; layout(offset = 224) uint c[8]; } o;

void main() {
    uint id = gl_LocalInvocationID.x;
    o.a[id] = uvec4(u.late, u.early, u.odd) + uvec4(s.v, s.w) * id;
    o.c[id] = s.tail[id] + s.tail[7u - id];
    if (id == 0u) o.b = uint(s.tail.length());
}
