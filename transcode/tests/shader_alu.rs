//! Step 2: scalar/vector arithmetic, conversions, composites, GLSL.std.450 and matrices,
//! run on the device and compared with the same math on the CPU.

// Matrix and buffer checks index by row/column, as the math is written.
#![allow(clippy::needless_range_loop)]

mod shader_util;
use shader_util::*;

const N: usize = 32;

fn inputs() -> (Vec<f32>, Vec<f32>) {
    let x: Vec<f32> = (0..N).map(|i| (i as f32 - 15.5) * 0.2).collect();
    let y: Vec<f32> = (0..N).map(|i| 0.3 + (i % 7) as f32 * 0.45 * if i % 3 == 0 { -1.0 } else { 1.0 }).collect();
    (x, y)
}

#[test]
fn float_math() {
    let src = r#"#version 450
layout(local_size_x = 8) in;
layout(std430, set = 0, binding = 0) readonly buffer In { float x[32]; float y[32]; } i;
layout(std430, set = 0, binding = 1) buffer Out { float r[]; } o;
const int K = 44;
void put(uint n, int k, float v) { o.r[n * K + k] = v; }
void main() {
    uint n = gl_GlobalInvocationID.x;
    float x = i.x[n], y = i.y[n];
    put(n, 0, x + y); put(n, 1, x - y); put(n, 2, x * y); put(n, 3, x / y);
    put(n, 4, mod(x, y)); put(n, 5, floor(x)); put(n, 6, ceil(x)); put(n, 7, fract(x));
    put(n, 8, abs(x)); put(n, 9, sign(x)); put(n, 10, min(x, y)); put(n, 11, max(x, y));
    put(n, 12, clamp(x, -1.0, 1.0)); put(n, 13, mix(x, y, 0.25)); put(n, 14, step(0.5, x));
    put(n, 15, smoothstep(-1.0, 1.0, x)); put(n, 16, sqrt(abs(x))); put(n, 17, inversesqrt(abs(x) + 1.0));
    put(n, 18, pow(abs(x) + 0.5, 1.5)); put(n, 19, exp(x)); put(n, 20, log(abs(x) + 1.0));
    put(n, 21, exp2(x)); put(n, 22, log2(abs(x) + 1.0)); put(n, 23, sin(x)); put(n, 24, cos(x));
    put(n, 25, tan(x * 0.3)); put(n, 26, atan(x, y)); put(n, 27, fma(x, y, 1.0));
    put(n, 28, length(vec3(x, y, 1.0))); put(n, 29, distance(vec2(x, y), vec2(1.0, 2.0)));
    put(n, 30, dot(vec3(x, y, 1.0), vec3(2.0, 3.0, 4.0)));
    put(n, 31, cross(vec3(x, y, 1.0), vec3(0.5, -1.0, 2.0)).x);
    put(n, 32, normalize(vec3(x, y, 1.0)).y);
    put(n, 33, reflect(vec2(x, y), vec2(0.6, 0.8)).x);
    put(n, 34, trunc(x)); put(n, 35, roundEven(x * 2.0)); put(n, 36, radians(x)); put(n, 37, degrees(x));
    put(n, 38, float(int(x * 10.0))); put(n, 39, asin(clamp(x, -1.0, 1.0))); put(n, 40, sinh(x));
    put(n, 41, -x); put(n, 42, determinant(mat2(x, y, 1.0, 2.0)));
    put(n, 43, float(uint(abs(x) * 3.0)));
}"#;
    let (x, y) = inputs();
    let mut input = bytes_f32(&x);
    input.extend(bytes_f32(&y));
    let k = 44;
    let Some(r) = run(src, &[b(0, 0, Res::Storage(input)), b(0, 1, Res::Storage(vec![0; N * k * 4]))], [4, 1, 1], &[])
    else {
        return;
    };
    let got = r.f32s(1);
    let glsl_mod = |a: f32, b: f32| a - b * (a / b).floor();
    let smooth = |e0: f32, e1: f32, v: f32| {
        let t = ((v - e0) / (e1 - e0)).clamp(0.0, 1.0);
        t * t * (3.0 - 2.0 * t)
    };
    for n in 0..N {
        let (x, y) = (x[n], y[n]);
        let len3 = (x * x + y * y + 1.0).sqrt();
        let want = [
            x + y,
            x - y,
            x * y,
            x / y,
            glsl_mod(x, y),
            x.floor(),
            x.ceil(),
            x - x.floor(),
            x.abs(),
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            },
            x.min(y),
            x.max(y),
            x.clamp(-1.0, 1.0),
            x * 0.75 + y * 0.25,
            if x < 0.5 { 0.0 } else { 1.0 },
            smooth(-1.0, 1.0, x),
            x.abs().sqrt(),
            1.0 / (x.abs() + 1.0).sqrt(),
            (x.abs() + 0.5).powf(1.5),
            x.exp(),
            (x.abs() + 1.0).ln(),
            x.exp2(),
            (x.abs() + 1.0).log2(),
            x.sin(),
            x.cos(),
            (x * 0.3).tan(),
            x.atan2(y),
            x.mul_add(y, 1.0),
            len3,
            ((x - 1.0).powi(2) + (y - 2.0).powi(2)).sqrt(),
            2.0 * x + 3.0 * y + 4.0,
            2.0 * y + 1.0, // cross(..).x = y * 2 - 1 * (-1)
            y / len3,
            x - 2.0 * (0.6 * x + 0.8 * y) * 0.6,
            x.trunc(),
            (x * 2.0).round_ties_even(),
            x.to_radians(),
            x.to_degrees(),
            ((x * 10.0) as i32) as f32,
            x.clamp(-1.0, 1.0).asin(),
            x.sinh(),
            -x,
            x * 2.0 - y,
            ((x.abs() * 3.0) as u32) as f32,
        ];
        close(&got[n * k..n * k + k], &want, 2e-5);
    }
}

#[test]
fn integer_math() {
    let src = r#"#version 450
layout(local_size_x = 8) in;
layout(std430, set = 0, binding = 0) readonly buffer In { int a[32]; int b[32]; } i;
layout(std430, set = 0, binding = 1) buffer Out { int r[]; } o;
const int K = 32;
void put(uint n, int k, int v) { o.r[n * K + k] = v; }
void main() {
    uint n = gl_GlobalInvocationID.x;
    int a = i.a[n], b = i.b[n];
    uint ua = uint(a), ub = uint(b);
    put(n, 0, a + b); put(n, 1, a - b); put(n, 2, a * b); put(n, 3, a / b);
    put(n, 4, abs(a)); put(n, 5, sign(a)); put(n, 6, min(a, b)); put(n, 7, max(a, b));
    put(n, 8, clamp(a, -5, 5)); put(n, 9, a << 3); put(n, 10, a >> 2); put(n, 11, int(ua >> 2));
    put(n, 12, a & b); put(n, 13, a | b); put(n, 14, a ^ b); put(n, 15, ~a);
    put(n, 16, bitfieldExtract(a, 3, 5)); put(n, 17, int(bitfieldExtract(ua, 3, 5)));
    put(n, 18, bitfieldInsert(a, b, 4, 8)); put(n, 19, bitCount(a)); put(n, 20, findLSB(a));
    put(n, 21, findMSB(a)); put(n, 22, findMSB(ua)); put(n, 23, bitfieldReverse(a));
    put(n, 24, int(ua / max(ub, 1u))); put(n, 25, int(ua % max(ub, 1u)));
    uint carry; uint s = uaddCarry(ua, ub, carry); put(n, 26, int(s + carry * 1000u));
    uint hi, lo; umulExtended(ua, ub, hi, lo); put(n, 27, int(hi ^ lo));
    int shi, slo; imulExtended(a, b, shi, slo); put(n, 28, shi + slo);
    put(n, 29, int(min(ua, ub))); put(n, 30, (a < b ? 1 : 0) + (ua < ub ? 2 : 0) + (a == b ? 4 : 0));
    put(n, 31, -a);
}"#;
    let a: Vec<i32> = (0..N as i32).map(|i| (i - 16) * 37 + (i % 5) * 1_000_003).collect();
    let bb: Vec<i32> = (0..N as i32).map(|i| if i % 4 == 0 { -(i + 3) } else { i * 11 + 1 }).collect();
    let mut input = bytes_i32(&a);
    input.extend(bytes_i32(&bb));
    let k = 32;
    let Some(r) = run(src, &[b(0, 0, Res::Storage(input)), b(0, 1, Res::Storage(vec![0; N * k * 4]))], [4, 1, 1], &[])
    else {
        return;
    };
    let got = r.i32s(1);
    let msb = |v: u32| if v == 0 { -1 } else { 31 - v.leading_zeros() as i32 };
    let bfe_s = |v: i32, off: u32, bits: u32| (v << (32 - off - bits)) >> (32 - bits);
    let bfe_u = |v: u32, off: u32, bits: u32| (v >> off) & ((1 << bits) - 1);
    for n in 0..N {
        let (a, b) = (a[n], bb[n]);
        let (ua, ub) = (a as u32, b as u32);
        let (s, c) = ua.overflowing_add(ub);
        let wide = ua as u64 * ub as u64;
        let swide = a as i64 * b as i64;
        let want = [
            a.wrapping_add(b),
            a.wrapping_sub(b),
            a.wrapping_mul(b),
            a / b,
            a.abs(),
            a.signum(),
            a.min(b),
            a.max(b),
            a.clamp(-5, 5),
            a << 3,
            a >> 2,
            (ua >> 2) as i32,
            a & b,
            a | b,
            a ^ b,
            !a,
            bfe_s(a, 3, 5),
            bfe_u(ua, 3, 5) as i32,
            ((ua & !(0xFF << 4)) | ((ub & 0xFF) << 4)) as i32,
            a.count_ones() as i32,
            if a == 0 { -1 } else { a.trailing_zeros() as i32 },
            if a < 0 { msb(!ua) } else { msb(ua) },
            msb(ua),
            a.reverse_bits(),
            (ua / ub.max(1)) as i32,
            (ua % ub.max(1)) as i32,
            s.wrapping_add(c as u32 * 1000) as i32,
            (((wide >> 32) as u32) ^ (wide as u32)) as i32,
            ((swide >> 32) as i32).wrapping_add(swide as i32),
            ua.min(ub) as i32,
            (a < b) as i32 + 2 * (ua < ub) as i32 + 4 * (a == b) as i32,
            a.wrapping_neg(),
        ];
        assert_eq!(&got[n * k..n * k + k], &want, "invocation {n} (a={a}, b={b})");
    }
}

#[test]
fn vectors_bools_and_composites() {
    let src = r#"#version 450
layout(local_size_x = 4) in;
layout(std430, set = 0, binding = 0) buffer Out { vec4 r[]; } o;
struct S { vec3 p; int k; float w[2]; };
void main() {
    uint n = gl_GlobalInvocationID.x;
    float f = float(n);
    vec4 v = vec4(f, f + 1.0, f * 2.0, -f);
    vec4 w = v.wzyx;                        // shuffle
    v.y = 10.0;                             // insert
    bvec4 lt = lessThan(v, w);
    vec4 sel = mix(w, v, lt);               // select by bvec
    float dyn = v[n % 4u];                  // dynamic extract
    vec4 ins = vec4(0.0); ins[n % 4u] = 7.0; // dynamic insert
    S s = S(vec3(1.0, 2.0, f), int(n) * 3, float[2](0.5, f));
    S t = s; t.w[1] = 9.0;
    o.r[n * 6u + 0u] = w;
    o.r[n * 6u + 1u] = sel;
    o.r[n * 6u + 2u] = vec4(dyn, any(lt) ? 1.0 : 0.0, all(lt) ? 1.0 : 0.0, float(s.k));
    o.r[n * 6u + 3u] = ins;
    o.r[n * 6u + 4u] = vec4(s.p.z, s.w[1], t.w[1], (n > 1u && !(n == 3u)) ? 1.0 : 0.0);
    ivec3 iv = ivec3(n, n * 2u, 5) + ivec3(1);
    o.r[n * 6u + 5u] = vec4(iv.zyx, float(uvec2(n, 3u).y));
}"#;
    let Some(r) = run(src, &[b(0, 0, Res::Storage(vec![0; 4 * 6 * 16]))], [1, 1, 1], &[]) else { return };
    let got = r.f32s(0);
    for n in 0..4usize {
        let f = n as f32;
        let v0 = [f, f + 1.0, f * 2.0, -f];
        let w = [v0[3], v0[2], v0[1], v0[0]];
        let v = [f, 10.0, f * 2.0, -f];
        let lt: Vec<bool> = (0..4).map(|k| v[k] < w[k]).collect();
        let sel: Vec<f32> = (0..4).map(|k| if lt[k] { v[k] } else { w[k] }).collect();
        let mut ins = [0.0; 4];
        ins[n % 4] = 7.0;
        let want: Vec<f32> = [
            w.to_vec(),
            sel,
            vec![v[n % 4], lt.iter().any(|&b| b) as i32 as f32, lt.iter().all(|&b| b) as i32 as f32, (n * 3) as f32],
            ins.to_vec(),
            vec![f, f, 9.0, (n > 1 && n != 3) as i32 as f32],
            vec![5.0 + 1.0, (n * 2) as f32 + 1.0, f + 1.0, 3.0],
        ]
        .concat();
        close(&got[n * 24..n * 24 + 24], &want, 1e-6);
    }
}

#[test]
fn matrices() {
    let src = r#"#version 450
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer Out { float r[]; } o;
int at = 0;
void putv(vec4 v) { o.r[at++] = v.x; o.r[at++] = v.y; o.r[at++] = v.z; o.r[at++] = v.w; }
void main() {
    mat3 a = mat3(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0);
    mat3 b = mat3(0.5, -1.0, 2.0, 1.5, 0.0, 1.0, -2.0, 3.0, 0.25);
    vec3 v = vec3(1.0, -2.0, 0.5);
    putv(vec4(a * v, 0.0));
    putv(vec4(v * a, 0.0));
    mat3 c = a * b;
    putv(vec4(c[0], c[1].x)); putv(vec4(c[1].yz, c[2].xy)); putv(vec4(c[2].z, 0.0, 0.0, 0.0));
    mat3 t = transpose(a);
    putv(vec4(t[0], t[1].x));
    mat4x3 m43 = mat4x3(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0);
    putv(vec4(m43 * vec4(1.0, 0.5, -1.0, 2.0), 0.0));
    mat3 op = outerProduct(vec3(1.0, 2.0, 3.0), vec3(4.0, 5.0, 6.0));
    putv(vec4(op[0], op[2].z));
    mat3 s = a * 2.0;
    putv(vec4(s[2], determinant(a)));
    mat3 inv = inverse(a);
    mat3 id = inv * a;
    putv(vec4(id[0], id[1].y));
    putv(vec4(id[2], inverse(mat2(4.0, 7.0, 2.0, 6.0))[1].x));
}"#;
    let Some(r) = run(src, &[b(0, 0, Res::Storage(vec![0; 44 * 4]))], [1, 1, 1], &[]) else { return };
    let got = r.f32s(0);
    // Column-major helpers.
    let a = [[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]];
    let bm = [[0.5f32, -1.0, 2.0], [1.5, 0.0, 1.0], [-2.0, 3.0, 0.25]];
    let v = [1.0f32, -2.0, 0.5];
    let mv: Vec<f32> = (0..3).map(|r| (0..3).map(|c| a[c][r] * v[c]).sum()).collect();
    let vm: Vec<f32> = (0..3).map(|c| (0..3).map(|r| a[c][r] * v[r]).sum()).collect();
    let mut c = [[0.0f32; 3]; 3];
    for j in 0..3 {
        for r in 0..3 {
            c[j][r] = (0..3).map(|k| a[k][r] * bm[j][k]).sum();
        }
    }
    let m43: Vec<[f32; 3]> =
        (0..4).map(|cc| [1.0 + 3.0 * cc as f32, 2.0 + 3.0 * cc as f32, 3.0 + 3.0 * cc as f32]).collect();
    let v4 = [1.0f32, 0.5, -1.0, 2.0];
    let m43v: Vec<f32> = (0..3).map(|r| (0..4).map(|cc| m43[cc][r] * v4[cc]).sum()).collect();
    let det = a[0][0] * (a[1][1] * a[2][2] - a[2][1] * a[1][2]) - a[1][0] * (a[0][1] * a[2][2] - a[2][1] * a[0][2])
        + a[2][0] * (a[0][1] * a[1][2] - a[1][1] * a[0][2]);
    let want = [
        mv[0], mv[1], mv[2], 0.0, vm[0], vm[1], vm[2], 0.0, c[0][0], c[0][1], c[0][2], c[1][0], c[1][1], c[1][2],
        c[2][0], c[2][1], c[2][2], 0.0, 0.0, 0.0, 1.0, 4.0, 7.0, 2.0, m43v[0], m43v[1], m43v[2], 0.0, 4.0, 8.0, 12.0,
        18.0, 14.0, 16.0, 20.0, det, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, -0.2,
    ];
    close(&got, &want, 1e-4);
}

#[test]
fn int64_math() {
    let src = r#"#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 8) in;
layout(std430, set = 0, binding = 0) buffer B { uint64_t a[16]; int64_t s[16]; uint64_t r[]; } b;
void main() {
    uint n = gl_GlobalInvocationID.x;
    uint64_t a = b.a[n];
    int64_t s = b.s[n];
    uint base = n * 12u;
    b.r[base + 0u] = a + 0x100000001ul;
    b.r[base + 1u] = a * 3ul - uint64_t(n);
    b.r[base + 2u] = a >> 7;
    b.r[base + 3u] = uint64_t(s >> 3);
    b.r[base + 4u] = a << (n + 1u);
    b.r[base + 5u] = (a ^ 0xFFFF0000FFFF0000ul) | 1ul;
    b.r[base + 6u] = uint64_t(s / int64_t(n + 1u));
    b.r[base + 7u] = a % uint64_t(n + 7u);
    b.r[base + 8u] = uint64_t(a > 0x80000000ul) + uint64_t(s < 0l) * 2ul;
    b.r[base + 9u] = uint64_t(int64_t(int(n) - 4));   // SConvert
    b.r[base + 10u] = uint64_t(uint(a));               // truncate, then UConvert
    uvec2 parts = unpackUint2x32(a);
    b.r[base + 11u] = packUint2x32(parts.yx) + uint64_t(float(s) < 0.0 ? 1u : 0u);
}"#;
    let a: Vec<u64> = (0..16u64).map(|i| 0x1234_5678_9ABC_DEF0u64.rotate_left(i as u32 * 5) ^ (i * 977)).collect();
    let s: Vec<i64> = (0..16i64).map(|i| (i - 8) * 0x1_0000_0003 + i).collect();
    let mut input: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
    input.extend(s.iter().flat_map(|v| v.to_le_bytes()));
    input.extend(vec![0u8; 16 * 12 * 8]);
    let Some(r) = run(src, &[b(0, 0, Res::Storage(input))], [2, 1, 1], &[]) else { return };
    let out: Vec<u64> = r.data[0][256..].chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    for n in 0..16usize {
        let (a, s) = (a[n], s[n]);
        let want = [
            a.wrapping_add(0x1_0000_0001),
            a.wrapping_mul(3).wrapping_sub(n as u64),
            a >> 7,
            (s >> 3) as u64,
            a << (n + 1),
            (a ^ 0xFFFF_0000_FFFF_0000) | 1,
            (s / (n as i64 + 1)) as u64,
            a % (n as u64 + 7),
            (a > 0x8000_0000) as u64 + 2 * (s < 0) as u64,
            (n as i64 - 4) as u64,
            a as u32 as u64,
            a.rotate_left(32) + ((s as f32) < 0.0) as u64,
        ];
        assert_eq!(&out[n * 12..n * 12 + 12], &want, "invocation {n}");
    }
}

#[test]
fn packing_and_rarer_glsl_functions() {
    let src = r#"#version 450
layout(local_size_x = 8) in;
layout(std430, set = 0, binding = 0) buffer Out { float r[]; } o;
void main() {
    uint n = gl_GlobalInvocationID.x;
    float x = (float(n) - 3.5) * 0.37;
    vec4 v = vec4(x, -x * 0.5, 0.25, 1.5);
    uint base = n * 16u;
    o.r[base + 0u] = uintBitsToFloat(packUnorm4x8(v));
    o.r[base + 1u] = uintBitsToFloat(packSnorm4x8(v));
    o.r[base + 2u] = uintBitsToFloat(packHalf2x16(v.xy));
    vec4 u = unpackUnorm4x8(0x80FF4001u + n);
    o.r[base + 3u] = u.x + u.y * 10.0 + u.w * 100.0;
    vec2 h = unpackHalf2x16(packHalf2x16(vec2(x, 2.0 * x)));
    o.r[base + 4u] = h.x;
    o.r[base + 5u] = unpackSnorm2x16(packSnorm2x16(vec2(x, -0.25))).x;
    float whole;
    o.r[base + 6u] = modf(x * 3.0, whole);
    o.r[base + 7u] = whole;
    int e;
    float m = frexp(x * 100.0 + 0.125, e);
    o.r[base + 8u] = m;
    o.r[base + 9u] = float(e);
    o.r[base + 10u] = ldexp(1.5, int(n) - 3);
    vec3 rf = refract(normalize(vec3(x, -1.0, 0.0)), vec3(0.0, 1.0, 0.0), 0.66);
    o.r[base + 11u] = rf.x;
    o.r[base + 12u] = faceforward(vec2(1.0, 0.0), vec2(x, 1.0), vec2(1.0, 0.0)).x;
    o.r[base + 13u] = float(isnan((x - x) / (x - x)) ? 1 : 0) + float(isinf(1.0 / (x - x)) ? 10 : 0);
    o.r[base + 14u] = atanh(x * 0.2) + acos(x * 0.2) + cosh(x);
    o.r[base + 15u] = clamp(x, 0.0, 1.0) + float(clamp(int(n) - 4, -1, 2));
}"#;
    let Some(r) = run(src, &[b(0, 0, Res::Storage(vec![0; 8 * 16 * 4]))], [1, 1, 1], &[]) else { return };
    let got = r.f32s(0);
    let bits = |v: u32| f32::from_bits(v);
    for n in 0..8usize {
        let x = (n as f32 - 3.5) * 0.37;
        let v = [x, -x * 0.5, 0.25, 1.5];
        let unorm = |f: f32| (f.clamp(0.0, 1.0) * 255.0).round_ties_even() as u32;
        let snorm = |f: f32| ((f.clamp(-1.0, 1.0) * 127.0).round_ties_even() as i32 as u32) & 0xFF;
        let pu: u32 = (0..4).map(|k| unorm(v[k]) << (8 * k)).sum();
        let ps: u32 = (0..4).map(|k| snorm(v[k]) << (8 * k)).sum();
        let half = |f: f32| half::f16::from_f32(f).to_bits() as u32;
        let p = 0x80FF_4001u32 + n as u32;
        let un = |k: u32| ((p >> (8 * k)) & 0xFF) as f32 / 255.0;
        let (mut e, mut m) = (0i32, x * 100.0 + 0.125);
        while m.abs() >= 1.0 {
            m /= 2.0;
            e += 1;
        }
        while m.abs() < 0.5 {
            m *= 2.0;
            e -= 1;
        }
        let i = [x, -1.0f32, 0.0];
        let len = (x * x + 1.0).sqrt();
        let i = [i[0] / len, i[1] / len];
        let d = i[1]; // dot(N, I) with N = +y
        let k = 1.0 - 0.66 * 0.66 * (1.0 - d * d);
        let rfx = if k < 0.0 { 0.0 } else { 0.66 * i[0] };
        let want = [
            bits(pu),
            bits(ps),
            bits(half(x) | half(-x * 0.5) << 16),
            un(0) + un(1) * 10.0 + un(3) * 100.0,
            half::f16::from_f32(x).to_f32(),
            ((x.clamp(-1.0, 1.0) * 32767.0).round_ties_even()) / 32767.0,
            (x * 3.0).fract(),
            (x * 3.0).trunc(),
            m,
            e as f32,
            1.5 * 2f32.powi(n as i32 - 3),
            rfx,
            if x < 0.0 { 1.0 } else { -1.0 },
            1.0 + 10.0,
            (x * 0.2).atanh() + (x * 0.2).acos() + x.cosh(),
            x.clamp(0.0, 1.0) + (n as i32 - 4).clamp(-1, 2) as f32,
        ];
        close(&got[n * 16..n * 16 + 16], &want, 2e-5);
    }
}
