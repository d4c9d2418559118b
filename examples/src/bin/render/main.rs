//! Renders a scene with ray queries in compute shaders — primary rays, hard shadows and
//! ambient occlusion — to a PNG, on any Vulkan driver.
//!
//! ```text
//! render [--icd vortex|lavapipe|PATH] [--scene bunny|spheres|million|random | --obj FILE]
//!        [--subdivide N] [--copies N] [--width W] [--height H] [--spp N] [--out FILE.png]
//!        [--raster | --pipeline] [--cutout] [--compare ICD] [--quiet] [--window [--hold SECONDS]]
//! ```
//!
//! `--pipeline` traces the same render with a ray-tracing pipeline instead of ray queries
//! (`vortex_examples::scene_render`, `docs/RTPIPELINE.md`); `--cutout` adds an alpha-tested
//! card to the scene (`Scene::with_cutout`).
//!
//! `--window` also shows the image in an X11 window (`$DISPLAY`) as it is rendered, through a
//! swapchain on the same driver, and keeps it there for `--hold` seconds (default 10).
//!
//! With `VORTEX_STATS=FILE` (on Vortex RT) it also writes `OUT.heat.png`, the RTU work per
//! ray of every pixel with a legend, and in timed mode (`VORTEX_MODE=timed`)
//! `OUT.timeline.svg`, the traversal cores' activity over the render.
//!
//! `--raster` draws the scene through a vertex + fragment pipeline instead (depth-tested,
//! the shadow and ambient-occlusion rays traced by ray queries in the fragment shader, the
//! ground textured with a mipmapped checker).
//!
//! `--compare ICD` renders the same image on a second driver (in a child process: the loader
//! picks its driver per process) and reports the fraction of differing pixels and the PSNR.

mod compare;
mod gpu;
mod stats;
mod window;

use std::path::PathBuf;
use std::process::ExitCode;
use vortex_examples::raster_scene::RasterScene;
use vortex_examples::scene::{GpuScene, Scene, SceneOptions};
use vortex_examples::{Context, Icd};

const USAGE: &str = "usage: render [--icd vortex|lavapipe|PATH] [--scene bunny|spheres|million|random | --obj FILE]
              [--subdivide N] [--copies N] [--width W] [--height H] [--spp N] [--out FILE.png]
              [--raster | --pipeline] [--cutout] [--compare ICD] [--quiet] [--window [--hold SECONDS]]
  --icd        the Vulkan driver to render on (default: vortex)
  --scene      a built-in scene (default: bunny); --obj renders an OBJ file on a ground plane
  --subdivide  split the main mesh's triangles in four, N times (bunny: 3,676 x 4^N)
  --copies     instances of the main mesh (default: bunny 3, spheres 64, million and OBJ 1);
               e.g. --subdivide 4 or --copies 300 puts over a million triangles in the scene
  --spp        ambient-occlusion rays per pixel (default 4)
  --out        the PNG to write (default: render.png)
  --raster     draw the scene with a vertex + fragment pipeline (ray-query shadows and
               AO in the fragment shader, a textured ground) instead of primary rays
  --pipeline   trace with a ray-tracing pipeline (closest-hit shading, shadow and AO rays
               from the closest-hit shader) instead of ray queries
  --cutout     add an alpha-tested card (a grid of holes) to the scene
  --compare    also render on this driver and report differing pixels and PSNR
  --window     also show the image in a window ($DISPLAY) as it is rendered, through a
               swapchain, and keep it there for --hold seconds (default 10)
environment:
  VORTEX_STATS=FILE  (Vortex RT) also write OUT.heat.png, RTU work per ray with a legend,
                     and with VORTEX_MODE=timed OUT.timeline.svg, RTU activity over time
";

pub struct Options {
    pub icd: Icd,
    pub scene: String,
    pub obj: Option<PathBuf>,
    pub shape: SceneOptions,
    pub width: u32,
    pub height: u32,
    pub spp: u32,
    pub out: PathBuf,
    pub compare: Option<String>,
    pub quiet: bool,
    /// Seconds to keep the finished image in a window (`--window`), or none.
    pub window: Option<f64>,
    pub raster: bool,
    pub pipeline: bool,
    pub cutout: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut o = Options {
        icd: Icd::Vortex,
        scene: "bunny".into(),
        obj: None,
        shape: SceneOptions::default(),
        width: 640,
        height: 480,
        spp: 4,
        out: PathBuf::from("render.png"),
        compare: None,
        quiet: false,
        window: None,
        raster: false,
        pipeline: false,
        cutout: false,
    };
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        let number = |v: String| v.parse::<u32>().map_err(|_| format!("{a}: {v:?} is not a number"));
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--icd" => o.icd = Icd::parse(&value()?),
            "--scene" => o.scene = value()?,
            "--obj" => o.obj = Some(PathBuf::from(value()?)),
            "--subdivide" => o.shape.subdivide = number(value()?)?,
            "--copies" => o.shape.copies = Some(number(value()?)? as usize),
            "--width" => o.width = number(value()?)?,
            "--height" => o.height = number(value()?)?,
            "--spp" => o.spp = number(value()?)?,
            "--out" => o.out = PathBuf::from(value()?),
            "--compare" => o.compare = Some(value()?),
            "--quiet" => o.quiet = true,
            "--window" => o.window = Some(o.window.unwrap_or(10.0)),
            "--hold" => {
                let v = value()?;
                o.window =
                    Some(v.parse::<f64>().ok().filter(|s| *s >= 0.0).ok_or(format!("--hold: {v:?} is not seconds"))?);
            }
            "--raster" => o.raster = true,
            "--pipeline" => o.pipeline = true,
            "--cutout" => o.cutout = true,
            _ => return Err(format!("unexpected argument {a:?}")),
        }
    }
    if o.width == 0 || o.height == 0 || o.width > 16384 || o.height > 16384 {
        return Err(format!("image size {}x{} out of range (1..=16384)", o.width, o.height));
    }
    if o.raster && (o.pipeline || o.cutout) {
        return Err("--raster draws without rays: --pipeline and --cutout are for ray-traced renders".into());
    }
    if o.shape.subdivide > 8 {
        return Err(format!("--subdivide {} is more than 8", o.shape.subdivide));
    }
    if o.spp > 1024 {
        return Err(format!("--spp {} is more than 1024", o.spp));
    }
    Ok(Some(o))
}

fn run(o: &Options) -> Result<(), String> {
    let scene = match &o.obj {
        Some(path) => Scene::from_obj_with(path, &o.shape),
        None => Scene::builtin_with(&o.scene, &o.shape),
    }
    .map_err(|e| e.to_string())?;
    let scene = if o.cutout { scene.with_cutout() } else { scene };
    // The window's device is made first: both set the loader's environment before it
    // starts threads.
    let mut viewer = match o.window {
        Some(_) => Some(window::Viewer::open(&o.icd, o.width, o.height).map_err(|e| format!("--window: {e}"))?),
        None => None,
    };
    // The pipeline is an optional feature.
    let ctx = if o.pipeline { Context::with_optional_features(&o.icd) } else { Context::new(&o.icd) };
    let ctx = ctx.map_err(|e| e.to_string())?;
    if !o.quiet {
        println!("device: {}", ctx.info().name);
        println!(
            "scene: {} ({} triangles in {} instances, {} unique)",
            scene.name,
            scene.triangle_count(),
            scene.placements.len(),
            scene.unique_triangle_count()
        );
    }
    if o.raster {
        return raster(&ctx, &scene, o, viewer.as_mut());
    }
    let r = gpu::render(&ctx, &scene, o, viewer.as_mut()).map_err(|e| e.to_string())?;
    compare::write_png(&o.out, o.width, o.height, &r.pixels)?;
    if !o.quiet {
        println!(
            "built acceleration structures in {:.3} s ({:.2} M triangles/s)",
            r.build_seconds,
            scene.unique_triangle_count() as f64 / r.build_seconds / 1e6
        );
        println!(
            "rendered {}x{} at {} AO spp in {:.3} s: {} rays, {:.3} M rays/s",
            o.width,
            o.height,
            o.spp,
            r.render_seconds,
            r.rays,
            r.rays as f64 / r.render_seconds / 1e6
        );
        println!("wrote {}", o.out.display());
    }
    if let Some(stats_path) = std::env::var_os("VORTEX_STATS").filter(|p| !p.is_empty()) {
        if ctx.info().name.contains("Vortex") {
            stats::write(o, std::path::Path::new(&stats_path), &r)?;
        } else if !o.quiet {
            println!("VORTEX_STATS ignored: {} does not write it", ctx.info().name);
        }
    }
    if let Some(other) = &o.compare {
        compare::against(o, other)?;
    }
    if let (Some(v), Some(seconds)) = (viewer.as_mut(), o.window) {
        v.hold(&r.pixels, seconds).map_err(|e| format!("--window: {e}"))?;
    }
    Ok(())
}

/// The scene drawn through the raster pipeline (`--raster`).
fn raster(ctx: &Context, scene: &Scene, o: &Options, viewer: Option<&mut window::Viewer>) -> Result<(), String> {
    let gpu = GpuScene::build(ctx, scene).map_err(|e| e.to_string())?;
    let r = RasterScene::new(ctx, scene, &gpu, [o.width, o.height], o.spp).map_err(|e| e.to_string())?;
    let t = std::time::Instant::now();
    r.draw(ctx).map_err(|e| e.to_string())?;
    let seconds = t.elapsed().as_secs_f64();
    let pixels = r.pixels(ctx).map_err(|e| e.to_string())?;
    compare::write_png(&o.out, o.width, o.height, &pixels)?;
    if !o.quiet {
        println!(
            "drew {}x{} ({} draws, {} AO spp, shadows and AO by ray queries in the fragment shader) in {seconds:.3} s",
            o.width,
            o.height,
            scene.placements.len(),
            o.spp
        );
        println!("wrote {}", o.out.display());
    }
    if std::env::var_os("VORTEX_STATS").is_some_and(|p| !p.is_empty()) && !o.quiet {
        println!("VORTEX_STATS: the heatmap and timeline are drawn for ray-traced renders only");
    }
    if let Some(other) = &o.compare {
        compare::against(o, other)?;
    }
    if let (Some(v), Some(seconds)) = (viewer, o.window) {
        v.hold(&pixels, seconds).map_err(|e| format!("--window: {e}"))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let o = match parse(std::env::args().skip(1)) {
        Ok(Some(o)) => o,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprint!("render: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("render: error: {e}");
            ExitCode::from(1)
        }
    }
}
