//! Draws of compiled GLSL vertex and fragment pipelines, read back, on both ICDs.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn run(icd: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_draw_check")).args(["--icd", icd]).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "draw_check on {icd} failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("5/5 draw checks passed"), "{stdout}");
}

#[test]
fn draws_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    run("lavapipe");
}

#[test]
fn draws_on_vortex() {
    run("vortex");
}
