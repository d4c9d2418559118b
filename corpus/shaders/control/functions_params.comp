#version 450
// Function calls: in, out and inout parameters (scalars, vectors, arrays, structs), a
// struct returned by value, arrays passed by value (the callee's changes stay local), and
// calls nested three deep.
//! dispatch 1
//! buffer 0 storage 256 = rand i32 -50 50 51
//! buffer 1 storage 2048
//! check 1 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { int v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { int v[]; } o;

struct Pair { int a; ivec2 b; };

void split(int x, out int hi, out int lo) { hi = x >> 4; lo = x & 15; }
void bump(inout ivec3 v, int by) { v += ivec3(by, 2 * by, 3 * by); }
Pair make(int x) { Pair p; p.a = x * x; p.b = ivec2(x, -x); return p; }
int sum(int arr[4]) { int s = 0; for (int k = 0; k < 4; k++) { s += arr[k]; arr[k] = 0; } return s; }
void scale(inout int arr[4], int f) { for (int k = 0; k < 4; k++) arr[k] *= f; }
int deep3(int x) { return x * 3 + 1; }
int deep2(int x) { int y; int z; split(deep3(x), y, z); return y + deep3(z); }
int deep1(int x) { Pair p = make(deep2(x)); return p.a - p.b.y; }
void swapPair(inout Pair p) { int t = p.b.x; p.b.x = p.b.y; p.b.y = t; p.a = -p.a; }

void main() {
    uint id = gl_GlobalInvocationID.x;
    int x = i_.v[id];
    int hi, lo;
    split(x, hi, lo);
    ivec3 v = ivec3(x, x + 1, x + 2);
    bump(v, lo);
    int arr[4] = int[4](x, hi, lo, 7);
    int s = sum(arr);
    scale(arr, 3);
    Pair p = make(x);
    swapPair(p);
    uint b = id * 16u;
    o.v[b + 0u] = hi; o.v[b + 1u] = lo;
    o.v[b + 2u] = v.x; o.v[b + 3u] = v.y; o.v[b + 4u] = v.z;
    o.v[b + 5u] = s;
    o.v[b + 6u] = arr[0]; o.v[b + 7u] = arr[1]; o.v[b + 8u] = arr[2]; o.v[b + 9u] = arr[3];
    o.v[b + 10u] = p.a; o.v[b + 11u] = p.b.x; o.v[b + 12u] = p.b.y;
    o.v[b + 13u] = deep1(x);
    o.v[b + 14u] = deep2(-x);
    o.v[b + 15u] = int(id);
}
