#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// Physical storage buffers (GL_EXT_buffer_reference): a linked list of nodes that refer to
// each other by address, walked from a root reference in a storage buffer; references
// held in local variables, loaded from memory, compared by their addresses (uint64), and
// written back (a link rewritten and followed).
//! features shaderInt64
//! dispatch 1
//! buffer 0 storage 32 = addr -nodes
//! buffer -nodes storage 1024 = f32 1 2 3 4 ; addr -nodes+32 ; u32 0 0 ; f32 5 6 7 8 ; addr -nodes+64 ; u32 1 0 ; f32 9 10 11 12 ; addr -nodes+96 ; u32 2 0 ; f32 13 14 15 16 ; u64 0 ; u32 3 0
//! buffer 1 storage 1024
//! check 1 exact
layout(local_size_x = 16) in;
layout(buffer_reference) buffer Node;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Node { vec4 v; Node next; uint tag; };
layout(std430, binding = 0) buffer Roots { Node head; } r;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    Node n = r.head;
    float s = 0.0;
    uint count = 0u;
    while (uint64_t(n) != 0ul) {
        s += n.v[i & 3u] * float(count + 1u);
        count++;
        n = n.next;
    }
    o.v[4u * i] = s;
    o.v[4u * i + 1u] = float(count);
    Node second = r.head.next;
    o.v[4u * i + 2u] = float(second.tag) + second.v.w;
    o.v[4u * i + 3u] = float(uint64_t(second.next) - uint64_t(second));
    barrier();
    if (i == 0u) {
        // Make the first node point to the third, and follow the new link.
        r.head.next = second.next;
        o.v[64] = float(r.head.next.tag) + float(uint64_t(r.head.next) - uint64_t(r.head));
    }
}
