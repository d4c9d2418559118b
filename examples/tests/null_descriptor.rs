//! robustness2's null descriptors through the loader (the `null_descriptor` program) on both
//! ICDs: a null storage buffer and a null storage image read zero and drop writes.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn run(icd: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_null_descriptor")).args(["--icd", icd]).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "null_descriptor on {icd} failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("1/1 null-descriptor checks passed"), "{stdout}");
}

#[test]
fn null_descriptors_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    run("lavapipe");
}

#[test]
fn null_descriptors_on_vortex() {
    run("vortex");
}
