//! The scene renderer on the device, traced two ways over the same resources and shading
//! (`shaders/scene_shading.glsl`): ray queries in a compute shader (`shaders/render.comp`,
//! the `render` example) or a ray-tracing pipeline (`shaders/rt_scene.*`: the camera ray
//! from the ray generation shader, the sky from a miss shader, shading with a shadow ray
//! and the AO rays traced from the closest-hit shader, the alpha test of alpha-tested
//! geometry in an any-hit shader). Both write, per pixel, the colour, the rays traced and
//! a mask word (instance hit, shadow ray lit, AO rays occluded) so that two renders can be
//! compared exactly where they must agree.

use crate::rtpipe::{Group, RtPipeline, Table};
use crate::scene::{GpuScene, Scene};
use crate::{Buffer, ComputePipeline, Context, Error, Result};
use ash::vk;

const RENDER: &[u8] = include_bytes!("../shaders/render.spv");
const RGEN: &[u8] = include_bytes!("../shaders/rt_scene.rgen.spv");
const RGEN_DEPTH1: &[u8] = include_bytes!("../shaders/rt_scene_depth1.rgen.spv");
const RMISS: &[u8] = include_bytes!("../shaders/rt_scene.rmiss.spv");
const RMISS_SHADOW: &[u8] = include_bytes!("../shaders/rt_scene_shadow.rmiss.spv");
const RCHIT: &[u8] = include_bytes!("../shaders/rt_scene.rchit.spv");
const RCHIT_DEPTH1: &[u8] = include_bytes!("../shaders/rt_scene_depth1.rchit.spv");
const RAHIT: &[u8] = include_bytes!("../shaders/rt_scene.rahit.spv");

/// Bytes of the push constants: the camera and light (`Camera::push_floats`), then width,
/// height, AO rays per pixel and the first row of the band.
const PUSH_BYTES: u32 = 96;

/// Bits of a pixel's mask word (`scene_shading.glsl`).
pub const MASK_INSTANCE: u32 = (1 << 20) - 1;
pub const MASK_LIT: u32 = 1 << 20;
pub const MASK_AO_SHIFT: u32 = 21;

/// How the renderer traces its rays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracer {
    /// Ray queries in a compute shader, 8x8 pixels a workgroup.
    Query,
    /// `vkCmdTraceRaysKHR`, one launch index a pixel, recursion depth 2: the shadow and
    /// AO rays are traced from the closest-hit shader.
    Pipeline,
    /// The same pipeline for devices whose `maxRayRecursionDepth` is 1: the closest-hit
    /// shader returns the surface and the ray generation shader traces the shadow and AO
    /// rays (`SHADOWS_IN_RAYGEN` in `shaders/rt_scene.*`).
    PipelineDepth1,
}

enum Kernel {
    Query(ComputePipeline),
    Pipeline(Box<RtPipeline>),
}

/// A renderer of one scene at one size: its acceleration structures, shading buffers,
/// outputs and kernel.
pub struct SceneRenderer {
    pub gpu: GpuScene,
    _inputs: [Buffer; 4],
    pixels: Buffer,
    ray_counts: Buffer,
    masks: Buffer,
    kernel: Kernel,
    floats: [f32; 20],
    size: [u32; 2],
    spp: u32,
}

impl SceneRenderer {
    pub fn new(ctx: &Context, scene: &Scene, size: [u32; 2], spp: u32, tracer: Tracer) -> Result<SceneRenderer> {
        let gpu = GpuScene::build(ctx, scene)?;
        let inputs = shading_buffers(ctx, scene)?;
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let n = size[0] as u64 * size[1] as u64 * 4;
        let (pixels, ray_counts, masks) =
            (Buffer::new(ctx, n, storage)?, Buffer::new(ctx, n, storage)?, Buffer::new(ctx, n, storage)?);
        let mut types = vec![vk::DescriptorType::ACCELERATION_STRUCTURE_KHR];
        types.extend([vk::DescriptorType::STORAGE_BUFFER; 7]);
        let kernel = match tracer {
            Tracer::Query => Kernel::Query(ComputePipeline::new(ctx, RENDER, &types, PUSH_BYTES)?),
            Tracer::Pipeline => Kernel::Pipeline(Box::new(pipeline(ctx, &types, 2)?)),
            Tracer::PipelineDepth1 => Kernel::Pipeline(Box::new(pipeline(ctx, &types, 1)?)),
        };
        let base = match &kernel {
            Kernel::Query(p) => p,
            Kernel::Pipeline(p) => &p.base,
        };
        base.bind_acceleration_structure(0, &gpu.tlas);
        for (i, b) in inputs.iter().chain([&pixels, &ray_counts, &masks]).enumerate() {
            base.bind_storage_buffer(1 + i as u32, b);
        }
        let floats = scene.camera.push_floats(size[0] as f32 / size[1] as f32, scene.light, scene.ao_radius);
        Ok(SceneRenderer { gpu, _inputs: inputs, pixels, ray_counts, masks, kernel, floats, size, spp })
    }

    /// Renders rows `first..first + rows` in one submission.
    pub fn render_rows(&self, ctx: &Context, first: u32, rows: u32) -> Result<()> {
        let [w, h] = self.size;
        let rows = rows.min(h.saturating_sub(first));
        let mut push: Vec<u8> = self.floats.iter().flat_map(|f| f.to_le_bytes()).collect();
        for v in [w, h, self.spp, first] {
            push.extend_from_slice(&v.to_le_bytes());
        }
        match &self.kernel {
            Kernel::Query(p) => {
                ctx.submit_once(|cmd| p.record_dispatch(cmd, &push, [w.div_ceil(8), rows.div_ceil(8), 1]))
            }
            Kernel::Pipeline(p) => ctx.submit_once(|cmd| p.record_trace(ctx, cmd, &push, [w, rows, 1])),
        }
    }

    /// Renders the whole image in one submission; the seconds it took, submission to fence.
    pub fn render(&self, ctx: &Context) -> Result<f64> {
        let t = std::time::Instant::now();
        self.render_rows(ctx, 0, self.size[1])?;
        Ok(t.elapsed().as_secs_f64())
    }

    /// RGBA8 pixels, row-major, opaque.
    pub fn pixels(&self) -> Vec<u8> {
        self.pixels.read::<u8>()
    }

    /// Rays traced per pixel (primary, shadow, AO).
    pub fn ray_counts(&self) -> Vec<u32> {
        self.ray_counts.read::<u32>()
    }

    /// Mask words per pixel (`MASK_*`).
    pub fn masks(&self) -> Vec<u32> {
        self.masks.read::<u32>()
    }
}

/// Every mesh's positions and indices in one buffer each, each mesh's first vertex, first
/// index and flags (bit 0: alpha-tested), and each placement's albedo.
fn shading_buffers(ctx: &Context, scene: &Scene) -> Result<[Buffer; 4]> {
    let mut positions: Vec<f32> = Vec::new();
    let mut indices: Vec<u32> = Vec::new();
    let mut infos: Vec<[u32; 4]> = Vec::new();
    for (i, m) in scene.meshes.iter().enumerate() {
        let alpha_tested = u32::from(scene.cutout == Some(i));
        infos.push([(positions.len() / 3) as u32, indices.len() as u32, alpha_tested, 0]);
        positions.extend(m.positions.iter().flatten());
        indices.extend_from_slice(&m.indices);
    }
    let albedo: Vec<[f32; 4]> = scene.placements.iter().map(|p| [p.albedo[0], p.albedo[1], p.albedo[2], 1.0]).collect();
    let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
    Ok([
        Buffer::with_data(ctx, &positions, storage)?,
        Buffer::with_data(ctx, &indices, storage)?,
        Buffer::with_data(ctx, &infos, storage)?,
        Buffer::with_data(ctx, &albedo, storage)?,
    ])
}

/// The pipeline: groups 0 ray generation, 1 the sky (miss 0), 2 the shadow miss (miss 1),
/// 3 the one hit group (closest-hit + any-hit) every instance uses; shadow rays from
/// closest-hit at recursion `depth` 2, from ray generation at 1.
fn pipeline(ctx: &Context, types: &[vk::DescriptorType], depth: u32) -> Result<RtPipeline> {
    if !ctx.info().enabled.contains(&"rayTracingPipeline") {
        return Err(Error::msg(format!(
            "{} does not offer VK_KHR_ray_tracing_pipeline (on Vortex: hidden by VORTEX_RT_PIPELINE=0, and on rdna2 devices)",
            ctx.info().name
        )));
    }
    let (rgen, rchit) = if depth >= 2 { (RGEN, RCHIT) } else { (RGEN_DEPTH1, RCHIT_DEPTH1) };
    let stages = [
        (vk::ShaderStageFlags::RAYGEN_KHR, rgen),
        (vk::ShaderStageFlags::MISS_KHR, RMISS),
        (vk::ShaderStageFlags::MISS_KHR, RMISS_SHADOW),
        (vk::ShaderStageFlags::CLOSEST_HIT_KHR, rchit),
        (vk::ShaderStageFlags::ANY_HIT_KHR, RAHIT),
    ];
    let groups = [Group::general(0), Group::general(1), Group::general(2), Group::triangles(Some(3), Some(4))];
    let table = Table { raygen: 0, miss: vec![1, 2], hit: vec![3] };
    let bindings = crate::pipeline::set0(types);
    RtPipeline::with_records(ctx, &stages, &groups, &(&table).into(), &bindings, PUSH_BYTES, depth)
}

/// How two renders of the same scene and size differ.
#[derive(Clone, Copy, Debug, Default)]
pub struct Difference {
    /// Pixels whose mask words differ (instance hit, shadow, AO).
    pub masks: usize,
    /// Pixels whose ray counts differ.
    pub rays: usize,
    /// Pixels whose colour differs by more than `tolerance` in a channel.
    pub pixels: usize,
    /// The largest channel difference, in 1/255.
    pub max_channel: u8,
    /// PSNR over RGB in dB (infinite when identical).
    pub psnr: f64,
}

/// Compares render `a` (pixels, ray counts, masks) with render `b`.
pub fn difference(a: (&[u8], &[u32], &[u32]), b: (&[u8], &[u32], &[u32]), tolerance: u8) -> Difference {
    let masks = a.2.iter().zip(b.2).filter(|(x, y)| x != y).count();
    let rays = a.1.iter().zip(b.1).filter(|(x, y)| x != y).count();
    let (mut pixels, mut max_channel, mut se) = (0usize, 0u8, 0f64);
    for (p, q) in a.0.chunks_exact(4).zip(b.0.chunks_exact(4)) {
        let worst = p[..3].iter().zip(&q[..3]).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0);
        pixels += usize::from(worst > tolerance);
        max_channel = max_channel.max(worst);
        se += p[..3].iter().zip(&q[..3]).map(|(x, y)| (*x as f64 - *y as f64).powi(2)).sum::<f64>();
    }
    let mse = se / (3 * (a.0.len() / 4).max(1)) as f64;
    let psnr = if mse == 0.0 { f64::INFINITY } else { 10.0 * (255.0f64 * 255.0 / mse).log10() };
    Difference { masks, rays, pixels, max_channel, psnr }
}

/// What a render's masks say: pixels that hit geometry, hit pixels the light reaches, and
/// pixels that see the alpha-tested instance (`cutout`: its instance index).
pub fn mask_counts(masks: &[u32], cutout: Option<usize>) -> (usize, usize, usize) {
    let hit = masks.iter().filter(|&&m| m & MASK_INSTANCE != 0).count();
    let lit = masks.iter().filter(|&&m| m & MASK_LIT != 0).count();
    let card = cutout.map_or(0, |c| masks.iter().filter(|&&m| (m & MASK_INSTANCE) as usize == c + 1).count());
    (hit, lit, card)
}
