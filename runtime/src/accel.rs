//! `VkAccelerationStructureKHR`: a range of a buffer that holds a resident CW-BVH once built.
//! It may be created before its buffer has memory; its address resolves when used.

use crate::buffer::Buffer;
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_transcode::accel;

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

/// The level a build produces: a GENERIC structure is whatever its geometries make it.
pub fn level(ty: vk::AccelerationStructureTypeKHR, geometries: &[accel::GeometryInput]) -> accel::Level {
    let top = match ty {
        vk::AccelerationStructureTypeKHR::TOP_LEVEL => true,
        vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL => false,
        _ => geometries.iter().any(|g| matches!(g.geometry, accel::Geometry::Instances { .. })),
    };
    if top {
        accel::Level::Top
    } else {
        accel::Level::Bottom
    }
}

/// Vertex formats the transcoder reads.
pub fn vertex_format_supported(f: vk::Format) -> bool {
    accel::vertex_formats().any(|v| v == f.as_raw() as u32)
}

/// Completes a recorded request with the addresses known only when the build runs: the
/// destination (and source, for updates) structures' own memory.
pub fn resolve(mut req: accel::BuildRequest, dst: &AccelStruct, src: Option<&AccelStruct>) -> accel::BuildRequest {
    req.dst = dst.address();
    req.dst_size = dst.size;
    if let accel::Mode::Update { .. } = req.mode {
        req.mode = match src {
            Some(s) => accel::Mode::Update { src: s.address() },
            None => accel::Mode::Build,
        };
    }
    req
}
