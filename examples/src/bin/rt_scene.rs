//! rt_scene: the default scene rendered with a ray-tracing pipeline, checked against the
//! ray-query render of the same scene on the same driver.
//!
//! ```text
//! rt_scene [--icd vortex|lavapipe|PATH] [--width W] [--height H] [--spp N] [--no-cutout]
//!          [--depth1] [--out rt_scene.png] [--quiet]
//! ```
//!
//! `--depth1` traces the shadow and AO rays from the ray generation shader instead (the
//! structure for a device whose `maxRayRecursionDepth` is 1; `Tracer::PipelineDepth1`).
//!
//! The scene is the render's default (three bunnies on a ground plane) plus an alpha-tested
//! card (`Scene::with_cutout`). The pipeline (`shaders/rt_scene.*`, `scene_render`) traces
//! the camera ray from the ray generation shader; the miss shader returns the sky; the
//! closest-hit shader shades with the render's shading code, tracing the shadow ray and the
//! AO rays itself (`gl_RayFlagsTerminateOnFirstHitEXT | gl_RayFlagsSkipClosestHitShaderEXT`,
//! a second miss shader marking them unoccluded); an any-hit shader runs the card's alpha
//! test for every ray. The same image is then rendered by `render.comp` with ray queries.
//!
//! The check: the mask words (instance seen, shadow ray lit, AO rays occluded) and the ray
//! counts of every pixel are identical, and no colour channel differs by more than
//! [`TOLERANCE`]: both renders run one shading source on the same hits, so colours can only
//! differ by the rounding of the two compiled kernels (contracted multiply-adds), which
//! moves a channel by at most one step of 1/255. Writes OUT (the pipeline's image) and
//! OUT with `.query.png` (the ray queries'); exits 1 when the renders diverge, 2 when the
//! driver offers no ray-tracing pipeline (on Vortex: hidden by `VORTEX_RT_PIPELINE=0`, and on rdna2 devices).

use std::path::PathBuf;
use std::process::ExitCode;
use vortex_examples::image::write_png;
use vortex_examples::scene::Scene;
use vortex_examples::scene_render::{difference, mask_counts, SceneRenderer, Tracer};
use vortex_examples::{Context, Icd};

/// The largest colour difference allowed between the two renders, in 1/255.
const TOLERANCE: u8 = 1;

struct Options {
    icd: Icd,
    size: [u32; 2],
    spp: u32,
    cutout: bool,
    tracer: Tracer,
    out: PathBuf,
    quiet: bool,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        icd: Icd::Vortex,
        size: [320, 240],
        spp: 2,
        cutout: true,
        tracer: Tracer::Pipeline,
        out: PathBuf::from("rt_scene.png"),
        quiet: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        let number = |v: String| v.parse::<u32>().map_err(|_| format!("{a}: {v:?} is not a number"));
        match a.as_str() {
            "--icd" => o.icd = Icd::parse(&value()?),
            "--width" => o.size[0] = number(value()?)?,
            "--height" => o.size[1] = number(value()?)?,
            "--spp" => o.spp = number(value()?)?,
            "--no-cutout" => o.cutout = false,
            "--depth1" => o.tracer = Tracer::PipelineDepth1,
            "--out" => o.out = PathBuf::from(value()?),
            "--quiet" => o.quiet = true,
            _ => return Err(format!("unexpected argument {a:?}")),
        }
    }
    if o.size.iter().any(|&s| s == 0 || s > 4096) || o.spp > 64 {
        return Err("sizes 1..=4096, --spp up to 64".into());
    }
    Ok(o)
}

/// Renders the scene both ways; Ok(false) when the renders diverge.
fn run(o: &Options, ctx: &Context) -> Result<bool, String> {
    let e = |e: vortex_examples::Error| e.to_string();
    let scene = Scene::builtin("bunny").map_err(e)?;
    let scene = if o.cutout { scene.with_cutout() } else { scene };
    let card = scene.placements.iter().position(|p| Some(p.mesh) == scene.cutout);
    let mut frames = Vec::new();
    for tracer in [o.tracer, Tracer::Query] {
        let r = SceneRenderer::new(ctx, &scene, o.size, o.spp, tracer).map_err(e)?;
        let seconds = r.render(ctx).map_err(e)?;
        let (pixels, rays, masks) = (r.pixels(), r.ray_counts(), r.masks());
        let total: u64 = rays.iter().map(|&n| n as u64).sum();
        let (hit, lit, on_card) = mask_counts(&masks, card);
        if !o.quiet {
            println!(
                "{tracer:?}: {}x{} in {:.3} s, {total} rays ({:.3} M rays/s); {hit} pixels hit, {lit} lit, {on_card} on the card",
                o.size[0],
                o.size[1],
                seconds,
                total as f64 / seconds / 1e6
            );
        }
        frames.push((pixels, rays, masks));
    }
    write_png(&o.out, o.size[0], o.size[1], &frames[0].0)?;
    write_png(&o.out.with_extension("query.png"), o.size[0], o.size[1], &frames[1].0)?;
    let (p, q) = (&frames[0], &frames[1]);
    let d = difference((&p.0, &p.1, &p.2), (&q.0, &q.1, &q.2), TOLERANCE);
    let n = (o.size[0] * o.size[1]) as usize;
    println!(
        "pipeline vs ray query: masks differ in {} of {n} pixels, ray counts in {}, colours by more than {TOLERANCE}/255 in {} (largest {}/255, PSNR {:.2} dB)",
        d.masks, d.rays, d.pixels, d.max_channel, d.psnr
    );
    let (hit, _, on_card) = mask_counts(&q.2, card);
    if hit == 0 || hit == n || (o.cutout && on_card == 0) {
        return Err(format!("{hit} of {n} pixels hit, {on_card} on the card: the view misses the scene"));
    }
    Ok(d.masks == 0 && d.rays == 0 && d.pixels == 0)
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("rt_scene: {e}");
            return ExitCode::from(2);
        }
    };
    let ctx = match Context::with_optional_features(&o.icd) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rt_scene: {e}");
            return ExitCode::from(2);
        }
    };
    if !o.quiet {
        println!("device: {}", ctx.info().name);
    }
    if !ctx.info().enabled.contains(&"rayTracingPipeline") {
        eprintln!(
            "rt_scene: {} does not offer VK_KHR_ray_tracing_pipeline (on Vortex: hidden by VORTEX_RT_PIPELINE=0, and on rdna2 devices)",
            ctx.info().name
        );
        return ExitCode::from(2);
    }
    match run(&o, &ctx) {
        Ok(true) => {
            println!("identical hits, shadows and ray counts; wrote {}", o.out.display());
            ExitCode::SUCCESS
        }
        Ok(false) => {
            eprintln!("rt_scene: the pipeline's render diverges from the ray queries'");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("rt_scene: error: {e}");
            ExitCode::from(1)
        }
    }
}
