//! Fragment: one invocation per pixel of a 2x2 quad, launched by the raster unit; pixels of
//! a quad outside the primitive run as helper lanes (`docs/GRAPHICS.md`).
//!
//! - Built-ins are the fragment CSRs: `FragCoord` is `(frag_x + 0.5, frag_y + 0.5, frag_z,
//!   frag_w)`; one sample per pixel, so `SampleId` is 0, `SamplePosition` the centre and
//!   `Layer`/`ViewportIndex` 0. `HelperInvocation` is read at every load (demotion changes
//!   it).
//! - `Input` locations are interpolated in the prologue from the primitive's three
//!   vertex-output slots: `v0 + i (v1 - v0) + j (v2 - v0)` with the barycentric CSRs of the
//!   qualifier (perspective or `NoPerspective`, centre or `Centroid`; `Sample` is the centre
//!   with one sample); `Flat`, integer and 64-bit components read vertex 0, the provoking
//!   vertex.
//! - Outputs live like Private variables; the epilogue exports them (`EXP`): each colour
//!   location written (four registers, missing components `(0, 0, 0, 1)`), then `FragDepth`,
//!   then `SampleMask`, the last flagged `DONE`. A kernel without outputs exports an all-ones
//!   sample mask (which changes nothing) so the output merger still takes the fragment.
//! - `OpKill` / `OpTerminateInvocation` end the lane (`EXIT`): it exports nothing, so its
//!   fragment is discarded.

use super::super::mem::{Ptr, PtrKind};
use super::super::subgroup;
use super::io::{self, Interp, Part};
use super::{builtin_input, fixed_input, output_var, stage_modes, value_regs, IoState, StageIo};
use crate::shader::emit::I;
use crate::shader::error::{interface, invalid, unsupported, Result};
use crate::shader::lower::Lowerer;
use crate::shader::module::{GlobalVar, Module};
use crate::shader::types::{Id, Scalar};
use crate::shader::GraphicsInfo;
use spirv::{BuiltIn, ExecutionMode, StorageClass};
use std::collections::{BTreeMap, HashMap};
use vortex_model::abi::gfx::{csr, export, state, vout};
use vortex_model::abi::isa::{Instr, MemSize, Op as Vx};

pub(super) struct Fragment;

/// The fragment stage's prologue values.
#[derive(Default)]
pub(crate) struct FragRegs {
    /// The addresses of the primitive's three vertex-output slots.
    vertices: Option<[u16; 3]>,
    /// The barycentric weights (i, j) of each (no-perspective, centroid) choice.
    bary: HashMap<(bool, bool), (u16, u16)>,
}

impl StageIo for Fragment {
    /// The modes Vulkan fragment shaders carry; the launch shape is the raster unit's.
    fn execution_modes(&self, m: &Module) -> Result<[u32; 3]> {
        for (mode, _) in stage_modes(m)? {
            match mode {
                ExecutionMode::OriginUpperLeft
                | ExecutionMode::EarlyFragmentTests
                | ExecutionMode::DepthReplacing
                | ExecutionMode::DepthGreater
                | ExecutionMode::DepthLess
                | ExecutionMode::DepthUnchanged => {}
                mode => return Err(unsupported!("execution mode {mode:?} in a fragment shader")),
            }
        }
        Ok([1, 1, 1])
    }

    fn prologue(&self, _l: &mut Lowerer<'_>) -> Result<()> {
        Ok(())
    }

    fn interface_var(&self, l: &mut Lowerer<'_>, id: Id, var: &GlobalVar) -> Result<Ptr> {
        match (var.sc, l.m.decos(id).builtin) {
            (StorageClass::Input, Some(BuiltIn::HelperInvocation)) => {
                Ok(Ptr { ty: var.ty, kind: PtrKind::Csr { id: csr::FRAG_HELPER } })
            }
            (StorageClass::Input, Some(_)) => builtin_input(l, id, var.ty, builtin),
            (StorageClass::Input, None) => {
                let name = l.m.label(id);
                fixed_input(l, id, var.ty, name, |l| interpolate(l, id, var.ty))
            }
            (StorageClass::Output, _) => {
                for part in io::parts(l.m, id, var.ty)? {
                    check_output(l, id, &part)?;
                }
                output_var(l, id, var)
            }
            (sc, _) => Err(unsupported!("{sc:?} variable %{id} in a fragment shader")),
        }
    }

    fn epilogue(&self, l: &mut Lowerer<'_>) -> Result<()> {
        let mut colors: BTreeMap<u32, [Option<u16>; 4]> = BTreeMap::new();
        let mut ints: BTreeMap<u32, bool> = BTreeMap::new();
        let (mut depth, mut mask) = (None, None);
        for (id, p) in l.io.outputs.clone() {
            let r = value_regs(l, &p)?;
            for part in io::parts(l.m, id, p.ty)? {
                match part {
                    Part::Loc { reg, loc, comp, scalar, .. } => {
                        colors.entry(loc).or_default()[comp as usize] = Some(r + reg as u16);
                        ints.insert(loc, !scalar.is_float());
                    }
                    Part::Builtin { reg, b: BuiltIn::FragDepth, .. } => depth = Some(r + reg as u16),
                    Part::Builtin { reg, b: BuiltIn::SampleMask, .. } => mask = Some(r + reg as u16),
                    Part::Builtin { b, .. } => return Err(invalid!("internal: fragment output {b:?}")),
                }
            }
        }
        let mut exports = Vec::new();
        for (loc, comps) in colors {
            let block = color_block(l, &comps, ints[&loc])?;
            exports.push((export::COLOR0 + loc as u8, block));
        }
        exports.extend(depth.map(|r| (export::DEPTH, r)));
        exports.extend(mask.map(|r| (export::SAMPLE_MASK, r)));
        if exports.is_empty() {
            exports.push((export::SAMPLE_MASK, l.imm(!0)?));
        }
        let last = exports.len() - 1;
        for (k, (target, r)) in exports.into_iter().enumerate() {
            let done = if k == last { export::DONE } else { 0 };
            l.e.emit(I::new(Vx::Exp).export(target).a(r).imm(done));
        }
        Ok(())
    }

    /// The lane ends without exporting: its fragment is discarded.
    fn kill(&self, l: &mut Lowerer<'_>) -> Result<()> {
        l.io.discards = true;
        l.e.emit(I::new(Vx::Exit));
        Ok(())
    }

    fn graphics(&self, m: &Module, io: &IoState, code: &[Instr]) -> Result<Option<GraphicsInfo>> {
        let mut info =
            GraphicsInfo { side_effects: super::side_effects(code) > 0, discards: io.discards, ..Default::default() };
        for (mode, _) in stage_modes(m)? {
            info.early_tests |= mode == ExecutionMode::EarlyFragmentTests;
        }
        for (id, p) in &io.outputs {
            for part in io::parts(m, *id, p.ty)? {
                match part {
                    Part::Loc { loc, .. } => info.color_outputs |= 1 << loc,
                    Part::Builtin { b: BuiltIn::FragDepth, .. } => info.writes_depth = true,
                    _ => {}
                }
            }
        }
        Ok(Some(info))
    }
}

/// An output's part: a colour location the device has (no dual-source `Index`), `FragDepth`
/// or `SampleMask`.
fn check_output(l: &Lowerer<'_>, id: Id, part: &Part) -> Result<()> {
    match *part {
        Part::Loc { loc, .. } if loc as usize >= state::MAX_COLOR => {
            Err(interface!("colour output location {loc} (%{id}; the device has {})", state::MAX_COLOR))
        }
        Part::Loc { scalar: Scalar::F64 | Scalar::I64 | Scalar::Bool, .. } => {
            Err(unsupported!("64-bit colour output %{id}"))
        }
        Part::Loc { .. } if l.m.decos(id).index.unwrap_or(0) != 0 => {
            Err(unsupported!("dual-source colour output %{id} (Index 1)"))
        }
        Part::Loc { .. } | Part::Builtin { b: BuiltIn::FragDepth | BuiltIn::SampleMask, .. } => Ok(()),
        Part::Builtin { b, .. } => Err(unsupported!("built-in {b:?} output in a fragment shader")),
    }
}

/// Four consecutive registers with a colour location's components: the output's own when
/// they are, else copies with the missing ones `(0, 0, 0, 1)`.
fn color_block(l: &mut Lowerer<'_>, comps: &[Option<u16>; 4], int: bool) -> Result<u16> {
    if let Some(r) = comps[0] {
        if (1..4).all(|k| comps[k] == Some(r + k as u16)) {
            return Ok(r);
        }
    }
    let zero = l.imm(0)?;
    let one = l.imm(if int { 1 } else { 1.0f32.to_bits() })?;
    let d = l.e.alloc(4)?;
    for (k, c) in comps.iter().enumerate() {
        let src = c.unwrap_or(if k == 3 { one } else { zero });
        l.e.mov(d + k as u16, src);
    }
    Ok(d)
}

/// Computes fragment built-in `b` (of `n` registers) into fresh registers; runs in the
/// prologue.
fn builtin(l: &mut Lowerer<'_>, b: BuiltIn, n: u32) -> Result<u16> {
    let want = match b {
        BuiltIn::FragCoord => 4,
        BuiltIn::SamplePosition | BuiltIn::PointCoord => 2,
        BuiltIn::SampleMask => n.max(1),
        BuiltIn::FrontFacing | BuiltIn::PrimitiveId | BuiltIn::SampleId | BuiltIn::Layer | BuiltIn::ViewportIndex => 1,
        b => subgroup::builtin_regs(b),
    };
    if n != want {
        return Err(invalid!("built-in {b:?} declared with {n} components"));
    }
    let d = l.e.alloc(n)?;
    let csr_into = |l: &mut Lowerer<'_>, r: u16, c: u32| l.e.emit(I::new(Vx::Csr).dst(r).imm(c));
    match b {
        BuiltIn::FragCoord => {
            let half = l.imm(0.5f32.to_bits())?;
            for (k, c) in [csr::FRAG_X, csr::FRAG_Y].into_iter().enumerate() {
                let p = l.csr(c)?;
                let f = l.e.op1(Vx::U2f, p)?;
                l.e.emit(I::new(Vx::Fadd).dst(d + k as u16).a(f).b(half));
            }
            csr_into(l, d + 2, csr::FRAG_Z);
            csr_into(l, d + 3, csr::FRAG_W);
        }
        BuiltIn::FrontFacing => csr_into(l, d, csr::FRAG_FRONT),
        BuiltIn::PrimitiveId => csr_into(l, d, csr::FRAG_PRIMITIVE),
        BuiltIn::SampleMask => {
            csr_into(l, d, csr::FRAG_COVERAGE);
            for k in 1..n as u16 {
                l.e.movi(d + k, 0);
            }
        }
        BuiltIn::PointCoord => {
            csr_into(l, d, csr::FRAG_POINT_U);
            csr_into(l, d + 1, csr::FRAG_POINT_V);
        }
        BuiltIn::SampleId | BuiltIn::Layer | BuiltIn::ViewportIndex => l.e.movi(d, 0),
        BuiltIn::SamplePosition => {
            l.e.movi(d, 0.5f32.to_bits());
            l.e.movi(d + 1, 0.5f32.to_bits());
        }
        b => {
            if !l.subgroup_builtin(b, d)? {
                return Err(unsupported!("built-in {b:?} in a fragment shader"));
            }
        }
    }
    Ok(d)
}

/// Interpolates input variable `id` (of type `ty`) into fresh registers; runs in the
/// prologue. Each location's components are loaded from each vertex needed with one 16-byte
/// load (one word when only one component is used).
fn interpolate(l: &mut Lowerer<'_>, id: Id, ty: Id) -> Result<u16> {
    let d = l.e.alloc(l.m.types.regs(ty)?)?;
    let mut by_loc: BTreeMap<u32, Vec<(u32, u32, Scalar, Interp)>> = BTreeMap::new();
    for part in io::parts(l.m, id, ty)? {
        match part {
            Part::Loc { loc, .. } if loc as usize >= vout::MAX_LOCATIONS => {
                return Err(interface!("input location {loc} (%{id}; the device has {})", vout::MAX_LOCATIONS))
            }
            Part::Loc { reg, loc, comp, scalar, interp } => {
                by_loc.entry(loc).or_default().push((reg, comp, scalar, interp))
            }
            Part::Builtin { b, .. } => return Err(unsupported!("built-in {b:?} inside a fragment input (%{id})")),
        }
    }
    let vertices = vertices(l)?;
    for (loc, parts) in by_loc {
        let flat = |s: Scalar, i: &Interp| i.flat || !matches!(s, Scalar::F32 | Scalar::F16);
        let all_flat = parts.iter().all(|(_, _, s, i)| flat(*s, i));
        let n = if all_flat { 1 } else { 3 };
        // Component c of vertex v: `vals[v] + c` (a whole location) or `vals[v]` (one word).
        let whole = parts.len() > 1;
        let mut vals = [0u16; 3];
        for (v, val) in vals.iter_mut().enumerate().take(n) {
            *val = l.e.alloc(if whole { 4 } else { 1 })?;
            let (size, c) = if whole { (MemSize::B128, 0) } else { (MemSize::B32, parts[0].1) };
            let at = vout::varying(loc as usize, c as usize) as u32;
            l.e.emit(I::new(Vx::Ldg).size(size).dst(*val).a(vertices[v]).imm(at));
        }
        for (reg, comp, scalar, interp) in parts {
            let c = if whole { comp as u16 } else { 0 };
            let dst = d + reg as u16;
            if flat(scalar, &interp) {
                l.e.mov(dst, vals[0] + c);
                continue;
            }
            let (i, j) = bary(l, interp)?;
            let (v0, v1, v2) = (vals[0] + c, vals[1] + c, vals[2] + c);
            let d1 = l.e.op2(Vx::Fsub, v1, v0)?;
            let t = l.e.op3(Vx::Ffma, i, d1, v0)?;
            let d2 = l.e.op2(Vx::Fsub, v2, v0)?;
            if scalar == Scalar::F16 {
                let f = l.e.op3(Vx::Ffma, j, d2, t)?;
                let h = l.e.op1(Vx::F2h, f)?;
                l.e.emit(I::new(Vx::H2f).dst(dst).a(h));
            } else {
                l.e.emit(I::new(Vx::Ffma).dst(dst).a(j).b(d2).c(t));
            }
        }
    }
    Ok(d)
}

/// The addresses of the primitive's three vertex-output slots (in the prologue, once).
fn vertices(l: &mut Lowerer<'_>) -> Result<[u16; 3]> {
    if let Some(v) = l.io.frag.vertices {
        return Ok(v);
    }
    let v = l.in_prologue(|l| {
        let mut v = [0u16; 3];
        for (k, c) in [csr::FRAG_VTX0, csr::FRAG_VTX1, csr::FRAG_VTX2].into_iter().enumerate() {
            let slot = l.csr(c)?;
            v[k] = l.vout_slot(slot)?;
            l.e.name_regs(v[k], 2, format!("vertex{k}"));
        }
        Ok(v)
    })?;
    l.io.frag.vertices = Some(v);
    Ok(v)
}

/// The barycentric weights of vertices 1 and 2 for `interp` (in the prologue, once).
fn bary(l: &mut Lowerer<'_>, interp: Interp) -> Result<(u16, u16)> {
    let key = (interp.no_perspective, interp.centroid);
    if let Some(&r) = l.io.frag.bary.get(&key) {
        return Ok(r);
    }
    let (ci, cj) = match key {
        (false, false) => (csr::FRAG_BARY_I, csr::FRAG_BARY_J),
        (false, true) => (csr::FRAG_BARY_CENTROID_I, csr::FRAG_BARY_CENTROID_J),
        (true, false) => (csr::FRAG_BARY_LINEAR_I, csr::FRAG_BARY_LINEAR_J),
        (true, true) => (csr::FRAG_BARY_LINEAR_CENTROID_I, csr::FRAG_BARY_LINEAR_CENTROID_J),
    };
    let r = l.in_prologue(|l| Ok((l.csr(ci)?, l.csr(cj)?)))?;
    l.io.frag.bary.insert(key, r);
    Ok(r)
}
