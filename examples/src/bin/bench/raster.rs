//! The raster workloads: fill rate (full-target quads of a one-line fragment shader, added
//! up by blending so that no driver may drop the hidden layers), draws
//! per second (small triangles, one draw each) and a frame of the default scene drawn
//! through the vertex + fragment pipeline with a shadow ray per fragment (ray queries in
//! the fragment shader, as in Sascha Willems' ray-query shadow sample). Each driver runs
//! them in its own child process like the ray-tracing workloads; the child prints
//! `raster NAME SECONDS COUNT CHECKSUM`.

use ash::vk;
use std::time::Instant;
use vortex_examples::raster::{GraphicsDesc, GraphicsPipeline, Target};
use vortex_examples::raster_scene::RasterScene;
use vortex_examples::scene::{GpuScene, Scene};
use vortex_examples::{Buffer, Context, Icd};

const VS: &[u8] = include_bytes!("../../../shaders/raster.vert.spv");
const FLAT_FS: &[u8] = include_bytes!("../../../shaders/raster_flat.frag.spv");

/// Workload names, in table order, with what their count is.
pub const WORKLOADS: [(&str, &str); 3] = [("fill", "M fragments/s"), ("draws", "draws/s"), ("frame", "frames/s")];

/// Full-target quads per fill-rate submission, and draws per draw-rate submission.
const FILL_LAYERS: u32 = 8;
const DRAWS: u32 = 2000;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Sums the colour bytes: drivers that drew the same pixels agree on it.
fn checksum(pixels: &[u8]) -> u64 {
    pixels.iter().map(|&b| b as u64).sum()
}

fn push(color: [f32; 4]) -> Vec<u8> {
    color.iter().chain(&[0.0; 4]).flat_map(|f| f.to_le_bytes()).chain([0u8; 16]).collect()
}

/// A flat-colour pipeline over positions in clip space (binding 0, vec4), adding its colour
/// to the target's with `additive`.
fn flat_pipeline(ctx: &Context, target: &Target, additive: bool) -> Result<GraphicsPipeline, String> {
    let add = vk::PipelineColorBlendAttachmentState {
        blend_enable: vk::TRUE,
        src_color_blend_factor: vk::BlendFactor::ONE,
        dst_color_blend_factor: vk::BlendFactor::ONE,
        color_blend_op: vk::BlendOp::ADD,
        src_alpha_blend_factor: vk::BlendFactor::ONE,
        dst_alpha_blend_factor: vk::BlendFactor::ONE,
        alpha_blend_op: vk::BlendOp::ADD,
        color_write_mask: vk::ColorComponentFlags::RGBA,
    };
    let vb = [vk::VertexInputBindingDescription { binding: 0, stride: 16, input_rate: vk::VertexInputRate::VERTEX }];
    let attr = [vk::VertexInputAttributeDescription {
        location: 0,
        binding: 0,
        format: vk::Format::R32G32B32A32_SFLOAT,
        offset: 0,
    }];
    let desc = GraphicsDesc {
        vertex: VS,
        fragment: Some(FLAT_FS),
        push_constant_bytes: 48,
        vertex_bindings: &vb,
        vertex_attributes: &attr,
        blend: additive.then_some(add),
        ..Default::default()
    };
    GraphicsPipeline::new(ctx, target, &desc).map_err(err)
}

/// Records `draws` draws of `vertices` vertices each (from vertex `i * vertices`) into one
/// submission and returns its wall time.
fn timed_draws(
    ctx: &Context,
    target: &Target,
    pipe: &GraphicsPipeline,
    vb: &Buffer,
    draws: u32,
    vertices: u32,
    per_draw: u32,
) -> Result<f64, String> {
    let d = ctx.device();
    let t = Instant::now();
    ctx.submit_once(|cmd| {
        target.begin(cmd, vk::ClearColorValue::default(), 1.0, 0);
        // Multiples of 1/255: sums of them are exact in RGBA8 on every driver.
        pipe.bind(ctx, cmd, &push([3.0, 5.0, 7.0, 1.0].map(|c| c / 255.0)), &[vb]);
        for i in 0..draws {
            // SAFETY: recording inside the target's render pass.
            unsafe { d.cmd_draw(cmd, vertices, 1, (i % per_draw) * vertices, 0) };
        }
        target.end(cmd);
    })
    .map_err(err)?;
    Ok(t.elapsed().as_secs_f64())
}

/// Fill rate: `FILL_LAYERS` full-target quads added up, the second of two submissions timed.
fn fill(ctx: &Context, size: [u32; 2]) -> Result<(f64, u64, u64), String> {
    let target = Target::new(ctx, size, &[vk::Format::R8G8B8A8_UNORM], None).map_err(err)?;
    let pipe = flat_pipeline(ctx, &target, true)?;
    let quad: [[f32; 4]; 6] = [
        [-1.0, -1.0, 0.5, 1.0],
        [1.0, -1.0, 0.5, 1.0],
        [-1.0, 1.0, 0.5, 1.0],
        [-1.0, 1.0, 0.5, 1.0],
        [1.0, -1.0, 0.5, 1.0],
        [1.0, 1.0, 0.5, 1.0],
    ];
    let vb = Buffer::with_data(ctx, &quad, vk::BufferUsageFlags::VERTEX_BUFFER).map_err(err)?;
    timed_draws(ctx, &target, &pipe, &vb, 1, 6, 1)?;
    let secs = timed_draws(ctx, &target, &pipe, &vb, FILL_LAYERS, 6, 1)?;
    let pixels = target.color[0].read(ctx, vk::ImageAspectFlags::COLOR).map_err(err)?;
    Ok((secs, FILL_LAYERS as u64 * size[0] as u64 * size[1] as u64, checksum(&pixels)))
}

/// Draw rate: `DRAWS` draws of one small triangle each, spread over the target.
fn draws(ctx: &Context, size: [u32; 2]) -> Result<(f64, u64, u64), String> {
    let target = Target::new(ctx, size, &[vk::Format::R8G8B8A8_UNORM], None).map_err(err)?;
    let pipe = flat_pipeline(ctx, &target, false)?;
    // 64 triangles of about 8x8 pixels on a grid; draw i uses triangle i mod 64.
    let mut tris = Vec::new();
    for k in 0..64 {
        let (x, y) = ((k % 8) as f32 / 4.0 - 1.0, (k / 8) as f32 / 4.0 - 1.0);
        let (dx, dy) = (16.0 / size[0] as f32, 16.0 / size[1] as f32);
        tris.extend([[x, y, 0.5, 1.0], [x + dx, y, 0.5, 1.0], [x, y + dy, 0.5, 1.0]]);
    }
    let vb = Buffer::with_data(ctx, &tris, vk::BufferUsageFlags::VERTEX_BUFFER).map_err(err)?;
    timed_draws(ctx, &target, &pipe, &vb, 64, 3, 64)?;
    let secs = timed_draws(ctx, &target, &pipe, &vb, DRAWS, 3, 64)?;
    let pixels = target.color[0].read(ctx, vk::ImageAspectFlags::COLOR).map_err(err)?;
    Ok((secs, DRAWS as u64, checksum(&pixels)))
}

/// One frame of the default scene with a shadow ray per fragment (no AO rays).
fn frame(ctx: &Context, size: [u32; 2]) -> Result<(f64, u64, u64), String> {
    let scene = Scene::builtin("bunny").map_err(err)?;
    let gpu = GpuScene::build(ctx, &scene).map_err(err)?;
    let r = RasterScene::new(ctx, &scene, &gpu, size, 0).map_err(err)?;
    let t = Instant::now();
    r.draw(ctx).map_err(err)?;
    let secs = t.elapsed().as_secs_f64();
    Ok((secs, 1, checksum(&r.pixels(ctx).map_err(err)?)))
}

/// The child: runs every workload once on `icd` and prints one line each.
pub fn worker(icd: &Icd, size: [u32; 2]) -> Result<(), String> {
    let ctx = Context::new(icd).map_err(err)?;
    let (_, flags) = ctx.queue_family();
    if !flags.contains(vk::QueueFlags::GRAPHICS) {
        return Err(format!("{} has no graphics queue", ctx.info().name));
    }
    for (name, run) in [("fill", fill as fn(&Context, [u32; 2]) -> _), ("draws", draws), ("frame", frame)] {
        let (secs, count, sum) = run(&ctx, size)?;
        println!("raster {name} {secs} {count} {sum}");
    }
    Ok(())
}

/// What one driver measured: per workload (seconds, count, checksum).
pub type Measured = Vec<(f64, u64, u64)>;

pub fn parse(stdout: &str) -> Measured {
    let mut m = vec![(f64::NAN, 0, 0); WORKLOADS.len()];
    for line in stdout.lines() {
        if let ["raster", name, s, c, sum] = line.split_whitespace().collect::<Vec<_>>().as_slice() {
            if let Some(k) = WORKLOADS.iter().position(|w| w.0 == *name) {
                m[k] = (s.parse().unwrap_or(f64::NAN), c.parse().unwrap_or(0), sum.parse().unwrap_or(0));
            }
        }
    }
    m
}

/// The rate of workload `k`: fill in M fragments/s, the others per second.
pub fn rate(m: &Measured, k: usize) -> f64 {
    let (secs, count, _) = m[k];
    let scale = if WORKLOADS[k].0 == "fill" { 1e6 } else { 1.0 };
    count as f64 / secs / scale
}
