#version 450
// Control and memory barriers: a producer/consumer hand-off within a workgroup through
// shared memory and through a storage buffer (memoryBarrierBuffer + barrier), repeated
// over several rounds with groupMemoryBarrier.
//! dispatch 2
//! buffer 0 storage 2048
//! buffer 1 storage 512
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) coherent buffer Scratch { uint v[]; } sc;
layout(std430, binding = 1) writeonly buffer Out { uint v[]; } o;
shared uint s[64];

void main() {
    uint l = gl_LocalInvocationID.x;
    uint base = gl_WorkGroupID.x * 64u;
    uint acc = l;
    for (uint round = 0u; round < 5u; round++) {
        s[l] = acc * 3u + round;
        sc.v[base + l] = acc + round * 1000u;
        memoryBarrierBuffer();
        groupMemoryBarrier();
        barrier();
        acc = s[(l + 1u) & 63u] + sc.v[base + ((l + 7u) & 63u)];
        barrier();
    }
    o.v[base + l] = acc;
}
