#version 450
// A push-constant block with scalars, vectors, a matrix and an array (std430), read in full
// by every invocation.
//! dispatch 1
//! push u32 7
//! push f32 1.5 -2.25
//! push i32 -9
//! push f32 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16
//! push u32 11 22 33 44
//! buffer 0 storage 512
//! check 0 exact
layout(local_size_x = 16) in;
layout(push_constant, std430) uniform P {
    uint a;
    vec2 b;
    int c;
    mat4 m;
    uint arr[4];
} pc;
layout(std430, binding = 0) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    o.v[8u * i] = float(pc.a) + pc.b.x;
    o.v[8u * i + 1u] = pc.b.y * float(pc.c);
    o.v[8u * i + 2u] = pc.m[i & 3u][i >> 2];
    o.v[8u * i + 3u] = float(pc.arr[i & 3u]);
    o.v[8u * i + 4u] = (pc.m * vec4(1.0, 0.0, -1.0, 2.0))[i & 3u];
    o.v[8u * i + 5u] = float(pc.arr.length());
    o.v[8u * i + 6u] = pc.m[3].w;
    o.v[8u * i + 7u] = float(i);
}
