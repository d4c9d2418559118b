//! `VkBuffer`: a range of a memory object, known by its device address once bound; or a
//! sparse buffer, whose addresses are its own from creation and whose pages are bound by
//! `vkQueueBindSparse` (`crate::sparse`).

use crate::memory::Memory;
use crate::sparse::Reserved;
use crate::{vk, VkResult};
use parking_lot::RwLock;
use std::sync::Arc;
use vortex_model::mem::{AddressSpace, Reservation};

/// Alignment the device wants for buffer memory (and reports as the storage/uniform offset
/// alignment floor).
pub const BUFFER_ALIGNMENT: u64 = 64;

pub struct Buffer {
    pub size: u64,
    pub usage: vk::BufferUsageFlags,
    binding: RwLock<Option<(Arc<Memory>, u64)>>,
    /// A sparse buffer's addresses.
    sparse: Option<Reserved>,
}

impl Buffer {
    pub fn new(size: u64, usage: vk::BufferUsageFlags) -> Buffer {
        Buffer { size, usage, binding: RwLock::new(None), sparse: None }
    }

    /// A sparse-binding buffer: its addresses are reserved now, nothing is bound.
    pub fn new_sparse(space: &Arc<AddressSpace>, size: u64, usage: vk::BufferUsageFlags) -> VkResult<Buffer> {
        let sparse = Some(Reserved::new(space, size)?);
        Ok(Buffer { size, usage, binding: RwLock::new(None), sparse })
    }

    /// The reservation of a sparse buffer (`None`: an ordinary one).
    pub fn reservation(&self) -> Option<Reservation> {
        self.sparse.as_ref().map(|s| s.res)
    }

    pub fn bind(&self, memory: Arc<Memory>, offset: u64) -> VkResult<()> {
        if self.sparse.is_some() {
            tracing::error!("vkBindBufferMemory on a sparse buffer (its pages are bound with vkQueueBindSparse)");
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        if offset.checked_add(self.size).is_none_or(|end| end > memory.size) {
            tracing::error!("vkBindBufferMemory: buffer of {} bytes at offset {offset} overruns the memory", self.size);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        *self.binding.write() = Some((memory, offset));
        Ok(())
    }

    /// Device address of the first byte, or 0 while unbound (a sparse buffer's from creation).
    pub fn address(&self) -> u64 {
        if let Some(s) = &self.sparse {
            return s.res.base;
        }
        self.binding.read().as_ref().map_or(0, |(m, o)| m.address(*o))
    }

    pub fn memory(&self) -> Option<Arc<Memory>> {
        self.binding.read().as_ref().map(|(m, _)| m.clone())
    }

    /// Device address of `offset`, checked to be bound.
    pub fn address_at(&self, offset: u64) -> VkResult<u64> {
        if let Some(s) = &self.sparse {
            return Ok(s.res.base + offset);
        }
        match self.binding.read().as_ref() {
            Some((m, o)) => Ok(m.address(*o) + offset),
            None => {
                tracing::error!("buffer used before memory was bound");
                Err(vk::Result::ERROR_UNKNOWN)
            }
        }
    }
}

/// A texel-buffer view: a range of a buffer read and written as texels of one format.
/// Shaders see it through an image descriptor of a 1D view (width = texels).
pub struct BufferView {
    pub buffer: Arc<Buffer>,
    pub format: &'static vortex_model::abi::format::Format,
    pub offset: u64,
    /// Bytes, `VK_WHOLE_SIZE` resolved.
    pub range: u64,
}

impl BufferView {
    pub fn new(buffer: Arc<Buffer>, format: vk::Format, offset: u64, range: u64) -> VkResult<BufferView> {
        let f = vortex_model::abi::format::lookup(format.as_raw() as u32).ok_or_else(|| {
            tracing::warn!("vkCreateBufferView: format {format:?} is not supported for texel buffers");
            vk::Result::ERROR_FORMAT_NOT_SUPPORTED
        })?;
        let range = if range == vk::WHOLE_SIZE { buffer.size.saturating_sub(offset) } else { range };
        if offset.checked_add(range).is_none_or(|end| end > buffer.size) {
            tracing::error!("vkCreateBufferView: range {offset}+{range} outside a {}-byte buffer", buffer.size);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        Ok(BufferView { buffer, format: f, offset, range })
    }

    /// The texel-path descriptor: a 1D image over the range.
    pub fn descriptor(&self) -> VkResult<vortex_model::abi::kernel::ImageDesc> {
        let tb = self.format.texel_bytes();
        let texels = (self.range / tb as u64).min(u32::MAX as u64) as u32;
        let row = (texels as u64 * tb as u64).min(u32::MAX as u64) as u32;
        Ok(vortex_model::abi::kernel::ImageDesc {
            addr: self.buffer.address_at(self.offset)?,
            format: self.format.vk,
            view_type: vortex_model::abi::format::view_type::TYPE_1D,
            width: texels,
            height: 1,
            depth: 1,
            layers: 1,
            row_pitch: row,
            slice_pitch: row,
            layer_pitch: row,
            texel_bytes: tb,
        })
    }
}
