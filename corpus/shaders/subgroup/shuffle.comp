#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
// subgroupShuffle (dynamic lanes), subgroupShuffleXor, subgroupShuffleUp and Down (reads
// stay inside the subgroup: the source lanes are computed from gl_SubgroupSize), on uints,
// floats, vectors and doubles.
//! features subgroup-basic subgroup-shuffle subgroup-shuffle-relative shaderFloat64
//! warp-dependent
//! dispatch 2
//! buffer 0 storage 512 = rand u32 0 1000000 115
//! buffer 1 storage 8192
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer I { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uint g = gl_GlobalInvocationID.x;
    uint x = i_.v[g];
    uint n = gl_SubgroupSize, me = gl_SubgroupInvocationID;
    uint b = g * 16u;
    o.v[b] = subgroupShuffle(x, (me * 5u + 3u) % n);
    o.v[b + 1u] = subgroupShuffleXor(x, 1u);
    o.v[b + 2u] = subgroupShuffleXor(x, n - 1u);
    // Every lane shuffles (reading an inactive lane is undefined); lanes whose source is
    // outside the subgroup drop the result.
    uint up = subgroupShuffleUp(x, 2u);
    uint down = subgroupShuffleDown(x, 3u);
    o.v[b + 3u] = me >= 2u ? up : 0u;
    o.v[b + 4u] = me + 3u < n ? down : 0u;
    vec3 v = subgroupShuffle(vec3(float(x), float(g), -1.0), n - 1u - me);
    o.v[b + 5u] = floatBitsToUint(v.x); o.v[b + 6u] = floatBitsToUint(v.y); o.v[b + 7u] = floatBitsToUint(v.z);
    double d = subgroupShuffleXor(double(x) * 1e10lf, 2u);
    uvec2 dd = unpackDouble2x32(d);
    o.v[b + 8u] = dd.x; o.v[b + 9u] = dd.y;
    o.v[b + 10u] = subgroupShuffleUp(x, 0u) ^ subgroupShuffleDown(x, 0u);
    o.v[b + 11u] = subgroupShuffle(me, me);
    for (uint k = 12u; k < 16u; k++) o.v[b + k] = 0u;
}
