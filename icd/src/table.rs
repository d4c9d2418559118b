//! The entry-point table: every Vulkan command this ICD implements, with the level it belongs
//! to and the extension that provides it. Each function is coerced to ash's PFN type for its
//! name, so a signature mistake fails the build.

use crate::entry::*;
use ash::vk;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Callable without an instance.
    Global,
    Instance,
    /// Dispatched through a physical device.
    Physical,
    Device,
}

pub struct Entry {
    pub name: &'static str,
    pub func: unsafe extern "system" fn(),
    pub level: Level,
    /// Device extension that must be enabled for `vkGetDeviceProcAddr` to return it
    /// (`None` for core commands).
    pub ext: Option<&'static str>,
}

macro_rules! entries {
    ($( $name:literal => $func:path as $pfn:ident, $level:ident $(, $ext:literal)? ; )*) => {
        pub static ENTRIES: &[Entry] = &[
            $( Entry {
                name: $name,
                func: {
                    let f: vk::$pfn = $func;
                    // SAFETY: function pointers of any signature have the same representation;
                    // callers cast back to the PFN type the name implies.
                    unsafe { std::mem::transmute::<vk::$pfn, unsafe extern "system" fn()>(f) }
                },
                level: Level::$level,
                ext: entries!(@ext $($ext)?),
            }, )*
        ];
    };
    (@ext) => { None };
    (@ext $e:literal) => { Some($e) };
}

entries! {
    "vkGetInstanceProcAddr" => crate::vk_get_instance_proc_addr as PFN_vkGetInstanceProcAddr, Global;
    "vkEnumerateInstanceVersion" => instance::enumerate_instance_version as PFN_vkEnumerateInstanceVersion, Global;
    "vkEnumerateInstanceExtensionProperties" => instance::enumerate_instance_extension_properties as PFN_vkEnumerateInstanceExtensionProperties, Global;
    "vkEnumerateInstanceLayerProperties" => instance::enumerate_instance_layer_properties as PFN_vkEnumerateInstanceLayerProperties, Global;
    "vkCreateInstance" => instance::create_instance as PFN_vkCreateInstance, Global;

    "vkDestroyInstance" => instance::destroy_instance as PFN_vkDestroyInstance, Instance;
    "vkEnumeratePhysicalDevices" => instance::enumerate_physical_devices as PFN_vkEnumeratePhysicalDevices, Instance;
    "vkEnumeratePhysicalDeviceGroups" => instance::enumerate_physical_device_groups as PFN_vkEnumeratePhysicalDeviceGroups, Instance;
    "vkEnumeratePhysicalDeviceGroupsKHR" => instance::enumerate_physical_device_groups as PFN_vkEnumeratePhysicalDeviceGroups, Instance;
    "vkGetDeviceProcAddr" => crate::vk_get_device_proc_addr as PFN_vkGetDeviceProcAddr, Instance;

    "vkGetPhysicalDeviceFeatures" => instance::get_physical_device_features as PFN_vkGetPhysicalDeviceFeatures, Physical;
    "vkGetPhysicalDeviceFeatures2" => instance::get_physical_device_features2 as PFN_vkGetPhysicalDeviceFeatures2, Physical;
    "vkGetPhysicalDeviceFeatures2KHR" => instance::get_physical_device_features2 as PFN_vkGetPhysicalDeviceFeatures2, Physical;
    "vkGetPhysicalDeviceProperties" => instance::get_physical_device_properties as PFN_vkGetPhysicalDeviceProperties, Physical;
    "vkGetPhysicalDeviceProperties2" => instance::get_physical_device_properties2 as PFN_vkGetPhysicalDeviceProperties2, Physical;
    "vkGetPhysicalDeviceProperties2KHR" => instance::get_physical_device_properties2 as PFN_vkGetPhysicalDeviceProperties2, Physical;
    "vkGetPhysicalDeviceQueueFamilyProperties" => instance::get_physical_device_queue_family_properties as PFN_vkGetPhysicalDeviceQueueFamilyProperties, Physical;
    "vkGetPhysicalDeviceQueueFamilyProperties2" => instance::get_physical_device_queue_family_properties2 as PFN_vkGetPhysicalDeviceQueueFamilyProperties2, Physical;
    "vkGetPhysicalDeviceQueueFamilyProperties2KHR" => instance::get_physical_device_queue_family_properties2 as PFN_vkGetPhysicalDeviceQueueFamilyProperties2, Physical;
    "vkGetPhysicalDeviceMemoryProperties" => instance::get_physical_device_memory_properties as PFN_vkGetPhysicalDeviceMemoryProperties, Physical;
    "vkGetPhysicalDeviceMemoryProperties2" => instance::get_physical_device_memory_properties2 as PFN_vkGetPhysicalDeviceMemoryProperties2, Physical;
    "vkGetPhysicalDeviceMemoryProperties2KHR" => instance::get_physical_device_memory_properties2 as PFN_vkGetPhysicalDeviceMemoryProperties2, Physical;
    "vkGetPhysicalDeviceFormatProperties" => instance::get_physical_device_format_properties as PFN_vkGetPhysicalDeviceFormatProperties, Physical;
    "vkGetPhysicalDeviceFormatProperties2" => instance::get_physical_device_format_properties2 as PFN_vkGetPhysicalDeviceFormatProperties2, Physical;
    "vkGetPhysicalDeviceFormatProperties2KHR" => instance::get_physical_device_format_properties2 as PFN_vkGetPhysicalDeviceFormatProperties2, Physical;
    "vkGetPhysicalDeviceImageFormatProperties" => instance::get_physical_device_image_format_properties as PFN_vkGetPhysicalDeviceImageFormatProperties, Physical;
    "vkGetPhysicalDeviceImageFormatProperties2" => instance::get_physical_device_image_format_properties2 as PFN_vkGetPhysicalDeviceImageFormatProperties2, Physical;
    "vkGetPhysicalDeviceImageFormatProperties2KHR" => instance::get_physical_device_image_format_properties2 as PFN_vkGetPhysicalDeviceImageFormatProperties2, Physical;
    "vkGetPhysicalDeviceSparseImageFormatProperties" => instance::get_physical_device_sparse_image_format_properties as PFN_vkGetPhysicalDeviceSparseImageFormatProperties, Physical;
    "vkGetPhysicalDeviceSparseImageFormatProperties2" => instance::get_physical_device_sparse_image_format_properties2 as PFN_vkGetPhysicalDeviceSparseImageFormatProperties2, Physical;
    "vkGetPhysicalDeviceSparseImageFormatProperties2KHR" => instance::get_physical_device_sparse_image_format_properties2 as PFN_vkGetPhysicalDeviceSparseImageFormatProperties2, Physical;
    "vkGetPhysicalDeviceExternalBufferProperties" => instance::get_physical_device_external_buffer_properties as PFN_vkGetPhysicalDeviceExternalBufferProperties, Physical;
    "vkGetPhysicalDeviceExternalFenceProperties" => instance::get_physical_device_external_fence_properties as PFN_vkGetPhysicalDeviceExternalFenceProperties, Physical;
    "vkGetPhysicalDeviceExternalSemaphoreProperties" => instance::get_physical_device_external_semaphore_properties as PFN_vkGetPhysicalDeviceExternalSemaphoreProperties, Physical;
    "vkEnumerateDeviceExtensionProperties" => instance::enumerate_device_extension_properties as PFN_vkEnumerateDeviceExtensionProperties, Physical;
    "vkEnumerateDeviceLayerProperties" => instance::enumerate_device_layer_properties as PFN_vkEnumerateDeviceLayerProperties, Physical;
    "vkCreateDevice" => device::create_device as PFN_vkCreateDevice, Physical;
    "vkGetPhysicalDeviceToolProperties" => tooling::get_physical_device_tool_properties as PFN_vkGetPhysicalDeviceToolProperties, Physical;
    "vkGetPhysicalDeviceToolPropertiesEXT" => tooling::get_physical_device_tool_properties as PFN_vkGetPhysicalDeviceToolProperties, Physical;

    "vkDestroyDevice" => device::destroy_device as PFN_vkDestroyDevice, Device;
    "vkGetDeviceQueue" => device::get_device_queue as PFN_vkGetDeviceQueue, Device;
    "vkGetDeviceQueue2" => device::get_device_queue2 as PFN_vkGetDeviceQueue2, Device;
    "vkQueueSubmit" => device::queue_submit as PFN_vkQueueSubmit, Device;
    "vkQueueWaitIdle" => device::queue_wait_idle as PFN_vkQueueWaitIdle, Device;
    "vkQueueBindSparse" => sparse::queue_bind_sparse as PFN_vkQueueBindSparse, Device;
    "vkDeviceWaitIdle" => device::device_wait_idle as PFN_vkDeviceWaitIdle, Device;

    "vkAllocateMemory" => memory::allocate_memory as PFN_vkAllocateMemory, Device;
    "vkFreeMemory" => memory::free_memory as PFN_vkFreeMemory, Device;
    "vkMapMemory" => memory::map_memory as PFN_vkMapMemory, Device;
    "vkUnmapMemory" => memory::unmap_memory as PFN_vkUnmapMemory, Device;
    "vkFlushMappedMemoryRanges" => memory::flush_mapped_memory_ranges as PFN_vkFlushMappedMemoryRanges, Device;
    "vkInvalidateMappedMemoryRanges" => memory::flush_mapped_memory_ranges as PFN_vkInvalidateMappedMemoryRanges, Device;
    "vkGetDeviceMemoryCommitment" => memory::get_device_memory_commitment as PFN_vkGetDeviceMemoryCommitment, Device;
    "vkCreateBuffer" => memory::create_buffer as PFN_vkCreateBuffer, Device;
    "vkCreateBufferView" => memory::create_buffer_view as PFN_vkCreateBufferView, Device;
    "vkDestroyBufferView" => memory::destroy_buffer_view as PFN_vkDestroyBufferView, Device;
    "vkDestroyBuffer" => memory::destroy_buffer as PFN_vkDestroyBuffer, Device;
    "vkGetBufferMemoryRequirements" => memory::get_buffer_memory_requirements as PFN_vkGetBufferMemoryRequirements, Device;
    "vkGetBufferMemoryRequirements2" => memory::get_buffer_memory_requirements2 as PFN_vkGetBufferMemoryRequirements2, Device;
    "vkGetBufferMemoryRequirements2KHR" => memory::get_buffer_memory_requirements2 as PFN_vkGetBufferMemoryRequirements2, Device, "VK_KHR_get_memory_requirements2";
    "vkGetImageMemoryRequirements" => memory::get_image_memory_requirements as PFN_vkGetImageMemoryRequirements, Device;
    "vkGetImageMemoryRequirements2" => memory::get_image_memory_requirements2 as PFN_vkGetImageMemoryRequirements2, Device;
    "vkGetImageMemoryRequirements2KHR" => memory::get_image_memory_requirements2 as PFN_vkGetImageMemoryRequirements2, Device, "VK_KHR_get_memory_requirements2";
    "vkGetImageSparseMemoryRequirements" => memory::get_image_sparse_memory_requirements as PFN_vkGetImageSparseMemoryRequirements, Device;
    "vkGetImageSparseMemoryRequirements2" => memory::get_image_sparse_memory_requirements2 as PFN_vkGetImageSparseMemoryRequirements2, Device;
    "vkBindBufferMemory" => memory::bind_buffer_memory as PFN_vkBindBufferMemory, Device;
    "vkBindBufferMemory2" => memory::bind_buffer_memory2 as PFN_vkBindBufferMemory2, Device;
    "vkBindBufferMemory2KHR" => memory::bind_buffer_memory2 as PFN_vkBindBufferMemory2, Device, "VK_KHR_bind_memory2";
    "vkBindImageMemory" => memory::bind_image_memory as PFN_vkBindImageMemory, Device;
    "vkBindImageMemory2" => memory::bind_image_memory2 as PFN_vkBindImageMemory2, Device;
    "vkBindImageMemory2KHR" => memory::bind_image_memory2 as PFN_vkBindImageMemory2, Device, "VK_KHR_bind_memory2";
    "vkGetBufferDeviceAddress" => memory::get_buffer_device_address as PFN_vkGetBufferDeviceAddress, Device;
    "vkGetBufferDeviceAddressKHR" => memory::get_buffer_device_address as PFN_vkGetBufferDeviceAddress, Device, "VK_KHR_buffer_device_address";
    "vkGetBufferOpaqueCaptureAddress" => memory::get_buffer_opaque_capture_address as PFN_vkGetBufferOpaqueCaptureAddress, Device;
    "vkGetBufferOpaqueCaptureAddressKHR" => memory::get_buffer_opaque_capture_address as PFN_vkGetBufferOpaqueCaptureAddress, Device, "VK_KHR_buffer_device_address";
    "vkGetDeviceMemoryOpaqueCaptureAddress" => memory::get_device_memory_opaque_capture_address as PFN_vkGetDeviceMemoryOpaqueCaptureAddress, Device;
    "vkGetDeviceMemoryOpaqueCaptureAddressKHR" => memory::get_device_memory_opaque_capture_address as PFN_vkGetDeviceMemoryOpaqueCaptureAddress, Device, "VK_KHR_buffer_device_address";
    "vkCreateImage" => memory::create_image as PFN_vkCreateImage, Device;
    "vkDestroyImage" => memory::destroy_image as PFN_vkDestroyImage, Device;
    "vkGetImageSubresourceLayout" => memory::get_image_subresource_layout as PFN_vkGetImageSubresourceLayout, Device;
    "vkCreateImageView" => memory::create_image_view as PFN_vkCreateImageView, Device;
    "vkDestroyImageView" => memory::destroy_image_view as PFN_vkDestroyImageView, Device;
    "vkCreateSampler" => sampler::create_sampler as PFN_vkCreateSampler, Device;
    "vkDestroySampler" => sampler::destroy_sampler as PFN_vkDestroySampler, Device;

    "vkCreateFence" => sync::create_fence as PFN_vkCreateFence, Device;
    "vkDestroyFence" => sync::destroy_fence as PFN_vkDestroyFence, Device;
    "vkResetFences" => sync::reset_fences as PFN_vkResetFences, Device;
    "vkGetFenceStatus" => sync::get_fence_status as PFN_vkGetFenceStatus, Device;
    "vkWaitForFences" => sync::wait_for_fences as PFN_vkWaitForFences, Device;
    "vkCreateSemaphore" => sync::create_semaphore as PFN_vkCreateSemaphore, Device;
    "vkDestroySemaphore" => sync::destroy_semaphore as PFN_vkDestroySemaphore, Device;
    "vkGetSemaphoreCounterValue" => sync::get_semaphore_counter_value as PFN_vkGetSemaphoreCounterValue, Device;
    "vkGetSemaphoreCounterValueKHR" => sync::get_semaphore_counter_value as PFN_vkGetSemaphoreCounterValue, Device, "VK_KHR_timeline_semaphore";
    "vkWaitSemaphores" => sync::wait_semaphores as PFN_vkWaitSemaphores, Device;
    "vkWaitSemaphoresKHR" => sync::wait_semaphores as PFN_vkWaitSemaphores, Device, "VK_KHR_timeline_semaphore";
    "vkSignalSemaphore" => sync::signal_semaphore as PFN_vkSignalSemaphore, Device;
    "vkSignalSemaphoreKHR" => sync::signal_semaphore as PFN_vkSignalSemaphore, Device, "VK_KHR_timeline_semaphore";
    "vkCreateEvent" => sync::create_event as PFN_vkCreateEvent, Device;
    "vkDestroyEvent" => sync::destroy_event as PFN_vkDestroyEvent, Device;
    "vkGetEventStatus" => sync::get_event_status as PFN_vkGetEventStatus, Device;
    "vkSetEvent" => sync::set_event as PFN_vkSetEvent, Device;
    "vkResetEvent" => sync::reset_event as PFN_vkResetEvent, Device;

    "vkCreateDescriptorSetLayout" => descriptor::create_descriptor_set_layout as PFN_vkCreateDescriptorSetLayout, Device;
    "vkDestroyDescriptorSetLayout" => descriptor::destroy_descriptor_set_layout as PFN_vkDestroyDescriptorSetLayout, Device;
    "vkGetDescriptorSetLayoutSupport" => descriptor::get_descriptor_set_layout_support as PFN_vkGetDescriptorSetLayoutSupport, Device;
    "vkCreateDescriptorPool" => descriptor::create_descriptor_pool as PFN_vkCreateDescriptorPool, Device;
    "vkDestroyDescriptorPool" => descriptor::destroy_descriptor_pool as PFN_vkDestroyDescriptorPool, Device;
    "vkResetDescriptorPool" => descriptor::reset_descriptor_pool as PFN_vkResetDescriptorPool, Device;
    "vkAllocateDescriptorSets" => descriptor::allocate_descriptor_sets as PFN_vkAllocateDescriptorSets, Device;
    "vkFreeDescriptorSets" => descriptor::free_descriptor_sets as PFN_vkFreeDescriptorSets, Device;
    "vkUpdateDescriptorSets" => descriptor::update_descriptor_sets as PFN_vkUpdateDescriptorSets, Device;

    "vkCreateShaderModule" => pipeline::create_shader_module as PFN_vkCreateShaderModule, Device;
    "vkDestroyShaderModule" => pipeline::destroy_shader_module as PFN_vkDestroyShaderModule, Device;
    "vkCreatePipelineLayout" => pipeline::create_pipeline_layout as PFN_vkCreatePipelineLayout, Device;
    "vkDestroyPipelineLayout" => pipeline::destroy_pipeline_layout as PFN_vkDestroyPipelineLayout, Device;
    "vkCreatePipelineCache" => pipeline::create_pipeline_cache as PFN_vkCreatePipelineCache, Device;
    "vkDestroyPipelineCache" => pipeline::destroy_pipeline_cache as PFN_vkDestroyPipelineCache, Device;
    "vkGetPipelineCacheData" => pipeline::get_pipeline_cache_data as PFN_vkGetPipelineCacheData, Device;
    "vkMergePipelineCaches" => pipeline::merge_pipeline_caches as PFN_vkMergePipelineCaches, Device;
    "vkCreateComputePipelines" => pipeline::create_compute_pipelines as PFN_vkCreateComputePipelines, Device;
    "vkDestroyPipeline" => pipeline::destroy_pipeline as PFN_vkDestroyPipeline, Device;

    "vkCreateCommandPool" => command::create_command_pool as PFN_vkCreateCommandPool, Device;
    "vkDestroyCommandPool" => command::destroy_command_pool as PFN_vkDestroyCommandPool, Device;
    "vkResetCommandPool" => command::reset_command_pool as PFN_vkResetCommandPool, Device;
    "vkTrimCommandPool" => command::trim_command_pool as PFN_vkTrimCommandPool, Device;
    "vkAllocateCommandBuffers" => command::allocate_command_buffers as PFN_vkAllocateCommandBuffers, Device;
    "vkFreeCommandBuffers" => command::free_command_buffers as PFN_vkFreeCommandBuffers, Device;
    "vkBeginCommandBuffer" => command::begin_command_buffer as PFN_vkBeginCommandBuffer, Device;
    "vkEndCommandBuffer" => command::end_command_buffer as PFN_vkEndCommandBuffer, Device;
    "vkResetCommandBuffer" => command::reset_command_buffer as PFN_vkResetCommandBuffer, Device;
    "vkCmdBindPipeline" => command::cmd_bind_pipeline as PFN_vkCmdBindPipeline, Device;
    "vkCmdBindDescriptorSets" => command::cmd_bind_descriptor_sets as PFN_vkCmdBindDescriptorSets, Device;
    "vkCmdPushConstants" => command::cmd_push_constants as PFN_vkCmdPushConstants, Device;
    "vkCmdDispatch" => command::cmd_dispatch as PFN_vkCmdDispatch, Device;
    "vkCmdDispatchBase" => command::cmd_dispatch_base as PFN_vkCmdDispatchBase, Device;
    "vkCmdDispatchIndirect" => command::cmd_dispatch_indirect as PFN_vkCmdDispatchIndirect, Device;
    "vkCreateGraphicsPipelines" => graphics::create_graphics_pipelines as PFN_vkCreateGraphicsPipelines, Device;
    "vkCreateRenderPass" => renderpass::create_render_pass as PFN_vkCreateRenderPass, Device;
    "vkCreateRenderPass2" => renderpass::create_render_pass2 as PFN_vkCreateRenderPass2, Device;
    "vkDestroyRenderPass" => renderpass::destroy_render_pass as PFN_vkDestroyRenderPass, Device;
    "vkGetRenderAreaGranularity" => renderpass::get_render_area_granularity as PFN_vkGetRenderAreaGranularity, Device;
    "vkCreateFramebuffer" => renderpass::create_framebuffer as PFN_vkCreateFramebuffer, Device;
    "vkDestroyFramebuffer" => renderpass::destroy_framebuffer as PFN_vkDestroyFramebuffer, Device;
    "vkCmdBeginRenderPass" => renderpass::cmd_begin_render_pass as PFN_vkCmdBeginRenderPass, Device;
    "vkCmdBeginRenderPass2" => renderpass::cmd_begin_render_pass2 as PFN_vkCmdBeginRenderPass2, Device;
    "vkCmdNextSubpass" => renderpass::cmd_next_subpass as PFN_vkCmdNextSubpass, Device;
    "vkCmdNextSubpass2" => renderpass::cmd_next_subpass2 as PFN_vkCmdNextSubpass2, Device;
    "vkCmdEndRenderPass" => renderpass::cmd_end_render_pass as PFN_vkCmdEndRenderPass, Device;
    "vkCmdEndRenderPass2" => renderpass::cmd_end_render_pass2 as PFN_vkCmdEndRenderPass2, Device;
    "vkCmdBeginRendering" => renderpass::cmd_begin_rendering as PFN_vkCmdBeginRendering, Device, "VK_KHR_dynamic_rendering";
    "vkCmdBeginRenderingKHR" => renderpass::cmd_begin_rendering as PFN_vkCmdBeginRendering, Device, "VK_KHR_dynamic_rendering";
    "vkCmdEndRendering" => renderpass::cmd_end_rendering as PFN_vkCmdEndRendering, Device, "VK_KHR_dynamic_rendering";
    "vkCmdEndRenderingKHR" => renderpass::cmd_end_rendering as PFN_vkCmdEndRendering, Device, "VK_KHR_dynamic_rendering";
    "vkCmdClearAttachments" => renderpass::cmd_clear_attachments as PFN_vkCmdClearAttachments, Device;
    "vkCmdBindVertexBuffers" => draw::cmd_bind_vertex_buffers as PFN_vkCmdBindVertexBuffers, Device;
    "vkCmdBindVertexBuffers2EXT" => draw::cmd_bind_vertex_buffers2 as PFN_vkCmdBindVertexBuffers2, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdBindVertexBuffers2" => draw::cmd_bind_vertex_buffers2 as PFN_vkCmdBindVertexBuffers2, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdBindIndexBuffer" => draw::cmd_bind_index_buffer as PFN_vkCmdBindIndexBuffer, Device;
    "vkCmdDraw" => draw::cmd_draw as PFN_vkCmdDraw, Device;
    "vkCmdDrawIndexed" => draw::cmd_draw_indexed as PFN_vkCmdDrawIndexed, Device;
    "vkCmdDrawIndirect" => draw::cmd_draw_indirect as PFN_vkCmdDrawIndirect, Device;
    "vkCmdDrawIndexedIndirect" => draw::cmd_draw_indexed_indirect as PFN_vkCmdDrawIndexedIndirect, Device;
    "vkCmdDrawIndirectCount" => draw::cmd_draw_indirect_count as PFN_vkCmdDrawIndirectCount, Device;
    "vkCmdDrawIndexedIndirectCount" => draw::cmd_draw_indexed_indirect_count as PFN_vkCmdDrawIndexedIndirectCount, Device;
    "vkCmdSetViewport" => draw::cmd_set_viewport as PFN_vkCmdSetViewport, Device;
    "vkCmdSetScissor" => draw::cmd_set_scissor as PFN_vkCmdSetScissor, Device;
    "vkCmdSetLineWidth" => draw::cmd_set_line_width as PFN_vkCmdSetLineWidth, Device;
    "vkCmdSetDepthBias" => draw::cmd_set_depth_bias as PFN_vkCmdSetDepthBias, Device;
    "vkCmdSetBlendConstants" => draw::cmd_set_blend_constants as PFN_vkCmdSetBlendConstants, Device;
    "vkCmdSetDepthBounds" => draw::cmd_set_depth_bounds as PFN_vkCmdSetDepthBounds, Device;
    "vkCmdSetStencilCompareMask" => draw::cmd_set_stencil_compare_mask as PFN_vkCmdSetStencilCompareMask, Device;
    "vkCmdSetStencilWriteMask" => draw::cmd_set_stencil_write_mask as PFN_vkCmdSetStencilWriteMask, Device;
    "vkCmdSetStencilReference" => draw::cmd_set_stencil_reference as PFN_vkCmdSetStencilReference, Device;
    "vkCmdSetCullModeEXT" => draw::cmd_set_cull_mode as PFN_vkCmdSetCullMode, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetCullMode" => draw::cmd_set_cull_mode as PFN_vkCmdSetCullMode, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetFrontFaceEXT" => draw::cmd_set_front_face as PFN_vkCmdSetFrontFace, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetFrontFace" => draw::cmd_set_front_face as PFN_vkCmdSetFrontFace, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetPrimitiveTopologyEXT" => draw::cmd_set_primitive_topology as PFN_vkCmdSetPrimitiveTopology, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetPrimitiveTopology" => draw::cmd_set_primitive_topology as PFN_vkCmdSetPrimitiveTopology, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetViewportWithCountEXT" => draw::cmd_set_viewport_with_count as PFN_vkCmdSetViewportWithCount, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetViewportWithCount" => draw::cmd_set_viewport_with_count as PFN_vkCmdSetViewportWithCount, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetScissorWithCountEXT" => draw::cmd_set_scissor_with_count as PFN_vkCmdSetScissorWithCount, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetScissorWithCount" => draw::cmd_set_scissor_with_count as PFN_vkCmdSetScissorWithCount, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetDepthTestEnableEXT" => draw::cmd_set_depth_test_enable as PFN_vkCmdSetDepthTestEnable, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetDepthTestEnable" => draw::cmd_set_depth_test_enable as PFN_vkCmdSetDepthTestEnable, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetDepthWriteEnableEXT" => draw::cmd_set_depth_write_enable as PFN_vkCmdSetDepthWriteEnable, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetDepthWriteEnable" => draw::cmd_set_depth_write_enable as PFN_vkCmdSetDepthWriteEnable, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetDepthCompareOpEXT" => draw::cmd_set_depth_compare_op as PFN_vkCmdSetDepthCompareOp, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetDepthCompareOp" => draw::cmd_set_depth_compare_op as PFN_vkCmdSetDepthCompareOp, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetDepthBoundsTestEnableEXT" => draw::cmd_set_depth_bounds_test_enable as PFN_vkCmdSetDepthBoundsTestEnable, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetDepthBoundsTestEnable" => draw::cmd_set_depth_bounds_test_enable as PFN_vkCmdSetDepthBoundsTestEnable, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetStencilTestEnableEXT" => draw::cmd_set_stencil_test_enable as PFN_vkCmdSetStencilTestEnable, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetStencilTestEnable" => draw::cmd_set_stencil_test_enable as PFN_vkCmdSetStencilTestEnable, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetStencilOpEXT" => draw::cmd_set_stencil_op as PFN_vkCmdSetStencilOp, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetStencilOp" => draw::cmd_set_stencil_op as PFN_vkCmdSetStencilOp, Device, "VK_EXT_extended_dynamic_state";
    "vkCmdSetRasterizerDiscardEnableEXT" => draw::cmd_set_rasterizer_discard_enable as PFN_vkCmdSetRasterizerDiscardEnable, Device, "VK_EXT_extended_dynamic_state2";
    "vkCmdSetRasterizerDiscardEnable" => draw::cmd_set_rasterizer_discard_enable as PFN_vkCmdSetRasterizerDiscardEnable, Device, "VK_EXT_extended_dynamic_state2";
    "vkCmdSetDepthBiasEnableEXT" => draw::cmd_set_depth_bias_enable as PFN_vkCmdSetDepthBiasEnable, Device, "VK_EXT_extended_dynamic_state2";
    "vkCmdSetDepthBiasEnable" => draw::cmd_set_depth_bias_enable as PFN_vkCmdSetDepthBiasEnable, Device, "VK_EXT_extended_dynamic_state2";
    "vkCmdSetPrimitiveRestartEnableEXT" => draw::cmd_set_primitive_restart_enable as PFN_vkCmdSetPrimitiveRestartEnable, Device, "VK_EXT_extended_dynamic_state2";
    "vkCmdSetPrimitiveRestartEnable" => draw::cmd_set_primitive_restart_enable as PFN_vkCmdSetPrimitiveRestartEnable, Device, "VK_EXT_extended_dynamic_state2";
    "vkCmdCopyBuffer" => transfer::cmd_copy_buffer as PFN_vkCmdCopyBuffer, Device;
    "vkCmdFillBuffer" => transfer::cmd_fill_buffer as PFN_vkCmdFillBuffer, Device;
    "vkCmdUpdateBuffer" => transfer::cmd_update_buffer as PFN_vkCmdUpdateBuffer, Device;
    "vkCmdCopyBufferToImage" => transfer::cmd_copy_buffer_to_image as PFN_vkCmdCopyBufferToImage, Device;
    "vkCmdCopyImageToBuffer" => transfer::cmd_copy_image_to_buffer as PFN_vkCmdCopyImageToBuffer, Device;
    "vkCmdCopyImage" => transfer::cmd_copy_image as PFN_vkCmdCopyImage, Device;
    "vkCmdClearColorImage" => transfer::cmd_clear_color_image as PFN_vkCmdClearColorImage, Device;
    "vkCmdBlitImage" => transfer::cmd_blit_image as PFN_vkCmdBlitImage, Device;
    "vkCmdResolveImage" => transfer::cmd_resolve_image as PFN_vkCmdResolveImage, Device;
    "vkCmdClearDepthStencilImage" => transfer::cmd_clear_depth_stencil_image as PFN_vkCmdClearDepthStencilImage, Device;
    "vkCmdPipelineBarrier" => command::cmd_pipeline_barrier as PFN_vkCmdPipelineBarrier, Device;
    // Synchronization2 (`entry::sync2`).
    "vkCmdPipelineBarrier2" => command::cmd_pipeline_barrier2 as PFN_vkCmdPipelineBarrier2, Device, "VK_KHR_synchronization2";
    "vkCmdPipelineBarrier2KHR" => command::cmd_pipeline_barrier2 as PFN_vkCmdPipelineBarrier2, Device, "VK_KHR_synchronization2";
    "vkCmdSetEvent2" => sync2::cmd_set_event2 as PFN_vkCmdSetEvent2, Device, "VK_KHR_synchronization2";
    "vkCmdSetEvent2KHR" => sync2::cmd_set_event2 as PFN_vkCmdSetEvent2, Device, "VK_KHR_synchronization2";
    "vkCmdResetEvent2" => sync2::cmd_reset_event2 as PFN_vkCmdResetEvent2, Device, "VK_KHR_synchronization2";
    "vkCmdResetEvent2KHR" => sync2::cmd_reset_event2 as PFN_vkCmdResetEvent2, Device, "VK_KHR_synchronization2";
    "vkCmdWaitEvents2" => sync2::cmd_wait_events2 as PFN_vkCmdWaitEvents2, Device, "VK_KHR_synchronization2";
    "vkCmdWaitEvents2KHR" => sync2::cmd_wait_events2 as PFN_vkCmdWaitEvents2, Device, "VK_KHR_synchronization2";
    "vkCmdWriteTimestamp2" => sync2::cmd_write_timestamp2 as PFN_vkCmdWriteTimestamp2, Device, "VK_KHR_synchronization2";
    "vkCmdWriteTimestamp2KHR" => sync2::cmd_write_timestamp2 as PFN_vkCmdWriteTimestamp2, Device, "VK_KHR_synchronization2";
    "vkQueueSubmit2" => sync2::queue_submit2 as PFN_vkQueueSubmit2, Device, "VK_KHR_synchronization2";
    "vkQueueSubmit2KHR" => sync2::queue_submit2 as PFN_vkQueueSubmit2, Device, "VK_KHR_synchronization2";
    // The *2 transfers (`entry::copy2`).
    "vkCmdCopyBuffer2" => copy2::cmd_copy_buffer2 as PFN_vkCmdCopyBuffer2, Device, "VK_KHR_copy_commands2";
    "vkCmdCopyBuffer2KHR" => copy2::cmd_copy_buffer2 as PFN_vkCmdCopyBuffer2, Device, "VK_KHR_copy_commands2";
    "vkCmdCopyImage2" => copy2::cmd_copy_image2 as PFN_vkCmdCopyImage2, Device, "VK_KHR_copy_commands2";
    "vkCmdCopyImage2KHR" => copy2::cmd_copy_image2 as PFN_vkCmdCopyImage2, Device, "VK_KHR_copy_commands2";
    "vkCmdCopyBufferToImage2" => copy2::cmd_copy_buffer_to_image2 as PFN_vkCmdCopyBufferToImage2, Device, "VK_KHR_copy_commands2";
    "vkCmdCopyBufferToImage2KHR" => copy2::cmd_copy_buffer_to_image2 as PFN_vkCmdCopyBufferToImage2, Device, "VK_KHR_copy_commands2";
    "vkCmdCopyImageToBuffer2" => copy2::cmd_copy_image_to_buffer2 as PFN_vkCmdCopyImageToBuffer2, Device, "VK_KHR_copy_commands2";
    "vkCmdCopyImageToBuffer2KHR" => copy2::cmd_copy_image_to_buffer2 as PFN_vkCmdCopyImageToBuffer2, Device, "VK_KHR_copy_commands2";
    "vkCmdBlitImage2" => copy2::cmd_blit_image2 as PFN_vkCmdBlitImage2, Device, "VK_KHR_copy_commands2";
    "vkCmdBlitImage2KHR" => copy2::cmd_blit_image2 as PFN_vkCmdBlitImage2, Device, "VK_KHR_copy_commands2";
    "vkCmdResolveImage2" => copy2::cmd_resolve_image2 as PFN_vkCmdResolveImage2, Device, "VK_KHR_copy_commands2";
    "vkCmdResolveImage2KHR" => copy2::cmd_resolve_image2 as PFN_vkCmdResolveImage2, Device, "VK_KHR_copy_commands2";
    // Private data (`entry::private_data`).
    "vkCreatePrivateDataSlot" => private_data::create_private_data_slot as PFN_vkCreatePrivateDataSlot, Device, "VK_EXT_private_data";
    "vkCreatePrivateDataSlotEXT" => private_data::create_private_data_slot as PFN_vkCreatePrivateDataSlot, Device, "VK_EXT_private_data";
    "vkDestroyPrivateDataSlot" => private_data::destroy_private_data_slot as PFN_vkDestroyPrivateDataSlot, Device, "VK_EXT_private_data";
    "vkDestroyPrivateDataSlotEXT" => private_data::destroy_private_data_slot as PFN_vkDestroyPrivateDataSlot, Device, "VK_EXT_private_data";
    "vkSetPrivateData" => private_data::set_private_data as PFN_vkSetPrivateData, Device, "VK_EXT_private_data";
    "vkSetPrivateDataEXT" => private_data::set_private_data as PFN_vkSetPrivateData, Device, "VK_EXT_private_data";
    "vkGetPrivateData" => private_data::get_private_data as PFN_vkGetPrivateData, Device, "VK_EXT_private_data";
    "vkGetPrivateDataEXT" => private_data::get_private_data as PFN_vkGetPrivateData, Device, "VK_EXT_private_data";
    // Memory requirements from create infos (`entry::maintenance4`).
    "vkGetDeviceBufferMemoryRequirements" => maintenance4::get_device_buffer_memory_requirements as PFN_vkGetDeviceBufferMemoryRequirements, Device, "VK_KHR_maintenance4";
    "vkGetDeviceBufferMemoryRequirementsKHR" => maintenance4::get_device_buffer_memory_requirements as PFN_vkGetDeviceBufferMemoryRequirements, Device, "VK_KHR_maintenance4";
    "vkGetDeviceImageMemoryRequirements" => maintenance4::get_device_image_memory_requirements as PFN_vkGetDeviceImageMemoryRequirements, Device, "VK_KHR_maintenance4";
    "vkGetDeviceImageMemoryRequirementsKHR" => maintenance4::get_device_image_memory_requirements as PFN_vkGetDeviceImageMemoryRequirements, Device, "VK_KHR_maintenance4";
    "vkGetDeviceImageSparseMemoryRequirements" => maintenance4::get_device_image_sparse_memory_requirements as PFN_vkGetDeviceImageSparseMemoryRequirements, Device, "VK_KHR_maintenance4";
    "vkGetDeviceImageSparseMemoryRequirementsKHR" => maintenance4::get_device_image_sparse_memory_requirements as PFN_vkGetDeviceImageSparseMemoryRequirements, Device, "VK_KHR_maintenance4";
    "vkCmdSetEvent" => command::cmd_set_event as PFN_vkCmdSetEvent, Device;
    "vkCmdResetEvent" => command::cmd_reset_event as PFN_vkCmdResetEvent, Device;
    "vkCmdWaitEvents" => command::cmd_wait_events as PFN_vkCmdWaitEvents, Device;
    "vkCmdExecuteCommands" => command::cmd_execute_commands as PFN_vkCmdExecuteCommands, Device;

    "vkCreateAccelerationStructureKHR" => accel::create_acceleration_structure as PFN_vkCreateAccelerationStructureKHR, Device, "VK_KHR_acceleration_structure";
    "vkDestroyAccelerationStructureKHR" => accel::destroy_acceleration_structure as PFN_vkDestroyAccelerationStructureKHR, Device, "VK_KHR_acceleration_structure";
    "vkGetAccelerationStructureDeviceAddressKHR" => accel::get_acceleration_structure_device_address as PFN_vkGetAccelerationStructureDeviceAddressKHR, Device, "VK_KHR_acceleration_structure";
    "vkGetAccelerationStructureBuildSizesKHR" => accel::get_acceleration_structure_build_sizes as PFN_vkGetAccelerationStructureBuildSizesKHR, Device, "VK_KHR_acceleration_structure";
    "vkCmdBuildAccelerationStructuresKHR" => accel::cmd_build_acceleration_structures as PFN_vkCmdBuildAccelerationStructuresKHR, Device, "VK_KHR_acceleration_structure";
    "vkCmdCopyAccelerationStructureKHR" => accel::cmd_copy_acceleration_structure as PFN_vkCmdCopyAccelerationStructureKHR, Device, "VK_KHR_acceleration_structure";
    "vkBuildAccelerationStructuresKHR" => accel::build_acceleration_structures as PFN_vkBuildAccelerationStructuresKHR, Device, "VK_KHR_acceleration_structure";
    "vkCmdCopyAccelerationStructureToMemoryKHR" => accel::cmd_copy_acceleration_structure_to_memory as PFN_vkCmdCopyAccelerationStructureToMemoryKHR, Device, "VK_KHR_acceleration_structure";
    "vkCmdCopyMemoryToAccelerationStructureKHR" => accel::cmd_copy_memory_to_acceleration_structure as PFN_vkCmdCopyMemoryToAccelerationStructureKHR, Device, "VK_KHR_acceleration_structure";
    "vkCopyAccelerationStructureKHR" => accel::copy_acceleration_structure as PFN_vkCopyAccelerationStructureKHR, Device, "VK_KHR_acceleration_structure";
    "vkCopyAccelerationStructureToMemoryKHR" => accel::copy_acceleration_structure_to_memory as PFN_vkCopyAccelerationStructureToMemoryKHR, Device, "VK_KHR_acceleration_structure";
    "vkCopyMemoryToAccelerationStructureKHR" => accel::copy_memory_to_acceleration_structure as PFN_vkCopyMemoryToAccelerationStructureKHR, Device, "VK_KHR_acceleration_structure";
    "vkCmdWriteAccelerationStructuresPropertiesKHR" => query::cmd_write_acceleration_structures_properties as PFN_vkCmdWriteAccelerationStructuresPropertiesKHR, Device, "VK_KHR_acceleration_structure";
    "vkWriteAccelerationStructuresPropertiesKHR" => query::write_acceleration_structures_properties as PFN_vkWriteAccelerationStructuresPropertiesKHR, Device, "VK_KHR_acceleration_structure";
    "vkGetDeviceAccelerationStructureCompatibilityKHR" => accel::get_device_acceleration_structure_compatibility as PFN_vkGetDeviceAccelerationStructureCompatibilityKHR, Device, "VK_KHR_acceleration_structure";

    "vkCreateQueryPool" => query::create_query_pool as PFN_vkCreateQueryPool, Device;
    "vkDestroyQueryPool" => query::destroy_query_pool as PFN_vkDestroyQueryPool, Device;
    "vkResetQueryPool" => query::reset_query_pool as PFN_vkResetQueryPool, Device;
    "vkGetQueryPoolResults" => query::get_query_pool_results as PFN_vkGetQueryPoolResults, Device;
    "vkCmdResetQueryPool" => query::cmd_reset_query_pool as PFN_vkCmdResetQueryPool, Device;
    "vkCmdBeginQuery" => query::cmd_begin_query as PFN_vkCmdBeginQuery, Device;
    "vkCmdEndQuery" => query::cmd_end_query as PFN_vkCmdEndQuery, Device;
    "vkCmdWriteTimestamp" => query::cmd_write_timestamp as PFN_vkCmdWriteTimestamp, Device;
    "vkCmdCopyQueryPoolResults" => query::cmd_copy_query_pool_results as PFN_vkCmdCopyQueryPoolResults, Device;

    "vkCreateDeferredOperationKHR" => deferred::create_deferred_operation as PFN_vkCreateDeferredOperationKHR, Device, "VK_KHR_deferred_host_operations";
    "vkDestroyDeferredOperationKHR" => deferred::destroy_deferred_operation as PFN_vkDestroyDeferredOperationKHR, Device, "VK_KHR_deferred_host_operations";
    "vkGetDeferredOperationMaxConcurrencyKHR" => deferred::get_deferred_operation_max_concurrency as PFN_vkGetDeferredOperationMaxConcurrencyKHR, Device, "VK_KHR_deferred_host_operations";
    "vkGetDeferredOperationResultKHR" => deferred::get_deferred_operation_result as PFN_vkGetDeferredOperationResultKHR, Device, "VK_KHR_deferred_host_operations";
    "vkDeferredOperationJoinKHR" => deferred::deferred_operation_join as PFN_vkDeferredOperationJoinKHR, Device, "VK_KHR_deferred_host_operations";

    // Window-system integration (`entry::wsi`).
    "vkCreateXcbSurfaceKHR" => wsi::surface::create_xcb_surface as PFN_vkCreateXcbSurfaceKHR, Instance;
    "vkCreateXlibSurfaceKHR" => wsi::surface::create_xlib_surface as PFN_vkCreateXlibSurfaceKHR, Instance;
    "vkCreateHeadlessSurfaceEXT" => wsi::surface::create_headless_surface as PFN_vkCreateHeadlessSurfaceEXT, Instance;
    "vkDestroySurfaceKHR" => wsi::surface::destroy_surface as PFN_vkDestroySurfaceKHR, Instance;
    "vkGetPhysicalDeviceSurfaceSupportKHR" => wsi::surface::get_physical_device_surface_support as PFN_vkGetPhysicalDeviceSurfaceSupportKHR, Physical;
    "vkGetPhysicalDeviceSurfaceCapabilitiesKHR" => wsi::surface::get_physical_device_surface_capabilities as PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR, Physical;
    "vkGetPhysicalDeviceSurfaceCapabilities2KHR" => wsi::surface::get_physical_device_surface_capabilities2 as PFN_vkGetPhysicalDeviceSurfaceCapabilities2KHR, Physical;
    "vkGetPhysicalDeviceSurfaceFormatsKHR" => wsi::surface::get_physical_device_surface_formats as PFN_vkGetPhysicalDeviceSurfaceFormatsKHR, Physical;
    "vkGetPhysicalDeviceSurfaceFormats2KHR" => wsi::surface::get_physical_device_surface_formats2 as PFN_vkGetPhysicalDeviceSurfaceFormats2KHR, Physical;
    "vkGetPhysicalDeviceSurfacePresentModesKHR" => wsi::surface::get_physical_device_surface_present_modes as PFN_vkGetPhysicalDeviceSurfacePresentModesKHR, Physical;
    "vkGetPhysicalDevicePresentRectanglesKHR" => wsi::surface::get_physical_device_present_rectangles as PFN_vkGetPhysicalDevicePresentRectanglesKHR, Physical;
    "vkGetPhysicalDeviceXcbPresentationSupportKHR" => wsi::surface::get_physical_device_xcb_presentation_support as PFN_vkGetPhysicalDeviceXcbPresentationSupportKHR, Physical;
    "vkGetPhysicalDeviceXlibPresentationSupportKHR" => wsi::surface::get_physical_device_xlib_presentation_support as PFN_vkGetPhysicalDeviceXlibPresentationSupportKHR, Physical;
    "vkCreateSwapchainKHR" => wsi::swapchain::create_swapchain as PFN_vkCreateSwapchainKHR, Device, "VK_KHR_swapchain";
    "vkDestroySwapchainKHR" => wsi::swapchain::destroy_swapchain as PFN_vkDestroySwapchainKHR, Device, "VK_KHR_swapchain";
    "vkGetSwapchainImagesKHR" => wsi::swapchain::get_swapchain_images as PFN_vkGetSwapchainImagesKHR, Device, "VK_KHR_swapchain";
    "vkAcquireNextImageKHR" => wsi::swapchain::acquire_next_image as PFN_vkAcquireNextImageKHR, Device, "VK_KHR_swapchain";
    "vkAcquireNextImage2KHR" => wsi::swapchain::acquire_next_image2 as PFN_vkAcquireNextImage2KHR, Device, "VK_KHR_swapchain";
    "vkQueuePresentKHR" => wsi::swapchain::queue_present as PFN_vkQueuePresentKHR, Device, "VK_KHR_swapchain";
    "vkGetDeviceGroupPresentCapabilitiesKHR" => wsi::swapchain::get_device_group_present_capabilities as PFN_vkGetDeviceGroupPresentCapabilitiesKHR, Device, "VK_KHR_swapchain";
    "vkGetDeviceGroupSurfacePresentModesKHR" => wsi::swapchain::get_device_group_surface_present_modes as PFN_vkGetDeviceGroupSurfacePresentModesKHR, Device, "VK_KHR_swapchain";

    // Ray-tracing pipelines (`entry::rtpipe`, offered only when switched on: `caps::rtpipe`).
    "vkCreateRayTracingPipelinesKHR" => rtpipe::create_ray_tracing_pipelines as PFN_vkCreateRayTracingPipelinesKHR, Device, "VK_KHR_ray_tracing_pipeline";
    "vkGetRayTracingShaderGroupHandlesKHR" => rtpipe::get_ray_tracing_shader_group_handles as PFN_vkGetRayTracingShaderGroupHandlesKHR, Device, "VK_KHR_ray_tracing_pipeline";
    "vkGetRayTracingCaptureReplayShaderGroupHandlesKHR" => rtpipe::get_ray_tracing_capture_replay_shader_group_handles as PFN_vkGetRayTracingCaptureReplayShaderGroupHandlesKHR, Device, "VK_KHR_ray_tracing_pipeline";
    "vkGetRayTracingShaderGroupStackSizeKHR" => rtpipe::get_ray_tracing_shader_group_stack_size as PFN_vkGetRayTracingShaderGroupStackSizeKHR, Device, "VK_KHR_ray_tracing_pipeline";
    "vkCmdSetRayTracingPipelineStackSizeKHR" => rtpipe::cmd_set_ray_tracing_pipeline_stack_size as PFN_vkCmdSetRayTracingPipelineStackSizeKHR, Device, "VK_KHR_ray_tracing_pipeline";
    "vkCmdTraceRaysKHR" => rtpipe::cmd_trace_rays as PFN_vkCmdTraceRaysKHR, Device, "VK_KHR_ray_tracing_pipeline";
    "vkCmdTraceRaysIndirectKHR" => rtpipe::cmd_trace_rays_indirect as PFN_vkCmdTraceRaysIndirectKHR, Device, "VK_KHR_ray_tracing_pipeline";
    // Needs VK_KHR_ray_tracing_maintenance1 too; listed under the pipeline extension so it
    // is never found while pipelines are switched off.
    "vkCmdTraceRaysIndirect2KHR" => rtpipe::cmd_trace_rays_indirect2 as PFN_vkCmdTraceRaysIndirect2KHR, Device, "VK_KHR_ray_tracing_pipeline";

    // Not a Vulkan command: the test hook of `entry::debug`.
    "vkDebugInjectPanicVORTEX" => debug::inject_panic as PFN_vkDeviceWaitIdle, Device;
}

/// Looks a command up by name.
pub fn lookup(name: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.name == name)
}

/// Device extensions whose commands Vulkan 1.3 made core: a device that speaks 1.3 answers
/// their core names (no vendor suffix) without the extension; the suffixed names still need it.
pub const PROMOTED_TO_13: &[&str] = &[
    "VK_KHR_synchronization2",
    "VK_KHR_copy_commands2",
    "VK_EXT_private_data",
    "VK_KHR_maintenance4",
    "VK_KHR_dynamic_rendering",
    "VK_EXT_extended_dynamic_state",
    "VK_EXT_extended_dynamic_state2",
];

/// Whether `e` is a core command of a device of version `api` (whatever extensions it enabled).
pub fn core_at(e: &Entry, api: u32) -> bool {
    let suffixed = e.name.ends_with("KHR") || e.name.ends_with("EXT");
    match e.ext {
        None => true,
        Some(ext) => api >= vk::API_VERSION_1_3 && !suffixed && PROMOTED_TO_13.contains(&ext),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for e in ENTRIES {
            assert!(seen.insert(e.name), "{} listed twice", e.name);
        }
    }

    /// ash's dispatch tables name every command a compute + ray-query application may ask
    /// for; each must be implemented or deliberately absent.
    #[test]
    fn core_compute_commands_are_all_present() {
        let mut missing = Vec::new();
        let mut check = |name: &std::ffi::CStr| {
            let n = name.to_str().unwrap();
            if lookup(n).is_none() && !DELIBERATELY_ABSENT.iter().any(|p| n.starts_with(p) || n == *p) {
                missing.push(n.to_string());
            }
            std::ptr::null()
        };
        let _ = ash::DeviceFnV1_0::load(&mut check);
        let _ = ash::DeviceFnV1_1::load(&mut check);
        let _ = ash::DeviceFnV1_2::load(&mut check);
        let _ = ash::DeviceFnV1_3::load(&mut check);
        let _ = ash::InstanceFnV1_3::load(&mut check);
        let _ = ash::InstanceFnV1_0::load(&mut check);
        let _ = ash::InstanceFnV1_1::load(&mut check);
        let _ = ash::khr::deferred_host_operations::DeviceFn::load(&mut check);
        let _ = ash::khr::acceleration_structure::DeviceFn::load(&mut check);
        let _ = ash::khr::ray_tracing_pipeline::DeviceFn::load(&mut check);
        let _ = ash::khr::ray_tracing_maintenance1::DeviceFn::load(&mut check);
        assert!(missing.is_empty(), "not implemented and not listed as absent: {missing:?}");
    }

    /// Commands this compute-only device does not offer, each with the reason.
    const DELIBERATELY_ABSENT: &[&str] = &[
        // Indirect AS builds: accelerationStructureIndirectBuild is not offered.
        "vkCmdBuildAccelerationStructuresIndirectKHR",
        // YCbCr, descriptor update templates, device groups.
        "vkCreateSamplerYcbcrConversion",
        "vkDestroySamplerYcbcrConversion",
        "vkCreateDescriptorUpdateTemplate",
        "vkDestroyDescriptorUpdateTemplate",
        "vkUpdateDescriptorSetWithTemplate",
        "vkGetDeviceGroupPeerMemoryFeatures",
        "vkCmdSetDeviceMask",
    ];
}
