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
    accel::vertex_formats().any(|v| v == f.as_raw() as u32)
}

fn level(ty: vk::AccelerationStructureTypeKHR, geometries: &[&GeometryInput]) -> accel::Level {
    // A GENERIC structure is built as whatever its geometries make it.
    let top = match ty {
        vk::AccelerationStructureTypeKHR::TOP_LEVEL => true,
        vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL => false,
        _ => geometries.iter().any(|g| matches!(g, GeometryInput::Instances { .. })),
    };
    if top {
        accel::Level::Top
    } else {
        accel::Level::Bottom
    }
}

/// (structure size, build scratch, update scratch) bounds for a build of `inputs`, each
/// with its maximum primitive count.
pub fn build_sizes(
    ty: vk::AccelerationStructureTypeKHR,
    flags: vk::BuildAccelerationStructureFlagsKHR,
    inputs: &[(GeometryInput, u32)],
    width: u32,
) -> (u64, u64, u64) {
    let kinds: Vec<_> = inputs
        .iter()
        .map(|(g, n)| {
            let k = match g {
                GeometryInput::Triangles { .. } => accel::GeometryKind::Triangles,
                GeometryInput::Aabbs { .. } => accel::GeometryKind::Aabbs,
                GeometryInput::Instances { .. } => accel::GeometryKind::Instances,
            };
            (k, *n)
        })
        .collect();
    let geos: Vec<_> = inputs.iter().map(|(g, _)| g).collect();
    let s = accel::build_sizes(level(ty, &geos), &kinds, flags.as_raw(), width);
    (s.as_size, s.build_scratch, s.update_scratch)
}

impl BuildInput {
    /// The transcoder's request for building into `dst` (and refitting from `src`).
    pub fn request(&self, dst: &AccelStruct, src: Option<&AccelStruct>) -> accel::BuildRequest {
        let geos: Vec<_> = self.geometries.iter().map(|(g, _)| g).collect();
        let geometries = self
            .geometries
            .iter()
            .map(|(g, r)| {
                let (geometry, flags) = match *g {
                    GeometryInput::Triangles {
                        vertex_format,
                        vertex_data,
                        vertex_stride,
                        max_vertex,
                        index_type,
                        index_data,
                        transform_data,
                        flags,
                    } => (
                        accel::Geometry::Triangles {
                            vertex_format: vertex_format.as_raw() as u32,
                            vertex_data,
                            vertex_stride,
                            max_vertex,
                            index_type: index_type.as_raw() as u32,
                            index_data,
                            transform_data,
                        },
                        flags,
                    ),
                    GeometryInput::Aabbs { data, stride, flags } => (accel::Geometry::Aabbs { data, stride }, flags),
                    GeometryInput::Instances { data, array_of_pointers, flags } => {
                        (accel::Geometry::Instances { data, array_of_pointers }, flags)
                    }
                };
                accel::GeometryInput {
                    geometry,
                    flags: flags.as_raw(),
                    range: accel::BuildRange {
                        primitive_count: r.primitive_count,
                        primitive_offset: r.primitive_offset,
                        first_vertex: r.first_vertex,
                        transform_offset: r.transform_offset,
                    },
                }
            })
            .collect();
        accel::BuildRequest {
            level: level(self.ty, &geos),
            flags: self.flags.as_raw(),
            mode: match (self.update, src) {
                (true, Some(s)) => accel::Mode::Update { src: s.address() },
                _ => accel::Mode::Build,
            },
            dst: dst.address(),
            dst_size: dst.size,
            scratch: self.scratch,
            geometries,
        }
    }
}
