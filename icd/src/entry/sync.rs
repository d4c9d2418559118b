//! Fences, semaphores and events.

use super::device::device;
use crate::handle::{guard_device_result, guard_device_void, nd, nd_destroy, nd_new};
use crate::util::{find_in, slice};
use ash::vk;
use std::sync::Arc;
use vortex_runtime::sync::deadline;

pub type Fence = vortex_runtime::sync::Fence;
pub type Semaphore = vortex_runtime::sync::Semaphore;
pub type Event = vortex_runtime::sync::Event;

pub unsafe extern "system" fn create_fence(
    d: vk::Device,
    p_info: *const vk::FenceCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_fence: *mut vk::Fence,
) -> vk::Result {
    guard_device_result("vkCreateFence", d, || {
        device(d)?;
        // SAFETY: valid create info.
        let signaled = unsafe { (*p_info).flags.contains(vk::FenceCreateFlags::SIGNALED) };
        // SAFETY: valid output pointer.
        unsafe { *p_fence = nd_new(Arc::new(Fence::new(signaled))) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_fence(d: vk::Device, f: vk::Fence, _a: *const vk::AllocationCallbacks<'_>) {
    // SAFETY: a live fence handle or null.
    guard_device_void("vkDestroyFence", d, || unsafe { nd_destroy::<_, Fence>(f) })
}

pub unsafe extern "system" fn reset_fences(d: vk::Device, count: u32, p: *const vk::Fence) -> vk::Result {
    guard_device_result("vkResetFences", d, || {
        device(d)?;
        // SAFETY: fence array per the API contract.
        for &f in unsafe { slice(p, count) } {
            // SAFETY: live fence handle.
            unsafe { nd::<_, Fence>(f)? }.reset();
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn get_fence_status(d: vk::Device, f: vk::Fence) -> vk::Result {
    guard_device_result("vkGetFenceStatus", d, || {
        let dev = device(d)?;
        dev.rt.check()?;
        // SAFETY: live fence handle.
        Ok(if unsafe { nd::<_, Fence>(f)? }.is_signaled() { vk::Result::SUCCESS } else { vk::Result::NOT_READY })
    })
}

pub unsafe extern "system" fn wait_for_fences(
    d: vk::Device,
    count: u32,
    p: *const vk::Fence,
    wait_all: vk::Bool32,
    timeout: u64,
) -> vk::Result {
    guard_device_result("vkWaitForFences", d, || {
        let dev = device(d)?;
        let mut fences = Vec::new();
        // SAFETY: fence array per the API contract.
        for &f in unsafe { slice(p, count) } {
            // SAFETY: live fence handle.
            fences.push(unsafe { nd::<_, Fence>(f)? });
        }
        let refs: Vec<&Fence> = fences.iter().map(|f| f.as_ref()).collect();
        let done = vortex_runtime::sync::wait_fences(&refs, wait_all != 0, deadline(timeout))?;
        dev.rt.check()?;
        Ok(if done { vk::Result::SUCCESS } else { vk::Result::TIMEOUT })
    })
}

pub unsafe extern "system" fn create_semaphore(
    d: vk::Device,
    p_info: *const vk::SemaphoreCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_sem: *mut vk::Semaphore,
) -> vk::Result {
    guard_device_result("vkCreateSemaphore", d, || {
        device(d)?;
        // SAFETY: the create info's pNext chain.
        let ty = unsafe {
            find_in::<vk::SemaphoreTypeCreateInfo>((*p_info).p_next, vk::StructureType::SEMAPHORE_TYPE_CREATE_INFO)
        };
        let (timeline, initial) =
            ty.map_or((false, 0), |t| (t.semaphore_type == vk::SemaphoreType::TIMELINE, t.initial_value));
        // SAFETY: valid output pointer.
        unsafe { *p_sem = nd_new(Arc::new(Semaphore::new(timeline, initial))) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_semaphore(
    d: vk::Device,
    s: vk::Semaphore,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live semaphore handle or null.
    guard_device_void("vkDestroySemaphore", d, || unsafe { nd_destroy::<_, Semaphore>(s) })
}

pub unsafe extern "system" fn get_semaphore_counter_value(
    d: vk::Device,
    s: vk::Semaphore,
    p_value: *mut u64,
) -> vk::Result {
    guard_device_result("vkGetSemaphoreCounterValue", d, || {
        device(d)?.rt.check()?;
        // SAFETY: live semaphore handle and valid output pointer.
        unsafe { *p_value = nd::<_, Semaphore>(s)?.value() };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn wait_semaphores(
    d: vk::Device,
    p_info: *const vk::SemaphoreWaitInfo<'_>,
    timeout: u64,
) -> vk::Result {
    guard_device_result("vkWaitSemaphores", d, || {
        let dev = device(d)?;
        // SAFETY: valid wait info.
        let info = unsafe { &*p_info };
        let sems = unsafe { slice(info.p_semaphores, info.semaphore_count) };
        let vals = unsafe { slice(info.p_values, info.semaphore_count) };
        let any = info.flags.contains(vk::SemaphoreWaitFlags::ANY);
        let until = deadline(timeout);
        let mut list = Vec::new();
        for (&s, &v) in sems.iter().zip(vals) {
            // SAFETY: live semaphore handle.
            list.push((unsafe { nd::<_, Semaphore>(s)? }, v));
        }
        loop {
            let ready = |(s, v): &(Arc<Semaphore>, u64)| s.value() >= *v;
            let done = if any { list.iter().any(ready) } else { list.iter().all(ready) };
            if done {
                dev.rt.check()?;
                return Ok(vk::Result::SUCCESS);
            }
            if until.is_some_and(|t| std::time::Instant::now() >= t) {
                return Ok(vk::Result::TIMEOUT);
            }
            dev.rt.check()?;
            // Host waits on timelines poll; device-side waits block in the queue thread.
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    })
}

pub unsafe extern "system" fn signal_semaphore(
    d: vk::Device,
    p_info: *const vk::SemaphoreSignalInfo<'_>,
) -> vk::Result {
    guard_device_result("vkSignalSemaphore", d, || {
        device(d)?;
        // SAFETY: valid signal info and live semaphore handle.
        let info = unsafe { &*p_info };
        unsafe { nd::<_, Semaphore>(info.semaphore)? }.signal(info.value);
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn create_event(
    d: vk::Device,
    _p_info: *const vk::EventCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_event: *mut vk::Event,
) -> vk::Result {
    guard_device_result("vkCreateEvent", d, || {
        device(d)?;
        // SAFETY: valid output pointer.
        unsafe { *p_event = nd_new(Arc::new(Event::new())) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_event(d: vk::Device, e: vk::Event, _a: *const vk::AllocationCallbacks<'_>) {
    // SAFETY: a live event handle or null.
    guard_device_void("vkDestroyEvent", d, || unsafe { nd_destroy::<_, Event>(e) })
}

pub unsafe extern "system" fn get_event_status(d: vk::Device, e: vk::Event) -> vk::Result {
    // SAFETY: a live event handle.
    guard_device_result("vkGetEventStatus", d, || Ok(unsafe { nd::<_, Event>(e)? }.status()))
}

pub unsafe extern "system" fn set_event(d: vk::Device, e: vk::Event) -> vk::Result {
    guard_device_result("vkSetEvent", d, || {
        // SAFETY: a live event handle.
        unsafe { nd::<_, Event>(e)? }.set(true);
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn reset_event(d: vk::Device, e: vk::Event) -> vk::Result {
    guard_device_result("vkResetEvent", d, || {
        // SAFETY: a live event handle.
        unsafe { nd::<_, Event>(e)? }.set(false);
        Ok(vk::Result::SUCCESS)
    })
}
