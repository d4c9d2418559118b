//! Step 4: buffers in std140/std430 (structs, arrays, row/column-major matrices, runtime
//! arrays and their length), push constants, Function/Private variables in registers and in
//! private memory, Workgroup memory with barriers, atomics, dynamic and arrayed buffers.

// Matrix and buffer checks index by row/column, as the math is written.
#![allow(clippy::needless_range_loop)]

mod shader_util;
use shader_util::*;

fn put_f32(buf: &mut [u8], off: usize, v: f32) {
    buf[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
fn put_u32(buf: &mut [u8], off: usize, v: u32) {
    buf[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn std140_uniform_layout() {
    let src = r#"#version 450
layout(local_size_x = 1) in;
layout(std140, set = 0, binding = 0) uniform U {
    vec3 a;                       // 0
    float b;                      // 12
    vec2 c;                       // 16
    float d[3];                   // 32, stride 16
    mat3 m;                       // 80, columns 16 apart
    layout(row_major) mat2x3 rm;  // 128, rows 16 apart
    ivec4 iv;                     // 176
    bool flag;                    // 192
} u;
layout(std430, set = 0, binding = 1) buffer Out { float r[]; } o;
void main() {
    int k = 0;
    o.r[k++] = u.a.x; o.r[k++] = u.a.y; o.r[k++] = u.a.z; o.r[k++] = u.b;
    o.r[k++] = u.c.x; o.r[k++] = u.c.y;
    for (int i = 0; i < 3; i++) o.r[k++] = u.d[i];
    vec3 mv = u.m * vec3(1.0, 2.0, 3.0);
    o.r[k++] = mv.x; o.r[k++] = mv.y; o.r[k++] = mv.z;
    vec3 rv = u.rm * vec2(1.0, -1.0);
    o.r[k++] = rv.x; o.r[k++] = rv.y; o.r[k++] = rv.z;
    o.r[k++] = u.rm[1][2];
    o.r[k++] = float(u.iv.w);
    o.r[k++] = u.flag ? 5.0 : 6.0;
    int j = int(u.iv.x);
    o.r[k++] = u.d[j];             // dynamic index into a std140 array
    o.r[k++] = u.m[j][j + 1];      // dynamic column of a matrix
}"#;
    let mut ub = vec![0u8; 208];
    for (i, v) in [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0].iter().enumerate() {
        put_f32(&mut ub, [0, 4, 8, 12, 16, 20][i], *v);
    }
    for i in 0..3 {
        put_f32(&mut ub, 32 + 16 * i, 10.0 + i as f32);
    }
    let m = [[1.0f32, 0.0, 2.0], [0.0, 3.0, 1.0], [4.0, 1.0, 0.5]];
    for (c, col) in m.iter().enumerate() {
        for (r, v) in col.iter().enumerate() {
            put_f32(&mut ub, 80 + 16 * c + 4 * r, *v);
        }
    }
    // Row-major mat2x3: 2 columns, 3 rows; row r holds (col0, col1) at 128 + 16 r.
    let rm = [[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]; // [col][row]
    for c in 0..2 {
        for r in 0..3 {
            put_f32(&mut ub, 128 + 16 * r + 4 * c, rm[c][r]);
        }
    }
    for (i, v) in [1u32, 2, 3, 42].iter().enumerate() {
        put_u32(&mut ub, 176 + 4 * i, *v);
    }
    put_u32(&mut ub, 192, 7);
    let Some(r) = run(src, &[b(0, 0, Res::Uniform(ub)), b(0, 1, Res::Storage(vec![0; 21 * 4]))], [1, 1, 1], &[]) else {
        return;
    };
    let mv: Vec<f32> = (0..3).map(|r| m[0][r] + 2.0 * m[1][r] + 3.0 * m[2][r]).collect();
    let rv: Vec<f32> = (0..3).map(|r| rm[0][r] - rm[1][r]).collect();
    let want = [
        1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 10.0, 11.0, 12.0, mv[0], mv[1], mv[2], rv[0], rv[1], rv[2], 6.0, 42.0, 5.0, 11.0,
        m[1][2],
    ];
    close(&r.f32s(1)[..20], &want, 1e-6);
}

#[test]
fn std430_structs_runtime_arrays_and_length() {
    let src = r#"#version 450
layout(local_size_x = 8) in;
struct P { vec3 pos; float w; ivec2 id; };   // std430: 0, 12, 16; stride 32
layout(std430, set = 0, binding = 0) buffer B {
    mat4x3 xf;                  // 0: 4 columns of vec3, 16 apart
    layout(row_major) mat3 rmat; // 64: rows 16 apart
    uint count;                 // 112
    P parts[];                  // 128
} bb;
void main() {
    uint n = gl_GlobalInvocationID.x;
    P p = bb.parts[n];
    vec3 q = bb.xf * vec4(p.pos, 1.0);
    bb.parts[n].pos = q;
    bb.parts[n].w = dot(bb.rmat * p.pos, vec3(1.0));
    bb.parts[n].id.y = int(n) * 2 + p.id.x;
    if (n == 0u) bb.count = uint(bb.parts.length());
}"#;
    let n = 16usize;
    let mut buf = vec![0u8; 128 + 32 * n];
    let xf = [[1.0f32, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0], [10.0, 20.0, 30.0]];
    for (c, col) in xf.iter().enumerate() {
        for (r, v) in col.iter().enumerate() {
            put_f32(&mut buf, 16 * c + 4 * r, *v);
        }
    }
    let rmat = [[1.0f32, 2.0, 3.0], [0.0, 1.0, 0.0], [2.0, 0.0, 1.0]]; // [col][row]
    for c in 0..3 {
        for r in 0..3 {
            put_f32(&mut buf, 64 + 16 * r + 4 * c, rmat[c][r]);
        }
    }
    for i in 0..n {
        let o = 128 + 32 * i;
        for k in 0..3 {
            put_f32(&mut buf, o + 4 * k, i as f32 + k as f32 * 0.5);
        }
        put_f32(&mut buf, o + 12, -1.0);
        put_u32(&mut buf, o + 16, 100 + i as u32);
        put_u32(&mut buf, o + 20, 7);
    }
    let Some(r) = run(src, &[b(0, 0, Res::Storage(buf))], [2, 1, 1], &[]) else { return };
    let out = &r.data[0];
    let f = |o: usize| f32::from_le_bytes(out[o..o + 4].try_into().unwrap());
    let u = |o: usize| u32::from_le_bytes(out[o..o + 4].try_into().unwrap());
    assert_eq!(u(112), n as u32, "runtime array length");
    for i in 0..n {
        let o = 128 + 32 * i;
        let p = [i as f32, i as f32 + 0.5, i as f32 + 1.0];
        let q: Vec<f32> = (0..3).map(|r| xf[0][r] * p[0] + xf[1][r] * p[1] + xf[2][r] * p[2] + xf[3][r]).collect();
        let rp: f32 = (0..3).map(|r| (0..3).map(|c| rmat[c][r] * p[c]).sum::<f32>()).sum();
        close(&[f(o), f(o + 4), f(o + 8), f(o + 12)], &[q[0], q[1], q[2], rp], 1e-5);
        assert_eq!((u(o + 16), u(o + 20)), (100 + i as u32, (2 * i + 100 + i) as u32), "part {i}");
    }
}

#[test]
fn push_constants_and_private_arrays() {
    let src = r#"#version 450
layout(local_size_x = 8) in;
layout(push_constant) uniform PC { vec4 origin; vec4 dir; float tmin; float tmax; } pc;
layout(std430, set = 0, binding = 0) buffer Out { float r[]; } o;
float table[10];                   // Private, indexed dynamically: private memory
void main() {
    uint n = gl_GlobalInvocationID.x;
    float local[4] = float[4](1.0, 2.0, 3.0, 4.0);  // constant indices only: registers
    for (int i = 0; i < 10; i++) table[i] = float(i * int(n));
    float dyn[6];                                  // Function, dynamic: private memory
    for (int i = 0; i < 6; i++) dyn[i] = float(i) + 0.5;
    dyn[n % 6u] += 100.0;
    o.r[n * 4u + 0u] = table[n % 10u] + table[(n * 3u) % 10u];
    o.r[n * 4u + 1u] = local[0] + local[3] * pc.origin.y;
    o.r[n * 4u + 2u] = pc.dir.z * pc.tmax + pc.tmin;
    o.r[n * 4u + 3u] = dyn[(n + 1u) % 6u] + dyn[n % 6u];
}"#;
    let mut push = Vec::new();
    for v in [1.0f32, 2.0, 3.0, 4.0, 0.5, 0.25, -1.0, 0.0, 0.125, 8.0] {
        push.extend_from_slice(&v.to_le_bytes());
    }
    run_variants(src, &[b(0, 0, Res::Storage(vec![0; 16 * 16]))], [2, 1, 1], &push, |what, r| {
        let got = r.f32s(0);
        for n in 0..16usize {
            let mut dyn_: Vec<f32> = (0..6).map(|i| i as f32 + 0.5).collect();
            dyn_[n % 6] += 100.0;
            let want = [
                ((n % 10) * n) as f32 + (((n * 3) % 10) * n) as f32,
                1.0 + 4.0 * 2.0,
                -8.0 + 0.125, // dir.z * tmax + tmin
                dyn_[(n + 1) % 6] + dyn_[n % 6],
            ];
            close(&got[n * 4..n * 4 + 4], &want, 1e-6);
            let _ = what;
        }
    });
}

#[test]
fn workgroup_memory_barriers_and_atomics() {
    let src = r#"#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Out {
    uint sum[4]; uint total[4]; uint counter; uint mx; int mn; uint andv; uint orv; uint xorv;
    uint xchg; uint cas; uint before[256];
} o;
shared uint sh[64];
shared uint total;
void main() {
    uint l = gl_LocalInvocationID.x, g = gl_GlobalInvocationID.x, w = gl_WorkGroupID.x;
    sh[l] = g + 1u;
    if (l == 0u) total = 0u;
    barrier();
    for (uint s = 32u; s > 0u; s >>= 1) {
        if (l < s) sh[l] += sh[l + s];
        barrier();
    }
    atomicAdd(total, l);
    barrier();
    if (l == 0u) { o.sum[w] = sh[0]; o.total[w] = total; }
    o.before[g] = atomicAdd(o.counter, 1u) < 256u ? 1u : 0u;
    atomicMax(o.mx, g * 7u % 101u);
    atomicMin(o.mn, -int(g));
    atomicAnd(o.andv, ~(1u << (g % 32u)));
    atomicOr(o.orv, 1u << (g % 32u));
    atomicXor(o.xorv, g);
    atomicExchange(o.xchg, 5u);
    atomicCompSwap(o.cas, g, g + 1u);
}"#;
    let mut init = vec![0u8; 4 * (4 + 4 + 8 + 256)];
    put_u32(&mut init, 4 * 10, 0); // mn starts at 0
    put_u32(&mut init, 4 * 11, u32::MAX); // andv
    let groups = 4u32;
    run_variants(src, &[b(0, 0, Res::Storage(init.clone()))], [groups, 1, 1], &[], |what, r| {
        let u = r.u32s(0);
        for w in 0..groups as usize {
            let lo = 64 * w as u32;
            let want: u32 = (lo + 1..=lo + 64).sum();
            assert_eq!(u[w], want, "{what}: workgroup {w} reduction");
            assert_eq!(u[4 + w], (0..64).sum::<u32>(), "{what}: shared atomicAdd");
        }
        let n = 64 * groups;
        assert_eq!(u[8], n, "{what}: counter");
        assert_eq!(u[9], (0..n).map(|g| g * 7 % 101).max().unwrap(), "{what}: max");
        assert_eq!(u[10] as i32, -(n as i32 - 1), "{what}: min");
        assert_eq!(u[11], 0, "{what}: and");
        assert_eq!(u[12], u32::MAX, "{what}: or");
        assert_eq!(u[13], (0..n).fold(0, |a, g| a ^ g), "{what}: xor");
        assert_eq!(u[14], 5, "{what}: exchange");
        // cas: 0 -> 1 by g = 0, then 1 -> 2 only if g = 1 runs after, ...: at least 1.
        assert!(u[15] >= 1 && u[15] <= n, "{what}: compare-exchange {}", u[15]);
        assert!(u[16..].iter().all(|&v| v == 1), "{what}: atomic results");
    });
}

#[test]
fn dynamic_and_arrayed_buffers() {
    let src = r#"#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 8) in;
layout(std430, set = 0, binding = 0) buffer D { uint v[4]; } dyn;
layout(std430, set = 0, binding = 1) buffer A { uint v[8]; } arr[3];
layout(std430, set = 1, binding = 0) buffer R { uint len[3]; } res;
void main() {
    uint n = gl_GlobalInvocationID.x;
    arr[nonuniformEXT(n % 3u)].v[n / 3u] = dyn.v[n % 4u] * 100u + n;
    if (n < 3u) res.len[n] = arr[n].v.length();
}"#;
    // The dynamic offset skips the first 16 bytes (4 words) of the buffer.
    let dynbuf = bytes_u32(&[9, 9, 9, 9, 1, 2, 3, 4]);
    let arrays = vec![vec![0u8; 32], vec![0u8; 32], vec![0u8; 32]];
    run_variants(
        src,
        &[
            b(0, 0, Res::StorageDynamic(dynbuf, 16)),
            b(0, 1, Res::StorageArray(arrays)),
            b(1, 0, Res::Storage(vec![0; 12])),
        ],
        [2, 1, 1],
        &[],
        |what, r| {
            for a in 0..3usize {
                let got = r.u32s(1 + a);
                for (slot, &v) in got.iter().enumerate() {
                    let n = slot * 3 + a;
                    let want = if n < 16 { [1u32, 2, 3, 4][n % 4] * 100 + n as u32 } else { 0 };
                    assert_eq!(v, want, "{what}: arr[{a}].v[{slot}]");
                }
            }
            assert_eq!(r.u32s(4), vec![8, 8, 8], "{what}: lengths");
        },
    );
}

#[test]
fn robust_buffer_access_bounds_descriptor_accesses() {
    let src = r#"#version 450
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer S { uint v[]; } s;
layout(std430, set = 0, binding = 1) buffer D { uint v[]; } d;
layout(std430, set = 0, binding = 2) buffer V { uvec4 v[]; } vec;
layout(std430, set = 0, binding = 3) buffer R { uint r[12]; } res;
layout(push_constant) uniform P { uint far; };
void main() {
    s.v[3] = 5u;
    s.v[4] = 7u;
    s.v[far] = 7u;
    d.v[4] = 7u;
    vec.v[1] = uvec4(7u);
    res.r[0] = s.v[4];
    res.r[1] = s.v[far];
    res.r[2] = d.v[4];
    res.r[3] = d.v[3];
    res.r[4] = s.v[3];
    res.r[5] = atomicAdd(s.v[far], 1u);
    res.r[6] = atomicAdd(s.v[2], 1u);
    uvec4 w = vec.v[1];
    res.r[7] = w.x | w.y | w.z | w.w;
    res.r[8] = vec.v[0].w;
    res.r[9] = uint(s.v.length());
    res.r[10] = 0xC0FFEEu;
}"#;
    let Some(words) = glsl(src) else { return };
    let bindings = || {
        vec![
            b(0, 0, Res::Storage(bytes_u32(&[10, 11, 12, 13]))),
            // The dynamic offset skips 4 words: the range is words 4..8 of the buffer.
            b(0, 1, Res::StorageDynamic(bytes_u32(&[0, 1, 2, 3, 20, 21, 22, 23]), 16)),
            b(0, 2, Res::Storage(bytes_u32(&[30, 31, 32, 33]))),
            b(0, 3, Res::Storage(vec![0; 48])),
        ]
    };
    // Without robustness the compiled code has no check; with it, every access has one.
    let plain = build(&words, &bindings(), 4, &[]).unwrap();
    let checked = build_robust(&words, &bindings(), 4, &[], true).unwrap();
    let count = |k: &vortex_transcode::shader::CompiledKernel| {
        k.code.iter().filter(|i| i.op == vortex_model::abi::isa::Op::Icmp64).count()
    };
    assert_eq!(count(&plain), 0, "{}", plain.disassemble());
    assert!(count(&checked) >= 14, "{}", checked.disassemble());
    for threads in [8, 32] {
        let r = run_words_robust(&words, &bindings(), [1, 1, 1], &0x0100_0000u32.to_le_bytes(), &[], threads, true);
        assert_eq!(r.u32s(0), vec![10, 11, 13, 5], "{threads} lanes: s (only in-bounds writes landed)");
        assert_eq!(r.u32s(1), vec![0, 1, 2, 3, 20, 21, 22, 23], "{threads} lanes: d unchanged");
        assert_eq!(r.u32s(2), vec![30, 31, 32, 33], "{threads} lanes: vec unchanged");
        let res = r.u32s(3);
        assert_eq!(res[..5], [0, 0, 0, 23, 5], "{threads} lanes: out-of-bounds reads are zero");
        assert_eq!(res[6], 12, "{threads} lanes: an in-bounds atomic");
        assert_eq!(res[7..11], [0, 33, 4, 0xC0FFEE], "{threads} lanes: a vector past the end, length");
    }
}

#[test]
fn bool_arrays_and_struct_copies() {
    let src = r#"#version 450
layout(local_size_x = 8) in;
struct S { vec2 a; bool f; uint k[3]; };
layout(std430, set = 0, binding = 0) buffer B { bool flags[8]; S src; S dst[8]; } bb;
void main() {
    uint i = gl_LocalInvocationID.x;
    bool local[4];
    for (int k = 0; k < 4; k++) local[k] = (k % 2) == int(i % 2u);
    bb.flags[i] = local[i % 4u] && !bb.flags[i];
    S s = bb.src;                       // whole-struct load
    s.k[i % 3u] += i;
    s.f = local[(i + 1u) % 4u];
    bb.dst[i] = s;                      // whole-struct store
}"#;
    // flags: 8 words; src: vec2 @32 (align 8), f @40, k @44..56 -> S is 24 bytes, align 8.
    let mut buf = vec![0u8; 32 + 24 + 8 * 24];
    for i in 0..8 {
        put_u32(&mut buf, 4 * i, (i % 3 == 0) as u32 * 7);
    }
    put_f32(&mut buf, 32, 1.5);
    put_f32(&mut buf, 36, -2.0);
    put_u32(&mut buf, 40, 1);
    for k in 0..3 {
        put_u32(&mut buf, 44 + 4 * k, 10 * (k as u32 + 1));
    }
    run_variants(src, &[b(0, 0, Res::Storage(buf.clone()))], [1, 1, 1], &[], |what, r| {
        let u = r.u32s(0);
        for i in 0..8usize {
            let local = |k: usize| (k % 2) == (i % 2);
            assert_eq!(u[i], (local(i % 4) && i % 3 != 0) as u32, "{what}: flags[{i}]");
            let d = 14 + 6 * i; // word index of dst[i]
            assert_eq!((f32::from_bits(u[d]), f32::from_bits(u[d + 1])), (1.5, -2.0), "{what}: dst[{i}].a");
            assert_eq!(u[d + 2], local((i + 1) % 4) as u32, "{what}: dst[{i}].f");
            let mut k = [10u32, 20, 30];
            k[i % 3] += i as u32;
            assert_eq!(&u[d + 3..d + 6], &k, "{what}: dst[{i}].k");
        }
    });
}
