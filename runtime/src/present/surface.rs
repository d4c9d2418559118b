//! `VkSurfaceKHR`: where a swapchain's images are shown, and what it can take.

use super::x11::X11Window;
use crate::{vk, VkResult};
use parking_lot::Mutex;
use std::ffi::c_void;

/// Image counts a swapchain may have: two is enough for a copying engine (a shown frame
/// lives on in the window, so its image is free again as soon as it has been read).
pub const MIN_IMAGES: u32 = 2;
pub const MAX_IMAGES: u32 = 16;

/// The present modes of every surface.
pub const PRESENT_MODES: [vk::PresentModeKHR; 3] =
    [vk::PresentModeKHR::FIFO, vk::PresentModeKHR::MAILBOX, vk::PresentModeKHR::IMMEDIATE];

/// The formats a swapchain image can have (all in the sRGB non-linear colour space). The
/// ICD offers those the device can make images of.
pub const FORMATS: [vk::Format; 4] =
    [vk::Format::B8G8R8A8_SRGB, vk::Format::B8G8R8A8_UNORM, vk::Format::R8G8B8A8_SRGB, vk::Format::R8G8B8A8_UNORM];

/// What swapchain images can be used for (colour attachment is required of every surface).
pub const USAGE: vk::ImageUsageFlags = vk::ImageUsageFlags::from_raw(
    vk::ImageUsageFlags::TRANSFER_SRC.as_raw()
        | vk::ImageUsageFlags::TRANSFER_DST.as_raw()
        | vk::ImageUsageFlags::STORAGE.as_raw()
        | vk::ImageUsageFlags::COLOR_ATTACHMENT.as_raw(),
);

/// The special `currentExtent` of a surface whose size the swapchain decides.
pub const ANY_EXTENT: u32 = u32::MAX;

pub enum Platform {
    /// `VK_EXT_headless_surface`: frames go nowhere (but are paced and dumped).
    Headless,
    /// An X11 window; `Err` when the connection could not be used (the surface then
    /// supports nothing and its queries report it lost).
    X11(Result<Box<X11Window>, String>),
}

pub struct Surface {
    pub platform: Platform,
    /// The serial of the swapchain presenting to it now (created last and not retired).
    pub(super) owner: Mutex<Option<u64>>,
}

impl Surface {
    pub fn headless() -> Surface {
        Surface { platform: Platform::Headless, owner: Mutex::new(None) }
    }

    /// # Safety
    /// `conn` is a live `xcb_connection_t` that outlives the surface.
    pub unsafe fn xcb(conn: *mut c_void, window: u32) -> Surface {
        // SAFETY: per the contract.
        Self::x11(unsafe { X11Window::from_xcb(conn, window) })
    }

    /// # Safety
    /// `dpy` is a live Xlib `Display *` that outlives the surface.
    pub unsafe fn xlib(dpy: *mut c_void, window: u64) -> Surface {
        // SAFETY: per the contract.
        Self::x11(unsafe { X11Window::from_xlib(dpy, window) })
    }

    fn x11(w: Result<X11Window, String>) -> Surface {
        if let Err(e) = &w {
            tracing::error!("X11 surface: {e}; it cannot be presented to");
        }
        Surface { platform: Platform::X11(w.map(Box::new)), owner: Mutex::new(None) }
    }

    /// The window, or SURFACE_LOST if the surface has none it can use.
    pub fn window(&self) -> VkResult<Option<&X11Window>> {
        match &self.platform {
            Platform::Headless => Ok(None),
            Platform::X11(Ok(w)) => Ok(Some(&**w)),
            Platform::X11(Err(_)) => Err(vk::Result::ERROR_SURFACE_LOST_KHR),
        }
    }

    /// Whether the queue can present to it: an X11 window needs a TrueColor visual.
    pub fn supported(&self) -> bool {
        match self.window() {
            Ok(None) => true,
            Ok(Some(w)) => w.layout().is_ok(),
            Err(_) => false,
        }
    }

    /// The size of the window now (`None`: headless, any size).
    pub fn extent(&self) -> VkResult<Option<[u32; 2]>> {
        self.window()?.map(X11Window::extent).transpose()
    }

    /// `VkSurfaceCapabilitiesKHR`; `max_dimension` bounds a headless swapchain's images.
    pub fn capabilities(&self, max_dimension: u32) -> VkResult<vk::SurfaceCapabilitiesKHR> {
        let (current, min, max) = match self.extent()? {
            Some([w, h]) => {
                let e = vk::Extent2D { width: w, height: h };
                (e, e, e)
            }
            None => (
                vk::Extent2D { width: ANY_EXTENT, height: ANY_EXTENT },
                vk::Extent2D { width: 1, height: 1 },
                vk::Extent2D { width: max_dimension, height: max_dimension },
            ),
        };
        Ok(vk::SurfaceCapabilitiesKHR {
            min_image_count: MIN_IMAGES,
            max_image_count: MAX_IMAGES,
            current_extent: current,
            min_image_extent: min,
            max_image_extent: max,
            max_image_array_layers: 1,
            supported_transforms: vk::SurfaceTransformFlagsKHR::IDENTITY,
            current_transform: vk::SurfaceTransformFlagsKHR::IDENTITY,
            supported_composite_alpha: vk::CompositeAlphaFlagsKHR::OPAQUE | vk::CompositeAlphaFlagsKHR::INHERIT,
            supported_usage_flags: USAGE,
        })
    }
}

/// `vkGetPhysicalDeviceXcbPresentationSupportKHR`: whether windows of `visual` on `conn`
/// can be presented to.
///
/// # Safety
/// `conn` is a live `xcb_connection_t`.
pub unsafe fn xcb_visual_supported(conn: *mut c_void, visual: u32) -> bool {
    // SAFETY: per the contract; the wrapper lives only for this call.
    match unsafe { X11Window::from_xcb(conn, 0) } {
        Ok(w) => w.visual_layout(visual).is_some(),
        Err(e) => {
            tracing::warn!("vkGetPhysicalDeviceXcbPresentationSupportKHR: {e}");
            false
        }
    }
}

/// The same for an Xlib `Display`.
///
/// # Safety
/// `dpy` is a live `Display *`.
pub unsafe fn xlib_visual_supported(dpy: *mut c_void, visual: u64) -> bool {
    // SAFETY: per the contract; the wrapper lives only for this call.
    match unsafe { X11Window::from_xlib(dpy, 0) } {
        Ok(w) => u32::try_from(visual).is_ok_and(|v| w.visual_layout(v).is_some()),
        Err(e) => {
            tracing::warn!("vkGetPhysicalDeviceXlibPresentationSupportKHR: {e}");
            false
        }
    }
}
