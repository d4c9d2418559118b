//! VK_KHR_deferred_host_operations. A host command given an operation object queues its work
//! as units (one per build info, one per copy) and returns `VK_OPERATION_DEFERRED_KHR` —
//! unless the work is too small to be worth the application's threads, which it does at
//! once, returning `VK_OPERATION_NOT_DEFERRED_KHR`;
//! threads that call `vkDeferredOperationJoinKHR` take units until none are left. The
//! thread that finishes the last unit completes the operation and gets `VK_SUCCESS`; a
//! thread that finds nothing left while others still run gets `VK_THREAD_DONE_KHR`, and
//! `vkGetDeferredOperationResultKHR` says `VK_NOT_READY` until the operation completes.

use super::device::device;
use crate::handle::{guard_device, guard_device_result, guard_device_void, nd, nd_destroy, nd_new, panic_message};
use ash::vk;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use vortex_runtime::device::Device as RtDevice;

/// One piece of deferred work; returns its result.
pub type Unit = Box<dyn FnOnce() -> vk::Result + Send>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// No command deferred on it (new, or its last command completed and was read).
    Idle,
    Deferred,
    Complete,
}

struct Inner {
    state: State,
    pending: VecDeque<Unit>,
    running: u32,
    result: vk::Result,
}

pub struct DeferredOperation {
    inner: Mutex<Inner>,
    done: Condvar,
    /// The device whose host commands run here: a panic in one loses it.
    device: Weak<RtDevice>,
}

impl DeferredOperation {
    pub fn new(device: Weak<RtDevice>) -> Self {
        DeferredOperation {
            device,
            inner: Mutex::new(Inner {
                state: State::Idle,
                pending: VecDeque::new(),
                running: 0,
                result: vk::Result::SUCCESS,
            }),
            done: Condvar::new(),
        }
    }
}

impl DeferredOperation {
    /// Queues `units` as the operation's work; the caller returns
    /// `VK_OPERATION_DEFERRED_KHR`.
    pub fn defer(&self, units: Vec<Unit>) {
        let mut g = self.inner.lock();
        g.state = if units.is_empty() { State::Complete } else { State::Deferred };
        g.pending = units.into();
        g.running = 0;
        g.result = vk::Result::SUCCESS;
    }

    pub fn join(&self) -> vk::Result {
        let mut g = self.inner.lock();
        if g.state != State::Deferred {
            return vk::Result::SUCCESS;
        }
        loop {
            if let Some(unit) = g.pending.pop_front() {
                g.running += 1;
                drop(g);
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(unit))
                    .unwrap_or_else(|e| self.internal_error(&*e));
                g = self.inner.lock();
                g.running -= 1;
                if r.as_raw() < 0 && g.result == vk::Result::SUCCESS {
                    g.result = r;
                }
                continue;
            }
            if g.running == 0 {
                g.state = State::Complete;
                self.done.notify_all();
                return vk::Result::SUCCESS;
            }
            return vk::Result::THREAD_DONE_KHR;
        }
    }

    /// A unit panicked: as in any device-level entry point, the device is lost.
    fn internal_error(&self, e: &(dyn std::any::Any + Send)) -> vk::Result {
        let reason = format!("internal error in a deferred host operation: {}", panic_message(e));
        match self.device.upgrade() {
            Some(d) => {
                d.set_lost(&reason);
            }
            None => tracing::error!("{reason}"),
        }
        vk::Result::ERROR_DEVICE_LOST
    }

    pub fn result(&self) -> vk::Result {
        let g = self.inner.lock();
        match g.state {
            State::Idle => vk::Result::SUCCESS,
            State::Deferred => vk::Result::NOT_READY,
            State::Complete => g.result,
        }
    }

    /// Threads that could usefully join now (at least 1 while work remains).
    pub fn max_concurrency(&self) -> u32 {
        let g = self.inner.lock();
        match g.state {
            State::Deferred => (g.pending.len() as u32).max(1),
            _ => 0,
        }
    }
}

/// Work below this is not worth the application's threads: host commands given a
/// deferred operation do it at once and return `VK_OPERATION_NOT_DEFERRED_KHR` (spawning
/// and joining threads costs more than a small copy or build).
pub const DEFER_MIN_BYTES: u64 = 256 * 1024;
pub const DEFER_MIN_PRIMITIVES: u64 = 4096;

/// Runs a host command's units: deferred on `op` if it is not null and the work is
/// `worth` deferring (returning `VK_OPERATION_DEFERRED_KHR`), else now, in order,
/// returning the first error (`VK_OPERATION_NOT_DEFERRED_KHR` when an operation was given).
pub fn run_or_defer(op: vk::DeferredOperationKHR, units: Vec<Unit>, worth: bool) -> Result<vk::Result, vk::Result> {
    if op == vk::DeferredOperationKHR::null() || !worth {
        for u in units {
            let r = u();
            if r.as_raw() < 0 {
                return Err(r);
            }
        }
        return Ok(if op == vk::DeferredOperationKHR::null() {
            vk::Result::SUCCESS
        } else {
            vk::Result::OPERATION_NOT_DEFERRED_KHR
        });
    }
    // SAFETY: a live operation handle per the API contract.
    let op = unsafe { nd::<_, DeferredOperation>(op)? };
    op.defer(units);
    Ok(vk::Result::OPERATION_DEFERRED_KHR)
}

pub unsafe extern "system" fn create_deferred_operation(
    d: vk::Device,
    _a: *const vk::AllocationCallbacks<'_>,
    p_op: *mut vk::DeferredOperationKHR,
) -> vk::Result {
    guard_device_result("vkCreateDeferredOperationKHR", d, || {
        let dev = device(d)?;
        // SAFETY: valid output pointer.
        unsafe { *p_op = nd_new(Arc::new(DeferredOperation::new(Arc::downgrade(&dev.rt)))) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_deferred_operation(
    d: vk::Device,
    op: vk::DeferredOperationKHR,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live handle or null.
    guard_device_void("vkDestroyDeferredOperationKHR", d, || unsafe { nd_destroy::<_, DeferredOperation>(op) })
}

pub unsafe extern "system" fn get_deferred_operation_max_concurrency(
    d: vk::Device,
    op: vk::DeferredOperationKHR,
) -> u32 {
    guard_device("vkGetDeferredOperationMaxConcurrencyKHR", d, 1, || {
        // SAFETY: a live handle.
        unsafe { nd::<_, DeferredOperation>(op) }.map_or(1, |o| o.max_concurrency())
    })
}

pub unsafe extern "system" fn get_deferred_operation_result(d: vk::Device, op: vk::DeferredOperationKHR) -> vk::Result {
    guard_device_result("vkGetDeferredOperationResultKHR", d, || {
        // SAFETY: a live handle.
        Ok(unsafe { nd::<_, DeferredOperation>(op)? }.result())
    })
}

pub unsafe extern "system" fn deferred_operation_join(d: vk::Device, op: vk::DeferredOperationKHR) -> vk::Result {
    guard_device_result("vkDeferredOperationJoinKHR", d, || {
        // SAFETY: a live handle.
        Ok(unsafe { nd::<_, DeferredOperation>(op)? }.join())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn joins_from_several_threads_finish_every_unit_once() {
        let op = Arc::new(DeferredOperation::new(Weak::new()));
        assert_eq!(op.result(), vk::Result::SUCCESS);
        let ran = Arc::new(AtomicU32::new(0));
        let units: Vec<Unit> = (0..20)
            .map(|i| {
                let ran = ran.clone();
                Box::new(move || {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    ran.fetch_add(1, Ordering::SeqCst);
                    if i == 7 {
                        vk::Result::ERROR_OUT_OF_HOST_MEMORY
                    } else {
                        vk::Result::SUCCESS
                    }
                }) as Unit
            })
            .collect();
        op.defer(units);
        assert_eq!(op.result(), vk::Result::NOT_READY);
        assert_eq!(op.max_concurrency(), 20);
        let joins: Vec<_> = (0..4)
            .map(|_| {
                let op = op.clone();
                std::thread::spawn(move || op.join())
            })
            .collect();
        let results: Vec<vk::Result> = joins.into_iter().map(|j| j.join().unwrap()).collect();
        assert_eq!(ran.load(Ordering::SeqCst), 20);
        assert!(results.contains(&vk::Result::SUCCESS), "{results:?}");
        assert!(results.iter().all(|&r| r == vk::Result::SUCCESS || r == vk::Result::THREAD_DONE_KHR));
        assert_eq!(op.result(), vk::Result::ERROR_OUT_OF_HOST_MEMORY);
        assert_eq!(op.join(), vk::Result::SUCCESS, "joining a complete operation");
        assert_eq!(op.max_concurrency(), 0);
    }

    #[test]
    fn a_panicking_unit_loses_the_device_and_the_operation_completes() {
        let device = RtDevice::new(&vortex_runtime::device::Gpu::from_env().unwrap()).unwrap();
        let op = DeferredOperation::new(Arc::downgrade(&device));
        let units: Vec<Unit> = vec![Box::new(|| panic!("in a unit")), Box::new(|| vk::Result::SUCCESS)];
        op.defer(units);
        assert_eq!(op.join(), vk::Result::SUCCESS, "the last unit completes the operation");
        assert_eq!(op.result(), vk::Result::ERROR_DEVICE_LOST);
        assert_eq!(device.check(), Err(vk::Result::ERROR_DEVICE_LOST));
        assert!(device.lost_reason().unwrap().contains("deferred host operation: in a unit"));
    }
}
