//! The ray-tracing pipeline workload (`--workloads rtp`): the default scene with its
//! alpha-tested card (`Scene::with_cutout`) rendered by `vortex_examples::scene_render`,
//! once with the ray-tracing pipeline (camera ray from ray generation, shading, shadow and
//! AO rays from closest-hit, the card's alpha test in any-hit) and once with ray queries
//! (`render.comp`, the same shading source), on every driver. Each driver's child prints
//! `rtp TRACER FRAME SECONDS CPU RAYS HIT LIT CARD LIGHT` per frame (CPU: seconds all the
//! process's threads ran, which a shared machine disturbs less than the wall clock) and
//! `rtp-diff MASKS RAYS PIXELS MAX` (how its two renders differ); the table keeps each
//! tracer's best frame (and least CPU time).
//!
//! Checked: on each driver the two renders agree exactly on every pixel's hit, shadow and
//! AO rays and ray count, and to 1/255 in colour; across drivers the rays, hit, lit and
//! card pixels and the summed light agree within 0.1 % (a different BVH may move a ray that
//! grazes an edge).

use std::time::Instant;
use vortex_examples::scene::Scene;
use vortex_examples::scene_render::{difference, mask_counts, SceneRenderer, Tracer};
use vortex_examples::{Context, Icd};

/// What the child is asked for.
pub struct Params {
    pub size: (u32, u32),
    pub spp: u32,
    pub frames: u32,
    /// Trace the shadow and AO rays from ray generation (`Tracer::PipelineDepth1`), for a
    /// driver without recursion.
    pub depth1: bool,
}

impl Params {
    pub fn args(&self) -> Vec<String> {
        let (w, h) = self.size;
        ["--rtp-worker", "--rtp-size", &format!("{w}x{h}"), "--rtp-spp", &self.spp.to_string()]
            .into_iter()
            .chain(["--rtp-frames", &self.frames.to_string()])
            .chain(self.depth1.then_some("--rtp-depth1"))
            .map(String::from)
            .collect()
    }
}

/// One tracer's best frame on one driver, and what its pixels say.
#[derive(Clone, Copy, Debug, Default)]
pub struct Frame {
    pub seconds: f64,
    pub cpu: f64,
    pub rays: u64,
    /// Pixels that hit geometry, hit pixels the light reaches, pixels on the card.
    pub hit: u64,
    pub lit: u64,
    pub card: u64,
    /// The RGB bytes of every pixel, summed.
    pub light: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// The device the child ran on.
    pub device: String,
    pub pipeline: Frame,
    pub query: Frame,
    /// Pixels whose masks, ray counts, colours (by more than 1/255) differ between the
    /// driver's two renders, and the largest colour difference.
    pub diff: [u64; 4],
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// CPU seconds the whole process has run, exited threads included (a driver may trace on
/// threads that end with the submission): `utime + stime` of `/proc/self/stat`, in the
/// kernel's 100 Hz user ticks; 0 where /proc does not say.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the command name (which may hold spaces), from field 3 on.
    let rest = stat.rsplit_once(") ").map_or("", |(_, r)| r);
    let ticks: u64 = rest.split_whitespace().skip(11).take(2).filter_map(|v| v.parse::<u64>().ok()).sum();
    ticks as f64 / 100.0
}

/// The child: `frames` frames with each tracer, one line a frame, then the difference.
pub fn worker(icd: &Icd, p: &Params) -> Result<(), String> {
    let ctx = Context::with_optional_features(icd).map_err(err)?;
    println!("device {}", ctx.info().name);
    let scene = Scene::builtin("bunny").map_err(err)?.with_cutout();
    let card = scene.placements.iter().position(|pl| Some(pl.mesh) == scene.cutout);
    let size = [p.size.0, p.size.1];
    let mut renders = Vec::new();
    let pipeline = if p.depth1 { Tracer::PipelineDepth1 } else { Tracer::Pipeline };
    for (name, tracer) in [("pipeline", pipeline), ("query", Tracer::Query)] {
        let r = SceneRenderer::new(&ctx, &scene, size, p.spp, tracer).map_err(err)?;
        for frame in 0..p.frames {
            let (t, cpu) = (Instant::now(), cpu_seconds());
            r.render(&ctx).map_err(err)?;
            let (secs, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - cpu);
            let (pixels, rays, masks) = (r.pixels(), r.ray_counts(), r.masks());
            let total: u64 = rays.iter().map(|&n| n as u64).sum();
            let (hit, lit, on_card) = mask_counts(&masks, card);
            let light: u64 = pixels.chunks_exact(4).map(|c| c[..3].iter().map(|&b| b as u64).sum::<u64>()).sum();
            println!("rtp {name} {frame} {secs} {cpu} {total} {hit} {lit} {on_card} {light}");
            if frame + 1 == p.frames {
                renders.push((pixels, rays, masks));
            }
        }
    }
    let (a, b) = (&renders[0], &renders[1]);
    let d = difference((&a.0, &a.1, &a.2), (&b.0, &b.1, &b.2), 1);
    println!("rtp-diff {} {} {} {}", d.masks, d.rays, d.pixels, d.max_channel);
    Ok(())
}

pub fn parse(stdout: &str) -> Option<Measured> {
    let mut m = Measured::default();
    let (mut pipeline, mut query) = (None::<Frame>, None::<Frame>);
    let mut diffed = false;
    for line in stdout.lines() {
        if let Some(name) = line.strip_prefix("device ") {
            m.device = name.to_string();
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["rtp", tracer, _, s, c, rest @ ..] if rest.len() == 5 => {
                let n: Vec<u64> = rest.iter().map(|v| v.parse().ok()).collect::<Option<_>>()?;
                let (seconds, cpu) = (s.parse().ok()?, c.parse().ok()?);
                let frame = Frame { seconds, cpu, rays: n[0], hit: n[1], lit: n[2], card: n[3], light: n[4] };
                let best = if *tracer == "pipeline" { &mut pipeline } else { &mut query };
                *best = Some(match *best {
                    Some(b) if b.seconds <= frame.seconds => Frame { cpu: b.cpu.min(cpu), ..b },
                    Some(b) => Frame { cpu: b.cpu.min(cpu), ..frame },
                    None => frame,
                });
            }
            ["rtp-diff", rest @ ..] if rest.len() == 4 => {
                for (k, v) in rest.iter().enumerate() {
                    m.diff[k] = v.parse().ok()?;
                }
                diffed = true;
            }
            _ => {}
        }
    }
    m.pipeline = pipeline?;
    m.query = query?;
    diffed.then_some(m)
}

/// Where two drivers' frames disagree by more than 0.1 %.
fn disagreement(a: &Frame, b: &Frame) -> Option<String> {
    let pairs = [("rays", a.rays, b.rays), ("hit pixels", a.hit, b.hit), ("lit pixels", a.lit, b.lit)];
    let pairs = pairs.into_iter().chain([("card pixels", a.card, b.card), ("light", a.light, b.light)]);
    for (what, x, y) in pairs {
        if x.abs_diff(y) as f64 > 1e-3 * x.max(y).max(1) as f64 {
            return Some(format!("{what} disagree: {x} vs {y}"));
        }
    }
    None
}

/// The table: per driver the pipeline's and the ray queries' best frame (ms and M rays/s)
/// and the pipeline's time over the queries'; ratios of the first driver to the others;
/// every check above. `run` runs the child on a driver. True if something failed.
pub fn table(icds: &[&str], p: &Params, run: impl Fn(&str, &[String]) -> Result<String, String>) -> bool {
    println!();
    println!(
        "{:<30} {:<14} {:>11} {:>8} {:>9} {:>11} {:>8} {:>9} {:>10}   ({} AO rays, shadow + AO from {}; best of {} frames)",
        "rt pipeline vs ray query",
        "driver",
        "pipeline ms",
        "CPU ms",
        "M rays/s",
        "query ms",
        "CPU ms",
        "M rays/s",
        "pipe/query",
        p.spp,
        if p.depth1 { "ray generation" } else { "closest-hit" },
        p.frames
    );
    let label = format!("bunny + card @{}x{}", p.size.0, p.size.1);
    let mut first: Option<Measured> = None;
    let mut failed = false;
    for &icd in icds {
        let m = match run(icd, &p.args()).and_then(|out| parse(&out).ok_or_else(|| "printed no result".into())) {
            Ok(m) => m,
            Err(e) => {
                println!("{label:<30} {icd:<14} error: {e}");
                failed = true;
                continue;
            }
        };
        let rate = |f: &Frame| f.rays as f64 / f.seconds / 1e6;
        println!(
            "{label:<30} {icd:<14} {:>11.1} {:>8.0} {:>9.3} {:>11.1} {:>8.0} {:>9.3} {:>9.2}x",
            m.pipeline.seconds * 1e3,
            m.pipeline.cpu * 1e3,
            rate(&m.pipeline),
            m.query.seconds * 1e3,
            m.query.cpu * 1e3,
            rate(&m.query),
            m.pipeline.seconds / m.query.seconds
        );
        // A row must come from its driver: ours for `vortex*`, another for the rest.
        if m.device.starts_with("Vortex") != icd.starts_with("vortex") && !icd.ends_with(".json") {
            println!("  ! the {icd} worker ran on {:?}", m.device);
            failed = true;
        }
        if m.diff[..3] != [0, 0, 0] {
            let [masks, rays, pixels, max] = m.diff;
            println!("  ! {icd}: the pipeline's render differs from the ray queries': masks in {masks} pixels, ray counts in {rays}, colours in {pixels} (largest {max}/255)");
            failed = true;
        }
        match &first {
            None => first = Some(m),
            Some(f) => {
                let (p, q) = (&f.pipeline, &f.query);
                println!(
                    "{:<30} {:<14} {:>10.2}x {:>7.2}x {:>9} {:>10.2}x {:>7.2}x",
                    "",
                    format!("{}/{}", icds[0], icd),
                    m.pipeline.seconds / p.seconds,
                    m.pipeline.cpu / p.cpu,
                    "",
                    m.query.seconds / q.seconds,
                    m.query.cpu / q.cpu
                );
                for (tracer, a, b) in [("pipeline", &f.pipeline, &m.pipeline), ("query", &f.query, &m.query)] {
                    if let Some(why) = disagreement(a, b) {
                        println!("  ! {tracer}: {}/{icd} {why}", icds[0]);
                        failed = true;
                    }
                }
            }
        }
    }
    failed
}
