//! The draw state record (`abi::gfx::state`): a graphics pipeline's fixed-function state
//! with the command buffer's dynamic state applied, the current attachments and the vertex
//! buffers, resolved when a draw is recorded.
//!
//! Resolution follows Vulkan where the record can say it exactly: a depth or stencil test
//! without an attachment of that aspect always passes (its flags are cleared), integer
//! colour formats never blend, and the scissor is clipped to the render area.

use super::dynamic::DynamicValues;
use super::{PassInstance, VertexBuffer};
use crate::image::{self, ImageView};
use crate::pipeline::graphics::{BlendAttachment, Dyn, FixedState, GraphicsPipeline, Rect, StencilFace, Viewport};
use crate::VkResult;
use vortex_model::abi::format::Aspect;
use vortex_model::abi::gfx::state::{self as rec, attachment as att, flags, stencil, vb};
use vortex_model::abi::{wr_f32, wr_u32, wr_u64};

/// Where one attachment's texels are (the view's level and first layer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AttachmentPlace {
    pub addr: u64,
    pub format: u32,
    pub row_pitch: u32,
    pub stencil_addr: u64,
    pub stencil_pitch: u32,
}

impl AttachmentPlace {
    /// The place of `view`'s base level and first layer.
    pub fn of(view: &ImageView) -> VkResult<AttachmentPlace> {
        let img = &view.image;
        let base = img.address()?;
        let at = |p: Aspect| {
            let s = img.plane_subresource(p, view.base_level, view.base_layer);
            (base + s.offset, s.row_pitch as u32)
        };
        let planes = image::planes(img.format, image::aspects_of(img.format));
        let main = planes.iter().copied().find(|p| *p != Aspect::Stencil);
        let (addr, row_pitch) = main.map_or((0, 0), at);
        let (stencil_addr, stencil_pitch) =
            if planes.contains(&Aspect::Stencil) { at(Aspect::Stencil) } else { (0, 0) };
        Ok(AttachmentPlace { addr, format: view.format.vk, row_pitch, stencil_addr, stencil_pitch })
    }
}

/// The render pass instance as the record sees it.
#[derive(Clone, Debug, Default)]
pub struct Targets {
    pub area: Rect,
    pub size: [u32; 2],
    /// By location; `None`: no attachment there.
    pub colors: Vec<Option<AttachmentPlace>>,
    pub depth_stencil: Option<AttachmentPlace>,
    pub has_depth: bool,
    pub has_stencil: bool,
}

impl Targets {
    pub(crate) fn of(p: &PassInstance) -> VkResult<Targets> {
        let place = |v: &Option<std::sync::Arc<ImageView>>| v.as_deref().map(AttachmentPlace::of).transpose();
        Ok(Targets {
            area: p.area,
            size: p.size,
            colors: p.colors.iter().map(place).collect::<VkResult<_>>()?,
            depth_stencil: place(&p.depth_stencil)?,
            has_depth: p.has_depth,
            has_stencil: p.has_stencil,
        })
    }
}

/// One vertex binding as the record sees it: first byte, bytes available, stride (set by
/// `vkCmdBindVertexBuffers2`, if it was).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VertexPlace {
    pub addr: u64,
    pub size: u64,
    pub stride: Option<u64>,
}

impl VertexPlace {
    pub fn of(b: &VertexBuffer) -> VkResult<VertexPlace> {
        let size = b.size.unwrap_or(b.buffer.size - b.offset);
        Ok(VertexPlace { addr: b.buffer.address_at(b.offset)?, size, stride: b.stride })
    }
}

/// The record of a draw of `p`.
pub fn encode(
    p: &GraphicsPipeline,
    d: &DynamicValues,
    t: &Targets,
    vbs: &[Option<VertexPlace>; rec::MAX_VB],
) -> [u8; rec::BYTES] {
    let mut r = [0u8; rec::BYTES];
    let f = &p.fixed;
    let pick = |dynamic: Dyn| f.dynamic.has(dynamic);
    let topology = if pick(Dyn::PrimitiveTopology) { d.topology } else { f.topology };
    wr_u32(&mut r, rec::TOPOLOGY, topology.as_raw() as u32);
    wr_u32(&mut r, rec::FLAGS, flag_bits(p, d, t));
    let cull = if pick(Dyn::CullMode) { d.cull_mode } else { f.cull_mode };
    wr_u32(&mut r, rec::CULL_MODE, cull.as_raw());
    wr_u32(&mut r, rec::POLYGON_MODE, f.polygon_mode.as_raw() as u32);
    let bias = if pick(Dyn::DepthBias) { d.depth_bias } else { f.depth_bias };
    wr_f32(&mut r, rec::DEPTH_BIAS_CONSTANT, bias.constant);
    wr_f32(&mut r, rec::DEPTH_BIAS_CLAMP, bias.clamp);
    wr_f32(&mut r, rec::DEPTH_BIAS_SLOPE, bias.slope);
    wr_f32(&mut r, rec::LINE_WIDTH, if pick(Dyn::LineWidth) { d.line_width } else { f.line_width });
    encode_viewport(&mut r, f, d, t);
    wr_u32(&mut r, rec::SAMPLES, f.samples.as_raw());
    wr_u32(&mut r, rec::SAMPLE_MASK, f.sample_mask);
    let compare = if pick(Dyn::DepthCompareOp) { d.depth_compare } else { f.depth_compare };
    wr_u32(&mut r, rec::DEPTH_COMPARE, compare.as_raw() as u32);
    let bounds = if pick(Dyn::DepthBounds) { d.depth_bounds } else { f.depth_bounds };
    wr_f32(&mut r, rec::DEPTH_BOUNDS_MIN, bounds[0]);
    wr_f32(&mut r, rec::DEPTH_BOUNDS_MAX, bounds[1]);
    wr_u32(&mut r, rec::VOUT_STRIDE, p.vout_stride);
    wr_u32(&mut r, rec::CLIP_DISTANCES, p.clip_distances);
    for (face, off) in [rec::STENCIL_FRONT, rec::STENCIL_BACK].into_iter().enumerate() {
        encode_stencil(&mut r[off..off + stencil::BYTES], &stencil_face(f, d, face));
    }
    let constants = if pick(Dyn::BlendConstants) { d.blend_constants } else { f.blend_constants };
    for (k, c) in constants.iter().enumerate() {
        wr_f32(&mut r, rec::BLEND_CONSTANTS + 4 * k, *c);
    }
    encode_targets(&mut r, f, t);
    for (k, place) in vbs.iter().enumerate() {
        encode_vertex_binding(&mut r[rec::VB + k * vb::BYTES..][..vb::BYTES], f, k as u32, place.as_ref());
    }
    r
}

fn flag_bits(p: &GraphicsPipeline, d: &DynamicValues, t: &Targets) -> u32 {
    let f = &p.fixed;
    let pick = |dynamic: Dyn, dv: bool, fv: bool| if f.dynamic.has(dynamic) { dv } else { fv };
    let front_face = if f.dynamic.has(Dyn::FrontFace) { d.front_face } else { f.front_face };
    let depth_test = t.has_depth && pick(Dyn::DepthTestEnable, d.depth_test, f.depth_test);
    let bits = [
        (pick(Dyn::PrimitiveRestartEnable, d.primitive_restart, f.primitive_restart), flags::PRIMITIVE_RESTART),
        (pick(Dyn::RasterizerDiscardEnable, d.rasterizer_discard, f.rasterizer_discard), flags::RASTERIZER_DISCARD),
        (f.depth_clamp, flags::DEPTH_CLAMP),
        (pick(Dyn::DepthBiasEnable, d.depth_bias_enable, f.depth_bias_enable), flags::DEPTH_BIAS),
        (depth_test, flags::DEPTH_TEST),
        // Depth writes happen only with the depth test enabled.
        (depth_test && pick(Dyn::DepthWriteEnable, d.depth_write, f.depth_write), flags::DEPTH_WRITE),
        (
            t.has_depth && pick(Dyn::DepthBoundsTestEnable, d.depth_bounds_test, f.depth_bounds_test),
            flags::DEPTH_BOUNDS,
        ),
        (t.has_stencil && pick(Dyn::StencilTestEnable, d.stencil_test, f.stencil_test), flags::STENCIL_TEST),
        (front_face == ash::vk::FrontFace::COUNTER_CLOCKWISE, flags::FRONT_CCW),
        (f.alpha_to_coverage, flags::ALPHA_TO_COVERAGE),
        (f.provoking_last, flags::PROVOKING_LAST),
    ];
    bits.into_iter().filter(|(on, _)| *on).fold(p.fs_flags, |acc, (_, b)| acc | b)
}

/// Viewport 0 and scissor 0 (the device has one of each), the scissor clipped to the render
/// area.
fn encode_viewport(r: &mut [u8], f: &FixedState, d: &DynamicValues, t: &Targets) {
    let dynamic_vp = f.dynamic.has(Dyn::Viewport) || f.dynamic.has(Dyn::ViewportWithCount);
    let dynamic_sc = f.dynamic.has(Dyn::Scissor) || f.dynamic.has(Dyn::ScissorWithCount);
    let vp = if dynamic_vp { d.viewports.first() } else { f.viewports.first() }.copied().unwrap_or_default();
    let Viewport { x, y, width, height, min_depth, max_depth } = vp;
    for (k, v) in [x, y, width, height, min_depth, max_depth].into_iter().enumerate() {
        wr_f32(r, rec::VIEWPORT + 4 * k, v);
    }
    let sc = if dynamic_sc { d.scissors.first() } else { f.scissors.first() }.copied().unwrap_or_default();
    let sc = sc.intersect(&t.area);
    wr_u32(r, rec::SCISSOR, sc.x as u32);
    wr_u32(r, rec::SCISSOR + 4, sc.y as u32);
    wr_u32(r, rec::SCISSOR + 8, sc.width);
    wr_u32(r, rec::SCISSOR + 12, sc.height);
}

/// Face 0 (front) or 1 (back) with the dynamic masks, reference and operations applied.
fn stencil_face(f: &FixedState, d: &DynamicValues, face: usize) -> StencilFace {
    let mut s = f.stencil[face];
    if f.dynamic.has(Dyn::StencilCompareMask) {
        s.compare_mask = d.stencil_compare_mask[face];
    }
    if f.dynamic.has(Dyn::StencilWriteMask) {
        s.write_mask = d.stencil_write_mask[face];
    }
    if f.dynamic.has(Dyn::StencilReference) {
        s.reference = d.stencil_reference[face];
    }
    if f.dynamic.has(Dyn::StencilOp) {
        let o = d.stencil_ops[face];
        (s.fail_op, s.pass_op, s.depth_fail_op, s.compare) = (o.fail, o.pass, o.depth_fail, o.compare);
    }
    s
}

fn encode_stencil(r: &mut [u8], s: &StencilFace) {
    wr_u32(r, stencil::FAIL_OP, s.fail_op.as_raw() as u32);
    wr_u32(r, stencil::PASS_OP, s.pass_op.as_raw() as u32);
    wr_u32(r, stencil::DEPTH_FAIL_OP, s.depth_fail_op.as_raw() as u32);
    wr_u32(r, stencil::COMPARE, s.compare.as_raw() as u32);
    wr_u32(r, stencil::COMPARE_MASK, s.compare_mask);
    wr_u32(r, stencil::WRITE_MASK, s.write_mask);
    wr_u32(r, stencil::REFERENCE, s.reference);
}

fn encode_targets(r: &mut [u8], f: &FixedState, t: &Targets) {
    wr_u32(r, rec::COLOR_COUNT, t.colors.len() as u32);
    wr_u32(r, rec::TARGET_WIDTH, t.size[0]);
    wr_u32(r, rec::TARGET_HEIGHT, t.size[1]);
    if let Some(ds) = &t.depth_stencil {
        encode_place(&mut r[rec::DEPTH..][..att::BYTES], ds);
    }
    for (loc, place) in t.colors.iter().enumerate() {
        let Some(place) = place else { continue };
        let a = &mut r[rec::COLOR + loc * att::BYTES..][..att::BYTES];
        encode_place(a, place);
        let blend = f.blend.get(loc).copied().unwrap_or_default();
        let integer = vortex_model::abi::format::find(place.format).is_some_and(|x| x.is_integer());
        encode_blend(a, &BlendAttachment { enable: blend.enable && !integer, ..blend });
    }
}

fn encode_place(a: &mut [u8], p: &AttachmentPlace) {
    wr_u64(a, att::ADDR, p.addr);
    wr_u32(a, att::FORMAT, p.format);
    wr_u32(a, att::ROW_PITCH, p.row_pitch);
    wr_u64(a, att::STENCIL_ADDR, p.stencil_addr);
    wr_u32(a, att::STENCIL_PITCH, p.stencil_pitch);
}

fn encode_blend(a: &mut [u8], b: &BlendAttachment) {
    wr_u32(a, att::BLEND_ENABLE, b.enable as u32);
    wr_u32(a, att::SRC_COLOR, b.src_color.as_raw() as u32);
    wr_u32(a, att::DST_COLOR, b.dst_color.as_raw() as u32);
    wr_u32(a, att::COLOR_OP, b.color_op.as_raw() as u32);
    wr_u32(a, att::SRC_ALPHA, b.src_alpha.as_raw() as u32);
    wr_u32(a, att::DST_ALPHA, b.dst_alpha.as_raw() as u32);
    wr_u32(a, att::ALPHA_OP, b.alpha_op.as_raw() as u32);
    wr_u32(a, att::WRITE_MASK, b.write_mask.as_raw());
}

/// Binding `k`: the buffer bound there if the pipeline reads the binding, else zeros
/// (address 0: unbound).
fn encode_vertex_binding(r: &mut [u8], f: &FixedState, k: u32, place: Option<&VertexPlace>) {
    let (Some(desc), Some(place)) = (f.bindings.iter().find(|b| b.binding == k), place) else { return };
    let stride = match place.stride {
        Some(s) if f.dynamic.has(Dyn::VertexInputBindingStride) => s as u32,
        _ => desc.stride,
    };
    wr_u64(r, vb::ADDR, place.addr);
    wr_u32(r, vb::STRIDE, stride);
    wr_u32(r, vb::INPUT_RATE, desc.input_rate.as_raw() as u32);
    wr_u32(r, vb::DIVISOR, desc.divisor);
    wr_u64(r, vb::SIZE, place.size);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Memory;
    use crate::pipeline::graphics::{DepthBias, DynamicSet, StencilFace, Targets as Formats, VertexBinding};
    use ash::vk;
    use std::sync::Arc;
    use vortex_model::abi::format;
    use vortex_model::abi::{rd_f32, rd_u32, rd_u64};
    use vortex_model::mem::AddressSpace;

    fn pipeline(fixed: FixedState) -> GraphicsPipeline {
        let space = Arc::new(AddressSpace::new());
        GraphicsPipeline {
            fixed,
            targets: Formats::default(),
            vertex: Memory::allocate(&space, 64).unwrap(),
            fragment: None,
            vout_stride: 96,
            clip_distances: 3,
            fs_flags: flags::FS_DISCARDS,
        }
    }

    fn place(addr: u64, format: u32) -> AttachmentPlace {
        AttachmentPlace { addr, format, row_pitch: 256, stencil_addr: addr + 0x1000, stencil_pitch: 64 }
    }

    fn targets() -> Targets {
        Targets {
            area: Rect { x: 4, y: 2, width: 60, height: 30 },
            size: [64, 32],
            colors: vec![
                Some(place(0x10_0000, format::R8G8B8A8_UNORM)),
                None,
                Some(place(0x20_0000, format::R32_UINT)),
            ],
            depth_stencil: Some(place(0x30_0000, 126)),
            has_depth: true,
            has_stencil: true,
        }
    }

    fn no_vbs() -> [Option<VertexPlace>; rec::MAX_VB] {
        [None; rec::MAX_VB]
    }

    fn fixed() -> FixedState {
        let face = |k: u32| StencilFace {
            fail_op: vk::StencilOp::from_raw(k as i32),
            pass_op: vk::StencilOp::INVERT,
            depth_fail_op: vk::StencilOp::DECREMENT_AND_WRAP,
            compare: vk::CompareOp::LESS_OR_EQUAL,
            compare_mask: 0xF0 + k,
            write_mask: 0x0F + k,
            reference: 7 + k,
        };
        FixedState {
            bindings: vec![
                VertexBinding { binding: 0, stride: 12, input_rate: vk::VertexInputRate::VERTEX, divisor: 1 },
                VertexBinding { binding: 3, stride: 32, input_rate: vk::VertexInputRate::INSTANCE, divisor: 1 },
            ],
            topology: vk::PrimitiveTopology::TRIANGLE_FAN,
            primitive_restart: true,
            viewports: vec![Viewport { x: 1.0, y: 2.0, width: 60.0, height: -30.0, min_depth: 0.25, max_depth: 0.75 }],
            scissors: vec![Rect { x: 0, y: 0, width: 32, height: 100 }],
            depth_clamp: true,
            cull_mode: vk::CullModeFlags::BACK,
            front_face: vk::FrontFace::CLOCKWISE,
            depth_bias_enable: true,
            depth_bias: DepthBias { constant: 1.5, clamp: 0.125, slope: -2.0 },
            line_width: 1.0,
            sample_mask: 0x5,
            depth_test: true,
            depth_write: true,
            depth_compare: vk::CompareOp::GREATER,
            depth_bounds_test: true,
            depth_bounds: [0.1, 0.9],
            stencil_test: true,
            stencil: [face(1), face(2)],
            blend: vec![
                BlendAttachment {
                    enable: true,
                    src_color: vk::BlendFactor::SRC_ALPHA,
                    dst_color: vk::BlendFactor::ONE_MINUS_SRC_ALPHA,
                    color_op: vk::BlendOp::SUBTRACT,
                    src_alpha: vk::BlendFactor::CONSTANT_ALPHA,
                    dst_alpha: vk::BlendFactor::DST_COLOR,
                    alpha_op: vk::BlendOp::MAX,
                    write_mask: vk::ColorComponentFlags::R | vk::ColorComponentFlags::A,
                },
                BlendAttachment::default(),
                BlendAttachment { enable: true, ..Default::default() },
            ],
            blend_constants: [0.5, 0.25, 0.125, 1.0],
            ..Default::default()
        }
    }

    #[test]
    fn static_state_lands_in_its_fields() {
        let vbs = {
            let mut v = no_vbs();
            v[0] = Some(VertexPlace { addr: 0xA000, size: 120, stride: Some(99) });
            v[3] = Some(VertexPlace { addr: 0xB000, size: 64, stride: None });
            v[5] = Some(VertexPlace { addr: 0xC000, size: 64, stride: None });
            v
        };
        let r = encode(&pipeline(fixed()), &DynamicValues::default(), &targets(), &vbs);
        assert_eq!(rd_u32(&r, rec::TOPOLOGY), vk::PrimitiveTopology::TRIANGLE_FAN.as_raw() as u32);
        let want = flags::PRIMITIVE_RESTART
            | flags::DEPTH_CLAMP
            | flags::DEPTH_BIAS
            | flags::DEPTH_TEST
            | flags::DEPTH_WRITE
            | flags::DEPTH_BOUNDS
            | flags::STENCIL_TEST
            | flags::FS_DISCARDS;
        assert_eq!(rd_u32(&r, rec::FLAGS), want, "clockwise front faces: no FRONT_CCW");
        assert_eq!(rd_u32(&r, rec::CULL_MODE), vk::CullModeFlags::BACK.as_raw());
        assert_eq!(rd_u32(&r, rec::POLYGON_MODE), 0);
        let f = |off| rd_f32(&r, off);
        assert_eq!(
            [f(rec::DEPTH_BIAS_CONSTANT), f(rec::DEPTH_BIAS_CLAMP), f(rec::DEPTH_BIAS_SLOPE)],
            [1.5, 0.125, -2.0]
        );
        assert_eq!(f(rec::LINE_WIDTH), 1.0);
        let vp: Vec<f32> = (0..6).map(|k| f(rec::VIEWPORT + 4 * k)).collect();
        assert_eq!(vp, [1.0, 2.0, 60.0, -30.0, 0.25, 0.75]);
        // The scissor (0, 0, 32x100) clipped to the render area (4, 2, 60x30).
        let sc: Vec<u32> = (0..4).map(|k| rd_u32(&r, rec::SCISSOR + 4 * k)).collect();
        assert_eq!(sc, [4, 2, 28, 30]);
        assert_eq!((rd_u32(&r, rec::SAMPLES), rd_u32(&r, rec::SAMPLE_MASK)), (1, 0x5));
        assert_eq!(rd_u32(&r, rec::DEPTH_COMPARE), vk::CompareOp::GREATER.as_raw() as u32);
        assert_eq!([f(rec::DEPTH_BOUNDS_MIN), f(rec::DEPTH_BOUNDS_MAX)], [0.1, 0.9]);
        assert_eq!([rd_u32(&r, rec::VOUT_STRIDE), rd_u32(&r, rec::CLIP_DISTANCES)], [96, 3]);
        for (face, off) in [(1, rec::STENCIL_FRONT), (2, rec::STENCIL_BACK)] {
            let s = |o| rd_u32(&r, off + o);
            assert_eq!(s(stencil::FAIL_OP), face);
            assert_eq!(s(stencil::PASS_OP), vk::StencilOp::INVERT.as_raw() as u32);
            assert_eq!(s(stencil::DEPTH_FAIL_OP), vk::StencilOp::DECREMENT_AND_WRAP.as_raw() as u32);
            assert_eq!(s(stencil::COMPARE), vk::CompareOp::LESS_OR_EQUAL.as_raw() as u32);
            assert_eq!(
                [s(stencil::COMPARE_MASK), s(stencil::WRITE_MASK), s(stencil::REFERENCE)],
                [0xF0 + face, 0x0F + face, 7 + face]
            );
        }
        let bc: Vec<f32> = (0..4).map(|k| f(rec::BLEND_CONSTANTS + 4 * k)).collect();
        assert_eq!(bc, [0.5, 0.25, 0.125, 1.0]);
        assert_eq!(rd_u32(&r, rec::COLOR_COUNT), 3);
        assert_eq!((rd_u32(&r, rec::TARGET_WIDTH), rd_u32(&r, rec::TARGET_HEIGHT)), (64, 32));
        let a = |loc: Option<usize>, o| {
            let base = loc.map_or(rec::DEPTH, |l| rec::COLOR + l * att::BYTES);
            if o == att::ADDR || o == att::STENCIL_ADDR {
                rd_u64(&r, base + o)
            } else {
                rd_u32(&r, base + o) as u64
            }
        };
        assert_eq!([a(None, att::ADDR), a(None, att::FORMAT), a(None, att::ROW_PITCH)], [0x30_0000, 126, 256]);
        assert_eq!([a(None, att::STENCIL_ADDR), a(None, att::STENCIL_PITCH)], [0x30_1000, 64]);
        assert_eq!([a(Some(0), att::ADDR), a(Some(0), att::FORMAT)], [0x10_0000, format::R8G8B8A8_UNORM as u64]);
        assert_eq!(a(Some(0), att::BLEND_ENABLE), 1);
        let blend0: Vec<u64> = [
            att::SRC_COLOR,
            att::DST_COLOR,
            att::COLOR_OP,
            att::SRC_ALPHA,
            att::DST_ALPHA,
            att::ALPHA_OP,
            att::WRITE_MASK,
        ]
        .iter()
        .map(|&o| a(Some(0), o))
        .collect();
        assert_eq!(blend0, [6, 7, 1, 12, 4, 4, 0b1001]);
        assert_eq!(a(Some(1), att::FORMAT), 0, "an unused location has format 0");
        assert_eq!(a(Some(2), att::FORMAT), format::R32_UINT as u64);
        assert_eq!(a(Some(2), att::BLEND_ENABLE), 0, "integer formats never blend");
        assert_eq!(a(Some(2), att::WRITE_MASK), 0xF);
        let v = |k: usize, o| rd_u32(&r, rec::VB + k * vb::BYTES + o);
        assert_eq!(rd_u64(&r, rec::VB + vb::ADDR), 0xA000);
        assert_eq!([v(0, vb::STRIDE), v(0, vb::INPUT_RATE), v(0, vb::DIVISOR)], [12, 0, 1], "static stride wins");
        assert_eq!(rd_u64(&r, rec::VB + vb::SIZE), 120);
        assert_eq!([v(3, vb::STRIDE), v(3, vb::INPUT_RATE)], [32, 1]);
        assert_eq!(rd_u64(&r, rec::VB + 5 * vb::BYTES + vb::ADDR), 0, "a binding the pipeline does not read");
        assert_eq!(rd_u64(&r, rec::VB + vb::BYTES + vb::ADDR), 0, "binding 1 is not bound");
    }

    #[test]
    fn dynamic_state_overrides_only_what_is_declared_dynamic() {
        let d = DynamicValues {
            viewports: vec![Viewport { x: 9.0, y: 8.0, width: 7.0, height: 6.0, min_depth: 0.0, max_depth: 1.0 }],
            scissors: vec![Rect { x: 10, y: 10, width: 5, height: 5 }],
            line_width: 3.0,
            depth_bias: DepthBias { constant: 4.0, clamp: 5.0, slope: 6.0 },
            blend_constants: [1.0; 4],
            depth_bounds: [0.3, 0.4],
            stencil_compare_mask: [0x11, 0x22],
            stencil_write_mask: [0x33, 0x44],
            stencil_reference: [0x55, 0x66],
            cull_mode: vk::CullModeFlags::FRONT_AND_BACK,
            front_face: vk::FrontFace::COUNTER_CLOCKWISE,
            topology: vk::PrimitiveTopology::LINE_STRIP,
            depth_test: true,
            depth_write: false,
            depth_compare: vk::CompareOp::ALWAYS,
            depth_bounds_test: false,
            stencil_test: false,
            stencil_ops: [crate::cmd::graphics::StencilOps {
                fail: vk::StencilOp::ZERO,
                pass: vk::StencilOp::REPLACE,
                depth_fail: vk::StencilOp::INCREMENT_AND_CLAMP,
                compare: vk::CompareOp::EQUAL,
            }; 2],
            rasterizer_discard: true,
            depth_bias_enable: false,
            primitive_restart: false,
        };
        let mut vbs = no_vbs();
        vbs[0] = Some(VertexPlace { addr: 0xA000, size: 120, stride: Some(99) });
        // Nothing dynamic: the dynamic values change nothing.
        let base = encode(&pipeline(fixed()), &d, &targets(), &vbs);
        assert_eq!(base, encode(&pipeline(fixed()), &DynamicValues::default(), &targets(), &vbs));
        let mut set = DynamicSet::default();
        for x in Dyn::ALL {
            set = set.with(x);
        }
        let r = encode(&pipeline(FixedState { dynamic: set, ..fixed() }), &d, &targets(), &vbs);
        assert_eq!(rd_u32(&r, rec::TOPOLOGY), vk::PrimitiveTopology::LINE_STRIP.as_raw() as u32);
        let want =
            flags::RASTERIZER_DISCARD | flags::DEPTH_CLAMP | flags::DEPTH_TEST | flags::FRONT_CCW | flags::FS_DISCARDS;
        assert_eq!(rd_u32(&r, rec::FLAGS), want);
        assert_eq!(rd_u32(&r, rec::CULL_MODE), vk::CullModeFlags::FRONT_AND_BACK.as_raw());
        assert_eq!(rd_f32(&r, rec::LINE_WIDTH), 3.0);
        assert_eq!(rd_f32(&r, rec::DEPTH_BIAS_SLOPE), 6.0);
        assert_eq!(rd_f32(&r, rec::VIEWPORT), 9.0);
        assert_eq!(rd_u32(&r, rec::SCISSOR + 8), 5);
        assert_eq!(rd_f32(&r, rec::BLEND_CONSTANTS + 8), 1.0);
        assert_eq!(rd_f32(&r, rec::DEPTH_BOUNDS_MAX), 0.4);
        assert_eq!(rd_u32(&r, rec::DEPTH_COMPARE), vk::CompareOp::ALWAYS.as_raw() as u32);
        let s = |off, o| rd_u32(&r, off + o);
        assert_eq!(
            [s(rec::STENCIL_BACK, stencil::COMPARE_MASK), s(rec::STENCIL_BACK, stencil::WRITE_MASK)],
            [0x22, 0x44]
        );
        assert_eq!(s(rec::STENCIL_FRONT, stencil::REFERENCE), 0x55);
        assert_eq!(s(rec::STENCIL_FRONT, stencil::PASS_OP), vk::StencilOp::REPLACE.as_raw() as u32);
        assert_eq!(s(rec::STENCIL_BACK, stencil::COMPARE), vk::CompareOp::EQUAL.as_raw() as u32);
        assert_eq!(rd_u32(&r, rec::VB + vb::STRIDE), 99, "vkCmdBindVertexBuffers2's stride");
    }

    #[test]
    fn tests_without_their_attachment_always_pass() {
        let t = Targets { depth_stencil: None, has_depth: false, has_stencil: false, ..targets() };
        let r = encode(&pipeline(fixed()), &DynamicValues::default(), &t, &no_vbs());
        let tests = flags::DEPTH_TEST | flags::DEPTH_WRITE | flags::DEPTH_BOUNDS | flags::STENCIL_TEST;
        assert_eq!(rd_u32(&r, rec::FLAGS) & tests, 0);
        assert_eq!(rd_u32(&r, rec::DEPTH + att::FORMAT), 0);
        // Depth only: the stencil test goes, the depth tests stay.
        let t = Targets { has_stencil: false, ..targets() };
        let r = encode(&pipeline(fixed()), &DynamicValues::default(), &t, &no_vbs());
        assert_eq!(rd_u32(&r, rec::FLAGS) & tests, flags::DEPTH_TEST | flags::DEPTH_WRITE | flags::DEPTH_BOUNDS);
    }
}
