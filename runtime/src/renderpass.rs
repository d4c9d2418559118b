//! `VkRenderPass` and `VkFramebuffer`. The device renders straight into the attachments'
//! memory (there is no tile memory to load or store), so a render pass is what its commands
//! need to know: each subpass's attachments, and which attachments are cleared (loaded with
//! `CLEAR`) in the first subpass that uses them. Store operations and layouts need no work;
//! dependencies are accepted (the queue executes in order).

use crate::image::{self, ImageView};
use crate::pipeline::graphics::{Targets, SAMPLE_COUNTS};
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::abi::gfx::state;

/// `VkAttachmentDescription`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttachmentDesc {
    pub format: vk::Format,
    pub samples: vk::SampleCountFlags,
    pub load_op: vk::AttachmentLoadOp,
    pub store_op: vk::AttachmentStoreOp,
    pub stencil_load_op: vk::AttachmentLoadOp,
    pub stencil_store_op: vk::AttachmentStoreOp,
}

/// `VkSubpassDescription`: attachment indices (`vk::ATTACHMENT_UNUSED` for holes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubpassDesc {
    pub colors: Vec<u32>,
    /// Empty, or one per colour attachment.
    pub resolves: Vec<u32>,
    pub depth_stencil: Option<u32>,
    pub inputs: Vec<u32>,
    pub view_mask: u32,
}

impl SubpassDesc {
    /// Every attachment the subpass reads or writes.
    fn uses(&self) -> impl Iterator<Item = u32> + '_ {
        self.colors.iter().chain(&self.resolves).chain(&self.inputs).chain(self.depth_stencil.iter()).copied()
    }
}

pub struct RenderPass {
    pub attachments: Vec<AttachmentDesc>,
    pub subpasses: Vec<SubpassDesc>,
    /// The subpass that uses each attachment first (where a `CLEAR` load happens).
    pub first_use: Vec<Option<u32>>,
}

fn refuse<T>(why: String) -> VkResult<T> {
    tracing::error!("vkCreateRenderPass: {why}");
    Err(vk::Result::ERROR_FEATURE_NOT_PRESENT)
}

impl RenderPass {
    pub fn new(attachments: Vec<AttachmentDesc>, subpasses: Vec<SubpassDesc>) -> VkResult<RenderPass> {
        if subpasses.is_empty() {
            return refuse("a render pass needs a subpass".into());
        }
        for (i, a) in attachments.iter().enumerate() {
            if !SAMPLE_COUNTS.contains(a.samples) {
                return refuse(format!("attachment {i} has {:?} samples (this device renders 1)", a.samples));
            }
            if !image::attachment_format(a.format) {
                return refuse(format!("attachment {i}: format {:?} cannot be rendered to", a.format));
            }
        }
        let n = attachments.len() as u32;
        let mut first_use = vec![None; attachments.len()];
        for (s, sp) in subpasses.iter().enumerate() {
            if sp.colors.len() > state::MAX_COLOR {
                return refuse(format!(
                    "subpass {s} has {} colour attachments (at most {})",
                    sp.colors.len(),
                    state::MAX_COLOR
                ));
            }
            if sp.view_mask != 0 {
                return refuse(format!("subpass {s} uses multiview"));
            }
            if sp.resolves.iter().any(|&r| r != vk::ATTACHMENT_UNUSED) {
                return refuse(format!("subpass {s} resolves single-sampled attachments"));
            }
            for a in sp.uses().filter(|&a| a != vk::ATTACHMENT_UNUSED) {
                if a >= n {
                    return refuse(format!("subpass {s} names attachment {a} of {n}"));
                }
                first_use[a as usize].get_or_insert(s as u32);
            }
        }
        Ok(RenderPass { attachments, subpasses, first_use })
    }

    /// The attachment formats a pipeline made for `subpass` renders to.
    pub fn targets(&self, subpass: u32) -> VkResult<Targets> {
        let Some(sp) = self.subpasses.get(subpass as usize) else {
            tracing::error!("subpass {subpass} of a render pass with {}", self.subpasses.len());
            return Err(vk::Result::ERROR_UNKNOWN);
        };
        let format = |a: u32| self.attachments.get(a as usize).map_or(vk::Format::UNDEFINED, |d| d.format);
        let ds = sp.depth_stencil.map_or(vk::Format::UNDEFINED, format);
        let aspects = image::aspects(ds);
        Ok(Targets {
            colors: sp.colors.iter().map(|&a| format(a)).collect(),
            depth: if aspects.contains(vk::ImageAspectFlags::DEPTH) { ds } else { vk::Format::UNDEFINED },
            stencil: if aspects.contains(vk::ImageAspectFlags::STENCIL) { ds } else { vk::Format::UNDEFINED },
            view_mask: sp.view_mask,
        })
    }
}

/// `VkFramebuffer`: its size, and its views unless it is imageless (the views then come with
/// `vkCmdBeginRenderPass`).
pub struct Framebuffer {
    pub width: u32,
    pub height: u32,
    pub layers: u32,
    pub attachment_count: u32,
    pub views: Option<Vec<Arc<ImageView>>>,
}

impl Framebuffer {
    pub fn new(
        pass: &RenderPass,
        width: u32,
        height: u32,
        layers: u32,
        attachment_count: u32,
        views: Option<Vec<Arc<ImageView>>>,
    ) -> VkResult<Framebuffer> {
        if attachment_count as usize != pass.attachments.len() {
            tracing::error!(
                "vkCreateFramebuffer: {attachment_count} attachments for a render pass with {}",
                pass.attachments.len()
            );
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        if let Some(v) = &views {
            check_views(pass, v, [width, height])?;
        }
        Ok(Framebuffer { width, height, layers: layers.max(1), attachment_count, views })
    }
}

/// The views of a framebuffer (or of an imageless one's begin) fit the render pass and the
/// framebuffer's size.
pub fn check_views(pass: &RenderPass, views: &[Arc<ImageView>], size: [u32; 2]) -> VkResult<()> {
    if views.len() != pass.attachments.len() {
        tracing::error!("{} views for a render pass with {} attachments", views.len(), pass.attachments.len());
        return Err(vk::Result::ERROR_UNKNOWN);
    }
    for (i, v) in views.iter().enumerate() {
        let e = v.extent();
        if e[0] < size[0] || e[1] < size[1] {
            tracing::error!("framebuffer attachment {i} is {}x{}, smaller than the framebuffer", e[0], e[1]);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn att(format: vk::Format, load: vk::AttachmentLoadOp) -> AttachmentDesc {
        AttachmentDesc {
            format,
            samples: vk::SampleCountFlags::TYPE_1,
            load_op: load,
            store_op: vk::AttachmentStoreOp::STORE,
            stencil_load_op: vk::AttachmentLoadOp::DONT_CARE,
            stencil_store_op: vk::AttachmentStoreOp::DONT_CARE,
        }
    }

    #[test]
    fn first_use_and_targets() {
        let a = vec![
            att(vk::Format::R8G8B8A8_UNORM, vk::AttachmentLoadOp::CLEAR),
            att(vk::Format::R32_UINT, vk::AttachmentLoadOp::LOAD),
        ];
        let subpasses = vec![
            SubpassDesc { colors: vec![1], ..Default::default() },
            SubpassDesc { colors: vec![vk::ATTACHMENT_UNUSED, 0], inputs: vec![1], ..Default::default() },
        ];
        let rp = RenderPass::new(a.clone(), subpasses).unwrap();
        assert_eq!(rp.first_use, [Some(1), Some(0)]);
        let t = rp.targets(1).unwrap();
        assert_eq!(t.colors, [vk::Format::UNDEFINED, vk::Format::R8G8B8A8_UNORM]);
        assert_eq!(t.depth, vk::Format::UNDEFINED);
        assert!(rp.targets(2).is_err());

        let out_of_range = vec![SubpassDesc { colors: vec![2], ..Default::default() }];
        assert!(RenderPass::new(a.clone(), out_of_range).is_err());
        let mut four = a.clone();
        four[0].samples = vk::SampleCountFlags::TYPE_4;
        assert!(RenderPass::new(four, vec![SubpassDesc::default()]).is_err());
        assert!(RenderPass::new(a, vec![]).is_err());
    }
}
