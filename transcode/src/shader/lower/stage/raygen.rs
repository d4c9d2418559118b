//! Ray generation: the entry of a ray-tracing pipeline's kernel (`docs/RTPIPELINE.md`). A
//! trace-rays launch is a grid of [`kargs::LAUNCH_BLOCK`] CTAs covering the launch size;
//! `LaunchIdKHR` is the invocation's place in that grid, `LaunchSizeKHR` comes from the
//! kernel arguments, and the lanes of the last CTAs that fall outside the launch size leave
//! before the shader's first block.

use super::super::subgroup;
use super::{builtin_input, stage_modes, IoState, StageIo};
use crate::shader::emit::{Label, I};
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::lower::{Lowerer, Ptr};
use crate::shader::module::{GlobalVar, Module};
use crate::shader::types::Id;
use crate::shader::GraphicsInfo;
use spirv::{BuiltIn, StorageClass};
use vortex_model::abi::csr;
use vortex_model::abi::isa::{Instr, IntCond, MemSize, Op as Vx, TrapCode};
use vortex_model::abi::kernel::kargs;

pub(super) struct RayGeneration;

impl StageIo for RayGeneration {
    /// Ray generation has no execution modes of its own; its CTA shape is the launch's.
    fn execution_modes(&self, m: &Module) -> Result<[u32; 3]> {
        if let Some((mode, _)) = stage_modes(m)?.first() {
            return Err(unsupported!("execution mode {mode:?} in a ray generation shader"));
        }
        Ok(kargs::LAUNCH_BLOCK)
    }

    fn prologue(&self, _l: &mut Lowerer<'_>) -> Result<()> {
        Ok(())
    }

    fn interface_var(&self, l: &mut Lowerer<'_>, id: Id, var: &GlobalVar) -> Result<Ptr> {
        match var.sc {
            StorageClass::Input => builtin_input(l, id, var.ty, builtin),
            // What traces and callable calls hand on (`lower/raytracing`): ordinary storage
            // the called shaders address directly.
            StorageClass::RayPayloadKHR | StorageClass::CallableDataKHR => l.var_storage(id, var.ty, var.init, true),
            StorageClass::ShaderRecordBufferKHR => l.shader_record(var.ty),
            sc => Err(unsupported!("{sc:?} variable %{id} in a ray generation shader")),
        }
    }

    fn epilogue(&self, _l: &mut Lowerer<'_>) -> Result<()> {
        Ok(())
    }

    fn kill(&self, l: &mut Lowerer<'_>) -> Result<()> {
        l.e.emit(I::new(Vx::Trap).imm(TrapCode::Kill as u32));
        Ok(())
    }

    /// Lanes past the launch size in x or y (the grid's z is the launch depth exactly) exit
    /// here: the taken side of the branch runs first and ends in `EXIT`, the others go on
    /// to the shader at the reconvergence point.
    fn enter(&self, l: &mut Lowerer<'_>, first: Label) -> Result<()> {
        let id = launch_id(l)?;
        let size = launch_size(l)?;
        let out_x = l.e.alloc(1)?;
        l.e.emit(I::new(Vx::Icmp).cond(IntCond::Uge).dst(out_x).a(id).b(size));
        let out_y = l.e.alloc(1)?;
        l.e.emit(I::new(Vx::Icmp).cond(IntCond::Uge).dst(out_y).a(id + 1).b(size + 1));
        let out = l.e.op2(Vx::Or, out_x, out_y)?;
        let leave = l.e.label("launch.outside");
        l.e.bra(out, leave, first, first);
        l.e.place(leave)?;
        l.e.emit(I::new(Vx::Exit));
        l.e.jmp(first);
        Ok(())
    }

    fn graphics(&self, _m: &Module, _io: &IoState, _code: &[Instr]) -> Result<Option<GraphicsInfo>> {
        Ok(None)
    }
}

/// Computes built-in `b` (of `n` registers) into fresh registers; runs in the prologue.
fn builtin(l: &mut Lowerer<'_>, b: BuiltIn, n: u32) -> Result<u16> {
    let want = match b {
        BuiltIn::LaunchIdKHR | BuiltIn::LaunchSizeKHR => 3,
        b => subgroup::builtin_regs(b),
    };
    if n != want {
        return Err(invalid!("built-in {b:?} declared with {n} components"));
    }
    match b {
        BuiltIn::LaunchIdKHR => launch_id(l),
        BuiltIn::LaunchSizeKHR => launch_size(l),
        b => {
            let d = l.e.alloc(n)?;
            if !l.subgroup_builtin(b, d)? {
                return Err(unsupported!("built-in {b:?} in a ray generation shader"));
            }
            Ok(d)
        }
    }
}

/// `LaunchIdKHR` = CTA id * CTA shape + thread in CTA, per dimension (in the prologue, once).
pub(in crate::shader::lower) fn launch_id(l: &mut Lowerer<'_>) -> Result<u16> {
    if let Some(r) = l.io.launch_id {
        return Ok(r);
    }
    let r = l.in_prologue(|l| {
        let d = l.e.alloc(3)?;
        let bid = [csr::CTA_BLOCK_ID_X, csr::CTA_BLOCK_ID_Y, csr::CTA_BLOCK_ID_Z];
        let tid = [csr::CTA_THREAD_ID_X, csr::CTA_THREAD_ID_Y, csr::CTA_THREAD_ID_Z];
        for k in 0..3 {
            let b = l.e.alloc(1)?;
            l.e.emit(I::new(Vx::Csr).dst(b).imm(bid[k]));
            let t = l.e.alloc(1)?;
            l.e.emit(I::new(Vx::Csr).dst(t).imm(tid[k]));
            let scaled = l.scale(b, kargs::LAUNCH_BLOCK[k])?;
            l.e.emit(I::new(Vx::Iadd).dst(d + k as u16).a(scaled).b(t));
        }
        Ok(d)
    })?;
    l.e.name_regs(r, 3, "LaunchIdKHR".into());
    l.io.launch_id = Some(r);
    Ok(r)
}

/// `LaunchSizeKHR`, from the kernel arguments (in the prologue, once).
pub(in crate::shader::lower) fn launch_size(l: &mut Lowerer<'_>) -> Result<u16> {
    if let Some(r) = l.io.launch_size {
        return Ok(r);
    }
    let kargs = l.kargs()?;
    let r = l.in_prologue(|l| {
        let d = l.e.alloc(3)?;
        for k in 0..3u16 {
            let at = kargs::LAUNCH_SIZE as u32 + 4 * k as u32;
            l.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(d + k).a(kargs).imm(at));
        }
        Ok(d)
    })?;
    l.e.name_regs(r, 3, "LaunchSizeKHR".into());
    l.io.launch_size = Some(r);
    Ok(r)
}
