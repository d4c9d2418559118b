#version 450
// Functions whose every path returns (so the block after the if/else is unreachable and
// glslang ends it with OpUnreachable), a switch whose cases all return, and an infinite
// loop left only by return.
//! dispatch 1
//! buffer 0 storage 256 = rand i32 -20 20 81
//! buffer 1 storage 768
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { int v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { int v[]; } o;

int classify(int x) {
    if (x < 0) {
        return -1;
    } else {
        return x == 0 ? 0 : 1;
    }
}

int pick(int x) {
    switch (x & 3) {
    case 0: return 10;
    case 1: return 20;
    case 2: return 30;
    default: return 40;
    }
}

int spin(int x) {
    int k = 0;
    while (true) {
        k++;
        if (k * k >= abs(x)) return k;
    }
}

void main() {
    uint id = gl_GlobalInvocationID.x;
    int x = i_.v[id];
    o.v[3u * id] = classify(x);
    o.v[3u * id + 1u] = pick(x);
    o.v[3u * id + 2u] = spin(x);
}
