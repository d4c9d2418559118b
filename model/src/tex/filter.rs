//! Texel selection and filtering within a view: the wrapping operation, border
//! replacement, depth comparison, nearest and linear filtering within a level, mipmap
//! blending and gathers (the spec's "Image Sample Operations").

use super::lod::{self, Levels};
use super::sampler::{address, compare, Sampler};
use super::view::View;
use super::{cube, Shape, TexUnit};
use crate::abi::format::{Kind, Layout};
use crate::abi::gfx::tex;
use crate::mem::{MemFault, MemoryMap};

/// Normalized coordinates of one lane: `(s, t, r)`, or for cube maps `(s_face, t_face)` on
/// `face`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coords {
    pub st: [f32; 3],
    pub face: u32,
}

/// The wrapping operation on integer coordinate `i` of a level `size` texels long:
/// `Some` texel in range, or `None` for a border texel (clamp to border outside).
pub fn wrap(mode: u32, i: i64, size: i64) -> Option<i64> {
    let mirror = |n: i64| if n >= 0 { n } else { -(1 + n) };
    match mode {
        address::REPEAT => Some(i.rem_euclid(size)),
        address::MIRRORED_REPEAT => Some((size - 1) - mirror(i.rem_euclid(2 * size) - size)),
        address::CLAMP_TO_BORDER => (0..size).contains(&i).then_some(i),
        address::MIRROR_CLAMP_TO_EDGE => Some(mirror(i).clamp(0, size - 1)),
        // Clamp to edge, and modes the unit does not know.
        _ => Some(i.clamp(0, size - 1)),
    }
}

/// One lane's sample: the view, the sampler and what the instruction asks for.
pub struct Ctx<'a> {
    pub mem: &'a MemoryMap,
    pub view: &'a View,
    pub smp: &'a Sampler,
    pub shape: Shape,
    pub unit: &'a mut TexUnit,
    /// The array layer texels come from (cube arrays: the cube's first face-layer).
    pub layer: i64,
    /// The depth reference of a `Dref` instruction, clamped to [0, 1] for unorm depth.
    pub dref: Option<f32>,
}

impl Ctx<'_> {
    /// Coordinates that address texels: 1 (1D), 2 (2D, cube) or 3 (3D).
    fn axes(&self) -> usize {
        match self.shape.dim {
            tex::DIM_1D => 1,
            tex::DIM_3D => 3,
            _ => 2,
        }
    }

    fn is_cube(&self) -> bool {
        self.shape.dim == tex::DIM_CUBE
    }

    /// `(u, v, w)` on level `k`: scaled by the level's extent (not for unnormalized
    /// samplers), plus the constant offset (cube maps take none).
    fn uvw(&self, c: &Coords, k: u32) -> [f32; 3] {
        let l = self.view.level(k);
        let extent = [l.width, l.height, l.depth].map(|e| e.max(1) as f32);
        let mut out = [0.0; 3];
        for a in 0..self.axes() {
            let scaled = if self.smp.unnormalized { c.st[a] } else { c.st[a] * extent[a] };
            out[a] = scaled + if self.is_cube() { 0.0 } else { self.shape.offset[a] as f32 };
        }
        out
    }

    /// Where texel `at` of `face` is for `ImageDesc::texel_offset`.
    fn place(&self, at: [i64; 3], face: u32) -> [i64; 3] {
        match self.shape.dim {
            tex::DIM_1D => [at[0], self.layer, 0],
            tex::DIM_2D => [at[0], at[1], self.layer],
            tex::DIM_3D => at,
            _ => [at[0], at[1], self.layer + face as i64],
        }
    }

    /// The value of texel `ijk` of level `k` after wrapping (or cube edge handling), border
    /// replacement and depth comparison.
    fn texel(&mut self, k: u32, ijk: [i64; 3], face: u32) -> Result<[u32; 4], MemFault> {
        self.unit.texels += 1;
        let l = self.view.level(k);
        let size = [l.width, l.height, l.depth].map(|e| e.max(1) as i64);
        let raw = if self.is_cube() {
            self.cube_texel(k, ijk, face, size[0])?
        } else {
            let mut at = [0; 3];
            let mut inside = true;
            for a in 0..self.axes() {
                match wrap(self.smp.address[a], ijk[a], size[a]) {
                    Some(v) => at[a] = v,
                    None => inside = false,
                }
            }
            match inside {
                true => self.read(k, at, 0)?,
                false => None,
            }
        };
        Ok(self.finish(raw))
    }

    /// A cube texel, off its face in at most one of `i` and `j` when filtering linearly:
    /// from the neighbouring face across an edge; at a corner the average of the three
    /// texels that meet there (integer formats, which never filter, take the face's own).
    fn cube_texel(&mut self, k: u32, ijk: [i64; 3], face: u32, n: i64) -> Result<Option<[u32; 4]>, MemFault> {
        let (i, j) = (ijk[0], ijk[1]);
        let (ci, cj) = (i.clamp(0, n - 1), j.clamp(0, n - 1));
        if (ci, cj) == (i, j) {
            return self.read(k, [i, j, 0], face);
        }
        if ci != i && cj != j {
            let own = self.read(k, [ci, cj, 0], face)?;
            if self.view.fmt.is_integer() {
                return Ok(own);
            }
            let (f1, i1, j1) = cube::across_edge(face, i, cj, n);
            let (f2, i2, j2) = cube::across_edge(face, ci, j, n);
            let (a, b) = (self.read(k, [i1, j1, 0], f1)?, self.read(k, [i2, j2, 0], f2)?);
            let avg = |t: [Option<[u32; 4]>; 3]| {
                let mut s = [0.0f32; 4];
                for v in t.into_iter().flatten() {
                    for c in 0..4 {
                        s[c] += f32::from_bits(v[c]) / 3.0;
                    }
                }
                s.map(f32::to_bits)
            };
            return Ok(Some(avg([own, a, b])));
        }
        let (g, i2, j2) = cube::across_edge(face, i, j, n);
        self.read(k, [i2, j2, 0], g)
    }

    /// The stored texel `at` of `face` (of the lane's layer) on level `k`.
    fn read(&mut self, k: u32, at: [i64; 3], face: u32) -> Result<Option<[u32; 4]>, MemFault> {
        let p = self.place(at, face);
        self.view.texel(self.mem, k, p, self.unit)
    }

    /// Border replacement for a texel outside the level (the format's components from the
    /// border colour, the rest from conversion to RGBA), then the depth comparison.
    fn finish(&self, raw: Option<[u32; 4]>) -> [u32; 4] {
        let t = raw.unwrap_or_else(|| self.border());
        let Some(r) = self.dref else { return t };
        let pass = compare(self.smp.compare_op, r, f32::from_bits(t[0]));
        [if pass { 1.0f32 } else { 0.0 }.to_bits(), 0, 0, 1.0f32.to_bits()]
    }

    fn border(&self) -> [u32; 4] {
        let f = self.view.fmt;
        let one = if f.is_integer() { 1 } else { 1.0f32.to_bits() };
        let comps = if matches!(f.layout, Layout::DepthStencil { .. }) { 1 } else { f.comps as usize };
        let mut t = [0, 0, 0, one];
        t[..comps].copy_from_slice(&self.smp.border[..comps]);
        t
    }

    /// Level `k`'s filtered value at `c`: the texel `c` lies in (nearest; integer formats
    /// always), or the weighted 2, 4 or 8 texels around it (linear), weights in f32.
    fn level_value(&mut self, k: u32, c: &Coords, linear: bool) -> Result<[u32; 4], MemFault> {
        let uvw = self.uvw(c, k);
        if !linear || self.view.fmt.is_integer() {
            let mut ijk = uvw.map(|x| x.floor() as i64);
            if self.is_cube() {
                // Nearest filtering clamps to the face's edge.
                let l = self.view.level(k);
                ijk[0] = ijk[0].clamp(0, l.width.max(1) as i64 - 1);
                ijk[1] = ijk[1].clamp(0, l.height.max(1) as i64 - 1);
            }
            return self.texel(k, ijk, c.face);
        }
        let axes = self.axes();
        let x = uvw.map(|v| v - 0.5);
        let base = x.map(f32::floor);
        let frac = [0, 1, 2].map(|a| x[a] - base[a]);
        let mut acc = [0.0f32; 4];
        for corner in 0..1usize << axes {
            let mut w = 1.0f32;
            let mut ijk = [0i64; 3];
            for a in 0..axes {
                let up = corner >> a & 1 == 1;
                ijk[a] = base[a] as i64 + up as i64;
                w *= if up { frac[a] } else { 1.0 - frac[a] };
            }
            let t = self.texel(k, ijk, c.face)?;
            for ch in 0..4 {
                acc[ch] += w * f32::from_bits(t[ch]);
            }
        }
        Ok(acc.map(f32::to_bits))
    }

    /// A filtered sample at LOD `lambda`: the filter by magnification (`λ ≤ 0`) or
    /// minification, the level(s) by the mipmap mode, blended `(1 - δ) τ_hi + δ τ_lo`.
    /// Unnormalized samplers read the base level with the magnification filter; integer
    /// formats the nearest level.
    pub fn sample(&mut self, c: &Coords, lambda: f32) -> Result<[u32; 4], MemFault> {
        let smp = self.smp;
        if smp.unnormalized {
            return self.level_value(0, c, smp.mag_linear);
        }
        let linear = if lambda <= 0.0 { smp.mag_linear } else { smp.min_linear };
        let mip_linear = smp.mip_linear && !self.view.fmt.is_integer();
        match lod::levels(lambda, self.view.count, mip_linear).0 {
            Levels::One(k) => self.level_value(k, c, linear),
            Levels::Two(hi, lo, d) => {
                let (a, b) = (self.level_value(hi, c, linear)?, self.level_value(lo, c, linear)?);
                Ok([0, 1, 2, 3].map(|ch| ((1.0 - d) * f32::from_bits(a[ch]) + d * f32::from_bits(b[ch])).to_bits()))
            }
        }
    }

    /// A gather: component `comp` (the comparison result with `Dref`) of the four texels
    /// of the base level's linear footprint, in the order (i0, j1), (i1, j1), (i1, j0),
    /// (i0, j0).
    pub fn gather(&mut self, c: &Coords) -> Result<[u32; 4], MemFault> {
        let uvw = self.uvw(c, 0);
        let (i0, j0) = ((uvw[0] - 0.5).floor() as i64, (uvw[1] - 0.5).floor() as i64);
        let comp = if self.dref.is_some() { 0 } else { self.shape.comp };
        let mut out = [0; 4];
        for (o, (di, dj)) in out.iter_mut().zip([(0, 1), (1, 1), (1, 0), (0, 0)]) {
            *o = self.texel(0, [i0 + di, j0 + dj, 0], c.face)?[comp];
        }
        Ok(out)
    }
}

/// The depth reference as the comparison takes it: clamped to [0, 1] for unorm formats.
pub fn reference(view: &View, r: f32) -> f32 {
    if view.fmt.kind == Kind::Unorm {
        r.clamp(0.0, 1.0)
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_modes_follow_the_spec_formulas() {
        let at = |mode| [-5, -4, -1, 0, 3, 4, 5, 8].map(|i| wrap(mode, i, 4));
        let s = |v: [i64; 8]| v.map(Some);
        assert_eq!(at(address::REPEAT), s([3, 0, 3, 0, 3, 0, 1, 0]));
        assert_eq!(at(address::MIRRORED_REPEAT), s([3, 3, 0, 0, 3, 3, 2, 0]));
        assert_eq!(at(address::CLAMP_TO_EDGE), s([0, 0, 0, 0, 3, 3, 3, 3]));
        assert_eq!(at(address::MIRROR_CLAMP_TO_EDGE), s([3, 3, 0, 0, 3, 3, 3, 3]));
        assert_eq!(at(address::CLAMP_TO_BORDER), [None, None, None, Some(0), Some(3), None, None, None]);
    }
}
