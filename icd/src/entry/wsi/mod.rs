//! Window-system integration: surfaces (`VK_KHR_surface` with its XCB, Xlib and headless
//! platforms, `VK_KHR_get_surface_capabilities2`) and swapchains (`VK_KHR_swapchain`).
//! Translation only: the presentation engine is `vortex_runtime::present`.

pub mod surface;
pub mod swapchain;

#[cfg(test)]
mod tests {
    use crate::table::{lookup, Level};

    /// Every command of the offered WSI extensions is in the entry table, the swapchain's
    /// behind its device extension.
    #[test]
    fn every_wsi_command_is_implemented() {
        let mut missing = Vec::new();
        let mut check = |name: &std::ffi::CStr| {
            let n = name.to_str().unwrap();
            match lookup(n) {
                None => missing.push(n.to_string()),
                Some(e) if e.level == Level::Device => assert_eq!(e.ext, Some("VK_KHR_swapchain"), "{n}"),
                Some(e) => assert!(e.ext.is_none(), "{n}"),
            }
            std::ptr::null()
        };
        let _ = ash::khr::surface::InstanceFn::load(&mut check);
        let _ = ash::khr::get_surface_capabilities2::InstanceFn::load(&mut check);
        let _ = ash::khr::xcb_surface::InstanceFn::load(&mut check);
        let _ = ash::khr::xlib_surface::InstanceFn::load(&mut check);
        let _ = ash::ext::headless_surface::InstanceFn::load(&mut check);
        let _ = ash::khr::swapchain::InstanceFn::load(&mut check);
        let _ = ash::khr::swapchain::DeviceFn::load(&mut check);
        assert!(missing.is_empty(), "not implemented: {missing:?}");
    }
}
