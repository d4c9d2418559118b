//! `VkImage` and `VkImageView`. Every image is stored linearly: for each mip level, for each
//! array layer, depth slices of rows of texels. Storage-image descriptors hand the texture
//! path the base address and pitches of one view, so shaders never see this layout directly;
//! copies and clears use [`Image::subresource`].

use crate::memory::Memory;
use crate::{vk, VkResult};
use parking_lot::RwLock;
use std::sync::Arc;
use vortex_model::abi::format::{self, Format};
use vortex_model::abi::kernel::ImageDesc;

pub const IMAGE_ALIGNMENT: u64 = 64;

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

    pub fn bind(&self, memory: Arc<Memory>, offset: u64) -> VkResult<()> {
        if offset.checked_add(self.size).is_none_or(|end| end > memory.size) {
            tracing::error!("vkBindImageMemory: image of {} bytes at offset {offset} overruns the memory", self.size);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        *self.binding.write() = Some((memory, offset));
        Ok(())
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

pub struct ImageView {
    pub image: Arc<Image>,
    pub view_type: vk::ImageViewType,
    pub format: &'static Format,
    pub base_level: u32,
    pub base_layer: u32,
    pub layer_count: u32,
}

impl ImageView {
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
