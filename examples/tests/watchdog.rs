//! The dispatch watchdog through the loader (the `watchdog` program): a hang is lost, long
//! work that keeps making progress is not. The hang cases run on our ICD only (lavapipe has
//! no watchdog: its dispatch would spin forever); the long dispatch's results are checked on
//! lavapipe too. Elapsed times are printed, never asserted.

use std::process::{Command, Output};
use vortex_examples::icd::LAVAPIPE_MANIFEST;

/// Runs `watchdog args` with the watchdog's environment replaced by `env` (no
/// `VORTEX_CONFIG`, no inherited limits).
fn watchdog(args: &[&str], env: &[(&str, &str)]) -> (Output, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_watchdog"));
    cmd.args(args).env_remove("VORTEX_CONFIG").env_remove("VORTEX_WATCHDOG_MS").env_remove("VORTEX_WATCHDOG_IDLE_MS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("cannot start watchdog");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("watchdog {args:?} {env:?}:\n{stdout}");
    (out, stdout, stderr)
}

fn assert_lost(out: &Output, stdout: &str, stderr: &str, limit: &str) {
    assert!(out.status.success(), "watchdog hang failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("PASS hang: VK_ERROR_DEVICE_LOST"), "{stdout}");
    // The log line names the rule, the progress and where the spinning warp is.
    assert!(
        stderr.contains("watchdog, idle limit") && stderr.contains(&format!("no progress for {limit} ms")),
        "{stderr}"
    );
    assert!(stderr.contains("1 warp still running at pc "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_hang_is_lost_under_a_short_idle_limit() {
    let (out, stdout, stderr) = watchdog(&["hang", "--icd", "vortex"], &[("VORTEX_WATCHDOG_IDLE_MS", "2000")]);
    assert_lost(&out, &stdout, &stderr, "2000");
}

/// No watchdog variable at all: the default idle limit (20 s) loses the hang, within the
/// 30 s the driver promises (printed, not asserted).
#[test]
fn a_hang_is_lost_with_default_settings() {
    let (out, stdout, stderr) = watchdog(&["hang", "--icd", "vortex"], &[]);
    assert_lost(&out, &stdout, &stderr, "20000");
}

#[test]
fn long_work_that_progresses_outlasts_a_short_idle_limit() {
    let args = ["long", "--seconds", "6", "--icd", "vortex"];
    let (out, stdout, stderr) = watchdog(&args, &[("VORTEX_WATCHDOG_IDLE_MS", "2000")]);
    assert!(out.status.success(), "watchdog long failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("PASS long:") && stdout.contains("every result right"), "{stdout}");
    assert!(!stderr.contains("watchdog"), "{stderr}");
}

#[test]
fn long_work_results_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    let (out, stdout, stderr) = watchdog(&["long", "--seconds", "1", "--icd", "lavapipe"], &[]);
    assert!(out.status.success(), "watchdog long on lavapipe failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("PASS long:") && stdout.contains("every result right"), "{stdout}");
    // lavapipe would spin forever on the hang: the program must not try it there.
    let (out, stdout, _) = watchdog(&["hang", "--icd", "lavapipe"], &[]);
    assert!(out.status.success() && stdout.contains("skipped:"), "{stdout}");
}
