//! A panic inside the driver (injected through Vortex RT's debug hook, through the loader)
//! loses that device with one log line, and nothing else (see the internal_error binary).

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

#[test]
fn an_internal_error_loses_only_its_device() {
    let out = Command::new(env!("CARGO_BIN_EXE_internal_error")).args(["--icd", "vortex"]).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "internal_error failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("4/4 internal-error checks passed"), "{stdout}");
    let lost: Vec<_> = stderr.lines().filter(|l| l.contains("VK_ERROR_DEVICE_LOST:")).collect();
    assert_eq!(lost.len(), 1, "the loss is logged once:\n{stderr}");
    assert!(lost[0].contains("internal error in vkDebugInjectPanicVORTEX"), "{stderr}");
}

#[test]
fn lavapipe_has_no_hook() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe is not installed");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_internal_error")).args(["--icd", "lavapipe"]).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("skipped:"), "{stdout}");
}
