//! Optional device features: the ones a physical device supports, and a device request that
//! enables a chosen set of them. Features are named as the Vulkan specification names them
//! (`shaderInt64`, `storageBuffer16BitAccess`, ...), so a program can list what it needs as
//! plain strings and check them against [`crate::DeviceInfo::enabled`].
//!
//! Only features that do not change the behaviour of a program that does not use them are
//! listed here: robustness features, for instance, are never enabled (robustness2's
//! `nullDescriptor` is: it only gives meaning to null descriptors, which are invalid without
//! it).

use ash::{ext, khr, vk};
use std::ffi::CStr;

/// Every feature structure the examples may enable, unchained (`p_next` is null between
/// uses, so the structures can be stored).
#[derive(Clone, Copy, Default)]
pub(crate) struct FeatureSet {
    pub core: vk::PhysicalDeviceFeatures,
    pub v11: vk::PhysicalDeviceVulkan11Features<'static>,
    pub v12: vk::PhysicalDeviceVulkan12Features<'static>,
    pub position_fetch: vk::PhysicalDeviceRayTracingPositionFetchFeaturesKHR<'static>,
    pub atomic_float: vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT<'static>,
    /// Only `nullDescriptor` of it is ever set (see the module note).
    pub robustness2: vk::PhysicalDeviceRobustness2FeaturesEXT<'static>,
    pub dynamic_rendering: vk::PhysicalDeviceDynamicRenderingFeatures<'static>,
    pub rt_pipeline: vk::PhysicalDeviceRayTracingPipelineFeaturesKHR<'static>,
}

macro_rules! optional_features {
    ($($name:literal => $group:ident . $field:ident),* $(,)?) => {
        /// Names of the optional features, in the order they are reported.
        pub const OPTIONAL_FEATURES: &[&str] = &[$($name),*];

        impl FeatureSet {
            /// Whether feature `name` is set (`None`: not a known optional feature).
            pub fn get(&self, name: &str) -> Option<bool> {
                match name {
                    $($name => Some(self.$group.$field == vk::TRUE),)*
                    _ => None,
                }
            }

            pub fn set(&mut self, name: &str) {
                match name {
                    $($name => self.$group.$field = vk::TRUE,)*
                    _ => {}
                }
            }
        }
    };
}

optional_features! {
    "shaderInt64" => core.shader_int64,
    "shaderInt16" => core.shader_int16,
    "shaderFloat64" => core.shader_float64,
    "shaderImageGatherExtended" => core.shader_image_gather_extended,
    "imageCubeArray" => core.image_cube_array,
    "shaderStorageImageExtendedFormats" => core.shader_storage_image_extended_formats,
    "shaderStorageImageReadWithoutFormat" => core.shader_storage_image_read_without_format,
    "shaderStorageImageWriteWithoutFormat" => core.shader_storage_image_write_without_format,
    "shaderUniformBufferArrayDynamicIndexing" => core.shader_uniform_buffer_array_dynamic_indexing,
    "shaderSampledImageArrayDynamicIndexing" => core.shader_sampled_image_array_dynamic_indexing,
    "shaderStorageBufferArrayDynamicIndexing" => core.shader_storage_buffer_array_dynamic_indexing,
    "shaderStorageImageArrayDynamicIndexing" => core.shader_storage_image_array_dynamic_indexing,
    "storageBuffer16BitAccess" => v11.storage_buffer16_bit_access,
    "uniformAndStorageBuffer16BitAccess" => v11.uniform_and_storage_buffer16_bit_access,
    "storagePushConstant16" => v11.storage_push_constant16,
    "multiview" => v11.multiview,
    "storageBuffer8BitAccess" => v12.storage_buffer8_bit_access,
    "uniformAndStorageBuffer8BitAccess" => v12.uniform_and_storage_buffer8_bit_access,
    "storagePushConstant8" => v12.storage_push_constant8,
    "shaderBufferInt64Atomics" => v12.shader_buffer_int64_atomics,
    "shaderSharedInt64Atomics" => v12.shader_shared_int64_atomics,
    "shaderFloat16" => v12.shader_float16,
    "shaderInt8" => v12.shader_int8,
    "shaderUniformTexelBufferArrayDynamicIndexing" => v12.shader_uniform_texel_buffer_array_dynamic_indexing,
    "shaderStorageTexelBufferArrayDynamicIndexing" => v12.shader_storage_texel_buffer_array_dynamic_indexing,
    "shaderUniformBufferArrayNonUniformIndexing" => v12.shader_uniform_buffer_array_non_uniform_indexing,
    "shaderSampledImageArrayNonUniformIndexing" => v12.shader_sampled_image_array_non_uniform_indexing,
    "shaderStorageBufferArrayNonUniformIndexing" => v12.shader_storage_buffer_array_non_uniform_indexing,
    "shaderStorageImageArrayNonUniformIndexing" => v12.shader_storage_image_array_non_uniform_indexing,
    "shaderUniformTexelBufferArrayNonUniformIndexing" => v12.shader_uniform_texel_buffer_array_non_uniform_indexing,
    "shaderStorageTexelBufferArrayNonUniformIndexing" => v12.shader_storage_texel_buffer_array_non_uniform_indexing,
    "descriptorBindingPartiallyBound" => v12.descriptor_binding_partially_bound,
    "runtimeDescriptorArray" => v12.runtime_descriptor_array,
    "scalarBlockLayout" => v12.scalar_block_layout,
    "uniformBufferStandardLayout" => v12.uniform_buffer_standard_layout,
    "shaderSubgroupExtendedTypes" => v12.shader_subgroup_extended_types,
    "vulkanMemoryModel" => v12.vulkan_memory_model,
    "vulkanMemoryModelDeviceScope" => v12.vulkan_memory_model_device_scope,
    "subgroupBroadcastDynamicId" => v12.subgroup_broadcast_dynamic_id,
    "rayTracingPositionFetch" => position_fetch.ray_tracing_position_fetch,
    "shaderBufferFloat32Atomics" => atomic_float.shader_buffer_float32_atomics,
    "shaderBufferFloat32AtomicAdd" => atomic_float.shader_buffer_float32_atomic_add,
    "shaderSharedFloat32Atomics" => atomic_float.shader_shared_float32_atomics,
    "shaderSharedFloat32AtomicAdd" => atomic_float.shader_shared_float32_atomic_add,
    "shaderImageFloat32Atomics" => atomic_float.shader_image_float32_atomics,
    "shaderImageFloat32AtomicAdd" => atomic_float.shader_image_float32_atomic_add,
    "sparseBinding" => core.sparse_binding,
    "vertexPipelineStoresAndAtomics" => core.vertex_pipeline_stores_and_atomics,
    "fragmentStoresAndAtomics" => core.fragment_stores_and_atomics,
    "wideLines" => core.wide_lines,
    "largePoints" => core.large_points,
    "nullDescriptor" => robustness2.null_descriptor,
    "dynamicRendering" => dynamic_rendering.dynamic_rendering,
    "rayTracingPipeline" => rt_pipeline.ray_tracing_pipeline,
}

/// Device extensions enabled when the device has them; each provides the features of one
/// structure of [`FeatureSet`] (`None`: core).
pub(crate) const OPTIONAL_EXTENSIONS: [&CStr; 5] = [
    khr::ray_tracing_position_fetch::NAME,
    ext::shader_atomic_float::NAME,
    ext::robustness2::NAME,
    khr::dynamic_rendering::NAME,
    khr::ray_tracing_pipeline::NAME,
];

impl FeatureSet {
    /// The names of every optional feature that is set.
    pub fn names(&self) -> Vec<&'static str> {
        OPTIONAL_FEATURES.iter().copied().filter(|n| self.get(n) == Some(true)).collect()
    }

    /// Keeps only the features also set in `other`.
    pub fn intersect(&self, other: &FeatureSet) -> FeatureSet {
        let mut out = FeatureSet::default();
        for name in OPTIONAL_FEATURES {
            if self.get(name) == Some(true) && other.get(name) == Some(true) {
                out.set(name);
            }
        }
        out
    }
}
