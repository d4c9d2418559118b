#version 450
#extension GL_ARB_gpu_shader_fp64 : require
// GLSL built-ins on doubles that Vulkan requires to be exact or correctly rounded:
// abs, sign, floor, ceil, trunc, round-to-even, fract, mod, min, max, clamp, mix, step,
// fma, sqrt (the spec allows 2 ULP; checked as 2 ULP), and frexp/ldexp.
//! features shaderFloat64
//! dispatch 1
//! buffer 0 storage 1024 = rand f64 -1000 1000 31
//! buffer 1 storage 8192
//! check 1 f64 ulp 2
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { dvec4 v[32]; } i_;
layout(std430, binding = 1) writeonly buffer Out { dvec4 v[]; } o;

void main() {
    uint id = gl_LocalInvocationID.x;
    dvec4 a = i_.v[id], b = i_.v[(id + 9u) % 32u];
    o.v[id * 8u + 0u] = abs(a) + sign(b);
    o.v[id * 8u + 1u] = floor(a) + ceil(b) * 1000.0;
    o.v[id * 8u + 2u] = trunc(a) + roundEven(b * 0.5) * 1000.0;
    o.v[id * 8u + 3u] = fract(a) + mod(a, dvec4(7.0, -3.0, 0.5, 11.0));
    o.v[id * 8u + 4u] = min(a, b) + max(a, b) * 3.0 + clamp(a, -10.0, 10.0);
    o.v[id * 8u + 5u] = mix(a, b, dvec4(0.25)) + step(a, b) + mix(a, b, lessThan(a, b));
    o.v[id * 8u + 6u] = fma(a, b, a) + sqrt(abs(a));
    ivec4 e;
    dvec4 m = frexp(a, e);
    o.v[id * 8u + 7u] = ldexp(m, e + 3) + dvec4(e);
}
