#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
// A workgroup of 13 invocations (not a multiple of any subgroup size): the last subgroup is
// partial, and its reductions, ballots and counts cover only the lanes that exist.
//! features subgroup-basic subgroup-arithmetic subgroup-ballot
//! warp-dependent
//! dispatch 3
//! buffer 0 storage 1024
//! check 0 exact
layout(local_size_x = 13) in;
layout(std430, binding = 0) writeonly buffer O { uint v[]; } o;

void main() {
    uint g = gl_GlobalInvocationID.x;
    uint b = g * 4u;
    o.v[b] = subgroupAdd(g + 1u);
    o.v[b + 1u] = subgroupBallot(true).x;
    o.v[b + 2u] = gl_NumSubgroups | gl_SubgroupID << 8 | gl_SubgroupInvocationID << 16;
    o.v[b + 3u] = subgroupExclusiveMul(2u);
}
