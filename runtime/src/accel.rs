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

/// One geometry of a build, as the application described it (device addresses, counts).
#[derive(Clone, Debug, PartialEq)]
pub enum GeometryInput {
    Triangles {
        vertex_format: vk::Format,
        vertex_data: u64,
        vertex_stride: u64,
        max_vertex: u32,
        index_type: vk::IndexType,
        index_data: u64,
        transform_data: u64,
        flags: vk::GeometryFlagsKHR,
    },
    Aabbs {
        data: u64,
        stride: u64,
        flags: vk::GeometryFlagsKHR,
    },
    Instances {
        data: u64,
        array_of_pointers: bool,
        flags: vk::GeometryFlagsKHR,
    },
}

/// `VkAccelerationStructureBuildRangeInfoKHR`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildRange {
    pub primitive_count: u32,
    pub primitive_offset: u32,
    pub first_vertex: u32,
    pub transform_offset: u32,
}

/// Everything one build needs except the structures' own addresses.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildInput {
    pub ty: vk::AccelerationStructureTypeKHR,
    pub flags: vk::BuildAccelerationStructureFlagsKHR,
    pub update: bool,
    pub scratch: u64,
    pub geometries: Vec<(GeometryInput, BuildRange)>,
}

/// Vertex formats the transcoder reads.
pub fn vertex_format_supported(f: vk::Format) -> bool {
    f == vk::Format::R32G32B32_SFLOAT
}

/// (structure size, build scratch, update scratch) bounds for a build of `inputs`, each
/// with its maximum primitive count.
pub fn build_sizes(
    _ty: vk::AccelerationStructureTypeKHR,
    _flags: vk::BuildAccelerationStructureFlagsKHR,
    inputs: &[(GeometryInput, u32)],
) -> (u64, u64, u64) {
    let mut size = 256u64;
    for (g, n) in inputs {
        let per = match g {
            GeometryInput::Instances { .. } => 128 + 64 + 8,
            _ => 64 + 64,
        };
        size += per * *n as u64;
    }
    (size, 64, 64)
}
