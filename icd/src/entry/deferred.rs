//! VK_KHR_deferred_host_operations. No host command defers today (host acceleration-structure
//! commands are not offered), so an operation object is only ever complete: joins report
//! THREAD_DONE and the result is SUCCESS.

use super::device::device;
use crate::handle::{guard_result, guard_void, nd_destroy, nd_new};
use ash::vk;
use std::sync::Arc;

pub struct DeferredOperation;

pub unsafe extern "system" fn create_deferred_operation(
    d: vk::Device,
    _a: *const vk::AllocationCallbacks<'_>,
    p_op: *mut vk::DeferredOperationKHR,
) -> vk::Result {
    guard_result("vkCreateDeferredOperationKHR", || {
        device(d)?;
        // SAFETY: valid output pointer.
        unsafe { *p_op = nd_new(Arc::new(DeferredOperation)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_deferred_operation(
    _d: vk::Device,
    op: vk::DeferredOperationKHR,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live handle or null.
    guard_void("vkDestroyDeferredOperationKHR", || unsafe { nd_destroy::<_, DeferredOperation>(op) })
}

pub unsafe extern "system" fn get_deferred_operation_max_concurrency(
    _d: vk::Device,
    _op: vk::DeferredOperationKHR,
) -> u32 {
    1
}

pub unsafe extern "system" fn get_deferred_operation_result(
    _d: vk::Device,
    _op: vk::DeferredOperationKHR,
) -> vk::Result {
    vk::Result::SUCCESS
}

pub unsafe extern "system" fn deferred_operation_join(_d: vk::Device, _op: vk::DeferredOperationKHR) -> vk::Result {
    vk::Result::THREAD_DONE_KHR
}
