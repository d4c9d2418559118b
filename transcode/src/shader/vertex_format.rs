//! The vertex attribute formats a vertex kernel's fetch converts (`lower/stage/fetch.rs`):
//! where each component of an element is and how it becomes a shader value. The runtime
//! advertises `VERTEX_BUFFER` for exactly these ([`vertex_formats`]).
//!
//! Values are `VkFormat` numbers (the model and the compiler do not link Vulkan headers).

/// How a stored component becomes the shader's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VertexKind {
    /// `c / (2^bits - 1)`.
    Unorm,
    /// `max(c / (2^(bits-1) - 1), -1)`.
    Snorm,
    /// The integer as a float.
    Uscaled,
    Sscaled,
    /// The integer (signed ones sign-extended).
    Uint,
    Sint,
    /// IEEE half (16-bit) or single (32-bit).
    Sfloat,
}

impl VertexKind {
    /// True when the shader sees floats.
    pub const fn is_float(self) -> bool {
        !matches!(self, VertexKind::Uint | VertexKind::Sint)
    }

    /// True when stored components are sign-extended.
    pub const fn is_signed(self) -> bool {
        matches!(self, VertexKind::Snorm | VertexKind::Sscaled | VertexKind::Sint)
    }
}

/// One vertex attribute format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexFormat {
    pub vk: u32,
    pub kind: VertexKind,
    /// Components, RGBA order.
    pub comps: u32,
    /// Bits of component `c` (RGBA order).
    pub bits: [u8; 4],
    /// Packed formats (`*_PACK32`): the element is one little-endian word and component `c`
    /// is at bit `at[c]`. Array formats: component `c` is its own little-endian value at
    /// byte `at[c]` (BGR-ordered formats store R at byte 2).
    pub packed: bool,
    pub at: [u8; 4],
    /// Bytes of the whole attribute.
    pub bytes: u32,
}

use VertexKind::*;

/// The kinds of a family of formats, in `VkFormat` order: 8-bit families (`SRGB`, last, is
/// not offered), 16-bit ones and 32-bit ones.
const K8: [VertexKind; 6] = [Unorm, Snorm, Uscaled, Sscaled, Uint, Sint];
const K16: [VertexKind; 7] = [Unorm, Snorm, Uscaled, Sscaled, Uint, Sint, Sfloat];
const K32: [VertexKind; 3] = [Uint, Sint, Sfloat];

/// Array families: first `VkFormat`, kinds, components, bits per component, BGR order.
const ARRAYS: [(u32, &[VertexKind], u32, u8, bool); 15] = [
    (9, &K8, 1, 8, false),     // R8_*
    (16, &K8, 2, 8, false),    // R8G8_*
    (23, &K8, 3, 8, false),    // R8G8B8_*
    (30, &K8, 3, 8, true),     // B8G8R8_*
    (37, &K8, 4, 8, false),    // R8G8B8A8_*
    (44, &K8, 4, 8, true),     // B8G8R8A8_*
    (51, &K8, 4, 8, false),    // A8B8G8R8_*_PACK32: R in the low byte, as R8G8B8A8
    (70, &K16, 1, 16, false),  // R16_*
    (77, &K16, 2, 16, false),  // R16G16_*
    (84, &K16, 3, 16, false),  // R16G16B16_*
    (91, &K16, 4, 16, false),  // R16G16B16A16_*
    (98, &K32, 1, 32, false),  // R32_*
    (101, &K32, 2, 32, false), // R32G32_*
    (104, &K32, 3, 32, false), // R32G32B32_*
    (107, &K32, 4, 32, false), // R32G32B32A32_*
];

/// The 10:10:10:2 packed families: first `VkFormat` and whether R is in the high bits.
const PACKED: [(u32, bool); 2] = [
    (58, true),  // A2R10G10B10_*_PACK32
    (64, false), // A2B10G10R10_*_PACK32
];

/// The format `vk`, if the fetch converts it.
pub fn vertex_format(vk: u32) -> Option<VertexFormat> {
    for (first, kinds, comps, bits, bgr) in ARRAYS {
        if let Some(&kind) = vk.checked_sub(first).and_then(|k| kinds.get(k as usize)) {
            let b = bits / 8;
            let mut at = [0, b, 2 * b, 3 * b];
            if bgr {
                at.swap(0, 2);
            }
            let bits = [bits; 4];
            return Some(VertexFormat { vk, kind, comps, bits, packed: false, at, bytes: comps * b as u32 });
        }
    }
    for (first, r_high) in PACKED {
        if let Some(&kind) = vk.checked_sub(first).and_then(|k| K8.get(k as usize)) {
            let at = if r_high { [20, 10, 0, 30] } else { [0, 10, 20, 30] };
            return Some(VertexFormat { vk, kind, comps: 4, bits: [10, 10, 10, 2], packed: true, at, bytes: 4 });
        }
    }
    None
}

/// Every format [`vertex_format`] converts, in `VkFormat` order.
pub fn vertex_formats() -> impl Iterator<Item = u32> {
    (0..=ARRAYS[ARRAYS.len() - 1].0 + 2).filter(|&vk| vertex_format(vk).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        let f = vertex_format(44).unwrap(); // B8G8R8A8_UNORM
        assert_eq!((f.kind, f.comps, f.at, f.bytes), (Unorm, 4, [2, 1, 0, 3], 4));
        let f = vertex_format(106).unwrap(); // R32G32B32_SFLOAT
        assert_eq!((f.kind, f.comps, f.bits[0], f.bytes), (Sfloat, 3, 32, 12));
        let f = vertex_format(59).unwrap(); // A2R10G10B10_SNORM_PACK32
        assert_eq!((f.kind, f.packed, f.at), (Snorm, true, [20, 10, 0, 30]));
        let f = vertex_format(68).unwrap(); // A2B10G10R10_UINT_PACK32
        assert_eq!((f.kind, f.at[0], f.bits), (Uint, 0, [10, 10, 10, 2]));
        assert_eq!(vertex_format(76).unwrap().kind, Sfloat); // R16_SFLOAT
        assert_eq!(vertex_format(15), None); // R8_SRGB
        assert_eq!(vertex_format(110), None); // R64_UINT
        assert_eq!(vertex_format(122), None); // B10G11R11_UFLOAT_PACK32
        assert_eq!(vertex_formats().count(), 6 * 7 + 7 * 4 + 3 * 4 + 6 * 2);
    }
}
