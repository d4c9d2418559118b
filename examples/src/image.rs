//! Storage images with one view, in device memory, for compute shaders that use
//! imageLoad/imageStore, plus the transfers the examples need around them.

use crate::buffer::Buffer;
use crate::context::{Context, Shared};
use crate::error::{Error, Result, VkResultExt};
use ash::vk;
use std::rc::Rc;

pub struct StorageImage {
    shared: Rc<Shared>,
    pub image: vk::Image,
    pub view: vk::ImageView,
    memory: vk::DeviceMemory,
    pub extent: vk::Extent3D,
}

impl StorageImage {
    /// A single-level, single-layer image of `ty` usable as a storage image and as a
    /// transfer source and destination, with a view of the matching type.
    pub fn new(ctx: &Context, ty: vk::ImageType, format: vk::Format, extent: vk::Extent3D) -> Result<Self> {
        let shared = ctx.shared.clone();
        let device = &shared.device;
        let info = vk::ImageCreateInfo::default()
            .image_type(ty)
            .format(format)
            .extent(extent)
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let mut img = StorageImage {
            shared: shared.clone(),
            image: vk::Image::null(),
            view: vk::ImageView::null(),
            memory: vk::DeviceMemory::null(),
            extent,
        };
        // SAFETY (this block): valid device; Drop destroys whatever was created.
        unsafe {
            img.image = device.create_image(&info, None).vk("vkCreateImage")?;
            let req = device.get_image_memory_requirements(img.image);
            let type_index = (0..shared.memory_properties.memory_type_count)
                .find(|i| req.memory_type_bits & (1 << i) != 0)
                .ok_or_else(|| Error::msg("no memory type for an image"))?;
            let alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(type_index);
            img.memory = device.allocate_memory(&alloc, None).vk("vkAllocateMemory")?;
            device.bind_image_memory(img.image, img.memory, 0).vk("vkBindImageMemory")?;
            let view_type = match ty {
                vk::ImageType::TYPE_1D => vk::ImageViewType::TYPE_1D,
                vk::ImageType::TYPE_2D => vk::ImageViewType::TYPE_2D,
                _ => vk::ImageViewType::TYPE_3D,
            };
            let view_info = vk::ImageViewCreateInfo::default()
                .image(img.image)
                .view_type(view_type)
                .format(format)
                .subresource_range(color_range());
            img.view = device.create_image_view(&view_info, None).vk("vkCreateImageView")?;
        }
        Ok(img)
    }

    /// UNDEFINED -> GENERAL, then a clear to `color` (raw 32-bit words).
    pub fn record_clear(&self, cmd: vk::CommandBuffer, color: [u32; 4]) {
        let device = &self.shared.device;
        let barrier = vk::ImageMemoryBarrier::default()
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::GENERAL)
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .image(self.image)
            .subresource_range(color_range());
        // SAFETY: cmd is recording; the image belongs to this device.
        unsafe {
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[barrier],
            );
            device.cmd_clear_color_image(
                cmd,
                self.image,
                vk::ImageLayout::GENERAL,
                &vk::ClearColorValue { uint32: color },
                &[color_range()],
            );
        }
    }

    /// The whole image, tightly packed in a buffer.
    fn whole(&self) -> vk::BufferImageCopy {
        vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_extent(self.extent)
    }

    /// Copies the whole image into `buffer` (tightly packed).
    pub fn record_copy_to_buffer(&self, cmd: vk::CommandBuffer, buffer: &Buffer) {
        let region = self.whole();
        // SAFETY: cmd is recording; image and buffer belong to this device.
        unsafe {
            self.shared.device.cmd_copy_image_to_buffer(
                cmd,
                self.image,
                vk::ImageLayout::GENERAL,
                buffer.handle(),
                &[region],
            )
        };
    }

    /// Copies `buffer` (tightly packed) into the whole image.
    pub fn record_copy_from_buffer(&self, cmd: vk::CommandBuffer, buffer: &Buffer) {
        let region = self.whole();
        // SAFETY: cmd is recording; image and buffer belong to this device.
        unsafe {
            self.shared.device.cmd_copy_buffer_to_image(
                cmd,
                buffer.handle(),
                self.image,
                vk::ImageLayout::GENERAL,
                &[region],
            )
        };
    }
}

fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}

impl Drop for StorageImage {
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
