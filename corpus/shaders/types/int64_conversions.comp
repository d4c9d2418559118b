#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// 64-bit integer conversions: to and from 32-bit ints (sign- and zero-extension,
// truncation), to and from float (in range), to bool, bitcasts to uvec2/ivec2 (packing
// and unpacking 64-bit values), 64-bit vectors, and 64-bit integers in a struct.
//! features shaderInt64
//! dispatch 1
//! buffer 0 storage 512 = rand i64 -9000000000000000000 9000000000000000000 82
//! buffer 1 storage 256 = rand i32 -2000000000 2000000000 83
//! buffer 2 storage 256 = rand f32 -1e15 1e15 84
//! buffer 3 storage 8192
//! check 3 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { int64_t v[]; } a;
layout(std430, binding = 1) readonly buffer B { int v[]; } b;
layout(std430, binding = 2) readonly buffer C { float v[]; } c;
struct S { uint a; uint64_t b; i64vec2 c; };
layout(std430, binding = 3) writeonly buffer O { S s[64]; uint w[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    int64_t x = a.v[i];
    int n = b.v[i];
    float f = c.v[i];
    uvec2 parts = unpackUint2x32(uint64_t(x));
    ivec2 sparts = unpackInt2x32(x);
    o.s[i].a = uint(x) ^ parts.y;
    o.s[i].b = packUint2x32(parts.yx) + uint64_t(int64_t(n)) + uint64_t(uint(n));
    o.s[i].c = i64vec2(int64_t(f), int64_t(sparts.x) * 3l);
    uint base = i * 8u;
    o.w[base] = floatBitsToUint(float(x));
    o.w[base + 1u] = floatBitsToUint(float(uint64_t(x)));
    o.w[base + 2u] = uint(bool(x)) | uint(bool(x & 1l)) << 1;
    o.w[base + 3u] = uint(uint64_t(abs(f)) >> 20);
    o.w[base + 4u] = uint(int(x >> 40));
    u64vec2 v2 = u64vec2(uint64_t(x), uint64_t(n)) * u64vec2(3ul, 0x100000001ul);
    o.w[base + 5u] = uint(v2.x >> 32) ^ uint(v2.y);
    o.w[base + 6u] = uint(packInt2x32(sparts.yx) == int64_t(uint64_t(x) >> 32 | uint64_t(x) << 32));
    o.w[base + 7u] = uint(int64_t(n) * int64_t(n) >> 31);
}
