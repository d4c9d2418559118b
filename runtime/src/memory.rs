//! `VkDeviceMemory`: one region of the device address space, backed by host memory that the
//! application maps directly (the one memory type is device-local, host-visible, coherent and
//! cached, so a mapped pointer aliases exactly what the device reads).

use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::mem::{AddressSpace, Region};

pub struct Memory {
    pub region: Region,
    pub size: u64,
    space: Arc<AddressSpace>,
}

impl Memory {
    pub fn allocate(space: &Arc<AddressSpace>, size: u64) -> VkResult<Memory> {
        let region = space.allocate(size).ok_or_else(|| {
            tracing::warn!("vkAllocateMemory: cannot back {size} bytes");
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY
        })?;
        Ok(Memory { region, size, space: space.clone() })
    }

    /// Device address of byte `offset`.
    pub fn address(&self, offset: u64) -> u64 {
        self.region.base + offset
    }

    /// Host pointer to byte `offset` (for vkMapMemory).
    pub fn host_ptr(&self, offset: u64) -> *mut u8 {
        // SAFETY: callers pass offset <= size (checked by the ICD against the allocation).
        unsafe { self.region.host_ptr().add(offset as usize) }
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // Unmap the addresses; any in-flight dispatch keeps the backing alive through its
        // snapshot of the memory map.
        self.space.free(self.region.base);
    }
}
