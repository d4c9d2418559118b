//! The render in bands of rows (one submission each, for the progress bar), with ray
//! queries or a ray-tracing pipeline (`vortex_examples::scene_render`: the scene's
//! structures, shading buffers and kernels).

use crate::window::Viewer;
use crate::Options;
use std::io::Write;
use std::time::Instant;
use vortex_examples::scene::Scene;
use vortex_examples::scene_render::{SceneRenderer, Tracer};
use vortex_examples::{Context, Result};

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
    let (w, h) = (o.width, o.height);
    let tracer = if o.pipeline { Tracer::Pipeline } else { Tracer::Query };
    let renderer = SceneRenderer::new(ctx, scene, [w, h], o.spp, tracer)?;
    let build_seconds = renderer.gpu.build_seconds;
    let t1 = Instant::now();
    let mut row = 0;
    let mut bands = 0;
    while row < h {
        let rows = BAND_ROWS.min(h - row);
        renderer.render_rows(ctx, row, rows)?;
        row += rows;
        bands += 1;
        if let Some(v) = viewer.as_deref_mut() {
            v.show(&renderer.pixels())?;
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
    let rays_per_pixel = renderer.ray_counts();
    let rays = rays_per_pixel.iter().map(|&r| r as u64).sum();
    Ok(Rendered { pixels: renderer.pixels(), rays, rays_per_pixel, bands, build_seconds, render_seconds })
}
