//! The path-tracer workload (`--workloads pt`): shading-heavy compute shaped like a client's
//! path tracer (`shaders/pathtrace.comp`: several bounces, a shadow ray at each hit, an RNG,
//! the hit triangle fetched from the scene's own vertex and index buffers, its normal taken
//! to world space). Many instructions per ray, so it measures the shader core around the
//! walk as much as the walk. Each driver runs it in its own child process, which prints
//! `pt FRAME SECONDS RAYS RADIANCE` for every frame; the table keeps the best frame (as a
//! client's frame rate would settle) and cross-checks rays and radiance across drivers.

use ash::vk;
use std::time::Instant;
use vortex_examples::scene::{GpuScene, Scene};
use vortex_examples::{Buffer, ComputePipeline, Context, Icd};

const PATHTRACE: &[u8] = include_bytes!("../../../shaders/pathtrace.spv");

/// What the child is asked for.
#[derive(Clone, Debug)]
pub struct Params {
    pub scene: String,
    pub size: (u32, u32),
    pub spp: u32,
    pub bounces: u32,
    pub frames: u32,
}

impl Default for Params {
    /// The workload behind issue 18's shading-heavy target.
    fn default() -> Self {
        Params { scene: "spheres".into(), size: (800, 600), spp: 1, bounces: 3, frames: 3 }
    }
}

impl Params {
    /// The child's command line.
    pub fn args(&self) -> Vec<String> {
        let (w, h) = self.size;
        ["--pt-worker", "--pt-scene", &self.scene, "--pt-size", &format!("{w}x{h}")]
            .into_iter()
            .chain(["--pt-spp", &self.spp.to_string(), "--pt-bounces", &self.bounces.to_string()])
            .chain(["--pt-frames", &self.frames.to_string()])
            .map(String::from)
            .collect()
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The scene's meshes in one vertex and one index buffer, with each mesh's first vertex and
/// first index, as a client's bindless scene would hold them.
fn scene_buffers(ctx: &Context, scene: &Scene) -> Result<[Buffer; 4], String> {
    let (mut positions, mut indices, mut meshes) = (Vec::<f32>::new(), Vec::<u32>::new(), Vec::<[u32; 2]>::new());
    for m in &scene.meshes {
        meshes.push([(positions.len() / 3) as u32, indices.len() as u32]);
        positions.extend(m.positions.iter().flatten());
        indices.extend(&m.indices);
    }
    let albedo: Vec<[f32; 4]> = scene.placements.iter().map(|p| [p.albedo[0], p.albedo[1], p.albedo[2], 1.0]).collect();
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    Ok([
        Buffer::with_data(ctx, &positions, usage).map_err(err)?,
        Buffer::with_data(ctx, &indices, usage).map_err(err)?,
        Buffer::with_data(ctx, &meshes, usage).map_err(err)?,
        Buffer::with_data(ctx, &albedo, usage).map_err(err)?,
    ])
}

/// The child: renders `frames` frames, printing one line a frame.
pub fn worker(icd: &Icd, p: &Params) -> Result<(), String> {
    let scene = Scene::builtin(&p.scene).map_err(err)?;
    let ctx = Context::new(icd).map_err(err)?;
    let gpu = GpuScene::build(&ctx, &scene).map_err(err)?;
    let inputs = scene_buffers(&ctx, &scene)?;
    let (w, h) = p.size;
    let n = w as u64 * h as u64;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let radiance = Buffer::new(&ctx, 16 * n, usage).map_err(err)?;
    let counts = Buffer::new(&ctx, 4 * n, usage).map_err(err)?;
    let storage = vk::DescriptorType::STORAGE_BUFFER;
    let bindings =
        [vk::DescriptorType::ACCELERATION_STRUCTURE_KHR, storage, storage, storage, storage, storage, storage];
    let pipe = ComputePipeline::new(&ctx, PATHTRACE, &bindings, 96).map_err(err)?;
    pipe.bind_acceleration_structure(0, &gpu.tlas);
    for (i, b) in inputs.iter().chain([&radiance, &counts]).enumerate() {
        pipe.bind_storage_buffer(1 + i as u32, b);
    }
    let floats = scene.camera.push_floats(w as f32 / h as f32, scene.light, scene.ao_radius);
    let mut push: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    for v in [w, h, p.spp, p.bounces] {
        push.extend_from_slice(&v.to_le_bytes());
    }
    for frame in 0..p.frames {
        let t = Instant::now();
        ctx.submit_once(|cmd| pipe.record_dispatch(cmd, &push, [w.div_ceil(8), h.div_ceil(8), 1])).map_err(err)?;
        let secs = t.elapsed().as_secs_f64();
        let rays: u64 = counts.read::<u32>().iter().map(|&r| r as u64).sum();
        let light: f64 = radiance.read::<[f32; 4]>().iter().map(|c| (c[0] + c[1] + c[2]) as f64).sum();
        println!("pt {frame} {secs} {rays} {light}");
    }
    Ok(())
}

/// One driver's result: the best frame's seconds, the rays and the radiance summed over the
/// pixels (the same every frame).
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    pub seconds: f64,
    pub rays: u64,
    pub radiance: f64,
}

pub fn parse(stdout: &str) -> Option<Measured> {
    let mut best: Option<Measured> = None;
    for line in stdout.lines() {
        if let ["pt", _, s, r, l] = line.split_whitespace().collect::<Vec<_>>().as_slice() {
            let m = Measured { seconds: s.parse().ok()?, rays: r.parse().ok()?, radiance: l.parse().ok()? };
            if best.is_none_or(|b| m.seconds < b.seconds) {
                best = Some(m);
            }
        }
    }
    best
}

/// Where two drivers' frames must agree. Floating-point shading differs in the last bits
/// between compilers (fused multiply-adds, reassociation), which can move a grazing ray
/// from hit to miss and take its path elsewhere: a few in a million paths, not a wrong walk.
pub fn disagreement(a: &Measured, b: &Measured) -> Option<String> {
    let rel = |x: f64, y: f64| (x - y).abs() / x.abs().max(y.abs()).max(1.0);
    if rel(a.rays as f64, b.rays as f64) > 2e-3 {
        return Some(format!("rays traced disagree: {} vs {}", a.rays, b.rays));
    }
    if rel(a.radiance, b.radiance) > 2e-3 {
        return Some(format!("radiance disagrees: {:.3} vs {:.3}", a.radiance, b.radiance));
    }
    None
}
