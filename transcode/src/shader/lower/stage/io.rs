//! What the graphics stages share: where each register of an interface variable goes
//! (locations and components, built-in members), and the draw's prologue values (the draw
//! state record, the vertex output buffer, a vertex's slot in it).

use super::super::Lowerer;
use crate::shader::emit::I;
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::module::{Decos, Module};
use crate::shader::types::{Id, Scalar, Type};
use spirv::BuiltIn;
use vortex_model::abi::gfx::{csr, state};
use vortex_model::abi::isa::{MemSize, Op as Vx};

/// How a fragment input is interpolated: the qualifiers in force where the component was
/// declared (a struct member inherits its variable's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Interp {
    pub flat: bool,
    pub no_perspective: bool,
    pub centroid: bool,
}

impl Interp {
    fn with(self, d: &Decos) -> Interp {
        // `Sample` interpolation with one sample is the pixel centre.
        Interp {
            flat: self.flat || d.flat,
            no_perspective: self.no_perspective || d.no_perspective,
            centroid: self.centroid || d.centroid,
        }
    }
}

/// Where one part of an interface variable's register image goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Part {
    /// Register `reg` is component `comp` of location `loc` (a 64-bit scalar takes two
    /// components, low word first).
    Loc { reg: u32, loc: u32, comp: u32, scalar: Scalar, interp: Interp },
    /// Registers `reg..` hold built-in `b` (a whole variable or struct member of type `ty`).
    Builtin { reg: u32, b: BuiltIn, ty: Id },
}

/// The parts of interface variable `var` (of type `ty`), by the location rules of the
/// Vulkan interface: a scalar or vector fills consecutive components of one location from
/// its `Component` (64-bit ones two each, `dvec3`/`dvec4` spilling into the next location);
/// every array element and matrix column starts a new location; struct members follow one
/// another unless they carry their own `Location`; built-in members are by name.
pub(super) fn parts(m: &Module, var: Id, ty: Id) -> Result<Vec<Part>> {
    let d = m.decos(var);
    if let Some(b) = d.builtin {
        return Ok(vec![Part::Builtin { reg: 0, b, ty }]);
    }
    let mut w = Walker { m, var, reg: 0, out: Vec::new() };
    w.walk(ty, d.location, d.component.unwrap_or(0), Interp::default().with(&d))?;
    Ok(w.out)
}

struct Walker<'m> {
    m: &'m Module,
    var: Id,
    reg: u32,
    out: Vec<Part>,
}

impl Walker<'_> {
    /// Walks a value of type `ty` at `loc`/`comp`; returns the locations it takes.
    fn walk(&mut self, ty: Id, loc: Option<u32>, comp: u32, interp: Interp) -> Result<u32> {
        let t = self.m.types.get(ty)?.clone();
        match t {
            Type::Struct { members } => {
                let mut next = loc;
                let mut used = 0;
                for (k, &mty) in members.iter().enumerate() {
                    let md = self.m.member_decos(ty, k as u32);
                    if let Some(b) = md.builtin {
                        self.out.push(Part::Builtin { reg: self.reg, b, ty: mty });
                        self.reg += self.m.types.regs(mty)?;
                        continue;
                    }
                    let at = md.location.or(next);
                    let n = self.walk(mty, at, md.component.unwrap_or(0), interp.with(&md))?;
                    next = at.map(|l| l + n);
                    used += n;
                }
                Ok(used)
            }
            Type::Array { elem, len } | Type::Matrix { col: elem, cols: len } => {
                let mut used = 0;
                for _ in 0..len {
                    used += self.walk(elem, loc.map(|l| l + used), comp, interp)?;
                }
                Ok(used)
            }
            Type::Int { .. } | Type::Float { .. } | Type::Vector { .. } => {
                let loc = loc.ok_or_else(|| invalid!("interface variable %{} has no Location", self.var))?;
                let shape = self.m.types.shape(ty)?;
                let words = shape.n * shape.scalar.regs();
                if comp >= 4 || (shape.scalar.regs() == 1 && comp + words > 4) || (comp != 0 && comp + words > 4) {
                    return Err(invalid!(
                        "interface variable %{}: {} at component {comp}",
                        self.var,
                        self.m.types.describe(ty)
                    ));
                }
                for k in 0..words {
                    let c = comp + k;
                    self.out.push(Part::Loc {
                        reg: self.reg + k,
                        loc: loc + c / 4,
                        comp: c % 4,
                        scalar: shape.scalar,
                        interp,
                    });
                }
                self.reg += words;
                Ok((comp + words).div_ceil(4))
            }
            _ => Err(unsupported!("{} in a stage interface (%{})", self.m.types.describe(ty), self.var)),
        }
    }
}

/// The highest location `parts` use, plus one (0 without locations).
pub(super) fn locations(parts: &[Part]) -> u32 {
    parts.iter().filter_map(|p| if let Part::Loc { loc, .. } = p { Some(loc + 1) } else { None }).max().unwrap_or(0)
}

/// The draw's prologue values, computed once per kernel.
#[derive(Default)]
pub(crate) struct DrawRegs {
    state: Option<u16>,
    vob: Option<u16>,
    stride: Option<u16>,
}

impl Lowerer<'_> {
    /// The draw state record's address (a register pair, in the prologue).
    pub(crate) fn gfx_state(&mut self) -> Result<u16> {
        if let Some(r) = self.io.draw.state {
            return Ok(r);
        }
        let r = self.csr_pair(csr::STATE_LO, csr::STATE_HI, "gfx_state")?;
        self.io.draw.state = Some(r);
        Ok(r)
    }

    /// The address of vertex-output slot `slot` (a register): `vob + slot * VOUT_STRIDE`,
    /// the stride from the draw state record. Emitted where called (the slot registers are
    /// the caller's); the shared parts land in the prologue.
    pub(crate) fn vout_slot(&mut self, slot: u16) -> Result<u16> {
        let vob = match self.io.draw.vob {
            Some(r) => r,
            None => {
                let r = self.csr_pair(csr::VOB_LO, csr::VOB_HI, "vob")?;
                self.io.draw.vob = Some(r);
                r
            }
        };
        let stride = match self.io.draw.stride {
            Some(r) => r,
            None => {
                let st = self.gfx_state()?;
                let r = self.in_prologue(|l| {
                    let r = l.e.alloc(1)?;
                    l.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(r).a(st).imm(state::VOUT_STRIDE as u32));
                    Ok(r)
                })?;
                self.e.name_regs(r, 1, "vout_stride".into());
                self.io.draw.stride = Some(r);
                r
            }
        };
        let off = self.e.alloc(2)?;
        self.e.emit(I::new(Vx::Imulx).signed(false).dst(off).a(slot).b(stride));
        self.e.op64(Vx::Iadd64, vob, off)
    }

    /// Two CSRs (low, high word) into a register pair in the prologue.
    pub(crate) fn csr_pair(&mut self, lo: u32, hi: u32, name: &str) -> Result<u16> {
        let r = self.in_prologue(|l| {
            let r = l.e.alloc(2)?;
            l.e.emit(I::new(Vx::Csr).dst(r).imm(lo));
            l.e.emit(I::new(Vx::Csr).dst(r + 1).imm(hi));
            Ok(r)
        })?;
        self.e.name_regs(r, 2, name.into());
        Ok(r)
    }

    /// Consecutive registers holding `words` (in the prologue).
    pub(crate) fn imm_block(&mut self, words: &[u32]) -> Result<u16> {
        self.in_prologue(|l| {
            let r = l.e.alloc(words.len() as u32)?;
            for (k, &w) in words.iter().enumerate() {
                l.e.movi(r + k as u16, w);
            }
            Ok(r)
        })
    }

    /// A CSR into a fresh register, where called.
    pub(crate) fn csr(&mut self, id: u32) -> Result<u16> {
        let r = self.e.alloc(1)?;
        self.e.emit(I::new(Vx::Csr).dst(r).imm(id));
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highest_location() {
        let p = |loc| Part::Loc { reg: 0, loc, comp: 0, scalar: Scalar::F32, interp: Interp::default() };
        assert_eq!(locations(&[]), 0);
        assert_eq!(locations(&[p(3), p(1), Part::Builtin { reg: 0, b: BuiltIn::Position, ty: 0 }]), 4);
    }
}
