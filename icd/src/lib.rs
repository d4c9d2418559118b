//! Vortex RT: a Vulkan ICD exposing `VK_KHR_ray_query` and `VK_KHR_acceleration_structure`
//! on a modelled Vortex GPU.
//!
//! This crate is the Vulkan API and nothing else: the loader–ICD interface, handles, argument
//! parsing (pNext chains included), and the entry-point table. Objects, command streams and
//! queues live in `vortex-runtime`; the device in `vortex-model`.
//!
//! No panic crosses the FFI boundary: every entry point runs inside a guard. A device-level
//! one ([`handle::guard_device`]) marks its device lost on a panic, as a device fault does,
//! and returns `VK_ERROR_DEVICE_LOST`; the others ([`handle::guard`]) log the panic and
//! return an error code.

pub mod caps;
pub mod entry;
pub mod handle;
pub mod table;
pub mod util;

use ash::vk;
use std::ffi::{c_char, CStr};
use table::Level;

/// Loader–ICD interface version this ICD speaks.
const LOADER_INTERFACE_VERSION: u32 = 5;

/// Logging through `tracing`, filtered by `VORTEX_LOG` (default: warnings and errors).
pub fn init_logging() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let filter = std::env::var("VORTEX_LOG").unwrap_or_else(|_| "warn".into());
        let filter = tracing_subscriber::EnvFilter::try_new(&filter)
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_target(false)
            .with_ansi(false)
            .try_init();
    });
}

fn name_of<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller passes a NUL-terminated command name that outlives the call.
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}

fn as_pfn(e: Option<&table::Entry>) -> vk::PFN_vkVoidFunction {
    e.map(|e| e.func)
}

/// `vkGetInstanceProcAddr`: global commands with a null instance; every command we implement
/// with an instance (device commands too, as the spec allows).
///
/// # Safety
/// `p_name` must be a C string; `instance` null or live.
pub unsafe extern "system" fn vk_get_instance_proc_addr(
    instance: vk::Instance,
    p_name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    handle::guard("vkGetInstanceProcAddr", None, || {
        let name = name_of(p_name)?;
        let e = table::lookup(name)?;
        if instance == vk::Instance::null() && e.level != Level::Global {
            return None;
        }
        as_pfn(Some(e))
    })
}

/// `vkGetDeviceProcAddr`: device-level commands that are core or whose extension the device
/// enabled; NULL for everything else.
///
/// # Safety
/// `p_name` must be a C string; `device` live.
pub unsafe extern "system" fn vk_get_device_proc_addr(
    device: vk::Device,
    p_name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    handle::guard("vkGetDeviceProcAddr", None, || {
        let name = name_of(p_name)?;
        let e = table::lookup(name)?;
        if e.level != Level::Device && name != "vkGetDeviceProcAddr" {
            return None;
        }
        if let Some(ext) = e.ext.filter(|_| !table::core_at(e, caps::API_VERSION)) {
            let dev = entry::device::device(device).ok()?;
            if !dev.has_extension(ext) {
                return None;
            }
        }
        as_pfn(Some(e))
    })
}

/// Loader interface: the version we speak.
///
/// # Safety
/// `p_version` must be valid.
#[no_mangle]
pub unsafe extern "system" fn vk_icdNegotiateLoaderICDInterfaceVersion(p_version: *mut u32) -> vk::Result {
    init_logging();
    if p_version.is_null() {
        return vk::Result::ERROR_INCOMPATIBLE_DRIVER;
    }
    // SAFETY: non-null pointer from the loader.
    unsafe {
        if *p_version < 2 {
            return vk::Result::ERROR_INCOMPATIBLE_DRIVER;
        }
        *p_version = (*p_version).min(LOADER_INTERFACE_VERSION);
    }
    vk::Result::SUCCESS
}

/// Loader interface: instance-level lookup.
///
/// # Safety
/// `p_name` must be a C string.
#[no_mangle]
pub unsafe extern "system" fn vk_icdGetInstanceProcAddr(
    instance: vk::Instance,
    p_name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: forwarded arguments.
    unsafe { vk_get_instance_proc_addr(instance, p_name) }
}

/// Loader interface: physical-device-level lookup (NULL for commands we do not know, so the
/// loader can tell which ones this ICD supports).
///
/// # Safety
/// `p_name` must be a C string.
#[no_mangle]
pub unsafe extern "system" fn vk_icdGetPhysicalDeviceProcAddr(
    _instance: vk::Instance,
    p_name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    handle::guard("vk_icdGetPhysicalDeviceProcAddr", None, || {
        let e = table::lookup(name_of(p_name)?)?;
        (e.level == Level::Physical).then_some(e.func)
    })
}

/// Direct loading (without the loader) goes through this export.
///
/// # Safety
/// `p_name` must be a C string.
#[no_mangle]
pub unsafe extern "system" fn vkGetInstanceProcAddr(
    instance: vk::Instance,
    p_name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    // SAFETY: forwarded arguments.
    unsafe { vk_get_instance_proc_addr(instance, p_name) }
}
