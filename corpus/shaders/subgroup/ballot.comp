#version 450
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
// subgroupBallot, subgroupInverseBallot, subgroupBallotBitExtract, subgroupBallotBitCount
// (and its inclusive/exclusive forms), subgroupBallotFindLSB/MSB, subgroupBroadcast (constant
// and dynamic lane) and subgroupBroadcastFirst, including inside a divergent branch.
//! features subgroup-basic subgroup-ballot subgroup-shuffle subgroupBroadcastDynamicId
//! warp-dependent
//! dispatch 1
//! buffer 0 storage 256 = rand u32 0 100 111
//! buffer 1 storage 3072
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer I { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uint l = gl_LocalInvocationID.x;
    uint x = i_.v[l];
    uint b = l * 12u;
    uvec4 bal = subgroupBallot(x > 40u);
    o.v[b] = bal.x;
    o.v[b + 1u] = bal.y | bal.z | bal.w;
    o.v[b + 2u] = uint(subgroupInverseBallot(bal)) | uint(subgroupBallotBitExtract(bal, (l * 3u) % gl_SubgroupSize)) << 1;
    o.v[b + 3u] = subgroupBallotBitCount(bal) | subgroupBallotInclusiveBitCount(bal) << 8 | subgroupBallotExclusiveBitCount(bal) << 16;
    uvec4 any1 = subgroupBallot(x != 1000u);
    o.v[b + 4u] = subgroupBallotFindLSB(bal | any1) | subgroupBallotFindMSB(any1) << 8;
    o.v[b + 5u] = subgroupBroadcast(x, 3u) + subgroupBroadcastFirst(x * 2u);
    uint dyn = (x * 7u) % gl_SubgroupSize;
    o.v[b + 6u] = subgroupShuffle(x, dyn);
    o.v[b + 7u] = floatBitsToUint(subgroupBroadcast(vec2(float(x), -float(l)), 1u).y);
    if (x > 50u) {
        uvec4 inner = subgroupBallot(true);
        o.v[b + 8u] = inner.x;
        o.v[b + 9u] = subgroupBroadcastFirst(l) | subgroupBallotBitCount(inner) << 16;
        o.v[b + 10u] = uint(subgroupElect());
    }
    o.v[b + 11u] = subgroupBallotExclusiveBitCount(subgroupBallot(true));
}
