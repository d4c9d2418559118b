//! VK_EXT_memory_budget through the loader (the `memory_budget` program) on both ICDs: the
//! heap usage rises by an allocation's size and falls back when it is freed.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn run(icd: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_memory_budget")).args(["--icd", icd]).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "memory_budget on {icd} failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("1/1 memory-budget checks passed"), "{stdout}");
}

#[test]
fn memory_budget_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    run("lavapipe");
}

#[test]
fn memory_budget_on_vortex() {
    run("vortex");
}
