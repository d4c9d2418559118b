//! The renderer on our ICD agrees with lavapipe: a small render of the default scene is
//! compared pixel by pixel, ray traced and drawn through the raster pipeline (`--raster`).
//! Tolerance for both: at most 0.5% of pixels may differ by more than 2/255 in a channel
//! (rays that graze an edge may hit either triangle; derivatives and texture LODs are
//! computed with each driver's precision), and the PSNR must exceed 40 dB.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

#[test]
fn small_render_matches_lavapipe() {
    compare_small_render("render_test.png", &[]);
}

#[test]
fn small_raster_render_matches_lavapipe() {
    compare_small_render("render_raster_test.png", &["--raster"]);
}

fn compare_small_render(name: &str, extra: &[&str]) {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let run = Command::new(env!("CARGO_BIN_EXE_render"))
        .args(["--icd", "vortex", "--width", "96", "--height", "72", "--spp", "2", "--quiet", "--compare", "lavapipe"])
        .args(extra)
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

/// With VORTEX_STATS in timed mode the renderer writes the heatmap (image plus legend rows)
/// and the timeline; the heatmap is brighter where rays meet geometry than in the sky.
#[test]
fn stats_give_a_heatmap_and_a_timeline() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("render_stats");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("r.png");
    let run = Command::new(env!("CARGO_BIN_EXE_render"))
        .args(["--icd", "vortex", "--width", "64", "--height", "48", "--spp", "1", "--out"])
        .arg(&out)
        .env("VORTEX_STATS", dir.join("stats.jsonl"))
        .env("VORTEX_MODE", "timed")
        .env("VORTEX_RT_ARCH", "rtu")
        .output()
        .expect("cannot start render");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "render failed:\n{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    let line = stdout.lines().find(|l| l.starts_with("RTU work per ray")).expect("no heatmap summary");
    let mean: f64 = line.split("mean ").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
    assert!(mean > 1.0, "{line}");

    let file = std::fs::File::open(dir.join("r.heat.png")).expect("no heatmap written");
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().unwrap();
    let mut px = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut px).unwrap();
    assert_eq!((info.width, info.height), (64, 48 + 40), "image plus legend rows");
    let lum = |y0: u32, y1: u32| {
        let mut s = 0u64;
        for y in y0..y1 {
            for x in 0..64u32 {
                let i = 4 * (x + 64 * y) as usize;
                s += px[i] as u64 * 3 + px[i + 1] as u64 * 6 + px[i + 2] as u64;
            }
        }
        s as f64 / ((y1 - y0) * 64) as f64
    };
    let (sky, bunnies) = (lum(0, 6), lum(16, 30));
    assert!(bunnies > 2.0 * sky + 50.0, "sky {sky:.0} vs bunnies {bunnies:.0}");

    let svg = std::fs::read_to_string(dir.join("r.timeline.svg")).expect("no timeline written");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<polygon").count(), 3, "busy, idle with a ray, starved");
    assert!(stdout.contains("RTU activity over the render: busy"), "{stdout}");
}

/// The heatmap's pixels (luminance) and the summary line's mean, rendered on `arch`.
fn heatmap(arch: &str) -> (Vec<f64>, f64, String) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("render_heat_{arch}"));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("r.png");
    let run = Command::new(env!("CARGO_BIN_EXE_render"))
        .args(["--icd", "vortex", "--width", "64", "--height", "48", "--spp", "1", "--out"])
        .arg(&out)
        .env("VORTEX_STATS", dir.join("stats.jsonl"))
        .env("VORTEX_RT_ARCH", arch)
        .output()
        .expect("cannot start render");
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(run.status.success(), "render ({arch}) failed:\n{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    let line = stdout.lines().find(|l| l.contains("work per ray")).expect("no heatmap summary").to_string();
    let mean: f64 = line.split("mean ").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
    let file = std::fs::File::open(dir.join("r.heat.png")).expect("no heatmap written");
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().unwrap();
    let mut px = vec![0; reader.output_buffer_size()];
    reader.next_frame(&mut px).unwrap();
    let lum =
        (0..64 * 48).map(|i| px[4 * i] as f64 * 3.0 + px[4 * i + 1] as f64 * 6.0 + px[4 * i + 2] as f64).collect();
    (lum, mean, line)
}

/// The heatmap on both architectures: the RT unit's work per ray on rtu, the intersection
/// unit's (nodes fetched + triangles tested) on rdna2, and the two pictures agree on where
/// the work is (their pixels correlate strongly; the means are of one size).
#[test]
fn heatmaps_on_both_architectures_are_comparable() {
    let (a, ma, la) = heatmap("rtu");
    let (b, mb, lb) = heatmap("rdna2");
    assert!(la.starts_with("RTU work per ray") && lb.starts_with("ISECT work per ray"), "{la}\n{lb}");
    assert!(ma > 1.0 && mb > 1.0 && ma / mb < 2.0 && mb / ma < 2.0, "{la}\n{lb}");
    let n = a.len() as f64;
    let (mean_a, mean_b) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(&b).map(|(x, y)| (x - mean_a) * (y - mean_b)).sum();
    let var = |v: &[f64], m: f64| v.iter().map(|x| (x - m) * (x - m)).sum::<f64>();
    let r = cov / (var(&a, mean_a) * var(&b, mean_b)).sqrt();
    eprintln!("heatmap correlation {r:.3}: {la} / {lb}");
    assert!(r > 0.8, "the heatmaps correlate by {r:.2} only");
}
