#version 450
// switch inside loops: `continue` and `break` out of the loop from case bodies, a default
// label in the middle of the cases, fall-through chains, and a
// selector computed per iteration (divergent across the subgroup).
//! dispatch 2
//! buffer 0 storage 256 = rand u32 0 1000 7
//! buffer 1 storage 256
//! check 1 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uint v[]; } o;

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint x = i_.v[id];
    uint acc = 0u;
    for (uint i = 0u; i < 12u; ++i) {
        uint sel = (x >> (i % 8u)) % 6u;
        switch (sel) {
        case 0u:
            acc += 1u;
        case 1u:
            acc *= 3u;
            break;
        default:
            acc ^= i * 17u;
        case 2u:
            if ((acc & 1u) == 1u) continue;
            acc += 5u;
            break;
        case 4u:
            if (acc > 4000u) {
                acc = acc / 3u;
                break;
            }
            acc += x;
            continue;
        case 5u:
            acc += 1000u;
        }
        if (acc > 100000u) break;
        acc += 2u;
    }
    o.v[id] = acc;
}
