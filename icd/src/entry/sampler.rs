//! Samplers: `VkSamplerCreateInfo` (with a custom border colour when chained) becomes the
//! runtime's sampler record.

use super::device::device;
use crate::handle::{guard_device_result, guard_device_void, nd_destroy, nd_new};
use crate::util::find_in;
use ash::vk;
use std::sync::Arc;
use vortex_runtime::sampler::{Sampler, SamplerDesc};

pub unsafe extern "system" fn create_sampler(
    d: vk::Device,
    p_info: *const vk::SamplerCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_sampler: *mut vk::Sampler,
) -> vk::Result {
    guard_device_result("vkCreateSampler", d, || {
        device(d)?;
        // SAFETY: valid create info.
        let i = unsafe { &*p_info };
        // SAFETY: the create info's chain.
        let custom = unsafe {
            find_in::<vk::SamplerCustomBorderColorCreateInfoEXT>(
                i.p_next,
                vk::StructureType::SAMPLER_CUSTOM_BORDER_COLOR_CREATE_INFO_EXT,
            )
        };
        let desc = SamplerDesc {
            mag_filter: i.mag_filter,
            min_filter: i.min_filter,
            mipmap_mode: i.mipmap_mode,
            address: [i.address_mode_u, i.address_mode_v, i.address_mode_w],
            mip_lod_bias: i.mip_lod_bias,
            anisotropy: i.anisotropy_enable != 0,
            compare: (i.compare_enable != 0).then_some(i.compare_op),
            min_lod: i.min_lod,
            max_lod: i.max_lod,
            border_color: i.border_color,
            // SAFETY: the union is four 32-bit words whichever member was written.
            custom_border: custom.map_or([0; 4], |c| unsafe { c.custom_border_color.uint32 }),
            unnormalized: i.unnormalized_coordinates != 0,
        };
        let s = Sampler::new(desc)?;
        // SAFETY: valid output pointer.
        unsafe { *p_sampler = nd_new(Arc::new(s)) };
        Ok(vk::Result::SUCCESS)
    })
}

pub unsafe extern "system" fn destroy_sampler(d: vk::Device, s: vk::Sampler, _a: *const vk::AllocationCallbacks<'_>) {
    // SAFETY: a live sampler handle or null.
    guard_device_void("vkDestroySampler", d, || unsafe { nd_destroy::<_, Sampler>(s) })
}
