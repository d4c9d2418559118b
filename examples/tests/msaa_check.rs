//! 4-sample rendering, resolves and sample fetches, read back, on both ICDs.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn run(icd: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_msaa_check")).args(["--icd", icd]).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "msaa_check on {icd} failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("4/4 msaa checks passed"), "{stdout}");
}

#[test]
fn msaa_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    run("lavapipe");
}

#[test]
fn msaa_on_vortex() {
    run("vortex");
}
