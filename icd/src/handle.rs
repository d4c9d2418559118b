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
/// across the FFI boundary.
pub fn guard<R>(name: &str, on_panic: R, f: impl FnOnce() -> R) -> R {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(e) => {
            let msg = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!("internal error in {name}: {msg}");
            on_panic
        }
    }
}

/// `guard` for entry points that return `VkResult`.
pub fn guard_result(name: &str, f: impl FnOnce() -> Result<vk::Result, vk::Result>) -> vk::Result {
    guard(name, vk::Result::ERROR_UNKNOWN, || match f() {
        Ok(r) => r,
        Err(e) => e,
    })
}

/// `guard` for entry points that return nothing.
pub fn guard_void(name: &str, f: impl FnOnce()) {
    guard(name, (), f)
}
