//! Acceleration-structure behaviour conformance tests rely on, checked through the loader:
//!
//! 1. a device build reads its inputs when the queue executes it, not when it is recorded
//!    (the vertices are rewritten between recording and submission);
//! 2. a structure created on a buffer that has no memory yet works once memory is bound;
//! 3. a BLAS with zero primitives, a triangle whose vertex is NaN, and an instance whose
//!    reference is 0 are all legal and never hit.
//!
//! Each scene is traced with a ray-query shader and the committed hits are compared with
//! values solved by hand. Runs unchanged on any ICD (lavapipe too).
//! Usage: accel_check [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check failed)

use ash::vk;
use vortex_examples::{checks, memory_barrier, Buffer, ComputePipeline, Context, Error, Mat3x4, VkResultExt};

const TRACE: &[u8] = include_bytes!("../../shaders/trace_rays.spv");

type Check = Result<(), String>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// An acceleration structure with its storage (buffer and, when created unbound, the memory
/// bound to it later).
struct Accel<'a> {
    ctx: &'a Context,
    handle: vk::AccelerationStructureKHR,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    address: u64,
}

impl Drop for Accel<'_> {
    fn drop(&mut self) {
        // SAFETY: every submission using it has been waited for.
        unsafe {
            self.ctx.accel().destroy_acceleration_structure(self.handle, None);
            self.ctx.device().destroy_buffer(self.buffer, None);
            self.ctx.device().free_memory(self.memory, None);
        }
    }
}

/// Creates a structure of `size` bytes. With `bind_first` false the structure is created
/// while its buffer has no memory, and memory is bound afterwards.
fn create(
    ctx: &Context,
    ty: vk::AccelerationStructureTypeKHR,
    size: u64,
    bind_first: bool,
) -> Result<Accel<'_>, Error> {
    let d = ctx.device();
    let info = vk::BufferCreateInfo::default()
        .size(size)
        .usage(vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS);
    let mut a = Accel {
        ctx,
        handle: vk::AccelerationStructureKHR::null(),
        buffer: vk::Buffer::null(),
        memory: vk::DeviceMemory::null(),
        address: 0,
    };
    // SAFETY (this block): valid device; Drop releases whatever was created.
    unsafe {
        a.buffer = d.create_buffer(&info, None).vk("vkCreateBuffer")?;
        let create = vk::AccelerationStructureCreateInfoKHR::default().buffer(a.buffer).size(size).ty(ty);
        if !bind_first {
            a.handle =
                ctx.accel().create_acceleration_structure(&create, None).vk("vkCreateAccelerationStructureKHR")?;
        }
        let req = d.get_buffer_memory_requirements(a.buffer);
        let ty_index = ctx.memory_type(req.memory_type_bits).ok_or_else(|| Error::msg("no memory type"))?;
        let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(ty_index)
            .push_next(&mut flags);
        a.memory = d.allocate_memory(&alloc, None).vk("vkAllocateMemory")?;
        d.bind_buffer_memory(a.buffer, a.memory, 0).vk("vkBindBufferMemory")?;
        if bind_first {
            a.handle =
                ctx.accel().create_acceleration_structure(&create, None).vk("vkCreateAccelerationStructureKHR")?;
        }
        let addr = vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(a.handle);
        a.address = ctx.accel().get_acceleration_structure_device_address(&addr);
    }
    Ok(a)
}

fn sizes(ctx: &Context, info: &vk::AccelerationStructureBuildGeometryInfoKHR, counts: &[u32]) -> (u64, u64) {
    let mut s = vk::AccelerationStructureBuildSizesInfoKHR::default();
    // SAFETY: `info` describes valid geometry; one count per geometry.
    unsafe {
        ctx.accel().get_acceleration_structure_build_sizes(
            vk::AccelerationStructureBuildTypeKHR::DEVICE,
            info,
            counts,
            &mut s,
        )
    };
    (s.acceleration_structure_size, s.build_scratch_size)
}

fn triangles(vertices: &Buffer, count: u32) -> vk::AccelerationStructureGeometryKHR<'static> {
    let tri = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
        .vertex_format(vk::Format::R32G32B32_SFLOAT)
        .vertex_data(vk::DeviceOrHostAddressConstKHR { device_address: vertices.address() })
        .vertex_stride(12)
        .max_vertex(3 * count.max(1) - 1)
        .index_type(vk::IndexType::NONE_KHR);
    vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
        .flags(vk::GeometryFlagsKHR::OPAQUE)
        .geometry(vk::AccelerationStructureGeometryDataKHR { triangles: tri })
}

/// Records the build of `geometry` into `dst` (and the barrier that makes it visible).
fn record_build(
    ctx: &Context,
    cmd: vk::CommandBuffer,
    ty: vk::AccelerationStructureTypeKHR,
    geometry: &vk::AccelerationStructureGeometryKHR,
    count: u32,
    dst: &Accel,
    scratch: &Buffer,
) {
    let geometries = [*geometry];
    let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
        .ty(ty)
        .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
        .geometries(&geometries)
        .dst_acceleration_structure(dst.handle)
        .scratch_data(vk::DeviceOrHostAddressKHR { device_address: scratch.address().next_multiple_of(256) });
    let ranges = [vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(count)];
    // SAFETY: cmd is recording; every address points into a live buffer.
    unsafe { ctx.accel().cmd_build_acceleration_structures(cmd, &[info], &[&ranges]) };
    memory_barrier(
        ctx.device(),
        cmd,
        vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
        vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR | vk::PipelineStageFlags::COMPUTE_SHADER,
    );
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct InstanceRecord {
    transform: [f32; 12],
    custom_and_mask: u32,
    sbt_and_flags: u32,
    blas: u64,
}

fn instance(blas: u64, custom: u32, translate: [f32; 3]) -> InstanceRecord {
    let m = Mat3x4::translation(translate[0], translate[1], translate[2]);
    InstanceRecord { transform: m.to_row_major(), custom_and_mask: custom | 0xFF << 24, sbt_and_flags: 0, blas }
}

/// Builds a TLAS over `instances` and traces `rays` ((origin, dir) pairs, tmin 0, tmax 100);
/// returns (t, primitive, custom index) per ray, t = -1 for a miss.
fn trace(
    ctx: &Context,
    instances: &[InstanceRecord],
    rays: &[([f32; 3], [f32; 3])],
) -> Result<Vec<(f32, i32, i32)>, Error> {
    let ty = vk::AccelerationStructureTypeKHR::TOP_LEVEL;
    let inst_buf =
        Buffer::with_data(ctx, instances, vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR)?;
    let data = vk::AccelerationStructureGeometryInstancesDataKHR::default()
        .data(vk::DeviceOrHostAddressConstKHR { device_address: inst_buf.address() });
    let geometry = vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::INSTANCES)
        .geometry(vk::AccelerationStructureGeometryDataKHR { instances: data });
    let geometries = [geometry];
    let info = vk::AccelerationStructureBuildGeometryInfoKHR::default().ty(ty).geometries(&geometries);
    let n = instances.len() as u32;
    let (size, scratch_size) = sizes(ctx, &info, &[n]);
    let tlas = create(ctx, ty, size, true)?;
    let scratch = Buffer::new(ctx, scratch_size + 256, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let ray_data: Vec<[f32; 8]> = rays.iter().map(|(o, d)| [o[0], o[1], o[2], 0.0, d[0], d[1], d[2], 100.0]).collect();
    let ray_buf = Buffer::with_data(ctx, &ray_data, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let hits = Buffer::new(ctx, 16 * rays.len() as u64, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let bindings = [
        vk::DescriptorType::ACCELERATION_STRUCTURE_KHR,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let pipe = ComputePipeline::new(ctx, TRACE, &bindings, 4)?;
    pipe.bind_acceleration_structure_handle(0, tlas.handle);
    pipe.bind_storage_buffer(1, &ray_buf);
    pipe.bind_storage_buffer(2, &hits);
    let cmd = ctx.begin_commands()?;
    record_build(ctx, cmd, ty, &geometry, n, &tlas, &scratch);
    pipe.record_dispatch(cmd, &(rays.len() as u32).to_le_bytes(), [(rays.len() as u32).div_ceil(32), 1, 1]);
    ctx.submit_and_wait(cmd)?;
    let raw = hits.read::<u32>();
    Ok(raw.chunks_exact(4).map(|h| (f32::from_bits(h[0]), h[1] as i32, h[2] as i32)).collect())
}

fn near(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-4 * b.abs().max(1.0)
}

const DOWN: [f32; 3] = [0.0, 0.0, -1.0];

/// The build reads the vertices when it executes: they change after recording.
fn inputs_read_at_execution(ctx: &Context) -> Check {
    let ty = vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL;
    let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
    let at_record: [[f32; 3]; 3] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let vertices = Buffer::with_data(ctx, &at_record, usage).map_err(err)?;
    let geometry = triangles(&vertices, 1);
    let geometries = [geometry];
    let info = vk::AccelerationStructureBuildGeometryInfoKHR::default().ty(ty).geometries(&geometries);
    let (size, scratch_size) = sizes(ctx, &info, &[1]);
    let blas = create(ctx, ty, size, true).map_err(err)?;
    let scratch = Buffer::new(ctx, scratch_size + 256, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    let cmd = ctx.begin_commands().map_err(err)?;
    record_build(ctx, cmd, ty, &geometry, 1, &blas, &scratch);
    // After recording, before submission: the triangle moves to z = -5.
    let at_submit: [[f32; 3]; 3] = [[0.0, 0.0, -5.0], [1.0, 0.0, -5.0], [0.0, 1.0, -5.0]];
    vertices.write(&at_submit);
    ctx.submit_and_wait(cmd).map_err(err)?;
    let hits = trace(ctx, &[instance(blas.address, 7, [0.0; 3])], &[([0.25, 0.25, 1.0], DOWN)]).map_err(err)?;
    let (t, prim, custom) = hits[0];
    if !(near(t, 6.0) && prim == 0 && custom == 7) {
        return Err(format!("hit (t={t}, prim={prim}, custom={custom}); want t=6 (the vertices at submission)"));
    }
    Ok(())
}

/// A BLAS created before its buffer has memory works once memory is bound.
fn created_before_memory(ctx: &Context) -> Check {
    let ty = vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL;
    let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
    let verts: [[f32; 3]; 3] = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0]];
    let vertices = Buffer::with_data(ctx, &verts, usage).map_err(err)?;
    let geometry = triangles(&vertices, 1);
    let geometries = [geometry];
    let info = vk::AccelerationStructureBuildGeometryInfoKHR::default().ty(ty).geometries(&geometries);
    let (size, scratch_size) = sizes(ctx, &info, &[1]);
    let blas = create(ctx, ty, size, false).map_err(err)?;
    let scratch = Buffer::new(ctx, scratch_size + 256, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    let cmd = ctx.begin_commands().map_err(err)?;
    record_build(ctx, cmd, ty, &geometry, 1, &blas, &scratch);
    ctx.submit_and_wait(cmd).map_err(err)?;
    let hits = trace(ctx, &[instance(blas.address, 3, [0.0, 0.0, -2.0])], &[([0.5, 0.5, 1.0], DOWN)]).map_err(err)?;
    let (t, _, custom) = hits[0];
    if !(near(t, 3.0) && custom == 3) {
        return Err(format!("hit (t={t}, custom={custom}); want t=3, custom 3"));
    }
    Ok(())
}

/// Zero primitives, a NaN triangle and a null instance are legal and never hit; a normal
/// instance in the same TLAS still does.
fn inactive_geometry_misses(ctx: &Context) -> Check {
    let ty = vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL;
    let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
    let good: [[f32; 3]; 3] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let nan: [[f32; 3]; 3] = [[f32::NAN, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let mut blases = Vec::new();
    let mut keep = Vec::new();
    for (verts, count) in [(good, 1u32), (nan, 1), (good, 0)] {
        let vertices = Buffer::with_data(ctx, &verts, usage).map_err(err)?;
        let geometry = triangles(&vertices, count);
        let geometries = [geometry];
        let info = vk::AccelerationStructureBuildGeometryInfoKHR::default().ty(ty).geometries(&geometries);
        let (size, scratch_size) = sizes(ctx, &info, &[count]);
        let blas = create(ctx, ty, size, true).map_err(err)?;
        let scratch = Buffer::new(ctx, scratch_size + 256, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
        let cmd = ctx.begin_commands().map_err(err)?;
        record_build(ctx, cmd, ty, &geometry, count, &blas, &scratch);
        ctx.submit_and_wait(cmd).map_err(err)?;
        blases.push(blas);
        keep.push((vertices, scratch));
    }
    let instances = [
        instance(blases[0].address, 1, [0.0, 0.0, 0.0]),
        instance(blases[1].address, 2, [10.0, 0.0, 0.0]),
        instance(blases[2].address, 3, [20.0, 0.0, 0.0]),
        instance(0, 4, [30.0, 0.0, 0.0]),
    ];
    let rays =
        [([0.25, 0.25, 1.0], DOWN), ([10.25, 0.25, 1.0], DOWN), ([20.25, 0.25, 1.0], DOWN), ([30.25, 0.25, 1.0], DOWN)];
    let hits = trace(ctx, &instances, &rays).map_err(err)?;
    if !(near(hits[0].0, 1.0) && hits[0].2 == 1) {
        return Err(format!("the active instance: {:?}, want a hit at t=1 with custom index 1", hits[0]));
    }
    for (what, h) in ["NaN triangle", "zero-primitive BLAS", "null instance"].iter().zip(&hits[1..]) {
        if h.0 != -1.0 {
            return Err(format!("{what}: hit {h:?}, want a miss"));
        }
    }
    Ok(())
}

fn main() {
    let icd = checks::icd_from_args("accel_check");
    let ctx = checks::context_or_exit("accel_check", &icd);
    println!("device: {}", ctx.info().name);
    let checks: &[checks::Check<_>] = &[
        ("build inputs are read at execution", &inputs_read_at_execution),
        ("structure created before its memory", &created_before_memory),
        ("inactive triangles, empty BLAS and null instances miss", &inactive_geometry_misses),
    ];
    checks::run_checks_and_exit(&ctx, "acceleration-structure", checks, || 0);
}
