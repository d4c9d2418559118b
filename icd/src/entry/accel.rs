//! VK_KHR_acceleration_structure entry points: creation, addresses, build sizes, device
//! builds (recorded as AS jobs that read their inputs when the queue reaches them) and
//! copies. Host commands are not offered (`accelerationStructureHostCommands` is false).

use super::command::command_buffer;
use super::device::device;
use crate::handle::{guard, guard_result, guard_void, nd, nd_destroy, nd_new, nd_opt};
use crate::util::slice;
use ash::vk;
use std::sync::Arc;
use vortex_runtime::accel::AccelStruct;
use vortex_runtime::buffer::Buffer;
use vortex_runtime::stream::AccelBuildJob;
use vortex_transcode::accel::{BuildRange, BuildRequest, Geometry, GeometryInput, GeometryKind, Mode};

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
    guard_result("vkCreateAccelerationStructureKHR", || {
        device(d)?;
        // SAFETY: valid create info and live buffer handle.
        let i = unsafe { &*p_info };
        if i.device_address != 0 {
            tracing::warn!("vkCreateAccelerationStructureKHR: capture/replay addresses are not supported");
            return Err(vk::Result::ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS);
        }
        let buffer = unsafe { nd::<_, Buffer>(i.buffer)? };
        let a = AccelStruct::new(buffer, i.offset, i.size, i.ty)?;
        // SAFETY: valid output pointer.
        unsafe { *p_as = nd_new(Arc::new(a)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_acceleration_structure(
    _d: vk::Device,
    a: vk::AccelerationStructureKHR,
    _al: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live handle or null.
    guard_void("vkDestroyAccelerationStructureKHR", || unsafe { nd_destroy::<_, AccelStruct>(a) })
}

pub unsafe extern "system" fn get_acceleration_structure_device_address(
    _d: vk::Device,
    p_info: *const vk::AccelerationStructureDeviceAddressInfoKHR<'_>,
) -> u64 {
    guard("vkGetAccelerationStructureDeviceAddressKHR", 0, || {
        // SAFETY: valid info and live handle.
        unsafe { nd::<_, AccelStruct>((*p_info).acceleration_structure) }.map_or(0, |a| a.address())
    })
}

/// Reads one geometry description (device addresses: host builds are not offered).
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
    guard_void("vkGetAccelerationStructureBuildSizesKHR", || {
        if build_type == vk::AccelerationStructureBuildTypeKHR::HOST {
            tracing::warn!("host build sizes requested, but host builds are not offered");
        }
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
        let s = vortex_transcode::accel::build_sizes(level, &kinds, info.flags.as_raw(), dev.rt.config.rtu.bvh_width);
        // SAFETY: valid output pointer.
        unsafe {
            (*p_sizes).acceleration_structure_size = s.as_size;
            (*p_sizes).build_scratch_size = s.build_scratch;
            (*p_sizes).update_scratch_size = s.update_scratch;
        }
    })
}

pub unsafe extern "system" fn cmd_build_acceleration_structures(
    h: vk::CommandBuffer,
    count: u32,
    p_infos: *const vk::AccelerationStructureBuildGeometryInfoKHR<'_>,
    pp_ranges: *const *const vk::AccelerationStructureBuildRangeInfoKHR,
) {
    guard_void("vkCmdBuildAccelerationStructuresKHR", || {
        let Ok(cb) = command_buffer(h) else { return };
        let mut jobs = Vec::new();
        // SAFETY: build infos and one range array per info.
        for (k, info) in unsafe { slice(p_infos, count) }.iter().enumerate() {
            let r = (|| -> Result<AccelBuildJob, vk::Result> {
                // SAFETY: live handles and arrays of a valid build info.
                let dst = unsafe { nd::<_, AccelStruct>(info.dst_acceleration_structure)? };
                let update = info.mode == vk::BuildAccelerationStructureModeKHR::UPDATE;
                let src =
                    if update { unsafe { nd_opt::<_, AccelStruct>(info.src_acceleration_structure) } } else { None };
                let ranges = unsafe { slice(*pp_ranges.add(k), info.geometry_count) };
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
                    // SAFETY: reading the device-address member of the union.
                    scratch: unsafe { info.scratch_data.device_address },
                    geometries: list,
                };
                Ok(AccelBuildJob { dst, src, request })
            })();
            match r {
                Ok(j) => jobs.push(j),
                Err(e) => {
                    cb.set_error("vkCmdBuildAccelerationStructuresKHR", e);
                    return;
                }
            }
        }
        cb.build_accel(jobs);
    })
}

pub unsafe extern "system" fn cmd_copy_acceleration_structure(
    h: vk::CommandBuffer,
    p_info: *const vk::CopyAccelerationStructureInfoKHR<'_>,
) {
    guard_void("vkCmdCopyAccelerationStructureKHR", || {
        let Ok(cb) = command_buffer(h) else { return };
        // SAFETY: valid copy info and live handles.
        let i = unsafe { &*p_info };
        match i.mode {
            vk::CopyAccelerationStructureModeKHR::CLONE | vk::CopyAccelerationStructureModeKHR::COMPACT => {
                match unsafe { (nd::<_, AccelStruct>(i.src), nd::<_, AccelStruct>(i.dst)) } {
                    (Ok(s), Ok(d)) => cb.copy_accel(s, d),
                    _ => cb.set_error("vkCmdCopyAccelerationStructureKHR", vk::Result::ERROR_UNKNOWN),
                }
            }
            m => {
                tracing::error!("vkCmdCopyAccelerationStructureKHR: mode {m:?} is not supported yet");
                cb.set_error("vkCmdCopyAccelerationStructureKHR", vk::Result::ERROR_FEATURE_NOT_PRESENT);
            }
        }
    })
}

pub unsafe extern "system" fn build_acceleration_structures(
    _d: vk::Device,
    _op: vk::DeferredOperationKHR,
    _n: u32,
    _i: *const vk::AccelerationStructureBuildGeometryInfoKHR<'_>,
    _r: *const *const vk::AccelerationStructureBuildRangeInfoKHR,
) -> vk::Result {
    tracing::error!(
        "vkBuildAccelerationStructuresKHR: host builds are not offered (accelerationStructureHostCommands is false)"
    );
    vk::Result::ERROR_FEATURE_NOT_PRESENT
}

pub unsafe extern "system" fn get_device_acceleration_structure_compatibility(
    _d: vk::Device,
    p_info: *const vk::AccelerationStructureVersionInfoKHR<'_>,
    p_compat: *mut vk::AccelerationStructureCompatibilityKHR,
) {
    guard_void("vkGetDeviceAccelerationStructureCompatibilityKHR", || {
        // SAFETY: the version data is 2 * VK_UUID_SIZE bytes.
        let data: &[u8; 2 * vk::UUID_SIZE] = unsafe { &*(*p_info).p_version_data };
        let ok = data[..16] == crate::caps::DRIVER_UUID[..] && data[16..] == crate::caps::DEVICE_UUID[..];
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
