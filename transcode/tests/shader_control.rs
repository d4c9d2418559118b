//! Step 3: structured control flow under divergence — if/else, loops with break/continue,
//! switch with fall-through, early returns, calls with in/out/inout, phis (via spirv-opt).

// Matrix and buffer checks index by row/column, as the math is written.
#![allow(clippy::needless_range_loop)]

mod shader_util;
use shader_util::*;

const CONTROL: &str = r#"#version 450
layout(local_size_x = 16) in;
layout(std430, set = 0, binding = 0) buffer Out { int r[]; } o;

int collatz(int v) {
    int steps = 0;
    while (v != 1) {
        if ((v & 1) == 0) v /= 2; else v = 3 * v + 1;
        steps++;
        if (steps > 200) return -1;
    }
    return steps;
}
void swapper(inout int a, inout int b) { int t = a; a = b; b = t; }
void outs(in int x, out int y, out int z) { y = x * 2; z = x + 100; }
int sw(int k) {
    int acc = 0;
    switch (k % 6) {
        case 0: acc += 1;
        case 1: acc += 10; break;
        case 2: case 3: acc += 100; break;
        default: acc += 1000;
        case 5: acc += 10000; break;
    }
    return acc;
}
int early(int n) {
    for (int i = 0; i < 100; i++) {
        if (i * i > n * 5) return i;
    }
    return -7;
}
void main() {
    int n = int(gl_GlobalInvocationID.x);
    int base = n * 8;
    o.r[base + 0] = collatz(n + 1);
    int a = n, b = 100 - n;
    if (n % 3 != 0) swapper(a, b);
    o.r[base + 1] = a * 1000 + b;
    int y, z;
    outs(n, y, z);
    o.r[base + 2] = y + z * 1000;
    o.r[base + 3] = sw(n);
    int s = 0;
    for (int i = 0; i < n; i++) {
        if (i % 3 == 0) continue;
        for (int j = 0; j < 10; j++) {
            if (j > i) break;
            s += j;
        }
        if (s > 50) break;
    }
    o.r[base + 4] = s;
    o.r[base + 5] = early(n);
    int c = 0, d = n;
    do { d >>= 1; c++; } while (d > 0);
    o.r[base + 6] = c;
    o.r[base + 7] = ((n > 3 && n < 12) || n == 0) ? n * n : -n;
}"#;

fn expected(n: i32) -> [i32; 8] {
    let collatz = |mut v: i32| {
        let mut steps = 0;
        while v != 1 {
            v = if v & 1 == 0 { v / 2 } else { 3 * v + 1 };
            steps += 1;
            if steps > 200 {
                return -1;
            }
        }
        steps
    };
    let (mut a, mut b) = (n, 100 - n);
    if n % 3 != 0 {
        std::mem::swap(&mut a, &mut b);
    }
    let sw = match n % 6 {
        0 => 11,
        1 => 10,
        2 | 3 => 100,
        5 => 10000,
        _ => 11000,
    };
    let mut s = 0;
    'outer: for i in 0..n {
        if i % 3 == 0 {
            continue;
        }
        for j in 0..10 {
            if j > i {
                break;
            }
            s += j;
        }
        if s > 50 {
            break 'outer;
        }
    }
    let early = (0..100).find(|i| i * i > n * 5).unwrap_or(-7);
    let (mut c, mut d) = (0, n);
    loop {
        d >>= 1;
        c += 1;
        if d <= 0 {
            break;
        }
    }
    let t = if (n > 3 && n < 12) || n == 0 { n * n } else { -n };
    [collatz(n + 1), a * 1000 + b, 2 * n + (n + 100) * 1000, sw, s, early, c, t]
}

#[test]
fn divergent_control_flow() {
    let groups = 3;
    let total = 16 * groups;
    run_variants(CONTROL, &[b(0, 0, Res::Storage(vec![0; total * 8 * 4]))], [groups as u32, 1, 1], &[], |what, r| {
        let got = r.i32s(0);
        for n in 0..total {
            assert_eq!(&got[n * 8..n * 8 + 8], &expected(n as i32), "{what}: invocation {n}");
        }
    });
}

#[test]
fn early_return_from_main() {
    let src = r#"#version 450
layout(local_size_x = 8) in;
layout(std430, set = 0, binding = 0) buffer Out { int r[]; } o;
void main() {
    uint n = gl_GlobalInvocationID.x;
    for (int i = 0; i < 4; i++) {
        if (int(n) == i * 2) { o.r[n] = 100 + i; return; }
    }
    if (n % 2u == 1u) { o.r[n] = 1; return; }
    o.r[n] = 2;
}"#;
    run_variants(src, &[b(0, 0, Res::Storage(vec![0; 16 * 4]))], [2, 1, 1], &[], |what, r| {
        let want: Vec<i32> = (0..16)
            .map(|n| {
                if n % 2 == 0 && n < 8 {
                    100 + n / 2
                } else if n % 2 == 1 {
                    1
                } else {
                    2
                }
            })
            .collect();
        assert_eq!(r.i32s(0), want, "{what}");
    });
}

/// After spirv-opt, `a, b = b, a + b` is a pair of phis where one phi's incoming value is the
/// other phi (the swap problem): the edge copies must behave as one parallel copy.
#[test]
fn phi_swap_in_divergent_loop() {
    let src = r#"#version 450
layout(local_size_x = 8) in;
layout(std430, set = 0, binding = 0) buffer Out { int r[]; } o;
void main() {
    uint n = gl_GlobalInvocationID.x;
    int a = 1, b = 2;
    for (int i = 0; i < int(n); i++) { int t = a; a = b; b = t + b; }
    o.r[n] = a * 1000 + b;
}"#;
    let Some(opt) = glsl_opt(src) else { return };
    let k = build(&opt, &[b(0, 0, Res::Storage(vec![0; 64]))], 0, &[]).unwrap();
    assert!(k.code.iter().filter(|i| i.op == vortex_model::abi::isa::Op::Mov).count() >= 3, "{}", k.disassemble());
    run_variants(src, &[b(0, 0, Res::Storage(vec![0; 16 * 4]))], [2, 1, 1], &[], |what, r| {
        let want: Vec<i32> = (0..16)
            .map(|n| {
                let (mut a, mut b) = (1, 2);
                for _ in 0..n {
                    (a, b) = (b, a + b);
                }
                a * 1000 + b
            })
            .collect();
        assert_eq!(r.i32s(0), want, "{what}");
    });
}
