//! End-to-end: GLSL -> SPIR-V -> VX -> device model, checked against CPU results.

mod shader_util;
use shader_util::*;

#[test]
fn store_global_id() {
    let src = r#"#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) buffer Out { uint v[]; } o;
void main() { o.v[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x * 3u + 1u; }"#;
    let Some(r) = run(src, &[b(0, 0, Res::Storage(vec![0; 64 * 4]))], [4, 1, 1], &[]) else { return };
    eprintln!("{}", r.kernel.disassemble());
    assert_eq!(r.u32s(0), (0..64).map(|i| i * 3 + 1).collect::<Vec<_>>());
}
