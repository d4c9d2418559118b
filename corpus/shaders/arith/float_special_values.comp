#version 450
// Infinities, NaNs and signed zeros: isnan/isinf, ordered and unordered comparisons
// (glslang emits ordered ones for <, ==, and unordered for !=), arithmetic producing
// and propagating them, division by zero, and the sign of zero through products and sums.
// NaN results are compared as "is NaN" flags (their payload bits are not specified).
//! dispatch 1
//! buffer 0 storage 64 = f32 0 -0 1 -1 inf -inf nan 3.5
//! buffer 1 storage 2048
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { float v[8]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uvec2 v[]; } o;

void main() {
    uint id = gl_LocalInvocationID.x;
    float a = i_.v[id & 7u];
    float b = i_.v[id >> 3];
    uint cmp = uint(a < b) | uint(a <= b) << 1 | uint(a > b) << 2 | uint(a >= b) << 3
             | uint(a == b) << 4 | uint(a != b) << 5 | uint(isnan(a)) << 6 | uint(isinf(b)) << 7;
    float s = a + b, p = a * b, q = a / b, d = a - b;
    uint nan = uint(isnan(s)) | uint(isnan(p)) << 1 | uint(isnan(q)) << 2 | uint(isnan(d)) << 3;
    uint bits = 0u;
    if (!isnan(s)) bits ^= floatBitsToUint(s);
    if (!isnan(p)) bits ^= floatBitsToUint(p) * 3u;
    if (!isnan(q)) bits ^= floatBitsToUint(q) * 5u;
    if (!isnan(d)) bits ^= floatBitsToUint(d) * 7u;
    o.v[id] = uvec2(cmp | nan << 8, bits);
}
