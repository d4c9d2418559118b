//! Ray queries (DESIGN §5).
//!
//! Every `RayQueryKHR` variable (and every element of an array of them) owns a query slot;
//! a pointer to a query is its slot number in a register, and loading a query yields the same
//! slot, so dynamic indexing and passing queries to functions (by pointer or as a bare value)
//! need nothing else. Per slot, private memory holds the action the shader chose since the
//! last proceed and the t of a generated intersection (8 bytes at `slot * 8`), so they survive
//! dynamic indexing too.
//!
//! - Initialize: `TRACE slot, ray` (traversal overlaps the shader's later work); action :=
//!   FRESH (no record handed to the shader yet).
//! - Confirm / Generate(t) / Terminate: action |= ACCEPT (and t := t) / TERMINATE. A
//!   Terminate before the first proceed also sets NO_COMMIT: the committed type then reads
//!   "none" (the shader never let traversal run, whatever TRACE already found).
//! - Proceed: `CONT slot, action, t`, except on the first proceed after Initialize: TRACE
//!   already ran the lane to its first record, which may be a candidate the shader has not
//!   seen, and continuing it would drop that candidate (DESIGN §5: the first proceed only
//!   waits). A Terminate before the first proceed still continues, with TERMINATE alone.
//!   Then action := IGNORE and `WAIT` until the lane's record is not PENDING (only pending
//!   lanes loop); the result is "the status yields a candidate", except after a Terminate:
//!   a terminated lane whose walk had not reached its first record yet (the CONT found
//!   nothing open) still yields later, so it is continued with TERMINATE until DONE, and
//!   proceed returns false. Lanes with no open candidate ignore a CONT's action (the RTU's
//!   rule), so proceeding after the end is safe.
//! - Getters: `GETW`/`GETWF` of the committed or candidate span, or of the ray echo.

use super::Lowerer;
use crate::shader::emit::I;
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::module::InstExt;
use crate::shader::types::{Id, Type};
use rspirv::dr::Instruction;
use spirv::Op;
use vortex_model::abi::bvh;
use vortex_model::abi::isa::{IntCond, MemSize, Op as Vx};
use vortex_model::abi::rtu::{self, span};

/// Private bytes of per-slot query state: action (u32) then generated t (f32).
pub(super) const STATE_BYTES: u32 = 8;
const ACTION: u32 = 0;
const GEN_T: u32 = 4;
/// Action-word flag: initialized, no proceed yet.
const FRESH: u32 = 0x8000_0000;
/// Action-word flag: terminated before the first proceed. Traversal had not started as far
/// as the shader can tell, so nothing is committed, whatever TRACE already found.
const NO_COMMIT: u32 = 0x4000_0000;

pub(super) fn handles(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        RayQueryInitializeKHR
            | RayQueryTerminateKHR
            | RayQueryGenerateIntersectionKHR
            | RayQueryConfirmIntersectionKHR
            | RayQueryProceedKHR
            | RayQueryGetIntersectionTypeKHR
            | RayQueryGetRayTMinKHR
            | RayQueryGetRayFlagsKHR
            | RayQueryGetIntersectionTKHR
            | RayQueryGetIntersectionInstanceCustomIndexKHR
            | RayQueryGetIntersectionInstanceIdKHR
            | RayQueryGetIntersectionInstanceShaderBindingTableRecordOffsetKHR
            | RayQueryGetIntersectionGeometryIndexKHR
            | RayQueryGetIntersectionPrimitiveIndexKHR
            | RayQueryGetIntersectionBarycentricsKHR
            | RayQueryGetIntersectionFrontFaceKHR
            | RayQueryGetIntersectionCandidateAABBOpaqueKHR
            | RayQueryGetIntersectionObjectRayDirectionKHR
            | RayQueryGetIntersectionObjectRayOriginKHR
            | RayQueryGetWorldRayDirectionKHR
            | RayQueryGetWorldRayOriginKHR
            | RayQueryGetIntersectionObjectToWorldKHR
            | RayQueryGetIntersectionWorldToObjectKHR
            | RayQueryGetIntersectionTriangleVertexPositionsKHR
            | ConvertUToAccelerationStructureKHR
    )
}

/// A window read: first slot, count, float?
struct Window {
    slot: u32,
    count: u8,
    float: bool,
}

impl<'m> Lowerer<'m> {
    pub(super) fn ray_query_inst(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        match inst.class.opcode {
            ConvertUToAccelerationStructureKHR => {
                // A u64 or uvec2 is already the (low, high) address pair.
                let src = inst.id(0)?;
                let (r, ty) = (self.regs(src)?, self.type_of(src)?);
                if self.m.types.regs(ty)? != 2 {
                    return Err(invalid!("{} from a {}", inst.name(), self.m.types.describe(ty)));
                }
                self.define(inst.rid()?, r, inst.rty()?);
                Ok(())
            }
            RayQueryInitializeKHR => self.initialize(inst),
            RayQueryProceedKHR => self.proceed(inst),
            RayQueryConfirmIntersectionKHR => self.or_action(inst, rtu::ACT_ACCEPT, None),
            RayQueryGenerateIntersectionKHR => {
                let t = self.regs(inst.id(1)?)?;
                self.or_action(inst, rtu::ACT_ACCEPT, Some(t))
            }
            RayQueryTerminateKHR => self.terminate(inst),
            RayQueryGetIntersectionTriangleVertexPositionsKHR => {
                // The window holds the triangle record's address; its three vertices (as
                // built) are read straight from the BLAS.
                let slot = self.query_slot(inst.id(0)?)?;
                let w = match self.m.const_u32(inst.id(1)?) {
                    Some(0) => rtu::CANDIDATE_TRI,
                    Some(1) => rtu::COMMITTED_TRI,
                    _ => return Err(invalid!("{}: intersection operand is not the constant 0 or 1", inst.name())),
                };
                let rty = inst.rty()?;
                if self.m.types.regs(rty)? != 9 {
                    return Err(invalid!("{}: the result is not three vec3", inst.name()));
                }
                let addr = self.e.alloc(2)?;
                self.e.emit(I::new(Vx::Getw).count(2).dst(addr).a(slot).imm(w));
                let d = self.e.alloc(9)?;
                for (k, v) in [bvh::tri::V0, bvh::tri::V1, bvh::tri::V2].into_iter().enumerate() {
                    for c in 0..3 {
                        let at = (v + 4 * c) as u32;
                        self.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(d + (3 * k + c) as u16).a(addr).imm(at));
                    }
                }
                self.define(inst.rid()?, d, rty);
                Ok(())
            }
            op => {
                let w = self.window(inst, op)?;
                let slot = self.query_slot(inst.id(0)?)?;
                let rty = inst.rty()?;
                let d = self.e.alloc(w.count as u32)?;
                let vx = if w.float { Vx::Getwf } else { Vx::Getw };
                self.e.emit(I::new(vx).count(w.count).dst(d).a(slot).imm(w.slot));
                if op == RayQueryGetIntersectionTypeKHR && w.slot == rtu::COMMITTED + span::KIND {
                    // Terminated before the first proceed: nothing is committed.
                    let st = self.state_offset(slot)?;
                    let act = self.e.alloc(1)?;
                    self.e.emit(I::new(Vx::Ldp).size(MemSize::B32).dst(act).a(st).imm(ACTION));
                    let (nc, zero) = (self.imm(NO_COMMIT)?, self.imm(0)?);
                    let c = self.e.op2(Vx::And, act, nc)?;
                    let none = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Ne), c, zero)?;
                    self.e.emit(I::new(Vx::Sel).dst(d).a(none).b(zero).c(d));
                }
                if matches!(op, RayQueryGetIntersectionObjectToWorldKHR | RayQueryGetIntersectionWorldToObjectKHR) {
                    // The window holds the 3x4 matrix row-major; a SPIR-V mat4x3 is 4 columns
                    // of 3: column c, row r = window[r * 4 + c].
                    let m = self.e.alloc(12)?;
                    for c in 0..4u16 {
                        for r in 0..3u16 {
                            self.e.mov(m + c * 3 + r, d + r * 4 + c);
                        }
                    }
                    self.define(inst.rid()?, m, rty);
                } else {
                    if self.m.types.regs(rty)? != w.count as u32 {
                        return Err(invalid!("{}: result type does not match the query value", inst.name()));
                    }
                    self.define(inst.rid()?, d, rty);
                }
                Ok(())
            }
        }
    }

    /// The slot register of a query operand: a pointer to a query or a loaded query value.
    fn query_slot(&mut self, id: Id) -> Result<u16> {
        match self.val(id)? {
            super::Val::Ptr(p) => match p.kind {
                super::mem::PtrKind::Query { slot, .. } if matches!(self.m.types.get(p.ty)?, Type::RayQuery) => {
                    Ok(slot)
                }
                _ => Err(invalid!("%{id} is not a ray query")),
            },
            super::Val::Regs { r, ty } if matches!(self.m.types.get(ty)?, Type::RayQuery) => Ok(r),
            _ => Err(invalid!("%{id} is not a ray query")),
        }
    }

    /// Byte offset of a slot's state in private memory.
    fn state_offset(&mut self, slot: u16) -> Result<u16> {
        self.scale(slot, STATE_BYTES)
    }

    fn initialize(&mut self, inst: &Instruction) -> Result<()> {
        let slot = self.query_slot(inst.id(0)?)?;
        let accel = self.regs(inst.id(1)?)?;
        let (flags, cull) = (self.regs(inst.id(2)?)?, self.regs(inst.id(3)?)?);
        let origin = self.regs(inst.id(4)?)?;
        let tmin = self.regs(inst.id(5)?)?;
        let dir = self.regs(inst.id(6)?)?;
        let tmax = self.regs(inst.id(7)?)?;
        let ray = self.e.alloc(rtu::ray::REGS)?;
        let at = |k: u32| ray + k as u16;
        for k in 0..3u32 {
            self.e.mov(at(rtu::ray::ORIGIN + k), origin + k as u16);
            self.e.mov(at(rtu::ray::DIR + k), dir + k as u16);
        }
        self.e.mov(at(rtu::ray::TMIN), tmin);
        self.e.mov(at(rtu::ray::TMAX), tmax);
        self.e.mov(at(rtu::ray::FLAGS), flags);
        self.e.mov(at(rtu::ray::CULL_MASK), cull);
        self.e.mov(at(rtu::ray::AS_LO), accel);
        self.e.mov(at(rtu::ray::AS_HI), accel + 1);
        self.e.emit(I::new(Vx::Trace).a(slot).b(ray));
        let st = self.state_offset(slot)?;
        let fresh = self.imm(FRESH)?;
        self.e.emit(I::new(Vx::Stp).size(MemSize::B32).a(st).b(fresh).imm(ACTION));
        Ok(())
    }

    fn or_action(&mut self, inst: &Instruction, bits: u32, t: Option<u16>) -> Result<()> {
        let slot = self.query_slot(inst.id(0)?)?;
        let st = self.state_offset(slot)?;
        let act = self.e.alloc(1)?;
        self.e.emit(I::new(Vx::Ldp).size(MemSize::B32).dst(act).a(st).imm(ACTION));
        let b = self.imm(bits)?;
        self.e.emit(I::new(Vx::Or).dst(act).a(act).b(b));
        self.e.emit(I::new(Vx::Stp).size(MemSize::B32).a(st).b(act).imm(ACTION));
        if let Some(t) = t {
            self.e.emit(I::new(Vx::Stp).size(MemSize::B32).a(st).b(t).imm(GEN_T));
        }
        Ok(())
    }

    /// Terminate: action |= TERMINATE, plus NO_COMMIT when no proceed has run yet.
    fn terminate(&mut self, inst: &Instruction) -> Result<()> {
        let slot = self.query_slot(inst.id(0)?)?;
        let st = self.state_offset(slot)?;
        let act = self.e.alloc(1)?;
        self.e.emit(I::new(Vx::Ldp).size(MemSize::B32).dst(act).a(st).imm(ACTION));
        let (fresh, term, zero) = (self.imm(FRESH)?, self.imm(rtu::ACT_TERMINATE)?, self.imm(0)?);
        let no_commit = self.imm(NO_COMMIT | rtu::ACT_TERMINATE)?;
        let f = self.e.op2(Vx::And, act, fresh)?;
        let is_fresh = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Ne), f, zero)?;
        let bits = self.e.op3(Vx::Sel, is_fresh, no_commit, term)?;
        self.e.emit(I::new(Vx::Or).dst(act).a(act).b(bits));
        self.e.emit(I::new(Vx::Stp).size(MemSize::B32).a(st).b(act).imm(ACTION));
        Ok(())
    }

    fn proceed(&mut self, inst: &Instruction) -> Result<()> {
        let slot = self.query_slot(inst.id(0)?)?;
        let st = self.state_offset(slot)?;
        let (act, t) = (self.e.alloc(1)?, self.e.alloc(1)?);
        self.e.emit(I::new(Vx::Ldp).size(MemSize::B32).dst(act).a(st).imm(ACTION));
        self.e.emit(I::new(Vx::Ldp).size(MemSize::B32).dst(t).a(st).imm(GEN_T));
        // The new action word: IGNORE, keeping NO_COMMIT.
        let keep = self.imm(NO_COMMIT)?;
        let kept = self.e.op2(Vx::And, act, keep)?;
        self.e.emit(I::new(Vx::Stp).size(MemSize::B32).a(st).b(kept).imm(ACTION));
        // Continue unless this is the first proceed (FRESH) without a Terminate; a fresh
        // lane continues with TERMINATE only. The RTU sees only the action bits.
        let (zero, fresh, term) = (self.imm(0)?, self.imm(FRESH)?, self.imm(rtu::ACT_TERMINATE)?);
        let act_bits = self.imm(rtu::ACT_ACCEPT | rtu::ACT_TERMINATE)?;
        let f = self.e.op2(Vx::And, act, fresh)?;
        let not_fresh = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), f, zero)?;
        let tm = self.e.op2(Vx::And, act, term)?;
        let go = self.e.op2(Vx::Or, not_fresh, tm)?;
        let bits = self.e.op2(Vx::And, act, act_bits)?;
        let action = self.e.op3(Vx::Sel, not_fresh, bits, tm)?;
        let cont = self.e.label(format!("%{} proceed.cont", self.block));
        let wait = self.e.label(format!("%{} proceed.wait", self.block));
        let done = self.e.label(format!("%{} proceed.done", self.block));
        self.e.bra(go, cont, wait, wait);
        self.e.place(cont)?;
        self.e.emit(I::new(Vx::Cont).a(slot).b(action).c(t));
        // WAIT until this lane's record is not PENDING; only pending lanes go around.
        let pending = self.imm(rtu::STS_PENDING)?;
        let status = self.e.alloc(1)?;
        self.e.place(wait)?;
        self.e.emit(I::new(Vx::Wait).dst(status).a(slot));
        let again = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), status, pending)?;
        self.e.bra(again, wait, done, done);
        self.e.place(done)?;
        let (anyhit, proc_) = (self.imm(rtu::STS_YIELD_ANYHIT)?, self.imm(rtu::STS_YIELD_PROC)?);
        let a = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), status, anyhit)?;
        let p = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), status, proc_)?;
        let yielded = self.e.op2(Vx::Or, a, p)?;
        // A terminated query never yields. A lane terminated before its first record landed
        // (the TRACE may still be walking) ignored the CONT; it yields something later, and
        // is continued with TERMINATE again until the walk is over.
        let terminated = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Ne), tm, zero)?;
        let drain = self.e.op2(Vx::And, yielded, terminated)?;
        let drain_blk = self.e.label(format!("%{} proceed.drain", self.block));
        let out = self.e.label(format!("%{} proceed.out", self.block));
        self.e.bra(drain, drain_blk, out, out);
        self.e.place(drain_blk)?;
        self.e.emit(I::new(Vx::Cont).a(slot).b(term).c(t));
        self.e.jmp(wait);
        self.e.place(out)?;
        let live = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), tm, zero)?;
        let r = self.e.op2(Vx::And, yielded, live)?;
        self.define(inst.rid()?, r, inst.rty()?);
        Ok(())
    }

    /// Which window slots a getter reads.
    fn window(&mut self, inst: &Instruction, op: Op) -> Result<Window> {
        use Op::*;
        // Committed (1) or candidate (0), for the intersection getters.
        let span_base = |l: &Self| -> Result<u32> {
            let id = inst.id(1)?;
            match l.m.const_u32(id) {
                Some(0) => Ok(rtu::CANDIDATE),
                Some(1) => Ok(rtu::COMMITTED),
                _ => Err(invalid!("{}: intersection operand %{id} is not the constant 0 or 1", inst.name())),
            }
        };
        let w = |slot: u32, count: u8, float: bool| Ok(Window { slot, count, float });
        match op {
            RayQueryGetRayTMinKHR => w(rtu::RAY_TMIN, 1, true),
            RayQueryGetRayFlagsKHR => w(rtu::RAY_FLAGS, 1, false),
            RayQueryGetWorldRayOriginKHR => w(rtu::RAY_ORIGIN, 3, true),
            RayQueryGetWorldRayDirectionKHR => w(rtu::RAY_DIR, 3, true),
            RayQueryGetIntersectionCandidateAABBOpaqueKHR => w(rtu::CAND_AABB_OPAQUE, 1, false),
            RayQueryGetIntersectionTypeKHR => w(span_base(self)? + span::KIND, 1, false),
            RayQueryGetIntersectionTKHR => w(span_base(self)? + span::T, 1, true),
            RayQueryGetIntersectionInstanceCustomIndexKHR => w(span_base(self)? + span::CUSTOM, 1, false),
            RayQueryGetIntersectionInstanceIdKHR => w(span_base(self)? + span::INST_ID, 1, false),
            RayQueryGetIntersectionInstanceShaderBindingTableRecordOffsetKHR => {
                w(span_base(self)? + span::SBT, 1, false)
            }
            RayQueryGetIntersectionGeometryIndexKHR => w(span_base(self)? + span::GEOM, 1, false),
            RayQueryGetIntersectionPrimitiveIndexKHR => w(span_base(self)? + span::PRIM, 1, false),
            RayQueryGetIntersectionBarycentricsKHR => w(span_base(self)? + span::U, 2, true),
            RayQueryGetIntersectionFrontFaceKHR => w(span_base(self)? + span::FRONT, 1, false),
            RayQueryGetIntersectionObjectRayDirectionKHR => w(span_base(self)? + span::OBJ_DIR, 3, true),
            RayQueryGetIntersectionObjectRayOriginKHR => w(span_base(self)? + span::OBJ_ORIGIN, 3, true),
            RayQueryGetIntersectionObjectToWorldKHR => w(span_base(self)? + span::O2W, 12, true),
            RayQueryGetIntersectionWorldToObjectKHR => w(span_base(self)? + span::W2O, 12, true),
            _ => Err(unsupported!("SPIR-V instruction Op{}", inst.class.opname)),
        }
    }
}
