#version 450
// bitfieldExtract/Insert (signed and unsigned, every offset/width that fits), bitfieldReverse,
// bitCount, findLSB, findMSB (signed and unsigned), and the extended add/sub/mul ops.
//! dispatch 1
//! buffer 0 storage 256 = u32 0 0xffffffff 0x80000000 1 0x7fffffff ; bytes 12
//! buffer 1 storage 256 = bytes 13
//! buffer 2 storage 4608
//! check 2 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint v[]; } a;
layout(std430, binding = 1) readonly buffer B { uint v[]; } b;
layout(std430, binding = 2) writeonly buffer O { uint v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    uint x = a.v[i], y = b.v[i];
    int off = int(i % 32u);
    int bits = int((i * 7u) % uint(33 - off));
    uint base = i * 18u;
    o.v[base] = bitfieldExtract(x, off, bits);
    o.v[base + 1u] = uint(bitfieldExtract(int(x), off, bits));
    o.v[base + 2u] = bitfieldInsert(x, y, off, bits);
    o.v[base + 3u] = uint(bitfieldInsert(int(x), int(y), off, bits));
    o.v[base + 4u] = bitfieldReverse(x);
    o.v[base + 5u] = uint(bitCount(x));
    o.v[base + 6u] = uint(findLSB(x));
    o.v[base + 7u] = uint(findMSB(x));
    o.v[base + 8u] = uint(findMSB(int(x)));
    uint carry, borrow, hi, lo;
    o.v[base + 9u] = uaddCarry(x, y, carry);
    o.v[base + 10u] = carry;
    o.v[base + 11u] = usubBorrow(x, y, borrow);
    o.v[base + 12u] = borrow;
    umulExtended(x, y, hi, lo);
    o.v[base + 13u] = hi;
    o.v[base + 14u] = lo;
    int shi, slo;
    imulExtended(int(x), int(y), shi, slo);
    o.v[base + 15u] = uint(shi);
    o.v[base + 16u] = uint(slo);
    o.v[base + 17u] = uint(bitCount(ivec2(x, y)).x + findLSB(uvec2(y, x)).y);
}
