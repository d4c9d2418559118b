//! Swapchains: creation against the surface's capabilities, images, acquire and present.

use super::surface::surface;
use crate::entry::device::{device, queue, semaphore_list};
use crate::entry::sync::{Fence, Semaphore};
use crate::handle::{guard_device_result, guard_device_void, nd, nd_destroy, nd_new, nd_opt};
use crate::util::{enumerate, slice};
use ash::vk;
use std::sync::Arc;
use vortex_runtime::image::Image;
use vortex_runtime::present::surface as ps;
use vortex_runtime::present::{self, Acquired, Swapchain, SwapchainInfo};

/// A `VkSwapchainKHR`: the engine's swapchain and the `VkImage` handles of its images (one
/// count each, given back when the swapchain is destroyed).
pub struct SwapchainObj {
    pub rt: Arc<Swapchain>,
    images: Vec<vk::Image>,
}

fn swapchain(h: vk::SwapchainKHR) -> Result<Arc<SwapchainObj>, vk::Result> {
    // SAFETY: a live swapchain handle per the API contract.
    unsafe { nd::<_, SwapchainObj>(h) }
}

/// What the create info asks for, checked against what every surface supports (the extent
/// against the window's is checked when acquiring: a window resized meanwhile is out of date).
fn swapchain_info(i: &vk::SwapchainCreateInfoKHR<'_>, max_dimension: u32) -> Result<SwapchainInfo, vk::Result> {
    let refuse = |what: String| {
        tracing::error!("vkCreateSwapchainKHR: {what}");
        Err(vk::Result::ERROR_INITIALIZATION_FAILED)
    };
    if !ps::FORMATS.contains(&i.image_format) || i.image_color_space != vk::ColorSpaceKHR::SRGB_NONLINEAR {
        return refuse(format!("format {:?} in {:?} is not a surface format", i.image_format, i.image_color_space));
    }
    let e = i.image_extent;
    if e.width == 0 || e.height == 0 || e.width > max_dimension || e.height > max_dimension {
        return refuse(format!("extent {}x{} is outside 1..={max_dimension}", e.width, e.height));
    }
    if !ps::USAGE.contains(i.image_usage) || i.image_array_layers != 1 || !i.flags.is_empty() {
        return refuse(format!(
            "usage {:?}, {} layers, flags {:?}: only single-layer images of usage {:?} and no flags",
            i.image_usage,
            i.image_array_layers,
            i.flags,
            ps::USAGE
        ));
    }
    if !ps::PRESENT_MODES.contains(&i.present_mode) {
        return refuse(format!("present mode {:?} is not supported", i.present_mode));
    }
    if i.min_image_count > ps::MAX_IMAGES {
        return refuse(format!("{} images asked for, at most {}", i.min_image_count, ps::MAX_IMAGES));
    }
    Ok(SwapchainInfo {
        format: i.image_format,
        extent: [e.width, e.height],
        usage: i.image_usage,
        image_count: i.min_image_count.max(ps::MIN_IMAGES),
        mode: i.present_mode,
    })
}

pub unsafe extern "system" fn create_swapchain(
    d: vk::Device,
    p_info: *const vk::SwapchainCreateInfoKHR<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_swapchain: *mut vk::SwapchainKHR,
) -> vk::Result {
    guard_device_result("vkCreateSwapchainKHR", d, || {
        let dev = device(d)?;
        dev.rt.check()?;
        // SAFETY: valid create info.
        let i = unsafe { &*p_info };
        let s = surface(i.surface)?;
        // SAFETY: a live swapchain handle or null.
        let old = unsafe { nd_opt::<_, SwapchainObj>(i.old_swapchain) };
        let info = match swapchain_info(i, crate::caps::MAX_IMAGE_DIMENSION_2D) {
            Ok(info) => info,
            Err(e) => {
                // The old swapchain is retired even when creation fails.
                if let Some(o) = &old {
                    o.rt.retire();
                }
                return Err(e);
            }
        };
        let sc = Swapchain::new(&dev.rt, s, info, old.as_ref().map(|o| &*o.rt))?;
        let images = sc.shared.images.iter().map(|img| nd_new(img.clone())).collect();
        // SAFETY: valid output pointer.
        unsafe { *p_swapchain = nd_new(Arc::new(SwapchainObj { rt: sc, images })) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_swapchain(
    d: vk::Device,
    h: vk::SwapchainKHR,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    guard_device_void("vkDestroySwapchainKHR", d, || {
        if h == vk::SwapchainKHR::null() {
            return;
        }
        if let Ok(sc) = swapchain(h) {
            sc.rt.destroy();
            // SAFETY: the image handles were made at creation with one count each and are
            // not the application's to destroy; the handle owns one count of the swapchain.
            unsafe {
                for &img in &sc.images {
                    nd_destroy::<_, Image>(img);
                }
                nd_destroy::<_, SwapchainObj>(h);
            }
        }
    })
}

pub unsafe extern "system" fn get_swapchain_images(
    d: vk::Device,
    h: vk::SwapchainKHR,
    p_count: *mut u32,
    p_images: *mut vk::Image,
) -> vk::Result {
    guard_device_result("vkGetSwapchainImagesKHR", d, || {
        let sc = swapchain(h)?;
        // SAFETY: count/array per the two-call idiom.
        Ok(unsafe { enumerate(&sc.images, p_count, p_images) })
    })
}

/// Acquires an image; the semaphore and fence are signaled at once, since an image is only
/// handed out once the engine has finished reading it.
fn acquire(
    d: vk::Device,
    h: vk::SwapchainKHR,
    timeout: u64,
    sem: vk::Semaphore,
    fence: vk::Fence,
    p_index: *mut u32,
) -> Result<vk::Result, vk::Result> {
    device(d)?.rt.check()?;
    let sc = swapchain(h)?;
    // SAFETY: live handles or null.
    let (sem, fence) = unsafe { (nd_opt::<_, Semaphore>(sem), nd_opt::<_, Fence>(fence)) };
    match sc.rt.acquire(timeout)? {
        Acquired::Image { index, suboptimal } => {
            if let Some(s) = sem {
                s.signal(0);
            }
            if let Some(f) = fence {
                f.signal();
            }
            // SAFETY: valid output pointer.
            unsafe { *p_index = index };
            Ok(if suboptimal { vk::Result::SUBOPTIMAL_KHR } else { vk::Result::SUCCESS })
        }
        Acquired::NotReady => Ok(vk::Result::NOT_READY),
        Acquired::Timeout => Ok(vk::Result::TIMEOUT),
    }
}

pub unsafe extern "system" fn acquire_next_image(
    d: vk::Device,
    h: vk::SwapchainKHR,
    timeout: u64,
    sem: vk::Semaphore,
    fence: vk::Fence,
    p_index: *mut u32,
) -> vk::Result {
    guard_device_result("vkAcquireNextImageKHR", d, || acquire(d, h, timeout, sem, fence, p_index))
}

pub unsafe extern "system" fn acquire_next_image2(
    d: vk::Device,
    p_info: *const vk::AcquireNextImageInfoKHR<'_>,
    p_index: *mut u32,
) -> vk::Result {
    guard_device_result("vkAcquireNextImage2KHR", d, || {
        // SAFETY: valid input (the device mask names the one device).
        let i = unsafe { &*p_info };
        acquire(d, i.swapchain, i.timeout, i.semaphore, i.fence, p_index)
    })
}

/// The result of a present of several swapchains: the first error, else SUBOPTIMAL if any
/// was, else SUCCESS.
fn overall(results: &[vk::Result]) -> vk::Result {
    let err = results.iter().find(|r| r.as_raw() < 0);
    let sub = results.contains(&vk::Result::SUBOPTIMAL_KHR);
    err.copied().unwrap_or(if sub { vk::Result::SUBOPTIMAL_KHR } else { vk::Result::SUCCESS })
}

pub unsafe extern "system" fn queue_present(q: vk::Queue, p_info: *const vk::PresentInfoKHR<'_>) -> vk::Result {
    guard_device_result("vkQueuePresentKHR", q, || {
        let q = queue(q)?;
        q.rt.check()?;
        // SAFETY: valid present info and its arrays.
        let i = unsafe { &*p_info };
        let (handles, indices) =
            unsafe { (slice(i.p_swapchains, i.swapchain_count), slice(i.p_image_indices, i.swapchain_count)) };
        let chains = handles.iter().map(|&h| swapchain(h)).collect::<Result<Vec<_>, _>>()?;
        // Every image must be the application's before anything is queued.
        for (sc, &index) in chains.iter().zip(indices) {
            sc.rt.check_presentable(index)?;
        }
        // SAFETY: live binary semaphores.
        let waits = unsafe { semaphore_list(slice(i.p_wait_semaphores, i.wait_semaphore_count), None)? };
        let (requests, results): (Vec<_>, Vec<_>) =
            chains.iter().zip(indices).map(|(sc, &index)| sc.rt.present(index)).unzip();
        q.rt.queue.submit(present::submission(waits, requests))?;
        if !i.p_results.is_null() {
            // SAFETY: an array of swapchain_count results.
            unsafe { std::slice::from_raw_parts_mut(i.p_results, results.len()) }.copy_from_slice(&results);
        }
        Ok(overall(&results))
    })
}

pub unsafe extern "system" fn get_device_group_present_capabilities(
    d: vk::Device,
    p_caps: *mut vk::DeviceGroupPresentCapabilitiesKHR<'_>,
) -> vk::Result {
    guard_device_result("vkGetDeviceGroupPresentCapabilitiesKHR", d, || {
        device(d)?;
        // SAFETY: valid output; it keeps its sType and pNext.
        let c = unsafe { &mut *p_caps };
        c.present_mask = [0; vk::MAX_DEVICE_GROUP_SIZE];
        c.present_mask[0] = 1;
        c.modes = vk::DeviceGroupPresentModeFlagsKHR::LOCAL;
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn get_device_group_surface_present_modes(
    d: vk::Device,
    h: vk::SurfaceKHR,
    p_modes: *mut vk::DeviceGroupPresentModeFlagsKHR,
) -> vk::Result {
    guard_device_result("vkGetDeviceGroupSurfacePresentModesKHR", d, || {
        device(d)?;
        surface(h)?.window()?;
        // SAFETY: valid output pointer.
        unsafe { *p_modes = vk::DeviceGroupPresentModeFlagsKHR::LOCAL };
        Ok(vk::Result::SUCCESS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_present_reports_the_first_error_then_suboptimal() {
        use vk::Result as R;
        assert_eq!(overall(&[R::SUCCESS, R::SUCCESS]), R::SUCCESS);
        assert_eq!(overall(&[R::SUCCESS, R::SUBOPTIMAL_KHR]), R::SUBOPTIMAL_KHR);
        assert_eq!(overall(&[R::SUBOPTIMAL_KHR, R::ERROR_OUT_OF_DATE_KHR]), R::ERROR_OUT_OF_DATE_KHR);
        assert_eq!(overall(&[R::ERROR_SURFACE_LOST_KHR, R::ERROR_OUT_OF_DATE_KHR]), R::ERROR_SURFACE_LOST_KHR);
    }
}
