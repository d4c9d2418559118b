#version 450
// 32-bit integer wrap-around: overflowing adds, subtracts and multiplies (signed and
// unsigned), negation of INT_MIN, shifts by every amount 0..31 (arithmetic and logical),
// unsigned division and remainder by large divisors, and signed division rounding toward
// zero (never INT_MIN / -1, which SPIR-V leaves undefined).
//! dispatch 1
//! buffer 0 storage 256 = rand u32 0 0xffffffff 17
//! buffer 1 storage 4096
//! check 1 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { uint v[64]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uvec4 v[]; } o;

void main() {
    uint id = gl_LocalInvocationID.x;
    uint ua = i_.v[id], ub = i_.v[id + 32u];
    int a = int(ua), b = int(ub);
    int mn = int(0x80000000u);
    int bd = b == -1 ? 3 : (b == 0 ? 7 : b);
    uint s = id;
    o.v[id * 4u + 0u] = uvec4(ua + ub, ua - ub, ua * ub, uint(a * b));
    o.v[id * 4u + 1u] = uvec4(uint(-mn), uint(mn - 1), uint(a >> s), ua >> s);
    o.v[id * 4u + 2u] = uvec4(ua << s, uint(a << s), ua / (ub | 0x10000000u), ua % (ub | 1u));
    o.v[id * 4u + 3u] = uvec4(uint(a / bd), uint(-a / bd), uint((a >> 4) / 7), uint(a / -3));
}
