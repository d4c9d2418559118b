//! Ray-tracing pipelines whose shaders trace (the `rt_recursion` program): shadow rays and
//! reflections traced from closest-hit shaders give exactly what ray queries give for the
//! same rays, on lavapipe and on Vortex in functional and timed mode.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn passes(icd: &str, env: &[(&str, &str)]) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rt_recursion"));
    cmd.args(["--icd", icd]).env_remove("VORTEX_CONFIG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("cannot start rt_recursion");
    let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "rt_recursion on {icd} {env:?} failed:\n{text}");
    assert!(text.contains("4/4 rt-recursion checks passed"), "{text}");
    assert!(text.contains("up to 4 hits deep, identical"), "{text}");
}

#[test]
fn rt_recursion_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    passes("lavapipe", &[]);
}

#[test]
fn rt_recursion_on_vortex_functional_and_timed() {
    passes("vortex", &[("VORTEX_RT_PIPELINE", "1"), ("VORTEX_MODE", "functional")]);
    passes("vortex", &[("VORTEX_RT_PIPELINE", "1"), ("VORTEX_MODE", "timed")]);
}
