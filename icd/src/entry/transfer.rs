//! Transfer commands: buffer and image copies, blits, fills, updates and colour clears. Each
//! translates Vulkan's regions into the runtime's and calls the command buffer
//! (`vortex_runtime::cmd`), which records the DMA operations.

use super::command::cmd;
use crate::handle::nd;
use crate::util::slice;
use ash::vk;
use std::ffi::c_void;
use vortex_runtime::blit::BlitRegion;
use vortex_runtime::buffer::Buffer;
use vortex_runtime::cmd::{BufferCopy, BufferImageCopy, ImageCopy, SubresourceRange};
use vortex_runtime::image::Image;

pub unsafe extern "system" fn cmd_copy_buffer(
    h: vk::CommandBuffer,
    src: vk::Buffer,
    dst: vk::Buffer,
    count: u32,
    p_regions: *const vk::BufferCopy,
) {
    cmd("vkCmdCopyBuffer", h, |cb| {
        // SAFETY: live buffer handles and region array.
        let (s, d) = unsafe { (nd::<_, Buffer>(src)?, nd::<_, Buffer>(dst)?) };
        let regions: Vec<_> = unsafe { slice(p_regions, count) }
            .iter()
            .map(|r| BufferCopy { src_offset: r.src_offset, dst_offset: r.dst_offset, size: r.size })
            .collect();
        cb.copy_buffer(&s, &d, &regions);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_fill_buffer(h: vk::CommandBuffer, b: vk::Buffer, offset: u64, size: u64, data: u32) {
    cmd("vkCmdFillBuffer", h, |cb| {
        // SAFETY: live buffer handle.
        cb.fill_buffer(&unsafe { nd::<_, Buffer>(b)? }, offset, size, data);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_update_buffer(
    h: vk::CommandBuffer,
    b: vk::Buffer,
    offset: u64,
    size: u64,
    p: *const c_void,
) {
    cmd("vkCmdUpdateBuffer", h, |cb| {
        // SAFETY: live buffer handle; `size` bytes of data.
        let buf = unsafe { nd::<_, Buffer>(b)? };
        cb.update_buffer(&buf, offset, unsafe { slice(p as *const u8, size as u32) });
        Ok(())
    })
}

fn region(r: &vk::BufferImageCopy) -> BufferImageCopy {
    BufferImageCopy {
        aspect: r.image_subresource.aspect_mask,
        buffer_offset: r.buffer_offset,
        buffer_row_length: r.buffer_row_length,
        buffer_image_height: r.buffer_image_height,
        mip_level: r.image_subresource.mip_level,
        base_layer: r.image_subresource.base_array_layer,
        layer_count: r.image_subresource.layer_count,
        offset: [r.image_offset.x, r.image_offset.y, r.image_offset.z],
        extent: [r.image_extent.width, r.image_extent.height, r.image_extent.depth],
    }
}

pub unsafe extern "system" fn cmd_copy_buffer_to_image(
    h: vk::CommandBuffer,
    src: vk::Buffer,
    dst: vk::Image,
    _layout: vk::ImageLayout,
    count: u32,
    p: *const vk::BufferImageCopy,
) {
    cmd("vkCmdCopyBufferToImage", h, |cb| {
        // SAFETY: live handles and region array.
        let (b, i) = unsafe { (nd::<_, Buffer>(src)?, nd::<_, Image>(dst)?) };
        let regions: Vec<_> = unsafe { slice(p, count) }.iter().map(region).collect();
        cb.copy_buffer_to_image(&b, &i, &regions);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_copy_image_to_buffer(
    h: vk::CommandBuffer,
    src: vk::Image,
    _layout: vk::ImageLayout,
    dst: vk::Buffer,
    count: u32,
    p: *const vk::BufferImageCopy,
) {
    cmd("vkCmdCopyImageToBuffer", h, |cb| {
        // SAFETY: live handles and region array.
        let (i, b) = unsafe { (nd::<_, Image>(src)?, nd::<_, Buffer>(dst)?) };
        let regions: Vec<_> = unsafe { slice(p, count) }.iter().map(region).collect();
        cb.copy_image_to_buffer(&i, &b, &regions);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_copy_image(
    h: vk::CommandBuffer,
    src: vk::Image,
    _sl: vk::ImageLayout,
    dst: vk::Image,
    _dl: vk::ImageLayout,
    count: u32,
    p: *const vk::ImageCopy,
) {
    cmd("vkCmdCopyImage", h, |cb| {
        // SAFETY: live handles and region array.
        let (s, d) = unsafe { (nd::<_, Image>(src)?, nd::<_, Image>(dst)?) };
        let regions: Vec<_> = unsafe { slice(p, count) }
            .iter()
            .map(|r| ImageCopy {
                aspect: r.src_subresource.aspect_mask,
                src_level: r.src_subresource.mip_level,
                src_layer: r.src_subresource.base_array_layer,
                layer_count: r.src_subresource.layer_count,
                src_offset: [r.src_offset.x, r.src_offset.y, r.src_offset.z],
                dst_level: r.dst_subresource.mip_level,
                dst_layer: r.dst_subresource.base_array_layer,
                dst_offset: [r.dst_offset.x, r.dst_offset.y, r.dst_offset.z],
                extent: [r.extent.width, r.extent.height, r.extent.depth],
            })
            .collect();
        cb.copy_image(&s, &d, &regions);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_clear_color_image(
    h: vk::CommandBuffer,
    image: vk::Image,
    _layout: vk::ImageLayout,
    p_color: *const vk::ClearColorValue,
    count: u32,
    p_ranges: *const vk::ImageSubresourceRange,
) {
    cmd("vkCmdClearColorImage", h, |cb| {
        // SAFETY: live image handle, clear value and range array.
        let img = unsafe { nd::<_, Image>(image)? };
        let color = unsafe { (*p_color).uint32 };
        let ranges = unsafe { ranges(p_ranges, count) };
        cb.clear_color_image(&img, color, &ranges);
        Ok(())
    })
}

/// # Safety
/// `p` must hold `count` ranges.
unsafe fn ranges(p: *const vk::ImageSubresourceRange, count: u32) -> Vec<SubresourceRange> {
    // SAFETY: per the contract.
    unsafe { slice(p, count) }
        .iter()
        .map(|r| SubresourceRange {
            aspect: r.aspect_mask,
            base_level: r.base_mip_level,
            level_count: r.level_count,
            base_layer: r.base_array_layer,
            layer_count: r.layer_count,
        })
        .collect()
}

pub unsafe extern "system" fn cmd_clear_depth_stencil_image(
    h: vk::CommandBuffer,
    image: vk::Image,
    _layout: vk::ImageLayout,
    p_value: *const vk::ClearDepthStencilValue,
    count: u32,
    p_ranges: *const vk::ImageSubresourceRange,
) {
    cmd("vkCmdClearDepthStencilImage", h, |cb| {
        // SAFETY: live image handle, clear value and range array.
        let img = unsafe { nd::<_, Image>(image)? };
        let v = unsafe { *p_value };
        let ranges = unsafe { ranges(p_ranges, count) };
        cb.clear_depth_stencil_image(&img, [v.depth.to_bits(), v.stencil, 0, 0], &ranges);
        Ok(())
    })
}

pub unsafe extern "system" fn cmd_blit_image(
    h: vk::CommandBuffer,
    src: vk::Image,
    _sl: vk::ImageLayout,
    dst: vk::Image,
    _dl: vk::ImageLayout,
    count: u32,
    p: *const vk::ImageBlit,
    filter: vk::Filter,
) {
    cmd("vkCmdBlitImage", h, |cb| {
        if filter != vk::Filter::NEAREST && filter != vk::Filter::LINEAR {
            tracing::error!("vkCmdBlitImage: filter {filter:?} is not supported");
            return Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED);
        }
        // SAFETY: live handles and region array.
        let (s, d) = unsafe { (nd::<_, Image>(src)?, nd::<_, Image>(dst)?) };
        let corner = |o: &vk::Offset3D| [o.x, o.y, o.z];
        let regions = unsafe { slice(p, count) }
            .iter()
            .map(|r| BlitRegion {
                src_level: r.src_subresource.mip_level,
                src_layer: r.src_subresource.base_array_layer,
                dst_level: r.dst_subresource.mip_level,
                dst_layer: r.dst_subresource.base_array_layer,
                layers: r.src_subresource.layer_count,
                src: [corner(&r.src_offsets[0]), corner(&r.src_offsets[1])],
                dst: [corner(&r.dst_offsets[0]), corner(&r.dst_offsets[1])],
            })
            .collect();
        cb.blit_image(&s, &d, regions, filter == vk::Filter::LINEAR);
        Ok(())
    })
}
