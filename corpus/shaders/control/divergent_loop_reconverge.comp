#version 450
// Divergence and reconvergence inside loops: each lane runs a different number of
// iterations with a data-dependent branch inside, and after the loop every lane of the
// workgroup meets at a barrier and reads what the others wrote.
//! glslang -Os
//! dispatch 2
//! buffer 0 storage 512 = rand u32 0 30 61
//! buffer 1 storage 1024
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uint v[]; } o;
shared uint s[64];

void main() {
    uint l = gl_LocalInvocationID.x;
    uint id = gl_GlobalInvocationID.x;
    uint n = i_.v[id];
    uint x = id;
    for (uint k = 0u; k < n; k++) {
        if ((x & 1u) == 0u) {
            x = x / 2u + k;
        } else {
            x = 3u * x + 1u;
            if (x > 1000u) { x -= 1000u; continue; }
        }
        x ^= k;
    }
    s[l] = x;
    barrier();
    o.v[2u * id] = x;
    o.v[2u * id + 1u] = s[63u - l] + s[(l + 1u) % 64u];
}
