//! What the device reports: API version, extensions, features, properties, limits, formats,
//! memory and queues. Everything reported true works; everything not implemented is false
//! (conformance tests enable every advertised feature, so a half-done one breaks them all).

pub mod budget;
pub mod graphics;
pub mod robust;
pub mod rtpipe;
pub mod v13;

#[cfg(test)]
mod conformance;

use crate::util::{walk_out, write_name};
use ash::vk;
use std::ffi::c_void;
use vortex_model::abi::{format, kernel::kargs};
use vortex_runtime::device::Gpu;

/// Vulkan 1.3: every feature it requires works (docs/CONFORMANCE.md; robustBufferAccess,
/// robustImageAccess and multiview come from their own work, merged before this line).
pub const API_VERSION: u32 = vk::make_api_version(0, 1, 3, vk::HEADER_VERSION);
pub const DRIVER_VERSION: u32 = vk::make_api_version(0, 0, 1, 0);
pub const VENDOR_ID: u32 = 0x1_0000 + 0x5652; // outside the PCI range: not a registered vendor
pub const DEVICE_ID: u32 = 0x5254;

/// The largest 2D image (and so headless swapchain) side.
pub const MAX_IMAGE_DIMENSION_2D: u32 = 16384;

pub const INSTANCE_EXTENSIONS: &[(&str, u32)] = &[
    ("VK_KHR_get_physical_device_properties2", 2),
    // Window-system integration (`entry::wsi`).
    ("VK_KHR_surface", 25),
    ("VK_KHR_get_surface_capabilities2", 1),
    ("VK_KHR_xcb_surface", 6),
    ("VK_KHR_xlib_surface", 6),
    ("VK_EXT_headless_surface", 1),
];

pub const DEVICE_EXTENSIONS: &[(&str, u32)] = &[
    ("VK_KHR_acceleration_structure", 13),
    ("VK_KHR_ray_query", 1),
    ("VK_KHR_ray_tracing_position_fetch", 1),
    ("VK_EXT_shader_atomic_float", 1),
    ("VK_KHR_deferred_host_operations", 4),
    ("VK_KHR_buffer_device_address", 1),
    ("VK_KHR_spirv_1_4", 1),
    ("VK_KHR_shader_float_controls", 4),
    ("VK_EXT_descriptor_indexing", 2),
    ("VK_KHR_storage_buffer_storage_class", 1),
    ("VK_KHR_get_memory_requirements2", 1),
    ("VK_KHR_bind_memory2", 1),
    ("VK_KHR_dedicated_allocation", 3),
    ("VK_KHR_timeline_semaphore", 2),
    ("VK_KHR_uniform_buffer_standard_layout", 1),
    ("VK_KHR_ray_tracing_maintenance1", 1),
    ("VK_KHR_16bit_storage", 1),
    ("VK_KHR_8bit_storage", 1),
    ("VK_KHR_shader_float16_int8", 1),
    ("VK_KHR_shader_subgroup_extended_types", 1),
    // Null descriptors only (robustBufferAccess2 and robustImageAccess2 are not offered). The
    // KHR promotion uses the EXT's structures and structure-type numbers.
    ("VK_EXT_robustness2", 1),
    ("VK_KHR_robustness2", 1),
    // The heap's usage and budget as the model holds them (`budget`).
    ("VK_EXT_memory_budget", 1),
    // Presenting (`entry::wsi`): swapchain images are ordinary images.
    ("VK_KHR_swapchain", 70),
];

/// Every device extension offered: the compute and ray-query ones, and the graphics path's
/// once it is switched on.
pub fn device_extensions() -> Vec<(&'static str, u32)> {
    let gfx = if graphics::GRAPHICS { graphics::EXTENSIONS } else { &[] };
    let rt = rtpipe::extensions(rtpipe::enabled());
    DEVICE_EXTENSIONS.iter().chain(gfx).chain(rt).copied().chain(v13::extensions()).collect()
}

/// Fixed UUIDs: the driver UUID also versions serialized acceleration structures.
pub use vortex_runtime::device::{DEVICE_UUID, DRIVER_UUID};

pub fn extension_properties(list: &[(&str, u32)]) -> Vec<vk::ExtensionProperties> {
    list.iter()
        .map(|(name, rev)| {
            let mut p = vk::ExtensionProperties { spec_version: *rev, ..Default::default() };
            write_name(&mut p.extension_name, name);
            p
        })
        .collect()
}

/// Core 1.0 features.
pub fn features10() -> vk::PhysicalDeviceFeatures {
    let mut f = vk::PhysicalDeviceFeatures {
        image_cube_array: vk::TRUE,
        shader_int64: vk::TRUE,
        shader_int16: vk::TRUE,
        shader_float64: vk::TRUE,
        shader_storage_image_extended_formats: vk::TRUE,
        shader_storage_image_read_without_format: vk::TRUE,
        shader_storage_image_write_without_format: vk::TRUE,
        shader_uniform_buffer_array_dynamic_indexing: vk::TRUE,
        shader_storage_buffer_array_dynamic_indexing: vk::TRUE,
        shader_storage_image_array_dynamic_indexing: vk::TRUE,
        // Like the non-uniform indexing of Vulkan 1.2's features (examples' draw_check).
        shader_sampled_image_array_dynamic_indexing: graphics::SAMPLING as vk::Bool32,
        // Buffers only: no sparse residency, no sparse images (`runtime::sparse`).
        sparse_binding: vk::TRUE,
        // Kernels of a device created with it check every descriptor buffer access
        // (`runtime::device::Device::set_robust_buffer_access`); texel and image accesses
        // outside the view are always zero reads and dropped writes.
        robust_buffer_access: robust::buffer_access(),
        ..Default::default()
    };
    graphics::features10(&mut f, graphics::GRAPHICS);
    f
}

const T: vk::Bool32 = vk::TRUE;

fn fill_v11(f: &mut vk::PhysicalDeviceVulkan11Features) {
    f.storage_buffer16_bit_access = T;
    f.uniform_and_storage_buffer16_bit_access = T;
    f.storage_push_constant16 = T;
    f.storage_input_output16 = 0;
    f.multiview = graphics::GRAPHICS as vk::Bool32;
    // No geometry or tessellation stages.
    f.multiview_geometry_shader = 0;
    f.multiview_tessellation_shader = 0;
    f.variable_pointers_storage_buffer = 0;
    f.variable_pointers = 0;
    f.protected_memory = 0;
    f.sampler_ycbcr_conversion = 0;
    f.shader_draw_parameters = 0;
}

fn fill_v12(f: &mut vk::PhysicalDeviceVulkan12Features) {
    f.sampler_mirror_clamp_to_edge = 0;
    f.storage_buffer8_bit_access = T;
    f.uniform_and_storage_buffer8_bit_access = T;
    f.storage_push_constant8 = T;
    f.shader_buffer_int64_atomics = T;
    f.shader_shared_int64_atomics = T;
    f.shader_float16 = T;
    f.shader_int8 = T;
    f.descriptor_indexing = T;
    f.shader_input_attachment_array_dynamic_indexing = 0;
    f.shader_uniform_texel_buffer_array_dynamic_indexing = T;
    f.shader_storage_texel_buffer_array_dynamic_indexing = T;
    f.shader_uniform_buffer_array_non_uniform_indexing = T;
    f.shader_sampled_image_array_non_uniform_indexing = T;
    f.shader_storage_buffer_array_non_uniform_indexing = T;
    f.shader_storage_image_array_non_uniform_indexing = T;
    f.shader_input_attachment_array_non_uniform_indexing = 0;
    f.shader_uniform_texel_buffer_array_non_uniform_indexing = T;
    f.shader_storage_texel_buffer_array_non_uniform_indexing = T;
    f.descriptor_binding_uniform_buffer_update_after_bind = T;
    f.descriptor_binding_sampled_image_update_after_bind = T;
    f.descriptor_binding_storage_image_update_after_bind = T;
    f.descriptor_binding_storage_buffer_update_after_bind = T;
    f.descriptor_binding_uniform_texel_buffer_update_after_bind = T;
    f.descriptor_binding_storage_texel_buffer_update_after_bind = T;
    f.descriptor_binding_update_unused_while_pending = T;
    f.descriptor_binding_partially_bound = T;
    f.descriptor_binding_variable_descriptor_count = 0;
    f.runtime_descriptor_array = T;
    f.sampler_filter_minmax = 0;
    f.scalar_block_layout = T;
    f.uniform_buffer_standard_layout = T;
    f.shader_subgroup_extended_types = T;
    // Layouts are bookkeeping only here (no image is ever re-laid out), so the separate
    // depth and stencil layouts are accepted like every other.
    f.separate_depth_stencil_layouts = T;
    f.host_query_reset = T;
    f.timeline_semaphore = T;
    f.buffer_device_address = T;
    f.buffer_device_address_capture_replay = 0;
    f.buffer_device_address_multi_device = 0;
    // The Vulkan memory model's scopes and semantics ask for nothing more here: functional
    // data goes straight to the one device memory (caches are timing only), each warp's
    // accesses complete in program order, and barriers already order workgroup memory. So
    // every availability and visibility operation is already done (docs/CONFORMANCE.md).
    f.vulkan_memory_model = T;
    f.vulkan_memory_model_device_scope = T;
    f.vulkan_memory_model_availability_visibility_chains = 0;
    f.shader_output_viewport_index = 0;
    f.shader_output_layer = 0;
    f.subgroup_broadcast_dynamic_id = T;
    graphics::fill_v12(f, graphics::GRAPHICS);
}

/// Fills every feature structure we know in an output chain; unknown ones are left alone.
///
/// # Safety
/// `chain` must be a valid, writable pNext chain.
pub unsafe fn fill_features(chain: *mut c_void) {
    let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
    fill_v11(&mut v11);
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
    fill_v12(&mut v12);
    macro_rules! at {
        ($p:expr, $t:ty) => {
            // SAFETY: the sType matched this structure type.
            unsafe { &mut *($p as *mut $t) }
        };
    }
    let fill = |ty: vk::StructureType, p: *mut c_void| match ty {
        vk::StructureType::PHYSICAL_DEVICE_FEATURES_2 => at!(p, vk::PhysicalDeviceFeatures2).features = features10(),
        vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_1_FEATURES => fill_v11(at!(p, vk::PhysicalDeviceVulkan11Features)),
        vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES => fill_v12(at!(p, vk::PhysicalDeviceVulkan12Features)),
        vk::StructureType::PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES => {
            let f = at!(p, vk::PhysicalDevice16BitStorageFeatures);
            f.storage_buffer16_bit_access = v11.storage_buffer16_bit_access;
            f.uniform_and_storage_buffer16_bit_access = v11.uniform_and_storage_buffer16_bit_access;
            f.storage_push_constant16 = v11.storage_push_constant16;
            f.storage_input_output16 = v11.storage_input_output16;
        }
        vk::StructureType::PHYSICAL_DEVICE_MULTIVIEW_FEATURES => {
            let f = at!(p, vk::PhysicalDeviceMultiviewFeatures);
            f.multiview = v11.multiview;
            f.multiview_geometry_shader = v11.multiview_geometry_shader;
            f.multiview_tessellation_shader = v11.multiview_tessellation_shader;
        }
        vk::StructureType::PHYSICAL_DEVICE_VARIABLE_POINTERS_FEATURES => {
            let f = at!(p, vk::PhysicalDeviceVariablePointersFeatures);
            f.variable_pointers = v11.variable_pointers;
            f.variable_pointers_storage_buffer = v11.variable_pointers_storage_buffer;
        }
        vk::StructureType::PHYSICAL_DEVICE_PROTECTED_MEMORY_FEATURES => {
            at!(p, vk::PhysicalDeviceProtectedMemoryFeatures).protected_memory = v11.protected_memory
        }
        vk::StructureType::PHYSICAL_DEVICE_SAMPLER_YCBCR_CONVERSION_FEATURES => {
            at!(p, vk::PhysicalDeviceSamplerYcbcrConversionFeatures).sampler_ycbcr_conversion =
                v11.sampler_ycbcr_conversion
        }
        vk::StructureType::PHYSICAL_DEVICE_SHADER_DRAW_PARAMETERS_FEATURES => {
            at!(p, vk::PhysicalDeviceShaderDrawParametersFeatures).shader_draw_parameters = v11.shader_draw_parameters
        }
        vk::StructureType::PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES => {
            let f = at!(p, vk::PhysicalDevice8BitStorageFeatures);
            f.storage_buffer8_bit_access = v12.storage_buffer8_bit_access;
            f.uniform_and_storage_buffer8_bit_access = v12.uniform_and_storage_buffer8_bit_access;
            f.storage_push_constant8 = v12.storage_push_constant8;
        }
        vk::StructureType::PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES => {
            let f = at!(p, vk::PhysicalDeviceShaderAtomicInt64Features);
            f.shader_buffer_int64_atomics = v12.shader_buffer_int64_atomics;
            f.shader_shared_int64_atomics = v12.shader_shared_int64_atomics;
        }
        vk::StructureType::PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES => {
            let f = at!(p, vk::PhysicalDeviceShaderFloat16Int8Features);
            f.shader_float16 = v12.shader_float16;
            f.shader_int8 = v12.shader_int8;
        }
        vk::StructureType::PHYSICAL_DEVICE_DESCRIPTOR_INDEXING_FEATURES => {
            let f = at!(p, vk::PhysicalDeviceDescriptorIndexingFeatures);
            f.shader_input_attachment_array_dynamic_indexing = v12.shader_input_attachment_array_dynamic_indexing;
            f.shader_uniform_texel_buffer_array_dynamic_indexing =
                v12.shader_uniform_texel_buffer_array_dynamic_indexing;
            f.shader_storage_texel_buffer_array_dynamic_indexing =
                v12.shader_storage_texel_buffer_array_dynamic_indexing;
            f.shader_uniform_buffer_array_non_uniform_indexing = v12.shader_uniform_buffer_array_non_uniform_indexing;
            f.shader_sampled_image_array_non_uniform_indexing = v12.shader_sampled_image_array_non_uniform_indexing;
            f.shader_storage_buffer_array_non_uniform_indexing = v12.shader_storage_buffer_array_non_uniform_indexing;
            f.shader_storage_image_array_non_uniform_indexing = v12.shader_storage_image_array_non_uniform_indexing;
            f.shader_input_attachment_array_non_uniform_indexing =
                v12.shader_input_attachment_array_non_uniform_indexing;
            f.shader_uniform_texel_buffer_array_non_uniform_indexing =
                v12.shader_uniform_texel_buffer_array_non_uniform_indexing;
            f.shader_storage_texel_buffer_array_non_uniform_indexing =
                v12.shader_storage_texel_buffer_array_non_uniform_indexing;
            f.descriptor_binding_uniform_buffer_update_after_bind =
                v12.descriptor_binding_uniform_buffer_update_after_bind;
            f.descriptor_binding_sampled_image_update_after_bind =
                v12.descriptor_binding_sampled_image_update_after_bind;
            f.descriptor_binding_storage_image_update_after_bind =
                v12.descriptor_binding_storage_image_update_after_bind;
            f.descriptor_binding_storage_buffer_update_after_bind =
                v12.descriptor_binding_storage_buffer_update_after_bind;
            f.descriptor_binding_uniform_texel_buffer_update_after_bind =
                v12.descriptor_binding_uniform_texel_buffer_update_after_bind;
            f.descriptor_binding_storage_texel_buffer_update_after_bind =
                v12.descriptor_binding_storage_texel_buffer_update_after_bind;
            f.descriptor_binding_update_unused_while_pending = v12.descriptor_binding_update_unused_while_pending;
            f.descriptor_binding_partially_bound = v12.descriptor_binding_partially_bound;
            f.descriptor_binding_variable_descriptor_count = v12.descriptor_binding_variable_descriptor_count;
            f.runtime_descriptor_array = v12.runtime_descriptor_array;
        }
        vk::StructureType::PHYSICAL_DEVICE_SCALAR_BLOCK_LAYOUT_FEATURES => {
            at!(p, vk::PhysicalDeviceScalarBlockLayoutFeatures).scalar_block_layout = v12.scalar_block_layout
        }
        vk::StructureType::PHYSICAL_DEVICE_IMAGELESS_FRAMEBUFFER_FEATURES => {
            at!(p, vk::PhysicalDeviceImagelessFramebufferFeatures).imageless_framebuffer = v12.imageless_framebuffer
        }
        vk::StructureType::PHYSICAL_DEVICE_UNIFORM_BUFFER_STANDARD_LAYOUT_FEATURES => {
            at!(p, vk::PhysicalDeviceUniformBufferStandardLayoutFeatures).uniform_buffer_standard_layout =
                v12.uniform_buffer_standard_layout
        }
        vk::StructureType::PHYSICAL_DEVICE_SHADER_SUBGROUP_EXTENDED_TYPES_FEATURES => {
            at!(p, vk::PhysicalDeviceShaderSubgroupExtendedTypesFeatures).shader_subgroup_extended_types =
                v12.shader_subgroup_extended_types
        }
        vk::StructureType::PHYSICAL_DEVICE_SEPARATE_DEPTH_STENCIL_LAYOUTS_FEATURES => {
            at!(p, vk::PhysicalDeviceSeparateDepthStencilLayoutsFeatures).separate_depth_stencil_layouts =
                v12.separate_depth_stencil_layouts
        }
        vk::StructureType::PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES => {
            at!(p, vk::PhysicalDeviceHostQueryResetFeatures).host_query_reset = v12.host_query_reset
        }
        vk::StructureType::PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES => {
            at!(p, vk::PhysicalDeviceTimelineSemaphoreFeatures).timeline_semaphore = v12.timeline_semaphore
        }
        vk::StructureType::PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES => {
            let f = at!(p, vk::PhysicalDeviceBufferDeviceAddressFeatures);
            f.buffer_device_address = v12.buffer_device_address;
            f.buffer_device_address_capture_replay = v12.buffer_device_address_capture_replay;
            f.buffer_device_address_multi_device = v12.buffer_device_address_multi_device;
        }
        vk::StructureType::PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES => {
            let f = at!(p, vk::PhysicalDeviceVulkanMemoryModelFeatures);
            f.vulkan_memory_model = v12.vulkan_memory_model;
            f.vulkan_memory_model_device_scope = v12.vulkan_memory_model_device_scope;
            f.vulkan_memory_model_availability_visibility_chains =
                v12.vulkan_memory_model_availability_visibility_chains;
        }
        vk::StructureType::PHYSICAL_DEVICE_ACCELERATION_STRUCTURE_FEATURES_KHR => {
            let f = at!(p, vk::PhysicalDeviceAccelerationStructureFeaturesKHR);
            f.acceleration_structure = T;
            f.acceleration_structure_capture_replay = 0;
            f.acceleration_structure_indirect_build = 0;
            f.acceleration_structure_host_commands = T;
            f.descriptor_binding_acceleration_structure_update_after_bind = T;
        }
        vk::StructureType::PHYSICAL_DEVICE_RAY_QUERY_FEATURES_KHR => {
            at!(p, vk::PhysicalDeviceRayQueryFeaturesKHR).ray_query = T
        }
        vk::StructureType::PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT => {
            // A null descriptor of any type: buffers read zero and drop writes, storage
            // images and texel buffers likewise, acceleration structures miss. Out-of-bounds
            // accesses still fault, so neither robust access feature is offered.
            let f = at!(p, vk::PhysicalDeviceRobustness2FeaturesEXT);
            f.robust_buffer_access2 = 0;
            f.robust_image_access2 = 0;
            f.null_descriptor = T;
        }
        vk::StructureType::PHYSICAL_DEVICE_RAY_TRACING_MAINTENANCE_1_FEATURES_KHR => {
            let f = at!(p, vk::PhysicalDeviceRayTracingMaintenance1FeaturesKHR);
            f.ray_tracing_maintenance1 = T;
            f.ray_tracing_pipeline_trace_rays_indirect2 = rtpipe::trace_rays_indirect2(rtpipe::enabled());
        }
        vk::StructureType::PHYSICAL_DEVICE_RAY_TRACING_POSITION_FETCH_FEATURES_KHR => {
            at!(p, vk::PhysicalDeviceRayTracingPositionFetchFeaturesKHR).ray_tracing_position_fetch = T
        }
        vk::StructureType::PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT => {
            // 32-bit float atomics (add, exchange, load, store) on buffers and workgroup
            // memory: `amo fadd` and the untyped exchange. No 64-bit float atomics (the
            // compiler does not lower AtomicFloat64AddEXT) and no image float atomics.
            let f = at!(p, vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT);
            f.shader_buffer_float32_atomics = T;
            f.shader_buffer_float32_atomic_add = T;
            f.shader_buffer_float64_atomics = 0;
            f.shader_buffer_float64_atomic_add = 0;
            f.shader_shared_float32_atomics = T;
            f.shader_shared_float32_atomic_add = T;
            f.shader_shared_float64_atomics = 0;
            f.shader_shared_float64_atomic_add = 0;
            f.shader_image_float32_atomics = 0;
            f.shader_image_float32_atomic_add = 0;
            f.sparse_image_float32_atomics = 0;
            f.sparse_image_float32_atomic_add = 0;
        }
        _ => {
            // SAFETY: `p` is a writable structure of type `ty`.
            unsafe {
                let _ = v13::fill_feature(ty, p, graphics::GRAPHICS)
                    || graphics::fill_feature(ty, p, graphics::GRAPHICS)
                    || rtpipe::fill_feature(ty, p, rtpipe::enabled());
            }
        }
    };
    // SAFETY: forwarded contract.
    unsafe { walk_out(chain, fill) }
}

pub fn properties10(gpu: &Gpu) -> vk::PhysicalDeviceProperties {
    let c = &gpu.config;
    let mut p = vk::PhysicalDeviceProperties {
        api_version: API_VERSION,
        driver_version: DRIVER_VERSION,
        vendor_id: VENDOR_ID,
        device_id: DEVICE_ID,
        device_type: vk::PhysicalDeviceType::CPU,
        pipeline_cache_uuid: DEVICE_UUID,
        limits: limits(gpu),
        // Sparse binding without residency: every residency property is false (an access to
        // an unbound page is a device fault, not a zero read).
        sparse_properties: vk::PhysicalDeviceSparseProperties {
            residency_standard2_d_block_shape: 0,
            residency_standard2_d_multisample_block_shape: 0,
            residency_standard3_d_block_shape: 0,
            residency_aligned_mip_size: 0,
            residency_non_resident_strict: 0,
        },
        ..Default::default()
    };
    let _ = c;
    write_name(&mut p.device_name, &gpu.name());
    p
}

pub fn limits(gpu: &Gpu) -> vk::PhysicalDeviceLimits {
    let c = &gpu.config;
    let big = 1u32 << 20;
    let mut l = vk::PhysicalDeviceLimits {
        max_image_dimension1_d: 16384,
        max_image_dimension2_d: MAX_IMAGE_DIMENSION_2D,
        max_image_dimension3_d: 2048,
        max_image_dimension_cube: 16384,
        max_image_array_layers: 2048,
        max_texel_buffer_elements: 65536,
        max_uniform_buffer_range: 65536,
        max_storage_buffer_range: u32::MAX,
        max_push_constants_size: kargs::PUSH_BYTES as u32,
        max_memory_allocation_count: 1 << 20,
        max_sampler_allocation_count: 4000,
        buffer_image_granularity: 64,
        sparse_address_space_size: vortex_model::mem::MAX_ALLOCATION,
        max_bound_descriptor_sets: kargs::MAX_SETS as u32,
        max_per_stage_descriptor_samplers: big,
        max_per_stage_descriptor_uniform_buffers: big,
        max_per_stage_descriptor_storage_buffers: big,
        max_per_stage_descriptor_sampled_images: big,
        max_per_stage_descriptor_storage_images: big,
        max_per_stage_descriptor_input_attachments: 0,
        max_per_stage_resources: big,
        max_descriptor_set_samplers: big,
        max_descriptor_set_uniform_buffers: big,
        max_descriptor_set_uniform_buffers_dynamic: (kargs::MAX_DYNAMIC / 2) as u32,
        max_descriptor_set_storage_buffers: big,
        max_descriptor_set_storage_buffers_dynamic: (kargs::MAX_DYNAMIC / 2) as u32,
        max_descriptor_set_sampled_images: big,
        max_descriptor_set_storage_images: big,
        max_descriptor_set_input_attachments: 0,
        max_compute_shared_memory_size: c.lmem_bytes / 2,
        max_compute_work_group_count: [1 << 30, 65535, 65535],
        max_compute_work_group_invocations: c.max_block_threads().min(1024),
        max_compute_work_group_size: [c.max_block_threads().min(1024), c.max_block_threads().min(1024), 64],
        max_sampler_lod_bias: 0.0,
        max_sampler_anisotropy: 1.0,
        max_viewports: 1,
        min_memory_map_alignment: 64,
        min_texel_buffer_offset_alignment: 16,
        min_uniform_buffer_offset_alignment: 16,
        min_storage_buffer_offset_alignment: 16,
        max_framebuffer_width: 4096,
        max_framebuffer_height: 4096,
        max_framebuffer_layers: 256,
        framebuffer_color_sample_counts: graphics::SAMPLE_COUNTS,
        framebuffer_depth_sample_counts: graphics::SAMPLE_COUNTS,
        framebuffer_stencil_sample_counts: graphics::SAMPLE_COUNTS,
        framebuffer_no_attachments_sample_counts: graphics::SAMPLE_COUNTS,
        max_color_attachments: 4,
        sampled_image_color_sample_counts: graphics::SAMPLE_COUNTS,
        sampled_image_integer_sample_counts: graphics::SAMPLE_COUNTS,
        sampled_image_depth_sample_counts: graphics::SAMPLE_COUNTS,
        sampled_image_stencil_sample_counts: graphics::SAMPLE_COUNTS,
        storage_image_sample_counts: vk::SampleCountFlags::TYPE_1,
        max_sample_mask_words: 1,
        timestamp_compute_and_graphics: vk::TRUE,
        timestamp_period: 1.0,
        discrete_queue_priorities: 2,
        point_size_range: [1.0, 1.0],
        line_width_range: [1.0, 1.0],
        optimal_buffer_copy_offset_alignment: 16,
        optimal_buffer_copy_row_pitch_alignment: 16,
        non_coherent_atom_size: 64,
        ..Default::default()
    };
    graphics::limits(&mut l);
    l
}

/// Fills the property structures we know in an output chain.
///
/// # Safety
/// `chain` must be a valid, writable pNext chain.
pub unsafe fn fill_properties(gpu: &Gpu, chain: *mut c_void) {
    let c = &gpu.config;
    macro_rules! at {
        ($p:expr, $t:ty) => {
            // SAFETY: the sType matched this structure type.
            unsafe { &mut *($p as *mut $t) }
        };
    }
    // The Vulkan 1.2 aggregate structures and the per-extension ones carry the same fields;
    // each group is written by one macro so the two can never disagree.
    macro_rules! descriptor_indexing {
        ($q:ident) => {
            let n = 1 << 20;
            $q.max_update_after_bind_descriptors_in_all_pools = n;
            $q.shader_uniform_buffer_array_non_uniform_indexing_native = T;
            $q.shader_sampled_image_array_non_uniform_indexing_native = T;
            $q.shader_storage_buffer_array_non_uniform_indexing_native = T;
            $q.shader_storage_image_array_non_uniform_indexing_native = T;
            $q.max_per_stage_descriptor_update_after_bind_samplers = n;
            $q.max_per_stage_descriptor_update_after_bind_uniform_buffers = n;
            $q.max_per_stage_descriptor_update_after_bind_storage_buffers = n;
            $q.max_per_stage_descriptor_update_after_bind_sampled_images = n;
            $q.max_per_stage_descriptor_update_after_bind_storage_images = n;
            $q.max_per_stage_descriptor_update_after_bind_input_attachments = n;
            $q.max_per_stage_update_after_bind_resources = n;
            $q.max_descriptor_set_update_after_bind_samplers = n;
            $q.max_descriptor_set_update_after_bind_uniform_buffers = n;
            $q.max_descriptor_set_update_after_bind_uniform_buffers_dynamic = (kargs::MAX_DYNAMIC / 2) as u32;
            $q.max_descriptor_set_update_after_bind_storage_buffers = n;
            $q.max_descriptor_set_update_after_bind_storage_buffers_dynamic = (kargs::MAX_DYNAMIC / 2) as u32;
            $q.max_descriptor_set_update_after_bind_sampled_images = n;
            $q.max_descriptor_set_update_after_bind_storage_images = n;
            $q.max_descriptor_set_update_after_bind_input_attachments = n;
        };
    }
    macro_rules! float_controls {
        ($q:ident) => {
            $q.denorm_behavior_independence = vk::ShaderFloatControlsIndependence::ALL;
            $q.rounding_mode_independence = vk::ShaderFloatControlsIndependence::ALL;
            // Every width computes in IEEE arithmetic with denormals, rounding to nearest even.
            $q.shader_denorm_preserve_float16 = T;
            $q.shader_denorm_preserve_float32 = T;
            $q.shader_denorm_preserve_float64 = T;
            $q.shader_rounding_mode_rte_float16 = T;
            $q.shader_rounding_mode_rte_float32 = T;
            $q.shader_rounding_mode_rte_float64 = T;
            $q.shader_signed_zero_inf_nan_preserve_float16 = T;
            $q.shader_signed_zero_inf_nan_preserve_float32 = T;
            $q.shader_signed_zero_inf_nan_preserve_float64 = T;
        };
    }
    macro_rules! driver_identity {
        ($q:ident) => {
            // Not a registered driver: no VkDriverId value names it.
            $q.driver_id = vk::DriverId::from_raw(0);
            write_name(&mut $q.driver_name, "vortex-rt");
            write_name(&mut $q.driver_info, concat!("Vortex RT ", env!("CARGO_PKG_VERSION"), " (modelled GPU)"));
        };
    }
    let subgroup_stages = vk::ShaderStageFlags::COMPUTE;
    // Every subgroup operation, at any warp size (VX's VOTE/BALLOT/SHFL/RED; ISA.md).
    let subgroup_ops = vk::SubgroupFeatureFlags::BASIC
        | vk::SubgroupFeatureFlags::VOTE
        | vk::SubgroupFeatureFlags::ARITHMETIC
        | vk::SubgroupFeatureFlags::BALLOT
        | vk::SubgroupFeatureFlags::SHUFFLE
        | vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE
        | vk::SubgroupFeatureFlags::CLUSTERED
        | vk::SubgroupFeatureFlags::QUAD;
    let fill = |ty: vk::StructureType, p: *mut c_void| match ty {
        vk::StructureType::PHYSICAL_DEVICE_PROPERTIES_2 => {
            at!(p, vk::PhysicalDeviceProperties2).properties = properties10(gpu)
        }
        vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES => {
            let q = at!(p, vk::PhysicalDeviceVulkan11Properties);
            q.device_uuid = DEVICE_UUID;
            q.driver_uuid = DRIVER_UUID;
            q.device_luid_valid = 0;
            q.subgroup_size = c.num_threads;
            q.subgroup_supported_stages = subgroup_stages;
            q.subgroup_supported_operations = subgroup_ops;
            q.subgroup_quad_operations_in_all_stages = 0;
            q.point_clipping_behavior = vk::PointClippingBehavior::ALL_CLIP_PLANES;
            q.max_multiview_view_count = vortex_model::abi::gfx::limits::MAX_VIEWS;
            q.max_multiview_instance_index = vortex_model::abi::gfx::limits::MAX_MULTIVIEW_INSTANCE_INDEX;
            q.protected_no_fault = 0;
            q.max_per_set_descriptors = 1 << 20;
            q.max_memory_allocation_size = vortex_model::mem::MAX_ALLOCATION;
        }
        vk::StructureType::PHYSICAL_DEVICE_ID_PROPERTIES => {
            let q = at!(p, vk::PhysicalDeviceIDProperties);
            q.device_uuid = DEVICE_UUID;
            q.driver_uuid = DRIVER_UUID;
            q.device_luid_valid = 0;
        }
        vk::StructureType::PHYSICAL_DEVICE_SUBGROUP_PROPERTIES => {
            let q = at!(p, vk::PhysicalDeviceSubgroupProperties);
            q.subgroup_size = c.num_threads;
            q.supported_stages = subgroup_stages;
            q.supported_operations = subgroup_ops;
            q.quad_operations_in_all_stages = 0;
        }
        vk::StructureType::PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES => {
            let q = at!(p, vk::PhysicalDeviceMaintenance3Properties);
            q.max_per_set_descriptors = 1 << 20;
            q.max_memory_allocation_size = vortex_model::mem::MAX_ALLOCATION;
        }
        vk::StructureType::PHYSICAL_DEVICE_POINT_CLIPPING_PROPERTIES => {
            at!(p, vk::PhysicalDevicePointClippingProperties).point_clipping_behavior =
                vk::PointClippingBehavior::ALL_CLIP_PLANES
        }
        vk::StructureType::PHYSICAL_DEVICE_MULTIVIEW_PROPERTIES => {
            let q = at!(p, vk::PhysicalDeviceMultiviewProperties);
            q.max_multiview_view_count = vortex_model::abi::gfx::limits::MAX_VIEWS;
            q.max_multiview_instance_index = vortex_model::abi::gfx::limits::MAX_MULTIVIEW_INSTANCE_INDEX;
        }
        vk::StructureType::PHYSICAL_DEVICE_DEPTH_STENCIL_RESOLVE_PROPERTIES => {
            let q = at!(p, vk::PhysicalDeviceDepthStencilResolveProperties);
            graphics::resolve_modes!(q);
        }
        vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES => {
            let q = at!(p, vk::PhysicalDeviceVulkan12Properties);
            driver_identity!(q);
            q.conformance_version = vk::ConformanceVersion::default();
            float_controls!(q);
            q.robust_buffer_access_update_after_bind = 0;
            q.quad_divergent_implicit_lod = 0;
            descriptor_indexing!(q);
            graphics::resolve_modes!(q);
            q.filter_minmax_single_component_formats = 0;
            q.max_timeline_semaphore_value_difference = u64::MAX >> 1;
            q.framebuffer_integer_color_sample_counts = graphics::SAMPLE_COUNTS;
        }
        vk::StructureType::PHYSICAL_DEVICE_DRIVER_PROPERTIES => {
            let q = at!(p, vk::PhysicalDeviceDriverProperties);
            driver_identity!(q);
        }
        vk::StructureType::PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES => {
            let q = at!(p, vk::PhysicalDeviceFloatControlsProperties);
            float_controls!(q);
        }
        vk::StructureType::PHYSICAL_DEVICE_DESCRIPTOR_INDEXING_PROPERTIES => {
            let q = at!(p, vk::PhysicalDeviceDescriptorIndexingProperties);
            descriptor_indexing!(q);
        }
        vk::StructureType::PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_PROPERTIES => {
            at!(p, vk::PhysicalDeviceTimelineSemaphoreProperties).max_timeline_semaphore_value_difference =
                u64::MAX >> 1
        }
        vk::StructureType::PHYSICAL_DEVICE_ACCELERATION_STRUCTURE_PROPERTIES_KHR => {
            let q = at!(p, vk::PhysicalDeviceAccelerationStructurePropertiesKHR);
            q.max_geometry_count = 1 << 24;
            q.max_instance_count = 1 << 24;
            q.max_primitive_count = 1 << 29;
            q.max_per_stage_descriptor_acceleration_structures = 1 << 20;
            q.max_per_stage_descriptor_update_after_bind_acceleration_structures = 1 << 20;
            q.max_descriptor_set_acceleration_structures = 1 << 20;
            q.max_descriptor_set_update_after_bind_acceleration_structures = 1 << 20;
            q.min_acceleration_structure_scratch_offset_alignment = 128;
        }
        vk::StructureType::PHYSICAL_DEVICE_ROBUSTNESS_2_PROPERTIES_EXT => {
            // The granules robust accesses would be checked at (robustBufferAccess2 is not
            // offered): the smallest values the specification allows for a word machine.
            let q = at!(p, vk::PhysicalDeviceRobustness2PropertiesEXT);
            q.robust_storage_buffer_access_size_alignment = 4;
            q.robust_uniform_buffer_access_size_alignment = 16;
        }
        _ => {
            // SAFETY: `p` is a writable structure of type `ty`.
            unsafe {
                let _ = v13::fill_property(gpu, ty, p)
                    || graphics::fill_property(ty, p)
                    || (rtpipe::enabled() && rtpipe::fill_property(ty, p));
            }
        }
    };
    // SAFETY: forwarded contract.
    unsafe { walk_out(chain, fill) }
}

/// Format support: storage images (and transfers) for every format the texture path
/// converts; acceleration-structure vertex input for the vertex formats the transcoder
/// reads.
pub fn format_properties(f: vk::Format) -> vk::FormatProperties {
    let mut p = vk::FormatProperties::default();
    if let Some(fmt) = format::lookup(f.as_raw() as u32) {
        let mut img = vk::FormatFeatureFlags::STORAGE_IMAGE
            | vk::FormatFeatureFlags::TRANSFER_SRC
            | vk::FormatFeatureFlags::TRANSFER_DST;
        if fmt.texel_bytes() == 4 && fmt.is_integer() && fmt.comps == 1 {
            img |= vk::FormatFeatureFlags::STORAGE_IMAGE_ATOMIC;
        }
        p.optimal_tiling_features = img;
        p.linear_tiling_features = img;
    }
    // Attachment, blit and sampling features, depth/stencil formats included (they are
    // not storage formats, so the block above skips them; depth/stencil only optimally tiled).
    let gfx = graphics::image_features(f, graphics::GRAPHICS, graphics::SAMPLING);
    p.optimal_tiling_features |= gfx;
    if !gfx.contains(vk::FormatFeatureFlags::DEPTH_STENCIL_ATTACHMENT) {
        p.linear_tiling_features |= gfx;
    }
    if let Some(fmt) = format::lookup(f.as_raw() as u32) {
        // Texel buffers go through the same texel path as storage images.
        p.buffer_features |=
            vk::FormatFeatureFlags::UNIFORM_TEXEL_BUFFER | vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER;
        if fmt.texel_bytes() == 4 && fmt.is_integer() && fmt.comps == 1 {
            p.buffer_features |= vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER_ATOMIC;
        }
    }
    p.buffer_features |= graphics::buffer_features(f, graphics::GRAPHICS);
    if crate::entry::accel::vertex_format_supported(f) {
        p.buffer_features |= vk::FormatFeatureFlags::ACCELERATION_STRUCTURE_VERTEX_BUFFER_KHR;
    }
    p
}

pub fn image_format_properties(
    f: vk::Format,
    ty: vk::ImageType,
    tiling: vk::ImageTiling,
    usage: vk::ImageUsageFlags,
    flags: vk::ImageCreateFlags,
) -> Result<vk::ImageFormatProperties, vk::Result> {
    let storage = format::lookup(f.as_raw() as u32).is_some();
    let mut supported_usage = graphics::image_usage(f, graphics::GRAPHICS, graphics::SAMPLING);
    if storage {
        supported_usage |=
            vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    }
    // Depth/stencil images are 2D.
    let depth_stencil = format::find(f.as_raw() as u32).is_some_and(|x| x.depth().is_some() || x.has_stencil());
    if supported_usage.is_empty()
        || !supported_usage.contains(usage)
        || (depth_stencil && ty != vk::ImageType::TYPE_2D)
        || flags.intersects(vk::ImageCreateFlags::SPARSE_BINDING | vk::ImageCreateFlags::SPARSE_RESIDENCY)
    {
        return Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED);
    }
    let (extent, layers) = match ty {
        vk::ImageType::TYPE_1D => (vk::Extent3D { width: 16384, height: 1, depth: 1 }, 2048),
        vk::ImageType::TYPE_2D => (vk::Extent3D { width: 16384, height: 16384, depth: 1 }, 2048),
        vk::ImageType::TYPE_3D => (vk::Extent3D { width: 2048, height: 2048, depth: 2048 }, 1),
        _ => return Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED),
    };
    Ok(vk::ImageFormatProperties {
        max_extent: extent,
        max_mip_levels: 15,
        max_array_layers: layers,
        sample_counts: graphics::image_sample_counts(f, ty, tiling, usage, flags),
        max_resource_size: 1 << 40,
    })
}

/// One heap, one memory type that is everything at once.
pub fn memory_properties() -> vk::PhysicalDeviceMemoryProperties {
    let mut m = vk::PhysicalDeviceMemoryProperties { memory_type_count: 1, memory_heap_count: 1, ..Default::default() };
    m.memory_types[0] = vk::MemoryType {
        property_flags: vk::MemoryPropertyFlags::DEVICE_LOCAL
            | vk::MemoryPropertyFlags::HOST_VISIBLE
            | vk::MemoryPropertyFlags::HOST_COHERENT
            | vk::MemoryPropertyFlags::HOST_CACHED,
        heap_index: 0,
    };
    m.memory_heaps[0] = vk::MemoryHeap { size: 8 << 30, flags: vk::MemoryHeapFlags::DEVICE_LOCAL };
    m
}

/// One queue family: compute, transfer and sparse binding, and graphics once it is switched
/// on.
pub fn queue_family() -> vk::QueueFamilyProperties {
    vk::QueueFamilyProperties {
        queue_flags: graphics::queue_flags(graphics::GRAPHICS) | vk::QueueFlags::SPARSE_BINDING,
        queue_count: 1,
        timestamp_valid_bits: 64,
        min_image_transfer_granularity: vk::Extent3D { width: 1, height: 1, depth: 1 },
    }
}

/// The first feature requested in a `VkDeviceCreateInfo` chain that the device does not
/// report, named by its structure and field position; `None` when every request is
/// supported. Structures we do not know are ignored, as the spec requires.
///
/// # Safety
/// `chain` must be a valid input structure chain.
pub unsafe fn unsupported_feature(chain: *const c_void) -> Option<String> {
    macro_rules! known {
        ($($sty:ident => $t:ty),* $(,)?) => {
            |ty: vk::StructureType| -> Option<(usize, &'static str)> {
                match ty {
                    $( vk::StructureType::$sty => Some((std::mem::size_of::<$t>(), stringify!($t))), )*
                    _ => None,
                }
            }
        };
    }
    let size_of = known! {
        PHYSICAL_DEVICE_FEATURES_2 => vk::PhysicalDeviceFeatures2,
        PHYSICAL_DEVICE_VULKAN_1_1_FEATURES => vk::PhysicalDeviceVulkan11Features,
        PHYSICAL_DEVICE_VULKAN_1_2_FEATURES => vk::PhysicalDeviceVulkan12Features,
        PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES => vk::PhysicalDevice16BitStorageFeatures,
        PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES => vk::PhysicalDevice8BitStorageFeatures,
        PHYSICAL_DEVICE_MULTIVIEW_FEATURES => vk::PhysicalDeviceMultiviewFeatures,
        PHYSICAL_DEVICE_VARIABLE_POINTERS_FEATURES => vk::PhysicalDeviceVariablePointersFeatures,
        PHYSICAL_DEVICE_PROTECTED_MEMORY_FEATURES => vk::PhysicalDeviceProtectedMemoryFeatures,
        PHYSICAL_DEVICE_SAMPLER_YCBCR_CONVERSION_FEATURES => vk::PhysicalDeviceSamplerYcbcrConversionFeatures,
        PHYSICAL_DEVICE_SHADER_DRAW_PARAMETERS_FEATURES => vk::PhysicalDeviceShaderDrawParametersFeatures,
        PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES => vk::PhysicalDeviceShaderAtomicInt64Features,
        PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES => vk::PhysicalDeviceShaderFloat16Int8Features,
        PHYSICAL_DEVICE_DESCRIPTOR_INDEXING_FEATURES => vk::PhysicalDeviceDescriptorIndexingFeatures,
        PHYSICAL_DEVICE_SCALAR_BLOCK_LAYOUT_FEATURES => vk::PhysicalDeviceScalarBlockLayoutFeatures,
        PHYSICAL_DEVICE_IMAGELESS_FRAMEBUFFER_FEATURES => vk::PhysicalDeviceImagelessFramebufferFeatures,
        PHYSICAL_DEVICE_UNIFORM_BUFFER_STANDARD_LAYOUT_FEATURES => vk::PhysicalDeviceUniformBufferStandardLayoutFeatures,
        PHYSICAL_DEVICE_SHADER_SUBGROUP_EXTENDED_TYPES_FEATURES => vk::PhysicalDeviceShaderSubgroupExtendedTypesFeatures,
        PHYSICAL_DEVICE_SEPARATE_DEPTH_STENCIL_LAYOUTS_FEATURES => vk::PhysicalDeviceSeparateDepthStencilLayoutsFeatures,
        PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES => vk::PhysicalDeviceHostQueryResetFeatures,
        PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES => vk::PhysicalDeviceTimelineSemaphoreFeatures,
        PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES => vk::PhysicalDeviceBufferDeviceAddressFeatures,
        PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES => vk::PhysicalDeviceVulkanMemoryModelFeatures,
        PHYSICAL_DEVICE_ACCELERATION_STRUCTURE_FEATURES_KHR => vk::PhysicalDeviceAccelerationStructureFeaturesKHR,
        PHYSICAL_DEVICE_RAY_QUERY_FEATURES_KHR => vk::PhysicalDeviceRayQueryFeaturesKHR,
        PHYSICAL_DEVICE_RAY_TRACING_MAINTENANCE_1_FEATURES_KHR => vk::PhysicalDeviceRayTracingMaintenance1FeaturesKHR,
        PHYSICAL_DEVICE_RAY_TRACING_POSITION_FETCH_FEATURES_KHR => vk::PhysicalDeviceRayTracingPositionFetchFeaturesKHR,
        PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_FEATURES_KHR => vk::PhysicalDeviceRayTracingPipelineFeaturesKHR,
        PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT => vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT,
        PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT => vk::PhysicalDeviceRobustness2FeaturesEXT,
        PHYSICAL_DEVICE_DYNAMIC_RENDERING_FEATURES => vk::PhysicalDeviceDynamicRenderingFeatures,
        PHYSICAL_DEVICE_EXTENDED_DYNAMIC_STATE_FEATURES_EXT => vk::PhysicalDeviceExtendedDynamicStateFeaturesEXT,
        PHYSICAL_DEVICE_EXTENDED_DYNAMIC_STATE_2_FEATURES_EXT => vk::PhysicalDeviceExtendedDynamicState2FeaturesEXT,
        PHYSICAL_DEVICE_INDEX_TYPE_UINT8_FEATURES_EXT => vk::PhysicalDeviceIndexTypeUint8FeaturesEXT,
        PHYSICAL_DEVICE_PROVOKING_VERTEX_FEATURES_EXT => vk::PhysicalDeviceProvokingVertexFeaturesEXT,
        // Vulkan 1.3 and the extensions it promoted (`caps::v13`).
        PHYSICAL_DEVICE_VULKAN_1_3_FEATURES => vk::PhysicalDeviceVulkan13Features,
        PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES => vk::PhysicalDeviceSynchronization2Features,
        PHYSICAL_DEVICE_PRIVATE_DATA_FEATURES => vk::PhysicalDevicePrivateDataFeatures,
        PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES => vk::PhysicalDeviceMaintenance4Features,
        PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES => vk::PhysicalDeviceSubgroupSizeControlFeatures,
        PHYSICAL_DEVICE_SHADER_DEMOTE_TO_HELPER_INVOCATION_FEATURES => vk::PhysicalDeviceShaderDemoteToHelperInvocationFeatures,
        PHYSICAL_DEVICE_SHADER_TERMINATE_INVOCATION_FEATURES => vk::PhysicalDeviceShaderTerminateInvocationFeatures,
        PHYSICAL_DEVICE_INLINE_UNIFORM_BLOCK_FEATURES => vk::PhysicalDeviceInlineUniformBlockFeatures,
        PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES => vk::PhysicalDeviceShaderIntegerDotProductFeatures,
        PHYSICAL_DEVICE_ZERO_INITIALIZE_WORKGROUP_MEMORY_FEATURES => vk::PhysicalDeviceZeroInitializeWorkgroupMemoryFeatures,
        PHYSICAL_DEVICE_PIPELINE_CREATION_CACHE_CONTROL_FEATURES => vk::PhysicalDevicePipelineCreationCacheControlFeatures,
        PHYSICAL_DEVICE_IMAGE_ROBUSTNESS_FEATURES => vk::PhysicalDeviceImageRobustnessFeatures,
        PHYSICAL_DEVICE_TEXTURE_COMPRESSION_ASTC_HDR_FEATURES => vk::PhysicalDeviceTextureCompressionASTCHDRFeatures,
        PHYSICAL_DEVICE_TEXEL_BUFFER_ALIGNMENT_FEATURES_EXT => vk::PhysicalDeviceTexelBufferAlignmentFeaturesEXT,
    };
    // Every feature structure is sType, pNext, then Bool32 words.
    const HEADER: usize = std::mem::size_of::<vk::BaseInStructure>();
    let mut found = None;
    // SAFETY: forwarded contract; each structure is read within its own size.
    unsafe {
        crate::util::walk_in(chain, |ty, p| {
            let Some((size, name)) = size_of(ty) else { return };
            if found.is_some() {
                return;
            }
            // Fill our answer twice, over zeros and over ones: the words that come out equal
            // are the fields we report; the others are padding, never read from the
            // application's structure.
            let words = (size - HEADER) / 4;
            let mut zeros = vec![0u32; size / 4];
            let mut ones = vec![u32::MAX; size / 4];
            for ours in [&mut zeros, &mut ones] {
                ours[0] = ty.as_raw() as u32;
                ours[1] = 0;
                ours[2] = 0;
                ours[3] = 0;
                fill_features(ours.as_mut_ptr().cast());
            }
            let want = std::slice::from_raw_parts((p as *const u8).add(HEADER) as *const u32, words);
            let bad = (0..words).find(|&i| {
                let (z, o) = (zeros[HEADER / 4 + i], ones[HEADER / 4 + i]);
                z == o && z == 0 && want[i] != 0
            });
            if let Some(i) = bad {
                found = Some(format!("{name} field #{i}"));
            }
        })
    };
    found
}

/// The specification's required limits, held against `limits()` and the property structures.
#[cfg(test)]
mod limits;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_stencil_formats_are_attachments() {
        use vk::FormatFeatureFlags as F;
        // Vulkan requires D16 and one of D24S8 / D32S8 as depth/stencil attachments.
        for f in [
            vk::Format::D16_UNORM,
            vk::Format::D32_SFLOAT,
            vk::Format::D24_UNORM_S8_UINT,
            vk::Format::D32_SFLOAT_S8_UINT,
        ] {
            let p = format_properties(f);
            assert_eq!(p.optimal_tiling_features.contains(F::DEPTH_STENCIL_ATTACHMENT), graphics::GRAPHICS, "{f:?}");
            assert!(!p.linear_tiling_features.contains(F::DEPTH_STENCIL_ATTACHMENT), "{f:?}");
        }
        let rgba8 = format_properties(vk::Format::R8G8B8A8_UNORM);
        assert_eq!(rgba8.optimal_tiling_features.contains(F::COLOR_ATTACHMENT), graphics::GRAPHICS);
        assert!(rgba8.optimal_tiling_features.contains(F::STORAGE_IMAGE));
    }

    #[test]
    fn feature_requests_are_checked_field_by_field() {
        let mut rq = vk::PhysicalDeviceRayQueryFeaturesKHR::default().ray_query(true);
        let mut v12 =
            vk::PhysicalDeviceVulkan12Features::default().buffer_device_address(true).timeline_semaphore(true);
        let chain = vk::PhysicalDeviceFeatures2::default().push_next(&mut rq).push_next(&mut v12);
        // SAFETY: a valid chain built above.
        assert_eq!(unsafe { unsupported_feature(&chain as *const _ as *const c_void) }, None);

        let mut mv = vk::PhysicalDeviceMultiviewFeatures::default().multiview(true);
        let chain = vk::PhysicalDeviceFeatures2::default().push_next(&mut mv);
        // SAFETY: as above.
        assert_eq!(unsafe { unsupported_feature(&chain as *const _ as *const c_void) }, None);
        let mut mv = vk::PhysicalDeviceMultiviewFeatures::default().multiview(true).multiview_geometry_shader(true);
        let chain = vk::PhysicalDeviceFeatures2::default().push_next(&mut mv);
        // SAFETY: as above.
        let what = unsafe { unsupported_feature(&chain as *const _ as *const c_void) }.unwrap();
        assert!(what.contains("Multiview") && what.contains("#1"), "{what}");

        let core = vk::PhysicalDeviceFeatures2::default()
            .features(vk::PhysicalDeviceFeatures { geometry_shader: vk::TRUE, ..Default::default() });
        // SAFETY: as above.
        assert!(unsafe { unsupported_feature(&core as *const _ as *const c_void) }.is_some());
    }

    #[test]
    fn every_reported_feature_struct_round_trips() {
        // What fill_features reports must itself pass the check.
        let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut accel = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default();
        let mut rq = vk::PhysicalDeviceRayQueryFeaturesKHR::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut v11)
            .push_next(&mut v12)
            .push_next(&mut accel)
            .push_next(&mut rq);
        // SAFETY: a valid, writable chain.
        unsafe { fill_features(&mut f2 as *mut _ as *mut c_void) };
        // SAFETY: the same chain, now read.
        assert_eq!(unsafe { unsupported_feature(&f2 as *const _ as *const c_void) }, None);
        let _ = f2;
        assert_eq!(accel.acceleration_structure, vk::TRUE);
        assert_eq!(accel.acceleration_structure_host_commands, vk::TRUE);
    }
}
