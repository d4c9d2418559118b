//! Dynamic state (`vkCmdSet*`) and vertex/index buffer bindings. Each value is command-buffer
//! state; a draw uses it for the states its pipeline declares dynamic and the pipeline's own
//! values for the rest (`state::resolve`).

use super::{IndexBuffer, VertexBuffer};
use crate::cmd::CommandBuffer;
use crate::pipeline::graphics::{DepthBias, Rect, Viewport};
use crate::{vk, VkResult};
use vortex_model::abi::gfx::state as rec;

/// The stencil operations of one face (`vkCmdSetStencilOp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StencilOps {
    pub fail: vk::StencilOp,
    pub pass: vk::StencilOp,
    pub depth_fail: vk::StencilOp,
    pub compare: vk::CompareOp,
}

impl Default for StencilOps {
    fn default() -> Self {
        StencilOps {
            fail: vk::StencilOp::KEEP,
            pass: vk::StencilOp::KEEP,
            depth_fail: vk::StencilOp::KEEP,
            compare: vk::CompareOp::NEVER,
        }
    }
}

/// Every dynamic state value a command buffer holds. Faces are (front, back).
#[derive(Clone, Debug, PartialEq)]
pub struct DynamicValues {
    pub viewports: Vec<Viewport>,
    pub scissors: Vec<Rect>,
    pub line_width: f32,
    pub depth_bias: DepthBias,
    pub blend_constants: [f32; 4],
    pub depth_bounds: [f32; 2],
    pub stencil_compare_mask: [u32; 2],
    pub stencil_write_mask: [u32; 2],
    pub stencil_reference: [u32; 2],
    pub cull_mode: vk::CullModeFlags,
    pub front_face: vk::FrontFace,
    pub topology: vk::PrimitiveTopology,
    pub depth_test: bool,
    pub depth_write: bool,
    pub depth_compare: vk::CompareOp,
    pub depth_bounds_test: bool,
    pub stencil_test: bool,
    pub stencil_ops: [StencilOps; 2],
    pub rasterizer_discard: bool,
    pub depth_bias_enable: bool,
    pub primitive_restart: bool,
}

impl Default for DynamicValues {
    fn default() -> Self {
        DynamicValues {
            viewports: vec![],
            scissors: vec![],
            line_width: 1.0,
            depth_bias: DepthBias::default(),
            blend_constants: [0.0; 4],
            depth_bounds: [0.0, 1.0],
            stencil_compare_mask: [0; 2],
            stencil_write_mask: [0; 2],
            stencil_reference: [0; 2],
            cull_mode: vk::CullModeFlags::NONE,
            front_face: vk::FrontFace::COUNTER_CLOCKWISE,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            depth_test: false,
            depth_write: false,
            depth_compare: vk::CompareOp::NEVER,
            depth_bounds_test: false,
            stencil_test: false,
            stencil_ops: [StencilOps::default(); 2],
            rasterizer_discard: false,
            depth_bias_enable: false,
            primitive_restart: false,
        }
    }
}

impl DynamicValues {
    /// The faces of a `VkStencilFaceFlags`, as indices into the per-face arrays.
    pub fn faces(f: vk::StencilFaceFlags) -> impl Iterator<Item = usize> {
        [vk::StencilFaceFlags::FRONT, vk::StencilFaceFlags::BACK]
            .into_iter()
            .enumerate()
            .filter(move |(_, x)| f.contains(*x))
            .map(|(i, _)| i)
    }

    /// Writes `values` from index `first` of `list` (`vkCmdSetViewport`/`Scissor`), growing
    /// it as needed.
    pub fn set_range<T: Copy + Default>(list: &mut Vec<T>, first: u32, values: &[T]) {
        let end = first as usize + values.len();
        if list.len() < end {
            list.resize(end, T::default());
        }
        list[first as usize..end].copy_from_slice(values);
    }
}

impl CommandBuffer {
    /// Applies a `vkCmdSet*`: `f` changes the dynamic values it sets.
    pub fn set_dynamic(&self, what: &str, f: impl FnOnce(&mut DynamicValues)) {
        self.record(what, |i, _| {
            f(&mut i.gfx.dynamic);
            Ok(())
        });
    }

    /// `vkCmdBindVertexBuffers` (and `2`, with sizes and strides).
    pub fn bind_vertex_buffers(&self, first: u32, buffers: Vec<VertexBuffer>) {
        self.record("vkCmdBindVertexBuffers", |i, _| {
            let end = first as usize + buffers.len();
            if end > rec::MAX_VB {
                tracing::error!("vertex buffers {first}..{end} beyond the {} bindings", rec::MAX_VB);
                return Err(vk::Result::ERROR_UNKNOWN);
            }
            for (k, b) in buffers.into_iter().enumerate() {
                check_range(&b)?;
                i.gfx.vertex[first as usize + k] = Some(b);
            }
            Ok(())
        });
    }

    /// `index_type` is an `abi::gfx::index_type` value.
    pub fn bind_index_buffer(&self, b: IndexBuffer) {
        self.record("vkCmdBindIndexBuffer", |i, _| {
            b.buffer.address_at(b.offset)?;
            i.gfx.index = Some(b);
            Ok(())
        });
    }
}

fn check_range(b: &VertexBuffer) -> VkResult<()> {
    b.buffer.address_at(b.offset)?;
    let end = b.size.map_or(Some(b.offset), |s| b.offset.checked_add(s));
    if b.offset > b.buffer.size || end.is_none_or(|e| e > b.buffer.size) {
        tracing::error!("vertex buffer range {}+{:?} outside a {}-byte buffer", b.offset, b.size, b.buffer.size);
        return Err(vk::Result::ERROR_UNKNOWN);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faces_and_ranges() {
        let all: Vec<_> = DynamicValues::faces(vk::StencilFaceFlags::FRONT_AND_BACK).collect();
        assert_eq!(all, [0, 1]);
        let back: Vec<_> = DynamicValues::faces(vk::StencilFaceFlags::BACK).collect();
        assert_eq!(back, [1]);
        let mut v = vec![1u32];
        DynamicValues::set_range(&mut v, 2, &[7, 8]);
        assert_eq!(v, [1, 0, 7, 8]);
    }
}
