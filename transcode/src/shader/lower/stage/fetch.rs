//! The vertex attribute fetch: a vertex kernel reads its `Input` locations from the vertex
//! buffers itself, with code generated from the pipeline's vertex input state
//! (`CompileOptions::vertex_input`) and the draw state record's `VB` table.
//!
//! Per binding (once): the record's address, stride, input rate, divisor and size; the
//! element index, `vtx_index` for per-vertex data and, per instance,
//! `base_instance + (vtx_instance - base_instance) / divisor` (divisor 0: `base_instance`);
//! the element's byte offset `index * stride` (64-bit). Per attribute: the offset plus the
//! attribute's, checked against the binding's size (a read past it gives zeros), the
//! components loaded and converted per the format ([`crate::shader::vertex_format`]),
//! missing components `(0, 0, 0, 1)`. All of it is straight-line code in the prologue: an
//! out-of-range attribute reads from the draw state record instead (always mapped) and
//! selects zero.

use super::io::{self, Part};
use crate::shader::emit::I;
use crate::shader::error::{interface, unsupported, Result};
use crate::shader::lower::Lowerer;
use crate::shader::types::{Id, Scalar};
use crate::shader::{vertex_format, VertexAttribute, VertexFormat, VertexKind};
use std::collections::{BTreeMap, HashMap};
use vortex_model::abi::gfx::{csr, state};
use vortex_model::abi::isa::{IntCond, MemSize, Op as Vx};

/// The per-binding values, computed once in the prologue.
#[derive(Default)]
pub(crate) struct FetchRegs {
    bindings: HashMap<u32, Binding>,
}

#[derive(Clone, Copy)]
struct Binding {
    /// The binding's address, the element's byte offset and the bytes available (pairs).
    addr: u16,
    elem: u16,
    size: u16,
}

/// Fetches input variable `id` (of type `ty`) into fresh registers; runs in the prologue.
pub(super) fn attributes(l: &mut Lowerer<'_>, id: Id, ty: Id) -> Result<u16> {
    let d = l.e.alloc(l.m.types.regs(ty)?)?;
    let mut by_loc: BTreeMap<u32, Vec<(u32, u32, Scalar)>> = BTreeMap::new();
    for part in io::parts(l.m, id, ty)? {
        match part {
            Part::Loc { reg, loc, comp, scalar, .. } => by_loc.entry(loc).or_default().push((reg, comp, scalar)),
            Part::Builtin { b, .. } => return Err(unsupported!("built-in {b:?} inside a vertex input (%{id})")),
        }
    }
    for (loc, parts) in by_loc {
        let attr = l.opts.vertex_input.iter().find(|a| a.location == loc).copied();
        let float = parts.iter().any(|p| p.2.is_float());
        let comps = match attr {
            Some(a) => fetch(l, &a)?,
            // No attribute: (0, 0, 0, 1), as a missing component reads.
            None => [l.imm(0)?, l.imm(0)?, l.imm(0)?, one(l, float)?],
        };
        for (reg, comp, scalar) in parts {
            let (dst, src) = (d + reg as u16, comps[comp as usize]);
            match scalar {
                Scalar::F32 | Scalar::I32 => l.e.mov(dst, src),
                Scalar::F16 => {
                    let h = l.e.op1(Vx::F2h, src)?;
                    l.e.emit(I::new(Vx::H2f).dst(dst).a(h));
                }
                Scalar::I16 | Scalar::I8 => {
                    let m = l.imm(if scalar == Scalar::I16 { 0xFFFF } else { 0xFF })?;
                    l.e.emit(I::new(Vx::And).dst(dst).a(src).b(m));
                }
                s => return Err(unsupported!("{s:?} vertex input at location {loc} (%{id})")),
            }
        }
    }
    Ok(d)
}

/// 1.0 or 1: the default fourth component.
fn one(l: &mut Lowerer<'_>, float: bool) -> Result<u16> {
    l.imm(if float { 1.0f32.to_bits() } else { 1 })
}

/// The four components of attribute `a` (converted; missing ones the defaults).
fn fetch(l: &mut Lowerer<'_>, a: &VertexAttribute) -> Result<[u16; 4]> {
    let f = vertex_format(a.format).ok_or_else(|| {
        interface!(
            "vertex attribute at location {} has format {}, which the vertex fetch does not convert",
            a.location,
            a.format
        )
    })?;
    if a.binding as usize >= state::MAX_VB {
        return Err(interface!(
            "vertex attribute at location {} uses binding {} (at most {})",
            a.location,
            a.binding,
            state::MAX_VB
        ));
    }
    let b = binding(l, a.binding)?;
    let st = l.gfx_state()?;
    // In range: offset + attribute bytes <= size.
    let o = if a.offset == 0 {
        b.elem
    } else {
        let at = l.imm64(a.offset as u64)?;
        l.e.op64(Vx::Iadd64, b.elem, at)?
    };
    let bytes = l.imm64(f.bytes as u64)?;
    let end = l.e.op64(Vx::Iadd64, o, bytes)?;
    let ok = l.e.op2(I::new(Vx::Icmp64).cond(IntCond::Ule), end, b.size)?;
    let addr = l.e.op64(Vx::Iadd64, b.addr, o)?;
    let src = l.e.alloc(2)?;
    for k in 0..2 {
        l.e.emit(I::new(Vx::Sel).dst(src + k).a(ok).b(addr + k).c(st + k));
    }
    let zero = l.imm(0)?;
    let raw = load(l, &f, src)?;
    let mut out = [zero; 4];
    for (c, slot) in out.iter_mut().enumerate() {
        *slot = if (c as u32) < f.comps {
            let v = l.e.op3(Vx::Sel, ok, raw[c], zero)?;
            convert(l, f.kind, f.bits[c] as u32, v)?
        } else if c == 3 {
            one(l, f.kind.is_float())?
        } else {
            zero
        };
    }
    Ok(out)
}

/// The stored components of `f` at address pair `src` (sign- or zero-extended integers).
fn load(l: &mut Lowerer<'_>, f: &VertexFormat, src: u16) -> Result<[u16; 4]> {
    let signed = f.kind.is_signed();
    let mut raw = [0u16; 4];
    if f.packed {
        let w = l.e.alloc(1)?;
        l.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(w).a(src));
        for (c, r) in raw.iter_mut().enumerate().take(f.comps as usize) {
            let (shift, width) = (l.imm(f.at[c] as u32)?, l.imm(f.bits[c] as u32)?);
            *r = l.e.op3(I::new(Vx::Bfe).signed(signed), w, shift, width)?;
        }
    } else {
        let size = match (f.bits[0], signed) {
            (8, false) => MemSize::U8,
            (8, true) => MemSize::S8,
            (16, false) => MemSize::U16,
            (16, true) => MemSize::S16,
            _ => MemSize::B32,
        };
        for (c, r) in raw.iter_mut().enumerate().take(f.comps as usize) {
            *r = l.e.alloc(1)?;
            l.e.emit(I::new(Vx::Ldg).size(size).dst(*r).a(src).imm(f.at[c] as u32));
        }
    }
    Ok(raw)
}

/// A stored component `v` of `bits` bits -> the shader's value.
fn convert(l: &mut Lowerer<'_>, kind: VertexKind, bits: u32, v: u16) -> Result<u16> {
    let f32_imm = |l: &mut Lowerer<'_>, x: f32| l.imm(x.to_bits());
    Ok(match kind {
        VertexKind::Uint | VertexKind::Sint => v,
        VertexKind::Uscaled => l.e.op1(Vx::U2f, v)?,
        VertexKind::Sscaled => l.e.op1(Vx::I2f, v)?,
        VertexKind::Unorm => {
            let f = l.e.op1(Vx::U2f, v)?;
            let max = f32_imm(l, ((1u64 << bits) - 1) as f32)?;
            l.e.op2(Vx::Fdiv, f, max)?
        }
        VertexKind::Snorm => {
            let f = l.e.op1(Vx::I2f, v)?;
            let max = f32_imm(l, ((1u64 << (bits - 1)) - 1) as f32)?;
            let q = l.e.op2(Vx::Fdiv, f, max)?;
            let m1 = f32_imm(l, -1.0)?;
            l.e.op2(Vx::Fmax, q, m1)?
        }
        VertexKind::Sfloat if bits == 16 => l.e.op1(Vx::H2f, v)?,
        VertexKind::Sfloat => v,
    })
}

/// Binding `b`'s address, element offset and size, computed once (in the prologue).
fn binding(l: &mut Lowerer<'_>, b: u32) -> Result<Binding> {
    if let Some(&r) = l.io.fetch.bindings.get(&b) {
        return Ok(r);
    }
    use state::vb;
    let st = l.gfx_state()?;
    let rec = (state::VB + b as usize * vb::BYTES) as u32;
    let ld = |l: &mut Lowerer<'_>, size: MemSize, field: usize| -> Result<u16> {
        let r = l.e.alloc(size.regs() as u32)?;
        l.e.emit(I::new(Vx::Ldg).size(size).dst(r).a(st).imm(rec + field as u32));
        Ok(r)
    };
    let addr = ld(l, MemSize::B64, vb::ADDR)?;
    let stride = ld(l, MemSize::B32, vb::STRIDE)?;
    let rate = ld(l, MemSize::B32, vb::INPUT_RATE)?;
    let divisor = ld(l, MemSize::B32, vb::DIVISOR)?;
    let size = ld(l, MemSize::B64, vb::SIZE)?;
    let (vi, ii, bi) = (l.csr(csr::VTX_INDEX)?, l.csr(csr::VTX_INSTANCE)?, l.csr(csr::VTX_BASE_INSTANCE)?);
    let (zero, one) = (l.imm(0)?, l.imm(1)?);
    let rel = l.e.op2(Vx::Isub, ii, bi)?;
    let safe = l.e.op2(I::new(Vx::Imax).signed(false), divisor, one)?;
    let q = l.e.op2(Vx::Udiv, rel, safe)?;
    let no_div = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), divisor, zero)?;
    let q = l.e.op3(Vx::Sel, no_div, zero, q)?;
    let inst = l.e.op2(Vx::Iadd, bi, q)?;
    let per_instance = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Ne), rate, zero)?;
    let index = l.e.op3(Vx::Sel, per_instance, inst, vi)?;
    let elem = l.e.alloc(2)?;
    l.e.emit(I::new(Vx::Imulx).signed(false).dst(elem).a(index).b(stride));
    l.e.name_regs(elem, 2, format!("vb{b}.element"));
    let r = Binding { addr, elem, size };
    l.io.fetch.bindings.insert(b, r);
    Ok(r)
}
