#version 450
// Loops inside one side of a divergent branch and a branch inside a loop that itself sits
// in a loop; the loop bound is a uniform push constant on one path, per-lane on the other.
//! dispatch 1
//! push u32 9
//! buffer 0 storage 256 = rand u32 0 25 91
//! buffer 1 storage 256
//! check 1 exact
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint n; } pc;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uint v[]; } o;

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint x = i_.v[id];
    uint r = 0u;
    if (x > 12u) {
        for (uint k = 0u; k < pc.n; k++) r += k * x;
    } else {
        for (uint k = 0u; k < x; k++) {
            for (uint j = 0u; j < 3u; j++) {
                if (((k + j) & 1u) == 1u) r += j; else r ^= k << j;
            }
        }
    }
    o.v[id] = r;
}
