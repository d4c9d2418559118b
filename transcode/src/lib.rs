//! Host-side translation into device formats.
//!
//! - [`accel`]: Vulkan acceleration-structure build inputs -> resident CW-BVH (vp_transcode_as).
//! - [`shader`]: SPIR-V compute shaders -> VX kernels, ray queries lowered to TRACE/WAIT/CONTINUE.

pub mod accel;
pub mod shader;
