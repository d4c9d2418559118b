//! Descriptor set layouts, pools, sets and updates.
//!
//! A set's handle is the pointer of the `Arc` its pool holds (the pool owns every set it
//! allocated; freeing or resetting the pool drops them). Commands that bind a set take their
//! own `Arc`, so a set freed while a recorded stream uses it stays alive until the stream
//! finishes.

use super::device::device;
use crate::handle::{guard_device_result, guard_device_void, nd, nd_destroy, nd_new};
use crate::util::{find_in, slice};
use ash::vk::{self, Handle};
use std::sync::Arc;
use vortex_runtime::accel::AccelStruct;
use vortex_runtime::buffer::{Buffer, BufferView};
use vortex_runtime::descriptor::{DescriptorPool, DescriptorSet, LayoutBinding, SetLayout};
use vortex_runtime::image::ImageView;
use vortex_runtime::sampler::Sampler;

/// An `Arc` to the set behind a handle (the pool keeps the set alive while the handle is
/// valid).
///
/// # Safety
/// `h` must be a live descriptor-set handle.
pub unsafe fn set(h: vk::DescriptorSet) -> Option<Arc<DescriptorSet>> {
    let p = h.as_raw() as *const DescriptorSet;
    if p.is_null() {
        return None;
    }
    // SAFETY: the pool holds a strong count; we add one for the returned Arc.
    unsafe {
        Arc::increment_strong_count(p);
        Some(Arc::from_raw(p))
    }
}

pub unsafe extern "system" fn create_descriptor_set_layout(
    d: vk::Device,
    p_info: *const vk::DescriptorSetLayoutCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_layout: *mut vk::DescriptorSetLayout,
) -> vk::Result {
    guard_device_result("vkCreateDescriptorSetLayout", d, || {
        device(d)?;
        // SAFETY: valid create info.
        let info = unsafe { &*p_info };
        let bindings = unsafe { slice(info.p_bindings, info.binding_count) };
        let mut raw = Vec::with_capacity(bindings.len());
        for b in bindings {
            let samplers = match b.descriptor_type {
                vk::DescriptorType::SAMPLER | vk::DescriptorType::COMBINED_IMAGE_SAMPLER => {
                    // SAFETY: pImmutableSamplers holds descriptorCount live handles when set.
                    unsafe { slice(b.p_immutable_samplers, b.descriptor_count) }
                }
                _ => &[],
            };
            // SAFETY: live sampler handles.
            let immutable = samplers.iter().map(|&s| unsafe { nd::<_, Sampler>(s) }).collect::<Result<_, _>>()?;
            raw.push(LayoutBinding { binding: b.binding, ty: b.descriptor_type, count: b.descriptor_count, immutable });
        }
        // SAFETY: valid output pointer.
        unsafe { *p_layout = nd_new(Arc::new(SetLayout::with_bindings(raw))) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_descriptor_set_layout(
    d: vk::Device,
    l: vk::DescriptorSetLayout,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live layout handle or null.
    guard_device_void("vkDestroyDescriptorSetLayout", d, || unsafe { nd_destroy::<_, SetLayout>(l) })
}

pub unsafe extern "system" fn get_descriptor_set_layout_support(
    d: vk::Device,
    _p_info: *const vk::DescriptorSetLayoutCreateInfo<'_>,
    p: *mut vk::DescriptorSetLayoutSupport<'_>,
) {
    // SAFETY: valid output pointer; every layout is supported.
    guard_device_void("vkGetDescriptorSetLayoutSupport", d, || unsafe { (*p).supported = vk::TRUE })
}

pub unsafe extern "system" fn create_descriptor_pool(
    d: vk::Device,
    p_info: *const vk::DescriptorPoolCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_pool: *mut vk::DescriptorPool,
) -> vk::Result {
    guard_device_result("vkCreateDescriptorPool", d, || {
        device(d)?;
        // SAFETY: valid create info and output pointer.
        let max = unsafe { (*p_info).max_sets };
        unsafe { *p_pool = nd_new(Arc::new(DescriptorPool::new(max))) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_descriptor_pool(
    d: vk::Device,
    p: vk::DescriptorPool,
    _a: *const vk::AllocationCallbacks<'_>,
) {
    // SAFETY: a live pool handle or null; dropping it drops its sets.
    guard_device_void("vkDestroyDescriptorPool", d, || unsafe { nd_destroy::<_, DescriptorPool>(p) })
}

pub unsafe extern "system" fn reset_descriptor_pool(
    d: vk::Device,
    p: vk::DescriptorPool,
    _f: vk::DescriptorPoolResetFlags,
) -> vk::Result {
    guard_device_result("vkResetDescriptorPool", d, || {
        // SAFETY: live pool handle.
        unsafe { nd::<_, DescriptorPool>(p)? }.reset();
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn allocate_descriptor_sets(
    d: vk::Device,
    p_info: *const vk::DescriptorSetAllocateInfo<'_>,
    p_sets: *mut vk::DescriptorSet,
) -> vk::Result {
    guard_device_result("vkAllocateDescriptorSets", d, || {
        let dev = device(d)?;
        // SAFETY: valid allocate info and live pool handle.
        let info = unsafe { &*p_info };
        let pool = unsafe { nd::<_, DescriptorPool>(info.descriptor_pool)? };
        let layouts = unsafe { slice(info.p_set_layouts, info.descriptor_set_count) };
        let mut made = Vec::new();
        for &l in layouts {
            // SAFETY: live layout handle.
            let layout = unsafe { nd::<_, SetLayout>(l)? };
            match pool.allocate(&dev.rt.space, layout) {
                Ok(s) => made.push(s),
                Err(e) => {
                    for s in &made {
                        pool.free(Arc::as_ptr(s));
                    }
                    return Err(e);
                }
            }
        }
        for (i, s) in made.iter().enumerate() {
            // SAFETY: the output array holds descriptor_set_count handles.
            unsafe { *p_sets.add(i) = vk::DescriptorSet::from_raw(Arc::as_ptr(s) as u64) };
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn free_descriptor_sets(
    d: vk::Device,
    p: vk::DescriptorPool,
    count: u32,
    p_sets: *const vk::DescriptorSet,
) -> vk::Result {
    guard_device_result("vkFreeDescriptorSets", d, || {
        // SAFETY: live pool handle and set array.
        let pool = unsafe { nd::<_, DescriptorPool>(p)? };
        for &s in unsafe { slice(p_sets, count) } {
            if s.as_raw() != 0 {
                pool.free(s.as_raw() as *const DescriptorSet);
            }
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn update_descriptor_sets(
    d: vk::Device,
    write_count: u32,
    p_writes: *const vk::WriteDescriptorSet<'_>,
    copy_count: u32,
    p_copies: *const vk::CopyDescriptorSet<'_>,
) {
    guard_device_void("vkUpdateDescriptorSets", d, || {
        // SAFETY: write/copy arrays per the API contract.
        for w in unsafe { slice(p_writes, write_count) } {
            // SAFETY: forwarded pointers of a valid write.
            if let Err(e) = unsafe { apply_write(w) } {
                tracing::error!("vkUpdateDescriptorSets: {e:?}");
            }
        }
        for c in unsafe { slice(p_copies, copy_count) } {
            // SAFETY: live set handles.
            let (Some(src), Some(dst)) = (unsafe { set(c.src_set) }, unsafe { set(c.dst_set) }) else { continue };
            if let Err(e) = dst.copy_from(
                c.dst_binding,
                c.dst_array_element,
                &src,
                c.src_binding,
                c.src_array_element,
                c.descriptor_count,
            ) {
                tracing::error!("vkUpdateDescriptorSets copy: {e:?}");
            }
        }
    })
}

unsafe fn apply_write(w: &vk::WriteDescriptorSet<'_>) -> Result<(), vk::Result> {
    // SAFETY: live set handle per the API contract.
    let s = unsafe { set(w.dst_set) }.ok_or(vk::Result::ERROR_UNKNOWN)?;
    let n = w.descriptor_count;
    match w.descriptor_type {
        vk::DescriptorType::STORAGE_BUFFER
        | vk::DescriptorType::UNIFORM_BUFFER
        | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC
        | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC => {
            // SAFETY: buffer infos of the write.
            for (i, b) in unsafe { slice(w.p_buffer_info, n) }.iter().enumerate() {
                let (addr, range) = if b.buffer == vk::Buffer::null() {
                    (0, 0)
                } else {
                    // SAFETY: live buffer handle.
                    let buf = unsafe { nd::<_, Buffer>(b.buffer)? };
                    let range = if b.range == vk::WHOLE_SIZE { buf.size.saturating_sub(b.offset) } else { b.range };
                    (buf.address_at(b.offset)?, range)
                };
                s.write_buffer(w.dst_binding, w.dst_array_element + i as u32, addr, range)?;
            }
        }
        vk::DescriptorType::STORAGE_IMAGE => {
            // SAFETY: image infos of the write.
            for (i, im) in unsafe { slice(w.p_image_info, n) }.iter().enumerate() {
                let desc = if im.image_view == vk::ImageView::null() {
                    Default::default()
                } else {
                    // SAFETY: live view handle.
                    unsafe { nd::<_, ImageView>(im.image_view)? }.descriptor()?
                };
                s.write_image(w.dst_binding, w.dst_array_element + i as u32, &desc)?;
            }
        }
        vk::DescriptorType::UNIFORM_TEXEL_BUFFER | vk::DescriptorType::STORAGE_TEXEL_BUFFER => {
            // SAFETY: texel-buffer views of the write.
            for (i, &v) in unsafe { slice(w.p_texel_buffer_view, n) }.iter().enumerate() {
                let desc = if v == vk::BufferView::null() {
                    Default::default()
                } else {
                    // SAFETY: live view handle.
                    unsafe { nd::<_, BufferView>(v)? }.descriptor()?
                };
                s.write_image(w.dst_binding, w.dst_array_element + i as u32, &desc)?;
            }
        }
        vk::DescriptorType::ACCELERATION_STRUCTURE_KHR => {
            // SAFETY: the acceleration-structure write chained to this write.
            let a = unsafe {
                find_in::<vk::WriteDescriptorSetAccelerationStructureKHR>(
                    w.p_next,
                    vk::StructureType::WRITE_DESCRIPTOR_SET_ACCELERATION_STRUCTURE_KHR,
                )
            }
            .ok_or_else(|| {
                tracing::error!("acceleration-structure descriptor write without its pNext structure");
                vk::Result::ERROR_UNKNOWN
            })?;
            // SAFETY: the structure array of that write.
            for (i, &h) in
                unsafe { slice(a.p_acceleration_structures, a.acceleration_structure_count) }.iter().enumerate()
            {
                // A null handle is a null descriptor: queries on it miss.
                let addr = if h.as_raw() == 0 { 0 } else { unsafe { nd::<_, AccelStruct>(h)? }.address() };
                s.write_accel(w.dst_binding, w.dst_array_element + i as u32, addr)?;
            }
        }
        vk::DescriptorType::SAMPLER
        | vk::DescriptorType::SAMPLED_IMAGE
        | vk::DescriptorType::COMBINED_IMAGE_SAMPLER
        | vk::DescriptorType::INPUT_ATTACHMENT => {
            // SAFETY: image infos of the write.
            for (i, im) in unsafe { slice(w.p_image_info, n) }.iter().enumerate() {
                // SAFETY: live handles of the write.
                unsafe { write_image_info(&s, w.descriptor_type, w.dst_binding, w.dst_array_element + i as u32, im) }?;
            }
        }
        other => {
            tracing::warn!("descriptor type {other:?} is not supported; the descriptors stay null");
        }
    }
    Ok(())
}

/// One element of a sampler, sampled-image, combined or input-attachment write: the image
/// record (null view: a zero record) and/or the sampler record.
///
/// # Safety
/// The handles in `im` that `ty` uses must be live or null.
unsafe fn write_image_info(
    s: &DescriptorSet,
    ty: vk::DescriptorType,
    binding: u32,
    element: u32,
    im: &vk::DescriptorImageInfo,
) -> Result<(), vk::Result> {
    if ty != vk::DescriptorType::SAMPLER {
        let rec = if im.image_view == vk::ImageView::null() {
            [0; vortex_model::abi::kernel::desc::BYTES]
        } else {
            // SAFETY: live view handle.
            unsafe { nd::<_, ImageView>(im.image_view)? }.sampled_record()?
        };
        s.write_sampled_image(binding, element, &rec)?;
    }
    let with_sampler = matches!(ty, vk::DescriptorType::SAMPLER | vk::DescriptorType::COMBINED_IMAGE_SAMPLER);
    // A binding with immutable samplers ignores the handle, which may be anything.
    if with_sampler && im.sampler != vk::Sampler::null() && !s.sampler_is_immutable(binding, element)? {
        // SAFETY: a live sampler handle.
        s.write_sampler(binding, element, &*unsafe { nd::<_, Sampler>(im.sampler)? })?;
    }
    Ok(())
}
