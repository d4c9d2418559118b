#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
// Bitcasts between types of different component widths: i16vec2 <-> int (pack32/unpack16),
// u8vec4 <-> uint (pack32/unpack8), f16vec2 <-> uint, u16vec4 <-> uint64 and f16vec4 <->
// u16vec4, i16vec4 <-> int64, ivec2 <-> double, and f16 <-> uint16.
//! features shaderInt16 shaderInt8 shaderFloat16 shaderInt64 shaderFloat64 storageBuffer16BitAccess
//! dispatch 1
//! buffer 0 storage 512 = rand u32 0 0xfbfffbff 104
//! buffer 1 storage 4096
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uvec2 v[]; } a;
layout(std430, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    uvec2 w = a.v[i];
    uint base = i * 16u;
    i16vec2 s = i16vec2(unpack16(w.x));
    o.v[base] = uint(int(s.x) * 3 + int(s.y));
    o.v[base + 1u] = uint(pack32(s.yx + i16vec2(1s, -1s)));
    u8vec4 b = unpack8(w.y);
    o.v[base + 2u] = uint(b.x) + uint(b.w) * 256u;
    o.v[base + 3u] = pack32(b.wzyx);
    f16vec2 h = unpackFloat2x16(w.x & 0xbbffbbffu);
    o.v[base + 4u] = packFloat2x16(h * 2.0hf);
    uint64_t u64 = packUint2x32(w);
    f16vec4 h4 = uint16BitsToFloat16(unpack16(u64 & 0xbbffbbffbbffbbfful));
    uint64_t back = pack64(float16BitsToUint16(h4.wzyx * 2.0hf));
    o.v[base + 5u] = uint(back);
    o.v[base + 6u] = uint(back >> 32);
    i16vec4 q = unpack16(int64_t(u64));
    int64_t q2 = pack64(q + i16vec4(1s));
    o.v[base + 7u] = uint(q2);
    o.v[base + 8u] = uint(q2 >> 32);
    double dbl = packDouble2x32(uvec2(w.x, w.y & 0x7fefffffu));
    uvec2 dd = unpackDouble2x32(dbl * 2.0lf);
    o.v[base + 9u] = dd.x;
    o.v[base + 10u] = dd.y;
    o.v[base + 11u] = uint(float16BitsToUint16(h.x));
    o.v[base + 12u] = floatBitsToUint(float(uint16BitsToFloat16(uint16_t(w.y & 0xbbffu))));
    o.v[base + 13u] = uint(unpack8(int16_t(s.x)).y);
    o.v[base + 14u] = uint(int(pack16(unpack8(int16_t(s.y)))));
    o.v[base + 15u] = uint(int(int8_t(b.z)));
}
