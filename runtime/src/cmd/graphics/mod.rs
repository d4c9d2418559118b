//! Graphics commands: render pass instances (render passes and dynamic rendering), their
//! load-op clears and `vkCmdClearAttachments`, dynamic state, vertex and index buffers, and
//! draws.
//!
//! The device renders into the attachments' memory directly, so a render pass instance is
//! host state: which views the current subpass renders to, over which area. Clears are DMA
//! pattern writes on the attachments, in the stream before the draws that follow them. A
//! draw resolves the bound pipeline's fixed-function state with the command buffer's
//! dynamic state, the current attachments and the vertex buffers into the draw state record
//! (`state`, `abi::gfx::state`), stashes it with the kernel arguments, and records the
//! DCR writes of `DCR.md` and the draw's pulse (`draw`).

mod draw;
mod dynamic;
mod pass;
mod resolve;
pub mod state;

pub(super) use draw::resolve_deferred;
pub use draw::{DeferredState, DrawIndirect};
pub use dynamic::{DynamicValues, StencilOps};
pub use pass::{ClearAttachment, ClearRect, RenderingAttachment, RenderingInfo};
pub use resolve::ImageResolve;

use crate::buffer::Buffer;
use crate::image::ImageView;
use crate::pipeline::graphics::Rect;
use crate::renderpass::RenderPass;
use std::sync::Arc;
use vortex_model::abi::gfx::state as rec;

/// A clear value as Vulkan's union holds it: four colour words (float or integer by the
/// attachment's format), or the depth (word 0, f32) and stencil (word 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClearValue(pub [u32; 4]);

impl ClearValue {
    pub fn depth(&self) -> f32 {
        f32::from_bits(self.0[0])
    }

    pub fn stencil(&self) -> u32 {
        self.0[1]
    }
}

/// A vertex buffer binding: buffer, offset, bytes available (`None`: to the buffer's end)
/// and stride (`None`: the pipeline's, unless set by `vkCmdBindVertexBuffers2`).
#[derive(Clone)]
pub struct VertexBuffer {
    pub buffer: Arc<Buffer>,
    pub offset: u64,
    pub size: Option<u64>,
    pub stride: Option<u64>,
}

/// The bound index buffer: buffer, offset and `abi::gfx::index_type`.
#[derive(Clone)]
pub struct IndexBuffer {
    pub buffer: Arc<Buffer>,
    pub offset: u64,
    pub index_type: u32,
}

/// Where the attachments of the render pass instance come from.
enum Source {
    /// `vkCmdBeginRenderPass`: the pass, the framebuffer's (or the begin's) views, the
    /// current subpass and the clear values of the begin.
    Pass { pass: Arc<RenderPass>, views: Vec<Arc<ImageView>>, subpass: u32, clears: Vec<ClearValue> },
    /// `vkCmdBeginRendering`, with the resolves its end does.
    Dynamic { resolves: Vec<resolve::ViewResolve> },
}

/// A render pass instance: what draws render to now.
pub(crate) struct PassInstance {
    source: Source,
    pub area: Rect,
    pub layers: u32,
    /// Render-target size: the framebuffer's, or the smallest attachment's for dynamic
    /// rendering.
    pub size: [u32; 2],
    /// The current subpass's colour attachments by location.
    pub colors: Vec<Option<Arc<ImageView>>>,
    /// The depth/stencil attachment's view, and which of its aspects the subpass uses.
    pub depth_stencil: Option<Arc<ImageView>>,
    pub has_depth: bool,
    pub has_stencil: bool,
    /// The current subpass's (or dynamic rendering's) view mask; 0: no multiview.
    pub view_mask: u32,
}

/// The view indices of a view mask, lowest first.
pub(crate) fn views(mask: u32) -> impl Iterator<Item = u32> {
    (0..32).filter(move |v| mask & (1 << v) != 0)
}

/// The graphics state of a command buffer.
pub(super) struct GfxState {
    pass: Option<PassInstance>,
    /// A secondary buffer continuing a render pass whose attachments it does not know.
    pub inherited: bool,
    /// Such a buffer's view mask, from its inheritance info (0: no multiview).
    pub inherited_view_mask: u32,
    pub dynamic: DynamicValues,
    vertex: [Option<VertexBuffer>; rec::MAX_VB],
    index: Option<IndexBuffer>,
}

impl GfxState {
    /// Views the current subpass renders (queries use as many consecutive indices): 1
    /// without multiview or outside a render pass instance. A secondary buffer continuing
    /// a render pass knows them from its inheritance info.
    pub(in crate::cmd) fn view_count(&self) -> u32 {
        let mask = match &self.pass {
            Some(p) => p.view_mask,
            None if self.inherited => self.inherited_view_mask,
            None => 0,
        };
        mask.count_ones().max(1)
    }
}

impl Default for GfxState {
    fn default() -> Self {
        GfxState {
            pass: None,
            inherited: false,
            inherited_view_mask: 0,
            dynamic: DynamicValues::default(),
            vertex: std::array::from_fn(|_| None),
            index: None,
        }
    }
}
