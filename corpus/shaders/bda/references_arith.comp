#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// Buffer references made from integers (uint64 arithmetic, then cast), reference
// arithmetic in units of the pointee (buffer_reference2: ref + n), references chosen by a
// select and merged after a branch (phi), runtime arrays behind references, structs with
// nested arrays and a matrix, and atomics through a reference.
//! features shaderInt64
//! dispatch 1
//! buffer 0 storage 16 = addr -data ; addr -ints
//! buffer -data storage 2048 = rand f32 -10 10 120
//! buffer -ints storage 1024 = iota i32 0 3
//! buffer 1 storage 2048
//! check 1 exact
//! check -ints exact
layout(local_size_x = 32) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Float1 { float x; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Block { vec4 a; float arr[4]; mat2 m; };
layout(buffer_reference, std430) buffer Ints { int x[]; };
layout(std430, binding = 0) buffer Roots { uint64_t data; Ints ints; } r;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    Float1 f = Float1(r.data) + i;
    Float1 g = Float1(r.data + 4ul * uint64_t(31u - i));
    o.v[8u * i] = f.x - g.x;
    Float1 pick = (i & 1u) == 0u ? f : g;
    o.v[8u * i + 1u] = pick.x;
    Block b = Block(r.data + 64ul * uint64_t(i % 8u));
    o.v[8u * i + 2u] = b.a.y + b.arr[i & 3u] + b.m[1][0];
    Block c;
    if (i < 16u) c = b; else c = Block(r.data);
    o.v[8u * i + 3u] = c.arr[3] * 2.0;
    o.v[8u * i + 4u] = float(r.ints.x[i * 2u]);
    atomicAdd(r.ints.x[i % 4u], 1);
    o.v[8u * i + 5u] = float(uint64_t(f) - r.data);
    Block d = b + 1;
    o.v[8u * i + 6u] = d.a.x;
    o.v[8u * i + 7u] = float(i);
}
