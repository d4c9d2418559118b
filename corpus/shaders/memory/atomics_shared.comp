#version 450
// Atomics on workgroup shared memory (add, min, max, and, or, xor, exchange,
// compare-exchange), a histogram built with atomicAdd, then written out after a barrier.
//! dispatch 4
//! buffer 0 storage 4096 = rand u32 0 31 33
//! buffer 1 storage 1024
//! check 1 exact
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uint v[]; } o;
shared uint hist[32];
shared uint mn, mx, an, orr, xr, cas;

void main() {
    uint l = gl_LocalInvocationID.x;
    uint x = i_.v[gl_GlobalInvocationID.x];
    if (l < 32u) hist[l] = 0u;
    if (l == 0u) { mn = 0xffffffffu; mx = 0u; an = 0xffffffffu; orr = 0u; xr = 0u; cas = 0u; }
    barrier();
    atomicAdd(hist[x], 1u);
    atomicMin(mn, x * 7u + l);
    atomicMax(mx, x * 3u + l);
    atomicAnd(an, ~(1u << x));
    atomicOr(orr, 1u << x);
    atomicXor(xr, x * 0x01010101u);
    atomicCompSwap(cas, 0u, l + 1u);
    barrier();
    uint base = gl_WorkGroupID.x * 64u;
    if (l < 32u) o.v[base + l] = hist[l];
    if (l == 32u) {
        o.v[base + 32u] = mn;
        o.v[base + 38u] = atomicExchange(mn, 5u); // returns what was read just above
    }
    if (l == 33u) o.v[base + 33u] = mx;
    if (l == 34u) o.v[base + 34u] = an;
    if (l == 35u) o.v[base + 35u] = orr;
    if (l == 36u) o.v[base + 36u] = xr;
    if (l == 37u) o.v[base + 37u] = uint(cas != 0u);
    if (l > 38u && l < 64u) o.v[base + l] = 0u;
}
