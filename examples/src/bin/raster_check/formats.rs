//! Every vertex attribute format of Vulkan's mandatory set the device reports
//! `VERTEX_BUFFER` for: four vertices of known bytes, fetched by a vertex shader that writes
//! what it sees to a buffer, against the conversions of the spec solved on the host
//! (normalised: `c / (2^n - 1)`, signed clamped at -1; missing components (0, 0, 0, 1)).

use crate::{err, storage, Check};
use ash::vk;
use vortex_examples::raster::{GraphicsDesc, GraphicsPipeline, Target};
use vortex_examples::{Buffer, Context};

const FLOAT_VS: &[u8] = include_bytes!("../../../shaders/raster_vfmt_float.vert.spv");
const UINT_VS: &[u8] = include_bytes!("../../../shaders/raster_vfmt_uint.vert.spv");
const SINT_VS: &[u8] = include_bytes!("../../../shaders/raster_vfmt_sint.vert.spv");

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Unorm,
    Snorm,
    Uint,
    Sint,
    Float,
}

/// How the components are laid out in memory.
#[derive(Clone, Copy, PartialEq)]
enum Layout {
    /// `n` components of `bytes` each, R first.
    Plain { bytes: usize, n: usize },
    /// B, G, R, A bytes.
    Bgra8,
    /// R in bits 0..10, G 10..20, B 20..30, A 30..32 of a 32-bit word.
    A2b10g10r10,
}

use vk::Format as V;
use Kind::*;
use Layout::*;

const fn p(bytes: usize, n: usize) -> Layout {
    Plain { bytes, n }
}

const FORMATS: &[(V, Kind, Layout)] = &[
    (V::R8_UNORM, Unorm, p(1, 1)),
    (V::R8_SNORM, Snorm, p(1, 1)),
    (V::R8_UINT, Uint, p(1, 1)),
    (V::R8_SINT, Sint, p(1, 1)),
    (V::R8G8_UNORM, Unorm, p(1, 2)),
    (V::R8G8_SNORM, Snorm, p(1, 2)),
    (V::R8G8_UINT, Uint, p(1, 2)),
    (V::R8G8_SINT, Sint, p(1, 2)),
    (V::R8G8B8A8_UNORM, Unorm, p(1, 4)),
    (V::R8G8B8A8_SNORM, Snorm, p(1, 4)),
    (V::R8G8B8A8_UINT, Uint, p(1, 4)),
    (V::R8G8B8A8_SINT, Sint, p(1, 4)),
    (V::B8G8R8A8_UNORM, Unorm, Bgra8),
    (V::A8B8G8R8_UNORM_PACK32, Unorm, p(1, 4)),
    (V::A8B8G8R8_SNORM_PACK32, Snorm, p(1, 4)),
    (V::A8B8G8R8_UINT_PACK32, Uint, p(1, 4)),
    (V::A8B8G8R8_SINT_PACK32, Sint, p(1, 4)),
    (V::A2B10G10R10_UNORM_PACK32, Unorm, A2b10g10r10),
    (V::R16_UNORM, Unorm, p(2, 1)),
    (V::R16_SNORM, Snorm, p(2, 1)),
    (V::R16_UINT, Uint, p(2, 1)),
    (V::R16_SINT, Sint, p(2, 1)),
    (V::R16_SFLOAT, Float, p(2, 1)),
    (V::R16G16_UNORM, Unorm, p(2, 2)),
    (V::R16G16_SNORM, Snorm, p(2, 2)),
    (V::R16G16_UINT, Uint, p(2, 2)),
    (V::R16G16_SINT, Sint, p(2, 2)),
    (V::R16G16_SFLOAT, Float, p(2, 2)),
    (V::R16G16B16A16_UNORM, Unorm, p(2, 4)),
    (V::R16G16B16A16_SNORM, Snorm, p(2, 4)),
    (V::R16G16B16A16_UINT, Uint, p(2, 4)),
    (V::R16G16B16A16_SINT, Sint, p(2, 4)),
    (V::R16G16B16A16_SFLOAT, Float, p(2, 4)),
    (V::R32_UINT, Uint, p(4, 1)),
    (V::R32_SINT, Sint, p(4, 1)),
    (V::R32_SFLOAT, Float, p(4, 1)),
    (V::R32G32_UINT, Uint, p(4, 2)),
    (V::R32G32_SINT, Sint, p(4, 2)),
    (V::R32G32_SFLOAT, Float, p(4, 2)),
    (V::R32G32B32_UINT, Uint, p(4, 3)),
    (V::R32G32B32_SINT, Sint, p(4, 3)),
    (V::R32G32B32_SFLOAT, Float, p(4, 3)),
    (V::R32G32B32A32_UINT, Uint, p(4, 4)),
    (V::R32G32B32A32_SINT, Sint, p(4, 4)),
    (V::R32G32B32A32_SFLOAT, Float, p(4, 4)),
];

const VERTICES: usize = 4;
const STRIDE: usize = 16;

/// Half-precision values (bits) and single-precision values the float formats hold.
const HALVES: [u16; 8] = [0x3E00, 0xB400, 0x4200, 0x3000, 0x4000, 0xBC00, 0x3800, 0x4900];
const FLOATS: [f32; 8] = [1.5, -0.25, 3.0, 0.125, -1e-3, 65536.5, 0.1, -7.0];

fn half_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f32 / 1024.0;
    sign * if e == 0 { m * 2f32.powi(-14) } else { (1.0 + m) * 2f32.powi(e - 15) }
}

/// The vertex buffer bytes for one format.
fn data(kind: Kind, layout: Layout) -> Vec<u8> {
    let mut out: Vec<u8> = (0..VERTICES * STRIDE).map(|i| ((i * 37 + 11) % 256) as u8).collect();
    if kind == Float {
        for v in 0..VERTICES {
            let b = &mut out[v * STRIDE..(v + 1) * STRIDE];
            for c in 0..4 {
                let k = (v + c * 3) % 8;
                match layout {
                    Plain { bytes: 2, .. } => b[2 * c..2 * c + 2].copy_from_slice(&HALVES[k].to_le_bytes()),
                    _ => b[4 * c..4 * c + 4].copy_from_slice(&FLOATS[k].to_le_bytes()),
                }
            }
        }
    }
    out
}

/// What the shader must see (as 32-bit patterns) for one vertex's bytes.
fn expected(kind: Kind, layout: Layout, b: &[u8]) -> [u32; 4] {
    let int_default = [0u32, 0, 0, 1];
    let float_default = [0f32, 0.0, 0.0, 1.0].map(f32::to_bits);
    let mut out = if matches!(kind, Uint | Sint) { int_default } else { float_default };
    // (raw bits, width in bits) of each present component, R first.
    let comps: Vec<(u32, u32)> = match layout {
        Plain { bytes, n } => (0..n)
            .map(|c| {
                let mut v = 0u32;
                for k in 0..bytes {
                    v |= (b[c * bytes + k] as u32) << (8 * k);
                }
                (v, 8 * bytes as u32)
            })
            .collect(),
        Bgra8 => [2, 1, 0, 3].iter().map(|&i| (b[i] as u32, 8)).collect(),
        A2b10g10r10 => {
            let w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            vec![(w & 0x3ff, 10), ((w >> 10) & 0x3ff, 10), ((w >> 20) & 0x3ff, 10), (w >> 30, 2)]
        }
    };
    for (c, &(v, n)) in comps.iter().enumerate() {
        let max = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        let signed = if n == 32 { v as i32 } else { ((v << (32 - n)) as i32) >> (32 - n) };
        out[c] = match kind {
            Uint => v,
            Sint => signed as u32,
            Unorm => ((v as f64 / max as f64) as f32).to_bits(),
            Snorm => ((signed as f64 / (max >> 1) as f64).max(-1.0) as f32).to_bits(),
            Float if n == 16 => half_to_f32(v as u16).to_bits(),
            Float => v,
        };
    }
    out
}

/// Whether two results agree: integers exactly, floats within a relative 1e-6.
fn agree(kind: Kind, got: [u32; 4], want: [u32; 4]) -> bool {
    got.iter().zip(want).all(|(&g, w)| match kind {
        Uint | Sint => g == w,
        _ => {
            let (g, w) = (f32::from_bits(g), f32::from_bits(w));
            (g - w).abs() <= 1e-6 * w.abs().max(1.0)
        }
    })
}

fn check_format(ctx: &Context, target: &Target, format: V, kind: Kind, layout: Layout) -> Check {
    let vs = match kind {
        Uint => UINT_VS,
        Sint => SINT_VS,
        _ => FLOAT_VS,
    };
    let bindings = [storage(0)];
    let vb_desc = [vk::VertexInputBindingDescription {
        binding: 0,
        stride: STRIDE as u32,
        input_rate: vk::VertexInputRate::VERTEX,
    }];
    let attr = [vk::VertexInputAttributeDescription { location: 0, binding: 0, format, offset: 0 }];
    let desc = GraphicsDesc {
        vertex: vs,
        bindings: &bindings,
        vertex_bindings: &vb_desc,
        vertex_attributes: &attr,
        topology: vk::PrimitiveTopology::POINT_LIST,
        rasterizer_discard: true,
        ..Default::default()
    };
    let pipe = GraphicsPipeline::new(ctx, target, &desc).map_err(err)?;
    let out = Buffer::new(ctx, (VERTICES * 16) as u64, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    pipe.bind_storage_buffer(0, &out);
    let bytes = data(kind, layout);
    let vb = Buffer::with_data(ctx, &bytes, vk::BufferUsageFlags::VERTEX_BUFFER).map_err(err)?;
    ctx.submit_once(|cmd| {
        target.begin(cmd, vk::ClearColorValue::default(), 1.0, 0);
        pipe.draw(ctx, cmd, &[], &[&vb], VERTICES as u32, 1);
        target.end(cmd);
    })
    .map_err(err)?;
    let got = out.read::<[u32; 4]>();
    for (v, g) in got.iter().enumerate() {
        let want = expected(kind, layout, &bytes[v * STRIDE..(v + 1) * STRIDE]);
        if !agree(kind, *g, want) {
            return Err(format!("{format:?} vertex {v}: got {g:08x?}, want {want:08x?}"));
        }
    }
    Ok(())
}

pub fn every_vertex_format(ctx: &Context) -> Result<String, String> {
    let target = Target::new(ctx, [1, 1], &[vk::Format::R8G8B8A8_UNORM], None).map_err(err)?;
    let mut tested = 0;
    for &(format, kind, layout) in FORMATS {
        // SAFETY: valid handles.
        let props = unsafe { ctx.instance().get_physical_device_format_properties(ctx.physical_device(), format) };
        if !props.buffer_features.contains(vk::FormatFeatureFlags::VERTEX_BUFFER) {
            continue;
        }
        check_format(ctx, &target, format, kind, layout)?;
        tested += 1;
    }
    if tested == 0 {
        return Err("the device offers none of the vertex formats".into());
    }
    Ok(format!("{tested} of {} formats offered", FORMATS.len()))
}
