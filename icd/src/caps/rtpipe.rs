//! What the device reports for ray-tracing pipelines (`docs/RTPIPELINE.md`): the extension,
//! its features and properties.
//!
//! On unless the device configuration turns it off (`rt_pipeline = false`, or
//! `VORTEX_RT_PIPELINE=0`), and never on an rdna2 device, whose traversal is the shader's
//! own loop. The switch is latched from the configuration when an instance is created;
//! every report here reads it.

use ash::vk;
use std::sync::atomic::{AtomicBool, Ordering};
use vortex_runtime::pipeline::raytracing as rt;

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Latches the switch (at instance creation, from the device configuration).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether ray-tracing pipelines are offered.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The device extensions of ray-tracing pipelines (when switched on).
pub const EXTENSIONS: &[(&str, u32)] = &[("VK_KHR_ray_tracing_pipeline", 1)];

pub fn extensions(on: bool) -> &'static [(&'static str, u32)] {
    if on {
        EXTENSIONS
    } else {
        &[]
    }
}

const fn b(on: bool) -> vk::Bool32 {
    on as vk::Bool32
}

/// Fills the ray-tracing pipeline feature structure (all false when switched off); false for
/// any other structure.
///
/// # Safety
/// `p` must point at a writable structure of type `ty`.
pub unsafe fn fill_feature(ty: vk::StructureType, p: *mut std::ffi::c_void, on: bool) -> bool {
    if ty != vk::StructureType::PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_FEATURES_KHR {
        return false;
    }
    // SAFETY: the sType matched this structure type.
    let f = unsafe { &mut *(p as *mut vk::PhysicalDeviceRayTracingPipelineFeaturesKHR) };
    f.ray_tracing_pipeline = b(on);
    // Handles name the pipeline's kernel address, which a replayed run does not reproduce.
    f.ray_tracing_pipeline_shader_group_handle_capture_replay = 0;
    f.ray_tracing_pipeline_shader_group_handle_capture_replay_mixed = 0;
    f.ray_tracing_pipeline_trace_rays_indirect = b(on);
    f.ray_traversal_primitive_culling = b(on);
    true
}

/// `rayTracingPipelineTraceRaysIndirect2` of VK_KHR_ray_tracing_maintenance1.
pub fn trace_rays_indirect2(on: bool) -> vk::Bool32 {
    b(on)
}

/// Fills the ray-tracing pipeline property structure; false for any other structure.
///
/// # Safety
/// As for [`fill_feature`].
pub unsafe fn fill_property(ty: vk::StructureType, p: *mut std::ffi::c_void) -> bool {
    if ty != vk::StructureType::PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_PROPERTIES_KHR {
        return false;
    }
    // SAFETY: the sType matched this structure type.
    let q = unsafe { &mut *(p as *mut vk::PhysicalDeviceRayTracingPipelinePropertiesKHR) };
    q.shader_group_handle_size = rt::HANDLE_BYTES as u32;
    q.max_ray_recursion_depth = rt::MAX_RECURSION;
    q.max_shader_group_stride = rt::MAX_GROUP_STRIDE;
    q.shader_group_base_alignment = rt::BASE_ALIGNMENT;
    q.shader_group_handle_capture_replay_size = rt::HANDLE_BYTES as u32;
    q.max_ray_dispatch_invocation_count = rt::MAX_INVOCATIONS;
    q.shader_group_handle_alignment = rt::HANDLE_ALIGNMENT;
    q.max_ray_hit_attribute_size = rt::MAX_HIT_ATTRIBUTE_BYTES;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switched_off_nothing_is_offered() {
        assert!(extensions(false).is_empty());
        let mut f = vk::PhysicalDeviceRayTracingPipelineFeaturesKHR::default();
        // SAFETY: a live structure of the matching type.
        assert!(unsafe {
            fill_feature(f.s_type, (&mut f as *mut vk::PhysicalDeviceRayTracingPipelineFeaturesKHR).cast(), false)
        });
        assert_eq!(f.ray_tracing_pipeline, 0);
        assert_eq!(f.ray_tracing_pipeline_trace_rays_indirect, 0);
        assert_eq!(f.ray_traversal_primitive_culling, 0);
        assert_eq!(trace_rays_indirect2(false), 0);
    }

    #[test]
    fn switched_on_the_properties_meet_the_specification() {
        assert_eq!(extensions(true), EXTENSIONS);
        let mut f = vk::PhysicalDeviceRayTracingPipelineFeaturesKHR::default();
        // SAFETY: a live structure of the matching type.
        assert!(unsafe {
            fill_feature(f.s_type, (&mut f as *mut vk::PhysicalDeviceRayTracingPipelineFeaturesKHR).cast(), true)
        });
        assert_eq!((f.ray_tracing_pipeline, f.ray_tracing_pipeline_trace_rays_indirect), (1, 1));
        let mut q = vk::PhysicalDeviceRayTracingPipelinePropertiesKHR::default();
        // SAFETY: as above.
        assert!(unsafe {
            fill_property(q.s_type, (&mut q as *mut vk::PhysicalDeviceRayTracingPipelinePropertiesKHR).cast())
        });
        // The specification's required limits (Table "Required Limits"): handle size 32
        // exactly is what applications assume; the others are minimums or maximums.
        assert_eq!(q.shader_group_handle_size, 32);
        assert!(q.max_ray_recursion_depth >= 1);
        assert!(q.max_shader_group_stride >= 4096);
        assert!(q.shader_group_base_alignment <= 64 && q.shader_group_base_alignment.is_power_of_two());
        assert!(q.shader_group_handle_alignment <= 32 && q.shader_group_handle_alignment.is_power_of_two());
        assert!(q.max_ray_dispatch_invocation_count >= 1 << 30);
        assert!(q.max_ray_hit_attribute_size >= 32);
        assert_eq!(q.shader_group_base_alignment % q.shader_group_handle_alignment, 0);
    }
}
