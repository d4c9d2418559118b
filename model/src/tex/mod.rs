//! The texture unit: `TEX` (`abi::gfx::tex`) for a warp, lane by lane. Samples and gathers
//! through a sampled-image descriptor and a sampler record, fetches and queries through
//! the descriptor alone, following the spec's "Image Operations" chapter step by step:
//!
//! - `lod`: implicit derivatives from the lanes' quads, scale factor, LOD, level selection;
//! - `cube`: face selection, the face coordinate and derivative transforms, edges;
//! - `filter`: wrapping, border replacement, depth comparison, nearest and linear
//!   filtering, mipmap blending, gathers;
//! - `view` and `sampler`: the descriptor records;
//! - `timed`: the unit's timing (texture cache, filter throughput) in timed mode.
//!
//! The unit's state is what the timed model needs to see of a request: the lines it read
//! and the texels it filtered. Results never depend on it.

mod cube;
mod filter;
mod lod;
pub mod sampler;
pub mod timed;
mod view;

use crate::abi::gfx::tex::{self, op};
use crate::abi::isa::{Instr, REG_NONE};
use crate::abi::kernel::desc;
use crate::abi::MAX_THREADS;
use crate::cache::line_of;
use crate::mem::{MemFault, MemoryMap};
use filter::{Coords, Ctx};
use lod::Grad;
use sampler::Sampler;
use view::View;

/// The per-core texture unit.
#[derive(Default)]
pub struct TexUnit {
    /// Keep the lines requests read (timed mode).
    timed: bool,
    /// The last request's lines (sorted, each once) and the texels it filtered (border
    /// texels included): what the timed model charges for it.
    pub lines: Vec<u64>,
    pub texels: u64,
}

impl TexUnit {
    pub fn new() -> TexUnit {
        TexUnit::default()
    }

    pub fn set_timed(&mut self, on: bool) {
        self.timed = on;
    }

    fn read_line(&mut self, addr: u64) {
        if self.timed {
            self.lines.push(line_of(addr));
        }
    }
}

/// Why a `TEX` could not complete, for the core to turn into a fault.
#[derive(Debug)]
pub enum Error {
    Memory { lane: usize, fault: MemFault },
    Illegal { lane: usize, what: String },
}

/// What an instruction's `mod` and `imm` ask for.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub op: u8,
    pub dim: u32,
    pub dims: usize,
    pub arrayed: bool,
    pub dref: bool,
    pub lod: u32,
    pub offset: [i32; 3],
    pub comp: usize,
}

impl Shape {
    fn of(i: &Instr) -> Shape {
        Shape {
            op: i.modifier,
            dim: i.imm & tex::DIM_MASK,
            dims: tex::dims(i.imm) as usize,
            arrayed: i.imm & tex::ARRAYED != 0,
            dref: i.imm & tex::DREF != 0,
            lod: (i.imm >> tex::LOD_SHIFT) & 3,
            offset: tex::offset(i.imm),
            comp: ((i.imm >> tex::GATHER_SHIFT) & 3) as usize,
        }
    }

    /// Samples and LOD queries whose LOD comes from the quad's derivatives.
    fn implicit(&self) -> bool {
        matches!(self.op, op::SAMPLE | op::QUERY_LOD) && matches!(self.lod, tex::LOD_IMPLICIT | tex::LOD_BIAS)
    }

    fn needs_sampler(&self) -> bool {
        matches!(self.op, op::SAMPLE | op::GATHER | op::QUERY_LOD)
    }
}

/// One lane's operand block, in `gfx::tex`'s order (raw words; which are floats depends on
/// the op).
#[derive(Clone, Copy, Debug, Default)]
struct Operands {
    coord: [u32; 3],
    layer: u32,
    dref: f32,
    lod: u32,
    grad: Grad,
}

impl Operands {
    fn read(s: &Shape, w: &[u32]) -> Operands {
        let mut o = Operands::default();
        let mut it = w.iter().copied();
        let mut next = || it.next().unwrap_or(0);
        let explicit = s.lod == tex::LOD_EXPLICIT;
        if !matches!(s.op, op::QUERY_SIZE | op::QUERY_LEVELS) {
            for c in 0..s.dims {
                o.coord[c] = next();
            }
        }
        match s.op {
            op::SAMPLE | op::GATHER => {
                if s.arrayed {
                    o.layer = next();
                }
                if s.dref {
                    o.dref = f32::from_bits(next());
                }
                if matches!(s.lod, tex::LOD_BIAS | tex::LOD_EXPLICIT) {
                    o.lod = next();
                }
                if s.lod == tex::LOD_GRAD {
                    for axis in 0..2 {
                        for c in 0..s.dims {
                            o.grad[axis][c] = f32::from_bits(next());
                        }
                    }
                }
            }
            op::FETCH => {
                if s.arrayed {
                    o.layer = next();
                }
                if explicit {
                    o.lod = next();
                }
            }
            op::QUERY_SIZE if explicit => o.lod = next(),
            _ => {}
        }
        o
    }
}

/// Executes `TEX` `i` for the lanes in `mask` (helper lanes included: their coordinates
/// feed the quads' derivatives and they get results like any lane). Every lane's result is
/// computed before any is written, so the destination may overlap the operands.
pub fn execute(
    i: &Instr,
    regs: &mut [u32],
    nt: usize,
    mask: u32,
    mem: &MemoryMap,
    unit: &mut TexUnit,
) -> Result<(), Error> {
    let s = Shape::of(i);
    let n = tex::operand_regs(s.op, i.imm).unwrap_or(0) as usize;
    unit.lines.clear();
    unit.texels = 0;
    let derivs = s.implicit().then(|| lod::quad_derivatives(regs, i.b as usize, s.dims, nt, mask));
    let mut views: Option<(u64, View)> = None;
    let mut samplers: Option<(u64, Sampler)> = None;
    let mut out = [[0u32; 4]; MAX_THREADS];
    let mut todo = mask;
    while todo != 0 {
        let l = todo.trailing_zeros() as usize;
        todo &= todo - 1;
        let mem_err = |fault| Error::Memory { lane: l, fault };
        let illegal = |what: &str| Error::Illegal { lane: l, what: what.into() };
        let daddr = pair(regs, i.a, nt, l);
        if views.as_ref().is_none_or(|(a, _)| *a != daddr) {
            let v = View::read(mem, daddr).map_err(mem_err)?.ok_or_else(|| {
                illegal(&format!("image descriptor at {daddr:#x} has a format the texture unit does not know"))
            })?;
            views = Some((daddr, v));
        }
        let view = &views.as_ref().expect("read above").1;
        let smp = if s.needs_sampler() {
            if i.c == REG_NONE {
                return Err(illegal("this texture op needs a sampler"));
            }
            let saddr = pair(regs, i.c, nt, l);
            if samplers.as_ref().is_none_or(|(a, _)| *a != saddr) {
                let raw: [u8; desc::BYTES] = mem.read_array(saddr).map_err(mem_err)?;
                samplers = Some((saddr, Sampler::parse(&raw)));
            }
            samplers.as_ref().map(|(_, s)| s)
        } else {
            None
        };
        let mut words = [0u32; 16];
        for (k, w) in words.iter_mut().enumerate().take(n) {
            *w = regs[(i.b as usize + k) * nt + l];
        }
        let ops = Operands::read(&s, &words[..n]);
        let lane = Lane { mem, view, s, ops, implicit: derivs.as_ref().map(|d| d[l]) };
        out[l] = match (s.op, smp) {
            (op::SAMPLE, Some(smp)) => lane.sample(smp, unit).map_err(mem_err)?,
            (op::GATHER, Some(smp)) => lane.gather(smp, unit).map_err(mem_err)?,
            (op::QUERY_LOD, Some(smp)) => lane.query_lod(smp),
            (op::FETCH, _) => lane.fetch(unit).map_err(mem_err)?,
            (op::QUERY_SIZE, _) => lane.size(),
            (op::QUERY_LEVELS, _) => [view.desc.level_count(), 0, 0, 0],
            _ => return Err(illegal("unknown texture op")),
        };
    }
    for k in 0..4 {
        let row = (i.dst as usize + k) * nt;
        let mut todo = mask;
        while todo != 0 {
            let l = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            regs[row + l] = out[l][k];
        }
    }
    if unit.timed {
        unit.lines.sort_unstable();
        unit.lines.dedup();
    }
    Ok(())
}

fn pair(regs: &[u32], r: u16, nt: usize, l: usize) -> u64 {
    regs[r as usize * nt + l] as u64 | (regs[(r as usize + 1) * nt + l] as u64) << 32
}

/// One lane's request.
struct Lane<'a> {
    mem: &'a MemoryMap,
    view: &'a View,
    s: Shape,
    ops: Operands,
    /// The quad's derivatives of the coordinates (implicit LOD).
    implicit: Option<Grad>,
}

impl Lane<'_> {
    /// Normalized coordinates (cube maps: on the selected face) and the derivatives of
    /// the same coordinates the LOD comes from, if any.
    fn coords(&self) -> (Coords, Option<Grad>) {
        let c = self.ops.coord.map(f32::from_bits);
        let grad = match self.s.lod {
            tex::LOD_GRAD => Some(self.ops.grad),
            _ => self.implicit,
        };
        if self.s.dim != tex::DIM_CUBE {
            let mut st = [0.0; 3];
            st[..self.s.dims].copy_from_slice(&c[..self.s.dims]);
            return (Coords { st, face: 0 }, grad);
        }
        let face = cube::face(c);
        let [s, t] = cube::coords(face, c);
        let g = grad.map(|g| {
            g.map(|d| {
                let [ds, dt] = cube::derivatives(face, c, d);
                [ds, dt, 0.0]
            })
        });
        (Coords { st: [s, t, 0.0], face }, g)
    }

    /// `(λ', λ)` of a sample at `grad` (explicit LOD: the operand; unnormalized samplers: 0).
    fn lambda(&self, smp: &Sampler, grad: Option<Grad>) -> (f32, f32) {
        if smp.unnormalized {
            return (0.0, 0.0);
        }
        let lod = f32::from_bits(self.ops.lod);
        match self.s.lod {
            tex::LOD_EXPLICIT => lod::lambda(lod, smp, 0.0),
            m => {
                let b = self.view.level(0);
                let extent = [b.width, b.height, b.depth].map(|e| e.max(1) as f32);
                let rho = lod::rho_max(&grad.unwrap_or_default(), extent);
                lod::lambda(rho.log2(), smp, if m == tex::LOD_BIAS { lod } else { 0.0 })
            }
        }
    }

    /// The array layer (`clamp(RNE(a), 0, layers - 1)`; cube arrays: the cube's first
    /// face-layer).
    fn layer(&self) -> i64 {
        if !self.s.arrayed {
            return 0;
        }
        let a = f32::from_bits(self.ops.layer).round_ties_even();
        let layers = self.view.layers();
        if self.s.dim == tex::DIM_CUBE {
            6 * a.clamp(0.0, ((layers / 6).max(1) - 1) as f32) as i64
        } else {
            a.clamp(0.0, (layers - 1) as f32) as i64
        }
    }

    fn ctx<'c>(&'c self, smp: &'c Sampler, unit: &'c mut TexUnit) -> Ctx<'c> {
        let dref = self.s.dref.then(|| filter::reference(self.view, self.ops.dref));
        Ctx { mem: self.mem, view: self.view, smp, shape: self.s, unit, layer: self.layer(), dref }
    }

    fn sample(&self, smp: &Sampler, unit: &mut TexUnit) -> Result<[u32; 4], MemFault> {
        let (c, grad) = self.coords();
        let (_, lambda) = self.lambda(smp, grad);
        self.ctx(smp, unit).sample(&c, lambda)
    }

    fn gather(&self, smp: &Sampler, unit: &mut TexUnit) -> Result<[u32; 4], MemFault> {
        let (c, _) = self.coords();
        self.ctx(smp, unit).gather(&c)
    }

    /// `OpImageQueryLod`: the level the sample would read relative to the view's base
    /// (`d_l`: fractional with linear mipmapping) and `λ'`.
    fn query_lod(&self, smp: &Sampler) -> [u32; 4] {
        let (_, grad) = self.coords();
        let (prime, lambda) = self.lambda(smp, grad);
        let (_, d) = lod::levels(lambda, self.view.count, smp.mip_linear);
        [d.to_bits(), prime.to_bits(), 0, 0]
    }

    /// `OpImageFetch`: the texel at integer coordinates (plus the constant offset) of the
    /// level given (or the base level); zero outside the view or its levels.
    fn fetch(&self, unit: &mut TexUnit) -> Result<[u32; 4], MemFault> {
        let level = if self.s.lod == tex::LOD_EXPLICIT { self.ops.lod as i32 } else { 0 };
        if level < 0 || level as u32 >= self.view.count {
            return Ok([0; 4]);
        }
        let c = [0, 1, 2].map(|k| self.ops.coord[k] as i32 as i64 + self.s.offset[k] as i64);
        let layer = self.ops.layer as i32 as i64;
        let xyz = match (self.s.dim, self.s.arrayed) {
            (tex::DIM_1D, true) => [c[0], layer, 0],
            (tex::DIM_1D, false) => [c[0], 0, 0],
            (tex::DIM_2D, _) => [c[0], c[1], if self.s.arrayed { layer } else { 0 }],
            _ => c,
        };
        unit.texels += 1;
        Ok(self.view.texel(self.mem, level as u32, xyz, unit)?.unwrap_or([0; 4]))
    }

    /// `OpImageQuerySize[Lod]`: the level's width, then height, then depth or layers (cube
    /// arrays: cubes) as the dimension has them; zero for a level the view does not have.
    fn size(&self) -> [u32; 4] {
        let level = if self.s.lod == tex::LOD_EXPLICIT { self.ops.lod as i32 } else { 0 };
        if level < 0 || level as u32 >= self.view.count {
            return [0; 4];
        }
        let l = self.view.level(level as u32);
        let layers = self.view.layers();
        let a = self.s.arrayed;
        match self.s.dim {
            tex::DIM_1D => [l.width, if a { layers } else { 0 }, 0, 0],
            tex::DIM_2D => [l.width, l.height, if a { layers } else { 0 }, 0],
            tex::DIM_3D => [l.width, l.height, l.depth, 0],
            _ => [l.width, l.height, if a { layers / 6 } else { 0 }, 0],
        }
    }
}
