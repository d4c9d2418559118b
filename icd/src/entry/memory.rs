//! Device memory, buffers, images, views and samplers.

use super::device::device;
use crate::handle::{guard_device, guard_device_result, guard_device_void, nd, nd_destroy, nd_new};
use crate::util::slice;
use ash::vk;
use std::ffi::c_void;
use std::sync::Arc;
use vortex_model::abi::PAGE_BYTES;
use vortex_runtime::buffer::{Buffer, BufferView, BUFFER_ALIGNMENT};
use vortex_runtime::image::{Image, ImageView, ViewRange, IMAGE_ALIGNMENT};
use vortex_runtime::memory::Memory;

pub unsafe extern "system" fn allocate_memory(
    d: vk::Device,
    p_info: *const vk::MemoryAllocateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_mem: *mut vk::DeviceMemory,
) -> vk::Result {
    guard_device_result("vkAllocateMemory", d, || {
        let dev = device(d)?;
        dev.rt.check()?;
        // SAFETY: valid allocate info.
        let info = unsafe { &*p_info };
        if info.memory_type_index != 0 {
            tracing::warn!("vkAllocateMemory: memory type {} does not exist", info.memory_type_index);
            return Err(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
        }
        let m = Memory::allocate(&dev.rt.space, info.allocation_size)?;
        // SAFETY: valid output pointer.
        unsafe { *p_mem = nd_new(Arc::new(m)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn free_memory(d: vk::Device, m: vk::DeviceMemory, _a: *const vk::AllocationCallbacks<'_>) {
    // SAFETY: a live memory handle or null.
    guard_device_void("vkFreeMemory", d, || unsafe { nd_destroy::<_, Memory>(m) })
}

pub unsafe extern "system" fn map_memory(
    d: vk::Device,
    m: vk::DeviceMemory,
    offset: u64,
    size: u64,
    _flags: vk::MemoryMapFlags,
    pp_data: *mut *mut c_void,
) -> vk::Result {
    guard_device_result("vkMapMemory", d, || {
        // SAFETY: live memory handle.
        let mem = unsafe { nd::<_, Memory>(m)? };
        let end = if size == vk::WHOLE_SIZE { mem.size } else { offset.saturating_add(size) };
        if offset > mem.size || end > mem.size {
            tracing::error!("vkMapMemory: range {offset}..{end} outside {} bytes", mem.size);
            return Err(vk::Result::ERROR_MEMORY_MAP_FAILED);
        }
        // SAFETY: valid output pointer; offset checked against the allocation.
        unsafe { *pp_data = mem.host_ptr(offset).cast() };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn unmap_memory(_d: vk::Device, _m: vk::DeviceMemory) {}

pub unsafe extern "system" fn flush_mapped_memory_ranges(
    _d: vk::Device,
    _count: u32,
    _p: *const vk::MappedMemoryRange<'_>,
) -> vk::Result {
    // The memory type is coherent: nothing to flush.
    vk::Result::SUCCESS
}

pub unsafe extern "system" fn get_device_memory_commitment(d: vk::Device, m: vk::DeviceMemory, p: *mut u64) {
    guard_device_void("vkGetDeviceMemoryCommitment", d, || {
        // SAFETY: live memory handle and valid output pointer.
        if let Ok(mem) = unsafe { nd::<_, Memory>(m) } {
            unsafe { *p = mem.size };
        }
    })
}

pub unsafe extern "system" fn create_buffer(
    d: vk::Device,
    p_info: *const vk::BufferCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_buffer: *mut vk::Buffer,
) -> vk::Result {
    guard_device_result("vkCreateBuffer", d, || {
        let dev = device(d)?;
        // SAFETY: valid create info.
        let info = unsafe { &*p_info };
        if info.flags.intersects(vk::BufferCreateFlags::SPARSE_RESIDENCY | vk::BufferCreateFlags::SPARSE_ALIASED) {
            tracing::warn!("vkCreateBuffer: sparse residency and aliasing are not supported (sparse binding is)");
            return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
        }
        let buffer = if info.flags.contains(vk::BufferCreateFlags::SPARSE_BINDING) {
            Buffer::new_sparse(&dev.rt.space, info.size, info.usage)?
        } else {
            Buffer::new(info.size, info.usage)
        };
        // SAFETY: valid output pointer.
        unsafe { *p_buffer = nd_new(Arc::new(buffer)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_buffer(d: vk::Device, b: vk::Buffer, _a: *const vk::AllocationCallbacks<'_>) {
    // SAFETY: a live buffer handle or null.
    guard_device_void("vkDestroyBuffer", d, || unsafe { nd_destroy::<_, Buffer>(b) })
}

pub unsafe extern "system" fn create_buffer_view(
    d: vk::Device,
    p_info: *const vk::BufferViewCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_view: *mut vk::BufferView,
) -> vk::Result {
    guard_device_result("vkCreateBufferView", d, || {
        device(d)?;
        // SAFETY: valid create info with a live buffer handle.
        let info = unsafe { &*p_info };
        let buffer = unsafe { nd::<_, Buffer>(info.buffer)? };
        let view = BufferView::new(buffer, info.format, info.offset, info.range)?;
        // SAFETY: valid output pointer.
        unsafe { *p_view = nd_new(Arc::new(view)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_buffer_view(
    d: vk::Device,
    v: vk::BufferView,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live buffer-view handle or null.
    guard_device_void("vkDestroyBufferView", d, || unsafe { nd_destroy::<_, BufferView>(v) })
}

fn buffer_requirements(b: &Buffer) -> vk::MemoryRequirements {
    // A sparse buffer is bound in pages: its alignment (and sparse block size) is a page and
    // its size the whole pages its reservation spans.
    let align = if b.reservation().is_some() { PAGE_BYTES } else { BUFFER_ALIGNMENT };
    vk::MemoryRequirements { size: b.size.div_ceil(align) * align, alignment: align, memory_type_bits: 1 }
}

fn image_requirements(i: &Image) -> vk::MemoryRequirements {
    vk::MemoryRequirements {
        size: i.size.div_ceil(IMAGE_ALIGNMENT) * IMAGE_ALIGNMENT,
        alignment: IMAGE_ALIGNMENT,
        memory_type_bits: 1,
    }
}

pub unsafe extern "system" fn get_buffer_memory_requirements(
    d: vk::Device,
    b: vk::Buffer,
    p: *mut vk::MemoryRequirements,
) {
    guard_device_void("vkGetBufferMemoryRequirements", d, || {
        // SAFETY: live buffer handle and valid output pointer.
        if let Ok(b) = unsafe { nd::<_, Buffer>(b) } {
            unsafe { *p = buffer_requirements(&b) };
        }
    })
}

pub unsafe extern "system" fn get_buffer_memory_requirements2(
    d: vk::Device,
    p_info: *const vk::BufferMemoryRequirementsInfo2<'_>,
    p: *mut vk::MemoryRequirements2<'_>,
) {
    guard_device_void("vkGetBufferMemoryRequirements2", d, || {
        // SAFETY: valid input, live buffer handle, valid output.
        if let Ok(b) = unsafe { nd::<_, Buffer>((*p_info).buffer) } {
            unsafe { (*p).memory_requirements = buffer_requirements(&b) };
        }
    })
}

pub unsafe extern "system" fn get_image_memory_requirements(
    d: vk::Device,
    i: vk::Image,
    p: *mut vk::MemoryRequirements,
) {
    guard_device_void("vkGetImageMemoryRequirements", d, || {
        // SAFETY: live image handle and valid output pointer.
        if let Ok(i) = unsafe { nd::<_, Image>(i) } {
            unsafe { *p = image_requirements(&i) };
        }
    })
}

pub unsafe extern "system" fn get_image_memory_requirements2(
    d: vk::Device,
    p_info: *const vk::ImageMemoryRequirementsInfo2<'_>,
    p: *mut vk::MemoryRequirements2<'_>,
) {
    guard_device_void("vkGetImageMemoryRequirements2", d, || {
        // SAFETY: valid input, live image handle, valid output.
        if let Ok(i) = unsafe { nd::<_, Image>((*p_info).image) } {
            unsafe { (*p).memory_requirements = image_requirements(&i) };
        }
    })
}

pub unsafe extern "system" fn get_image_sparse_memory_requirements(
    _d: vk::Device,
    _i: vk::Image,
    p_count: *mut u32,
    _p: *mut vk::SparseImageMemoryRequirements,
) {
    if !p_count.is_null() {
        // SAFETY: valid output pointer; no sparse images.
        unsafe { *p_count = 0 };
    }
}

pub unsafe extern "system" fn get_image_sparse_memory_requirements2(
    _d: vk::Device,
    _i: *const vk::ImageSparseMemoryRequirementsInfo2<'_>,
    p_count: *mut u32,
    _p: *mut vk::SparseImageMemoryRequirements2<'_>,
) {
    if !p_count.is_null() {
        // SAFETY: valid output pointer; no sparse images.
        unsafe { *p_count = 0 };
    }
}

pub unsafe extern "system" fn bind_buffer_memory(
    d: vk::Device,
    b: vk::Buffer,
    m: vk::DeviceMemory,
    offset: u64,
) -> vk::Result {
    guard_device_result("vkBindBufferMemory", d, || {
        // SAFETY: live handles.
        let (b, m) = unsafe { (nd::<_, Buffer>(b)?, nd::<_, Memory>(m)?) };
        b.bind(m, offset)?;
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn bind_buffer_memory2(
    d: vk::Device,
    count: u32,
    p: *const vk::BindBufferMemoryInfo<'_>,
) -> vk::Result {
    guard_device_result("vkBindBufferMemory2", d, || {
        // SAFETY: bind infos per the API contract.
        for i in unsafe { slice(p, count) } {
            // SAFETY: forwarded handles.
            let r = unsafe { bind_buffer_memory(d, i.buffer, i.memory, i.memory_offset) };
            if r != vk::Result::SUCCESS {
                return Err(r);
            }
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn bind_image_memory(
    d: vk::Device,
    i: vk::Image,
    m: vk::DeviceMemory,
    offset: u64,
) -> vk::Result {
    guard_device_result("vkBindImageMemory", d, || {
        // SAFETY: live handles.
        let (i, m) = unsafe { (nd::<_, Image>(i)?, nd::<_, Memory>(m)?) };
        i.bind(m, offset)?;
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn bind_image_memory2(
    d: vk::Device,
    count: u32,
    p: *const vk::BindImageMemoryInfo<'_>,
) -> vk::Result {
    guard_device_result("vkBindImageMemory2", d, || {
        // SAFETY: bind infos per the API contract.
        for i in unsafe { slice(p, count) } {
            // SAFETY: forwarded handles.
            let r = unsafe { bind_image_memory(d, i.image, i.memory, i.memory_offset) };
            if r != vk::Result::SUCCESS {
                return Err(r);
            }
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn get_buffer_device_address(
    d: vk::Device,
    p_info: *const vk::BufferDeviceAddressInfo<'_>,
) -> u64 {
    guard_device("vkGetBufferDeviceAddress", d, 0, || {
        // SAFETY: valid info and live buffer handle.
        unsafe { nd::<_, Buffer>((*p_info).buffer) }.map_or(0, |b| b.address())
    })
}

pub unsafe extern "system" fn get_buffer_opaque_capture_address(
    _d: vk::Device,
    _p: *const vk::BufferDeviceAddressInfo<'_>,
) -> u64 {
    0
}

pub unsafe extern "system" fn get_device_memory_opaque_capture_address(
    _d: vk::Device,
    _p: *const vk::DeviceMemoryOpaqueCaptureAddressInfo<'_>,
) -> u64 {
    0
}

pub unsafe extern "system" fn create_image(
    d: vk::Device,
    p_info: *const vk::ImageCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_image: *mut vk::Image,
) -> vk::Result {
    guard_device_result("vkCreateImage", d, || {
        device(d)?;
        // SAFETY: valid create info.
        let i = unsafe { &*p_info };
        if i.samples != vk::SampleCountFlags::TYPE_1 {
            tracing::warn!("vkCreateImage: multisampled images are not supported");
            return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
        }
        let sparse = vk::ImageCreateFlags::SPARSE_BINDING
            | vk::ImageCreateFlags::SPARSE_RESIDENCY
            | vk::ImageCreateFlags::SPARSE_ALIASED;
        if i.flags.intersects(sparse) {
            // Sparse binding is for buffers: no image format reports sparse support.
            tracing::warn!("vkCreateImage: sparse images are not supported");
            return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
        }
        let img = Image::new(
            i.image_type,
            i.format,
            [i.extent.width, i.extent.height, i.extent.depth],
            i.mip_levels,
            i.array_layers,
            i.usage,
        )?;
        // SAFETY: valid output pointer.
        unsafe { *p_image = nd_new(Arc::new(img)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_image(d: vk::Device, i: vk::Image, _a: *const vk::AllocationCallbacks<'_>) {
    // SAFETY: a live image handle or null.
    guard_device_void("vkDestroyImage", d, || unsafe { nd_destroy::<_, Image>(i) })
}

pub unsafe extern "system" fn get_image_subresource_layout(
    d: vk::Device,
    i: vk::Image,
    p_sub: *const vk::ImageSubresource,
    p: *mut vk::SubresourceLayout,
) {
    guard_device_void("vkGetImageSubresourceLayout", d, || {
        // SAFETY: live image handle, valid input and output.
        if let Ok(img) = unsafe { nd::<_, Image>(i) } {
            let s = unsafe { &*p_sub };
            let plane = vortex_runtime::image::planes(img.format, s.aspect_mask);
            let plane = plane.first().copied().unwrap_or(vortex_model::abi::format::Aspect::Color);
            let r = img.plane_subresource(plane, s.mip_level, s.array_layer);
            unsafe {
                *p = vk::SubresourceLayout {
                    offset: r.offset,
                    size: r.layer_pitch,
                    row_pitch: r.row_pitch,
                    array_pitch: r.layer_pitch,
                    depth_pitch: r.slice_pitch,
                }
            };
        }
    })
}

pub unsafe extern "system" fn create_image_view(
    d: vk::Device,
    p_info: *const vk::ImageViewCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_view: *mut vk::ImageView,
) -> vk::Result {
    guard_device_result("vkCreateImageView", d, || {
        device(d)?;
        // SAFETY: valid create info and live image handle.
        let i = unsafe { &*p_info };
        let image = unsafe { nd::<_, Image>(i.image)? };
        let r = i.subresource_range;
        let range = ViewRange {
            aspect: r.aspect_mask,
            base_level: r.base_mip_level,
            level_count: r.level_count,
            base_layer: r.base_array_layer,
            layer_count: r.layer_count,
        };
        let view = ImageView::new(image, i.view_type, i.format, range)?;
        // SAFETY: valid output pointer.
        unsafe { *p_view = nd_new(Arc::new(view)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_image_view(
    d: vk::Device,
    v: vk::ImageView,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live view handle or null.
    guard_device_void("vkDestroyImageView", d, || unsafe { nd_destroy::<_, ImageView>(v) })
}
