#version 450
// Values merged at loop headers and after branches (OpPhi), including swaps of loop-carried
// variables (a parallel copy with a cycle) and a value live across several loops.
//! glslang -Os
//! dispatch 1
//! buffer 0 storage 256 = rand u32 0 1000 71
//! buffer 1 storage 1024
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uint v[]; } o;

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint a = i_.v[id], b = id + 1u, c = 7u;
    for (uint k = 0u; k < 10u + (id & 7u); k++) {
        uint t = a;
        a = b;
        b = c;
        c = t + ((k & 1u) == 0u ? b : a);
    }
    uint f0 = 0u, f1 = 1u;
    for (uint k = 0u; k < (a & 15u); k++) {
        uint t = f0 + f1;
        f0 = f1;
        f1 = t;
    }
    uint m = (b > c) ? b - c : c - b;
    if ((m & 3u) == 0u) { m = m * 2u; } else if ((m & 3u) == 1u) { m += f1; }
    o.v[4u * id] = a;
    o.v[4u * id + 1u] = b;
    o.v[4u * id + 2u] = c;
    o.v[4u * id + 3u] = m + f0;
}
