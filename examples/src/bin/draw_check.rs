//! Draws of compiled GLSL vertex + fragment pipelines, end to end through the loader, read
//! back and checked on the host against hand-solved expectations:
//!
//! - a triangle whose vertices are fetched from a vertex buffer (two attributes, two
//!   formats), with a colour varying interpolated across it, into a colour attachment; the
//!   fragment shader also counts its invocations with a storage-buffer atomic, which must
//!   equal the covered pixels (none of the pixel centres lies on an edge, so coverage is
//!   exact);
//! - two overlapping indexed quads at different depths, drawn far one last, with a depth
//!   test and a push-constant colour: the near one must win where they overlap; occlusion
//!   queries count the samples that passed (and none for a third quad hidden behind);
//! - a full-screen triangle without vertex input sampling a 4 x 4 texture, linear or nearest
//!   by column pair, through an array of combined image samplers and through a sampled image
//!   with an array of separate samplers, indexed non-uniformly;
//! - large points (`gl_PointSize`) and a wide line, their exact pixels;
//! - two subpasses, the second reading the first's attachment as an input attachment.
//!
//! The GLSL is compiled at run time with glslangValidator (Debian: glslang-tools), as the
//! conformance suite does. It runs unchanged on any ICD; lavapipe passing it is what makes it
//! a test of ours. Usage: draw_check [--icd vortex|lavapipe|PATH]   (exit 0: all passed,
//! 1: a check failed, 2: could not run)

use ash::vk;
use vortex_examples::owned::{Owned, PassPipeline, Single};
use vortex_examples::{checks, memory_barrier, Buffer, Context, VkResultExt};

type Check = Result<(), String>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

const W: u32 = 32;
const H: u32 = 32;

/// Every object a check creates, destroyed on drop (null handles are ignored).
struct Objects<'a> {
    d: &'a ash::Device,
    own: Owned<'a>,
    /// Images with their views, in the order made.
    images: Vec<(vk::Image, vk::ImageView)>,
    pass: vk::RenderPass,
    framebuffer: vk::Framebuffer,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    layout: vk::PipelineLayout,
    pipelines: Vec<vk::Pipeline>,
    samplers: Vec<vk::Sampler>,
    queries: vk::QueryPool,
}

impl<'a> Objects<'a> {
    fn new(d: &'a ash::Device) -> Self {
        Objects {
            d,
            own: Owned::new(d),
            images: vec![],
            pass: vk::RenderPass::null(),
            framebuffer: vk::Framebuffer::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            pool: vk::DescriptorPool::null(),
            layout: vk::PipelineLayout::null(),
            pipelines: vec![],
            samplers: vec![],
            queries: vk::QueryPool::null(),
        }
    }

    /// A `W` x `H` attachment image with its memory and view.
    fn image(&mut self, ctx: &Context, format: vk::Format, aspect: vk::ImageAspectFlags) -> Result<vk::Image, String> {
        let usage = if aspect == vk::ImageAspectFlags::COLOR {
            vk::ImageUsageFlags::COLOR_ATTACHMENT
        } else {
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT
        };
        self.image_of(ctx, format, aspect, [W, H], usage | vk::ImageUsageFlags::TRANSFER_SRC)
    }

    /// A `w` x `h` image of `usage` with its memory and view.
    fn image_of(
        &mut self,
        ctx: &Context,
        format: vk::Format,
        aspect: vk::ImageAspectFlags,
        [w, h]: [u32; 2],
        usage: vk::ImageUsageFlags,
    ) -> Result<vk::Image, String> {
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D { width: w, height: h, depth: 1 })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let made = self.own.image(ctx, &info, vk::ImageViewType::TYPE_2D, range(aspect)).map_err(err)?;
        self.images.push(made);
        Ok(made.0)
    }

    fn module(&mut self, stage: &str, source: &str) -> Result<vk::ShaderModule, String> {
        self.own.module(stage, source).map_err(err)
    }
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

/// A render pass clearing a colour attachment (and a D32 depth one when `depth`), and its
/// framebuffer over the objects' images.
fn pass_and_framebuffer(o: &mut Objects, depth: bool) -> Check {
    let att = |format| {
        vk::AttachmentDescription::default()
            .format(format)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
            .initial_layout(vk::ImageLayout::UNDEFINED)
            .final_layout(vk::ImageLayout::GENERAL)
    };
    let mut atts = vec![att(vk::Format::R8G8B8A8_UNORM)];
    if depth {
        atts.push(att(vk::Format::D32_SFLOAT));
    }
    let cref = [vk::AttachmentReference { attachment: 0, layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL }];
    let zref = vk::AttachmentReference { attachment: 1, layout: vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL };
    let mut sub =
        vk::SubpassDescription::default().pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS).color_attachments(&cref);
    if depth {
        sub = sub.depth_stencil_attachment(&zref);
    }
    // Draw results reach the transfer that reads them back.
    let dep = vk::SubpassDependency::default()
        .src_subpass(0)
        .dst_subpass(vk::SUBPASS_EXTERNAL)
        .src_stage_mask(vk::PipelineStageFlags::ALL_GRAPHICS)
        .dst_stage_mask(vk::PipelineStageFlags::TRANSFER)
        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
        .dst_access_mask(vk::AccessFlags::TRANSFER_READ);
    let subs = [sub];
    let deps = [dep];
    let info = vk::RenderPassCreateInfo::default().attachments(&atts).subpasses(&subs).dependencies(&deps);
    // SAFETY: valid create infos; kept: destroyed when the check ends.
    o.pass = o.own.keep(unsafe { o.d.create_render_pass(&info, None) }.vk("vkCreateRenderPass").map_err(err)?);
    let views: Vec<_> = o.images.iter().map(|i| i.1).collect();
    let fb = vk::FramebufferCreateInfo::default().render_pass(o.pass).attachments(&views).width(W).height(H).layers(1);
    // SAFETY: as above.
    o.framebuffer = o.own.keep(unsafe { o.d.create_framebuffer(&fb, None) }.vk("vkCreateFramebuffer").map_err(err)?);
    Ok(())
}

/// What a pipeline of these checks varies.
struct PipelineDesc<'a> {
    vs: vk::ShaderModule,
    fs: vk::ShaderModule,
    bindings: &'a [vk::VertexInputBindingDescription],
    attributes: &'a [vk::VertexInputAttributeDescription],
    depth: bool,
    push_bytes: u32,
    topology: vk::PrimitiveTopology,
    line_width: f32,
    subpass: u32,
}

impl<'a> PipelineDesc<'a> {
    /// Triangle lists without vertex input, depth test or push constants, in subpass 0.
    fn new(vs: vk::ShaderModule, fs: vk::ShaderModule) -> Self {
        PipelineDesc {
            vs,
            fs,
            bindings: &[],
            attributes: &[],
            depth: false,
            push_bytes: 0,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            line_width: 1.0,
            subpass: 0,
        }
    }
}

/// Makes a pipeline (and the objects' pipeline layout, the first time); `begin` binds the
/// first one made.
fn pipeline(o: &mut Objects, p: &PipelineDesc) -> Check {
    if o.layout == vk::PipelineLayout::null() {
        o.layout = o.own.pipeline_layout(o.set_layout, vk::ShaderStageFlags::FRAGMENT, p.push_bytes).map_err(err)?;
    }
    let made = o
        .own
        .pass_pipeline(&PassPipeline {
            vs: p.vs,
            fs: p.fs,
            layout: o.layout,
            pass: o.pass,
            subpass: p.subpass,
            extent: [W, H],
            depth: p.depth,
            line_width: p.line_width,
            topology: p.topology,
            vertex_bindings: p.bindings,
            vertex_attributes: p.attributes,
            ..PassPipeline::default()
        })
        .map_err(err)?;
    o.pipelines.push(made);
    Ok(())
}

/// Begins the render pass with the colour cleared to `clear` (depth to 1).
fn begin(o: &Objects, cmd: vk::CommandBuffer, clear: [f32; 4]) {
    let values = [
        vk::ClearValue { color: vk::ClearColorValue { float32: clear } },
        vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 } },
    ];
    let n = o.images.len();
    let info = vk::RenderPassBeginInfo::default()
        .render_pass(o.pass)
        .framebuffer(o.framebuffer)
        .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: W, height: H } })
        .clear_values(&values[..n]);
    // SAFETY: cmd is recording; the objects belong to this device.
    unsafe {
        o.d.cmd_begin_render_pass(cmd, &info, vk::SubpassContents::INLINE);
        o.d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, o.pipelines[0]);
    }
}

/// Ends the render pass and copies the colour attachment into `out` (RGBA8, tightly packed).
fn end_and_read(o: &Objects, cmd: vk::CommandBuffer, out: &Buffer) {
    let region = vk::BufferImageCopy::default()
        .image_subresource(vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        })
        .image_extent(vk::Extent3D { width: W, height: H, depth: 1 });
    // SAFETY: cmd is recording inside the render pass begun by `begin`.
    unsafe {
        o.d.cmd_end_render_pass(cmd);
        o.d.cmd_copy_image_to_buffer(cmd, o.images[0].0, vk::ImageLayout::GENERAL, out.handle(), &[region]);
        memory_barrier(o.d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST);
    }
}

const TRIANGLE_VS: &str = r#"#version 450
layout(location = 0) in vec2 pos;
layout(location = 1) in vec4 color;
layout(location = 0) out vec4 v_color;
void main() {
    v_color = color;
    gl_Position = vec4(pos, 0.0, 1.0);
}
"#;

const TRIANGLE_FS: &str = r#"#version 450
layout(location = 0) in vec4 v_color;
layout(location = 0) out vec4 o_color;
layout(set = 0, binding = 0) buffer Counter { uint fragments; };
void main() {
    atomicAdd(fragments, 1u);
    o_color = v_color;
}
"#;

/// Pixel corners of the triangle: (0, 0), (32, 0), (0, 31). The hypotenuse
/// 31 x + 32 y = 992 never passes through a pixel centre.
const TRI: [[f32; 2]; 3] = [[0.0, 0.0], [32.0, 0.0], [0.0, 31.0]];

/// A triangle with per-vertex colours (R32G32_SFLOAT positions, R8G8B8A8_UNORM colours in
/// one interleaved binding) into a cleared attachment; a fragment-shader atomic counts the
/// fragments.
fn triangle(ctx: &Context) -> Check {
    let d = ctx.device();
    let mut o = Objects::new(d);
    o.image(ctx, vk::Format::R8G8B8A8_UNORM, vk::ImageAspectFlags::COLOR)?;
    pass_and_framebuffer(&mut o, false)?;
    let (vs, fs) = (o.module("vert", TRIANGLE_VS)?, o.module("frag", TRIANGLE_FS)?);
    let storage = vk::DescriptorType::STORAGE_BUFFER;
    o.set_layout = o.own.single_set_layout(storage, vk::ShaderStageFlags::FRAGMENT).map_err(err)?;
    let colors: [[u8; 4]; 3] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255]];
    let mut verts = Vec::new();
    for (p, c) in TRI.iter().zip(colors) {
        let ndc = [p[0] / W as f32 * 2.0 - 1.0, p[1] / H as f32 * 2.0 - 1.0];
        verts.extend_from_slice(&ndc[0].to_le_bytes());
        verts.extend_from_slice(&ndc[1].to_le_bytes());
        verts.extend_from_slice(&c);
    }
    let bindings =
        [vk::VertexInputBindingDescription { binding: 0, stride: 12, input_rate: vk::VertexInputRate::VERTEX }];
    let attributes = [
        vk::VertexInputAttributeDescription { location: 0, binding: 0, format: vk::Format::R32G32_SFLOAT, offset: 0 },
        vk::VertexInputAttributeDescription { location: 1, binding: 0, format: vk::Format::R8G8B8A8_UNORM, offset: 8 },
    ];
    pipeline(&mut o, &PipelineDesc { bindings: &bindings, attributes: &attributes, ..PipelineDesc::new(vs, fs) })?;
    let vb = Buffer::with_data(ctx, &verts, vk::BufferUsageFlags::VERTEX_BUFFER).map_err(err)?;
    let counter = Buffer::with_data(ctx, &[0u32; 4], vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    let out = Buffer::new(ctx, (W * H * 4) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let bi = vk::DescriptorBufferInfo { buffer: counter.handle(), offset: 0, range: vk::WHOLE_SIZE };
    let set = o.own.single_set(o.set_layout, storage, Single::Buffer(bi)).map_err(err)?;
    ctx.submit_once(|cmd| {
        begin(&o, cmd, [0.0, 0.0, 0.0, 0.0]);
        // SAFETY: cmd is recording inside the render pass; the objects belong to this device.
        unsafe {
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, o.layout, 0, &[set], &[]);
            d.cmd_bind_vertex_buffers(cmd, 0, &[vb.handle()], &[0]);
            d.cmd_draw(cmd, 3, 1, 0, 0);
        }
        end_and_read(&o, cmd, &out);
        memory_barrier(d, cmd, vk::PipelineStageFlags::ALL_COMMANDS, vk::PipelineStageFlags::HOST);
    })
    .map_err(err)?;
    let px = out.read::<[u8; 4]>();
    let mut covered = 0;
    for y in 0..H {
        for x in 0..W {
            let (cx, cy) = (x as f64 + 0.5, y as f64 + 0.5);
            let got = px[(y * W + x) as usize];
            if 31.0 * cx + 32.0 * cy > 992.0 {
                if got != [0; 4] {
                    return Err(format!("pixel ({x}, {y}) outside the triangle is {got:?}"));
                }
                continue;
            }
            covered += 1;
            // Barycentrics: weight of vertex 1 is x / 32, of vertex 2 y / 31.
            let (b1, b2) = (cx / 32.0, cy / 31.0);
            let want = [1.0 - b1 - b2, b1, b2, 1.0].map(|v| v * 255.0);
            for c in 0..4 {
                if (got[c] as f64 - want[c]).abs() > 1.5 {
                    return Err(format!("pixel ({x}, {y}): {got:?}, want about {want:?}"));
                }
            }
        }
    }
    let fragments = counter.read::<u32>()[0];
    if fragments != covered {
        return Err(format!("{fragments} fragment invocations counted, {covered} pixels covered"));
    }
    Ok(())
}

const QUAD_VS: &str = r#"#version 450
layout(location = 0) in vec3 pos;
void main() {
    gl_Position = vec4(pos, 1.0);
}
"#;

const QUAD_FS: &str = r#"#version 450
layout(location = 0) out vec4 o_color;
layout(push_constant) uniform Push { vec4 color; };
void main() {
    o_color = color;
}
"#;

/// Two indexed quads (R32G32B32_SFLOAT positions, 16-bit indices): pixels [8, 24) x [8, 24)
/// at depth 0.25 first, then [0, 16) x [0, 16) at depth 0.75; depth test LESS; occlusion
/// queries around them and around a third quad hidden behind the first.
fn depth_tested_quads(ctx: &Context) -> Check {
    let d = ctx.device();
    let mut o = Objects::new(d);
    o.image(ctx, vk::Format::R8G8B8A8_UNORM, vk::ImageAspectFlags::COLOR)?;
    o.image(ctx, vk::Format::D32_SFLOAT, vk::ImageAspectFlags::DEPTH)?;
    pass_and_framebuffer(&mut o, true)?;
    let (vs, fs) = (o.module("vert", QUAD_VS)?, o.module("frag", QUAD_FS)?);
    let bindings =
        [vk::VertexInputBindingDescription { binding: 0, stride: 12, input_rate: vk::VertexInputRate::VERTEX }];
    let attributes = [vk::VertexInputAttributeDescription {
        location: 0,
        binding: 0,
        format: vk::Format::R32G32B32_SFLOAT,
        offset: 0,
    }];
    pipeline(
        &mut o,
        &PipelineDesc {
            bindings: &bindings,
            attributes: &attributes,
            depth: true,
            push_bytes: 16,
            ..PipelineDesc::new(vs, fs)
        },
    )?;
    let ndc = |p: u32, size: u32| p as f32 / size as f32 * 2.0 - 1.0;
    let mut verts: Vec<f32> = Vec::new();
    // The third quad lies behind the first: it passes no sample.
    for (x0, y0, x1, y1, z) in [(8, 8, 24, 24, 0.25f32), (0, 0, 16, 16, 0.75), (10, 10, 20, 20, 0.9)] {
        for (x, y) in [(x0, y0), (x1, y0), (x0, y1), (x1, y1)] {
            verts.extend([ndc(x, W), ndc(y, H), z]);
        }
    }
    let indices: [u16; 12] = [0, 1, 2, 2, 1, 3, 4, 5, 6, 6, 5, 7];
    let vb = Buffer::with_data(ctx, &verts, vk::BufferUsageFlags::VERTEX_BUFFER).map_err(err)?;
    let ib = Buffer::with_data(ctx, &indices, vk::BufferUsageFlags::INDEX_BUFFER).map_err(err)?;
    let out = Buffer::new(ctx, (W * H * 4) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let (near, far) = ([0.0f32, 1.0, 0.0, 1.0], [1.0f32, 0.0, 0.0, 1.0]);
    let qi = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::OCCLUSION).query_count(2);
    // SAFETY: valid create info; kept: destroyed when the check ends.
    o.queries = o.own.keep(unsafe { d.create_query_pool(&qi, None) }.vk("vkCreateQueryPool").map_err(err)?);
    ctx.submit_once(|cmd| {
        // SAFETY: cmd is recording outside a render pass.
        unsafe { d.cmd_reset_query_pool(cmd, o.queries, 0, 2) };
        begin(&o, cmd, [0.0, 0.0, 1.0, 1.0]);
        // SAFETY: cmd is recording inside the render pass; the objects belong to this device.
        unsafe {
            d.cmd_bind_vertex_buffers(cmd, 0, &[vb.handle()], &[0]);
            d.cmd_bind_index_buffer(cmd, ib.handle(), 0, vk::IndexType::UINT16);
            // Query 0 around the two visible quads, query 1 around the hidden one (its
            // vertices through the vertex offset).
            d.cmd_begin_query(cmd, o.queries, 0, vk::QueryControlFlags::empty());
            for (first, color) in [(0, near), (6, far)] {
                let bytes: Vec<u8> = color.iter().flat_map(|c| c.to_le_bytes()).collect();
                d.cmd_push_constants(cmd, o.layout, vk::ShaderStageFlags::FRAGMENT, 0, &bytes);
                d.cmd_draw_indexed(cmd, 6, 1, first, 0, 0);
            }
            d.cmd_end_query(cmd, o.queries, 0);
            d.cmd_begin_query(cmd, o.queries, 1, vk::QueryControlFlags::empty());
            d.cmd_draw_indexed(cmd, 6, 1, 0, 8, 0);
            d.cmd_end_query(cmd, o.queries, 1);
        }
        end_and_read(&o, cmd, &out);
    })
    .map_err(err)?;
    let mut samples = [0u64; 2];
    let flags = vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT;
    // SAFETY: two 64-bit results into a two-element array.
    unsafe { d.get_query_pool_results(o.queries, 0, &mut samples, flags) }.vk("vkGetQueryPoolResults").map_err(err)?;
    // Both drivers count exactly (a non-precise query may report any non-zero count): the
    // near quad's 256 pixels and the far one's 256 less the 64 the near one hides.
    if samples != [256 + 192, 0] {
        return Err(format!("occlusion queries counted {samples:?} samples, want [448, 0]"));
    }
    let px = out.read::<[u8; 4]>();
    let inside = |x: u32, y: u32, lo: u32, hi: u32| (lo..hi).contains(&x) && (lo..hi).contains(&y);
    for y in 0..H {
        for x in 0..W {
            let want = if inside(x, y, 8, 24) {
                [0, 255, 0, 255]
            } else if inside(x, y, 0, 16) {
                [255, 0, 0, 255]
            } else {
                [0, 0, 255, 255]
            };
            let got = px[(y * W + x) as usize];
            if got != want {
                return Err(format!("pixel ({x}, {y}): {got:?}, want {want:?}"));
            }
        }
    }
    Ok(())
}

const FULLSCREEN_VS: &str = r#"#version 450
void main() {
    vec2 p = vec2(float((gl_VertexIndex & 1) * 4 - 1), float((gl_VertexIndex & 2) * 2 - 1));
    gl_Position = vec4(p, 0.0, 1.0);
}
"#;

const SAMPLING_FS: &str = r#"#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 0, binding = 0) uniform sampler2D combined[2];
layout(set = 0, binding = 1) uniform texture2D tex;
layout(set = 0, binding = 2) uniform sampler samplers[2];
layout(push_constant) uniform Push { int pick; };
layout(location = 0) out vec4 o_color;
void main() {
    vec2 uv = gl_FragCoord.xy / 32.0;
    // Column pairs alternate: 0 linear, 1 nearest (per quad, so within every warp).
    int k = (int(gl_FragCoord.x) / 2) & 1;
    if (gl_FragCoord.y < 16.0) {
        o_color = textureOffset(combined[nonuniformEXT(k)], uv, ivec2(1, -1));
    } else {
        o_color = texture(sampler2D(tex, samplers[nonuniformEXT(pick ^ k)]), uv);
    }
}
"#;

/// Texel (i, j) of the 4 x 4 RGBA8 texture.
fn texel(i: i64, j: i64) -> [u8; 4] {
    let (i, j) = (i.clamp(0, 3) as u8, j.clamp(0, 3) as u8);
    [i * 60, j * 60, (i + j) * 30, 255 - 20 * i]
}

/// A full-screen triangle (no vertex input) sampling a 4 x 4 texture, linear or nearest
/// (clamp to edge) by column pair: the top half through an array of two combined image
/// samplers with a texel offset, the bottom half through a sampled image and an array of two
/// samplers, each picked by a non-uniform index (and a push constant).
fn sampling(ctx: &Context) -> Check {
    needs(ctx, &["shaderSampledImageArrayNonUniformIndexing"])?;
    let d = ctx.device();
    let mut o = Objects::new(d);
    o.image(ctx, vk::Format::R8G8B8A8_UNORM, vk::ImageAspectFlags::COLOR)?;
    pass_and_framebuffer(&mut o, false)?;
    let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
    let tex = o.image_of(ctx, vk::Format::R8G8B8A8_UNORM, vk::ImageAspectFlags::COLOR, [4, 4], usage)?;
    let tex_view = o.images[1].1;
    let (vs, fs) = (o.module("vert", FULLSCREEN_VS)?, o.module("frag", SAMPLING_FS)?);
    for filter in [vk::Filter::LINEAR, vk::Filter::NEAREST] {
        let edge = vk::SamplerAddressMode::CLAMP_TO_EDGE;
        let si = vk::SamplerCreateInfo::default()
            .mag_filter(filter)
            .min_filter(filter)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(edge)
            .address_mode_v(edge)
            .address_mode_w(edge)
            .max_lod(0.0);
        // SAFETY: valid create info; kept: destroyed when the check ends.
        o.samplers.push(o.own.keep(unsafe { d.create_sampler(&si, None) }.vk("vkCreateSampler").map_err(err)?));
    }
    let kinds =
        [vk::DescriptorType::COMBINED_IMAGE_SAMPLER, vk::DescriptorType::SAMPLED_IMAGE, vk::DescriptorType::SAMPLER];
    let counts = [2, 1, 2];
    let bindings: Vec<_> = kinds
        .iter()
        .enumerate()
        .map(|(i, &ty)| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(i as u32)
                .descriptor_type(ty)
                .descriptor_count(counts[i])
                .stage_flags(vk::ShaderStageFlags::FRAGMENT)
        })
        .collect();
    let sli = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
    // SAFETY: valid create info; kept: destroyed when the check ends.
    o.set_layout = o
        .own
        .keep(unsafe { d.create_descriptor_set_layout(&sli, None) }.vk("vkCreateDescriptorSetLayout").map_err(err)?);
    pipeline(&mut o, &PipelineDesc { push_bytes: 4, ..PipelineDesc::new(vs, fs) })?;
    let sizes = [0, 1, 2].map(|i| vk::DescriptorPoolSize { ty: kinds[i], descriptor_count: counts[i] });
    let pi = vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes);
    // SAFETY: valid create infos; kept: destroyed when the check ends.
    let set = unsafe {
        o.pool = o.own.keep(d.create_descriptor_pool(&pi, None).vk("vkCreateDescriptorPool").map_err(err)?);
        let layouts = [o.set_layout];
        let ai = vk::DescriptorSetAllocateInfo::default().descriptor_pool(o.pool).set_layouts(&layouts);
        let set = d.allocate_descriptor_sets(&ai).vk("vkAllocateDescriptorSets").map_err(err)?[0];
        let layout = vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL;
        let image = |sampler, image_view| vk::DescriptorImageInfo { sampler, image_view, image_layout: layout };
        let (linear, nearest, none) = (o.samplers[0], o.samplers[1], vk::ImageView::null());
        let combined = [image(linear, tex_view), image(nearest, tex_view)];
        let sampled = [image(vk::Sampler::null(), tex_view)];
        // Picked by `pick ^ k` with pick 1: element 1 for the linear columns.
        let samplers = [image(nearest, none), image(linear, none)];
        let writes = [(0, &combined[..]), (1, &sampled[..]), (2, &samplers[..])].map(|(b, info)| {
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(b)
                .descriptor_type(kinds[b as usize])
                .image_info(info)
        });
        d.update_descriptor_sets(&writes, &[]);
        set
    };
    let texels: Vec<[u8; 4]> = (0..16).map(|k| texel(k % 4, k / 4)).collect();
    let up = Buffer::with_data(ctx, &texels, vk::BufferUsageFlags::TRANSFER_SRC).map_err(err)?;
    let out = Buffer::new(ctx, (W * H * 4) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    ctx.submit_once(|cmd| {
        let to = |old, new, src: vk::AccessFlags, dst: vk::AccessFlags| {
            vk::ImageMemoryBarrier::default()
                .old_layout(old)
                .new_layout(new)
                .src_access_mask(src)
                .dst_access_mask(dst)
                .image(tex)
                .subresource_range(range(vk::ImageAspectFlags::COLOR))
        };
        let region = vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_extent(vk::Extent3D { width: 4, height: 4, depth: 1 });
        use vk::{AccessFlags as A, ImageLayout as L, PipelineStageFlags as S};
        // SAFETY: cmd is recording; the objects belong to this device.
        unsafe {
            let none = vk::DependencyFlags::empty();
            let upload = to(L::UNDEFINED, L::TRANSFER_DST_OPTIMAL, A::empty(), A::TRANSFER_WRITE);
            d.cmd_pipeline_barrier(cmd, S::TOP_OF_PIPE, S::TRANSFER, none, &[], &[], &[upload]);
            d.cmd_copy_buffer_to_image(cmd, up.handle(), tex, L::TRANSFER_DST_OPTIMAL, &[region]);
            let read = to(L::TRANSFER_DST_OPTIMAL, L::SHADER_READ_ONLY_OPTIMAL, A::TRANSFER_WRITE, A::SHADER_READ);
            d.cmd_pipeline_barrier(cmd, S::TRANSFER, S::FRAGMENT_SHADER, none, &[], &[], &[read]);
        }
        begin(&o, cmd, [0.0; 4]);
        // SAFETY: cmd is recording inside the render pass; the objects belong to this device.
        unsafe {
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, o.layout, 0, &[set], &[]);
            d.cmd_push_constants(cmd, o.layout, vk::ShaderStageFlags::FRAGMENT, 0, &1i32.to_le_bytes());
            d.cmd_draw(cmd, 3, 1, 0, 0);
        }
        end_and_read(&o, cmd, &out);
    })
    .map_err(err)?;
    let px = out.read::<[u8; 4]>();
    for y in 0..H as i64 {
        for x in 0..W as i64 {
            let got = px[(y * W as i64 + x) as usize];
            // Texel space: the pixel centre over 8 pixels a texel.
            let (u, v) = ((x as f64 + 0.5) / 8.0, (y as f64 + 0.5) / 8.0);
            // The top half samples with the texel offset (1, -1), before clamping.
            let (di, dj) = if y < 16 { (1, -1) } else { (0, 0) };
            let want: [f64; 4] = if (x / 2) & 1 == 0 {
                let (u, v) = (u - 0.5, v - 0.5);
                let (i, j, fu, fv) = (u.floor() as i64, v.floor() as i64, u - u.floor(), v - v.floor());
                std::array::from_fn(|c| {
                    let t = |i: i64, j: i64| texel(i + di, j + dj)[c] as f64;
                    let top = t(i, j) * (1.0 - fu) + t(i + 1, j) * fu;
                    (top * (1.0 - fv) + (t(i, j + 1) * (1.0 - fu) + t(i + 1, j + 1) * fu) * fv).round()
                })
            } else {
                texel(u.floor() as i64 + di, v.floor() as i64 + dj).map(f64::from)
            };
            if (0..4).any(|c| (got[c] as f64 - want[c]).abs() > 2.0) {
                return Err(format!("pixel ({x}, {y}): {got:?}, want about {want:?}"));
            }
        }
    }
    Ok(())
}

const POINTS_LINES_VS: &str = r#"#version 450
layout(location = 0) in vec2 pos;
void main() {
    gl_PointSize = 4.0;
    gl_Position = vec4(pos, 0.0, 1.0);
}
"#;

const WHITE_FS: &str = r#"#version 450
layout(location = 0) out vec4 o_color;
void main() {
    o_color = vec4(1.0);
}
"#;

/// Large points and wide lines: two points of size 4 on pixel corners (8, 8) and (24, 8),
/// each covering 4 x 4 pixels, and a line 3 pixels wide from (2, 20.5) to (30, 20.5),
/// covering x in [2, 30) and y in [19, 22). No pixel centre lies on an edge.
fn points_and_lines(ctx: &Context) -> Check {
    needs(ctx, &["largePoints", "wideLines"])?;
    let d = ctx.device();
    let mut o = Objects::new(d);
    o.image(ctx, vk::Format::R8G8B8A8_UNORM, vk::ImageAspectFlags::COLOR)?;
    pass_and_framebuffer(&mut o, false)?;
    let (vs, fs) = (o.module("vert", POINTS_LINES_VS)?, o.module("frag", WHITE_FS)?);
    let bindings =
        [vk::VertexInputBindingDescription { binding: 0, stride: 8, input_rate: vk::VertexInputRate::VERTEX }];
    let attributes =
        [vk::VertexInputAttributeDescription { location: 0, binding: 0, format: vk::Format::R32G32_SFLOAT, offset: 0 }];
    let base = PipelineDesc { bindings: &bindings, attributes: &attributes, ..PipelineDesc::new(vs, fs) };
    pipeline(&mut o, &PipelineDesc { topology: vk::PrimitiveTopology::POINT_LIST, ..base })?;
    let base = PipelineDesc { bindings: &bindings, attributes: &attributes, ..PipelineDesc::new(vs, fs) };
    pipeline(&mut o, &PipelineDesc { topology: vk::PrimitiveTopology::LINE_LIST, line_width: 3.0, ..base })?;
    let ndc = |x: f32, y: f32| [x / W as f32 * 2.0 - 1.0, y / H as f32 * 2.0 - 1.0];
    let verts: Vec<[f32; 2]> = vec![ndc(8.0, 8.0), ndc(24.0, 8.0), ndc(2.0, 20.5), ndc(30.0, 20.5)];
    let vb = Buffer::with_data(ctx, &verts, vk::BufferUsageFlags::VERTEX_BUFFER).map_err(err)?;
    let out = Buffer::new(ctx, (W * H * 4) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    ctx.submit_once(|cmd| {
        begin(&o, cmd, [0.0; 4]);
        // SAFETY: cmd is recording inside the render pass; the objects belong to this device.
        unsafe {
            d.cmd_bind_vertex_buffers(cmd, 0, &[vb.handle()], &[0]);
            d.cmd_draw(cmd, 2, 1, 0, 0);
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, o.pipelines[1]);
            d.cmd_draw(cmd, 2, 1, 2, 0);
        }
        end_and_read(&o, cmd, &out);
    })
    .map_err(err)?;
    let px = out.read::<[u8; 4]>();
    let within = |v: u32, lo: u32, hi: u32| (lo..hi).contains(&v);
    for y in 0..H {
        for x in 0..W {
            let point = within(y, 6, 10) && (within(x, 6, 10) || within(x, 22, 26));
            let line = within(y, 19, 22) && within(x, 2, 30);
            let want = if point || line { [255; 4] } else { [0; 4] };
            let got = px[(y * W + x) as usize];
            if got != want {
                return Err(format!("pixel ({x}, {y}): {got:?}, want {want:?}"));
            }
        }
    }
    Ok(())
}

const HALF_FS: &str = r#"#version 450
layout(location = 0) out vec4 o_color;
void main() {
    o_color = vec4(1.0, 0.0, 0.0, 1.0);
}
"#;

const INPUT_FS: &str = r#"#version 450
layout(input_attachment_index = 0, set = 0, binding = 0) uniform subpassInput previous;
layout(location = 0) out vec4 o_color;
void main() {
    o_color = subpassLoad(previous).bgra;
}
"#;

/// Two subpasses: the first draws red over attachment A and clears its left half to green
/// (`vkCmdClearAttachments`), the second reads A as an input attachment and writes it,
/// swizzled, to attachment B.
fn input_attachments(ctx: &Context) -> Check {
    let d = ctx.device();
    let mut o = Objects::new(d);
    let rgba8 = vk::Format::R8G8B8A8_UNORM;
    let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
    o.image_of(ctx, rgba8, vk::ImageAspectFlags::COLOR, [W, H], usage)?;
    o.image_of(ctx, rgba8, vk::ImageAspectFlags::COLOR, [W, H], usage | vk::ImageUsageFlags::INPUT_ATTACHMENT)?;
    let att = vk::AttachmentDescription::default()
        .format(rgba8)
        .samples(vk::SampleCountFlags::TYPE_1)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::STORE)
        .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
        .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
        .initial_layout(vk::ImageLayout::UNDEFINED)
        .final_layout(vk::ImageLayout::GENERAL);
    // Attachment 0 is B (read back by end_and_read), attachment 1 is A.
    let atts = [att, att];
    let a_out = [vk::AttachmentReference { attachment: 1, layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL }];
    let a_in = [vk::AttachmentReference { attachment: 1, layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL }];
    let b_out = [vk::AttachmentReference { attachment: 0, layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL }];
    let graphics = vk::PipelineBindPoint::GRAPHICS;
    let subs = [
        vk::SubpassDescription::default().pipeline_bind_point(graphics).color_attachments(&a_out),
        vk::SubpassDescription::default()
            .pipeline_bind_point(graphics)
            .input_attachments(&a_in)
            .color_attachments(&b_out),
    ];
    let deps = [
        vk::SubpassDependency::default()
            .src_subpass(0)
            .dst_subpass(1)
            .src_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
            .dst_stage_mask(vk::PipelineStageFlags::FRAGMENT_SHADER)
            .src_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE)
            .dst_access_mask(vk::AccessFlags::INPUT_ATTACHMENT_READ)
            .dependency_flags(vk::DependencyFlags::BY_REGION),
        vk::SubpassDependency::default()
            .src_subpass(1)
            .dst_subpass(vk::SUBPASS_EXTERNAL)
            .src_stage_mask(vk::PipelineStageFlags::ALL_GRAPHICS)
            .dst_stage_mask(vk::PipelineStageFlags::TRANSFER)
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::TRANSFER_READ),
    ];
    let info = vk::RenderPassCreateInfo::default().attachments(&atts).subpasses(&subs).dependencies(&deps);
    // SAFETY: valid create infos; kept: destroyed when the check ends.
    o.pass = o.own.keep(unsafe { d.create_render_pass(&info, None) }.vk("vkCreateRenderPass").map_err(err)?);
    let views = [o.images[0].1, o.images[1].1];
    let fb = vk::FramebufferCreateInfo::default().render_pass(o.pass).attachments(&views).width(W).height(H).layers(1);
    // SAFETY: as above.
    o.framebuffer = o.own.keep(unsafe { d.create_framebuffer(&fb, None) }.vk("vkCreateFramebuffer").map_err(err)?);
    let input = vk::DescriptorType::INPUT_ATTACHMENT;
    o.set_layout = o.own.single_set_layout(input, vk::ShaderStageFlags::FRAGMENT).map_err(err)?;
    let (vs, half, read) = (o.module("vert", FULLSCREEN_VS)?, o.module("frag", HALF_FS)?, o.module("frag", INPUT_FS)?);
    pipeline(&mut o, &PipelineDesc::new(vs, half))?;
    pipeline(&mut o, &PipelineDesc { subpass: 1, ..PipelineDesc::new(vs, read) })?;
    let ii = vk::DescriptorImageInfo {
        sampler: vk::Sampler::null(),
        image_view: o.images[1].1,
        image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
    };
    let set = o.own.single_set(o.set_layout, input, Single::Image(ii)).map_err(err)?;
    let out = Buffer::new(ctx, (W * H * 4) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    ctx.submit_once(|cmd| {
        let values = [
            vk::ClearValue { color: vk::ClearColorValue { float32: [0.0; 4] } },
            vk::ClearValue { color: vk::ClearColorValue { float32: [0.2, 0.4, 0.6, 1.0] } },
        ];
        let info = vk::RenderPassBeginInfo::default()
            .render_pass(o.pass)
            .framebuffer(o.framebuffer)
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: W, height: H } })
            .clear_values(&values);
        // Subpass 0: red everywhere, then green over the left half by a clear rectangle.
        let left = vk::ClearRect {
            rect: vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: W / 2, height: H } },
            base_array_layer: 0,
            layer_count: 1,
        };
        let green = vk::ClearAttachment {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            color_attachment: 0,
            clear_value: vk::ClearValue { color: vk::ClearColorValue { float32: [0.0, 1.0, 0.0, 1.0] } },
        };
        // SAFETY: cmd is recording; the objects belong to this device.
        unsafe {
            d.cmd_begin_render_pass(cmd, &info, vk::SubpassContents::INLINE);
            d.cmd_bind_pipeline(cmd, graphics, o.pipelines[0]);
            d.cmd_draw(cmd, 3, 1, 0, 0);
            d.cmd_clear_attachments(cmd, &[green], &[left]);
            d.cmd_next_subpass(cmd, vk::SubpassContents::INLINE);
            d.cmd_bind_pipeline(cmd, graphics, o.pipelines[1]);
            d.cmd_bind_descriptor_sets(cmd, graphics, o.layout, 0, &[set], &[]);
            d.cmd_draw(cmd, 3, 1, 0, 0);
        }
        end_and_read(&o, cmd, &out);
    })
    .map_err(err)?;
    let px = out.read::<[u8; 4]>();
    for y in 0..H {
        for x in 0..W {
            // A's green and red, read as .bgra.
            let want = if x < W / 2 { [0, 255, 0, 255] } else { [0, 0, 255, 255] };
            let got = px[(y * W + x) as usize];
            if got != want {
                return Err(format!("pixel ({x}, {y}): {got:?}, want {want:?}"));
            }
        }
    }
    Ok(())
}

/// Fails unless the context enabled every feature of `features` (a check that uses one
/// without it is not valid Vulkan).
fn needs(ctx: &Context, features: &[&str]) -> Check {
    match features.iter().find(|f| !ctx.info().enabled.contains(f)) {
        Some(f) => Err(format!("the device does not offer {f}")),
        None => Ok(()),
    }
}

fn main() {
    let icd = checks::icd_from_args("draw_check");
    let ctx = Context::with_optional_features(&icd).unwrap_or_else(|e| {
        eprintln!("draw_check: {e}");
        std::process::exit(2);
    });
    println!("device: {} ({})", ctx.info().name, ctx.info().driver_name);
    let list: [checks::Check<'_, ()>; 5] = [
        ("triangle: vertex fetch, interpolated colour, fragment atomics", &triangle),
        ("indexed quads: depth test, push constants, occlusion queries", &depth_tested_quads),
        ("sampling: combined image sampler and sampler arrays, non-uniform indices", &sampling),
        ("large points and wide lines", &points_and_lines),
        ("input attachments across subpasses", &input_attachments),
    ];
    checks::run_checks_and_exit(&ctx, "draw", &list, || 0);
}
