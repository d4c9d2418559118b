//! Vulkan objects a check creates by hand (render passes, pipelines, images with their memory,
//! ...), destroyed together when the check ends, newest first.

use crate::context::Context;
use crate::error::{Error, Result, VkResultExt};
use ash::vk;

/// One object [`Owned`] destroys.
#[derive(Clone, Copy, Debug)]
pub enum Object {
    Pipeline(vk::Pipeline),
    PipelineLayout(vk::PipelineLayout),
    DescriptorPool(vk::DescriptorPool),
    DescriptorSetLayout(vk::DescriptorSetLayout),
    Framebuffer(vk::Framebuffer),
    RenderPass(vk::RenderPass),
    QueryPool(vk::QueryPool),
    Sampler(vk::Sampler),
    ShaderModule(vk::ShaderModule),
    ImageView(vk::ImageView),
    Image(vk::Image),
    Memory(vk::DeviceMemory),
    CommandPool(vk::CommandPool),
}

macro_rules! object_from {
    ($($t:ident),*) => {$(
        impl From<vk::$t> for Object {
            fn from(h: vk::$t) -> Object {
                Object::$t(h)
            }
        }
    )*};
}
object_from!(
    Pipeline,
    PipelineLayout,
    DescriptorPool,
    DescriptorSetLayout,
    Framebuffer,
    RenderPass,
    QueryPool,
    Sampler,
    ShaderModule,
    ImageView,
    Image,
    CommandPool
);

impl From<vk::DeviceMemory> for Object {
    fn from(h: vk::DeviceMemory) -> Object {
        Object::Memory(h)
    }
}

/// The objects of one check, destroyed on drop in the reverse order of their creation (a
/// view before its image, an image before its memory). Null handles are ignored.
pub struct Owned<'a> {
    d: &'a ash::Device,
    objects: Vec<Object>,
}

impl<'a> Owned<'a> {
    pub fn new(d: &'a ash::Device) -> Self {
        Owned { d, objects: Vec::new() }
    }

    pub fn device(&self) -> &'a ash::Device {
        self.d
    }

    /// Takes `h` to destroy at the end, and gives it back.
    pub fn keep<H: Copy + Into<Object>>(&mut self, h: H) -> H {
        self.objects.push(h.into());
        h
    }

    /// An image as `info` describes it, bound to memory of its own, and a view of it of
    /// `view_type` over `range` (the image's format).
    pub fn image(
        &mut self,
        ctx: &Context,
        info: &vk::ImageCreateInfo,
        view_type: vk::ImageViewType,
        range: vk::ImageSubresourceRange,
    ) -> Result<(vk::Image, vk::ImageView)> {
        let d = self.d;
        // SAFETY (this block): a valid device and create infos; each object is kept (so
        // destroyed at the end) as soon as it exists.
        unsafe {
            let image = d.create_image(info, None).vk("vkCreateImage")?;
            let req = d.get_image_memory_requirements(image);
            let memory = match ctx.memory_type(req.memory_type_bits) {
                Some(ty) => {
                    let alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty);
                    d.allocate_memory(&alloc, None).vk("vkAllocateMemory")
                }
                None => Err(Error::msg("no memory type for the image")),
            };
            let memory = memory.inspect_err(|_| d.destroy_image(image, None))?;
            // Kept before the image, so freed after it.
            self.keep(memory);
            self.keep(image);
            d.bind_image_memory(image, memory, 0).vk("vkBindImageMemory")?;
            let view = vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(view_type)
                .format(info.format)
                .subresource_range(range);
            let view = self.keep(d.create_image_view(&view, None).vk("vkCreateImageView")?);
            Ok((image, view))
        }
    }

    /// A shader module of GLSL compiled at run time ([`crate::glsl::compile`]).
    pub fn module(&mut self, stage: &str, source: &str) -> Result<vk::ShaderModule> {
        let words = crate::glsl::compile(stage, source).map_err(Error::msg)?;
        let info = vk::ShaderModuleCreateInfo::default().code(&words);
        // SAFETY: valid SPIR-V words; kept, so destroyed at the end.
        Ok(self.keep(unsafe { self.d.create_shader_module(&info, None) }.vk("vkCreateShaderModule")?))
    }

    /// A set layout of one descriptor of `ty` at binding 0, visible to `stages`.
    pub fn single_set_layout(
        &mut self,
        ty: vk::DescriptorType,
        stages: vk::ShaderStageFlags,
    ) -> Result<vk::DescriptorSetLayout> {
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(ty)
            .descriptor_count(1)
            .stage_flags(stages)];
        let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding);
        // SAFETY: a valid create info; kept, so destroyed at the end.
        Ok(self.keep(unsafe { self.d.create_descriptor_set_layout(&info, None) }.vk("vkCreateDescriptorSetLayout")?))
    }

    /// A set of a [`Owned::single_set_layout`] layout, from a pool of its own, its one
    /// descriptor (of `ty`) written with `what`.
    pub fn single_set(
        &mut self,
        layout: vk::DescriptorSetLayout,
        ty: vk::DescriptorType,
        what: Single,
    ) -> Result<vk::DescriptorSet> {
        let d = self.d;
        let sizes = [vk::DescriptorPoolSize { ty, descriptor_count: 1 }];
        let pi = vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes);
        // SAFETY: a valid create info; kept, so destroyed at the end.
        let pool = self.keep(unsafe { d.create_descriptor_pool(&pi, None) }.vk("vkCreateDescriptorPool")?);
        let layouts = [layout];
        let ai = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts);
        // SAFETY: a pool with room for the set.
        let set = unsafe { d.allocate_descriptor_sets(&ai) }.vk("vkAllocateDescriptorSets")?[0];
        let w = vk::WriteDescriptorSet::default().dst_set(set).dst_binding(0).descriptor_type(ty).descriptor_count(1);
        let (buffers, images, accels);
        let mut accel_info;
        let w = match what {
            Single::Buffer(b) => {
                buffers = [b];
                w.buffer_info(&buffers)
            }
            Single::Image(i) => {
                images = [i];
                w.image_info(&images)
            }
            Single::Accel(a) => {
                accels = [a];
                accel_info = vk::WriteDescriptorSetAccelerationStructureKHR::default().acceleration_structures(&accels);
                w.push_next(&mut accel_info)
            }
        };
        // SAFETY: a write of the set's one descriptor, with a live resource.
        unsafe { d.update_descriptor_sets(&[w], &[]) };
        Ok(set)
    }

    /// A pipeline layout over `set_layout` (if not null) and one push-constant range of
    /// `push_bytes` (if any) visible to `push_stages`.
    pub fn pipeline_layout(
        &mut self,
        set_layout: vk::DescriptorSetLayout,
        push_stages: vk::ShaderStageFlags,
        push_bytes: u32,
    ) -> Result<vk::PipelineLayout> {
        let sets = [set_layout];
        let push = [vk::PushConstantRange { stage_flags: push_stages, offset: 0, size: push_bytes }];
        let mut li = vk::PipelineLayoutCreateInfo::default();
        if set_layout != vk::DescriptorSetLayout::null() {
            li = li.set_layouts(&sets);
        }
        if push_bytes > 0 {
            li = li.push_constant_ranges(&push);
        }
        // SAFETY: a valid create info; kept, so destroyed at the end.
        Ok(self.keep(unsafe { self.d.create_pipeline_layout(&li, None) }.vk("vkCreatePipelineLayout")?))
    }

    /// A vertex + fragment pipeline as `p` describes it.
    pub fn pass_pipeline(&mut self, p: &PassPipeline) -> Result<vk::Pipeline> {
        let stages = [
            vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::VERTEX).module(p.vs).name(c"main"),
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::FRAGMENT)
                .module(p.fs)
                .name(c"main"),
        ];
        let vi = vk::PipelineVertexInputStateCreateInfo::default()
            .vertex_binding_descriptions(p.vertex_bindings)
            .vertex_attribute_descriptions(p.vertex_attributes);
        let ia = vk::PipelineInputAssemblyStateCreateInfo::default().topology(p.topology);
        let [w, h] = p.extent;
        let viewports =
            [vk::Viewport { x: 0.0, y: 0.0, width: w as f32, height: h as f32, min_depth: 0.0, max_depth: 1.0 }];
        let scissors = [vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: w, height: h } }];
        let vp = vk::PipelineViewportStateCreateInfo::default().viewports(&viewports).scissors(&scissors);
        let rs = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(vk::PolygonMode::FILL)
            .cull_mode(vk::CullModeFlags::NONE)
            .line_width(p.line_width);
        let ms = vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(p.samples);
        let ds = vk::PipelineDepthStencilStateCreateInfo::default()
            .depth_test_enable(p.depth)
            .depth_write_enable(p.depth)
            .depth_compare_op(vk::CompareOp::LESS);
        let blend = [vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA)];
        let cb = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend);
        let mut rendering =
            vk::PipelineRenderingCreateInfo::default().view_mask(p.view_mask).color_attachment_formats(p.color_formats);
        let mut info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vi)
            .input_assembly_state(&ia)
            .viewport_state(&vp)
            .rasterization_state(&rs)
            .multisample_state(&ms)
            .depth_stencil_state(&ds)
            .color_blend_state(&cb)
            .layout(p.layout)
            .render_pass(p.pass)
            .subpass(p.subpass);
        if p.pass == vk::RenderPass::null() {
            info = info.push_next(&mut rendering);
        }
        // SAFETY: valid create infos; kept, so destroyed at the end.
        let made = unsafe { self.d.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) };
        Ok(self.keep(made.map_err(|(_, r)| Error::msg(format!("vkCreateGraphicsPipelines: {r:?}")))?[0]))
    }
}

/// What the one descriptor of an [`Owned::single_set`] holds.
#[derive(Clone, Copy)]
pub enum Single {
    Buffer(vk::DescriptorBufferInfo),
    Image(vk::DescriptorImageInfo),
    Accel(vk::AccelerationStructureKHR),
}

/// A vertex + fragment pipeline drawing over a whole `extent` (static viewport and scissor),
/// no culling, blending off, one colour attachment; [`Default`] is a 1-sample triangle list
/// without vertex input or depth test. With a null `pass` it is for dynamic rendering of
/// `color_formats` with `view_mask`.
#[derive(Clone, Copy)]
pub struct PassPipeline<'a> {
    pub vs: vk::ShaderModule,
    pub fs: vk::ShaderModule,
    pub layout: vk::PipelineLayout,
    pub pass: vk::RenderPass,
    pub subpass: u32,
    pub extent: [u32; 2],
    pub samples: vk::SampleCountFlags,
    /// Depth test (LESS) and write.
    pub depth: bool,
    pub line_width: f32,
    pub topology: vk::PrimitiveTopology,
    pub vertex_bindings: &'a [vk::VertexInputBindingDescription],
    pub vertex_attributes: &'a [vk::VertexInputAttributeDescription],
    pub view_mask: u32,
    pub color_formats: &'a [vk::Format],
}

impl Default for PassPipeline<'_> {
    fn default() -> Self {
        PassPipeline {
            vs: vk::ShaderModule::null(),
            fs: vk::ShaderModule::null(),
            layout: vk::PipelineLayout::null(),
            pass: vk::RenderPass::null(),
            subpass: 0,
            extent: [1, 1],
            samples: vk::SampleCountFlags::TYPE_1,
            depth: false,
            line_width: 1.0,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            vertex_bindings: &[],
            vertex_attributes: &[],
            view_mask: 0,
            color_formats: &[],
        }
    }
}

impl Drop for Owned<'_> {
    fn drop(&mut self) {
        let d = self.d;
        // SAFETY: every object was created on this device by the check, which has waited for
        // its submissions; each is destroyed once, newest first; null handles are ignored.
        unsafe {
            for o in self.objects.drain(..).rev() {
                match o {
                    Object::Pipeline(h) => d.destroy_pipeline(h, None),
                    Object::PipelineLayout(h) => d.destroy_pipeline_layout(h, None),
                    Object::DescriptorPool(h) => d.destroy_descriptor_pool(h, None),
                    Object::DescriptorSetLayout(h) => d.destroy_descriptor_set_layout(h, None),
                    Object::Framebuffer(h) => d.destroy_framebuffer(h, None),
                    Object::RenderPass(h) => d.destroy_render_pass(h, None),
                    Object::QueryPool(h) => d.destroy_query_pool(h, None),
                    Object::Sampler(h) => d.destroy_sampler(h, None),
                    Object::ShaderModule(h) => d.destroy_shader_module(h, None),
                    Object::ImageView(h) => d.destroy_image_view(h, None),
                    Object::Image(h) => d.destroy_image(h, None),
                    Object::Memory(h) => d.free_memory(h, None),
                    Object::CommandPool(h) => d.destroy_command_pool(h, None),
                }
            }
        }
    }
}
