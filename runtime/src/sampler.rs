//! `VkSampler`: the texture unit's sampler record (`abi::gfx::sampler`), built once at
//! creation. Descriptor writes copy the record into the set (a combined image sampler puts
//! it after the image record), so a sampler needs no device memory of its own.

use crate::{vk, VkResult};
use vortex_model::abi::gfx::sampler as rec;
use vortex_model::abi::kernel::desc;
use vortex_model::abi::{wr_f32, wr_u32};

/// What `VkSamplerCreateInfo` (and its custom border colour) asks for, in Vulkan's numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplerDesc {
    pub mag_filter: vk::Filter,
    pub min_filter: vk::Filter,
    pub mipmap_mode: vk::SamplerMipmapMode,
    /// U, V, W.
    pub address: [vk::SamplerAddressMode; 3],
    pub mip_lod_bias: f32,
    pub anisotropy: bool,
    /// The depth comparison, when enabled.
    pub compare: Option<vk::CompareOp>,
    pub min_lod: f32,
    pub max_lod: f32,
    pub border_color: vk::BorderColor,
    /// `VkSamplerCustomBorderColorCreateInfoEXT::customBorderColor` (raw words).
    pub custom_border: [u32; 4],
    pub unnormalized: bool,
}

impl Default for SamplerDesc {
    fn default() -> Self {
        SamplerDesc {
            mag_filter: vk::Filter::NEAREST,
            min_filter: vk::Filter::NEAREST,
            mipmap_mode: vk::SamplerMipmapMode::NEAREST,
            address: [vk::SamplerAddressMode::REPEAT; 3],
            mip_lod_bias: 0.0,
            anisotropy: false,
            compare: None,
            min_lod: 0.0,
            max_lod: 0.0,
            border_color: vk::BorderColor::FLOAT_TRANSPARENT_BLACK,
            custom_border: [0; 4],
            unnormalized: false,
        }
    }
}

/// Largest `|mipLodBias|` (`maxSamplerLodBias`).
pub const MAX_LOD_BIAS: f32 = 15.0;

pub struct Sampler {
    pub desc: SamplerDesc,
    /// The record descriptor writes copy.
    pub record: [u8; desc::BYTES],
}

impl Sampler {
    pub fn new(d: SamplerDesc) -> VkResult<Sampler> {
        let refuse = |why: &str| {
            tracing::error!("vkCreateSampler: {why}");
            Err(vk::Result::ERROR_FEATURE_NOT_PRESENT)
        };
        if d.anisotropy {
            return refuse("anisotropic filtering is not supported (samplerAnisotropy is false)");
        }
        let mirror_once = vk::SamplerAddressMode::MIRROR_CLAMP_TO_EDGE;
        if d.address.contains(&mirror_once) {
            return refuse("MIRROR_CLAMP_TO_EDGE is not supported (samplerMirrorClampToEdge is false)");
        }
        if d.min_lod.is_nan() || d.max_lod.is_nan() || d.min_lod > d.max_lod {
            return refuse(&format!("minLod {} above maxLod {}", d.min_lod, d.max_lod));
        }
        if d.unnormalized {
            // Vulkan's rules for unnormalized coordinates: one level, no mipmapping, edge or
            // border clamping, no comparison.
            let clamps = |m: &vk::SamplerAddressMode| {
                matches!(*m, vk::SamplerAddressMode::CLAMP_TO_EDGE | vk::SamplerAddressMode::CLAMP_TO_BORDER)
            };
            if d.mag_filter != d.min_filter
                || d.mipmap_mode != vk::SamplerMipmapMode::NEAREST
                || d.min_lod != 0.0
                || d.max_lod != 0.0
                || !d.address[..2].iter().all(clamps)
                || d.compare.is_some()
            {
                return refuse("unnormalized coordinates with filters, LODs, address modes or compare they exclude");
            }
        }
        Ok(Sampler { record: encode(&d), desc: d })
    }
}

/// The `abi::gfx::sampler` record of `d`. The LOD bias is clamped to the reported range, as
/// Vulkan has the implementation do.
pub fn encode(d: &SamplerDesc) -> [u8; desc::BYTES] {
    let mut r = [0u8; desc::BYTES];
    let raw = |v: i32| v as u32;
    wr_u32(&mut r, rec::MAG_FILTER, raw(d.mag_filter.as_raw()));
    wr_u32(&mut r, rec::MIN_FILTER, raw(d.min_filter.as_raw()));
    wr_u32(&mut r, rec::MIPMAP_MODE, raw(d.mipmap_mode.as_raw()));
    for (k, off) in [rec::ADDRESS_U, rec::ADDRESS_V, rec::ADDRESS_W].into_iter().enumerate() {
        wr_u32(&mut r, off, raw(d.address[k].as_raw()));
    }
    wr_f32(&mut r, rec::MIP_LOD_BIAS, d.mip_lod_bias.clamp(-MAX_LOD_BIAS, MAX_LOD_BIAS));
    let mut flags = 0;
    if d.compare.is_some() {
        flags |= rec::flags::COMPARE;
    }
    if d.unnormalized {
        flags |= rec::flags::UNNORMALIZED;
    }
    wr_u32(&mut r, rec::FLAGS, flags);
    wr_u32(&mut r, rec::COMPARE_OP, raw(d.compare.unwrap_or(vk::CompareOp::NEVER).as_raw()));
    wr_f32(&mut r, rec::MIN_LOD, d.min_lod);
    wr_f32(&mut r, rec::MAX_LOD, d.max_lod);
    wr_u32(&mut r, rec::BORDER_COLOR, raw(d.border_color.as_raw()));
    for (k, w) in d.custom_border.iter().enumerate() {
        wr_u32(&mut r, rec::CUSTOM_BORDER + 4 * k, *w);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use vortex_model::abi::{rd_f32, rd_u32};

    #[test]
    fn every_field_lands_in_its_word() {
        let d = SamplerDesc {
            mag_filter: vk::Filter::LINEAR,
            min_filter: vk::Filter::NEAREST,
            mipmap_mode: vk::SamplerMipmapMode::LINEAR,
            address: [
                vk::SamplerAddressMode::MIRRORED_REPEAT,
                vk::SamplerAddressMode::CLAMP_TO_EDGE,
                vk::SamplerAddressMode::CLAMP_TO_BORDER,
            ],
            mip_lod_bias: 100.0,
            compare: Some(vk::CompareOp::GREATER_OR_EQUAL),
            min_lod: 0.5,
            max_lod: 7.25,
            border_color: vk::BorderColor::INT_CUSTOM_EXT,
            custom_border: [1, 2, 3, 4],
            ..Default::default()
        };
        let r = Sampler::new(d).unwrap().record;
        assert_eq!(rd_u32(&r, rec::MAG_FILTER), 1);
        assert_eq!(rd_u32(&r, rec::MIN_FILTER), 0);
        assert_eq!(rd_u32(&r, rec::MIPMAP_MODE), 1);
        assert_eq!([rd_u32(&r, rec::ADDRESS_U), rd_u32(&r, rec::ADDRESS_V), rd_u32(&r, rec::ADDRESS_W)], [1, 2, 3]);
        assert_eq!(rd_f32(&r, rec::MIP_LOD_BIAS), MAX_LOD_BIAS, "clamped to maxSamplerLodBias");
        assert_eq!(rd_u32(&r, rec::FLAGS), rec::flags::COMPARE);
        assert_eq!(rd_u32(&r, rec::COMPARE_OP), vk::CompareOp::GREATER_OR_EQUAL.as_raw() as u32);
        assert_eq!((rd_f32(&r, rec::MIN_LOD), rd_f32(&r, rec::MAX_LOD)), (0.5, 7.25));
        assert_eq!(rd_u32(&r, rec::BORDER_COLOR), vk::BorderColor::INT_CUSTOM_EXT.as_raw() as u32);
        assert_eq!(rd_u32(&r, rec::CUSTOM_BORDER + 12), 4);
    }

    #[test]
    fn refuses_what_the_texture_unit_does_not_do() {
        assert!(Sampler::new(SamplerDesc { anisotropy: true, ..Default::default() }).is_err());
        assert!(Sampler::new(SamplerDesc { min_lod: 2.0, max_lod: 1.0, ..Default::default() }).is_err());
        let unnorm = SamplerDesc {
            unnormalized: true,
            address: [vk::SamplerAddressMode::CLAMP_TO_EDGE; 3],
            ..Default::default()
        };
        let s = Sampler::new(unnorm).unwrap();
        assert_eq!(rd_u32(&s.record, rec::FLAGS), rec::flags::UNNORMALIZED);
        assert!(Sampler::new(SamplerDesc { max_lod: 1.0, ..unnorm }).is_err());
    }
}
