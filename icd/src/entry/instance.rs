//! Instance and physical-device entry points.

use crate::caps;
use crate::handle::{disp, disp_destroy, dispatchable, guard_result, guard_void};
use crate::util::{cstr, enumerate, enumerate_with, slice};
use ash::vk;
use std::ffi::c_char;
use vortex_runtime::device::Gpu;

pub struct Instance {
    pub physical: vk::PhysicalDevice,
    pub api_version: u32,
}

pub struct PhysicalDevice {
    pub gpu: Gpu,
}

pub unsafe extern "system" fn enumerate_instance_version(p_api_version: *mut u32) -> vk::Result {
    guard_result("vkEnumerateInstanceVersion", || {
        // SAFETY: the caller passes a valid pointer.
        unsafe { *p_api_version = caps::API_VERSION };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn enumerate_instance_extension_properties(
    p_layer_name: *const c_char,
    p_count: *mut u32,
    p_props: *mut vk::ExtensionProperties,
) -> vk::Result {
    guard_result("vkEnumerateInstanceExtensionProperties", || {
        if !p_layer_name.is_null() {
            return Err(vk::Result::ERROR_LAYER_NOT_PRESENT);
        }
        // SAFETY: count/array per the two-call idiom.
        Ok(unsafe { enumerate(&caps::extension_properties(caps::INSTANCE_EXTENSIONS), p_count, p_props) })
    })
}

pub unsafe extern "system" fn enumerate_instance_layer_properties(
    p_count: *mut u32,
    p_props: *mut vk::LayerProperties,
) -> vk::Result {
    // SAFETY: count/array per the two-call idiom.
    guard_result("vkEnumerateInstanceLayerProperties", || Ok(unsafe { enumerate(&[], p_count, p_props) }))
}

pub unsafe extern "system" fn create_instance(
    p_info: *const vk::InstanceCreateInfo<'_>,
    _alloc: *const vk::AllocationCallbacks<'_>,
    p_instance: *mut vk::Instance,
) -> vk::Result {
    crate::init_logging();
    guard_result("vkCreateInstance", || {
        // SAFETY: valid create info per the API contract.
        let info = unsafe { &*p_info };
        let names = unsafe { slice(info.pp_enabled_extension_names, info.enabled_extension_count) };
        for &n in names {
            // SAFETY: enabled extension names are C strings.
            let n = unsafe { cstr(n) };
            if !caps::INSTANCE_EXTENSIONS.iter().any(|(e, _)| *e == n) {
                tracing::warn!("vkCreateInstance: extension {n} is not supported");
                return Err(vk::Result::ERROR_EXTENSION_NOT_PRESENT);
            }
        }
        let api_version = if info.p_application_info.is_null() {
            vk::API_VERSION_1_0
        } else {
            // SAFETY: non-null application info pointer.
            unsafe { (*info.p_application_info).api_version }
        };
        let gpu = Gpu::from_env().map_err(|e| {
            tracing::error!("vkCreateInstance: {e}");
            eprintln!("vortex: {e}");
            vk::Result::ERROR_INITIALIZATION_FAILED
        })?;
        // Ray-tracing pipelines are built on the RT unit's candidate loop only.
        let rt_unit = gpu.config.rt_arch == vortex_model::config::RtArch::Rtu;
        crate::caps::rtpipe::set_enabled(gpu.config.rt_pipeline && rt_unit);
        let physical: vk::PhysicalDevice = dispatchable(PhysicalDevice { gpu });
        // SAFETY: valid output pointer.
        unsafe { *p_instance = dispatchable(Instance { physical, api_version }) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_instance(instance: vk::Instance, _alloc: *const vk::AllocationCallbacks<'_>) {
    guard_void("vkDestroyInstance", || {
        // SAFETY: a live instance handle (or null).
        if let Ok(i) = unsafe { disp::<_, Instance>(instance) } {
            let phys = i.physical;
            // SAFETY: the physical device is owned by the instance, destroyed with it.
            unsafe {
                disp_destroy::<_, PhysicalDevice>(phys);
                disp_destroy::<_, Instance>(instance);
            }
        }
    })
}

pub unsafe extern "system" fn enumerate_physical_devices(
    instance: vk::Instance,
    p_count: *mut u32,
    p_devices: *mut vk::PhysicalDevice,
) -> vk::Result {
    guard_result("vkEnumeratePhysicalDevices", || {
        // SAFETY: live instance handle.
        let i = unsafe { disp::<_, Instance>(instance)? };
        // SAFETY: count/array per the two-call idiom.
        Ok(unsafe { enumerate(&[i.physical], p_count, p_devices) })
    })
}

pub unsafe extern "system" fn enumerate_physical_device_groups(
    instance: vk::Instance,
    p_count: *mut u32,
    p_groups: *mut vk::PhysicalDeviceGroupProperties<'_>,
) -> vk::Result {
    guard_result("vkEnumeratePhysicalDeviceGroups", || {
        // SAFETY: live instance handle.
        let i = unsafe { disp::<_, Instance>(instance)? };
        // SAFETY: count/array per the two-call idiom; the caller's structs keep their sType.
        Ok(unsafe {
            enumerate_with(1, p_count, p_groups, |_, g| {
                g.physical_device_count = 1;
                g.physical_devices[0] = i.physical;
                g.subset_allocation = vk::FALSE;
            })
        })
    })
}

fn gpu<'a>(pd: vk::PhysicalDevice) -> Result<&'a Gpu, vk::Result> {
    // SAFETY: live physical-device handle.
    Ok(&unsafe { disp::<_, PhysicalDevice>(pd)? }.gpu)
}

pub unsafe extern "system" fn get_physical_device_features(
    _pd: vk::PhysicalDevice,
    p: *mut vk::PhysicalDeviceFeatures,
) {
    guard_void("vkGetPhysicalDeviceFeatures", || {
        // SAFETY: valid output pointer.
        unsafe { *p = caps::features10() };
    })
}

pub unsafe extern "system" fn get_physical_device_features2(
    _pd: vk::PhysicalDevice,
    p: *mut vk::PhysicalDeviceFeatures2<'_>,
) {
    // SAFETY: a valid, writable chain starting at `p`.
    guard_void("vkGetPhysicalDeviceFeatures2", || unsafe { caps::fill_features(p.cast()) })
}

pub unsafe extern "system" fn get_physical_device_properties(
    pd: vk::PhysicalDevice,
    p: *mut vk::PhysicalDeviceProperties,
) {
    guard_void("vkGetPhysicalDeviceProperties", || {
        if let Ok(g) = gpu(pd) {
            // SAFETY: valid output pointer.
            unsafe { *p = caps::properties10(g) };
        }
    })
}

pub unsafe extern "system" fn get_physical_device_properties2(
    pd: vk::PhysicalDevice,
    p: *mut vk::PhysicalDeviceProperties2<'_>,
) {
    guard_void("vkGetPhysicalDeviceProperties2", || {
        if let Ok(g) = gpu(pd) {
            // SAFETY: a valid, writable chain starting at `p`.
            unsafe { caps::fill_properties(g, p.cast()) };
        }
    })
}

pub unsafe extern "system" fn get_physical_device_queue_family_properties(
    _pd: vk::PhysicalDevice,
    p_count: *mut u32,
    p_props: *mut vk::QueueFamilyProperties,
) {
    guard_void("vkGetPhysicalDeviceQueueFamilyProperties", || {
        // SAFETY: count/array per the two-call idiom.
        let _ = unsafe { enumerate(&[caps::queue_family()], p_count, p_props) };
    })
}

pub unsafe extern "system" fn get_physical_device_queue_family_properties2(
    _pd: vk::PhysicalDevice,
    p_count: *mut u32,
    p_props: *mut vk::QueueFamilyProperties2<'_>,
) {
    guard_void("vkGetPhysicalDeviceQueueFamilyProperties2", || {
        // SAFETY: count/array per the two-call idiom.
        let _ = unsafe { enumerate_with(1, p_count, p_props, |_, q| q.queue_family_properties = caps::queue_family()) };
    })
}

pub unsafe extern "system" fn get_physical_device_memory_properties(
    _pd: vk::PhysicalDevice,
    p: *mut vk::PhysicalDeviceMemoryProperties,
) {
    // SAFETY: valid output pointer.
    guard_void("vkGetPhysicalDeviceMemoryProperties", || unsafe { *p = caps::memory_properties() })
}

pub unsafe extern "system" fn get_physical_device_memory_properties2(
    _pd: vk::PhysicalDevice,
    p: *mut vk::PhysicalDeviceMemoryProperties2<'_>,
) {
    guard_void("vkGetPhysicalDeviceMemoryProperties2", || {
        let props = caps::memory_properties();
        // SAFETY: valid output pointer and pNext chain.
        unsafe {
            (*p).memory_properties = props;
            caps::budget::fill(&props, (*p).p_next);
        }
    })
}

pub unsafe extern "system" fn get_physical_device_format_properties(
    _pd: vk::PhysicalDevice,
    f: vk::Format,
    p: *mut vk::FormatProperties,
) {
    // SAFETY: valid output pointer.
    guard_void("vkGetPhysicalDeviceFormatProperties", || unsafe { *p = caps::format_properties(f) })
}

pub unsafe extern "system" fn get_physical_device_format_properties2(
    _pd: vk::PhysicalDevice,
    f: vk::Format,
    p: *mut vk::FormatProperties2<'_>,
) {
    guard_void("vkGetPhysicalDeviceFormatProperties2", || {
        // SAFETY: valid output pointer.
        unsafe { (*p).format_properties = caps::format_properties(f) };
    })
}

pub unsafe extern "system" fn get_physical_device_image_format_properties(
    _pd: vk::PhysicalDevice,
    f: vk::Format,
    ty: vk::ImageType,
    tiling: vk::ImageTiling,
    usage: vk::ImageUsageFlags,
    flags: vk::ImageCreateFlags,
    p: *mut vk::ImageFormatProperties,
) -> vk::Result {
    guard_result("vkGetPhysicalDeviceImageFormatProperties", || {
        let r = caps::image_format_properties(f, ty, tiling, usage, flags)?;
        // SAFETY: valid output pointer.
        unsafe { *p = r };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn get_physical_device_image_format_properties2(
    _pd: vk::PhysicalDevice,
    p_info: *const vk::PhysicalDeviceImageFormatInfo2<'_>,
    p: *mut vk::ImageFormatProperties2<'_>,
) -> vk::Result {
    guard_result("vkGetPhysicalDeviceImageFormatProperties2", || {
        // SAFETY: valid input per the API contract.
        let i = unsafe { &*p_info };
        let r = caps::image_format_properties(i.format, i.ty, i.tiling, i.usage, i.flags)?;
        // SAFETY: valid output pointer.
        unsafe { (*p).image_format_properties = r };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn get_physical_device_sparse_image_format_properties(
    _pd: vk::PhysicalDevice,
    _f: vk::Format,
    _ty: vk::ImageType,
    _s: vk::SampleCountFlags,
    _u: vk::ImageUsageFlags,
    _t: vk::ImageTiling,
    p_count: *mut u32,
    _p: *mut vk::SparseImageFormatProperties,
) {
    guard_void("vkGetPhysicalDeviceSparseImageFormatProperties", || {
        if !p_count.is_null() {
            // SAFETY: valid output pointer; sparse images are not supported.
            unsafe { *p_count = 0 };
        }
    })
}

pub unsafe extern "system" fn get_physical_device_sparse_image_format_properties2(
    _pd: vk::PhysicalDevice,
    _i: *const vk::PhysicalDeviceSparseImageFormatInfo2<'_>,
    p_count: *mut u32,
    _p: *mut vk::SparseImageFormatProperties2<'_>,
) {
    guard_void("vkGetPhysicalDeviceSparseImageFormatProperties2", || {
        if !p_count.is_null() {
            // SAFETY: valid output pointer; sparse images are not supported.
            unsafe { *p_count = 0 };
        }
    })
}

pub unsafe extern "system" fn get_physical_device_external_buffer_properties(
    _pd: vk::PhysicalDevice,
    _i: *const vk::PhysicalDeviceExternalBufferInfo<'_>,
    p: *mut vk::ExternalBufferProperties<'_>,
) {
    // SAFETY: valid output pointer; no external memory handle types are supported.
    guard_void("vkGetPhysicalDeviceExternalBufferProperties", || unsafe {
        (*p).external_memory_properties = vk::ExternalMemoryProperties::default()
    })
}

pub unsafe extern "system" fn get_physical_device_external_fence_properties(
    _pd: vk::PhysicalDevice,
    _i: *const vk::PhysicalDeviceExternalFenceInfo<'_>,
    p: *mut vk::ExternalFenceProperties<'_>,
) {
    guard_void("vkGetPhysicalDeviceExternalFenceProperties", || {
        // SAFETY: valid output pointer; no external fence handle types are supported.
        unsafe {
            (*p).export_from_imported_handle_types = vk::ExternalFenceHandleTypeFlags::empty();
            (*p).compatible_handle_types = vk::ExternalFenceHandleTypeFlags::empty();
            (*p).external_fence_features = vk::ExternalFenceFeatureFlags::empty();
        }
    })
}

pub unsafe extern "system" fn get_physical_device_external_semaphore_properties(
    _pd: vk::PhysicalDevice,
    _i: *const vk::PhysicalDeviceExternalSemaphoreInfo<'_>,
    p: *mut vk::ExternalSemaphoreProperties<'_>,
) {
    guard_void("vkGetPhysicalDeviceExternalSemaphoreProperties", || {
        // SAFETY: valid output pointer; no external semaphore handle types are supported.
        unsafe {
            (*p).export_from_imported_handle_types = vk::ExternalSemaphoreHandleTypeFlags::empty();
            (*p).compatible_handle_types = vk::ExternalSemaphoreHandleTypeFlags::empty();
            (*p).external_semaphore_features = vk::ExternalSemaphoreFeatureFlags::empty();
        }
    })
}

pub unsafe extern "system" fn enumerate_device_extension_properties(
    _pd: vk::PhysicalDevice,
    p_layer_name: *const c_char,
    p_count: *mut u32,
    p_props: *mut vk::ExtensionProperties,
) -> vk::Result {
    guard_result("vkEnumerateDeviceExtensionProperties", || {
        if !p_layer_name.is_null() {
            return Err(vk::Result::ERROR_LAYER_NOT_PRESENT);
        }
        // SAFETY: count/array per the two-call idiom.
        Ok(unsafe { enumerate(&caps::extension_properties(&caps::device_extensions()), p_count, p_props) })
    })
}

pub unsafe extern "system" fn enumerate_device_layer_properties(
    _pd: vk::PhysicalDevice,
    p_count: *mut u32,
    p_props: *mut vk::LayerProperties,
) -> vk::Result {
    // SAFETY: count/array per the two-call idiom.
    guard_result("vkEnumerateDeviceLayerProperties", || Ok(unsafe { enumerate(&[], p_count, p_props) }))
}

pub(crate) fn physical_gpu<'a>(pd: vk::PhysicalDevice) -> Result<&'a Gpu, vk::Result> {
    gpu(pd)
}
