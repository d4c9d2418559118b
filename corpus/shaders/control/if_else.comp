#version 450
// if/else chains with divergent conditions, nested ifs, and values merged through phis.
//! dispatch 2
//! buffer 0 storage 256 = rand i32 -100 100 1
//! buffer 1 storage 256
//! check 1 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { int v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { int v[]; } o;

void main() {
    uint id = gl_GlobalInvocationID.x;
    int x = i_.v[id];
    int r;
    if (x < -50) {
        r = x * 3;
    } else if (x < 0) {
        if ((id & 1u) == 0u) {
            r = -x;
        } else {
            r = x - 7;
        }
    } else if (x == 0) {
        r = 1000;
    } else {
        r = x > 50 ? x / 3 : x % 7;
    }
    o.v[id] = r;
}
