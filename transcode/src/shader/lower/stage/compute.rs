//! Compute: a grid of workgroups, each a CTA of `local_size` invocations. The built-ins come
//! from the CTA's CSRs and the kernel arguments (`docs/SHADER.md`, "Built-ins"); a compute
//! invocation has no outputs besides memory, and `OpKill` / `OpTerminateInvocation` (not
//! allowed in compute, but reachable in modules that carry them) trap.

use super::super::subgroup;
use super::{builtin_input, stage_modes, IoState, StageIo};
use crate::shader::emit::I;
use crate::shader::error::{invalid, limit, unsupported, Result};
use crate::shader::lower::{Lowerer, Ptr};
use crate::shader::module::{GlobalVar, InstExt, Module};
use crate::shader::types::Id;
use crate::shader::GraphicsInfo;
use spirv::{BuiltIn, ExecutionMode, StorageClass};
use vortex_model::abi::csr;
use vortex_model::abi::isa::{Instr, MemSize, Op as Vx, TrapCode};
use vortex_model::abi::kernel::kargs;

/// Most invocations in a workgroup.
const MAX_WORKGROUP: u64 = 1 << 16;

pub(super) struct Compute;

impl StageIo for Compute {
    fn execution_modes(&self, m: &Module) -> Result<[u32; 3]> {
        local_size(m)
    }

    /// Built-ins are computed in the prologue on first use; nothing runs before.
    fn prologue(&self, _l: &mut Lowerer<'_>) -> Result<()> {
        Ok(())
    }

    fn interface_var(&self, l: &mut Lowerer<'_>, id: Id, var: &GlobalVar) -> Result<Ptr> {
        match var.sc {
            StorageClass::Input => builtin_input(l, id, var.ty, builtin),
            sc => Err(unsupported!("{sc:?} variable %{id} in a compute shader")),
        }
    }

    /// Results are in memory already.
    fn epilogue(&self, _l: &mut Lowerer<'_>) -> Result<()> {
        Ok(())
    }

    fn kill(&self, l: &mut Lowerer<'_>) -> Result<()> {
        l.e.emit(I::new(Vx::Trap).imm(TrapCode::Kill as u32));
        Ok(())
    }

    fn graphics(&self, _m: &Module, _io: &IoState, _code: &[Instr]) -> Result<Option<GraphicsInfo>> {
        Ok(None)
    }
}

/// Workgroup size: a `WorkgroupSize` built-in constant wins over `LocalSizeId`, which wins
/// over `LocalSize` (SPIR-V 2.16 / Vulkan 15.6).
fn local_size(m: &Module) -> Result<[u32; 3]> {
    let mut size = None;
    for (mode, em) in stage_modes(m)? {
        match mode {
            ExecutionMode::LocalSize => size = Some([em.lit(2)?, em.lit(3)?, em.lit(4)?]),
            ExecutionMode::LocalSizeId => {
                let mut s = [0; 3];
                for (k, v) in s.iter_mut().enumerate() {
                    let id = em.id(2 + k)?;
                    *v = m
                        .const_u32(id)
                        .ok_or_else(|| invalid!("LocalSizeId operand %{id} is not an integer constant"))?;
                }
                size = Some(s);
            }
            ExecutionMode::LocalSizeHint | ExecutionMode::LocalSizeHintId => {}
            mode => return Err(unsupported!("execution mode {mode:?}")),
        }
    }
    for (id, d) in &m.decos {
        if d.builtin == Some(BuiltIn::WorkgroupSize) {
            if let Some(c) = m.consts.get(id) {
                if c.words.len() == 3 {
                    size = Some([c.words[0], c.words[1], c.words[2]]);
                }
            }
        }
    }
    let size = size.ok_or_else(|| invalid!("compute entry point without a workgroup size"))?;
    if size.contains(&0) {
        return Err(invalid!("workgroup size {size:?} has a zero dimension"));
    }
    let total = size.iter().fold(1u64, |a, &d| a.saturating_mul(d as u64));
    if total > MAX_WORKGROUP {
        return Err(limit!("workgroup size {size:?} ({total} invocations)"));
    }
    Ok(size)
}

/// The `uvec3` built-ins of compute.
fn is_vec3(b: BuiltIn) -> bool {
    matches!(
        b,
        BuiltIn::LocalInvocationId
            | BuiltIn::WorkgroupId
            | BuiltIn::NumWorkgroups
            | BuiltIn::GlobalInvocationId
            | BuiltIn::WorkgroupSize
    )
}

/// Computes built-in `b` (of `n` registers) into fresh registers; runs in the prologue.
fn builtin(l: &mut Lowerer<'_>, b: BuiltIn, n: u32) -> Result<u16> {
    let want = if is_vec3(b) { 3 } else { subgroup::builtin_regs(b) };
    if n != want {
        return Err(invalid!("built-in {b:?} declared with {n} components"));
    }
    let d = l.e.alloc(n)?;
    match b {
        BuiltIn::LocalInvocationId => {
            for (k, c) in TID.into_iter().enumerate() {
                l.e.emit(I::new(Vx::Csr).dst(d + k as u16).imm(c));
            }
        }
        BuiltIn::WorkgroupId | BuiltIn::GlobalInvocationId => workgroup_id(l, b == BuiltIn::GlobalInvocationId, d)?,
        BuiltIn::NumWorkgroups => {
            let kargs = l.kargs()?;
            for k in 0..3u16 {
                let at = kargs::NUM_GROUPS as u32 + 4 * k as u32;
                l.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(d + k).a(kargs).imm(at));
            }
        }
        BuiltIn::WorkgroupSize => {
            for k in 0..3u16 {
                l.e.movi(d + k, l.local_size[k as usize]);
            }
        }
        BuiltIn::LocalInvocationIndex => local_index(l, d)?,
        BuiltIn::SubgroupId => l.e.emit(I::new(Vx::Csr).dst(d).imm(csr::CTA_RANK)),
        BuiltIn::NumSubgroups => l.e.emit(I::new(Vx::Csr).dst(d).imm(csr::CTA_SIZE)),
        b => {
            if !l.subgroup_builtin(b, d)? {
                return Err(unsupported!("built-in {b:?} in a compute shader"));
            }
        }
    }
    Ok(d)
}

/// The thread-in-CTA CSRs, x to z.
const TID: [u32; 3] = [csr::CTA_THREAD_ID_X, csr::CTA_THREAD_ID_Y, csr::CTA_THREAD_ID_Z];

/// A CSR into a fresh register.
fn read_csr(l: &mut Lowerer<'_>, c: u32) -> Result<u16> {
    let r = l.e.alloc(1)?;
    l.e.emit(I::new(Vx::Csr).dst(r).imm(c));
    Ok(r)
}

/// `WorkgroupId` = CTA id + the dispatch's base group; `GlobalInvocationId` (`global`) =
/// `WorkgroupId * local_size + LocalInvocationId`; into `d..d+3`.
fn workgroup_id(l: &mut Lowerer<'_>, global: bool, d: u16) -> Result<()> {
    let kargs = l.kargs()?;
    let bid = [csr::CTA_BLOCK_ID_X, csr::CTA_BLOCK_ID_Y, csr::CTA_BLOCK_ID_Z];
    for k in 0..3u16 {
        let c = read_csr(l, bid[k as usize])?;
        let base = l.e.alloc(1)?;
        let at = kargs::BASE_GROUP as u32 + 4 * k as u32;
        l.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(base).a(kargs).imm(at));
        if global {
            let wg = l.e.op2(Vx::Iadd, c, base)?;
            let t = read_csr(l, TID[k as usize])?;
            let scaled = l.scale(wg, l.local_size[k as usize])?;
            l.e.emit(I::new(Vx::Iadd).dst(d + k).a(scaled).b(t));
        } else {
            l.e.emit(I::new(Vx::Iadd).dst(d + k).a(c).b(base));
        }
    }
    Ok(())
}

/// `LocalInvocationIndex` = x + sx * (y + sy * z), into `d`.
fn local_index(l: &mut Lowerer<'_>, d: u16) -> Result<()> {
    let (x, y, z) = (read_csr(l, TID[0])?, read_csr(l, TID[1])?, read_csr(l, TID[2])?);
    let (sx, sy) = (l.imm(l.local_size[0])?, l.imm(l.local_size[1])?);
    let t = l.e.op2(Vx::Imul, z, sy)?;
    let t = l.e.op2(Vx::Iadd, t, y)?;
    let t = l.e.op2(Vx::Imul, t, sx)?;
    l.e.emit(I::new(Vx::Iadd).dst(d).a(t).b(x));
    Ok(())
}
