//! Robust buffer and image access through the loader (the `robust_access` program) on both
//! ICDs: out-of-bounds reads give values the specification allows and writes land nowhere
//! else; on Vortex exactly zero and dropped, and without the feature a device fault.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn run(icd: &str, checks: usize) {
    let out = Command::new(env!("CARGO_BIN_EXE_robust_access")).args(["--icd", icd]).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "robust_access on {icd} failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains(&format!("{checks}/{checks} robust-access checks passed")), "{stdout}");
}

#[test]
fn robust_access_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    run("lavapipe", 1);
}

#[test]
fn robust_access_on_vortex() {
    run("vortex", 2);
}
