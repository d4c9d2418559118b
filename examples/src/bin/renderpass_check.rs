//! Render passes and the transfers of the graphics path, end to end through the loader, with
//! no draw (so they run before the device draws): every result is read back and checked on
//! the host.
//!
//! - render pass load-op clears of a colour and a depth attachment over a render area of a
//!   two-layer framebuffer, outside of which the attachments keep their contents;
//! - `vkCreateRenderPass2` with two subpasses: `vkCmdClearAttachments` rectangles in each,
//!   an attachment cleared at its first use in the second subpass;
//! - `vkCmdClearDepthStencilImage` by aspect on a combined depth/stencil image, read back one
//!   aspect at a time;
//! - `vkCmdBlitImage`: a mirrored nearest magnification and a linear one with a format
//!   conversion.
//!
//! It runs unchanged on any ICD; lavapipe passing it is what makes it a test of ours.
//! Usage: renderpass_check [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check failed)

use ash::vk;
use vortex_examples::{checks, memory_barrier, Buffer, Context, VkResultExt};

type Check = Result<(), String>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// An image with its memory and a view of every layer; destroyed on drop.
struct Img<'a> {
    device: &'a ash::Device,
    image: vk::Image,
    view: vk::ImageView,
    memory: vk::DeviceMemory,
}

impl<'a> Img<'a> {
    fn new(
        ctx: &'a Context,
        format: vk::Format,
        [w, h]: [u32; 2],
        layers: u32,
        aspect: vk::ImageAspectFlags,
    ) -> Result<Self, String> {
        let device = ctx.device();
        let attach = if aspect == vk::ImageAspectFlags::COLOR {
            vk::ImageUsageFlags::COLOR_ATTACHMENT
        } else {
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT
        };
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D { width: w, height: h, depth: 1 })
            .mip_levels(1)
            .array_layers(layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(attach | vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let mut img =
            Img { device, image: vk::Image::null(), view: vk::ImageView::null(), memory: vk::DeviceMemory::null() };
        // SAFETY (this block): a valid device; Drop destroys whatever was created.
        unsafe {
            img.image = device.create_image(&info, None).vk("vkCreateImage").map_err(err)?;
            let req = device.get_image_memory_requirements(img.image);
            let ty = ctx.memory_type(req.memory_type_bits).ok_or("no memory type for the image")?;
            let alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty);
            img.memory = device.allocate_memory(&alloc, None).vk("vkAllocateMemory").map_err(err)?;
            device.bind_image_memory(img.image, img.memory, 0).vk("vkBindImageMemory").map_err(err)?;
            let view = vk::ImageViewCreateInfo::default()
                .image(img.image)
                .view_type(if layers > 1 { vk::ImageViewType::TYPE_2D_ARRAY } else { vk::ImageViewType::TYPE_2D })
                .format(format)
                .subresource_range(range(aspect, layers));
            img.view = device.create_image_view(&view, None).vk("vkCreateImageView").map_err(err)?;
        }
        Ok(img)
    }

    /// UNDEFINED -> GENERAL for every layer of `aspect`.
    fn to_general(&self, cmd: vk::CommandBuffer, aspect: vk::ImageAspectFlags, layers: u32) {
        let barrier = vk::ImageMemoryBarrier::default()
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::GENERAL)
            .dst_access_mask(vk::AccessFlags::MEMORY_WRITE | vk::AccessFlags::MEMORY_READ)
            .image(self.image)
            .subresource_range(range(aspect, layers));
        // SAFETY: cmd is recording; the image belongs to this device.
        unsafe {
            self.device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[barrier],
            )
        };
    }

    /// Every layer of one aspect into `buffer`, tightly packed.
    fn download(
        &self,
        cmd: vk::CommandBuffer,
        aspect: vk::ImageAspectFlags,
        [w, h]: [u32; 2],
        layers: u32,
        buffer: &Buffer,
    ) {
        let region = vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: aspect,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: layers,
            })
            .image_extent(vk::Extent3D { width: w, height: h, depth: 1 });
        // SAFETY: cmd is recording; image and buffer belong to this device.
        unsafe {
            memory_barrier(self.device, cmd, vk::PipelineStageFlags::ALL_COMMANDS, vk::PipelineStageFlags::TRANSFER);
            self.device.cmd_copy_image_to_buffer(cmd, self.image, vk::ImageLayout::GENERAL, buffer.handle(), &[region]);
            memory_barrier(self.device, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST);
        }
    }
}

impl Drop for Img<'_> {
    fn drop(&mut self) {
        // SAFETY: no submission is pending (submit_once waits); null handles are ignored.
        unsafe {
            self.device.destroy_image_view(self.view, None);
            self.device.destroy_image(self.image, None);
            self.device.free_memory(self.memory, None);
        }
    }
}

fn range(aspect: vk::ImageAspectFlags, layers: u32) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: aspect,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: layers,
    }
}

fn color(v: [f32; 4]) -> vk::ClearValue {
    vk::ClearValue { color: vk::ClearColorValue { float32: v } }
}

fn rect(x: i32, y: i32, w: u32, h: u32) -> vk::Rect2D {
    vk::Rect2D { offset: vk::Offset2D { x, y }, extent: vk::Extent2D { width: w, height: h } }
}

fn inside(r: &vk::Rect2D, x: u32, y: u32) -> bool {
    let (x, y) = (x as i32, y as i32);
    x >= r.offset.x
        && x < r.offset.x + r.extent.width as i32
        && y >= r.offset.y
        && y < r.offset.y + r.extent.height as i32
}

const W: u32 = 16;
const H: u32 = 8;

/// A render pass with a colour and a depth attachment, both cleared over a render area of
/// a two-layer framebuffer; both were cleared to other values before, which must remain
/// outside the area.
fn render_pass_clears(ctx: &Context) -> Check {
    let d = ctx.device();
    let c = Img::new(ctx, vk::Format::R8G8B8A8_UNORM, [W, H], 2, vk::ImageAspectFlags::COLOR)?;
    let z = Img::new(ctx, vk::Format::D32_SFLOAT, [W, H], 2, vk::ImageAspectFlags::DEPTH)?;
    let att = |format, final_layout| {
        vk::AttachmentDescription::default()
            .format(format)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
            .initial_layout(vk::ImageLayout::GENERAL)
            .final_layout(final_layout)
    };
    let atts = [
        att(vk::Format::R8G8B8A8_UNORM, vk::ImageLayout::GENERAL),
        att(vk::Format::D32_SFLOAT, vk::ImageLayout::GENERAL),
    ];
    let cref = [vk::AttachmentReference { attachment: 0, layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL }];
    let zref = vk::AttachmentReference { attachment: 1, layout: vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL };
    let sub = [vk::SubpassDescription::default()
        .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
        .color_attachments(&cref)
        .depth_stencil_attachment(&zref)];
    let info = vk::RenderPassCreateInfo::default().attachments(&atts).subpasses(&sub);
    // SAFETY: valid create infos; the objects are destroyed below.
    let pass = unsafe { d.create_render_pass(&info, None) }.vk("vkCreateRenderPass").map_err(err)?;
    let views = [c.view, z.view];
    let fb_info =
        vk::FramebufferCreateInfo::default().render_pass(pass).attachments(&views).width(W).height(H).layers(2);
    // SAFETY: as above.
    let fb = unsafe { d.create_framebuffer(&fb_info, None) }.vk("vkCreateFramebuffer").map_err(err)?;
    let area = rect(3, 2, 10, 4);
    let cbuf = Buffer::new(ctx, (W * H * 4 * 2) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let zbuf = Buffer::new(ctx, (W * H * 4 * 2) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let r = ctx.submit_once(|cmd| {
        c.to_general(cmd, vk::ImageAspectFlags::COLOR, 2);
        z.to_general(cmd, vk::ImageAspectFlags::DEPTH, 2);
        // SAFETY: cmd is recording; every object belongs to this device.
        unsafe {
            let blue = vk::ClearColorValue { float32: [0.0, 0.0, 1.0, 1.0] };
            d.cmd_clear_color_image(
                cmd,
                c.image,
                vk::ImageLayout::GENERAL,
                &blue,
                &[range(vk::ImageAspectFlags::COLOR, 2)],
            );
            let far = vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 };
            d.cmd_clear_depth_stencil_image(
                cmd,
                z.image,
                vk::ImageLayout::GENERAL,
                &far,
                &[range(vk::ImageAspectFlags::DEPTH, 2)],
            );
            memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::ALL_COMMANDS);
            let clears = [
                color([1.0, 0.5, 0.0, 1.0]),
                vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: 0.25, stencil: 0 } },
            ];
            let begin = vk::RenderPassBeginInfo::default()
                .render_pass(pass)
                .framebuffer(fb)
                .render_area(area)
                .clear_values(&clears);
            d.cmd_begin_render_pass(cmd, &begin, vk::SubpassContents::INLINE);
            d.cmd_end_render_pass(cmd);
        }
        c.download(cmd, vk::ImageAspectFlags::COLOR, [W, H], 2, &cbuf);
        z.download(cmd, vk::ImageAspectFlags::DEPTH, [W, H], 2, &zbuf);
    });
    // SAFETY: the submission finished; the objects are unused.
    unsafe {
        d.destroy_framebuffer(fb, None);
        d.destroy_render_pass(pass, None);
    }
    r.map_err(err)?;
    let (cd, zd) = (cbuf.read::<[u8; 4]>(), zbuf.read::<f32>());
    for layer in 0..2 {
        for y in 0..H {
            for x in 0..W {
                let i = ((layer * H + y) * W + x) as usize;
                let (want_c, want_z) =
                    if inside(&area, x, y) { ([255, 128, 0, 255], 0.25) } else { ([0, 0, 255, 255], 1.0) };
                if cd[i] != want_c || zd[i] != want_z {
                    return Err(format!(
                        "layer {layer} ({x}, {y}): colour {:?} depth {}, want {want_c:?} {want_z}",
                        cd[i], zd[i]
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Two subpasses (`vkCreateRenderPass2`): attachment 0 is loaded and gets a clear-attachments
/// rectangle in subpass 0; attachment 1 is first used, and so cleared, in subpass 1, which
/// clears a rectangle of it too.
fn subpasses_and_clear_attachments(ctx: &Context) -> Check {
    let d = ctx.device();
    let a = Img::new(ctx, vk::Format::R32_UINT, [W, H], 1, vk::ImageAspectFlags::COLOR)?;
    let b = Img::new(ctx, vk::Format::R32_UINT, [W, H], 1, vk::ImageAspectFlags::COLOR)?;
    let att = |load| {
        vk::AttachmentDescription2::default()
            .format(vk::Format::R32_UINT)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(load)
            .store_op(vk::AttachmentStoreOp::STORE)
            .initial_layout(vk::ImageLayout::GENERAL)
            .final_layout(vk::ImageLayout::GENERAL)
    };
    let atts = [att(vk::AttachmentLoadOp::LOAD), att(vk::AttachmentLoadOp::CLEAR)];
    let r0 = [vk::AttachmentReference2::default()
        .attachment(0)
        .layout(vk::ImageLayout::GENERAL)
        .aspect_mask(vk::ImageAspectFlags::COLOR)];
    let r1 = [vk::AttachmentReference2::default()
        .attachment(1)
        .layout(vk::ImageLayout::GENERAL)
        .aspect_mask(vk::ImageAspectFlags::COLOR)];
    let subs = [
        vk::SubpassDescription2::default().pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS).color_attachments(&r0),
        vk::SubpassDescription2::default().pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS).color_attachments(&r1),
    ];
    let dep = [vk::SubpassDependency2::default()
        .src_subpass(0)
        .dst_subpass(1)
        .src_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
        .dst_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)];
    let info = vk::RenderPassCreateInfo2::default().attachments(&atts).subpasses(&subs).dependencies(&dep);
    // SAFETY: valid create infos; the objects are destroyed below.
    let pass = unsafe { d.create_render_pass2(&info, None) }.vk("vkCreateRenderPass2").map_err(err)?;
    let views = [a.view, b.view];
    let fb_info =
        vk::FramebufferCreateInfo::default().render_pass(pass).attachments(&views).width(W).height(H).layers(1);
    // SAFETY: as above.
    let fb = unsafe { d.create_framebuffer(&fb_info, None) }.vk("vkCreateFramebuffer").map_err(err)?;
    let (abuf, bbuf) = (
        Buffer::new(ctx, (W * H * 4) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?,
        Buffer::new(ctx, (W * H * 4) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?,
    );
    let (ra, rb) = (rect(1, 1, 3, 2), rect(10, 5, 6, 3));
    let uint = |v: u32| vk::ClearValue { color: vk::ClearColorValue { uint32: [v; 4] } };
    let r = ctx.submit_once(|cmd| {
        a.to_general(cmd, vk::ImageAspectFlags::COLOR, 1);
        b.to_general(cmd, vk::ImageAspectFlags::COLOR, 1);
        // SAFETY: cmd is recording; every object belongs to this device.
        unsafe {
            let seven = vk::ClearColorValue { uint32: [7; 4] };
            d.cmd_clear_color_image(
                cmd,
                a.image,
                vk::ImageLayout::GENERAL,
                &seven,
                &[range(vk::ImageAspectFlags::COLOR, 1)],
            );
            memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::ALL_COMMANDS);
            let clears = [uint(0), uint(0x55)];
            let begin = vk::RenderPassBeginInfo::default()
                .render_pass(pass)
                .framebuffer(fb)
                .render_area(rect(0, 0, W, H))
                .clear_values(&clears);
            let sp = vk::SubpassBeginInfo::default().contents(vk::SubpassContents::INLINE);
            d.cmd_begin_render_pass2(cmd, &begin, &sp);
            let clear = |v| vk::ClearAttachment {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                color_attachment: 0,
                clear_value: uint(v),
            };
            let layer = |r| vk::ClearRect { rect: r, base_array_layer: 0, layer_count: 1 };
            d.cmd_clear_attachments(cmd, &[clear(0x11)], &[layer(ra)]);
            d.cmd_next_subpass2(cmd, &sp, &vk::SubpassEndInfo::default());
            d.cmd_clear_attachments(cmd, &[clear(0x22)], &[layer(rb)]);
            d.cmd_end_render_pass2(cmd, &vk::SubpassEndInfo::default());
        }
        a.download(cmd, vk::ImageAspectFlags::COLOR, [W, H], 1, &abuf);
        b.download(cmd, vk::ImageAspectFlags::COLOR, [W, H], 1, &bbuf);
    });
    // SAFETY: the submission finished; the objects are unused.
    unsafe {
        d.destroy_framebuffer(fb, None);
        d.destroy_render_pass(pass, None);
    }
    r.map_err(err)?;
    let (av, bv) = (abuf.read::<u32>(), bbuf.read::<u32>());
    for y in 0..H {
        for x in 0..W {
            let i = (y * W + x) as usize;
            let want_a = if inside(&ra, x, y) { 0x11 } else { 7 };
            let want_b = if inside(&rb, x, y) { 0x22 } else { 0x55 };
            if av[i] != want_a || bv[i] != want_b {
                return Err(format!("({x}, {y}): {:#x} {:#x}, want {want_a:#x} {want_b:#x}", av[i], bv[i]));
            }
        }
    }
    Ok(())
}

/// `vkCmdClearDepthStencilImage` on a D32_SFLOAT_S8_UINT image: depth on both layers, then
/// stencil on layer 1 only; each aspect read back on its own.
fn depth_stencil_clears(ctx: &Context) -> Check {
    let d = ctx.device();
    let ds = vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL;
    let img = Img::new(ctx, vk::Format::D32_SFLOAT_S8_UINT, [W, H], 2, ds)?;
    let zbuf = Buffer::new(ctx, (W * H * 4 * 2) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let sbuf = Buffer::new(ctx, (W * H * 2) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    ctx.submit_once(|cmd| {
        img.to_general(cmd, ds, 2);
        let sub = |aspect, base, n| vk::ImageSubresourceRange {
            aspect_mask: aspect,
            base_mip_level: 0,
            level_count: 1,
            base_array_layer: base,
            layer_count: n,
        };
        // SAFETY: cmd is recording; the image belongs to this device.
        unsafe {
            let v = |depth, stencil| vk::ClearDepthStencilValue { depth, stencil };
            d.cmd_clear_depth_stencil_image(cmd, img.image, vk::ImageLayout::GENERAL, &v(0.0, 3), &[sub(ds, 0, 2)]);
            memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::TRANSFER);
            d.cmd_clear_depth_stencil_image(
                cmd,
                img.image,
                vk::ImageLayout::GENERAL,
                &v(0.75, 9),
                &[sub(vk::ImageAspectFlags::DEPTH, 0, 2)],
            );
            d.cmd_clear_depth_stencil_image(
                cmd,
                img.image,
                vk::ImageLayout::GENERAL,
                &v(0.5, 0xC8),
                &[sub(vk::ImageAspectFlags::STENCIL, 1, 1)],
            );
        }
        img.download(cmd, vk::ImageAspectFlags::DEPTH, [W, H], 2, &zbuf);
        img.download(cmd, vk::ImageAspectFlags::STENCIL, [W, H], 2, &sbuf);
    })
    .map_err(err)?;
    let (z, s) = (zbuf.read::<f32>(), sbuf.read::<u8>());
    let n = (W * H) as usize;
    if let Some(i) = z.iter().position(|&v| v != 0.75) {
        return Err(format!("depth texel {i} is {}, want 0.75", z[i]));
    }
    for (i, &v) in s.iter().enumerate() {
        let want = if i < n { 3 } else { 0xC8 };
        if v != want {
            return Err(format!("stencil texel {i} is {v}, want {want}"));
        }
    }
    Ok(())
}

/// Blits: a 4x2 RGBA8 source, magnified mirrored to 8x4 (nearest, RGBA8), and magnified
/// 2x with a linear filter into RGBA32F.
fn blits(ctx: &Context) -> Check {
    let d = ctx.device();
    let src = Img::new(ctx, vk::Format::R8G8B8A8_UNORM, [4, 2], 1, vk::ImageAspectFlags::COLOR)?;
    let near = Img::new(ctx, vk::Format::R8G8B8A8_UNORM, [8, 4], 1, vk::ImageAspectFlags::COLOR)?;
    let lin = Img::new(ctx, vk::Format::R32G32B32A32_SFLOAT, [8, 4], 1, vk::ImageAspectFlags::COLOR)?;
    let texels: Vec<[u8; 4]> = (0..8u8).map(|i| [i * 32, 255 - i * 32, (i % 2) * 255, 255]).collect();
    let up = Buffer::with_data(ctx, &texels, vk::BufferUsageFlags::TRANSFER_SRC).map_err(err)?;
    let nbuf = Buffer::new(ctx, 8 * 4 * 4, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let lbuf = Buffer::new(ctx, 8 * 4 * 16, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let layers = vk::ImageSubresourceLayers {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: 0,
        base_array_layer: 0,
        layer_count: 1,
    };
    let o = |x, y| vk::Offset3D { x, y, z: 0 };
    ctx.submit_once(|cmd| {
        for i in [&src, &near, &lin] {
            i.to_general(cmd, vk::ImageAspectFlags::COLOR, 1);
        }
        // SAFETY: cmd is recording; every object belongs to this device.
        unsafe {
            let region = vk::BufferImageCopy::default().image_subresource(layers).image_extent(vk::Extent3D {
                width: 4,
                height: 2,
                depth: 1,
            });
            d.cmd_copy_buffer_to_image(cmd, up.handle(), src.image, vk::ImageLayout::GENERAL, &[region]);
            memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::TRANSFER);
            let end = |x, y| vk::Offset3D { x, y, z: 1 };
            let mirror = vk::ImageBlit {
                src_subresource: layers,
                src_offsets: [o(0, 0), end(4, 2)],
                dst_subresource: layers,
                dst_offsets: [o(8, 0), end(0, 4)],
            };
            d.cmd_blit_image(
                cmd,
                src.image,
                vk::ImageLayout::GENERAL,
                near.image,
                vk::ImageLayout::GENERAL,
                &[mirror],
                vk::Filter::NEAREST,
            );
            let scale = vk::ImageBlit {
                src_subresource: layers,
                src_offsets: [o(0, 0), end(4, 2)],
                dst_subresource: layers,
                dst_offsets: [o(0, 0), end(8, 4)],
            };
            d.cmd_blit_image(
                cmd,
                src.image,
                vk::ImageLayout::GENERAL,
                lin.image,
                vk::ImageLayout::GENERAL,
                &[scale],
                vk::Filter::LINEAR,
            );
        }
        near.download(cmd, vk::ImageAspectFlags::COLOR, [8, 4], 1, &nbuf);
        lin.download(cmd, vk::ImageAspectFlags::COLOR, [8, 4], 1, &lbuf);
    })
    .map_err(err)?;
    let (nv, lv) = (nbuf.read::<[u8; 4]>(), lbuf.read::<[f32; 4]>());
    let src_at = |x: i64, y: i64| texels[(y.clamp(0, 1) * 4 + x.clamp(0, 3)) as usize];
    for y in 0..4i64 {
        for x in 0..8i64 {
            let i = (y * 8 + x) as usize;
            let want = src_at((7 - x) / 2, y / 2);
            if nv[i] != want {
                return Err(format!("nearest ({x}, {y}): {:?}, want {want:?}", nv[i]));
            }
            // Linear: centres at (x + 0.5) / 2 - 0.5 in source texels, clamped at the edges.
            let (u, v) = ((x as f64 + 0.5) / 2.0 - 0.5, (y as f64 + 0.5) / 2.0 - 0.5);
            let (x0, y0, fu, fv) = (u.floor() as i64, v.floor() as i64, u - u.floor(), v - v.floor());
            for (c, &got) in lv[i].iter().enumerate() {
                let t = |x, y| src_at(x, y)[c] as f64 / 255.0;
                let top = t(x0, y0) * (1.0 - fu) + t(x0 + 1, y0) * fu;
                let bottom = t(x0, y0 + 1) * (1.0 - fu) + t(x0 + 1, y0 + 1) * fu;
                let want = top * (1.0 - fv) + bottom * fv;
                if (got as f64 - want).abs() > 2.0 / 255.0 {
                    return Err(format!("linear ({x}, {y}) component {c}: {got}, want {want}"));
                }
            }
        }
    }
    Ok(())
}

fn main() {
    let icd = checks::icd_from_args("renderpass_check");
    let ctx = checks::context_or_exit("renderpass_check", &icd);
    println!("device: {} ({})", ctx.info().name, ctx.info().driver_name);
    let list: [checks::Check<'_, ()>; 4] = [
        ("render pass clears (colour, depth, area, layers)", &render_pass_clears),
        ("subpasses and clear attachments", &subpasses_and_clear_attachments),
        ("depth/stencil clears by aspect", &depth_stencil_clears),
        ("blits (nearest mirrored, linear converted)", &blits),
    ];
    checks::run_checks_and_exit(&ctx, "render pass", &list, || 0);
}
