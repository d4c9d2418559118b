//! Every device-timeline way of building, updating, copying, compacting, serializing and
//! querying an acceleration structure, on both ICDs.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn run(icd: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_as_ops")).args(["--icd", icd]).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "as_ops on {icd} failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("7/7 acceleration-structure operation checks passed"), "{stdout}");
}

#[test]
fn structure_operations_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    run("lavapipe");
}

#[test]
fn structure_operations_on_vortex() {
    run("vortex");
}
