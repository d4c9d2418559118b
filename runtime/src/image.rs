//! `VkImage` and `VkImageView`. Every image is stored linearly: for each mip level, for each
//! array layer, depth slices of rows of texels. Storage-image descriptors hand the texture
//! path the base address and pitches of one view, so shaders never see this layout directly;
//! copies and clears use [`Image::subresource`].

use crate::memory::Memory;
use crate::{vk, VkResult};
use parking_lot::RwLock;
use std::sync::Arc;
use vortex_model::abi::format::{self, Format};
use vortex_model::abi::kernel::{desc, ImageDesc};
use vortex_model::abi::{gfx, wr_u32};

pub const IMAGE_ALIGNMENT: u64 = 64;

/// The aspects of a format: depth and/or stencil for the depth/stencil formats, colour for
/// every other.
pub fn aspects(f: vk::Format) -> vk::ImageAspectFlags {
    use vk::Format as F;
    match f {
        F::D16_UNORM | F::X8_D24_UNORM_PACK32 | F::D32_SFLOAT => vk::ImageAspectFlags::DEPTH,
        F::S8_UINT => vk::ImageAspectFlags::STENCIL,
        F::D16_UNORM_S8_UINT | F::D24_UNORM_S8_UINT | F::D32_SFLOAT_S8_UINT => {
            vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL
        }
        F::UNDEFINED => vk::ImageAspectFlags::empty(),
        _ => vk::ImageAspectFlags::COLOR,
    }
}

/// Whether the output merger can render to images of `f`: every format the device holds.
pub fn attachment_format(f: vk::Format) -> bool {
    format::lookup(f.as_raw() as u32).is_some()
}

/// A plane of an image's memory: the colour texels, or the depth or the stencil values of a
/// depth/stencil format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plane {
    Color,
    Depth,
    Stencil,
}

/// The planes holding `aspects` of images of format `f`.
pub fn planes(f: vk::Format, aspects: vk::ImageAspectFlags) -> Vec<Plane> {
    let have = self::aspects(f) & aspects;
    [
        (vk::ImageAspectFlags::COLOR, Plane::Color),
        (vk::ImageAspectFlags::DEPTH, Plane::Depth),
        (vk::ImageAspectFlags::STENCIL, Plane::Stencil),
    ]
    .into_iter()
    .filter(|(a, _)| have.contains(*a))
    .map(|(_, p)| p)
    .collect()
}

/// The texel a clear writes into `plane` of `view`'s image; `value` is `VkClearValue`'s
/// words (colour; or depth as f32 bits, then stencil).
pub fn clear_texel(view: &ImageView, plane: Plane, value: [u32; 4]) -> VkResult<Vec<u8>> {
    match plane {
        Plane::Color => {
            let mut texel = vec![0u8; view.format.texel_bytes() as usize];
            format::encode_texel(view.format, value, &mut texel);
            Ok(texel)
        }
        Plane::Depth | Plane::Stencil => {
            tracing::error!("{plane:?} planes are not supported");
            Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED)
        }
    }
}

/// Where one (level, layer) lives, relative to the image's first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subresource {
    pub offset: u64,
    pub extent: [u32; 3],
    pub row_pitch: u64,
    pub slice_pitch: u64,
    pub layer_pitch: u64,
}

pub struct Image {
    pub image_type: vk::ImageType,
    pub format: &'static Format,
    pub vk_format: vk::Format,
    pub extent: [u32; 3],
    pub mip_levels: u32,
    pub array_layers: u32,
    pub usage: vk::ImageUsageFlags,
    pub size: u64,
    binding: RwLock<Option<(Arc<Memory>, u64)>>,
}

impl Image {
    pub fn new(
        image_type: vk::ImageType,
        vk_format: vk::Format,
        extent: [u32; 3],
        mip_levels: u32,
        array_layers: u32,
        usage: vk::ImageUsageFlags,
    ) -> VkResult<Image> {
        let format = format::lookup(vk_format.as_raw() as u32).ok_or_else(|| {
            tracing::warn!("vkCreateImage: format {vk_format:?} is not supported for images");
            vk::Result::ERROR_FORMAT_NOT_SUPPORTED
        })?;
        let mut img = Image {
            image_type,
            format,
            vk_format,
            extent: extent.map(|e| e.max(1)),
            mip_levels: mip_levels.max(1),
            array_layers: array_layers.max(1),
            usage,
            size: 0,
            binding: RwLock::new(None),
        };
        let last = img.subresource(img.mip_levels - 1, img.array_layers - 1);
        img.size = (last.offset + last.layer_pitch).max(1);
        Ok(img)
    }

    pub fn level_extent(&self, level: u32) -> [u32; 3] {
        self.extent.map(|e| (e >> level).max(1))
    }

    pub fn subresource(&self, level: u32, layer: u32) -> Subresource {
        let tb = self.format.texel_bytes() as u64;
        let mut offset = 0u64;
        for l in 0..level {
            let e = self.level_extent(l);
            offset += tb * e[0] as u64 * e[1] as u64 * e[2] as u64 * self.array_layers as u64;
        }
        let e = self.level_extent(level);
        let row_pitch = tb * e[0] as u64;
        let slice_pitch = row_pitch * e[1] as u64;
        let layer_pitch = slice_pitch * e[2] as u64;
        Subresource { offset: offset + layer as u64 * layer_pitch, extent: e, row_pitch, slice_pitch, layer_pitch }
    }

    /// Where (`level`, `layer`) of `plane` lives, relative to the image's first byte.
    pub fn plane_subresource(&self, _plane: Plane, level: u32, layer: u32) -> Subresource {
        self.subresource(level, layer)
    }

    pub fn bind(&self, memory: Arc<Memory>, offset: u64) -> VkResult<()> {
        if offset.checked_add(self.size).is_none_or(|end| end > memory.size) {
            tracing::error!("vkBindImageMemory: image of {} bytes at offset {offset} overruns the memory", self.size);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        *self.binding.write() = Some((memory, offset));
        Ok(())
    }

    /// Device address of the first byte, if memory is bound.
    pub fn bound_address(&self) -> Option<u64> {
        self.binding.read().as_ref().map(|(m, o)| m.address(*o))
    }

    /// Device address of the first byte, checked to be bound.
    pub fn address(&self) -> VkResult<u64> {
        match self.binding.read().as_ref() {
            Some((m, o)) => Ok(m.address(*o)),
            None => {
                tracing::error!("image used before memory was bound");
                Err(vk::Result::ERROR_UNKNOWN)
            }
        }
    }
}

/// The levels and layers a view covers (`VkImageSubresourceRange`, `REMAINING_*` allowed).
#[derive(Clone, Copy, Debug)]
pub struct ViewRange {
    pub base_level: u32,
    pub level_count: u32,
    pub base_layer: u32,
    pub layer_count: u32,
}

pub struct ImageView {
    pub image: Arc<Image>,
    pub view_type: vk::ImageViewType,
    pub format: &'static Format,
    pub base_level: u32,
    pub level_count: u32,
    pub base_layer: u32,
    pub layer_count: u32,
}

impl ImageView {
    /// A view of `range` of `image` in `format`, which must have the image's texel size;
    /// `REMAINING_*` counts resolve against the image.
    pub fn new(
        image: Arc<Image>,
        view_type: vk::ImageViewType,
        format: vk::Format,
        range: ViewRange,
    ) -> VkResult<Self> {
        let f = format::lookup(format.as_raw() as u32).ok_or_else(|| {
            tracing::warn!("vkCreateImageView: format {format:?} is not supported");
            vk::Result::ERROR_FORMAT_NOT_SUPPORTED
        })?;
        if f.texel_bytes() != image.format.texel_bytes() {
            tracing::error!("vkCreateImageView: view format {format:?} has a different texel size than the image");
            return Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED);
        }
        let rest = |count: u32, remaining: u32, base: u32, total: u32| {
            if count == remaining {
                total.saturating_sub(base)
            } else {
                count
            }
        };
        let level_count = rest(range.level_count, vk::REMAINING_MIP_LEVELS, range.base_level, image.mip_levels);
        let layer_count = rest(range.layer_count, vk::REMAINING_ARRAY_LAYERS, range.base_layer, image.array_layers);
        let fits = |base: u32, n: u32, total: u32| n > 0 && base.checked_add(n).is_some_and(|end| end <= total);
        if !fits(range.base_level, level_count, image.mip_levels)
            || !fits(range.base_layer, layer_count, image.array_layers)
        {
            tracing::error!("vkCreateImageView: range {range:?} is outside the image");
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        Ok(ImageView {
            image,
            view_type,
            format: f,
            base_level: range.base_level,
            level_count,
            base_layer: range.base_layer,
            layer_count,
        })
    }

    /// Extent of the view's base level.
    pub fn extent(&self) -> [u32; 3] {
        self.image.level_extent(self.base_level)
    }

    /// The sampled-image (and input-attachment) record: the storage-image record of the
    /// view plus its levels and the image's layers, so the texture unit finds every level
    /// (`abi::gfx::image`).
    pub fn sampled_record(&self) -> VkResult<[u8; desc::BYTES]> {
        let mut rec = [0u8; desc::BYTES];
        self.descriptor()?.write(&mut rec);
        wr_u32(&mut rec, gfx::image::LEVELS, self.level_count);
        wr_u32(&mut rec, gfx::image::IMAGE_LAYERS, self.image.array_layers);
        wr_u32(&mut rec, gfx::image::BASE_LAYER, self.base_layer);
        Ok(rec)
    }

    /// The storage-image descriptor for this view.
    pub fn descriptor(&self) -> VkResult<ImageDesc> {
        let sub = self.image.subresource(self.base_level, self.base_layer);
        let e = sub.extent;
        Ok(ImageDesc {
            addr: self.image.address()? + sub.offset,
            format: self.format.vk,
            view_type: self.view_type.as_raw() as u32,
            width: e[0],
            height: e[1],
            depth: e[2],
            layers: self.layer_count,
            row_pitch: sub.row_pitch as u32,
            slice_pitch: sub.slice_pitch as u32,
            layer_pitch: sub.layer_pitch as u32,
            texel_bytes: self.format.texel_bytes(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_of_mips_and_layers() {
        let img =
            Image::new(vk::ImageType::TYPE_2D, vk::Format::R32_UINT, [8, 4, 1], 2, 3, vk::ImageUsageFlags::STORAGE)
                .unwrap();
        let l0 = img.subresource(0, 1);
        assert_eq!(l0.row_pitch, 32);
        assert_eq!(l0.layer_pitch, 128);
        assert_eq!(l0.offset, 128);
        let l1 = img.subresource(1, 0);
        assert_eq!(l1.offset, 3 * 128);
        assert_eq!(l1.extent, [4, 2, 1]);
        assert_eq!(img.size, 3 * 128 + 3 * 32);
        assert!(Image::new(
            vk::ImageType::TYPE_2D,
            vk::Format::D32_SFLOAT,
            [1, 1, 1],
            1,
            1,
            vk::ImageUsageFlags::empty()
        )
        .is_err());
    }

    #[test]
    fn vk_and_abi_format_numbers_agree() {
        for f in format::ALL {
            // Every abi format value is the VkFormat of the same name.
            let name = format!("{:?}", vk::Format::from_raw(f.vk as i32));
            assert_eq!(name, f.name, "abi format {} has VkFormat value {}", f.name, f.vk);
        }
        assert_eq!(format::view_type::TYPE_3D, vk::ImageViewType::TYPE_3D.as_raw() as u32);
        assert_eq!(format::view_type::TYPE_2D_ARRAY, vk::ImageViewType::TYPE_2D_ARRAY.as_raw() as u32);
    }
}
