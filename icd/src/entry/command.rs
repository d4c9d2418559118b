//! Command pools, command buffers and the `vkCmd*` entry points. Recording translates each
//! command into device stream operations right away (see `vortex_runtime::command`).

use super::descriptor::set;
use super::device::device;
use super::sync::Event;
use crate::handle::{disp, disp_destroy, dispatchable, guard_result, guard_void, nd, nd_destroy, nd_new};
use crate::util::slice;
use ash::vk;
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::Arc;
use vortex_runtime::buffer::Buffer;
use vortex_runtime::command::{BufferImageCopy, CommandBuffer, SubresourceRange};
use vortex_runtime::image::Image;
use vortex_runtime::pipeline::Pipeline;
use vortex_runtime::stream::StreamOp;

pub struct CommandPool {
    pub device: Arc<vortex_runtime::device::Device>,
    pub buffers: Mutex<Vec<vk::CommandBuffer>>,
}

pub struct CommandBufferObj {
    pub cb: Arc<CommandBuffer>,
}

/// The runtime command buffer behind a handle.
pub fn command_buffer<'a>(h: vk::CommandBuffer) -> Result<&'a CommandBuffer, vk::Result> {
    // SAFETY: a live command-buffer handle per the API contract.
    Ok(&unsafe { disp::<_, CommandBufferObj>(h)? }.cb)
}

pub unsafe extern "system" fn create_command_pool(
    d: vk::Device,
    _p: *const vk::CommandPoolCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_pool: *mut vk::CommandPool,
) -> vk::Result {
    guard_result("vkCreateCommandPool", || {
        let dev = device(d)?;
        let pool = CommandPool { device: dev.rt.clone(), buffers: Mutex::new(Vec::new()) };
        // SAFETY: valid output pointer.
        unsafe { *p_pool = nd_new(Arc::new(pool)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_command_pool(
    _d: vk::Device,
    p: vk::CommandPool,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    guard_void("vkDestroyCommandPool", || {
        // SAFETY: a live pool handle (or null); its buffers die with it.
        if let Ok(pool) = unsafe { nd::<_, CommandPool>(p) } {
            for cb in pool.buffers.lock().drain(..) {
                // SAFETY: the pool owns these command buffers.
                unsafe { disp_destroy::<_, CommandBufferObj>(cb) };
            }
            // SAFETY: the handle's own count.
            unsafe { nd_destroy::<_, CommandPool>(p) };
        }
    })
}

pub unsafe extern "system" fn reset_command_pool(
    _d: vk::Device,
    p: vk::CommandPool,
    _f: vk::CommandPoolResetFlags,
) -> vk::Result {
    guard_result("vkResetCommandPool", || {
        // SAFETY: live pool handle.
        let pool = unsafe { nd::<_, CommandPool>(p)? };
        for &cb in pool.buffers.lock().iter() {
            command_buffer(cb)?.reset();
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn trim_command_pool(_d: vk::Device, _p: vk::CommandPool, _f: vk::CommandPoolTrimFlags) {}

pub unsafe extern "system" fn allocate_command_buffers(
    _d: vk::Device,
    p_info: *const vk::CommandBufferAllocateInfo<'_>,
    p_cbs: *mut vk::CommandBuffer,
) -> vk::Result {
    guard_result("vkAllocateCommandBuffers", || {
        // SAFETY: valid allocate info and live pool handle.
        let info = unsafe { &*p_info };
        let pool = unsafe { nd::<_, CommandPool>(info.command_pool)? };
        let mut list = pool.buffers.lock();
        for i in 0..info.command_buffer_count as usize {
            let cb: vk::CommandBuffer =
                dispatchable(CommandBufferObj { cb: Arc::new(CommandBuffer::new(pool.device.clone(), info.level)) });
            list.push(cb);
            // SAFETY: the output array holds command_buffer_count handles.
            unsafe { *p_cbs.add(i) = cb };
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn free_command_buffers(
    _d: vk::Device,
    p: vk::CommandPool,
    count: u32,
    p_cbs: *const vk::CommandBuffer,
) {
    guard_void("vkFreeCommandBuffers", || {
        // SAFETY: live pool handle and buffer array.
        let Ok(pool) = (unsafe { nd::<_, CommandPool>(p) }) else { return };
        let mut list = pool.buffers.lock();
        for &cb in unsafe { slice(p_cbs, count) } {
            if let Some(pos) = list.iter().position(|&x| x == cb) {
                list.swap_remove(pos);
                // SAFETY: owned by this pool, freed once.
                unsafe { disp_destroy::<_, CommandBufferObj>(cb) };
            }
        }
    })
}

pub unsafe extern "system" fn begin_command_buffer(
    cb: vk::CommandBuffer,
    _p: *const vk::CommandBufferBeginInfo<'_>,
) -> vk::Result {
    guard_result("vkBeginCommandBuffer", || {
        command_buffer(cb)?.begin();
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn end_command_buffer(cb: vk::CommandBuffer) -> vk::Result {
    guard_result("vkEndCommandBuffer", || {
        command_buffer(cb)?.end()?;
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn reset_command_buffer(
    cb: vk::CommandBuffer,
    _f: vk::CommandBufferResetFlags,
) -> vk::Result {
    guard_result("vkResetCommandBuffer", || {
        command_buffer(cb)?.reset();
        Ok(vk::Result::SUCCESS)
    })
}

/// Runs a `vkCmd*` body; errors become the command buffer's sticky error.
pub(crate) fn cmd(name: &str, h: vk::CommandBuffer, f: impl FnOnce(&CommandBuffer) -> Result<(), vk::Result>) {
    guard_void(name, || {
        if let Ok(cb) = command_buffer(h) {
            if let Err(e) = f(cb) {
                cb.set_error(name, e);
            }
        }
    })
}

pub unsafe extern "system" fn cmd_bind_pipeline(h: vk::CommandBuffer, bp: vk::PipelineBindPoint, p: vk::Pipeline) {
    cmd("vkCmdBindPipeline", h, |cb| {
        if bp != vk::PipelineBindPoint::COMPUTE {
            tracing::error!("vkCmdBindPipeline: bind point {bp:?} is not supported");
            return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
        }
        // SAFETY: live pipeline handle.
        cb.bind_pipeline(unsafe { nd::<_, Pipeline>(p)? });
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_bind_descriptor_sets(
    h: vk::CommandBuffer,
    _bp: vk::PipelineBindPoint,
    _layout: vk::PipelineLayout,
    first: u32,
    count: u32,
    p_sets: *const vk::DescriptorSet,
    dyn_count: u32,
    p_dyn: *const u32,
) {
    cmd("vkCmdBindDescriptorSets", h, |cb| {
        // SAFETY: set and offset arrays per the API contract; live set handles.
        let sets = unsafe { slice(p_sets, count) }.iter().map(|&s| unsafe { set(s) }).collect();
        cb.bind_sets(first, sets, unsafe { slice(p_dyn, dyn_count) });
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_push_constants(
    h: vk::CommandBuffer,
    _layout: vk::PipelineLayout,
    _stages: vk::ShaderStageFlags,
    offset: u32,
    size: u32,
    p_values: *const c_void,
) {
    cmd("vkCmdPushConstants", h, |cb| {
        // SAFETY: `size` bytes of push-constant data.
        cb.push_constants(offset, unsafe { slice(p_values as *const u8, size) });
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_dispatch(h: vk::CommandBuffer, x: u32, y: u32, z: u32) {
    cmd("vkCmdDispatch", h, |cb| {
        cb.dispatch([0; 3], [x, y, z]);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_dispatch_base(
    h: vk::CommandBuffer,
    bx: u32,
    by: u32,
    bz: u32,
    x: u32,
    y: u32,
    z: u32,
) {
    cmd("vkCmdDispatchBase", h, |cb| {
        cb.dispatch([bx, by, bz], [x, y, z]);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_dispatch_indirect(h: vk::CommandBuffer, b: vk::Buffer, offset: u64) {
    cmd("vkCmdDispatchIndirect", h, |cb| {
        // SAFETY: live buffer handle.
        let buf = unsafe { nd::<_, Buffer>(b)? };
        cb.dispatch_indirect(buf.address_at(offset)?);
        cb.keep_alive("vkCmdDispatchIndirect", buf);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_copy_buffer(
    h: vk::CommandBuffer,
    src: vk::Buffer,
    dst: vk::Buffer,
    count: u32,
    p_regions: *const vk::BufferCopy,
) {
    cmd("vkCmdCopyBuffer", h, |cb| {
        // SAFETY: live buffer handles and region array.
        let (s, d) = unsafe { (nd::<_, Buffer>(src)?, nd::<_, Buffer>(dst)?) };
        for r in unsafe { slice(p_regions, count) } {
            let op = StreamOp::Copy { src: s.address_at(r.src_offset)?, dst: d.address_at(r.dst_offset)?, len: r.size };
            cb.push_op("vkCmdCopyBuffer", op);
        }
        cb.keep_alive("vkCmdCopyBuffer", s);
        cb.keep_alive("vkCmdCopyBuffer", d);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_copy_buffer2(h: vk::CommandBuffer, p: *const vk::CopyBufferInfo2<'_>) {
    // SAFETY: valid copy info.
    let i = unsafe { &*p };
    let regions: Vec<vk::BufferCopy> = unsafe { slice(i.p_regions, i.region_count) }
        .iter()
        .map(|r| vk::BufferCopy { src_offset: r.src_offset, dst_offset: r.dst_offset, size: r.size })
        .collect();
    // SAFETY: forwarded handles.
    unsafe { cmd_copy_buffer(h, i.src_buffer, i.dst_buffer, regions.len() as u32, regions.as_ptr()) }
}

pub unsafe extern "system" fn cmd_fill_buffer(h: vk::CommandBuffer, b: vk::Buffer, offset: u64, size: u64, data: u32) {
    cmd("vkCmdFillBuffer", h, |cb| {
        // SAFETY: live buffer handle.
        let buf = unsafe { nd::<_, Buffer>(b)? };
        let len = if size == vk::WHOLE_SIZE { (buf.size - offset) & !3 } else { size };
        cb.push_op("vkCmdFillBuffer", StreamOp::Fill { dst: buf.address_at(offset)?, len, word: data });
        cb.keep_alive("vkCmdFillBuffer", buf);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_update_buffer(
    h: vk::CommandBuffer,
    b: vk::Buffer,
    offset: u64,
    size: u64,
    p: *const c_void,
) {
    cmd("vkCmdUpdateBuffer", h, |cb| {
        // SAFETY: live buffer handle; `size` bytes of data.
        let buf = unsafe { nd::<_, Buffer>(b)? };
        let data = unsafe { slice(p as *const u8, size as u32) }.to_vec();
        cb.push_op("vkCmdUpdateBuffer", StreamOp::Write { dst: buf.address_at(offset)?, data });
        cb.keep_alive("vkCmdUpdateBuffer", buf);
        Ok(())
    })
}

fn region(r: &vk::BufferImageCopy) -> BufferImageCopy {
    BufferImageCopy {
        buffer_offset: r.buffer_offset,
        buffer_row_length: r.buffer_row_length,
        buffer_image_height: r.buffer_image_height,
        mip_level: r.image_subresource.mip_level,
        base_layer: r.image_subresource.base_array_layer,
        layer_count: r.image_subresource.layer_count,
        offset: [r.image_offset.x, r.image_offset.y, r.image_offset.z],
        extent: [r.image_extent.width, r.image_extent.height, r.image_extent.depth],
    }
}

/// Both buffer <-> image copies: `to_image` picks the direction.
unsafe fn copy_buffer_image(
    name: &str,
    h: vk::CommandBuffer,
    buffer: vk::Buffer,
    image: vk::Image,
    count: u32,
    p: *const vk::BufferImageCopy,
    to_image: bool,
) {
    cmd(name, h, |cb| {
        // SAFETY: live handles and region array.
        let (b, i) = unsafe { (nd::<_, Buffer>(buffer)?, nd::<_, Image>(image)?) };
        let regions: Vec<_> = unsafe { slice(p, count) }.iter().map(region).collect();
        cb.copy_buffer_image(b.address_at(0)?, &i, &regions, to_image);
        cb.keep_alive(name, b);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_copy_buffer_to_image(
    h: vk::CommandBuffer,
    src: vk::Buffer,
    dst: vk::Image,
    _layout: vk::ImageLayout,
    count: u32,
    p: *const vk::BufferImageCopy,
) {
    // SAFETY: forwarded arguments.
    unsafe { copy_buffer_image("vkCmdCopyBufferToImage", h, src, dst, count, p, true) }
}

pub unsafe extern "system" fn cmd_copy_image_to_buffer(
    h: vk::CommandBuffer,
    src: vk::Image,
    _layout: vk::ImageLayout,
    dst: vk::Buffer,
    count: u32,
    p: *const vk::BufferImageCopy,
) {
    // SAFETY: forwarded arguments.
    unsafe { copy_buffer_image("vkCmdCopyImageToBuffer", h, dst, src, count, p, false) }
}

pub unsafe extern "system" fn cmd_copy_image(
    h: vk::CommandBuffer,
    src: vk::Image,
    _sl: vk::ImageLayout,
    dst: vk::Image,
    _dl: vk::ImageLayout,
    count: u32,
    p: *const vk::ImageCopy,
) {
    cmd("vkCmdCopyImage", h, |cb| {
        // SAFETY: live handles and region array.
        let (s, d) = unsafe { (nd::<_, Image>(src)?, nd::<_, Image>(dst)?) };
        let regions: Vec<_> = unsafe { slice(p, count) }
            .iter()
            .map(|r| vortex_runtime::command::ImageCopy {
                src_level: r.src_subresource.mip_level,
                src_layer: r.src_subresource.base_array_layer,
                layer_count: r.src_subresource.layer_count,
                src_offset: [r.src_offset.x, r.src_offset.y, r.src_offset.z],
                dst_level: r.dst_subresource.mip_level,
                dst_layer: r.dst_subresource.base_array_layer,
                dst_offset: [r.dst_offset.x, r.dst_offset.y, r.dst_offset.z],
                extent: [r.extent.width, r.extent.height, r.extent.depth],
            })
            .collect();
        cb.copy_image(&s, &d, &regions);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_clear_color_image(
    h: vk::CommandBuffer,
    image: vk::Image,
    _layout: vk::ImageLayout,
    p_color: *const vk::ClearColorValue,
    count: u32,
    p_ranges: *const vk::ImageSubresourceRange,
) {
    cmd("vkCmdClearColorImage", h, |cb| {
        // SAFETY: live image handle, clear value and range array.
        let img = unsafe { nd::<_, Image>(image)? };
        let color = unsafe { (*p_color).uint32 };
        let ranges: Vec<_> = unsafe { slice(p_ranges, count) }
            .iter()
            .map(|r| SubresourceRange {
                base_level: r.base_mip_level,
                level_count: r.level_count,
                base_layer: r.base_array_layer,
                layer_count: r.layer_count,
            })
            .collect();
        cb.clear_color_image(&img, color, &ranges);
        Ok(())
    })
}

/// Barriers need no work: the queue executes commands in order and memory is coherent.
/// Every stage and access bit is accepted, ray-tracing ones included.
pub unsafe extern "system" fn cmd_pipeline_barrier(
    _h: vk::CommandBuffer,
    _src: vk::PipelineStageFlags,
    _dst: vk::PipelineStageFlags,
    _dep: vk::DependencyFlags,
    _mc: u32,
    _m: *const vk::MemoryBarrier<'_>,
    _bc: u32,
    _b: *const vk::BufferMemoryBarrier<'_>,
    _ic: u32,
    _i: *const vk::ImageMemoryBarrier<'_>,
) {
}

pub unsafe extern "system" fn cmd_pipeline_barrier2(_h: vk::CommandBuffer, _d: *const vk::DependencyInfo<'_>) {}

pub unsafe extern "system" fn cmd_set_event(h: vk::CommandBuffer, e: vk::Event, _s: vk::PipelineStageFlags) {
    cmd("vkCmdSetEvent", h, |cb| {
        // SAFETY: live event handle.
        let event = unsafe { nd::<_, Event>(e)? };
        cb.push_op("vkCmdSetEvent", StreamOp::SetEvent { event, value: true });
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_reset_event(h: vk::CommandBuffer, e: vk::Event, _s: vk::PipelineStageFlags) {
    cmd("vkCmdResetEvent", h, |cb| {
        // SAFETY: live event handle.
        let event = unsafe { nd::<_, Event>(e)? };
        cb.push_op("vkCmdResetEvent", StreamOp::SetEvent { event, value: false });
        Ok(())
    })
}

/// In-order execution makes every device-side event wait already satisfied.
pub unsafe extern "system" fn cmd_wait_events(
    _h: vk::CommandBuffer,
    _n: u32,
    _e: *const vk::Event,
    _s: vk::PipelineStageFlags,
    _d: vk::PipelineStageFlags,
    _mc: u32,
    _m: *const vk::MemoryBarrier<'_>,
    _bc: u32,
    _b: *const vk::BufferMemoryBarrier<'_>,
    _ic: u32,
    _i: *const vk::ImageMemoryBarrier<'_>,
) {
}

pub unsafe extern "system" fn cmd_execute_commands(h: vk::CommandBuffer, count: u32, p: *const vk::CommandBuffer) {
    cmd("vkCmdExecuteCommands", h, |cb| {
        // SAFETY: secondary command-buffer array.
        for &s in unsafe { slice(p, count) } {
            match command_buffer(s)?.recording() {
                Some(r) => cb.execute(r),
                None => {
                    tracing::error!("vkCmdExecuteCommands: secondary command buffer is not executable");
                    return Err(vk::Result::ERROR_UNKNOWN);
                }
            }
        }
        Ok(())
    })
}
