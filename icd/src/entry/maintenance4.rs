//! Memory requirements from create infos (Vulkan 1.3, VK_KHR_maintenance4): the object is
//! created, asked, and destroyed again, so the answer is by construction the one the
//! created object would give (creating a buffer or image allocates no memory here).

use super::memory;
use crate::handle::guard_device_void;
use ash::vk;

pub unsafe extern "system" fn get_device_buffer_memory_requirements(
    d: vk::Device,
    p_info: *const vk::DeviceBufferMemoryRequirements<'_>,
    p: *mut vk::MemoryRequirements2<'_>,
) {
    guard_device_void("vkGetDeviceBufferMemoryRequirements", d, || {
        let mut b = vk::Buffer::null();
        // SAFETY: a valid info whose create info is valid; valid output; the buffer is ours.
        unsafe {
            if memory::create_buffer(d, (*p_info).p_create_info, std::ptr::null(), &mut b) != vk::Result::SUCCESS {
                return;
            }
            let info = vk::BufferMemoryRequirementsInfo2::default().buffer(b);
            memory::get_buffer_memory_requirements2(d, &info, p);
            memory::destroy_buffer(d, b, std::ptr::null());
        }
    })
}

pub unsafe extern "system" fn get_device_image_memory_requirements(
    d: vk::Device,
    p_info: *const vk::DeviceImageMemoryRequirements<'_>,
    p: *mut vk::MemoryRequirements2<'_>,
) {
    guard_device_void("vkGetDeviceImageMemoryRequirements", d, || {
        let mut i = vk::Image::null();
        // SAFETY: a valid info whose create info is valid; valid output; the image is ours.
        unsafe {
            if memory::create_image(d, (*p_info).p_create_info, std::ptr::null(), &mut i) != vk::Result::SUCCESS {
                return;
            }
            let info = vk::ImageMemoryRequirementsInfo2::default().image(i);
            memory::get_image_memory_requirements2(d, &info, p);
            memory::destroy_image(d, i, std::ptr::null());
        }
    })
}

/// No sparse images: no requirements.
pub unsafe extern "system" fn get_device_image_sparse_memory_requirements(
    _d: vk::Device,
    _i: *const vk::DeviceImageMemoryRequirements<'_>,
    p_count: *mut u32,
    _p: *mut vk::SparseImageMemoryRequirements2<'_>,
) {
    if !p_count.is_null() {
        // SAFETY: valid output pointer.
        unsafe { *p_count = 0 };
    }
}
