#version 450
#extension GL_EXT_shader_16bit_storage : require
// 16-bit storage without 16-bit arithmetic: int16/uint16/float16 members of storage
// buffers, a uniform buffer and push constants, read into 32-bit values and written back
// (std430 layout with 16-bit members packed two per word, vectors and arrays of them).
//! features storageBuffer16BitAccess uniformAndStorageBuffer16BitAccess storagePushConstant16
//! dispatch 1
//! push u16 7 0xfff0
//! push f16 1.5 -2
//! buffer 0 storage 512 = bytes 99
//! buffer 1 uniform 256 = f16 0.5 1 -1 2 ; rand f16 -10 10 100
//! buffer 2 storage 2048
//! check 0 exact
//! check 2 exact
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint16_t a; int16_t b; f16vec2 h; } pc;
struct S { int16_t x; uint16_t y; f16vec2 h; i16vec3 v; };
layout(std430, binding = 0) buffer In { S s[]; } i_;
layout(std140, binding = 1) uniform U { f16vec4 q[16]; } u;
layout(std430, binding = 2) writeonly buffer Out { uint w[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    uint base = i * 16u;
    int x = int(i_.s[i].x);
    uint y = uint(i_.s[i].y);
    vec2 h = vec2(i_.s[i].h);
    // Random bits: NaN payloads are not compared, so NaNs and infinities become zero.
    h = mix(h, vec2(0.0), bvec2(isnan(h.x) || isinf(h.x), isnan(h.y) || isinf(h.y)));
    ivec3 v = ivec3(i_.s[i].v);
    o.w[base] = uint(x);
    o.w[base + 1u] = y;
    o.w[base + 2u] = floatBitsToUint(h.x + h.y);
    o.w[base + 3u] = uint(v.x + v.z * 7);
    o.w[base + 4u] = floatBitsToUint(vec4(u.q[i & 15u]).y);
    o.w[base + 5u] = uint(pc.a) + uint(int(pc.b)) * 3u;
    o.w[base + 6u] = floatBitsToUint(vec2(pc.h).x - vec2(pc.h).y);
    i_.s[i].x = int16_t(-x);
    i_.s[i].y = uint16_t(y * 3u);
    i_.s[i].h = f16vec2(h * 0.5);
    i_.s[i].v = i16vec3(v + ivec3(1, 2, 3));
    for (uint k = 7u; k < 16u; k++) o.w[base + k] = 0u;
}
