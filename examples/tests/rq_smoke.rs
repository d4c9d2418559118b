//! Runs the rq_smoke binary the way a user does, through the Vulkan loader.

use std::path::Path;
use std::process::{Command, Output};
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn rq_smoke(icd: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rq_smoke")).args(["--icd", icd]).output().expect("cannot start rq_smoke")
}

fn assert_every_ray_matches(output: &Output) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "rq_smoke failed ({}):\n{stdout}\n{stderr}", output.status);
    for pass in ["closest-hit", "any-hit"] {
        assert!(stdout.contains(&format!("{pass} pass: 4096/4096 rays match")), "{pass} pass missing:\n{stdout}");
    }
}

#[test]
fn every_ray_matches_on_lavapipe() {
    if !Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent (see scripts/setup-debian.sh)");
        return;
    }
    assert_every_ray_matches(&rq_smoke("lavapipe"));
}

#[test]
fn every_ray_matches_on_vortex() {
    assert_every_ray_matches(&rq_smoke("vortex"));
}

/// A bad --icd is an error message and exit status 2, not a panic.
fn assert_clean_failure(output: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(expected), "expected {expected:?} in:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn missing_manifest_is_reported() {
    assert_clean_failure(&rq_smoke("/nonexistent.json"), "ICD manifest /nonexistent.json does not exist");
}

#[test]
fn manifest_without_a_driver_is_reported() {
    let manifest = Path::new(env!("CARGO_TARGET_TMPDIR")).join("broken_icd.json");
    let json = r#"{"file_format_version": "1.0.0", "ICD": {"library_path": "/nonexistent/libvulkan_broken.so", "api_version": "1.3.0"}}"#;
    std::fs::write(&manifest, json).expect("cannot write the test manifest");
    assert_clean_failure(&rq_smoke(manifest.to_str().expect("UTF-8 temp path")), "found no usable driver");
}
