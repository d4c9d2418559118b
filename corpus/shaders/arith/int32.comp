#version 450
// 32-bit integer arithmetic: add, sub, mul, div (every sign combination), rem and mod,
// negate, shifts by 0..31, bitwise ops, and the signed/unsigned comparisons.
//! dispatch 1
//! buffer 0 storage 512 = rand i32 -2000000000 2000000000 7
//! buffer 1 storage 512 = rand i32 -100 100 8
//! buffer 2 storage 8192
//! check 2 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { int v[]; } a;
layout(std430, binding = 1) readonly buffer B { int v[]; } b;
layout(std430, binding = 2) writeonly buffer Out { int v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    int x = a.v[i];
    int y = b.v[i];
    if (y == 0) y = 3;
    uint ux = uint(x), uy = uint(y);
    uint base = i * 32u;
    o.v[base + 0u] = x + y;
    o.v[base + 1u] = x - y;
    o.v[base + 2u] = x * y;
    o.v[base + 3u] = x / y;
    o.v[base + 4u] = abs(x) % abs(y); // % with a negative operand is undefined in GLSL
    o.v[base + 5u] = int(ux / uy);
    o.v[base + 6u] = int(ux % uy);
    o.v[base + 7u] = -x;
    o.v[base + 8u] = x << (i & 31u);
    o.v[base + 9u] = x >> (i & 31u);
    o.v[base + 10u] = int(ux >> (i & 31u));
    o.v[base + 11u] = x & y;
    o.v[base + 12u] = x | y;
    o.v[base + 13u] = x ^ y;
    o.v[base + 14u] = ~x;
    o.v[base + 15u] = int(x < y) | int(x <= y) << 1 | int(x > y) << 2 | int(x >= y) << 3
                    | int(ux < uy) << 4 | int(ux <= uy) << 5 | int(ux > uy) << 6 | int(ux >= uy) << 7
                    | int(x == y) << 8 | int(x != y) << 9;
    o.v[base + 16u] = x * 65537 + (y << 16);
    o.v[base + 17u] = int(ux * 2654435761u);
    o.v[base + 18u] = (x / 7) * 7 + abs(x) % 7;
    o.v[base + 19u] = int(ux / 3u);
    o.v[base + 20u] = x / -1 == -x ? 1 : 0;
    o.v[base + 21u] = int((ux + uy) >> 1);
    o.v[base + 22u] = abs(y) * sign(x);
    o.v[base + 23u] = min(x, y);
    o.v[base + 24u] = max(x, y);
    o.v[base + 25u] = int(min(ux, uy));
    o.v[base + 26u] = int(max(ux, uy));
    o.v[base + 27u] = clamp(x, -1000, y * 1000);
    o.v[base + 28u] = int(clamp(ux, 100u, 2000000000u));
    o.v[base + 29u] = x;
    o.v[base + 30u] = y;
    o.v[base + 31u] = int(i);
}
