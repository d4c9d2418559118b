#version 450
// Functions taking and returning aggregates: structs and arrays by value (in), arrays and
// structs as out and inout parameters, a function called from inside a loop with an inout
// accumulator, and call chains three levels deep.
//! dispatch 2
//! buffer 0 storage 512 = rand i32 -1000 1000 61
//! buffer 1 storage 2048
//! check 1 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { ivec2 v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { ivec4 v[]; } o;
struct Pair { int lo; int hi; };

Pair order(Pair p) { return p.lo <= p.hi ? p : Pair(p.hi, p.lo); }
void split(int x, out int q[3]) { q[0] = x & 7; q[1] = (x >> 3) & 7; q[2] = x >> 6; }
int sum3(int q[3]) { return q[0] + q[1] * 10 + q[2] * 100; }
void fold(inout Pair acc, Pair p, inout int steps) {
    acc = Pair(acc.lo + p.lo, max(acc.hi, p.hi));
    steps++;
}
int deep(Pair p) { int q[3]; split(p.hi - p.lo, q); return sum3(q); }

void main() {
    uint id = gl_GlobalInvocationID.x;
    ivec2 v = i_.v[id];
    Pair p = order(Pair(v.x, v.y));
    Pair acc = Pair(0, -100000);
    int steps = 0;
    for (int i = 0; i < int(id % 5u) + 1; ++i) fold(acc, order(Pair(v.y - i, v.x + i)), steps);
    int q[3];
    split(abs(v.x), q);
    q[1] += steps;
    o.v[id] = ivec4(p.lo, p.hi, acc.lo * 16 + steps, acc.hi + sum3(q) + deep(p));
}
