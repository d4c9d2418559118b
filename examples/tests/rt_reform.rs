//! The reformation workload (the `rt_reform` program) through the loader: its closest hits
//! are the layer arithmetic's on lavapipe and on Vortex, and on Vortex the payloads (with the
//! any-hit shaders' hash sums and call counts) are the same bits in functional mode and in
//! timed mode with reformation by SBT key off and on, at two batching thresholds: the
//! commit engine's batching is timing only.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

const SIZE: [&str; 4] = ["--grid", "32", "--layers", "6"];

/// Runs rt_reform; returns the payload checksum it printed.
fn checksum(icd: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rt_reform"));
    cmd.args(["--icd", icd]).args(SIZE).env_remove("VORTEX_CONFIG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("cannot start rt_reform");
    let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("1/1 rt-reform checks passed"), "{icd} {env:?}:\n{text}");
    let sum = text.split("checksum ").nth(1).and_then(|s| s.split_whitespace().next()).expect("a checksum");
    sum.to_string()
}

#[test]
fn rt_reform_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    checksum("lavapipe", &[]);
}

#[test]
fn rt_reform_is_the_same_with_reformation_on_and_off() {
    let functional = checksum("vortex", &[("VORTEX_RT_PIPELINE", "1"), ("VORTEX_MODE", "functional")]);
    let dir = std::env::temp_dir().join(format!("rt_reform_test_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    for thresh in [0, 8] {
        for sbt in [false, true] {
            let path = dir.join(format!("t{thresh}-{sbt}.toml"));
            let config =
                format!("mode = \"timed\"\nrt_pipeline = true\n[rtu]\nreform_sbt = {sbt}\nreform_thresh = {thresh}\n");
            std::fs::write(&path, config).expect("a configuration file");
            let timed = checksum("vortex", &[("VORTEX_CONFIG", path.to_str().expect("a UTF-8 path"))]);
            assert_eq!(timed, functional, "reform_sbt = {sbt}, reform_thresh = {thresh}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
