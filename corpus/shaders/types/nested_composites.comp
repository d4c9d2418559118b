#version 450
// Nested composites: structs of arrays of structs in a storage buffer, copied whole into
// private variables, modified through dynamic indices, and written back whole; arrays of
// matrices; composite construction and extraction at several levels.
//! dispatch 1
//! buffer 0 storage 2048 = rand u32 0 1000 21
//! buffer 1 storage 2048
//! check 1 exact
layout(local_size_x = 8) in;
struct Leaf { uvec2 p; uint tag; };
struct Node { Leaf leaves[3]; uint count; mat2 m[2]; };
layout(std430, binding = 0) readonly buffer In { Node nodes[8]; } i_;
layout(std430, binding = 1) writeonly buffer Out { Node nodes[8]; } o;

Leaf bump(Leaf l, uint by) { l.p += uvec2(by, by * 2u); l.tag ^= by; return l; }

void main() {
    uint id = gl_LocalInvocationID.x;
    Node n = i_.nodes[id];
    Node other = i_.nodes[(id + 3u) % 8u];
    uint k = n.count % 3u;
    n.leaves[k] = bump(other.leaves[(k + 1u) % 3u], id);
    n.leaves[(k + 2u) % 3u].p.y = other.count;
    n.m[id & 1u][k & 1u] = vec2(float(n.leaves[0].tag % 100u), float(id));
    n.m[1 - (id & 1u)] = transpose(n.m[id & 1u]);
    Leaf arr[2] = Leaf[2](n.leaves[1], Leaf(uvec2(id), 77u));
    n.count = arr[id & 1u].tag + n.leaves.length();
    o.nodes[id] = n;
}
