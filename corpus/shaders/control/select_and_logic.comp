#version 450
// Short-circuit && and || with side effects in the second operand, the ternary operator on
// scalars, vectors and structs, and boolean vectors with any()/all()/not().
//! dispatch 1
//! buffer 0 storage 256 = rand i32 -10 10 101
//! buffer 1 storage 1536
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { int v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { int v[]; } o;

struct S { int a; int b; };
int counter;
bool touch(bool r) { counter++; return r; }

void main() {
    uint id = gl_GlobalInvocationID.x;
    int x = i_.v[id];
    counter = 0;
    bool p = x > 0 && touch(x > 5);
    bool q = x < -3 || touch(x == 0);
    ivec2 v = x > 2 ? ivec2(x, 1) : ivec2(2, x);
    S s1 = S(x, 1), s2 = S(-x, 2);
    S s = (x & 1) == 0 ? s1 : s2;
    bvec3 bv = greaterThan(ivec3(x, x + 3, x - 3), ivec3(0));
    uint b = 6u * id;
    o.v[b] = int(p) | int(q) << 1 | counter << 2;
    o.v[b + 1u] = v.x * 100 + v.y;
    o.v[b + 2u] = s.a * 10 + s.b;
    o.v[b + 3u] = int(any(bv)) | int(all(bv)) << 1 | int(all(not(bv))) << 2;
    o.v[b + 4u] = mix(x, -x, x < 0);
    o.v[b + 5u] = int(bv.x != bv.y) + int(bv.y == bv.z) * 2;
}
