//! Synchronization2 (Vulkan 1.3, VK_KHR_synchronization2): the `*2` commands take stage and
//! access masks in dependency-info structures instead of arguments. The queue executes
//! commands in order over coherent memory, so, as for the first forms, barriers and event
//! waits need no work and the stage masks only say *when*, which in-order execution already
//! satisfies; what the commands do (set an event, write a timestamp, submit batches with
//! semaphore values) goes to the same runtime calls as the first forms.

use super::command::cmd;
use super::device::{semaphore_list, submit_batches, Batch};
use super::sync::{Event, Semaphore};
use crate::handle::{guard_device_result, nd};
use crate::util::slice;
use ash::vk;
use std::sync::Arc;
use vortex_runtime::query::QueryPool;

pub unsafe extern "system" fn cmd_set_event2(h: vk::CommandBuffer, e: vk::Event, _d: *const vk::DependencyInfo<'_>) {
    cmd("vkCmdSetEvent2", h, |cb| {
        // SAFETY: live event handle.
        cb.set_event(unsafe { nd::<_, Event>(e)? });
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_reset_event2(h: vk::CommandBuffer, e: vk::Event, _s: vk::PipelineStageFlags2) {
    cmd("vkCmdResetEvent2", h, |cb| {
        // SAFETY: live event handle.
        cb.reset_event(unsafe { nd::<_, Event>(e)? });
        Ok(())
    })
}

/// In-order execution makes every device-side event wait already satisfied.
pub unsafe extern "system" fn cmd_wait_events2(
    _h: vk::CommandBuffer,
    _n: u32,
    _e: *const vk::Event,
    _d: *const vk::DependencyInfo<'_>,
) {
}

pub unsafe extern "system" fn cmd_write_timestamp2(
    h: vk::CommandBuffer,
    _stage: vk::PipelineStageFlags2,
    p: vk::QueryPool,
    query: u32,
) {
    cmd("vkCmdWriteTimestamp2", h, |cb| {
        // SAFETY: a live pool handle.
        let pool = unsafe { nd::<_, QueryPool>(p)? };
        cb.write_timestamp(pool, query);
        Ok(())
    })
}

/// A batch's semaphores and the values they wait for or signal (0 for binary semaphores,
/// which ignore it). The stage masks need no work (in-order queue).
///
/// # Safety
/// `infos` hold live semaphore handles.
unsafe fn semaphores(infos: &[vk::SemaphoreSubmitInfo<'_>]) -> Result<Vec<(Arc<Semaphore>, u64)>, vk::Result> {
    let handles: Vec<_> = infos.iter().map(|i| i.semaphore).collect();
    let values: Vec<_> = infos.iter().map(|i| i.value).collect();
    // SAFETY: per the contract.
    unsafe { semaphore_list(&handles, Some(&values)) }
}

pub unsafe extern "system" fn queue_submit2(
    q: vk::Queue,
    count: u32,
    p_submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    guard_device_result("vkQueueSubmit2", q, || {
        // SAFETY: submit infos per the API contract.
        let submits = unsafe { slice(p_submits, count) };
        submit_batches("vkQueueSubmit2", q, submits.len(), fence, |k| {
            let s = &submits[k];
            // SAFETY: arrays of the submit info, holding live handles.
            let infos = unsafe { slice(s.p_command_buffer_infos, s.command_buffer_info_count) };
            let command_buffers: Vec<_> = infos.iter().map(|i| i.command_buffer).collect();
            // SAFETY: the semaphore-info arrays of the submit info, holding live handles.
            unsafe {
                Ok(Batch {
                    waits: semaphores(slice(s.p_wait_semaphore_infos, s.wait_semaphore_info_count))?,
                    command_buffers,
                    signals: semaphores(slice(s.p_signal_semaphore_infos, s.signal_semaphore_info_count))?,
                })
            }
        })
    })
}
