//! Query pools: acceleration-structure properties (compacted size, serialization size,
//! size, bottom-level pointer count — written on the device timeline by
//! `vkCmdWriteAccelerationStructuresPropertiesKHR` or at once by
//! `vkWriteAccelerationStructuresPropertiesKHR`), occlusion queries (the samples that passed
//! every test in the draws between begin and end) and timestamps. Results through `vkGetQueryPoolResults` and
//! `vkCmdCopyQueryPoolResults` with the 64-bit, wait, availability and partial flags.

use super::command::cmd;
use super::device::device;
use crate::handle::{guard_device_result, guard_device_void, nd, nd_destroy, nd_new};
use crate::util::slice;
use ash::vk;
use std::sync::Arc;
use vortex_runtime::accel::AccelStruct;
use vortex_runtime::buffer::Buffer;
use vortex_runtime::query::{is_accel_property, QueryPool};

/// Query types this device creates pools of.
fn supported(ty: vk::QueryType) -> bool {
    matches!(ty, vk::QueryType::OCCLUSION | vk::QueryType::TIMESTAMP) || is_accel_property(ty)
}

pub unsafe extern "system" fn create_query_pool(
    d: vk::Device,
    p_info: *const vk::QueryPoolCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_pool: *mut vk::QueryPool,
) -> vk::Result {
    guard_device_result("vkCreateQueryPool", d, || {
        device(d)?;
        // SAFETY: valid create info.
        let i = unsafe { &*p_info };
        if !supported(i.query_type) {
            tracing::error!("vkCreateQueryPool: query type {:?} is not supported", i.query_type);
            return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
        }
        let pool = QueryPool::new(i.query_type, i.query_count, i.pipeline_statistics);
        // SAFETY: valid output pointer.
        unsafe { *p_pool = nd_new(Arc::new(pool)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_query_pool(
    d: vk::Device,
    p: vk::QueryPool,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live handle or null.
    guard_device_void("vkDestroyQueryPool", d, || unsafe { nd_destroy::<_, QueryPool>(p) })
}

pub unsafe extern "system" fn reset_query_pool(d: vk::Device, p: vk::QueryPool, first: u32, count: u32) {
    guard_device_void("vkResetQueryPool", d, || {
        // SAFETY: a live pool handle.
        if let Ok(pool) = unsafe { nd::<_, QueryPool>(p) } {
            pool.reset(first, count);
        }
    })
}

pub unsafe extern "system" fn get_query_pool_results(
    d: vk::Device,
    p: vk::QueryPool,
    first: u32,
    count: u32,
    data_size: usize,
    p_data: *mut std::ffi::c_void,
    stride: vk::DeviceSize,
    flags: vk::QueryResultFlags,
) -> vk::Result {
    guard_device_result("vkGetQueryPoolResults", d, || {
        let dev = device(d)?;
        // SAFETY: a live pool handle; pData holds dataSize bytes.
        let pool = unsafe { nd::<_, QueryPool>(p)? };
        if !pool.covers(first, count) {
            tracing::error!("vkGetQueryPoolResults: queries {first}..+{count} outside a pool of {}", pool.count);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        let out = if data_size == 0 || p_data.is_null() {
            &mut [][..]
        } else {
            // SAFETY: the application provides data_size writable bytes.
            unsafe { std::slice::from_raw_parts_mut(p_data as *mut u8, data_size) }
        };
        let rt = dev.rt.clone();
        pool.results(first, count, out, stride, flags, &|| rt.is_lost())
    })
}

pub unsafe extern "system" fn cmd_reset_query_pool(h: vk::CommandBuffer, p: vk::QueryPool, first: u32, count: u32) {
    cmd("vkCmdResetQueryPool", h, |cb| {
        // SAFETY: a live pool handle.
        let pool = unsafe { nd::<_, QueryPool>(p)? };
        cb.reset_queries(pool, first, count);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_begin_query(
    h: vk::CommandBuffer,
    p: vk::QueryPool,
    query: u32,
    _flags: vk::QueryControlFlags,
) {
    cmd("vkCmdBeginQuery", h, |cb| {
        // SAFETY: a live pool handle.
        cb.begin_query(unsafe { nd::<_, QueryPool>(p)? }, query);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_end_query(h: vk::CommandBuffer, p: vk::QueryPool, query: u32) {
    cmd("vkCmdEndQuery", h, |cb| {
        // SAFETY: a live pool handle.
        let pool = unsafe { nd::<_, QueryPool>(p)? };
        cb.end_query(pool, query);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_write_timestamp(
    h: vk::CommandBuffer,
    _stage: vk::PipelineStageFlags,
    p: vk::QueryPool,
    query: u32,
) {
    cmd("vkCmdWriteTimestamp", h, |cb| {
        // SAFETY: a live pool handle.
        let pool = unsafe { nd::<_, QueryPool>(p)? };
        cb.write_timestamp(pool, query);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_copy_query_pool_results(
    h: vk::CommandBuffer,
    p: vk::QueryPool,
    first: u32,
    count: u32,
    dst: vk::Buffer,
    offset: vk::DeviceSize,
    stride: vk::DeviceSize,
    flags: vk::QueryResultFlags,
) {
    cmd("vkCmdCopyQueryPoolResults", h, |cb| {
        // SAFETY: live pool and buffer handles.
        let pool = unsafe { nd::<_, QueryPool>(p)? };
        let buffer = unsafe { nd::<_, Buffer>(dst)? };
        cb.copy_query_results(pool, first, count, &buffer, offset, stride, flags);
        Ok(())
    })
}

/// The structures of a properties call.
///
/// # Safety
/// `p` holds `count` live handles.
unsafe fn structures(count: u32, p: *const vk::AccelerationStructureKHR) -> Result<Vec<Arc<AccelStruct>>, vk::Result> {
    // SAFETY: per the contract.
    unsafe { slice(p, count) }.iter().map(|&a| unsafe { nd::<_, AccelStruct>(a) }).collect()
}

pub unsafe extern "system" fn cmd_write_acceleration_structures_properties(
    h: vk::CommandBuffer,
    count: u32,
    p_structs: *const vk::AccelerationStructureKHR,
    ty: vk::QueryType,
    p: vk::QueryPool,
    first: u32,
) {
    cmd("vkCmdWriteAccelerationStructuresPropertiesKHR", h, |cb| {
        // SAFETY: live handles.
        let pool = unsafe { nd::<_, QueryPool>(p)? };
        let structures = unsafe { structures(count, p_structs)? };
        cb.write_accel_properties(ty, pool, first, structures);
        Ok(())
    })
}

pub unsafe extern "system" fn write_acceleration_structures_properties(
    d: vk::Device,
    count: u32,
    p_structs: *const vk::AccelerationStructureKHR,
    ty: vk::QueryType,
    data_size: usize,
    p_data: *mut std::ffi::c_void,
    stride: usize,
) -> vk::Result {
    guard_device_result("vkWriteAccelerationStructuresPropertiesKHR", d, || {
        let dev = device(d)?;
        if !is_accel_property(ty) {
            tracing::error!("vkWriteAccelerationStructuresPropertiesKHR: {ty:?} is not a property query");
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        // SAFETY: live handles; pData holds dataSize bytes.
        let structures = unsafe { structures(count, p_structs)? };
        let out = unsafe { std::slice::from_raw_parts_mut(p_data as *mut u8, data_size) };
        let mem = dev.rt.space.snapshot();
        // 32-bit or 64-bit values, as the stride and size allow (Vulkan: 64-bit for the
        // size queries, which have no flags to say so).
        let wide = stride >= 8 && data_size >= 8;
        for (i, a) in structures.iter().enumerate() {
            let v = vortex_runtime::accel::property(&mem, a, ty).map_err(|e| {
                tracing::error!("vkWriteAccelerationStructuresPropertiesKHR: {e}");
                vk::Result::ERROR_UNKNOWN
            })?;
            let at = i * stride;
            if wide && at + 8 <= out.len() {
                out[at..at + 8].copy_from_slice(&v.to_le_bytes());
            } else if at + 4 <= out.len() {
                out[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes());
            }
        }
        Ok(vk::Result::SUCCESS)
    })
}
