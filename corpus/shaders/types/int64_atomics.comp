#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
// 64-bit atomics on a storage buffer and on shared memory: add, min/max (signed and
// unsigned), and/or/xor, exchange and compare-exchange; final values are order-free.
//! features shaderInt64 shaderBufferInt64Atomics shaderSharedInt64Atomics
//! dispatch 4
//! buffer 0 storage 128 = u64 0 0xffffffffffffffff 0 0x7fffffffffffffff 0x8000000000000000 0xffffffffffffffff 0 0 0 0
//! buffer 1 storage 256
//! check 0 exact
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint64_t add, umin, umax; int64_t smin, smax; uint64_t and_, or_, xor_, cas, count; } a;
layout(std430, binding = 1) writeonly buffer O { uint64_t v[]; } o;
shared uint64_t s_add, s_max, s_or;
shared int64_t s_min;

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint l = gl_LocalInvocationID.x;
    uint64_t h = uint64_t(id + 1u) * 0x9E3779B97F4A7C15ul;
    if (l == 0u) { s_add = 0ul; s_max = 0ul; s_or = 0ul; s_min = 0l; }
    barrier();
    atomicAdd(a.add, h);
    atomicMin(a.umin, h);
    atomicMax(a.umax, h);
    atomicMin(a.smin, int64_t(h));
    atomicMax(a.smax, int64_t(h));
    atomicAnd(a.and_, ~(1ul << (id & 63u)));
    atomicOr(a.or_, 1ul << ((id * 7u) & 63u));
    atomicXor(a.xor_, h);
    atomicCompSwap(a.cas, 0ul, 1ul);
    atomicAdd(a.count, 1ul);
    atomicAdd(s_add, h >> 8);
    atomicMax(s_max, h);
    atomicOr(s_or, 1ul << (l & 63u));
    atomicMin(s_min, int64_t(h));
    atomicExchange(a.cas, 7ul);
    barrier();
    if (l == 0u) {
        uint g = gl_WorkGroupID.x * 4u;
        o.v[g] = s_add; o.v[g + 1u] = s_max; o.v[g + 2u] = s_or; o.v[g + 3u] = uint64_t(s_min);
    }
}
