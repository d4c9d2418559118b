#version 450
#extension GL_KHR_shader_subgroup_clustered : require
// Clustered reductions (cluster sizes 1, 2, 4 and 8): add, mul, min, max, and, or, xor on
// ints and add/max on floats.
//! features subgroup-basic subgroup-clustered
//! warp-dependent
//! dispatch 1
//! buffer 0 storage 256 = rand i32 -1000 1000 116
//! buffer 1 storage 4096
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer I { int v[]; } i_;
layout(std430, binding = 1) writeonly buffer O { int v[]; } o;

void main() {
    uint l = gl_LocalInvocationID.x;
    int x = i_.v[l];
    uint b = l * 16u;
    o.v[b] = subgroupClusteredAdd(x, 1u);
    o.v[b + 1u] = subgroupClusteredAdd(x, 2u);
    o.v[b + 2u] = subgroupClusteredAdd(x, 4u);
    o.v[b + 3u] = subgroupClusteredAdd(x, 8u);
    o.v[b + 4u] = subgroupClusteredMul(x & 3, 4u);
    o.v[b + 5u] = subgroupClusteredMin(x, 2u);
    o.v[b + 6u] = subgroupClusteredMax(x, 8u);
    o.v[b + 7u] = int(subgroupClusteredMin(uint(x), 4u));
    o.v[b + 8u] = subgroupClusteredAnd(x, 2u);
    o.v[b + 9u] = subgroupClusteredOr(x, 4u);
    o.v[b + 10u] = subgroupClusteredXor(x, 8u);
    o.v[b + 11u] = floatBitsToInt(subgroupClusteredAdd(float(x), 4u));
    o.v[b + 12u] = floatBitsToInt(subgroupClusteredMax(float(x) * 0.5, 2u));
    o.v[b + 13u] = int(subgroupClusteredAnd(x > 0, 4u));
    ivec2 v = subgroupClusteredAdd(ivec2(x, 1), 2u);
    o.v[b + 14u] = v.x;
    o.v[b + 15u] = v.y;
}
