//! VK_KHR_ray_tracing_pipeline (and `vkCmdTraceRaysIndirect2KHR` of
//! VK_KHR_ray_tracing_maintenance1): pipelines, shader group handles, stack sizes and trace
//! rays, translated for `runtime::pipeline::raytracing` and `runtime::cmd::trace`
//! (`docs/RTPIPELINE.md`). Reachable only when the extension is offered (`caps::rtpipe`).

use super::command::cmd;
use super::device::device;
use super::pipeline::{create_pipelines, specialization, PipelineCreateInfo};
use crate::handle::{guard_device, guard_device_result, nd};
use crate::util::{cstr, slice};
use ash::vk;
use std::ffi::c_void;
use std::sync::Arc;
use vortex_runtime::cmd::trace::{SbtRegion, SbtRegions};
use vortex_runtime::pipeline::raytracing::{Group, GroupKind, Member, RtStage, HANDLE_BYTES};
use vortex_runtime::pipeline::{Pipeline, PipelineLayout, ShaderModule};
use vortex_transcode::shader::Stage;

impl PipelineCreateInfo for vk::RayTracingPipelineCreateInfoKHR<'_> {
    fn flags(&self) -> vk::PipelineCreateFlags {
        self.flags
    }
}

/// Pipelines are compiled in the call: given a deferred operation, a successful call answers
/// `VK_OPERATION_NOT_DEFERRED_KHR`, as the specification allows.
pub unsafe extern "system" fn create_ray_tracing_pipelines(
    d: vk::Device,
    op: vk::DeferredOperationKHR,
    _cache: vk::PipelineCache,
    count: u32,
    p_infos: *const vk::RayTracingPipelineCreateInfoKHR<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_pipelines: *mut vk::Pipeline,
) -> vk::Result {
    // SAFETY: the caller's arrays per the API contract.
    let r = unsafe { create_pipelines("vkCreateRayTracingPipelinesKHR", d, count, p_infos, p_pipelines, create_one) };
    if r == vk::Result::SUCCESS && op != vk::DeferredOperationKHR::null() {
        return vk::Result::OPERATION_NOT_DEFERRED_KHR;
    }
    r
}

fn stage_of(flags: vk::ShaderStageFlags) -> Option<Stage> {
    Some(match flags {
        vk::ShaderStageFlags::RAYGEN_KHR => Stage::RayGeneration,
        vk::ShaderStageFlags::MISS_KHR => Stage::Miss,
        vk::ShaderStageFlags::CLOSEST_HIT_KHR => Stage::ClosestHit,
        vk::ShaderStageFlags::ANY_HIT_KHR => Stage::AnyHit,
        vk::ShaderStageFlags::INTERSECTION_KHR => Stage::Intersection,
        vk::ShaderStageFlags::CALLABLE_KHR => Stage::Callable,
        _ => return None,
    })
}

fn member(i: u32) -> Option<u32> {
    (i != vk::SHADER_UNUSED_KHR).then_some(i)
}

unsafe fn create_one(
    dev: &super::device::Device,
    info: &vk::RayTracingPipelineCreateInfoKHR<'_>,
) -> Result<Pipeline, vk::Result> {
    if !info.p_library_info.is_null() || info.flags.contains(vk::PipelineCreateFlags::LIBRARY_KHR) {
        tracing::error!("vkCreateRayTracingPipelinesKHR: pipeline libraries are not supported");
        return Err(vk::Result::ERROR_UNKNOWN);
    }
    let mut stages = Vec::new();
    // SAFETY: the stage array of a valid create info.
    for s in unsafe { slice(info.p_stages, info.stage_count) } {
        let Some(stage) = stage_of(s.stage) else {
            tracing::error!("vkCreateRayTracingPipelinesKHR: stage {:?} is not a ray-tracing stage", s.stage);
            return Err(vk::Result::ERROR_UNKNOWN);
        };
        // SAFETY: live module handle, entry name and specialization of a valid stage.
        let module = unsafe { nd::<_, ShaderModule>(s.module)? };
        let entry = unsafe { cstr(s.p_name) };
        let spec = unsafe { specialization(s) }?;
        stages.push(RtStage { stage, module, entry, spec });
    }
    let mut groups = Vec::new();
    // SAFETY: the group array of a valid create info.
    for g in unsafe { slice(info.p_groups, info.group_count) } {
        let kind = match g.ty {
            vk::RayTracingShaderGroupTypeKHR::GENERAL => GroupKind::General,
            vk::RayTracingShaderGroupTypeKHR::TRIANGLES_HIT_GROUP => GroupKind::Triangles,
            vk::RayTracingShaderGroupTypeKHR::PROCEDURAL_HIT_GROUP => GroupKind::Procedural,
            t => {
                tracing::error!("vkCreateRayTracingPipelinesKHR: shader group type {t:?}");
                return Err(vk::Result::ERROR_UNKNOWN);
            }
        };
        groups.push(Group {
            kind,
            general: member(g.general_shader),
            closest_hit: member(g.closest_hit_shader),
            any_hit: member(g.any_hit_shader),
            intersection: member(g.intersection_shader),
        });
    }
    // SAFETY: live layout handle.
    let layout = unsafe { nd::<_, PipelineLayout>(info.layout)? };
    Pipeline::ray_tracing(&dev.rt, stages, groups, info.max_pipeline_ray_recursion_depth, layout)
}

/// The ray-tracing pipeline behind a handle.
unsafe fn ray_tracing(p: vk::Pipeline) -> Result<Arc<Pipeline>, vk::Result> {
    // SAFETY: a live pipeline handle per the API contract.
    let p = unsafe { nd::<_, Pipeline>(p)? };
    if p.as_ray_tracing().is_none() {
        tracing::error!("pipeline '{}' is not a ray-tracing pipeline", p.name);
        return Err(vk::Result::ERROR_UNKNOWN);
    }
    Ok(p)
}

pub unsafe extern "system" fn get_ray_tracing_shader_group_handles(
    d: vk::Device,
    p: vk::Pipeline,
    first: u32,
    count: u32,
    size: usize,
    p_data: *mut c_void,
) -> vk::Result {
    guard_device_result("vkGetRayTracingShaderGroupHandlesKHR", d, || {
        device(d)?;
        // SAFETY: a live pipeline handle per the API contract.
        let p = unsafe { ray_tracing(p)? };
        if p_data.is_null() {
            tracing::error!("vkGetRayTracingShaderGroupHandlesKHR: pData is null");
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        // SAFETY: `size` writable bytes at the non-null `p_data` per the API contract.
        let out = unsafe { std::slice::from_raw_parts_mut(p_data as *mut u8, size) };
        if let Some(rt) = p.as_ray_tracing() {
            rt.handles(first, count, out)?;
        }
        Ok(vk::Result::SUCCESS)
    })
}

/// Capture/replay handles are the handles themselves (`rayTracingPipelineShaderGroupHandleCaptureReplay`
/// is not offered, so nothing replays them).
pub unsafe extern "system" fn get_ray_tracing_capture_replay_shader_group_handles(
    d: vk::Device,
    p: vk::Pipeline,
    first: u32,
    count: u32,
    size: usize,
    p_data: *mut c_void,
) -> vk::Result {
    // SAFETY: forwarded contract.
    unsafe { get_ray_tracing_shader_group_handles(d, p, first, count, size, p_data) }
}

pub unsafe extern "system" fn get_ray_tracing_shader_group_stack_size(
    d: vk::Device,
    p: vk::Pipeline,
    group: u32,
    which: vk::ShaderGroupShaderKHR,
) -> vk::DeviceSize {
    guard_device("vkGetRayTracingShaderGroupStackSizeKHR", d, 0, || {
        let which = match which {
            vk::ShaderGroupShaderKHR::GENERAL => Member::General,
            vk::ShaderGroupShaderKHR::CLOSEST_HIT => Member::ClosestHit,
            vk::ShaderGroupShaderKHR::ANY_HIT => Member::AnyHit,
            vk::ShaderGroupShaderKHR::INTERSECTION => Member::Intersection,
            _ => return 0,
        };
        // SAFETY: live pipeline handle.
        match unsafe { ray_tracing(p) } {
            Ok(p) => p.as_ray_tracing().map_or(0, |rt| rt.stack_size(group as usize, which)),
            Err(_) => 0,
        }
    })
}

/// The stack is laid out at compile time (`docs/RTPIPELINE.md`): nothing to size.
pub unsafe extern "system" fn cmd_set_ray_tracing_pipeline_stack_size(h: vk::CommandBuffer, _size: u32) {
    cmd("vkCmdSetRayTracingPipelineStackSizeKHR", h, |_| Ok(()));
}

/// A region, or the empty region for a null pointer.
unsafe fn region(p: *const vk::StridedDeviceAddressRegionKHR) -> SbtRegion {
    if p.is_null() {
        return SbtRegion::default();
    }
    // SAFETY: a valid region per the API contract.
    let r = unsafe { &*p };
    SbtRegion { address: r.device_address, stride: r.stride, size: r.size }
}

unsafe fn regions(
    raygen: *const vk::StridedDeviceAddressRegionKHR,
    miss: *const vk::StridedDeviceAddressRegionKHR,
    hit: *const vk::StridedDeviceAddressRegionKHR,
    callable: *const vk::StridedDeviceAddressRegionKHR,
) -> SbtRegions {
    // SAFETY: forwarded contract.
    unsafe { [region(raygen), region(miss), region(hit), region(callable)] }
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn cmd_trace_rays(
    h: vk::CommandBuffer,
    raygen: *const vk::StridedDeviceAddressRegionKHR,
    miss: *const vk::StridedDeviceAddressRegionKHR,
    hit: *const vk::StridedDeviceAddressRegionKHR,
    callable: *const vk::StridedDeviceAddressRegionKHR,
    width: u32,
    height: u32,
    depth: u32,
) {
    cmd("vkCmdTraceRaysKHR", h, |cb| {
        // SAFETY: the region pointers of the call.
        let sbt = unsafe { regions(raygen, miss, hit, callable) };
        cb.trace_rays(sbt, [width, height, depth]);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_trace_rays_indirect(
    h: vk::CommandBuffer,
    raygen: *const vk::StridedDeviceAddressRegionKHR,
    miss: *const vk::StridedDeviceAddressRegionKHR,
    hit: *const vk::StridedDeviceAddressRegionKHR,
    callable: *const vk::StridedDeviceAddressRegionKHR,
    address: vk::DeviceAddress,
) {
    cmd("vkCmdTraceRaysIndirectKHR", h, |cb| {
        // SAFETY: the region pointers of the call.
        let sbt = unsafe { regions(raygen, miss, hit, callable) };
        cb.trace_rays_indirect(Some(sbt), address);
        Ok(())
    })
}

/// The regions and the launch size are both read from `VkTraceRaysIndirectCommand2KHR` when
/// the queue gets there.
pub unsafe extern "system" fn cmd_trace_rays_indirect2(h: vk::CommandBuffer, address: vk::DeviceAddress) {
    cmd("vkCmdTraceRaysIndirect2KHR", h, |cb| {
        cb.trace_rays_indirect(None, address);
        Ok(())
    })
}

const _: () = assert!(HANDLE_BYTES == 32);
