#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
// 8/16-bit integers, halves and doubles in workgroup shared memory and in local arrays
// indexed dynamically (private memory), and structs mixing them.
//! features shaderInt16 shaderInt8 shaderFloat16 shaderInt64 shaderFloat64
//! dispatch 2
//! buffer 0 storage 512 = rand i32 -30000 30000 105
//! buffer 1 storage 8192
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { int v[]; } a;
layout(std430, binding = 1) writeonly buffer O { uint v[]; } o;
struct Mixed { int8_t b; int16_t s; float16_t h; double d; uint64_t u; };
shared Mixed sm[64];
shared int16_t s16[64];

void main() {
    uint l = gl_LocalInvocationID.x;
    uint id = gl_GlobalInvocationID.x;
    int x = a.v[id];
    sm[l] = Mixed(int8_t(x), int16_t(x), float16_t(float(x & 1023) * 0.25), double(x) * 1.5lf, uint64_t(x) * 3ul);
    s16[l] = int16_t(x >> 3);
    barrier();
    Mixed m = sm[(l + 5u) & 63u];
    int16_t arr[8];
    double darr[8];
    for (uint k = 0u; k < 8u; k++) {
        arr[k] = s16[(l + k) & 63u];
        darr[k] = double(arr[k]) * 0.5lf;
    }
    uint dyn = uint(x) & 7u;
    arr[dyn] = int16_t(arr[dyn] * 2s);
    uint base = id * 16u;
    o.v[base] = uint(int(m.b));
    o.v[base + 1u] = uint(int(m.s));
    o.v[base + 2u] = floatBitsToUint(float(m.h));
    o.v[base + 3u] = uint(int(m.d));
    o.v[base + 4u] = uint(m.u >> 4);
    o.v[base + 5u] = uint(int(arr[dyn]) + int(arr[(dyn + 1u) & 7u]));
    o.v[base + 6u] = uint(int(darr[dyn] * 4.0lf));
    o.v[base + 7u] = uint(int(int16_t(x) * int16_t(3)));
    int64_t big = int64_t(x) * 100000000l;
    o.v[base + 8u] = uint(big >> 20);
    o.v[base + 9u] = uint(int(int8_t(x) >> int8_t(2)));
    for (uint k = 10u; k < 16u; k++) o.v[base + k] = k;
}
