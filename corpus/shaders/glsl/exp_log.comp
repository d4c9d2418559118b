#version 450
// Exp and Exp2 (3 + 2|x| ULP), Log and Log2 (3 ULP, absolute 2^-21 near 1), Pow
// (inherited from exp2(y * log2(x))), Sqrt (inherited from 1/inversesqrt) and InverseSqrt
// (2 ULP). Tolerances are the sum of both drivers' allowances.
//! dispatch 1
//! buffer 0 storage 512 = rand f32 -10 10 22
//! buffer 1 storage 512 = f32 1 2 4 0.25 ; rand f32 0.01 1000 23
//! buffer 2 storage 4096
//! check 2 f32 ulp 64 abs 4e-6 rel 2e-5
layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer A { float v[]; } a;
layout(std430, binding = 1) readonly buffer B { float v[]; } b;
layout(std430, binding = 2) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    float x = a.v[i];
    float p = b.v[i];
    uint base = i * 8u;
    o.v[base] = exp(x);
    o.v[base + 1u] = exp2(x);
    o.v[base + 2u] = log(p);
    o.v[base + 3u] = log2(p);
    o.v[base + 4u] = pow(p, x * 0.3);
    o.v[base + 5u] = sqrt(p);
    o.v[base + 6u] = inversesqrt(p);
    o.v[base + 7u] = pow(2.0, floor(x));
}
