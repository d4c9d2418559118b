#version 450
// Storage texel buffers (imageBuffer): imageLoad, imageStore, imageSize and image atomics
// on r32ui/r32i views, and float, integer and normalized formats.
//! dispatch 1
//! texel 0 storage r32g32b32a32_sfloat 1024 = rand f32 -10 10 134
//! texel 1 storage r16g16b16a16_sint 512 = rand i16 -1000 1000 135
//! texel 2 storage r32_uint 256 = iota u32 0
//! texel 3 storage r32_sint 256 = rand i32 -50 50 136
//! texel 4 storage r8g8b8a8_unorm 256 = bytes 137
//! buffer 5 storage 256
//! check 0 exact
//! check 1 exact
//! check 2 exact
//! check 3 exact
//! check 4 exact
//! check 5 exact
layout(local_size_x = 64) in;
layout(binding = 0, rgba32f) uniform imageBuffer a;
layout(binding = 1, rgba16i) uniform iimageBuffer b;
layout(binding = 2, r32ui) uniform uimageBuffer c;
layout(binding = 3, r32i) uniform iimageBuffer d;
layout(binding = 4, rgba8) uniform imageBuffer e;
layout(std430, binding = 5) writeonly buffer O { int v[]; } o;

void main() {
    int i = int(gl_LocalInvocationID.x);
    vec4 x = imageLoad(a, i);
    barrier();
    imageStore(a, 63 - i, x * 0.5);
    ivec4 y = imageLoad(b, i);
    imageStore(b, i, y.wzyx / 2);
    imageAtomicAdd(c, i % 8, uint(i));
    imageAtomicMax(d, i % 4, i);
    imageAtomicXor(c, 32 + i % 16, 0x5au);
    vec4 z = imageLoad(e, i);
    imageStore(e, i, z * 0.5 + vec4(0.25));
    if (i == 0) {
        o.v[0] = imageSize(a);
        o.v[1] = imageSize(b);
        o.v[2] = imageSize(c);
        o.v[3] = imageSize(e);
    }
}
