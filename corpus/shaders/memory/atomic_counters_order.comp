#version 450
// atomicAdd as an allocator: every invocation appends its id to a list at the slot the
// atomic returned; the list is compared after sorting-free checks (each id appears once,
// recorded in a bitmap), and the final counter.
//! dispatch 16
//! buffer 0 storage 16
//! buffer 1 storage 128
//! check 0 exact
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer C { uint count; uint maxSlot; } c;
layout(std430, binding = 1) buffer B { uint bits[]; } b;

void main() {
    uint id = gl_GlobalInvocationID.x;
    if ((id % 3u) == 0u) return;
    uint slot = atomicAdd(c.count, 1u);
    atomicMax(c.maxSlot, slot);
    atomicOr(b.bits[id / 32u], 1u << (id % 32u));
}
