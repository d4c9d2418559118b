#version 450
// GLSL.std.450 on integer vectors: SAbs, SSign, SMin/UMin, SMax/UMax, SClamp/UClamp,
// FindILsb/FindSMsb/FindUMsb, and the core integer built-ins bitCount, bitfieldReverse,
// bitfieldExtract/Insert on ivec and uvec operands.
//! dispatch 1
//! buffer 0 storage 512 = rand i32 -100000 100000 29
//! buffer 1 storage 4096
//! check 1 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { ivec4 v[32]; } i_;
layout(std430, binding = 1) writeonly buffer Out { ivec4 v[]; } o;

void main() {
    uint id = gl_LocalInvocationID.x;
    ivec4 a = i_.v[id], b = i_.v[(id + 5u) % 32u];
    uvec4 ua = uvec4(a), ub = uvec4(b);
    o.v[id * 8u + 0u] = abs(a) + sign(b);
    o.v[id * 8u + 1u] = min(a, b) ^ max(a, b.wzyx);
    o.v[id * 8u + 2u] = ivec4(min(ua, ub) + max(ua, ub.yxwz));
    o.v[id * 8u + 3u] = clamp(a, ivec4(-5000), ivec4(7000)) + clamp(b, -a.x, a.x + 1);
    o.v[id * 8u + 4u] = ivec4(clamp(ua, uvec4(100u), uvec4(0x80000000u)));
    o.v[id * 8u + 5u] = findLSB(a) + 64 * findMSB(b) + 4096 * findMSB(ua ^ ub);
    o.v[id * 8u + 6u] = bitCount(a) + bitCount(ub).yzwx * 64 + bitfieldReverse(a) * 3;
    o.v[id * 8u + 7u] = bitfieldExtract(a, int(id & 15u), 9) ^ ivec4(bitfieldInsert(ua, ub, 3, int(id & 15u)));
}
