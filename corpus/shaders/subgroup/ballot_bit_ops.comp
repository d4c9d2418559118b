#version 450
#extension GL_KHR_shader_subgroup_ballot : require
// Ballot bit operations on ballots of divergent predicates: subgroupBallotBitCount,
// InclusiveBitCount, ExclusiveBitCount, FindLSB, FindMSB, BitExtract and
// subgroupInverseBallot, used to compact values (stream compaction within a subgroup).
//! dispatch 4
//! warp-dependent
//! buffer 0 storage 1024 = rand u32 0 100 59
//! buffer 1 storage 4096
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) buffer Out { uvec4 v[]; } o;

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint x = i_.v[id];
    bool keep = x > 40u;
    uvec4 b = subgroupBallot(keep);
    uint total = subgroupBallotBitCount(b);
    uint slot = subgroupBallotExclusiveBitCount(b);
    uint incl = subgroupBallotInclusiveBitCount(b);
    uint first = subgroupBallotFindLSB(b), last = subgroupBallotFindMSB(b);
    bool mine = subgroupBallotBitExtract(b, gl_SubgroupInvocationID);
    bool inv = subgroupInverseBallot(uvec4(0x55555555u));
    uint sg = id / gl_SubgroupSize;
    if (keep) o.v[sg * gl_SubgroupSize + slot].x = x;
    o.v[id].y = total * 1000u + incl;
    o.v[id].z = total == 0u ? 0xffffu : first * 256u + last;
    o.v[id].w = uint(mine == keep) + 2u * uint(inv);
    if (!keep) o.v[sg * gl_SubgroupSize + total + gl_SubgroupInvocationID - slot].x = 1000u + x;
}
