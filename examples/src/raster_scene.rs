//! A scene drawn through a vertex + fragment pipeline: every placement is an indexed draw,
//! depth-tested; the fragment shader finds the face normal from derivatives, traces a
//! shadow ray and ambient-occlusion rays with ray queries against the scene's TLAS, and
//! textures flat (ground) meshes with a mipmapped checker. Used by `render --raster` and by
//! `bench`'s raster frame.

use crate::raster::{texture, GraphicsDesc, GraphicsPipeline, Image2d, Sampler, Target};
use crate::scene::{GpuScene, Scene};
use crate::{Binding, Buffer, Context, Descriptor, Result};
use ash::vk;

const VS: &[u8] = include_bytes!("../shaders/render_raster.vert.spv");
const FS: &[u8] = include_bytes!("../shaders/render_raster.frag.spv");

/// Near and far planes of the camera.
const NEAR: f32 = 0.05;
const FAR: f32 = 200.0;
/// The ground texture: a checker of 8x8 cells with grid lines, every level down to 1x1.
const TEX_SIZE: u32 = 256;

/// Everything a frame needs, made once; [`RasterScene::draw`] renders frames.
pub struct RasterScene {
    pub target: Target,
    pipeline: GraphicsPipeline,
    _texture: Image2d,
    _sampler: Sampler,
    _frame: Buffer,
    vertices: Buffer,
    indices: Buffer,
    /// Per placement: first index, index count, vertex offset, push constants.
    draws: Vec<(u32, u32, i32, Vec<u8>)>,
}

/// The checker's levels, each the box-filtered half of the one before.
fn checker_levels() -> Vec<Vec<u8>> {
    let n = TEX_SIZE as usize;
    let cell = n / 8;
    let mut level: Vec<[f32; 3]> = (0..n * n)
        .map(|i| {
            let (x, y) = (i % n, i / n);
            let line = x % cell < 2 || y % cell < 2;
            let dark = (x / cell + y / cell) % 2 == 1;
            match (line, dark) {
                (true, _) => [0.25, 0.25, 0.3],
                (false, true) => [0.55, 0.6, 0.55],
                (false, false) => [1.0, 1.0, 0.95],
            }
        })
        .collect();
    let mut out = Vec::new();
    let mut size = n;
    loop {
        out.push(level.iter().flat_map(|c| [c[0], c[1], c[2], 1.0].map(|v| (v * 255.0).round() as u8)).collect());
        if size == 1 {
            return out;
        }
        let half = size / 2;
        level = (0..half * half)
            .map(|i| {
                let (x, y) = (2 * (i % half), 2 * (i / half));
                let at = |dx, dy| level[(y + dy) * size + x + dx];
                std::array::from_fn(|k| (at(0, 0)[k] + at(1, 0)[k] + at(0, 1)[k] + at(1, 1)[k]) / 4.0)
            })
            .collect();
        size = half;
    }
}

/// Rows of the world-to-clip matrix of `scene`'s camera (Vulkan clip space: y down, depth
/// 0 at the near plane, 1 at the far one).
fn view_proj(scene: &Scene, aspect: f32) -> [[f32; 4]; 4] {
    let c = scene.camera.push_floats(aspect, scene.light, scene.ao_radius);
    let (eye, tan) = ([c[0], c[1], c[2]], c[3]);
    let (fwd, right, up) = ([c[4], c[5], c[6]], [c[8], c[9], c[10]], [c[12], c[13], c[14]]);
    let dot = |a: [f32; 3], b: [f32; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let row = |v: [f32; 3], s: f32, t: f32| [v[0] * s, v[1] * s, v[2] * s, -dot(v, eye) * s + t];
    let a = FAR / (FAR - NEAR);
    [row(right, 1.0 / (aspect * tan), 0.0), row(up, -1.0 / tan, 0.0), row(fwd, a, -NEAR * a), row(fwd, 1.0, 0.0)]
}

/// Whether every vertex of a mesh has the same height (the ground).
fn flat(positions: &[[f32; 3]]) -> bool {
    positions.iter().all(|p| p[1] == positions[0][1])
}

impl RasterScene {
    pub fn new(ctx: &Context, scene: &Scene, gpu: &GpuScene, [w, h]: [u32; 2], spp: u32) -> Result<Self> {
        let target = Target::new(ctx, [w, h], &[vk::Format::R8G8B8A8_UNORM], Some(vk::Format::D32_SFLOAT))?;
        let levels = checker_levels();
        let tex = texture(ctx, vk::Format::R8G8B8A8_UNORM, [TEX_SIZE, TEX_SIZE], &levels)?;
        let sampler = Sampler::simple(ctx, vk::Filter::LINEAR, vk::SamplerAddressMode::REPEAT)?;

        let mut frame: Vec<f32> = view_proj(scene, w as f32 / h as f32).into_iter().flatten().collect();
        let e = scene.camera.eye;
        frame.extend([e[0], e[1], e[2], 0.0]);
        frame.extend([scene.light[0], scene.light[1], scene.light[2], scene.ao_radius]);
        frame.extend([w, h, spp, 0].map(f32::from_bits));
        let frame = Buffer::with_data(ctx, &frame, vk::BufferUsageFlags::STORAGE_BUFFER)?;

        let (mut positions, mut indices, mut firsts) = (Vec::<[f32; 3]>::new(), Vec::<u32>::new(), Vec::new());
        for m in &scene.meshes {
            firsts.push((indices.len() as u32, m.indices.len() as u32, positions.len() as i32, flat(&m.positions)));
            positions.extend(&m.positions);
            indices.extend(&m.indices);
        }
        let vertices = Buffer::with_data(ctx, &positions, vk::BufferUsageFlags::VERTEX_BUFFER)?;
        let indices = Buffer::with_data(ctx, &indices, vk::BufferUsageFlags::INDEX_BUFFER)?;
        let draws = scene
            .placements
            .iter()
            .map(|p| {
                let (first, count, offset, ground) = firsts[p.mesh];
                let mut push: Vec<f32> = p.transform.to_row_major().to_vec();
                push.extend([p.albedo[0], p.albedo[1], p.albedo[2], if ground { 1.0 } else { 0.0 }]);
                (first, count, offset, push.iter().flat_map(|f| f.to_le_bytes()).collect())
            })
            .collect();

        let b = |binding, ty| Binding { set: 0, binding, ty, count: 1 };
        let bindings = [
            b(0, vk::DescriptorType::ACCELERATION_STRUCTURE_KHR),
            b(1, vk::DescriptorType::COMBINED_IMAGE_SAMPLER),
            b(2, vk::DescriptorType::STORAGE_BUFFER),
        ];
        let vb =
            [vk::VertexInputBindingDescription { binding: 0, stride: 12, input_rate: vk::VertexInputRate::VERTEX }];
        let attr = [vk::VertexInputAttributeDescription {
            location: 0,
            binding: 0,
            format: vk::Format::R32G32B32_SFLOAT,
            offset: 0,
        }];
        let desc = GraphicsDesc {
            vertex: VS,
            fragment: Some(FS),
            bindings: &bindings,
            push_constant_bytes: 64,
            vertex_bindings: &vb,
            vertex_attributes: &attr,
            depth_compare: Some(vk::CompareOp::LESS),
            ..Default::default()
        };
        let pipeline = GraphicsPipeline::new(ctx, &target, &desc)?;
        pipeline.bind_acceleration_structure(0, &gpu.tlas);
        pipeline.write(0, 1, 0, &Descriptor::Combined(tex.view, sampler.handle))?;
        pipeline.bind_storage_buffer(2, &frame);
        Ok(RasterScene { target, pipeline, _texture: tex, _sampler: sampler, _frame: frame, vertices, indices, draws })
    }

    /// Draws one frame (cleared to the sky colour) and waits for it.
    pub fn draw(&self, ctx: &Context) -> Result<()> {
        let d = ctx.device();
        ctx.submit_once(|cmd| {
            // The sky of render.comp at the horizon, before gamma.
            let sky = [0.85f32, 0.9, 1.0].map(|c| c.powf(1.0 / 2.2));
            let clear = vk::ClearColorValue { float32: [sky[0], sky[1], sky[2], 1.0] };
            self.target.begin(cmd, clear, 1.0, 0);
            for (i, (first, count, offset, push)) in self.draws.iter().enumerate() {
                if i == 0 {
                    self.pipeline.bind(ctx, cmd, push, &[&self.vertices]);
                    // SAFETY: recording inside the target's render pass.
                    unsafe { d.cmd_bind_index_buffer(cmd, self.indices.handle(), 0, vk::IndexType::UINT32) };
                } else {
                    // SAFETY: as above; the layout has this push-constant range.
                    unsafe {
                        d.cmd_push_constants(
                            cmd,
                            self.pipeline.layout(),
                            vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT,
                            0,
                            push,
                        )
                    };
                }
                // SAFETY: as above; the buffers outlive the submission.
                unsafe { d.cmd_draw_indexed(cmd, *count, 1, *first, *offset, 0) };
            }
            self.target.end(cmd);
        })
    }

    /// The last frame's pixels (RGBA8, row-major).
    pub fn pixels(&self, ctx: &Context) -> Result<Vec<u8>> {
        self.target.color[0].read(ctx, vk::ImageAspectFlags::COLOR)
    }
}
