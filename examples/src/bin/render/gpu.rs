//! The scene on the device: one BLAS per mesh, a TLAS over the placements, the shading
//! buffers, and the render in bands of rows (one submission each, for the progress bar).

use crate::window::Viewer;
use crate::Options;
use ash::vk;
use std::io::Write;
use std::time::Instant;
use vortex_examples::scene::{GpuScene, Scene};
use vortex_examples::{Buffer, ComputePipeline, Context, Result};

const RENDER: &[u8] = include_bytes!("../../../shaders/render.spv");

/// Rows per submission: small enough for a lively progress bar, large enough to keep the
/// device busy.
pub const BAND_ROWS: u32 = 32;

pub struct Rendered {
    /// RGBA8 pixels, row-major, opaque.
    pub pixels: Vec<u8>,
    pub rays: u64,
    /// Rays traced per pixel (primary, shadow, AO).
    pub rays_per_pixel: Vec<u32>,
    /// Dispatches submitted, in row order (`BAND_ROWS` rows each).
    pub bands: u32,
    pub build_seconds: f64,
    pub render_seconds: f64,
}

/// Renders the scene; `viewer` (`--window`) shows each band as it lands.
pub fn render(ctx: &Context, scene: &Scene, o: &Options, mut viewer: Option<&mut Viewer>) -> Result<Rendered> {
    let gpu = GpuScene::build(ctx, scene)?;
    let build_seconds = gpu.build_seconds;

    // Shading data: every mesh's positions and indices in one buffer each.
    let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let mut positions: Vec<f32> = Vec::new();
    let mut indices: Vec<u32> = Vec::new();
    let mut infos: Vec<[u32; 4]> = Vec::new();
    for m in &scene.meshes {
        infos.push([(positions.len() / 3) as u32, indices.len() as u32, 0, 0]);
        positions.extend(m.positions.iter().flatten());
        indices.extend_from_slice(&m.indices);
    }
    let albedo: Vec<[f32; 4]> = scene.placements.iter().map(|p| [p.albedo[0], p.albedo[1], p.albedo[2], 1.0]).collect();
    let pos_buf = Buffer::with_data(ctx, &positions, storage)?;
    let idx_buf = Buffer::with_data(ctx, &indices, storage)?;
    let mesh_buf = Buffer::with_data(ctx, &infos, storage)?;
    let albedo_buf = Buffer::with_data(ctx, &albedo, storage)?;
    let (w, h) = (o.width, o.height);
    let pixels = Buffer::new(ctx, w as u64 * h as u64 * 4, storage)?;
    let ray_counts = Buffer::new(ctx, w as u64 * h as u64 * 4, storage)?;

    let mut bindings = vec![vk::DescriptorType::ACCELERATION_STRUCTURE_KHR];
    bindings.extend([vk::DescriptorType::STORAGE_BUFFER; 6]);
    let pipe = ComputePipeline::new(ctx, RENDER, &bindings, 96)?;
    pipe.bind_acceleration_structure(0, &gpu.tlas);
    for (i, b) in [&pos_buf, &idx_buf, &mesh_buf, &albedo_buf, &pixels, &ray_counts].into_iter().enumerate() {
        pipe.bind_storage_buffer(1 + i as u32, b);
    }

    let floats = scene.camera.push_floats(w as f32 / h as f32, scene.light, scene.ao_radius);
    let t1 = Instant::now();
    let mut row = 0;
    let mut bands = 0;
    while row < h {
        let rows = BAND_ROWS.min(h - row);
        let mut push: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
        for v in [w, h, o.spp, row] {
            push.extend_from_slice(&v.to_le_bytes());
        }
        ctx.submit_once(|cmd| pipe.record_dispatch(cmd, &push, [w.div_ceil(8), rows.div_ceil(8), 1]))?;
        row += rows;
        bands += 1;
        if let Some(v) = viewer.as_deref_mut() {
            v.show(&pixels.read::<u8>())?;
        }
        if !o.quiet {
            let done = row as f64 / h as f64;
            let bar = (done * 40.0) as usize;
            eprint!("\rrendering [{}{}] {:5.1}%", "#".repeat(bar), ".".repeat(40 - bar), done * 100.0);
            let _ = std::io::stderr().flush();
        }
    }
    if !o.quiet {
        eprintln!();
    }
    let render_seconds = t1.elapsed().as_secs_f64();
    let rays_per_pixel = ray_counts.read::<u32>();
    let rays = rays_per_pixel.iter().map(|&r| r as u64).sum();
    Ok(Rendered { pixels: pixels.read::<u8>(), rays, rays_per_pixel, bands, build_seconds, render_seconds })
}
