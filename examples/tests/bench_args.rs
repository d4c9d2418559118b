//! The benchmarks refuse what they cannot measure, with a message and a failing exit code,
//! instead of printing an empty or partial table as if it were a result.

use std::process::Command;

#[test]
fn as_bench_refuses_an_unknown_driver() {
    let out = Command::new(env!("CARGO_BIN_EXE_as_bench")).args(["--icds", "vortex,nosuch"]).output().expect("start");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains(r#"unknown driver "nosuch""#), "stderr: {err}");
    assert!(out.stdout.is_empty(), "nothing measured, nothing printed: {}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn bench_reports_a_missing_manifest_as_a_failure() {
    let out = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["--icds", "/nonexistent/icd.json", "--scenes", "bunny", "--size", "16x16", "--samples", "1"])
        .output()
        .expect("start");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("/nonexistent/icd.json does not exist"), "{text}");
}
