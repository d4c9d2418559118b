#version 450
// dmat2/dmat3/dmat4 and non-square double matrices: products, transpose, outerProduct,
// determinant and inverse, from small integers (products and sums exact; the inverse
// within a few ULP).
//! features shaderFloat64
//! dispatch 1
//! buffer 0 storage 4096 = rand f64 -8 8 98
//! buffer 1 storage 16384
//! check 1 f64 ulp 8 abs 1e-12
layout(local_size_x = 16) in;
layout(std430, binding = 0) readonly buffer A { double v[]; } a;
layout(std430, binding = 1) writeonly buffer O { double v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    double f[16];
    for (int k = 0; k < 16; k++) f[k] = floor(a.v[i * 16u + uint(k)]);
    dmat4 m = dmat4(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13], f[14], f[15]);
    m += dmat4(11.0lf);
    dvec4 v = dvec4(f[3], f[7], f[11], f[15]);
    uint at = i * 128u;
    dvec4 mv = m * v;
    for (int k = 0; k < 4; k++) o.v[at++] = mv[k];
    dmat4 mm = m * transpose(m);
    for (int c = 0; c < 4; c++) for (int r = 0; r < 4; r++) o.v[at++] = mm[c][r];
    dmat3 p = outerProduct(v.xyz, v.wzy);
    for (int c = 0; c < 3; c++) for (int r = 0; r < 3; r++) o.v[at++] = p[c][r];
    dmat2x3 a23 = dmat2x3(m);
    dvec2 x2 = v.xyz * a23;
    o.v[at++] = x2.x; o.v[at++] = x2.y;
    o.v[at++] = determinant(m);
    o.v[at++] = determinant(dmat3(m));
    o.v[at++] = determinant(dmat2(m));
    dmat4 im = inverse(m);
    for (int c = 0; c < 4; c++) for (int r = 0; r < 4; r++) o.v[at++] = im[c][r];
    dmat3 im3 = inverse(dmat3(m));
    for (int c = 0; c < 3; c++) for (int r = 0; r < 3; r++) o.v[at++] = im3[c][r];
    while (at < i * 128u + 128u) o.v[at++] = 0.0lf;
}
