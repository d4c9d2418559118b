#version 450
// Conversions between int, uint, float and bool, in both directions; float-to-int inputs
// stay in range (out-of-range conversions are undefined).
//! dispatch 1
//! buffer 0 storage 256 = rand f32 -2000000 2000000 5
//! buffer 1 storage 256 = rand i32 -2000000000 2000000000 6
//! buffer 2 storage 2048
//! check 2 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float v[]; } a;
layout(std430, binding = 1) readonly buffer B { int v[]; } b;
layout(std430, binding = 2) writeonly buffer O { uint v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    float f = a.v[i];
    int n = b.v[i];
    uint u = uint(n);
    uint base = i * 8u;
    o.v[base] = uint(int(f));
    o.v[base + 1u] = uint(abs(f));
    o.v[base + 2u] = floatBitsToUint(float(n));
    o.v[base + 3u] = floatBitsToUint(float(u));
    o.v[base + 4u] = uint(bool(n)) | uint(bool(f)) << 1 | uint(bool(i & 1u)) << 2;
    o.v[base + 5u] = floatBitsToUint(float(bool(n & 1)));
    o.v[base + 6u] = uint(int(float(n >> 8)));
    o.v[base + 7u] = floatBitsToUint(float(u >> 3));
}
