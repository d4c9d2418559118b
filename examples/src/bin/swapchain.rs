//! Swapchain check: a window (or a headless surface) gets 100 frames, each cleared to its own
//! colour with a patch copied in from a buffer, presented in FIFO; the window is resized until
//! the swapchain reports OUT_OF_DATE or SUBOPTIMAL, and it is recreated with `oldSwapchain`
//! in MAILBOX and then IMMEDIATE. The window must show the last frame, and with
//! `--check-dump DIR` every frame the driver dumped (`VORTEX_PRESENT_DUMP=DIR`) must be
//! exactly the colours presented. `--validate` runs under the Khronos validation layer and
//! fails on any error message. `--bad-use` checks that misuse gets Vulkan errors instead.
//!
//! Usage: swapchain [--icd vortex|lavapipe|MANIFEST] [--headless | --xlib] [--validate]
//!                  [--frames N] [--check-dump DIR] [--bad-use]
//!
//! `--xlib` makes the window on an Xlib `Display` and the surface with `VK_KHR_xlib_surface`.

use ash::vk;
use std::path::{Path, PathBuf};
use std::time::Duration;
use vortex_examples::wsi::{self, image_barrier, Presenter, Swapchain, Target, Window};
use vortex_examples::{Error, Icd, Result, VkResultExt};

/// The patch copied into every frame: its RGB colour, position and side.
const PATCH_RGB: [u8; 3] = [255, 128, 0];
const PATCH_AT: u32 = 8;
const PATCH_SIDE: u32 = 16;
const WINDOW: [u16; 2] = [320, 240];
const RESIZED: [u32; 2] = [400, 300];
const TIMEOUT_NS: u64 = 30_000_000_000;

struct Args {
    icd: Icd,
    headless: bool,
    validate: bool,
    frames: u32,
    check_dump: Option<PathBuf>,
    bad_use: bool,
    xlib: bool,
}

fn parse_args() -> std::result::Result<Args, String> {
    let mut a = Args {
        icd: Icd::Vortex,
        headless: false,
        validate: false,
        frames: 100,
        check_dump: None,
        bad_use: false,
        xlib: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--icd" => a.icd = Icd::parse(&it.next().ok_or("--icd needs a value")?),
            "--headless" => a.headless = true,
            "--validate" => a.validate = true,
            "--bad-use" => a.bad_use = true,
            "--xlib" => a.xlib = true,
            "--frames" => a.frames = it.next().and_then(|n| n.parse().ok()).ok_or("--frames needs a count")?,
            "--check-dump" => a.check_dump = Some(it.next().ok_or("--check-dump needs a directory")?.into()),
            _ => return Err(format!("unexpected argument {arg:?}")),
        }
    }
    Ok(a)
}

/// The colour of the n-th frame of the run.
fn colour(n: u64) -> [u8; 3] {
    [(n * 37 % 256) as u8, ((n * 91 + 50) % 256) as u8, ((n * 13 + 100) % 256) as u8]
}

/// What a present did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Shown,
    Suboptimal,
    OutOfDate,
}

/// One present: which swapchain (in creation order), its number there, what was in it.
struct Presented {
    swapchain: usize,
    seq: u64,
    rgb: [u8; 3],
    extent: vk::Extent2D,
    mode: vk::PresentModeKHR,
    shown: bool,
}

/// Two frames in flight: a command buffer, fence and acquire semaphore each.
struct Frames<'a> {
    p: &'a Presenter,
    pool: vk::CommandPool,
    cmds: Vec<vk::CommandBuffer>,
    fences: Vec<vk::Fence>,
    acquired: Vec<vk::Semaphore>,
    staging: vk::Buffer,
    staging_mem: vk::DeviceMemory,
    slot: usize,
    count: u64,
    /// Presents made on each swapchain so far.
    seqs: Vec<u64>,
    log: Vec<Presented>,
}

impl<'a> Frames<'a> {
    fn new(p: &'a Presenter, format: vk::Format) -> Result<Frames<'a>> {
        let d = &p.device;
        // SAFETY: plain object creation on a live device; the staging memory is mapped and
        // written within its size.
        unsafe {
            let pool_info = vk::CommandPoolCreateInfo::default()
                .queue_family_index(p.family)
                .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
            let pool = d.create_command_pool(&pool_info, None).vk("vkCreateCommandPool")?;
            let alloc = vk::CommandBufferAllocateInfo::default().command_pool(pool).command_buffer_count(2);
            let cmds = d.allocate_command_buffers(&alloc).vk("vkAllocateCommandBuffers")?;
            let mut fences = Vec::new();
            let mut acquired = Vec::new();
            for _ in 0..2 {
                let f = vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED);
                fences.push(d.create_fence(&f, None).vk("vkCreateFence")?);
                acquired.push(d.create_semaphore(&vk::SemaphoreCreateInfo::default(), None).vk("vkCreateSemaphore")?);
            }
            let size = (PATCH_SIDE * PATCH_SIDE * 4) as u64;
            let binfo = vk::BufferCreateInfo::default().size(size).usage(vk::BufferUsageFlags::TRANSFER_SRC);
            let staging = d.create_buffer(&binfo, None).vk("vkCreateBuffer")?;
            let req = d.get_buffer_memory_requirements(staging);
            let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let ty = p.memory_type(req.memory_type_bits, host).ok_or_else(|| Error::msg("no host-visible memory"))?;
            let ainfo = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty);
            let staging_mem = d.allocate_memory(&ainfo, None).vk("vkAllocateMemory")?;
            d.bind_buffer_memory(staging, staging_mem, 0).vk("vkBindBufferMemory")?;
            let ptr = d.map_memory(staging_mem, 0, size, vk::MemoryMapFlags::empty()).vk("vkMapMemory")? as *mut u8;
            let [r, g, b] = PATCH_RGB;
            let texel = if format == vk::Format::B8G8R8A8_UNORM { [b, g, r, 255] } else { [r, g, b, 255] };
            for i in 0..(PATCH_SIDE * PATCH_SIDE) as usize {
                std::ptr::copy_nonoverlapping(texel.as_ptr(), ptr.add(4 * i), 4);
            }
            d.unmap_memory(staging_mem);
            Ok(Frames {
                p,
                pool,
                cmds,
                fences,
                acquired,
                staging,
                staging_mem,
                slot: 0,
                count: 0,
                seqs: Vec::new(),
                log: Vec::new(),
            })
        }
    }

    /// Clear to `rgb`, copy the patch in, hand the image to the presentation engine.
    fn record(&self, cmd: vk::CommandBuffer, image: vk::Image, rgb: [u8; 3]) -> Result<()> {
        let d = &self.p.device;
        let t = vk::PipelineStageFlags::TRANSFER;
        let (dst, w) = (vk::ImageLayout::TRANSFER_DST_OPTIMAL, vk::AccessFlags::TRANSFER_WRITE);
        let clear =
            vk::ClearColorValue { float32: [rgb[0] as f32 / 255.0, rgb[1] as f32 / 255.0, rgb[2] as f32 / 255.0, 1.0] };
        let region = vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_offset(vk::Offset3D { x: PATCH_AT as i32, y: PATCH_AT as i32, z: 0 })
            .image_extent(vk::Extent3D { width: PATCH_SIDE, height: PATCH_SIDE, depth: 1 });
        let undefined = vk::ImageLayout::UNDEFINED;
        let to_present = image_barrier(image, dst, vk::ImageLayout::PRESENT_SRC_KHR, w, vk::AccessFlags::empty());
        let none = vk::DependencyFlags::empty();
        // SAFETY: recording into a command buffer whose previous submission has finished.
        unsafe {
            d.begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .vk("vkBeginCommandBuffer")?;
            // The transition waits for the acquire semaphore (waited at the transfer stage).
            d.cmd_pipeline_barrier(
                cmd,
                t,
                t,
                none,
                &[],
                &[],
                &[image_barrier(image, undefined, dst, vk::AccessFlags::empty(), w)],
            );
            d.cmd_clear_color_image(cmd, image, dst, &clear, &[wsi::COLOR_RANGE]);
            d.cmd_pipeline_barrier(cmd, t, t, none, &[], &[], &[image_barrier(image, dst, dst, w, w)]);
            d.cmd_copy_buffer_to_image(cmd, self.staging, image, dst, &[region]);
            d.cmd_pipeline_barrier(cmd, t, vk::PipelineStageFlags::BOTTOM_OF_PIPE, none, &[], &[], &[to_present]);
            d.end_command_buffer(cmd).vk("vkEndCommandBuffer")
        }
    }

    /// One frame on swapchain number `serial`.
    fn frame(&mut self, sc: &Swapchain, serial: usize) -> Result<Outcome> {
        let (p, d, slot) = (self.p, &self.p.device, self.slot);
        self.slot ^= 1;
        if self.seqs.len() <= serial {
            self.seqs.resize(serial + 1, 0);
        }
        // SAFETY: live handles; the slot's fence guards its command buffer and semaphore.
        unsafe {
            d.wait_for_fences(&[self.fences[slot]], true, TIMEOUT_NS).vk("vkWaitForFences")?;
            let acquired =
                p.swapchain_fn.acquire_next_image(sc.handle, TIMEOUT_NS, self.acquired[slot], vk::Fence::null());
            let (index, suboptimal) = match acquired {
                Ok(r) => r,
                Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => return Ok(Outcome::OutOfDate),
                Err(e) => return Err(e).vk("vkAcquireNextImageKHR"),
            };
            d.reset_fences(&[self.fences[slot]]).vk("vkResetFences")?;
            let rgb = colour(self.count);
            self.count += 1;
            let cmd = self.cmds[slot];
            self.record(cmd, sc.images[index as usize], rgb)?;
            let (waits, stages) = ([self.acquired[slot]], [vk::PipelineStageFlags::TRANSFER]);
            let (cmds, signals) = ([cmd], [sc.rendered[index as usize]]);
            let submit = vk::SubmitInfo::default()
                .wait_semaphores(&waits)
                .wait_dst_stage_mask(&stages)
                .command_buffers(&cmds)
                .signal_semaphores(&signals);
            d.queue_submit(p.queue, &[submit], self.fences[slot]).vk("vkQueueSubmit")?;
            let (chains, indices) = ([sc.handle], [index]);
            let info =
                vk::PresentInfoKHR::default().wait_semaphores(&signals).swapchains(&chains).image_indices(&indices);
            let outcome = match p.swapchain_fn.queue_present(p.queue, &info) {
                Ok(false) if !suboptimal => Outcome::Shown,
                Ok(_) => Outcome::Suboptimal,
                Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Outcome::OutOfDate,
                Err(e) => return Err(e).vk("vkQueuePresentKHR"),
            };
            let seq = self.seqs[serial];
            self.seqs[serial] += 1;
            let shown = outcome != Outcome::OutOfDate;
            self.log.push(Presented { swapchain: serial, seq, rgb, extent: sc.extent, mode: sc.mode, shown });
            Ok(outcome)
        }
    }

    fn destroy(&self) {
        let d = &self.p.device;
        // SAFETY: the caller waited for the device to be idle.
        unsafe {
            let _ = d.device_wait_idle();
            for (&f, &s) in self.fences.iter().zip(&self.acquired) {
                d.destroy_fence(f, None);
                d.destroy_semaphore(s, None);
            }
            d.destroy_command_pool(self.pool, None);
            d.destroy_buffer(self.staging, None);
            d.free_memory(self.staging_mem, None);
        }
    }
}

fn choose_format(p: &Presenter) -> Result<vk::Format> {
    let formats = p.formats()?;
    [vk::Format::B8G8R8A8_UNORM, vk::Format::R8G8B8A8_UNORM]
        .into_iter()
        .find(|f| formats.iter().any(|s| s.format == *f && s.color_space == vk::ColorSpaceKHR::SRGB_NONLINEAR))
        .ok_or_else(|| Error::msg(format!("no 8-bit UNORM surface format among {formats:?}")))
}

/// The window shows `rgb` with the patch at its place (24-bit TrueColor: BGRX pixels).
fn check_window(win: &Window, rgb: [u8; 3]) -> Result<()> {
    std::thread::sleep(Duration::from_millis(500));
    let (px, [w, h]) = win.pixels()?;
    let at = |x: u32, y: u32| {
        let i = 4 * (y * w + x) as usize;
        [px[i + 2], px[i + 1], px[i]]
    };
    let (centre, patch) = (at(w / 2, h / 2), at(PATCH_AT + 4, PATCH_AT + 4));
    if centre != rgb || patch != PATCH_RGB {
        return Err(Error::msg(format!(
            "the {w}x{h} window shows {centre:?} (patch {patch:?}), the last frame was {rgb:?} (patch {PATCH_RGB:?})"
        )));
    }
    Ok(())
}

/// Presents `n` frames that must all be shown.
fn frames_shown(f: &mut Frames<'_>, sc: &Swapchain, serial: usize, n: u32) -> Result<()> {
    for i in 0..n {
        let o = f.frame(sc, serial)?;
        if o != Outcome::Shown {
            return Err(Error::msg(format!("frame {i} on swapchain {serial} ({:?}): {o:?}", sc.mode)));
        }
    }
    Ok(())
}

fn run(args: &Args) -> Result<String> {
    let win = match (args.headless, args.xlib) {
        (true, _) => None,
        (false, false) => Some(Window::open(WINDOW[0], WINDOW[1], "vortex swapchain")?),
        (false, true) => Some(Window::open_xlib(WINDOW[0], WINDOW[1], "vortex swapchain (Xlib)")?),
    };
    let target = win.as_ref().map_or(Target::Headless, Target::Window);
    let p = Presenter::new(&args.icd, &target, args.validate)?;
    let format = choose_format(&p)?;
    let modes = p.present_modes()?;
    let caps = p.capabilities()?;
    let expected = if args.headless { [u32::MAX; 2] } else { [WINDOW[0] as u32, WINDOW[1] as u32] };
    if [caps.current_extent.width, caps.current_extent.height] != expected {
        return Err(Error::msg(format!("currentExtent is {:?}, expected {expected:?}", caps.current_extent)));
    }
    if let Some(w) = &win {
        // SAFETY: the window's live connection or Display.
        let ok = unsafe {
            match w.display {
                None => ash::khr::xcb_surface::Instance::new(&p.entry, &p.instance)
                    .get_physical_device_xcb_presentation_support(
                        p.physical,
                        p.family,
                        &mut *w.raw_connection(),
                        w.visual,
                    ),
                Some(dpy) => ash::khr::xlib_surface::Instance::new(&p.entry, &p.instance)
                    .get_physical_device_xlib_presentation_support(p.physical, p.family, dpy, w.visual),
            }
        };
        if !ok {
            return Err(Error::msg("the queue family cannot present to the window's visual"));
        }
    }
    let usage = vk::ImageUsageFlags::TRANSFER_DST;
    if !caps.supported_usage_flags.contains(usage | vk::ImageUsageFlags::COLOR_ATTACHMENT) {
        return Err(Error::msg(format!("supportedUsageFlags {:?}", caps.supported_usage_flags)));
    }
    let mut f = Frames::new(&p, format)?;
    let first = vk::Extent2D { width: WINDOW[0] as u32, height: WINDOW[1] as u32 };
    let sc0 = Swapchain::new(&p, format, first, vk::PresentModeKHR::FIFO, usage, None)?;
    frames_shown(&mut f, &sc0, 0, args.frames)?;
    // SAFETY: a live device.
    unsafe { p.device.device_wait_idle() }.vk("vkDeviceWaitIdle")?;
    if let Some(w) = &win {
        check_window(w, f.log.last().expect("frames").rgb)?;
    }
    // A resize makes the swapchain out of date (or suboptimal) within a few frames.
    let mut resized = vk::Extent2D { width: 200, height: 150 };
    let mut signal = None;
    if let Some(w) = &win {
        w.resize(RESIZED[0], RESIZED[1])?;
        for _ in 0..30 {
            match f.frame(&sc0, 0)? {
                Outcome::Shown => {}
                o => {
                    signal = Some(o);
                    break;
                }
            }
        }
        signal.ok_or_else(|| Error::msg("30 frames after the resize, neither OUT_OF_DATE nor SUBOPTIMAL"))?;
        resized = vk::Extent2D { width: RESIZED[0], height: RESIZED[1] };
    }
    let pick = |m: vk::PresentModeKHR| if modes.contains(&m) { m } else { vk::PresentModeKHR::FIFO };
    let sc1 = Swapchain::new(&p, format, resized, pick(vk::PresentModeKHR::MAILBOX), usage, Some(&sc0))?;
    // SAFETY: a live device.
    unsafe { p.device.device_wait_idle() }.vk("vkDeviceWaitIdle")?;
    sc0.destroy(&p);
    if sc1.extent != resized {
        return Err(Error::msg(format!("the recreated swapchain is {:?}, not {resized:?}", sc1.extent)));
    }
    frames_shown(&mut f, &sc1, 1, 10)?;
    let sc2 = Swapchain::new(&p, format, resized, pick(vk::PresentModeKHR::IMMEDIATE), usage, Some(&sc1))?;
    unsafe { p.device.device_wait_idle() }.vk("vkDeviceWaitIdle")?;
    sc1.destroy(&p);
    frames_shown(&mut f, &sc2, 2, 10)?;
    unsafe { p.device.device_wait_idle() }.vk("vkDeviceWaitIdle")?;
    if let Some(w) = &win {
        check_window(w, f.log.last().expect("frames").rgb)?;
    }
    sc2.destroy(&p);
    f.destroy();
    let presented = f.log.len();
    let log = std::mem::take(&mut f.log);
    drop(f);
    drop(p);
    if wsi::validation_errors() > 0 {
        return Err(Error::msg(format!("{} validation errors", wsi::validation_errors())));
    }
    let dumped = match &args.check_dump {
        Some(dir) => format!(", {} dumped frames exact", check_dump(dir, &log)?),
        None => String::new(),
    };
    let mode_names = format!("{:?}/{:?}/{:?}", sc0.mode, sc1.mode, sc2.mode);
    Ok(format!(
        "{presented} frames presented ({}, {format:?}, {mode_names}){}{dumped}{}",
        match (args.headless, args.xlib) {
            (true, _) => "headless",
            (false, false) => "X11 window",
            (false, true) => "X11 window through Xlib",
        },
        signal.map_or(String::new(), |s| format!(", resize gave {s:?}")),
        if args.validate { ", 0 validation errors" } else { "" }
    ))
}

/// Every frame the driver dumped is exactly what was presented; every frame shown in FIFO
/// or IMMEDIATE was dumped, none that was out of date was. Returns how many were checked.
fn check_dump(dir: &Path, log: &[Presented]) -> Result<usize> {
    let mut checked = 0;
    for e in log {
        let path = dir.join(format!("sc{}-{:05}.png", e.swapchain, e.seq));
        let must = e.shown && e.mode != vk::PresentModeKHR::MAILBOX;
        match (path.is_file(), must, e.shown) {
            (false, true, _) => return Err(Error::msg(format!("{} was presented but not dumped", path.display()))),
            (true, _, false) => return Err(Error::msg(format!("{} was out of date but dumped", path.display()))),
            (false, _, _) => continue,
            (true, _, true) => {}
        }
        let (rgb, [w, h]) = read_png(&path)?;
        if [w, h] != [e.extent.width, e.extent.height] {
            return Err(Error::msg(format!("{} is {w}x{h}, the swapchain {:?}", path.display(), e.extent)));
        }
        for y in 0..h {
            for x in 0..w {
                let i = 3 * (y * w + x) as usize;
                let inside =
                    (PATCH_AT..PATCH_AT + PATCH_SIDE).contains(&x) && (PATCH_AT..PATCH_AT + PATCH_SIDE).contains(&y);
                let want = if inside { PATCH_RGB } else { e.rgb };
                if rgb[i..i + 3] != want {
                    return Err(Error::msg(format!(
                        "{} at ({x}, {y}) is {:?}, not {want:?}",
                        path.display(),
                        &rgb[i..i + 3]
                    )));
                }
            }
        }
        checked += 1;
    }
    if checked == 0 {
        return Err(Error::msg(format!("no frame was dumped in {}", dir.display())));
    }
    Ok(checked)
}

fn read_png(path: &Path) -> Result<(Vec<u8>, [u32; 2])> {
    let file = std::fs::File::open(path).map_err(|e| Error::msg(format!("{}: {e}", path.display())))?;
    let mut reader = png::Decoder::new(file).read_info().map_err(|e| Error::msg(format!("{}: {e}", path.display())))?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).map_err(|e| Error::msg(format!("{}: {e}", path.display())))?;
    if info.color_type != png::ColorType::Rgb || info.bit_depth != png::BitDepth::Eight {
        return Err(Error::msg(format!(
            "{}: {:?} {:?}, not 8-bit RGB",
            path.display(),
            info.color_type,
            info.bit_depth
        )));
    }
    buf.truncate(info.buffer_size());
    Ok((buf, [info.width, info.height]))
}

/// Misuse answered with Vulkan errors, on a headless surface and (with a display) on a
/// window that is destroyed under its swapchain. Returns how many checks passed.
fn bad_use(args: &Args) -> Result<usize> {
    let mut passed = 0;
    let mut expect = |what: &str, got: vk::Result, ok: &[vk::Result]| -> Result<()> {
        if !ok.contains(&got) {
            return Err(Error::msg(format!("{what}: {got:?}, expected one of {ok:?}")));
        }
        passed += 1;
        Ok(())
    };
    let p = Presenter::new(&args.icd, &Target::Headless, false)?;
    let format = choose_format(&p)?;
    let usage = vk::ImageUsageFlags::TRANSFER_DST;
    let e64 = vk::Extent2D { width: 64, height: 64 };
    let sc = Swapchain::new(&p, format, e64, vk::PresentModeKHR::FIFO, usage, None)?;
    let (sf, d) = (&p.swapchain_fn, &p.device);
    // SAFETY: live handles; every misuse below is one the driver must survive.
    unsafe {
        let fence = d.create_fence(&vk::FenceCreateInfo::default(), None).vk("vkCreateFence")?;
        let acquire = |h: vk::SwapchainKHR, t: u64| {
            let _ = d.reset_fences(&[fence]);
            sf.acquire_next_image(h, t, vk::Semaphore::null(), fence).map(|(i, _)| i)
        };
        for _ in 0..sc.images.len() {
            acquire(sc.handle, 0).vk("vkAcquireNextImageKHR")?;
        }
        expect("acquire beyond the images, timeout 0", acquire(sc.handle, 0).unwrap_err(), &[vk::Result::NOT_READY])?;
        expect(
            "acquire beyond the images, 10 ms",
            acquire(sc.handle, 10_000_000).unwrap_err(),
            &[vk::Result::TIMEOUT],
        )?;
        expect(
            "acquire beyond the images, no timeout",
            acquire(sc.handle, u64::MAX).unwrap_err(),
            &[vk::Result::TIMEOUT],
        )?;
        let present = |h: vk::SwapchainKHR, i: u32| {
            let (c, ix) = ([h], [i]);
            sf.queue_present(p.queue, &vk::PresentInfoKHR::default().swapchains(&c).image_indices(&ix)).err()
        };
        expect(
            "present an acquired image",
            present(sc.handle, 0).unwrap_or(vk::Result::SUCCESS),
            &[vk::Result::SUCCESS],
        )?;
        let again = present(sc.handle, 0).unwrap_or(vk::Result::SUCCESS);
        expect("present an image twice", again, &[vk::Result::ERROR_UNKNOWN])?;
        let beyond = present(sc.handle, 99).unwrap_or(vk::Result::SUCCESS);
        expect("present image 99", beyond, &[vk::Result::ERROR_UNKNOWN])?;
        let second = Swapchain::new(&p, format, e64, vk::PresentModeKHR::FIFO, usage, None);
        let got = second.as_ref().err().map_or(vk::Result::SUCCESS, vk_result);
        expect("a second swapchain on the surface", got, &[vk::Result::ERROR_NATIVE_WINDOW_IN_USE_KHR])?;
        let new = Swapchain::new(&p, format, e64, vk::PresentModeKHR::FIFO, usage, Some(&sc))?;
        expect(
            "acquire from a retired swapchain",
            acquire(sc.handle, 0).unwrap_err(),
            &[vk::Result::ERROR_OUT_OF_DATE_KHR],
        )?;
        let old = present(sc.handle, 1).unwrap_or(vk::Result::SUCCESS);
        expect(
            "present an image of a retired swapchain",
            old,
            &[vk::Result::SUCCESS, vk::Result::ERROR_OUT_OF_DATE_KHR],
        )?;
        d.device_wait_idle().vk("vkDeviceWaitIdle")?;
        // Destroyed with images still acquired.
        sc.destroy(&p);
        new.destroy(&p);
        d.destroy_fence(fence, None);
    }
    drop(p);
    if !args.headless {
        lost_window(args, &mut expect)?;
    }
    Ok(passed)
}

fn vk_result(e: &Error) -> vk::Result {
    match e {
        Error::Vulkan { result, .. } => *result,
        Error::Other(_) => vk::Result::ERROR_UNKNOWN,
    }
}

/// A window destroyed under its swapchain: acquire, present, queries and recreation fail
/// with SURFACE_LOST or OUT_OF_DATE.
fn lost_window(args: &Args, expect: &mut impl FnMut(&str, vk::Result, &[vk::Result]) -> Result<()>) -> Result<()> {
    let gone = [vk::Result::ERROR_SURFACE_LOST_KHR, vk::Result::ERROR_OUT_OF_DATE_KHR];
    let win = Window::open(64, 64, "vortex lost window")?;
    let p = Presenter::new(&args.icd, &Target::Window(&win), false)?;
    let format = choose_format(&p)?;
    let usage = vk::ImageUsageFlags::TRANSFER_DST;
    let sc = Swapchain::new(&p, format, vk::Extent2D { width: 64, height: 64 }, vk::PresentModeKHR::FIFO, usage, None)?;
    let (sf, d) = (&p.swapchain_fn, &p.device);
    // SAFETY: live Vulkan handles; the window is gone, which the driver must survive.
    unsafe {
        let fence = d.create_fence(&vk::FenceCreateInfo::default(), None).vk("vkCreateFence")?;
        let (index, _) =
            sf.acquire_next_image(sc.handle, 0, vk::Semaphore::null(), fence).vk("vkAcquireNextImageKHR")?;
        win.destroy()?;
        d.reset_fences(&[fence]).vk("vkResetFences")?;
        let got = sf.acquire_next_image(sc.handle, 0, vk::Semaphore::null(), fence).map(|_| vk::Result::SUCCESS);
        expect("acquire on a destroyed window", got.unwrap_or_else(|e| e), &gone)?;
        let (c, ix) = ([sc.handle], [index]);
        let got = sf.queue_present(p.queue, &vk::PresentInfoKHR::default().swapchains(&c).image_indices(&ix));
        expect("present on a destroyed window", got.err().unwrap_or(vk::Result::SUCCESS), &gone)?;
        let got = p.capabilities().err().map_or(vk::Result::SUCCESS, |e| vk_result(&e));
        expect("capabilities of a destroyed window", got, &[vk::Result::ERROR_SURFACE_LOST_KHR])?;
        let again = Swapchain::new(
            &p,
            format,
            vk::Extent2D { width: 64, height: 64 },
            vk::PresentModeKHR::FIFO,
            usage,
            Some(&sc),
        );
        expect("a swapchain on a destroyed window", again.err().map_or(vk::Result::SUCCESS, |e| vk_result(&e)), &gone)?;
        d.device_wait_idle().vk("vkDeviceWaitIdle")?;
        sc.destroy(&p);
        d.destroy_fence(fence, None);
    }
    Ok(())
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("swapchain: {e}");
            std::process::exit(2);
        }
    };
    let result = if args.bad_use { bad_use(&args).map(|n| format!("bad use: {n} checks passed")) } else { run(&args) };
    match result {
        Ok(summary) => println!("swapchain: {summary}"),
        Err(e) => {
            eprintln!("swapchain: FAILED: {e}");
            std::process::exit(1);
        }
    }
}
