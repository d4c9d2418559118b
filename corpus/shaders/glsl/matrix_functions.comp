#version 450
// Determinant and MatrixInverse of mat2, mat3 and mat4 (precision inherited from the
// cofactor formulas): matrices of small integers with determinants far from zero.
//! dispatch 1
//! buffer 0 storage 4096 = rand f32 -4 4 25
//! buffer 1 storage 8192
//! check 1 f32 ulp 64 abs 1e-5 rel 1e-4
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer A { float v[]; } a;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    float f[16];
    for (int k = 0; k < 16; k++) f[k] = floor(a.v[i * 16u + uint(k)]);
    mat4 m = mat4(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13], f[14], f[15]);
    m += mat4(9.0);
    mat3 m3 = mat3(m);
    mat2 m2 = mat2(m);
    uint base = i * 64u;
    o.v[base] = determinant(m);
    o.v[base + 1u] = determinant(m3);
    o.v[base + 2u] = determinant(m2);
    mat4 im = inverse(m);
    for (int c = 0; c < 4; c++) for (int r = 0; r < 4; r++) o.v[base + 3u + uint(c * 4 + r)] = im[c][r];
    mat3 im3 = inverse(m3);
    for (int c = 0; c < 3; c++) for (int r = 0; r < 3; r++) o.v[base + 19u + uint(c * 3 + r)] = im3[c][r];
    mat2 im2 = inverse(m2);
    for (int c = 0; c < 2; c++) for (int r = 0; r < 2; r++) o.v[base + 28u + uint(c * 2 + r)] = im2[c][r];
    mat4 id = m * im;
    for (int c = 0; c < 4; c++) for (int r = 0; r < 4; r++) o.v[base + 32u + uint(c * 4 + r)] = id[c][r];
    for (uint k = 48u; k < 64u; k++) o.v[base + k] = 0.0;
}
