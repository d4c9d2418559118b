//! `VkBuffer`: a range of a memory object, known by its device address once bound.

use crate::memory::Memory;
use crate::{vk, VkResult};
use parking_lot::RwLock;
use std::sync::Arc;

/// Alignment the device wants for buffer memory (and reports as the storage/uniform offset
/// alignment floor).
pub const BUFFER_ALIGNMENT: u64 = 64;

pub struct Buffer {
    pub size: u64,
    pub usage: vk::BufferUsageFlags,
    binding: RwLock<Option<(Arc<Memory>, u64)>>,
}

impl Buffer {
    pub fn new(size: u64, usage: vk::BufferUsageFlags) -> Buffer {
        Buffer { size, usage, binding: RwLock::new(None) }
    }

    pub fn bind(&self, memory: Arc<Memory>, offset: u64) -> VkResult<()> {
        if offset.checked_add(self.size).is_none_or(|end| end > memory.size) {
            tracing::error!("vkBindBufferMemory: buffer of {} bytes at offset {offset} overruns the memory", self.size);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        *self.binding.write() = Some((memory, offset));
        Ok(())
    }

    /// Device address of the first byte, or 0 while unbound.
    pub fn address(&self) -> u64 {
        self.binding.read().as_ref().map_or(0, |(m, o)| m.address(*o))
    }

    pub fn memory(&self) -> Option<Arc<Memory>> {
        self.binding.read().as_ref().map(|(m, _)| m.clone())
    }

    /// Device address of `offset`, checked to be bound.
    pub fn address_at(&self, offset: u64) -> VkResult<u64> {
        match self.binding.read().as_ref() {
            Some((m, o)) => Ok(m.address(*o) + offset),
            None => {
                tracing::error!("buffer used before memory was bound");
                Err(vk::Result::ERROR_UNKNOWN)
            }
        }
    }
}
