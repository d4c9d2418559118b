#version 450
// Dynamic storage and uniform buffers: the same buffers bound with descriptor offsets and
// ranges, plus dynamic offsets given at bind time; a runtime array's length comes from the
// bound range.
//! dispatch 1
//! buffer 0 storage-dynamic 1024 offset 64 range 512 dynoffset 128 = iota u32
//! buffer 1 uniform-dynamic 1024 range 256 dynoffset 256 = iota u32 5000
//! buffer 2 storage 2048 offset 256
//! check 2 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer S { uint head; uint v[]; } s;
layout(std140, binding = 1) uniform U { uvec4 v[16]; } u;
layout(std430, binding = 2) writeonly buffer O { uint v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    o.v[4u * i] = s.head;
    o.v[4u * i + 1u] = s.v[i];
    o.v[4u * i + 2u] = u.v[i & 15u][i & 3u];
    o.v[4u * i + 3u] = uint(s.v.length());
}
