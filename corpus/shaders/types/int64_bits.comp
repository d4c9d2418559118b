#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// 64-bit bit operations: bitCount, findLSB, findMSB (unsigned; lavapipe crashes compiling
// the signed 64-bit FindSMsb, so it is left out), and spec-constant 64-bit arithmetic.
//! features shaderInt64
//! dispatch 1
//! spec 0 u64 0x123456789abcdef0
//! buffer 0 storage 512 = u64 0 0xffffffffffffffff 0x8000000000000000 1 0x100000000 ; rand u64 0 18446744073709551615 85
//! buffer 1 storage 2048
//! check 1 exact
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint64_t K = 1ul;
const uint64_t K2 = K * 3ul + (K >> 4);
layout(std430, binding = 0) readonly buffer A { uint64_t v[]; } a;
layout(std430, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    uint64_t x = a.v[i];
    o.v[8u * i] = uint(bitCount(x));
    o.v[8u * i + 1u] = uint(findLSB(x));
    o.v[8u * i + 2u] = uint(findMSB(x));
    o.v[8u * i + 3u] = uint(x >> 40);
    o.v[8u * i + 4u] = uint(K2 >> (i & 31u));
    o.v[8u * i + 5u] = uint((x ^ K) >> 32);
    o.v[8u * i + 6u] = uint(bitCount(i64vec2(x, ~x)).y);
    o.v[8u * i + 7u] = uint(x % 1000000007ul);
}
