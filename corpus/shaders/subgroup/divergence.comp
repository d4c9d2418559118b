#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
// Subgroup operations see only the active invocations: inside if/else branches, inside a
// loop that lanes leave at different iterations, after an early return of some lanes, and
// after the branches reconverge (where every lane is active again).
//! features subgroup-basic subgroup-arithmetic subgroup-ballot
//! warp-dependent
//! dispatch 1
//! buffer 0 storage 256 = rand u32 0 9 118
//! buffer 1 storage 4096
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer I { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uint l = gl_LocalInvocationID.x;
    uint x = i_.v[l];
    uint b = l * 16u;
    if (x < 4u) {
        o.v[b] = subgroupAdd(x) | subgroupBallot(true).x << 16;
    } else if (x < 7u) {
        o.v[b] = subgroupMax(l) | subgroupBallotBitCount(subgroupBallot(true)) << 16;
    } else {
        o.v[b] = subgroupExclusiveAdd(1u) | subgroupInclusiveAdd(x) << 16;
    }
    o.v[b + 1u] = subgroupAdd(1u);
    uint acc = 0u;
    for (uint k = 0u; k < x; k++) {
        acc += subgroupAdd(k) + subgroupBallotBitCount(subgroupBallot(true)) * 100u;
        if (k == 5u && (l & 1u) == 1u) break;
    }
    o.v[b + 2u] = acc;
    o.v[b + 3u] = subgroupBallot(x > 2u).x;
    for (uint k = 4u; k < 16u; k++) o.v[b + k] = 0u;
    if ((l % 3u) == 0u) return;
    o.v[b + 4u] = subgroupBallot(true).x;
    o.v[b + 5u] = subgroupInclusiveAdd(l);
}
