//! Render pass instances: `vkCmdBeginRenderPass`/`NextSubpass`/`EndRenderPass`,
//! `vkCmdBeginRendering`/`EndRendering`, and the clears they and `vkCmdClearAttachments` do.
//!
//! A `CLEAR` load happens in the first subpass that uses the attachment, over the render
//! area of every layer of the instance; a clear is a pattern write of the clear value's texel
//! (in the attachment's format) over each row of the rectangle. Stores need nothing: the
//! device rendered into the attachment itself.

use super::{ClearValue, PassInstance, Source};
use crate::cmd::{CommandBuffer, Inner};
use crate::image::{self, ImageView};
use crate::pipeline::graphics::Rect;
use crate::renderpass::{check_views, Framebuffer, RenderPass};
use crate::stream::StreamOp;
use crate::{vk, VkResult};
use std::sync::Arc;

/// One attachment of `VkRenderingInfo`.
#[derive(Clone)]
pub struct RenderingAttachment {
    pub view: Option<Arc<ImageView>>,
    pub load_op: vk::AttachmentLoadOp,
    pub clear: ClearValue,
}

/// `VkRenderingInfo`.
#[derive(Clone)]
pub struct RenderingInfo {
    pub area: Rect,
    pub layers: u32,
    pub view_mask: u32,
    pub colors: Vec<RenderingAttachment>,
    pub depth: Option<RenderingAttachment>,
    pub stencil: Option<RenderingAttachment>,
    /// `VK_RENDERING_RESUMING_BIT`: the instance continues a suspended one (no loads).
    pub resuming: bool,
}

/// `VkClearAttachment`: which attachment of the current subpass, which aspects, the value.
#[derive(Clone, Copy, Debug)]
pub struct ClearAttachment {
    pub aspect: vk::ImageAspectFlags,
    pub color_attachment: u32,
    pub value: ClearValue,
}

/// `VkClearRect`: layers relative to the attachment view's first.
#[derive(Clone, Copy, Debug)]
pub struct ClearRect {
    pub rect: Rect,
    pub base_layer: u32,
    pub layer_count: u32,
}

fn no_instance(what: &str) -> vk::Result {
    tracing::error!("{what} outside a render pass instance");
    vk::Result::ERROR_UNKNOWN
}

impl CommandBuffer {
    /// `views`: the begin's attachments for an imageless framebuffer.
    pub fn begin_render_pass(
        &self,
        pass: Arc<RenderPass>,
        fb: Arc<Framebuffer>,
        views: Option<Vec<Arc<ImageView>>>,
        area: Rect,
        clears: Vec<ClearValue>,
    ) {
        self.record("vkCmdBeginRenderPass", |i, _| {
            if i.gfx.pass.is_some() {
                tracing::error!("vkCmdBeginRenderPass inside a render pass instance");
                return Err(vk::Result::ERROR_UNKNOWN);
            }
            let views = match (views, &fb.views) {
                (Some(v), _) => v,
                (None, Some(v)) => v.clone(),
                (None, None) => {
                    tracing::error!("vkCmdBeginRenderPass: an imageless framebuffer needs the begin's attachments");
                    return Err(vk::Result::ERROR_UNKNOWN);
                }
            };
            check_views(&pass, &views, [fb.width, fb.height])?;
            for v in &views {
                i.keep(v.clone());
            }
            i.keep(pass.clone());
            i.keep(fb.clone());
            let size = [fb.width, fb.height];
            let source = Source::Pass { pass, views, subpass: 0, clears };
            i.gfx.pass = Some(PassInstance {
                source,
                area,
                layers: fb.layers,
                size,
                colors: vec![],
                depth_stencil: None,
                has_depth: false,
                has_stencil: false,
            });
            enter_subpass(i)
        });
    }

    pub fn next_subpass(&self) {
        self.record("vkCmdNextSubpass", |i, _| {
            let p = i.gfx.pass.as_mut().ok_or_else(|| no_instance("vkCmdNextSubpass"))?;
            match &mut p.source {
                Source::Pass { pass, subpass, .. } if (*subpass as usize) + 1 < pass.subpasses.len() => *subpass += 1,
                _ => {
                    tracing::error!("vkCmdNextSubpass past the last subpass (or in dynamic rendering)");
                    return Err(vk::Result::ERROR_UNKNOWN);
                }
            }
            enter_subpass(i)
        });
    }

    pub fn end_render_pass(&self) {
        self.record("vkCmdEndRenderPass", |i, _| match i.gfx.pass.take() {
            Some(PassInstance { source: Source::Pass { .. }, .. }) => Ok(()),
            _ => Err(no_instance("vkCmdEndRenderPass")),
        });
    }

    pub fn begin_rendering(&self, info: RenderingInfo) {
        self.record("vkCmdBeginRendering", |i, _| {
            if i.gfx.pass.is_some() {
                tracing::error!("vkCmdBeginRendering inside a render pass instance");
                return Err(vk::Result::ERROR_UNKNOWN);
            }
            if info.view_mask != 0 {
                tracing::error!("vkCmdBeginRendering: multiview is not supported");
                return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
            }
            begin_dynamic(i, info)
        });
    }

    pub fn end_rendering(&self) {
        self.record("vkCmdEndRendering", |i, _| match i.gfx.pass.take() {
            Some(PassInstance { source: Source::Dynamic, .. }) => Ok(()),
            _ => Err(no_instance("vkCmdEndRendering")),
        });
    }

    /// `vkCmdClearAttachments`: each rectangle of each named attachment of the current
    /// subpass (attachments the subpass does not have are skipped, as Vulkan has it).
    pub fn clear_attachments(&self, attachments: &[ClearAttachment], rects: &[ClearRect]) {
        self.record("vkCmdClearAttachments", |i, _| {
            let p = i.gfx.pass.as_ref().ok_or_else(|| no_instance("vkCmdClearAttachments"))?;
            let mut ops = Vec::new();
            for a in attachments {
                let view = if a.aspect.contains(vk::ImageAspectFlags::COLOR) {
                    p.colors.get(a.color_attachment as usize).cloned().flatten()
                } else {
                    p.depth_stencil.clone()
                };
                let Some(view) = view else { continue };
                let aspect = a.aspect & present_aspects(p, &view);
                for r in rects {
                    clear_view(&mut ops, &view, aspect, a.value, r.rect, r.base_layer, r.layer_count)?;
                }
            }
            i.rec.ops.extend(ops);
            Ok(())
        });
    }
}

/// The aspects of `view` the instance renders (colour, or the subpass's depth/stencil ones).
fn present_aspects(p: &PassInstance, view: &ImageView) -> vk::ImageAspectFlags {
    let all = image::aspects(view.image.vk_format);
    if all.contains(vk::ImageAspectFlags::COLOR) {
        return all;
    }
    let mut a = vk::ImageAspectFlags::empty();
    if p.has_depth {
        a |= vk::ImageAspectFlags::DEPTH;
    }
    if p.has_stencil {
        a |= vk::ImageAspectFlags::STENCIL;
    }
    a & all
}

/// Makes the current subpass's attachments the instance's, and clears those it uses first
/// with a `CLEAR` load.
fn enter_subpass(i: &mut Inner) -> VkResult<()> {
    let p = i.gfx.pass.as_mut().expect("a render pass instance");
    let Source::Pass { pass, views, subpass, clears } = &p.source else { unreachable!("entered from a render pass") };
    let sp = &pass.subpasses[*subpass as usize];
    p.colors = sp.colors.iter().map(|&a| (a != vk::ATTACHMENT_UNUSED).then(|| views[a as usize].clone())).collect();
    let ds = sp.depth_stencil.filter(|&a| a != vk::ATTACHMENT_UNUSED);
    p.depth_stencil = ds.map(|a| views[a as usize].clone());
    let aspects = ds.map_or(vk::ImageAspectFlags::empty(), |a| image::aspects(pass.attachments[a as usize].format));
    p.has_depth = aspects.contains(vk::ImageAspectFlags::DEPTH);
    p.has_stencil = aspects.contains(vk::ImageAspectFlags::STENCIL);
    let mut ops = Vec::new();
    for (a, desc) in pass.attachments.iter().enumerate() {
        if pass.first_use[a] != Some(*subpass) {
            continue;
        }
        let aspects = image::aspects(desc.format);
        let mut clear = vk::ImageAspectFlags::empty();
        if aspects.intersects(vk::ImageAspectFlags::COLOR | vk::ImageAspectFlags::DEPTH)
            && desc.load_op == vk::AttachmentLoadOp::CLEAR
        {
            clear |= aspects & (vk::ImageAspectFlags::COLOR | vk::ImageAspectFlags::DEPTH);
        }
        if aspects.contains(vk::ImageAspectFlags::STENCIL) && desc.stencil_load_op == vk::AttachmentLoadOp::CLEAR {
            clear |= vk::ImageAspectFlags::STENCIL;
        }
        if !clear.is_empty() {
            let value = clears.get(a).copied().unwrap_or_default();
            clear_view(&mut ops, &views[a], clear, value, p.area, 0, p.layers)?;
        }
    }
    i.rec.ops.extend(ops);
    Ok(())
}

fn begin_dynamic(i: &mut Inner, info: RenderingInfo) -> VkResult<()> {
    let mut ops = Vec::new();
    let mut size = [u32::MAX; 2];
    let mut fit = |v: &ImageView| {
        let e = v.extent();
        size = [size[0].min(e[0]), size[1].min(e[1])];
    };
    let load = |a: &RenderingAttachment| !info.resuming && a.load_op == vk::AttachmentLoadOp::CLEAR;
    let mut colors = Vec::with_capacity(info.colors.len());
    for a in &info.colors {
        if let Some(v) = &a.view {
            fit(v);
            if load(a) {
                clear_view(&mut ops, v, vk::ImageAspectFlags::COLOR, a.clear, info.area, 0, info.layers)?;
            }
            i.rec.keep.push(v.clone());
        }
        colors.push(a.view.clone());
    }
    let depth_view = info.depth.as_ref().and_then(|a| a.view.clone());
    let stencil_view = info.stencil.as_ref().and_then(|a| a.view.clone());
    for (a, aspect) in [(&info.depth, vk::ImageAspectFlags::DEPTH), (&info.stencil, vk::ImageAspectFlags::STENCIL)] {
        let Some(a) = a else { continue };
        let Some(v) = &a.view else { continue };
        fit(v);
        if load(a) {
            clear_view(&mut ops, v, aspect, a.clear, info.area, 0, info.layers)?;
        }
        i.rec.keep.push(v.clone());
    }
    if size[0] == u32::MAX {
        // No attachments: the render area bounds the fragments.
        let end = |o: i32, e: u32| (o.max(0) as u32).saturating_add(e);
        size = [end(info.area.x, info.area.width), end(info.area.y, info.area.height)];
    }
    i.rec.ops.extend(ops);
    i.gfx.pass = Some(PassInstance {
        source: Source::Dynamic,
        area: info.area,
        layers: info.layers.max(1),
        size,
        colors,
        has_depth: depth_view.is_some(),
        has_stencil: stencil_view.is_some(),
        // Vulkan requires one view when both are given.
        depth_stencil: depth_view.or(stencil_view),
    });
    Ok(())
}

/// Clears `aspects` of `rect` on layers `first..first + count` of `view` (relative to its
/// first layer; `REMAINING_ARRAY_LAYERS` allowed) to `value`.
pub(crate) fn clear_view(
    ops: &mut Vec<StreamOp>,
    view: &ImageView,
    aspects: vk::ImageAspectFlags,
    value: ClearValue,
    rect: Rect,
    first: u32,
    count: u32,
) -> VkResult<()> {
    let img = &view.image;
    let e = view.extent();
    let rect = rect.intersect(&Rect { x: 0, y: 0, width: e[0], height: e[1] });
    if rect.width == 0 || rect.height == 0 {
        return Ok(());
    }
    let count = if count == vk::REMAINING_ARRAY_LAYERS { view.layer_count.saturating_sub(first) } else { count };
    let base = img.address()?;
    for plane in image::planes(view.format, aspects & view.aspect) {
        let texel = image::clear_texel(view.format, plane, value.0);
        let tb = texel.len() as u64;
        for layer in first..first + count.min(view.layer_count.saturating_sub(first)) {
            let sub = img.plane_subresource(plane, view.base_level, view.base_layer + layer);
            let start = base + sub.offset + rect.y as u64 * sub.row_pitch + rect.x as u64 * tb;
            let row = rect.width as u64 * tb;
            if row == sub.row_pitch {
                ops.push(StreamOp::Pattern { dst: start, len: row * rect.height as u64, pattern: texel.clone() });
            } else {
                for y in 0..rect.height as u64 {
                    ops.push(StreamOp::Pattern { dst: start + y * sub.row_pitch, len: row, pattern: texel.clone() });
                }
            }
        }
    }
    Ok(())
}
