//! Render passes, clears and blits (no draws) on both ICDs.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn run(icd: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_renderpass_check")).args(["--icd", icd]).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "renderpass_check on {icd} failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("4/4 render pass checks passed"), "{stdout}");
}

#[test]
fn render_passes_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    run("lavapipe");
}

#[test]
fn render_passes_on_vortex() {
    run("vortex");
}
