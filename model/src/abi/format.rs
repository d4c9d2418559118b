//! Texel formats the device stores, what each can serve as ([`cap`]), and the one conversion
//! between texel bytes and the four 32-bit registers a shader sees. The runtime (clears,
//! copies, attachment layout), the texture path (`ILD`/`IST`/`TEX`) and the output merger
//! all go through here.
//!
//! Depth/stencil formats are stored as planes: the depth plane (2 bytes a texel for D16, 4
//! for D24 in the low 24 bits of a word and for D32 float), and for the combined formats a
//! separate S8 stencil plane of one byte a texel after it ([`stencil_plane_offset`]); `S8_UINT`
//! alone is just the stencil plane.
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

/// What a format can serve as (`Format::caps` bits).
pub mod cap {
    /// Storage images and texel buffers (`ILD`/`IST`/`IATOM`).
    pub const STORAGE: u32 = 1 << 0;
    /// Colour attachment (the output merger writes it).
    pub const COLOR: u32 = 1 << 1;
    /// Colour attachment that blends (not integer).
    pub const BLEND: u32 = 1 << 2;
    /// Depth plane of a depth/stencil attachment.
    pub const DEPTH: u32 = 1 << 3;
    /// Stencil plane.
    pub const STENCIL: u32 = 1 << 4;
    /// Sampled image (`TEX`).
    pub const SAMPLED: u32 = 1 << 5;
    /// Linear filtering when sampled.
    pub const FILTER: u32 = 1 << 6;
}

/// How a component is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Unorm,
    Snorm,
    Uint,
    Sint,
    Sfloat,
    /// Unsigned floats without a sign bit (the 11- and 10-bit components of
    /// `B10G11R11_UFLOAT_PACK32`: 5 exponent bits, 6 or 5 mantissa bits).
    Ufloat,
    /// Unorm with the sRGB transfer function on R, G and B ([`srgb_to_linear`]); alpha is
    /// plain unorm.
    Srgb,
}

/// The depth plane's encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// 16-bit unorm.
    D16,
    /// 24-bit unorm in the low bits of a 32-bit word.
    D24,
    /// f32.
    D32F,
}

/// Which plane of an image an access means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aspect {
    Color,
    Depth,
    Stencil,
}

/// Where a format's components are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `comps` components of `bits` each, in RGBA order (BGRA with `Format::bgra`).
    Array,
    /// One little-endian word of `bits` bits; component `c` (RGBA order) is `widths[c]` bits
    /// at bit `shifts[c]`.
    Packed { widths: [u8; 4], shifts: [u8; 4] },
    /// Depth and/or stencil planes.
    DepthStencil { depth: Option<Depth>, stencil: bool },
}

/// A texel format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    pub vk: u32,
    pub name: &'static str,
    pub comps: u32,
    /// Bits per component (array formats), of the texel word (packed formats), of the
    /// first plane's texel (depth/stencil formats).
    pub bits: u32,
    pub kind: Kind,
    /// Stored as BGRA (components 0 and 2 swapped in memory).
    pub bgra: bool,
    pub layout: Layout,
    /// [`cap`] bits.
    pub caps: u32,
}

impl Format {
    /// Bytes of one texel (of the first plane, for depth/stencil formats).
    pub const fn texel_bytes(&self) -> u32 {
        match self.layout {
            Layout::Array => self.comps * self.bits / 8,
            _ => self.bits / 8,
        }
    }
    /// True if shaders see integer (not float) values.
    pub const fn is_integer(&self) -> bool {
        matches!(self.kind, Kind::Uint | Kind::Sint)
    }
    pub const fn has(&self, caps: u32) -> bool {
        self.caps & caps == caps
    }
    /// The depth plane's encoding, if the format has one.
    pub const fn depth(&self) -> Option<Depth> {
        match self.layout {
            Layout::DepthStencil { depth, .. } => depth,
            _ => None,
        }
    }
    /// True for formats with a stencil plane.
    pub const fn has_stencil(&self) -> bool {
        matches!(self.layout, Layout::DepthStencil { stencil: true, .. })
    }
    /// Bytes of one texel of `aspect`'s plane, or `None` when the format has no such plane.
    pub const fn plane_texel_bytes(&self, aspect: Aspect) -> Option<u32> {
        match (self.layout, aspect) {
            (Layout::DepthStencil { depth: Some(d), .. }, Aspect::Depth) => Some(depth_bytes(d)),
            (Layout::DepthStencil { stencil: true, .. }, Aspect::Stencil) => Some(1),
            (Layout::DepthStencil { .. }, _) => None,
            (_, Aspect::Color) => Some(self.texel_bytes()),
            _ => None,
        }
    }
}

const fn depth_bytes(d: Depth) -> u32 {
    match d {
        Depth::D16 => 2,
        Depth::D24 | Depth::D32F => 4,
    }
}

/// Where a combined depth/stencil format's stencil plane starts in an image of `texels`
/// texels (every level and layer): after the whole depth plane, 64-byte aligned. 0 for
/// `S8_UINT` (its only plane); `None` for formats without stencil.
pub const fn stencil_plane_offset(f: &Format, texels: u64) -> Option<u64> {
    match f.layout {
        Layout::DepthStencil { stencil: true, depth: Some(d) } => {
            Some((texels * depth_bytes(d) as u64).div_ceil(64) * 64)
        }
        Layout::DepthStencil { stencil: true, depth: None } => Some(0),
        _ => None,
    }
}

/// Bytes an image of `texels` texels of `f` needs (both planes of a depth/stencil format).
pub const fn image_bytes(f: &Format, texels: u64) -> u64 {
    match stencil_plane_offset(f, texels) {
        Some(s) if f.depth().is_some() => s + texels,
        _ => texels * f.texel_bytes() as u64,
    }
}

use cap::*;
/// Every colour format is an attachment and sampled; floating and normalised ones blend
/// and filter.
const C: u32 = COLOR | SAMPLED;
const CF: u32 = C | BLEND | FILTER;
/// The storage formats.
const S: u32 = STORAGE | C;
const SF: u32 = STORAGE | CF;

const fn array(comps: u32, bits: u32, kind: Kind, caps: u32) -> Format {
    Format { vk: 0, name: "", comps, bits, kind, bgra: false, layout: Layout::Array, caps }
}
const fn bgra(kind: Kind, caps: u32) -> Format {
    Format { bgra: true, ..array(4, 8, kind, caps) }
}
const fn packed(bits: u32, kind: Kind, widths: [u8; 4], shifts: [u8; 4], caps: u32) -> Format {
    let comps = if widths[3] == 0 { 3 } else { 4 };
    Format { vk: 0, name: "", comps, bits, kind, bgra: false, layout: Layout::Packed { widths, shifts }, caps }
}
const fn ds(depth: Option<Depth>, stencil: bool) -> Format {
    let (bits, kind) = match depth {
        Some(d) => (depth_bytes(d) * 8, if matches!(d, Depth::D32F) { Kind::Sfloat } else { Kind::Unorm }),
        None => (8, Kind::Uint),
    };
    let caps = if depth.is_some() { DEPTH | SAMPLED } else { 0 } | if stencil { STENCIL } else { 0 };
    let comps = depth.is_some() as u32 + stencil as u32;
    Format { vk: 0, name: "", comps, bits, kind, bgra: false, layout: Layout::DepthStencil { depth, stencil }, caps }
}

macro_rules! formats {
    ($( $name:ident = $vk:literal, $f:expr; )*) => {
        $( pub const $name: u32 = $vk; )*
        /// Every format the device knows, with what it can serve as.
        pub const ALL: &[Format] = &[ $( Format { vk: $vk, name: stringify!($name), ..$f }, )* ];
    };
}

use Kind::*;
formats! {
    R5G6B5_UNORM_PACK16 = 4, packed(16, Unorm, [5, 6, 5, 0], [11, 5, 0, 0], CF);
    R8_UNORM = 9, array(1, 8, Unorm, SF);
    R8_SNORM = 10, array(1, 8, Snorm, SF);
    R8_UINT = 13, array(1, 8, Uint, S);
    R8_SINT = 14, array(1, 8, Sint, S);
    R8G8_UNORM = 16, array(2, 8, Unorm, SF);
    R8G8_SNORM = 17, array(2, 8, Snorm, SF);
    R8G8_UINT = 20, array(2, 8, Uint, S);
    R8G8_SINT = 21, array(2, 8, Sint, S);
    R8G8B8A8_UNORM = 37, array(4, 8, Unorm, SF);
    R8G8B8A8_SNORM = 38, array(4, 8, Snorm, SF);
    R8G8B8A8_UINT = 41, array(4, 8, Uint, S);
    R8G8B8A8_SINT = 42, array(4, 8, Sint, S);
    R8G8B8A8_SRGB = 43, array(4, 8, Srgb, CF);
    B8G8R8A8_UNORM = 44, bgra(Unorm, SF);
    B8G8R8A8_SRGB = 50, bgra(Srgb, CF);
    A2B10G10R10_UNORM_PACK32 = 64, packed(32, Unorm, [10, 10, 10, 2], [0, 10, 20, 30], CF);
    A2B10G10R10_UINT_PACK32 = 68, packed(32, Uint, [10, 10, 10, 2], [0, 10, 20, 30], C);
    R16_UNORM = 70, array(1, 16, Unorm, SF);
    R16_SNORM = 71, array(1, 16, Snorm, SF);
    R16_UINT = 74, array(1, 16, Uint, S);
    R16_SINT = 75, array(1, 16, Sint, S);
    R16_SFLOAT = 76, array(1, 16, Sfloat, SF);
    R16G16_UNORM = 77, array(2, 16, Unorm, SF);
    R16G16_SNORM = 78, array(2, 16, Snorm, SF);
    R16G16_UINT = 81, array(2, 16, Uint, S);
    R16G16_SINT = 82, array(2, 16, Sint, S);
    R16G16_SFLOAT = 83, array(2, 16, Sfloat, SF);
    R16G16B16A16_UNORM = 91, array(4, 16, Unorm, SF);
    R16G16B16A16_SNORM = 92, array(4, 16, Snorm, SF);
    R16G16B16A16_UINT = 95, array(4, 16, Uint, S);
    R16G16B16A16_SINT = 96, array(4, 16, Sint, S);
    R16G16B16A16_SFLOAT = 97, array(4, 16, Sfloat, SF);
    R32_UINT = 98, array(1, 32, Uint, S);
    R32_SINT = 99, array(1, 32, Sint, S);
    R32_SFLOAT = 100, array(1, 32, Sfloat, SF);
    R32G32_UINT = 101, array(2, 32, Uint, S);
    R32G32_SINT = 102, array(2, 32, Sint, S);
    R32G32_SFLOAT = 103, array(2, 32, Sfloat, SF);
    R32G32B32A32_UINT = 107, array(4, 32, Uint, S);
    R32G32B32A32_SINT = 108, array(4, 32, Sint, S);
    R32G32B32A32_SFLOAT = 109, array(4, 32, Sfloat, SF);
    B10G11R11_UFLOAT_PACK32 = 122, packed(32, Ufloat, [11, 11, 10, 0], [0, 11, 22, 0], CF);
    D16_UNORM = 124, ds(Some(Depth::D16), false);
    X8_D24_UNORM_PACK32 = 125, ds(Some(Depth::D24), false);
    D32_SFLOAT = 126, ds(Some(Depth::D32F), false);
    S8_UINT = 127, ds(None, true);
    D16_UNORM_S8_UINT = 128, ds(Some(Depth::D16), true);
    D24_UNORM_S8_UINT = 129, ds(Some(Depth::D24), true);
    D32_SFLOAT_S8_UINT = 130, ds(Some(Depth::D32F), true);
}

/// Looks a storage-image format up by its `VkFormat` value (what `ILD`/`IST` and texel
/// buffers accept); [`find`] for any format.
pub fn lookup(vk: u32) -> Option<&'static Format> {
    find(vk).filter(|f| f.has(STORAGE))
}

/// Looks any format up by its `VkFormat` value.
pub fn find(vk: u32) -> Option<&'static Format> {
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

/// One stored component `raw` of `bits` bits -> its register value.
fn decode_comp(kind: Kind, bits: u32, raw: u32, c: usize) -> u32 {
    let max_s = ((1u64 << (bits - 1)) - 1) as f32;
    let sext = |r: u32| -> i32 { ((r << (32 - bits)) as i32) >> (32 - bits) };
    match kind {
        Kind::Unorm => unorm_to_f32(raw, bits).to_bits(),
        Kind::Srgb if c < 3 => srgb_to_linear(raw as u8).to_bits(),
        Kind::Srgb => unorm_to_f32(raw, bits).to_bits(),
        Kind::Snorm => (sext(raw) as f32 / max_s).max(-1.0).to_bits(),
        Kind::Uint => raw,
        Kind::Sint => sext(raw) as u32,
        Kind::Sfloat => match bits {
            16 => half::f16::from_bits(raw as u16).to_f32().to_bits(),
            _ => raw,
        },
        Kind::Ufloat => ufloat_to_f32(raw, bits - 5).to_bits(),
    }
}

/// A register value -> component `c` stored in `bits` bits. Normalised formats clamp and
/// round to nearest; integer formats keep the low bits.
fn encode_comp(kind: Kind, bits: u32, v: u32, c: usize) -> u32 {
    let fv = f32::from_bits(v);
    let max_s = ((1u64 << (bits - 1)) - 1) as f32;
    let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
    match kind {
        Kind::Unorm => f32_to_unorm(fv, bits),
        Kind::Srgb if c < 3 => linear_to_srgb(fv) as u32,
        Kind::Srgb => f32_to_unorm(fv, bits),
        Kind::Snorm => {
            let x = if fv.is_nan() { 0.0 } else { fv.clamp(-1.0, 1.0) };
            ((x * max_s).round_ties_even() as i32) as u32 & mask
        }
        Kind::Uint | Kind::Sint => v & mask,
        Kind::Sfloat => match bits {
            16 => half::f16::from_f32(fv).to_bits() as u32,
            _ => v,
        },
        Kind::Ufloat => f32_to_ufloat(fv, bits - 5),
    }
}

/// Texel bytes -> four register values (floats as bits). Missing components read as
/// (0, 0, 0, 1) in the format's own domain. A depth/stencil format decodes its first plane
/// (depth as f32, or the stencil value) into component 0.
pub fn decode_texel(f: &Format, bytes: &[u8]) -> [u32; 4] {
    let one = if f.is_integer() { 1 } else { 1.0f32.to_bits() };
    let mut out = [0, 0, 0, one];
    match f.layout {
        Layout::Array => {
            for (c, o) in out.iter_mut().enumerate().take(f.comps as usize) {
                let mem = if f.bgra && c < 3 { 2 - c } else { c };
                *o = decode_comp(f.kind, f.bits, read_comp(bytes, f.bits, mem), c);
            }
        }
        Layout::Packed { widths, shifts } => {
            let word = read_comp(bytes, f.bits, 0);
            for c in 0..f.comps as usize {
                let w = widths[c] as u32;
                out[c] = decode_comp(f.kind, w, (word >> shifts[c]) & ((1 << w) - 1), c);
            }
        }
        Layout::DepthStencil { depth: Some(d), .. } => {
            out = [decode_depth(d, read_comp(bytes, depth_bytes(d) * 8, 0)).to_bits(), 0, 0, one]
        }
        Layout::DepthStencil { depth: None, .. } => out = [bytes[0] as u32, 0, 0, 1],
    }
    out
}

/// Four register values -> texel bytes (`out` is `texel_bytes` long). A depth/stencil
/// format encodes component 0 into its first plane (depth clamped to [0, 1] for unorm).
pub fn encode_texel(f: &Format, v: [u32; 4], out: &mut [u8]) {
    match f.layout {
        Layout::Array => {
            for (c, &x) in v.iter().enumerate().take(f.comps as usize) {
                let mem = if f.bgra && c < 3 { 2 - c } else { c };
                write_comp(out, f.bits, mem, encode_comp(f.kind, f.bits, x, c));
            }
        }
        Layout::Packed { widths, shifts } => {
            let mut word = 0u32;
            for c in 0..f.comps as usize {
                word |= encode_comp(f.kind, widths[c] as u32, v[c], c) << shifts[c];
            }
            write_comp(out, f.bits, 0, word);
        }
        Layout::DepthStencil { depth: Some(d), .. } => {
            write_comp(out, depth_bytes(d) * 8, 0, encode_depth(d, f32::from_bits(v[0])))
        }
        Layout::DepthStencil { depth: None, .. } => out[0] = v[0] as u8,
    }
}

/// Copies the components `mask` selects (bit `c`: component `c` in RGBA order) from texel
/// `new` into texel `old`, both of format `f` (a colour write mask). Depth/stencil texels
/// are copied whole.
pub fn merge_components(f: &Format, mask: u32, new: &[u8], old: &mut [u8]) {
    let tb = f.texel_bytes() as usize;
    match f.layout {
        Layout::Array => {
            let cb = f.bits as usize / 8;
            for c in 0..f.comps as usize {
                if mask >> c & 1 != 0 {
                    let m = if f.bgra && c < 3 { 2 - c } else { c };
                    old[m * cb..(m + 1) * cb].copy_from_slice(&new[m * cb..(m + 1) * cb]);
                }
            }
        }
        Layout::Packed { widths, shifts } => {
            let mut bits = 0u32;
            for c in 0..f.comps as usize {
                if mask >> c & 1 != 0 {
                    bits |= (((1u64 << widths[c]) - 1) as u32) << shifts[c];
                }
            }
            let (n, o) = (read_comp(new, f.bits, 0), read_comp(old, f.bits, 0));
            write_comp(old, f.bits, 0, (n & bits) | (o & !bits));
        }
        Layout::DepthStencil { .. } => old[..tb].copy_from_slice(&new[..tb]),
    }
}

/// A stored depth value -> f32.
pub fn decode_depth(d: Depth, raw: u32) -> f32 {
    match d {
        Depth::D16 => unorm_to_f32(raw & 0xFFFF, 16),
        Depth::D24 => unorm_to_f32(raw & 0xFF_FFFF, 24),
        Depth::D32F => f32::from_bits(raw),
    }
}

/// A depth value -> its stored form (unorm formats clamp to [0, 1] and round to nearest).
pub fn encode_depth(d: Depth, z: f32) -> u32 {
    match d {
        Depth::D16 => f32_to_unorm(z, 16),
        Depth::D24 => f32_to_unorm(z, 24),
        Depth::D32F => z.to_bits(),
    }
}

/// An unorm value of `bits` (at most 24) bits -> f32: `raw / (2^bits - 1)`, one correctly
/// rounded f32 division (both operands are exact in f32).
pub fn unorm_to_f32(raw: u32, bits: u32) -> f32 {
    raw as f32 / ((1u32 << bits) - 1) as f32
}

/// f32 -> unorm of `bits` bits: clamped to [0, 1] (NaN is 0), scaled, rounded to nearest even.
/// Up to 16 bits the product is the f32 one storage images always used; 24-bit depth scales
/// in f64, where the product is exact.
pub fn f32_to_unorm(x: f32, bits: u32) -> u32 {
    let x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    let max = (1u32 << bits) - 1;
    if bits <= 16 {
        (x * max as f32).round_ties_even() as u32
    } else {
        (x as f64 * max as f64).round_ties_even() as u32
    }
}

/// The sRGB transfer function's inverse (EOTF) on an 8-bit value, exact to f32 rounding:
/// `c / 12.92` up to 0.04045, else `((c + 0.055) / 1.055)^2.4`.
pub fn srgb_to_linear(v: u8) -> f32 {
    let c = v as f64 / 255.0;
    (if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }) as f32
}

/// Linear -> 8-bit sRGB: clamped to [0, 1] (NaN is 0), `12.92 l` up to 0.0031308, else
/// `1.055 l^(1/2.4) - 0.055`, then rounded to the nearest 8-bit value.
pub fn linear_to_srgb(l: f32) -> u8 {
    let l = if l.is_nan() { 0.0 } else { l.clamp(0.0, 1.0) as f64 };
    let c = if l <= 0.0031308 { 12.92 * l } else { 1.055 * l.powf(1.0 / 2.4) - 0.055 };
    (c * 255.0).round_ties_even().clamp(0.0, 255.0) as u8
}

/// An unsigned float of 5 exponent bits and `m` mantissa bits -> f32 (exact).
pub fn ufloat_to_f32(raw: u32, m: u32) -> f32 {
    let (e, man) = (raw >> m & 0x1F, raw & ((1 << m) - 1));
    match e {
        0 => (man as f64 * (2f64).powi(-14 - m as i32)) as f32,
        31 if man == 0 => f32::INFINITY,
        31 => f32::NAN,
        _ => ((1.0 + man as f64 / (1u32 << m) as f64) * (2f64).powi(e as i32 - 15)) as f32,
    }
}

/// f32 -> an unsigned float of 5 exponent bits and `m` mantissa bits, as the Khronos data
/// format rules say: rounded to nearest even; negative values and -inf become 0, finite
/// values above the largest finite one become it, +inf stays infinite, NaN stays NaN.
pub fn f32_to_ufloat(x: f32, m: u32) -> u32 {
    let max_finite = (30 << m) | ((1 << m) - 1);
    if x.is_nan() {
        return (31 << m) | 1;
    }
    if x == f32::INFINITY {
        return 31 << m;
    }
    if x <= 0.0 {
        return 0;
    }
    let v = x as f64;
    // Quantum of the binade (the denormal one below 2^-14), then round to a multiple of it.
    let exp = (v.log2().floor() as i32).max(-14);
    let q = (2f64).powi(exp - m as i32);
    let k = (v / q).round_ties_even();
    // k is in [2^m, 2^(m+1)] for normals (the top value carries into the next binade), or
    // below 2^m in the denormal binade, where the encoding is k itself.
    let bits = if exp == -14 && k < (1u64 << m) as f64 {
        k as u32
    } else {
        let (exp, k) = if k >= (1u64 << (m + 1)) as f64 { (exp + 1, k / 2.0) } else { (exp, k) };
        if exp + 15 > 30 {
            return max_finite;
        }
        (((exp + 15) as u32) << m) | (k as u32 - (1 << m))
    };
    bits.min(max_finite)
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
            assert!(!f.has(BLEND) || !f.is_integer(), "{} blends integers", f.name);
            assert!(!f.has(STORAGE) || f.layout == Layout::Array, "{} is a storage format", f.name);
        }
        assert_eq!(lookup(R32_SINT).unwrap().texel_bytes(), 4);
        assert_eq!(lookup(R32G32B32A32_SFLOAT).unwrap().texel_bytes(), 16);
        assert!(lookup(106).is_none(), "R32G32B32_SFLOAT is not a storage format");
        // The storage set is the 37 formats storage images always had.
        assert_eq!(ALL.iter().filter(|f| f.has(STORAGE)).count(), 37);
        assert!(lookup(R8G8B8A8_SRGB).is_none() && find(R8G8B8A8_SRGB).is_some());
        assert!(lookup(D32_SFLOAT).is_none());
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

    /// Unorm conversions are the textbook ones for every 8-bit value, and every stored value
    /// of the storage formats converts as before (the f32 formula the storage path used).
    #[test]
    fn unorm_matches_the_f32_formula() {
        for bits in [8u32, 16] {
            let max = ((1u64 << bits) - 1) as f32;
            for raw in (0..=max as u32).step_by(if bits == 8 { 1 } else { 7 }) {
                assert_eq!(unorm_to_f32(raw, bits), raw as f32 / max, "{raw}/{max}");
                let x = raw as f32 / max;
                assert_eq!(f32_to_unorm(x, bits), (x * max).round_ties_even() as u32);
            }
        }
        assert_eq!(f32_to_unorm(f32::NAN, 8), 0);
        assert_eq!(f32_to_unorm(-3.0, 8), 0);
        assert_eq!(f32_to_unorm(7.0, 24), 0xFF_FFFF);
    }

    /// sRGB against hand values: the break points of both halves of the curve.
    #[test]
    fn srgb_transfer_function() {
        assert_eq!(srgb_to_linear(0), 0.0);
        assert_eq!(srgb_to_linear(255), 1.0);
        // 10/255 = 0.0392 is on the linear segment: 10 / 255 / 12.92.
        assert_eq!(srgb_to_linear(10), (10.0f64 / 255.0 / 12.92) as f32);
        // 128/255: ((0.50196 + 0.055) / 1.055)^2.4 = 0.21586.
        assert!((srgb_to_linear(128) - 0.215_861_4).abs() < 1e-6);
        for v in 0..=255u8 {
            assert_eq!(linear_to_srgb(srgb_to_linear(v)), v, "sRGB {v} round trip");
        }
        assert_eq!(linear_to_srgb(0.5), 188, "0.5 linear is sRGB 187.5 -> 188");
        assert_eq!(linear_to_srgb(0.001), 3, "the linear segment: 12.92 * 0.001 * 255 = 3.29");
        let f = find(B8G8R8A8_SRGB).unwrap();
        let mut b = [0u8; 4];
        encode_texel(f, [1.0f32.to_bits(), 0.5f32.to_bits(), 0, 0.5f32.to_bits()], &mut b);
        assert_eq!(b, [0, 188, 255, 128], "BGRA order, alpha linear");
    }

    #[test]
    fn packed_formats() {
        let f = find(A2B10G10R10_UNORM_PACK32).unwrap();
        let mut b = [0u8; 4];
        encode_texel(f, [1.0f32.to_bits(), 0, 0, 1.0f32.to_bits()], &mut b);
        assert_eq!(u32::from_le_bytes(b), 0x3FF | 3 << 30);
        assert_eq!(decode_texel(f, &b).map(f32::from_bits), [1.0, 0.0, 0.0, 1.0]);
        let f = find(R5G6B5_UNORM_PACK16).unwrap();
        let mut b = [0u8; 2];
        encode_texel(f, [1.0f32.to_bits(), 0, 1.0f32.to_bits(), 0], &mut b);
        assert_eq!(u16::from_le_bytes(b), 0xF81F, "red in the top five bits");
        assert_eq!(f32::from_bits(decode_texel(f, &b)[3]), 1.0, "no alpha reads one");
        let f = find(B10G11R11_UFLOAT_PACK32).unwrap();
        let mut b = [0u8; 4];
        encode_texel(f, [1.0f32.to_bits(), 2.0f32.to_bits(), 0.5f32.to_bits(), 0], &mut b);
        // 1.0 = exponent 15; 2.0 = 16; 0.5 = 14 (mantissas 0).
        assert_eq!(u32::from_le_bytes(b), 15 << 6 | (16 << 6) << 11 | (14 << 5) << 22);
        assert_eq!(decode_texel(f, &b).map(f32::from_bits)[..3], [1.0, 2.0, 0.5]);
    }

    #[test]
    fn ufloat_rules() {
        for m in [5u32, 6] {
            // Every encoding decodes and encodes back (NaNs to the one NaN).
            for raw in 0..(1u32 << (m + 5)) {
                let x = ufloat_to_f32(raw, m);
                let back = f32_to_ufloat(x, m);
                if x.is_nan() {
                    assert!(ufloat_to_f32(back, m).is_nan());
                } else {
                    assert_eq!(back, raw, "m={m} raw={raw:#x} x={x}");
                }
            }
            let max = ufloat_to_f32((30 << m) | ((1 << m) - 1), m);
            assert_eq!(max, if m == 6 { 65024.0 } else { 64512.0 });
            assert_eq!(f32_to_ufloat(1e9, m), (30 << m) | ((1 << m) - 1), "clamps to the largest finite");
            assert_eq!(f32_to_ufloat(-1.0, m), 0);
            assert_eq!(f32_to_ufloat(f32::NEG_INFINITY, m), 0);
            assert_eq!(f32_to_ufloat(f32::INFINITY, m), 31 << m);
            // Halfway between 1 and the next value rounds to even (1), just above rounds up.
            let ulp = (2f32).powi(-(m as i32));
            assert_eq!(f32_to_ufloat(1.0 + ulp / 2.0, m), 15 << m);
            assert_eq!(f32_to_ufloat(1.0 + ulp * 1.5, m), (15 << m) + 2);
            // The smallest denormal, and a value halfway below it, which rounds to even (0).
            let tiny = (2f32).powi(-14 - m as i32);
            assert_eq!(f32_to_ufloat(tiny, m), 1);
            assert_eq!(f32_to_ufloat(tiny / 2.0, m), 0);
        }
    }

    #[test]
    fn write_masks_keep_the_other_components() {
        let f = find(B8G8R8A8_UNORM).unwrap();
        let mut old = [1, 2, 3, 4];
        merge_components(f, 0b0101, &[10, 20, 30, 40], &mut old);
        // R (byte 2) and B (byte 0) written, G and A kept.
        assert_eq!(old, [10, 2, 30, 4]);
        let f = find(A2B10G10R10_UNORM_PACK32).unwrap();
        let mut old = 0u32.to_le_bytes();
        merge_components(f, 0b1000, &u32::MAX.to_le_bytes(), &mut old);
        assert_eq!(u32::from_le_bytes(old), 3 << 30, "alpha only");
    }

    #[test]
    fn depth_stencil_planes() {
        let d24s8 = find(D24_UNORM_S8_UINT).unwrap();
        assert_eq!(d24s8.depth(), Some(Depth::D24));
        assert!(d24s8.has_stencil() && d24s8.has(DEPTH | STENCIL));
        assert_eq!(d24s8.plane_texel_bytes(Aspect::Depth), Some(4));
        assert_eq!(d24s8.plane_texel_bytes(Aspect::Stencil), Some(1));
        assert_eq!(d24s8.plane_texel_bytes(Aspect::Color), None);
        // 10 texels: 40 bytes of depth, the stencil plane at 64, 74 bytes in all.
        assert_eq!(stencil_plane_offset(d24s8, 10), Some(64));
        assert_eq!(image_bytes(d24s8, 10), 74);
        let s8 = find(S8_UINT).unwrap();
        assert_eq!((stencil_plane_offset(s8, 10), image_bytes(s8, 10)), (Some(0), 10));
        let d16 = find(D16_UNORM).unwrap();
        assert_eq!((stencil_plane_offset(d16, 10), image_bytes(d16, 10)), (None, 20));
        assert_eq!(encode_depth(Depth::D24, 1.0), 0xFF_FFFF);
        assert_eq!(encode_depth(Depth::D16, 0.5), 32768, "0.5 * 65535 = 32767.5 rounds to even");
        assert_eq!(decode_depth(Depth::D24, 0xFF_FFFF), 1.0);
        let mut b = [0u8; 4];
        encode_texel(find(X8_D24_UNORM_PACK32).unwrap(), [0.25f32.to_bits(), 0, 0, 0], &mut b);
        assert_eq!(u32::from_le_bytes(b), 4_194_304, "0.25 * (2^24 - 1) = 4194303.75");
    }
}
