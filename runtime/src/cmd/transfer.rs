//! Transfers: buffer and image copies, fills, updates and image clears, as DMA operations on
//! device addresses. Images are stored linearly, so an image copy is a copy per row (rows
//! that happen to be contiguous merge into one).

use super::{CommandBuffer, Inner};
use crate::buffer::Buffer;
use crate::image::Image;
use crate::stream::StreamOp;
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::abi::format::Aspect;

/// A buffer -> buffer copy region.
#[derive(Clone, Copy, Debug)]
pub struct BufferCopy {
    pub src_offset: u64,
    pub dst_offset: u64,
    pub size: u64,
}

/// A buffer <-> image copy region, in Vulkan's terms. `aspect` picks the plane of a
/// depth/stencil image (the buffer holds that plane's texels).
#[derive(Clone, Copy, Debug)]
pub struct BufferImageCopy {
    pub aspect: vk::ImageAspectFlags,
    pub buffer_offset: u64,
    pub buffer_row_length: u32,
    pub buffer_image_height: u32,
    pub mip_level: u32,
    pub base_layer: u32,
    pub layer_count: u32,
    pub offset: [i32; 3],
    pub extent: [u32; 3],
}

/// An image -> image copy region (of the same aspect on both sides).
#[derive(Clone, Copy, Debug)]
pub struct ImageCopy {
    pub aspect: vk::ImageAspectFlags,
    pub src_level: u32,
    pub src_layer: u32,
    pub layer_count: u32,
    pub src_offset: [i32; 3],
    pub dst_level: u32,
    pub dst_layer: u32,
    pub dst_offset: [i32; 3],
    pub extent: [u32; 3],
}

/// An image subresource range for clears.
#[derive(Clone, Copy, Debug)]
pub struct SubresourceRange {
    pub aspect: vk::ImageAspectFlags,
    pub base_level: u32,
    pub level_count: u32,
    pub base_layer: u32,
    pub layer_count: u32,
}

impl CommandBuffer {
    /// One DMA copy per region.
    pub fn copy_buffer(&self, src: &Arc<Buffer>, dst: &Arc<Buffer>, regions: &[BufferCopy]) {
        self.record("vkCmdCopyBuffer", |i, _| {
            for r in regions {
                i.emit(StreamOp::Copy {
                    src: src.address_at(r.src_offset)?,
                    dst: dst.address_at(r.dst_offset)?,
                    len: r.size,
                });
            }
            i.keep(src.clone());
            i.keep(dst.clone());
            Ok(())
        });
    }

    /// `size` may be `VK_WHOLE_SIZE`: the rest of the buffer, in whole words.
    pub fn fill_buffer(&self, buffer: &Arc<Buffer>, offset: u64, size: u64, word: u32) {
        self.record("vkCmdFillBuffer", |i, _| {
            let len = if size == vk::WHOLE_SIZE { (buffer.size - offset) & !3 } else { size };
            i.emit(StreamOp::Fill { dst: buffer.address_at(offset)?, len, word });
            i.keep(buffer.clone());
            Ok(())
        });
    }

    /// The data travels in the stream (`vkCmdUpdateBuffer` copies it at record time).
    pub fn update_buffer(&self, buffer: &Arc<Buffer>, offset: u64, data: &[u8]) {
        self.record("vkCmdUpdateBuffer", |i, _| {
            i.emit(StreamOp::Write { dst: buffer.address_at(offset)?, data: data.to_vec() });
            i.keep(buffer.clone());
            Ok(())
        });
    }

    pub fn copy_buffer_to_image(&self, buffer: &Arc<Buffer>, image: &Arc<Image>, regions: &[BufferImageCopy]) {
        self.copy_buffer_image("vkCmdCopyBufferToImage", buffer, image, regions, true);
    }

    pub fn copy_image_to_buffer(&self, image: &Arc<Image>, buffer: &Arc<Buffer>, regions: &[BufferImageCopy]) {
        self.copy_buffer_image("vkCmdCopyImageToBuffer", buffer, image, regions, false);
    }

    /// Both buffer <-> image copies, row by row: `to_image` picks the direction.
    fn copy_buffer_image(
        &self,
        what: &str,
        buffer: &Arc<Buffer>,
        image: &Arc<Image>,
        regions: &[BufferImageCopy],
        to_image: bool,
    ) {
        self.record(what, |i, _| {
            let (buf_base, base) = (buffer.address_at(0)?, image.address()?);
            for r in regions {
                let plane = plane_of(image, r.aspect);
                let tb = image.format.plane_texel_bytes(plane).unwrap_or(image.format.texel_bytes()) as u64;
                let row_len = if r.buffer_row_length == 0 { r.extent[0] } else { r.buffer_row_length } as u64;
                let img_h = if r.buffer_image_height == 0 { r.extent[1] } else { r.buffer_image_height } as u64;
                let buf_row = row_len * tb;
                let buf_slice = buf_row * img_h;
                let depth = r.extent[2].max(1) as u64;
                for layer in 0..r.layer_count.max(1) {
                    let sub = image.plane_subresource(plane, r.mip_level, r.base_layer + layer);
                    let width_bytes = r.extent[0] as u64 * tb;
                    for z in 0..depth {
                        for y in 0..r.extent[1].max(1) as u64 {
                            let img = base
                                + sub.offset
                                + (r.offset[2] as u64 + z) * sub.slice_pitch
                                + (r.offset[1] as u64 + y) * sub.row_pitch
                                + r.offset[0] as u64 * tb;
                            let buf = buf_base
                                + r.buffer_offset
                                + layer as u64 * buf_slice * depth
                                + z * buf_slice
                                + y * buf_row;
                            let (src, dst) = if to_image { (buf, img) } else { (img, buf) };
                            push_copy(&mut i.rec.ops, src, dst, width_bytes);
                        }
                    }
                }
            }
            i.keep(image.clone());
            i.keep(buffer.clone());
            Ok(())
        });
    }

    pub fn copy_image(&self, src: &Arc<Image>, dst: &Arc<Image>, regions: &[ImageCopy]) {
        self.record("vkCmdCopyImage", |i, _| {
            let (sb, db) = (src.address()?, dst.address()?);
            for r in regions {
                let (sp, dp) = (plane_of(src, r.aspect), plane_of(dst, r.aspect));
                let tb = src.format.plane_texel_bytes(sp).unwrap_or(src.format.texel_bytes()) as u64;
                let (s_off, d_off, ext) = (r.src_offset, r.dst_offset, r.extent);
                for l in 0..r.layer_count.max(1) {
                    let ss = src.plane_subresource(sp, r.src_level, r.src_layer + l);
                    let ds = dst.plane_subresource(dp, r.dst_level, r.dst_layer + l);
                    for z in 0..ext[2].max(1) as u64 {
                        for y in 0..ext[1].max(1) as u64 {
                            let s = sb
                                + ss.offset
                                + (s_off[2] as u64 + z) * ss.slice_pitch
                                + (s_off[1] as u64 + y) * ss.row_pitch
                                + s_off[0] as u64 * tb;
                            let d = db
                                + ds.offset
                                + (d_off[2] as u64 + z) * ds.slice_pitch
                                + (d_off[1] as u64 + y) * ds.row_pitch
                                + d_off[0] as u64 * tb;
                            push_copy(&mut i.rec.ops, s, d, ext[0] as u64 * tb);
                        }
                    }
                }
            }
            i.keep(src.clone());
            i.keep(dst.clone());
            Ok(())
        });
    }

    /// `color` is the raw VkClearColorValue (4 words, float or integer by format).
    pub fn clear_color_image(&self, image: &Arc<Image>, color: [u32; 4], ranges: &[SubresourceRange]) {
        self.record("vkCmdClearColorImage", |i, _| clear_image(i, image, color, ranges));
    }

    /// `value`: the depth (f32 bits) and the stencil, the words of a `VkClearValue`; each
    /// range's aspects choose the planes.
    pub fn clear_depth_stencil_image(&self, image: &Arc<Image>, value: [u32; 4], ranges: &[SubresourceRange]) {
        self.record("vkCmdClearDepthStencilImage", |i, _| clear_image(i, image, value, ranges));
    }
}

/// A pattern write of the clear texel over every (level, layer) of each range, per plane.
fn clear_image(i: &mut Inner, image: &Arc<Image>, value: [u32; 4], ranges: &[SubresourceRange]) -> VkResult<()> {
    let base = image.address()?;
    for r in ranges {
        let rest = |count: u32, remaining: u32, base: u32, total: u32| {
            if count == remaining {
                total.saturating_sub(base)
            } else {
                count
            }
        };
        let levels = rest(r.level_count, vk::REMAINING_MIP_LEVELS, r.base_level, image.mip_levels);
        let layers = rest(r.layer_count, vk::REMAINING_ARRAY_LAYERS, r.base_layer, image.array_layers);
        for plane in crate::image::planes(image.format, r.aspect) {
            let texel = crate::image::clear_texel(image.format, plane, value);
            for level in r.base_level..r.base_level + levels {
                let sub = image.plane_subresource(plane, level, r.base_layer);
                i.emit(StreamOp::Pattern {
                    dst: base + sub.offset,
                    len: sub.layer_pitch * layers as u64,
                    pattern: texel.clone(),
                });
            }
        }
    }
    i.keep(image.clone());
    Ok(())
}

/// The plane a copy region's aspect names (the first, if it names several).
fn plane_of(image: &Image, aspect: vk::ImageAspectFlags) -> Aspect {
    crate::image::planes(image.format, aspect).first().copied().unwrap_or(Aspect::Color)
}

/// Appends a copy, merging it into the previous one when the two are contiguous.
fn push_copy(ops: &mut Vec<StreamOp>, src: u64, dst: u64, len: u64) {
    if let Some(StreamOp::Copy { src: s, dst: d, len: l }) = ops.last_mut() {
        if *s + *l == src && *d + *l == dst {
            *l += len;
            return;
        }
    }
    ops.push(StreamOp::Copy { src, dst, len });
}
