#version 450
// Runtime-sized arrays of structs at the end of a storage block: .length() from the bound
// range, indexing past a fixed-size header, and structs with padding in std430.
//! dispatch 1
//! buffer 0 storage 1040 = u32 3 0 0 0 ; rand i32 -100 100 41
//! buffer 1 storage 1024 range 400
//! check 1 exact
layout(local_size_x = 64) in;
struct E { ivec3 p; int w; vec2 f; };
layout(std430, binding = 0) buffer In { uint n; E e[]; } i_;
layout(std430, binding = 1) buffer Out { uint len; int v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    if (i == 0u) o.len = uint(i_.e.length()) * 1000u + uint(o.v.length());
    uint k = i % uint(i_.e.length());
    E e = i_.e[k];
    if (i < uint(o.v.length())) o.v[i] = e.p.x + e.p.y * e.p.z + e.w + int(i_.n);
}
