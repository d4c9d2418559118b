//! Ray queries: the SPIR-V side, shared by every lowering.
//!
//! Every `RayQueryKHR` variable (and every element of an array of them) owns a query slot
//! `0 .. num_queries`; a pointer to a query is its slot number in a register, and loading a
//! query yields the same slot, so dynamic indexing and passing queries to functions (by
//! pointer or as a bare value) need nothing else. Each slot has `state_bytes()` of private
//! memory at `slot * state_bytes()` for whatever the lowering keeps per query.
//!
//! This module decodes the `OpRayQuery*KHR` instructions (which operand is the query, the
//! ray, committed or candidate, the result's shape) and hands each operation to the target's
//! [`RayQueryOps`]: [`rtu`] (the fixed-function RT unit: `TRACE`/`CONT`/`WAIT`/`GETW`) is
//! one implementation, [`rdna2`] (traversal in the shader around `ISECT`) the other. Adding a lowering is a module here implementing [`RayQueryOps`]
//! and an arm in [`select`].

pub(super) mod confirm_all;
mod rdna2;
mod rtu;

use super::{Lowerer, Val};
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::module::InstExt;
use crate::shader::types::{Id, Type};
use crate::shader::RayQueryLowering;
use rspirv::dr::Instruction;
use spirv::Op;

/// Which intersection a getter reads (its `Intersection` operand: 0 candidate, 1 committed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Intersection {
    Candidate,
    Committed,
}

/// Values of the ray as `Initialize` set it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RayValue {
    TMin,
    Flags,
    WorldOrigin,
    WorldDirection,
}

impl RayValue {
    fn regs(self) -> u32 {
        match self {
            RayValue::TMin | RayValue::Flags => 1,
            RayValue::WorldOrigin | RayValue::WorldDirection => 3,
        }
    }
}

/// Scalar and vector values of an intersection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HitValue {
    /// The intersection type (committed: none, triangle, generated; candidate: triangle, AABB).
    Type,
    T,
    InstanceCustomIndex,
    InstanceId,
    SbtOffset,
    GeometryIndex,
    PrimitiveIndex,
    Barycentrics,
    FrontFace,
    ObjectRayOrigin,
    ObjectRayDirection,
}

impl HitValue {
    fn regs(self) -> u32 {
        match self {
            HitValue::Barycentrics => 2,
            HitValue::ObjectRayOrigin | HitValue::ObjectRayDirection => 3,
            _ => 1,
        }
    }
}

/// The instance transforms of an intersection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HitMatrix {
    ObjectToWorld,
    WorldToObject,
}

/// Registers of an `Initialize`'s operands.
pub(crate) struct Ray {
    /// The acceleration structure's address (a pair).
    pub accel: u16,
    pub flags: u16,
    pub cull_mask: u16,
    /// Three registers each.
    pub origin: u16,
    pub dir: u16,
    pub tmin: u16,
    pub tmax: u16,
    /// The query is only stepped through a confirm-all loop ([`confirm_all`]).
    pub confirm_all: bool,
}

/// A way of running ray queries on the device. `q` is always the query's slot register;
/// values are returned in fresh registers in SPIR-V's layout of the result type.
pub(crate) trait RayQueryOps: Sync {
    /// Private bytes of state per query slot.
    fn state_bytes(&self) -> u32;
    /// The most query slots a kernel may hold.
    fn max_queries(&self) -> u32;
    /// RT-unit query slots the kernel header declares for `queries` query slots (0 for a
    /// lowering that keeps its queries to itself).
    fn rtu_slots(&self, queries: u32) -> u32;

    fn initialize(&self, l: &mut Lowerer<'_>, q: u16, ray: &Ray) -> Result<()>;
    /// Returns the register of the `bool` result: a candidate awaits the shader.
    fn proceed(&self, l: &mut Lowerer<'_>, q: u16) -> Result<u16>;
    fn confirm(&self, l: &mut Lowerer<'_>, q: u16) -> Result<()>;
    /// Commits the candidate AABB hit at distance `t` (a register).
    fn generate(&self, l: &mut Lowerer<'_>, q: u16, t: u16) -> Result<()>;
    fn terminate(&self, l: &mut Lowerer<'_>, q: u16) -> Result<()>;

    fn ray_value(&self, l: &mut Lowerer<'_>, q: u16, v: RayValue) -> Result<u16>;
    fn hit_value(&self, l: &mut Lowerer<'_>, q: u16, which: Intersection, v: HitValue) -> Result<u16>;
    fn candidate_aabb_opaque(&self, l: &mut Lowerer<'_>, q: u16) -> Result<u16>;
    /// A `mat4x3` (4 columns of 3 components, column-major: 12 registers).
    fn hit_matrix(&self, l: &mut Lowerer<'_>, q: u16, which: Intersection, m: HitMatrix) -> Result<u16>;
    /// The hit triangle's three vertices as built (9 registers).
    fn triangle_vertices(&self, l: &mut Lowerer<'_>, q: u16, which: Intersection) -> Result<u16>;
}

/// The implementation of `lowering` (`raylog`: the device records a ray log).
pub(crate) fn select(lowering: RayQueryLowering, raylog: bool) -> Result<&'static dyn RayQueryOps> {
    match (lowering, raylog) {
        // The RT unit records its own traces.
        (RayQueryLowering::Rtu, _) => Ok(&rtu::Rtu),
        (RayQueryLowering::Rdna2, false) => Ok(&rdna2::Rdna2 { raylog: false }),
        (RayQueryLowering::Rdna2, true) => Ok(&rdna2::Rdna2 { raylog: true }),
    }
}

pub(super) fn handles(op: Op) -> bool {
    use Op::*;
    let control = matches!(
        op,
        RayQueryInitializeKHR
            | RayQueryTerminateKHR
            | RayQueryGenerateIntersectionKHR
            | RayQueryConfirmIntersectionKHR
            | RayQueryProceedKHR
            | ConvertUToAccelerationStructureKHR
    );
    control || Getter::of(op).is_some()
}

/// The value getters by family.
enum Getter {
    Ray(RayValue),
    Hit(HitValue),
    AabbOpaque,
    Matrix(HitMatrix),
    Vertices,
}

impl Getter {
    fn of(op: Op) -> Option<Getter> {
        use Op::*;
        Some(match op {
            RayQueryGetRayTMinKHR => Getter::Ray(RayValue::TMin),
            RayQueryGetRayFlagsKHR => Getter::Ray(RayValue::Flags),
            RayQueryGetWorldRayOriginKHR => Getter::Ray(RayValue::WorldOrigin),
            RayQueryGetWorldRayDirectionKHR => Getter::Ray(RayValue::WorldDirection),
            RayQueryGetIntersectionCandidateAABBOpaqueKHR => Getter::AabbOpaque,
            RayQueryGetIntersectionTypeKHR => Getter::Hit(HitValue::Type),
            RayQueryGetIntersectionTKHR => Getter::Hit(HitValue::T),
            RayQueryGetIntersectionInstanceCustomIndexKHR => Getter::Hit(HitValue::InstanceCustomIndex),
            RayQueryGetIntersectionInstanceIdKHR => Getter::Hit(HitValue::InstanceId),
            RayQueryGetIntersectionInstanceShaderBindingTableRecordOffsetKHR => Getter::Hit(HitValue::SbtOffset),
            RayQueryGetIntersectionGeometryIndexKHR => Getter::Hit(HitValue::GeometryIndex),
            RayQueryGetIntersectionPrimitiveIndexKHR => Getter::Hit(HitValue::PrimitiveIndex),
            RayQueryGetIntersectionBarycentricsKHR => Getter::Hit(HitValue::Barycentrics),
            RayQueryGetIntersectionFrontFaceKHR => Getter::Hit(HitValue::FrontFace),
            RayQueryGetIntersectionObjectRayOriginKHR => Getter::Hit(HitValue::ObjectRayOrigin),
            RayQueryGetIntersectionObjectRayDirectionKHR => Getter::Hit(HitValue::ObjectRayDirection),
            RayQueryGetIntersectionObjectToWorldKHR => Getter::Matrix(HitMatrix::ObjectToWorld),
            RayQueryGetIntersectionWorldToObjectKHR => Getter::Matrix(HitMatrix::WorldToObject),
            RayQueryGetIntersectionTriangleVertexPositionsKHR => Getter::Vertices,
            _ => return None,
        })
    }

    /// Registers of the result.
    fn regs(&self) -> u32 {
        match self {
            Getter::Ray(v) => v.regs(),
            Getter::Hit(v) => v.regs(),
            Getter::AabbOpaque => 1,
            Getter::Matrix(_) => 12,
            Getter::Vertices => 9,
        }
    }
}

impl<'m> Lowerer<'m> {
    pub(super) fn ray_query_inst(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        let ops = self.ray_query;
        match inst.class.opcode {
            ConvertUToAccelerationStructureKHR => self.convert_to_accel(inst),
            RayQueryInitializeKHR => {
                let q = self.query_slot(inst.id(0)?)?;
                let accel = self.regs(inst.id(1)?)?;
                let (flags, cull_mask) = (self.regs(inst.id(2)?)?, self.regs(inst.id(3)?)?);
                let origin = self.regs(inst.id(4)?)?;
                let tmin = self.regs(inst.id(5)?)?;
                let dir = self.regs(inst.id(6)?)?;
                let tmax = self.regs(inst.id(7)?)?;
                let confirm_all = self.confirm_all.contains(&inst.id(0)?);
                ops.initialize(self, q, &Ray { accel, flags, cull_mask, origin, dir, tmin, tmax, confirm_all })
            }
            RayQueryProceedKHR => {
                let q = self.query_slot(inst.id(0)?)?;
                let r = ops.proceed(self, q)?;
                self.define(inst.rid()?, r, inst.rty()?);
                Ok(())
            }
            RayQueryConfirmIntersectionKHR => {
                let q = self.query_slot(inst.id(0)?)?;
                ops.confirm(self, q)
            }
            RayQueryGenerateIntersectionKHR => {
                let t = self.regs(inst.id(1)?)?;
                let q = self.query_slot(inst.id(0)?)?;
                ops.generate(self, q, t)
            }
            RayQueryTerminateKHR => {
                let q = self.query_slot(inst.id(0)?)?;
                ops.terminate(self, q)
            }
            op => {
                let g = Getter::of(op).ok_or_else(|| unsupported!("SPIR-V instruction Op{}", inst.class.opname))?;
                self.ray_query_get(inst, g)
            }
        }
    }

    /// A u64 or uvec2 is already the (low, high) address pair.
    fn convert_to_accel(&mut self, inst: &Instruction) -> Result<()> {
        let src = inst.id(0)?;
        let (r, ty) = (self.regs(src)?, self.type_of(src)?);
        if self.m.types.regs(ty)? != 2 {
            return Err(invalid!("{} from a {}", inst.name(), self.m.types.describe(ty)));
        }
        self.define(inst.rid()?, r, inst.rty()?);
        Ok(())
    }

    fn ray_query_get(&mut self, inst: &Instruction, g: Getter) -> Result<()> {
        let q = self.query_slot(inst.id(0)?)?;
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        if self.m.types.regs(rty)? != g.regs() {
            return Err(invalid!("{}: result type does not match the query value", inst.name()));
        }
        let ops = self.ray_query;
        let r = match g {
            Getter::Ray(v) => ops.ray_value(self, q, v)?,
            Getter::AabbOpaque => ops.candidate_aabb_opaque(self, q)?,
            Getter::Hit(v) => {
                let which = intersection(self, inst)?;
                ops.hit_value(self, q, which, v)?
            }
            Getter::Matrix(m) => {
                let which = intersection(self, inst)?;
                ops.hit_matrix(self, q, which, m)?
            }
            Getter::Vertices => {
                let which = intersection(self, inst)?;
                ops.triangle_vertices(self, q, which)?
            }
        };
        self.define(rid, r, rty);
        Ok(())
    }

    /// The slot register of a query operand: a pointer to a query or a loaded query value.
    fn query_slot(&mut self, id: Id) -> Result<u16> {
        match self.val(id)? {
            Val::Ptr(p) => match p.kind {
                super::mem::PtrKind::Query { slot, .. } if matches!(self.m.types.get(p.ty)?, Type::RayQuery) => {
                    Ok(slot)
                }
                _ => Err(invalid!("%{id} is not a ray query")),
            },
            Val::Regs { r, ty } if matches!(self.m.types.get(ty)?, Type::RayQuery) => Ok(r),
            _ => Err(invalid!("%{id} is not a ray query")),
        }
    }
}

/// A getter's `Intersection` operand: the constant 0 (candidate) or 1 (committed).
fn intersection(l: &Lowerer<'_>, inst: &Instruction) -> Result<Intersection> {
    let id = inst.id(1)?;
    match l.m.const_u32(id) {
        Some(0) => Ok(Intersection::Candidate),
        Some(1) => Ok(Intersection::Committed),
        _ => Err(invalid!("{}: intersection operand %{id} is not the constant 0 or 1", inst.name())),
    }
}
