//! Acceleration structures: triangle BLASes and instance TLASes, described on the host
//! and built on the device. The descriptions are plain data so that a CPU reference can
//! read exactly what the device was given.

use crate::buffer::Buffer;
use crate::context::{Context, Shared};
use crate::error::{Error, Result, VkResultExt};
use crate::math::Mat3x4;
use ash::vk;
use std::rc::Rc;

/// Index data of a triangle geometry; `None` means three consecutive vertices per triangle.
#[derive(Clone, Debug)]
pub enum Indices {
    None,
    U16(Vec<u16>),
    U32(Vec<u32>),
}

/// One triangle geometry of a BLAS, vertices in `R32G32B32_SFLOAT`.
#[derive(Clone, Debug)]
pub struct TriangleGeometry {
    pub vertices: Vec<[f32; 3]>,
    pub indices: Indices,
    /// Applied to the vertices at build time (`transformData`).
    pub transform: Option<Mat3x4>,
    pub flags: vk::GeometryFlagsKHR,
}

impl TriangleGeometry {
    pub fn triangle_count(&self) -> usize {
        match &self.indices {
            Indices::None => self.vertices.len() / 3,
            Indices::U16(i) => i.len() / 3,
            Indices::U32(i) => i.len() / 3,
        }
    }

    /// Vertex indices of the triangle with primitive index `primitive`.
    pub fn triangle(&self, primitive: usize) -> [usize; 3] {
        let corner = |k: usize| match &self.indices {
            Indices::None => 3 * primitive + k,
            Indices::U16(i) => usize::from(i[3 * primitive + k]),
            Indices::U32(i) => i[3 * primitive + k] as usize,
        };
        [corner(0), corner(1), corner(2)]
    }

    fn index_type(&self) -> vk::IndexType {
        match self.indices {
            Indices::None => vk::IndexType::NONE_KHR,
            Indices::U16(_) => vk::IndexType::UINT16,
            Indices::U32(_) => vk::IndexType::UINT32,
        }
    }

    fn validate(&self) -> Result<()> {
        let index_count = match &self.indices {
            Indices::None => self.vertices.len(),
            Indices::U16(i) => i.len(),
            Indices::U32(i) => i.len(),
        };
        if index_count % 3 != 0 || self.triangle_count() == 0 {
            return Err(Error::msg(format!(
                "triangle geometry needs a positive multiple of 3 indices, has {index_count}"
            )));
        }
        let out_of_range = (0..self.triangle_count()).flat_map(|t| self.triangle(t)).any(|v| v >= self.vertices.len());
        if out_of_range {
            return Err(Error::msg("triangle geometry has an index past its last vertex"));
        }
        Ok(())
    }
}

/// One TLAS instance; `blas` indexes the slice of BLASes given to [`AccelerationStructure::build_top`].
#[derive(Clone, Debug)]
pub struct Instance {
    pub blas: usize,
    pub transform: Mat3x4,
    /// 24 bits (`instanceCustomIndex`).
    pub custom_index: u32,
    pub mask: u8,
    pub flags: vk::GeometryInstanceFlagsKHR,
    /// 24 bits (`instanceShaderBindingTableRecordOffset`).
    pub sbt_offset: u32,
}

/// One procedural geometry of a BLAS: axis-aligned boxes (`VkAabbPositionsKHR`, min then max).
#[derive(Clone, Debug)]
pub struct AabbGeometry {
    pub boxes: Vec<[f32; 6]>,
    pub flags: vk::GeometryFlagsKHR,
}

/// `VkAccelerationStructureInstanceKHR`, spelled out as plain bytes.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct InstanceRecord {
    transform: [f32; 12],
    custom_index_and_mask: u32,
    sbt_offset_and_flags: u32,
    blas_address: u64,
}

const _: () =
    assert!(std::mem::size_of::<InstanceRecord>() == std::mem::size_of::<vk::AccelerationStructureInstanceKHR>());

/// A built acceleration structure and the buffer that stores it.
pub struct AccelerationStructure {
    shared: Rc<Shared>,
    handle: vk::AccelerationStructureKHR,
    address: vk::DeviceAddress,
    // Dropped after `handle` is destroyed (fields drop after Drop::drop runs).
    _storage: Storage,
}

/// Where a structure's storage buffer gets its memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AsStorage {
    /// One allocation bound to the buffer (`vkBindBufferMemory`).
    #[default]
    Memory,
    /// A sparse buffer whose pages are bound one by one in reverse order to one allocation,
    /// so no two adjacent pages are adjacent in memory (needs `sparseBinding`).
    Sparse,
}

/// A structure's storage buffer and what backs it (the memory bound to a sparse one is
/// kept to be freed with it).
enum Storage {
    Plain(Buffer),
    Sparse(crate::sparse::SparseBuffer, #[allow(dead_code)] crate::sparse::Memory),
}

impl Storage {
    fn new(ctx: &Context, size: u64, placement: AsStorage) -> Result<Storage> {
        let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR;
        Ok(match placement {
            AsStorage::Memory => Storage::Plain(Buffer::for_device_writes(ctx, size, usage)?),
            AsStorage::Sparse => {
                let (b, m) = crate::sparse::SparseBuffer::bound_in_reverse(ctx, size, usage)?;
                Storage::Sparse(b, m)
            }
        })
    }

    fn handle(&self) -> vk::Buffer {
        match self {
            Storage::Plain(b) => b.handle(),
            Storage::Sparse(b, _) => b.handle(),
        }
    }
}

impl AccelerationStructure {
    /// Builds a BLAS holding `geometries`; geometry index i is `geometries[i]`.
    pub fn build_bottom(ctx: &Context, geometries: &[TriangleGeometry]) -> Result<Self> {
        Self::build_bottom_with(ctx, geometries, vk::BuildAccelerationStructureFlagsKHR::empty())
    }

    /// [`AccelerationStructure::build_bottom`] with extra build flags (e.g.
    /// `ALLOW_DATA_ACCESS` for ray-query position fetch).
    pub fn build_bottom_with(
        ctx: &Context,
        geometries: &[TriangleGeometry],
        flags: vk::BuildAccelerationStructureFlagsKHR,
    ) -> Result<Self> {
        Self::build_bottom_in(ctx, geometries, flags, AsStorage::Memory)
    }

    /// [`AccelerationStructure::build_bottom_with`] into storage placed as `placement` says.
    pub fn build_bottom_in(
        ctx: &Context,
        geometries: &[TriangleGeometry],
        flags: vk::BuildAccelerationStructureFlagsKHR,
        placement: AsStorage,
    ) -> Result<Self> {
        let input = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
        // The input buffers only have to live until the build has run.
        let mut inputs = Vec::new();
        let mut vk_geometries = Vec::new();
        let mut ranges = Vec::new();
        for g in geometries {
            g.validate()?;
            let vertices = Buffer::with_data(ctx, &g.vertices, input)?;
            let index_address = match &g.indices {
                Indices::None => None,
                Indices::U16(i) => Some(Buffer::with_data(ctx, i, input)?),
                Indices::U32(i) => Some(Buffer::with_data(ctx, i, input)?),
            };
            let transform = g.transform.map(|m| Buffer::with_data(ctx, &m.to_row_major(), input)).transpose()?;
            let address = |b: &Option<Buffer>| vk::DeviceOrHostAddressConstKHR {
                device_address: b.as_ref().map_or(0, Buffer::address),
            };
            let triangles = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
                .vertex_format(vk::Format::R32G32B32_SFLOAT)
                .vertex_data(vk::DeviceOrHostAddressConstKHR { device_address: vertices.address() })
                .vertex_stride(std::mem::size_of::<[f32; 3]>() as u64)
                .max_vertex(g.vertices.len() as u32 - 1)
                .index_type(g.index_type())
                .index_data(address(&index_address))
                .transform_data(address(&transform));
            vk_geometries.push(
                vk::AccelerationStructureGeometryKHR::default()
                    .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
                    .geometry(vk::AccelerationStructureGeometryDataKHR { triangles })
                    .flags(g.flags),
            );
            ranges
                .push(vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(g.triangle_count() as u32));
            inputs.extend([Some(vertices), index_address, transform].into_iter().flatten());
        }
        build(ctx, vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL, &vk_geometries, &ranges, flags, placement)
    }

    /// Builds a BLAS of procedural geometries; geometry index i is `geometries[i]`.
    pub fn build_bottom_aabbs(ctx: &Context, geometries: &[AabbGeometry]) -> Result<Self> {
        let input = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
        let mut inputs = Vec::new();
        let mut vk_geometries = Vec::new();
        let mut ranges = Vec::new();
        for g in geometries {
            if g.boxes.is_empty() {
                return Err(Error::msg("an AABB geometry needs at least one box"));
            }
            let boxes = Buffer::with_data(ctx, &g.boxes, input)?;
            let aabbs = vk::AccelerationStructureGeometryAabbsDataKHR::default()
                .data(vk::DeviceOrHostAddressConstKHR { device_address: boxes.address() })
                .stride(std::mem::size_of::<[f32; 6]>() as u64);
            vk_geometries.push(
                vk::AccelerationStructureGeometryKHR::default()
                    .geometry_type(vk::GeometryTypeKHR::AABBS)
                    .geometry(vk::AccelerationStructureGeometryDataKHR { aabbs })
                    .flags(g.flags),
            );
            ranges.push(vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(g.boxes.len() as u32));
            inputs.push(boxes);
        }
        build(
            ctx,
            vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
            &vk_geometries,
            &ranges,
            Default::default(),
            AsStorage::Memory,
        )
    }

    /// Builds a TLAS over `instances`; instance id i is `instances[i]`.
    pub fn build_top(ctx: &Context, blases: &[AccelerationStructure], instances: &[Instance]) -> Result<Self> {
        Self::build_top_in(ctx, blases, instances, AsStorage::Memory)
    }

    /// [`AccelerationStructure::build_top`] into storage placed as `placement` says.
    pub fn build_top_in(
        ctx: &Context,
        blases: &[AccelerationStructure],
        instances: &[Instance],
        placement: AsStorage,
    ) -> Result<Self> {
        let records = instances
            .iter()
            .map(|inst| {
                let blas = blases.get(inst.blas).ok_or_else(|| {
                    Error::msg(format!("instance refers to BLAS {} but only {} exist", inst.blas, blases.len()))
                })?;
                // Flags are 8 bits in the packed word; all defined instance flags fit.
                let flags = inst.flags.as_raw() & 0xff;
                Ok(InstanceRecord {
                    transform: inst.transform.to_row_major(),
                    custom_index_and_mask: (inst.custom_index & 0x00ff_ffff) | (u32::from(inst.mask) << 24),
                    sbt_offset_and_flags: (inst.sbt_offset & 0x00ff_ffff) | flags << 24,
                    blas_address: blas.address,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
        let instance_buffer = Buffer::with_data(ctx, &records, usage)?;
        let data = vk::AccelerationStructureGeometryInstancesDataKHR::default()
            .array_of_pointers(false)
            .data(vk::DeviceOrHostAddressConstKHR { device_address: instance_buffer.address() });
        let geometry = vk::AccelerationStructureGeometryKHR::default()
            .geometry_type(vk::GeometryTypeKHR::INSTANCES)
            .geometry(vk::AccelerationStructureGeometryDataKHR { instances: data });
        let range = vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(records.len() as u32);
        build(ctx, vk::AccelerationStructureTypeKHR::TOP_LEVEL, &[geometry], &[range], Default::default(), placement)
    }

    pub fn handle(&self) -> vk::AccelerationStructureKHR {
        self.handle
    }

    pub fn address(&self) -> vk::DeviceAddress {
        self.address
    }
}

impl Drop for AccelerationStructure {
    fn drop(&mut self) {
        // SAFETY: the owner no longer uses it and every submission has been waited for.
        unsafe { self.shared.accel.destroy_acceleration_structure(self.handle, None) };
    }
}

/// Sizes, allocates and builds one acceleration structure on the device, then waits.
fn build(
    ctx: &Context,
    ty: vk::AccelerationStructureTypeKHR,
    geometries: &[vk::AccelerationStructureGeometryKHR],
    ranges: &[vk::AccelerationStructureBuildRangeInfoKHR],
    flags: vk::BuildAccelerationStructureFlagsKHR,
    placement: AsStorage,
) -> Result<AccelerationStructure> {
    let shared = ctx.shared.clone();
    let accel = &shared.accel;
    let counts: Vec<u32> = ranges.iter().map(|r| r.primitive_count).collect();
    let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
        .ty(ty)
        .flags(vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE | flags)
        .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
        .geometries(geometries);
    let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
    // SAFETY: `info` describes valid geometry; `counts` has one entry per geometry.
    unsafe {
        accel.get_acceleration_structure_build_sizes(
            vk::AccelerationStructureBuildTypeKHR::DEVICE,
            &info,
            &counts,
            &mut sizes,
        )
    };

    let storage = Storage::new(ctx, sizes.acceleration_structure_size, placement)?;
    let create = vk::AccelerationStructureCreateInfoKHR::default()
        .buffer(storage.handle())
        .size(sizes.acceleration_structure_size)
        .ty(ty);
    // SAFETY: the storage buffer is bound to memory and large enough.
    let handle =
        unsafe { accel.create_acceleration_structure(&create, None) }.vk("vkCreateAccelerationStructureKHR")?;
    let address_info = vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(handle);
    // SAFETY: valid acceleration structure.
    let address = unsafe { accel.get_acceleration_structure_device_address(&address_info) };
    let built = AccelerationStructure { shared: shared.clone(), handle, address, _storage: storage };

    // Over-allocate so the scratch address can be rounded up to the required alignment.
    let align = shared.info.min_scratch_alignment;
    let scratch =
        Buffer::for_device_writes(ctx, sizes.build_scratch_size + align, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let info = info
        .dst_acceleration_structure(handle)
        .scratch_data(vk::DeviceOrHostAddressKHR { device_address: scratch.address().next_multiple_of(align) });
    ctx.submit_once(|cmd| {
        // The build's writes must be visible to later builds (a TLAS reads its BLASes) and
        // to ray queries in compute shaders, in this or later submissions.
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR)
            .dst_access_mask(vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR);
        // SAFETY: all addresses point into live buffers that outlive the wait in submit_once.
        unsafe {
            accel.cmd_build_acceleration_structures(cmd, &[info], &[ranges]);
            shared.device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
                vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR | vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            );
        }
    })?;
    Ok(built)
}
