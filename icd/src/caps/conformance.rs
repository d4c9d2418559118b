//! What Vulkan 1.3 and the Roadmap 2022 milestone require of the feature, property and limit
//! reports, checked against ours (the Khronos profiles layer is not packaged here). The
//! requirements are the facts of the specification's "Feature Requirements", "Limit
//! Requirements" and "Roadmap Milestones" appendix; every one we do not meet is listed, with
//! its reason, in docs/CONFORMANCE.md, and the test below fails when that list goes stale
//! in either direction.

use super::{fill_features, fill_properties, limits};
use ash::vk;
use std::ffi::c_void;
use vortex_runtime::device::Gpu;

/// Every structure a requirement reads, filled from our reports.
struct Reports {
    f10: vk::PhysicalDeviceFeatures,
    f11: vk::PhysicalDeviceVulkan11Features<'static>,
    f12: vk::PhysicalDeviceVulkan12Features<'static>,
    f13: vk::PhysicalDeviceVulkan13Features<'static>,
    l: vk::PhysicalDeviceLimits,
    p11: vk::PhysicalDeviceVulkan11Properties<'static>,
    p12: vk::PhysicalDeviceVulkan12Properties<'static>,
    p13: vk::PhysicalDeviceVulkan13Properties<'static>,
    extensions: Vec<&'static str>,
}

fn reports(gpu: &Gpu) -> Reports {
    let mut r = Reports {
        f10: Default::default(),
        f11: Default::default(),
        f12: Default::default(),
        f13: Default::default(),
        l: limits(gpu),
        p11: Default::default(),
        p12: Default::default(),
        p13: Default::default(),
        extensions: super::device_extensions().into_iter().map(|e| e.0).collect(),
    };
    // SAFETY: single structures with null pNext, writable.
    unsafe {
        let mut f2 = vk::PhysicalDeviceFeatures2::default();
        fill_features(&mut f2 as *mut _ as *mut c_void);
        r.f10 = f2.features;
        fill_features(&mut r.f11 as *mut _ as *mut c_void);
        fill_features(&mut r.f12 as *mut _ as *mut c_void);
        fill_features(&mut r.f13 as *mut _ as *mut c_void);
        fill_properties(gpu, &mut r.p11 as *mut _ as *mut c_void);
        fill_properties(gpu, &mut r.p12 as *mut _ as *mut c_void);
        fill_properties(gpu, &mut r.p13 as *mut _ as *mut c_void);
    }
    r
}

/// One requirement: its name as the specification spells it, and whether we meet it.
type Requirement = (&'static str, fn(&Reports) -> bool);

macro_rules! req {
    ($($name:literal => |$r:ident| $e:expr),* $(,)?) => {
        &[$(($name, |$r: &Reports| $e)),*]
    };
}

const T: vk::Bool32 = vk::TRUE;

/// Vulkan 1.3's required features (with the 1.0-1.2 ones every 1.3 device must have) and its
/// limits.
const VULKAN_13: &[Requirement] = req! {
    "robustBufferAccess" => |r| r.f10.robust_buffer_access == T,
    "multiview" => |r| r.f11.multiview == T,
    "uniformBufferStandardLayout" => |r| r.f12.uniform_buffer_standard_layout == T,
    "subgroupBroadcastDynamicId" => |r| r.f12.subgroup_broadcast_dynamic_id == T,
    "imagelessFramebuffer" => |r| r.f12.imageless_framebuffer == T,
    "separateDepthStencilLayouts" => |r| r.f12.separate_depth_stencil_layouts == T,
    "hostQueryReset" => |r| r.f12.host_query_reset == T,
    "timelineSemaphore" => |r| r.f12.timeline_semaphore == T,
    "shaderSubgroupExtendedTypes" => |r| r.f12.shader_subgroup_extended_types == T,
    "vulkanMemoryModel" => |r| r.f12.vulkan_memory_model == T,
    "vulkanMemoryModelDeviceScope" => |r| r.f12.vulkan_memory_model_device_scope == T,
    "bufferDeviceAddress" => |r| r.f12.buffer_device_address == T,
    "robustImageAccess" => |r| r.f13.robust_image_access == T,
    "inlineUniformBlock" => |r| r.f13.inline_uniform_block == T,
    // Required with descriptorIndexing.
    "descriptorBindingInlineUniformBlockUpdateAfterBind" => |r| r.f12.descriptor_indexing == 0
        || r.f13.descriptor_binding_inline_uniform_block_update_after_bind == T,
    "pipelineCreationCacheControl" => |r| r.f13.pipeline_creation_cache_control == T,
    "privateData" => |r| r.f13.private_data == T,
    "shaderDemoteToHelperInvocation" => |r| r.f13.shader_demote_to_helper_invocation == T,
    "shaderTerminateInvocation" => |r| r.f13.shader_terminate_invocation == T,
    "subgroupSizeControl" => |r| r.f13.subgroup_size_control == T,
    "computeFullSubgroups" => |r| r.f13.compute_full_subgroups == T,
    "synchronization2" => |r| r.f13.synchronization2 == T,
    "shaderZeroInitializeWorkgroupMemory" => |r| r.f13.shader_zero_initialize_workgroup_memory == T,
    "dynamicRendering" => |r| r.f13.dynamic_rendering == T,
    "shaderIntegerDotProduct" => |r| r.f13.shader_integer_dot_product == T,
    "maintenance4" => |r| r.f13.maintenance4 == T,
    "maxBufferSize >= 2^30" => |r| r.p13.max_buffer_size >= 1 << 30,
    "maxInlineUniformBlockSize >= 256" => |r| r.p13.max_inline_uniform_block_size >= 256,
    "maxPerStageDescriptorInlineUniformBlocks >= 4" => |r| r.p13.max_per_stage_descriptor_inline_uniform_blocks >= 4,
    "maxPerStageDescriptorUpdateAfterBindInlineUniformBlocks >= 4" =>
        |r| r.p13.max_per_stage_descriptor_update_after_bind_inline_uniform_blocks >= 4,
    "maxDescriptorSetInlineUniformBlocks >= 4" => |r| r.p13.max_descriptor_set_inline_uniform_blocks >= 4,
    "maxDescriptorSetUpdateAfterBindInlineUniformBlocks >= 4" =>
        |r| r.p13.max_descriptor_set_update_after_bind_inline_uniform_blocks >= 4,
    "maxInlineUniformTotalSize >= 256" => |r| r.p13.max_inline_uniform_total_size >= 256,
    "minSubgroupSize <= maxSubgroupSize, powers of two" => |r| r.p13.min_subgroup_size.is_power_of_two()
        && r.p13.max_subgroup_size.is_power_of_two()
        && r.p13.min_subgroup_size <= r.p13.max_subgroup_size,
    "maxTimelineSemaphoreValueDifference >= 2^31 - 1" => |r| r.p12.max_timeline_semaphore_value_difference >= (1 << 31) - 1,
    "maxMultiviewViewCount >= 6" => |r| r.p11.max_multiview_view_count >= 6,
    "maxMultiviewInstanceIndex >= 2^27 - 1" => |r| r.p11.max_multiview_instance_index >= (1 << 27) - 1,
};

/// What the Roadmap 2022 milestone adds on top of Vulkan 1.3.
const ROADMAP_2022: &[Requirement] = req! {
    "fullDrawIndexUint32" => |r| r.f10.full_draw_index_uint32 == T,
    "imageCubeArray" => |r| r.f10.image_cube_array == T,
    "independentBlend" => |r| r.f10.independent_blend == T,
    "sampleRateShading" => |r| r.f10.sample_rate_shading == T,
    "drawIndirectFirstInstance" => |r| r.f10.draw_indirect_first_instance == T,
    "depthClamp" => |r| r.f10.depth_clamp == T,
    "depthBiasClamp" => |r| r.f10.depth_bias_clamp == T,
    "samplerAnisotropy" => |r| r.f10.sampler_anisotropy == T,
    "occlusionQueryPrecise" => |r| r.f10.occlusion_query_precise == T,
    "fragmentStoresAndAtomics" => |r| r.f10.fragment_stores_and_atomics == T,
    "shaderStorageImageExtendedFormats" => |r| r.f10.shader_storage_image_extended_formats == T,
    "shaderUniformBufferArrayDynamicIndexing" => |r| r.f10.shader_uniform_buffer_array_dynamic_indexing == T,
    "shaderSampledImageArrayDynamicIndexing" => |r| r.f10.shader_sampled_image_array_dynamic_indexing == T,
    "shaderStorageBufferArrayDynamicIndexing" => |r| r.f10.shader_storage_buffer_array_dynamic_indexing == T,
    "shaderStorageImageArrayDynamicIndexing" => |r| r.f10.shader_storage_image_array_dynamic_indexing == T,
    "maxImageDimension1D >= 8192" => |r| r.l.max_image_dimension1_d >= 8192,
    "maxImageDimension2D >= 8192" => |r| r.l.max_image_dimension2_d >= 8192,
    "maxImageDimensionCube >= 8192" => |r| r.l.max_image_dimension_cube >= 8192,
    "maxImageArrayLayers >= 2048" => |r| r.l.max_image_array_layers >= 2048,
    "maxUniformBufferRange >= 65536" => |r| r.l.max_uniform_buffer_range >= 65536,
    "bufferImageGranularity <= 4096" => |r| r.l.buffer_image_granularity <= 4096,
    "maxPerStageDescriptorSamplers >= 64" => |r| r.l.max_per_stage_descriptor_samplers >= 64,
    "maxPerStageDescriptorUniformBuffers >= 15" => |r| r.l.max_per_stage_descriptor_uniform_buffers >= 15,
    "maxPerStageDescriptorStorageBuffers >= 30" => |r| r.l.max_per_stage_descriptor_storage_buffers >= 30,
    "maxPerStageDescriptorSampledImages >= 200" => |r| r.l.max_per_stage_descriptor_sampled_images >= 200,
    "maxPerStageDescriptorStorageImages >= 16" => |r| r.l.max_per_stage_descriptor_storage_images >= 16,
    "maxPerStageResources >= 200" => |r| r.l.max_per_stage_resources >= 200,
    "maxDescriptorSetSamplers >= 576" => |r| r.l.max_descriptor_set_samplers >= 576,
    "maxDescriptorSetUniformBuffers >= 90" => |r| r.l.max_descriptor_set_uniform_buffers >= 90,
    "maxDescriptorSetStorageBuffers >= 96" => |r| r.l.max_descriptor_set_storage_buffers >= 96,
    "maxDescriptorSetSampledImages >= 1800" => |r| r.l.max_descriptor_set_sampled_images >= 1800,
    "maxDescriptorSetStorageImages >= 144" => |r| r.l.max_descriptor_set_storage_images >= 144,
    "maxFragmentCombinedOutputResources >= 16" => |r| r.l.max_fragment_combined_output_resources >= 16,
    "maxComputeWorkGroupInvocations >= 256" => |r| r.l.max_compute_work_group_invocations >= 256,
    "maxComputeWorkGroupSize >= (256, 256, 64)" => |r| {
        let s = r.l.max_compute_work_group_size;
        s[0] >= 256 && s[1] >= 256 && s[2] >= 64
    },
    "subTexelPrecisionBits >= 8" => |r| r.l.sub_texel_precision_bits >= 8,
    "mipmapPrecisionBits >= 6" => |r| r.l.mipmap_precision_bits >= 6,
    "maxSamplerLodBias >= 14" => |r| r.l.max_sampler_lod_bias >= 14.0,
    "standardSampleLocations" => |r| r.l.standard_sample_locations == T,
    "maxColorAttachments >= 7" => |r| r.l.max_color_attachments >= 7,
    "samplerYcbcrConversion" => |r| r.f11.sampler_ycbcr_conversion == T,
    "subgroupSize >= 4" => |r| r.p11.subgroup_size >= 4,
    "subgroupSupportedStages: compute, fragment" => |r| r
        .p11
        .subgroup_supported_stages
        .contains(vk::ShaderStageFlags::COMPUTE | vk::ShaderStageFlags::FRAGMENT),
    "subgroupSupportedOperations: basic .. quad" => |r| {
        use vk::SubgroupFeatureFlags as S;
        r.p11.subgroup_supported_operations.contains(
            S::BASIC | S::VOTE | S::ARITHMETIC | S::BALLOT | S::SHUFFLE | S::SHUFFLE_RELATIVE | S::QUAD,
        )
    },
    "samplerMirrorClampToEdge" => |r| r.f12.sampler_mirror_clamp_to_edge == T,
    "descriptorIndexing" => |r| r.f12.descriptor_indexing == T,
    "shaderUniformTexelBufferArrayDynamicIndexing" => |r| r.f12.shader_uniform_texel_buffer_array_dynamic_indexing == T,
    "shaderStorageTexelBufferArrayDynamicIndexing" => |r| r.f12.shader_storage_texel_buffer_array_dynamic_indexing == T,
    "shaderUniformBufferArrayNonUniformIndexing" => |r| r.f12.shader_uniform_buffer_array_non_uniform_indexing == T,
    "shaderSampledImageArrayNonUniformIndexing" => |r| r.f12.shader_sampled_image_array_non_uniform_indexing == T,
    "shaderStorageBufferArrayNonUniformIndexing" => |r| r.f12.shader_storage_buffer_array_non_uniform_indexing == T,
    "shaderStorageImageArrayNonUniformIndexing" => |r| r.f12.shader_storage_image_array_non_uniform_indexing == T,
    "shaderUniformTexelBufferArrayNonUniformIndexing" =>
        |r| r.f12.shader_uniform_texel_buffer_array_non_uniform_indexing == T,
    "shaderStorageTexelBufferArrayNonUniformIndexing" =>
        |r| r.f12.shader_storage_texel_buffer_array_non_uniform_indexing == T,
    "descriptorBindingSampledImageUpdateAfterBind" => |r| r.f12.descriptor_binding_sampled_image_update_after_bind == T,
    "descriptorBindingStorageImageUpdateAfterBind" => |r| r.f12.descriptor_binding_storage_image_update_after_bind == T,
    "descriptorBindingStorageBufferUpdateAfterBind" => |r| r.f12.descriptor_binding_storage_buffer_update_after_bind == T,
    "descriptorBindingUniformTexelBufferUpdateAfterBind" =>
        |r| r.f12.descriptor_binding_uniform_texel_buffer_update_after_bind == T,
    "descriptorBindingStorageTexelBufferUpdateAfterBind" =>
        |r| r.f12.descriptor_binding_storage_texel_buffer_update_after_bind == T,
    "descriptorBindingUpdateUnusedWhilePending" => |r| r.f12.descriptor_binding_update_unused_while_pending == T,
    "descriptorBindingPartiallyBound" => |r| r.f12.descriptor_binding_partially_bound == T,
    "descriptorBindingVariableDescriptorCount" => |r| r.f12.descriptor_binding_variable_descriptor_count == T,
    "runtimeDescriptorArray" => |r| r.f12.runtime_descriptor_array == T,
    "scalarBlockLayout" => |r| r.f12.scalar_block_layout == T,
    "shaderSignedZeroInfNanPreserveFloat16" => |r| r.p12.shader_signed_zero_inf_nan_preserve_float16 == T,
    "shaderSignedZeroInfNanPreserveFloat32" => |r| r.p12.shader_signed_zero_inf_nan_preserve_float32 == T,
    "maxPerStageDescriptorUpdateAfterBindSamplers >= 500000" =>
        |r| r.p12.max_per_stage_descriptor_update_after_bind_samplers >= 500_000,
    "maxPerStageDescriptorUpdateAfterBindUniformBuffers >= 12" =>
        |r| r.p12.max_per_stage_descriptor_update_after_bind_uniform_buffers >= 12,
    "maxPerStageDescriptorUpdateAfterBindStorageBuffers >= 500000" =>
        |r| r.p12.max_per_stage_descriptor_update_after_bind_storage_buffers >= 500_000,
    "maxPerStageDescriptorUpdateAfterBindSampledImages >= 500000" =>
        |r| r.p12.max_per_stage_descriptor_update_after_bind_sampled_images >= 500_000,
    "maxPerStageDescriptorUpdateAfterBindStorageImages >= 500000" =>
        |r| r.p12.max_per_stage_descriptor_update_after_bind_storage_images >= 500_000,
    "maxPerStageDescriptorUpdateAfterBindInputAttachments >= 7" =>
        |r| r.p12.max_per_stage_descriptor_update_after_bind_input_attachments >= 7,
    "maxPerStageUpdateAfterBindResources >= 500000" => |r| r.p12.max_per_stage_update_after_bind_resources >= 500_000,
    "maxDescriptorSetUpdateAfterBindSamplers >= 500000" =>
        |r| r.p12.max_descriptor_set_update_after_bind_samplers >= 500_000,
    "maxDescriptorSetUpdateAfterBindUniformBuffers >= 72" =>
        |r| r.p12.max_descriptor_set_update_after_bind_uniform_buffers >= 72,
    "maxDescriptorSetUpdateAfterBindUniformBuffersDynamic >= 8" =>
        |r| r.p12.max_descriptor_set_update_after_bind_uniform_buffers_dynamic >= 8,
    "maxDescriptorSetUpdateAfterBindStorageBuffers >= 500000" =>
        |r| r.p12.max_descriptor_set_update_after_bind_storage_buffers >= 500_000,
    "maxDescriptorSetUpdateAfterBindStorageBuffersDynamic >= 4" =>
        |r| r.p12.max_descriptor_set_update_after_bind_storage_buffers_dynamic >= 4,
    "maxDescriptorSetUpdateAfterBindSampledImages >= 500000" =>
        |r| r.p12.max_descriptor_set_update_after_bind_sampled_images >= 500_000,
    "maxDescriptorSetUpdateAfterBindStorageImages >= 500000" =>
        |r| r.p12.max_descriptor_set_update_after_bind_storage_images >= 500_000,
    "maxDescriptorSetUpdateAfterBindInputAttachments >= 7" =>
        |r| r.p12.max_descriptor_set_update_after_bind_input_attachments >= 7,
    "descriptorBindingInlineUniformBlockUpdateAfterBind" =>
        |r| r.f13.descriptor_binding_inline_uniform_block_update_after_bind == T,
    "VK_KHR_global_priority" => |r| r.extensions.contains(&"VK_KHR_global_priority"),
};

/// The requirements of `list` that our reports do not meet.
fn unmet(gpu: &Gpu, list: &[Requirement]) -> Vec<&'static str> {
    let r = reports(gpu);
    list.iter().filter(|(_, met)| !met(&r)).map(|(name, _)| *name).collect()
}

/// The gaps docs/CONFORMANCE.md explains, one entry each, in the order of the lists above.
const VULKAN_13_GAPS: &[&str] = &[];

const ROADMAP_2022_GAPS: &[&str] = &[
    "sampleRateShading",
    "samplerAnisotropy",
    "occlusionQueryPrecise",
    "subTexelPrecisionBits >= 8",
    "mipmapPrecisionBits >= 6",
    "samplerYcbcrConversion",
    "subgroupSupportedStages: compute, fragment",
    "samplerMirrorClampToEdge",
    "descriptorBindingVariableDescriptorCount",
    "VK_KHR_global_priority",
];

#[test]
fn vulkan13_and_roadmap2022_gaps_are_the_documented_ones() {
    let gpu = Gpu::from_env().unwrap();
    assert_eq!(unmet(&gpu, VULKAN_13), VULKAN_13_GAPS, "Vulkan 1.3: update docs/CONFORMANCE.md and this list");
    assert_eq!(unmet(&gpu, ROADMAP_2022), ROADMAP_2022_GAPS, "Roadmap 2022: update docs/CONFORMANCE.md and this list");
    // The document names every gap.
    let doc = include_str!("../../../docs/CONFORMANCE.md");
    for gap in VULKAN_13_GAPS.iter().chain(ROADMAP_2022_GAPS) {
        let name = gap.split(' ').next().unwrap();
        assert!(doc.contains(name), "docs/CONFORMANCE.md does not mention {name}");
    }
}
