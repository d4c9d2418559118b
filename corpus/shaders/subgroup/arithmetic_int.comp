#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
// Integer subgroup arithmetic: add, mul, min, max (signed and unsigned), and, or, xor, as
// reductions, inclusive and exclusive scans; vectors; boolean and/or/xor.
//! features subgroup-basic subgroup-arithmetic
//! warp-dependent
//! dispatch 2
//! buffer 0 storage 512 = rand i32 -1000000 1000000 112
//! buffer 1 storage 12288
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer I { int v[]; } i_;
layout(std430, binding = 1) writeonly buffer O { int v[]; } o;

void main() {
    uint g = gl_GlobalInvocationID.x;
    int x = i_.v[g];
    uint u = uint(x);
    uint b = g * 24u;
    o.v[b] = subgroupAdd(x);
    o.v[b + 1u] = subgroupInclusiveAdd(x);
    o.v[b + 2u] = subgroupExclusiveAdd(x);
    o.v[b + 3u] = subgroupMul(x | 1);
    o.v[b + 4u] = subgroupInclusiveMul(x & 7);
    o.v[b + 5u] = subgroupExclusiveMul((x & 3) + 1);
    o.v[b + 6u] = subgroupMin(x);
    o.v[b + 7u] = subgroupInclusiveMin(x);
    o.v[b + 8u] = subgroupExclusiveMax(x);
    o.v[b + 9u] = int(subgroupMin(u));
    o.v[b + 10u] = int(subgroupExclusiveMin(u));
    o.v[b + 11u] = int(subgroupInclusiveMax(u));
    o.v[b + 12u] = subgroupAnd(x);
    o.v[b + 13u] = subgroupInclusiveOr(x);
    o.v[b + 14u] = subgroupExclusiveXor(x);
    o.v[b + 15u] = subgroupXor(x);
    ivec2 v = subgroupInclusiveAdd(ivec2(x, 1));
    o.v[b + 16u] = v.x;
    o.v[b + 17u] = v.y;
    o.v[b + 18u] = int(subgroupAnd(x > 0)) | int(subgroupOr(x > 900000)) << 1 | int(subgroupXor(x > 0)) << 2;
    o.v[b + 19u] = int(subgroupInclusiveOr(x > 500000)) | int(subgroupExclusiveAnd(x < 0)) << 1;
    o.v[b + 20u] = subgroupMax(x);
    o.v[b + 21u] = int(subgroupMax(u));
    o.v[b + 22u] = subgroupExclusiveAdd(1);
    o.v[b + 23u] = subgroupExclusiveMin(x);
}
