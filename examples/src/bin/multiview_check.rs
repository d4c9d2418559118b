//! Multiview (Vulkan 1.1's `multiview`, SPV_KHR_multiview's `ViewIndex`), end to end through
//! the loader: each draw of a multiview subpass renders once per view of its mask, view `v`
//! into layer `v` of a layered colour attachment, and the shaders see `gl_ViewIndex`. Every
//! layer is read back and checked against a hand-solved image:
//!
//! - 2 views through `VkRenderPassMultiviewCreateInfo`: the vertex shader places a band of
//!   pixels by `gl_ViewIndex`, the fragment shader colours it by `gl_ViewIndex`; then
//!   `vkCmdClearAttachments` with layer 0, count 1 clears a rectangle of both views;
//! - 4 views with an occlusion query, which uses 4 consecutive queries whose results sum to
//!   the samples of every view; again with the query and the draw in a secondary command
//!   buffer, which knows the views from its inheritance info;
//! - a view mask with a hole (0b101): the load clears layers 0 and 2, layer 1 keeps what a
//!   transfer wrote before the pass;
//! - two subpasses (views 0, then 0 and 1): each view's layer is loaded in the first
//!   subpass that has the view;
//! - dynamic rendering with `VkRenderingInfo::viewMask` (when the device offers it);
//! - a ray query in the fragment shader of a multiview draw, its ray placed by
//!   `gl_ViewIndex` (view 0 hits the one triangle, view 1 misses it).
//!
//! GLSL is compiled at run time with glslangValidator (Debian: glslang-tools). Runs
//! unchanged on any ICD; lavapipe passing it is what makes it a test of ours.
//! Usage: multiview_check [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check
//! failed, 2: could not run)

use ash::{khr, vk};
use vortex_examples::owned::{Owned, PassPipeline, Single};
use vortex_examples::{
    checks, memory_barrier, AccelerationStructure, Buffer, Context, Indices, Instance, Mat3x4, TriangleGeometry,
    VkResultExt,
};

type Check = Result<(), String>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

const W: u32 = 32;
const H: u32 = 32;
const FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;
/// The load's clear colour and what a transfer writes before the pass (as RGBA8 bytes).
const CLEAR: [f32; 4] = [0.0, 0.0, 1.0, 1.0];
const CLEAR_BYTES: [u8; 4] = [0, 0, 255, 255];
const BEFORE: [u8; 4] = [255, 0, 255, 255];

/// View `v`'s band: pixels x in [8v, 8v + 8), y in [y0, y1) (push constants), as two
/// triangles; no pixel centre lies on an edge.
const BAND_VS: &str = r#"#version 450
#extension GL_EXT_multiview : require
layout(push_constant) uniform Rows { float y0; float y1; };
void main() {
    const vec2 corners[6] = vec2[](vec2(0, 0), vec2(1, 0), vec2(0, 1), vec2(1, 0), vec2(1, 1), vec2(0, 1));
    vec2 c = corners[gl_VertexIndex];
    float x = 8.0 * float(gl_ViewIndex) + 8.0 * c.x;
    float y = mix(y0, y1, c.y);
    gl_Position = vec4(x / 16.0 - 1.0, y / 16.0 - 1.0, 0.0, 1.0);
}
"#;

/// Red is 0.2 (view + 1), green full.
const VIEW_FS: &str = r#"#version 450
#extension GL_EXT_multiview : require
layout(location = 0) out vec4 o_color;
void main() {
    o_color = vec4(0.2 * float(gl_ViewIndex + 1), 1.0, 0.0, 1.0);
}
"#;

/// Green where the view's ray hits the triangle, red where it misses: view 0's rays start
/// over the triangle, view 1's beside it.
const RAY_FS: &str = r#"#version 460
#extension GL_EXT_multiview : require
#extension GL_EXT_ray_query : require
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;
layout(location = 0) out vec4 o_color;
void main() {
    vec3 origin = vec3(gl_ViewIndex == 0 ? 0.0 : 100.0, 0.0, 0.0);
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsOpaqueEXT, 0xFF, origin, 0.0, vec3(0.0, 0.0, 1.0), 10.0);
    while (rayQueryProceedEXT(q)) {}
    bool hit = rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionTriangleEXT;
    o_color = hit ? vec4(0.0, 1.0, 0.0, 1.0) : vec4(1.0, 0.0, 0.0, 1.0);
}
"#;

/// The colour VIEW_FS writes for view `v`.
fn view_color(v: u32) -> [u8; 4] {
    [(0.2 * (v + 1) as f32 * 255.0).round() as u8, 255, 0, 255]
}

/// Every object a check creates, destroyed on drop (null handles are ignored).
struct Objects<'a> {
    d: &'a ash::Device,
    own: Owned<'a>,
    image: vk::Image,
    view: vk::ImageView,
    layers: u32,
    pass: vk::RenderPass,
    framebuffer: vk::Framebuffer,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    queries: vk::QueryPool,
}

impl<'a> Objects<'a> {
    /// A `W` x `H` RGBA8 image of `layers` layers, viewed as a 2D array.
    fn new(ctx: &'a Context, layers: u32) -> Result<Self, String> {
        let d = ctx.device();
        let mut o = Objects {
            d,
            own: Owned::new(d),
            image: vk::Image::null(),
            view: vk::ImageView::null(),
            layers,
            pass: vk::RenderPass::null(),
            framebuffer: vk::Framebuffer::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            queries: vk::QueryPool::null(),
        };
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(FORMAT)
            .extent(vk::Extent3D { width: W, height: H, depth: 1 })
            .mip_levels(1)
            .array_layers(layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(
                vk::ImageUsageFlags::COLOR_ATTACHMENT
                    | vk::ImageUsageFlags::TRANSFER_SRC
                    | vk::ImageUsageFlags::TRANSFER_DST,
            )
            .initial_layout(vk::ImageLayout::UNDEFINED);
        (o.image, o.view) = o.own.image(ctx, &info, vk::ImageViewType::TYPE_2D_ARRAY, range(layers)).map_err(err)?;
        Ok(o)
    }

    fn module(&mut self, stage: &str, source: &str) -> Result<vk::ShaderModule, String> {
        self.own.module(stage, source).map_err(err)
    }

    /// A render pass over the image (load CLEAR, layouts GENERAL) with one subpass per view
    /// mask, and its framebuffer (one layer, as multiview requires).
    fn pass(&mut self, masks: &[u32]) -> Check {
        let att = [vk::AttachmentDescription::default()
            .format(FORMAT)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
            .initial_layout(vk::ImageLayout::GENERAL)
            .final_layout(vk::ImageLayout::GENERAL)];
        let cref = [vk::AttachmentReference { attachment: 0, layout: vk::ImageLayout::GENERAL }];
        let subs: Vec<_> = masks
            .iter()
            .map(|_| {
                vk::SubpassDescription::default()
                    .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
                    .color_attachments(&cref)
            })
            .collect();
        let mut deps = vec![vk::SubpassDependency::default()
            .src_subpass(masks.len() as u32 - 1)
            .dst_subpass(vk::SUBPASS_EXTERNAL)
            .src_stage_mask(vk::PipelineStageFlags::ALL_GRAPHICS)
            .dst_stage_mask(vk::PipelineStageFlags::TRANSFER)
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::TRANSFER_READ)];
        for s in 1..masks.len() as u32 {
            deps.push(
                vk::SubpassDependency::default()
                    .src_subpass(s - 1)
                    .dst_subpass(s)
                    .src_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
                    .dst_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
                    .src_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE)
                    .dst_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE),
            );
        }
        let offsets = vec![0i32; deps.len()];
        // The views are rendered together: one correlation set.
        let correlation = [masks.iter().fold(0, |m, s| m | s)];
        let mut mv = vk::RenderPassMultiviewCreateInfo::default()
            .view_masks(masks)
            .view_offsets(&offsets)
            .correlation_masks(&correlation);
        let info = vk::RenderPassCreateInfo::default()
            .attachments(&att)
            .subpasses(&subs)
            .dependencies(&deps)
            .push_next(&mut mv);
        // SAFETY: valid create infos; kept: destroyed when the check ends.
        self.pass =
            self.own.keep(unsafe { self.d.create_render_pass(&info, None) }.vk("vkCreateRenderPass").map_err(err)?);
        let views = [self.view];
        let fb = vk::FramebufferCreateInfo::default()
            .render_pass(self.pass)
            .attachments(&views)
            .width(W)
            .height(H)
            .layers(1);
        // SAFETY: as above.
        self.framebuffer =
            self.own.keep(unsafe { self.d.create_framebuffer(&fb, None) }.vk("vkCreateFramebuffer").map_err(err)?);
        Ok(())
    }

    /// The pipeline layout: the rows push constants, and the set layout if there is one.
    fn layout(&mut self) -> Check {
        self.layout = self.own.pipeline_layout(self.set_layout, vk::ShaderStageFlags::VERTEX, 8).map_err(err)?;
        Ok(())
    }

    /// A band pipeline with fragment shader `fs` for subpass `subpass` of the pass, or (no
    /// pass) for dynamic rendering with `view_mask`.
    fn pipeline(&mut self, fs: &str, subpass: u32, view_mask: u32) -> Result<vk::Pipeline, String> {
        if self.layout == vk::PipelineLayout::null() {
            self.layout()?;
        }
        let (vs, fs) = (self.module("vert", BAND_VS)?, self.module("frag", fs)?);
        let p = PassPipeline {
            vs,
            fs,
            layout: self.layout,
            pass: self.pass,
            subpass,
            extent: [W, H],
            view_mask,
            color_formats: &[FORMAT],
            ..PassPipeline::default()
        };
        let p = self.own.pass_pipeline(&p).map_err(err)?;
        if self.pipeline == vk::Pipeline::null() {
            self.pipeline = p;
        }
        Ok(p)
    }

    /// Moves the image to GENERAL and fills every layer with `BEFORE`.
    fn fill(&self, cmd: vk::CommandBuffer) {
        let barrier = vk::ImageMemoryBarrier::default()
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::GENERAL)
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(self.image)
            .subresource_range(range(self.layers));
        let before = vk::ClearColorValue { float32: BEFORE.map(|b| b as f32 / 255.0) };
        // SAFETY: cmd is recording; the image belongs to this device.
        unsafe {
            self.d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[barrier],
            );
            self.d.cmd_clear_color_image(cmd, self.image, vk::ImageLayout::GENERAL, &before, &[range(self.layers)]);
            memory_barrier(self.d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::ALL_GRAPHICS);
        }
    }

    /// Begins the render pass (cleared to `CLEAR`) with the first pipeline bound.
    fn begin(&self, cmd: vk::CommandBuffer) {
        self.begin_with(cmd, vk::SubpassContents::INLINE);
    }

    /// Begins the render pass (cleared to `CLEAR`), its first subpass's commands `contents`,
    /// with the first pipeline bound when they are inline.
    fn begin_with(&self, cmd: vk::CommandBuffer, contents: vk::SubpassContents) {
        let values = [vk::ClearValue { color: vk::ClearColorValue { float32: CLEAR } }];
        let info = vk::RenderPassBeginInfo::default()
            .render_pass(self.pass)
            .framebuffer(self.framebuffer)
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: W, height: H } })
            .clear_values(&values);
        // SAFETY: cmd is recording; the objects belong to this device.
        unsafe {
            self.d.cmd_begin_render_pass(cmd, &info, contents);
            if contents == vk::SubpassContents::INLINE {
                self.d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, self.pipeline);
            }
        }
    }

    /// Draws the bands over rows `y0..y1`.
    fn draw(&self, cmd: vk::CommandBuffer, rows: [f32; 2]) {
        // SAFETY: cmd is recording inside a render pass instance with a band pipeline bound.
        unsafe {
            self.d.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::VERTEX, 0, bytemuck::cast_slice(&rows));
            self.d.cmd_draw(cmd, 6, 1, 0, 0);
        }
    }

    /// Copies every layer into `out` (layer after layer, RGBA8, tightly packed).
    fn read(&self, cmd: vk::CommandBuffer, out: &Buffer) {
        let region = vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: self.layers,
            })
            .image_extent(vk::Extent3D { width: W, height: H, depth: 1 });
        // SAFETY: cmd is recording outside a render pass instance.
        unsafe {
            self.d.cmd_copy_image_to_buffer(cmd, self.image, vk::ImageLayout::GENERAL, out.handle(), &[region]);
            memory_barrier(self.d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST);
        }
    }

    fn out_buffer(&self, ctx: &Context) -> Result<Buffer, String> {
        Buffer::new(ctx, (W * H * 4 * self.layers) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)
    }
}

fn range(layers: u32) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: layers,
    }
}

/// Compares every pixel of every layer of `px` (as `read` copies them) with `want(layer, x, y)`.
fn expect(px: &[[u8; 4]], layers: u32, want: impl Fn(u32, u32, u32) -> [u8; 4]) -> Check {
    for l in 0..layers {
        for y in 0..H {
            for x in 0..W {
                let got = px[((l * H + y) * W + x) as usize];
                let w = want(l, x, y);
                // Within 1 of the unorm conversion's rounding.
                if got.iter().zip(w).any(|(&g, w)| g.abs_diff(w) > 1) {
                    return Err(format!("layer {l}, pixel ({x}, {y}): {got:?}, want {w:?}"));
                }
            }
        }
    }
    Ok(())
}

/// Inside view `v`'s band over rows `y0..y1`.
fn in_band(v: u32, x: u32, y: u32, [y0, y1]: [u32; 2]) -> bool {
    (8 * v..8 * v + 8).contains(&x) && (y0..y1).contains(&y)
}

const ROWS: [f32; 2] = [4.0, 28.0];
const ROWS_U: [u32; 2] = [4, 28];

/// Two views; then a clear rectangle (layer 0, count 1) that must clear both views.
fn two_views(ctx: &Context) -> Check {
    let mut o = Objects::new(ctx, 2)?;
    o.pass(&[0b11])?;
    o.pipeline(VIEW_FS, 0, 0)?;
    let out = o.out_buffer(ctx)?;
    let white = [255u8; 4];
    ctx.submit_once(|cmd| {
        o.fill(cmd);
        o.begin(cmd);
        o.draw(cmd, ROWS);
        let corner = vk::ClearRect {
            rect: vk::Rect2D { offset: vk::Offset2D { x: 24, y: 0 }, extent: vk::Extent2D { width: 8, height: 4 } },
            base_array_layer: 0,
            layer_count: 1,
        };
        let a = vk::ClearAttachment {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            color_attachment: 0,
            clear_value: vk::ClearValue { color: vk::ClearColorValue { float32: [1.0; 4] } },
        };
        // SAFETY: cmd is recording inside the render pass.
        unsafe {
            o.d.cmd_clear_attachments(cmd, &[a], &[corner]);
            o.d.cmd_end_render_pass(cmd);
        }
        o.read(cmd, &out);
    })
    .map_err(err)?;
    expect(&out.read::<[u8; 4]>(), 2, |l, x, y| {
        if x >= 24 && y < 4 {
            white
        } else if in_band(l, x, y, ROWS_U) {
            view_color(l)
        } else {
            CLEAR_BYTES
        }
    })
}

/// Four views inside an occlusion query: its 4 queries sum to every view's samples. With
/// `in_secondary`, the query begins and ends in a secondary command buffer continuing the
/// render pass, which knows its views only from its inheritance info.
fn four_views_and_a_query(ctx: &Context, in_secondary: bool) -> Result<String, String> {
    let mut o = Objects::new(ctx, 4)?;
    o.pass(&[0b1111])?;
    o.pipeline(VIEW_FS, 0, 0)?;
    let qi = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::OCCLUSION).query_count(4);
    // SAFETY: valid create info; kept: destroyed when the check ends.
    o.queries = o.own.keep(unsafe { o.d.create_query_pool(&qi, None) }.vk("vkCreateQueryPool").map_err(err)?);
    let out = o.out_buffer(ctx)?;
    let secondary = if in_secondary { Some(Secondary::new(ctx)?) } else { None };
    let queried_draw = |cmd| {
        // SAFETY: cmd is recording inside the render pass; the pool belongs to this device.
        unsafe { o.d.cmd_begin_query(cmd, o.queries, 0, vk::QueryControlFlags::empty()) };
        o.draw(cmd, ROWS);
        // SAFETY: as above.
        unsafe { o.d.cmd_end_query(cmd, o.queries, 0) };
    };
    if let Some(s) = &secondary {
        s.record(o.pass, o.framebuffer, |cmd| {
            // SAFETY: cmd is recording, continuing the render pass.
            unsafe { o.d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, o.pipeline) };
            queried_draw(cmd);
        })?;
    }
    ctx.submit_once(|cmd| {
        o.fill(cmd);
        // SAFETY: cmd is recording; the pool belongs to this device.
        unsafe { o.d.cmd_reset_query_pool(cmd, o.queries, 0, 4) };
        match &secondary {
            Some(s) => {
                o.begin_with(cmd, vk::SubpassContents::SECONDARY_COMMAND_BUFFERS);
                // SAFETY: the secondary buffer was recorded for this render pass.
                unsafe { o.d.cmd_execute_commands(cmd, &[s.cmd]) };
            }
            None => {
                o.begin(cmd);
                queried_draw(cmd);
            }
        }
        // SAFETY: as above.
        unsafe { o.d.cmd_end_render_pass(cmd) };
        o.read(cmd, &out);
    })
    .map_err(err)?;
    expect(&out.read::<[u8; 4]>(), 4, |l, x, y| if in_band(l, x, y, ROWS_U) { view_color(l) } else { CLEAR_BYTES })?;
    let mut results = [0u64; 4];
    // SAFETY: the pool's 4 queries were written by the submission above.
    unsafe {
        o.d.get_query_pool_results(
            o.queries,
            0,
            &mut results,
            vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
        )
    }
    .vk("vkGetQueryPoolResults")
    .map_err(err)?;
    let want = 4 * 8 * 24;
    if results.iter().sum::<u64>() != want {
        return Err(format!("the 4 queries hold {results:?}, which should sum to {want}"));
    }
    Ok(format!("queries {results:?}"))
}

/// A secondary command buffer (and its pool) that continues subpass 0 of a render pass.
struct Secondary<'a> {
    d: &'a ash::Device,
    _own: Owned<'a>,
    cmd: vk::CommandBuffer,
}

impl<'a> Secondary<'a> {
    fn new(ctx: &'a Context) -> Result<Self, String> {
        let d = ctx.device();
        let mut own = Owned::new(d);
        let pi = vk::CommandPoolCreateInfo::default().queue_family_index(ctx.queue_family().0);
        // SAFETY: valid create and allocate infos; the pool (and with it the buffer) is kept:
        // destroyed when the check ends.
        let cmd = unsafe {
            let pool = own.keep(d.create_command_pool(&pi, None).vk("vkCreateCommandPool").map_err(err)?);
            let ai = vk::CommandBufferAllocateInfo::default()
                .command_pool(pool)
                .level(vk::CommandBufferLevel::SECONDARY)
                .command_buffer_count(1);
            d.allocate_command_buffers(&ai).vk("vkAllocateCommandBuffers").map_err(err)?[0]
        };
        Ok(Secondary { d, _own: own, cmd })
    }

    fn record(&self, pass: vk::RenderPass, framebuffer: vk::Framebuffer, f: impl FnOnce(vk::CommandBuffer)) -> Check {
        let inheritance =
            vk::CommandBufferInheritanceInfo::default().render_pass(pass).subpass(0).framebuffer(framebuffer);
        let bi = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE)
            .inheritance_info(&inheritance);
        // SAFETY: a secondary buffer of this device, not in use.
        unsafe { self.d.begin_command_buffer(self.cmd, &bi) }.vk("vkBeginCommandBuffer").map_err(err)?;
        f(self.cmd);
        // SAFETY: as above, recording.
        unsafe { self.d.end_command_buffer(self.cmd) }.vk("vkEndCommandBuffer").map_err(err)
    }
}

/// View mask 0b101: layers 0 and 2 are loaded and drawn, layer 1 keeps what was there.
fn mask_with_a_hole(ctx: &Context) -> Check {
    let mut o = Objects::new(ctx, 3)?;
    o.pass(&[0b101])?;
    o.pipeline(VIEW_FS, 0, 0)?;
    let out = o.out_buffer(ctx)?;
    ctx.submit_once(|cmd| {
        o.fill(cmd);
        o.begin(cmd);
        o.draw(cmd, ROWS);
        // SAFETY: cmd is recording inside the render pass.
        unsafe { o.d.cmd_end_render_pass(cmd) };
        o.read(cmd, &out);
    })
    .map_err(err)?;
    expect(&out.read::<[u8; 4]>(), 3, |l, x, y| match l {
        1 => BEFORE,
        _ if in_band(l, x, y, ROWS_U) => view_color(l),
        _ => CLEAR_BYTES,
    })
}

/// Subpass 0 renders view 0 (rows 4..16), subpass 1 views 0 and 1 (rows 16..28): layer 0
/// is loaded once (in subpass 0) and keeps both halves, layer 1 is loaded in subpass 1.
fn per_view_loads(ctx: &Context) -> Check {
    let mut o = Objects::new(ctx, 2)?;
    o.pass(&[0b01, 0b11])?;
    o.pipeline(VIEW_FS, 0, 0)?;
    let second = o.pipeline(VIEW_FS, 1, 0)?;
    let out = o.out_buffer(ctx)?;
    let result = ctx.submit_once(|cmd| {
        o.fill(cmd);
        o.begin(cmd);
        o.draw(cmd, [4.0, 16.0]);
        // SAFETY: cmd is recording inside the render pass.
        unsafe {
            o.d.cmd_next_subpass(cmd, vk::SubpassContents::INLINE);
            o.d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, second);
        }
        o.draw(cmd, [16.0, 28.0]);
        // SAFETY: as above.
        unsafe { o.d.cmd_end_render_pass(cmd) };
        o.read(cmd, &out);
    });
    result.map_err(err)?;
    expect(&out.read::<[u8; 4]>(), 2, |l, x, y| {
        let drawn = (l == 0 && in_band(0, x, y, [4, 16])) || in_band(l, x, y, [16, 28]);
        if drawn {
            view_color(l)
        } else {
            CLEAR_BYTES
        }
    })
}

/// Dynamic rendering with view mask 0b11 (`layerCount` 1 is ignored).
fn dynamic_rendering(ctx: &Context) -> Result<Option<String>, String> {
    if !ctx.info().enabled.contains(&"dynamicRendering") || !ctx.info().enabled.contains(&"multiview") {
        return Ok(Some("skipped: no dynamic rendering".into()));
    }
    let mut o = Objects::new(ctx, 2)?;
    o.pipeline(VIEW_FS, 0, 0b11)?;
    let out = o.out_buffer(ctx)?;
    let dr = khr::dynamic_rendering::Device::new(ctx.instance(), ctx.device());
    ctx.submit_once(|cmd| {
        o.fill(cmd);
        let colors = [vk::RenderingAttachmentInfo::default()
            .image_view(o.view)
            .image_layout(vk::ImageLayout::GENERAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .clear_value(vk::ClearValue { color: vk::ClearColorValue { float32: CLEAR } })];
        let info = vk::RenderingInfo::default()
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: W, height: H } })
            .layer_count(1)
            .view_mask(0b11)
            .color_attachments(&colors);
        // SAFETY: cmd is recording; the objects belong to this device.
        unsafe {
            dr.cmd_begin_rendering(cmd, &info);
            o.d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, o.pipeline);
        }
        o.draw(cmd, ROWS);
        // SAFETY: as above.
        unsafe { dr.cmd_end_rendering(cmd) };
        o.read(cmd, &out);
    })
    .map_err(err)?;
    expect(&out.read::<[u8; 4]>(), 2, |l, x, y| if in_band(l, x, y, ROWS_U) { view_color(l) } else { CLEAR_BYTES })?;
    Ok(None)
}

/// A ray query in a multiview draw's fragment shader: view 0's rays hit, view 1's miss.
fn ray_query(ctx: &Context) -> Check {
    let tri = TriangleGeometry {
        vertices: vec![[-10.0, -10.0, 1.0], [10.0, -10.0, 1.0], [0.0, 10.0, 1.0]],
        indices: Indices::None,
        transform: None,
        flags: vk::GeometryFlagsKHR::OPAQUE,
    };
    let blas = AccelerationStructure::build_bottom(ctx, &[tri]).map_err(err)?;
    let instance = Instance {
        blas: 0,
        transform: Mat3x4::IDENTITY,
        custom_index: 0,
        mask: 0xFF,
        flags: vk::GeometryInstanceFlagsKHR::empty(),
        sbt_offset: 0,
    };
    let tlas = AccelerationStructure::build_top(ctx, std::slice::from_ref(&blas), &[instance]).map_err(err)?;
    let mut o = Objects::new(ctx, 2)?;
    let d = o.d;
    let accel = vk::DescriptorType::ACCELERATION_STRUCTURE_KHR;
    o.set_layout = o.own.single_set_layout(accel, vk::ShaderStageFlags::FRAGMENT).map_err(err)?;
    let set = o.own.single_set(o.set_layout, accel, Single::Accel(tlas.handle())).map_err(err)?;
    o.pass(&[0b11])?;
    o.pipeline(RAY_FS, 0, 0)?;
    let out = o.out_buffer(ctx)?;
    ctx.submit_once(|cmd| {
        o.fill(cmd);
        o.begin(cmd);
        // SAFETY: cmd is recording inside the render pass.
        unsafe { d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, o.layout, 0, &[set], &[]) };
        o.draw(cmd, ROWS);
        // SAFETY: as above.
        unsafe { d.cmd_end_render_pass(cmd) };
        o.read(cmd, &out);
    })
    .map_err(err)?;
    let (hit, miss) = ([0, 255, 0, 255], [255, 0, 0, 255]);
    expect(&out.read::<[u8; 4]>(), 2, |l, x, y| match l {
        _ if !in_band(l, x, y, ROWS_U) => CLEAR_BYTES,
        0 => hit,
        _ => miss,
    })
}

fn main() {
    let icd = checks::icd_from_args("multiview_check");
    let ctx = vortex_examples::Context::with_optional_features(&icd).unwrap_or_else(|e| {
        eprintln!("multiview_check: {e}");
        std::process::exit(2);
    });
    println!("device: {} ({})", ctx.info().name, ctx.info().driver_name);
    if !ctx.info().enabled.contains(&"multiview") {
        eprintln!("multiview_check: the device does not offer multiview");
        std::process::exit(2);
    }
    let list: [checks::Check<'_, Option<String>>; 7] = [
        ("2 views: gl_ViewIndex placement and colour, clear attachments per view", &|c| two_views(c).map(|_| None)),
        ("4 views: an occlusion query over 4 consecutive queries", &|c| four_views_and_a_query(c, false).map(Some)),
        ("4 views: the query in a secondary command buffer", &|c| four_views_and_a_query(c, true).map(Some)),
        ("view mask 0b101: layer 1 untouched", &|c| mask_with_a_hole(c).map(|_| None)),
        ("two subpasses: each view loaded on its first use", &|c| per_view_loads(c).map(|_| None)),
        ("dynamic rendering with a view mask", &dynamic_rendering),
        ("a ray query in a multiview fragment shader", &|c| ray_query(c).map(|_| None)),
    ];
    checks::run_checks_and_exit(&ctx, "multiview", &list, || 0);
}
