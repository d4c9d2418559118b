//! `vkQueueBindSparse`: each `VkBindSparseInfo` becomes one submission to the queue whose
//! stream binds its buffers' pages (`vortex_runtime::sparse`), with the batch's semaphores
//! and, on the last batch, the fence.

use super::device::{queue, semaphore_list};
use super::sync::Fence;
use crate::handle::{guard_device_result, nd, nd_opt};
use crate::util::{find_in, slice};
use ash::vk;
use std::sync::Arc;
use vortex_runtime::buffer::Buffer;
use vortex_runtime::memory::Memory;
use vortex_runtime::queue::Submission;
use vortex_runtime::sparse::{BindBatch, BufferBinds, MemoryBind};
use vortex_runtime::stream::{Recording, StreamOp};

pub unsafe extern "system" fn queue_bind_sparse(
    q: vk::Queue,
    count: u32,
    p_infos: *const vk::BindSparseInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    guard_device_result("vkQueueBindSparse", q, || {
        let q = queue(q)?;
        q.rt.check()?;
        // SAFETY: bind infos per the API contract.
        let infos = unsafe { slice(p_infos, count) };
        // SAFETY: a live fence handle or null.
        let fence = unsafe { nd_opt::<_, Fence>(fence) };
        // Every batch is checked before any is queued, so a bad one queues nothing.
        let mut batches = Vec::with_capacity(infos.len());
        for info in infos {
            // SAFETY: the arrays and chain of a valid bind info.
            batches.push(unsafe { batch(info) }?);
        }
        if batches.is_empty() {
            q.rt.queue.submit(Submission { waits: vec![], recordings: vec![], signals: vec![], fence })?;
            return Ok(vk::Result::SUCCESS);
        }
        let last = batches.len() - 1;
        for (k, b) in batches.into_iter().enumerate() {
            q.rt.queue.submit(Submission { fence: if k == last { fence.clone() } else { None }, ..b })?;
        }
        Ok(vk::Result::SUCCESS)
    })
}

/// One `VkBindSparseInfo` as a submission (without its fence).
///
/// # Safety
/// `info` is a valid bind info: its arrays hold their counts, its handles are live.
unsafe fn batch(info: &vk::BindSparseInfo<'_>) -> Result<Submission, vk::Result> {
    if info.image_opaque_bind_count != 0 || info.image_bind_count != 0 {
        tracing::error!("vkQueueBindSparse: image binds, but sparse images are not supported");
        return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
    }
    // SAFETY: the timeline values, if chained.
    let tl = unsafe {
        find_in::<vk::TimelineSemaphoreSubmitInfo>(info.p_next, vk::StructureType::TIMELINE_SEMAPHORE_SUBMIT_INFO)
    };
    // SAFETY: arrays of the bind info and of its timeline values.
    let (waits, signals) = unsafe {
        let wait_vals = tl.map(|t| slice(t.p_wait_semaphore_values, t.wait_semaphore_value_count));
        let sig_vals = tl.map(|t| slice(t.p_signal_semaphore_values, t.signal_semaphore_value_count));
        (
            semaphore_list(slice(info.p_wait_semaphores, info.wait_semaphore_count), wait_vals)?,
            semaphore_list(slice(info.p_signal_semaphores, info.signal_semaphore_count), sig_vals)?,
        )
    };
    let mut buffers = Vec::new();
    // SAFETY: the buffer bind array of the bind info.
    for b in unsafe { slice(info.p_buffer_binds, info.buffer_bind_count) } {
        // SAFETY: live buffer handle; the bind array of this buffer's binds.
        let (buffer, binds) = unsafe { (nd::<_, Buffer>(b.buffer)?, slice(b.p_binds, b.bind_count)) };
        let mut list = Vec::with_capacity(binds.len());
        for m in binds {
            if !m.flags.is_empty() {
                tracing::error!("vkQueueBindSparse: bind flags {:?} (metadata) on a buffer", m.flags);
                return Err(vk::Result::ERROR_UNKNOWN);
            }
            // SAFETY: a live memory handle or null (null unbinds).
            let memory = unsafe { nd_opt::<_, Memory>(m.memory) }.map(|mem| (mem, m.memory_offset));
            list.push(MemoryBind { resource_offset: m.resource_offset, size: m.size, memory });
        }
        buffers.push(BufferBinds::new(buffer, list)?);
    }
    let rec = Recording { ops: vec![StreamOp::BindSparse(Arc::new(BindBatch(buffers)))], ..Recording::default() };
    Ok(Submission { waits, recordings: vec![Arc::new(rec)], signals, fence: None })
}
