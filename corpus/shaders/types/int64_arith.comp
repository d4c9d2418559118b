#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// 64-bit integers: add, sub, mul, div, rem (non-negative operands for %), negate, shifts
// by 0..63, bitwise ops, signed and unsigned comparisons, abs/sign/min/max/clamp, and
// 64-bit constants.
//! features shaderInt64
//! dispatch 1
//! buffer 0 storage 512 = i64 0 -1 9223372036854775807 -9223372036854775808 ; rand i64 -4000000000000000000 4000000000000000000 80
//! buffer 1 storage 512 = i64 1 -1 3 -7 ; rand i64 -3000000000 3000000000 81
//! buffer 2 storage 12288
//! check 2 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { int64_t v[]; } a;
layout(std430, binding = 1) readonly buffer B { int64_t v[]; } b;
layout(std430, binding = 2) writeonly buffer O { int64_t v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    int64_t x = a.v[i], y = b.v[i];
    if (y == 0l) y = 5l;
    uint64_t ux = uint64_t(x), uy = uint64_t(y);
    uint base = i * 24u;
    o.v[base] = x + y;
    o.v[base + 1u] = x - y;
    o.v[base + 2u] = x * y;
    o.v[base + 3u] = (x == -9223372036854775807l - 1l && y == -1l) ? 0l : x / y;
    o.v[base + 4u] = abs(x == -9223372036854775807l - 1l ? 0l : x) % abs(y);
    o.v[base + 5u] = int64_t(ux / uy);
    o.v[base + 6u] = int64_t(ux % uy);
    o.v[base + 7u] = -x;
    o.v[base + 8u] = x << (i & 63u);
    o.v[base + 9u] = x >> (i & 63u);
    o.v[base + 10u] = int64_t(ux >> (i & 63u));
    o.v[base + 11u] = (x & y) ^ (x | ~y);
    o.v[base + 12u] = int64_t(x < y) | int64_t(x <= y) << 1 | int64_t(x > y) << 2 | int64_t(x >= y) << 3
                    | int64_t(ux < uy) << 4 | int64_t(ux <= uy) << 5 | int64_t(ux > uy) << 6
                    | int64_t(ux >= uy) << 7 | int64_t(x == y) << 8 | int64_t(x != y) << 9;
    o.v[base + 13u] = min(x, y);
    o.v[base + 14u] = max(x, y);
    o.v[base + 15u] = int64_t(min(ux, uy));
    o.v[base + 16u] = int64_t(max(ux, uy));
    o.v[base + 17u] = clamp(x, -1000000000000l, y);
    o.v[base + 18u] = abs(x == -9223372036854775807l - 1l ? 1l : x);
    o.v[base + 19u] = sign(x);
    o.v[base + 20u] = x * 0x123456789abcdefl + 0x7eadbeef00000001l;
    o.v[base + 21u] = int64_t(clamp(ux, 100ul, 0xfffffffffffful));
    o.v[base + 22u] = x >> 63;
    o.v[base + 23u] = int64_t(i) - 32l;
}
