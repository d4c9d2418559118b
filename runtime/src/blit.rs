//! `vkCmdBlitImage`, run by the command processor when the stream reaches it: each
//! destination texel of a region samples the source level with unnormalized coordinates,
//! clamped to its edge, nearest or (bi/tri)linear, and is converted from the source format to
//! the destination's through the register form of `abi::format` (floats, or integers for
//! integer formats, which Vulkan blits only to integer formats and only with nearest).

use crate::image::Image;
use std::sync::Arc;
use vortex_model::abi::format::{self, Format};
use vortex_model::fault::Fault;
use vortex_model::mem::MemoryMap;

/// One `VkImageBlit`: levels, first layers and layer count, and the two corners of each box
/// (a flipped box mirrors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlitRegion {
    pub src_level: u32,
    pub src_layer: u32,
    pub dst_level: u32,
    pub dst_layer: u32,
    pub layers: u32,
    pub src: [[i32; 3]; 2],
    pub dst: [[i32; 3]; 2],
}

#[derive(Clone)]
pub struct BlitJob {
    pub src: Arc<Image>,
    pub dst: Arc<Image>,
    pub regions: Vec<BlitRegion>,
    pub linear: bool,
}

/// A level-layer (or 3D level) of texels in host memory.
pub struct Surface<'a> {
    pub data: &'a [u8],
    pub format: &'static Format,
    pub extent: [u32; 3],
    pub row_pitch: usize,
    pub slice_pitch: usize,
}

impl Surface<'_> {
    /// Texel (x, y, z), clamped to the edge, in register form.
    fn texel(&self, x: i64, y: i64, z: i64) -> [u32; 4] {
        let c = |v: i64, n: u32| v.clamp(0, n as i64 - 1) as usize;
        let tb = self.format.texel_bytes() as usize;
        let at =
            c(z, self.extent[2]) * self.slice_pitch + c(y, self.extent[1]) * self.row_pitch + c(x, self.extent[0]) * tb;
        format::decode_texel(self.format, &self.data[at..at + tb])
    }

    /// A sample at unnormalized (u, v, w).
    fn sample(&self, u: f64, v: f64, w: f64, linear: bool) -> [u32; 4] {
        if !linear || self.format.is_integer() {
            return self.texel(u.floor() as i64, v.floor() as i64, w.floor() as i64);
        }
        // Weights of the two texels around each coordinate (texel centres at +0.5); a
        // dimension of extent 1 always reads its one texel.
        let axis = |t: f64| {
            let t = t - 0.5;
            let i = t.floor();
            (i as i64, (t - i) as f32)
        };
        let ((x0, ax), (y0, ay), (z0, az)) = (axis(u), axis(v), axis(w));
        let mut acc = [0f32; 4];
        for (dz, wz) in [(0, 1.0 - az), (1, az)] {
            for (dy, wy) in [(0, 1.0 - ay), (1, ay)] {
                for (dx, wx) in [(0, 1.0 - ax), (1, ax)] {
                    let wt = wx * wy * wz;
                    if wt == 0.0 {
                        continue;
                    }
                    let t = self.texel(x0 + dx, y0 + dy, z0 + dz);
                    for c in 0..4 {
                        acc[c] += wt * f32::from_bits(t[c]);
                    }
                }
            }
        }
        acc.map(f32::to_bits)
    }
}

/// Blits `src_box` of `src` to `dst_box` of `dst` (bytes of `dst.format`, laid out like
/// `dst_surface`).
pub fn blit(
    src: &Surface,
    dst: &mut [u8],
    dst_surface: (&'static Format, [usize; 2]),
    src_box: [[i32; 3]; 2],
    dst_box: [[i32; 3]; 2],
    linear: bool,
) {
    let (dfmt, [row, slice]) = dst_surface;
    let tb = dfmt.texel_bytes() as usize;
    let scale = |a: usize| (src_box[1][a] - src_box[0][a]) as f64 / (dst_box[1][a] - dst_box[0][a]) as f64;
    let s = [scale(0), scale(1), scale(2)];
    let range = |a: usize| dst_box[0][a].min(dst_box[1][a])..dst_box[0][a].max(dst_box[1][a]);
    for z in range(2) {
        let w = (z as f64 + 0.5 - dst_box[0][2] as f64) * s[2] + src_box[0][2] as f64;
        for y in range(1) {
            let v = (y as f64 + 0.5 - dst_box[0][1] as f64) * s[1] + src_box[0][1] as f64;
            for x in range(0) {
                let u = (x as f64 + 0.5 - dst_box[0][0] as f64) * s[0] + src_box[0][0] as f64;
                let t = src.sample(u, v, w, linear);
                let at = z as usize * slice + y as usize * row + x as usize * tb;
                format::encode_texel(dfmt, t, &mut dst[at..at + tb]);
            }
        }
    }
}

/// Runs a blit job on device memory.
pub fn run(m: &MemoryMap, job: &BlitJob) -> Result<(), Fault> {
    let (sbase, dbase) = (job.src.bound_address(), job.dst.bound_address());
    let (Some(sbase), Some(dbase)) = (sbase, dbase) else {
        return Err(Fault::new(
            vortex_model::fault::FaultKind::BadLaunch,
            "blit between images without memory".to_string(),
        ));
    };
    for r in &job.regions {
        for l in 0..r.layers {
            let ss = job.src.subresource(r.src_level, r.src_layer + l);
            let ds = job.dst.subresource(r.dst_level, r.dst_layer + l);
            let mut sdata = vec![0u8; ss.layer_pitch as usize];
            m.read(sbase + ss.offset, &mut sdata)?;
            let mut ddata = vec![0u8; ds.layer_pitch as usize];
            m.read(dbase + ds.offset, &mut ddata)?;
            let src = Surface {
                data: &sdata,
                format: job.src.format,
                extent: ss.extent,
                row_pitch: ss.row_pitch as usize,
                slice_pitch: ss.slice_pitch as usize,
            };
            let surface = (job.dst.format, [ds.row_pitch as usize, ds.slice_pitch as usize]);
            blit(&src, &mut ddata, surface, r.src, r.dst, job.linear);
            m.write(dbase + ds.offset, &ddata)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surface(data: &[u8], f: u32, extent: [u32; 3]) -> Surface<'_> {
        let format = format::lookup(f).unwrap();
        let row = (extent[0] * format.texel_bytes()) as usize;
        Surface { data, format, extent, row_pitch: row, slice_pitch: row * extent[1] as usize }
    }

    #[test]
    fn nearest_mirrors_and_scales() {
        // A 4x1 R8 row 10, 20, 30, 40 blitted flipped onto 8x1: each texel twice, reversed.
        let src = [10u8, 20, 30, 40];
        let s = surface(&src, format::R8_UINT, [4, 1, 1]);
        let mut dst = [0u8; 8];
        let f = format::lookup(format::R8_UINT).unwrap();
        blit(&s, &mut dst, (f, [8, 8]), [[0, 0, 0], [4, 1, 1]], [[8, 0, 0], [0, 1, 1]], false);
        assert_eq!(dst, [40, 40, 30, 30, 20, 20, 10, 10]);
    }

    #[test]
    fn linear_filters_and_converts() {
        // Two R32F texels 0.0 and 1.0 magnified to 4: centres at 0.25 .. 0.75 of the way.
        let src: Vec<u8> = [0.0f32, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let s = surface(&src, format::R32_SFLOAT, [2, 1, 1]);
        let f = format::lookup(format::R8_UNORM).unwrap();
        let mut dst = [0u8; 4];
        blit(&s, &mut dst, (f, [4, 4]), [[0, 0, 0], [2, 1, 1]], [[0, 0, 0], [4, 1, 1]], true);
        // u = 0.25, 0.75, 1.25, 1.75 -> 0, 0.25, 0.75, 1 (clamped at the edges), in unorm8.
        assert_eq!(dst, [0, 64, 191, 255]);
    }
}
