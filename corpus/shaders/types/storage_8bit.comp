#version 450
#extension GL_EXT_shader_8bit_storage : require
// 8-bit storage without 8-bit arithmetic: int8/uint8 members and vectors in storage and
// uniform buffers and push constants, converted to 32 bits and written back.
//! features storageBuffer8BitAccess uniformAndStorageBuffer8BitAccess storagePushConstant8
//! dispatch 1
//! push u8 200 7
//! push i8 -5
//! buffer 0 storage 256 = bytes 101
//! buffer 1 uniform 256 = bytes 102
//! buffer 2 storage 1024
//! check 0 exact
//! check 2 exact
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint8_t a; uint8_t b; int8_t c; } pc;
struct S { int8_t x; uint8_t y; i8vec2 v; u8vec4 w; };
layout(std430, binding = 0) buffer In { S s[]; } i_;
layout(std140, binding = 1) uniform U { u8vec4 q[16]; } u;
layout(std430, binding = 2) writeonly buffer Out { uint w[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    uint base = i * 8u;
    int x = int(i_.s[i].x);
    uint y = uint(i_.s[i].y);
    ivec2 v = ivec2(i_.s[i].v);
    uvec4 w = uvec4(i_.s[i].w);
    o.w[base] = uint(x);
    o.w[base + 1u] = y;
    o.w[base + 2u] = uint(v.x * 256 + v.y);
    o.w[base + 3u] = w.x + w.w * 1000u;
    o.w[base + 4u] = uvec4(u.q[i & 15u]).z;
    o.w[base + 5u] = uint(pc.a) + uint(pc.b) * 1000u + uint(int(pc.c)) * 7u;
    i_.s[i].x = int8_t(x / 2);
    i_.s[i].y = uint8_t(y + 1u);
    i_.s[i].v = i8vec2(v.yx);
    i_.s[i].w = u8vec4(w >> 1);
    o.w[base + 6u] = 0u;
    o.w[base + 7u] = 0u;
}
