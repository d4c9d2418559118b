//! A debug hook outside every extension, for tests: `vkDebugInjectPanicVORTEX(device)`
//! panics inside the device-level guard, so a test can show through the loader what an
//! internal error does — the device is lost with one log line, the call returns
//! `VK_ERROR_DEVICE_LOST`, and so does every later call that can. Applications reach it only
//! by asking `vkGetDeviceProcAddr` for it by name; it has the signature of
//! `vkDeviceWaitIdle`.

use crate::handle::guard_device_result;
use ash::vk;

#[doc(hidden)]
pub unsafe extern "system" fn inject_panic(d: vk::Device) -> vk::Result {
    guard_device_result("vkDebugInjectPanicVORTEX", d, || panic!("panic injected by vkDebugInjectPanicVORTEX"))
}
