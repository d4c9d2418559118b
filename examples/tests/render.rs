//! The renderer on our ICD agrees with lavapipe: a small render of the default scene is
//! compared pixel by pixel. Tolerance: at most 0.5% of pixels may differ by more than 2/255
//! in a channel (rays that graze an edge may hit either triangle), and the PSNR must
//! exceed 40 dB.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

#[test]
fn small_render_matches_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("render_test.png");
    let run = Command::new(env!("CARGO_BIN_EXE_render"))
        .args(["--icd", "vortex", "--width", "96", "--height", "72", "--spp", "2", "--quiet", "--compare", "lavapipe"])
        .arg("--out")
        .arg(&out)
        .output()
        .expect("cannot start render");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "render failed:\n{stdout}\n{stderr}");
    let line = stdout.lines().find(|l| l.starts_with("compared with lavapipe")).expect("no comparison line");
    let pct: f64 = line.split("): ").nth(1).unwrap().split('%').next().unwrap().trim().parse().unwrap();
    let psnr: f64 = line.rsplit("PSNR ").next().unwrap().trim_end_matches(" dB").parse().unwrap();
    assert!(pct <= 0.5, "{line}");
    assert!(psnr >= 40.0, "{line}");
}

#[test]
fn bad_arguments_are_reported() {
    let run = Command::new(env!("CARGO_BIN_EXE_render")).args(["--width", "0"]).output().expect("start");
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("out of range"));
    let run = Command::new(env!("CARGO_BIN_EXE_render")).args(["--scene", "nope", "--quiet"]).output().expect("start");
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("unknown scene"));
}
