#version 450
// Every 32-bit atomic on a storage buffer, from many invocations of several workgroups at
// once: add, min/max (signed and unsigned), and/or/xor, exchange and compare-exchange.
// Most final values are order-independent, and so are the few facts checked about the values
// the atomics returned (exactly one invocation saw each initial value). The value an
// exchange leaves behind depends on the order, so that word (bytes 32..36) is not compared.
//! dispatch 8
//! buffer 0 storage 64 = u32 0 0xffffffff 0 2147483647 -2147483648 0xffffffff 0 0 0 0 0
//! buffer 1 storage 64
//! check 0 exact bytes 0 32
//! check 0 exact bytes 36 64
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { uint add; uint umin; uint umax; int smin; int smax; uint and_; uint or_; uint xor_; uint xchg; uint cas; uint count; } a;
layout(std430, binding = 1) buffer R { uint sum; uint orv; uint casWins; uint xchgSeen; } r;

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint h = id * 2654435761u;
    uint old = atomicAdd(a.add, (h >> 8) | 1u); // never adds 0
    atomicAdd(r.sum, old == 0u ? 1u : 0u); // exactly one invocation came first
    atomicMin(a.umin, h | 1u);
    atomicMax(a.umax, h);
    atomicMin(a.smin, int(h));
    atomicMax(a.smax, int(h));
    atomicAnd(a.and_, ~(1u << (id & 31u)) | (id & 0x100u));
    atomicOr(a.or_, 1u << (id & 31u));
    atomicOr(r.orv, 1u << (id & 3u));
    atomicXor(a.xor_, h);
    uint prev = atomicExchange(a.xchg, id + 1u);
    atomicAdd(r.xchgSeen, uint(prev == 0u)); // values are never 0: exactly one
    if (atomicCompSwap(a.cas, 0u, id + 1u) == 0u) atomicAdd(r.casWins, 1u);
    atomicAdd(a.count, 1u);
    // Exactly one compare-exchange succeeded; which one depends on the order.
    if (id == 0u) a.cas = a.cas != 0u ? 1u : 0u;
}
