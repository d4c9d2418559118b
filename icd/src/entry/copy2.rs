//! The `*2` transfer commands (Vulkan 1.3, VK_KHR_copy_commands2): the same copies and blits
//! as the first forms, their arguments gathered into info structures whose regions carry a
//! pNext. Each unpacks its info and runs the first form, so there is one copy path.

use super::transfer;
use crate::util::slice;
use ash::vk;

pub unsafe extern "system" fn cmd_copy_buffer2(h: vk::CommandBuffer, info: *const vk::CopyBufferInfo2<'_>) {
    // SAFETY: a valid info structure and its region array.
    let i = unsafe { &*info };
    let regions: Vec<_> = unsafe { slice(i.p_regions, i.region_count) }
        .iter()
        .map(|r| vk::BufferCopy { src_offset: r.src_offset, dst_offset: r.dst_offset, size: r.size })
        .collect();
    // SAFETY: the same handles, and a region array of the stated length.
    unsafe { transfer::cmd_copy_buffer(h, i.src_buffer, i.dst_buffer, regions.len() as u32, regions.as_ptr()) }
}

fn buffer_image(r: &vk::BufferImageCopy2<'_>) -> vk::BufferImageCopy {
    vk::BufferImageCopy {
        buffer_offset: r.buffer_offset,
        buffer_row_length: r.buffer_row_length,
        buffer_image_height: r.buffer_image_height,
        image_subresource: r.image_subresource,
        image_offset: r.image_offset,
        image_extent: r.image_extent,
    }
}

pub unsafe extern "system" fn cmd_copy_buffer_to_image2(
    h: vk::CommandBuffer,
    info: *const vk::CopyBufferToImageInfo2<'_>,
) {
    // SAFETY: a valid info structure and its region array.
    let i = unsafe { &*info };
    let regions: Vec<_> = unsafe { slice(i.p_regions, i.region_count) }.iter().map(buffer_image).collect();
    // SAFETY: the same handles, and a region array of the stated length.
    unsafe {
        transfer::cmd_copy_buffer_to_image(
            h,
            i.src_buffer,
            i.dst_image,
            i.dst_image_layout,
            regions.len() as u32,
            regions.as_ptr(),
        )
    }
}

pub unsafe extern "system" fn cmd_copy_image_to_buffer2(
    h: vk::CommandBuffer,
    info: *const vk::CopyImageToBufferInfo2<'_>,
) {
    // SAFETY: a valid info structure and its region array.
    let i = unsafe { &*info };
    let regions: Vec<_> = unsafe { slice(i.p_regions, i.region_count) }.iter().map(buffer_image).collect();
    // SAFETY: the same handles, and a region array of the stated length.
    unsafe {
        transfer::cmd_copy_image_to_buffer(
            h,
            i.src_image,
            i.src_image_layout,
            i.dst_buffer,
            regions.len() as u32,
            regions.as_ptr(),
        )
    }
}

pub unsafe extern "system" fn cmd_copy_image2(h: vk::CommandBuffer, info: *const vk::CopyImageInfo2<'_>) {
    // SAFETY: a valid info structure and its region array.
    let i = unsafe { &*info };
    let regions: Vec<_> = unsafe { slice(i.p_regions, i.region_count) }
        .iter()
        .map(|r| vk::ImageCopy {
            src_subresource: r.src_subresource,
            src_offset: r.src_offset,
            dst_subresource: r.dst_subresource,
            dst_offset: r.dst_offset,
            extent: r.extent,
        })
        .collect();
    // SAFETY: the same handles, and a region array of the stated length.
    unsafe {
        transfer::cmd_copy_image(
            h,
            i.src_image,
            i.src_image_layout,
            i.dst_image,
            i.dst_image_layout,
            regions.len() as u32,
            regions.as_ptr(),
        )
    }
}

pub unsafe extern "system" fn cmd_blit_image2(h: vk::CommandBuffer, info: *const vk::BlitImageInfo2<'_>) {
    // SAFETY: a valid info structure and its region array.
    let i = unsafe { &*info };
    let regions: Vec<_> = unsafe { slice(i.p_regions, i.region_count) }
        .iter()
        .map(|r| vk::ImageBlit {
            src_subresource: r.src_subresource,
            src_offsets: r.src_offsets,
            dst_subresource: r.dst_subresource,
            dst_offsets: r.dst_offsets,
        })
        .collect();
    // SAFETY: the same handles, and a region array of the stated length.
    unsafe {
        transfer::cmd_blit_image(
            h,
            i.src_image,
            i.src_image_layout,
            i.dst_image,
            i.dst_image_layout,
            regions.len() as u32,
            regions.as_ptr(),
            i.filter,
        )
    }
}

pub unsafe extern "system" fn cmd_resolve_image2(h: vk::CommandBuffer, info: *const vk::ResolveImageInfo2<'_>) {
    // SAFETY: a valid info structure and its region array.
    let i = unsafe { &*info };
    let regions: Vec<_> = unsafe { slice(i.p_regions, i.region_count) }
        .iter()
        .map(|r| vk::ImageResolve {
            src_subresource: r.src_subresource,
            src_offset: r.src_offset,
            dst_subresource: r.dst_subresource,
            dst_offset: r.dst_offset,
            extent: r.extent,
        })
        .collect();
    // SAFETY: the same handles, and a region array of the stated length.
    unsafe {
        transfer::cmd_resolve_image(
            h,
            i.src_image,
            i.src_image_layout,
            i.dst_image,
            i.dst_image_layout,
            regions.len() as u32,
            regions.as_ptr(),
        )
    }
}
