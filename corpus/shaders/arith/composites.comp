#version 450
// Arrays and structs as values: construction, copies, equality of structs and arrays,
// nested composites (arrays of structs of arrays), dynamic indexing of local arrays (which
// live in memory) and constant indexing (which live in registers).
//! dispatch 1
//! buffer 0 storage 256 = rand i32 -50 50 16
//! buffer 1 storage 2048
//! check 1 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer A { int v[]; } a;
layout(std430, binding = 1) writeonly buffer O { int v[]; } o;

struct Inner { int k[3]; ivec2 p; };
struct Outer { Inner in_[2]; int tag; };

const int TABLE[8] = int[8](3, 1, 4, 1, 5, 9, 2, 6);

void main() {
    uint i = gl_LocalInvocationID.x;
    int x = a.v[i];
    Outer s;
    s.tag = x;
    for (int j = 0; j < 2; j++) {
        s.in_[j].k = int[3](x + j, x * j, x - j);
        s.in_[j].p = ivec2(j, -j) * x;
    }
    Outer t = s;
    t.in_[1].k[2] = 99;
    int arr[16];
    for (int j = 0; j < 16; j++) arr[j] = j * x + int(i);
    uint d = uint(x & 15);
    arr[d] = -arr[d];
    uint base = i * 16u;
    o.v[base] = int(s == t);
    o.v[base + 1u] = int(s.in_[0] == t.in_[0]);
    o.v[base + 2u] = t.in_[1].k[2] + s.in_[1].k[2];
    o.v[base + 3u] = arr[d] + arr[(d + 3u) & 15u];
    o.v[base + 4u] = TABLE[i & 7u] * x;
    o.v[base + 5u] = s.in_[i & 1u].p.y;
    o.v[base + 6u] = s.in_[(i >> 1) & 1u].k[i % 3u];
    int copy[16] = arr;
    copy[0] = 1;
    o.v[base + 7u] = int(copy == arr) + 2 * int(arr[0] == int(i));
    int sum = 0;
    for (int j = 0; j < 16; j++) sum += arr[j];
    o.v[base + 8u] = sum;
    ivec2 pp[4] = ivec2[4](ivec2(1), ivec2(2), ivec2(x), ivec2(-x));
    o.v[base + 9u] = pp[d & 3u].x + pp[3].y;
    Inner in2[2] = s.in_;
    in2[d & 1u].k[d % 3u] = 7;
    o.v[base + 10u] = in2[0].k[0] + in2[0].k[1] + in2[0].k[2] + in2[1].k[0] + in2[1].k[1] + in2[1].k[2];
    o.v[base + 11u] = s.in_.length() + s.in_[0].k.length();
    o.v[base + 12u] = int(i);
    o.v[base + 13u] = t.tag;
    o.v[base + 14u] = t.in_[0].p.x;
    o.v[base + 15u] = copy[15];
}
