#version 450
// Early returns from main and from functions, inside loops and branches, so some lanes of
// a warp finish while the others keep running (and still write their results).
//! dispatch 2
//! buffer 0 storage 512 = rand u32 0 100 41
//! buffer 1 storage 512 = u32 0xdeadbeef ; iota u32 0xdead0000
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) buffer Out { uint v[]; } o;

uint firstMultiple(uint x, uint m) {
    for (uint k = x; k < x + 50u; k++) {
        if (k % m == 0u) return k;
        if (k == 77u) return 1u;
    }
    return 0u;
}

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint x = i_.v[id];
    if (x < 10u) return;
    if (x > 90u) {
        o.v[id] = 90u;
        return;
    }
    for (uint k = 0u; k < 8u; k++) {
        if (x + k == 50u) {
            o.v[id] = 5000u + k;
            return;
        }
    }
    o.v[id] = firstMultiple(x, 7u + (id & 3u));
}
