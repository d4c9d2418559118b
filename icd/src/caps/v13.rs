//! Vulkan 1.3: its feature and property structures, and the per-extension structures of the
//! extensions it promoted (for 1.2 applications). Each feature is one constant here, true only
//! where the path behind it works; the aggregate and the extension structures are filled from
//! the same constants so they never disagree.

use ash::vk;
use vortex_runtime::device::Gpu;

const fn b(on: bool) -> vk::Bool32 {
    on as vk::Bool32
}

/// robustImageAccess: out-of-bounds image accesses made safe (VK_EXT_image_robustness); the
/// texture unit always bounds them (`caps::robust`).
pub fn robust_image_access() -> bool {
    super::robust::image_access() == vk::TRUE
}
/// Barriers, events, timestamps and submits of `entry::sync2`.
pub const SYNCHRONIZATION2: bool = true;
/// `entry::private_data`.
pub const PRIVATE_DATA: bool = true;
/// `entry::maintenance4` and LocalSizeId (the compiler reads it, `lower/stage/compute.rs`).
pub const MAINTENANCE4: bool = true;
/// The warp is the only subgroup size: a required size equal to it is always met, and full
/// subgroups are what a workgroup whose width is a multiple of the warp gets.
pub const SUBGROUP_SIZE_CONTROL: bool = true;
/// `OpDemoteToHelperInvocation` / `OpIsHelperInvocationEXT` (the fragment stage's DEMOTE) and
/// `OpTerminateInvocation` (the fragment stage's exit).
pub const DEMOTE_TO_HELPER: bool = true;
pub const TERMINATE_INVOCATION: bool = true;
/// In the set: a uniform-buffer record addressing the block's bytes, which follow it
/// (`runtime::descriptor`); the shader reads it as a uniform buffer.
pub const INLINE_UNIFORM_BLOCK: bool = true;
/// OpSDot/OpUDot/OpSUDot and their accumulating-saturating forms (the compiler's
/// `lower/dot.rs`), none accelerated.
pub const INTEGER_DOT_PRODUCT: bool = true;
/// Workgroup variables with a null initializer are cleared by the kernel's prologue
/// (the compiler's `lower/zero_init.rs`).
pub const ZERO_INITIALIZE_WORKGROUP_MEMORY: bool = true;
/// FAIL_ON_PIPELINE_COMPILE_REQUIRED (caches hold nothing: always "compile required") and
/// EARLY_RETURN_ON_FAILURE (`entry::pipeline::create_pipelines`); cache create flags need no work.
pub const PIPELINE_CREATION_CACHE_CONTROL: bool = true;

/// Fills the Vulkan 1.3 feature structure.
pub fn fill_v13(f: &mut vk::PhysicalDeviceVulkan13Features, graphics: bool) {
    f.robust_image_access = b(robust_image_access());
    f.inline_uniform_block = b(INLINE_UNIFORM_BLOCK);
    f.descriptor_binding_inline_uniform_block_update_after_bind = b(INLINE_UNIFORM_BLOCK);
    f.pipeline_creation_cache_control = b(PIPELINE_CREATION_CACHE_CONTROL);
    f.private_data = b(PRIVATE_DATA);
    f.shader_demote_to_helper_invocation = b(DEMOTE_TO_HELPER && graphics);
    f.shader_terminate_invocation = b(TERMINATE_INVOCATION && graphics);
    f.subgroup_size_control = b(SUBGROUP_SIZE_CONTROL);
    f.compute_full_subgroups = b(SUBGROUP_SIZE_CONTROL);
    f.synchronization2 = b(SYNCHRONIZATION2);
    f.texture_compression_astc_hdr = 0;
    f.shader_zero_initialize_workgroup_memory = b(ZERO_INITIALIZE_WORKGROUP_MEMORY);
    f.dynamic_rendering = b(graphics);
    f.shader_integer_dot_product = b(INTEGER_DOT_PRODUCT);
    f.maintenance4 = b(MAINTENANCE4);
}

/// Device extensions of the features above, for 1.2 applications: each is offered when its
/// feature is (the graphics path's dynamic rendering is listed in `graphics::EXTENSIONS`).
pub fn extensions() -> Vec<(&'static str, u32)> {
    [
        ("VK_KHR_synchronization2", 1, SYNCHRONIZATION2),
        ("VK_KHR_copy_commands2", 1, true),
        ("VK_EXT_private_data", 1, PRIVATE_DATA),
        ("VK_KHR_maintenance4", 2, MAINTENANCE4),
        ("VK_EXT_tooling_info", 1, true),
        ("VK_KHR_separate_depth_stencil_layouts", 1, true),
        ("VK_EXT_subgroup_size_control", 2, SUBGROUP_SIZE_CONTROL),
        ("VK_EXT_shader_demote_to_helper_invocation", 1, DEMOTE_TO_HELPER),
        ("VK_KHR_shader_terminate_invocation", 1, TERMINATE_INVOCATION),
        ("VK_KHR_shader_non_semantic_info", 1, true),
        ("VK_EXT_texel_buffer_alignment", 1, true),
        ("VK_EXT_inline_uniform_block", 1, INLINE_UNIFORM_BLOCK),
        ("VK_KHR_shader_integer_dot_product", 1, INTEGER_DOT_PRODUCT),
        ("VK_KHR_zero_initialize_workgroup_memory", 1, ZERO_INITIALIZE_WORKGROUP_MEMORY),
        ("VK_EXT_pipeline_creation_cache_control", 3, PIPELINE_CREATION_CACHE_CONTROL),
        ("VK_EXT_image_robustness", 1, robust_image_access()),
    ]
    .into_iter()
    .filter(|e| e.2)
    .map(|(n, v, _)| (n, v))
    .collect()
}

/// Fills a 1.3 feature structure (the aggregate or a promoted extension's); false for one
/// that is not.
///
/// # Safety
/// `p` must point at a writable structure of type `ty`.
pub unsafe fn fill_feature(ty: vk::StructureType, p: *mut std::ffi::c_void, graphics: bool) -> bool {
    let mut v = vk::PhysicalDeviceVulkan13Features::default();
    fill_v13(&mut v, graphics);
    macro_rules! at {
        ($t:ty) => {
            // SAFETY: the sType matched this structure type.
            unsafe { &mut *(p as *mut $t) }
        };
    }
    use vk::StructureType as S;
    match ty {
        S::PHYSICAL_DEVICE_VULKAN_1_3_FEATURES => fill_v13(at!(vk::PhysicalDeviceVulkan13Features), graphics),
        S::PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES => {
            at!(vk::PhysicalDeviceSynchronization2Features).synchronization2 = v.synchronization2
        }
        S::PHYSICAL_DEVICE_PRIVATE_DATA_FEATURES => {
            at!(vk::PhysicalDevicePrivateDataFeatures).private_data = v.private_data
        }
        S::PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES => {
            at!(vk::PhysicalDeviceMaintenance4Features).maintenance4 = v.maintenance4
        }
        S::PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES => {
            let f = at!(vk::PhysicalDeviceSubgroupSizeControlFeatures);
            f.subgroup_size_control = v.subgroup_size_control;
            f.compute_full_subgroups = v.compute_full_subgroups;
        }
        S::PHYSICAL_DEVICE_SHADER_DEMOTE_TO_HELPER_INVOCATION_FEATURES => {
            at!(vk::PhysicalDeviceShaderDemoteToHelperInvocationFeatures).shader_demote_to_helper_invocation =
                v.shader_demote_to_helper_invocation
        }
        S::PHYSICAL_DEVICE_SHADER_TERMINATE_INVOCATION_FEATURES => {
            at!(vk::PhysicalDeviceShaderTerminateInvocationFeatures).shader_terminate_invocation =
                v.shader_terminate_invocation
        }
        S::PHYSICAL_DEVICE_INLINE_UNIFORM_BLOCK_FEATURES => {
            let f = at!(vk::PhysicalDeviceInlineUniformBlockFeatures);
            f.inline_uniform_block = v.inline_uniform_block;
            f.descriptor_binding_inline_uniform_block_update_after_bind =
                v.descriptor_binding_inline_uniform_block_update_after_bind;
        }
        S::PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES => {
            at!(vk::PhysicalDeviceShaderIntegerDotProductFeatures).shader_integer_dot_product =
                v.shader_integer_dot_product
        }
        S::PHYSICAL_DEVICE_ZERO_INITIALIZE_WORKGROUP_MEMORY_FEATURES => {
            at!(vk::PhysicalDeviceZeroInitializeWorkgroupMemoryFeatures).shader_zero_initialize_workgroup_memory =
                v.shader_zero_initialize_workgroup_memory
        }
        S::PHYSICAL_DEVICE_PIPELINE_CREATION_CACHE_CONTROL_FEATURES => {
            at!(vk::PhysicalDevicePipelineCreationCacheControlFeatures).pipeline_creation_cache_control =
                v.pipeline_creation_cache_control
        }
        S::PHYSICAL_DEVICE_IMAGE_ROBUSTNESS_FEATURES => {
            at!(vk::PhysicalDeviceImageRobustnessFeatures).robust_image_access = v.robust_image_access
        }
        S::PHYSICAL_DEVICE_TEXTURE_COMPRESSION_ASTC_HDR_FEATURES => {
            at!(vk::PhysicalDeviceTextureCompressionASTCHDRFeatures).texture_compression_astc_hdr = 0
        }
        S::PHYSICAL_DEVICE_TEXEL_BUFFER_ALIGNMENT_FEATURES_EXT => {
            // The extension's one feature; its properties are core in 1.3.
            at!(vk::PhysicalDeviceTexelBufferAlignmentFeaturesEXT).texel_buffer_alignment = vk::TRUE
        }
        _ => return false,
    }
    true
}

/// Inline uniform blocks: Vulkan 1.3's minimums (the feature is required there).
const MAX_INLINE_UNIFORM_BLOCK_SIZE: u32 = 256;
const MAX_INLINE_UNIFORM_BLOCKS: u32 = 4;
const MAX_INLINE_UNIFORM_TOTAL_SIZE: u32 = 256;

/// Fills a 1.3 property structure; false for one that is not.
///
/// # Safety
/// As for [`fill_feature`].
pub unsafe fn fill_property(gpu: &Gpu, ty: vk::StructureType, p: *mut std::ffi::c_void) -> bool {
    let c = &gpu.config;
    let warp = c.num_threads;
    let limits = super::limits(gpu);
    let texel_align = limits.min_texel_buffer_offset_alignment;
    let max_buffer_size = vortex_model::mem::MAX_ALLOCATION;
    macro_rules! at {
        ($t:ty) => {
            // SAFETY: the sType matched this structure type.
            unsafe { &mut *(p as *mut $t) }
        };
    }
    macro_rules! subgroup_size_control {
        ($q:ident) => {
            $q.min_subgroup_size = warp;
            $q.max_subgroup_size = warp;
            $q.max_compute_workgroup_subgroups = limits.max_compute_work_group_invocations.div_ceil(warp);
            $q.required_subgroup_size_stages = vk::ShaderStageFlags::COMPUTE;
        };
    }
    macro_rules! inline_uniform_block {
        ($q:ident) => {
            $q.max_inline_uniform_block_size = MAX_INLINE_UNIFORM_BLOCK_SIZE;
            $q.max_per_stage_descriptor_inline_uniform_blocks = MAX_INLINE_UNIFORM_BLOCKS;
            $q.max_per_stage_descriptor_update_after_bind_inline_uniform_blocks = MAX_INLINE_UNIFORM_BLOCKS;
            $q.max_descriptor_set_inline_uniform_blocks = MAX_INLINE_UNIFORM_BLOCKS;
            $q.max_descriptor_set_update_after_bind_inline_uniform_blocks = MAX_INLINE_UNIFORM_BLOCKS;
        };
    }
    macro_rules! texel_buffer_alignment {
        ($q:ident) => {
            // Texel buffer views need the device's offset alignment whatever the format.
            $q.storage_texel_buffer_offset_alignment_bytes = texel_align;
            $q.storage_texel_buffer_offset_single_texel_alignment = 0;
            $q.uniform_texel_buffer_offset_alignment_bytes = texel_align;
            $q.uniform_texel_buffer_offset_single_texel_alignment = 0;
        };
    }
    use vk::StructureType as S;
    match ty {
        S::PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES => {
            let q = at!(vk::PhysicalDeviceVulkan13Properties);
            subgroup_size_control!(q);
            inline_uniform_block!(q);
            q.max_inline_uniform_total_size = MAX_INLINE_UNIFORM_TOTAL_SIZE;
            write_dot_product_none(q);
            texel_buffer_alignment!(q);
            q.max_buffer_size = max_buffer_size;
        }
        S::PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES => {
            let q = at!(vk::PhysicalDeviceSubgroupSizeControlProperties);
            subgroup_size_control!(q);
        }
        S::PHYSICAL_DEVICE_INLINE_UNIFORM_BLOCK_PROPERTIES => {
            let q = at!(vk::PhysicalDeviceInlineUniformBlockProperties);
            inline_uniform_block!(q);
        }
        S::PHYSICAL_DEVICE_TEXEL_BUFFER_ALIGNMENT_PROPERTIES => {
            let q = at!(vk::PhysicalDeviceTexelBufferAlignmentProperties);
            texel_buffer_alignment!(q);
        }
        S::PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES => {
            at!(vk::PhysicalDeviceMaintenance4Properties).max_buffer_size = max_buffer_size
        }
        S::PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES => {
            // Every field false (see `write_dot_product_none`).
            let q = at!(vk::PhysicalDeviceShaderIntegerDotProductProperties);
            let next = q.p_next;
            *q = vk::PhysicalDeviceShaderIntegerDotProductProperties { p_next: next, ..Default::default() };
        }
        _ => return false,
    }
    true
}

/// The 30 `integerDotProduct*Accelerated` fields of the 1.3 properties, all false: the
/// compiler lowers every dot product to multiply-adds, none is faster than that.
fn write_dot_product_none(q: &mut vk::PhysicalDeviceVulkan13Properties) {
    q.integer_dot_product8_bit_unsigned_accelerated = 0;
    q.integer_dot_product8_bit_signed_accelerated = 0;
    q.integer_dot_product8_bit_mixed_signedness_accelerated = 0;
    q.integer_dot_product4x8_bit_packed_unsigned_accelerated = 0;
    q.integer_dot_product4x8_bit_packed_signed_accelerated = 0;
    q.integer_dot_product4x8_bit_packed_mixed_signedness_accelerated = 0;
    q.integer_dot_product16_bit_unsigned_accelerated = 0;
    q.integer_dot_product16_bit_signed_accelerated = 0;
    q.integer_dot_product16_bit_mixed_signedness_accelerated = 0;
    q.integer_dot_product32_bit_unsigned_accelerated = 0;
    q.integer_dot_product32_bit_signed_accelerated = 0;
    q.integer_dot_product32_bit_mixed_signedness_accelerated = 0;
    q.integer_dot_product64_bit_unsigned_accelerated = 0;
    q.integer_dot_product64_bit_signed_accelerated = 0;
    q.integer_dot_product64_bit_mixed_signedness_accelerated = 0;
    q.integer_dot_product_accumulating_saturating8_bit_unsigned_accelerated = 0;
    q.integer_dot_product_accumulating_saturating8_bit_signed_accelerated = 0;
    q.integer_dot_product_accumulating_saturating8_bit_mixed_signedness_accelerated = 0;
    q.integer_dot_product_accumulating_saturating4x8_bit_packed_unsigned_accelerated = 0;
    q.integer_dot_product_accumulating_saturating4x8_bit_packed_signed_accelerated = 0;
    q.integer_dot_product_accumulating_saturating4x8_bit_packed_mixed_signedness_accelerated = 0;
    q.integer_dot_product_accumulating_saturating16_bit_unsigned_accelerated = 0;
    q.integer_dot_product_accumulating_saturating16_bit_signed_accelerated = 0;
    q.integer_dot_product_accumulating_saturating16_bit_mixed_signedness_accelerated = 0;
    q.integer_dot_product_accumulating_saturating32_bit_unsigned_accelerated = 0;
    q.integer_dot_product_accumulating_saturating32_bit_signed_accelerated = 0;
    q.integer_dot_product_accumulating_saturating32_bit_mixed_signedness_accelerated = 0;
    q.integer_dot_product_accumulating_saturating64_bit_unsigned_accelerated = 0;
    q.integer_dot_product_accumulating_saturating64_bit_signed_accelerated = 0;
    q.integer_dot_product_accumulating_saturating64_bit_mixed_signedness_accelerated = 0;
}
