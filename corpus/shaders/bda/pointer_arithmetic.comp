#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// Physical storage buffer pointers built with arithmetic on their 64-bit integer values:
// buffer_reference_align, pointers to structs with arrays, pointers stored in buffers and
// in private arrays, selected per invocation, and compared through their addresses.
//! features shaderInt64
//! dispatch 1
//! buffer 0 storage 1024 = rand u32 0 1000 53
//! buffer 1 storage 64 = addr 0 2
//! buffer 2 storage 1024
//! check 2 exact
layout(local_size_x = 16) in;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Block { uvec4 head; uint items[15]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Word { uint w; };
layout(std430, binding = 1) readonly buffer Roots { Block src; Block dst; } roots;

void main() {
    uint id = gl_LocalInvocationID.x;
    Block b = roots.src;
    Block picked[2] = Block[2](b, Block(uint64_t(b) + 64ul * uint64_t(id % 4u)));
    Block p = picked[id & 1u];
    Word w = Word(uint64_t(p) + 16ul + 4ul * uint64_t(id % 15u));
    uint v = w.w + p.head[id & 3u] + p.items[(id * 3u) % 15u];
    bool same = uint64_t(p) == uint64_t(b);
    Block out_ = Block(uint64_t(roots.dst) + 64ul * uint64_t(id));
    out_.head = uvec4(v, uint(same), uint(uint64_t(p) - uint64_t(b)), id);
    out_.items[id % 15u] = w.w * 2u;
}
