#version 450
#extension GL_KHR_shader_subgroup_vote : require
// subgroupAll, subgroupAny and subgroupAllEqual on uniform and varying values (int, float
// with +0/-0, vectors, bools), also inside a divergent branch where only half the lanes
// vote.
//! features subgroup-basic subgroup-vote
//! warp-dependent
//! dispatch 1
//! buffer 0 storage 256 = rand u32 0 3 110
//! buffer 1 storage 2048
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer I { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uint l = gl_LocalInvocationID.x;
    uint x = i_.v[l];
    uint b = l * 8u;
    o.v[b] = uint(subgroupAll(x < 3u)) | uint(subgroupAny(x == 3u)) << 1 | uint(subgroupAll(true)) << 2;
    o.v[b + 1u] = uint(subgroupAllEqual(x)) | uint(subgroupAllEqual(l / 64u)) << 1;
    float z = (l & 1u) == 0u ? 0.0 : -0.0;
    o.v[b + 2u] = uint(subgroupAllEqual(z)) | uint(subgroupAllEqual(vec2(1.0, float(x > 5u)))) << 1;
    o.v[b + 3u] = uint(subgroupAllEqual(uvec3(1u, x >> 2, 7u))) | uint(subgroupAllEqual(x == 1u)) << 1;
    if ((l & 1u) == 1u) {
        o.v[b + 4u] = uint(subgroupAll(x != 0u)) | uint(subgroupAny(x == 0u)) << 1 | uint(subgroupAllEqual(l & 1u)) << 2;
    } else {
        o.v[b + 4u] = uint(subgroupAllEqual(x)) << 3;
    }
    o.v[b + 5u] = uint(subgroupAny(l == 63u));
    o.v[b + 6u] = 0u;
    o.v[b + 7u] = 0u;
}
