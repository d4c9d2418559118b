//! `VkImage` and `VkImageView`. Every image is stored linearly: for each mip level, for each
//! array layer, depth slices of rows of texels. Storage-image descriptors hand the texture
//! path the base address and pitches of one view, so shaders never see this layout directly;
//! copies and clears use [`Image::subresource`].

use crate::memory::Memory;
use crate::{vk, VkResult};
use parking_lot::RwLock;
use std::sync::Arc;
use vortex_model::abi::format::{self, cap, Aspect, Format};
use vortex_model::abi::kernel::{desc, ImageDesc};
use vortex_model::abi::{gfx, wr_u32};

pub const IMAGE_ALIGNMENT: u64 = 64;

/// The aspects of images of a format.
pub fn aspects_of(f: &Format) -> vk::ImageAspectFlags {
    let mut a = vk::ImageAspectFlags::empty();
    if f.depth().is_some() {
        a |= vk::ImageAspectFlags::DEPTH;
    }
    if f.has_stencil() {
        a |= vk::ImageAspectFlags::STENCIL;
    }
    if a.is_empty() {
        vk::ImageAspectFlags::COLOR
    } else {
        a
    }
}

/// The aspects of a `VkFormat` (none for `UNDEFINED` and formats the device does not hold).
pub fn aspects(f: vk::Format) -> vk::ImageAspectFlags {
    format::find(f.as_raw() as u32).map_or(vk::ImageAspectFlags::empty(), aspects_of)
}

/// Whether the output merger can render to images of `f` (colour, depth or stencil).
pub fn attachment_format(f: vk::Format) -> bool {
    format::find(f.as_raw() as u32).is_some_and(|x| x.caps & (cap::COLOR | cap::DEPTH | cap::STENCIL) != 0)
}

/// The planes holding `aspects` of images of format `f`, in memory order.
pub fn planes(f: &Format, aspects: vk::ImageAspectFlags) -> Vec<Aspect> {
    let have = aspects_of(f) & aspects;
    [
        (vk::ImageAspectFlags::COLOR, Aspect::Color),
        (vk::ImageAspectFlags::DEPTH, Aspect::Depth),
        (vk::ImageAspectFlags::STENCIL, Aspect::Stencil),
    ]
    .into_iter()
    .filter(|(a, _)| have.contains(*a))
    .map(|(_, p)| p)
    .collect()
}

/// The texel a clear writes into `plane` of an image of format `f`; `value` is
/// `VkClearValue`'s words (colour; or the depth as f32 bits, then the stencil).
pub fn clear_texel(f: &Format, plane: Aspect, value: [u32; 4]) -> Vec<u8> {
    match (plane, f.depth()) {
        (Aspect::Depth, Some(d)) => {
            let z = f32::from_bits(value[0]);
            let z = if d == format::Depth::D32F { z } else { z.clamp(0.0, 1.0) };
            let raw = format::encode_depth(d, z).to_le_bytes();
            raw[..f.plane_texel_bytes(Aspect::Depth).unwrap_or(4) as usize].to_vec()
        }
        (Aspect::Stencil, _) => vec![value[1] as u8],
        _ => {
            let mut texel = vec![0u8; f.texel_bytes() as usize];
            format::encode_texel(f, value, &mut texel);
            texel
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
        let format = format::find(vk_format.as_raw() as u32).ok_or_else(|| {
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
        img.size = format::image_bytes(format, img.texels()).max(1);
        Ok(img)
    }

    pub fn level_extent(&self, level: u32) -> [u32; 3] {
        self.extent.map(|e| (e >> level).max(1))
    }

    /// Texels in every level and layer.
    fn texels(&self) -> u64 {
        (0..self.mip_levels).map(|l| self.level_extent(l).iter().map(|&e| e as u64).product::<u64>()).sum::<u64>()
            * self.array_layers as u64
    }

    /// Where (`level`, `layer`) of the image's first plane lives (its only one, except for
    /// combined depth/stencil formats, whose first plane is the depth plane).
    pub fn subresource(&self, level: u32, layer: u32) -> Subresource {
        self.layout(0, self.format.texel_bytes() as u64, level, layer)
    }

    /// Where (`level`, `layer`) of `plane` lives. A combined depth/stencil format's stencil
    /// plane follows the whole depth plane (`abi::format::stencil_plane_offset`).
    pub fn plane_subresource(&self, plane: Aspect, level: u32, layer: u32) -> Subresource {
        let tb = self.format.plane_texel_bytes(plane).unwrap_or(self.format.texel_bytes()) as u64;
        let base = match plane {
            Aspect::Stencil => format::stencil_plane_offset(self.format, self.texels()).unwrap_or(0),
            _ => 0,
        };
        self.layout(base, tb, level, layer)
    }

    /// Levels one after another, each as all layers, each layer as depth slices of rows.
    fn layout(&self, base: u64, tb: u64, level: u32, layer: u32) -> Subresource {
        let mut offset = base;
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
    pub aspect: vk::ImageAspectFlags,
    pub base_level: u32,
    pub level_count: u32,
    pub base_layer: u32,
    pub layer_count: u32,
}

pub struct ImageView {
    pub image: Arc<Image>,
    pub view_type: vk::ImageViewType,
    pub format: &'static Format,
    /// The aspects the view sees (of a depth/stencil image: depth, stencil or both).
    pub aspect: vk::ImageAspectFlags,
    pub base_level: u32,
    pub level_count: u32,
    pub base_layer: u32,
    pub layer_count: u32,
}

impl ImageView {
    /// A view of `range` of `image` in `format`, which must have the image's texel size
    /// (for depth/stencil images, be its format); `REMAINING_*` counts resolve against the
    /// image.
    pub fn new(
        image: Arc<Image>,
        view_type: vk::ImageViewType,
        format: vk::Format,
        range: ViewRange,
    ) -> VkResult<Self> {
        let f = format::find(format.as_raw() as u32).ok_or_else(|| {
            tracing::warn!("vkCreateImageView: format {format:?} is not supported");
            vk::Result::ERROR_FORMAT_NOT_SUPPORTED
        })?;
        let ds = image.format.depth().is_some() || image.format.has_stencil();
        if f.texel_bytes() != image.format.texel_bytes() || (ds && f.vk != image.format.vk) {
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
        let all = aspects_of(image.format);
        let aspect = if range.aspect.intersects(all) { range.aspect & all } else { all };
        Ok(ImageView {
            image,
            view_type,
            format: f,
            aspect,
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

    /// The storage-image descriptor for this view. A stencil-only view of a depth/stencil
    /// image describes its stencil plane, as `S8_UINT`.
    pub fn descriptor(&self) -> VkResult<ImageDesc> {
        let stencil = self.aspect == vk::ImageAspectFlags::STENCIL;
        let (plane, f) = match stencil {
            true => (Aspect::Stencil, format::find(format::S8_UINT).expect("S8_UINT is a device format")),
            false => (if self.format.depth().is_some() { Aspect::Depth } else { Aspect::Color }, self.format),
        };
        let sub = self.image.plane_subresource(plane, self.base_level, self.base_layer);
        let e = sub.extent;
        Ok(ImageDesc {
            addr: self.image.address()? + sub.offset,
            format: f.vk,
            view_type: self.view_type.as_raw() as u32,
            width: e[0],
            height: e[1],
            depth: e[2],
            layers: self.layer_count,
            row_pitch: sub.row_pitch as u32,
            slice_pitch: sub.slice_pitch as u32,
            layer_pitch: sub.layer_pitch as u32,
            texel_bytes: f.texel_bytes(),
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
        // A format the device does not hold (block compression) is refused.
        let bc1 = vk::Format::BC1_RGB_UNORM_BLOCK;
        assert!(Image::new(vk::ImageType::TYPE_2D, bc1, [4, 4, 1], 1, 1, vk::ImageUsageFlags::empty()).is_err());
    }

    #[test]
    fn depth_stencil_planes() {
        let usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT;
        let img = Image::new(vk::ImageType::TYPE_2D, vk::Format::D24_UNORM_S8_UINT, [4, 2, 1], 1, 2, usage).unwrap();
        // 16 texels: a 64-byte depth plane, then the stencil plane (64-byte aligned).
        assert_eq!(img.size, 64 + 16);
        let d = img.plane_subresource(Aspect::Depth, 0, 1);
        assert_eq!((d.offset, d.row_pitch, d.layer_pitch), (32, 16, 32));
        assert_eq!(img.subresource(0, 1), d, "the first plane is the depth plane");
        let s = img.plane_subresource(Aspect::Stencil, 0, 1);
        assert_eq!((s.offset, s.row_pitch, s.layer_pitch), (64 + 8, 4, 8));
        assert_eq!(clear_texel(img.format, Aspect::Depth, [0.5f32.to_bits(), 0x17, 0, 0]), [0x00, 0x00, 0x80, 0x00]);
        assert_eq!(clear_texel(img.format, Aspect::Stencil, [0, 0x117, 0, 0]), [0x17]);
        let s8 = Image::new(vk::ImageType::TYPE_2D, vk::Format::S8_UINT, [4, 2, 1], 1, 1, usage).unwrap();
        assert_eq!((s8.size, s8.plane_subresource(Aspect::Stencil, 0, 0).offset), (8, 0));
        assert_eq!(planes(img.format, vk::ImageAspectFlags::STENCIL), [Aspect::Stencil]);
        assert_eq!(aspects(vk::Format::D16_UNORM), vk::ImageAspectFlags::DEPTH);
        assert_eq!(aspects(vk::Format::R8G8B8A8_SRGB), vk::ImageAspectFlags::COLOR);
        // A stencil view describes the stencil plane as S8.
        let img = Arc::new(img);
        let mem = Arc::new(Memory::allocate(&Arc::new(vortex_model::mem::AddressSpace::new()), img.size).unwrap());
        img.bind(mem.clone(), 0).unwrap();
        let range = |aspect| ViewRange { aspect, base_level: 0, level_count: 1, base_layer: 1, layer_count: 1 };
        let sv = ImageView::new(
            img.clone(),
            vk::ImageViewType::TYPE_2D,
            vk::Format::D24_UNORM_S8_UINT,
            range(vk::ImageAspectFlags::STENCIL),
        )
        .unwrap();
        let desc = sv.descriptor().unwrap();
        assert_eq!((desc.addr, desc.format, desc.texel_bytes), (mem.address(72), format::S8_UINT, 1));
        let dv = ImageView::new(
            img.clone(),
            vk::ImageViewType::TYPE_2D,
            vk::Format::D24_UNORM_S8_UINT,
            range(vk::ImageAspectFlags::DEPTH),
        )
        .unwrap();
        assert_eq!(dv.descriptor().unwrap().addr, mem.address(32));
        assert!(
            ImageView::new(img, vk::ImageViewType::TYPE_2D, vk::Format::R32_UINT, range(vk::ImageAspectFlags::COLOR))
                .is_err(),
            "a depth/stencil view keeps the image's format"
        );
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
