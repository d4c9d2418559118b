//! The stages a ray-tracing pipeline's kernel runs in place (`lower/raytracing`): miss,
//! closest-hit, any-hit, intersection and callable. Their inputs are what the call hands
//! them: the caller's payload or callable data, the trace's hit attributes and kind, and
//! the trace's query slot, whose window the hit built-ins read when the shader is entered
//! (candidate for any-hit and intersection, committed for closest-hit).

use super::super::rayquery::{HitMatrix, HitValue, Intersection, RayValue};
use super::super::raytracing::{Call, ATTR_REGS};
use super::super::subgroup;
use super::raygen::{launch_id, launch_size};
use super::{builtin_input, IoState, StageIo};
use crate::shader::emit::I;
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::lower::mem::{PtrKind, Space};
use crate::shader::lower::{Lowerer, Ptr};
use crate::shader::module::{GlobalVar, Module};
use crate::shader::types::Id;
use crate::shader::{GraphicsInfo, Stage};
use spirv::{BuiltIn, StorageClass};
use vortex_model::abi::isa::{Instr, Op as Vx, TrapCode};

pub(super) struct Callee(pub Stage);

pub(super) static MISS: Callee = Callee(Stage::Miss);
pub(super) static CLOSEST_HIT: Callee = Callee(Stage::ClosestHit);
pub(super) static ANY_HIT: Callee = Callee(Stage::AnyHit);
pub(super) static INTERSECTION: Callee = Callee(Stage::Intersection);
pub(super) static CALLABLE: Callee = Callee(Stage::Callable);

impl StageIo for Callee {
    fn execution_modes(&self, m: &Module) -> Result<[u32; 3]> {
        if let Some((mode, _)) = super::stage_modes(m)?.first() {
            return Err(unsupported!("execution mode {mode:?} in a {} shader", self.0));
        }
        Ok(vortex_model::abi::kernel::kargs::LAUNCH_BLOCK)
    }

    fn prologue(&self, _l: &mut Lowerer<'_>) -> Result<()> {
        Ok(())
    }

    fn interface_var(&self, l: &mut Lowerer<'_>, id: Id, var: &GlobalVar) -> Result<Ptr> {
        let call = l.call.clone().ok_or_else(|| invalid!("internal: a {} shader lowered outside a call", self.0))?;
        match var.sc {
            StorageClass::Input => builtin_input(l, id, var.ty, |l, b, n| builtin(l, self.0, &call, b, n)),
            StorageClass::IncomingRayPayloadKHR | StorageClass::IncomingCallableDataKHR => {
                let p = call.payload.ok_or_else(|| invalid!("{:?} variable %{id} with nothing passed", var.sc))?;
                Ok(Ptr { ty: var.ty, kind: p.kind })
            }
            StorageClass::HitAttributeKHR => {
                let (cand, comm) = call.attrs.ok_or_else(|| invalid!("hit attributes in a {} shader", self.0))?;
                if l.m.types.regs(var.ty)? > ATTR_REGS {
                    return Err(invalid!("hit attribute %{id} larger than maxRayHitAttributeSize"));
                }
                let base = if call.which == Intersection::Candidate { cand } else { comm };
                Ok(Ptr { ty: var.ty, kind: PtrKind::Flat { space: Space::Regs, base, off: 0 } })
            }
            // Outgoing payloads of a shader that cannot trace: ordinary storage.
            StorageClass::RayPayloadKHR | StorageClass::CallableDataKHR => l.var_storage(id, var.ty, var.init, true),
            StorageClass::ShaderRecordBufferKHR => l.shader_record(var.ty),
            sc => Err(unsupported!("{sc:?} variable %{id} in a {} shader", self.0)),
        }
    }

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

/// Registers of built-in `b`.
fn regs_of(b: BuiltIn) -> u32 {
    use BuiltIn::*;
    match b {
        LaunchIdKHR
        | LaunchSizeKHR
        | WorldRayOriginKHR
        | WorldRayDirectionKHR
        | ObjectRayOriginKHR
        | ObjectRayDirectionKHR => 3,
        ObjectToWorldKHR | WorldToObjectKHR => 12,
        b => subgroup::builtin_regs(b),
    }
}

/// Computes built-in `b` of a `stage` shader entered by `call` (in its prologue, at entry).
fn builtin(l: &mut Lowerer<'_>, stage: Stage, call: &Call, b: BuiltIn, n: u32) -> Result<u16> {
    use BuiltIn::*;
    if n != regs_of(b) {
        return Err(invalid!("built-in {b:?} declared with {n} components"));
    }
    match b {
        LaunchIdKHR => return launch_id(l),
        LaunchSizeKHR => return launch_size(l),
        _ => {}
    }
    let traced = |b| call.slot.ok_or_else(|| unsupported!("built-in {b:?} in a {stage} shader"));
    let ops = l.ray_query;
    let hit = matches!(stage, Stage::ClosestHit | Stage::AnyHit | Stage::Intersection);
    let which = call.which;
    match b {
        WorldRayOriginKHR => ops.ray_value(l, traced(b)?, RayValue::WorldOrigin),
        WorldRayDirectionKHR => ops.ray_value(l, traced(b)?, RayValue::WorldDirection),
        RayTminKHR => ops.ray_value(l, traced(b)?, RayValue::TMin),
        IncomingRayFlagsKHR => ops.ray_value(l, traced(b)?, RayValue::Flags),
        RayTmaxKHR => ray_tmax(l, stage, call),
        HitTNV if stage == Stage::ClosestHit || stage == Stage::AnyHit => hit_t(l, call),
        HitKindKHR if hit && stage != Stage::Intersection => {
            let (cand, comm) = call.kinds.ok_or_else(|| invalid!("internal: no hit kind"))?;
            Ok(if which == Intersection::Candidate { cand } else { comm })
        }
        PrimitiveId if hit => ops.hit_value(l, traced(b)?, which, HitValue::PrimitiveIndex),
        InstanceId if hit => ops.hit_value(l, traced(b)?, which, HitValue::InstanceId),
        InstanceCustomIndexKHR if hit => ops.hit_value(l, traced(b)?, which, HitValue::InstanceCustomIndex),
        RayGeometryIndexKHR if hit => ops.hit_value(l, traced(b)?, which, HitValue::GeometryIndex),
        ObjectRayOriginKHR if hit => ops.hit_value(l, traced(b)?, which, HitValue::ObjectRayOrigin),
        ObjectRayDirectionKHR if hit => ops.hit_value(l, traced(b)?, which, HitValue::ObjectRayDirection),
        ObjectToWorldKHR if hit => ops.hit_matrix(l, traced(b)?, which, HitMatrix::ObjectToWorld),
        WorldToObjectKHR if hit => ops.hit_matrix(l, traced(b)?, which, HitMatrix::WorldToObject),
        b => {
            let d = l.e.alloc(n)?;
            if !l.subgroup_builtin(b, d)? {
                return Err(unsupported!("built-in {b:?} in a {stage} shader"));
            }
            Ok(d)
        }
    }
}

/// `RayTmaxKHR`: the ray's tmax in a miss shader, the hit's t in a closest-hit, the closest
/// t so far in any-hit and intersection.
fn ray_tmax(l: &mut Lowerer<'_>, stage: Stage, call: &Call) -> Result<u16> {
    let q = call.slot.ok_or_else(|| unsupported!("built-in RayTmaxKHR in a {stage} shader"))?;
    match stage {
        Stage::Miss => call.tmax.ok_or_else(|| invalid!("internal: no tmax")),
        Stage::ClosestHit => l.ray_query.hit_value(l, q, Intersection::Committed, HitValue::T),
        _ => match call.best_t {
            Some(t) => Ok(t),
            None => l.closest_t(q, call),
        },
    }
}

/// `HitTKHR`: the committed t, a candidate triangle's, or the t an intersection reported.
fn hit_t(l: &mut Lowerer<'_>, call: &Call) -> Result<u16> {
    let q = call.slot.ok_or_else(|| invalid!("internal: no trace"))?;
    match call.report_t {
        Some(t) => Ok(t),
        None => l.ray_query.hit_value(l, q, call.which, HitValue::T),
    }
}
