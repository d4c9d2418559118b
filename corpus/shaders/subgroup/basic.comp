#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
// Subgroup built-ins (size, invocation id, subgroup id and count, the five lane masks),
// subgroupElect, subgroupBarrier and the subgroup memory barriers, on two workgroups of 64.
//! features subgroup-basic subgroup-ballot
//! warp-dependent
//! dispatch 2
//! buffer 0 storage 4096
//! check 0 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer O { uint v[]; } o;
shared uint s[64];

void main() {
    uint g = gl_GlobalInvocationID.x, l = gl_LocalInvocationID.x;
    uint b = g * 8u;
    o.v[b] = gl_SubgroupSize;
    o.v[b + 1u] = gl_SubgroupInvocationID | gl_SubgroupID << 8 | gl_NumSubgroups << 16;
    o.v[b + 2u] = uint(subgroupElect());
    o.v[b + 3u] = gl_SubgroupEqMask.x ^ gl_SubgroupEqMask.y;
    o.v[b + 4u] = gl_SubgroupGeMask.x ^ gl_SubgroupGtMask.x << 1;
    o.v[b + 5u] = gl_SubgroupLeMask.x + gl_SubgroupLtMask.x * 3u + gl_SubgroupLtMask.w;
    s[l] = l * 7u;
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    // The neighbour within the subgroup (the subgroup is the same on both drivers here).
    uint n = (gl_SubgroupInvocationID + 1u) % gl_SubgroupSize + gl_SubgroupID * gl_SubgroupSize;
    o.v[b + 6u] = s[n];
    subgroupMemoryBarrier();
    subgroupMemoryBarrierBuffer();
    o.v[b + 7u] = uint(gl_SubgroupInvocationID == 0u) + uint(subgroupElect()) * 2u;
}
