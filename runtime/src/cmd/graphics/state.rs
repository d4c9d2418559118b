//! The draw state record (`abi::gfx::state`): a graphics pipeline's fixed-function state
//! with the command buffer's dynamic state applied, the current attachments and the vertex
//! buffers, resolved when a draw is recorded.
//!
//! Resolution follows Vulkan where the record can say it exactly: a depth or stencil test
//! without an attachment of that aspect always passes (its flags are cleared), integer
//! colour formats never blend, and the scissor is clipped to the render area.

use super::dynamic::DynamicValues;
use super::{PassInstance, VertexBuffer};
use crate::image::{self, ImageView, Plane};
use crate::pipeline::graphics::{BlendAttachment, Dyn, FixedState, GraphicsPipeline, Rect, StencilFace, Viewport};
use crate::VkResult;
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
        let at = |p: Plane| {
            let s = img.plane_subresource(p, view.base_level, view.base_layer);
            (base + s.offset, s.row_pitch as u32)
        };
        let planes = image::planes(img.vk_format, ash::vk::ImageAspectFlags::from_raw(!0));
        let main = planes.iter().copied().find(|p| *p != Plane::Stencil);
        let (addr, row_pitch) = main.map_or((0, 0), at);
        let (stencil_addr, stencil_pitch) = if planes.contains(&Plane::Stencil) { at(Plane::Stencil) } else { (0, 0) };
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
        let integer = vortex_model::abi::format::lookup(place.format).is_some_and(|x| x.is_integer());
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
