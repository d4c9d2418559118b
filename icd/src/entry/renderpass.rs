//! Render passes (1 and 2), framebuffers (with and without images), and the commands of a
//! render pass instance: begin/next/end (1 and 2), dynamic rendering, clear attachments.
//! Each translates Vulkan's structures into the runtime's (`vortex_runtime::renderpass`,
//! `vortex_runtime::cmd::graphics`).

use super::command::cmd;
use super::device::device;
use crate::handle::{guard_device_result, guard_device_void, nd, nd_destroy, nd_new, nd_opt};
use crate::util::{find_in, slice};
use ash::vk;
use std::sync::Arc;
use vortex_runtime::cmd::graphics::{ClearAttachment, ClearRect, ClearValue, RenderingAttachment, RenderingInfo};
use vortex_runtime::image::ImageView;
use vortex_runtime::pipeline::graphics::Rect;
use vortex_runtime::renderpass::{AttachmentDesc, Framebuffer, RenderPass, SubpassDesc};

pub fn rect(r: vk::Rect2D) -> Rect {
    Rect { x: r.offset.x, y: r.offset.y, width: r.extent.width, height: r.extent.height }
}

/// The raw words of a `VkClearValue`.
pub fn clear_value(v: &vk::ClearValue) -> ClearValue {
    // SAFETY: every member of the union is four 32-bit words (or fewer) at offset 0.
    ClearValue(unsafe { v.color.uint32 })
}

/// The attachment indices of a reference array (1 and 2 share the `attachment` field).
///
/// # Safety
/// `p` must hold `n` references.
unsafe fn refs<T>(p: *const T, n: u32, index: impl Fn(&T) -> u32) -> Vec<u32> {
    // SAFETY: per the contract.
    unsafe { slice(p, n) }.iter().map(index).collect()
}

pub unsafe extern "system" fn create_render_pass(
    d: vk::Device,
    p_info: *const vk::RenderPassCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_pass: *mut vk::RenderPass,
) -> vk::Result {
    guard_device_result("vkCreateRenderPass", d, || {
        device(d)?;
        // SAFETY: valid create info and its arrays.
        let info = unsafe { &*p_info };
        let attachments = unsafe { slice(info.p_attachments, info.attachment_count) }
            .iter()
            .map(|a| AttachmentDesc {
                format: a.format,
                samples: a.samples,
                load_op: a.load_op,
                store_op: a.store_op,
                stencil_load_op: a.stencil_load_op,
                stencil_store_op: a.stencil_store_op,
            })
            .collect();
        // SAFETY: the multiview info of the chain, if any.
        let multiview = unsafe {
            find_in::<vk::RenderPassMultiviewCreateInfo>(
                info.p_next,
                vk::StructureType::RENDER_PASS_MULTIVIEW_CREATE_INFO,
            )
        };
        let masks = multiview.map_or(&[][..], |m| unsafe { slice(m.p_view_masks, m.subpass_count) });
        let mut subpasses = Vec::new();
        for (k, s) in unsafe { slice(info.p_subpasses, info.subpass_count) }.iter().enumerate() {
            let at = |r: &vk::AttachmentReference| r.attachment;
            // SAFETY: the subpass's reference arrays.
            subpasses.push(SubpassDesc {
                colors: unsafe { refs(s.p_color_attachments, s.color_attachment_count, at) },
                resolves: unsafe { refs(s.p_resolve_attachments, s.color_attachment_count, at) },
                depth_stencil: (!s.p_depth_stencil_attachment.is_null())
                    .then(|| unsafe { (*s.p_depth_stencil_attachment).attachment }),
                inputs: unsafe { refs(s.p_input_attachments, s.input_attachment_count, at) },
                view_mask: masks.get(k).copied().unwrap_or(0),
            });
        }
        let pass = RenderPass::new(attachments, subpasses)?;
        // SAFETY: valid output pointer.
        unsafe { *p_pass = nd_new(Arc::new(pass)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn create_render_pass2(
    d: vk::Device,
    p_info: *const vk::RenderPassCreateInfo2<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_pass: *mut vk::RenderPass,
) -> vk::Result {
    guard_device_result("vkCreateRenderPass2", d, || {
        device(d)?;
        // SAFETY: valid create info and its arrays.
        let info = unsafe { &*p_info };
        let attachments = unsafe { slice(info.p_attachments, info.attachment_count) }
            .iter()
            .map(|a| AttachmentDesc {
                format: a.format,
                samples: a.samples,
                load_op: a.load_op,
                store_op: a.store_op,
                stencil_load_op: a.stencil_load_op,
                stencil_store_op: a.stencil_store_op,
            })
            .collect();
        let mut subpasses = Vec::new();
        for s in unsafe { slice(info.p_subpasses, info.subpass_count) } {
            let at = |r: &vk::AttachmentReference2| r.attachment;
            // SAFETY: the subpass's depth/stencil resolve, if chained.
            let ds_resolve = unsafe {
                find_in::<vk::SubpassDescriptionDepthStencilResolve>(
                    s.p_next,
                    vk::StructureType::SUBPASS_DESCRIPTION_DEPTH_STENCIL_RESOLVE,
                )
            };
            // SAFETY: the subpass's reference arrays.
            let mut resolves = unsafe { refs(s.p_resolve_attachments, s.color_attachment_count, at) };
            if let Some(r) = ds_resolve.filter(|r| !r.p_depth_stencil_resolve_attachment.is_null()) {
                // A depth/stencil resolve is a resolve like a colour one.
                resolves.push(unsafe { (*r.p_depth_stencil_resolve_attachment).attachment });
            }
            subpasses.push(SubpassDesc {
                colors: unsafe { refs(s.p_color_attachments, s.color_attachment_count, at) },
                resolves,
                depth_stencil: (!s.p_depth_stencil_attachment.is_null())
                    .then(|| unsafe { (*s.p_depth_stencil_attachment).attachment }),
                inputs: unsafe { refs(s.p_input_attachments, s.input_attachment_count, at) },
                view_mask: s.view_mask,
            });
        }
        let pass = RenderPass::new(attachments, subpasses)?;
        // SAFETY: valid output pointer.
        unsafe { *p_pass = nd_new(Arc::new(pass)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_render_pass(
    d: vk::Device,
    p: vk::RenderPass,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live render pass handle or null.
    guard_device_void("vkDestroyRenderPass", d, || unsafe { nd_destroy::<_, RenderPass>(p) })
}

pub unsafe extern "system" fn get_render_area_granularity(d: vk::Device, _p: vk::RenderPass, out: *mut vk::Extent2D) {
    // SAFETY: valid output pointer. Any render area is as fast as another here.
    guard_device_void("vkGetRenderAreaGranularity", d, || unsafe { *out = vk::Extent2D { width: 1, height: 1 } })
}

/// Live views from an array of handles.
///
/// # Safety
/// `p` must hold `n` live view handles.
unsafe fn views(p: *const vk::ImageView, n: u32) -> Result<Vec<Arc<ImageView>>, vk::Result> {
    // SAFETY: per the contract.
    unsafe { slice(p, n) }.iter().map(|&v| unsafe { nd::<_, ImageView>(v) }).collect()
}

pub unsafe extern "system" fn create_framebuffer(
    d: vk::Device,
    p_info: *const vk::FramebufferCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_fb: *mut vk::Framebuffer,
) -> vk::Result {
    guard_device_result("vkCreateFramebuffer", d, || {
        device(d)?;
        // SAFETY: valid create info with a live render pass.
        let i = unsafe { &*p_info };
        let pass = unsafe { nd::<_, RenderPass>(i.render_pass)? };
        let (count, list) = if i.flags.contains(vk::FramebufferCreateFlags::IMAGELESS) {
            // SAFETY: the attachments info of an imageless framebuffer.
            let info = unsafe {
                find_in::<vk::FramebufferAttachmentsCreateInfo>(
                    i.p_next,
                    vk::StructureType::FRAMEBUFFER_ATTACHMENTS_CREATE_INFO,
                )
            };
            (info.map_or(i.attachment_count, |a| a.attachment_image_info_count), None)
        } else {
            // SAFETY: the framebuffer's views.
            (i.attachment_count, Some(unsafe { views(i.p_attachments, i.attachment_count)? }))
        };
        let fb = Framebuffer::new(&pass, i.width, i.height, i.layers, count, list)?;
        // SAFETY: valid output pointer.
        unsafe { *p_fb = nd_new(Arc::new(fb)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_framebuffer(
    d: vk::Device,
    f: vk::Framebuffer,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live framebuffer handle or null.
    guard_device_void("vkDestroyFramebuffer", d, || unsafe { nd_destroy::<_, Framebuffer>(f) })
}

pub unsafe extern "system" fn cmd_begin_render_pass(
    h: vk::CommandBuffer,
    p_info: *const vk::RenderPassBeginInfo<'_>,
    _contents: vk::SubpassContents,
) {
    cmd("vkCmdBeginRenderPass", h, |cb| {
        // SAFETY: valid begin info with live handles.
        let i = unsafe { &*p_info };
        let pass = unsafe { nd::<_, RenderPass>(i.render_pass)? };
        let fb = unsafe { nd::<_, Framebuffer>(i.framebuffer)? };
        // SAFETY: an imageless framebuffer's views, if chained.
        let begin_views = unsafe {
            find_in::<vk::RenderPassAttachmentBeginInfo>(i.p_next, vk::StructureType::RENDER_PASS_ATTACHMENT_BEGIN_INFO)
        };
        let list = match begin_views {
            Some(b) if fb.views.is_none() => Some(unsafe { views(b.p_attachments, b.attachment_count)? }),
            _ => None,
        };
        let clears = unsafe { slice(i.p_clear_values, i.clear_value_count) }.iter().map(clear_value).collect();
        cb.begin_render_pass(pass, fb, list, rect(i.render_area), clears);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_begin_render_pass2(
    h: vk::CommandBuffer,
    p_info: *const vk::RenderPassBeginInfo<'_>,
    _sp: *const vk::SubpassBeginInfo<'_>,
) {
    // SAFETY: forwarded arguments.
    unsafe { cmd_begin_render_pass(h, p_info, vk::SubpassContents::INLINE) }
}

pub unsafe extern "system" fn cmd_next_subpass(h: vk::CommandBuffer, _contents: vk::SubpassContents) {
    cmd("vkCmdNextSubpass", h, |cb| {
        cb.next_subpass();
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_next_subpass2(
    h: vk::CommandBuffer,
    _b: *const vk::SubpassBeginInfo<'_>,
    _e: *const vk::SubpassEndInfo<'_>,
) {
    // SAFETY: forwarded arguments.
    unsafe { cmd_next_subpass(h, vk::SubpassContents::INLINE) }
}

pub unsafe extern "system" fn cmd_end_render_pass(h: vk::CommandBuffer) {
    cmd("vkCmdEndRenderPass", h, |cb| {
        cb.end_render_pass();
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_end_render_pass2(h: vk::CommandBuffer, _e: *const vk::SubpassEndInfo<'_>) {
    // SAFETY: forwarded arguments.
    unsafe { cmd_end_render_pass(h) }
}

/// One `VkRenderingAttachmentInfo`.
///
/// # Safety
/// The view must be live or null.
unsafe fn rendering_attachment(a: &vk::RenderingAttachmentInfo<'_>) -> RenderingAttachment {
    RenderingAttachment {
        // SAFETY: a live view or null.
        view: unsafe { nd_opt::<_, ImageView>(a.image_view) },
        load_op: a.load_op,
        clear: clear_value(&a.clear_value),
    }
}

pub unsafe extern "system" fn cmd_begin_rendering(h: vk::CommandBuffer, p_info: *const vk::RenderingInfo<'_>) {
    cmd("vkCmdBeginRendering", h, |cb| {
        // SAFETY: valid rendering info and its attachment infos.
        let i = unsafe { &*p_info };
        let colors = unsafe { slice(i.p_color_attachments, i.color_attachment_count) }
            .iter()
            .map(|a| unsafe { rendering_attachment(a) })
            .collect();
        cb.begin_rendering(RenderingInfo {
            area: rect(i.render_area),
            layers: i.layer_count,
            view_mask: i.view_mask,
            colors,
            depth: unsafe { i.p_depth_attachment.as_ref() }.map(|a| unsafe { rendering_attachment(a) }),
            stencil: unsafe { i.p_stencil_attachment.as_ref() }.map(|a| unsafe { rendering_attachment(a) }),
            resuming: i.flags.contains(vk::RenderingFlags::RESUMING),
        });
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_end_rendering(h: vk::CommandBuffer) {
    cmd("vkCmdEndRendering", h, |cb| {
        cb.end_rendering();
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_clear_attachments(
    h: vk::CommandBuffer,
    n: u32,
    p_attachments: *const vk::ClearAttachment,
    r: u32,
    p_rects: *const vk::ClearRect,
) {
    cmd("vkCmdClearAttachments", h, |cb| {
        // SAFETY: the attachment and rectangle arrays.
        let attachments: Vec<_> = unsafe { slice(p_attachments, n) }
            .iter()
            .map(|a| ClearAttachment {
                aspect: a.aspect_mask,
                color_attachment: a.color_attachment,
                value: clear_value(&a.clear_value),
            })
            .collect();
        let rects: Vec<_> = unsafe { slice(p_rects, r) }
            .iter()
            .map(|c| ClearRect { rect: rect(c.rect), base_layer: c.base_array_layer, layer_count: c.layer_count })
            .collect();
        cb.clear_attachments(&attachments, &rects);
        Ok(())
    })
}
