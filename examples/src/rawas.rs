//! Acceleration structures at the level of the Vulkan calls, for the checks that exercise
//! every way of building, updating, copying, compacting, serializing and querying them:
//! structures on their own buffers, builds with explicit type/flags/mode on the device or
//! on the host (optionally as a deferred operation joined by several threads), and a
//! ray-query tracer that reports the committed hit of each ray.

use crate::buffer::Buffer;
use crate::context::{Context, Shared};
use crate::error::{Error, Result, VkResultExt};
use crate::pipeline::{memory_barrier, ComputePipeline};
use ash::vk::{self, Handle};
use std::rc::Rc;

const TRACE: &[u8] = include_bytes!("../shaders/trace_rays.spv");

/// Where a build (or copy) runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Where {
    Device,
    /// On the host at call time.
    Host,
    /// On the host as a deferred operation joined by this many threads.
    Deferred(u32),
}

impl Where {
    pub fn build_type(self) -> vk::AccelerationStructureBuildTypeKHR {
        match self {
            Where::Device => vk::AccelerationStructureBuildTypeKHR::DEVICE,
            _ => vk::AccelerationStructureBuildTypeKHR::HOST,
        }
    }

    pub fn host(self) -> bool {
        self != Where::Device
    }
}

/// An acceleration structure on a buffer of its own (host-visible, so host commands can
/// write it), or on a buffer the caller keeps (a sparse one, say).
pub struct Accel {
    shared: Rc<Shared>,
    pub handle: vk::AccelerationStructureKHR,
    /// Its own buffer (`None`: on the caller's).
    _storage: Option<Buffer>,
    pub address: u64,
    pub size: u64,
    pub ty: vk::AccelerationStructureTypeKHR,
}

impl Accel {
    pub fn new(ctx: &Context, ty: vk::AccelerationStructureTypeKHR, size: u64) -> Result<Accel> {
        let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR;
        let buffer = Buffer::new(ctx, size, usage)?;
        let mut a = Accel::on_buffer(ctx, ty, buffer.handle(), 0, size)?;
        a._storage = Some(buffer);
        Ok(a)
    }

    /// A structure of `size` bytes at `offset` (a multiple of 256) of `buffer`, which must
    /// outlive it.
    pub fn on_buffer(
        ctx: &Context,
        ty: vk::AccelerationStructureTypeKHR,
        buffer: vk::Buffer,
        offset: u64,
        size: u64,
    ) -> Result<Accel> {
        let create = vk::AccelerationStructureCreateInfoKHR::default().buffer(buffer).offset(offset).size(size).ty(ty);
        // SAFETY: the buffer is large enough (the caller's contract) and has storage usage.
        let handle = unsafe { ctx.accel().create_acceleration_structure(&create, None) }
            .vk("vkCreateAccelerationStructureKHR")?;
        let info = vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(handle);
        // SAFETY: a valid structure.
        let address = unsafe { ctx.accel().get_acceleration_structure_device_address(&info) };
        Ok(Accel { shared: ctx.shared.clone(), handle, _storage: None, address, size, ty })
    }

    /// What an instance stores to reference this BLAS: its device address for device
    /// builds, its handle for host builds.
    pub fn reference(&self, at: Where) -> u64 {
        if at.host() {
            self.handle.as_raw()
        } else {
            self.address
        }
    }
}

impl Drop for Accel {
    fn drop(&mut self) {
        // SAFETY: every submission using it has been waited for.
        unsafe { self.shared.accel.destroy_acceleration_structure(self.handle, None) };
    }
}

/// Input data for a build: a device buffer (device builds) or host memory (host builds).
pub struct Blob {
    buffer: Option<Buffer>,
    /// Host data (8-byte aligned); cells because the host may rewrite it while builds
    /// refer to it.
    host: Box<[std::cell::Cell<u64>]>,
}

impl Blob {
    pub fn new(ctx: &Context, bytes: &[u8], at: Where) -> Result<Blob> {
        if at.host() {
            let host: Box<[std::cell::Cell<u64>]> =
                (0..bytes.len().div_ceil(8).max(1)).map(|_| Default::default()).collect();
            let blob = Blob { buffer: None, host };
            blob.write(bytes);
            Ok(blob)
        } else {
            let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
            let buffer = Buffer::with_data(ctx, if bytes.is_empty() { &[0u8] } else { bytes }, usage)?;
            Ok(Blob { buffer: Some(buffer), host: Box::new([]) })
        }
    }

    pub fn address(&self) -> u64 {
        match &self.buffer {
            Some(b) => b.address(),
            None => self.host.as_ptr() as u64,
        }
    }

    pub fn at(&self) -> vk::DeviceOrHostAddressConstKHR {
        vk::DeviceOrHostAddressConstKHR { device_address: self.address() }
    }

    /// Overwrites the start of the data.
    pub fn write(&self, bytes: &[u8]) {
        match &self.buffer {
            Some(b) => b.write(bytes),
            None => {
                assert!(bytes.len() <= 8 * self.host.len());
                // SAFETY: the cells own at least bytes.len() bytes; cells allow writes
                // through a shared reference, and nothing reads them meanwhile.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.host.as_ptr() as *mut u8, bytes.len()) }
            }
        }
    }
}

/// `VkAccelerationStructureInstanceKHR`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct InstanceRecord {
    pub transform: [f32; 12],
    pub custom_and_mask: u32,
    pub sbt_and_flags: u32,
    pub blas: u64,
}

impl InstanceRecord {
    pub fn new(blas: u64, custom: u32, translate: [f32; 3]) -> InstanceRecord {
        let t = translate;
        InstanceRecord {
            transform: [1.0, 0.0, 0.0, t[0], 0.0, 1.0, 0.0, t[1], 0.0, 0.0, 1.0, t[2]],
            custom_and_mask: custom | 0xff << 24,
            sbt_and_flags: 0,
            blas,
        }
    }
}

/// A build's geometries with their data kept alive.
pub struct Geometries {
    pub geometries: Vec<vk::AccelerationStructureGeometryKHR<'static>>,
    pub ranges: Vec<vk::AccelerationStructureBuildRangeInfoKHR>,
    pub blobs: Vec<Blob>,
}

impl Geometries {
    pub fn new() -> Geometries {
        Geometries { geometries: Vec::new(), ranges: Vec::new(), blobs: Vec::new() }
    }

    pub fn counts(&self) -> Vec<u32> {
        self.ranges.iter().map(|r| r.primitive_count).collect()
    }

    /// Non-indexed R32G32B32_SFLOAT triangles.
    pub fn triangles(
        &mut self,
        ctx: &Context,
        at: Where,
        tris: &[[[f32; 3]; 3]],
        flags: vk::GeometryFlagsKHR,
    ) -> Result<()> {
        let bytes: Vec<u8> = tris.iter().flatten().flatten().flat_map(|v| v.to_le_bytes()).collect();
        let n = tris.len() as u32;
        self.triangles_raw(ctx, at, &bytes, vk::Format::R32G32B32_SFLOAT, 12, (3 * n).max(1) - 1, None, n, flags)
    }

    /// Triangles from raw vertex bytes (any format and stride), optionally indexed.
    #[allow(clippy::too_many_arguments)]
    pub fn triangles_raw(
        &mut self,
        ctx: &Context,
        at: Where,
        vertices: &[u8],
        format: vk::Format,
        stride: u64,
        max_vertex: u32,
        index: Option<(vk::IndexType, &[u8])>,
        count: u32,
        flags: vk::GeometryFlagsKHR,
    ) -> Result<()> {
        let vb = Blob::new(ctx, vertices, at)?;
        let mut tri = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
            .vertex_format(format)
            .vertex_data(vb.at())
            .vertex_stride(stride)
            .max_vertex(max_vertex)
            .index_type(vk::IndexType::NONE_KHR);
        self.blobs.push(vb);
        if let Some((ty, data)) = index {
            let ib = Blob::new(ctx, data, at)?;
            tri = tri.index_type(ty).index_data(ib.at());
            self.blobs.push(ib);
        }
        self.geometries.push(
            vk::AccelerationStructureGeometryKHR::default()
                .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
                .flags(flags)
                .geometry(vk::AccelerationStructureGeometryDataKHR { triangles: tri }),
        );
        self.ranges.push(vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(count));
        Ok(())
    }

    /// `VkAabbPositionsKHR` boxes with `stride`.
    pub fn aabbs(&mut self, ctx: &Context, at: Where, boxes: &[[f32; 6]], stride: u64) -> Result<()> {
        let mut bytes = vec![0u8; boxes.len() * stride as usize];
        for (i, b) in boxes.iter().enumerate() {
            for (k, v) in b.iter().enumerate() {
                let o = i * stride as usize + 4 * k;
                bytes[o..o + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        let blob = Blob::new(ctx, &bytes, at)?;
        let data = vk::AccelerationStructureGeometryAabbsDataKHR::default().data(blob.at()).stride(stride);
        self.blobs.push(blob);
        self.geometries.push(
            vk::AccelerationStructureGeometryKHR::default()
                .geometry_type(vk::GeometryTypeKHR::AABBS)
                .flags(vk::GeometryFlagsKHR::OPAQUE)
                .geometry(vk::AccelerationStructureGeometryDataKHR { aabbs: data }),
        );
        self.ranges.push(vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(boxes.len() as u32));
        Ok(())
    }

    /// Instances, as an array or (`pointers`) as an array of addresses of records.
    pub fn instances(&mut self, ctx: &Context, at: Where, records: &[InstanceRecord], pointers: bool) -> Result<()> {
        let data = if pointers {
            let mut addrs = Vec::new();
            for r in records {
                let b = Blob::new(ctx, bytemuck::bytes_of(r), at)?;
                addrs.push(b.address());
                self.blobs.push(b);
            }
            Blob::new(ctx, bytemuck::cast_slice(&addrs), at)?
        } else {
            Blob::new(ctx, bytemuck::cast_slice(records), at)?
        };
        let inst =
            vk::AccelerationStructureGeometryInstancesDataKHR::default().array_of_pointers(pointers).data(data.at());
        self.blobs.push(data);
        self.geometries.push(
            vk::AccelerationStructureGeometryKHR::default()
                .geometry_type(vk::GeometryTypeKHR::INSTANCES)
                .geometry(vk::AccelerationStructureGeometryDataKHR { instances: inst }),
        );
        self.ranges.push(vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(records.len() as u32));
        Ok(())
    }
}

impl Default for Geometries {
    fn default() -> Self {
        Self::new()
    }
}

/// `vkGetAccelerationStructureBuildSizesKHR`.
pub fn sizes(
    ctx: &Context,
    at: Where,
    ty: vk::AccelerationStructureTypeKHR,
    flags: vk::BuildAccelerationStructureFlagsKHR,
    g: &Geometries,
) -> vk::AccelerationStructureBuildSizesInfoKHR<'static> {
    let info = vk::AccelerationStructureBuildGeometryInfoKHR::default().ty(ty).flags(flags).geometries(&g.geometries);
    let mut s = vk::AccelerationStructureBuildSizesInfoKHR::default();
    // SAFETY: valid geometry descriptions, one count per geometry.
    unsafe { ctx.accel().get_acceleration_structure_build_sizes(at.build_type(), &info, &g.counts(), &mut s) };
    s
}

/// Scratch for a build: device memory, or host memory for host builds.
pub struct Scratch {
    buffer: Option<Buffer>,
    host: Vec<u64>,
    align: u64,
}

impl Scratch {
    pub fn new(ctx: &Context, at: Where, size: u64) -> Result<Scratch> {
        let align = ctx.info().min_scratch_alignment.max(8);
        if at.host() {
            Ok(Scratch { buffer: None, host: vec![0u64; (size as usize).div_ceil(8) + 1], align })
        } else {
            let b = Buffer::new(ctx, size + align, vk::BufferUsageFlags::STORAGE_BUFFER)?;
            Ok(Scratch { buffer: Some(b), host: Vec::new(), align })
        }
    }

    pub fn address(&mut self) -> vk::DeviceOrHostAddressKHR {
        match &self.buffer {
            Some(b) => vk::DeviceOrHostAddressKHR { device_address: b.address().next_multiple_of(self.align) },
            None => vk::DeviceOrHostAddressKHR { host_address: self.host.as_mut_ptr().cast() },
        }
    }
}

/// Host commands that the driver really deferred (returned `VK_OPERATION_DEFERRED_KHR`
/// for, so they were joined), since the process started.
pub static DEFERRED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Runs `call` (a host command given a deferred operation, or null) `at`: directly, or as
/// a deferred operation joined by the given number of threads. Returns the command's result.
pub fn host_command(ctx: &Context, at: Where, call: impl FnOnce(vk::DeferredOperationKHR) -> vk::Result) -> Result<()> {
    let threads = match at {
        Where::Deferred(n) => n,
        _ => {
            let r = call(vk::DeferredOperationKHR::null());
            return if r == vk::Result::SUCCESS {
                Ok(())
            } else {
                Err(Error::Vulkan { call: "host command", result: r })
            };
        }
    };
    let d = ctx.deferred();
    // SAFETY: a valid device.
    let op = unsafe { d.create_deferred_operation(None) }.vk("vkCreateDeferredOperationKHR")?;
    let r = call(op);
    let out = match r {
        vk::Result::SUCCESS | vk::Result::OPERATION_NOT_DEFERRED_KHR => {
            // SAFETY: a valid operation.
            unsafe { (d.fp().get_deferred_operation_result_khr)(d.device(), op) }
                .result()
                .vk("vkGetDeferredOperationResultKHR")
        }
        vk::Result::OPERATION_DEFERRED_KHR => {
            DEFERRED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            join(ctx, op, threads)
        }
        e => Err(Error::Vulkan { call: "host command", result: e }),
    };
    // SAFETY: complete (or never started).
    unsafe { d.destroy_deferred_operation(op, None) };
    out
}

/// Joins `op` from `threads` threads (0: as many as the driver says are useful) until it
/// completes; at least one join must report `VK_SUCCESS`.
fn join(ctx: &Context, op: vk::DeferredOperationKHR, threads: u32) -> Result<()> {
    let d = ctx.deferred();
    let fp = d.fp().clone();
    let dev = d.device();
    // SAFETY: a valid, deferred operation.
    let max = unsafe { (fp.get_deferred_operation_max_concurrency_khr)(dev, op) };
    if max == 0 {
        return Err(Error::msg("vkGetDeferredOperationMaxConcurrencyKHR returned 0 for a deferred operation"));
    }
    let n = if threads == 0 { max.min(256) } else { threads };
    let (op_raw, dev_raw) = (op.as_raw(), dev.as_raw());
    let handles: Vec<_> = (0..n)
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
                    if r == vk::Result::THREAD_DONE_KHR {
                        loop {
                            let res = (fp.get_deferred_operation_result_khr)(dev, op);
                            if res != vk::Result::NOT_READY {
                                return (r, res);
                            }
                            std::thread::yield_now();
                        }
                    }
                    (r, (fp.get_deferred_operation_result_khr)(dev, op))
                }
            })
        })
        .collect();
    let results: Vec<(vk::Result, vk::Result)> = handles
        .into_iter()
        .map(|h| h.join().unwrap_or((vk::Result::ERROR_UNKNOWN, vk::Result::ERROR_UNKNOWN)))
        .collect();
    if !results.iter().any(|r| r.0 == vk::Result::SUCCESS) {
        return Err(Error::msg(format!("no join of {n} threads reported VK_SUCCESS: {results:?}")));
    }
    match results.iter().map(|r| r.1).find(|&r| r != vk::Result::SUCCESS) {
        Some(e) => Err(Error::Vulkan { call: "deferred operation", result: e }),
        None => Ok(()),
    }
}

/// One build (or update, with `src`) of `g` into `dst`, `at` the device or the host.
pub struct Build<'a> {
    pub at: Where,
    pub ty: vk::AccelerationStructureTypeKHR,
    pub flags: vk::BuildAccelerationStructureFlagsKHR,
    pub geometries: &'a Geometries,
    /// Update from this structure (None: a build).
    pub src: Option<&'a Accel>,
}

impl Build<'_> {
    /// Runs the build into `dst` (waiting for a device build to finish).
    pub fn run(&self, ctx: &Context, dst: &Accel) -> Result<()> {
        let s = sizes(ctx, self.at, self.ty, self.flags, self.geometries);
        let need = if self.src.is_some() { s.update_scratch_size } else { s.build_scratch_size };
        let mut scratch = Scratch::new(ctx, self.at, need)?;
        let mut info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(self.ty)
            .flags(self.flags)
            .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
            .geometries(&self.geometries.geometries)
            .dst_acceleration_structure(dst.handle)
            .scratch_data(scratch.address());
        if let Some(src) = self.src {
            info = info.mode(vk::BuildAccelerationStructureModeKHR::UPDATE).src_acceleration_structure(src.handle);
        }
        let ranges = self.geometries.ranges.as_slice();
        match self.at {
            Where::Device => ctx.submit_once(|cmd| {
                // SAFETY: cmd is recording; every address points into live memory.
                unsafe { ctx.accel().cmd_build_acceleration_structures(cmd, &[info], &[ranges]) };
                memory_barrier(
                    ctx.device(),
                    cmd,
                    vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
                    vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR | vk::PipelineStageFlags::COMPUTE_SHADER,
                );
            }),
            at => host_command(ctx, at, |op| {
                let ranges_ptr = [ranges.as_ptr()];
                // SAFETY: host addresses that outlive the (joined) operation.
                unsafe {
                    (ctx.accel().fp().build_acceleration_structures_khr)(
                        ctx.device().handle(),
                        op,
                        1,
                        &info,
                        ranges_ptr.as_ptr(),
                    )
                }
            }),
        }
    }

    /// Sizes, creates and builds a new structure.
    pub fn new_accel(&self, ctx: &Context) -> Result<Accel> {
        let s = sizes(ctx, self.at, self.ty, self.flags, self.geometries);
        let a = Accel::new(ctx, self.ty, s.acceleration_structure_size)?;
        self.run(ctx, &a)?;
        Ok(a)
    }
}

/// The committed hit of one ray: (t, primitive, custom index), t = -1 for a miss.
pub type Hit = (f32, i32, i32);

/// Traces `rays` ((origin, direction), tmin 0, tmax 100) against the TLAS `tlas`.
pub fn trace(ctx: &Context, tlas: vk::AccelerationStructureKHR, rays: &[([f32; 3], [f32; 3])]) -> Result<Vec<Hit>> {
    let ray_data: Vec<[f32; 8]> = rays.iter().map(|(o, d)| [o[0], o[1], o[2], 0.0, d[0], d[1], d[2], 100.0]).collect();
    let ray_buf = Buffer::with_data(ctx, &ray_data, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let hits = Buffer::new(ctx, 16 * rays.len() as u64, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let bindings = [
        vk::DescriptorType::ACCELERATION_STRUCTURE_KHR,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let pipe = ComputePipeline::new(ctx, TRACE, &bindings, 4)?;
    pipe.bind_acceleration_structure_handle(0, tlas);
    pipe.bind_storage_buffer(1, &ray_buf);
    pipe.bind_storage_buffer(2, &hits);
    ctx.submit_once(|cmd| {
        pipe.record_dispatch(cmd, &(rays.len() as u32).to_le_bytes(), [(rays.len() as u32).div_ceil(32), 1, 1])
    })?;
    let raw = hits.read::<u32>();
    Ok(raw.chunks_exact(4).map(|h| (f32::from_bits(h[0]), h[1] as i32, h[2] as i32)).collect())
}

/// A TLAS over `records` built on the device (for tracing a BLAS built anywhere).
pub fn device_tlas(ctx: &Context, records: &[InstanceRecord]) -> Result<(Accel, Geometries)> {
    device_tlas_with(ctx, records, vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE)
}

/// [`device_tlas`] built with `flags`.
pub fn device_tlas_with(
    ctx: &Context,
    records: &[InstanceRecord],
    flags: vk::BuildAccelerationStructureFlagsKHR,
) -> Result<(Accel, Geometries)> {
    let mut g = Geometries::new();
    g.instances(ctx, Where::Device, records, false)?;
    let b =
        Build { at: Where::Device, ty: vk::AccelerationStructureTypeKHR::TOP_LEVEL, flags, geometries: &g, src: None };
    let a = b.new_accel(ctx)?;
    Ok((a, g))
}

/// A deterministic soup of `n` small triangles in [-1, 1]^2 x [-1, 0].
pub fn soup(n: usize, seed: u64) -> Vec<[[f32; 3]; 3]> {
    let mut s = seed;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    (0..n)
        .map(|_| {
            let c = [rnd() * 2.0 - 1.0, rnd() * 2.0 - 1.0, -rnd()];
            std::array::from_fn(|_| [c[0] + rnd() * 0.2 - 0.1, c[1] + rnd() * 0.2 - 0.1, c[2] + rnd() * 0.1])
        })
        .collect()
}
