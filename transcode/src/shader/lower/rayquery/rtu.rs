//! Ray queries on the RT unit (DESIGN §5): the RTU walks the BVH, the shader steps it.
//!
//! A query slot is an RTU query slot. Per slot, private memory holds the action the shader
//! chose since the last proceed and the t of a generated intersection (8 bytes at
//! `slot * 8`), so they survive dynamic indexing too.
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

use super::{HitMatrix, HitValue, Intersection, Ray, RayQueryOps, RayValue};
use crate::shader::emit::{Label, I};
use crate::shader::error::Result;
use crate::shader::lower::Lowerer;
use vortex_model::abi::bvh;
use vortex_model::abi::isa::{IntCond, MemSize, Op as Vx};
use vortex_model::abi::rtu::{self, span, MAX_QUERIES};

/// Private bytes of per-slot query state: action (u32) then generated t (f32).
const STATE_BYTES: u32 = 8;
const ACTION: u32 = 0;
const GEN_T: u32 = 4;
/// Action-word flag: initialized, no proceed yet.
const FRESH: u32 = 0x8000_0000;
/// Action-word flag: terminated before the first proceed. Traversal had not started as far
/// as the shader can tell, so nothing is committed, whatever TRACE already found.
const NO_COMMIT: u32 = 0x4000_0000;

pub(super) struct Rtu;

impl RayQueryOps for Rtu {
    fn state_bytes(&self) -> u32 {
        STATE_BYTES
    }

    fn max_queries(&self) -> u32 {
        MAX_QUERIES
    }

    /// Every query slot is an RTU slot.
    fn rtu_slots(&self, queries: u32) -> u32 {
        queries
    }

    fn initialize(&self, l: &mut Lowerer<'_>, q: u16, ray: &Ray) -> Result<()> {
        let r = l.e.alloc(rtu::ray::REGS)?;
        let at = |k: u32| r + k as u16;
        for k in 0..3u32 {
            l.e.mov(at(rtu::ray::ORIGIN + k), ray.origin + k as u16);
            l.e.mov(at(rtu::ray::DIR + k), ray.dir + k as u16);
        }
        l.e.mov(at(rtu::ray::TMIN), ray.tmin);
        l.e.mov(at(rtu::ray::TMAX), ray.tmax);
        l.e.mov(at(rtu::ray::FLAGS), ray.flags);
        l.e.mov(at(rtu::ray::CULL_MASK), ray.cull_mask);
        l.e.mov(at(rtu::ray::AS_LO), ray.accel);
        l.e.mov(at(rtu::ray::AS_HI), ray.accel + 1);
        // A confirm-all query lets a functional RTU accept its candidates itself.
        let hints = if ray.confirm_all { rtu::TRACE_CONFIRM_ALL } else { 0 };
        l.e.emit(I::new(Vx::Trace).a(q).b(r).imm(hints));
        let st = state(l, q)?;
        let fresh = l.imm(FRESH)?;
        l.e.emit(I::new(Vx::Stp).size(MemSize::B32).a(st).b(fresh).imm(ACTION));
        Ok(())
    }

    fn proceed(&self, l: &mut Lowerer<'_>, q: u16) -> Result<u16> {
        let st = state(l, q)?;
        let (act, t) = (l.e.alloc(1)?, l.e.alloc(1)?);
        l.e.emit(I::new(Vx::Ldp).size(MemSize::B32).dst(act).a(st).imm(ACTION));
        l.e.emit(I::new(Vx::Ldp).size(MemSize::B32).dst(t).a(st).imm(GEN_T));
        // The new action word: IGNORE, keeping NO_COMMIT.
        let keep = l.imm(NO_COMMIT)?;
        let kept = l.e.op2(Vx::And, act, keep)?;
        l.e.emit(I::new(Vx::Stp).size(MemSize::B32).a(st).b(kept).imm(ACTION));
        // Continue unless this is the first proceed (FRESH) without a Terminate; a fresh
        // lane continues with TERMINATE only. The RTU sees only the action bits.
        let (zero, fresh, term) = (l.imm(0)?, l.imm(FRESH)?, l.imm(rtu::ACT_TERMINATE)?);
        let act_bits = l.imm(rtu::ACT_ACCEPT | rtu::ACT_TERMINATE)?;
        let f = l.e.op2(Vx::And, act, fresh)?;
        let not_fresh = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), f, zero)?;
        let tm = l.e.op2(Vx::And, act, term)?;
        let go = l.e.op2(Vx::Or, not_fresh, tm)?;
        let bits = l.e.op2(Vx::And, act, act_bits)?;
        let action = l.e.op3(Vx::Sel, not_fresh, bits, tm)?;
        let cont = block(l, "cont");
        let wait = block(l, "wait");
        let done = block(l, "done");
        l.e.bra(go, cont, wait, wait);
        l.e.place(cont)?;
        l.e.emit(I::new(Vx::Cont).a(q).b(action).c(t));
        let status = wait_loop(l, q, wait, done)?;
        finish_proceed(l, q, status, tm, t, wait)
    }

    fn confirm(&self, l: &mut Lowerer<'_>, q: u16) -> Result<()> {
        or_action(l, q, rtu::ACT_ACCEPT, None)
    }

    fn generate(&self, l: &mut Lowerer<'_>, q: u16, t: u16) -> Result<()> {
        or_action(l, q, rtu::ACT_ACCEPT, Some(t))
    }

    /// action |= TERMINATE, plus NO_COMMIT when no proceed has run yet.
    fn terminate(&self, l: &mut Lowerer<'_>, q: u16) -> Result<()> {
        let st = state(l, q)?;
        let act = l.e.alloc(1)?;
        l.e.emit(I::new(Vx::Ldp).size(MemSize::B32).dst(act).a(st).imm(ACTION));
        let (fresh, term, zero) = (l.imm(FRESH)?, l.imm(rtu::ACT_TERMINATE)?, l.imm(0)?);
        let no_commit = l.imm(NO_COMMIT | rtu::ACT_TERMINATE)?;
        let f = l.e.op2(Vx::And, act, fresh)?;
        let is_fresh = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Ne), f, zero)?;
        let bits = l.e.op3(Vx::Sel, is_fresh, no_commit, term)?;
        l.e.emit(I::new(Vx::Or).dst(act).a(act).b(bits));
        l.e.emit(I::new(Vx::Stp).size(MemSize::B32).a(st).b(act).imm(ACTION));
        Ok(())
    }

    /// The ray echo of the window.
    fn ray_value(&self, l: &mut Lowerer<'_>, q: u16, v: RayValue) -> Result<u16> {
        match v {
            RayValue::TMin => window(l, q, rtu::RAY_TMIN, 1, true),
            RayValue::Flags => window(l, q, rtu::RAY_FLAGS, 1, false),
            RayValue::WorldOrigin => window(l, q, rtu::RAY_ORIGIN, 3, true),
            RayValue::WorldDirection => window(l, q, rtu::RAY_DIR, 3, true),
        }
    }

    fn hit_value(&self, l: &mut Lowerer<'_>, q: u16, which: Intersection, v: HitValue) -> Result<u16> {
        let base = span_base(which);
        let (slot, count, float) = match v {
            HitValue::Type => (span::KIND, 1, false),
            HitValue::T => (span::T, 1, true),
            HitValue::InstanceCustomIndex => (span::CUSTOM, 1, false),
            HitValue::InstanceId => (span::INST_ID, 1, false),
            HitValue::SbtOffset => (span::SBT, 1, false),
            HitValue::GeometryIndex => (span::GEOM, 1, false),
            HitValue::PrimitiveIndex => (span::PRIM, 1, false),
            HitValue::Barycentrics => (span::U, 2, true),
            HitValue::FrontFace => (span::FRONT, 1, false),
            HitValue::ObjectRayOrigin => (span::OBJ_ORIGIN, 3, true),
            HitValue::ObjectRayDirection => (span::OBJ_DIR, 3, true),
        };
        let d = window(l, q, base + slot, count, float)?;
        if v == HitValue::Type && which == Intersection::Committed {
            // Terminated before the first proceed: nothing is committed.
            let st = state(l, q)?;
            let act = l.e.alloc(1)?;
            l.e.emit(I::new(Vx::Ldp).size(MemSize::B32).dst(act).a(st).imm(ACTION));
            let (nc, zero) = (l.imm(NO_COMMIT)?, l.imm(0)?);
            let c = l.e.op2(Vx::And, act, nc)?;
            let none = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Ne), c, zero)?;
            l.e.emit(I::new(Vx::Sel).dst(d).a(none).b(zero).c(d));
        }
        Ok(d)
    }

    fn candidate_aabb_opaque(&self, l: &mut Lowerer<'_>, q: u16) -> Result<u16> {
        window(l, q, rtu::CAND_AABB_OPAQUE, 1, false)
    }

    /// The window holds the 3x4 matrix row-major; a SPIR-V mat4x3 is 4 columns of 3:
    /// column c, row r = window[r * 4 + c].
    fn hit_matrix(&self, l: &mut Lowerer<'_>, q: u16, which: Intersection, m: HitMatrix) -> Result<u16> {
        let slot = match m {
            HitMatrix::ObjectToWorld => span::O2W,
            HitMatrix::WorldToObject => span::W2O,
        };
        let d = window(l, q, span_base(which) + slot, 12, true)?;
        let out = l.e.alloc(12)?;
        for c in 0..4u16 {
            for r in 0..3u16 {
                l.e.mov(out + c * 3 + r, d + r * 4 + c);
            }
        }
        Ok(out)
    }

    /// The window holds the triangle record's address; its three vertices (as built) are
    /// read straight from the BLAS leaf.
    fn triangle_vertices(&self, l: &mut Lowerer<'_>, q: u16, which: Intersection) -> Result<u16> {
        let w = match which {
            Intersection::Candidate => rtu::CANDIDATE_TRI,
            Intersection::Committed => rtu::COMMITTED_TRI,
        };
        let addr = l.e.alloc(2)?;
        l.e.emit(I::new(Vx::Getw).count(2).dst(addr).a(q).imm(w));
        let d = l.e.alloc(9)?;
        for (k, v) in [bvh::tri::V0, bvh::tri::V1, bvh::tri::V2].into_iter().enumerate() {
            for c in 0..3 {
                let at = (v + 4 * c) as u32;
                l.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(d + (3 * k + c) as u16).a(addr).imm(at));
            }
        }
        Ok(d)
    }
}

/// First window slot of the candidate or committed span.
fn span_base(which: Intersection) -> u32 {
    match which {
        Intersection::Candidate => rtu::CANDIDATE,
        Intersection::Committed => rtu::COMMITTED,
    }
}

/// `count` window slots from `slot` into fresh registers (`GETWF` for floats).
fn window(l: &mut Lowerer<'_>, q: u16, slot: u32, count: u8, float: bool) -> Result<u16> {
    let d = l.e.alloc(count as u32)?;
    let op = if float { Vx::Getwf } else { Vx::Getw };
    l.e.emit(I::new(op).count(count).dst(d).a(q).imm(slot));
    Ok(d)
}

/// Byte offset of a slot's state in private memory.
fn state(l: &mut Lowerer<'_>, q: u16) -> Result<u16> {
    l.scale(q, STATE_BYTES)
}

/// A block of the proceed sequence, named after the SPIR-V block it lowers.
fn block(l: &mut Lowerer<'_>, part: &str) -> Label {
    let name = format!("%{} proceed.{part}", l.block);
    l.e.label(name)
}

fn or_action(l: &mut Lowerer<'_>, q: u16, bits: u32, t: Option<u16>) -> Result<()> {
    let st = state(l, q)?;
    let act = l.e.alloc(1)?;
    l.e.emit(I::new(Vx::Ldp).size(MemSize::B32).dst(act).a(st).imm(ACTION));
    let b = l.imm(bits)?;
    l.e.emit(I::new(Vx::Or).dst(act).a(act).b(b));
    l.e.emit(I::new(Vx::Stp).size(MemSize::B32).a(st).b(act).imm(ACTION));
    if let Some(t) = t {
        l.e.emit(I::new(Vx::Stp).size(MemSize::B32).a(st).b(t).imm(GEN_T));
    }
    Ok(())
}

/// Places `wait`: `WAIT` until this lane's record is not PENDING (only pending lanes go
/// around), then `done`. Returns the status register.
fn wait_loop(l: &mut Lowerer<'_>, q: u16, wait: Label, done: Label) -> Result<u16> {
    let pending = l.imm(rtu::STS_PENDING)?;
    let status = l.e.alloc(1)?;
    l.e.place(wait)?;
    l.e.emit(I::new(Vx::Wait).dst(status).a(q));
    let again = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), status, pending)?;
    l.e.bra(again, wait, done, done);
    l.e.place(done)?;
    Ok(status)
}

/// After the wait: whether a candidate awaits the shader. A terminated query never yields;
/// a lane terminated before its first record landed (the TRACE may still be walking)
/// ignored the CONT, yields something later, and is continued with TERMINATE again (back to
/// `wait`) until the walk is over.
fn finish_proceed(l: &mut Lowerer<'_>, q: u16, status: u16, tm: u16, t: u16, wait: Label) -> Result<u16> {
    let (anyhit, proc_) = (l.imm(rtu::STS_YIELD_ANYHIT)?, l.imm(rtu::STS_YIELD_PROC)?);
    let a = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), status, anyhit)?;
    let p = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), status, proc_)?;
    let yielded = l.e.op2(Vx::Or, a, p)?;
    let zero = l.imm(0)?;
    let terminated = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Ne), tm, zero)?;
    let drain = l.e.op2(Vx::And, yielded, terminated)?;
    let drain_blk = block(l, "drain");
    let out = block(l, "out");
    l.e.bra(drain, drain_blk, out, out);
    l.e.place(drain_blk)?;
    let term = l.imm(rtu::ACT_TERMINATE)?;
    l.e.emit(I::new(Vx::Cont).a(q).b(term).c(t));
    l.e.jmp(wait);
    l.e.place(out)?;
    let live = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), tm, zero)?;
    l.e.op2(Vx::And, yielded, live)
}
