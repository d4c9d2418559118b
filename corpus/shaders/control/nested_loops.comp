#version 450
// Nested loops whose inner trip count depends on the outer index and the lane, with a
// labelled-style break out of the inner loop and a continue of the outer loop.
//! glslang -Os
//! dispatch 1
//! buffer 0 storage 256 = rand u32 1 12 21
//! buffer 1 storage 512
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uint v[]; } o;

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint n = i_.v[id];
    uint acc = 0u, steps = 0u;
    for (uint i = 0u; i < n; i++) {
        if (i == 5u && (id & 1u) == 1u) continue;
        for (uint j = i; j < n + id % 4u; j++) {
            steps++;
            if (j * i > 20u) break;
            for (uint k = 0u; k < (j & 3u); k++) {
                acc += i * 100u + j * 10u + k;
                if (acc % 7u == 3u) break;
            }
        }
    }
    o.v[2u * id] = acc;
    o.v[2u * id + 1u] = steps;
}
