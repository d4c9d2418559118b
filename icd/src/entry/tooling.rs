//! `vkGetPhysicalDeviceToolProperties` (Vulkan 1.3, VK_EXT_tooling_info): the driver itself
//! is no tool and runs none, so the list is empty (layers add their own entries above us).

use ash::vk;

pub unsafe extern "system" fn get_physical_device_tool_properties(
    _pd: vk::PhysicalDevice,
    p_count: *mut u32,
    _p: *mut vk::PhysicalDeviceToolProperties<'_>,
) -> vk::Result {
    if !p_count.is_null() {
        // SAFETY: valid output pointer.
        unsafe { *p_count = 0 };
    }
    vk::Result::SUCCESS
}
