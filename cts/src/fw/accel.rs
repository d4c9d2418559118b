//! Acceleration structures described on the host and built on the device, in the roles of
//! dEQP's `BottomLevelAccelerationStructure` / `TopLevelAccelerationStructure`: geometry in
//! any AS vertex format, with or without indices and padding, arrays of pointers, GENERIC
//! creation, creation before the storage memory is bound, builds without geometries or
//! primitives. Builds are recorded into the caller's command buffer (the inputs stay alive
//! in the returned object until it is dropped, after the submission has finished).

use crate::case::{TestResult, VkCheck};
use crate::fw::mem::GARBAGE;
use crate::fw::{Buffer, Env, Transform, IDENTITY};
use ash::vk;
use half::f16;

/// One geometry of a BLAS. For triangles `vertices` are the vertices (three per triangle
/// without indices); for AABBs they come in (min, max) pairs.
#[derive(Clone, Debug)]
pub struct Geometry {
    pub triangles: bool,
    pub vertex_format: vk::Format,
    pub index_type: vk::IndexType,
    pub vertices: Vec<[f32; 3]>,
    pub indices: Vec<u32>,
    pub flags: vk::GeometryFlagsKHR,
    /// Padding blocks after each vertex (triangles, a vertex's size each) or each AABB
    /// (8 bytes each).
    pub padding: u32,
}

impl Geometry {
    pub fn triangles(vertices: Vec<[f32; 3]>) -> Geometry {
        Geometry {
            triangles: true,
            vertex_format: vk::Format::R32G32B32_SFLOAT,
            index_type: vk::IndexType::NONE_KHR,
            vertices,
            indices: Vec::new(),
            flags: vk::GeometryFlagsKHR::empty(),
            padding: 0,
        }
    }

    pub fn aabbs(corners: Vec<[f32; 3]>) -> Geometry {
        Geometry { triangles: false, ..Geometry::triangles(corners) }
    }

    /// `triangles` selects the kind (dEQP's `addGeometry(data, triangles)`).
    pub fn new(data: Vec<[f32; 3]>, triangles: bool) -> Geometry {
        if triangles {
            Geometry::triangles(data)
        } else {
            Geometry::aabbs(data)
        }
    }

    pub fn flags(mut self, flags: vk::GeometryFlagsKHR) -> Geometry {
        self.flags = flags;
        self
    }

    pub fn primitive_count(&self) -> u32 {
        let n = if !self.triangles {
            self.vertices.len() / 2
        } else if self.index_type != vk::IndexType::NONE_KHR {
            self.indices.len() / 3
        } else {
            self.vertices.len() / 3
        };
        n as u32
    }

    /// The build geometry reading vertices (or boxes) at `vaddr` and indices at `iaddr`:
    /// device addresses for a device build, host pointers for a host build.
    fn vk(&self, vaddr: u64, iaddr: u64) -> vk::AccelerationStructureGeometryKHR<'static> {
        if self.triangles {
            let tri = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
                .vertex_format(self.vertex_format)
                .vertex_data(vk::DeviceOrHostAddressConstKHR { device_address: vaddr })
                .vertex_stride(self.vertex_block() as u64)
                .max_vertex((self.vertices.len() as u32).saturating_sub(1))
                .index_type(self.index_type)
                .index_data(vk::DeviceOrHostAddressConstKHR { device_address: iaddr })
                .transform_data(vk::DeviceOrHostAddressConstKHR { device_address: 0 });
            vk::AccelerationStructureGeometryKHR::default()
                .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
                .geometry(vk::AccelerationStructureGeometryDataKHR { triangles: tri })
                .flags(self.flags)
        } else {
            let aabbs = vk::AccelerationStructureGeometryAabbsDataKHR::default()
                .data(vk::DeviceOrHostAddressConstKHR { device_address: vaddr })
                .stride(self.vertex_block() as u64);
            vk::AccelerationStructureGeometryKHR::default()
                .geometry_type(vk::GeometryTypeKHR::AABBS)
                .geometry(vk::AccelerationStructureGeometryDataKHR { aabbs })
                .flags(self.flags)
        }
    }

    fn vertex_block(&self) -> usize {
        if self.triangles {
            format_size(self.vertex_format) * (1 + self.padding as usize)
        } else {
            24 + 8 * self.padding as usize
        }
    }

    /// The vertex (or AABB) data as the device reads it.
    pub fn vertex_bytes(&self) -> Vec<u8> {
        let block = self.vertex_block();
        if self.triangles {
            let mut out = vec![0u8; block * self.vertices.len()];
            for (i, v) in self.vertices.iter().enumerate() {
                let enc = encode_vertex(self.vertex_format, v);
                out[i * block..i * block + enc.len()].copy_from_slice(&enc);
            }
            out
        } else {
            let boxes = self.vertices.len() / 2;
            let mut out = vec![0u8; block * boxes];
            for b in 0..boxes {
                let pair: Vec<u8> = self.vertices[2 * b]
                    .iter()
                    .chain(self.vertices[2 * b + 1].iter())
                    .flat_map(|f| f.to_le_bytes())
                    .collect();
                out[b * block..b * block + 24].copy_from_slice(&pair);
            }
            out
        }
    }

    pub fn index_bytes(&self) -> Vec<u8> {
        match self.index_type {
            vk::IndexType::UINT16 => self.indices.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect(),
            vk::IndexType::UINT32 => self.indices.iter().flat_map(|&i| i.to_le_bytes()).collect(),
            _ => Vec::new(),
        }
    }
}

/// Bytes per vertex of an AS vertex format.
pub fn format_size(format: vk::Format) -> usize {
    let (n, size) = format_layout(format);
    n * size
}

/// (components, bytes per component).
fn format_layout(format: vk::Format) -> (usize, usize) {
    use vk::Format as F;
    match format {
        F::R32G32_SFLOAT => (2, 4),
        F::R32G32B32_SFLOAT => (3, 4),
        F::R32G32B32A32_SFLOAT => (4, 4),
        F::R16G16_SFLOAT | F::R16G16_SNORM => (2, 2),
        F::R16G16B16_SFLOAT | F::R16G16B16_SNORM => (3, 2),
        F::R16G16B16A16_SFLOAT | F::R16G16B16A16_SNORM => (4, 2),
        F::R64G64_SFLOAT => (2, 8),
        F::R64G64B64_SFLOAT => (3, 8),
        F::R64G64B64A64_SFLOAT => (4, 8),
        F::R8G8_SNORM => (2, 1),
        F::R8G8B8_SNORM => (3, 1),
        F::R8G8B8A8_SNORM => (4, 1),
        other => panic!("{other:?} is not an acceleration-structure vertex format"),
    }
}

/// float -> signed normalized integer with `max` as 1.0: round half to even, saturate.
fn snorm(v: f32, max: i64) -> i64 {
    let scaled = v * max as f32;
    let r = scaled.round();
    let r = if (scaled - scaled.trunc()).abs() == 0.5 { 2.0 * (scaled / 2.0).round() } else { r };
    (r as i64).clamp(-max, max)
}

/// One vertex in `format`; a fourth component is 0 and a missing z is dropped.
pub fn encode_vertex(format: vk::Format, v: &[f32; 3]) -> Vec<u8> {
    use vk::Format as F;
    let (n, _) = format_layout(format);
    let comp = |i: usize| if i < 3 { v[i] } else { 0.0 };
    let mut out = Vec::new();
    for i in 0..n {
        let c = comp(i);
        match format {
            F::R32G32_SFLOAT | F::R32G32B32_SFLOAT | F::R32G32B32A32_SFLOAT => out.extend(c.to_le_bytes()),
            F::R16G16_SFLOAT | F::R16G16B16_SFLOAT | F::R16G16B16A16_SFLOAT => {
                out.extend(f16::from_f32(c).to_bits().to_le_bytes())
            }
            F::R16G16_SNORM | F::R16G16B16_SNORM | F::R16G16B16A16_SNORM => {
                out.extend((snorm(c, i16::MAX as i64) as i16).to_le_bytes())
            }
            F::R64G64_SFLOAT | F::R64G64B64_SFLOAT | F::R64G64B64A64_SFLOAT => out.extend(f64::from(c).to_le_bytes()),
            F::R8G8_SNORM | F::R8G8B8_SNORM | F::R8G8B8A8_SNORM => out.push(snorm(c, i8::MAX as i64) as i8 as u8),
            _ => unreachable!(),
        }
    }
    out
}

const INPUT: vk::BufferUsageFlags = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;

/// What dEQP's helpers vary about how a structure is created and built.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub build_flags: vk::BuildAccelerationStructureFlagsKHR,
    /// Created as `GENERIC_KHR`, built as top or bottom.
    pub generic: bool,
    /// Geometries (BLAS) or instances (TLAS) passed through arrays of pointers.
    pub array_of_pointers: bool,
    /// `vkCreateAccelerationStructureKHR` before the storage buffer has memory.
    pub create_before_bind: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            build_flags: vk::BuildAccelerationStructureFlagsKHR::empty(),
            generic: false,
            array_of_pointers: false,
            create_before_bind: false,
        }
    }
}

/// A built (or at least recorded) acceleration structure and everything its build reads.
pub struct Built {
    pub handle: vk::AccelerationStructureKHR,
    pub address: vk::DeviceAddress,
    pub size: u64,
    accel: ash::khr::acceleration_structure::Device,
    _storage: Buffer,
    _inputs: Vec<Buffer>,
}

impl Drop for Built {
    fn drop(&mut self) {
        // SAFETY: no submission using it is pending.
        unsafe { self.accel.destroy_acceleration_structure(self.handle, None) };
    }
}

pub type Blas = Built;
pub type Tlas = Built;

/// Storage + AS creation (optionally before the memory is bound), sized from `sizes`.
fn create(
    env: &Env,
    ty: vk::AccelerationStructureTypeKHR,
    size: u64,
    opts: &BuildOptions,
) -> TestResult<(vk::AccelerationStructureKHR, Buffer, vk::DeviceAddress)> {
    let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR;
    let mut storage = Buffer::unbound(env, size, usage)?;
    let create_ty = if opts.generic { vk::AccelerationStructureTypeKHR::GENERIC } else { ty };
    let info = vk::AccelerationStructureCreateInfoKHR::default().buffer(storage.handle).size(size).ty(create_ty);
    let handle = if opts.create_before_bind {
        // SAFETY: valid buffer; the spec allows creating before memory is bound as long
        // as it is bound before any use.
        let h =
            unsafe { env.accel.create_acceleration_structure(&info, None) }.vk("vkCreateAccelerationStructureKHR")?;
        storage.bind(env)?;
        h
    } else {
        storage.bind(env)?;
        unsafe { env.accel.create_acceleration_structure(&info, None) }.vk("vkCreateAccelerationStructureKHR")?
    };
    storage.fill(GARBAGE);
    let address = unsafe {
        env.accel.get_acceleration_structure_device_address(
            &vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(handle),
        )
    };
    Ok((handle, storage, address))
}

/// The geometry of one build: descriptions, the same by pointer, and the ranges.
struct BuildGeometry<'a> {
    ty: vk::AccelerationStructureTypeKHR,
    geometries: &'a [vk::AccelerationStructureGeometryKHR<'a>],
    pointers: &'a [*const vk::AccelerationStructureGeometryKHR<'a>],
    ranges: &'a [vk::AccelerationStructureBuildRangeInfoKHR],
}

impl<'a> BuildGeometry<'a> {
    /// The build info for `mode` (geometries as an array, or as an array of pointers when
    /// the options ask for it) and the sizes the driver asks for it on `at`.
    fn info_and_sizes(
        &self,
        env: &Env,
        opts: &BuildOptions,
        mode: vk::BuildAccelerationStructureModeKHR,
        at: vk::AccelerationStructureBuildTypeKHR,
    ) -> (vk::AccelerationStructureBuildGeometryInfoKHR<'a>, vk::AccelerationStructureBuildSizesInfoKHR<'static>) {
        let mut info =
            vk::AccelerationStructureBuildGeometryInfoKHR::default().ty(self.ty).flags(opts.build_flags).mode(mode);
        if opts.array_of_pointers && !self.pointers.is_empty() {
            info.geometry_count = self.pointers.len() as u32;
            info.pp_geometries = self.pointers.as_ptr();
        } else {
            info = info.geometries(self.geometries);
        }
        let counts: Vec<u32> = self.ranges.iter().map(|r| r.primitive_count).collect();
        let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
        // SAFETY: `info` points at geometry descriptions that outlive `self`.
        unsafe { env.accel.get_acceleration_structure_build_sizes(at, &info, &counts, &mut sizes) };
        (info, sizes)
    }
}

/// Records the build of `g` (scratch allocated here) and the barrier after it that makes it
/// visible to later builds and shaders.
fn record_build(
    env: &Env,
    cmd: vk::CommandBuffer,
    g: BuildGeometry,
    opts: &BuildOptions,
    mut inputs: Vec<Buffer>,
) -> TestResult<Built> {
    let (mut info, sizes) = g.info_and_sizes(
        env,
        opts,
        vk::BuildAccelerationStructureModeKHR::BUILD,
        vk::AccelerationStructureBuildTypeKHR::DEVICE,
    );
    let BuildGeometry { ty, ranges, .. } = g;
    let (handle, storage, address) = create(env, ty, sizes.acceleration_structure_size, opts)?;
    let align = env.min_scratch_alignment;
    let scratch = Buffer::new(env, sizes.build_scratch_size.max(1) + align, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    scratch.fill(GARBAGE);
    info = info
        .dst_acceleration_structure(handle)
        .scratch_data(vk::DeviceOrHostAddressKHR { device_address: scratch.address.next_multiple_of(align) });
    inputs.push(scratch);
    // SAFETY: every address points into a buffer kept alive in `inputs` / `storage`.
    unsafe {
        env.accel.cmd_build_acceleration_structures(cmd, &[info], &[ranges]);
    }
    env.barrier(
        cmd,
        vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
        vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR | vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR,
        vk::PipelineStageFlags::ALL_COMMANDS,
        vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR | vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR,
    );
    Ok(Built {
        handle,
        address,
        size: sizes.acceleration_structure_size,
        accel: env.accel.clone(),
        _storage: storage,
        _inputs: inputs,
    })
}

/// A bottom-level structure to build.
#[derive(Clone, Debug, Default)]
pub struct BlasBuilder {
    pub geometries: Vec<Geometry>,
    pub opts: BuildOptions,
    /// Build with geometryCount = 0.
    pub without_geometries: bool,
    /// Build every geometry with primitiveCount = 0.
    pub without_primitives: bool,
}

impl BlasBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, g: Geometry) -> &mut Self {
        self.geometries.push(g);
        self
    }

    /// Uploads the inputs and records the build into `cmd`.
    pub fn record(&self, env: &Env, cmd: vk::CommandBuffer) -> TestResult<Blas> {
        let mut inputs = Vec::new();
        let mut geoms = Vec::new();
        let mut ranges = Vec::new();
        if !self.without_geometries {
            for g in &self.geometries {
                let vb = Buffer::unbound(env, g.vertex_bytes().len().max(1) as u64, INPUT)?;
                let mut vb = vb;
                vb.bind(env)?;
                vb.fill(GARBAGE);
                vb.write(0, &g.vertex_bytes());
                let vaddr = vb.address;
                inputs.push(vb);
                let iaddr = if g.triangles && g.index_type != vk::IndexType::NONE_KHR {
                    let ib = Buffer::new(env, g.index_bytes().len().max(1) as u64, INPUT)?;
                    ib.fill(GARBAGE);
                    ib.write(0, &g.index_bytes());
                    let a = ib.address;
                    inputs.push(ib);
                    a
                } else {
                    0
                };
                geoms.push(g.vk(vaddr, iaddr));
                let count = if self.without_primitives { 0 } else { g.primitive_count() };
                ranges.push(vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(count));
            }
        }
        let ptrs: Vec<*const vk::AccelerationStructureGeometryKHR> = geoms.iter().map(|g| g as *const _).collect();
        let g = BuildGeometry {
            ty: vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
            geometries: &geoms,
            pointers: &ptrs,
            ranges: &ranges,
        };
        record_build(env, cmd, g, &self.opts, inputs)
    }
}

/// One TLAS instance. `blas` is the referenced structure's device address (0 makes the
/// instance inactive).
#[derive(Clone, Copy, Debug)]
pub struct Instance {
    pub blas: vk::DeviceAddress,
    pub transform: Transform,
    pub custom_index: u32,
    pub mask: u32,
    pub sbt_offset: u32,
    pub flags: vk::GeometryInstanceFlagsKHR,
}

impl Instance {
    pub fn new(blas: &Blas) -> Instance {
        Instance {
            blas: blas.address,
            transform: IDENTITY,
            custom_index: 0,
            mask: 0xFF,
            sbt_offset: 0,
            flags: vk::GeometryInstanceFlagsKHR::empty(),
        }
    }
    /// An instance referring to the structure at `address` (0: inactive).
    pub fn new_address(address: vk::DeviceAddress) -> Instance {
        Instance {
            blas: address,
            transform: IDENTITY,
            custom_index: 0,
            mask: 0xFF,
            sbt_offset: 0,
            flags: vk::GeometryInstanceFlagsKHR::empty(),
        }
    }

    pub fn transform(mut self, t: Transform) -> Self {
        self.transform = t;
        self
    }
    pub fn custom_index(mut self, i: u32) -> Self {
        self.custom_index = i;
        self
    }
    pub fn mask(mut self, m: u32) -> Self {
        self.mask = m;
        self
    }
    pub fn sbt_offset(mut self, o: u32) -> Self {
        self.sbt_offset = o;
        self
    }
    pub fn flags(mut self, f: vk::GeometryInstanceFlagsKHR) -> Self {
        self.flags = f;
        self
    }

    /// `VkAccelerationStructureInstanceKHR` as 64 bytes.
    pub fn bytes(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        let floats: Vec<u8> = self.transform.iter().flatten().flat_map(|f| f.to_le_bytes()).collect();
        out[..48].copy_from_slice(&floats);
        out[48..52].copy_from_slice(&((self.custom_index & 0xff_ffff) | ((self.mask & 0xff) << 24)).to_le_bytes());
        out[52..56]
            .copy_from_slice(&((self.sbt_offset & 0xff_ffff) | ((self.flags.as_raw() & 0xff) << 24)).to_le_bytes());
        out[56..64].copy_from_slice(&self.blas.to_le_bytes());
        out
    }
}

/// A top-level structure to build.
#[derive(Clone, Debug, Default)]
pub struct TlasBuilder {
    pub instances: Vec<Instance>,
    pub opts: BuildOptions,
    /// Build with primitiveCount = 0.
    pub without_primitives: bool,
    /// Pass the one INSTANCES geometry through `ppGeometries`.
    pub pp_geometries: bool,
}

impl TlasBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, i: Instance) -> &mut Self {
        self.instances.push(i);
        self
    }

    pub fn record(&self, env: &Env, cmd: vk::CommandBuffer) -> TestResult<Tlas> {
        self.with_geometry(env, |g, opts, inputs| record_build(env, cmd, g, opts, inputs))
    }

    /// Records an UPDATE build of `src` (built from this builder's instance count with
    /// ALLOW_UPDATE) from the current instances: into a new structure, or in place.
    pub fn record_update(&self, env: &Env, cmd: vk::CommandBuffer, src: &Tlas, in_place: bool) -> TestResult<Updated> {
        self.with_geometry(env, |g, opts, inputs| record_update(env, cmd, g, opts, inputs, src, in_place))
    }

    /// Uploads the instances and hands the one INSTANCES geometry to `f`.
    fn with_geometry<R>(
        &self,
        env: &Env,
        f: impl FnOnce(BuildGeometry, &BuildOptions, Vec<Buffer>) -> TestResult<R>,
    ) -> TestResult<R> {
        let records: Vec<u8> = self.instances.iter().flat_map(|i| i.bytes()).collect();
        let ib = Buffer::new(env, records.len().max(64) as u64, INPUT)?;
        ib.fill(GARBAGE);
        ib.write(0, &records);
        let mut inputs = vec![];
        let data_address = if self.opts.array_of_pointers {
            let ptrs: Vec<u64> = (0..self.instances.len() as u64).map(|i| ib.address + 64 * i).collect();
            let pb = Buffer::with_data(env, &ptrs, INPUT)?;
            let a = pb.address;
            inputs.push(pb);
            a
        } else {
            ib.address
        };
        inputs.push(ib);
        self.instances_geometry(data_address, |g, opts| f(g, opts, inputs))
    }

    /// The one INSTANCES geometry reading instance data (records, or pointers to them) at
    /// `data_address`, handed to `f` with the options to build it with.
    fn instances_geometry<R>(&self, data_address: u64, f: impl FnOnce(BuildGeometry, &BuildOptions) -> R) -> R {
        let data = vk::AccelerationStructureGeometryInstancesDataKHR::default()
            .array_of_pointers(self.opts.array_of_pointers)
            .data(vk::DeviceOrHostAddressConstKHR { device_address: data_address });
        let geom = [vk::AccelerationStructureGeometryKHR::default()
            .geometry_type(vk::GeometryTypeKHR::INSTANCES)
            .geometry(vk::AccelerationStructureGeometryDataKHR { instances: data })];
        let count = if self.without_primitives { 0 } else { self.instances.len() as u32 };
        let ranges = [vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(count)];
        // Instances through an array of pointers is a property of the instance data; how
        // the one INSTANCES geometry is passed is `pp_geometries`.
        let mut opts = self.opts.clone();
        opts.array_of_pointers = self.pp_geometries;
        let ptrs = [&geom[0] as *const vk::AccelerationStructureGeometryKHR];
        let g = BuildGeometry {
            ty: vk::AccelerationStructureTypeKHR::TOP_LEVEL,
            geometries: &geom,
            pointers: &ptrs,
            ranges: &ranges,
        };
        f(g, &opts)
    }
}

/// What an UPDATE build recorded: the new structure (none when updated in place) and the
/// inputs it reads, alive until the submission finished.
pub struct Updated {
    pub dst: Option<Built>,
    _inputs: Vec<Buffer>,
}

fn record_update(
    env: &Env,
    cmd: vk::CommandBuffer,
    g: BuildGeometry,
    opts: &BuildOptions,
    mut inputs: Vec<Buffer>,
    src: &Built,
    in_place: bool,
) -> TestResult<Updated> {
    let (mut info, sizes) = g.info_and_sizes(
        env,
        opts,
        vk::BuildAccelerationStructureModeKHR::UPDATE,
        vk::AccelerationStructureBuildTypeKHR::DEVICE,
    );
    let BuildGeometry { ty, ranges, .. } = g;
    let dst = if in_place {
        None
    } else {
        let plain = BuildOptions { generic: opts.generic, ..BuildOptions::default() };
        Some(Built::allocate(env, ty, sizes.acceleration_structure_size, &plain)?)
    };
    let align = env.min_scratch_alignment;
    let scratch = Buffer::new(env, sizes.update_scratch_size.max(1) + align, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    scratch.fill(GARBAGE);
    info = info
        .src_acceleration_structure(src.handle)
        .dst_acceleration_structure(dst.as_ref().map_or(src.handle, |d| d.handle))
        .scratch_data(vk::DeviceOrHostAddressKHR { device_address: scratch.address.next_multiple_of(align) });
    inputs.push(scratch);
    // SAFETY: every address points into a buffer kept alive in `inputs` or the structures.
    unsafe {
        env.accel.cmd_build_acceleration_structures(cmd, &[info], &[ranges]);
    }
    barrier_after_as_write(env, cmd);
    Ok(Updated { dst, _inputs: inputs })
}

impl Built {
    /// A structure of `size` bytes over fresh garbage-filled storage, not built: the
    /// destination of a copy, a compaction or a deserialization.
    pub fn allocate(
        env: &Env,
        ty: vk::AccelerationStructureTypeKHR,
        size: u64,
        opts: &BuildOptions,
    ) -> TestResult<Built> {
        let (handle, storage, address) = create(env, ty, size, opts)?;
        Ok(Built { handle, address, size, accel: env.accel.clone(), _storage: storage, _inputs: Vec::new() })
    }
}

/// The barrier after an acceleration-structure copy, compaction or deserialization: the
/// written structure is visible to later builds, copies and shaders.
fn barrier_after_as_write(env: &Env, cmd: vk::CommandBuffer) {
    let rw = vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR | vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR;
    env.barrier(
        cmd,
        vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
        rw,
        vk::PipelineStageFlags::ALL_COMMANDS,
        rw,
    );
}

/// `vkCmdCopyAccelerationStructureKHR` (CLONE or COMPACT) from `src` into `dst`, then the
/// barrier that makes `dst` usable.
pub fn record_copy(
    env: &Env,
    cmd: vk::CommandBuffer,
    src: &Built,
    dst: &Built,
    mode: vk::CopyAccelerationStructureModeKHR,
) {
    let info = vk::CopyAccelerationStructureInfoKHR::default().src(src.handle).dst(dst.handle).mode(mode);
    // SAFETY: both structures are alive (their owners outlive the submission).
    unsafe { env.accel.cmd_copy_acceleration_structure(cmd, &info) };
    barrier_after_as_write(env, cmd);
}

/// A query pool of acceleration-structure properties (compacted or serialization size).
pub struct QueryPool {
    device: ash::Device,
    pub handle: vk::QueryPool,
    pub ty: vk::QueryType,
    pub count: u32,
}

impl QueryPool {
    pub fn new(env: &Env, ty: vk::QueryType, count: u32) -> TestResult<QueryPool> {
        let info = vk::QueryPoolCreateInfo::default().query_type(ty).query_count(count);
        // SAFETY: valid device and create info.
        let handle = unsafe { env.device.create_query_pool(&info, None) }.vk("vkCreateQueryPool")?;
        Ok(QueryPool { device: env.device.clone(), handle, ty, count })
    }

    /// `vkCmdResetQueryPool` over the whole pool, then
    /// `vkCmdWriteAccelerationStructuresPropertiesKHR` for `structures` from query 0.
    pub fn record_write(&self, env: &Env, cmd: vk::CommandBuffer, structures: &[&Built]) {
        let handles: Vec<vk::AccelerationStructureKHR> = structures.iter().map(|b| b.handle).collect();
        // SAFETY: cmd is recording; the pool and structures are alive.
        unsafe {
            self.device.cmd_reset_query_pool(cmd, self.handle, 0, self.count);
            env.accel.cmd_write_acceleration_structures_properties(cmd, &handles, self.ty, self.handle, 0);
        }
    }

    /// The first `n` results as 64-bit values, waiting for them (`64_BIT | WAIT`).
    pub fn results(&self, n: u32) -> TestResult<Vec<u64>> {
        let mut out = vec![0u64; n as usize];
        let flags = vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT;
        // SAFETY: the pool holds at least n queries, all written by a finished submission.
        unsafe { self.device.get_query_pool_results(self.handle, 0, &mut out, flags) }.vk("vkGetQueryPoolResults")?;
        Ok(out)
    }
}

impl Drop for QueryPool {
    fn drop(&mut self) {
        // SAFETY: no submission using the pool is pending.
        unsafe { self.device.destroy_query_pool(self.handle, None) };
    }
}

/// Serialized acceleration-structure bytes in host-visible, device-address memory whose
/// address is 256-byte aligned (as `vkCmdCopy*Memory*` require).
pub struct Serialized {
    pub buffer: Buffer,
    offset: u64,
    pub size: u64,
}

/// Byte offset of `deserializedSize` in the serialization header (after the driver and
/// compatibility UUIDs and `serializedSize`).
pub const DESERIALIZED_SIZE_OFFSET: usize = 40;

impl Serialized {
    pub fn new(env: &Env, size: u64) -> TestResult<Serialized> {
        let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR;
        let buffer = Buffer::new(env, size + 256, usage)?;
        buffer.fill(GARBAGE);
        let offset = buffer.address.next_multiple_of(256) - buffer.address;
        Ok(Serialized { buffer, offset, size })
    }

    pub fn address(&self) -> vk::DeviceAddress {
        self.buffer.address + self.offset
    }

    pub fn bytes(&self) -> Vec<u8> {
        let all = self.buffer.bytes();
        all[self.offset as usize..(self.offset + self.size) as usize].to_vec()
    }

    /// The `deserializedSize` field of the header (what the host reads to size the
    /// structure it deserializes into).
    pub fn deserialized_size(&self) -> u64 {
        let b = self.bytes();
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[DESERIALIZED_SIZE_OFFSET..DESERIALIZED_SIZE_OFFSET + 8]);
        u64::from_le_bytes(w)
    }
}

/// `vkCmdCopyAccelerationStructureToMemoryKHR` (SERIALIZE) of `src` into `dst`, with the
/// barrier that makes the bytes visible to the host and to later deserializations.
pub fn record_serialize(env: &Env, cmd: vk::CommandBuffer, src: &Built, dst: &Serialized) {
    let info = vk::CopyAccelerationStructureToMemoryInfoKHR::default()
        .src(src.handle)
        .dst(vk::DeviceOrHostAddressKHR { device_address: dst.address() })
        .mode(vk::CopyAccelerationStructureModeKHR::SERIALIZE);
    // SAFETY: the structure and buffer are alive; the buffer holds the serialization size.
    unsafe { env.accel.cmd_copy_acceleration_structure_to_memory(cmd, &info) };
    env.barrier(
        cmd,
        vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
        vk::AccessFlags::TRANSFER_WRITE | vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR,
        vk::PipelineStageFlags::HOST | vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
        vk::AccessFlags::HOST_READ | vk::AccessFlags::TRANSFER_READ,
    );
}

/// `vkCmdCopyMemoryToAccelerationStructureKHR` (DESERIALIZE) from `src` into `dst`.
pub fn record_deserialize(env: &Env, cmd: vk::CommandBuffer, src: &Serialized, dst: &Built) {
    let info = vk::CopyMemoryToAccelerationStructureInfoKHR::default()
        .src(vk::DeviceOrHostAddressConstKHR { device_address: src.address() })
        .dst(dst.handle)
        .mode(vk::CopyAccelerationStructureModeKHR::DESERIALIZE);
    // SAFETY: the buffer and structure are alive.
    unsafe { env.accel.cmd_copy_memory_to_acceleration_structure(cmd, &info) };
    barrier_after_as_write(env, cmd);
}

// ---------------------------------------------------------------------------------------
// Host builds and host commands (`accelerationStructureHostCommands`, dEQP's `cpu_built`):
// inputs are host pointers, instances name their BLASes by handle value, and copies,
// compaction and serialization run on the host, optionally as deferred operations joined by
// several threads (dEQP's host_threading).

/// How a host command runs: at call time, or as a deferred operation joined by this many
/// threads (0: as many as `vkGetDeferredOperationMaxConcurrencyKHR` says, capped at 256).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostOp {
    Now,
    Deferred(u32),
}

/// Runs a host command `call` (given a deferred operation, or null) as `op` says, the way
/// dEQP's `finishDeferredOperation` does: joining threads retry on `VK_THREAD_IDLE_KHR`,
/// wait for the result on `VK_THREAD_DONE_KHR`, and at least one must see `VK_SUCCESS`.
pub fn host_command(env: &Env, op: HostOp, call: impl FnOnce(vk::DeferredOperationKHR) -> vk::Result) -> TestResult {
    use ash::vk::Handle;
    let threads = match op {
        HostOp::Now => {
            let r = call(vk::DeferredOperationKHR::null());
            if r != vk::Result::SUCCESS {
                crate::fail!("host command failed: {r:?}");
            }
            return Ok(());
        }
        HostOp::Deferred(n) => n,
    };
    let d = ash::khr::deferred_host_operations::Device::new(&env.instance, &env.device);
    // SAFETY (this function): a valid device; the operation is destroyed once complete.
    let dop = unsafe { d.create_deferred_operation(None) }.vk("vkCreateDeferredOperationKHR")?;
    let fp = d.fp().clone();
    let dev = env.device.handle();
    let r = call(dop);
    let out = match r {
        vk::Result::OPERATION_NOT_DEFERRED_KHR | vk::Result::SUCCESS => {
            unsafe { (fp.get_deferred_operation_result_khr)(dev, dop) }.result().vk("vkGetDeferredOperationResultKHR")
        }
        vk::Result::OPERATION_DEFERRED_KHR => {
            let max = unsafe { (fp.get_deferred_operation_max_concurrency_khr)(dev, dop) };
            if max == 0 {
                crate::fail!("vkGetDeferredOperationMaxConcurrencyKHR must not return 0");
            }
            let n = if threads == 0 { max.min(256) } else { threads };
            let (op_raw, dev_raw) = (dop.as_raw(), dev.as_raw());
            let joins: Vec<_> = (0..n)
                .map(|_| {
                    let fp = fp.clone();
                    std::thread::spawn(move || {
                        let (op, dev) = (vk::DeferredOperationKHR::from_raw(op_raw), vk::Device::from_raw(dev_raw));
                        // SAFETY: the operation and device outlive the joins (joined below).
                        unsafe {
                            let mut r = (fp.deferred_operation_join_khr)(dev, op);
                            while r == vk::Result::THREAD_IDLE_KHR {
                                std::thread::yield_now();
                                r = (fp.deferred_operation_join_khr)(dev, op);
                            }
                            match r {
                                vk::Result::SUCCESS => (fp.get_deferred_operation_result_khr)(dev, op),
                                vk::Result::THREAD_DONE_KHR => loop {
                                    let res = (fp.get_deferred_operation_result_khr)(dev, op);
                                    if res != vk::Result::NOT_READY {
                                        break if res == vk::Result::SUCCESS {
                                            vk::Result::THREAD_DONE_KHR
                                        } else {
                                            res
                                        };
                                    }
                                    std::thread::yield_now();
                                },
                                e => e,
                            }
                        }
                    })
                })
                .collect();
            let results: Vec<vk::Result> =
                joins.into_iter().map(|j| j.join().unwrap_or(vk::Result::ERROR_UNKNOWN)).collect();
            if let Some(e) = results.iter().find(|r| r.as_raw() < 0) {
                Err(crate::case::TestError::Fail(format!("deferred host operation failed: {e:?}")))
            } else if !results.contains(&vk::Result::SUCCESS) {
                Err(crate::case::TestError::Fail(format!("Neither reported VK_SUCCESS: {results:?}")))
            } else {
                Ok(())
            }
        }
        e => Err(crate::case::TestError::Fail(format!("host command failed: {e:?}"))),
    };
    unsafe { d.destroy_deferred_operation(dop, None) };
    out
}

/// Host memory for a host build's inputs and scratch (8-byte aligned).
fn host_blob(bytes: &[u8]) -> Vec<u64> {
    let mut v = vec![0u64; bytes.len().div_ceil(8).max(1)];
    bytemuck::cast_slice_mut::<u64, u8>(&mut v)[..bytes.len()].copy_from_slice(bytes);
    v
}

/// Builds `info` (whose addresses are host pointers) on the host at call time into a new
/// structure sized by a HOST size query.
fn host_build(env: &Env, g: BuildGeometry, opts: &BuildOptions) -> TestResult<Built> {
    match host_build_or_update(env, g, opts, None)? {
        Updated { dst: Some(b), .. } => Ok(b),
        _ => crate::fail!("host build made no structure"),
    }
}

/// A host BUILD (`update` None) or UPDATE of `src` (`Some((src, in_place))`): into a new
/// structure (returned in `dst`), or in place (`dst` None).
fn host_build_or_update(
    env: &Env,
    g: BuildGeometry,
    opts: &BuildOptions,
    update: Option<(&Built, bool)>,
) -> TestResult<Updated> {
    let mode = if update.is_some() {
        vk::BuildAccelerationStructureModeKHR::UPDATE
    } else {
        vk::BuildAccelerationStructureModeKHR::BUILD
    };
    let (mut info, sizes) = g.info_and_sizes(env, opts, mode, vk::AccelerationStructureBuildTypeKHR::HOST);
    let BuildGeometry { ty, ranges, .. } = g;
    let dst = match update {
        Some((_, true)) => None,
        Some((_, false)) => {
            let plain = BuildOptions { generic: opts.generic, ..BuildOptions::default() };
            Some(Built::allocate(env, ty, sizes.acceleration_structure_size, &plain)?)
        }
        None => Some(Built::allocate(env, ty, sizes.acceleration_structure_size, opts)?),
    };
    let scratch_size = if update.is_some() { sizes.update_scratch_size } else { sizes.build_scratch_size };
    let mut scratch = vec![GARBAGE as u64 * 0x0101_0101_0101_0101; (scratch_size as usize).div_ceil(8).max(1)];
    let dst_handle = match (&dst, update) {
        (Some(d), _) => d.handle,
        (None, Some((src, _))) => src.handle,
        (None, None) => crate::fail!("no destination"),
    };
    if let Some((src, _)) = update {
        info = info.src_acceleration_structure(src.handle);
    }
    info = info
        .dst_acceleration_structure(dst_handle)
        .scratch_data(vk::DeviceOrHostAddressKHR { host_address: scratch.as_mut_ptr().cast() });
    let range_ptrs = [ranges.as_ptr()];
    // SAFETY: every host address points into memory alive until the call returns.
    let r = unsafe {
        (env.accel.fp().build_acceleration_structures_khr)(
            env.device.handle(),
            vk::DeferredOperationKHR::null(),
            1,
            &info,
            range_ptrs.as_ptr(),
        )
    };
    if r != vk::Result::SUCCESS {
        crate::fail!("vkBuildAccelerationStructuresKHR failed: {r:?}");
    }
    Ok(Updated { dst, _inputs: Vec::new() })
}

impl BlasBuilder {
    /// Builds on the host now (inputs in host memory).
    pub fn build_host(&self, env: &Env) -> TestResult<Blas> {
        let mut keep: Vec<Vec<u64>> = Vec::new();
        let mut geoms = Vec::new();
        let mut ranges = Vec::new();
        if !self.without_geometries {
            for g in &self.geometries {
                let vb = host_blob(&g.vertex_bytes());
                let vaddr = vb.as_ptr() as u64;
                keep.push(vb);
                let iaddr = if g.triangles && g.index_type != vk::IndexType::NONE_KHR {
                    let ib = host_blob(&g.index_bytes());
                    let a = ib.as_ptr() as u64;
                    keep.push(ib);
                    a
                } else {
                    0
                };
                geoms.push(g.vk(vaddr, iaddr));
                let count = if self.without_primitives { 0 } else { g.primitive_count() };
                ranges.push(vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(count));
            }
        }
        let ptrs: Vec<*const vk::AccelerationStructureGeometryKHR> = geoms.iter().map(|g| g as *const _).collect();
        let g = BuildGeometry {
            ty: vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
            geometries: &geoms,
            pointers: &ptrs,
            ranges: &ranges,
        };
        let b = host_build(env, g, &self.opts);
        drop(keep);
        b
    }
}

impl TlasBuilder {
    /// Builds on the host now. Instances refer to BLASes by handle value: each instance's
    /// device address is looked up among `blases` (an address not among them, such as 0,
    /// is kept as it is).
    pub fn build_host(&self, env: &Env, blases: &[&Blas]) -> TestResult<Tlas> {
        self.with_host_geometry(blases, |g, opts| host_build(env, g, opts))
    }

    /// An UPDATE build of `src` on the host now, from the current instances (named like
    /// [`TlasBuilder::build_host`] does): into a new structure, or in place.
    pub fn update_host(&self, env: &Env, src: &Tlas, in_place: bool, blases: &[&Blas]) -> TestResult<Updated> {
        self.with_host_geometry(blases, |g, opts| host_build_or_update(env, g, opts, Some((src, in_place))))
    }

    /// The instances in host memory, BLASes by handle value, as the one INSTANCES geometry.
    fn with_host_geometry<R>(
        &self,
        blases: &[&Blas],
        f: impl FnOnce(BuildGeometry, &BuildOptions) -> TestResult<R>,
    ) -> TestResult<R> {
        use ash::vk::Handle;
        let records: Vec<u8> = self
            .instances
            .iter()
            .flat_map(|i| {
                let mut i = *i;
                if let Some(b) = blases.iter().find(|b| b.address == i.blas && i.blas != 0) {
                    i.blas = b.handle.as_raw();
                }
                i.bytes()
            })
            .collect();
        let ib = host_blob(&records);
        let ptrs: Vec<u64> = (0..self.instances.len() as u64).map(|k| ib.as_ptr() as u64 + 64 * k).collect();
        let data_address = if self.opts.array_of_pointers { ptrs.as_ptr() as u64 } else { ib.as_ptr() as u64 };
        let t = self.instances_geometry(data_address, f);
        drop((ib, ptrs));
        t
    }
}

/// `vkWriteAccelerationStructuresPropertiesKHR` for one structure.
pub fn host_property(env: &Env, a: &Built, ty: vk::QueryType) -> TestResult<u64> {
    let mut v = 0u64;
    // SAFETY: one live structure, 8 bytes of output with an 8-byte stride.
    let r = unsafe {
        (env.accel.fp().write_acceleration_structures_properties_khr)(
            env.device.handle(),
            1,
            &a.handle,
            ty,
            8,
            (&mut v as *mut u64).cast(),
            8,
        )
    };
    r.result().vk("vkWriteAccelerationStructuresPropertiesKHR")?;
    Ok(v)
}

/// A new structure of `ty` and `size` bytes (on the options' buffer layout) copied from
/// `src` on the host with `mode` (clone or compact).
pub fn host_copy(
    env: &Env,
    src: &Built,
    ty: vk::AccelerationStructureTypeKHR,
    size: u64,
    mode: vk::CopyAccelerationStructureModeKHR,
    op: HostOp,
) -> TestResult<Built> {
    let (handle, storage, address) = create(env, ty, size, &BuildOptions::default())?;
    let info = vk::CopyAccelerationStructureInfoKHR::default().src(src.handle).dst(handle).mode(mode);
    let dev = env.device.handle();
    // SAFETY: live structures.
    let r = host_command(env, op, |dop| unsafe { (env.accel.fp().copy_acceleration_structure_khr)(dev, dop, &info) });
    let built = Built { handle, address, size, accel: env.accel.clone(), _storage: storage, _inputs: Vec::new() };
    r.map(|_| built)
}

/// Serializes `src` into host memory (its serialization size, queried on the host).
pub fn host_serialize(env: &Env, src: &Built, op: HostOp) -> TestResult<Vec<u64>> {
    let size = host_property(env, src, vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_SIZE_KHR)?;
    let mut blob = vec![GARBAGE as u64 * 0x0101_0101_0101_0101; (size as usize).div_ceil(8)];
    let info = vk::CopyAccelerationStructureToMemoryInfoKHR::default()
        .src(src.handle)
        .dst(vk::DeviceOrHostAddressKHR { host_address: blob.as_mut_ptr().cast() })
        .mode(vk::CopyAccelerationStructureModeKHR::SERIALIZE);
    let dev = env.device.handle();
    // SAFETY: the blob holds the serialization size.
    host_command(env, op, |dop| unsafe {
        (env.accel.fp().copy_acceleration_structure_to_memory_khr)(dev, dop, &info)
    })?;
    Ok(blob)
}

/// A new structure of `ty` deserialized from `blob` on the host, sized by the
/// deserialized size the blob's header gives (byte offset 40).
pub fn host_deserialize(
    env: &Env,
    blob: &[u64],
    ty: vk::AccelerationStructureTypeKHR,
    op: HostOp,
) -> TestResult<Built> {
    let size = blob[5];
    let (handle, storage, address) = create(env, ty, size, &BuildOptions::default())?;
    let info = vk::CopyMemoryToAccelerationStructureInfoKHR::default()
        .src(vk::DeviceOrHostAddressConstKHR { host_address: blob.as_ptr().cast() })
        .dst(handle)
        .mode(vk::CopyAccelerationStructureModeKHR::DESERIALIZE);
    let dev = env.device.handle();
    // SAFETY: a serialized structure at the source.
    let r = host_command(env, op, |dop| unsafe {
        (env.accel.fp().copy_memory_to_acceleration_structure_khr)(dev, dop, &info)
    });
    let built = Built { handle, address, size, accel: env.accel.clone(), _storage: storage, _inputs: Vec::new() };
    r.map(|_| built)
}
