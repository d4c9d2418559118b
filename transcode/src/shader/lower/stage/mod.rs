//! Shader stages: where an invocation's inputs come from and where its outputs go.
//!
//! Each stage implements [`StageIo`]: it reads the entry point's execution modes (and so the
//! local size the kernel header declares), provides the module-scope variables of the
//! storage classes it owns (`Input` built-ins and user inputs, `Output`, and for the
//! ray-tracing stages their payloads and hit attributes), and says what runs at the start of
//! an invocation (the prologue), at its end (before `EXIT`) and on `OpKill` /
//! `OpTerminateInvocation`. The rest of lowering never asks which stage it compiles.
//!
//! Compute ([`compute`]), vertex ([`vertex`], with the attribute fetch of [`fetch`]),
//! fragment ([`fragment`]) and ray generation ([`raygen`]) are implemented, the graphics two
//! sharing [`io`]; [`select`] refuses every other stage by name. Adding one is a module here with an implementation of
//! [`StageIo`] and an arm in [`select`].

mod callee;
mod compute;
mod fetch;
mod fragment;
mod io;
mod raygen;
mod vertex;

pub(super) use compute::local_index;

use super::mem::{Ptr, PtrKind, Space};
use super::Lowerer;
use crate::shader::emit::Label;
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::module::{GlobalVar, InstExt, Module};
use crate::shader::types::Id;
use crate::shader::{GraphicsInfo, Stage};
use rspirv::dr::{Instruction, Operand};
use spirv::{BuiltIn, ExecutionMode};
use vortex_model::abi::isa::{Instr, Op as Vx};

/// A stage's inputs, outputs, launch shape and invocation boundaries.
pub(crate) trait StageIo: Sync {
    /// Reads the entry point's execution modes (those of [`stage_modes`]), refusing the ones
    /// the stage does not implement, and returns the local size of the kernel header.
    fn execution_modes(&self, m: &Module) -> Result<[u32; 3]>;

    /// Emitted first in the prologue block (which dominates the whole kernel).
    fn prologue(&self, l: &mut Lowerer<'_>) -> Result<()>;

    /// A module-scope variable of a storage class lowering does not place itself (every class
    /// but Private, Workgroup, PushConstant, Uniform, StorageBuffer and UniformConstant), on
    /// its first use. Code emitted here lands at the use: put what must dominate every use
    /// in the prologue (`Lowerer::in_prologue`).
    fn interface_var(&self, l: &mut Lowerer<'_>, id: Id, var: &GlobalVar) -> Result<Ptr>;

    /// The entry point returns (the unified exit block): what the invocation hands on. `EXIT`
    /// follows.
    fn epilogue(&self, l: &mut Lowerer<'_>) -> Result<()>;

    /// `OpKill` / `OpTerminateInvocation`: the invocation ends here.
    fn kill(&self, l: &mut Lowerer<'_>) -> Result<()>;

    /// The end of the prologue: on to the shader's first block (ray generation first sends
    /// the lanes outside the launch away).
    fn enter(&self, l: &mut Lowerer<'_>, first: Label) -> Result<()> {
        l.e.jmp(first);
        Ok(())
    }

    /// What the draw's fixed-function state needs from the kernel (`None` outside the
    /// graphics stages), from the module, what lowering recorded and the final code.
    fn graphics(&self, m: &Module, io: &IoState, code: &[Instr]) -> Result<Option<GraphicsInfo>>;
}

/// The implementation of `stage`, or why there is none.
pub(crate) fn select(stage: Stage) -> Result<&'static dyn StageIo> {
    match stage {
        Stage::Compute => Ok(&compute::Compute),
        Stage::Vertex => Ok(&vertex::Vertex),
        Stage::Fragment => Ok(&fragment::Fragment),
        Stage::RayGeneration => Ok(&raygen::RayGeneration),
        s => Err(unsupported!("{s} shaders are not supported yet")),
    }
}

/// The implementation of a stage a ray-tracing pipeline runs in place of a call
/// (`lower/raytracing`).
pub(crate) fn callee(stage: Stage) -> Result<&'static dyn StageIo> {
    match stage {
        Stage::Miss => Ok(&callee::MISS),
        Stage::ClosestHit => Ok(&callee::CLOSEST_HIT),
        Stage::AnyHit => Ok(&callee::ANY_HIT),
        Stage::Intersection => Ok(&callee::INTERSECTION),
        Stage::Callable => Ok(&callee::CALLABLE),
        s => Err(invalid!("internal: a {s} shader called from a ray-tracing pipeline")),
    }
}

/// What a stage records while one kernel is lowered.
#[derive(Default)]
pub(crate) struct IoState {
    /// Output variables in the order of their first use, with their storage: the epilogue
    /// hands them on.
    pub outputs: Vec<(Id, Ptr)>,
    /// `OpKill`, `OpTerminateInvocation` or `OpDemoteToHelperInvocation` was lowered.
    pub discards: bool,
    /// Stores the stage itself emitted (a vertex kernel's outputs).
    pub own_stores: usize,
    /// The draw's prologue values.
    pub draw: io::DrawRegs,
    /// The fragment stage's prologue values.
    pub frag: fragment::FragRegs,
    /// The vertex stage's per-binding fetch values.
    pub fetch: fetch::FetchRegs,
    /// Ray generation's launch id and size (prologue registers).
    pub launch_id: Option<u16>,
    pub launch_size: Option<u16>,
}

/// The entry point's execution modes, less the float-control ones every stage accepts
/// (denormals, signed zeros and rounding are what the device does anyway).
pub(super) fn stage_modes(m: &Module) -> Result<Vec<(ExecutionMode, &Instruction)>> {
    let mut out = Vec::new();
    for em in &m.raw.execution_modes {
        if em.id(0)? != m.entry.func {
            continue;
        }
        let mode = match em.operand(1)? {
            Operand::ExecutionMode(mode) => *mode,
            o => return Err(invalid!("OpExecutionMode with mode {o:?}")),
        };
        match mode {
            ExecutionMode::DenormPreserve
            | ExecutionMode::DenormFlushToZero
            | ExecutionMode::SignedZeroInfNanPreserve
            | ExecutionMode::RoundingModeRTE => {}
            mode => out.push((mode, em)),
        }
    }
    Ok(out)
}

/// A built-in input variable (decorated `BuiltIn`): `compute(l, built-in, registers)` emits
/// its value into fresh registers in the prologue ([`fixed_input`]).
pub(super) fn builtin_input(
    l: &mut Lowerer<'_>,
    id: Id,
    ty: Id,
    compute: impl FnOnce(&mut Lowerer<'_>, BuiltIn, u32) -> Result<u16>,
) -> Result<Ptr> {
    let b = l.m.decos(id).builtin.ok_or_else(|| unsupported!("Input variable %{id} that is not a built-in"))?;
    let n = l.m.types.regs(ty)?;
    fixed_input(l, id, ty, format!("{b:?}"), |l| compute(l, b, n))
}

/// An input whose value `compute` emits into fresh registers in the prologue. Nothing writes
/// them after, so loads alias them; a variable the shader indexes dynamically gets a copy in
/// private memory.
pub(super) fn fixed_input(
    l: &mut Lowerer<'_>,
    id: Id,
    ty: Id,
    name: String,
    compute: impl FnOnce(&mut Lowerer<'_>) -> Result<u16>,
) -> Result<Ptr> {
    let n = l.m.types.regs(ty)?;
    let r = l.in_prologue(compute)?;
    l.e.name_regs(r, n, name);
    if l.dynamic_vars.contains(&id) {
        // Indexed dynamically: keep a copy in private memory.
        let p = l.var_storage(id, ty, None, true)?;
        l.in_prologue(|l| l.store(&p, ty, r))?;
        return Ok(p);
    }
    Ok(Ptr { ty, kind: PtrKind::Flat { space: Space::Fixed, base: r, off: 0 } })
}

/// An `Output` variable: storage like a Private variable's (registers, or private memory
/// when indexed dynamically; its initializer stored in the prologue), recorded for the
/// epilogue, which reads it back.
pub(super) fn output_var(l: &mut Lowerer<'_>, id: Id, var: &GlobalVar) -> Result<Ptr> {
    let p = l.var_storage(id, var.ty, var.init, true)?;
    l.io.outputs.push((id, p.clone()));
    Ok(p)
}

/// The part of a register-image variable at `p` that starts `reg` registers in, of type `ty`.
pub(super) fn part_ptr(p: &Ptr, reg: u32, ty: Id) -> Result<Ptr> {
    let kind = match p.kind {
        PtrKind::Flat { space: space @ (Space::Regs | Space::Fixed), base, off } => {
            PtrKind::Flat { space, base, off: off + reg }
        }
        PtrKind::Flat { space, base, off } => PtrKind::Flat { space, base, off: off + 4 * reg },
        ref k => return Err(invalid!("internal: interface variable held in {k:?}")),
    };
    Ok(Ptr { ty, kind })
}

/// The registers of an interface variable's whole value: its own when it lives in registers,
/// else loaded from private memory (where called).
pub(super) fn value_regs(l: &mut Lowerer<'_>, p: &Ptr) -> Result<u16> {
    match p.kind {
        PtrKind::Flat { space: Space::Regs | Space::Fixed, base, off } => Ok(base + off as u16),
        _ => l.load(p, p.ty),
    }
}

/// The instructions of `code` that write memory: global stores and atomics, image stores and
/// atomics (what a helper lane skips, exports aside).
pub(super) fn side_effects(code: &[Instr]) -> usize {
    code.iter().filter(|i| i.op.skips_helper_lanes() && i.op != Vx::Exp).count()
}
