//! Private data slots (Vulkan 1.3, VK_EXT_private_data): one 64-bit value per object of any
//! type, kept by the slot itself. Handles here are object addresses, unique while the object
//! lives, so `(type, handle)` names one object; a value never set reads as 0. A device's
//! `VkDevicePrivateDataCreateInfo` reservation needs nothing: slots are heap maps.

use super::device::device;
use crate::handle::{guard_device_result, guard_device_void, nd, nd_destroy, nd_new};
use ash::vk;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Default)]
pub struct PrivateDataSlot {
    values: Mutex<HashMap<(i32, u64), u64>>,
}

pub unsafe extern "system" fn create_private_data_slot(
    d: vk::Device,
    _info: *const vk::PrivateDataSlotCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_slot: *mut vk::PrivateDataSlot,
) -> vk::Result {
    guard_device_result("vkCreatePrivateDataSlot", d, || {
        device(d)?;
        // SAFETY: valid output pointer.
        unsafe { *p_slot = nd_new(Arc::new(PrivateDataSlot::default())) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_private_data_slot(
    d: vk::Device,
    s: vk::PrivateDataSlot,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live slot handle or null.
    guard_device_void("vkDestroyPrivateDataSlot", d, || unsafe { nd_destroy::<_, PrivateDataSlot>(s) })
}

pub unsafe extern "system" fn set_private_data(
    d: vk::Device,
    ty: vk::ObjectType,
    handle: u64,
    s: vk::PrivateDataSlot,
    data: u64,
) -> vk::Result {
    guard_device_result("vkSetPrivateData", d, || {
        // SAFETY: a live slot handle.
        let slot = unsafe { nd::<_, PrivateDataSlot>(s)? };
        slot.values.lock().insert((ty.as_raw(), handle), data);
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn get_private_data(
    d: vk::Device,
    ty: vk::ObjectType,
    handle: u64,
    s: vk::PrivateDataSlot,
    p_data: *mut u64,
) {
    guard_device_void("vkGetPrivateData", d, || {
        // SAFETY: a live slot handle (or the value reads 0) and a valid output pointer.
        let value = unsafe { nd::<_, PrivateDataSlot>(s) }
            .map(|slot| slot.values.lock().get(&(ty.as_raw(), handle)).copied().unwrap_or(0))
            .unwrap_or(0);
        // SAFETY: valid output pointer.
        unsafe { *p_data = value };
    })
}
