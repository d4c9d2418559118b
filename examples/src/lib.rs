//! Vulkan plumbing shared by the examples. Everything goes through the Vulkan loader
//! (`ash`, loaded at run time); nothing here links the Vortex driver crates, so every
//! example runs unchanged on any ICD, lavapipe included.

pub mod accel;
pub mod buffer;
pub mod buildbench;
pub mod checks;
pub mod context;
pub mod error;
pub mod features;
pub mod glsl;
pub mod icd;
pub mod image;
pub mod math;
pub mod obj;
pub mod owned;
pub mod pipeline;
pub mod raster;
pub mod raster_scene;
pub mod rawas;
pub mod rtpipe;
pub mod scene;
pub mod scene_render;
pub mod sparse;
pub mod wsi;
pub mod xvfb;

pub use accel::{AabbGeometry, AccelerationStructure, AsStorage, Indices, Instance, TriangleGeometry};
pub use buffer::Buffer;
pub use context::{Context, DeviceInfo};
pub use error::{Error, Result, VkResultExt};
pub use icd::Icd;
pub use image::{Image, ImageSpec, StorageImage};
pub use math::Mat3x4;
pub use obj::{parse_obj, Mesh};
pub use pipeline::{memory_barrier, Binding, ComputePipeline, Descriptor};

/// The Stanford bunny (low-resolution, 3674 triangles), as OBJ text.
pub const BUNNY_OBJ: &str = include_str!("../data/bunny.obj");
