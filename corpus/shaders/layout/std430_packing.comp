#version 450
// std430 storage blocks: vec3 followed by a float (packed into its 16 bytes), arrays of
// scalars and vec2 at their natural strides, mat3 (column stride 16) and row-major matrices,
// arrays of arrays, explicit member offsets, and a std140 storage block for comparison.
//! dispatch 1
//! buffer 0 storage 2048 = rand f32 -10 10 142
//! buffer 1 storage 1024 = rand f32 -10 10 143
//! buffer 2 storage 2048
//! check 2 exact
layout(local_size_x = 4) in;
struct T { vec3 v; float f; float arr[3]; vec2 w; };
layout(std430, binding = 0) buffer A {
    T t[4];
    mat3 m3;
    layout(row_major) mat2x3 rm;
    float aa[2][3];
    layout(offset = 512) vec4 late;
} a;
layout(std140, binding = 1) buffer B { float s[4]; vec2 v2[2]; mat2 m; } b;
layout(std430, binding = 2) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    uint k = i * 64u;
    T t = a.t[i];
    o.v[k++] = t.v.x; o.v[k++] = t.v.z; o.v[k++] = t.f;
    for (int j = 0; j < 3; j++) o.v[k++] = t.arr[j];
    o.v[k++] = t.w.y;
    for (int c = 0; c < 3; c++) for (int r = 0; r < 3; r++) o.v[k++] = a.m3[c][r];
    for (int c = 0; c < 2; c++) for (int r = 0; r < 3; r++) o.v[k++] = a.rm[c][r];
    for (int x = 0; x < 2; x++) for (int y = 0; y < 3; y++) o.v[k++] = a.aa[x][y];
    o.v[k++] = a.late.w;
    o.v[k++] = b.s[i];
    o.v[k++] = b.v2[i & 1u].y;
    o.v[k++] = b.m[1][i & 1u];
    vec3 col = a.rm[i & 1u];
    o.v[k++] = col.x + col.y * 2.0 + col.z * 4.0;
    a.t[i].w = t.w * 2.0;
    a.rm[1][i % 3u] = float(i);
    while (k < i * 64u + 64u) o.v[k++] = 0.0;
}
