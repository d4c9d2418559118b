//! VK_KHR_acceleration_structure entry points: creation, addresses, build sizes, device
//! builds (recorded as AS jobs that read their inputs when the queue reaches them), copies
//! (clone, compact, serialize, deserialize) on the device timeline, and the host commands
//! (`accelerationStructureHostCommands`): builds, copies and serialization that run at call
//! time, or as deferred operations joined by the application's threads. Every structure is
//! registered with the device by handle value, so a host build's instance references
//! (handle values) resolve without dereferencing anything.

use super::command::cmd;
use super::deferred::{run_or_defer, Unit, DEFER_MIN_BYTES, DEFER_MIN_PRIMITIVES};
use super::device::device;
use crate::handle::{guard_device, guard_device_result, guard_device_void, nd, nd_destroy, nd_new, nd_opt};
use crate::util::slice;
use ash::vk::{self, Handle};
use std::sync::Arc;
use vortex_runtime::accel::{AccelStruct, Build};
use vortex_runtime::buffer::Buffer;
use vortex_transcode::accel::{serial, BuildRange, BuildRequest, Geometry, GeometryInput, GeometryKind, Mode};

/// Vertex formats the transcoder reads for triangle geometry.
pub fn vertex_format_supported(f: vk::Format) -> bool {
    vortex_runtime::accel::vertex_format_supported(f)
}

pub unsafe extern "system" fn create_acceleration_structure(
    d: vk::Device,
    p_info: *const vk::AccelerationStructureCreateInfoKHR<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_as: *mut vk::AccelerationStructureKHR,
) -> vk::Result {
    guard_device_result("vkCreateAccelerationStructureKHR", d, || {
        let dev = device(d)?;
        // SAFETY: valid create info and live buffer handle.
        let i = unsafe { &*p_info };
        if i.device_address != 0 {
            tracing::warn!("vkCreateAccelerationStructureKHR: capture/replay addresses are not supported");
            return Err(vk::Result::ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS);
        }
        let buffer = unsafe { nd::<_, Buffer>(i.buffer)? };
        let a = Arc::new(AccelStruct::new(buffer, i.offset, i.size, i.ty)?);
        let h: vk::AccelerationStructureKHR = nd_new(a.clone());
        dev.rt.accels.register(h.as_raw(), &a);
        // A build follows: its builder threads start now, not inside the first build.
        vortex_transcode::accel::warm_up();
        // SAFETY: valid output pointer.
        unsafe { *p_as = h };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_acceleration_structure(
    d: vk::Device,
    a: vk::AccelerationStructureKHR,
    _al: *const vk::AllocationCallbacks<'_>,
) {
    guard_device_void("vkDestroyAccelerationStructureKHR", d, || {
        if let Ok(dev) = device(d) {
            dev.rt.accels.unregister(a.as_raw());
        }
        // SAFETY: a live handle or null.
        unsafe { nd_destroy::<_, AccelStruct>(a) }
    })
}

pub unsafe extern "system" fn get_acceleration_structure_device_address(
    d: vk::Device,
    p_info: *const vk::AccelerationStructureDeviceAddressInfoKHR<'_>,
) -> u64 {
    guard_device("vkGetAccelerationStructureDeviceAddressKHR", d, 0, || {
        // SAFETY: valid info and live handle.
        unsafe { nd::<_, AccelStruct>((*p_info).acceleration_structure) }.map_or(0, |a| a.address())
    })
}

/// Reads one geometry description. Device and host addresses share the union's bits, so the
/// same reading serves both build types.
///
/// # Safety
/// `g` must be a valid geometry structure.
unsafe fn geometry(g: &vk::AccelerationStructureGeometryKHR<'_>) -> Result<Geometry, vk::Result> {
    // SAFETY: the union member matches geometry_type.
    unsafe {
        Ok(match g.geometry_type {
            vk::GeometryTypeKHR::TRIANGLES => {
                let t = &g.geometry.triangles;
                Geometry::Triangles {
                    vertex_format: t.vertex_format.as_raw() as u32,
                    vertex_data: t.vertex_data.device_address,
                    vertex_stride: t.vertex_stride,
                    max_vertex: t.max_vertex,
                    index_type: t.index_type.as_raw() as u32,
                    index_data: t.index_data.device_address,
                    transform_data: t.transform_data.device_address,
                }
            }
            vk::GeometryTypeKHR::AABBS => {
                let a = &g.geometry.aabbs;
                Geometry::Aabbs { data: a.data.device_address, stride: a.stride }
            }
            vk::GeometryTypeKHR::INSTANCES => {
                let i = &g.geometry.instances;
                Geometry::Instances { data: i.data.device_address, array_of_pointers: i.array_of_pointers != 0 }
            }
            other => {
                tracing::error!("geometry type {other:?} is not supported");
                return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
            }
        })
    }
}

/// The geometries of a build info, from pGeometries or ppGeometries.
///
/// # Safety
/// `info` must be a valid build info.
unsafe fn geometries<'a>(
    info: &'a vk::AccelerationStructureBuildGeometryInfoKHR<'a>,
) -> Vec<&'a vk::AccelerationStructureGeometryKHR<'a>> {
    let n = info.geometry_count as usize;
    // SAFETY: exactly one of the two arrays holds geometry_count entries.
    unsafe {
        if !info.p_geometries.is_null() {
            (0..n).map(|i| &*info.p_geometries.add(i)).collect()
        } else if !info.pp_geometries.is_null() {
            (0..n).map(|i| &**info.pp_geometries.add(i)).collect()
        } else {
            Vec::new()
        }
    }
}

pub unsafe extern "system" fn get_acceleration_structure_build_sizes(
    d: vk::Device,
    build_type: vk::AccelerationStructureBuildTypeKHR,
    p_info: *const vk::AccelerationStructureBuildGeometryInfoKHR<'_>,
    p_max_counts: *const u32,
    p_sizes: *mut vk::AccelerationStructureBuildSizesInfoKHR<'_>,
) {
    guard_device_void("vkGetAccelerationStructureBuildSizesKHR", d, || {
        // Host and device builds need the same sizes (host builds work in the same scratch).
        let _ = build_type;
        // SAFETY: valid info; max counts hold geometry_count entries (may be null at 0).
        let info = unsafe { &*p_info };
        let geos = unsafe { geometries(info) };
        let counts = unsafe { slice(p_max_counts, info.geometry_count) };
        let mut kinds = Vec::new();
        let mut inputs = Vec::new();
        for (k, g) in geos.iter().enumerate() {
            // SAFETY: a valid geometry.
            let Ok(geometry) = (unsafe { geometry(g) }) else { return };
            let count = counts.get(k).copied().unwrap_or(0);
            kinds.push((
                match geometry {
                    Geometry::Triangles { .. } => GeometryKind::Triangles,
                    Geometry::Aabbs { .. } => GeometryKind::Aabbs,
                    Geometry::Instances { .. } => GeometryKind::Instances,
                },
                count,
            ));
            inputs.push(GeometryInput { geometry, flags: g.flags.as_raw(), range: BuildRange::default() });
        }
        let Ok(dev) = device(d) else { return };
        let level = vortex_runtime::accel::level(info.ty, &inputs);
        let s = vortex_transcode::accel::build_sizes_for(level, &kinds, info.flags.as_raw(), &dev.rt.accel);
        // SAFETY: valid output pointer.
        unsafe {
            (*p_sizes).acceleration_structure_size = s.as_size;
            (*p_sizes).build_scratch_size = s.build_scratch;
            (*p_sizes).update_scratch_size = s.update_scratch;
        }
    })
}

/// One build info, parsed: destination, update source, the request (destination and
/// source addresses resolve when the build runs) and the scratch address (device or host).
///
/// # Safety
/// `info` must be a valid build info and `ranges` its range array.
unsafe fn parse_build(
    info: &vk::AccelerationStructureBuildGeometryInfoKHR<'_>,
    ranges: *const vk::AccelerationStructureBuildRangeInfoKHR,
) -> Result<Build, vk::Result> {
    // SAFETY: live handles and arrays of a valid build info.
    let dst = unsafe { nd::<_, AccelStruct>(info.dst_acceleration_structure)? };
    let update = info.mode == vk::BuildAccelerationStructureModeKHR::UPDATE;
    let src = if update { unsafe { nd_opt::<_, AccelStruct>(info.src_acceleration_structure) } } else { None };
    let ranges = unsafe { slice(ranges, info.geometry_count) };
    let mut list = Vec::new();
    for (g, r) in unsafe { geometries(info) }.into_iter().zip(ranges) {
        let range = BuildRange {
            primitive_count: r.primitive_count,
            primitive_offset: r.primitive_offset,
            first_vertex: r.first_vertex,
            transform_offset: r.transform_offset,
        };
        list.push(GeometryInput { geometry: unsafe { geometry(g)? }, flags: g.flags.as_raw(), range });
    }
    let request = BuildRequest {
        level: vortex_runtime::accel::level(info.ty, &list),
        flags: info.flags.as_raw(),
        mode: if update { Mode::Update { src: 0 } } else { Mode::Build },
        dst: 0,
        dst_size: 0,
        scratch: 0,
        geometries: list,
    };
    // SAFETY: reading the address member of the union (device or host: same bits).
    let scratch = unsafe { info.scratch_data.device_address };
    Ok(Build { dst, src, request, scratch })
}

pub unsafe extern "system" fn cmd_build_acceleration_structures(
    h: vk::CommandBuffer,
    count: u32,
    p_infos: *const vk::AccelerationStructureBuildGeometryInfoKHR<'_>,
    pp_ranges: *const *const vk::AccelerationStructureBuildRangeInfoKHR,
) {
    cmd("vkCmdBuildAccelerationStructuresKHR", h, |cb| {
        // SAFETY: build infos and one range array per info.
        let builds = unsafe { slice(p_infos, count) }
            .iter()
            .enumerate()
            .map(|(k, info)| unsafe { parse_build(info, *pp_ranges.add(k)) })
            .collect::<Result<Vec<_>, _>>()?;
        cb.build_accel(builds);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_copy_acceleration_structure(
    h: vk::CommandBuffer,
    p_info: *const vk::CopyAccelerationStructureInfoKHR<'_>,
) {
    cmd("vkCmdCopyAccelerationStructureKHR", h, |cb| {
        // SAFETY: valid copy info and live handles.
        let i = unsafe { &*p_info };
        match i.mode {
            vk::CopyAccelerationStructureModeKHR::CLONE | vk::CopyAccelerationStructureModeKHR::COMPACT => {
                let (src, dst) = unsafe { (nd::<_, AccelStruct>(i.src)?, nd::<_, AccelStruct>(i.dst)?) };
                cb.copy_accel(src, dst);
                Ok(())
            }
            m => {
                tracing::error!("vkCmdCopyAccelerationStructureKHR: mode {m:?} is not a structure-to-structure copy");
                Err(vk::Result::ERROR_UNKNOWN)
            }
        }
    })
}

pub unsafe extern "system" fn cmd_copy_acceleration_structure_to_memory(
    h: vk::CommandBuffer,
    p_info: *const vk::CopyAccelerationStructureToMemoryInfoKHR<'_>,
) {
    cmd("vkCmdCopyAccelerationStructureToMemoryKHR", h, |cb| {
        // SAFETY: valid copy info and live handles.
        let i = unsafe { &*p_info };
        if i.mode != vk::CopyAccelerationStructureModeKHR::SERIALIZE {
            tracing::error!("vkCmdCopyAccelerationStructureToMemoryKHR: mode {:?} is not SERIALIZE", i.mode);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        let src = unsafe { nd::<_, AccelStruct>(i.src)? };
        let dst = unsafe { i.dst.device_address };
        cb.serialize_accel(src, dst);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_copy_memory_to_acceleration_structure(
    h: vk::CommandBuffer,
    p_info: *const vk::CopyMemoryToAccelerationStructureInfoKHR<'_>,
) {
    cmd("vkCmdCopyMemoryToAccelerationStructureKHR", h, |cb| {
        // SAFETY: valid copy info and live handles.
        let i = unsafe { &*p_info };
        if i.mode != vk::CopyAccelerationStructureModeKHR::DESERIALIZE {
            tracing::error!("vkCmdCopyMemoryToAccelerationStructureKHR: mode {:?} is not DESERIALIZE", i.mode);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        let dst = unsafe { nd::<_, AccelStruct>(i.dst)? };
        let src = unsafe { i.src.device_address };
        cb.deserialize_accel(src, dst);
        Ok(())
    })
}

/// Wraps a host command's work as a deferrable unit that logs its failure.
fn unit(what: &'static str, f: impl FnOnce() -> Result<(), String> + Send + 'static) -> Unit {
    Box::new(move || match f() {
        Ok(()) => vk::Result::SUCCESS,
        Err(e) => {
            tracing::error!("{what}: {e}");
            vk::Result::ERROR_UNKNOWN
        }
    })
}

pub unsafe extern "system" fn build_acceleration_structures(
    d: vk::Device,
    op: vk::DeferredOperationKHR,
    count: u32,
    p_infos: *const vk::AccelerationStructureBuildGeometryInfoKHR<'_>,
    pp_ranges: *const *const vk::AccelerationStructureBuildRangeInfoKHR,
) -> vk::Result {
    guard_device_result("vkBuildAccelerationStructuresKHR", d, || {
        let dev = device(d)?;
        let mut units: Vec<Unit> = Vec::new();
        let mut prims = 0u64;
        // SAFETY: build infos and one range array per info; geometry data and scratch are
        // host addresses that stay valid until the (possibly deferred) build completes.
        for (k, info) in unsafe { slice(p_infos, count) }.iter().enumerate() {
            let job = unsafe { parse_build(info, *pp_ranges.add(k))? };
            prims += job.request.geometries.iter().map(|g| g.range.primitive_count as u64).sum::<u64>();
            let rt = dev.rt.clone();
            units.push(Box::new(move || match vortex_runtime::accel::host_build(&rt, &job) {
                Ok(()) => vk::Result::SUCCESS,
                Err(e) => e,
            }));
        }
        let worth = prims >= DEFER_MIN_PRIMITIVES;
        run_or_defer(op, units, worth)
    })
}

/// True if copying the structure `a` is worth deferring (see `DEFER_MIN_BYTES`).
fn worth_copying(a: &AccelStruct) -> bool {
    a.size >= DEFER_MIN_BYTES
}

pub unsafe extern "system" fn copy_acceleration_structure(
    d: vk::Device,
    op: vk::DeferredOperationKHR,
    p_info: *const vk::CopyAccelerationStructureInfoKHR<'_>,
) -> vk::Result {
    guard_device_result("vkCopyAccelerationStructureKHR", d, || {
        let dev = device(d)?;
        // SAFETY: valid copy info and live handles.
        let i = unsafe { &*p_info };
        if !matches!(
            i.mode,
            vk::CopyAccelerationStructureModeKHR::CLONE | vk::CopyAccelerationStructureModeKHR::COMPACT
        ) {
            tracing::error!("vkCopyAccelerationStructureKHR: mode {:?} is not a structure-to-structure copy", i.mode);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        let (src, dst) = unsafe { (nd::<_, AccelStruct>(i.src)?, nd::<_, AccelStruct>(i.dst)?) };
        let rt = dev.rt.clone();
        let worth = worth_copying(&src);
        let u = unit("vkCopyAccelerationStructureKHR", move || {
            vortex_runtime::accel::copy(&rt.space.snapshot(), &src, &dst).map_err(|e| e.to_string())
        });
        run_or_defer(op, vec![u], worth)
    })
}

pub unsafe extern "system" fn copy_acceleration_structure_to_memory(
    d: vk::Device,
    op: vk::DeferredOperationKHR,
    p_info: *const vk::CopyAccelerationStructureToMemoryInfoKHR<'_>,
) -> vk::Result {
    guard_device_result("vkCopyAccelerationStructureToMemoryKHR", d, || {
        let dev = device(d)?;
        // SAFETY: valid copy info and live handles.
        let i = unsafe { &*p_info };
        if i.mode != vk::CopyAccelerationStructureModeKHR::SERIALIZE {
            tracing::error!("vkCopyAccelerationStructureToMemoryKHR: mode {:?} is not SERIALIZE", i.mode);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        let src = unsafe { nd::<_, AccelStruct>(i.src)? };
        let dst = unsafe { i.dst.host_address } as u64;
        let rt = dev.rt.clone();
        let worth = worth_copying(&src);
        let u = unit("vkCopyAccelerationStructureToMemoryKHR", move || {
            let mem = rt.space.snapshot();
            let a = src.bound_address("serialization source")?;
            let size = serial::properties(&mem, a).map_err(|e| e.to_string())?.serialized;
            // SAFETY: the application provides the serialization size of writable bytes at
            // the destination (Vulkan valid usage).
            let mut out = unsafe { vortex_runtime::accel::host_bytes_mut(&mem, dst, size) }
                .ok_or("the destination address is null or not all mapped")?;
            vortex_runtime::accel::serialize(&mem, &src, &mut out).map_err(|e| e.to_string())
        });
        run_or_defer(op, vec![u], worth)
    })
}

pub unsafe extern "system" fn copy_memory_to_acceleration_structure(
    d: vk::Device,
    op: vk::DeferredOperationKHR,
    p_info: *const vk::CopyMemoryToAccelerationStructureInfoKHR<'_>,
) -> vk::Result {
    guard_device_result("vkCopyMemoryToAccelerationStructureKHR", d, || {
        let dev = device(d)?;
        // SAFETY: valid copy info and live handles.
        let i = unsafe { &*p_info };
        if i.mode != vk::CopyAccelerationStructureModeKHR::DESERIALIZE {
            tracing::error!("vkCopyMemoryToAccelerationStructureKHR: mode {:?} is not DESERIALIZE", i.mode);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        let dst = unsafe { nd::<_, AccelStruct>(i.dst)? };
        let src = unsafe { i.src.host_address } as u64;
        let rt = dev.rt.clone();
        let worth = worth_copying(&dst);
        let u = unit("vkCopyMemoryToAccelerationStructureKHR", move || {
            let mem = rt.space.snapshot();
            // SAFETY: the application provides a serialized structure at the source: its
            // header, then as many bytes as the header's serialized size says.
            let head = unsafe { vortex_runtime::accel::host_bytes(&mem, src, serial::HEADER_BYTES as u64) }
                .ok_or("the source address is null or not all mapped")?;
            // The header is checked before its size is trusted: a garbage size must not
            // make the copy read past the application's blob.
            let size = serial::checked_blob_size(&head, &vortex_runtime::device::DRIVER_UUID, dst.size)
                .map_err(|e| e.to_string())?;
            let blob = unsafe { vortex_runtime::accel::host_bytes(&mem, src, size) }
                .ok_or("the source address is null or not all mapped")?;
            vortex_runtime::accel::deserialize(&mem, &blob, &dst).map_err(|e| e.to_string())
        });
        run_or_defer(op, vec![u], worth)
    })
}

pub unsafe extern "system" fn get_device_acceleration_structure_compatibility(
    d: vk::Device,
    p_info: *const vk::AccelerationStructureVersionInfoKHR<'_>,
    p_compat: *mut vk::AccelerationStructureCompatibilityKHR,
) {
    guard_device_void("vkGetDeviceAccelerationStructureCompatibilityKHR", d, || {
        // SAFETY: the version data is 2 * VK_UUID_SIZE bytes.
        let data: &[u8; 2 * vk::UUID_SIZE] = unsafe { &*(*p_info).p_version_data };
        let Ok(dev) = device(d) else { return };
        let ok = serial::compatible_on(data, &vortex_runtime::device::DRIVER_UUID, dev.rt.config.rt_arch);
        // SAFETY: valid output pointer.
        unsafe {
            *p_compat = if ok {
                vk::AccelerationStructureCompatibilityKHR::COMPATIBLE
            } else {
                vk::AccelerationStructureCompatibilityKHR::INCOMPATIBLE
            }
        };
    })
}
