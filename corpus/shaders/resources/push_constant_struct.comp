#version 450
// A push-constant block with a nested struct, an array, a matrix and a vec3 followed by a
// scalar (std430 offsets), read with constant and dynamic indices.
//! dispatch 1
//! push f32 0.5 -1.25 2 3 1.5 -2 0.25 4 1 2 -3 0.5 -0.75 6.5 0 0 1.5 -2.5 3.25 100
//! buffer 0 storage 512
//! check 0 exact
layout(local_size_x = 8) in;
struct P { vec3 dir; float len; };
layout(push_constant, std430) uniform PC { P p; float arr[4]; mat2 m; vec2 tail; uvec4 bits; } pc;
layout(std430, binding = 0) writeonly buffer O { vec4 v[]; } o;

void main() {
    uint id = gl_LocalInvocationID.x;
    vec2 r = pc.m * vec2(pc.arr[id & 3u], pc.tail[id & 1u]);
    o.v[id * 2u] = vec4(pc.p.dir * pc.p.len, pc.arr[3u - (id & 3u)]);
    o.v[id * 2u + 1u] = vec4(r, uintBitsToFloat(pc.bits[id & 3u] & 0x3fffffffu), pc.m[id & 1u][(id >> 1) & 1u]);
}
