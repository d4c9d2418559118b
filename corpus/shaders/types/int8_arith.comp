#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
// 8-bit integers in registers and in storage buffers: wrap-around arithmetic, signed and
// unsigned division and comparisons, shifts, vectors of int8, conversions, and packing four
// bytes into a uint through a bitcast (pack32/unpack8).
//! features shaderInt8 storageBuffer8BitAccess
//! dispatch 1
//! buffer 0 storage 64 = i8 0 -1 127 -128 1 -7 ; bytes 92
//! buffer 1 storage 64 = i8 1 -1 3 -1 5 2 ; rand i8 -20 20 93
//! buffer 2 storage 1024
//! buffer 3 storage 256
//! check 2 exact
//! check 3 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { int8_t v[]; } a;
layout(std430, binding = 1) readonly buffer B { int8_t v[]; } b;
layout(std430, binding = 2) writeonly buffer O { int8_t v[]; } o;
layout(std430, binding = 3) writeonly buffer P { uint v[]; } p;

void main() {
    uint i = gl_LocalInvocationID.x;
    int8_t x = a.v[i], y = b.v[i];
    if (y == int8_t(0)) y = int8_t(3);
    uint8_t ux = uint8_t(x), uy = uint8_t(y);
    uint base = i * 16u;
    o.v[base] = x + y;
    o.v[base + 1u] = x - y;
    o.v[base + 2u] = x * y;
    o.v[base + 3u] = (x == int8_t(-128) && y == int8_t(-1)) ? int8_t(0) : x / y;
    o.v[base + 4u] = int8_t(ux / uy);
    o.v[base + 5u] = int8_t(ux % uy);
    o.v[base + 6u] = -x;
    o.v[base + 7u] = x >> int8_t(i & 7u);
    o.v[base + 8u] = int8_t(ux >> uint8_t(i & 7u));
    o.v[base + 9u] = x << int8_t(i & 7u);
    o.v[base + 10u] = int8_t(int(x < y) | int(ux < uy) << 1 | int(x >= y) << 2 | int(ux >= uy) << 3);
    o.v[base + 11u] = min(x, y) + max(x, y);
    o.v[base + 12u] = int8_t(int(x) * int(y) >> 4);
    o.v[base + 13u] = int8_t(float(x) * 0.25);
    o.v[base + 14u] = ~x;
    o.v[base + 15u] = abs(x == int8_t(-128) ? int8_t(0) : x);
    i8vec4 v = i8vec4(x, y, x + y, x - y);
    p.v[i] = pack32(v) ^ uint(pack32(u8vec4(unpack8(i * 0x01020304u)) * uint8_t(3)));
}
