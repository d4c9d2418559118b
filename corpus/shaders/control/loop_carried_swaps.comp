#version 450
// Loop-carried values that swap and rotate every iteration (phis that read each other: the
// "swap problem" of SSA destruction), a loop whose exit value is a phi of a phi, and a
// vector carried through a loop component by component.
//! dispatch 2
//! buffer 0 storage 256 = rand u32 0 0xffffffff 5
//! buffer 1 storage 1024
//! check 1 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uvec4 v[]; } o;

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint x = i_.v[id];
    uint a = x, b = x ^ 0x55u, c = id, d = 7u;
    for (uint i = 0u; i < (x & 15u) + 3u; ++i) {
        uint t = a;
        a = b;
        b = c;
        c = d;
        d = t + i;
        if ((a & 3u) == 1u) {
            uint u = b; b = c; c = u;
        }
    }
    uvec3 v = uvec3(x, x >> 8, x >> 16);
    for (int i = 0; i < 5; ++i) {
        v = v.yzx + uvec3(i);
        if (v.x > v.y) v.xy = v.yx;
    }
    o.v[id] = uvec4(a ^ v.x, b ^ v.y, c ^ v.z, d);
}
