//! The declarative description at the top of every corpus shader: `//!` comment lines that
//! say how to run it (resources and their initial contents, push and specialization
//! constants, the dispatch) and how to compare what it wrote. `corpus/README.md` documents
//! the format; this is its parser.

use ash::vk;
use std::path::{Path, PathBuf};

/// One corpus shader, parsed.
#[derive(Clone, Debug, Default)]
pub struct Shader {
    /// `area/name`.
    pub id: String,
    pub spv: PathBuf,
    pub dispatch: [u32; 3],
    pub base: [u32; 3],
    /// Optional device features (Vulkan names) or subgroup operations (`subgroup-*`)
    /// the shader needs.
    pub features: Vec<String>,
    /// Results depend on the subgroup size: only compared at the reference's subgroup size.
    pub warp_dependent: bool,
    pub specialization: Vec<(u32, Vec<u8>)>,
    pub push: Vec<u8>,
    pub resources: Vec<Resource>,
    pub checks: Vec<Check>,
}

/// Where a descriptor goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub set: u32,
    pub binding: u32,
    pub element: u32,
}

#[derive(Clone, Debug)]
pub struct Resource {
    /// The name checks and address generators refer to: the slot as written (`1`, `0.2`,
    /// `3[1]`) or `-name` for a resource bound to no descriptor.
    pub key: String,
    pub slot: Option<Slot>,
    pub kind: Kind,
    pub init: Vec<Gen>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferKind {
    Storage,
    Uniform,
    StorageDynamic,
    UniformDynamic,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplerSpec {
    pub mag: vk::Filter,
    pub min: vk::Filter,
    pub mipmap: vk::SamplerMipmapMode,
    pub address: [vk::SamplerAddressMode; 3],
    pub border: vk::BorderColor,
    pub unnormalized: bool,
    pub min_lod: f32,
    pub max_lod: f32,
    pub lod_bias: f32,
}

impl Default for SamplerSpec {
    fn default() -> Self {
        SamplerSpec {
            mag: vk::Filter::NEAREST,
            min: vk::Filter::NEAREST,
            mipmap: vk::SamplerMipmapMode::NEAREST,
            address: [vk::SamplerAddressMode::CLAMP_TO_EDGE; 3],
            border: vk::BorderColor::FLOAT_TRANSPARENT_BLACK,
            unnormalized: false,
            min_lod: 0.0,
            max_lod: vk::LOD_CLAMP_NONE,
            lod_bias: 0.0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageUse {
    Storage,
    Sampled,
}

#[derive(Clone, Debug)]
pub enum Kind {
    Buffer { kind: BufferKind, size: u64, offset: u64, range: Option<u64>, dynamic_offset: u32 },
    Image { usage: ImageUse, spec: ImageGeometry },
    Sampler(SamplerSpec),
    Combined { spec: ImageGeometry, sampler: SamplerSpec },
    TexelBuffer { storage: bool, format: vk::Format, size: u64 },
    Scene(String),
}

#[derive(Clone, Copy, Debug)]
pub struct ImageGeometry {
    pub view_type: vk::ImageViewType,
    pub format: vk::Format,
    pub extent: [u32; 3],
    pub layers: u32,
    pub mips: u32,
}

/// Initial contents: each generator fills from where the previous one stopped; explicit
/// value lists fill their own length, the others fill to the end.
#[derive(Clone, Debug)]
pub enum Gen {
    Values(Vec<u8>),
    Iota {
        ty: Scalar,
        start: f64,
        step: f64,
    },
    Rand {
        ty: Scalar,
        lo: f64,
        hi: f64,
        seed: u64,
    },
    Bytes {
        seed: u64,
    },
    /// Device addresses (u64) of other resources plus an offset.
    Addr(Vec<(String, u64)>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    F32,
    F64,
}

impl Scalar {
    fn parse(s: &str) -> Option<Scalar> {
        use Scalar::*;
        Some(match s {
            "u8" => U8,
            "i8" => I8,
            "u16" => U16,
            "i16" => I16,
            "u32" => U32,
            "i32" => I32,
            "u64" => U64,
            "i64" => I64,
            "f16" => F16,
            "f32" => F32,
            "f64" => F64,
            _ => return None,
        })
    }

    pub fn bytes(self) -> usize {
        use Scalar::*;
        match self {
            U8 | I8 => 1,
            U16 | I16 | F16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::F32 | Scalar::F64)
    }

    /// `v` (an integer or float value) encoded as this type, little-endian.
    pub fn encode(self, v: f64, out: &mut Vec<u8>) {
        use Scalar::*;
        match self {
            U8 => out.push(v as i64 as u8),
            I8 => out.push(v as i64 as i8 as u8),
            U16 => out.extend((v as i64 as u16).to_le_bytes()),
            I16 => out.extend((v as i64 as i16).to_le_bytes()),
            U32 => out.extend((v as i64 as u32).to_le_bytes()),
            I32 => out.extend((v as i64 as i32).to_le_bytes()),
            U64 => out.extend((v as u64).to_le_bytes()),
            I64 => out.extend((v as i64).to_le_bytes()),
            F16 => out.extend(f32_to_f16(v as f32).to_le_bytes()),
            F32 => out.extend((v as f32).to_le_bytes()),
            F64 => out.extend(v.to_le_bytes()),
        }
    }

    /// A literal of this type: decimal, `0x` hex (the raw bits for floats), `nan`, `inf`.
    fn literal(self, s: &str, out: &mut Vec<u8>) -> Result<(), String> {
        let bad = || format!("`{s}` is not a {self:?} value");
        if let Some(hex) = s.strip_prefix("0x") {
            let v = u64::from_str_radix(hex, 16).map_err(|_| bad())?;
            out.extend_from_slice(&v.to_le_bytes()[..self.bytes()]);
            return Ok(());
        }
        if let Some(hex) = s.strip_prefix("-0x") {
            let v = u64::from_str_radix(hex, 16).map_err(|_| bad())?;
            out.extend_from_slice(&(v as i64).wrapping_neg().to_le_bytes()[..self.bytes()]);
            return Ok(());
        }
        if !self.is_float() {
            // Exact for the whole 64-bit range (f64 would round large values).
            if let Ok(v) = s.parse::<i128>() {
                out.extend_from_slice(&(v as u128).to_le_bytes()[..self.bytes()]);
                return Ok(());
            }
            return Err(bad());
        }
        let v: f64 = match s {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            _ => s.parse().map_err(|_| bad())?,
        };
        self.encode(v, out);
        Ok(())
    }
}

/// f32 -> IEEE half, round to nearest even (inputs in the corpus are exact halves anyway).
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xFF) as i32;
    let man = b & 0x7F_FFFF;
    if exp == 0xFF {
        return sign | 0x7C00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1F {
        return sign | 0x7C00;
    }
    let round = |v: u32, shift: u32| -> u32 {
        let half = 1u32 << (shift - 1);
        let rem = v & ((1 << shift) - 1);
        let q = v >> shift;
        if rem > half || (rem == half && q & 1 == 1) {
            q + 1
        } else {
            q
        }
    };
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        return sign | round(m, (14 - e) as u32) as u16;
    }
    let v = ((e as u32) << 10) + round(man, 13);
    sign | v as u16
}

/// How one checked byte range of a resource is compared.
#[derive(Clone, Debug)]
pub struct Check {
    pub key: String,
    pub rule: Rule,
    /// Byte range `[start, end)`; `None`: the whole resource.
    pub range: Option<(usize, usize)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    Exact,
    /// Floats of `bits` bits: equal, both NaN, or within any of the given tolerances.
    Float {
        bits: u32,
        ulp: Option<u64>,
        abs: Option<f64>,
        rel: Option<f64>,
    },
}

fn parse_u32(s: &str) -> Result<u32, String> {
    parse_u64(s).and_then(|v| u32::try_from(v).map_err(|_| format!("{s} does not fit 32 bits")))
}

fn parse_u64(s: &str) -> Result<u64, String> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|_| format!("`{s}` is not a number"))
}

fn parse_f64(s: &str) -> Result<f64, String> {
    if s.starts_with("0x") {
        return parse_u64(s).map(|v| v as f64);
    }
    s.parse().map_err(|_| format!("`{s}` is not a number"))
}

fn parse_slot(s: &str) -> Result<Slot, String> {
    let (head, element) = match s.split_once('[') {
        Some((h, rest)) => (h, parse_u32(rest.strip_suffix(']').ok_or_else(|| format!("bad slot `{s}`"))?)?),
        None => (s, 0),
    };
    let (set, binding) = match head.split_once('.') {
        Some((a, b)) => (parse_u32(a)?, parse_u32(b)?),
        None => (0, parse_u32(head)?),
    };
    Ok(Slot { set, binding, element })
}

fn view_type(s: &str) -> Result<vk::ImageViewType, String> {
    Ok(match s {
        "1d" => vk::ImageViewType::TYPE_1D,
        "2d" => vk::ImageViewType::TYPE_2D,
        "3d" => vk::ImageViewType::TYPE_3D,
        "cube" => vk::ImageViewType::CUBE,
        "1darray" => vk::ImageViewType::TYPE_1D_ARRAY,
        "2darray" => vk::ImageViewType::TYPE_2D_ARRAY,
        "cubearray" => vk::ImageViewType::CUBE_ARRAY,
        _ => return Err(format!("unknown view type `{s}`")),
    })
}

/// `VkFormat` by its name without the prefix, lower case: `r32f`-style GLSL names are not
/// used, the Vulkan name is (`r32_sfloat`, `r8g8b8a8_unorm`).
fn format(s: &str) -> Result<vk::Format, String> {
    use vk::Format as F;
    Ok(match s {
        "r8_unorm" => F::R8_UNORM,
        "r8_snorm" => F::R8_SNORM,
        "r8_uint" => F::R8_UINT,
        "r8_sint" => F::R8_SINT,
        "r8g8_unorm" => F::R8G8_UNORM,
        "r8g8_snorm" => F::R8G8_SNORM,
        "r8g8_uint" => F::R8G8_UINT,
        "r8g8_sint" => F::R8G8_SINT,
        "r8g8b8a8_unorm" => F::R8G8B8A8_UNORM,
        "r8g8b8a8_snorm" => F::R8G8B8A8_SNORM,
        "r8g8b8a8_uint" => F::R8G8B8A8_UINT,
        "r8g8b8a8_sint" => F::R8G8B8A8_SINT,
        "b8g8r8a8_unorm" => F::B8G8R8A8_UNORM,
        "r16_unorm" => F::R16_UNORM,
        "r16_snorm" => F::R16_SNORM,
        "r16_uint" => F::R16_UINT,
        "r16_sint" => F::R16_SINT,
        "r16_sfloat" => F::R16_SFLOAT,
        "r16g16_unorm" => F::R16G16_UNORM,
        "r16g16_snorm" => F::R16G16_SNORM,
        "r16g16_uint" => F::R16G16_UINT,
        "r16g16_sint" => F::R16G16_SINT,
        "r16g16_sfloat" => F::R16G16_SFLOAT,
        "r16g16b16a16_unorm" => F::R16G16B16A16_UNORM,
        "r16g16b16a16_snorm" => F::R16G16B16A16_SNORM,
        "r16g16b16a16_uint" => F::R16G16B16A16_UINT,
        "r16g16b16a16_sint" => F::R16G16B16A16_SINT,
        "r16g16b16a16_sfloat" => F::R16G16B16A16_SFLOAT,
        "r32_uint" => F::R32_UINT,
        "r32_sint" => F::R32_SINT,
        "r32_sfloat" => F::R32_SFLOAT,
        "r32g32_uint" => F::R32G32_UINT,
        "r32g32_sint" => F::R32G32_SINT,
        "r32g32_sfloat" => F::R32G32_SFLOAT,
        "r32g32b32a32_uint" => F::R32G32B32A32_UINT,
        "r32g32b32a32_sint" => F::R32G32B32A32_SINT,
        "r32g32b32a32_sfloat" => F::R32G32B32A32_SFLOAT,
        "a2b10g10r10_unorm" => F::A2B10G10R10_UNORM_PACK32,
        "a2b10g10r10_uint" => F::A2B10G10R10_UINT_PACK32,
        "b10g11r11_ufloat" => F::B10G11R11_UFLOAT_PACK32,
        _ => return Err(format!("unknown format `{s}`")),
    })
}

/// Parses `= gen ; gen ...` (the tokens after `=`).
fn generators(tokens: &[&str]) -> Result<Vec<Gen>, String> {
    let mut out = Vec::new();
    for piece in tokens.split(|t| *t == ";") {
        let Some((&head, rest)) = piece.split_first() else { continue };
        let num = |i: usize, default: f64| -> Result<f64, String> { rest.get(i).map_or(Ok(default), |s| parse_f64(s)) };
        out.push(match head {
            "zero" => Gen::Values(Vec::new()),
            "iota" => {
                let ty = rest.first().and_then(|t| Scalar::parse(t)).ok_or("iota needs a type")?;
                Gen::Iota { ty, start: num(1, 0.0)?, step: num(2, 1.0)? }
            }
            "rand" => {
                let ty = rest.first().and_then(|t| Scalar::parse(t)).ok_or("rand needs a type")?;
                Gen::Rand { ty, lo: num(1, 0.0)?, hi: num(2, 1.0)?, seed: num(3, 1.0)? as u64 }
            }
            "bytes" => Gen::Bytes { seed: num(0, 1.0)? as u64 },
            "addr" => {
                // `key` or `key+offset`.
                let mut v = Vec::new();
                for t in rest {
                    v.push(match t.split_once('+') {
                        Some((k, off)) => (k.to_string(), parse_u64(off)?),
                        None => (t.to_string(), 0),
                    });
                }
                Gen::Addr(v)
            }
            ty => {
                let ty = Scalar::parse(ty).ok_or_else(|| format!("unknown generator `{ty}`"))?;
                let mut bytes = Vec::new();
                for v in rest {
                    ty.literal(v, &mut bytes)?;
                }
                Gen::Values(bytes)
            }
        });
    }
    Ok(out)
}

fn sampler(tokens: &[&str]) -> Result<SamplerSpec, String> {
    let mut s = SamplerSpec::default();
    let mut i = 0;
    let addr = |t: &str| -> Option<vk::SamplerAddressMode> {
        Some(match t {
            "repeat" => vk::SamplerAddressMode::REPEAT,
            "mirror" => vk::SamplerAddressMode::MIRRORED_REPEAT,
            "clamp" => vk::SamplerAddressMode::CLAMP_TO_EDGE,
            "border" => vk::SamplerAddressMode::CLAMP_TO_BORDER,
            "mirror-clamp" => vk::SamplerAddressMode::MIRROR_CLAMP_TO_EDGE,
            _ => return None,
        })
    };
    let mut naddr = 0;
    while i < tokens.len() {
        let t = tokens[i];
        match t {
            "nearest" => (s.mag, s.min) = (vk::Filter::NEAREST, vk::Filter::NEAREST),
            "linear" => (s.mag, s.min) = (vk::Filter::LINEAR, vk::Filter::LINEAR),
            "mag-linear" => s.mag = vk::Filter::LINEAR,
            "min-linear" => s.min = vk::Filter::LINEAR,
            "mip-nearest" => s.mipmap = vk::SamplerMipmapMode::NEAREST,
            "mip-linear" => s.mipmap = vk::SamplerMipmapMode::LINEAR,
            "unnormalized" => s.unnormalized = true,
            "border-black" => s.border = vk::BorderColor::FLOAT_OPAQUE_BLACK,
            "border-white" => s.border = vk::BorderColor::FLOAT_OPAQUE_WHITE,
            "border-int-white" => s.border = vk::BorderColor::INT_OPAQUE_WHITE,
            "border-int-black" => s.border = vk::BorderColor::INT_OPAQUE_BLACK,
            "lod" => {
                s.min_lod = parse_f64(tokens.get(i + 1).ok_or("lod needs min and max")?)? as f32;
                s.max_lod = parse_f64(tokens.get(i + 2).ok_or("lod needs min and max")?)? as f32;
                i += 2;
            }
            "bias" => {
                s.lod_bias = parse_f64(tokens.get(i + 1).ok_or("bias needs a value")?)? as f32;
                i += 1;
            }
            _ => match addr(t) {
                Some(a) => {
                    if naddr == 0 {
                        s.address = [a; 3];
                    } else if naddr < 3 {
                        s.address[naddr] = a;
                    }
                    naddr += 1;
                }
                None => return Err(format!("unknown sampler option `{t}`")),
            },
        }
        i += 1;
    }
    Ok(s)
}

/// `viewtype format w h d [layers N] [mips N]`; returns the geometry and the tokens used.
fn geometry(t: &[&str]) -> Result<(ImageGeometry, usize), String> {
    if t.len() < 5 {
        return Err("an image needs: view type, format, width, height, depth".into());
    }
    let mut g = ImageGeometry {
        view_type: view_type(t[0])?,
        format: format(t[1])?,
        extent: [parse_u32(t[2])?, parse_u32(t[3])?, parse_u32(t[4])?],
        layers: 1,
        mips: 1,
    };
    let mut used = 5;
    while used + 1 < t.len() {
        match t[used] {
            "layers" => g.layers = parse_u32(t[used + 1])?,
            "mips" => g.mips = parse_u32(t[used + 1])?,
            _ => break,
        }
        used += 2;
    }
    if matches!(g.view_type, vk::ImageViewType::CUBE | vk::ImageViewType::CUBE_ARRAY) && !g.layers.is_multiple_of(6) {
        g.layers = 6 * g.layers.max(1);
    }
    Ok((g, used))
}

fn rule(t: &[&str]) -> Result<(Rule, Option<(usize, usize)>), String> {
    let mut range = None;
    let mut body = t;
    if let Some(p) = t.iter().position(|x| *x == "bytes") {
        let a = parse_u64(t.get(p + 1).ok_or("bytes needs start and end")?)? as usize;
        let b = parse_u64(t.get(p + 2).ok_or("bytes needs start and end")?)? as usize;
        range = Some((a, b));
        body = &t[..p];
    }
    let r = match body.first().copied() {
        Some("exact") | None => Rule::Exact,
        Some(ty @ ("f16" | "f32" | "f64")) => {
            let bits = ty[1..].parse().unwrap_or(32);
            let (mut ulp, mut abs, mut rel) = (None, None, None);
            for pair in body[1..].chunks(2) {
                match pair {
                    ["ulp", v] => ulp = Some(parse_u64(v)?),
                    ["abs", v] => abs = Some(parse_f64(v)?),
                    ["rel", v] => rel = Some(parse_f64(v)?),
                    _ => return Err(format!("bad float rule {pair:?}")),
                }
            }
            Rule::Float { bits, ulp, abs, rel }
        }
        Some(x) => return Err(format!("unknown rule `{x}`")),
    };
    Ok((r, range))
}

/// Parses the `//!` (or `;!`) lines of `source` (the shader at `comp`, id `id`).
pub fn parse(id: &str, comp: &Path, source: &str) -> Result<Shader, String> {
    let mut s =
        Shader { id: id.to_string(), spv: comp.with_extension("spv"), dispatch: [1, 1, 1], ..Default::default() };
    for (n, line) in source.lines().enumerate() {
        // `//!` in GLSL sources, `;!` in SPIR-V assembly ones.
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("//!").or_else(|| line.strip_prefix(";!")) else { continue };
        let t: Vec<&str> = rest.split_whitespace().collect();
        let at = |e: String| format!("line {}: {e}", n + 1);
        let Some((&head, args)) = t.split_first() else { continue };
        (|| -> Result<(), String> {
            match head {
                "dispatch" | "base" => {
                    let v =
                        [0, 1, 2].map(|i| args.get(i).map_or(Ok(if head == "base" { 0 } else { 1 }), |a| parse_u32(a)));
                    let v = [v[0].clone()?, v[1].clone()?, v[2].clone()?];
                    if head == "dispatch" {
                        s.dispatch = v;
                    } else {
                        s.base = v;
                    }
                }
                "features" => s.features.extend(args.iter().map(|a| a.to_string())),
                // Compiler flags, read by scripts/build-corpus.sh.
                "glslang" => {}
                "warp-dependent" => s.warp_dependent = true,
                "spec" => {
                    let [id, ty, v] = args else { return Err("spec needs: id type value".into()) };
                    let mut bytes = Vec::new();
                    match *ty {
                        "bool" => bytes.extend((matches!(*v, "true" | "1") as u32).to_le_bytes()),
                        ty => Scalar::parse(ty).ok_or(format!("unknown type {ty}"))?.literal(v, &mut bytes)?,
                    }
                    s.specialization.push((parse_u32(id)?, bytes));
                }
                "push" => {
                    let (ty, vals) = args.split_first().ok_or("push needs a type")?;
                    let ty = Scalar::parse(ty).ok_or(format!("unknown type {ty}"))?;
                    // Natural alignment, as a std430 block of scalars lays them out.
                    while !s.push.len().is_multiple_of(ty.bytes()) {
                        s.push.push(0);
                    }
                    for v in vals {
                        ty.literal(v, &mut s.push)?;
                    }
                }
                "buffer" | "image" | "sampler" | "combined" | "texel" | "scene" => {
                    let (key, rest) = args.split_first().ok_or("a resource needs a slot")?;
                    let slot = if key.starts_with('-') { None } else { Some(parse_slot(key)?) };
                    let (body, init) = match rest.iter().position(|x| *x == "=") {
                        Some(p) => (&rest[..p], generators(&rest[p + 1..])?),
                        None => (rest, Vec::new()),
                    };
                    let kind = match head {
                        "buffer" => {
                            let kind = match body.first().copied() {
                                Some("storage") => BufferKind::Storage,
                                Some("uniform") => BufferKind::Uniform,
                                Some("storage-dynamic") => BufferKind::StorageDynamic,
                                Some("uniform-dynamic") => BufferKind::UniformDynamic,
                                k => return Err(format!("unknown buffer kind {k:?}")),
                            };
                            let size = parse_u64(body.get(1).ok_or("buffer needs a size")?)?;
                            let (mut offset, mut range, mut dynamic_offset) = (0, None, 0);
                            for pair in body[2..].chunks(2) {
                                match pair {
                                    ["offset", v] => offset = parse_u64(v)?,
                                    ["range", v] => range = Some(parse_u64(v)?),
                                    ["dynoffset", v] => dynamic_offset = parse_u32(v)?,
                                    _ => return Err(format!("bad buffer option {pair:?}")),
                                }
                            }
                            Kind::Buffer { kind, size, offset, range, dynamic_offset }
                        }
                        "image" => {
                            let usage = match body.first().copied() {
                                Some("storage") => ImageUse::Storage,
                                Some("sampled") => ImageUse::Sampled,
                                k => return Err(format!("image use must be storage or sampled, not {k:?}")),
                            };
                            let (spec, used) = geometry(&body[1..])?;
                            if used + 1 != body.len() {
                                return Err(format!("unexpected `{}`", body[used + 1..].join(" ")));
                            }
                            Kind::Image { usage, spec }
                        }
                        "sampler" => Kind::Sampler(sampler(body)?),
                        "combined" => {
                            let (spec, used) = geometry(body)?;
                            let rest = &body[used..];
                            let rest = rest.strip_prefix(&["sampler"]).unwrap_or(rest);
                            Kind::Combined { spec, sampler: sampler(rest)? }
                        }
                        "texel" => {
                            let storage = match body.first().copied() {
                                Some("storage") => true,
                                Some("uniform") => false,
                                k => return Err(format!("texel buffer must be storage or uniform, not {k:?}")),
                            };
                            let format = format(body.get(1).ok_or("texel buffer needs a format")?)?;
                            let size = parse_u64(body.get(2).ok_or("texel buffer needs a size")?)?;
                            Kind::TexelBuffer { storage, format, size }
                        }
                        _ => Kind::Scene(body.first().ok_or("scene needs a name")?.to_string()),
                    };
                    s.resources.push(Resource { key: key.to_string(), slot, kind, init });
                }
                "check" => {
                    let (key, rest) = args.split_first().ok_or("check needs a resource")?;
                    let (rule, range) = rule(rest)?;
                    s.checks.push(Check { key: key.to_string(), rule, range });
                }
                x => return Err(format!("unknown directive `{x}`")),
            }
            Ok(())
        })()
        .map_err(at)?;
    }
    for c in &s.checks {
        if !s.resources.iter().any(|r| r.key == c.key) {
            return Err(format!("check of `{}`, which no resource declares", c.key));
        }
    }
    if s.checks.is_empty() {
        return Err("the shader checks nothing".into());
    }
    Ok(s)
}

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The bytes of a resource of `size` bytes from its generators; `addr` resolves an
/// address generator's key.
pub fn materialize(gens: &[Gen], size: usize, addr: &dyn Fn(&str) -> Option<u64>) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(size);
    for g in gens {
        match g {
            Gen::Values(v) => out.extend_from_slice(v),
            Gen::Iota { ty, start, step } => {
                let mut i = 0f64;
                while out.len() + ty.bytes() <= size {
                    ty.encode(start + step * i, &mut out);
                    i += 1.0;
                }
            }
            Gen::Rand { ty, lo, hi, seed } => {
                let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
                while out.len() + ty.bytes() <= size {
                    let v = if ty.is_float() {
                        lo + (hi - lo) * r.unit()
                    } else {
                        // Inclusive integer range.
                        let span = (hi - lo + 1.0).max(1.0);
                        lo + (r.unit() * span).floor()
                    };
                    ty.encode(v, &mut out);
                }
            }
            Gen::Bytes { seed } => {
                let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
                while out.len() < size {
                    out.push(r.next() as u8);
                }
            }
            Gen::Addr(list) => {
                for (key, off) in list {
                    let a = addr(key).ok_or_else(|| format!("address of `{key}`, which is not a buffer"))?;
                    out.extend_from_slice(&(a + off).to_le_bytes());
                }
            }
        }
    }
    if out.len() > size {
        return Err(format!("initial contents are {} bytes, the resource {size}", out.len()));
    }
    out.resize(size, 0);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_description() {
        let src = "//! dispatch 4 2\n//! spec 3 u32 7\n//! push f32 1.5 2\n//! buffer 0 storage 64 = u32 1 2 ; iota i32 -3\n//! buffer 1.2[3] uniform 16\n//! buffer -data storage 32 = bytes 4\n//! buffer 5 storage 16 = addr -data+8 -data\n//! check 0 exact\n//! check 1.2[3] f32 ulp 2 abs 1e-6 bytes 0 8\nvoid main() {}";
        let s = parse("a/b", Path::new("x.comp"), src).unwrap();
        assert_eq!(s.dispatch, [4, 2, 1]);
        assert_eq!(s.specialization, vec![(3, vec![7, 0, 0, 0])]);
        assert_eq!(s.push.len(), 8);
        assert_eq!(s.resources[1].slot, Some(Slot { set: 1, binding: 2, element: 3 }));
        let b = materialize(&s.resources[0].init, 16, &|_| None).unwrap();
        assert_eq!(b, [1, 0, 0, 0, 2, 0, 0, 0, 0xFD, 0xFF, 0xFF, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF]);
        let a = materialize(&s.resources[3].init, 16, &|k| (k == "-data").then_some(0x1000)).unwrap();
        assert_eq!(&a[..8], &0x1008u64.to_le_bytes());
        assert_eq!(&a[8..], &0x1000u64.to_le_bytes());
        assert_eq!(s.checks[1].rule, Rule::Float { bits: 32, ulp: Some(2), abs: Some(1e-6), rel: None });
        assert_eq!(s.checks[1].range, Some((0, 8)));
        assert!(parse("a", Path::new("x"), "//! check 9 exact").is_err());
    }

    #[test]
    fn halves_round_to_nearest_even() {
        assert_eq!(f32_to_f16(1.0), 0x3C00);
        assert_eq!(f32_to_f16(-2.5), 0xC100);
        assert_eq!(f32_to_f16(65504.0), 0x7BFF);
        assert_eq!(f32_to_f16(1e6), 0x7C00);
        assert_eq!(f32_to_f16(5.960_464_5e-8), 0x0001);
    }
}
