#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_shader_subgroup_extended_types_int64 : require
#extension GL_EXT_shader_subgroup_extended_types_int16 : require
#extension GL_EXT_shader_subgroup_extended_types_int8 : require
#extension GL_EXT_shader_subgroup_extended_types_float16 : require
// Subgroup operations on the extended types: 64-bit, 16-bit and 8-bit integers and 16-bit
// floats, in reductions (wrapping at the type's width), scans, min/max (signed and
// unsigned), broadcasts and shuffles.
//! features subgroup-basic subgroup-arithmetic subgroup-ballot subgroup-shuffle shaderSubgroupExtendedTypes shaderInt64 shaderInt16 shaderInt8 shaderFloat16
//! warp-dependent
//! dispatch 1
//! buffer 0 storage 512 = rand i32 -2000000000 2000000000 114
//! buffer 1 storage 8192
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer I { int v[]; } i_;
layout(std430, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uint l = gl_LocalInvocationID.x;
    int x = i_.v[l];
    int64_t w = int64_t(x) * 4000000000l;
    int16_t s = int16_t(x);
    int8_t c = int8_t(x >> 8);
    float16_t h = float16_t(float(x & 63) - 32.0);
    uint b = l * 32u;
    int64_t a64 = subgroupAdd(w);
    o.v[b] = uint(a64); o.v[b + 1u] = uint(a64 >> 32);
    int64_t m64 = subgroupInclusiveMin(w);
    o.v[b + 2u] = uint(m64); o.v[b + 3u] = uint(m64 >> 32);
    uint64_t u64 = subgroupExclusiveMax(uint64_t(w));
    o.v[b + 4u] = uint(u64); o.v[b + 5u] = uint(u64 >> 32);
    int64_t x64 = subgroupXor(w) ^ subgroupBroadcast(w, 2u);
    o.v[b + 6u] = uint(x64); o.v[b + 7u] = uint(x64 >> 32);
    o.v[b + 8u] = uint(int(subgroupAdd(s)));
    o.v[b + 9u] = uint(int(subgroupInclusiveMin(s)));
    o.v[b + 10u] = uint(subgroupExclusiveMax(uint16_t(s)));
    o.v[b + 11u] = uint(int(subgroupMul(s | 1s)));
    o.v[b + 12u] = uint(int(subgroupShuffleXor(s, 1u)));
    o.v[b + 13u] = uint(int(subgroupAdd(c)));
    o.v[b + 14u] = uint(int(subgroupMax(c)));
    o.v[b + 15u] = uint(subgroupMin(uint8_t(c)));
    o.v[b + 16u] = uint(int(subgroupInclusiveAdd(c)));
    o.v[b + 17u] = floatBitsToUint(float(subgroupAdd(h)));
    o.v[b + 18u] = floatBitsToUint(float(subgroupInclusiveMax(h)));
    o.v[b + 19u] = floatBitsToUint(float(subgroupBroadcastFirst(h)));
    o.v[b + 20u] = floatBitsToUint(float(subgroupExclusiveMin(h)));
    for (uint k = 21u; k < 32u; k++) o.v[b + k] = 0u;
}
