#version 450
// && and || with side effects on the right-hand side (glslang emits the branches and phis),
// the ternary operator choosing between calls with side effects, and logical ops on bools
// loaded from memory.
//! dispatch 2
//! buffer 0 storage 256 = rand i32 -50 50 3
//! buffer 1 storage 1024
//! check 1 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { int v[]; } i_;
layout(std430, binding = 1) buffer Out { ivec4 v[]; } o;

int counter;
bool bump(int by, bool result) { counter += by; return result; }
int side(int v) { counter = counter * 2 + v; return v; }

void main() {
    uint id = gl_GlobalInvocationID.x;
    int x = i_.v[id];
    counter = 0;
    bool a = x > 0 && bump(1, x > 10);
    bool b = x < 0 || bump(10, x == 0);
    bool c = (x & 1) == 0 && bump(100, true) && bump(1000, x > 20);
    bool d = !a && (b || bump(10000, false));
    int t = x > 5 ? side(3) : side(-4);
    bool e = a ^^ b;
    int flags = int(a) | int(b) << 1 | int(c) << 2 | int(d) << 3 | int(e) << 4;
    o.v[id] = ivec4(flags, counter, t, int(any(bvec3(a, c, e))) + 2 * int(all(bvec2(b, d))));
}
