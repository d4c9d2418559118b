#version 450
#extension GL_EXT_nonuniform_qualifier : require
// Arrays of storage and uniform buffers indexed by constants, by a uniform value, and
// non-uniformly per invocation (nonuniformEXT), across two descriptor sets.
//! features shaderStorageBufferArrayNonUniformIndexing shaderUniformBufferArrayNonUniformIndexing
//! dispatch 1
//! push u32 2
//! buffer 0[0] storage 64 = iota u32 100
//! buffer 0[1] storage 64 = iota u32 200
//! buffer 0[2] storage 64 = iota u32 300
//! buffer 0[3] storage 64 = iota u32 400
//! buffer 1.0[0] uniform 64 = iota u32 1000 3
//! buffer 1.0[1] uniform 64 = iota u32 2000 5
//! buffer 1.1 storage 1024
//! check 1.1 exact
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint pick; } pc;
layout(std430, set = 0, binding = 0) readonly buffer S { uint v[16]; } s[4];
layout(std140, set = 1, binding = 0) uniform U { uvec4 v[4]; } u[2];
layout(std430, set = 1, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    uint k = i & 15u;
    o.v[4u * i] = s[1].v[k] + s[3].v[15u - k];
    o.v[4u * i + 1u] = s[pc.pick].v[k];
    o.v[4u * i + 2u] = s[nonuniformEXT(i & 3u)].v[(i >> 2) & 15u];
    o.v[4u * i + 3u] = u[nonuniformEXT(i & 1u)].v[(i >> 1) & 3u][i & 3u] + u[0].v[3].w;
}
