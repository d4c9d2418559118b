//! The trace's two phases and the calls of the shaders they dispatch to: the candidate loop
//! (any-hit on non-opaque triangles, intersection on AABBs, `reportIntersectionEXT` with
//! its any-hit), then closest-hit or miss; and the nested lowering of one shader in place.

use super::{Call, Link, Record, Sbt, ACCEPT, ATTR_REGS, TERMINATE};
use crate::shader::emit::{Emitter, I};
use crate::shader::error::{invalid, Result};
use crate::shader::lower::rayquery::{HitValue, Intersection, RayValue};
use crate::shader::lower::{stage, Lowerer, Lowering};
use crate::shader::module::InstExt;
use crate::shader::Stage;
use rspirv::dr::Instruction;
use vortex_model::abi::isa::{FloatCond, IntCond, Op as Vx};
use vortex_model::abi::kernel::kargs;
use vortex_model::abi::rtu;

/// `HitKindKHR` of a front- and a back-facing triangle.
const HIT_KIND_FRONT: u32 = 0xFE;
const HIT_KIND_BACK: u32 = 0xFF;

impl<'m> Lowerer<'m> {
    /// Lowers shader `s` of the pipeline here, handing it `call`; code after this point runs
    /// when it returns.
    pub(super) fn lower_callee(&mut self, s: usize, call: Call) -> Result<()> {
        let rt = self.link("a shader call")?;
        let sh = rt.shaders.get(s).ok_or_else(|| invalid!("internal: shader {s} of the pipeline"))?;
        let lowering = Lowering { stage: stage::callee(sh.stage)?, ray_query: self.ray_query };
        let back = self.e.label(format!("{} return", sh.stage));
        let region = self.e.open_region(region_kind(sh.stage));
        let e = std::mem::replace(&mut self.e, Emitter::new());
        let mut inner = Lowerer::new(&sh.m, &sh.opts, e, lowering, self.local_size, self.rt);
        let entry = inner.prologue;
        inner.e.jmp(entry);
        inner.num_queries = self.num_queries;
        inner.private_bytes = self.private_bytes;
        inner.lmem_bytes = self.lmem_bytes;
        inner.exit_to = Some(back);
        inner.call = Some(call);
        let r = inner.analyze(&sh.flat).and_then(|()| inner.run(&sh.flat, &sh.cfg));
        self.num_queries = inner.num_queries;
        self.private_bytes = self.private_bytes.max(inner.private_bytes);
        self.lmem_bytes = self.lmem_bytes.max(inner.lmem_bytes);
        self.e = inner.e;
        r?;
        self.e.close_region(region);
        self.e.place(back)
    }

    /// The walk: each candidate handed to the shader runs its group's any-hit (triangles;
    /// accepted without one) or intersection shader (AABBs; ignored without one).
    pub(super) fn candidate_loop(&mut self, rt: &'m Link, q: u16, sbt: Sbt, call: &Call) -> Result<()> {
        let ops = self.ray_query;
        let (head, body, after) =
            (self.e.label("trace.head"), self.e.label("trace.candidate"), self.e.label("trace.done"));
        self.e.jmp(head);
        self.e.place(head)?;
        let c = ops.proceed(self, q)?;
        self.e.bra(c, body, after, after);
        self.e.place(body)?;
        let ty = ops.hit_value(self, q, Intersection::Candidate, HitValue::Type)?;
        let tri = self.is_const(ty, rtu::CANDIDATE_TRIANGLE)?;
        let aabb = self.is_const(ty, rtu::CANDIDATE_AABB)?;
        let record = self.hit_record(q, Intersection::Candidate, sbt)?;
        let handle = record.handle;
        let (accept, zero) = (self.imm(ACCEPT)?, self.imm(0)?);
        let decision = self.e.op3(Vx::Sel, tri, accept, zero)?;
        self.triangle_attrs(q, Intersection::Candidate, call, Some(tri))?;
        for (s, groups) in rt.any_hits(call.payload_regs) {
            let mut c = call.clone();
            c.decision = Some(decision);
            c.record = Some(record.address);
            self.dispatch_to(handle, &groups, Some(tri), |l| l.lower_callee(s, c))?;
        }
        // Per group: a report runs the group's own any-hit.
        for (g, s) in rt.members(Stage::Intersection, |g| g.intersection) {
            let mut c = call.clone();
            c.best_t = Some(self.closest_t(q, call)?);
            c.group = Some(g);
            c.record = Some(record.address);
            self.dispatch_to(handle, &[g], Some(aabb), |l| l.lower_callee(s, c))?;
        }
        self.apply_decision(q, decision)?;
        self.e.jmp(head);
        self.e.place(after)
    }

    /// After the walk: the closest-hit shader of the committed hit's record (unless the ray
    /// skips it), or the miss shader of the miss region's record `miss_index`.
    pub(super) fn closest_hit_or_miss(
        &mut self,
        rt: &'m Link,
        q: u16,
        sbt: Sbt,
        flags: u16,
        miss_index: u16,
        call: Call,
    ) -> Result<()> {
        let ops = self.ray_query;
        let mut call = call;
        call.which = Intersection::Committed;
        let ty = ops.hit_value(self, q, Intersection::Committed, HitValue::Type)?;
        let none = self.is_const(ty, 0)?;
        let (miss, hit, join) = (self.e.label("trace.miss"), self.e.label("trace.hit"), self.e.label("trace.end"));
        self.e.bra(none, miss, hit, join);
        self.e.place(miss)?;
        let record = self.sbt_record(kargs::sbt::MISS, miss_index)?;
        let mut miss_call = call.clone();
        miss_call.record = Some(record.address);
        for (s, groups) in rt.targets(Stage::Miss, |g| g.general, call.payload_regs) {
            self.dispatch_to(record.handle, &groups, None, |l| l.lower_callee(s, miss_call.clone()))?;
        }
        self.e.jmp(join);
        self.e.place(hit)?;
        let record = self.hit_record(q, Intersection::Committed, sbt)?;
        call.record = Some(record.address);
        let handle = record.handle;
        let skip_bit = self.imm(rtu::ray_flags::SKIP_CLOSEST_HIT)?;
        let skip = self.e.op2(Vx::And, flags, skip_bit)?;
        let zero = self.imm(0)?;
        let handle = self.e.op3(Vx::Sel, skip, zero, handle)?;
        let tri = self.is_const(ty, 1)?;
        self.triangle_attrs(q, Intersection::Committed, &call, Some(tri))?;
        for (s, groups) in rt.targets(Stage::ClosestHit, |g| g.closest_hit, call.payload_regs) {
            self.dispatch_to(handle, &groups, None, |l| l.lower_callee(s, call.clone()))?;
        }
        self.e.jmp(join);
        self.e.place(join)
    }

    /// The hit record of intersection `which`: `sbtRecordOffset + sbtRecordStride *
    /// geometry index + the instance's SBT offset`.
    fn hit_record(&mut self, q: u16, which: Intersection, sbt: Sbt) -> Result<Record> {
        let ops = self.ray_query;
        let geom = ops.hit_value(self, q, which, HitValue::GeometryIndex)?;
        let inst = ops.hit_value(self, q, which, HitValue::SbtOffset)?;
        let scaled = self.e.op2(Vx::Imul, sbt.stride, geom)?;
        let idx = self.e.op2(Vx::Iadd, scaled, inst)?;
        let idx = self.e.op2(Vx::Iadd, idx, sbt.offset)?;
        self.sbt_record(kargs::sbt::HIT, idx)
    }

    /// A triangle's hit attributes (its barycentrics) and hit kind, into the call's
    /// registers for intersection `which`, on the lanes where `tri` holds.
    fn triangle_attrs(&mut self, q: u16, which: Intersection, call: &Call, tri: Option<u16>) -> Result<()> {
        let (Some((cand, comm)), Some((cand_kind, comm_kind))) = (call.attrs, call.kinds) else {
            return Ok(());
        };
        let (attrs, kind) = match which {
            Intersection::Candidate => (cand, cand_kind),
            Intersection::Committed => (comm, comm_kind),
        };
        let ops = self.ray_query;
        let write = |l: &mut Self| -> Result<()> {
            let bary = ops.hit_value(l, q, which, HitValue::Barycentrics)?;
            l.e.mov(attrs, bary);
            l.e.mov(attrs + 1, bary + 1);
            let front = ops.hit_value(l, q, which, HitValue::FrontFace)?;
            let (f, b) = (l.imm(HIT_KIND_FRONT)?, l.imm(HIT_KIND_BACK)?);
            l.e.emit(I::new(Vx::Sel).dst(kind).a(front).b(f).c(b));
            Ok(())
        };
        match tri {
            Some(t) => self.when(t, write),
            None => write(self),
        }
    }

    /// The t a new intersection must not exceed: the committed hit's, or the ray's tmax.
    pub(in crate::shader::lower) fn closest_t(&mut self, q: u16, call: &Call) -> Result<u16> {
        let ops = self.ray_query;
        let tmax = call.tmax.ok_or_else(|| invalid!("internal: a hit call without the ray's tmax"))?;
        let ty = ops.hit_value(self, q, Intersection::Committed, HitValue::Type)?;
        let t = ops.hit_value(self, q, Intersection::Committed, HitValue::T)?;
        let zero = self.imm(0)?;
        let some = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Ne), ty, zero)?;
        self.e.op3(Vx::Sel, some, t, tmax)
    }

    /// A triangle candidate's decision: accept (confirm), and terminate.
    fn apply_decision(&mut self, q: u16, decision: u16) -> Result<()> {
        let ops = self.ray_query;
        let (a, t) = (self.imm(ACCEPT)?, self.imm(TERMINATE)?);
        let accept = self.e.op2(Vx::And, decision, a)?;
        self.when(accept, |l| ops.confirm(l, q))?;
        let term = self.e.op2(Vx::And, decision, t)?;
        self.when(term, |l| ops.terminate(l, q))
    }

    /// `OpReportIntersectionKHR` in an intersection shader: a hit at `t` in [tmin, the
    /// closest so far] runs the group's any-hit (if any); accepted, it becomes the
    /// candidate's generated hit with the shader's attributes and kind.
    pub(super) fn report_intersection(&mut self, inst: &Instruction) -> Result<()> {
        let call = self.call.clone().filter(|c| c.best_t.is_some() && c.decision.is_none());
        let call = call.ok_or_else(|| invalid!("reportIntersectionEXT outside an intersection shader"))?;
        let rt = self.link("OpReportIntersectionKHR")?;
        let (t, kind) = (self.regs(inst.id(0)?)?, self.regs(inst.id(1)?)?);
        let (Some(q), Some(best), Some((cand, comm)), Some((cand_kind, comm_kind))) =
            (call.slot, call.best_t, call.attrs, call.kinds)
        else {
            return Err(invalid!("internal: an intersection call without its trace"));
        };
        let any_hit = rt.report_any_hit(call.group, call.payload_regs);
        let ops = self.ray_query;
        let tmin = ops.ray_value(self, q, RayValue::TMin)?;
        let above = self.e.op2(I::new(Vx::Fcmp).cond(FloatCond::Oge), t, tmin)?;
        let below = self.e.op2(I::new(Vx::Fcmp).cond(FloatCond::Ole), t, best)?;
        let ok = self.e.op2(Vx::And, above, below)?;
        let result = self.e.alloc(1)?;
        self.e.movi(result, 0);
        self.when(ok, |l| {
            l.e.mov(cand_kind, kind);
            let decision = l.e.alloc(1)?;
            l.e.movi(decision, ACCEPT);
            if let Some(s) = any_hit {
                let mut c = call.clone();
                c.which = Intersection::Candidate;
                c.report_t = Some(t);
                c.decision = Some(decision);
                l.lower_callee(s, c)?;
            }
            let a = l.imm(ACCEPT)?;
            let accepted = l.e.op2(Vx::And, decision, a)?;
            l.when(accepted, |l| {
                ops.generate(l, q, t)?;
                l.e.mov(best, t);
                l.e.movi(result, 1);
                for k in 0..ATTR_REGS as u16 {
                    l.e.mov(comm + k, cand + k);
                }
                l.e.mov(comm_kind, cand_kind);
                let tb = l.imm(TERMINATE)?;
                let term = l.e.op2(Vx::And, decision, tb)?;
                l.when(term, |l| ops.terminate(l, q))
            })
        })?;
        self.define(inst.rid()?, result, inst.rty()?);
        Ok(())
    }
}

/// The code region a called shader's blocks form (`abi::kernel::region`): the candidate
/// callbacks a record batch feeds, or the shaders run once a trace is over.
fn region_kind(stage: Stage) -> u32 {
    use vortex_model::abi::kernel::region;
    match stage {
        Stage::AnyHit | Stage::Intersection => region::CANDIDATE_CALLBACK,
        _ => region::HIT_SHADER,
    }
}
