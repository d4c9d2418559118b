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

/// The path-tracer workload runs on both drivers and they agree on the rays it traced and
/// the light it gathered (the bench fails its exit code on a disagreement).
#[test]
fn path_tracer_agrees_with_lavapipe() {
    let out = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["--workloads", "pt", "--icds", "vortex,lavapipe", "--pt-size", "48x32", "--pt-frames", "1"])
        .output()
        .expect("start");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("@48x32")).collect();
    assert_eq!(rows.len(), 2, "one row per driver:\n{text}");
    for row in rows {
        let rays_per_pixel: f64 = row.split_whitespace().last().and_then(|v| v.parse().ok()).expect("a number");
        // A primary ray for every pixel, and more where paths bounce.
        assert!(rays_per_pixel > 1.0, "{row}");
    }
}

/// Each driver's row is measured on that driver: the tracing workers report their device,
/// and lavapipe's row must come from llvmpipe, ours from Vortex RT.
#[test]
fn each_driver_row_is_measured_on_that_driver() {
    let out = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args([
            "--workloads",
            "rt",
            "--icds",
            "vortex,lavapipe",
            "--scenes",
            "bunny",
            "--size",
            "16x16",
            "--samples",
            "1",
        ])
        .output()
        .expect("start");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    let devices = text.lines().find(|l| l.contains("devices:")).unwrap_or_else(|| panic!("no devices line:\n{text}"));
    assert!(devices.contains("vortex: Vortex RT"), "{devices}");
    assert!(devices.contains("lavapipe: llvmpipe"), "{devices}");
}

/// The build workload runs every build flag on both drivers, each row on its own driver,
/// and the drivers' structures find the same hits (the bench fails its exit code when
/// they do not).
#[test]
fn build_workload_covers_every_flag_and_agrees_with_lavapipe() {
    let out = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["--workloads", "build", "--icds", "vortex,lavapipe", "--build-tris", "3000", "--build-reps", "1"])
        .output()
        .expect("start");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    for flag in ["fast-trace", "fast-build", "update", "compaction", "low-memory"] {
        let row = text.lines().find(|l| l.split_whitespace().nth(1) == Some(flag));
        let row = row.unwrap_or_else(|| panic!("no {flag} row:\n{text}"));
        let hits: u64 = row.split_whitespace().last().and_then(|v| v.parse().ok()).expect("a hit count");
        assert!(hits > 100, "rays aimed at the sphere hit it: {row}");
    }
    assert_eq!(text.lines().filter(|l| l.contains("lavapipe/vortex")).count(), 5, "{text}");
    assert!(!text.contains('!'), "no disagreement, no wrong device:\n{text}");
}

#[test]
fn as_bench_refuses_an_unknown_build_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_as_bench"))
        .args(["--builds", "--tris", "1000", "--flags", "fast-trace,nosuch"])
        .output()
        .expect("start");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains(r#"unknown build flag "nosuch""#), "stderr: {err}");
    assert!(out.stdout.is_empty(), "nothing measured, nothing printed: {}", String::from_utf8_lossy(&out.stdout));
}

/// The ray-tracing pipeline workload runs on both drivers, each driver's pipeline render
/// (shadow and AO rays from closest-hit) equals its ray-query render, and the drivers agree
/// (the bench fails its exit code otherwise).
#[test]
fn rt_pipeline_workload_agrees_with_lavapipe() {
    let out = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["--workloads", "rtp", "--icds", "vortex,lavapipe", "--rtp-size", "48x32", "--rtp-frames", "1"])
        .env("VORTEX_RT_PIPELINE", "1")
        .output()
        .expect("start");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("@48x32")).collect();
    assert_eq!(rows.len(), 2, "one row per driver:\n{text}");
    assert!(!text.contains(" ! "), "{text}");
}

/// `bench --targets --quick`: every target's row, measured on both drivers and
/// cross-checked, with a verdict; a workload that cannot run (here rtbench, pointed at a
/// missing binary) fails its row with how to build it, and the exit code.
#[test]
fn targets_table_has_every_row_and_fails_a_workload_that_did_not_run() {
    let out = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["--targets", "--quick", "--rtbench", "/nonexistent/rtbench"])
        .output()
        .expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let text = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "rtbench did not run:\n{text}");
    assert!(stdout.contains("commit ") && stdout.contains("load average"), "{stdout}");
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| target")).collect();
    let names = ["instanced spheres", "bunny", "random soup", "1M sphere", "path tracer", "BLAS builds", "timed mode"];
    assert_eq!(rows.len(), names.len(), "{stdout}");
    for (row, name) in rows.iter().zip(names) {
        assert!(row.contains(name), "{name}: {row}");
        let met = row.trim_end_matches(" |").rsplit(" | ").next().unwrap_or("");
        if name == "timed mode" {
            assert_eq!(met, "**NO: did not run** (rtbench)", "{row}");
        } else {
            assert!(met == "yes" || met.starts_with("no"), "measured and cross-checked: {row}");
        }
    }
    assert!(stdout.contains("/nonexistent/rtbench is missing: build it with"), "{stdout}");
    assert!(stdout.contains("rays and radiance equal functional mode's"), "{stdout}");
    assert!(!stdout.contains("results disagree"), "{stdout}");
}
