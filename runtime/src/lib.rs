//! The runtime: everything between the Vulkan API (`vortex-icd`) and the device model.
//!
//! It owns the Vulkan object model as plain Rust types (no FFI here): device memory and the
//! device address space, buffers, images, acceleration structures, descriptor sets living in
//! device memory, pipelines whose kernels live in device memory, and command buffers
//! ([`cmd`], a module per command family), which are compiled at record time into *streams*
//! of device operations ([`stream`]) — DCR writes and start pulses, DMA copies and fills, AS
//! and query jobs. A queue's command processor (its own thread) plays streams into the model
//! in submission order and signals fences and semaphores.
//!
//! A device fault found while playing a stream marks the device lost through one path
//! ([`device::Device::set_lost`]): it is logged once and every later call reports
//! `VK_ERROR_DEVICE_LOST`.

pub mod accel;
pub mod blit;
pub mod buffer;
pub mod cmd;
pub mod descriptor;
pub mod device;
pub mod image;
pub mod memory;
pub mod pipeline;
pub mod present;
pub mod query;
pub mod queue;
pub mod renderpass;
pub mod sampler;
pub mod sparse;
pub mod stats;
pub mod stream;
pub mod sync;

pub use ash::vk;

/// Result type of every runtime operation: errors are Vulkan error codes.
pub type VkResult<T> = Result<T, vk::Result>;
