#version 450
// Bitcasts between float, int and uint (scalars and vectors), round trips included, on bit
// patterns that are every kind of float (NaNs, infinities, zeros, normals).
//! dispatch 1
//! buffer 0 storage 256 = u32 0x7fc00000 0xff800000 0x7f800000 0x80000000 0 0x3f800000 ; bytes 9
//! buffer 1 storage 1024
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint v[]; } a;
layout(std430, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    uint u = a.v[i];
    float f = uintBitsToFloat(u);
    int s = floatBitsToInt(f);
    vec2 v2 = uintBitsToFloat(uvec2(u, ~u));
    ivec2 w = floatBitsToInt(v2);
    o.v[4u * i] = floatBitsToUint(f);
    o.v[4u * i + 1u] = uint(s) ^ 0x5a5a5a5au;
    o.v[4u * i + 2u] = uint(w.x + w.y);
    o.v[4u * i + 3u] = floatBitsToUint(intBitsToFloat(s ^ int(i)));
}
