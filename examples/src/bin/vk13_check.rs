//! Vulkan 1.3's commands and the 1.2 features it requires, end to end through the loader, on
//! any ICD: the device is created with apiVersion 1.3 and, when it reports less, with the
//! extensions that provide the same commands (their core names then resolve through them).
//!
//! - the 1.3 feature and property structures report what 1.3 requires of them;
//! - synchronization2: two `vkQueueSubmit2` batches chained by a timeline semaphore's values,
//!   `vkCmdPipelineBarrier2`, `vkCmdSetEvent2` / `vkCmdWaitEvents2` / `vkCmdResetEvent2`,
//!   `vkCmdWriteTimestamp2`, every effect read back;
//! - the *2 transfers: buffer -> image -> image -> (blit) image -> buffer, checked texel by texel;
//! - separate depth/stencil layouts: a render pass 2 whose depth/stencil attachment carries
//!   separate stencil layouts clears both aspects, each read back;
//! - private data on several object types; maintenance4's requirements from create infos;
//! - a compute pipeline with a required subgroup size and full subgroups;
//! - an inline uniform block written in two parts, copied to a second set, read by a kernel;
//! - pipeline creation cache control: a pipeline that may not compile is not created (or is,
//!   from a cache), and an early return leaves the rest null.
//!
//! Usage: vk13_check [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check failed)

use ash::vk::{self, Handle};
use std::ffi::CStr;
use vortex_examples::icd::restrict_loader_to;
use vortex_examples::Icd;

type Check = Result<(), String>;

/// A check with its name.
type NamedCheck = (&'static str, fn(&Dev) -> Check);

fn err(call: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |r| format!("{call} failed: {r:?}")
}

/// Extensions that provide the commands and features checked here on a 1.2 device.
const EXTENSIONS_FOR_12: &[&CStr] = &[
    c"VK_KHR_synchronization2",
    c"VK_KHR_copy_commands2",
    c"VK_EXT_private_data",
    c"VK_KHR_maintenance4",
    c"VK_EXT_subgroup_size_control",
    c"VK_KHR_separate_depth_stencil_layouts",
    c"VK_KHR_dynamic_rendering",
    c"VK_EXT_inline_uniform_block",
    c"VK_EXT_pipeline_creation_cache_control",
];

struct Dev {
    _entry: ash::Entry,
    instance: ash::Instance,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    queue: vk::Queue,
    pool: vk::CommandPool,
    memory: vk::PhysicalDeviceMemoryProperties,
    api: u32,
}

impl Drop for Dev {
    fn drop(&mut self) {
        // SAFETY: every check waited for its work; objects are destroyed by their checks.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

fn create(icd: &Icd) -> Result<Dev, String> {
    let manifest = icd.manifest().map_err(|e| e.to_string())?;
    restrict_loader_to(&manifest);
    // SAFETY: loading the system loader; nothing else in this process has loaded it.
    let entry = unsafe { ash::Entry::load() }.map_err(|e| e.to_string())?;
    let app = vk::ApplicationInfo::default().application_name(c"vk13_check").api_version(vk::API_VERSION_1_3);
    // SAFETY (this function): create infos outlive their calls; handles are valid.
    let instance = unsafe { entry.create_instance(&vk::InstanceCreateInfo::default().application_info(&app), None) }
        .map_err(err("vkCreateInstance"))?;
    let physical = unsafe { instance.enumerate_physical_devices() }.map_err(err("vkEnumeratePhysicalDevices"))?[0];
    let props = unsafe { instance.get_physical_device_properties(physical) };
    let api = props.api_version.min(vk::API_VERSION_1_3);
    let family = unsafe { instance.get_physical_device_queue_family_properties(physical) }
        .iter()
        .position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE))
        .ok_or("no graphics + compute queue")? as u32;
    let available = unsafe { instance.enumerate_device_extension_properties(physical) }.unwrap_or_default();
    let mut extensions = Vec::new();
    if api < vk::API_VERSION_1_3 {
        for want in EXTENSIONS_FOR_12 {
            if !available.iter().any(|e| e.extension_name_as_c_str() == Ok(want)) {
                return Err(format!("a Vulkan 1.2 device without {}", want.to_string_lossy()));
            }
            extensions.push(want.as_ptr());
        }
    }
    let priorities = [1.0];
    let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
    let mut v12 =
        vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true).separate_depth_stencil_layouts(true);
    // The 1.3 features by their extension structures, which a 1.3 device accepts too.
    let mut sync2 = vk::PhysicalDeviceSynchronization2Features::default().synchronization2(true);
    let mut private = vk::PhysicalDevicePrivateDataFeatures::default().private_data(true);
    let mut m4 = vk::PhysicalDeviceMaintenance4Features::default().maintenance4(true);
    let mut sgsc = vk::PhysicalDeviceSubgroupSizeControlFeatures::default()
        .subgroup_size_control(true)
        .compute_full_subgroups(true);
    let mut inline = vk::PhysicalDeviceInlineUniformBlockFeatures::default().inline_uniform_block(true);
    let mut cache_control =
        vk::PhysicalDevicePipelineCreationCacheControlFeatures::default().pipeline_creation_cache_control(true);
    let mut slots = vk::DevicePrivateDataCreateInfo::default().private_data_slot_request_count(2);
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&extensions)
        .push_next(&mut v12)
        .push_next(&mut sync2)
        .push_next(&mut private)
        .push_next(&mut m4)
        .push_next(&mut sgsc)
        .push_next(&mut inline)
        .push_next(&mut cache_control)
        .push_next(&mut slots);
    let device = unsafe { instance.create_device(physical, &info, None) }.map_err(err("vkCreateDevice"))?;
    let queue = unsafe { device.get_device_queue(family, 0) };
    let pool_info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(family)
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    let pool = unsafe { device.create_command_pool(&pool_info, None) }.map_err(err("vkCreateCommandPool"))?;
    let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
    Ok(Dev { _entry: entry, instance, physical, device, queue, pool, memory, api })
}

/// A host-visible buffer with its memory, mapped; destroyed on drop.
struct Buf<'a> {
    d: &'a ash::Device,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    ptr: *mut u8,
    size: usize,
}

impl Dev {
    fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> Result<u32, String> {
        (0..self.memory.memory_type_count)
            .find(|&i| bits & (1 << i) != 0 && self.memory.memory_types[i as usize].property_flags.contains(flags))
            .ok_or_else(|| format!("no memory type for bits {bits:#x} with {flags:?}"))
    }

    fn buffer(&self, size: usize, usage: vk::BufferUsageFlags) -> Result<Buf<'_>, String> {
        let d = &self.device;
        let info = vk::BufferCreateInfo::default().size(size as u64).usage(usage);
        // SAFETY (this function): valid device and create infos; Drop frees what was made.
        let buffer = unsafe { d.create_buffer(&info, None) }.map_err(err("vkCreateBuffer"))?;
        let mut b = Buf { d, buffer, memory: vk::DeviceMemory::null(), ptr: std::ptr::null_mut(), size };
        let req = unsafe { d.get_buffer_memory_requirements(buffer) };
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(self.memory_type(req.memory_type_bits, host)?);
        b.memory = unsafe { d.allocate_memory(&alloc, None) }.map_err(err("vkAllocateMemory"))?;
        unsafe { d.bind_buffer_memory(buffer, b.memory, 0) }.map_err(err("vkBindBufferMemory"))?;
        b.ptr = unsafe { d.map_memory(b.memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
            .map_err(err("vkMapMemory"))? as *mut u8;
        Ok(b)
    }

    /// A 2D optimally tiled image with its memory; destroyed by [`Dev::drop_image`].
    fn image(
        &self,
        format: vk::Format,
        [w, h]: [u32; 2],
        usage: vk::ImageUsageFlags,
    ) -> Result<(vk::Image, vk::DeviceMemory), String> {
        let d = &self.device;
        let info = image_info(format, [w, h], usage);
        // SAFETY (this function): valid device and create infos.
        let image = unsafe { d.create_image(&info, None) }.map_err(err("vkCreateImage"))?;
        let req = unsafe { d.get_image_memory_requirements(image) };
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(self.memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::empty())?);
        let memory = unsafe { d.allocate_memory(&alloc, None) }.map_err(err("vkAllocateMemory"))?;
        unsafe { d.bind_image_memory(image, memory, 0) }.map_err(err("vkBindImageMemory"))?;
        Ok((image, memory))
    }

    fn drop_image(&self, (image, memory): (vk::Image, vk::DeviceMemory)) {
        // SAFETY: the work using it has finished.
        unsafe {
            self.device.destroy_image(image, None);
            self.device.free_memory(memory, None);
        }
    }

    fn command_buffer(&self) -> Result<vk::CommandBuffer, String> {
        let alloc = vk::CommandBufferAllocateInfo::default().command_pool(self.pool).command_buffer_count(1);
        // SAFETY: valid pool.
        let cb = unsafe { self.device.allocate_command_buffers(&alloc) }.map_err(err("vkAllocateCommandBuffers"))?[0];
        // SAFETY: a fresh command buffer.
        unsafe { self.device.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default()) }
            .map_err(err("vkBeginCommandBuffer"))?;
        Ok(cb)
    }

    /// Ends `cb`, submits it with `vkQueueSubmit2` and waits.
    fn run(&self, cb: vk::CommandBuffer) -> Check {
        let d = &self.device;
        // SAFETY (this function): valid handles; the fence outlives the wait.
        unsafe {
            d.end_command_buffer(cb).map_err(err("vkEndCommandBuffer"))?;
            let fence = d.create_fence(&vk::FenceCreateInfo::default(), None).map_err(err("vkCreateFence"))?;
            let cbs = [vk::CommandBufferSubmitInfo::default().command_buffer(cb)];
            let submit = [vk::SubmitInfo2::default().command_buffer_infos(&cbs)];
            let r = d.queue_submit2(self.queue, &submit, fence).map_err(err("vkQueueSubmit2"));
            let w = r.and_then(|_| d.wait_for_fences(&[fence], true, 60_000_000_000).map_err(err("vkWaitForFences")));
            d.destroy_fence(fence, None);
            d.free_command_buffers(self.pool, &[cb]);
            w
        }
    }
}

impl Buf<'_> {
    fn words(&self) -> Vec<u32> {
        // SAFETY: a mapped, coherent allocation of `size` bytes; the device is done with it.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u32, self.size / 4) }.to_vec()
    }

    fn bytes(&self) -> Vec<u8> {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(self.ptr, self.size) }.to_vec()
    }

    fn write(&self, data: &[u8]) {
        // SAFETY: as above; `data` fits.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr, data.len().min(self.size)) }
    }
}

impl Drop for Buf<'_> {
    fn drop(&mut self) {
        // SAFETY: the work using it has finished.
        unsafe {
            self.d.destroy_buffer(self.buffer, None);
            self.d.free_memory(self.memory, None);
        }
    }
}

fn image_info(format: vk::Format, [w, h]: [u32; 2], usage: vk::ImageUsageFlags) -> vk::ImageCreateInfo<'static> {
    vk::ImageCreateInfo::default()
        .image_type(vk::ImageType::TYPE_2D)
        .format(format)
        .extent(vk::Extent3D { width: w, height: h, depth: 1 })
        .mip_levels(1)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .tiling(vk::ImageTiling::OPTIMAL)
        .usage(usage)
}

fn layers(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers { aspect_mask: aspect, mip_level: 0, base_array_layer: 0, layer_count: 1 }
}

fn range(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: aspect,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}

/// A synchronization2 image layout transition covering all commands.
fn transition(
    image: vk::Image,
    aspect: vk::ImageAspectFlags,
    old: vk::ImageLayout,
    new: vk::ImageLayout,
) -> vk::ImageMemoryBarrier2<'static> {
    vk::ImageMemoryBarrier2::default()
        .src_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
        .src_access_mask(vk::AccessFlags2::MEMORY_WRITE)
        .dst_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
        .dst_access_mask(vk::AccessFlags2::MEMORY_READ | vk::AccessFlags2::MEMORY_WRITE)
        .old_layout(old)
        .new_layout(new)
        .image(image)
        .subresource_range(range(aspect))
}

fn barrier(d: &ash::Device, cb: vk::CommandBuffer, images: &[vk::ImageMemoryBarrier2<'_>]) {
    let memory = [vk::MemoryBarrier2::default()
        .src_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
        .src_access_mask(vk::AccessFlags2::MEMORY_WRITE)
        .dst_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS | vk::PipelineStageFlags2::HOST)
        .dst_access_mask(vk::AccessFlags2::MEMORY_READ | vk::AccessFlags2::MEMORY_WRITE)];
    let info = vk::DependencyInfo::default().memory_barriers(&memory).image_memory_barriers(images);
    // SAFETY: cb is recording; the images belong to the device.
    unsafe { d.cmd_pipeline_barrier2(cb, &info) };
}

/// What Vulkan 1.3 requires of its feature and property structures.
fn check_reports(dev: &Dev) -> Check {
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut sync2 = vk::PhysicalDeviceSynchronization2Features::default();
    let mut m4 = vk::PhysicalDeviceMaintenance4Features::default();
    let mut private = vk::PhysicalDevicePrivateDataFeatures::default();
    let mut sgsc = vk::PhysicalDeviceSubgroupSizeControlFeatures::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut v12)
        .push_next(&mut sync2)
        .push_next(&mut m4)
        .push_next(&mut private)
        .push_next(&mut sgsc);
    // SAFETY: valid handles and chain.
    unsafe { dev.instance.get_physical_device_features2(dev.physical, &mut f2) };
    for (name, on) in [
        ("separateDepthStencilLayouts", v12.separate_depth_stencil_layouts),
        ("synchronization2", sync2.synchronization2),
        ("maintenance4", m4.maintenance4),
        ("privateData", private.private_data),
        ("subgroupSizeControl", sgsc.subgroup_size_control),
        ("computeFullSubgroups", sgsc.compute_full_subgroups),
    ] {
        if on != vk::TRUE {
            return Err(format!("feature {name} is not reported"));
        }
    }
    let mut sg = vk::PhysicalDeviceSubgroupSizeControlProperties::default();
    let mut m4p = vk::PhysicalDeviceMaintenance4Properties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut sg).push_next(&mut m4p);
    // SAFETY: valid handles and chain.
    unsafe { dev.instance.get_physical_device_properties2(dev.physical, &mut p2) };
    if sg.min_subgroup_size == 0
        || sg.min_subgroup_size > sg.max_subgroup_size
        || !sg.max_subgroup_size.is_power_of_two()
    {
        return Err(format!("subgroup sizes {}..{}", sg.min_subgroup_size, sg.max_subgroup_size));
    }
    if m4p.max_buffer_size < 1 << 30 {
        return Err(format!("maxBufferSize {} is below 2^30", m4p.max_buffer_size));
    }
    let mut tools = 0;
    // SAFETY: a count query.
    unsafe {
        (dev.instance.fp_v1_3().get_physical_device_tool_properties)(dev.physical, &mut tools, std::ptr::null_mut())
            .result()
            .map_err(err("vkGetPhysicalDeviceToolProperties"))?
    };
    Ok(())
}

/// Two batches chained by a timeline semaphore: the first fills a buffer and sets an event,
/// the second (waiting for value 5) waits for the event, copies, resets the event, writes a
/// timestamp and signals 8.
fn check_sync2(dev: &Dev) -> Check {
    let d = &dev.device;
    let src = dev.buffer(256, vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST)?;
    let dst = dev.buffer(256, vk::BufferUsageFlags::TRANSFER_DST)?;
    dst.write(&[0u8; 256]);
    // SAFETY (this function): valid handles; every object is destroyed after the wait.
    unsafe {
        let mut ty = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
        let sem = d
            .create_semaphore(&vk::SemaphoreCreateInfo::default().push_next(&mut ty), None)
            .map_err(err("vkCreateSemaphore"))?;
        let event = d.create_event(&vk::EventCreateInfo::default(), None).map_err(err("vkCreateEvent"))?;
        let event2 = d.create_event(&vk::EventCreateInfo::default(), None).map_err(err("vkCreateEvent"))?;
        let qinfo = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(1);
        let queries = d.create_query_pool(&qinfo, None).map_err(err("vkCreateQueryPool"))?;

        let first = dev.command_buffer()?;
        d.cmd_reset_query_pool(first, queries, 0, 1);
        d.cmd_fill_buffer(first, src.buffer, 0, 256, 0x5eed_1234);
        let mb = [vk::MemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::COPY)
            .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags2::COPY)
            .dst_access_mask(vk::AccessFlags2::TRANSFER_READ)];
        let dep = vk::DependencyInfo::default().memory_barriers(&mb);
        d.cmd_set_event2(first, event, &dep);
        d.cmd_set_event2(first, event2, &dep);
        d.end_command_buffer(first).map_err(err("vkEndCommandBuffer"))?;

        let second = dev.command_buffer()?;
        d.cmd_wait_events2(second, &[event], &[dep]);
        d.cmd_reset_event2(second, event2, vk::PipelineStageFlags2::ALL_COMMANDS);
        let region = vk::BufferCopy2::default().src_offset(16).dst_offset(32).size(64);
        let copy = vk::CopyBufferInfo2::default()
            .src_buffer(src.buffer)
            .dst_buffer(dst.buffer)
            .regions(std::slice::from_ref(&region));
        d.cmd_copy_buffer2(second, &copy);
        d.cmd_write_timestamp2(second, vk::PipelineStageFlags2::ALL_COMMANDS, queries, 0);
        barrier(d, second, &[]);
        d.end_command_buffer(second).map_err(err("vkEndCommandBuffer"))?;

        let c1 = [vk::CommandBufferSubmitInfo::default().command_buffer(first)];
        let c2 = [vk::CommandBufferSubmitInfo::default().command_buffer(second)];
        let s1 = [vk::SemaphoreSubmitInfo::default()
            .semaphore(sem)
            .value(5)
            .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
        let w2 = [vk::SemaphoreSubmitInfo::default().semaphore(sem).value(5).stage_mask(vk::PipelineStageFlags2::COPY)];
        let s2 = [vk::SemaphoreSubmitInfo::default()
            .semaphore(sem)
            .value(8)
            .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
        let submits = [
            vk::SubmitInfo2::default().command_buffer_infos(&c1).signal_semaphore_infos(&s1),
            vk::SubmitInfo2::default().wait_semaphore_infos(&w2).command_buffer_infos(&c2).signal_semaphore_infos(&s2),
        ];
        d.queue_submit2(dev.queue, &submits, vk::Fence::null()).map_err(err("vkQueueSubmit2"))?;
        let sems = [sem];
        let values = [8];
        d.wait_semaphores(&vk::SemaphoreWaitInfo::default().semaphores(&sems).values(&values), 60_000_000_000)
            .map_err(err("vkWaitSemaphores"))?;
        let value = d.get_semaphore_counter_value(sem).map_err(err("vkGetSemaphoreCounterValue"))?;
        let set = d.get_event_status(event).map_err(err("vkGetEventStatus"))?;
        let reset = d.get_event_status(event2).map_err(err("vkGetEventStatus"))?;
        let mut stamp = [[0u64; 2]; 1];
        let q = d.get_query_pool_results(
            queries,
            0,
            &mut stamp,
            vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY,
        );
        d.free_command_buffers(dev.pool, &[first, second]);
        d.destroy_query_pool(queries, None);
        d.destroy_event(event, None);
        d.destroy_event(event2, None);
        d.destroy_semaphore(sem, None);
        q.map_err(err("vkGetQueryPoolResults"))?;
        if value != 8 || !set || reset {
            return Err(format!("semaphore value {value} (want 8), event set {set}, reset event set {reset}"));
        }
        if stamp[0][1] == 0 {
            return Err("the vkCmdWriteTimestamp2 query is not available".into());
        }
    }
    let words = dst.words();
    for (i, &w) in words.iter().enumerate() {
        let want = if (8..24).contains(&i) { 0x5eed_1234 } else { 0 };
        if w != want {
            return Err(format!("vkCmdCopyBuffer2: word {i} is {w:#x}, want {want:#x}"));
        }
    }
    Ok(())
}

/// Buffer -> image A -> (copy) image B -> (blit, mirrored) image C -> buffer, all *2 forms.
fn check_copy2(dev: &Dev) -> Check {
    let d = &dev.device;
    let fmt = vk::Format::R8G8B8A8_UINT;
    let usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    let color = vk::ImageAspectFlags::COLOR;
    let texels: Vec<u8> = (0..64u8).flat_map(|i| [i, 255 - i, i ^ 0x55, 7]).collect();
    let src = dev.buffer(texels.len(), vk::BufferUsageFlags::TRANSFER_SRC)?;
    src.write(&texels);
    let out = dev.buffer(texels.len(), vk::BufferUsageFlags::TRANSFER_DST)?;
    let [a, b, c] = [dev.image(fmt, [8, 8], usage)?, dev.image(fmt, [8, 8], usage)?, dev.image(fmt, [8, 8], usage)?];
    let cb = dev.command_buffer()?;
    let general = vk::ImageLayout::GENERAL;
    barrier(d, cb, &[a, b, c].map(|i| transition(i.0, color, vk::ImageLayout::UNDEFINED, vk::ImageLayout::GENERAL)));
    let extent = vk::Extent3D { width: 8, height: 8, depth: 1 };
    let bic = [vk::BufferImageCopy2::default().image_subresource(layers(color)).image_extent(extent)];
    let ic = [vk::ImageCopy2::default().src_subresource(layers(color)).dst_subresource(layers(color)).extent(extent)];
    let o = |x, y| vk::Offset3D { x, y, z: 0 };
    let blit = [vk::ImageBlit2::default()
        .src_subresource(layers(color))
        .src_offsets([o(0, 0), vk::Offset3D { x: 8, y: 8, z: 1 }])
        .dst_subresource(layers(color))
        .dst_offsets([vk::Offset3D { x: 8, y: 0, z: 0 }, vk::Offset3D { x: 0, y: 8, z: 1 }])];
    // SAFETY: cb is recording; every handle belongs to the device.
    unsafe {
        d.cmd_copy_buffer_to_image2(
            cb,
            &vk::CopyBufferToImageInfo2::default()
                .src_buffer(src.buffer)
                .dst_image(a.0)
                .dst_image_layout(general)
                .regions(&bic),
        );
        barrier(d, cb, &[]);
        d.cmd_copy_image2(
            cb,
            &vk::CopyImageInfo2::default()
                .src_image(a.0)
                .src_image_layout(general)
                .dst_image(b.0)
                .dst_image_layout(general)
                .regions(&ic),
        );
        barrier(d, cb, &[]);
        d.cmd_blit_image2(
            cb,
            &vk::BlitImageInfo2::default()
                .src_image(b.0)
                .src_image_layout(general)
                .dst_image(c.0)
                .dst_image_layout(general)
                .regions(&blit)
                .filter(vk::Filter::NEAREST),
        );
        barrier(d, cb, &[]);
        d.cmd_copy_image_to_buffer2(
            cb,
            &vk::CopyImageToBufferInfo2::default()
                .src_image(c.0)
                .src_image_layout(general)
                .dst_buffer(out.buffer)
                .regions(&bic),
        );
        barrier(d, cb, &[]);
    }
    let r = dev.run(cb);
    for i in [a, b, c] {
        dev.drop_image(i);
    }
    r?;
    let got = out.bytes();
    for y in 0..8 {
        for x in 0..8 {
            let at = |x: usize, y: usize| &texels[(y * 8 + x) * 4..][..4];
            if &got[(y * 8 + x) * 4..][..4] != at(7 - x, y) {
                return Err(format!("texel ({x},{y}) is {:?}, want {:?}", &got[(y * 8 + x) * 4..][..4], at(7 - x, y)));
            }
        }
    }
    Ok(())
}

/// A render pass 2 whose depth/stencil attachment has separate stencil layouts clears depth
/// and stencil; each aspect is read back.
fn check_separate_depth_stencil_layouts(dev: &Dev) -> Check {
    let d = &dev.device;
    let fmt = vk::Format::D32_SFLOAT_S8_UINT;
    let ds = vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL;
    let usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
    let img = dev.image(fmt, [4, 4], usage)?;
    let depth_out = dev.buffer(64, vk::BufferUsageFlags::TRANSFER_DST)?;
    let stencil_out = dev.buffer(16, vk::BufferUsageFlags::TRANSFER_DST)?;
    let result = (|| -> Check {
        let view_info = vk::ImageViewCreateInfo::default()
            .image(img.0)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(fmt)
            .subresource_range(range(ds));
        // SAFETY (this closure): valid handles and create infos; objects destroyed below.
        let view = unsafe { d.create_image_view(&view_info, None) }.map_err(err("vkCreateImageView"))?;
        let mut stencil_layouts = vk::AttachmentDescriptionStencilLayout::default()
            .stencil_initial_layout(vk::ImageLayout::UNDEFINED)
            .stencil_final_layout(vk::ImageLayout::STENCIL_READ_ONLY_OPTIMAL);
        let attachment = [vk::AttachmentDescription2::default()
            .format(fmt)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .stencil_load_op(vk::AttachmentLoadOp::CLEAR)
            .stencil_store_op(vk::AttachmentStoreOp::STORE)
            .initial_layout(vk::ImageLayout::UNDEFINED)
            .final_layout(vk::ImageLayout::DEPTH_READ_ONLY_OPTIMAL)
            .push_next(&mut stencil_layouts)];
        let mut stencil_ref =
            vk::AttachmentReferenceStencilLayout::default().stencil_layout(vk::ImageLayout::STENCIL_ATTACHMENT_OPTIMAL);
        let reference = vk::AttachmentReference2::default()
            .attachment(0)
            .layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
            .aspect_mask(ds)
            .push_next(&mut stencil_ref);
        let subpass = [vk::SubpassDescription2::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .depth_stencil_attachment(&reference)];
        let rp_info = vk::RenderPassCreateInfo2::default().attachments(&attachment).subpasses(&subpass);
        let rp = unsafe { d.create_render_pass2(&rp_info, None) }.map_err(err("vkCreateRenderPass2"))?;
        let views = [view];
        let fb_info =
            vk::FramebufferCreateInfo::default().render_pass(rp).attachments(&views).width(4).height(4).layers(1);
        let fb = unsafe { d.create_framebuffer(&fb_info, None) }.map_err(err("vkCreateFramebuffer"))?;
        let cb = dev.command_buffer()?;
        let clear = [vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: 0.25, stencil: 0x5a } }];
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(rp)
            .framebuffer(fb)
            .render_area(vk::Rect2D {
                offset: vk::Offset2D { x: 0, y: 0 },
                extent: vk::Extent2D { width: 4, height: 4 },
            })
            .clear_values(&clear);
        let extent = vk::Extent3D { width: 4, height: 4, depth: 1 };
        let copy = |aspect| [vk::BufferImageCopy2::default().image_subresource(layers(aspect)).image_extent(extent)];
        let (dc, sc) = (copy(vk::ImageAspectFlags::DEPTH), copy(vk::ImageAspectFlags::STENCIL));
        // SAFETY: cb is recording; every handle belongs to the device.
        unsafe {
            d.cmd_begin_render_pass2(
                cb,
                &begin,
                &vk::SubpassBeginInfo::default().contents(vk::SubpassContents::INLINE),
            );
            d.cmd_end_render_pass2(cb, &vk::SubpassEndInfo::default());
            // Each aspect to the transfer layout on its own.
            let to_src = [
                transition(
                    img.0,
                    vk::ImageAspectFlags::DEPTH,
                    vk::ImageLayout::DEPTH_READ_ONLY_OPTIMAL,
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                ),
                transition(
                    img.0,
                    vk::ImageAspectFlags::STENCIL,
                    vk::ImageLayout::STENCIL_READ_ONLY_OPTIMAL,
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                ),
            ];
            barrier(d, cb, &to_src);
            let src = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
            let depth = vk::CopyImageToBufferInfo2::default()
                .src_image(img.0)
                .src_image_layout(src)
                .dst_buffer(depth_out.buffer)
                .regions(&dc);
            d.cmd_copy_image_to_buffer2(cb, &depth);
            let stencil = vk::CopyImageToBufferInfo2::default()
                .src_image(img.0)
                .src_image_layout(src)
                .dst_buffer(stencil_out.buffer)
                .regions(&sc);
            d.cmd_copy_image_to_buffer2(cb, &stencil);
            barrier(d, cb, &[]);
        }
        let r = dev.run(cb);
        // SAFETY: the work has finished.
        unsafe {
            d.destroy_framebuffer(fb, None);
            d.destroy_render_pass(rp, None);
            d.destroy_image_view(view, None);
        }
        r
    })();
    dev.drop_image(img);
    result?;
    let depth: Vec<f32> = depth_out.words().iter().map(|&w| f32::from_bits(w)).collect();
    let stencil = stencil_out.bytes();
    if depth.iter().any(|&z| z != 0.25) || stencil.iter().any(|&s| s != 0x5a) {
        return Err(format!("cleared depth {depth:?}, stencil {stencil:?}: want 0.25 and 0x5a"));
    }
    Ok(())
}

/// Values set on a buffer, a semaphore, the device and a slot read back per object and per
/// slot; a value never set reads 0.
fn check_private_data(dev: &Dev) -> Check {
    let d = &dev.device;
    let buf = dev.buffer(16, vk::BufferUsageFlags::TRANSFER_SRC)?;
    // SAFETY (this function): valid handles; the slots and semaphore are destroyed here.
    unsafe {
        let info = vk::PrivateDataSlotCreateInfo::default();
        let s1 = d.create_private_data_slot(&info, None).map_err(err("vkCreatePrivateDataSlot"))?;
        let s2 = d.create_private_data_slot(&info, None).map_err(err("vkCreatePrivateDataSlot"))?;
        let sem = d.create_semaphore(&vk::SemaphoreCreateInfo::default(), None).map_err(err("vkCreateSemaphore"))?;
        d.set_private_data(buf.buffer, s1, 11).map_err(err("vkSetPrivateData"))?;
        d.set_private_data(sem, s1, 22).map_err(err("vkSetPrivateData"))?;
        d.set_private_data(d.handle(), s1, 33).map_err(err("vkSetPrivateData"))?;
        d.set_private_data(sem, s2, 44).map_err(err("vkSetPrivateData"))?;
        d.set_private_data(s2, s1, 55).map_err(err("vkSetPrivateData"))?;
        let got = [
            d.get_private_data(buf.buffer, s1),
            d.get_private_data(sem, s1),
            d.get_private_data(d.handle(), s1),
            d.get_private_data(sem, s2),
            d.get_private_data(s2, s1),
            d.get_private_data(buf.buffer, s2),
        ];
        d.destroy_semaphore(sem, None);
        d.destroy_private_data_slot(s1, None);
        d.destroy_private_data_slot(s2, None);
        if got != [11, 22, 33, 44, 55, 0] {
            return Err(format!("private data read {got:?}, want [11, 22, 33, 44, 55, 0]"));
        }
    }
    Ok(())
}

/// Requirements from create infos equal those of the created objects.
fn check_maintenance4(dev: &Dev) -> Check {
    let d = &dev.device;
    let binfo = vk::BufferCreateInfo::default().size(1000).usage(vk::BufferUsageFlags::STORAGE_BUFFER);
    let iinfo = image_info(vk::Format::R8G8B8A8_UNORM, [37, 5], vk::ImageUsageFlags::TRANSFER_DST);
    // SAFETY (this function): valid handles and infos; objects destroyed here.
    unsafe {
        let mut from_info = vk::MemoryRequirements2::default();
        d.get_device_buffer_memory_requirements(
            &vk::DeviceBufferMemoryRequirements::default().create_info(&binfo),
            &mut from_info,
        );
        let b = d.create_buffer(&binfo, None).map_err(err("vkCreateBuffer"))?;
        let of_buffer = d.get_buffer_memory_requirements(b);
        d.destroy_buffer(b, None);
        let mut image_from_info = vk::MemoryRequirements2::default();
        d.get_device_image_memory_requirements(
            &vk::DeviceImageMemoryRequirements::default().create_info(&iinfo),
            &mut image_from_info,
        );
        let i = d.create_image(&iinfo, None).map_err(err("vkCreateImage"))?;
        let of_image = d.get_image_memory_requirements(i);
        d.destroy_image(i, None);
        let sparse = d.get_device_image_sparse_memory_requirements_len(
            &vk::DeviceImageMemoryRequirements::default().create_info(&iinfo),
        );
        let same = |a: vk::MemoryRequirements, b: vk::MemoryRequirements| {
            a.size == b.size && a.alignment == b.alignment && a.memory_type_bits == b.memory_type_bits
        };
        if !same(from_info.memory_requirements, of_buffer) || of_buffer.size < 1000 {
            return Err(format!("buffer: {:?} from the info, {of_buffer:?} created", from_info.memory_requirements));
        }
        if !same(image_from_info.memory_requirements, of_image) || of_image.size < 37 * 5 * 4 {
            return Err(format!(
                "image: {:?} from the info, {of_image:?} created",
                image_from_info.memory_requirements
            ));
        }
        if sparse != 0 {
            return Err(format!("{sparse} sparse requirements for a non-sparse image"));
        }
    }
    Ok(())
}

/// A workgroup of exactly the largest subgroup size, required with full subgroups: every
/// invocation sees that size and one subgroup.
fn check_subgroup_size(dev: &Dev) -> Check {
    let d = &dev.device;
    let mut sg = vk::PhysicalDeviceSubgroupSizeControlProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut sg);
    // SAFETY: valid handles and chain.
    unsafe { dev.instance.get_physical_device_properties2(dev.physical, &mut p2) };
    if !sg.required_subgroup_size_stages.contains(vk::ShaderStageFlags::COMPUTE) {
        return Err("requiredSubgroupSizeStages lacks COMPUTE".into());
    }
    let size = sg.max_subgroup_size;
    let out = dev.buffer(8 * size as usize, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    out.write(&vec![0xffu8; 8 * size as usize]);
    let code = ash::util::read_spv(&mut std::io::Cursor::new(include_bytes!("../../shaders/subgroup_size.spv")))
        .map_err(|e| e.to_string())?;
    // SAFETY (this function): valid handles and infos; every object is destroyed here.
    unsafe {
        let module = d
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
            .map_err(err("vkCreateShaderModule"))?;
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        let dsl = d
            .create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding), None)
            .map_err(err("vkCreateDescriptorSetLayout"))?;
        let dsls = [dsl];
        let layout = d
            .create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&dsls), None)
            .map_err(err("vkCreatePipelineLayout"))?;
        let entries = [vk::SpecializationMapEntry { constant_id: 0, offset: 0, size: 4 }];
        let data = size.to_ne_bytes();
        let spec = vk::SpecializationInfo::default().map_entries(&entries).data(&data);
        let mut required =
            vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default().required_subgroup_size(size);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .flags(vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS)
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main")
            .specialization_info(&spec)
            .push_next(&mut required);
        let info = [vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout)];
        let pipeline = d
            .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
            .map_err(|(_, r)| format!("vkCreateComputePipelines failed: {r:?}"))?[0];
        let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 1 }];
        let pool = d
            .create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None)
            .map_err(err("vkCreateDescriptorPool"))?;
        let set = d
            .allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&dsls),
            )
            .map_err(err("vkAllocateDescriptorSets"))?[0];
        let bi = [vk::DescriptorBufferInfo { buffer: out.buffer, offset: 0, range: vk::WHOLE_SIZE }];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(set)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&bi);
        d.update_descriptor_sets(&[write], &[]);
        let cb = dev.command_buffer()?;
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
        d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
        d.cmd_dispatch(cb, 1, 1, 1);
        barrier(d, cb, &[]);
        let r = dev.run(cb);
        d.destroy_descriptor_pool(pool, None);
        d.destroy_pipeline(pipeline, None);
        d.destroy_pipeline_layout(layout, None);
        d.destroy_descriptor_set_layout(dsl, None);
        d.destroy_shader_module(module, None);
        r?;
    }
    let words = out.words();
    for (i, pair) in words.chunks(2).enumerate() {
        if pair != [size, 1] {
            return Err(format!(
                "invocation {i} saw subgroup size {} in {} subgroups, want {size} in 1",
                pair[0], pair[1]
            ));
        }
    }
    Ok(())
}

/// A compute kernel's module, set layout and pipeline layout; destroyed on drop.
struct Kernel<'a> {
    d: &'a ash::Device,
    module: vk::ShaderModule,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
}

impl<'a> Kernel<'a> {
    fn new(dev: &'a Dev, spv: &[u8], bindings: &[vk::DescriptorSetLayoutBinding<'_>]) -> Result<Self, String> {
        let d = &dev.device;
        let code = ash::util::read_spv(&mut std::io::Cursor::new(spv)).map_err(|e| e.to_string())?;
        let mut k = Kernel {
            d,
            module: vk::ShaderModule::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
        };
        // SAFETY (this function): valid device and create infos; Drop destroys what was made.
        unsafe {
            k.module = d
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
                .map_err(err("vkCreateShaderModule"))?;
            k.set_layout = d
                .create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(bindings), None)
                .map_err(err("vkCreateDescriptorSetLayout"))?;
            let sets = [k.set_layout];
            k.layout = d
                .create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&sets), None)
                .map_err(err("vkCreatePipelineLayout"))?;
        }
        Ok(k)
    }

    fn stage(&self) -> vk::PipelineShaderStageCreateInfo<'static> {
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(self.module)
            .name(c"main")
    }

    fn info(&self, flags: vk::PipelineCreateFlags) -> vk::ComputePipelineCreateInfo<'static> {
        vk::ComputePipelineCreateInfo::default().flags(flags).stage(self.stage()).layout(self.layout)
    }
}

impl Drop for Kernel<'_> {
    fn drop(&mut self) {
        // SAFETY: no work using them is pending; null handles are ignored.
        unsafe {
            self.d.destroy_pipeline_layout(self.layout, None);
            self.d.destroy_descriptor_set_layout(self.set_layout, None);
            self.d.destroy_shader_module(self.module, None);
        }
    }
}

fn binding(n: u32, ty: vk::DescriptorType, count: u32) -> vk::DescriptorSetLayoutBinding<'static> {
    vk::DescriptorSetLayoutBinding::default()
        .binding(n)
        .descriptor_type(ty)
        .descriptor_count(count)
        .stage_flags(vk::ShaderStageFlags::COMPUTE)
}

/// An inline uniform block of two uvec4, written in two parts into one set, copied whole into
/// another; a kernel bound to the copy sums the vectors.
fn check_inline_uniform_block(dev: &Dev) -> Check {
    let d = &dev.device;
    let inline = vk::DescriptorType::INLINE_UNIFORM_BLOCK;
    let k = Kernel::new(
        dev,
        include_bytes!("../../shaders/inline_uniform.spv"),
        &[binding(0, inline, 32), binding(1, vk::DescriptorType::STORAGE_BUFFER, 1)],
    )?;
    let out = dev.buffer(16, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    out.write(&[0u8; 16]);
    // SAFETY (this function): valid handles and infos; every object is destroyed here.
    unsafe {
        let pipeline = d
            .create_compute_pipelines(vk::PipelineCache::null(), &[k.info(vk::PipelineCreateFlags::empty())], None)
            .map_err(|(_, r)| format!("vkCreateComputePipelines failed: {r:?}"))?[0];
        let sizes = [
            vk::DescriptorPoolSize { ty: inline, descriptor_count: 64 },
            vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 2 },
        ];
        let mut inline_pool =
            vk::DescriptorPoolInlineUniformBlockCreateInfo::default().max_inline_uniform_block_bindings(2);
        let pool_info =
            vk::DescriptorPoolCreateInfo::default().max_sets(2).pool_sizes(&sizes).push_next(&mut inline_pool);
        let pool = d.create_descriptor_pool(&pool_info, None).map_err(err("vkCreateDescriptorPool"))?;
        let layouts = [k.set_layout, k.set_layout];
        let sets = d
            .allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts),
            )
            .map_err(err("vkAllocateDescriptorSets"))?;
        let a: Vec<u8> = [1u32, 2, 3, 4].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let b: Vec<u8> = [10u32, 20, 30, 40].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let mut wa = vk::WriteDescriptorSetInlineUniformBlock::default().data(&a);
        let mut wb = vk::WriteDescriptorSetInlineUniformBlock::default().data(&b);
        let bi = [vk::DescriptorBufferInfo { buffer: out.buffer, offset: 0, range: vk::WHOLE_SIZE }];
        let writes = [
            vk::WriteDescriptorSet::default()
                .dst_set(sets[0])
                .descriptor_type(inline)
                .descriptor_count(16)
                .push_next(&mut wa),
            vk::WriteDescriptorSet::default()
                .dst_set(sets[0])
                .dst_array_element(16)
                .descriptor_type(inline)
                .descriptor_count(16)
                .push_next(&mut wb),
            vk::WriteDescriptorSet::default()
                .dst_set(sets[1])
                .dst_binding(1)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&bi),
        ];
        let copy = vk::CopyDescriptorSet::default().src_set(sets[0]).dst_set(sets[1]).descriptor_count(32);
        d.update_descriptor_sets(&writes, &[copy]);
        let cb = dev.command_buffer()?;
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
        d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, k.layout, 0, &[sets[1]], &[]);
        d.cmd_dispatch(cb, 1, 1, 1);
        barrier(d, cb, &[]);
        let r = dev.run(cb);
        d.destroy_descriptor_pool(pool, None);
        d.destroy_pipeline(pipeline, None);
        r?;
    }
    match out.words().as_slice() {
        [11, 22, 33, 44] => Ok(()),
        got => Err(format!("the kernel read {got:?} from the inline uniform block, want [11, 22, 33, 44]")),
    }
}

/// Three pipelines: the first may not compile and returns early on failure. A device either
/// had it (all three created) or answers PIPELINE_COMPILE_REQUIRED with every handle null.
fn check_pipeline_cache_control(dev: &Dev) -> Check {
    let d = &dev.device;
    let k = Kernel::new(
        dev,
        include_bytes!("../../shaders/inline_uniform.spv"),
        &[binding(0, vk::DescriptorType::UNIFORM_BUFFER, 1), binding(1, vk::DescriptorType::STORAGE_BUFFER, 1)],
    )?;
    let f =
        vk::PipelineCreateFlags::FAIL_ON_PIPELINE_COMPILE_REQUIRED | vk::PipelineCreateFlags::EARLY_RETURN_ON_FAILURE;
    let infos = [k.info(f), k.info(vk::PipelineCreateFlags::empty()), k.info(vk::PipelineCreateFlags::empty())];
    let mut out = [vk::Pipeline::from_raw(1); 3];
    // SAFETY: valid infos and an output array of their count.
    let r = unsafe {
        (d.fp_v1_0().create_compute_pipelines)(
            d.handle(),
            vk::PipelineCache::null(),
            3,
            infos.as_ptr(),
            std::ptr::null(),
            out.as_mut_ptr(),
        )
    };
    let created = out.iter().filter(|p| **p != vk::Pipeline::null()).count();
    for p in out.iter().filter(|p| **p != vk::Pipeline::null() && p.as_raw() != 1) {
        // SAFETY: a pipeline this call created.
        unsafe { d.destroy_pipeline(*p, None) };
    }
    match (r, created) {
        (vk::Result::SUCCESS, 3) | (vk::Result::PIPELINE_COMPILE_REQUIRED, 0) => Ok(()),
        _ => Err(format!("{r:?} with {created} of 3 pipelines created (handles {out:?})")),
    }
}

fn main() {
    let icd = match Icd::from_args(std::env::args().skip(1)) {
        Ok(Some(icd)) => icd,
        Ok(None) => {
            println!("usage: vk13_check [--icd vortex|lavapipe|PATH]");
            return;
        }
        Err(e) => {
            eprintln!("vk13_check: {e}");
            std::process::exit(2);
        }
    };
    let dev = match create(&icd) {
        Ok(dev) => dev,
        Err(e) => {
            eprintln!("vk13_check: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "device API {}.{}: {}",
        vk::api_version_major(dev.api),
        vk::api_version_minor(dev.api),
        if dev.api < vk::API_VERSION_1_3 { "through the 1.3 extensions" } else { "core" }
    );
    let checks: [NamedCheck; 9] = [
        ("feature and property reports", check_reports),
        ("synchronization2", check_sync2),
        ("copy commands 2", check_copy2),
        ("separate depth/stencil layouts", check_separate_depth_stencil_layouts),
        ("private data", check_private_data),
        ("maintenance4", check_maintenance4),
        ("required subgroup size", check_subgroup_size),
        ("inline uniform block", check_inline_uniform_block),
        ("pipeline creation cache control", check_pipeline_cache_control),
    ];
    let mut passed = 0;
    for (name, check) in checks {
        match check(&dev) {
            Ok(()) => {
                passed += 1;
                println!("ok    {name}");
            }
            Err(e) => println!("FAIL  {name}: {e}"),
        }
    }
    println!("{passed}/{} Vulkan 1.3 checks passed", checks.len());
    drop(dev);
    std::process::exit(if passed == checks.len() { 0 } else { 1 });
}
