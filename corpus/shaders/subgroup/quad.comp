#version 450
#extension GL_KHR_shader_subgroup_quad : require
// Quad operations: subgroupQuadBroadcast of each of the four lanes, and the horizontal,
// vertical and diagonal swaps, on uints, floats and vectors.
//! features subgroup-basic subgroup-quad
//! warp-dependent
//! dispatch 1
//! buffer 0 storage 256 = rand u32 0 1000000 117
//! buffer 1 storage 4096
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer I { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uint l = gl_LocalInvocationID.x;
    uint x = i_.v[l];
    uint b = l * 16u;
    o.v[b] = subgroupQuadBroadcast(x, 0u);
    o.v[b + 1u] = subgroupQuadBroadcast(x, 1u);
    o.v[b + 2u] = subgroupQuadBroadcast(x, 2u);
    o.v[b + 3u] = subgroupQuadBroadcast(x, 3u);
    o.v[b + 4u] = subgroupQuadSwapHorizontal(x);
    o.v[b + 5u] = subgroupQuadSwapVertical(x);
    o.v[b + 6u] = subgroupQuadSwapDiagonal(x);
    vec2 v = subgroupQuadSwapDiagonal(vec2(float(x), float(l)));
    o.v[b + 7u] = floatBitsToUint(v.x);
    o.v[b + 8u] = floatBitsToUint(v.y);
    uvec3 w = subgroupQuadBroadcast(uvec3(x, l, 7u), 2u);
    o.v[b + 9u] = w.x; o.v[b + 10u] = w.y; o.v[b + 11u] = w.z;
    for (uint k = 12u; k < 16u; k++) o.v[b + k] = 0u;
}
