//! Handle representation and the FFI guard.
//!
//! - Dispatchable handles (`VkInstance`, `VkPhysicalDevice`, `VkDevice`, `VkQueue`,
//!   `VkCommandBuffer`) point at a [`Dispatchable<T>`] whose first word is the loader's magic
//!   (the loader overwrites it with its dispatch table pointer after creation).
//! - Non-dispatchable handles are `Arc<T>::into_raw` as a u64: the handle owns one strong
//!   count, which `destroy` gives back. Commands clone the `Arc`, so an object destroyed while
//!   a recorded stream still uses it stays alive until the stream is done with it.
//! - Descriptor sets are owned by their pool: their handle is the `Arc`'s pointer without a
//!   count of its own (see `entry::descriptor`).

use ash::vk::{self, Handle};
use std::sync::Arc;

/// `ICD_LOADER_MAGIC` from the loader–ICD interface.
pub const ICD_LOADER_MAGIC: usize = 0x01CD_C0DE;

#[repr(C)]
pub struct Dispatchable<T> {
    loader_data: usize,
    pub obj: T,
}

/// Boxes `obj` as a dispatchable object and returns its handle.
pub fn dispatchable<H: Handle, T>(obj: T) -> H {
    let b = Box::new(Dispatchable { loader_data: ICD_LOADER_MAGIC, obj });
    H::from_raw(Box::into_raw(b) as u64)
}

/// The object behind a dispatchable handle.
///
/// # Safety
/// `h` must be null or a handle this ICD created for a `T` and has not destroyed.
pub unsafe fn disp<'a, H: Handle, T>(h: H) -> Result<&'a T, vk::Result> {
    let p = h.as_raw() as *const Dispatchable<T>;
    if p.is_null() {
        return Err(vk::Result::ERROR_INITIALIZATION_FAILED);
    }
    // SAFETY: per the contract, `p` points at a live Dispatchable<T>.
    Ok(unsafe { &(*p).obj })
}

/// Frees a dispatchable object (null is ignored).
///
/// # Safety
/// As for [`disp`]; the handle must not be used afterwards.
pub unsafe fn disp_destroy<H: Handle, T>(h: H) {
    let p = h.as_raw() as *mut Dispatchable<T>;
    if !p.is_null() {
        // SAFETY: created by `dispatchable` via Box::into_raw, freed once.
        drop(unsafe { Box::from_raw(p) });
    }
}

/// Hands out a non-dispatchable handle owning one count of `obj`.
pub fn nd_new<H: Handle, T>(obj: Arc<T>) -> H {
    H::from_raw(Arc::into_raw(obj) as u64)
}

/// A new `Arc` to the object behind a non-dispatchable handle.
///
/// # Safety
/// `h` must be null or a live handle this ICD created for a `T`.
pub unsafe fn nd<H: Handle, T>(h: H) -> Result<Arc<T>, vk::Result> {
    let p = h.as_raw() as *const T;
    if p.is_null() {
        tracing::error!("VK_NULL_HANDLE passed where a {:?} is required", H::TYPE);
        return Err(vk::Result::ERROR_UNKNOWN);
    }
    // SAFETY: the handle holds a strong count, so the object is alive; we add one for the
    // Arc we return.
    unsafe {
        Arc::increment_strong_count(p);
        Ok(Arc::from_raw(p))
    }
}

/// Like [`nd`] but maps null to `None`.
///
/// # Safety
/// As for [`nd`].
pub unsafe fn nd_opt<H: Handle + Copy, T>(h: H) -> Option<Arc<T>> {
    if h.as_raw() == 0 {
        None
    } else {
        // SAFETY: non-null live handle per the contract.
        unsafe { nd(h).ok() }
    }
}

/// Gives back the handle's count (null is ignored).
///
/// # Safety
/// As for [`nd`]; the handle must not be used afterwards.
pub unsafe fn nd_destroy<H: Handle, T>(h: H) {
    let p = h.as_raw() as *const T;
    if !p.is_null() {
        // SAFETY: the handle owns exactly this one count.
        drop(unsafe { Arc::from_raw(p) });
    }
}

/// Runs an entry point's body, turning a panic into a logged error instead of unwinding
/// across the FFI boundary. For entry points with no device; device-level ones use
/// [`guard_device`].
pub fn guard<R>(name: &str, on_panic: R, f: impl FnOnce() -> R) -> R {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(e) => {
            tracing::error!("internal error in {name}: {}", panic_message(&*e));
            on_panic
        }
    }
}

/// `guard` for entry points that return `VkResult`.
pub fn guard_result(name: &str, f: impl FnOnce() -> Result<vk::Result, vk::Result>) -> vk::Result {
    guard(name, vk::Result::ERROR_UNKNOWN, || f().unwrap_or_else(|e| e))
}

/// `guard` for entry points that return nothing.
pub fn guard_void(name: &str, f: impl FnOnce()) {
    guard(name, (), f)
}

/// A device-level handle (`VkDevice`, `VkQueue`, `VkCommandBuffer`): the device it belongs
/// to, which a panic in one of its entry points marks lost.
pub trait OfDevice: Copy {
    fn runtime_device(self) -> Option<Arc<vortex_runtime::device::Device>>;
}

/// Runs a device-level entry point's body. A panic is an internal error of the driver, and
/// the device's state can no longer be trusted: it marks `h`'s device lost through the same
/// path as a device fault (logged once; every later call that can reports
/// `VK_ERROR_DEVICE_LOST`), and the entry point returns `on_panic`.
pub fn guard_device<R>(name: &str, h: impl OfDevice, on_panic: R, f: impl FnOnce() -> R) -> R {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(e) => {
            let reason = format!("internal error in {name}: {}", panic_message(&*e));
            // Finding the device must not unwind either.
            let device = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.runtime_device())).ok().flatten();
            match device {
                Some(d) => {
                    if !d.set_lost(&reason) {
                        tracing::error!("{reason} (the device was already lost)");
                    }
                }
                None => tracing::error!("{reason}"),
            }
            on_panic
        }
    }
}

/// `guard_device` for entry points that return `VkResult`: a panic returns
/// `VK_ERROR_DEVICE_LOST`.
pub fn guard_device_result(
    name: &str,
    h: impl OfDevice,
    f: impl FnOnce() -> Result<vk::Result, vk::Result>,
) -> vk::Result {
    guard_device(name, h, vk::Result::ERROR_DEVICE_LOST, || f().unwrap_or_else(|e| e))
}

/// `guard_device` for entry points that return nothing.
pub fn guard_device_void(name: &str, h: impl OfDevice, f: impl FnOnce()) {
    guard_device(name, h, (), f)
}

/// The text a panic was raised with.
pub fn panic_message(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::command::{cmd, CommandBufferObj};
    use crate::entry::device::{queue_submit, Device, Queue};
    use vortex_runtime::cmd::CommandBuffer;
    use vortex_runtime::device::{Device as RtDevice, Gpu};

    fn rt_device() -> Arc<RtDevice> {
        RtDevice::new(&Gpu::from_env().unwrap()).unwrap()
    }

    /// A `VkDevice` over a runtime device, and its queue.
    fn device_handle(rt: &Arc<RtDevice>) -> (vk::Device, vk::Queue) {
        let queue: vk::Queue = dispatchable(Queue { rt: rt.clone() });
        (dispatchable(Device { rt: rt.clone(), queue, extensions: vec![] }), queue)
    }

    #[test]
    fn a_panic_in_a_command_loses_that_device_once() {
        let (rt, other) = (rt_device(), rt_device());
        let cb = Arc::new(CommandBuffer::new(rt.clone(), vk::CommandBufferLevel::PRIMARY));
        let h: vk::CommandBuffer = dispatchable(CommandBufferObj { cb });
        cmd("vkCmdDispatch", h, |_| panic!("first"));
        assert_eq!(rt.check(), Err(vk::Result::ERROR_DEVICE_LOST));
        assert_eq!(rt.lost_reason().as_deref(), Some("internal error in vkCmdDispatch: first"));
        assert!(!other.is_lost(), "another device is not touched");
        cmd("vkCmdDispatch", h, |_| panic!("second"));
        assert_eq!(rt.lost_reason().as_deref(), Some("internal error in vkCmdDispatch: first"), "kept once");
        // SAFETY: created above, destroyed once.
        unsafe { disp_destroy::<_, CommandBufferObj>(h) };
    }

    #[test]
    fn a_panic_in_a_device_call_returns_device_lost_and_so_do_later_calls() {
        let rt = rt_device();
        let (d, q) = device_handle(&rt);
        // SAFETY: live handles made above; an empty submission.
        unsafe {
            assert_eq!(queue_submit(q, 0, std::ptr::null(), vk::Fence::null()), vk::Result::SUCCESS);
            assert_eq!(crate::entry::debug::inject_panic(d), vk::Result::ERROR_DEVICE_LOST);
            assert_eq!(queue_submit(q, 0, std::ptr::null(), vk::Fence::null()), vk::Result::ERROR_DEVICE_LOST);
        }
        assert!(rt.lost_reason().unwrap().contains("internal error in vkDebugInjectPanicVORTEX"));
        // A panic on a queue finds the device too.
        let r = guard_device_result("vkQueueWaitIdle", q, || panic!("on the queue"));
        assert_eq!(r, vk::Result::ERROR_DEVICE_LOST);
        // SAFETY: made above, destroyed once.
        unsafe {
            disp_destroy::<_, Queue>(q);
            disp_destroy::<_, Device>(d);
        }
    }

    #[test]
    fn a_panic_without_a_device_is_an_unknown_error() {
        assert_eq!(guard_result("vkCreateInstance", || panic!("no device")), vk::Result::ERROR_UNKNOWN);
        assert_eq!(
            guard_result("vkCreateInstance", || Err(vk::Result::ERROR_LAYER_NOT_PRESENT)),
            vk::Result::ERROR_LAYER_NOT_PRESENT
        );
    }
}
