//! The resolves a render pass instance records: a subpass's resolve attachments (colour, and
//! depth/stencil from `VkSubpassDescriptionDepthStencilResolve`) when the subpass ends, and
//! dynamic rendering's resolve views at `vkCmdEndRendering`; and `vkCmdResolveImage`. Each
//! becomes a resolve job (`crate::resolve`) over the render area of every layer.

use super::PassInstance;
use crate::cmd::{CommandBuffer, Inner};
use crate::image::{self, Image, ImageView};
use crate::pipeline::graphics::Rect;
use crate::resolve::{Mode, ResolveJob, ResolveRegion};
use crate::stream::StreamOp;
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::abi::format::Aspect;

/// One resolve of a render pass instance: `src`'s planes into `dst`'s, each with its mode.
#[derive(Clone)]
pub struct ViewResolve {
    pub src: Arc<ImageView>,
    pub dst: Arc<ImageView>,
    pub planes: Vec<(Aspect, Mode)>,
}

/// `vkCmdResolveImage`'s `VkImageResolve` (colour only, as Vulkan has it).
#[derive(Clone, Copy, Debug)]
pub struct ImageResolve {
    pub src_layer: u32,
    pub dst_level: u32,
    pub dst_layer: u32,
    pub layers: u32,
    pub src_offset: [i32; 2],
    pub dst_offset: [i32; 2],
    pub extent: [u32; 2],
}

/// The resolve job of `r` over `area` on `layers` layers (each view's from its first).
pub(crate) fn view_job(r: &ViewResolve, area: Rect, layers: u32) -> VkResult<Option<StreamOp>> {
    let [sw, sh, _] = r.src.extent();
    let [dw, dh, _] = r.dst.extent();
    let full = |w, h| Rect { x: 0, y: 0, width: w, height: h };
    let a = area.intersect(&full(sw, sh)).intersect(&full(dw, dh));
    if a.width == 0 || a.height == 0 {
        return Ok(None);
    }
    let layers = layers.min(r.src.layer_count).min(r.dst.layer_count);
    let regions = r
        .planes
        .iter()
        .map(|&(plane, mode)| ResolveRegion {
            plane,
            mode,
            src_layer: r.src.base_layer,
            dst_level: r.dst.base_level,
            dst_layer: r.dst.base_layer,
            layers,
            src_offset: [a.x, a.y],
            dst_offset: [a.x, a.y],
            extent: [a.width, a.height],
        })
        .collect();
    let job = ResolveJob::new(r.src.image.clone(), r.dst.image.clone(), regions)?;
    Ok(Some(StreamOp::Resolve(Box::new(job))))
}

/// The colour resolve of `src` into `dst` (a render pass's resolve attachment).
pub(crate) fn color(src: &Arc<ImageView>, dst: &Arc<ImageView>) -> ViewResolve {
    ViewResolve { src: src.clone(), dst: dst.clone(), planes: vec![(Aspect::Color, Mode::color(src.format))] }
}

/// The depth and stencil resolves of `src` into `dst` with the given modes (`None`: that
/// aspect is not resolved), for the aspects both views have.
pub(crate) fn depth_stencil(
    src: &Arc<ImageView>,
    dst: &Arc<ImageView>,
    depth: Option<Mode>,
    stencil: Option<Mode>,
) -> ViewResolve {
    let both = src.aspect & dst.aspect;
    let mut planes = Vec::new();
    if let Some(m) = depth.filter(|_| both.contains(vk::ImageAspectFlags::DEPTH)) {
        planes.push((Aspect::Depth, m));
    }
    if let Some(m) = stencil.filter(|_| both.contains(vk::ImageAspectFlags::STENCIL)) {
        planes.push((Aspect::Stencil, m));
    }
    ViewResolve { src: src.clone(), dst: dst.clone(), planes }
}

/// Records the resolves of the instance's current subpass (or its dynamic rendering) ending.
pub(crate) fn end_subpass(i: &mut Inner, p: &PassInstance, resolves: &[ViewResolve]) -> VkResult<()> {
    for r in resolves {
        if let Some(op) = view_job(r, p.area, p.layers)? {
            i.keep(r.dst.clone());
            i.emit(op);
        }
    }
    Ok(())
}

impl CommandBuffer {
    /// `vkCmdResolveImage`: each region's samples averaged (sample 0 for integer formats).
    pub fn resolve_image(&self, src: &Arc<Image>, dst: &Arc<Image>, regions: &[ImageResolve]) {
        self.record("vkCmdResolveImage", |i, _| {
            if !image::aspects_of(src.format).contains(vk::ImageAspectFlags::COLOR) {
                tracing::error!("vkCmdResolveImage of {} (colour formats only)", src.format.name);
                return Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED);
            }
            let mode = Mode::color(src.format);
            let regions = regions
                .iter()
                .map(|r| ResolveRegion {
                    plane: Aspect::Color,
                    mode,
                    src_layer: r.src_layer,
                    dst_level: r.dst_level,
                    dst_layer: r.dst_layer,
                    layers: r.layers,
                    src_offset: r.src_offset,
                    dst_offset: r.dst_offset,
                    extent: r.extent,
                })
                .collect();
            let job = ResolveJob::new(src.clone(), dst.clone(), regions)?;
            i.keep(src.clone());
            i.keep(dst.clone());
            i.emit(StreamOp::Resolve(Box::new(job)));
            Ok(())
        });
    }
}
