//! Multiview render passes, dynamic rendering with a view mask, per-view loads, clears and
//! queries (also from a secondary command buffer), `gl_ViewIndex` and a ray query in a multiview draw, on both ICDs and both modes.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn run(icd: &str, mode: Option<&str>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_multiview_check"));
    cmd.args(["--icd", icd]);
    if let Some(m) = mode {
        cmd.env("VORTEX_MODE", m);
    }
    let out = cmd.output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "multiview_check on {icd} failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("7/7 multiview checks passed"), "{stdout}");
    assert!(!stdout.contains("skipped"), "every check must run:\n{stdout}");
}

#[test]
fn multiview_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    run("lavapipe", None);
}

#[test]
fn multiview_on_vortex() {
    run("vortex", None);
}

#[test]
fn multiview_on_vortex_timed() {
    run("vortex", Some("timed"));
}
