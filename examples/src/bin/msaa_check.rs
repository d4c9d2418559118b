//! 4-sample rendering end to end through the loader, read back and checked on the host
//! against the coverage of Vulkan's standard sample locations, computed here:
//!
//! - a triangle edge with 4 samples resolved by the render pass (AVERAGE): inside pixels
//!   full, outside empty, edge pixels the fraction of their samples the triangle covers;
//! - depth per sample: a near triangle, then a far full-screen triangle tested `LESS`, make
//!   every edge pixel a mix of both in proportion to coverage; the depth attachment's
//!   `SAMPLE_ZERO` resolve (`VkSubpassDescriptionDepthStencilResolve`) holds sample 0's depth;
//! - an integer attachment resolved with `vkCmdResolveImage`: sample 0 (the integer rule);
//! - `texelFetch` of each sample of a multisampled image (after `vkCmdClearColorImage`,
//!   the draw, and `vkCmdCopyImage` to a second multisampled image) and `textureSamples`.
//!
//! The triangle is on the sub-pixel grid and no sample lies exactly on its edges (which the
//! program checks), so its coverage is exact on any implementation. The
//! GLSL is compiled at run time with glslangValidator, as in `draw_check`. It runs
//! unchanged on any ICD; lavapipe passing it is what makes it a test of ours. Usage:
//! msaa_check [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check failed, 2:
//! could not run)

use ash::vk;
use vortex_examples::owned::{Owned, PassPipeline, Single};
use vortex_examples::{checks, memory_barrier, Buffer, Context, VkResultExt};

type Check = Result<(), String>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

const W: u32 = 32;
const H: u32 = 32;
const S4: vk::SampleCountFlags = vk::SampleCountFlags::TYPE_4;
const S1: vk::SampleCountFlags = vk::SampleCountFlags::TYPE_1;

/// Vulkan's standard locations of 4 samples in a pixel.
const LOCATIONS: [[f64; 2]; 4] = [[0.375, 0.125], [0.875, 0.375], [0.125, 0.625], [0.625, 0.875]];

/// The triangle of the checks, in pixels, on the 1/256 sub-pixel grid (so both ICDs and
/// the f64 arithmetic here see it exactly, through NDC in f32 and back).
const TRI: [[f64; 2]; 3] =
    [[590.0 / 256.0, 435.0 / 256.0], [7571.0 / 256.0, 1587.0 / 256.0], [2330.0 / 256.0, 7782.0 / 256.0]];

/// Bit `s` set when sample `s` of pixel (`x`, `y`) is inside `TRI`; `None` when one lies
/// exactly on an edge (where the two ICDs' tie rules could differ; none does).
fn coverage(x: u32, y: u32) -> Option<u32> {
    let mut m = 0;
    for (s, l) in LOCATIONS.iter().enumerate() {
        let p = [x as f64 + l[0], y as f64 + l[1]];
        let mut inside = true;
        for k in 0..3 {
            let (a, b) = (TRI[k], TRI[(k + 1) % 3]);
            let e = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
            if e == 0.0 {
                return None;
            }
            inside &= e > 0.0;
        }
        m |= (inside as u32) << s;
    }
    Some(m)
}

/// The push constants of every pipeline here: a colour, three vertices in NDC and a depth.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Push {
    color: [f32; 4],
    v: [[f32; 2]; 3],
    z: f32,
    _pad: [f32; 1],
}

impl Push {
    fn new(color: [f32; 4], tri: [[f64; 2]; 3], z: f32) -> Push {
        let ndc = |p: [f64; 2]| [(p[0] / W as f64 * 2.0 - 1.0) as f32, (p[1] / H as f64 * 2.0 - 1.0) as f32];
        Push { color, v: tri.map(ndc), z, _pad: [0.0] }
    }

    fn full_screen(color: [f32; 4], z: f32) -> Push {
        Push { color, v: [[-1.0, -1.0], [3.0, -1.0], [-1.0, 3.0]], z, _pad: [0.0] }
    }
}

const VS: &str = r#"#version 450
layout(push_constant) uniform P { vec4 color; vec2 v[3]; float z; } p;
void main() {
    gl_Position = vec4(p.v[gl_VertexIndex], p.z, 1.0);
}
"#;

const COLOR_FS: &str = r#"#version 450
layout(push_constant) uniform P { vec4 color; vec2 v[3]; float z; } p;
layout(location = 0) out vec4 o;
void main() { o = p.color; }
"#;

const UINT_FS: &str = r#"#version 450
layout(location = 0) out uvec4 o;
void main() { o = uvec4(7u, 0u, 0u, 1u); }
"#;

/// Each sample of the multisampled image read back as a bit (red above 0.5), and the
/// sample count in bits 8 and up.
const FETCH_FS: &str = r#"#version 450
#extension GL_ARB_shader_texture_image_samples : require
layout(set = 0, binding = 0) uniform sampler2DMS ms;
layout(location = 0) out uvec4 o;
void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    uint bits = 0u;
    for (int s = 0; s < 4; s++) {
        if (texelFetch(ms, p, s).r > 0.5) bits |= 1u << s;
    }
    o = uvec4(bits | (uint(textureSamples(ms)) << 8), 0u, 0u, 1u);
}
"#;

/// Every object a check creates, destroyed on drop (null handles are ignored).
struct Objects<'a> {
    d: &'a ash::Device,
    own: Owned<'a>,
    /// Images with their views and aspects, in the order made.
    images: Vec<(vk::Image, vk::ImageView, vk::ImageAspectFlags)>,
    passes: Vec<vk::RenderPass>,
    framebuffers: Vec<vk::Framebuffer>,
    set_layout: vk::DescriptorSetLayout,
    layouts: Vec<vk::PipelineLayout>,
    pipelines: Vec<vk::Pipeline>,
    sampler: vk::Sampler,
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

fn layers(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers { aspect_mask: aspect, mip_level: 0, base_array_layer: 0, layer_count: 1 }
}

/// One attachment of a render pass: format, samples, load op.
type Att = (vk::Format, vk::SampleCountFlags, vk::AttachmentLoadOp);

impl<'a> Objects<'a> {
    fn new(d: &'a ash::Device) -> Self {
        Objects {
            d,
            own: Owned::new(d),
            images: vec![],
            passes: vec![],
            framebuffers: vec![],
            set_layout: vk::DescriptorSetLayout::null(),
            layouts: vec![],
            pipelines: vec![],
            sampler: vk::Sampler::null(),
        }
    }

    /// A `W` x `H` image with its memory and view; returns its index.
    fn image(&mut self, ctx: &Context, format: vk::Format, samples: vk::SampleCountFlags) -> Result<usize, String> {
        let depth = format == vk::Format::D32_SFLOAT;
        let (aspect, attach) = match depth {
            true => (vk::ImageAspectFlags::DEPTH, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT),
            false => (vk::ImageAspectFlags::COLOR, vk::ImageUsageFlags::COLOR_ATTACHMENT),
        };
        let mut usage = attach | vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
        if samples == S4 && !depth {
            usage |= vk::ImageUsageFlags::SAMPLED;
        }
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D { width: W, height: H, depth: 1 })
            .mip_levels(1)
            .array_layers(1)
            .samples(samples)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let (image, view) = self.own.image(ctx, &info, vk::ImageViewType::TYPE_2D, range(aspect)).map_err(err)?;
        self.images.push((image, view, aspect));
        Ok(self.images.len() - 1)
    }

    /// A one-subpass render pass (`vkCreateRenderPass2`) over `atts`: colour attachment 0,
    /// its resolve `resolve`, depth attachment `depth` resolved SAMPLE_ZERO into
    /// `depth_resolve`; and its framebuffer over the images of the same indices.
    fn pass(&mut self, atts: &[Att], resolve: Option<u32>, depth: Option<u32>, depth_resolve: Option<u32>) -> Check {
        let desc = |&(format, samples, load): &Att| {
            vk::AttachmentDescription2::default()
                .format(format)
                .samples(samples)
                .load_op(load)
                .store_op(vk::AttachmentStoreOp::STORE)
                .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                .initial_layout(if load == vk::AttachmentLoadOp::LOAD {
                    vk::ImageLayout::GENERAL
                } else {
                    vk::ImageLayout::UNDEFINED
                })
                .final_layout(vk::ImageLayout::GENERAL)
        };
        let atts2: Vec<_> = atts.iter().map(desc).collect();
        let r = |a: u32, aspect| {
            vk::AttachmentReference2::default().attachment(a).layout(vk::ImageLayout::GENERAL).aspect_mask(aspect)
        };
        let color = [r(0, vk::ImageAspectFlags::COLOR)];
        let res = [r(resolve.unwrap_or(vk::ATTACHMENT_UNUSED), vk::ImageAspectFlags::COLOR)];
        let zref = r(depth.unwrap_or(vk::ATTACHMENT_UNUSED), vk::ImageAspectFlags::DEPTH);
        let zres = r(depth_resolve.unwrap_or(vk::ATTACHMENT_UNUSED), vk::ImageAspectFlags::DEPTH);
        let mut ds_resolve = vk::SubpassDescriptionDepthStencilResolve::default()
            .depth_resolve_mode(vk::ResolveModeFlags::SAMPLE_ZERO)
            .stencil_resolve_mode(vk::ResolveModeFlags::NONE)
            .depth_stencil_resolve_attachment(&zres);
        let mut sub = vk::SubpassDescription2::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&color);
        if resolve.is_some() {
            sub = sub.resolve_attachments(&res);
        }
        if depth.is_some() {
            sub = sub.depth_stencil_attachment(&zref);
        }
        if depth_resolve.is_some() {
            sub = sub.push_next(&mut ds_resolve);
        }
        // Draw and resolve results reach the transfers that follow.
        let dep = vk::SubpassDependency2::default()
            .src_subpass(0)
            .dst_subpass(vk::SUBPASS_EXTERNAL)
            .src_stage_mask(vk::PipelineStageFlags::ALL_GRAPHICS)
            .dst_stage_mask(vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::FRAGMENT_SHADER)
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::SHADER_READ);
        let (subs, deps) = ([sub], [dep]);
        let info = vk::RenderPassCreateInfo2::default().attachments(&atts2).subpasses(&subs).dependencies(&deps);
        // SAFETY: valid create infos; kept: destroyed when the check ends.
        let pass = unsafe { self.d.create_render_pass2(&info, None) }.vk("vkCreateRenderPass2").map_err(err)?;
        self.passes.push(self.own.keep(pass));
        let base = self.images.len() - atts.len();
        let views: Vec<_> = self.images[base..].iter().map(|i| i.1).collect();
        let fb =
            vk::FramebufferCreateInfo::default().render_pass(pass).attachments(&views).width(W).height(H).layers(1);
        // SAFETY: as above.
        let fb = unsafe { self.d.create_framebuffer(&fb, None) }.vk("vkCreateFramebuffer").map_err(err)?;
        self.framebuffers.push(self.own.keep(fb));
        Ok(())
    }

    /// A pipeline of `fs` for the last render pass made, with `samples`, an optional depth
    /// test (LESS, writing), the push constants and the objects' set layout if any.
    fn pipeline(&mut self, fs: &str, samples: vk::SampleCountFlags, depth: bool) -> Check {
        let vs = self.module("vert", VS)?;
        let fs = self.module("frag", fs)?;
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        let layout =
            self.own.pipeline_layout(self.set_layout, stages, std::mem::size_of::<Push>() as u32).map_err(err)?;
        self.layouts.push(layout);
        let pass = *self.passes.last().ok_or("no render pass")?;
        let p = PassPipeline { vs, fs, layout, pass, extent: [W, H], samples, depth, ..PassPipeline::default() };
        let made = self.own.pass_pipeline(&p).map_err(err)?;
        self.pipelines.push(made);
        Ok(())
    }

    fn module(&mut self, stage: &str, source: &str) -> Result<vk::ShaderModule, String> {
        self.own.module(stage, source).map_err(err)
    }

    /// Records render pass `k` (cleared to `clears`) with `draws`: (pipeline, push constants).
    fn render(&self, cmd: vk::CommandBuffer, k: usize, clears: &[vk::ClearValue], draws: &[(usize, Push)]) {
        let d = self.d;
        let info = vk::RenderPassBeginInfo::default()
            .render_pass(self.passes[k])
            .framebuffer(self.framebuffers[k])
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: W, height: H } })
            .clear_values(clears);
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        // SAFETY: cmd is recording; the objects belong to this device.
        unsafe {
            d.cmd_begin_render_pass(cmd, &info, vk::SubpassContents::INLINE);
            for &(p, push) in draws {
                d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, self.pipelines[p]);
                d.cmd_push_constants(cmd, self.layouts[p], stages, 0, bytemuck::bytes_of(&push));
                d.cmd_draw(cmd, 3, 1, 0, 0);
            }
            d.cmd_end_render_pass(cmd);
        }
    }

    /// Moves every image from `UNDEFINED` (its contents discarded) to `GENERAL`, the layout
    /// the checks use it in outside render passes: the first command of each submission.
    fn to_general(&self, cmd: vk::CommandBuffer) {
        let barriers: Vec<_> = self
            .images
            .iter()
            .map(|&(image, _, aspect)| {
                vk::ImageMemoryBarrier::default()
                    .old_layout(vk::ImageLayout::UNDEFINED)
                    .new_layout(vk::ImageLayout::GENERAL)
                    .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE)
                    .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .image(image)
                    .subresource_range(range(aspect))
            })
            .collect();
        let (top, all) = (vk::PipelineStageFlags::TOP_OF_PIPE, vk::PipelineStageFlags::ALL_COMMANDS);
        // SAFETY: cmd is recording outside a render pass; the images belong to this device.
        unsafe { self.d.cmd_pipeline_barrier(cmd, top, all, vk::DependencyFlags::empty(), &[], &[], &barriers) };
    }

    /// Copies image `k`'s `aspect` into `out` and makes it visible to the host.
    fn read(&self, cmd: vk::CommandBuffer, k: usize, aspect: vk::ImageAspectFlags, out: &Buffer) {
        let region = vk::BufferImageCopy::default().image_subresource(layers(aspect)).image_extent(vk::Extent3D {
            width: W,
            height: H,
            depth: 1,
        });
        // SAFETY: cmd is recording outside a render pass.
        unsafe {
            self.d.cmd_copy_image_to_buffer(cmd, self.images[k].0, vk::ImageLayout::GENERAL, out.handle(), &[region]);
        }
        memory_barrier(self.d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST);
    }
}

fn color(c: [f32; 4]) -> vk::ClearValue {
    vk::ClearValue { color: vk::ClearColorValue { float32: c } }
}

/// Compares every pixel with `want(mask)` of its covered samples (by `close`); returns how
/// many edge pixels (some samples covered, not all) there were.
fn compare<T: PartialEq + std::fmt::Debug + Copy>(
    px: &[T],
    close: impl Fn(T, T) -> bool,
    want: impl Fn(u32) -> T,
) -> Result<u32, String> {
    let mut edge = 0;
    for y in 0..H {
        for x in 0..W {
            let m = coverage(x, y).ok_or(format!("pixel ({x}, {y}) has a sample on an edge"))?;
            edge += (m != 0 && m != 0xF) as u32;
            let (got, want) = (px[(y * W + x) as usize], want(m));
            if !close(got, want) {
                return Err(format!("pixel ({x}, {y}) with samples {m:04b} covered: {got:?}, want {want:?}"));
            }
        }
    }
    Ok(edge)
}

fn unorm_close(a: [u8; 4], b: [u8; 4]) -> bool {
    a.iter().zip(b).all(|(&a, b)| a.abs_diff(b) <= 1)
}

/// Channel value of `k` covered samples of 4 at full intensity.
fn share(k: u32) -> u8 {
    (k as f64 * 255.0 / 4.0).round() as u8
}

/// A white triangle on black, 4 samples resolved by the render pass.
fn edge(ctx: &Context) -> Check {
    let mut o = Objects::new(ctx.device());
    o.image(ctx, vk::Format::R8G8B8A8_UNORM, S4)?;
    o.image(ctx, vk::Format::R8G8B8A8_UNORM, S1)?;
    let clear = vk::AttachmentLoadOp::CLEAR;
    let dont = vk::AttachmentLoadOp::DONT_CARE;
    o.pass(&[(vk::Format::R8G8B8A8_UNORM, S4, clear), (vk::Format::R8G8B8A8_UNORM, S1, dont)], Some(1), None, None)?;
    o.pipeline(COLOR_FS, S4, false)?;
    let out = Buffer::new(ctx, (W * H * 4) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    ctx.submit_once(|cmd| {
        o.to_general(cmd);
        o.render(cmd, 0, &[color([0.0; 4])], &[(0, Push::new([1.0; 4], TRI, 0.5))]);
        o.read(cmd, 1, vk::ImageAspectFlags::COLOR, &out);
    })
    .map_err(err)?;
    let px = out.read::<[u8; 4]>();
    let edge = compare(&px, unorm_close, |m| {
        let v = share(m.count_ones());
        [v; 4]
    })?;
    if edge < 20 {
        return Err(format!("only {edge} edge pixels with partial coverage"));
    }
    Ok(())
}

/// A near green triangle, then a far blue full-screen triangle: each sample keeps the
/// nearer one; the depth resolve keeps sample 0's depth.
fn depth_per_sample(ctx: &Context) -> Check {
    let mut o = Objects::new(ctx.device());
    let (c, z) = (vk::Format::R8G8B8A8_UNORM, vk::Format::D32_SFLOAT);
    o.image(ctx, c, S4)?;
    o.image(ctx, c, S1)?;
    o.image(ctx, z, S4)?;
    o.image(ctx, z, S1)?;
    let (clear, dont) = (vk::AttachmentLoadOp::CLEAR, vk::AttachmentLoadOp::DONT_CARE);
    o.pass(&[(c, S4, clear), (c, S1, dont), (z, S4, clear), (z, S1, dont)], Some(1), Some(2), Some(3))?;
    o.pipeline(COLOR_FS, S4, true)?;
    let out = Buffer::new(ctx, (W * H * 4) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let zout = Buffer::new(ctx, (W * H * 4) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let clears = [
        color([0.0; 4]),
        vk::ClearValue::default(),
        vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 } },
    ];
    ctx.submit_once(|cmd| {
        o.to_general(cmd);
        let near = Push::new([0.0, 1.0, 0.0, 1.0], TRI, 0.25);
        let far = Push::full_screen([0.0, 0.0, 1.0, 1.0], 0.5);
        o.render(cmd, 0, &clears, &[(0, near), (0, far)]);
        o.read(cmd, 1, vk::ImageAspectFlags::COLOR, &out);
        o.read(cmd, 3, vk::ImageAspectFlags::DEPTH, &zout);
    })
    .map_err(err)?;
    let px = out.read::<[u8; 4]>();
    compare(&px, unorm_close, |m| {
        let k = m.count_ones();
        [0, share(k), share(4 - k), 255]
    })?;
    let zs = zout.read::<f32>();
    compare(&zs, |a, b| a == b, |m| if m & 1 != 0 { 0.25 } else { 0.5 })?;
    Ok(())
}

/// An R32_UINT triangle with 4 samples, resolved by `vkCmdResolveImage`: sample 0's value.
fn integer_resolve(ctx: &Context) -> Check {
    let mut o = Objects::new(ctx.device());
    let f = vk::Format::R32_UINT;
    o.image(ctx, f, S4)?;
    o.pass(&[(f, S4, vk::AttachmentLoadOp::CLEAR)], None, None, None)?;
    o.pipeline(UINT_FS, S4, false)?;
    o.image(ctx, f, S1)?;
    let out = Buffer::new(ctx, (W * H * 4) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let zero = vk::ClearValue { color: vk::ClearColorValue { uint32: [0; 4] } };
    ctx.submit_once(|cmd| {
        o.to_general(cmd);
        o.render(cmd, 0, &[zero], &[(0, Push::new([0.0; 4], TRI, 0.5))]);
        let region = vk::ImageResolve {
            src_subresource: layers(vk::ImageAspectFlags::COLOR),
            src_offset: vk::Offset3D::default(),
            dst_subresource: layers(vk::ImageAspectFlags::COLOR),
            dst_offset: vk::Offset3D::default(),
            extent: vk::Extent3D { width: W, height: H, depth: 1 },
        };
        // SAFETY: cmd is recording outside a render pass.
        unsafe {
            o.d.cmd_resolve_image(
                cmd,
                o.images[0].0,
                vk::ImageLayout::GENERAL,
                o.images[1].0,
                vk::ImageLayout::GENERAL,
                &[region],
            );
        }
        memory_barrier(o.d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::TRANSFER);
        o.read(cmd, 1, vk::ImageAspectFlags::COLOR, &out);
    })
    .map_err(err)?;
    compare(&out.read::<u32>(), |a, b| a == b, |m| if m & 1 != 0 { 7 } else { 0 })?;
    Ok(())
}

/// `texelFetch` of every sample of a copy of a multisampled render, and `textureSamples`.
fn fetch_samples(ctx: &Context) -> Check {
    let d = ctx.device();
    let mut o = Objects::new(d);
    let (c, u) = (vk::Format::R8G8B8A8_UNORM, vk::Format::R32_UINT);
    o.image(ctx, c, S4)?;
    o.pass(&[(c, S4, vk::AttachmentLoadOp::LOAD)], None, None, None)?;
    o.pipeline(COLOR_FS, S4, false)?;
    o.image(ctx, c, S4)?; // the copy
    o.image(ctx, u, S1)?;
    // The fetching pass renders image 2 (the framebuffer is over the last image made).
    let combined = vk::DescriptorType::COMBINED_IMAGE_SAMPLER;
    o.set_layout = o.own.single_set_layout(combined, vk::ShaderStageFlags::FRAGMENT).map_err(err)?;
    o.pass(&[(u, S1, vk::AttachmentLoadOp::CLEAR)], None, None, None)?;
    o.pipeline(FETCH_FS, S1, false)?;
    // SAFETY: a valid create info; kept: destroyed when the check ends.
    o.sampler = o
        .own
        .keep(unsafe { d.create_sampler(&vk::SamplerCreateInfo::default(), None) }.vk("vkCreateSampler").map_err(err)?);
    let ii = vk::DescriptorImageInfo {
        sampler: o.sampler,
        image_view: o.images[1].1,
        image_layout: vk::ImageLayout::GENERAL,
    };
    let set = o.own.single_set(o.set_layout, combined, Single::Image(ii)).map_err(err)?;
    let out = Buffer::new(ctx, (W * H * 4) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let zero = vk::ClearValue { color: vk::ClearColorValue { uint32: [0; 4] } };
    ctx.submit_once(|cmd| {
        o.to_general(cmd);
        let (src, copy) = (o.images[0].0, o.images[1].0);
        let general = vk::ImageLayout::GENERAL;
        // SAFETY: cmd is recording; the objects belong to this device.
        unsafe {
            let black = vk::ClearColorValue { float32: [0.0, 0.0, 0.0, 1.0] };
            d.cmd_clear_color_image(cmd, src, general, &black, &[range(vk::ImageAspectFlags::COLOR)]);
        }
        memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::ALL_GRAPHICS);
        o.render(cmd, 0, &[], &[(0, Push::new([1.0; 4], TRI, 0.5))]);
        let region = vk::ImageCopy {
            src_subresource: layers(vk::ImageAspectFlags::COLOR),
            src_offset: vk::Offset3D::default(),
            dst_subresource: layers(vk::ImageAspectFlags::COLOR),
            dst_offset: vk::Offset3D::default(),
            extent: vk::Extent3D { width: W, height: H, depth: 1 },
        };
        // SAFETY: as above.
        unsafe { d.cmd_copy_image(cmd, src, general, copy, general, &[region]) };
        memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::FRAGMENT_SHADER);
        // SAFETY: as above.
        unsafe { d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, o.layouts[1], 0, &[set], &[]) };
        o.render(cmd, 1, &[zero], &[(1, Push::full_screen([0.0; 4], 0.5))]);
        o.read(cmd, 2, vk::ImageAspectFlags::COLOR, &out);
    })
    .map_err(err)?;
    compare(&out.read::<u32>(), |a, b| a == b, |m| m | 4 << 8)?;
    Ok(())
}

fn main() {
    let icd = checks::icd_from_args("msaa_check");
    let ctx = checks::context_or_exit("msaa_check", &icd);
    println!("device: {} ({})", ctx.info().name, ctx.info().driver_name);
    let list: [checks::Check<'_, ()>; 4] = [
        ("a triangle edge with 4 samples, resolved by the render pass", &edge),
        ("depth per sample, and a SAMPLE_ZERO depth resolve", &depth_per_sample),
        ("an integer attachment through vkCmdResolveImage", &integer_resolve),
        ("texelFetch of each sample after a clear and a copy, textureSamples", &fetch_samples),
    ];
    checks::run_checks_and_exit(&ctx, "msaa", &list, || 0);
}
