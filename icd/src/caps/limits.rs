//! The Vulkan specification's required limits, held against what the device reports.
//!
//! The table is the specification's "Required Limits" (Vulkan 1.3, chapter "Limits",
//! section "Limit Requirements"; the 1.2 table has the same rows for these limits): every
//! `min` limit must be at least its value, every `max` limit at most, and a row that depends
//! on an optional feature applies with the value for whether the device reports that
//! feature. Vulkan 1.3's own rows (`VkPhysicalDeviceVulkan13Properties`: inline uniform
//! blocks, subgroup size control, `maxBufferSize`, ...) come with 1.3 and are not here.
//! The extensions' rows (acceleration structures, robustness2) are from the same table.

use super::{features10, fill_properties, limits};
use ash::vk;
use std::ffi::c_void;
use vortex_runtime::device::Gpu;

/// One row: the limit must be at least (`Min`) or at most (`Max`) the value.
#[derive(Clone, Copy, Debug)]
enum Req {
    Min(f64),
    Max(f64),
}
use Req::{Max, Min};

/// Checks rows, collecting every violation so one run names them all.
#[derive(Default)]
struct Table {
    failures: Vec<String>,
    rows: usize,
}

impl Table {
    fn row(&mut self, name: &str, value: impl Into<f64>, req: Req) {
        let v = value.into();
        self.rows += 1;
        let ok = match req {
            Min(m) => v >= m,
            Max(m) => v <= m,
        };
        if !ok {
            self.failures.push(format!("{name} = {v}, required {req:?}"));
        }
    }

    /// A sample-count limit must contain `want`.
    fn samples(&mut self, name: &str, value: vk::SampleCountFlags, want: vk::SampleCountFlags) {
        self.rows += 1;
        if !value.contains(want) {
            self.failures.push(format!("{name} = {value:?}, must contain {want:?}"));
        }
    }
}

fn feature(on: vk::Bool32, with: f64, without: f64) -> f64 {
    if on != 0 {
        with
    } else {
        without
    }
}

/// `VkPhysicalDeviceLimits` rows.
fn limits10(t: &mut Table, l: &vk::PhysicalDeviceLimits, f: &vk::PhysicalDeviceFeatures) {
    t.row("maxImageDimension1D", l.max_image_dimension1_d, Min(4096.0));
    t.row("maxImageDimension2D", l.max_image_dimension2_d, Min(4096.0));
    t.row("maxImageDimension3D", l.max_image_dimension3_d, Min(256.0));
    t.row("maxImageDimensionCube", l.max_image_dimension_cube, Min(4096.0));
    t.row("maxImageArrayLayers", l.max_image_array_layers, Min(256.0));
    t.row("maxTexelBufferElements", l.max_texel_buffer_elements, Min(65536.0));
    t.row("maxUniformBufferRange", l.max_uniform_buffer_range, Min(16384.0));
    t.row("maxStorageBufferRange", l.max_storage_buffer_range, Min((1u64 << 27) as f64));
    t.row("maxPushConstantsSize", l.max_push_constants_size, Min(128.0));
    t.row("maxMemoryAllocationCount", l.max_memory_allocation_count, Min(4096.0));
    t.row("maxSamplerAllocationCount", l.max_sampler_allocation_count, Min(4000.0));
    t.row("bufferImageGranularity", l.buffer_image_granularity as f64, Max(131072.0));
    if f.sparse_binding != 0 {
        t.row("sparseAddressSpaceSize", l.sparse_address_space_size as f64, Min((1u64 << 31) as f64));
    }
    t.row("maxBoundDescriptorSets", l.max_bound_descriptor_sets, Min(4.0));
    t.row("maxPerStageDescriptorSamplers", l.max_per_stage_descriptor_samplers, Min(16.0));
    t.row("maxPerStageDescriptorUniformBuffers", l.max_per_stage_descriptor_uniform_buffers, Min(12.0));
    t.row("maxPerStageDescriptorStorageBuffers", l.max_per_stage_descriptor_storage_buffers, Min(4.0));
    t.row("maxPerStageDescriptorSampledImages", l.max_per_stage_descriptor_sampled_images, Min(16.0));
    t.row("maxPerStageDescriptorStorageImages", l.max_per_stage_descriptor_storage_images, Min(4.0));
    t.row("maxPerStageDescriptorInputAttachments", l.max_per_stage_descriptor_input_attachments, Min(4.0));
    t.row("maxPerStageResources", l.max_per_stage_resources, Min(128.0));
    t.row("maxDescriptorSetSamplers", l.max_descriptor_set_samplers, Min(96.0));
    t.row("maxDescriptorSetUniformBuffers", l.max_descriptor_set_uniform_buffers, Min(72.0));
    t.row("maxDescriptorSetUniformBuffersDynamic", l.max_descriptor_set_uniform_buffers_dynamic, Min(8.0));
    t.row("maxDescriptorSetStorageBuffers", l.max_descriptor_set_storage_buffers, Min(24.0));
    t.row("maxDescriptorSetStorageBuffersDynamic", l.max_descriptor_set_storage_buffers_dynamic, Min(4.0));
    t.row("maxDescriptorSetSampledImages", l.max_descriptor_set_sampled_images, Min(96.0));
    t.row("maxDescriptorSetStorageImages", l.max_descriptor_set_storage_images, Min(24.0));
    t.row("maxDescriptorSetInputAttachments", l.max_descriptor_set_input_attachments, Min(4.0));
    t.row("maxVertexInputAttributes", l.max_vertex_input_attributes, Min(16.0));
    t.row("maxVertexInputBindings", l.max_vertex_input_bindings, Min(16.0));
    t.row("maxVertexInputAttributeOffset", l.max_vertex_input_attribute_offset, Min(2047.0));
    t.row("maxVertexInputBindingStride", l.max_vertex_input_binding_stride, Min(2048.0));
    t.row("maxVertexOutputComponents", l.max_vertex_output_components, Min(64.0));
    if f.tessellation_shader != 0 {
        t.row("maxTessellationGenerationLevel", l.max_tessellation_generation_level, Min(64.0));
        t.row("maxTessellationPatchSize", l.max_tessellation_patch_size, Min(32.0));
    }
    if f.geometry_shader != 0 {
        t.row("maxGeometryShaderInvocations", l.max_geometry_shader_invocations, Min(32.0));
        t.row("maxGeometryOutputVertices", l.max_geometry_output_vertices, Min(256.0));
    }
    t.row("maxFragmentInputComponents", l.max_fragment_input_components, Min(64.0));
    t.row("maxFragmentOutputAttachments", l.max_fragment_output_attachments, Min(4.0));
    t.row(
        "maxFragmentDualSrcAttachments",
        l.max_fragment_dual_src_attachments,
        Min(feature(f.dual_src_blend, 1.0, 0.0)),
    );
    t.row("maxFragmentCombinedOutputResources", l.max_fragment_combined_output_resources, Min(4.0));
    t.row("maxComputeSharedMemorySize", l.max_compute_shared_memory_size, Min(16384.0));
    for (k, &n) in l.max_compute_work_group_count.iter().enumerate() {
        t.row(&format!("maxComputeWorkGroupCount[{k}]"), n, Min(65535.0));
    }
    t.row("maxComputeWorkGroupInvocations", l.max_compute_work_group_invocations, Min(128.0));
    for (k, (&n, min)) in l.max_compute_work_group_size.iter().zip([128.0, 128.0, 64.0]).enumerate() {
        t.row(&format!("maxComputeWorkGroupSize[{k}]"), n, Min(min));
    }
    t.row("subPixelPrecisionBits", l.sub_pixel_precision_bits, Min(4.0));
    t.row("subTexelPrecisionBits", l.sub_texel_precision_bits, Min(4.0));
    t.row("mipmapPrecisionBits", l.mipmap_precision_bits, Min(4.0));
    let index = feature(f.full_draw_index_uint32, u32::MAX as f64, ((1u32 << 24) - 1) as f64);
    t.row("maxDrawIndexedIndexValue", l.max_draw_indexed_index_value, Min(index));
    let indirect = feature(f.multi_draw_indirect, 65535.0, 1.0);
    t.row("maxDrawIndirectCount", l.max_draw_indirect_count, Min(indirect));
    t.row("maxSamplerLodBias", l.max_sampler_lod_bias, Min(2.0));
    t.row("maxSamplerAnisotropy", l.max_sampler_anisotropy, Min(feature(f.sampler_anisotropy, 16.0, 1.0)));
    t.row("maxViewports", l.max_viewports, Min(feature(f.multi_viewport, 16.0, 1.0)));
    // At least 4096, and at least the largest framebuffer.
    for (k, &n) in l.max_viewport_dimensions.iter().enumerate() {
        let fb = [l.max_framebuffer_width, l.max_framebuffer_height][k];
        t.row(&format!("maxViewportDimensions[{k}]"), n, Min(4096f64.max(fb as f64)));
    }
    // At least [-8192, 8191], and at least [-2 x, 2 x - 1] of the largest viewport.
    let vp = l.max_viewport_dimensions[0].max(l.max_viewport_dimensions[1]) as f64;
    t.row("viewportBoundsRange[0]", l.viewport_bounds_range[0], Max((-8192f64).min(-2.0 * vp)));
    t.row("viewportBoundsRange[1]", l.viewport_bounds_range[1], Min(8191f64.max(2.0 * vp - 1.0)));
    t.row("viewportSubPixelBits", l.viewport_sub_pixel_bits, Min(0.0));
    t.row("minMemoryMapAlignment", l.min_memory_map_alignment as f64, Min(64.0));
    t.row("minTexelBufferOffsetAlignment", l.min_texel_buffer_offset_alignment as f64, Max(256.0));
    t.row("minUniformBufferOffsetAlignment", l.min_uniform_buffer_offset_alignment as f64, Max(256.0));
    t.row("minStorageBufferOffsetAlignment", l.min_storage_buffer_offset_alignment as f64, Max(256.0));
    t.row("minTexelOffset", l.min_texel_offset, Max(-8.0));
    t.row("maxTexelOffset", l.max_texel_offset, Min(7.0));
    if f.shader_image_gather_extended != 0 {
        t.row("minTexelGatherOffset", l.min_texel_gather_offset, Max(-8.0));
        t.row("maxTexelGatherOffset", l.max_texel_gather_offset, Min(7.0));
    }
    if f.sample_rate_shading != 0 {
        t.row("minInterpolationOffset", l.min_interpolation_offset, Max(-0.5));
        t.row("maxInterpolationOffset", l.max_interpolation_offset, Min(0.5 - 1.0 / 16.0));
        t.row("subPixelInterpolationOffsetBits", l.sub_pixel_interpolation_offset_bits, Min(4.0));
    }
    t.row("maxFramebufferWidth", l.max_framebuffer_width, Min(4096.0));
    t.row("maxFramebufferHeight", l.max_framebuffer_height, Min(4096.0));
    t.row("maxFramebufferLayers", l.max_framebuffer_layers, Min(256.0));
    // Vulkan requires 1 | 4 samples for these six; checked for 1 only until 4-sample
    // rendering lands (then: `TYPE_1 | TYPE_4`).
    let one = vk::SampleCountFlags::TYPE_1;
    t.samples("framebufferColorSampleCounts", l.framebuffer_color_sample_counts, one);
    t.samples("framebufferDepthSampleCounts", l.framebuffer_depth_sample_counts, one);
    t.samples("framebufferStencilSampleCounts", l.framebuffer_stencil_sample_counts, one);
    t.samples("framebufferNoAttachmentsSampleCounts", l.framebuffer_no_attachments_sample_counts, one);
    t.samples("sampledImageColorSampleCounts", l.sampled_image_color_sample_counts, one);
    t.samples("sampledImageDepthSampleCounts", l.sampled_image_depth_sample_counts, one);
    t.samples("sampledImageStencilSampleCounts", l.sampled_image_stencil_sample_counts, one);
    t.samples("sampledImageIntegerSampleCounts", l.sampled_image_integer_sample_counts, one);
    t.samples("storageImageSampleCounts", l.storage_image_sample_counts, one);
    t.row("maxColorAttachments", l.max_color_attachments, Min(4.0));
    t.row("maxSampleMaskWords", l.max_sample_mask_words, Min(1.0));
    t.row("maxClipDistances", l.max_clip_distances, Min(feature(f.shader_clip_distance, 8.0, 0.0)));
    t.row("maxCullDistances", l.max_cull_distances, Min(feature(f.shader_cull_distance, 8.0, 0.0)));
    let clip_cull = feature(f.shader_cull_distance, 8.0, 0.0).max(feature(f.shader_clip_distance, 8.0, 0.0));
    t.row("maxCombinedClipAndCullDistances", l.max_combined_clip_and_cull_distances, Min(clip_cull));
    t.row("discreteQueuePriorities", l.discrete_queue_priorities, Min(2.0));
    if f.large_points != 0 {
        t.row("pointSizeRange[0]", l.point_size_range[0], Max(1.0));
        t.row("pointSizeRange[1]", l.point_size_range[1], Min(64.0 - l.point_size_granularity as f64));
        t.row("pointSizeGranularity", l.point_size_granularity, Max(1.0));
    }
    if f.wide_lines != 0 {
        t.row("lineWidthRange[0]", l.line_width_range[0], Max(1.0));
        t.row("lineWidthRange[1]", l.line_width_range[1], Min(8.0 - l.line_width_granularity as f64));
        t.row("lineWidthGranularity", l.line_width_granularity, Max(1.0));
    }
    t.row("nonCoherentAtomSize", l.non_coherent_atom_size as f64, Max(256.0));
}

/// `VkPhysicalDeviceVulkan11Properties` rows (multiview's belong with multiview).
fn limits11(t: &mut Table, p: &vk::PhysicalDeviceVulkan11Properties) {
    t.row("subgroupSize", p.subgroup_size, Min(1.0));
    t.row("maxPerSetDescriptors", p.max_per_set_descriptors, Min(1024.0));
    t.row("maxMemoryAllocationSize", p.max_memory_allocation_size as f64, Min((1u64 << 30) as f64));
    t.rows += 2;
    if !p.subgroup_supported_operations.contains(vk::SubgroupFeatureFlags::BASIC) {
        t.failures.push("subgroupSupportedOperations lacks BASIC".into());
    }
    if !p.subgroup_supported_stages.contains(vk::ShaderStageFlags::COMPUTE) {
        t.failures.push("subgroupSupportedStages lacks COMPUTE".into());
    }
}

/// `VkPhysicalDeviceVulkan12Properties` rows: descriptor indexing (the device offers
/// `descriptorIndexing`), timeline semaphores, integer colour samples.
fn limits12(t: &mut Table, p: &vk::PhysicalDeviceVulkan12Properties) {
    let n = 500_000.0;
    t.row("maxUpdateAfterBindDescriptorsInAllPools", p.max_update_after_bind_descriptors_in_all_pools, Min(n));
    let stage = [
        ("Samplers", p.max_per_stage_descriptor_update_after_bind_samplers, n),
        ("UniformBuffers", p.max_per_stage_descriptor_update_after_bind_uniform_buffers, 12.0),
        ("StorageBuffers", p.max_per_stage_descriptor_update_after_bind_storage_buffers, n),
        ("SampledImages", p.max_per_stage_descriptor_update_after_bind_sampled_images, n),
        ("StorageImages", p.max_per_stage_descriptor_update_after_bind_storage_images, n),
        ("InputAttachments", p.max_per_stage_descriptor_update_after_bind_input_attachments, 4.0),
    ];
    for (what, v, min) in stage {
        t.row(&format!("maxPerStageDescriptorUpdateAfterBind{what}"), v, Min(min));
    }
    t.row("maxPerStageUpdateAfterBindResources", p.max_per_stage_update_after_bind_resources, Min(n));
    let set = [
        ("Samplers", p.max_descriptor_set_update_after_bind_samplers, n),
        ("UniformBuffers", p.max_descriptor_set_update_after_bind_uniform_buffers, 72.0),
        ("UniformBuffersDynamic", p.max_descriptor_set_update_after_bind_uniform_buffers_dynamic, 8.0),
        ("StorageBuffers", p.max_descriptor_set_update_after_bind_storage_buffers, n),
        ("StorageBuffersDynamic", p.max_descriptor_set_update_after_bind_storage_buffers_dynamic, 4.0),
        ("SampledImages", p.max_descriptor_set_update_after_bind_sampled_images, n),
        ("StorageImages", p.max_descriptor_set_update_after_bind_storage_images, n),
        ("InputAttachments", p.max_descriptor_set_update_after_bind_input_attachments, 4.0),
    ];
    for (what, v, min) in set {
        t.row(&format!("maxDescriptorSetUpdateAfterBind{what}"), v, Min(min));
    }
    let diff = p.max_timeline_semaphore_value_difference as f64;
    t.row("maxTimelineSemaphoreValueDifference", diff, Min(((1u64 << 31) - 1) as f64));
    t.samples(
        "framebufferIntegerColorSampleCounts",
        p.framebuffer_integer_color_sample_counts,
        vk::SampleCountFlags::TYPE_1,
    );
}

/// The extensions' rows: acceleration structures and robustness2.
fn limits_ext(
    t: &mut Table,
    a: &vk::PhysicalDeviceAccelerationStructurePropertiesKHR,
    r: &vk::PhysicalDeviceRobustness2PropertiesEXT,
) {
    t.row("maxGeometryCount", a.max_geometry_count as f64, Min(((1u64 << 24) - 1) as f64));
    t.row("maxInstanceCount", a.max_instance_count as f64, Min(((1u64 << 24) - 1) as f64));
    t.row("maxPrimitiveCount", a.max_primitive_count as f64, Min(((1u64 << 29) - 1) as f64));
    let n = 500_000.0;
    t.row("maxPerStageDescriptorAccelerationStructures", a.max_per_stage_descriptor_acceleration_structures, Min(16.0));
    t.row(
        "maxPerStageDescriptorUpdateAfterBindAccelerationStructures",
        a.max_per_stage_descriptor_update_after_bind_acceleration_structures,
        Min(n),
    );
    t.row("maxDescriptorSetAccelerationStructures", a.max_descriptor_set_acceleration_structures, Min(16.0));
    t.row(
        "maxDescriptorSetUpdateAfterBindAccelerationStructures",
        a.max_descriptor_set_update_after_bind_acceleration_structures,
        Min(n),
    );
    let scratch = a.min_acceleration_structure_scratch_offset_alignment;
    t.row("minAccelerationStructureScratchOffsetAlignment", scratch, Max(256.0));
    let storage = r.robust_storage_buffer_access_size_alignment as f64;
    t.row("robustStorageBufferAccessSizeAlignment", storage, Max(4.0));
    let uniform = r.robust_uniform_buffer_access_size_alignment as f64;
    t.row("robustUniformBufferAccessSizeAlignment", uniform, Max(256.0));
}

#[test]
fn reported_limits_meet_the_required_limits() {
    let gpu = Gpu::from_env().expect("device configuration");
    let mut v11 = vk::PhysicalDeviceVulkan11Properties::default();
    let mut v12 = vk::PhysicalDeviceVulkan12Properties::default();
    let mut accel = vk::PhysicalDeviceAccelerationStructurePropertiesKHR::default();
    let mut rob2 = vk::PhysicalDeviceRobustness2PropertiesEXT::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut v11)
        .push_next(&mut v12)
        .push_next(&mut accel)
        .push_next(&mut rob2);
    // SAFETY: a valid, writable chain.
    unsafe { fill_properties(&gpu, &mut p2 as *mut _ as *mut c_void) };
    let l = p2.properties.limits;
    assert_eq!(format!("{l:?}"), format!("{:?}", limits(&gpu)), "properties10 reports limits() itself");
    let mut t = Table::default();
    limits10(&mut t, &l, &features10());
    limits11(&mut t, &v11);
    limits12(&mut t, &v12);
    limits_ext(&mut t, &accel, &rob2);
    assert!(t.rows > 100, "the table has {} rows", t.rows);
    assert!(t.failures.is_empty(), "limits below the specification's:\n{}", t.failures.join("\n"));
}

#[test]
fn the_table_catches_a_limit_below_the_minimum() {
    let gpu = Gpu::from_env().expect("device configuration");
    let mut l = limits(&gpu);
    l.max_compute_shared_memory_size = 16383;
    l.min_storage_buffer_offset_alignment = 512;
    let mut t = Table::default();
    limits10(&mut t, &l, &features10());
    assert_eq!(t.failures.len(), 2, "{:?}", t.failures);
}
