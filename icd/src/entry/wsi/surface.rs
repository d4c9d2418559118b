//! Surfaces: creation per platform and what a surface supports.

use crate::caps;
use crate::entry::instance::physical_gpu;
use crate::handle::{guard, guard_result, guard_void, nd, nd_destroy, nd_new};
use crate::util::{enumerate, enumerate_with};
use ash::vk;
use std::sync::Arc;
use vortex_runtime::present::surface::{self as ps, Surface};

/// The surface behind a handle.
pub(super) fn surface(h: vk::SurfaceKHR) -> Result<Arc<Surface>, vk::Result> {
    // SAFETY: a live surface handle per the API contract.
    unsafe { nd::<_, Surface>(h) }
}

/// Hands out a new surface's handle.
///
/// # Safety
/// `p_surface` is a valid output pointer.
unsafe fn put(p_surface: *mut vk::SurfaceKHR, s: Surface) -> Result<vk::Result, vk::Result> {
    // SAFETY: per the contract.
    unsafe { *p_surface = nd_new(Arc::new(s)) };
    Ok(vk::Result::SUCCESS)
}

pub unsafe extern "system" fn create_xcb_surface(
    _instance: vk::Instance,
    p_info: *const vk::XcbSurfaceCreateInfoKHR<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_surface: *mut vk::SurfaceKHR,
) -> vk::Result {
    guard_result("vkCreateXcbSurfaceKHR", || {
        // SAFETY: valid create info; the application keeps the connection alive as long as
        // the surface (Vulkan's rule for platform objects).
        let s = unsafe { Surface::xcb((*p_info).connection, (*p_info).window) };
        // SAFETY: valid output pointer.
        unsafe { put(p_surface, s) }
    })
}

pub unsafe extern "system" fn create_xlib_surface(
    _instance: vk::Instance,
    p_info: *const vk::XlibSurfaceCreateInfoKHR<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_surface: *mut vk::SurfaceKHR,
) -> vk::Result {
    guard_result("vkCreateXlibSurfaceKHR", || {
        // SAFETY: valid create info; the Display outlives the surface.
        let s = unsafe { Surface::xlib((*p_info).dpy, (*p_info).window) };
        // SAFETY: valid output pointer.
        unsafe { put(p_surface, s) }
    })
}

pub unsafe extern "system" fn create_headless_surface(
    _instance: vk::Instance,
    _p_info: *const vk::HeadlessSurfaceCreateInfoEXT<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_surface: *mut vk::SurfaceKHR,
) -> vk::Result {
    // SAFETY: valid output pointer.
    guard_result("vkCreateHeadlessSurfaceEXT", || unsafe { put(p_surface, Surface::headless()) })
}

pub unsafe extern "system" fn destroy_surface(
    _instance: vk::Instance,
    s: vk::SurfaceKHR,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live surface handle or null. A swapchain still made on it keeps it alive.
    guard_void("vkDestroySurfaceKHR", || unsafe { nd_destroy::<_, Surface>(s) })
}

/// Present support of queue family `family` (the device has one, family 0).
fn family_presents(family: u32, s: &Surface) -> Result<bool, vk::Result> {
    s.window()?;
    Ok(family == 0 && s.supported())
}

pub unsafe extern "system" fn get_physical_device_surface_support(
    pd: vk::PhysicalDevice,
    family: u32,
    h: vk::SurfaceKHR,
    p_supported: *mut vk::Bool32,
) -> vk::Result {
    guard_result("vkGetPhysicalDeviceSurfaceSupportKHR", || {
        physical_gpu(pd)?;
        let s = surface(h)?;
        let ok = family_presents(family, &s)?;
        // SAFETY: valid output pointer.
        unsafe { *p_supported = ok.into() };
        Ok(vk::Result::SUCCESS)
    })
}

/// The surface's capabilities, headless swapchains bounded by the device's 2D image limit.
fn capabilities(pd: vk::PhysicalDevice, h: vk::SurfaceKHR) -> Result<vk::SurfaceCapabilitiesKHR, vk::Result> {
    physical_gpu(pd)?;
    surface(h)?.capabilities(caps::MAX_IMAGE_DIMENSION_2D)
}

pub unsafe extern "system" fn get_physical_device_surface_capabilities(
    pd: vk::PhysicalDevice,
    h: vk::SurfaceKHR,
    p_caps: *mut vk::SurfaceCapabilitiesKHR,
) -> vk::Result {
    guard_result("vkGetPhysicalDeviceSurfaceCapabilitiesKHR", || {
        let c = capabilities(pd, h)?;
        // SAFETY: valid output pointer.
        unsafe { *p_caps = c };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn get_physical_device_surface_capabilities2(
    pd: vk::PhysicalDevice,
    p_info: *const vk::PhysicalDeviceSurfaceInfo2KHR<'_>,
    p_caps: *mut vk::SurfaceCapabilities2KHR<'_>,
) -> vk::Result {
    guard_result("vkGetPhysicalDeviceSurfaceCapabilities2KHR", || {
        // SAFETY: valid input; the output keeps its sType and pNext (no chained structure
        // of ours is offered).
        let c = capabilities(pd, unsafe { (*p_info).surface })?;
        unsafe { (*p_caps).surface_capabilities = c };
        Ok(vk::Result::SUCCESS)
    })
}

fn surface_formats() -> Vec<vk::SurfaceFormatKHR> {
    ps::FORMATS
        .iter()
        .map(|&format| vk::SurfaceFormatKHR { format, color_space: vk::ColorSpaceKHR::SRGB_NONLINEAR })
        .collect()
}

pub unsafe extern "system" fn get_physical_device_surface_formats(
    pd: vk::PhysicalDevice,
    h: vk::SurfaceKHR,
    p_count: *mut u32,
    p_formats: *mut vk::SurfaceFormatKHR,
) -> vk::Result {
    guard_result("vkGetPhysicalDeviceSurfaceFormatsKHR", || {
        physical_gpu(pd)?;
        surface(h)?.window()?;
        // SAFETY: count/array per the two-call idiom.
        Ok(unsafe { enumerate(&surface_formats(), p_count, p_formats) })
    })
}

pub unsafe extern "system" fn get_physical_device_surface_formats2(
    pd: vk::PhysicalDevice,
    p_info: *const vk::PhysicalDeviceSurfaceInfo2KHR<'_>,
    p_count: *mut u32,
    p_formats: *mut vk::SurfaceFormat2KHR<'_>,
) -> vk::Result {
    guard_result("vkGetPhysicalDeviceSurfaceFormats2KHR", || {
        physical_gpu(pd)?;
        // SAFETY: valid input.
        surface(unsafe { (*p_info).surface })?.window()?;
        let formats = surface_formats();
        // SAFETY: count/array per the two-call idiom; the caller's structs keep sType/pNext.
        Ok(unsafe { enumerate_with(formats.len(), p_count, p_formats, |i, f| f.surface_format = formats[i]) })
    })
}

pub unsafe extern "system" fn get_physical_device_surface_present_modes(
    pd: vk::PhysicalDevice,
    h: vk::SurfaceKHR,
    p_count: *mut u32,
    p_modes: *mut vk::PresentModeKHR,
) -> vk::Result {
    guard_result("vkGetPhysicalDeviceSurfacePresentModesKHR", || {
        physical_gpu(pd)?;
        surface(h)?.window()?;
        // SAFETY: count/array per the two-call idiom.
        Ok(unsafe { enumerate(&ps::PRESENT_MODES, p_count, p_modes) })
    })
}

pub unsafe extern "system" fn get_physical_device_present_rectangles(
    pd: vk::PhysicalDevice,
    h: vk::SurfaceKHR,
    p_count: *mut u32,
    p_rects: *mut vk::Rect2D,
) -> vk::Result {
    guard_result("vkGetPhysicalDevicePresentRectanglesKHR", || {
        physical_gpu(pd)?;
        let [width, height] = surface(h)?.extent()?.unwrap_or([ps::ANY_EXTENT; 2]);
        let rect = vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width, height } };
        // SAFETY: count/array per the two-call idiom.
        Ok(unsafe { enumerate(&[rect], p_count, p_rects) })
    })
}

pub unsafe extern "system" fn get_physical_device_xcb_presentation_support(
    pd: vk::PhysicalDevice,
    family: u32,
    connection: *mut vk::xcb_connection_t,
    visual: vk::xcb_visualid_t,
) -> vk::Bool32 {
    guard("vkGetPhysicalDeviceXcbPresentationSupportKHR", vk::FALSE, || {
        // SAFETY: a live connection per the API contract.
        let ok = physical_gpu(pd).is_ok() && family == 0 && unsafe { ps::xcb_visual_supported(connection, visual) };
        ok.into()
    })
}

pub unsafe extern "system" fn get_physical_device_xlib_presentation_support(
    pd: vk::PhysicalDevice,
    family: u32,
    dpy: *mut vk::Display,
    visual: vk::VisualID,
) -> vk::Bool32 {
    guard("vkGetPhysicalDeviceXlibPresentationSupportKHR", vk::FALSE, || {
        // SAFETY: a live Display per the API contract.
        let ok = physical_gpu(pd).is_ok() && family == 0 && unsafe { ps::xlib_visual_supported(dpy, visual as u64) };
        ok.into()
    })
}
