//! Device and queue entry points.

use super::instance::physical_gpu;
use super::sync::{Fence, Semaphore};
use crate::caps;
use crate::handle::{
    disp, disp_destroy, dispatchable, guard_device_result, guard_device_void, guard_result, guard_void, nd, nd_opt,
    OfDevice,
};
use crate::util::{cstr, find_in, slice};
use ash::vk;
use std::sync::Arc;
use vortex_runtime::queue::Submission;

pub struct Device {
    pub rt: Arc<vortex_runtime::device::Device>,
    pub queue: vk::Queue,
    pub extensions: Vec<String>,
}

impl Device {
    pub fn has_extension(&self, name: &str) -> bool {
        self.extensions.iter().any(|e| e == name)
    }
}

pub struct Queue {
    pub rt: Arc<vortex_runtime::device::Device>,
}

impl OfDevice for vk::Device {
    fn runtime_device(self) -> Option<Arc<vortex_runtime::device::Device>> {
        device(self).ok().map(|d| d.rt.clone())
    }
}

impl OfDevice for vk::Queue {
    fn runtime_device(self) -> Option<Arc<vortex_runtime::device::Device>> {
        queue(self).ok().map(|q| q.rt.clone())
    }
}

/// The runtime device behind a `VkDevice`.
pub fn device<'a>(d: vk::Device) -> Result<&'a Device, vk::Result> {
    // SAFETY: a live device handle per the API contract.
    unsafe { disp::<_, Device>(d) }
}

pub unsafe extern "system" fn create_device(
    pd: vk::PhysicalDevice,
    p_info: *const vk::DeviceCreateInfo<'_>,
    _alloc: *const vk::AllocationCallbacks<'_>,
    p_device: *mut vk::Device,
) -> vk::Result {
    guard_result("vkCreateDevice", || {
        let gpu = physical_gpu(pd)?;
        // SAFETY: valid create info per the API contract.
        let info = unsafe { &*p_info };
        let mut extensions = Vec::new();
        // SAFETY: enabled extension names are C strings.
        for &n in unsafe { slice(info.pp_enabled_extension_names, info.enabled_extension_count) } {
            let n = unsafe { cstr(n) };
            if !caps::device_extensions().iter().any(|(e, _)| *e == n) {
                tracing::warn!("vkCreateDevice: extension {n} is not supported");
                return Err(vk::Result::ERROR_EXTENSION_NOT_PRESENT);
            }
            extensions.push(n);
        }
        // SAFETY: queue create infos per the API contract.
        for q in unsafe { slice(info.p_queue_create_infos, info.queue_create_info_count) } {
            if q.queue_family_index != 0 || q.queue_count > 1 {
                tracing::warn!(
                    "vkCreateDevice: {} queue(s) of family {} requested; the device has one queue in family 0",
                    q.queue_count,
                    q.queue_family_index
                );
                return Err(vk::Result::ERROR_INITIALIZATION_FAILED);
            }
        }
        // Enabled features must be ones we report; unknown pNext structures are ignored.
        if !info.p_enabled_features.is_null() {
            // SAFETY: non-null features pointer.
            check_features10(unsafe { &*info.p_enabled_features })?;
        }
        // SAFETY: the create info's pNext chain.
        if let Some(what) = unsafe { caps::unsupported_feature(info.p_next) } {
            tracing::warn!("vkCreateDevice: {what} is requested but not supported");
            return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
        }
        let rt = vortex_runtime::device::Device::new(gpu)?;
        // SAFETY: the create info's pNext chain.
        let robustness2 = unsafe {
            find_in::<vk::PhysicalDeviceRobustness2FeaturesEXT>(
                info.p_next,
                vk::StructureType::PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT,
            )
        };
        if robustness2.is_some_and(|f| f.null_descriptor != 0) {
            rt.space.set_null_descriptor(true);
        }
        // robustBufferAccess, from pEnabledFeatures or a chained VkPhysicalDeviceFeatures2.
        // SAFETY: the create info's pNext chain.
        let features2 = unsafe {
            find_in::<vk::PhysicalDeviceFeatures2>(info.p_next, vk::StructureType::PHYSICAL_DEVICE_FEATURES_2)
        };
        // SAFETY: a non-null features pointer, per the API contract.
        let core = unsafe { info.p_enabled_features.as_ref() }.or(features2.map(|f| &f.features));
        if core.is_some_and(|f| f.robust_buffer_access != 0) {
            rt.set_robust_buffer_access(true);
        }
        let queue: vk::Queue = dispatchable(Queue { rt: rt.clone() });
        // SAFETY: valid output pointer.
        unsafe { *p_device = dispatchable(Device { rt, queue, extensions }) };
        Ok(vk::Result::SUCCESS)
    })
}

fn check_features10(f: &vk::PhysicalDeviceFeatures) -> Result<(), vk::Result> {
    let have = caps::features10();
    // Both are plain structs of Bool32: compare field by field as words.
    // SAFETY: PhysicalDeviceFeatures is repr(C) and made only of u32 fields.
    let (a, b) = unsafe {
        let n = std::mem::size_of::<vk::PhysicalDeviceFeatures>() / 4;
        (
            std::slice::from_raw_parts(f as *const _ as *const u32, n),
            std::slice::from_raw_parts(&have as *const _ as *const u32, n),
        )
    };
    if let Some(i) = a.iter().zip(b).position(|(want, has)| *want != 0 && *has == 0) {
        tracing::warn!("vkCreateDevice: core feature #{i} of VkPhysicalDeviceFeatures is requested but not supported");
        return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
    }
    Ok(())
}

pub unsafe extern "system" fn destroy_device(d: vk::Device, _alloc: *const vk::AllocationCallbacks<'_>) {
    guard_void("vkDestroyDevice", || {
        if let Ok(dev) = device(d) {
            let _ = dev.rt.wait_idle();
            // SAFETY: the queue is owned by the device and destroyed with it.
            unsafe {
                disp_destroy::<_, Queue>(dev.queue);
                disp_destroy::<_, Device>(d);
            }
        }
    })
}

pub unsafe extern "system" fn get_device_queue(d: vk::Device, family: u32, index: u32, p_queue: *mut vk::Queue) {
    guard_device_void("vkGetDeviceQueue", d, || {
        if let Ok(dev) = device(d) {
            let q = if family == 0 && index == 0 { dev.queue } else { vk::Queue::null() };
            // SAFETY: valid output pointer.
            unsafe { *p_queue = q };
        }
    })
}

pub unsafe extern "system" fn get_device_queue2(
    d: vk::Device,
    p_info: *const vk::DeviceQueueInfo2<'_>,
    p_queue: *mut vk::Queue,
) {
    // SAFETY: valid input per the API contract.
    let (family, index) = unsafe { ((*p_info).queue_family_index, (*p_info).queue_index) };
    // SAFETY: forwarded pointers.
    unsafe { get_device_queue(d, family, index, p_queue) }
}

/// A batch's semaphores with their values: the timeline values chained to it, 0 for binary
/// semaphores.
///
/// # Safety
/// Every handle is a live semaphore.
pub(super) unsafe fn semaphore_list(
    handles: &[vk::Semaphore],
    values: Option<&[u64]>,
) -> Result<Vec<(Arc<Semaphore>, u64)>, vk::Result> {
    let mut out = Vec::with_capacity(handles.len());
    for (i, &h) in handles.iter().enumerate() {
        // SAFETY: per the contract.
        let s = unsafe { nd::<_, Semaphore>(h)? };
        out.push((s, values.and_then(|v| v.get(i).copied()).unwrap_or(0)));
    }
    Ok(out)
}

pub(super) fn queue<'a>(q: vk::Queue) -> Result<&'a Queue, vk::Result> {
    // SAFETY: a live queue handle per the API contract.
    unsafe { disp::<_, Queue>(q) }
}

/// One batch of a submission with its semaphores resolved.
pub(super) struct Batch {
    pub waits: Vec<(Arc<Semaphore>, u64)>,
    pub command_buffers: Vec<vk::CommandBuffer>,
    pub signals: Vec<(Arc<Semaphore>, u64)>,
}

/// Submits `count` batches in order, `batch(k)` resolving the k-th; the fence is signalled
/// with the last (an empty submission only signals it). Shared by `vkQueueSubmit` and
/// `vkQueueSubmit2`, whose batches differ only in how they spell their arrays.
pub(super) fn submit_batches(
    name: &str,
    q: vk::Queue,
    count: usize,
    fence: vk::Fence,
    mut batch: impl FnMut(usize) -> Result<Batch, vk::Result>,
) -> Result<vk::Result, vk::Result> {
    let q = queue(q)?;
    q.rt.check()?;
    // SAFETY: a live fence handle or null.
    let fence = unsafe { nd_opt::<_, Fence>(fence) };
    if count == 0 {
        q.rt.queue.submit(Submission { waits: vec![], recordings: vec![], signals: vec![], fence })?;
        return Ok(vk::Result::SUCCESS);
    }
    for k in 0..count {
        let Batch { waits, command_buffers, signals } = batch(k)?;
        let mut recordings = Vec::with_capacity(command_buffers.len());
        for cb in command_buffers {
            match super::command::command_buffer(cb)?.recording() {
                Some(r) => recordings.push(r),
                None => {
                    tracing::error!("{name}: command buffer is not in the executable state");
                    return Err(vk::Result::ERROR_UNKNOWN);
                }
            }
        }
        let fence = if k == count - 1 { fence.clone() } else { None };
        q.rt.queue.submit(Submission { waits, recordings, signals, fence })?;
    }
    Ok(vk::Result::SUCCESS)
}

pub unsafe extern "system" fn queue_submit(
    q: vk::Queue,
    count: u32,
    p_submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    guard_device_result("vkQueueSubmit", q, || {
        // SAFETY: submit infos per the API contract.
        let submits = unsafe { slice(p_submits, count) };
        submit_batches("vkQueueSubmit", q, submits.len(), fence, |k| {
            let s = &submits[k];
            // SAFETY: the timeline-semaphore values, if chained.
            let tl = unsafe {
                find_in::<vk::TimelineSemaphoreSubmitInfo>(s.p_next, vk::StructureType::TIMELINE_SEMAPHORE_SUBMIT_INFO)
            };
            // SAFETY: arrays of the submit info.
            let wait_sems = unsafe { slice(s.p_wait_semaphores, s.wait_semaphore_count) };
            let sig_sems = unsafe { slice(s.p_signal_semaphores, s.signal_semaphore_count) };
            let wait_vals = tl.map(|t| unsafe { slice(t.p_wait_semaphore_values, t.wait_semaphore_value_count) });
            let sig_vals = tl.map(|t| unsafe { slice(t.p_signal_semaphore_values, t.signal_semaphore_value_count) });
            // SAFETY: live semaphore handles; the command buffer array of the submit info.
            unsafe {
                Ok(Batch {
                    waits: semaphore_list(wait_sems, wait_vals)?,
                    command_buffers: slice(s.p_command_buffers, s.command_buffer_count).to_vec(),
                    signals: semaphore_list(sig_sems, sig_vals)?,
                })
            }
        })
    })
}

pub unsafe extern "system" fn queue_wait_idle(q: vk::Queue) -> vk::Result {
    guard_device_result("vkQueueWaitIdle", q, || {
        let q = queue(q)?;
        q.rt.wait_idle()?;
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn device_wait_idle(d: vk::Device) -> vk::Result {
    guard_device_result("vkDeviceWaitIdle", d, || {
        device(d)?.rt.wait_idle()?;
        Ok(vk::Result::SUCCESS)
    })
}
