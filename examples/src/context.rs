//! Instance, device and queue: the Vulkan state every example starts from.
//!
//! The device is created with the ray-query feature chain (buffer device address,
//! acceleration structures, ray queries) and one compute-capable queue.

use crate::error::{Error, Result, VkResultExt};
use crate::features::{FeatureSet, OPTIONAL_EXTENSIONS};
use crate::icd::{restrict_loader_to, Icd};
use ash::{khr, vk};
use std::ffi::{CStr, FromBytesUntilNulError};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

/// Device extensions the examples need (deferred host operations is required by
/// VK_KHR_acceleration_structure, even though the examples build on the device).
const DEVICE_EXTENSIONS: [&CStr; 3] =
    [khr::acceleration_structure::NAME, khr::ray_query::NAME, khr::deferred_host_operations::NAME];

/// Longest wait for one submission. Generous because a modelled GPU can be slow, but
/// finite so that a hung driver fails the example instead of hanging it.
const FENCE_TIMEOUT: Duration = Duration::from_secs(600);

/// What the examples report about the device they run on.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub name: String,
    pub driver_name: String,
    pub driver_info: String,
    pub api_version: u32,
    pub min_scratch_alignment: u64,
    pub driver_uuid: [u8; 16],
    /// `accelerationStructureHostCommands` (enabled when reported).
    pub host_commands: bool,
    /// `hostQueryReset` (enabled when reported).
    pub host_query_reset: bool,
    /// `VK_KHR_ray_tracing_maintenance1` (enabled when offered): the AS size and
    /// bottom-level-pointer query types.
    pub maintenance1: bool,
    /// `timestampValidBits` of the queue family (0: no timestamps).
    pub timestamp_bits: u32,
    /// Invocations per subgroup, and the subgroup operations compute shaders may use.
    pub subgroup_size: u32,
    pub subgroup_operations: vk::SubgroupFeatureFlags,
    /// The optional features (named as in the Vulkan specification, see
    /// [`crate::features::OPTIONAL_FEATURES`]) the device was created with.
    pub enabled: Vec<&'static str>,
}

impl DeviceInfo {
    pub fn api_version_string(&self) -> String {
        let v = self.api_version;
        format!("{}.{}.{}", vk::api_version_major(v), vk::api_version_minor(v), vk::api_version_patch(v))
    }
}

/// The Vulkan objects shared by every resource. Resources hold an `Rc` to it, so the
/// device outlives them all, and it is not `Send`: one thread records and submits.
pub(crate) struct Shared {
    _entry: ash::Entry,
    instance: ash::Instance,
    pub(crate) device: ash::Device,
    pub(crate) accel: khr::acceleration_structure::Device,
    pub(crate) deferred: khr::deferred_host_operations::Device,
    pub(crate) memory_properties: vk::PhysicalDeviceMemoryProperties,
    physical: vk::PhysicalDevice,
    pub(crate) info: DeviceInfo,
    queue: vk::Queue,
    family: u32,
    command_pool: vk::CommandPool,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: every resource holds an Rc to this, so none is left; waiting for idle
        // makes sure no submission still uses the pool.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(self.command_pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

/// A Vulkan device ready for ray queries, on the driver chosen by an [`Icd`].
pub struct Context {
    pub(crate) shared: Rc<Shared>,
    manifest: PathBuf,
}

impl Context {
    /// Points the loader at `icd`, then creates an instance and a device on the first
    /// physical device that supports ray queries.
    ///
    /// Writes the process environment (see [`restrict_loader_to`]): call it before
    /// starting threads.
    pub fn new(icd: &Icd) -> Result<Self> {
        Self::create(icd, false, false)
    }

    /// Like [`Context::new`], with `robustBufferAccess` enabled, and `robustImageAccess`
    /// too when the device offers `VK_EXT_image_robustness` ([`DeviceInfo::enabled`] names
    /// what was enabled).
    pub fn with_robust_access(icd: &Icd) -> Result<Self> {
        Self::create(icd, false, true)
    }

    /// Like [`Context::new`], and also enables every optional feature (and the extension
    /// providing it) the device supports; [`DeviceInfo::enabled`] lists them.
    pub fn with_optional_features(icd: &Icd) -> Result<Self> {
        Self::create(icd, true, false)
    }

    fn create(icd: &Icd, optional: bool, robust: bool) -> Result<Self> {
        let manifest = icd.manifest()?;
        restrict_loader_to(&manifest);
        // SAFETY: loading the system's Vulkan loader runs its initialisers; nothing else
        // in this process has loaded it with a different environment.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| Error::msg(format!("cannot load the Vulkan loader (libvulkan.so.1): {e}")))?;
        let instance = create_instance(&entry).map_err(|e| {
            Error::msg(format!(
                "{e}: the loader found no usable driver in {} (is it a valid manifest whose library_path loads?)",
                manifest.display()
            ))
        })?;
        // `entry` stays alive past the error path below: dropping the last Entry unloads
        // the loader library, and with it destroy_instance.
        match Self::with_instance(entry.clone(), instance.clone(), optional, robust) {
            Ok(shared) => Ok(Context { shared: Rc::new(shared), manifest }),
            Err(e) => {
                // SAFETY: with_instance destroyed whatever it created from the instance.
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
        }
    }

    fn with_instance(entry: ash::Entry, instance: ash::Instance, optional: bool, robust: bool) -> Result<Shared> {
        let (physical, mut info, family) = pick_physical_device(&instance)?;
        let (features, extensions) =
            if optional { optional_support(&instance, physical) } else { (FeatureSet::default(), Vec::new()) };
        info.enabled = features.names();
        let device = create_device(&instance, physical, family, (&features, robust), &extensions, &mut info)?;
        let pool_info = vk::CommandPoolCreateInfo::default().queue_family_index(family);
        // SAFETY: the device is valid; on failure it is destroyed before returning.
        let command_pool = match unsafe { device.create_command_pool(&pool_info, None) }.vk("vkCreateCommandPool") {
            Ok(pool) => pool,
            Err(e) => {
                unsafe { device.destroy_device(None) };
                return Err(e);
            }
        };
        // SAFETY: plain queries on valid handles.
        let (queue, memory_properties) =
            unsafe { (device.get_device_queue(family, 0), instance.get_physical_device_memory_properties(physical)) };
        let accel = khr::acceleration_structure::Device::new(&instance, &device);
        let deferred = khr::deferred_host_operations::Device::new(&instance, &device);
        Ok(Shared {
            _entry: entry,
            instance,
            device,
            accel,
            deferred,
            memory_properties,
            physical,
            info,
            queue,
            family,
            command_pool,
        })
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.shared.info
    }

    /// The loader manifest of the driver in use.
    pub fn manifest(&self) -> &std::path::Path {
        &self.manifest
    }

    pub fn device(&self) -> &ash::Device {
        &self.shared.device
    }

    /// Records commands with `record` into a fresh command buffer, submits it, and waits
    /// for it to finish.
    pub fn submit_once<R>(&self, record: impl FnOnce(vk::CommandBuffer) -> R) -> Result<R> {
        let cmd = self.begin_commands()?;
        let out = record(cmd);
        self.submit_and_wait(cmd)?;
        Ok(out)
    }

    /// A fresh primary command buffer in the recording state; hand it to
    /// [`Context::submit_and_wait`] when done. Between the two the application may change
    /// what the commands will read: the device reads it when it executes them.
    pub fn begin_commands(&self) -> Result<vk::CommandBuffer> {
        let s = &*self.shared;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(s.command_pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool is used from this thread only (Context is not Send).
        let cmd = unsafe { s.device.allocate_command_buffers(&alloc) }.vk("vkAllocateCommandBuffers")?[0];
        let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: cmd is a fresh primary command buffer.
        if let Err(e) = unsafe { s.device.begin_command_buffer(cmd, &begin) }.vk("vkBeginCommandBuffer") {
            unsafe { s.device.free_command_buffers(s.command_pool, &[cmd]) };
            return Err(e);
        }
        Ok(cmd)
    }

    /// Ends `cmd` (from [`Context::begin_commands`]), submits it, waits for it, and frees it.
    pub fn submit_and_wait(&self, cmd: vk::CommandBuffer) -> Result<()> {
        let s = &*self.shared;
        // SAFETY (this function): the pool, queue and fence are used from this thread only;
        // cmd and fence are freed only when the device is done with them or never got them.
        let release = |fence: Option<vk::Fence>| unsafe {
            s.device.free_command_buffers(s.command_pool, &[cmd]);
            if let Some(fence) = fence {
                s.device.destroy_fence(fence, None);
            }
        };
        if let Err(e) = unsafe { s.device.end_command_buffer(cmd) }.vk("vkEndCommandBuffer") {
            release(None);
            return Err(e);
        }
        let fence = match unsafe { s.device.create_fence(&vk::FenceCreateInfo::default(), None) } {
            Ok(fence) => fence,
            Err(result) => {
                release(None);
                return Err(Error::Vulkan { call: "vkCreateFence", result });
            }
        };
        let cmds = [cmd];
        let submit = vk::SubmitInfo::default().command_buffers(&cmds);
        if let Err(e) = unsafe { s.device.queue_submit(s.queue, &[submit], fence) }.vk("vkQueueSubmit") {
            release(Some(fence));
            return Err(e);
        }
        let timeout = FENCE_TIMEOUT.as_nanos() as u64;
        if let Err(result) = unsafe { s.device.wait_for_fences(&[fence], true, timeout) } {
            // The submission may still be running: leak its command buffer and fence
            // rather than free what the device might still use.
            return Err(match result {
                vk::Result::TIMEOUT => {
                    Error::msg(format!("a submission did not finish within {} s", FENCE_TIMEOUT.as_secs()))
                }
                result => Error::Vulkan { call: "vkWaitForFences", result },
            });
        }
        release(Some(fence));
        Ok(())
    }

    /// The queue every submission of this context goes to.
    pub fn queue(&self) -> vk::Queue {
        self.shared.queue
    }

    /// The queue's family and what it can do.
    pub fn queue_family(&self) -> (u32, vk::QueueFlags) {
        let s = &*self.shared;
        // SAFETY: valid physical device.
        let families = unsafe { s.instance.get_physical_device_queue_family_properties(s.physical) };
        (s.family, families[s.family as usize].queue_flags)
    }

    /// The acceleration-structure entry points of this device.
    pub fn accel(&self) -> &ash::khr::acceleration_structure::Device {
        &self.shared.accel
    }

    pub fn instance(&self) -> &ash::Instance {
        &self.shared.instance
    }

    pub fn physical_device(&self) -> vk::PhysicalDevice {
        self.shared.physical
    }

    /// The deferred-host-operation entry points of this device.
    pub fn deferred(&self) -> &ash::khr::deferred_host_operations::Device {
        &self.shared.deferred
    }

    /// Memory type index for `bits` (from memory requirements) with host-visible memory.
    pub fn memory_type(&self, bits: u32) -> Option<u32> {
        let m = &self.shared.memory_properties;
        (0..m.memory_type_count).find(|&i| {
            bits & (1 << i) != 0
                && m.memory_types[i as usize].property_flags.contains(vk::MemoryPropertyFlags::HOST_VISIBLE)
        })
    }
}

fn create_instance(entry: &ash::Entry) -> Result<ash::Instance> {
    let app = vk::ApplicationInfo::default()
        .application_name(c"vortex-examples")
        .engine_name(c"vortex-examples")
        .api_version(vk::API_VERSION_1_2);
    let info = vk::InstanceCreateInfo::default().application_info(&app);
    // SAFETY: the create info and everything it points to outlive the call.
    unsafe { entry.create_instance(&info, None) }.vk("vkCreateInstance")
}

/// The first physical device that can run the examples, or an error that says why each
/// device was rejected.
fn pick_physical_device(instance: &ash::Instance) -> Result<(vk::PhysicalDevice, DeviceInfo, u32)> {
    // SAFETY: valid instance.
    let devices = unsafe { instance.enumerate_physical_devices() }
        .vk("vkEnumeratePhysicalDevices")
        .map_err(|e| Error::msg(format!("{e}: the driver found no device it can run on")))?;
    if devices.is_empty() {
        return Err(Error::msg("the Vulkan driver exposes no physical device"));
    }
    let mut rejected = Vec::new();
    for physical in devices {
        let info = device_info(instance, physical);
        match check_suitable(instance, physical, &info) {
            Ok(family) => return Ok((physical, info, family)),
            Err(reason) => rejected.push(format!("{}: {reason}", info.name)),
        }
    }
    Err(Error::msg(format!("no Vulkan device supports ray queries: {}", rejected.join("; "))))
}

fn device_info(instance: &ash::Instance, physical: vk::PhysicalDevice) -> DeviceInfo {
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut accel = vk::PhysicalDeviceAccelerationStructurePropertiesKHR::default();
    let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
    let props = {
        let mut props2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut driver)
            .push_next(&mut accel)
            .push_next(&mut subgroup);
        // SAFETY: valid handles. Drivers skip chained structs of extensions they lack, as
        // the spec requires, so this is safe before check_suitable has run.
        unsafe { instance.get_physical_device_properties2(physical, &mut props2) };
        props2.properties
    };
    let mut id = vk::PhysicalDeviceIDProperties::default();
    {
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
        // SAFETY: valid handles; the ID properties are core in 1.1.
        unsafe { instance.get_physical_device_properties2(physical, &mut props2) };
    }
    DeviceInfo {
        name: owned(props.device_name_as_c_str()),
        driver_name: owned(driver.driver_name_as_c_str()),
        driver_info: owned(driver.driver_info_as_c_str()),
        api_version: props.api_version,
        min_scratch_alignment: u64::from(accel.min_acceleration_structure_scratch_offset_alignment.max(1)),
        driver_uuid: id.driver_uuid,
        host_commands: false,
        host_query_reset: false,
        maintenance1: false,
        timestamp_bits: 0,
        subgroup_size: subgroup.subgroup_size,
        subgroup_operations: if subgroup.supported_stages.contains(vk::ShaderStageFlags::COMPUTE) {
            subgroup.supported_operations
        } else {
            vk::SubgroupFeatureFlags::empty()
        },
        enabled: Vec::new(),
    }
}

/// The optional features the device supports, and the optional extensions they need.
fn optional_support(instance: &ash::Instance, physical: vk::PhysicalDevice) -> (FeatureSet, Vec<&'static CStr>) {
    // SAFETY: valid physical device.
    let available = unsafe { instance.enumerate_device_extension_properties(physical) }.unwrap_or_default();
    let extensions: Vec<&'static CStr> = OPTIONAL_EXTENSIONS
        .into_iter()
        .filter(|name| available.iter().any(|e| e.extension_name_as_c_str() == Ok(name)))
        .collect();
    let mut f = FeatureSet::default();
    {
        let mut features2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f.v11).push_next(&mut f.v12);
        if extensions.contains(&khr::ray_tracing_position_fetch::NAME) {
            features2 = features2.push_next(&mut f.position_fetch);
        }
        if extensions.contains(&ash::ext::shader_atomic_float::NAME) {
            features2 = features2.push_next(&mut f.atomic_float);
        }
        if extensions.contains(&ash::ext::robustness2::NAME) {
            features2 = features2.push_next(&mut f.robustness2);
        }
        if extensions.contains(&khr::dynamic_rendering::NAME) {
            features2 = features2.push_next(&mut f.dynamic_rendering);
        }
        if extensions.contains(&khr::ray_tracing_pipeline::NAME) {
            features2 = features2.push_next(&mut f.rt_pipeline);
        }
        // SAFETY: every structure in the chain belongs to a present extension or core 1.2
        // (check_suitable requires 1.2).
        unsafe { instance.get_physical_device_features2(physical, &mut features2) };
        f.core = features2.features;
    }
    f.v11.p_next = std::ptr::null_mut();
    f.v12.p_next = std::ptr::null_mut();
    f.position_fetch.p_next = std::ptr::null_mut();
    f.atomic_float.p_next = std::ptr::null_mut();
    f.robustness2.p_next = std::ptr::null_mut();
    f.dynamic_rendering.p_next = std::ptr::null_mut();
    f.rt_pipeline.p_next = std::ptr::null_mut();
    let mut wanted = FeatureSet::default();
    for name in crate::features::OPTIONAL_FEATURES {
        wanted.set(name);
    }
    (f.intersect(&wanted), extensions)
}

/// A string from a fixed-size array in a properties struct ("" if it is unterminated).
fn owned(s: std::result::Result<&CStr, FromBytesUntilNulError>) -> String {
    s.map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Returns the queue family to use, or why the device cannot run the examples.
fn check_suitable(instance: &ash::Instance, physical: vk::PhysicalDevice, info: &DeviceInfo) -> Result<u32, String> {
    if info.api_version < vk::API_VERSION_1_2 {
        return Err(format!("Vulkan {} is too old, 1.2 is required", info.api_version_string()));
    }
    // SAFETY: valid physical device.
    let available = unsafe { instance.enumerate_device_extension_properties(physical) }
        .map_err(|e| format!("vkEnumerateDeviceExtensionProperties failed: {e:?}"))?;
    for wanted in DEVICE_EXTENSIONS {
        if !available.iter().any(|ext| ext.extension_name_as_c_str() == Ok(wanted)) {
            return Err(format!("missing extension {}", wanted.to_string_lossy()));
        }
    }
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut accel = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default();
    let mut rq = vk::PhysicalDeviceRayQueryFeaturesKHR::default();
    {
        let mut features =
            vk::PhysicalDeviceFeatures2::default().push_next(&mut v12).push_next(&mut accel).push_next(&mut rq);
        // SAFETY: the extensions behind every struct in the chain are present (checked above).
        unsafe { instance.get_physical_device_features2(physical, &mut features) };
    }
    for (name, present) in [
        ("bufferDeviceAddress", v12.buffer_device_address),
        ("timelineSemaphore", v12.timeline_semaphore),
        ("accelerationStructure", accel.acceleration_structure),
        ("rayQuery", rq.ray_query),
    ] {
        if present != vk::TRUE {
            return Err(format!("feature {name} is not supported"));
        }
    }
    // SAFETY: valid physical device.
    let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
    families
        .iter()
        .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE) && f.queue_count > 0)
        .map(|i| i as u32)
        .ok_or_else(|| "no compute queue".to_string())
}

/// Creates the device with the ray-query features and the `optional` ones, plus the
/// acceleration-structure extras the examples use when the device reports them (host
/// commands, host query reset, ray-tracing maintenance 1, timestamps; recorded in `info`).
fn create_device(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    family: u32,
    (optional, robust): (&FeatureSet, bool),
    optional_extensions: &[&CStr],
    info: &mut DeviceInfo,
) -> Result<ash::Device> {
    // What is offered of the acceleration-structure extras.
    let mut have_v12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut have_accel = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default();
    {
        let mut f = vk::PhysicalDeviceFeatures2::default().push_next(&mut have_v12).push_next(&mut have_accel);
        // SAFETY: valid handles; support for both structs was checked.
        unsafe { instance.get_physical_device_features2(physical, &mut f) };
    }
    // SAFETY: valid physical device.
    let available = unsafe { instance.enumerate_device_extension_properties(physical) }.unwrap_or_default();
    let offered = |n: &CStr| available.iter().any(|e| e.extension_name_as_c_str() == Ok(n));
    info.host_commands = have_accel.acceleration_structure_host_commands == vk::TRUE;
    info.host_query_reset = have_v12.host_query_reset == vk::TRUE;
    info.maintenance1 = offered(khr::ray_tracing_maintenance1::NAME);
    // SAFETY: valid physical device.
    let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
    info.timestamp_bits = families[family as usize].timestamp_valid_bits;

    let priorities = [1.0];
    let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
    let mut extensions: Vec<_> = DEVICE_EXTENSIONS.iter().chain(optional_extensions).map(|e| e.as_ptr()).collect();
    if info.maintenance1 {
        extensions.push(khr::ray_tracing_maintenance1::NAME.as_ptr());
    }
    let mut f = *optional;
    let image_robustness = robust && offered(ash::ext::image_robustness::NAME);
    let mut robust_image = vk::PhysicalDeviceImageRobustnessFeatures::default().robust_image_access(true);
    if robust {
        f.core.robust_buffer_access = vk::TRUE;
        info.enabled.push("robustBufferAccess");
    }
    if image_robustness {
        extensions.push(ash::ext::image_robustness::NAME.as_ptr());
        info.enabled.push("robustImageAccess");
    }
    f.v12.buffer_device_address = vk::TRUE;
    f.v12.timeline_semaphore = vk::TRUE;
    f.v12.host_query_reset = vk::Bool32::from(info.host_query_reset);
    let mut accel = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default()
        .acceleration_structure(true)
        .acceleration_structure_host_commands(info.host_commands);
    let mut rq = vk::PhysicalDeviceRayQueryFeaturesKHR::default().ray_query(true);
    let mut m1 = vk::PhysicalDeviceRayTracingMaintenance1FeaturesKHR::default().ray_tracing_maintenance1(true);
    let mut create = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&extensions)
        .enabled_features(&f.core)
        .push_next(&mut f.v12)
        .push_next(&mut accel)
        .push_next(&mut rq);
    // The 1.1 structure only when it asks for something, so the default device's request
    // stays what it always was.
    if f.v11.storage_buffer16_bit_access
        | f.v11.uniform_and_storage_buffer16_bit_access
        | f.v11.storage_push_constant16
        | f.v11.multiview
        != 0
    {
        create = create.push_next(&mut f.v11);
    }
    if optional_extensions.contains(&khr::ray_tracing_position_fetch::NAME) {
        create = create.push_next(&mut f.position_fetch);
    }
    if optional_extensions.contains(&ash::ext::shader_atomic_float::NAME) {
        create = create.push_next(&mut f.atomic_float);
    }
    if optional_extensions.contains(&ash::ext::robustness2::NAME) {
        create = create.push_next(&mut f.robustness2);
    }
    if optional_extensions.contains(&khr::dynamic_rendering::NAME) {
        create = create.push_next(&mut f.dynamic_rendering);
    }
    if optional_extensions.contains(&khr::ray_tracing_pipeline::NAME) {
        create = create.push_next(&mut f.rt_pipeline);
    }
    if info.maintenance1 {
        create = create.push_next(&mut m1);
    }
    if image_robustness {
        create = create.push_next(&mut robust_image);
    }
    // SAFETY: the create info and its chain outlive the call; support was checked.
    unsafe { instance.create_device(physical, &create, None) }.vk("vkCreateDevice")
}
