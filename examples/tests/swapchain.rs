//! The swapchain program on both ICDs: in an X11 window of a private Xvfb and on a headless
//! surface, under the validation layer (any error message fails it); on ours, every dumped
//! frame must be exactly the colours presented, and misuse must get Vulkan errors.

use std::path::{Path, PathBuf};
use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;
use vortex_examples::xvfb::Xvfb;

const VALIDATION_MANIFEST: &str = "/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json";

fn lavapipe_absent() -> bool {
    let absent = !Path::new(LAVAPIPE_MANIFEST).is_file();
    if absent {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
    }
    absent
}

/// Runs the program; returns its stdout. `display`: the X server, none for headless runs.
fn run(icd: &str, display: Option<&str>, extra: &[&str], env: &[(&str, &Path)]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_swapchain"));
    cmd.args(["--icd", icd]).args(extra).env_remove("VORTEX_PRESENT_DUMP");
    match display {
        Some(d) => cmd.env("DISPLAY", d),
        None => cmd.env_remove("DISPLAY").arg("--headless"),
    };
    if Path::new(VALIDATION_MANIFEST).is_file() && !extra.contains(&"--bad-use") {
        cmd.arg("--validate");
    } else if !extra.contains(&"--bad-use") {
        eprintln!(
            "note: {VALIDATION_MANIFEST} is absent (install vulkan-validationlayers): running without validation"
        );
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("start swapchain");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "swapchain {extra:?} on {icd} failed ({}):\n{stdout}\n{stderr}", out.status);
    stdout
}

fn dump_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vortex-swapchain-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The window run: 120 frames (and those until the resize is reported), a resize that must
/// be reported.
fn check_window_run(stdout: &str) {
    assert!(stdout.contains(" frames presented (X11 window"), "{stdout}");
    assert!(stdout.contains("resize gave"), "{stdout}");
}

#[test]
fn window_on_vortex_with_exact_dumps() {
    let Some(x) = Xvfb::start() else { return };
    let dir = dump_dir("x11");
    let d = dir.to_str().expect("utf-8 temp dir");
    let out = run("vortex", Some(&x.display), &["--check-dump", d], &[("VORTEX_PRESENT_DUMP", &dir)]);
    check_window_run(&out);
    // Ours reports the resize at the first acquire after it.
    assert!(out.contains("120 frames presented (X11 window, B8G8R8A8_UNORM, FIFO/MAILBOX/IMMEDIATE)"), "{out}");
    assert!(out.contains("dumped frames exact"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn window_on_lavapipe() {
    if lavapipe_absent() {
        return;
    }
    let Some(x) = Xvfb::start() else { return };
    check_window_run(&run("lavapipe", Some(&x.display), &[], &[]));
}

#[test]
fn xlib_window_on_vortex_with_exact_dumps() {
    let Some(x) = Xvfb::start() else { return };
    let dir = dump_dir("xlib");
    let d = dir.to_str().expect("utf-8 temp dir");
    let out = run("vortex", Some(&x.display), &["--xlib", "--check-dump", d], &[("VORTEX_PRESENT_DUMP", &dir)]);
    assert!(out.contains("frames presented (X11 window through Xlib"), "{out}");
    assert!(out.contains("dumped frames exact"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn xlib_window_on_lavapipe() {
    if lavapipe_absent() {
        return;
    }
    let Some(x) = Xvfb::start() else { return };
    let out = run("lavapipe", Some(&x.display), &["--xlib"], &[]);
    assert!(out.contains("frames presented (X11 window through Xlib"), "{out}");
}

#[test]
fn headless_on_vortex_with_exact_dumps() {
    let dir = dump_dir("headless");
    let d = dir.to_str().expect("utf-8 temp dir");
    let out = run("vortex", None, &["--check-dump", d], &[("VORTEX_PRESENT_DUMP", &dir)]);
    assert!(out.contains("120 frames presented (headless, B8G8R8A8_UNORM, FIFO/MAILBOX/IMMEDIATE)"), "{out}");
    assert!(out.contains("dumped frames exact"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn headless_on_lavapipe() {
    if lavapipe_absent() {
        return;
    }
    let out = run("lavapipe", None, &[], &[]);
    assert!(out.contains("120 frames presented (headless"), "{out}");
}

/// Misuse (ours only: it is invalid usage, which other drivers need not survive): acquiring
/// beyond the images, presenting images not acquired, a second swapchain on a surface, a
/// retired swapchain, and (with a display) a window destroyed under its swapchain.
#[test]
fn bad_use_gets_vulkan_errors_on_vortex() {
    let x = Xvfb::start();
    let out = run("vortex", Some(x.as_ref().map_or(":0", |x| &x.display)).filter(|_| x.is_some()), &["--bad-use"], &[]);
    let want = if x.is_some() { "bad use: 13 checks passed" } else { "bad use: 9 checks passed" };
    assert!(out.contains(want), "{out}");
}
