#version 450
// row_major and column_major matrices in std430 storage and std140 uniform blocks:
// whole-matrix loads, column and element access with dynamic indices, matrix-vector
// products, and row_major stores (the compiler strides along rows). Inputs are small
// integers so every product is exact; compared as values (0 ulp), since Vulkan lets an
// implementation lose the sign of a zero result.
//! dispatch 1
//! buffer 0 uniform 512 = rand i32 -8 8 37
//! buffer 1 storage 512 = rand i32 -8 8 41
//! buffer 2 storage 2048
//! check 2 f32 ulp 0
layout(local_size_x = 4) in;
layout(std140, binding = 0) uniform U { layout(row_major) mat3 rm; mat3 cm; layout(row_major) mat2x4 rm24; } u;
layout(std430, binding = 1) readonly buffer S { layout(row_major) mat4 rm; mat4x2 cm42; layout(row_major) mat3x2 rm32; } s;
layout(std430, binding = 2) writeonly buffer O { layout(row_major) mat4 rm[4]; vec4 v[16]; mat3x2 m32[4]; } o;

void main() {
    uint id = gl_LocalInvocationID.x;
    // Integer-valued floats: reinterpret the random ints as small floats.
    mat3 a = mat3(ivec3(floatBitsToInt(u.rm[0])), ivec3(floatBitsToInt(u.rm[1])), ivec3(floatBitsToInt(u.rm[2])));
    mat3 b = mat3(ivec3(floatBitsToInt(u.cm[0])), ivec3(floatBitsToInt(u.cm[1])), ivec3(floatBitsToInt(u.cm[2])));
    mat4 c;
    for (int i = 0; i < 4; ++i) c[i] = vec4(floatBitsToInt(s.rm[i]));
    mat3 ab = a * b;
    o.rm[id] = mat4(ab) + c * float(id);
    o.v[id * 4u + 0u] = vec4(ab[id % 3u], float(floatBitsToInt(u.rm[id % 3u][(id + 1u) % 3u])));
    o.v[id * 4u + 1u] = c * vec4(1.0, 2.0, 3.0, float(id));
    o.v[id * 4u + 2u] = vec4(floatBitsToInt(u.rm24[id & 1u]));
    o.v[id * 4u + 3u] = vec4(vec2(floatBitsToInt(s.cm42[id])), vec2(floatBitsToInt(s.rm32[id % 3u])));
    mat3x2 m = mat3x2(ivec2(floatBitsToInt(s.rm32[0])), ivec2(floatBitsToInt(s.rm32[1])), ivec2(floatBitsToInt(s.rm32[2])));
    m[id % 3u].y += 100.0;
    o.m32[id] = m;
}
