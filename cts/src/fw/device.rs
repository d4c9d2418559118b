//! The per-worker Vulkan state, made like dEQP's default device: one instance, the first
//! physical device, the extensions the ray-query tests need (whenever advertised) and every
//! feature the device reports in the core, acceleration-structure and ray-query feature
//! structures (robust buffer access off), one queue from the first GRAPHICS|COMPUTE family
//! (else the first COMPUTE family).

use crate::case::{TestError, TestResult, VkCheck};
use crate::fw::shader::ShaderCache;
use ash::{khr, vk};
use std::collections::HashSet;
use std::ffi::{CStr, CString};
use vortex_examples::icd::{restrict_loader_to, Icd};

/// Device extensions enabled when the device advertises them (dEQP enables every
/// advertised extension; these are the ones the ported cases can use).
const WANTED_EXTENSIONS: [&CStr; 9] = [
    khr::acceleration_structure::NAME,
    khr::ray_query::NAME,
    khr::deferred_host_operations::NAME,
    khr::buffer_device_address::NAME,
    ash::ext::descriptor_indexing::NAME,
    khr::spirv_1_4::NAME,
    khr::shader_float_controls::NAME,
    khr::portability_subset::NAME,
    ash::ext::robustness2::NAME,
];

/// The features the cases check, as the device reports them.
#[derive(Clone, Debug, Default)]
pub struct Caps {
    pub acceleration_structure: bool,
    pub acceleration_structure_host_commands: bool,
    pub ray_query: bool,
    pub buffer_device_address: bool,
    pub descriptor_indexing: bool,
    pub sparse_binding: bool,
    pub null_descriptor: bool,
}

/// The Vulkan state one worker process shares between the cases it runs.
pub struct Env {
    _entry: ash::Entry,
    pub instance: ash::Instance,
    pub physical: vk::PhysicalDevice,
    pub device: ash::Device,
    pub accel: khr::acceleration_structure::Device,
    pub queue: vk::Queue,
    pub family: u32,
    pub props: vk::PhysicalDeviceProperties,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    pub min_scratch_alignment: u64,
    pub caps: Caps,
    extensions: HashSet<String>,
    pool: vk::CommandPool,
    pub shaders: ShaderCache,
}

impl Drop for Env {
    fn drop(&mut self) {
        // SAFETY: every resource of a case is dropped before the case returns.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

fn cstr(bytes: &[std::ffi::c_char]) -> String {
    // SAFETY: Vulkan name arrays are NUL-terminated within their length.
    unsafe { CStr::from_ptr(bytes.as_ptr()) }.to_string_lossy().into_owned()
}

impl Env {
    /// Points the loader at `icd` and creates the default device. Must run before any
    /// other thread starts (it writes the environment).
    pub fn new(icd: &Icd) -> Result<Env, String> {
        let manifest = icd.manifest().map_err(|e| e.to_string())?;
        restrict_loader_to(&manifest);
        // SAFETY: loading the system loader; nothing else in the process uses it yet.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("cannot load libvulkan.so.1: {e}"))?;
        // SAFETY (rest of this function): plain Vulkan calls on handles created here; every
        // struct passed outlives the call that reads it.
        let instance_version =
            unsafe { entry.try_enumerate_instance_version() }.ok().flatten().unwrap_or(vk::API_VERSION_1_0);
        let api = instance_version.min(vk::API_VERSION_1_3);
        let app =
            vk::ApplicationInfo::default().application_name(c"vortex-cts").engine_name(c"vortex-cts").api_version(api);
        let instance =
            unsafe { entry.create_instance(&vk::InstanceCreateInfo::default().application_info(&app), None) }
                .map_err(|e| format!("vkCreateInstance failed: {e:?} (manifest {})", manifest.display()))?;
        let physicals = unsafe { instance.enumerate_physical_devices() }
            .map_err(|e| format!("vkEnumeratePhysicalDevices failed: {e:?}"))?;
        let Some(&physical) = physicals.first() else {
            unsafe { instance.destroy_instance(None) };
            return Err(format!("the driver of {} exposes no physical device", manifest.display()));
        };
        let props = unsafe { instance.get_physical_device_properties(physical) };
        if props.api_version < vk::API_VERSION_1_2 {
            unsafe { instance.destroy_instance(None) };
            return Err("the device reports Vulkan < 1.2; the ported cases need 1.2".into());
        }
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        let available: HashSet<String> = unsafe { instance.enumerate_device_extension_properties(physical) }
            .unwrap_or_default()
            .iter()
            .map(|e| cstr(&e.extension_name))
            .collect();
        let has = |name: &CStr| available.contains(name.to_str().unwrap_or(""));
        let enabled: Vec<CString> = WANTED_EXTENSIONS.iter().filter(|n| has(n)).map(|n| CString::from(*n)).collect();
        let enabled_ptrs: Vec<*const std::ffi::c_char> = enabled.iter().map(|n| n.as_ptr()).collect();

        // Query every feature the chain can hold, then enable exactly what was reported.
        let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut accel_f = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default();
        let mut rq_f = vk::PhysicalDeviceRayQueryFeaturesKHR::default();
        let mut rob2 = vk::PhysicalDeviceRobustness2FeaturesEXT::default();
        let has_accel = has(khr::acceleration_structure::NAME);
        let has_rq = has(khr::ray_query::NAME);
        let has_rob2 = has(ash::ext::robustness2::NAME);
        let core = {
            let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut v11).push_next(&mut v12);
            if has_accel {
                f2 = f2.push_next(&mut accel_f);
            }
            if has_rq {
                f2 = f2.push_next(&mut rq_f);
            }
            if has_rob2 {
                f2 = f2.push_next(&mut rob2);
            }
            unsafe { instance.get_physical_device_features2(physical, &mut f2) };
            f2.features
        };
        let null_descriptor = rob2.null_descriptor == vk::TRUE;
        let caps = Caps {
            acceleration_structure: has_accel && accel_f.acceleration_structure == vk::TRUE,
            acceleration_structure_host_commands: has_accel && accel_f.acceleration_structure_host_commands == vk::TRUE,
            ray_query: has_rq && rq_f.ray_query == vk::TRUE,
            buffer_device_address: v12.buffer_device_address == vk::TRUE,
            descriptor_indexing: v12.descriptor_indexing == vk::TRUE,
            sparse_binding: core.sparse_binding == vk::TRUE,
            null_descriptor,
        };
        // dEQP's default device turns robustness off.
        let mut core_enabled = core;
        core_enabled.robust_buffer_access = vk::FALSE;
        let mut v11e = v11;
        v11e.p_next = std::ptr::null_mut();
        let mut v12e = v12;
        v12e.p_next = std::ptr::null_mut();
        let mut accel_e = accel_f;
        accel_e.p_next = std::ptr::null_mut();
        let mut rq_e = rq_f;
        rq_e.p_next = std::ptr::null_mut();

        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let universal = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE;
        let family = families
            .iter()
            .position(|f| f.queue_flags.contains(universal) && f.queue_count > 0)
            .or_else(|| families.iter().position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE)))
            .ok_or("the device has no compute queue family")? as u32;
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
        let mut f2 =
            vk::PhysicalDeviceFeatures2::default().features(core_enabled).push_next(&mut v11e).push_next(&mut v12e);
        if has_accel {
            f2 = f2.push_next(&mut accel_e);
        }
        if has_rq {
            f2 = f2.push_next(&mut rq_e);
        }
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&enabled_ptrs)
            .push_next(&mut f2);
        let device = match unsafe { instance.create_device(physical, &info, None) } {
            Ok(d) => d,
            Err(e) => {
                unsafe { instance.destroy_instance(None) };
                return Err(format!("vkCreateDevice failed: {e:?}"));
            }
        };
        let queue = unsafe { device.get_device_queue(family, 0) };
        let pool = unsafe {
            device.create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
        }
        .map_err(|e| format!("vkCreateCommandPool failed: {e:?}"))?;
        let mut as_props = vk::PhysicalDeviceAccelerationStructurePropertiesKHR::default();
        if has_accel {
            let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut as_props);
            unsafe { instance.get_physical_device_properties2(physical, &mut p2) };
        }
        let accel = khr::acceleration_structure::Device::new(&instance, &device);
        Ok(Env {
            _entry: entry,
            instance,
            physical,
            device,
            accel,
            queue,
            family,
            props,
            memory,
            min_scratch_alignment: u64::from(as_props.min_acceleration_structure_scratch_offset_alignment.max(1)),
            caps,
            extensions: enabled.iter().map(|n| n.to_string_lossy().into_owned()).collect(),
            pool,
            shaders: ShaderCache::new(),
        })
    }

    pub fn has_extension(&self, name: &CStr) -> bool {
        self.extensions.contains(name.to_str().unwrap_or(""))
    }

    /// dEQP's common check for every ray_query case: both extensions, `rayQuery`
    /// (NotSupported when false) and `accelerationStructure` (a test error when false).
    pub fn require_ray_query(&self) -> TestResult {
        if !self.has_extension(khr::acceleration_structure::NAME) {
            crate::not_supported!("VK_KHR_acceleration_structure is not supported");
        }
        if !self.has_extension(khr::ray_query::NAME) {
            crate::not_supported!("VK_KHR_ray_query is not supported");
        }
        if !self.caps.ray_query {
            crate::not_supported!("Requires VkPhysicalDeviceRayQueryFeaturesKHR.rayQuery");
        }
        if !self.caps.acceleration_structure {
            crate::fail!("TestError: VK_KHR_ray_query requires VkPhysicalDeviceAccelerationStructureFeaturesKHR.accelerationStructure");
        }
        Ok(())
    }

    /// A memory type allowed by `bits` with all of `flags`.
    pub fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> Option<u32> {
        let m = &self.memory;
        (0..m.memory_type_count)
            .find(|&i| bits & (1 << i) != 0 && m.memory_types[i as usize].property_flags.contains(flags))
    }

    /// A fresh primary command buffer, recording.
    pub fn begin(&self) -> TestResult<vk::CommandBuffer> {
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool belongs to this device and is used from this thread only.
        let cmd = unsafe { self.device.allocate_command_buffers(&alloc) }.vk("vkAllocateCommandBuffers")?[0];
        unsafe { self.device.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default()) }
            .vk("vkBeginCommandBuffer")?;
        Ok(cmd)
    }

    /// Ends `cmd`, submits it with a fence, waits, and frees it (dEQP's
    /// `submitCommandsAndWait`).
    pub fn submit_wait(&self, cmd: vk::CommandBuffer) -> TestResult {
        // SAFETY: cmd came from `begin`; it is freed only after the fence signalled (or,
        // on a wait error, leaked).
        unsafe {
            self.device.end_command_buffer(cmd).vk("vkEndCommandBuffer")?;
            let fence = self.device.create_fence(&vk::FenceCreateInfo::default(), None).vk("vkCreateFence")?;
            let cmds = [cmd];
            let submit = vk::SubmitInfo::default().command_buffers(&cmds);
            if let Err(e) = self.device.queue_submit(self.queue, &[submit], fence) {
                self.device.destroy_fence(fence, None);
                return Err(TestError::Fail(format!("vkQueueSubmit failed: {e:?}")));
            }
            self.device.wait_for_fences(&[fence], true, u64::MAX).vk("vkWaitForFences")?;
            self.device.destroy_fence(fence, None);
            self.device.free_command_buffers(self.pool, &cmds);
        }
        Ok(())
    }

    /// Records with `f` into a fresh command buffer, submits and waits.
    pub fn run_once(&self, f: impl FnOnce(vk::CommandBuffer) -> TestResult) -> TestResult {
        let cmd = self.begin()?;
        f(cmd)?;
        self.submit_wait(cmd)
    }

    /// A global memory barrier `src_access` -> `dst_access` between the given stages.
    pub fn barrier(
        &self,
        cmd: vk::CommandBuffer,
        src_stage: vk::PipelineStageFlags,
        src_access: vk::AccessFlags,
        dst_stage: vk::PipelineStageFlags,
        dst_access: vk::AccessFlags,
    ) {
        let b = vk::MemoryBarrier::default().src_access_mask(src_access).dst_access_mask(dst_access);
        // SAFETY: cmd is recording on this device.
        unsafe {
            self.device.cmd_pipeline_barrier(cmd, src_stage, dst_stage, vk::DependencyFlags::empty(), &[b], &[], &[])
        }
    }

    /// The GLSL compute source compiled to SPIR-V 1.4 (cached on disk).
    pub fn glsl(&self, source: &str) -> TestResult<Vec<u32>> {
        self.shaders.glsl(source).map_err(TestError::Fail)
    }

    /// SPIR-V assembly assembled for SPIR-V 1.4 (cached on disk).
    pub fn spirv_asm(&self, source: &str) -> TestResult<Vec<u32>> {
        self.shaders.spirv_asm(source).map_err(TestError::Fail)
    }
}
