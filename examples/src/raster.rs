//! Graphics on the same plumbing as compute: colour and depth/stencil attachments behind a
//! one-subpass render pass ([`Target`]), graphics pipelines of a vertex and a fragment
//! shader ([`GraphicsPipeline`]), sampled textures with mipmaps ([`Texture`]) and samplers.
//!
//! Every image stays in the `GENERAL` layout, so reading back, sampling and rendering need no
//! layout bookkeeping; the barriers the examples need are recorded by these helpers.

use crate::buffer::Buffer;
use crate::context::{Context, Shared};
use crate::error::{Error, Result, VkResultExt};
use crate::pipeline::{memory_barrier, read_spirv, Binding, ComputePipeline};
use ash::vk;
use std::rc::Rc;

/// Bytes of one texel of `format`'s `aspect` as a buffer copy lays it out (the formats the
/// examples use).
pub fn texel_bytes(format: vk::Format, aspect: vk::ImageAspectFlags) -> u64 {
    use vk::Format as F;
    if aspect == vk::ImageAspectFlags::STENCIL {
        return 1;
    }
    match format {
        F::R8_UNORM | F::R8_UINT => 1,
        F::D16_UNORM | F::R16_SFLOAT | F::R8G8_UNORM => 2,
        F::R16G16B16A16_SFLOAT | F::R32G32_SFLOAT | F::R32G32_UINT => 8,
        F::R32G32B32A32_SFLOAT | F::R32G32B32A32_UINT => 16,
        _ => 4,
    }
}

fn aspect_of(format: vk::Format) -> vk::ImageAspectFlags {
    use vk::Format as F;
    match format {
        F::D16_UNORM | F::D32_SFLOAT | F::X8_D24_UNORM_PACK32 => vk::ImageAspectFlags::DEPTH,
        F::S8_UINT => vk::ImageAspectFlags::STENCIL,
        F::D16_UNORM_S8_UINT | F::D24_UNORM_S8_UINT | F::D32_SFLOAT_S8_UINT => {
            vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL
        }
        _ => vk::ImageAspectFlags::COLOR,
    }
}

fn range(aspect: vk::ImageAspectFlags, levels: u32) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: aspect,
        base_mip_level: 0,
        level_count: levels,
        base_array_layer: 0,
        layer_count: 1,
    }
}

/// A 2D image with its memory and a view of every level; destroyed on drop.
pub struct Image2d {
    shared: Rc<Shared>,
    pub image: vk::Image,
    pub view: vk::ImageView,
    memory: vk::DeviceMemory,
    pub format: vk::Format,
    pub aspect: vk::ImageAspectFlags,
    pub extent: [u32; 2],
    pub levels: u32,
}

impl Image2d {
    /// An image of `levels` mip levels with `usage` (plus transfers), moved to `GENERAL`.
    pub fn new(
        ctx: &Context,
        format: vk::Format,
        [w, h]: [u32; 2],
        levels: u32,
        usage: vk::ImageUsageFlags,
    ) -> Result<Self> {
        let shared = ctx.shared.clone();
        let aspect = aspect_of(format);
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D { width: w, height: h, depth: 1 })
            .mip_levels(levels)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage | vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let mut img = Image2d {
            shared: shared.clone(),
            image: vk::Image::null(),
            view: vk::ImageView::null(),
            memory: vk::DeviceMemory::null(),
            format,
            aspect,
            extent: [w, h],
            levels,
        };
        let device = &shared.device;
        // SAFETY (this block): valid device; Drop destroys whatever was created.
        unsafe {
            img.image = device.create_image(&info, None).vk("vkCreateImage")?;
            let req = device.get_image_memory_requirements(img.image);
            let ty = ctx.memory_type(req.memory_type_bits).ok_or(Error::msg("no memory type for an image"))?;
            let alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty);
            img.memory = device.allocate_memory(&alloc, None).vk("vkAllocateMemory")?;
            device.bind_image_memory(img.image, img.memory, 0).vk("vkBindImageMemory")?;
            let view = vk::ImageViewCreateInfo::default()
                .image(img.image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(format)
                .subresource_range(range(aspect, levels));
            img.view = device.create_image_view(&view, None).vk("vkCreateImageView")?;
        }
        ctx.submit_once(|cmd| img.record_to_general(cmd))?;
        Ok(img)
    }

    fn record_to_general(&self, cmd: vk::CommandBuffer) {
        let barrier = vk::ImageMemoryBarrier::default()
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::GENERAL)
            .dst_access_mask(vk::AccessFlags::MEMORY_WRITE | vk::AccessFlags::MEMORY_READ)
            .image(self.image)
            .subresource_range(range(self.aspect, self.levels));
        // SAFETY: cmd is recording; the image belongs to this device.
        unsafe {
            self.shared.device.cmd_pipeline_barrier(
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

    fn region(&self, aspect: vk::ImageAspectFlags, level: u32) -> vk::BufferImageCopy {
        vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: aspect,
                mip_level: level,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_extent(vk::Extent3D {
                width: (self.extent[0] >> level).max(1),
                height: (self.extent[1] >> level).max(1),
                depth: 1,
            })
    }

    /// Level 0 of one aspect (`COLOR`, `DEPTH` or `STENCIL`), tightly packed, once every
    /// command submitted before has finished.
    pub fn read(&self, ctx: &Context, aspect: vk::ImageAspectFlags) -> Result<Vec<u8>> {
        let [w, h] = self.extent;
        let buffer = Buffer::new(
            ctx,
            w as u64 * h as u64 * texel_bytes(self.format, aspect),
            vk::BufferUsageFlags::TRANSFER_DST,
        )?;
        let device = &self.shared.device;
        ctx.submit_once(|cmd| {
            // SAFETY: cmd is recording; image and buffer belong to this device.
            unsafe {
                memory_barrier(device, cmd, vk::PipelineStageFlags::ALL_COMMANDS, vk::PipelineStageFlags::TRANSFER);
                device.cmd_copy_image_to_buffer(
                    cmd,
                    self.image,
                    vk::ImageLayout::GENERAL,
                    buffer.handle(),
                    &[self.region(aspect, 0)],
                );
                memory_barrier(device, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST);
            }
        })?;
        Ok(buffer.read::<u8>())
    }

    /// Writes `levels[i]` (tightly packed texels) into mip level `i`.
    pub fn upload(&self, ctx: &Context, levels: &[Vec<u8>]) -> Result<()> {
        let staging: Vec<Buffer> = levels
            .iter()
            .map(|data| Buffer::with_data(ctx, data, vk::BufferUsageFlags::TRANSFER_SRC))
            .collect::<Result<_>>()?;
        let device = &self.shared.device;
        ctx.submit_once(|cmd| {
            for (level, buffer) in staging.iter().enumerate() {
                let region = self.region(self.aspect, level as u32);
                // SAFETY: cmd is recording; image and buffer belong to this device.
                unsafe {
                    device.cmd_copy_buffer_to_image(
                        cmd,
                        buffer.handle(),
                        self.image,
                        vk::ImageLayout::GENERAL,
                        &[region],
                    )
                };
            }
            memory_barrier(device, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::ALL_COMMANDS);
        })
    }
}

impl Drop for Image2d {
    fn drop(&mut self) {
        // SAFETY: no submission is pending (submit_once waits); null handles are ignored.
        unsafe {
            let device = &self.shared.device;
            device.destroy_image_view(self.view, None);
            device.destroy_image(self.image, None);
            device.free_memory(self.memory, None);
        }
    }
}

/// A sampled texture: an [`Image2d`] with every level uploaded.
pub fn texture(ctx: &Context, format: vk::Format, extent: [u32; 2], levels: &[Vec<u8>]) -> Result<Image2d> {
    let img = Image2d::new(ctx, format, extent, levels.len() as u32, vk::ImageUsageFlags::SAMPLED)?;
    img.upload(ctx, levels)?;
    Ok(img)
}

/// A sampler; destroyed on drop.
pub struct Sampler {
    shared: Rc<Shared>,
    pub handle: vk::Sampler,
}

impl Sampler {
    pub fn new(ctx: &Context, info: &vk::SamplerCreateInfo) -> Result<Self> {
        // SAFETY: valid device and create info.
        let handle = unsafe { ctx.shared.device.create_sampler(info, None) }.vk("vkCreateSampler")?;
        Ok(Sampler { shared: ctx.shared.clone(), handle })
    }

    /// `filter` for magnification, minification and between levels, `mode` on every axis,
    /// every level reachable.
    pub fn simple(ctx: &Context, filter: vk::Filter, mode: vk::SamplerAddressMode) -> Result<Self> {
        let mip =
            if filter == vk::Filter::LINEAR { vk::SamplerMipmapMode::LINEAR } else { vk::SamplerMipmapMode::NEAREST };
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(filter)
            .min_filter(filter)
            .mipmap_mode(mip)
            .address_mode_u(mode)
            .address_mode_v(mode)
            .address_mode_w(mode)
            .max_lod(vk::LOD_CLAMP_NONE);
        Self::new(ctx, &info)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // SAFETY: no submission is pending (submit_once waits).
        unsafe { self.shared.device.destroy_sampler(self.handle, None) };
    }
}

/// Colour attachments and an optional depth/stencil attachment of one size, a render pass
/// that clears them all (one subpass) and its framebuffer.
pub struct Target {
    shared: Rc<Shared>,
    pub color: Vec<Image2d>,
    pub depth: Option<Image2d>,
    pub pass: vk::RenderPass,
    framebuffer: vk::Framebuffer,
    pub extent: [u32; 2],
}

impl Target {
    pub fn new(ctx: &Context, extent: [u32; 2], colors: &[vk::Format], depth: Option<vk::Format>) -> Result<Self> {
        let color = colors
            .iter()
            .map(|&f| Image2d::new(ctx, f, extent, 1, vk::ImageUsageFlags::COLOR_ATTACHMENT))
            .collect::<Result<Vec<_>>>()?;
        let depth = depth
            .map(|f| Image2d::new(ctx, f, extent, 1, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT))
            .transpose()?;
        let mut t = Target {
            shared: ctx.shared.clone(),
            color,
            depth,
            pass: vk::RenderPass::null(),
            framebuffer: vk::Framebuffer::null(),
            extent,
        };
        let att = |format| {
            vk::AttachmentDescription::default()
                .format(format)
                .samples(vk::SampleCountFlags::TYPE_1)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)
                .stencil_load_op(vk::AttachmentLoadOp::CLEAR)
                .stencil_store_op(vk::AttachmentStoreOp::STORE)
                .initial_layout(vk::ImageLayout::GENERAL)
                .final_layout(vk::ImageLayout::GENERAL)
        };
        let atts: Vec<_> = t.color.iter().chain(&t.depth).map(|i| att(i.format)).collect();
        let views: Vec<_> = t.color.iter().chain(&t.depth).map(|i| i.view).collect();
        let crefs: Vec<_> = (0..t.color.len() as u32)
            .map(|attachment| vk::AttachmentReference { attachment, layout: vk::ImageLayout::GENERAL })
            .collect();
        let zref = vk::AttachmentReference { attachment: t.color.len() as u32, layout: vk::ImageLayout::GENERAL };
        let mut sub = vk::SubpassDescription::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&crefs);
        if t.depth.is_some() {
            sub = sub.depth_stencil_attachment(&zref);
        }
        let subs = [sub];
        let info = vk::RenderPassCreateInfo::default().attachments(&atts).subpasses(&subs);
        let device = &ctx.shared.device;
        // SAFETY: valid create infos; Drop destroys what was created.
        unsafe {
            t.pass = device.create_render_pass(&info, None).vk("vkCreateRenderPass")?;
            let fb = vk::FramebufferCreateInfo::default()
                .render_pass(t.pass)
                .attachments(&views)
                .width(extent[0])
                .height(extent[1])
                .layers(1);
            t.framebuffer = device.create_framebuffer(&fb, None).vk("vkCreateFramebuffer")?;
        }
        Ok(t)
    }

    /// Begins the render pass, clearing every colour attachment to `clear` and the depth
    /// and stencil to `depth` and `stencil`, and sets the viewport and scissor to the whole
    /// target.
    pub fn begin(&self, cmd: vk::CommandBuffer, clear: vk::ClearColorValue, depth: f32, stencil: u32) {
        let mut clears: Vec<_> = self.color.iter().map(|_| vk::ClearValue { color: clear }).collect();
        clears.push(vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth, stencil } });
        let [w, h] = self.extent;
        let area = vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: w, height: h } };
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(self.pass)
            .framebuffer(self.framebuffer)
            .render_area(area)
            .clear_values(&clears);
        let device = &self.shared.device;
        // SAFETY: cmd is recording outside a render pass; the objects belong to this device.
        unsafe {
            device.cmd_begin_render_pass(cmd, &begin, vk::SubpassContents::INLINE);
            device.cmd_set_viewport(
                cmd,
                0,
                &[vk::Viewport { x: 0.0, y: 0.0, width: w as f32, height: h as f32, min_depth: 0.0, max_depth: 1.0 }],
            );
            device.cmd_set_scissor(cmd, 0, &[area]);
        }
    }

    /// Ends the render pass; its writes are visible to transfers and the host after.
    pub fn end(&self, cmd: vk::CommandBuffer) {
        let device = &self.shared.device;
        // SAFETY: cmd is recording inside this target's render pass.
        unsafe { device.cmd_end_render_pass(cmd) };
        memory_barrier(
            device,
            cmd,
            vk::PipelineStageFlags::ALL_GRAPHICS,
            vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::HOST,
        );
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        // SAFETY: no submission is pending (submit_once waits); null handles are ignored.
        unsafe {
            self.shared.device.destroy_framebuffer(self.framebuffer, None);
            self.shared.device.destroy_render_pass(self.pass, None);
        }
    }
}

/// What a graphics pipeline is made of; [`Default`] is a triangle list, no culling, no
/// depth or stencil test, blending off, no vertex input.
#[derive(Clone, Copy)]
pub struct GraphicsDesc<'a> {
    pub vertex: &'a [u8],
    pub fragment: Option<&'a [u8]>,
    pub bindings: &'a [Binding],
    /// Push constants visible to both stages.
    pub push_constant_bytes: u32,
    pub vertex_bindings: &'a [vk::VertexInputBindingDescription],
    pub vertex_attributes: &'a [vk::VertexInputAttributeDescription],
    pub topology: vk::PrimitiveTopology,
    pub cull_mode: vk::CullModeFlags,
    /// Depth test (and write) with this compare op.
    pub depth_compare: Option<vk::CompareOp>,
    /// The stencil test of both faces (the reference is dynamic state).
    pub stencil: Option<vk::StencilOpState>,
    /// The blend state of every colour attachment (None: blending off, every component written).
    pub blend: Option<vk::PipelineColorBlendAttachmentState>,
    pub rasterizer_discard: bool,
}

impl Default for GraphicsDesc<'_> {
    fn default() -> Self {
        GraphicsDesc {
            vertex: &[],
            fragment: None,
            bindings: &[],
            push_constant_bytes: 0,
            vertex_bindings: &[],
            vertex_attributes: &[],
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            cull_mode: vk::CullModeFlags::NONE,
            depth_compare: None,
            stencil: None,
            blend: None,
            rasterizer_discard: false,
        }
    }
}

/// A graphics pipeline for a [`Target`]'s render pass, with dynamic viewport, scissor,
/// blend constants and stencil reference. Its layout, descriptor sets and descriptor writes
/// are those of [`ComputePipeline`] (it derefs to one), visible to both stages.
pub struct GraphicsPipeline {
    inner: ComputePipeline,
}

impl std::ops::Deref for GraphicsPipeline {
    type Target = ComputePipeline;
    fn deref(&self) -> &ComputePipeline {
        &self.inner
    }
}

impl GraphicsPipeline {
    pub fn new(ctx: &Context, target: &Target, d: &GraphicsDesc) -> Result<Self> {
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        let colors = target.color.len();
        let inner = ComputePipeline::with_stages(
            ctx,
            d.bindings,
            d.push_constant_bytes,
            stages,
            vk::PipelineBindPoint::GRAPHICS,
            |device, layout| create(device, layout, target.pass, colors, d),
        )?;
        Ok(GraphicsPipeline { inner })
    }

    /// Binds the pipeline, its descriptor sets, `push_constants` and `vertex_buffers`
    /// (bindings 0, 1, ... at offset 0).
    pub fn bind(&self, ctx: &Context, cmd: vk::CommandBuffer, push_constants: &[u8], vertex_buffers: &[&Buffer]) {
        self.inner.bind(cmd, push_constants, &[]);
        if !vertex_buffers.is_empty() {
            let handles: Vec<_> = vertex_buffers.iter().map(|b| b.handle()).collect();
            let offsets = vec![0; handles.len()];
            // SAFETY: cmd is recording; the buffers belong to this device.
            unsafe { ctx.device().cmd_bind_vertex_buffers(cmd, 0, &handles, &offsets) };
        }
    }

    /// [`Self::bind`], then a non-indexed draw.
    pub fn draw(
        &self,
        ctx: &Context,
        cmd: vk::CommandBuffer,
        push_constants: &[u8],
        vertex_buffers: &[&Buffer],
        vertices: u32,
        instances: u32,
    ) {
        self.bind(ctx, cmd, push_constants, vertex_buffers);
        // SAFETY: cmd is recording inside a render pass compatible with the pipeline.
        unsafe { ctx.device().cmd_draw(cmd, vertices, instances, 0, 0) };
    }
}

fn create(
    device: &ash::Device,
    layout: vk::PipelineLayout,
    pass: vk::RenderPass,
    colors: usize,
    d: &GraphicsDesc,
) -> Result<vk::Pipeline> {
    let vs = read_spirv(d.vertex)?;
    let fs = d.fragment.map(read_spirv).transpose()?;
    // SAFETY (this function): valid device, layout and pass; the modules are destroyed
    // before returning, every create info outlives its call.
    let module = |code: &[u32]| unsafe {
        device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(code), None).vk("vkCreateShaderModule")
    };
    let vsm = module(&vs)?;
    let fsm = match fs.as_deref().map(module).transpose() {
        Ok(m) => m,
        Err(e) => {
            unsafe { device.destroy_shader_module(vsm, None) };
            return Err(e);
        }
    };
    let mut stages = vec![vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::VERTEX)
        .module(vsm)
        .name(c"main")];
    if let Some(m) = fsm {
        stages.push(
            vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::FRAGMENT).module(m).name(c"main"),
        );
    }
    let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
        .vertex_binding_descriptions(d.vertex_bindings)
        .vertex_attribute_descriptions(d.vertex_attributes);
    let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(d.topology);
    let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(d.cull_mode)
        .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
        .rasterizer_discard_enable(d.rasterizer_discard)
        .line_width(1.0);
    let multisample =
        vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(vk::SampleCountFlags::TYPE_1);
    let stencil = d.stencil.unwrap_or_default();
    let depth = vk::PipelineDepthStencilStateCreateInfo::default()
        .depth_test_enable(d.depth_compare.is_some())
        .depth_write_enable(d.depth_compare.is_some())
        .depth_compare_op(d.depth_compare.unwrap_or(vk::CompareOp::ALWAYS))
        .stencil_test_enable(d.stencil.is_some())
        .front(stencil)
        .back(stencil)
        .max_depth_bounds(1.0);
    let blend = d
        .blend
        .unwrap_or(vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA));
    let blends = vec![blend; colors];
    let blending = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blends);
    let dynamic = [
        vk::DynamicState::VIEWPORT,
        vk::DynamicState::SCISSOR,
        vk::DynamicState::BLEND_CONSTANTS,
        vk::DynamicState::STENCIL_REFERENCE,
    ];
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic);
    let info = vk::GraphicsPipelineCreateInfo::default()
        .stages(&stages)
        .vertex_input_state(&vertex_input)
        .input_assembly_state(&assembly)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .depth_stencil_state(&depth)
        .color_blend_state(&blending)
        .dynamic_state(&dynamic)
        .layout(layout)
        .render_pass(pass)
        .subpass(0);
    let created = unsafe { device.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) };
    unsafe {
        device.destroy_shader_module(vsm, None);
        if let Some(m) = fsm {
            device.destroy_shader_module(m, None);
        }
    }
    Ok(created.map_err(|(_, result)| result).vk("vkCreateGraphicsPipelines")?[0])
}
