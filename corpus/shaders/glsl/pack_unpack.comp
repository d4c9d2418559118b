#version 450
// PackSnorm4x8, PackUnorm4x8, PackSnorm2x16, PackUnorm2x16, PackHalf2x16 and their unpack
// counterparts. Packing is exact; unpacking divides by 127/255/32767/65535, allowed 1 ULP.
//! dispatch 1
//! buffer 0 storage 1024 = f32 0 1 -1 0.5 -0.5 2 -2 0.25 ; rand f32 -1.5 1.5 28
//! buffer 1 storage 256 = bytes 29
//! buffer 2 storage 1280
//! buffer 3 storage 8192
//! check 2 exact
//! check 3 f32 ulp 1
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { vec4 v[]; } a;
layout(std430, binding = 1) readonly buffer B { uint v[]; } b;
layout(std430, binding = 2) writeonly buffer P { uint v[]; } p;
layout(std430, binding = 3) writeonly buffer U { vec4 v[]; } u;

void main() {
    uint i = gl_LocalInvocationID.x;
    vec4 v = a.v[i];
    uint w = b.v[i];
    p.v[5u * i] = packSnorm4x8(v);
    p.v[5u * i + 1u] = packUnorm4x8(v);
    p.v[5u * i + 2u] = packSnorm2x16(v.xy);
    p.v[5u * i + 3u] = packUnorm2x16(v.zw);
    p.v[5u * i + 4u] = packHalf2x16(v.xy * 1000.0);
    u.v[8u * i] = unpackSnorm4x8(w);
    u.v[8u * i + 1u] = unpackUnorm4x8(w);
    u.v[8u * i + 2u] = vec4(unpackSnorm2x16(w), unpackUnorm2x16(w));
    // Half values: infinities and NaNs are left out (w keeps both exponents below 31).
    u.v[8u * i + 3u] = vec4(unpackHalf2x16(w & 0xbbffbbffu), 0.0, 0.0);
    u.v[8u * i + 4u] = unpackSnorm4x8(packSnorm4x8(v));
    u.v[8u * i + 5u] = unpackUnorm4x8(packUnorm4x8(v));
    u.v[8u * i + 6u] = vec4(unpackUnorm2x16(packUnorm2x16(v.zw)), unpackSnorm2x16(packSnorm2x16(v.xy)));
    u.v[8u * i + 7u] = vec4(unpackUnorm2x16(0xffff0000u), unpackSnorm2x16(0x80007fffu));
}
