#version 450
// Sin, Cos (absolute error 2^-11 on [-pi, pi] each), Tan, Asin, Acos, Atan, Atan2, the
// hyperbolic functions and their inverses (precision inherited from their formulas),
// Radians and Degrees.
//! dispatch 1
//! buffer 0 storage 512 = rand f32 -3.14159 3.14159 20
//! buffer 1 storage 512 = rand f32 -0.99 0.99 21
//! buffer 2 storage 8192
//! check 2 f32 ulp 2 abs 2e-3 rel 2e-3
layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer A { float v[]; } a;
layout(std430, binding = 1) readonly buffer B { float v[]; } b;
layout(std430, binding = 2) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    float x = a.v[i];
    float u = b.v[i];
    uint base = i * 16u;
    o.v[base] = sin(x);
    o.v[base + 1u] = cos(x);
    o.v[base + 2u] = tan(x * 0.4);
    o.v[base + 3u] = asin(u);
    o.v[base + 4u] = acos(u);
    o.v[base + 5u] = atan(x * 3.0);
    o.v[base + 6u] = atan(u, x);
    o.v[base + 7u] = sinh(u * 2.0);
    o.v[base + 8u] = cosh(u * 2.0);
    o.v[base + 9u] = tanh(x);
    o.v[base + 10u] = asinh(x);
    o.v[base + 11u] = acosh(2.0 + abs(x));
    o.v[base + 12u] = atanh(u * 0.9);
    o.v[base + 13u] = radians(x * 57.0);
    o.v[base + 14u] = degrees(x);
    o.v[base + 15u] = sin(x) * sin(x) + cos(x) * cos(x);
}
