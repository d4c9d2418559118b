//! Shader stages: where an invocation's inputs come from and where its outputs go.
//!
//! Each stage implements [`StageIo`]: it reads the entry point's execution modes (and so the
//! local size the kernel header declares), provides the module-scope variables of the
//! storage classes it owns (`Input` built-ins and user inputs, `Output`, and for the
//! ray-tracing stages their payloads and hit attributes), and says what runs at the start of
//! an invocation (the prologue), at its end (before `EXIT`) and on `OpKill` /
//! `OpTerminateInvocation`. The rest of lowering never asks which stage it compiles.
//!
//! Only compute is implemented ([`compute`]); [`select`] refuses every other stage by name.
//! Adding one is a module here with an implementation of [`StageIo`] and an arm in
//! [`select`].

mod compute;

use super::mem::{Ptr, PtrKind, Space};
use super::Lowerer;
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::module::{GlobalVar, InstExt, Module};
use crate::shader::types::Id;
use crate::shader::Stage;
use rspirv::dr::{Instruction, Operand};
use spirv::{BuiltIn, ExecutionMode};

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
}

/// The implementation of `stage`, or why there is none.
pub(crate) fn select(stage: Stage) -> Result<&'static dyn StageIo> {
    match stage {
        Stage::Compute => Ok(&compute::Compute),
        s => Err(unsupported!("{s} shaders are not supported yet")),
    }
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
/// its value into fresh registers in the prologue. Nothing writes them after, so loads
/// alias them; a variable the shader indexes dynamically gets a copy in private memory.
pub(super) fn builtin_input(
    l: &mut Lowerer<'_>,
    id: Id,
    ty: Id,
    compute: impl FnOnce(&mut Lowerer<'_>, BuiltIn, u32) -> Result<u16>,
) -> Result<Ptr> {
    let b = l.m.decos(id).builtin.ok_or_else(|| unsupported!("Input variable %{id} that is not a built-in"))?;
    let n = l.m.types.regs(ty)?;
    let r = l.in_prologue(|l| compute(l, b, n))?;
    l.e.name_regs(r, n, format!("{b:?}"));
    if l.dynamic_vars.contains(&id) {
        // Indexed dynamically: keep a copy in private memory.
        let p = l.var_storage(id, ty, None, true)?;
        l.in_prologue(|l| l.store(&p, ty, r))?;
        return Ok(p);
    }
    Ok(Ptr { ty, kind: PtrKind::Flat { space: Space::Fixed, base: r, off: 0 } })
}
