//! The sampler record (`abi::gfx::sampler`) as the texture unit uses it. The record holds
//! Vulkan's numbers; the ones the unit tells apart are named here.

use crate::abi::gfx::sampler as rec;
use crate::abi::{rd_f32, rd_u32};

/// `VkSamplerAddressMode`.
pub mod address {
    pub const REPEAT: u32 = 0;
    pub const MIRRORED_REPEAT: u32 = 1;
    pub const CLAMP_TO_EDGE: u32 = 2;
    pub const CLAMP_TO_BORDER: u32 = 3;
    pub const MIRROR_CLAMP_TO_EDGE: u32 = 4;
}

/// `VkBorderColor`.
pub mod border {
    pub const FLOAT_TRANSPARENT_BLACK: u32 = 0;
    pub const INT_TRANSPARENT_BLACK: u32 = 1;
    pub const FLOAT_OPAQUE_BLACK: u32 = 2;
    pub const INT_OPAQUE_BLACK: u32 = 3;
    pub const FLOAT_OPAQUE_WHITE: u32 = 4;
    pub const INT_OPAQUE_WHITE: u32 = 5;
    /// `VK_EXT_custom_border_color`: the record's `CUSTOM_BORDER` words.
    pub const FLOAT_CUSTOM: u32 = 1_000_287_003;
    pub const INT_CUSTOM: u32 = 1_000_287_004;
}

/// `VkCompareOp`.
pub mod compare {
    pub const NEVER: u32 = 0;
    pub const LESS: u32 = 1;
    pub const EQUAL: u32 = 2;
    pub const LESS_OR_EQUAL: u32 = 3;
    pub const GREATER: u32 = 4;
    pub const NOT_EQUAL: u32 = 5;
    pub const GREATER_OR_EQUAL: u32 = 6;
    pub const ALWAYS: u32 = 7;
}

/// `VK_FILTER_LINEAR` and `VK_SAMPLER_MIPMAP_MODE_LINEAR`.
const LINEAR: u32 = 1;

/// A decoded sampler record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampler {
    pub mag_linear: bool,
    pub min_linear: bool,
    pub mip_linear: bool,
    /// U, V, W address modes ([`address`]).
    pub address: [u32; 3],
    /// `mipLodBias` (the unit clamps it, with the shader's bias, to `MAX_LOD_BIAS`).
    pub bias: f32,
    /// `VkCompareOp` of `OpImage*Dref*` instructions.
    pub compare_op: u32,
    pub unnormalized: bool,
    pub min_lod: f32,
    pub max_lod: f32,
    /// The border colour as four register words: f32 bits for the float colours, integers
    /// for the integer ones (custom colours as the record gives them).
    pub border: [u32; 4],
}

impl Sampler {
    pub fn parse(b: &[u8]) -> Sampler {
        let flags = rd_u32(b, rec::FLAGS);
        let custom = [0, 1, 2, 3].map(|k| rd_u32(b, rec::CUSTOM_BORDER + 4 * k));
        Sampler {
            mag_linear: rd_u32(b, rec::MAG_FILTER) == LINEAR,
            min_linear: rd_u32(b, rec::MIN_FILTER) == LINEAR,
            mip_linear: rd_u32(b, rec::MIPMAP_MODE) == LINEAR,
            address: [rec::ADDRESS_U, rec::ADDRESS_V, rec::ADDRESS_W].map(|o| rd_u32(b, o)),
            bias: rd_f32(b, rec::MIP_LOD_BIAS),
            compare_op: rd_u32(b, rec::COMPARE_OP),
            unnormalized: flags & rec::flags::UNNORMALIZED != 0,
            min_lod: rd_f32(b, rec::MIN_LOD),
            max_lod: rd_f32(b, rec::MAX_LOD),
            border: border_words(rd_u32(b, rec::BORDER_COLOR), custom),
        }
    }
}

/// The spec's border colour table ("Texel Replacement") as register words.
fn border_words(color: u32, custom: [u32; 4]) -> [u32; 4] {
    let one = 1.0f32.to_bits();
    match color {
        border::FLOAT_OPAQUE_BLACK => [0, 0, 0, one],
        border::INT_OPAQUE_BLACK => [0, 0, 0, 1],
        border::FLOAT_OPAQUE_WHITE => [one; 4],
        border::INT_OPAQUE_WHITE => [1; 4],
        border::FLOAT_CUSTOM | border::INT_CUSTOM => custom,
        // Both transparent blacks, and colours the unit does not know.
        _ => [0; 4],
    }
}

/// `VkCompareOp` `op` with the shader's reference `r` and the texel's value `t` as its
/// reference and test values ("Depth Compare Operation"): `LESS` passes when `r < t`.
pub fn compare(op: u32, r: f32, t: f32) -> bool {
    match op {
        compare::LESS => r < t,
        compare::EQUAL => r == t,
        compare::LESS_OR_EQUAL => r <= t,
        compare::GREATER => r > t,
        compare::NOT_EQUAL => r != t,
        compare::GREATER_OR_EQUAL => r >= t,
        compare::ALWAYS => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{wr_f32, wr_u32};

    #[test]
    fn record_fields_and_border_colours() {
        let mut b = [0u8; rec::BYTES];
        wr_u32(&mut b, rec::MAG_FILTER, 1);
        wr_u32(&mut b, rec::MIPMAP_MODE, 1);
        wr_u32(&mut b, rec::ADDRESS_V, address::MIRRORED_REPEAT);
        wr_f32(&mut b, rec::MIP_LOD_BIAS, -1.5);
        wr_u32(&mut b, rec::FLAGS, rec::flags::COMPARE | rec::flags::UNNORMALIZED);
        wr_u32(&mut b, rec::COMPARE_OP, compare::GREATER);
        wr_f32(&mut b, rec::MAX_LOD, 3.0);
        wr_u32(&mut b, rec::BORDER_COLOR, border::FLOAT_OPAQUE_WHITE);
        let s = Sampler::parse(&b);
        assert!(s.mag_linear && !s.min_linear && s.mip_linear && s.unnormalized);
        assert_eq!((s.address, s.bias, s.compare_op, s.max_lod), ([0, 1, 0], -1.5, compare::GREATER, 3.0));
        assert_eq!(s.border, [1.0f32.to_bits(); 4]);
        assert_eq!(border_words(border::INT_OPAQUE_BLACK, [9; 4]), [0, 0, 0, 1]);
        assert_eq!(border_words(border::INT_CUSTOM, [9, 8, 7, 6]), [9, 8, 7, 6]);
        assert_eq!(border_words(border::FLOAT_TRANSPARENT_BLACK, [9; 4]), [0; 4]);
    }

    #[test]
    fn compare_ops_put_the_reference_first() {
        let table = [
            (compare::NEVER, [false, false, false]),
            (compare::LESS, [true, false, false]),
            (compare::EQUAL, [false, true, false]),
            (compare::LESS_OR_EQUAL, [true, true, false]),
            (compare::GREATER, [false, false, true]),
            (compare::NOT_EQUAL, [true, false, true]),
            (compare::GREATER_OR_EQUAL, [false, true, true]),
            (compare::ALWAYS, [true, true, true]),
        ];
        // The reference below, at and above the texel's 0.5.
        for (op, want) in table {
            assert_eq!([0.25, 0.5, 0.75].map(|r| compare(op, r, 0.5)), want, "op {op}");
        }
    }
}
