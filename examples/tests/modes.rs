//! Functional and timed mode through the Vulkan loader: the same programs, run on our ICD with
//! `VORTEX_MODE=functional` and `VORTEX_MODE=timed`, produce the same bytes (the renderer's
//! image, ray traced and drawn through the raster pipeline) and the same per-ray verdicts
//! and counts (rq_smoke).

use std::process::{Command, Output};

fn with_mode(mut cmd: Command, mode: &str) -> Output {
    cmd.env("VORTEX_MODE", mode).env_remove("VORTEX_CONFIG").output().expect("cannot start the example")
}

/// The result lines of stdout, without wall-clock figures.
fn results(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "failed ({}):\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    stdout
        .lines()
        .filter(|l| l.contains(" pass: "))
        .map(|l| {
            l.split(" ms wall").map(|part| part.rsplit_once('(').map_or(part, |(a, _)| a)).collect::<Vec<_>>().join("")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn rq_smoke_reports_the_same_in_both_modes() {
    let run = |mode| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rq_smoke"));
        c.args(["--icd", "vortex"]);
        results(&with_mode(c, mode))
    };
    let (f, t) = (run("functional"), run("timed"));
    assert!(f.contains("4096/4096 rays match"), "{f}");
    assert_eq!(f, t);
}

#[test]
fn the_renderer_draws_the_same_bytes_in_both_modes() {
    same_render_in_both_modes("modes", &[]);
}

#[test]
fn the_raster_renderer_draws_the_same_bytes_in_both_modes() {
    same_render_in_both_modes("modes_raster", &["--raster"]);
}

fn same_render_in_both_modes(name: &str, extra: &[&str]) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let run = |mode: &str| {
        let out = dir.join(format!("{name}_{mode}.png"));
        let mut c = Command::new(env!("CARGO_BIN_EXE_render"));
        c.args(["--icd", "vortex", "--width", "64", "--height", "48", "--spp", "2", "--quiet"]).args(extra);
        c.arg("--out").arg(&out);
        let o = with_mode(c, mode);
        assert!(o.status.success(), "render ({mode}) failed:\n{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(&out).expect("the rendered image")
    };
    let (f, t) = (run("functional"), run("timed"));
    assert!(!f.is_empty());
    assert!(f == t, "the timed image differs from the functional one");
}
