//! The default scene (with its alpha-tested card) rendered with a ray-tracing pipeline
//! (the `rt_scene` program): on each driver its hits, shadows and AO rays (mask words) and
//! ray counts equal the ray-query render's exactly and its colours agree to 1/255; and the
//! pipeline's image on Vortex matches lavapipe's like the ray-query render's does
//! (`tests/render.rs`: at most 0.5 % of pixels off by more than 2/255, PSNR 40 dB or more).

use std::path::{Path, PathBuf};
use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

/// Runs rt_scene on `icd` at `size` with 2 AO rays (and `extra` arguments); its image and
/// output.
fn rt_scene(icd: &str, size: [u32; 2], env: &[(&str, &str)], name: &str) -> (PathBuf, String) {
    rt_scene_with(icd, size, env, name, &[])
}

fn rt_scene_with(icd: &str, size: [u32; 2], env: &[(&str, &str)], name: &str, extra: &[&str]) -> (PathBuf, String) {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rt_scene"));
    cmd.args(extra);
    cmd.args(["--icd", icd, "--width", &size[0].to_string(), "--height", &size[1].to_string(), "--spp", "2"]);
    cmd.arg("--out").arg(&out).env_remove("VORTEX_CONFIG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let run = cmd.output().expect("cannot start rt_scene");
    let text = format!("{}\n{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "rt_scene on {icd} {env:?} failed:\n{text}");
    assert!(text.contains("identical hits, shadows and ray counts"), "{text}");
    assert!(text.contains("masks differ in 0 of"), "{text}");
    (out, text)
}

fn read_png(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().unwrap();
    let mut px = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut px).unwrap();
    px.truncate(info.buffer_size());
    px
}

fn lavapipe_present() -> bool {
    let present = Path::new(LAVAPIPE_MANIFEST).is_file();
    if !present {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
    }
    present
}

#[test]
fn pipeline_matches_ray_queries_on_lavapipe() {
    if lavapipe_present() {
        rt_scene("lavapipe", [96, 72], &[], "rt_scene_lavapipe.png");
        rt_scene_with("lavapipe", [96, 72], &[], "rt_scene_lavapipe_depth1.png", &["--depth1"]);
    }
}

/// The structure for recursion depth 1 (shadow and AO rays from ray generation) on Vortex in
/// both modes too.
#[test]
fn depth1_pipeline_matches_ray_queries_on_vortex() {
    let on = [("VORTEX_RT_PIPELINE", "1")];
    let (_, text) = rt_scene_with("vortex", [96, 72], &on, "rt_scene_vortex_depth1.png", &["--depth1"]);
    assert!(text.contains("on the card") && !text.contains(" 0 on the card"), "{text}");
    let timed = [("VORTEX_RT_PIPELINE", "1"), ("VORTEX_MODE", "timed")];
    rt_scene_with("vortex", [48, 36], &timed, "rt_scene_vortex_timed_depth1.png", &["--depth1"]);
}

#[test]
fn pipeline_matches_ray_queries_and_lavapipe_on_vortex() {
    let on = [("VORTEX_RT_PIPELINE", "1")];
    let (ours, _) = rt_scene("vortex", [96, 72], &on, "rt_scene_vortex.png");
    let timed = [("VORTEX_RT_PIPELINE", "1"), ("VORTEX_MODE", "timed")];
    rt_scene("vortex", [48, 36], &timed, "rt_scene_vortex_timed.png");
    if !lavapipe_present() {
        return;
    }
    let (theirs, _) = rt_scene("lavapipe", [96, 72], &[], "rt_scene_lavapipe_ref.png");
    let (a, b) = (read_png(&ours), read_png(&theirs));
    assert_eq!(a.len(), b.len());
    let (mut off, mut se) = (0usize, 0f64);
    for (p, q) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        off += usize::from(p[..3].iter().zip(&q[..3]).any(|(x, y)| x.abs_diff(*y) > 2));
        se += p[..3].iter().zip(&q[..3]).map(|(x, y)| (*x as f64 - *y as f64).powi(2)).sum::<f64>();
    }
    let n = a.len() / 4;
    let mse = se / (3 * n) as f64;
    let psnr = if mse == 0.0 { f64::INFINITY } else { 10.0 * (255.0f64 * 255.0 / mse).log10() };
    eprintln!("pipeline on vortex vs lavapipe: {off} of {n} pixels differ by more than 2/255, PSNR {psnr:.2} dB");
    assert!(off * 200 <= n, "{off} of {n} pixels differ by more than 2/255");
    assert!(psnr >= 40.0, "PSNR {psnr:.2} dB");
}
