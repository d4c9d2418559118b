#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
// 16-bit integers in registers and in storage buffers: wrap-around add/sub/mul, signed and
// unsigned division, remainders, shifts, comparisons, min/max/clamp/abs/sign, bit counts
// and conversions to and from 32-bit ints and floats. (16-bit findLSB and signed findMSB
// are left out: lavapipe stores the first to the wrong element and crashes on the second.)
//! features shaderInt16 storageBuffer16BitAccess
//! dispatch 1
//! buffer 0 storage 128 = i16 0 -1 32767 -32768 1 -7 ; rand i16 -32768 32767 90
//! buffer 1 storage 128 = i16 1 -1 3 -1 5 2 ; rand i16 -300 300 91
//! buffer 2 storage 4096
//! check 2 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { int16_t v[]; } a;
layout(std430, binding = 1) readonly buffer B { int16_t v[]; } b;
layout(std430, binding = 2) writeonly buffer O { int16_t v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    int16_t x = a.v[i], y = b.v[i];
    if (y == 0s) y = 3s;
    uint16_t ux = uint16_t(x), uy = uint16_t(y);
    uint base = i * 32u;
    o.v[base] = x + y;
    o.v[base + 1u] = x - y;
    o.v[base + 2u] = x * y;
    o.v[base + 3u] = (x == -32768s && y == -1s) ? 0s : x / y;
    o.v[base + 4u] = int16_t(uint16_t(abs(int(x))) % uint16_t(abs(int(y))));
    o.v[base + 5u] = int16_t(ux / uy);
    o.v[base + 6u] = int16_t(ux % uy);
    o.v[base + 7u] = -x;
    o.v[base + 8u] = x << int16_t(i & 15u);
    o.v[base + 9u] = x >> int16_t(i & 15u);
    o.v[base + 10u] = int16_t(ux >> uint16_t(i & 15u));
    o.v[base + 11u] = (x & y) ^ (x | ~y);
    o.v[base + 12u] = int16_t(int(x < y) | int(x <= y) << 1 | int(x > y) << 2 | int(x >= y) << 3
                    | int(ux < uy) << 4 | int(ux <= uy) << 5 | int(ux > uy) << 6 | int(ux >= uy) << 7
                    | int(x == y) << 8 | int(x != y) << 9);
    o.v[base + 13u] = min(x, y);
    o.v[base + 14u] = max(x, y);
    o.v[base + 15u] = int16_t(min(ux, uy));
    o.v[base + 16u] = int16_t(max(ux, uy));
    o.v[base + 17u] = clamp(x, -1000s, 20000s);
    o.v[base + 18u] = abs(x == -32768s ? 1s : x);
    o.v[base + 19u] = sign(x);
    o.v[base + 20u] = int16_t(int(x) * 3);
    o.v[base + 21u] = int16_t(float(x) * 0.5);
    o.v[base + 22u] = int16_t(uint(ux) >> 3);
    o.v[base + 23u] = int16_t(bitCount(x));
    o.v[base + 24u] = int16_t(ux >> 9);
    o.v[base + 25u] = int16_t(x >> 9);
    o.v[base + 26u] = int16_t(findMSB(ux));
    o.v[base + 27u] = int16_t(bitfieldExtract(x, 3, 7));
    o.v[base + 28u] = int16_t(bitfieldReverse(ux));
    o.v[base + 29u] = x * x * x + 12345s;
    o.v[base + 30u] = int16_t(i16vec2(x, y).yx.x);
    o.v[base + 31u] = int16_t(x % 7s == 0s ? 1 : 0) + int16_t(ux / 7us);
}
