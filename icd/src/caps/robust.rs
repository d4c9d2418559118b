//! Robust access: what the device offers and where it comes from.
//!
//! - `robustBufferAccess`: a device created with it compiles every kernel with a bounds check
//!   on each storage and uniform buffer access (`CompileOptions::robust_buffer_access`;
//!   `docs/SHADER.md`, "Robust buffer access"); an access outside its descriptor's range goes
//!   to the null window, which reads zero and drops stores and atomics. Vertex attribute
//!   fetch is bounded by the binding's size whether or not it is enabled.
//! - `robustImageAccess` (`VK_EXT_image_robustness`, core in Vulkan 1.3): the texture unit
//!   reads zero and drops stores and atomics outside an image view (coordinates, array
//!   layers, mip levels) and a texel buffer's texels, always (`model::core::exec::tex`,
//!   `model::tex`), so there is nothing to switch on.
//!
//! robustness2's stricter `robustBufferAccess2` and `robustImageAccess2` are not offered.

use ash::vk;

/// `VkPhysicalDeviceFeatures::robustBufferAccess`.
pub fn buffer_access() -> vk::Bool32 {
    vk::TRUE
}

/// `VkPhysicalDeviceImageRobustnessFeatures::robustImageAccess` (and Vulkan 1.3's field of
/// the same name).
pub fn image_access() -> vk::Bool32 {
    vk::TRUE
}
