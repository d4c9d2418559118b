//! Storage images with one view, in device memory, for compute shaders that use
//! imageLoad/imageStore, plus the transfers the examples need around them.

use crate::buffer::Buffer;
use crate::context::{Context, Shared};
use crate::error::{Error, Result, VkResultExt};
use crate::pipeline::memory_barrier;
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
            img.memory = bind_memory(&shared, img.image)?;
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

/// What to create with [`Image::new`].
#[derive(Clone, Copy, Debug)]
pub struct ImageSpec {
    pub view_type: vk::ImageViewType,
    pub format: vk::Format,
    /// Width, height and depth of level 0 (depth 1 unless 3D).
    pub extent: [u32; 3],
    /// Array layers (6 per cube).
    pub layers: u32,
    pub mip_levels: u32,
    pub usage: vk::ImageUsageFlags,
}

impl ImageSpec {
    /// Texels of `level` (all layers).
    pub fn level_texels(&self, level: u32) -> u64 {
        self.level_extent(level).iter().map(|&e| e as u64).product::<u64>() * self.layers as u64
    }

    pub fn level_extent(&self, level: u32) -> [u32; 3] {
        self.extent.map(|e| (e >> level).max(1))
    }

    /// Bytes of every level and layer, tightly packed (level by level, layers within a level).
    pub fn packed_bytes(&self) -> Option<u64> {
        let tb = texel_bytes(self.format)? as u64;
        Some((0..self.mip_levels).map(|l| self.level_texels(l) * tb).sum())
    }
}

/// An image with a view of the whole of it, in `GENERAL` layout once
/// [`Image::record_upload`] or [`Image::record_to_general`] has run.
pub struct Image {
    shared: Rc<Shared>,
    pub image: vk::Image,
    pub view: vk::ImageView,
    memory: vk::DeviceMemory,
    pub spec: ImageSpec,
}

impl Image {
    pub fn new(ctx: &Context, spec: ImageSpec) -> Result<Self> {
        let shared = ctx.shared.clone();
        let device = &shared.device;
        let (ty, flags) = match spec.view_type {
            vk::ImageViewType::TYPE_1D | vk::ImageViewType::TYPE_1D_ARRAY => {
                (vk::ImageType::TYPE_1D, vk::ImageCreateFlags::empty())
            }
            vk::ImageViewType::TYPE_3D => (vk::ImageType::TYPE_3D, vk::ImageCreateFlags::empty()),
            vk::ImageViewType::CUBE | vk::ImageViewType::CUBE_ARRAY => {
                (vk::ImageType::TYPE_2D, vk::ImageCreateFlags::CUBE_COMPATIBLE)
            }
            _ => (vk::ImageType::TYPE_2D, vk::ImageCreateFlags::empty()),
        };
        let info = vk::ImageCreateInfo::default()
            .flags(flags)
            .image_type(ty)
            .format(spec.format)
            .extent(vk::Extent3D { width: spec.extent[0], height: spec.extent[1], depth: spec.extent[2] })
            .mip_levels(spec.mip_levels)
            .array_layers(spec.layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(spec.usage | vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let mut img = Image {
            shared: shared.clone(),
            image: vk::Image::null(),
            view: vk::ImageView::null(),
            memory: vk::DeviceMemory::null(),
            spec,
        };
        // SAFETY (this block): valid device; Drop destroys whatever was created.
        unsafe {
            img.image = device.create_image(&info, None).vk("vkCreateImage")?;
            img.memory = bind_memory(&shared, img.image)?;
            let view_info = vk::ImageViewCreateInfo::default()
                .image(img.image)
                .view_type(spec.view_type)
                .format(spec.format)
                .subresource_range(img.range());
            img.view = device.create_image_view(&view_info, None).vk("vkCreateImageView")?;
        }
        Ok(img)
    }

    fn range(&self) -> vk::ImageSubresourceRange {
        vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: 0,
            level_count: self.spec.mip_levels,
            base_array_layer: 0,
            layer_count: self.spec.layers,
        }
    }

    /// One region per level, tightly packed in a buffer as [`ImageSpec::packed_bytes`] says.
    fn regions(&self) -> Vec<vk::BufferImageCopy> {
        let tb = texel_bytes(self.spec.format).unwrap_or(4) as u64;
        let mut offset = 0u64;
        (0..self.spec.mip_levels)
            .map(|level| {
                let e = self.spec.level_extent(level);
                let r = vk::BufferImageCopy::default()
                    .buffer_offset(offset)
                    .image_subresource(vk::ImageSubresourceLayers {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        mip_level: level,
                        base_array_layer: 0,
                        layer_count: self.spec.layers,
                    })
                    .image_extent(vk::Extent3D { width: e[0], height: e[1], depth: e[2] });
                offset += self.spec.level_texels(level) * tb;
                r
            })
            .collect()
    }

    /// UNDEFINED -> GENERAL.
    pub fn record_to_general(&self, cmd: vk::CommandBuffer) {
        let barrier = vk::ImageMemoryBarrier::default()
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::GENERAL)
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE | vk::AccessFlags::SHADER_READ)
            .image(self.image)
            .subresource_range(self.range());
        // SAFETY: cmd is recording; the image belongs to this device.
        unsafe {
            self.shared.device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[barrier],
            )
        };
    }

    /// UNDEFINED -> GENERAL, then every level and layer from `buffer` (tightly packed),
    /// made visible to compute shaders.
    pub fn record_upload(&self, cmd: vk::CommandBuffer, buffer: &Buffer) {
        self.record_to_general(cmd);
        let device = &self.shared.device;
        // SAFETY: cmd is recording; image and buffer belong to this device.
        unsafe {
            device.cmd_copy_buffer_to_image(cmd, buffer.handle(), self.image, vk::ImageLayout::GENERAL, &self.regions())
        };
        memory_barrier(device, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::COMPUTE_SHADER);
    }

    /// Every level and layer into `buffer` (tightly packed).
    pub fn record_download(&self, cmd: vk::CommandBuffer, buffer: &Buffer) {
        let device = &self.shared.device;
        // SAFETY: cmd is recording; image and buffer belong to this device.
        unsafe {
            device.cmd_copy_image_to_buffer(cmd, self.image, vk::ImageLayout::GENERAL, buffer.handle(), &self.regions())
        };
        memory_barrier(device, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST);
    }
}

impl Drop for Image {
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

/// Bytes per texel of the uncompressed color formats the examples use.
pub fn texel_bytes(f: vk::Format) -> Option<u32> {
    use vk::Format as F;
    Some(match f {
        F::R8_UNORM | F::R8_SNORM | F::R8_UINT | F::R8_SINT => 1,
        F::R8G8_UNORM | F::R8G8_SNORM | F::R8G8_UINT | F::R8G8_SINT => 2,
        F::R16_UNORM | F::R16_SNORM | F::R16_UINT | F::R16_SINT | F::R16_SFLOAT => 2,
        F::R8G8B8A8_UNORM | F::R8G8B8A8_SNORM | F::R8G8B8A8_UINT | F::R8G8B8A8_SINT | F::B8G8R8A8_UNORM => 4,
        F::R16G16_UNORM | F::R16G16_SNORM | F::R16G16_UINT | F::R16G16_SINT | F::R16G16_SFLOAT => 4,
        F::R32_UINT | F::R32_SINT | F::R32_SFLOAT | F::A2B10G10R10_UNORM_PACK32 | F::A2B10G10R10_UINT_PACK32 => 4,
        F::B10G11R11_UFLOAT_PACK32 => 4,
        F::R16G16B16A16_UNORM | F::R16G16B16A16_SNORM | F::R16G16B16A16_UINT | F::R16G16B16A16_SINT => 8,
        F::R16G16B16A16_SFLOAT | F::R32G32_UINT | F::R32G32_SINT | F::R32G32_SFLOAT => 8,
        F::R64_UINT | F::R64_SINT => 8,
        F::R32G32B32A32_UINT | F::R32G32B32A32_SINT | F::R32G32B32A32_SFLOAT => 16,
        _ => return None,
    })
}

/// Allocates memory for `image` (any type it accepts) and binds it.
///
/// # Safety
/// `image` must be a live image of `shared`'s device with no memory bound; the caller frees
/// the returned memory after destroying the image.
unsafe fn bind_memory(shared: &Shared, image: vk::Image) -> Result<vk::DeviceMemory> {
    let device = &shared.device;
    // SAFETY: the caller's contract: a live image of this device.
    unsafe {
        let req = device.get_image_memory_requirements(image);
        let type_index = (0..shared.memory_properties.memory_type_count)
            .find(|i| req.memory_type_bits & (1 << i) != 0)
            .ok_or_else(|| Error::msg("no memory type for an image"))?;
        let alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(type_index);
        let memory = device.allocate_memory(&alloc, None).vk("vkAllocateMemory")?;
        if let Err(e) = device.bind_image_memory(image, memory, 0).vk("vkBindImageMemory") {
            device.free_memory(memory, None);
            return Err(e);
        }
        Ok(memory)
    }
}

/// Writes `rgba` (`w` x `h` pixels of 8-bit RGBA) as a PNG file.
pub fn write_png(path: &std::path::Path, w: u32, h: u32, rgba: &[u8]) -> std::result::Result<(), String> {
    let file = std::fs::File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(|e| format!("{}: {e}", path.display()))?;
    writer.write_image_data(rgba).map_err(|e| format!("{}: {e}", path.display()))
}
