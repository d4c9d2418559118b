#version 450
// Function-scope arrays written and read at dynamic indices (a bubble sort and a histogram),
// vectors and matrix columns indexed dynamically, and a constant array indexed by a
// run-time value.
//! dispatch 2
//! buffer 0 storage 1024 = rand u32 0 15 13
//! buffer 1 storage 2048
//! check 1 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uint v[]; } o;

const uint primes[8] = uint[8](2u, 3u, 5u, 7u, 11u, 13u, 17u, 19u);

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint a[8];
    for (uint i = 0u; i < 8u; ++i) a[i] = i_.v[(id * 8u + i) % 256u];
    for (uint i = 0u; i < 8u; ++i)
        for (uint j = 0u; j + 1u < 8u - i; ++j)
            if (a[j] > a[j + 1u]) { uint t = a[j]; a[j] = a[j + 1u]; a[j + 1u] = t; }
    uint hist[4] = uint[4](0u, 0u, 0u, 0u);
    for (uint i = 0u; i < 8u; ++i) hist[a[i] / 4u]++;
    vec4 v = vec4(1.0, 2.0, 3.0, 4.0);
    v[a[0] & 3u] += 10.0;
    mat3 m = mat3(1.0);
    m[a[7] % 3u][a[6] % 3u] = 5.0;
    m[id % 3u] *= 2.0;
    uint s = 0u;
    for (uint i = 0u; i < 8u; ++i) s = s * 3u + a[i];
    o.v[id * 8u + 0u] = s;
    o.v[id * 8u + 1u] = hist[0] | hist[1] << 8 | hist[2] << 16 | hist[3] << 24;
    o.v[id * 8u + 2u] = floatBitsToUint(v[id & 3u]);
    o.v[id * 8u + 3u] = floatBitsToUint(m[0][0] + m[1][1] * 3.0 + m[2][2] * 9.0 + m[a[3] % 3u][a[4] % 3u]);
    o.v[id * 8u + 4u] = primes[a[5] & 7u] * primes[id & 7u];
    o.v[id * 8u + 5u] = a[id & 7u];
    o.v[id * 8u + 6u] = uint(a.length());
    o.v[id * 8u + 7u] = 0u;
}
