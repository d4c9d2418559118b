//! Shader modules, pipeline layouts, pipeline caches and compute pipelines (graphics
//! pipelines are in `graphics`).

use super::device::device;
use crate::handle::{guard_device_result, guard_device_void, nd, nd_destroy, nd_new};
use crate::util::{cstr, slice};
use ash::vk;
use std::ffi::c_void;
use std::sync::Arc;
use vortex_runtime::descriptor::SetLayout;
use vortex_runtime::pipeline::{Pipeline, PipelineLayout, ShaderModule, Specialization};

pub unsafe extern "system" fn create_shader_module(
    d: vk::Device,
    p_info: *const vk::ShaderModuleCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_module: *mut vk::ShaderModule,
) -> vk::Result {
    guard_device_result("vkCreateShaderModule", d, || {
        device(d)?;
        // SAFETY: valid create info; code_size bytes of code.
        let info = unsafe { &*p_info };
        let words = unsafe { slice(info.p_code, (info.code_size / 4) as u32) }.to_vec();
        // SAFETY: valid output pointer.
        unsafe { *p_module = nd_new(Arc::new(ShaderModule { words })) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_shader_module(
    d: vk::Device,
    m: vk::ShaderModule,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live module handle or null.
    guard_device_void("vkDestroyShaderModule", d, || unsafe { nd_destroy::<_, ShaderModule>(m) })
}

pub unsafe extern "system" fn create_pipeline_layout(
    d: vk::Device,
    p_info: *const vk::PipelineLayoutCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_layout: *mut vk::PipelineLayout,
) -> vk::Result {
    guard_device_result("vkCreatePipelineLayout", d, || {
        device(d)?;
        // SAFETY: valid create info.
        let info = unsafe { &*p_info };
        let mut sets = Vec::new();
        for &l in unsafe { slice(info.p_set_layouts, info.set_layout_count) } {
            // SAFETY: live layout handles (null is allowed for unused sets).
            sets.push(if l == vk::DescriptorSetLayout::null() {
                None
            } else {
                Some(unsafe { nd::<_, SetLayout>(l)? })
            });
        }
        let push = unsafe { slice(info.p_push_constant_ranges, info.push_constant_range_count) }
            .iter()
            .map(|r| r.offset + r.size)
            .max()
            .unwrap_or(0);
        let layout = PipelineLayout::new(sets, push)?;
        // SAFETY: valid output pointer.
        unsafe { *p_layout = nd_new(Arc::new(layout)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_pipeline_layout(
    d: vk::Device,
    l: vk::PipelineLayout,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live layout handle or null.
    guard_device_void("vkDestroyPipelineLayout", d, || unsafe { nd_destroy::<_, PipelineLayout>(l) })
}

/// Pipeline caches hold nothing: compiling is cheap next to running.
pub struct PipelineCache;

pub unsafe extern "system" fn create_pipeline_cache(
    d: vk::Device,
    _p: *const vk::PipelineCacheCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_cache: *mut vk::PipelineCache,
) -> vk::Result {
    guard_device_result("vkCreatePipelineCache", d, || {
        device(d)?;
        // SAFETY: valid output pointer.
        unsafe { *p_cache = nd_new(Arc::new(PipelineCache)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_pipeline_cache(
    d: vk::Device,
    c: vk::PipelineCache,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live cache handle or null.
    guard_device_void("vkDestroyPipelineCache", d, || unsafe { nd_destroy::<_, PipelineCache>(c) })
}

pub unsafe extern "system" fn get_pipeline_cache_data(
    d: vk::Device,
    _c: vk::PipelineCache,
    p_size: *mut usize,
    p_data: *mut c_void,
) -> vk::Result {
    guard_device_result("vkGetPipelineCacheData", d, || {
        // The header every cache blob starts with (version one), and no entries.
        let mut h = [0u8; 32];
        h[0..4].copy_from_slice(&32u32.to_le_bytes());
        h[4..8].copy_from_slice(&1u32.to_le_bytes());
        h[8..12].copy_from_slice(&crate::caps::VENDOR_ID.to_le_bytes());
        h[12..16].copy_from_slice(&crate::caps::DEVICE_ID.to_le_bytes());
        h[16..32].copy_from_slice(&crate::caps::DEVICE_UUID);
        // SAFETY: valid size pointer; data has *p_size bytes when non-null.
        unsafe {
            if p_data.is_null() {
                *p_size = h.len();
                return Ok(vk::Result::SUCCESS);
            }
            if *p_size < h.len() {
                *p_size = 0;
                return Ok(vk::Result::INCOMPLETE);
            }
            std::ptr::copy_nonoverlapping(h.as_ptr(), p_data.cast(), h.len());
            *p_size = h.len();
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn merge_pipeline_caches(
    _d: vk::Device,
    _dst: vk::PipelineCache,
    _n: u32,
    _src: *const vk::PipelineCache,
) -> vk::Result {
    vk::Result::SUCCESS
}

pub unsafe extern "system" fn create_compute_pipelines(
    d: vk::Device,
    _cache: vk::PipelineCache,
    count: u32,
    p_infos: *const vk::ComputePipelineCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_pipelines: *mut vk::Pipeline,
) -> vk::Result {
    // SAFETY: the caller's arrays per the API contract.
    unsafe { create_pipelines("vkCreateComputePipelines", d, count, p_infos, p_pipelines, create_one) }
}

/// `vkCreate*Pipelines`: each create info through `create_one`; a failed one leaves a null
/// handle and its error is the call's result, the others are still created.
///
/// # Safety
/// `p_infos` holds `count` valid create infos and `p_pipelines` room for `count` handles.
pub(super) unsafe fn create_pipelines<I>(
    name: &'static str,
    d: vk::Device,
    count: u32,
    p_infos: *const I,
    p_pipelines: *mut vk::Pipeline,
    create_one: unsafe fn(&super::device::Device, &I) -> Result<Pipeline, vk::Result>,
) -> vk::Result {
    guard_device_result(name, d, || {
        let dev = device(d)?;
        dev.rt.check()?;
        let mut result = vk::Result::SUCCESS;
        // SAFETY: create infos per the API contract.
        for (i, info) in unsafe { slice(p_infos, count) }.iter().enumerate() {
            // SAFETY: forwarded pointers of a valid create info.
            let r = unsafe { create_one(dev, info) };
            // SAFETY: the output array holds `count` handles.
            unsafe {
                *p_pipelines.add(i) = match r {
                    Ok(p) => nd_new(Arc::new(p)),
                    Err(e) => {
                        result = e;
                        vk::Pipeline::null()
                    }
                }
            };
        }
        Ok(result)
    })
}

unsafe fn create_one(
    dev: &super::device::Device,
    info: &vk::ComputePipelineCreateInfo<'_>,
) -> Result<Pipeline, vk::Result> {
    let stage = &info.stage;
    if stage.stage != vk::ShaderStageFlags::COMPUTE {
        tracing::error!("vkCreateComputePipelines: stage {:?} is not a compute stage", stage.stage);
        return Err(vk::Result::ERROR_UNKNOWN);
    }
    // SAFETY: live handles and entry name of a valid create info.
    let module = unsafe { nd::<_, ShaderModule>(stage.module)? };
    let layout = unsafe { nd::<_, PipelineLayout>(info.layout)? };
    let entry = unsafe { cstr(stage.p_name) };
    // SAFETY: the stage's specialization info.
    let spec = unsafe { specialization(stage) }?;
    Pipeline::compute(&dev.rt, &module, &entry, &spec, layout)
}

/// The specialization constants of a stage: (constant id, bytes).
///
/// # Safety
/// `stage.p_specialization_info` must be null or valid, with its arrays.
pub(crate) unsafe fn specialization(
    stage: &vk::PipelineShaderStageCreateInfo<'_>,
) -> Result<Specialization, vk::Result> {
    let mut spec = Vec::new();
    if !stage.p_specialization_info.is_null() {
        // SAFETY: non-null specialization info and its arrays.
        let s = unsafe { &*stage.p_specialization_info };
        let data = unsafe { slice(s.p_data as *const u8, s.data_size as u32) };
        for e in unsafe { slice(s.p_map_entries, s.map_entry_count) } {
            let start = e.offset as usize;
            let end = start + e.size;
            if end > data.len() {
                tracing::error!("specialization constant {} reads past the data", e.constant_id);
                return Err(vk::Result::ERROR_UNKNOWN);
            }
            spec.push((e.constant_id, data[start..end].to_vec()));
        }
    }
    Ok(spec)
}

pub unsafe extern "system" fn destroy_pipeline(d: vk::Device, p: vk::Pipeline, _a: *const vk::AllocationCallbacks<'_>) {
    // SAFETY: a live pipeline handle or null.
    guard_device_void("vkDestroyPipeline", d, || unsafe { nd_destroy::<_, Pipeline>(p) })
}
