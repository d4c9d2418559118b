//! Multisample resolves, run by the command processor when the stream reaches them (like a
//! blit): `vkCmdResolveImage`, render-pass resolve attachments at the end of a subpass, and
//! dynamic rendering's resolves at `vkCmdEndRendering`. Each pixel of the destination is one
//! value made from the source pixel's samples (`abi::gfx::samples` lays them out): their
//! average (colour formats that are not integer, depth), sample 0, or their minimum or
//! maximum (depth and stencil).

use crate::image::{Image, Subresource};
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::abi::format::{self, Aspect, Format};
use vortex_model::fault::{Fault, FaultKind};
use vortex_model::mem::MemoryMap;

/// How a pixel's samples become one value (`VkResolveModeFlagBits`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    SampleZero,
    Average,
    Min,
    Max,
}

impl Mode {
    /// The mode of a `VkResolveModeFlagBits` value; `None` for `NONE` and modes not offered.
    pub fn of(m: vk::ResolveModeFlags) -> Option<Mode> {
        Some(match m {
            vk::ResolveModeFlags::SAMPLE_ZERO => Mode::SampleZero,
            vk::ResolveModeFlags::AVERAGE => Mode::Average,
            vk::ResolveModeFlags::MIN => Mode::Min,
            vk::ResolveModeFlags::MAX => Mode::Max,
            _ => return None,
        })
    }

    /// What a colour resolve of format `f` does (`vkCmdResolveImage`, render-pass colour
    /// resolves): average, or sample 0 for integer formats.
    pub fn color(f: &Format) -> Mode {
        if f.is_integer() {
            Mode::SampleZero
        } else {
            Mode::Average
        }
    }
}

/// The modes the device offers for depth and for stencil resolves
/// (`supportedDepthResolveModes`, `supportedStencilResolveModes`).
pub const DEPTH_MODES: vk::ResolveModeFlags = vk::ResolveModeFlags::from_raw(
    vk::ResolveModeFlags::SAMPLE_ZERO.as_raw()
        | vk::ResolveModeFlags::AVERAGE.as_raw()
        | vk::ResolveModeFlags::MIN.as_raw()
        | vk::ResolveModeFlags::MAX.as_raw(),
);
pub const STENCIL_MODES: vk::ResolveModeFlags = vk::ResolveModeFlags::from_raw(
    vk::ResolveModeFlags::SAMPLE_ZERO.as_raw()
        | vk::ResolveModeFlags::MIN.as_raw()
        | vk::ResolveModeFlags::MAX.as_raw(),
);

/// One region of one plane: `extent` pixels from `src_offset` of the source's (level 0,
/// `src_layer + l`) to `dst_offset` of the destination's (`dst_level`, `dst_layer + l`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolveRegion {
    pub plane: Aspect,
    pub mode: Mode,
    pub src_layer: u32,
    pub dst_level: u32,
    pub dst_layer: u32,
    pub layers: u32,
    pub src_offset: [i32; 2],
    pub dst_offset: [i32; 2],
    pub extent: [u32; 2],
}

#[derive(Clone)]
pub struct ResolveJob {
    pub src: Arc<Image>,
    pub dst: Arc<Image>,
    pub regions: Vec<ResolveRegion>,
}

impl ResolveJob {
    /// A job whose regions are checked against both images: the source multisampled, the
    /// destination not, the same format class, every region inside both.
    pub fn new(src: Arc<Image>, dst: Arc<Image>, regions: Vec<ResolveRegion>) -> VkResult<ResolveJob> {
        if src.samples == 1 || dst.samples != 1 {
            tracing::error!("resolve from {} samples to {}", src.samples, dst.samples);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        for r in &regions {
            let bytes = |i: &Image| i.format.plane_texel_bytes(r.plane);
            let fits = |i: &Image, level: u32, layer: u32, o: [i32; 2]| {
                let e = i.level_extent(level);
                level < i.mip_levels
                    && layer.checked_add(r.layers).is_some_and(|end| end <= i.array_layers)
                    && (0..2).all(|a| o[a] >= 0 && (o[a] as u64 + r.extent[a] as u64) <= e[a] as u64)
            };
            if bytes(&src).is_none()
                || bytes(&src) != bytes(&dst)
                || !fits(&src, 0, r.src_layer, r.src_offset)
                || !fits(&dst, r.dst_level, r.dst_layer, r.dst_offset)
            {
                tracing::error!("resolve region {r:?} does not fit {} to {}", src.format.name, dst.format.name);
                return Err(vk::Result::ERROR_UNKNOWN);
            }
        }
        src.address()?;
        dst.address()?;
        Ok(ResolveJob { src, dst, regions })
    }
}

/// Runs a resolve job on device memory.
pub fn run(m: &MemoryMap, job: &ResolveJob) -> Result<(), Fault> {
    let (Some(sbase), Some(dbase)) = (job.src.bound_address(), job.dst.bound_address()) else {
        return Err(Fault::new(FaultKind::BadLaunch, "resolve between images without memory".to_string()));
    };
    let n = job.src.samples as usize;
    for r in &job.regions {
        let tb = job.src.format.plane_texel_bytes(r.plane).unwrap_or(0) as usize;
        let mut samples = vec![0u8; tb * n * r.extent[0] as usize];
        let mut out = vec![0u8; tb * r.extent[0] as usize];
        for l in 0..r.layers {
            let ss = job.src.plane_subresource(r.plane, 0, r.src_layer + l);
            let ds = job.dst.plane_subresource(r.plane, r.dst_level, r.dst_layer + l);
            let row = |s: &Subresource, base: u64, o: [i32; 2], y: u32, px: usize| {
                base + s.offset + (o[1] as u64 + y as u64) * s.row_pitch + o[0] as u64 * px as u64
            };
            for y in 0..r.extent[1] {
                m.read(row(&ss, sbase, r.src_offset, y, tb * n), &mut samples)?;
                for (pixel, o) in samples.chunks_exact(tb * n).zip(out.chunks_exact_mut(tb)) {
                    resolve_pixel(job.src.format, r.plane, r.mode, pixel, o);
                }
                m.write(row(&ds, dbase, r.dst_offset, y, tb), &out)?;
            }
        }
    }
    Ok(())
}

/// One pixel: `samples` (the plane's texels of every sample) resolved into `out`.
fn resolve_pixel(f: &Format, plane: Aspect, mode: Mode, samples: &[u8], out: &mut [u8]) {
    let tb = out.len();
    let texels = samples.chunks_exact(tb);
    let n = texels.len();
    match (plane, mode) {
        (_, Mode::SampleZero) => out.copy_from_slice(&samples[..tb]),
        (Aspect::Color, _) => {
            // Average in the register form (linear for sRGB, as the output merger blends).
            let mut acc = [0f64; 4];
            for t in texels {
                for (a, v) in acc.iter_mut().zip(format::decode_texel(f, t)) {
                    *a += f32::from_bits(v) as f64;
                }
            }
            format::encode_texel(f, acc.map(|a| ((a / n as f64) as f32).to_bits()), out);
        }
        (Aspect::Depth, _) => {
            let d = f.depth().expect("a depth plane");
            let raw = |t: &[u8]| t.iter().rev().fold(0u32, |v, &b| v << 8 | b as u32);
            let z: Vec<f32> = texels.map(|t| format::decode_depth(d, raw(t))).collect();
            let v = match mode {
                Mode::Min => z.iter().copied().fold(f32::INFINITY, f32::min),
                Mode::Max => z.iter().copied().fold(f32::NEG_INFINITY, f32::max),
                _ => (z.iter().map(|&v| v as f64).sum::<f64>() / n as f64) as f32,
            };
            out.copy_from_slice(&format::encode_depth(d, v).to_le_bytes()[..tb]);
        }
        (Aspect::Stencil, _) => {
            let s = texels.map(|t| t[0]);
            out[0] = if mode == Mode::Min { s.min() } else { s.max() }.unwrap_or(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixels_resolve_by_mode() {
        let rgba8 = format::lookup(format::R8G8B8A8_UNORM).unwrap();
        let s = [0u8, 0, 0, 255, 255, 255, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255];
        let mut out = [0u8; 4];
        resolve_pixel(rgba8, Aspect::Color, Mode::Average, &s, &mut out);
        assert_eq!(out, [191, 64, 0, 255]);
        resolve_pixel(rgba8, Aspect::Color, Mode::SampleZero, &s, &mut out);
        assert_eq!(out, [0, 0, 0, 255]);
        let d32 = format::find(vk::Format::D32_SFLOAT.as_raw() as u32).unwrap();
        let z: Vec<u8> = [0.5f32, 0.25, 1.0, 0.75].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = [0u8; 4];
        for (mode, want) in [(Mode::Min, 0.25), (Mode::Max, 1.0), (Mode::Average, 0.625), (Mode::SampleZero, 0.5)] {
            resolve_pixel(d32, Aspect::Depth, mode, &z, &mut out);
            assert_eq!(f32::from_le_bytes(out), want, "{mode:?}");
        }
        let mut st = [0u8];
        resolve_pixel(d32, Aspect::Stencil, Mode::Max, &[3, 9, 1, 4], &mut st);
        assert_eq!(st, [9]);
        resolve_pixel(d32, Aspect::Stencil, Mode::Min, &[3, 9, 1, 4], &mut st);
        assert_eq!(st, [1]);
        assert_eq!(Mode::color(format::lookup(format::R32_UINT).unwrap()), Mode::SampleZero);
    }
}
