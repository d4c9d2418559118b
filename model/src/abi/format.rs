//! Texel formats the device stores for storage images, and the one conversion between texel
//! bytes and the four 32-bit registers an image load/store moves. The runtime (clears,
//! copies) and the texture path (`ILD`/`IST`) both go through here.
//!
//! Values are `VkFormat` / `VkImageViewType` numbers; the model does not link Vulkan headers.

/// `VkImageViewType` values.
pub mod view_type {
    pub const TYPE_1D: u32 = 0;
    pub const TYPE_2D: u32 = 1;
    pub const TYPE_3D: u32 = 2;
    pub const TYPE_CUBE: u32 = 3;
    pub const TYPE_1D_ARRAY: u32 = 4;
    pub const TYPE_2D_ARRAY: u32 = 5;
    pub const TYPE_CUBE_ARRAY: u32 = 6;
}

/// How a component is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Unorm,
    Snorm,
    Uint,
    Sint,
    Sfloat,
}

/// A texel format: `comps` components of `bits` each, stored in RGBA order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    pub vk: u32,
    pub name: &'static str,
    pub comps: u32,
    pub bits: u32,
    pub kind: Kind,
    /// Stored as BGRA (components 0 and 2 swapped in memory).
    pub bgra: bool,
}

impl Format {
    pub const fn texel_bytes(&self) -> u32 {
        self.comps * self.bits / 8
    }
    /// True if shaders see integer (not float) values.
    pub const fn is_integer(&self) -> bool {
        matches!(self.kind, Kind::Uint | Kind::Sint)
    }
}

macro_rules! formats {
    ($( $name:ident = $vk:literal, $comps:literal, $bits:literal, $kind:ident, $bgra:literal; )*) => {
        $( pub const $name: u32 = $vk; )*
        /// Every format the device can hold in a storage image.
        pub const ALL: &[Format] = &[
            $( Format { vk: $vk, name: stringify!($name), comps: $comps, bits: $bits, kind: Kind::$kind, bgra: $bgra }, )*
        ];
    };
}

formats! {
    R8_UNORM = 9, 1, 8, Unorm, false;
    R8_SNORM = 10, 1, 8, Snorm, false;
    R8_UINT = 13, 1, 8, Uint, false;
    R8_SINT = 14, 1, 8, Sint, false;
    R8G8_UNORM = 16, 2, 8, Unorm, false;
    R8G8_SNORM = 17, 2, 8, Snorm, false;
    R8G8_UINT = 20, 2, 8, Uint, false;
    R8G8_SINT = 21, 2, 8, Sint, false;
    R8G8B8A8_UNORM = 37, 4, 8, Unorm, false;
    R8G8B8A8_SNORM = 38, 4, 8, Snorm, false;
    R8G8B8A8_UINT = 41, 4, 8, Uint, false;
    R8G8B8A8_SINT = 42, 4, 8, Sint, false;
    B8G8R8A8_UNORM = 44, 4, 8, Unorm, true;
    R16_UNORM = 70, 1, 16, Unorm, false;
    R16_SNORM = 71, 1, 16, Snorm, false;
    R16_UINT = 74, 1, 16, Uint, false;
    R16_SINT = 75, 1, 16, Sint, false;
    R16_SFLOAT = 76, 1, 16, Sfloat, false;
    R16G16_UNORM = 77, 2, 16, Unorm, false;
    R16G16_SNORM = 78, 2, 16, Snorm, false;
    R16G16_UINT = 81, 2, 16, Uint, false;
    R16G16_SINT = 82, 2, 16, Sint, false;
    R16G16_SFLOAT = 83, 2, 16, Sfloat, false;
    R16G16B16A16_UNORM = 91, 4, 16, Unorm, false;
    R16G16B16A16_SNORM = 92, 4, 16, Snorm, false;
    R16G16B16A16_UINT = 95, 4, 16, Uint, false;
    R16G16B16A16_SINT = 96, 4, 16, Sint, false;
    R16G16B16A16_SFLOAT = 97, 4, 16, Sfloat, false;
    R32_UINT = 98, 1, 32, Uint, false;
    R32_SINT = 99, 1, 32, Sint, false;
    R32_SFLOAT = 100, 1, 32, Sfloat, false;
    R32G32_UINT = 101, 2, 32, Uint, false;
    R32G32_SINT = 102, 2, 32, Sint, false;
    R32G32_SFLOAT = 103, 2, 32, Sfloat, false;
    R32G32B32A32_UINT = 107, 4, 32, Uint, false;
    R32G32B32A32_SINT = 108, 4, 32, Sint, false;
    R32G32B32A32_SFLOAT = 109, 4, 32, Sfloat, false;
}

/// Looks a format up by its `VkFormat` value.
pub fn lookup(vk: u32) -> Option<&'static Format> {
    ALL.iter().find(|f| f.vk == vk)
}

fn read_comp(bytes: &[u8], bits: u32, i: usize) -> u32 {
    match bits {
        8 => bytes[i] as u32,
        16 => u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]) as u32,
        _ => u32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]),
    }
}

fn write_comp(bytes: &mut [u8], bits: u32, i: usize, v: u32) {
    match bits {
        8 => bytes[i] = v as u8,
        16 => bytes[2 * i..2 * i + 2].copy_from_slice(&(v as u16).to_le_bytes()),
        _ => bytes[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes()),
    }
}

/// Texel bytes -> four register values (floats as bits). Missing components read as
/// (0, 0, 0, 1) in the format's own domain.
pub fn decode_texel(f: &Format, bytes: &[u8]) -> [u32; 4] {
    let one = if f.is_integer() { 1 } else { 1.0f32.to_bits() };
    let mut out = [0, 0, 0, one];
    for c in 0..f.comps as usize {
        let mem = if f.bgra && c < 3 { 2 - c } else { c };
        let raw = read_comp(bytes, f.bits, mem);
        let max_u = ((1u64 << f.bits) - 1) as f32;
        let max_s = ((1u64 << (f.bits - 1)) - 1) as f32;
        let sext = |r: u32| -> i32 { ((r << (32 - f.bits)) as i32) >> (32 - f.bits) };
        out[c] = match f.kind {
            Kind::Unorm => (raw as f32 / max_u).to_bits(),
            Kind::Snorm => (sext(raw) as f32 / max_s).max(-1.0).to_bits(),
            Kind::Uint => raw,
            Kind::Sint => sext(raw) as u32,
            Kind::Sfloat => match f.bits {
                16 => half::f16::from_bits(raw as u16).to_f32().to_bits(),
                _ => raw,
            },
        };
    }
    out
}

/// Four register values -> texel bytes (`out` is `texel_bytes` long). Normalised formats
/// clamp and round to nearest; integer formats keep the low bits.
pub fn encode_texel(f: &Format, v: [u32; 4], out: &mut [u8]) {
    for c in 0..f.comps as usize {
        let mem = if f.bgra && c < 3 { 2 - c } else { c };
        let fv = f32::from_bits(v[c]);
        let max_u = ((1u64 << f.bits) - 1) as f32;
        let max_s = ((1u64 << (f.bits - 1)) - 1) as f32;
        let raw = match f.kind {
            Kind::Unorm => {
                let x = if fv.is_nan() { 0.0 } else { fv.clamp(0.0, 1.0) };
                (x * max_u).round_ties_even() as u32
            }
            Kind::Snorm => {
                let x = if fv.is_nan() { 0.0 } else { fv.clamp(-1.0, 1.0) };
                ((x * max_s).round_ties_even() as i32) as u32
            }
            Kind::Uint | Kind::Sint => v[c],
            Kind::Sfloat => match f.bits {
                16 => half::f16::from_f32(fv).to_bits() as u32,
                _ => v[c],
            },
        };
        write_comp(out, f.bits, mem, raw);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_unique_and_sizes_sane() {
        let mut seen = std::collections::HashSet::new();
        for f in ALL {
            assert!(seen.insert(f.vk), "{} duplicated", f.name);
            assert!(matches!(f.texel_bytes(), 1 | 2 | 4 | 8 | 16), "{}", f.name);
        }
        assert_eq!(lookup(R32_SINT).unwrap().texel_bytes(), 4);
        assert_eq!(lookup(R32G32B32A32_SFLOAT).unwrap().texel_bytes(), 16);
        assert!(lookup(106).is_none(), "R32G32B32_SFLOAT is not a storage format");
    }

    #[test]
    fn round_trips() {
        let f = lookup(R8G8B8A8_UNORM).unwrap();
        let mut b = [0u8; 4];
        encode_texel(f, [1.0f32.to_bits(), 0.5f32.to_bits(), 0, 2.0f32.to_bits()], &mut b);
        assert_eq!(b, [255, 128, 0, 255]);
        let back = decode_texel(f, &b);
        assert_eq!(f32::from_bits(back[0]), 1.0);
        assert_eq!(f32::from_bits(back[2]), 0.0);

        let f = lookup(R32_SINT).unwrap();
        let mut b = [0u8; 4];
        encode_texel(f, [(-5i32) as u32, 9, 9, 9], &mut b);
        assert_eq!(decode_texel(f, &b), [(-5i32) as u32, 0, 0, 1]);

        let f = lookup(R16G16B16A16_SFLOAT).unwrap();
        let mut b = [0u8; 8];
        encode_texel(f, [1.5f32.to_bits(), (-2.0f32).to_bits(), 0, 0], &mut b);
        let back = decode_texel(f, &b);
        assert_eq!(f32::from_bits(back[0]), 1.5);
        assert_eq!(f32::from_bits(back[1]), -2.0);

        let f = lookup(B8G8R8A8_UNORM).unwrap();
        let mut b = [0u8; 4];
        encode_texel(f, [1.0f32.to_bits(), 0, 0, 0], &mut b);
        assert_eq!(b, [0, 0, 255, 0], "red lands in byte 2 for BGRA");

        let f = lookup(R8_SNORM).unwrap();
        let back = decode_texel(f, &[0x80]);
        assert_eq!(f32::from_bits(back[0]), -1.0, "-128 clamps to -1");
    }
}
