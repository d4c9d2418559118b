//! Level of detail: implicit derivatives from the lanes' quads, the scale factor, the LOD
//! and the image level(s) it selects (the spec's "Derivative Image Operations" and "Scale
//! Factor Operation, LOD Operation and Image Level(s) Selection").

use super::sampler::Sampler;
use crate::abi::gfx::sampler::MAX_LOD_BIAS;
use crate::abi::MAX_THREADS;

/// `(∂/∂x, ∂/∂y)` of up to three coordinates.
pub type Grad = [[f32; 3]; 2];

/// Implicit derivatives of registers `b..b + dims` for every lane, from the lane's quad
/// (lanes `4q..4q + 4`: pixels (x, y), (x+1, y), (x, y+1), (x+1, y+1)). Coarse: the four
/// lanes share the quad's first row and column differences. A difference needs both of its
/// lanes in `mask` (helper lanes are); when the first row's (column's) pair is not, the
/// second one serves, and with neither the derivative is 0, so lanes that are not running
/// never feed a result.
pub fn quad_derivatives(regs: &[u32], b: usize, dims: usize, nt: usize, mask: u32) -> [Grad; MAX_THREADS] {
    let mut out = [[[0.0; 3]; 2]; MAX_THREADS];
    let on = |l: usize| l < nt && mask >> l & 1 != 0;
    for q in (0..nt).step_by(4) {
        let mut g: Grad = [[0.0; 3]; 2];
        for (axis, pairs) in [[(0, 1), (2, 3)], [(0, 2), (1, 3)]].into_iter().enumerate() {
            let Some((p, r)) = pairs.into_iter().find(|&(p, r)| on(q + p) && on(q + r)) else { continue };
            for c in 0..dims {
                let v = |px: usize| f32::from_bits(regs[(b + c) * nt + q + px]);
                g[axis][c] = v(r) - v(p);
            }
        }
        for l in q..(q + 4).min(nt) {
            out[l] = g;
        }
    }
    out
}

/// `ρmax`: the larger of the scale factors along x and y, each the length of the
/// derivatives of the normalized coordinates scaled by the base level's extent (the exact
/// form of the spec's bounds on `ρx` and `ρy`).
pub fn rho_max(g: &Grad, extent: [f32; 3]) -> f32 {
    let len = |d: [f32; 3]| {
        let m = [0, 1, 2].map(|c| d[c] * extent[c]);
        (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]).sqrt()
    };
    len(g[0]).max(len(g[1]))
}

/// `(λ', λ)` from `λbase`: the sampler's and the shader's bias together clamped to
/// `±maxSamplerLodBias`, then `λ'` clamped to the sampler's `[minLod, maxLod]`.
pub fn lambda(base: f32, smp: &Sampler, shader_bias: f32) -> (f32, f32) {
    let bias = (smp.bias + shader_bias).clamp(-MAX_LOD_BIAS, MAX_LOD_BIAS);
    let prime = base + bias;
    let l = if prime > smp.max_lod {
        smp.max_lod
    } else if prime >= smp.min_lod {
        prime
    } else {
        // Below minLod, and NaN (a NaN coordinate's LOD), take minLod.
        smp.min_lod
    };
    (prime, l)
}

/// The level(s) a sample reads, relative to the view's base level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Levels {
    One(u32),
    /// `d_hi`, `d_lo` and the weight `δ` of `d_lo`.
    Two(u32, u32, f32),
}

/// Image level selection from `λ` for a view of `count` levels: `d' = clamp(λ, 0, q)`,
/// then the nearest level (`⌈d' + 0.5⌉ - 1`, the spec's preferred rounding) or the two
/// around it. Also returns `d_l`, what `OpImageQueryLod` reports. `δ` is not quantised.
pub fn levels(lambda: f32, count: u32, mip_linear: bool) -> (Levels, f32) {
    let q = (count.max(1) - 1) as f32;
    let d = lambda.clamp(0.0, q);
    if !mip_linear {
        let n = ((d + 0.5).ceil() - 1.0).max(0.0);
        return (Levels::One(n as u32), n);
    }
    let hi = d.floor();
    let delta = d - hi;
    let lo = (hi + 1.0).min(q);
    if delta == 0.0 || lo == hi {
        (Levels::One(hi as u32), d)
    } else {
        (Levels::Two(hi as u32, lo as u32, delta), d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn smp(min_lod: f32, max_lod: f32, bias: f32) -> Sampler {
        Sampler {
            mag_linear: false,
            min_linear: false,
            mip_linear: false,
            address: [0; 3],
            bias,
            compare_op: 0,
            unnormalized: false,
            min_lod,
            max_lod,
            border: [0; 4],
        }
    }

    #[test]
    fn quads_give_coarse_derivatives_and_skip_lanes_not_running() {
        const NT: usize = 8;
        // One coordinate register: pixel p of quad q holds 10q + (p % 2) * 2 + (p / 2) * 5.
        let regs: Vec<u32> =
            (0..NT).map(|l| (10.0 * (l / 4) as f32 + ((l % 4) % 2 * 2 + (l % 4) / 2 * 5) as f32).to_bits()).collect();
        let g = quad_derivatives(&regs, 0, 1, NT, 0xFF);
        assert_eq!((g[0][0][0], g[0][1][0], g[7][0][0], g[7][1][0]), (2.0, 5.0, 2.0, 5.0));
        // Quad 1 without its first pixel: the second row and column serve.
        let g = quad_derivatives(&regs, 0, 1, NT, 0xEF);
        assert_eq!((g[5][0][0], g[5][1][0]), (2.0, 5.0));
        // Only one pixel running: no difference to take.
        let g = quad_derivatives(&regs, 0, 1, NT, 0x10);
        assert_eq!(g[4], [[0.0; 3]; 2]);
    }

    #[test]
    fn lambda_adds_clamped_biases_then_clamps_to_the_sampler() {
        assert_eq!(lambda(1.0, &smp(0.0, 10.0, 0.5), 0.25), (1.75, 1.75));
        assert_eq!(lambda(1.0, &smp(0.0, 10.0, 10.0), 10.0), (16.0, 10.0), "bias sum clamped to 15");
        assert_eq!(lambda(-3.0, &smp(0.5, 10.0, 0.0), 0.0), (-3.0, 0.5));
        assert_eq!(lambda(f32::NEG_INFINITY, &smp(0.0, 10.0, 0.0), 0.0).1, 0.0);
        assert_eq!(lambda(f32::NAN, &smp(0.25, 10.0, 0.0), 0.0).1, 0.25);
    }

    #[test]
    fn level_selection_rounds_half_down_and_blends_neighbours() {
        assert_eq!(levels(1.5, 4, false), (Levels::One(1), 1.0), "ceil(2.0) - 1: ties go down");
        assert_eq!(levels(1.51, 4, false).0, Levels::One(2));
        assert_eq!(levels(7.0, 4, false).0, Levels::One(3));
        assert_eq!(levels(-2.0, 4, false).0, Levels::One(0));
        assert_eq!(levels(1.25, 4, true), (Levels::Two(1, 2, 0.25), 1.25));
        assert_eq!(levels(3.0, 4, true).0, Levels::One(3));
        assert_eq!(levels(2.0, 4, true).0, Levels::One(2));
    }

    #[test]
    fn rho_is_the_longer_scaled_derivative() {
        let g = [[0.25, 0.0, 0.0], [0.0, 0.5, 0.0]];
        assert_eq!(rho_max(&g, [8.0, 4.0, 1.0]), 2.0);
        assert_eq!(rho_max(&[[0.3, 0.4, 0.0], [0.0; 3]], [10.0, 10.0, 1.0]), 5.0);
    }
}
