//! Command pools, command buffers, and the `vkCmd*` entry points that bind, dispatch, set
//! events and execute secondary buffers (transfers are in `transfer`, acceleration-structure
//! and query commands with their objects). Each translates its arguments into a typed call
//! on the runtime's command buffer (`vortex_runtime::cmd`), which records the device stream.

use super::descriptor::set;
use super::device::device;
use super::sync::Event;
use crate::handle::{
    disp, disp_destroy, dispatchable, guard_device_result, guard_device_void, nd, nd_destroy, nd_new, OfDevice,
};
use crate::util::{find_in, slice};
use ash::vk;
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::Arc;
use vortex_runtime::buffer::Buffer;
use vortex_runtime::cmd::CommandBuffer;
use vortex_runtime::pipeline::{BindPoint, Pipeline};
use vortex_runtime::renderpass::RenderPass;

pub struct CommandPool {
    pub device: Arc<vortex_runtime::device::Device>,
    pub buffers: Mutex<Vec<vk::CommandBuffer>>,
}

pub struct CommandBufferObj {
    pub cb: Arc<CommandBuffer>,
}

impl OfDevice for vk::CommandBuffer {
    fn runtime_device(self) -> Option<Arc<vortex_runtime::device::Device>> {
        command_buffer(self).ok().map(|cb| cb.device.clone())
    }
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
    guard_device_result("vkCreateCommandPool", d, || {
        let dev = device(d)?;
        let pool = CommandPool { device: dev.rt.clone(), buffers: Mutex::new(Vec::new()) };
        // SAFETY: valid output pointer.
        unsafe { *p_pool = nd_new(Arc::new(pool)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_command_pool(
    d: vk::Device,
    p: vk::CommandPool,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    guard_device_void("vkDestroyCommandPool", d, || {
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
    d: vk::Device,
    p: vk::CommandPool,
    _f: vk::CommandPoolResetFlags,
) -> vk::Result {
    guard_device_result("vkResetCommandPool", d, || {
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
    d: vk::Device,
    p_info: *const vk::CommandBufferAllocateInfo<'_>,
    p_cbs: *mut vk::CommandBuffer,
) -> vk::Result {
    guard_device_result("vkAllocateCommandBuffers", d, || {
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
    d: vk::Device,
    p: vk::CommandPool,
    count: u32,
    p_cbs: *const vk::CommandBuffer,
) {
    guard_device_void("vkFreeCommandBuffers", d, || {
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
    p: *const vk::CommandBufferBeginInfo<'_>,
) -> vk::Result {
    guard_device_result("vkBeginCommandBuffer", cb, || {
        let cb = command_buffer(cb)?;
        // SAFETY: a valid begin info.
        let flags = unsafe { p.as_ref() }.map_or(vk::CommandBufferUsageFlags::empty(), |b| b.flags);
        let continues = cb.level == vk::CommandBufferLevel::SECONDARY
            && flags.contains(vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE);
        // SAFETY: a valid begin info, whose inheritance info a continuing secondary has.
        let views = if continues { Some(unsafe { inherited_view_mask(p)? }) } else { None };
        cb.begin_secondary(views);
        Ok(vk::Result::SUCCESS)
    })
}

/// The view mask a render-pass-continuing secondary buffer renders with: its inherited
/// subpass's, or dynamic rendering's from `VkCommandBufferInheritanceRenderingInfo`.
///
/// # Safety
/// `p` must be a valid begin info whose inheritance info (if any) is valid.
unsafe fn inherited_view_mask(p: *const vk::CommandBufferBeginInfo<'_>) -> Result<u32, vk::Result> {
    // SAFETY: per the contract.
    let Some(inh) = (unsafe { p.as_ref().and_then(|b| b.p_inheritance_info.as_ref()) }) else {
        return Ok(0);
    };
    if inh.render_pass != vk::RenderPass::null() {
        // SAFETY: a live render pass handle.
        return Ok(unsafe { nd::<_, RenderPass>(inh.render_pass)? }.targets(inh.subpass)?.view_mask);
    }
    // SAFETY: the inheritance info's chain.
    let r = unsafe {
        find_in::<vk::CommandBufferInheritanceRenderingInfo>(
            inh.p_next,
            vk::StructureType::COMMAND_BUFFER_INHERITANCE_RENDERING_INFO,
        )
    };
    Ok(r.map_or(0, |r| r.view_mask))
}

pub unsafe extern "system" fn end_command_buffer(cb: vk::CommandBuffer) -> vk::Result {
    guard_device_result("vkEndCommandBuffer", cb, || {
        command_buffer(cb)?.end()?;
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn reset_command_buffer(
    cb: vk::CommandBuffer,
    _f: vk::CommandBufferResetFlags,
) -> vk::Result {
    guard_device_result("vkResetCommandBuffer", cb, || {
        command_buffer(cb)?.reset();
        Ok(vk::Result::SUCCESS)
    })
}

/// Runs a `vkCmd*` body; errors become the command buffer's sticky error, a panic loses the
/// device.
pub(crate) fn cmd(name: &str, h: vk::CommandBuffer, f: impl FnOnce(&CommandBuffer) -> Result<(), vk::Result>) {
    guard_device_void(name, h, || {
        if let Ok(cb) = command_buffer(h) {
            if let Err(e) = f(cb) {
                cb.set_error(name, e);
            }
        }
    })
}

fn bind_point(bp: vk::PipelineBindPoint) -> Result<BindPoint, vk::Result> {
    match bp {
        vk::PipelineBindPoint::COMPUTE => Ok(BindPoint::Compute),
        vk::PipelineBindPoint::GRAPHICS => Ok(BindPoint::Graphics),
        vk::PipelineBindPoint::RAY_TRACING_KHR => Ok(BindPoint::RayTracing),
        other => {
            tracing::error!("bind point {other:?} is not supported");
            Err(vk::Result::ERROR_FEATURE_NOT_PRESENT)
        }
    }
}

pub unsafe extern "system" fn cmd_bind_pipeline(h: vk::CommandBuffer, bp: vk::PipelineBindPoint, p: vk::Pipeline) {
    cmd("vkCmdBindPipeline", h, |cb| {
        // SAFETY: live pipeline handle.
        cb.bind_pipeline(bind_point(bp)?, unsafe { nd::<_, Pipeline>(p)? });
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_bind_descriptor_sets(
    h: vk::CommandBuffer,
    bp: vk::PipelineBindPoint,
    _layout: vk::PipelineLayout,
    first: u32,
    count: u32,
    p_sets: *const vk::DescriptorSet,
    dyn_count: u32,
    p_dyn: *const u32,
) {
    cmd("vkCmdBindDescriptorSets", h, |cb| {
        let bp = bind_point(bp)?;
        // SAFETY: set and offset arrays per the API contract; live set handles.
        let sets = unsafe { slice(p_sets, count) }.iter().map(|&s| unsafe { set(s) }).collect();
        cb.bind_sets(bp, first, sets, unsafe { slice(p_dyn, dyn_count) });
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
        cb.dispatch_indirect(&unsafe { nd::<_, Buffer>(b)? }, offset);
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
        cb.set_event(unsafe { nd::<_, Event>(e)? });
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_reset_event(h: vk::CommandBuffer, e: vk::Event, _s: vk::PipelineStageFlags) {
    cmd("vkCmdResetEvent", h, |cb| {
        // SAFETY: live event handle.
        cb.reset_event(unsafe { nd::<_, Event>(e)? });
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
