#version 450
// Matrix algebra on mat2..mat4 and non-square matrices: construction, column and element
// access (constant and dynamic), matrix*vector, vector*matrix, matrix*matrix,
// matrix*scalar, outerProduct, transpose, matrixCompMult. Inputs are small integers, so
// every product and sum is exact whatever the order or fusing.
//! dispatch 1
//! buffer 0 storage 1024 = rand f32 -8 8 15 ; zero
//! buffer 1 storage 8192
//! check 1 f32 ulp 0
layout(local_size_x = 16) in;
layout(std430, binding = 0) readonly buffer A { float v[]; } a;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    float f[16];
    for (int k = 0; k < 16; k++) f[k] = floor(a.v[i * 16u + uint(k)]);
    mat4 m = mat4(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13], f[14], f[15]);
    mat3 m3 = mat3(m);
    mat2 m2 = mat2(f[3], f[5], f[7], f[11]);
    mat2x3 a23 = mat2x3(f[0], f[1], f[2], f[3], f[4], f[5]);
    mat3x2 a32 = mat3x2(f[6], f[7], f[8], f[9], f[10], f[11]);
    vec4 v = vec4(f[12], f[13], f[14], f[15]);
    uint base = i * 128u;
    uint at = base;
    #define PUT(x) o.v[at++] = (x)
    vec4 mv = m * v; PUT(mv.x); PUT(mv.y); PUT(mv.z); PUT(mv.w);
    vec4 vm = v * m; PUT(vm.x); PUT(vm.y); PUT(vm.z); PUT(vm.w);
    mat4 mm = m * transpose(m);
    for (int c = 0; c < 4; c++) for (int r = 0; r < 4; r++) PUT(mm[c][r]);
    mat3 m33 = m3 * m3 * 0.5;
    for (int c = 0; c < 3; c++) for (int r = 0; r < 3; r++) PUT(m33[c][r]);
    mat2 m22 = m2 * a32 * a23;
    for (int c = 0; c < 2; c++) for (int r = 0; r < 2; r++) PUT(m22[c][r]);
    mat3 p = outerProduct(v.xyz, v.wzy);
    for (int c = 0; c < 3; c++) for (int r = 0; r < 3; r++) PUT(p[c][r]);
    mat2x3 mc = matrixCompMult(a23, a23);
    for (int c = 0; c < 2; c++) for (int r = 0; r < 3; r++) PUT(mc[c][r]);
    vec3 x3 = a23 * v.xy; PUT(x3.x); PUT(x3.y); PUT(x3.z);
    vec2 x2 = v.xyz * a23; PUT(x2.x); PUT(x2.y);
    uint c = i & 3u, r = (i >> 2) & 3u;
    PUT(m[c][r]);
    PUT(m[c].y + m[3 - c][r]);
    mat4 w = m;
    w[c] = v;
    w[r][c] = -1.0;
    for (int cc = 0; cc < 4; cc++) for (int rr = 0; rr < 4; rr++) PUT(w[cc][rr]);
    mat4 neg = -m + m * 2.0;
    PUT(neg[1][2]); PUT(neg[3][0]);
    while (at < base + 128u) PUT(0.0);
}
