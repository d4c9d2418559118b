//! Setup: the perspective divide and viewport transform, snapping to the sub-pixel grid,
//! facing, depth bias, and what a fragment's interpolated values are computed from.
//!
//! Screen coordinates are Vulkan's framebuffer coordinates (y down, pixel centres at +0.5).
//! Vertices snap to `1/2^SUBPIXEL_BITS` of a pixel, and coverage is decided exactly on that
//! grid ([`super::scan`]). The values a fragment reads (`frag_z`, `frag_w`, the barycentric
//! CSRs) are computed in f64 from the same snapped positions, at the pixel centre, whenever
//! they are asked for: helper lanes extrapolate the same planes, which is what derivatives
//! need.

use super::clip::ClipVertex;
use crate::abi::format::Depth;
use crate::abi::gfx::limits::SUBPIXEL_BITS;

/// One sub-pixel step per pixel.
pub const ONE: i64 = 1 << SUBPIXEL_BITS;

/// The viewport transform.
#[derive(Clone, Copy, Debug)]
pub struct Viewport {
    /// Centre and half-extent in x and y; depth offset and scale.
    pub cx: f64,
    pub cy: f64,
    pub hx: f64,
    pub hy: f64,
    pub oz: f64,
    pub pz: f64,
}

impl Viewport {
    /// From the state record's x, y, width, height, minDepth, maxDepth (a negative height
    /// flips y).
    pub fn new(v: [f32; 6]) -> Viewport {
        let [x, y, w, h, zmin, zmax] = v.map(|f| f as f64);
        Viewport { cx: x + w / 2.0, cy: y + h / 2.0, hx: w / 2.0, hy: h / 2.0, oz: zmin, pz: zmax - zmin }
    }

    pub fn project(&self, v: &ClipVertex) -> ScreenVertex {
        let [x, y, z, w] = v.c;
        let inv = 1.0 / w;
        ScreenVertex {
            x: self.cx + x * inv * self.hx,
            y: self.cy + y * inv * self.hy,
            z: self.oz + z * inv * self.pz,
            invw: inv,
            b: v.b,
        }
    }
}

/// A vertex after the viewport transform.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScreenVertex {
    pub x: f64,
    pub y: f64,
    pub z: f64,
    /// 1 / clip w.
    pub invw: f64,
    /// Barycentrics in the original primitive.
    pub b: [f64; 3],
}

impl ScreenVertex {
    /// The position on the sub-pixel grid (round to nearest).
    pub fn snap(&self) -> [i64; 2] {
        [(self.x * ONE as f64).round() as i64, (self.y * ONE as f64).round() as i64]
    }
}

/// Twice the signed area of a polygon on the sub-pixel grid (positive: clockwise on
/// screen, y down).
pub fn area2(p: &[[i64; 2]]) -> i64 {
    let n = p.len();
    (0..n).map(|i| p[i][0] * p[(i + 1) % n][1] - p[(i + 1) % n][0] * p[i][1]).sum()
}

/// Whether a polygon of signed area `area2` is front-facing. Vulkan's `a` is minus half the
/// sum of `area2`'s terms, so counter-clockwise (y up) polygons have `a > 0`.
pub fn front_facing(area2: i64, front_ccw: bool) -> bool {
    let a_positive = area2 < 0;
    a_positive == front_ccw
}

/// Depth bias of a polygon (Vulkan's `m * slope + r * constant`, clamped): `m` the largest
/// screen-space depth slope of the plane through `v`, `r` the depth format's minimum
/// resolvable difference (`1 / (2^n - 1)` for n-bit unorm; `2^(e - 23)` for f32, `e` the
/// exponent of the largest depth of the primitive; f32's rule when there is no depth
/// attachment).
pub fn depth_bias(v: &[ScreenVertex; 3], fmt: Option<Depth>, constant: f32, slope: f32, clamp: f32) -> f64 {
    let (e1, e2) =
        ([v[1].x - v[0].x, v[1].y - v[0].y, v[1].z - v[0].z], [v[2].x - v[0].x, v[2].y - v[0].y, v[2].z - v[0].z]);
    let det = e1[0] * e2[1] - e1[1] * e2[0];
    let m = if det == 0.0 {
        0.0
    } else {
        let dzdx = (e1[2] * e2[1] - e2[2] * e1[1]) / det;
        let dzdy = (e2[2] * e1[0] - e1[2] * e2[0]) / det;
        dzdx.abs().max(dzdy.abs())
    };
    let r = match fmt {
        Some(Depth::D16) => 1.0 / 65535.0,
        Some(Depth::D24) => 1.0 / 16_777_215.0,
        _ => {
            let zmax = v.iter().map(|p| p.z.abs()).fold(0.0, f64::max);
            // The biased f32 exponent of the largest depth (denormals and 0 as the smallest).
            let e = ((zmax as f32).to_bits() >> 23 & 0xFF).max(1) as i32;
            (2f64).powi(e - 127 - 23)
        }
    };
    let o = m * slope as f64 + r * constant as f64;
    let c = clamp as f64;
    if c > 0.0 {
        o.min(c)
    } else if c < 0.0 {
        o.max(c)
    } else {
        o
    }
}

/// What a rasterized piece of a primitive interpolates from.
#[derive(Clone, Debug, PartialEq)]
pub enum Interp {
    /// A triangle on the sub-pixel grid (clockwise: `area2 > 0`) with its vertices' depth,
    /// 1 / w and barycentrics in the original primitive.
    Triangle { v: [[i64; 2]; 3], area2: i64, z: [f64; 3], invw: [f64; 3], b: [[f64; 3]; 3] },
    /// A line from `p[0]` to `p[1]` (screen coordinates).
    Line { p: [[f64; 2]; 2], z: [f64; 2], invw: [f64; 2], b: [[f64; 3]; 2] },
    /// A point of side `size` centred at `c`.
    Point { c: [f64; 2], size: f64, z: f64, invw: f64, b: [f64; 3] },
}

/// A rasterized primitive (or piece of one) as its fragments see it.
#[derive(Clone, Debug, PartialEq)]
pub struct RasterPrim {
    pub interp: Interp,
    /// Vertex-output slots (provoking vertex first).
    pub slots: [u32; 3],
    pub front: bool,
    pub id: u32,
    /// Depth bias added to every fragment's depth.
    pub bias: f64,
}

/// The values at one pixel centre.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Window depth with the bias, before any clamp.
    pub z: f32,
    /// 1 / clip w.
    pub w: f32,
    /// Barycentrics (i, j) of vertices 1 and 2: perspective-correct and linear.
    pub bary: [f32; 2],
    pub linear: [f32; 2],
    /// `gl_PointCoord`.
    pub point: [f32; 2],
}

fn weigh(l: &[f64], invw: &[f64], b: &[[f64; 3]], z: &[f64], bias: f64) -> Sample {
    let (mut lin, mut per, mut q, mut zz) = ([0.0; 3], [0.0; 3], 0.0, 0.0);
    for k in 0..l.len() {
        let qk = l[k] * invw[k];
        q += qk;
        zz += l[k] * z[k];
        for c in 0..3 {
            lin[c] += l[k] * b[k][c];
            per[c] += qk * b[k][c];
        }
    }
    let per = if q != 0.0 { per.map(|x| x / q) } else { lin };
    Sample {
        z: (zz + bias) as f32,
        w: q as f32,
        bary: [per[1] as f32, per[2] as f32],
        linear: [lin[1] as f32, lin[2] as f32],
        point: [0.0; 2],
    }
}

impl RasterPrim {
    /// The values at the centre of pixel (`px`, `py`).
    pub fn at(&self, px: u32, py: u32) -> Sample {
        match &self.interp {
            Interp::Triangle { v, area2, z, invw, b } => {
                let p = [px as i64 * ONE + ONE / 2, py as i64 * ONE + ONE / 2];
                let e = |a: usize, c: usize| {
                    ((v[c][0] - v[a][0]) * (p[1] - v[a][1]) - (v[c][1] - v[a][1]) * (p[0] - v[a][0])) as f64
                };
                let a = *area2 as f64;
                let l = [e(1, 2) / a, e(2, 0) / a, e(0, 1) / a];
                weigh(&l, invw, b, z, self.bias)
            }
            Interp::Line { p, z, invw, b } => {
                let c = [px as f64 + 0.5, py as f64 + 0.5];
                let d = [p[1][0] - p[0][0], p[1][1] - p[0][1]];
                let len2 = d[0] * d[0] + d[1] * d[1];
                let t = if len2 == 0.0 { 0.0 } else { ((c[0] - p[0][0]) * d[0] + (c[1] - p[0][1]) * d[1]) / len2 };
                let t = t.clamp(0.0, 1.0);
                weigh(&[1.0 - t, t], invw, b, z, self.bias)
            }
            Interp::Point { c, size, z, invw, b } => {
                let mut s = weigh(&[1.0], &[*invw], &[*b], &[*z], self.bias);
                s.point =
                    [(0.5 + (px as f64 + 0.5 - c[0]) / size) as f32, (0.5 + (py as f64 + 0.5 - c[1]) / size) as f32];
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sv(x: f64, y: f64, z: f64, w: f64, k: usize) -> ScreenVertex {
        let mut b = [0.0; 3];
        b[k] = 1.0;
        ScreenVertex { x, y, z, invw: 1.0 / w, b }
    }

    /// Interpolation weights at known pixels of a hand-solved triangle: (0,0), (8,0), (0,8)
    /// in pixels, w 1, 2, 4. At pixel (1, 1)'s centre (1.5, 1.5) the screen weights are
    /// (0.625, 0.1875, 0.1875); perspective-correct: q = (0.625, 0.09375, 0.046875) / 0.765625.
    #[test]
    fn weights_at_a_known_pixel() {
        let v = [sv(0.0, 0.0, 0.0, 1.0, 0), sv(8.0, 0.0, 0.5, 2.0, 1), sv(0.0, 8.0, 1.0, 4.0, 2)];
        let s = v.map(|p| p.snap());
        let prim = RasterPrim {
            interp: Interp::Triangle {
                v: s,
                area2: area2(&s),
                z: v.map(|p| p.z),
                invw: v.map(|p| p.invw),
                b: v.map(|p| p.b),
            },
            slots: [0, 1, 2],
            front: true,
            id: 0,
            bias: 0.0,
        };
        let at = prim.at(1, 1);
        assert_eq!(at.linear, [0.1875, 0.1875]);
        assert_eq!(at.bary, [(0.09375 / 0.765625) as f32, (0.046875 / 0.765625) as f32]);
        assert_eq!(at.z, (0.1875 * 0.5 + 0.1875) as f32);
        assert_eq!(at.w, 0.765625);
    }

    #[test]
    fn facing_and_bias() {
        // (0,0) (1,0) (0,1) is clockwise as seen on the y-down framebuffer: area2 > 0, so
        // Vulkan's a < 0: back-facing when front faces are counter-clockwise.
        let cw = [[0, 0], [ONE, 0], [0, ONE]];
        assert!(area2(&cw) > 0);
        assert!(!front_facing(area2(&cw), true));
        assert!(front_facing(area2(&cw), false));
        // A plane rising 1/8 per pixel in x: m = 0.125.
        let v = [sv(0.0, 0.0, 0.0, 1.0, 0), sv(8.0, 0.0, 1.0, 1.0, 1), sv(0.0, 8.0, 0.0, 1.0, 2)];
        assert_eq!(depth_bias(&v, Some(Depth::D16), 2.0, 4.0, 0.0), 0.5 + 2.0 / 65535.0);
        assert_eq!(depth_bias(&v, Some(Depth::D16), 2.0, 4.0, 0.25), 0.25);
        assert_eq!(depth_bias(&v, Some(Depth::D16), -2.0, -4.0, -0.25), -0.25);
        // f32: the largest depth is 1.0 (exponent 0): r = 2^-23.
        assert_eq!(depth_bias(&v, Some(Depth::D32F), 1.0, 0.0, 0.0), (2f64).powi(-23));
    }
}
