//! Draw commands, vertex and index buffers, and dynamic state (`vkCmdSet*`, Vulkan 1.0 and
//! extended dynamic state 1 and 2). Each translates its arguments for the runtime's command
//! buffer (`vortex_runtime::cmd::graphics`).

use super::command::cmd;
use super::renderpass::rect;
use crate::handle::nd;
use crate::util::slice;
use ash::vk;
use vortex_model::abi::gfx::index_type;
use vortex_runtime::buffer::Buffer;
use vortex_runtime::cmd::graphics::{DrawIndirect, DynamicValues, IndexBuffer, VertexBuffer};
use vortex_runtime::pipeline::graphics::{DepthBias, Viewport};

pub unsafe extern "system" fn cmd_bind_vertex_buffers(
    h: vk::CommandBuffer,
    first: u32,
    count: u32,
    p_buffers: *const vk::Buffer,
    p_offsets: *const u64,
) {
    // SAFETY: forwarded arguments (no sizes or strides).
    unsafe { cmd_bind_vertex_buffers2(h, first, count, p_buffers, p_offsets, std::ptr::null(), std::ptr::null()) }
}

pub unsafe extern "system" fn cmd_bind_vertex_buffers2(
    h: vk::CommandBuffer,
    first: u32,
    count: u32,
    p_buffers: *const vk::Buffer,
    p_offsets: *const u64,
    p_sizes: *const u64,
    p_strides: *const u64,
) {
    cmd("vkCmdBindVertexBuffers", h, |cb| {
        // SAFETY: `count` buffers and offsets, and sizes and strides when not null.
        let (buffers, offsets) = unsafe { (slice(p_buffers, count), slice(p_offsets, count)) };
        let (sizes, strides) = unsafe { (slice(p_sizes, count), slice(p_strides, count)) };
        let mut list = Vec::with_capacity(count as usize);
        for (k, (&b, &offset)) in buffers.iter().zip(offsets).enumerate() {
            list.push(VertexBuffer {
                // SAFETY: a live buffer handle.
                buffer: unsafe { nd::<_, Buffer>(b)? },
                offset,
                size: sizes.get(k).copied().filter(|&s| s != vk::WHOLE_SIZE),
                stride: strides.get(k).copied(),
            });
        }
        cb.bind_vertex_buffers(first, list);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_bind_index_buffer(
    h: vk::CommandBuffer,
    b: vk::Buffer,
    offset: u64,
    ty: vk::IndexType,
) {
    cmd("vkCmdBindIndexBuffer", h, |cb| {
        let index_type = match ty {
            vk::IndexType::UINT16 => index_type::U16,
            vk::IndexType::UINT32 => index_type::U32,
            vk::IndexType::UINT8_EXT => index_type::U8,
            other => {
                tracing::error!("vkCmdBindIndexBuffer: index type {other:?} is not supported");
                return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
            }
        };
        // SAFETY: a live buffer handle.
        cb.bind_index_buffer(IndexBuffer { buffer: unsafe { nd::<_, Buffer>(b)? }, offset, index_type });
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_draw(
    h: vk::CommandBuffer,
    vertices: u32,
    instances: u32,
    first: u32,
    first_inst: u32,
) {
    cmd("vkCmdDraw", h, |cb| {
        cb.draw(vertices, instances, first, first_inst);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_draw_indexed(
    h: vk::CommandBuffer,
    indices: u32,
    instances: u32,
    first_index: u32,
    vertex_offset: i32,
    first_inst: u32,
) {
    cmd("vkCmdDrawIndexed", h, |cb| {
        cb.draw_indexed(indices, instances, first_index, vertex_offset, first_inst);
        Ok(())
    })
}

/// Every indirect draw: `count_buffer` null for the plain forms.
///
/// # Safety
/// Live (or null count) buffer handles.
#[allow(clippy::too_many_arguments)]
unsafe fn indirect(
    name: &str,
    h: vk::CommandBuffer,
    indexed: bool,
    b: vk::Buffer,
    offset: u64,
    count_buffer: vk::Buffer,
    count_offset: u64,
    count: u32,
    stride: u32,
) {
    cmd(name, h, |cb| {
        // SAFETY: live buffer handles.
        let buffer = unsafe { nd::<_, Buffer>(b)? };
        let count_buffer = if count_buffer == vk::Buffer::null() {
            None
        } else {
            Some((unsafe { nd::<_, Buffer>(count_buffer)? }, count_offset))
        };
        cb.draw_indirect(indexed, DrawIndirect { buffer, offset, count, stride, count_buffer });
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_draw_indirect(h: vk::CommandBuffer, b: vk::Buffer, off: u64, n: u32, stride: u32) {
    // SAFETY: forwarded handles.
    unsafe { indirect("vkCmdDrawIndirect", h, false, b, off, vk::Buffer::null(), 0, n, stride) }
}

pub unsafe extern "system" fn cmd_draw_indexed_indirect(
    h: vk::CommandBuffer,
    b: vk::Buffer,
    off: u64,
    n: u32,
    stride: u32,
) {
    // SAFETY: forwarded handles.
    unsafe { indirect("vkCmdDrawIndexedIndirect", h, true, b, off, vk::Buffer::null(), 0, n, stride) }
}

pub unsafe extern "system" fn cmd_draw_indirect_count(
    h: vk::CommandBuffer,
    b: vk::Buffer,
    off: u64,
    cb: vk::Buffer,
    cb_off: u64,
    max: u32,
    stride: u32,
) {
    // SAFETY: forwarded handles.
    unsafe { indirect("vkCmdDrawIndirectCount", h, false, b, off, cb, cb_off, max, stride) }
}

pub unsafe extern "system" fn cmd_draw_indexed_indirect_count(
    h: vk::CommandBuffer,
    b: vk::Buffer,
    off: u64,
    cb: vk::Buffer,
    cb_off: u64,
    max: u32,
    stride: u32,
) {
    // SAFETY: forwarded handles.
    unsafe { indirect("vkCmdDrawIndexedIndirectCount", h, true, b, off, cb, cb_off, max, stride) }
}

/// A `vkCmdSet*`: `f` writes the values it sets.
fn set(name: &str, h: vk::CommandBuffer, f: impl FnOnce(&mut DynamicValues)) {
    cmd(name, h, |cb| {
        cb.set_dynamic(name, f);
        Ok(())
    })
}

fn viewport(v: &vk::Viewport) -> Viewport {
    Viewport { x: v.x, y: v.y, width: v.width, height: v.height, min_depth: v.min_depth, max_depth: v.max_depth }
}

pub unsafe extern "system" fn cmd_set_viewport(h: vk::CommandBuffer, first: u32, n: u32, p: *const vk::Viewport) {
    // SAFETY: `n` viewports.
    let v: Vec<_> = unsafe { slice(p, n) }.iter().map(viewport).collect();
    set("vkCmdSetViewport", h, |d| DynamicValues::set_range(&mut d.viewports, first, &v))
}

pub unsafe extern "system" fn cmd_set_viewport_with_count(h: vk::CommandBuffer, n: u32, p: *const vk::Viewport) {
    // SAFETY: `n` viewports.
    let v: Vec<_> = unsafe { slice(p, n) }.iter().map(viewport).collect();
    set("vkCmdSetViewportWithCount", h, |d| d.viewports = v)
}

pub unsafe extern "system" fn cmd_set_scissor(h: vk::CommandBuffer, first: u32, n: u32, p: *const vk::Rect2D) {
    // SAFETY: `n` rectangles.
    let r: Vec<_> = unsafe { slice(p, n) }.iter().map(|r| rect(*r)).collect();
    set("vkCmdSetScissor", h, |d| DynamicValues::set_range(&mut d.scissors, first, &r))
}

pub unsafe extern "system" fn cmd_set_scissor_with_count(h: vk::CommandBuffer, n: u32, p: *const vk::Rect2D) {
    // SAFETY: `n` rectangles.
    let r: Vec<_> = unsafe { slice(p, n) }.iter().map(|r| rect(*r)).collect();
    set("vkCmdSetScissorWithCount", h, |d| d.scissors = r)
}

pub unsafe extern "system" fn cmd_set_line_width(h: vk::CommandBuffer, w: f32) {
    set("vkCmdSetLineWidth", h, |d| d.line_width = w)
}

pub unsafe extern "system" fn cmd_set_depth_bias(h: vk::CommandBuffer, constant: f32, clamp: f32, slope: f32) {
    set("vkCmdSetDepthBias", h, |d| d.depth_bias = DepthBias { constant, clamp, slope })
}

pub unsafe extern "system" fn cmd_set_blend_constants(h: vk::CommandBuffer, c: *const [f32; 4]) {
    // SAFETY: four floats.
    let c = unsafe { *c };
    set("vkCmdSetBlendConstants", h, |d| d.blend_constants = c)
}

pub unsafe extern "system" fn cmd_set_depth_bounds(h: vk::CommandBuffer, min: f32, max: f32) {
    set("vkCmdSetDepthBounds", h, |d| d.depth_bounds = [min, max])
}

pub unsafe extern "system" fn cmd_set_stencil_compare_mask(h: vk::CommandBuffer, f: vk::StencilFaceFlags, v: u32) {
    set("vkCmdSetStencilCompareMask", h, |d| DynamicValues::faces(f).for_each(|k| d.stencil_compare_mask[k] = v))
}

pub unsafe extern "system" fn cmd_set_stencil_write_mask(h: vk::CommandBuffer, f: vk::StencilFaceFlags, v: u32) {
    set("vkCmdSetStencilWriteMask", h, |d| DynamicValues::faces(f).for_each(|k| d.stencil_write_mask[k] = v))
}

pub unsafe extern "system" fn cmd_set_stencil_reference(h: vk::CommandBuffer, f: vk::StencilFaceFlags, v: u32) {
    set("vkCmdSetStencilReference", h, |d| DynamicValues::faces(f).for_each(|k| d.stencil_reference[k] = v))
}

pub unsafe extern "system" fn cmd_set_cull_mode(h: vk::CommandBuffer, m: vk::CullModeFlags) {
    set("vkCmdSetCullMode", h, |d| d.cull_mode = m)
}

pub unsafe extern "system" fn cmd_set_front_face(h: vk::CommandBuffer, f: vk::FrontFace) {
    set("vkCmdSetFrontFace", h, |d| d.front_face = f)
}

pub unsafe extern "system" fn cmd_set_primitive_topology(h: vk::CommandBuffer, t: vk::PrimitiveTopology) {
    set("vkCmdSetPrimitiveTopology", h, |d| d.topology = t)
}

pub unsafe extern "system" fn cmd_set_depth_test_enable(h: vk::CommandBuffer, on: vk::Bool32) {
    set("vkCmdSetDepthTestEnable", h, |d| d.depth_test = on != 0)
}

pub unsafe extern "system" fn cmd_set_depth_write_enable(h: vk::CommandBuffer, on: vk::Bool32) {
    set("vkCmdSetDepthWriteEnable", h, |d| d.depth_write = on != 0)
}

pub unsafe extern "system" fn cmd_set_depth_compare_op(h: vk::CommandBuffer, op: vk::CompareOp) {
    set("vkCmdSetDepthCompareOp", h, |d| d.depth_compare = op)
}

pub unsafe extern "system" fn cmd_set_depth_bounds_test_enable(h: vk::CommandBuffer, on: vk::Bool32) {
    set("vkCmdSetDepthBoundsTestEnable", h, |d| d.depth_bounds_test = on != 0)
}

pub unsafe extern "system" fn cmd_set_stencil_test_enable(h: vk::CommandBuffer, on: vk::Bool32) {
    set("vkCmdSetStencilTestEnable", h, |d| d.stencil_test = on != 0)
}

pub unsafe extern "system" fn cmd_set_stencil_op(
    h: vk::CommandBuffer,
    f: vk::StencilFaceFlags,
    fail: vk::StencilOp,
    pass: vk::StencilOp,
    depth_fail: vk::StencilOp,
    compare: vk::CompareOp,
) {
    let ops = vortex_runtime::cmd::graphics::StencilOps { fail, pass, depth_fail, compare };
    set("vkCmdSetStencilOp", h, |d| DynamicValues::faces(f).for_each(|k| d.stencil_ops[k] = ops))
}

pub unsafe extern "system" fn cmd_set_rasterizer_discard_enable(h: vk::CommandBuffer, on: vk::Bool32) {
    set("vkCmdSetRasterizerDiscardEnable", h, |d| d.rasterizer_discard = on != 0)
}

pub unsafe extern "system" fn cmd_set_depth_bias_enable(h: vk::CommandBuffer, on: vk::Bool32) {
    set("vkCmdSetDepthBiasEnable", h, |d| d.depth_bias_enable = on != 0)
}

pub unsafe extern "system" fn cmd_set_primitive_restart_enable(h: vk::CommandBuffer, on: vk::Bool32) {
    set("vkCmdSetPrimitiveRestartEnable", h, |d| d.primitive_restart = on != 0)
}
