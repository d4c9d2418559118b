//! `VkAccelerationStructureKHR`: a range of a buffer that holds a resident CW-BVH once built.
//! It may be created before its buffer has memory; its address resolves when used.

use crate::buffer::Buffer;
use crate::{vk, VkResult};
use std::sync::Arc;

pub struct AccelStruct {
    pub buffer: Arc<Buffer>,
    pub offset: u64,
    pub size: u64,
    pub ty: vk::AccelerationStructureTypeKHR,
}

impl AccelStruct {
    pub fn new(buffer: Arc<Buffer>, offset: u64, size: u64, ty: vk::AccelerationStructureTypeKHR) -> VkResult<Self> {
        if offset.checked_add(size).is_none_or(|end| end > buffer.size) {
            tracing::error!(
                "vkCreateAccelerationStructureKHR: {size} bytes at offset {offset} overrun the {}-byte buffer",
                buffer.size
            );
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        Ok(AccelStruct { buffer, offset, size, ty })
    }

    /// Device address (0 while the buffer has no memory).
    pub fn address(&self) -> u64 {
        match self.buffer.address() {
            0 => 0,
            a => a + self.offset,
        }
    }
}
