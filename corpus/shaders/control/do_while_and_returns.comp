#version 450
// do-while loops, while loops whose condition has side effects, and returns from inside
// nested loops of a called function (each returning a different value), with the caller
// continuing its own loop on the result.
//! dispatch 2
//! buffer 0 storage 256 = rand u32 1 200 11
//! buffer 1 storage 512
//! check 1 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uvec2 v[]; } o;

uint find(uint x, uint limit) {
    for (uint a = 1u; a < 16u; ++a) {
        for (uint b = a; b < 16u; ++b) {
            if (a * b == x) return a * 100u + b;
            if (a * b > limit) return 9999u;
        }
        if (a * a > x) return 5000u + a;
    }
    return 0u;
}

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint x = i_.v[id];
    uint steps = 0u;
    uint y = x;
    do {
        y = (y & 1u) == 0u ? y / 2u : 3u * y + 1u;
        steps++;
    } while (y != 1u && steps < 200u);
    uint k = 0u;
    uint z = x;
    while ((z = z / 2u) > 3u) k += z;
    uint r = 0u;
    for (uint i = 0u; i < 4u; ++i) {
        uint f = find(x + i, 120u);
        if (f == 9999u) continue;
        r += f;
    }
    o.v[id] = uvec2(steps * 65536u + k, r);
}
