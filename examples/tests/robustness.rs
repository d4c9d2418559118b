//! Fault containment on our ICD: garbage SPIR-V, an out-of-bounds write, a runaway kernel,
//! malformed serialized acceleration structures, AS builds from unmapped geometry and into
//! too small a structure each give a Vulkan error and a log line, and the process survives (see the robustness
//! binary). Not run on lavapipe, which crashes on out-of-bounds device addresses and has no
//! watchdog; the binary itself reports that as skipped.

use std::process::Command;

#[test]
fn bad_input_is_contained_on_vortex() {
    // The runaway kernel meets the wall-clock rule here (the idle rule has its own tests in
    // watchdog.rs).
    let out = Command::new(env!("CARGO_BIN_EXE_robustness"))
        .args(["--icd", "vortex"])
        .env("VORTEX_WATCHDOG_MS", "1500")
        .output()
        .expect("cannot start robustness");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "robustness failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("6/6 robustness checks passed"), "{stdout}");
    // Each fault is logged with what happened and where.
    assert!(stderr.contains("VK_ERROR_DEVICE_LOST") && stderr.contains("memory fault"), "{stderr}");
    assert!(stderr.contains("watchdog, wall-clock limit") && stderr.contains("limit of 1500 ms"), "{stderr}");
    // The acceleration-structure faults say what was wrong.
    for what in ["serialized acceleration structure", "vertex buffer", "only 256 are available"] {
        assert!(stderr.contains(what), "no log line about {what:?}:\n{stderr}");
    }
    // Geometry that is not mapped is a memory fault, not a bad structure.
    let unmapped = stderr.lines().find(|l| l.contains("vertex buffer")).unwrap_or_default();
    assert!(unmapped.contains("device fault (memory fault)"), "{unmapped}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn lavapipe_reports_the_checks_as_skipped() {
    if !std::path::Path::new(vortex_examples::icd::LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe is not installed");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_robustness")).args(["--icd", "lavapipe"]).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("skipped:"), "{stdout}");
}
