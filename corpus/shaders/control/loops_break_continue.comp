#version 450
// for/while/do-while loops with data-dependent trip counts, break and continue, so lanes
// of one warp leave the loop at different iterations and reconverge after it.
//! glslang -Os
//! dispatch 2
//! buffer 0 storage 512 = rand u32 0 40 11
//! buffer 1 storage 1536
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uint v[]; } o;

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint n = i_.v[id];
    uint a = 0u;
    for (uint k = 0u; k < n; k++) {
        if (k % 3u == 1u) continue;
        if (k * k > 300u + id) break;
        a += k * (id + 1u);
    }
    uint b = 1u;
    uint j = n;
    while (j > 0u) {
        j--;
        if ((j & 5u) == 4u) continue;
        b = b * 3u + j;
        if (b > 100000u) break;
    }
    uint c = 0u;
    uint m = id;
    do {
        c += m & 1u;
        m >>= 1;
    } while (m != 0u);
    o.v[3u * id] = a;
    o.v[3u * id + 1u] = b;
    o.v[3u * id + 2u] = c;
}
