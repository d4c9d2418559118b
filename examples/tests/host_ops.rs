//! Host acceleration-structure commands and deferred operations: on our ICD (lavapipe does
//! not offer them, which the program reports and passes).

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn run(icd: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_host_ops")).args(["--icd", icd]).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "host_ops on {icd} failed ({}):\n{stdout}\n{stderr}", out.status);
    stdout
}

#[test]
fn host_commands_on_vortex() {
    let out = run("vortex");
    assert!(out.contains("5/5 host-command checks passed"), "{out}");
}

#[test]
fn host_commands_absent_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    let out = run("lavapipe");
    assert!(out.contains("not supported") || out.contains("host-command checks passed"), "{out}");
}
