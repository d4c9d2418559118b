//! Texture filtering and mip selection from a fragment shader: a 64x64 texture with seven
//! levels (level 0 a gradient, every other level one colour) drawn over a 16x16 target, so
//! the quads' derivatives select level 2; a bias of 1 selects level 3, and so do explicit
//! gradients of 8 texels a pixel; explicit LOD 1.5 blends levels 1 and 2; bilinear weights
//! at a fixed coordinate; a repeated coordinate; clamp-to-border outside the image in u and
//! in v (opaque white). Expectations solved by hand.

use crate::{err, push, rect_tris, storage, vertices, Check, POS_ATTRIBUTE, POS_BINDING, VS};
use ash::vk;
use vortex_examples::raster::{texture, GraphicsDesc, GraphicsPipeline, Sampler, Target};
use vortex_examples::{Binding, Buffer, Context, Descriptor};

const TEX_FS: &[u8] = include_bytes!("../../../shaders/raster_tex.frag.spv");
const SIZE: u32 = 64;
const LEVELS: u32 = 7;

fn level_color(level: u32) -> [u8; 4] {
    [(level * 30) as u8, (255 - level * 30) as u8, ((level * 50) % 256) as u8, 255]
}

fn levels() -> Vec<Vec<u8>> {
    (0..LEVELS)
        .map(|l| {
            let n = (SIZE >> l) as usize;
            let mut t = Vec::with_capacity(n * n * 4);
            for j in 0..n {
                for i in 0..n {
                    t.extend(if l == 0 { [4 * i as u8, 4 * j as u8, 0, 255] } else { level_color(l) });
                }
            }
            t
        })
        .collect()
}

fn norm(c: [u8; 4]) -> [f32; 4] {
    c.map(|v| v as f32 / 255.0)
}

pub fn filtering_and_mips(ctx: &Context) -> Check {
    let size = [16u32, 16];
    let target = Target::new(ctx, size, &[vk::Format::R8G8B8A8_UNORM], None).map_err(err)?;
    let tex = texture(ctx, vk::Format::R8G8B8A8_UNORM, [SIZE, SIZE], &levels()).map_err(err)?;
    let nearest = Sampler::simple(ctx, vk::Filter::NEAREST, vk::SamplerAddressMode::REPEAT).map_err(err)?;
    let linear = Sampler::simple(ctx, vk::Filter::LINEAR, vk::SamplerAddressMode::REPEAT).map_err(err)?;
    let combined = |binding| Binding { set: 0, binding, ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER, count: 1 };
    let bindings = [combined(0), combined(1), storage(2), combined(3)];
    let border = |colour| {
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::LINEAR)
            .min_filter(vk::Filter::LINEAR)
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_BORDER)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_BORDER)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_BORDER)
            .border_color(colour)
            .max_lod(vk::LOD_CLAMP_NONE);
        Sampler::new(ctx, &info).map_err(err)
    };
    let white = border(vk::BorderColor::FLOAT_OPAQUE_WHITE)?;
    let desc = GraphicsDesc {
        vertex: VS,
        fragment: Some(TEX_FS),
        bindings: &bindings,
        push_constant_bytes: 48,
        vertex_bindings: &POS_BINDING,
        vertex_attributes: &POS_ATTRIBUTE,
        ..Default::default()
    };
    let pipe = GraphicsPipeline::new(ctx, &target, &desc).map_err(err)?;
    let n = (size[0] * size[1]) as u64;
    let out = Buffer::new(ctx, n * 128, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    pipe.write(0, 0, 0, &Descriptor::Combined(tex.view, nearest.handle)).map_err(err)?;
    pipe.write(0, 1, 0, &Descriptor::Combined(tex.view, linear.handle)).map_err(err)?;
    pipe.bind_storage_buffer(2, &out);
    pipe.write(0, 3, 0, &Descriptor::Combined(tex.view, white.handle)).map_err(err)?;
    let vb = vertices(ctx, &rect_tris([0.0, 0.0, 16.0, 16.0], 0.5, size))?;
    ctx.submit_once(|cmd| {
        target.begin(cmd, vk::ClearColorValue::default(), 1.0, 0);
        pipe.draw(ctx, cmd, &push([1.0; 4], [0.0; 4], size), &[&vb], 6, 1);
        target.end(cmd);
    })
    .map_err(err)?;
    let got = out.read::<[f32; 4]>();
    let (c1, c2, c3) = (norm(level_color(1)), norm(level_color(2)), norm(level_color(3)));
    let cases: [(&str, [f32; 4], f32); 8] = [
        ("implicit LOD (level 2, nearest)", c2, 0.5 / 255.0),
        ("LOD 1.5, linear between levels", std::array::from_fn(|i| (c1[i] + c2[i]) / 2.0), 2.0 / 255.0),
        ("bilinear at (3.75, 6.25) texels", [13.0 / 255.0, 23.0 / 255.0, 0.0, 1.0], 1.0 / 255.0),
        ("repeat, nearest at texel (10, 20)", [40.0 / 255.0, 80.0 / 255.0, 0.0, 1.0], 0.5 / 255.0),
        ("implicit LOD with bias 1 (level 3)", c3, 0.5 / 255.0),
        ("gradients of 8 texels a pixel (level 3)", c3, 0.5 / 255.0),
        ("clamp to an opaque white border", [1.0; 4], 0.5 / 255.0),
        ("clamp to an opaque white border (v)", [1.0; 4], 0.5 / 255.0),
    ];
    for p in 0..n as usize {
        for (k, (what, want, tol)) in cases.iter().enumerate() {
            let g = got[8 * p + k];
            if g.iter().zip(want).any(|(a, b)| (a - b).abs() > *tol) {
                return Err(format!("pixel ({}, {}): {what}: {g:?}, want {want:?}", p % 16, p / 16));
            }
        }
    }
    Ok(())
}
