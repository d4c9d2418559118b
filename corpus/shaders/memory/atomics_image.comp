#version 450
// imageAtomic* on r32ui and r32i storage images (2D): add, min, max, and, or, xor,
// exchange and compare-exchange from many invocations hitting the same texels (each texel
// sees one kind of operation, so the final values do not depend on the order).
//! dispatch 4 4
//! image 0 storage 2d r32_uint 8 8 1 = u32 0
//! image 1 storage 2d r32_sint 8 8 1 = i32 0
//! image 2 storage 2d r32_uint 4 4 1 = u32 0xffffffff
//! image 3 storage 2d r32_uint 8 8 1 = u32 0
//! image 4 storage 2d r32_sint 8 8 1 = i32 0
//! check 0 exact
//! check 1 exact
//! check 2 exact
//! check 3 exact
//! check 4 exact
layout(local_size_x = 8, local_size_y = 8) in;
layout(r32ui, binding = 0) uniform uimage2D ua;
layout(r32i, binding = 1) uniform iimage2D ia;
layout(r32ui, binding = 2) uniform uimage2D ub;
layout(r32ui, binding = 3) uniform uimage2D ux;
layout(r32i, binding = 4) uniform iimage2D imx;

void main() {
    ivec2 p = ivec2(gl_LocalInvocationID.xy);
    uint id = gl_GlobalInvocationID.y * 32u + gl_GlobalInvocationID.x;
    uint h = id * 2654435761u;
    imageAtomicAdd(ua, p, h >> 20);
    imageAtomicXor(ux, ivec2(7) - p, h);
    imageAtomicMin(ia, p, int(h));
    imageAtomicMax(imx, ivec2(p.y, p.x), int(h >> 3));
    ivec2 q = p / 2;
    if (q.y == 0) imageAtomicAnd(ub, q, ~(1u << (id & 31u)));
    if (q.y == 1) imageAtomicOr(ub, q, 1u << (id & 15u));
    if (q.y == 2) imageAtomicExchange(ub, q, 77u);
    if (q == ivec2(0, 3)) imageAtomicCompSwap(ub, q, 0xffffffffu, 5u);
    if (q == ivec2(1, 3)) imageAtomicCompSwap(ub, q, 0xdeadbeefu, 6u);
}
