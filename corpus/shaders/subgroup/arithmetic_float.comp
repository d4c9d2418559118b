#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
// Float subgroup arithmetic: add, mul, min, max as reductions and scans, on values whose
// sums and products are exact in any order (small integers, powers of two), vec3 operands,
// and doubles.
//! features subgroup-basic subgroup-arithmetic shaderFloat64
//! warp-dependent
//! dispatch 2
//! buffer 0 storage 512 = rand i32 -100 100 113
//! buffer 1 storage 8192
//! buffer 2 storage 8192
//! check 1 exact
//! check 2 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer I { int v[]; } i_;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;
layout(std430, binding = 2) writeonly buffer D { double v[]; } d;

void main() {
    uint g = gl_GlobalInvocationID.x;
    float x = float(i_.v[g]);
    float p = exp2(float(i_.v[g] % 4));
    uint b = g * 16u;
    o.v[b] = subgroupAdd(x);
    o.v[b + 1u] = subgroupInclusiveAdd(x);
    o.v[b + 2u] = subgroupExclusiveAdd(x);
    o.v[b + 3u] = subgroupMul(p);
    o.v[b + 4u] = subgroupInclusiveMul(p);
    o.v[b + 5u] = subgroupExclusiveMul(p);
    o.v[b + 6u] = subgroupMin(x);
    o.v[b + 7u] = subgroupInclusiveMin(x);
    o.v[b + 8u] = subgroupExclusiveMin(x);
    o.v[b + 9u] = subgroupMax(x);
    o.v[b + 10u] = subgroupInclusiveMax(x);
    o.v[b + 11u] = subgroupExclusiveMax(x);
    vec3 v = subgroupAdd(vec3(x, p, 1.0));
    o.v[b + 12u] = v.x;
    o.v[b + 13u] = v.y;
    o.v[b + 14u] = v.z;
    o.v[b + 15u] = subgroupMax(-x);
    double dx = double(x) * 0.5lf;
    d.v[g * 8u] = subgroupAdd(dx);
    d.v[g * 8u + 1u] = subgroupInclusiveAdd(dx);
    d.v[g * 8u + 2u] = subgroupExclusiveMul(double(p));
    d.v[g * 8u + 3u] = subgroupMin(dx);
    d.v[g * 8u + 4u] = subgroupInclusiveMax(dx);
    d.v[g * 8u + 5u] = subgroupExclusiveMin(dx);
    dvec2 dv = subgroupMul(dvec2(double(p), 1.0lf));
    d.v[g * 8u + 6u] = dv.x;
    d.v[g * 8u + 7u] = dv.y;
}
