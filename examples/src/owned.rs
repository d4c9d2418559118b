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
