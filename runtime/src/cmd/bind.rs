//! Binding state: `vkCmdBindPipeline`, `vkCmdBindDescriptorSets`, `vkCmdPushConstants`.
//!
//! As Vulkan has it, each bind point (compute, graphics, ray tracing) keeps its own pipeline
//! and descriptor sets with their dynamic offsets, and binding at one never disturbs another;
//! push constants are command-buffer state every bind point sees. A dispatch reads the
//! compute bind point's state (a draw or a trace will read theirs).

use super::CommandBuffer;
use crate::descriptor::DescriptorSet;
use crate::pipeline::{BindPoint, Pipeline};
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::abi::kernel::kargs;

/// What one bind point holds.
pub(super) struct BindState {
    pub pipeline: Option<Arc<Pipeline>>,
    pub sets: [Option<Arc<DescriptorSet>>; kargs::MAX_SETS],
    /// Each set's dynamic offsets, in binding order.
    pub dynamic: [Vec<u32>; kargs::MAX_SETS],
}

impl Default for BindState {
    fn default() -> Self {
        BindState { pipeline: None, sets: std::array::from_fn(|_| None), dynamic: std::array::from_fn(|_| Vec::new()) }
    }
}

impl BindState {
    /// Binds `sets` at `first`; `dynamic` are their dynamic offsets in binding order.
    fn bind_sets(&mut self, first: u32, sets: Vec<Option<Arc<DescriptorSet>>>, dynamic: &[u32]) -> VkResult<()> {
        let mut d = dynamic;
        for (k, s) in sets.into_iter().enumerate() {
            let slot = first as usize + k;
            if slot >= kargs::MAX_SETS {
                tracing::error!("descriptor set index {slot} out of range");
                return Err(vk::Result::ERROR_UNKNOWN);
            }
            let n = s.as_ref().map_or(0, |s| s.layout.dynamic_count as usize).min(d.len());
            self.dynamic[slot] = d[..n].to_vec();
            d = &d[n..];
            self.sets[slot] = s;
        }
        Ok(())
    }
}

/// The state of every bind point.
#[derive(Default)]
pub(super) struct Bindings([BindState; BindPoint::ALL.len()]);

impl Bindings {
    pub fn at(&self, bp: BindPoint) -> &BindState {
        &self.0[bp.index()]
    }

    fn at_mut(&mut self, bp: BindPoint) -> &mut BindState {
        &mut self.0[bp.index()]
    }
}

impl CommandBuffer {
    /// Binds `p` at `bp`; a pipeline of another kind is an error.
    pub fn bind_pipeline(&self, bp: BindPoint, p: Arc<Pipeline>) {
        self.record("vkCmdBindPipeline", |i, _| {
            if p.bind_point() != bp {
                tracing::error!(
                    "vkCmdBindPipeline: pipeline '{}' is a {:?} pipeline, bound at the {bp:?} bind point",
                    p.name,
                    p.bind_point()
                );
                return Err(vk::Result::ERROR_UNKNOWN);
            }
            i.bound.at_mut(bp).pipeline = Some(p);
            Ok(())
        });
    }

    /// Binds `sets` at `first` of bind point `bp`; `dynamic` are the dynamic offsets in
    /// binding order.
    pub fn bind_sets(&self, bp: BindPoint, first: u32, sets: Vec<Option<Arc<DescriptorSet>>>, dynamic: &[u32]) {
        self.record("vkCmdBindDescriptorSets", |i, _| i.bound.at_mut(bp).bind_sets(first, sets, dynamic));
    }

    pub fn push_constants(&self, offset: u32, data: &[u8]) {
        self.record("vkCmdPushConstants", |i, _| {
            let end = offset as usize + data.len();
            if end > kargs::PUSH_BYTES {
                tracing::error!("push constants {offset}..{end} beyond {} bytes", kargs::PUSH_BYTES);
                return Err(vk::Result::ERROR_UNKNOWN);
            }
            i.push[offset as usize..end].copy_from_slice(data);
            Ok(())
        });
    }
}
