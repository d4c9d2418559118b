//! `--window`: the image as it is rendered, in an X11 window, through a swapchain. The
//! renderer's pixels (host-visible) are copied into a staging buffer of the presenting
//! device, from there into the acquired swapchain image, and presented.

use ash::vk;
use std::time::{Duration, Instant};
use vortex_examples::wsi::{image_barrier, Presenter, Swapchain, Target, Window};
use vortex_examples::{Error, Icd, Result, VkResultExt};

const TIMEOUT_NS: u64 = 60_000_000_000;

pub struct Viewer {
    // Field order is drop order: Vulkan objects before the presenter, the window last.
    objects: Objects,
    sc: Option<Swapchain>,
    p: Presenter,
    win: Window,
    size: [u32; 2],
}

struct Objects {
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    acquired: vk::Semaphore,
    staging: vk::Buffer,
    memory: vk::DeviceMemory,
    mapped: *mut u8,
}

impl Viewer {
    /// Opens a `width` x `height` window on `$DISPLAY` and a swapchain for it on `icd`.
    pub fn open(icd: &Icd, width: u32, height: u32) -> Result<Viewer> {
        let (w16, h16) = (u16::try_from(width), u16::try_from(height));
        let (Ok(w16), Ok(h16)) = (w16, h16) else { return Err(Error::msg("the window is too large for X11")) };
        let win = Window::open(w16, h16, "Vortex RT render")?;
        let p = Presenter::new(icd, &Target::Window(&win), false)?;
        let objects = Objects::new(&p, width as u64 * height as u64 * 4)?;
        let mut v = Viewer { objects, sc: None, p, win, size: [width, height] };
        v.recreate()?;
        Ok(v)
    }

    fn format(&self) -> Result<vk::Format> {
        let formats = self.p.formats()?;
        [vk::Format::B8G8R8A8_UNORM, vk::Format::R8G8B8A8_UNORM]
            .into_iter()
            .find(|f| formats.iter().any(|s| s.format == *f))
            .ok_or_else(|| Error::msg("the surface offers no 8-bit UNORM format"))
    }

    fn recreate(&mut self) -> Result<()> {
        // SAFETY: a live device.
        unsafe { self.p.device.device_wait_idle() }.vk("vkDeviceWaitIdle")?;
        let extent = vk::Extent2D { width: self.size[0], height: self.size[1] };
        let usage = vk::ImageUsageFlags::TRANSFER_DST;
        let new = Swapchain::new(&self.p, self.format()?, extent, vk::PresentModeKHR::FIFO, usage, self.sc.as_ref())?;
        if let Some(old) = self.sc.replace(new) {
            old.destroy(&self.p);
        }
        Ok(())
    }

    /// Shows `rgba` (the renderer's opaque RGBA8 rows); a window resized meanwhile gets a new
    /// swapchain and the image in its top-left corner.
    pub fn show(&mut self, rgba: &[u8]) -> Result<()> {
        for _ in 0..3 {
            if self.try_show(rgba)? {
                return Ok(());
            }
            self.recreate()?;
        }
        Err(Error::msg("the swapchain stays out of date"))
    }

    /// Keeps the last image on screen for `seconds` (re-presented, so it survives exposes).
    pub fn hold(&mut self, rgba: &[u8], seconds: f64) -> Result<()> {
        let until = Instant::now() + Duration::from_secs_f64(seconds);
        while Instant::now() < until {
            self.show(rgba)?;
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    fn try_show(&mut self, rgba: &[u8]) -> Result<bool> {
        let (p, o) = (&self.p, &self.objects);
        let sc = self.sc.as_ref().expect("made at open");
        let bgra = sc.format == vk::Format::B8G8R8A8_UNORM;
        // SAFETY: the staging memory is mapped for the image's size and the previous frame's
        // copy has finished (its fence was waited for).
        unsafe {
            p.device.wait_for_fences(&[o.fence], true, TIMEOUT_NS).vk("vkWaitForFences")?;
            let dst = std::slice::from_raw_parts_mut(o.mapped, rgba.len());
            for (d, s) in dst.chunks_exact_mut(4).zip(rgba.chunks_exact(4)) {
                d.copy_from_slice(&if bgra { [s[2], s[1], s[0], 255] } else { [s[0], s[1], s[2], 255] });
            }
            let index = match p.swapchain_fn.acquire_next_image(sc.handle, TIMEOUT_NS, o.acquired, vk::Fence::null()) {
                Ok((i, _)) => i,
                Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => return Ok(false),
                Err(e) => return Err(e).vk("vkAcquireNextImageKHR"),
            };
            p.device.reset_fences(&[o.fence]).vk("vkResetFences")?;
            let image = sc.images[index as usize];
            self.record(image, sc.extent)?;
            let (waits, stages, cmds) = ([o.acquired], [vk::PipelineStageFlags::TRANSFER], [o.cmd]);
            let signals = [sc.rendered[index as usize]];
            let submit = vk::SubmitInfo::default()
                .wait_semaphores(&waits)
                .wait_dst_stage_mask(&stages)
                .command_buffers(&cmds)
                .signal_semaphores(&signals);
            p.device.queue_submit(p.queue, &[submit], o.fence).vk("vkQueueSubmit")?;
            let (chains, indices) = ([sc.handle], [index]);
            let info =
                vk::PresentInfoKHR::default().wait_semaphores(&signals).swapchains(&chains).image_indices(&indices);
            match p.swapchain_fn.queue_present(p.queue, &info) {
                Ok(_) => Ok(true),
                Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                    self.size = self.win.size()?;
                    Ok(false)
                }
                Err(e) => Err(e).vk("vkQueuePresentKHR"),
            }
        }
    }

    /// Clear to black, copy the image's rows (as many as fit), hand it to the engine.
    fn record(&self, image: vk::Image, extent: vk::Extent2D) -> Result<()> {
        let (d, o) = (&self.p.device, &self.objects);
        let t = vk::PipelineStageFlags::TRANSFER;
        let (dst, w) = (vk::ImageLayout::TRANSFER_DST_OPTIMAL, vk::AccessFlags::TRANSFER_WRITE);
        let none = vk::DependencyFlags::empty();
        let layers = vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        };
        let region = vk::BufferImageCopy::default()
            .buffer_row_length(self.size[0])
            .image_subresource(layers)
            .image_extent(vk::Extent3D {
                width: extent.width.min(self.size[0]),
                height: extent.height.min(self.size[1]),
                depth: 1,
            });
        let black = vk::ClearColorValue { float32: [0.0, 0.0, 0.0, 1.0] };
        // SAFETY: recording a command buffer whose last submission has finished.
        unsafe {
            d.begin_command_buffer(o.cmd, &vk::CommandBufferBeginInfo::default()).vk("vkBeginCommandBuffer")?;
            let to_dst = image_barrier(image, vk::ImageLayout::UNDEFINED, dst, vk::AccessFlags::empty(), w);
            d.cmd_pipeline_barrier(o.cmd, t, t, none, &[], &[], &[to_dst]);
            d.cmd_clear_color_image(o.cmd, image, dst, &black, &[vortex_examples::wsi::COLOR_RANGE]);
            d.cmd_pipeline_barrier(o.cmd, t, t, none, &[], &[], &[image_barrier(image, dst, dst, w, w)]);
            d.cmd_copy_buffer_to_image(o.cmd, o.staging, image, dst, &[region]);
            let to_present = image_barrier(image, dst, vk::ImageLayout::PRESENT_SRC_KHR, w, vk::AccessFlags::empty());
            d.cmd_pipeline_barrier(o.cmd, t, vk::PipelineStageFlags::BOTTOM_OF_PIPE, none, &[], &[], &[to_present]);
            d.end_command_buffer(o.cmd).vk("vkEndCommandBuffer")
        }
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let d = &self.p.device;
        // SAFETY: everything here was made from this device and is idle after the wait.
        unsafe {
            let _ = d.device_wait_idle();
            if let Some(sc) = self.sc.take() {
                sc.destroy(&self.p);
            }
            let o = &self.objects;
            d.destroy_fence(o.fence, None);
            d.destroy_semaphore(o.acquired, None);
            d.destroy_command_pool(o.pool, None);
            d.destroy_buffer(o.staging, None);
            d.free_memory(o.memory, None);
        }
    }
}

impl Objects {
    fn new(p: &Presenter, size: u64) -> Result<Objects> {
        let d = &p.device;
        // SAFETY: plain object creation on a live device.
        unsafe {
            let pool_info = vk::CommandPoolCreateInfo::default()
                .queue_family_index(p.family)
                .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
            let pool = d.create_command_pool(&pool_info, None).vk("vkCreateCommandPool")?;
            let alloc = vk::CommandBufferAllocateInfo::default().command_pool(pool).command_buffer_count(1);
            let cmd = d.allocate_command_buffers(&alloc).vk("vkAllocateCommandBuffers")?[0];
            let fence = d
                .create_fence(&vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED), None)
                .vk("vkCreateFence")?;
            let acquired = d.create_semaphore(&vk::SemaphoreCreateInfo::default(), None).vk("vkCreateSemaphore")?;
            let binfo = vk::BufferCreateInfo::default().size(size).usage(vk::BufferUsageFlags::TRANSFER_SRC);
            let staging = d.create_buffer(&binfo, None).vk("vkCreateBuffer")?;
            let req = d.get_buffer_memory_requirements(staging);
            let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let ty = p.memory_type(req.memory_type_bits, host).ok_or_else(|| Error::msg("no host-visible memory"))?;
            let ainfo = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty);
            let memory = d.allocate_memory(&ainfo, None).vk("vkAllocateMemory")?;
            d.bind_buffer_memory(staging, memory, 0).vk("vkBindBufferMemory")?;
            let mapped = d.map_memory(memory, 0, size, vk::MemoryMapFlags::empty()).vk("vkMapMemory")? as *mut u8;
            Ok(Objects { pool, cmd, fence, acquired, staging, memory, mapped })
        }
    }
}
