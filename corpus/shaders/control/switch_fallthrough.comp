#version 450
// switch with fall-through between cases, several labels per case, a default in the
// middle, an empty case, breaks out of loops inside cases, and a switch nested in a loop.
//! glslang -Os
//! dispatch 1
//! buffer 0 storage 512 = rand i32 -3 12 31
//! buffer 1 storage 1024
//! check 1 exact
layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer In { int v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { int v[]; } o;

void main() {
    uint id = gl_GlobalInvocationID.x;
    int x = i_.v[id];
    int r = 0;
    switch (x) {
    case 0:
        r += 1;
    case 1:
    case 2:
        r += 10;
        break;
    case 3:
        r += 100;
        // fall through
    default:
        r += 1000;
    case 7:
        r += 10000;
        break;
    case 8:
        break;
    case -2:
        for (int k = 0; k < 10; k++) {
            r += k;
            if (k == int(id % 5u)) break;
        }
        break;
    case 11:
        return;
    }
    int s = 0;
    for (int k = 0; k < 6; k++) {
        switch ((x + k) & 3) {
        case 0: s += 1; continue;
        case 1: s *= 2;
        case 2: s += 3; break;
        default: s -= 1; break;
        }
        s += 100;
    }
    o.v[2u * id] = r;
    o.v[2u * id + 1u] = s;
}
