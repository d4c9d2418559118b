//! Vertex: one invocation per (instance, vertex position) of a draw, launched by the input
//! assembler (`docs/GRAPHICS.md`). The built-ins are the vertex CSRs; `Input` locations are
//! fetched from the vertex buffers by the code [`super::fetch`] generates from the pipeline's
//! vertex input state; outputs live like Private variables and the epilogue stores them into
//! the invocation's vertex-output slot (`gfx::vout`): position, point size (1.0 unless the
//! shader writes it), clip distances, then the varyings by location and component.

use super::super::subgroup;
use super::io::{self, Part};
use super::{builtin_input, fetch, fixed_input, output_var, part_ptr, stage_modes, value_regs, IoState, StageIo};
use crate::shader::emit::I;
use crate::shader::error::{invalid, limit, unsupported, Result};
use crate::shader::lower::{Lowerer, Ptr};
use crate::shader::module::{GlobalVar, Module};
use crate::shader::types::{Id, Type};
use crate::shader::GraphicsInfo;
use spirv::{BuiltIn, Capability, StorageClass};
use std::collections::BTreeMap;
use vortex_model::abi::gfx::{csr, vout};
use vortex_model::abi::isa::{Instr, MemSize, Op as Vx, TrapCode};

pub(super) struct Vertex;

impl StageIo for Vertex {
    /// No execution mode applies; the input assembler chooses the launch shape.
    fn execution_modes(&self, m: &Module) -> Result<[u32; 3]> {
        if let Some((mode, _)) = stage_modes(m)?.first() {
            return Err(unsupported!("execution mode {mode:?} in a vertex shader"));
        }
        Ok([1, 1, 1])
    }

    fn prologue(&self, _l: &mut Lowerer<'_>) -> Result<()> {
        Ok(())
    }

    fn interface_var(&self, l: &mut Lowerer<'_>, id: Id, var: &GlobalVar) -> Result<Ptr> {
        match var.sc {
            StorageClass::Input if l.m.decos(id).builtin.is_some() => builtin_input(l, id, var.ty, builtin),
            StorageClass::Input => {
                let name = l.m.label(id);
                fixed_input(l, id, var.ty, name, |l| fetch::attributes(l, id, var.ty))
            }
            StorageClass::Output => output(l, id, var),
            sc => Err(unsupported!("{sc:?} variable %{id} in a vertex shader")),
        }
    }

    fn epilogue(&self, l: &mut Lowerer<'_>) -> Result<()> {
        let slot = l.csr(csr::VTX_SLOT)?;
        let base = l.vout_slot(slot)?;
        let (mut position, mut point_size) = (None, None);
        let clip = clip_enabled(l.m);
        for (id, p) in l.io.outputs.clone() {
            let r = value_regs(l, &p)?;
            let mut varyings: BTreeMap<u32, Vec<(u32, u16)>> = BTreeMap::new();
            for part in io::parts(l.m, id, p.ty)? {
                match part {
                    Part::Builtin { reg, b: BuiltIn::Position, .. } => position = Some(r + reg as u16),
                    Part::Builtin { reg, b: BuiltIn::PointSize, .. } => point_size = Some(r + reg as u16),
                    Part::Builtin { reg, b: BuiltIn::ClipDistance, ty } if clip => {
                        for k in 0..l.m.types.regs(ty)? {
                            let at = (vout::CLIP_DISTANCE + 4 * k as usize) as u32;
                            store(l, MemSize::B32, base, at, r + (reg + k) as u16);
                        }
                    }
                    Part::Builtin { .. } => {}
                    Part::Loc { reg, loc, comp, .. } => varyings.entry(loc).or_default().push((comp, r + reg as u16)),
                }
            }
            for (loc, comps) in varyings {
                store_location(l, base, loc, &comps);
            }
        }
        let position = match position {
            Some(r) => r,
            None => l.imm_block(&[0; 4])?,
        };
        store(l, MemSize::B128, base, vout::POSITION as u32, position);
        let point_size = match point_size {
            Some(r) => r,
            None => l.imm(1.0f32.to_bits())?,
        };
        store(l, MemSize::B32, base, vout::POINT_SIZE as u32, point_size);
        Ok(())
    }

    /// Not allowed in a vertex shader; reachable only in invalid modules.
    fn kill(&self, l: &mut Lowerer<'_>) -> Result<()> {
        l.e.emit(I::new(Vx::Trap).imm(TrapCode::Kill as u32));
        Ok(())
    }

    fn graphics(&self, m: &Module, io: &IoState, code: &[Instr]) -> Result<Option<GraphicsInfo>> {
        let mut info =
            GraphicsInfo { side_effects: super::side_effects(code) > io.own_stores, ..GraphicsInfo::default() };
        // Every declared output counts, written or not: the fragment shader may read it.
        for &id in &m.entry.interface {
            if let Some(g) = m.globals.get(&id).filter(|g| g.sc == StorageClass::Output) {
                info.vout_locations = info.vout_locations.max(io::locations(&io::parts(m, id, g.ty)?));
            }
        }
        for (id, p) in &io.outputs {
            for part in io::parts(m, *id, p.ty)? {
                match part {
                    Part::Builtin { b: BuiltIn::PointSize, .. } => info.writes_point_size = true,
                    Part::Builtin { b: BuiltIn::ClipDistance, ty, .. } if clip_enabled(m) => {
                        info.clip_distances = m.types.regs(ty)?
                    }
                    _ => {}
                }
            }
        }
        Ok(Some(info))
    }
}

/// Clip distances are stored only when the module declares the capability (glslang's
/// implicit `gl_PerVertex` carries a `gl_ClipDistance` member whether the shader uses it or
/// not).
fn clip_enabled(m: &Module) -> bool {
    m.has_capability(Capability::ClipDistance)
}

/// An output variable: its built-ins checked, its point size defaulting to 1.0.
fn output(l: &mut Lowerer<'_>, id: Id, var: &GlobalVar) -> Result<Ptr> {
    let parts = io::parts(l.m, id, var.ty)?;
    let mut point_size = None;
    for part in &parts {
        match *part {
            Part::Builtin { b: BuiltIn::Position | BuiltIn::CullDistance, .. } => {}
            Part::Builtin { b: BuiltIn::ClipDistance, ty, .. } => {
                let n = l.m.types.regs(ty)?;
                if n as usize > vout::MAX_CLIP_DISTANCES {
                    return Err(limit!("{n} clip distances (the device has {})", vout::MAX_CLIP_DISTANCES));
                }
            }
            Part::Builtin { reg, b: BuiltIn::PointSize, ty } => point_size = Some((reg, ty)),
            Part::Builtin { b, .. } => return Err(unsupported!("built-in {b:?} output in a vertex shader")),
            Part::Loc { loc, .. } if loc as usize >= vout::MAX_LOCATIONS => {
                return Err(limit!("output location {loc} (the device has {})", vout::MAX_LOCATIONS))
            }
            Part::Loc { .. } => {}
        }
    }
    let p = output_var(l, id, var)?;
    if let (Some((reg, ty)), None) = (point_size, var.init) {
        if !matches!(l.m.types.get(ty)?, Type::Float { width: 32 }) {
            return Err(invalid!("PointSize declared as {}", l.m.types.describe(ty)));
        }
        let at = part_ptr(&p, reg, ty)?;
        let one = l.imm(1.0f32.to_bits())?;
        l.in_prologue(|l| l.store(&at, ty, one))?;
    }
    Ok(p)
}

/// `STG` of `size` at `base + at` (counted: they are not the shader's side effects).
fn store(l: &mut Lowerer<'_>, size: MemSize, base: u16, at: u32, r: u16) {
    l.e.emit(I::new(Vx::Stg).size(size).a(base).b(r).imm(at));
    l.io.own_stores += 1;
}

/// One varying location's components (component, register): one 16-byte store when all
/// four are consecutive registers, else a word each.
fn store_location(l: &mut Lowerer<'_>, base: u16, loc: u32, comps: &[(u32, u16)]) {
    let at = |c: u32| vout::varying(loc as usize, c as usize) as u32;
    let mut sorted = comps.to_vec();
    sorted.sort_unstable();
    let whole =
        sorted.len() == 4 && sorted.iter().enumerate().all(|(k, &(c, r))| c == k as u32 && r == sorted[0].1 + k as u16);
    if whole {
        store(l, MemSize::B128, base, at(0), sorted[0].1);
    } else {
        for (c, r) in sorted {
            store(l, MemSize::B32, base, at(c), r);
        }
    }
}

/// Computes vertex built-in `b` (of `n` registers) into fresh registers; runs in the prologue.
fn builtin(l: &mut Lowerer<'_>, b: BuiltIn, n: u32) -> Result<u16> {
    let id = match b {
        BuiltIn::VertexIndex => Some(csr::VTX_INDEX),
        BuiltIn::InstanceIndex => Some(csr::VTX_INSTANCE),
        BuiltIn::BaseVertex => Some(csr::VTX_BASE_VERTEX),
        BuiltIn::BaseInstance => Some(csr::VTX_BASE_INSTANCE),
        BuiltIn::DrawIndex => Some(csr::DRAW_INDEX),
        _ => None,
    };
    let want = if id.is_some() { 1 } else { subgroup::builtin_regs(b) };
    if n != want {
        return Err(invalid!("built-in {b:?} declared with {n} components"));
    }
    let d = l.e.alloc(n)?;
    match id {
        Some(c) => l.e.emit(I::new(Vx::Csr).dst(d).imm(c)),
        None => {
            if !l.subgroup_builtin(b, d)? {
                return Err(unsupported!("built-in {b:?} in a vertex shader"));
            }
        }
    }
    Ok(d)
}
