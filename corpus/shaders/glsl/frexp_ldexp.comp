#version 450
// Frexp (out-parameter and struct forms, on normal numbers and zeros) and Ldexp (including
// results that over- and underflow to infinity and zero, and exponents past the float
// range). Exact.
//! dispatch 1
//! buffer 0 storage 512 = f32 0 -0 1 -1 0.5 3 1e30 -1e-30 ; rand f32 -1000 1000 26
//! buffer 1 storage 512 = i32 0 1 -1 200 -200 300 -300 127 ; rand i32 -140 140 27
//! buffer 2 storage 2048
//! check 2 exact
layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer A { float v[]; } a;
layout(std430, binding = 1) readonly buffer B { int v[]; } b;
layout(std430, binding = 2) writeonly buffer O { uint v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    float x = a.v[i];
    int e = b.v[i];
    int ex;
    float m = frexp(x, ex);
    o.v[4u * i] = floatBitsToUint(m);
    o.v[4u * i + 1u] = uint(ex);
    float l = ldexp(m, ex);
    o.v[4u * i + 2u] = floatBitsToUint(l);
    o.v[4u * i + 3u] = floatBitsToUint(ldexp(1.5, e));
}
