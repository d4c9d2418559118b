//! The framework the cases share, in the roles of dEQP's `vkt::Context`, `vkMemUtil`,
//! `vkBuilderUtil` and `vkRayTracingUtil` (written from the Vulkan spec and the behaviour
//! the research notes describe, not copied).

pub mod accel;
pub mod device;
pub mod mem;
pub mod pipeline;
pub mod shader;

pub use accel::{Blas, BlasBuilder, Geometry, Instance, Tlas, TlasBuilder};
pub use device::Env;
pub use mem::{Buffer, Image};
pub use pipeline::{Binding, ComputePipeline};

/// `VkTransformMatrixKHR`: 3 rows of 4, the last column the translation.
pub type Transform = [[f32; 4]; 3];

pub const IDENTITY: Transform = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]];
