//! Every blend factor (as the source factor with a ZERO destination, as the destination
//! factor with a ZERO source) and every blend op, one pixel each, against the blend
//! equations solved on the host.

use crate::{err, push, rect_tris, vertices, COUNTING};
use ash::vk;
use vortex_examples::raster::{GraphicsDesc, GraphicsPipeline, Target};
use vortex_examples::{Buffer, Context};

use vk::BlendFactor as F;

const FACTORS: [F; 15] = [
    F::ZERO,
    F::ONE,
    F::SRC_COLOR,
    F::ONE_MINUS_SRC_COLOR,
    F::DST_COLOR,
    F::ONE_MINUS_DST_COLOR,
    F::SRC_ALPHA,
    F::ONE_MINUS_SRC_ALPHA,
    F::DST_ALPHA,
    F::ONE_MINUS_DST_ALPHA,
    F::CONSTANT_COLOR,
    F::ONE_MINUS_CONSTANT_COLOR,
    F::CONSTANT_ALPHA,
    F::ONE_MINUS_CONSTANT_ALPHA,
    F::SRC_ALPHA_SATURATE,
];

const OPS: [vk::BlendOp; 5] =
    [vk::BlendOp::ADD, vk::BlendOp::SUBTRACT, vk::BlendOp::REVERSE_SUBTRACT, vk::BlendOp::MIN, vk::BlendOp::MAX];

// Exactly representable in 8-bit unorm, so the stored destination is exact.
const SRC: [u32; 4] = [204, 102, 51, 153];
const DST: [u32; 4] = [77, 128, 179, 102];
const CONST: [u32; 4] = [64, 128, 191, 230];

fn unorm(v: [u32; 4]) -> [f64; 4] {
    v.map(|c| c as f64 / 255.0)
}

/// The factor's value for component `c` (alpha uses the factor's alpha form).
fn factor(f: F, c: usize, s: [f64; 4], d: [f64; 4], k: [f64; 4]) -> f64 {
    match f {
        F::ZERO => 0.0,
        F::ONE => 1.0,
        F::SRC_COLOR => s[c],
        F::ONE_MINUS_SRC_COLOR => 1.0 - s[c],
        F::DST_COLOR => d[c],
        F::ONE_MINUS_DST_COLOR => 1.0 - d[c],
        F::SRC_ALPHA => s[3],
        F::ONE_MINUS_SRC_ALPHA => 1.0 - s[3],
        F::DST_ALPHA => d[3],
        F::ONE_MINUS_DST_ALPHA => 1.0 - d[3],
        F::CONSTANT_COLOR => k[c],
        F::ONE_MINUS_CONSTANT_COLOR => 1.0 - k[c],
        F::CONSTANT_ALPHA => k[3],
        F::ONE_MINUS_CONSTANT_ALPHA => 1.0 - k[3],
        _ if c == 3 => 1.0,
        _ => s[3].min(1.0 - d[3]),
    }
}

fn expected(sf: F, df: F, op: vk::BlendOp) -> [u8; 4] {
    let (s, d, k) = (unorm(SRC), unorm(DST), unorm(CONST));
    std::array::from_fn(|c| {
        let (a, b) = (s[c] * factor(sf, c, s, d, k), d[c] * factor(df, c, s, d, k));
        let v = match op {
            vk::BlendOp::ADD => a + b,
            vk::BlendOp::SUBTRACT => a - b,
            vk::BlendOp::REVERSE_SUBTRACT => b - a,
            vk::BlendOp::MIN => s[c].min(d[c]),
            _ => s[c].max(d[c]),
        };
        (v.clamp(0.0, 1.0) * 255.0).round() as u8
    })
}

pub fn every_factor_and_op(ctx: &Context) -> Result<String, String> {
    let mut configs: Vec<(F, F, vk::BlendOp)> = FACTORS.iter().map(|&f| (f, F::ZERO, vk::BlendOp::ADD)).collect();
    configs.extend(FACTORS.iter().map(|&f| (F::ZERO, f, vk::BlendOp::ADD)));
    configs.extend(OPS.iter().map(|&op| (F::SRC_ALPHA, F::ONE_MINUS_SRC_ALPHA, op)));
    let size = [configs.len() as u32, 1];
    let target = Target::new(ctx, size, &[vk::Format::R8G8B8A8_UNORM], None).map_err(err)?;
    let counts = Buffer::new(ctx, size[0] as u64 * 4, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    let pipes = configs
        .iter()
        .map(|&(sf, df, op)| {
            let blend = vk::PipelineColorBlendAttachmentState {
                blend_enable: vk::TRUE,
                src_color_blend_factor: sf,
                dst_color_blend_factor: df,
                color_blend_op: op,
                src_alpha_blend_factor: sf,
                dst_alpha_blend_factor: df,
                alpha_blend_op: op,
                color_write_mask: vk::ColorComponentFlags::RGBA,
            };
            let desc = GraphicsDesc { blend: Some(blend), ..COUNTING };
            let p = GraphicsPipeline::new(ctx, &target, &desc).map_err(err)?;
            p.bind_storage_buffer(0, &counts);
            Ok(p)
        })
        .collect::<Result<Vec<_>, String>>()?;
    let vb = vertices(ctx, &rect_tris([0.0, 0.0, size[0] as f32, 1.0], 0.5, size))?;
    let s = unorm(SRC).map(|v| v as f32);
    let dst = unorm(DST).map(|v| v as f32);
    let dev = ctx.device();
    ctx.submit_once(|cmd| {
        target.begin(cmd, vk::ClearColorValue { float32: dst }, 1.0, 0);
        for (x, p) in pipes.iter().enumerate() {
            p.bind(ctx, cmd, &push(s, [0.0; 4], size), &[&vb]);
            let one =
                vk::Rect2D { offset: vk::Offset2D { x: x as i32, y: 0 }, extent: vk::Extent2D { width: 1, height: 1 } };
            // SAFETY: recording inside the target's render pass.
            unsafe {
                dev.cmd_set_blend_constants(cmd, &unorm(CONST).map(|v| v as f32));
                dev.cmd_set_scissor(cmd, 0, &[one]);
                dev.cmd_draw(cmd, 6, 1, 0, 0);
            }
        }
        target.end(cmd);
    })
    .map_err(err)?;
    let got = target.color[0].read(ctx, vk::ImageAspectFlags::COLOR).map_err(err)?;
    for (x, &(sf, df, op)) in configs.iter().enumerate() {
        let want = expected(sf, df, op);
        let px = &got[4 * x..4 * x + 4];
        if px.iter().zip(want).any(|(a, b)| a.abs_diff(b) > 1) {
            return Err(format!("src {sf:?} dst {df:?} op {op:?}: {px:?}, want {want:?} (within 1)"));
        }
    }
    Ok(format!("{} factors, {} ops", FACTORS.len(), OPS.len()))
}
