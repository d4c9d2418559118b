#version 450
// A std140 uniform block with every padding case: scalars after vectors, vec3 followed by a
// float, arrays of scalars (16-byte stride), arrays of vec2, a mat3 (column stride 16), a
// row_major mat2x3, a struct with a trailing array, nested structs.
//! dispatch 1
//! buffer 0 uniform 512 = rand f32 -10 10 43
//! buffer 1 storage 1024
//! check 1 exact
layout(local_size_x = 1) in;
struct Inner { float a; vec2 b; float arr[2]; };
layout(std140, binding = 0) uniform U {
    float f;
    vec3 v3;
    float g;
    float arr[3];
    vec2 v2arr[2];
    mat3 m3;
    layout(row_major) mat2x3 rm;
    Inner inner;
    Inner inners[2];
    uvec4 tail;
} u;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uint k = 0u;
    o.v[k++] = u.f;
    o.v[k++] = u.v3.x; o.v[k++] = u.v3.y; o.v[k++] = u.v3.z;
    o.v[k++] = u.g;
    for (int i = 0; i < 3; i++) o.v[k++] = u.arr[i];
    for (int i = 0; i < 2; i++) { o.v[k++] = u.v2arr[i].x; o.v[k++] = u.v2arr[i].y; }
    for (int c = 0; c < 3; c++) for (int r = 0; r < 3; r++) o.v[k++] = u.m3[c][r];
    for (int c = 0; c < 2; c++) for (int r = 0; r < 3; r++) o.v[k++] = u.rm[c][r];
    o.v[k++] = u.inner.a; o.v[k++] = u.inner.b.x; o.v[k++] = u.inner.b.y;
    o.v[k++] = u.inner.arr[0]; o.v[k++] = u.inner.arr[1];
    for (int i = 0; i < 2; i++) {
        o.v[k++] = u.inners[i].a; o.v[k++] = u.inners[i].b.y; o.v[k++] = u.inners[i].arr[1];
    }
    o.v[k++] = uintBitsToFloat(u.tail.x ^ u.tail.w);
}
