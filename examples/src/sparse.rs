//! Sparse binding at the level of the Vulkan calls: a buffer created with
//! `VK_BUFFER_CREATE_SPARSE_BINDING_BIT`, mapped allocations to bind to it, and
//! `vkQueueBindSparse` with semaphores and a fence; plus plain submissions that wait on and
//! signal semaphores, to order work after a bind.

use crate::context::{Context, Shared};
use crate::error::{Error, Result, VkResultExt};
use ash::vk;
use std::rc::Rc;

/// A buffer whose memory is bound page by page (`page` is its memory requirements'
/// alignment, the sparse block size).
pub struct SparseBuffer {
    shared: Rc<Shared>,
    handle: vk::Buffer,
    pub size: u64,
    pub page: u64,
    pub memory_type_bits: u32,
    pub address: vk::DeviceAddress,
}

impl SparseBuffer {
    /// A sparse buffer of `size` bytes (SHADER_DEVICE_ADDRESS is added to `usage`), nothing
    /// bound. Needs `sparseBinding` (enabled by [`Context::with_optional_features`]).
    pub fn new(ctx: &Context, size: u64, usage: vk::BufferUsageFlags) -> Result<SparseBuffer> {
        let shared = ctx.shared.clone();
        let info = vk::BufferCreateInfo::default()
            .flags(vk::BufferCreateFlags::SPARSE_BINDING)
            .size(size)
            .usage(usage | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info; sparseBinding is enabled (the caller's contract).
        let handle = unsafe { shared.device.create_buffer(&info, None) }.vk("vkCreateBuffer (sparse)")?;
        // SAFETY: a valid buffer.
        let (req, address) = unsafe {
            (
                shared.device.get_buffer_memory_requirements(handle),
                shared.device.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(handle)),
            )
        };
        Ok(SparseBuffer { shared, handle, size, page: req.alignment, memory_type_bits: req.memory_type_bits, address })
    }

    pub fn handle(&self) -> vk::Buffer {
        self.handle
    }

    /// A sparse buffer of `size` bytes with every page bound, one bind each, to one
    /// allocation in reverse order (page k to the allocation's page n-1-k): no two
    /// neighbouring pages are neighbours in memory.
    pub fn bound_in_reverse(ctx: &Context, size: u64, usage: vk::BufferUsageFlags) -> Result<(SparseBuffer, Memory)> {
        let buf = SparseBuffer::new(ctx, size, usage)?;
        let (p, n) = (buf.page, size.div_ceil(buf.page));
        let memory = Memory::new(ctx, n * p, buf.memory_type_bits)?;
        let binds: Vec<Bind> =
            (0..n).map(|k| Bind { offset: k * p, size: p, memory: Some((&memory, (n - 1 - k) * p)) }).collect();
        let fence = new_fence(ctx)?;
        let r = bind(ctx, &buf, &binds, &[], &[], fence).and_then(|()| wait_fence(ctx, fence));
        // SAFETY: waited for (or never queued).
        unsafe { ctx.device().destroy_fence(fence, None) };
        r?;
        Ok((buf, memory))
    }
}

impl Drop for SparseBuffer {
    fn drop(&mut self) {
        // SAFETY: every submission using it has been waited for.
        unsafe { self.shared.device.destroy_buffer(self.handle, None) };
    }
}

/// A mapped, host-coherent allocation to bind sparse pages to.
pub struct Memory {
    shared: Rc<Shared>,
    pub handle: vk::DeviceMemory,
    pub size: u64,
    mapped: *mut u8,
}

impl Memory {
    /// `size` zeroed bytes of a host-visible memory type `type_bits` allows.
    pub fn new(ctx: &Context, size: u64, type_bits: u32) -> Result<Memory> {
        let shared = ctx.shared.clone();
        let index = ctx
            .memory_type(type_bits)
            .ok_or_else(|| Error::msg("no host-visible memory type for the sparse buffer"))?;
        let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let info =
            vk::MemoryAllocateInfo::default().allocation_size(size).memory_type_index(index).push_next(&mut flags);
        // SAFETY: valid device and allocate info.
        let handle = unsafe { shared.device.allocate_memory(&info, None) }.vk("vkAllocateMemory")?;
        // SAFETY: host-visible, not mapped yet.
        let mapped = match unsafe { shared.device.map_memory(handle, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) } {
            Ok(p) => p.cast::<u8>(),
            Err(result) => {
                unsafe { shared.device.free_memory(handle, None) };
                return Err(Error::Vulkan { call: "vkMapMemory", result });
            }
        };
        // SAFETY: the mapping covers `size` bytes.
        unsafe { mapped.write_bytes(0, size as usize) };
        Ok(Memory { shared, handle, size, mapped })
    }

    /// The `u32` at byte `offset` (through the mapping; the memory is coherent).
    pub fn word(&self, offset: u64) -> u32 {
        assert!(offset + 4 <= self.size);
        // SAFETY: inside the mapping; unaligned reads are allowed.
        unsafe { self.mapped.add(offset as usize).cast::<u32>().read_unaligned() }
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // SAFETY: nothing in flight uses it (every submission was waited for).
        unsafe { self.shared.device.free_memory(self.handle, None) };
    }
}

/// One `VkSparseMemoryBind`: `size` bytes of the buffer from `offset`, to `memory` at its
/// offset (`None` unbinds).
pub struct Bind<'a> {
    pub offset: u64,
    pub size: u64,
    pub memory: Option<(&'a Memory, u64)>,
}

/// A semaphore (binary, or timeline from an initial value).
pub struct Semaphore {
    shared: Rc<Shared>,
    pub handle: vk::Semaphore,
}

impl Semaphore {
    pub fn new(ctx: &Context, timeline: Option<u64>) -> Result<Semaphore> {
        let mut ty = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(timeline.unwrap_or(0));
        let mut info = vk::SemaphoreCreateInfo::default();
        if timeline.is_some() {
            info = info.push_next(&mut ty);
        }
        // SAFETY: valid device and create info (timeline semaphores are enabled).
        let handle = unsafe { ctx.device().create_semaphore(&info, None) }.vk("vkCreateSemaphore")?;
        Ok(Semaphore { shared: ctx.shared.clone(), handle })
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        // A signalled fence says the batch finished, but a driver's submit thread may still
        // hold the semaphore in its bookkeeping (lavapipe does, and frees it late): waiting
        // for the device to go idle first makes the destroy safe on every driver.
        // SAFETY: no pending submission uses it once the device is idle.
        unsafe {
            let _ = self.shared.device.device_wait_idle();
            self.shared.device.destroy_semaphore(self.handle, None)
        };
    }
}

/// Semaphores a batch waits for or signals, with their values (ignored for binary ones).
pub type Sems<'a> = &'a [(&'a Semaphore, u64)];

/// `vkQueueBindSparse` of `binds` into `buffer`: after `wait`, then signalling `signal` and
/// `fence` (may be null). Does not wait.
pub fn bind(
    ctx: &Context,
    buffer: &SparseBuffer,
    binds: &[Bind],
    wait: Sems,
    signal: Sems,
    fence: vk::Fence,
) -> Result<()> {
    let raw: Vec<vk::SparseMemoryBind> = binds
        .iter()
        .map(|b| vk::SparseMemoryBind {
            resource_offset: b.offset,
            size: b.size,
            memory: b.memory.map_or(vk::DeviceMemory::null(), |(m, _)| m.handle),
            memory_offset: b.memory.map_or(0, |(_, o)| o),
            flags: vk::SparseMemoryBindFlags::empty(),
        })
        .collect();
    let buffer_binds = [vk::SparseBufferMemoryBindInfo::default().buffer(buffer.handle).binds(&raw)];
    let (wait_h, wait_v): (Vec<_>, Vec<_>) = wait.iter().map(|(s, v)| (s.handle, *v)).unzip();
    let (sig_h, sig_v): (Vec<_>, Vec<_>) = signal.iter().map(|(s, v)| (s.handle, *v)).unzip();
    let mut values =
        vk::TimelineSemaphoreSubmitInfo::default().wait_semaphore_values(&wait_v).signal_semaphore_values(&sig_v);
    let info = vk::BindSparseInfo::default()
        .wait_semaphores(&wait_h)
        .buffer_binds(&buffer_binds)
        .signal_semaphores(&sig_h)
        .push_next(&mut values);
    // SAFETY: every handle is live; the queue family has SPARSE_BINDING (the caller checks).
    unsafe { ctx.device().queue_bind_sparse(ctx.queue(), &[info], fence) }.vk("vkQueueBindSparse")
}

/// Submits `record`'s commands after `wait`, signalling `signal`, and waits for them.
pub fn submit_waiting(ctx: &Context, wait: Sems, signal: Sems, record: impl FnOnce(vk::CommandBuffer)) -> Result<()> {
    let d = ctx.device();
    let cmd = ctx.begin_commands()?;
    record(cmd);
    // SAFETY: a recording primary command buffer.
    unsafe { d.end_command_buffer(cmd) }.vk("vkEndCommandBuffer")?;
    let fence = new_fence(ctx)?;
    let (wait_h, wait_v): (Vec<_>, Vec<_>) = wait.iter().map(|(s, v)| (s.handle, *v)).unzip();
    let (sig_h, sig_v): (Vec<_>, Vec<_>) = signal.iter().map(|(s, v)| (s.handle, *v)).unzip();
    let stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; wait_h.len()];
    let mut values =
        vk::TimelineSemaphoreSubmitInfo::default().wait_semaphore_values(&wait_v).signal_semaphore_values(&sig_v);
    let cmds = [cmd];
    let submit = vk::SubmitInfo::default()
        .wait_semaphores(&wait_h)
        .wait_dst_stage_mask(&stages)
        .command_buffers(&cmds)
        .signal_semaphores(&sig_h)
        .push_next(&mut values);
    // SAFETY: live handles; the fence is waited for before anything is freed.
    let r = unsafe { d.queue_submit(ctx.queue(), &[submit], fence) }
        .vk("vkQueueSubmit")
        .and_then(|()| wait_fence(ctx, fence));
    // SAFETY: the submission finished (or never started); a lost device frees nothing in
    // flight either.
    unsafe { d.destroy_fence(fence, None) };
    r
}

pub fn new_fence(ctx: &Context) -> Result<vk::Fence> {
    // SAFETY: valid device.
    unsafe { ctx.device().create_fence(&vk::FenceCreateInfo::default(), None) }.vk("vkCreateFence")
}

/// Waits (up to a minute) for `fence`.
pub fn wait_fence(ctx: &Context, fence: vk::Fence) -> Result<()> {
    // SAFETY: a live fence.
    unsafe { ctx.device().wait_for_fences(&[fence], true, 60_000_000_000) }.vk("vkWaitForFences")
}
