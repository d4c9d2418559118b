//! Ray-tracing pipelines as one kernel (`docs/RTPIPELINE.md`): `traceRayEXT` is the RT
//! unit's candidate loop of the ray-query lowering, and the pipeline's other shaders are
//! lowered in place, into the same kernel, at each site that may run them.
//!
//! A *call* of a shader lowers its module with a nested [`Lowerer`] that shares the kernel's
//! emitter (so its registers, query slots and private memory are the kernel's), starts with
//! its own prologue block (its built-ins are read at each entry: a closest-hit's `HitTKHR`
//! is the committed hit of the trace that called it) and returns to a label of the caller
//! instead of `EXIT`. Which shader runs is runtime data: the 32-byte handle in the shader
//! binding table record the trace selects holds `group index + 1`
//! (`runtime::pipeline::raytracing`), and the dispatcher is a chain over the pipeline's
//! groups, each a branch that narrows the warp to the lanes whose record names that group.

mod call;
mod expand;

pub(crate) use expand::{expand, Depth, MAX_CALLABLE_DEPTH, MAX_EXPANDED_INSTRUCTIONS, MIN_CALLABLE_DEPTH};

use super::mem::{Lay, Origin, Ptr, PtrKind};
use super::rayquery::{HitValue, Intersection, Ray};

use super::Lowerer;
use crate::shader::cfg::Cfg;
use crate::shader::emit::I;
use crate::shader::error::{invalid, limit, unsupported, Result};
use crate::shader::inline::Flat;
use crate::shader::module::{InstExt, Module};
use crate::shader::types::Id;
use crate::shader::{CompileOptions, Stage};
use rspirv::dr::Instruction;
use spirv::{Op, StorageClass};
use vortex_model::abi::isa::{IntCond, MemSize, Op as Vx};
use vortex_model::abi::kernel::kargs;
use vortex_model::abi::rtu;

/// Registers of a hit's attributes (`maxRayHitAttributeSize`, 32 bytes).
pub(crate) const ATTR_REGS: u32 = 8;

/// One shader of the pipeline, parsed and flattened.
pub(crate) struct Shader {
    pub m: Module,
    pub flat: Flat,
    pub cfg: Cfg,
    pub stage: Stage,
    pub opts: CompileOptions,
    /// Registers of its incoming payload or callable data, if it declares one: a site whose
    /// payload is smaller cannot run it (the types must match), so it is not lowered there.
    pub incoming: Option<u32>,
}

impl Shader {
    pub fn new(m: Module, flat: Flat, cfg: Cfg, stage: Stage, opts: CompileOptions) -> Result<Shader> {
        let mut incoming = None;
        for g in m.globals.values() {
            if matches!(g.sc, StorageClass::IncomingRayPayloadKHR | StorageClass::IncomingCallableDataKHR) {
                incoming = Some(incoming.unwrap_or(0).max(m.types.regs(g.ty)?));
            }
        }
        Ok(Shader { m, flat, cfg, stage, opts, incoming })
    }
}

/// A shader group: indices into [`Link::shaders`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Group {
    pub general: Option<usize>,
    pub closest_hit: Option<usize>,
    pub any_hit: Option<usize>,
    pub intersection: Option<usize>,
}

/// A pipeline's shaders and groups, for the ray generation shader's lowering.
pub(crate) struct Link {
    pub shaders: Vec<Shader>,
    pub groups: Vec<Group>,
    /// Query slots the whole kernel may use (their state region is reserved up front).
    pub slots: u32,
    /// How deep calls are expanded ([`expand`]): traces (`maxPipelineRayRecursionDepth`,
    /// at least 1) and callable calls; a call one level deeper is a no-op.
    pub max: Depth,
}

impl Link {
    fn stage_of(&self, s: Option<usize>) -> Option<Stage> {
        s.and_then(|s| self.shaders.get(s)).map(|s| s.stage)
    }

    /// Groups whose `pick` member is a shader of `stage`, with that shader.
    fn members(&self, stage: Stage, pick: impl Fn(&Group) -> Option<usize>) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (g, group) in self.groups.iter().enumerate() {
            if let Some(s) = pick(group).filter(|&s| self.stage_of(Some(s)) == Some(stage)) {
                out.push((g, s));
            }
        }
        out
    }

    /// Whether shader `s` can take a payload of `regs` registers.
    fn takes(&self, s: usize, regs: u32) -> bool {
        self.shaders.get(s).is_some_and(|sh| sh.incoming.is_none_or(|n| n <= regs))
    }

    /// [`Link::members`] by shader, for a site with a payload of `regs` registers: each
    /// shader that can take it once (lowered once per site, whichever of its groups the
    /// record names), with the groups that name it.
    fn targets(&self, stage: Stage, pick: impl Fn(&Group) -> Option<usize>, regs: u32) -> Vec<(usize, Vec<usize>)> {
        let mut out: Vec<(usize, Vec<usize>)> = Vec::new();
        for (g, s) in self.members(stage, pick).into_iter().filter(|&(_, s)| self.takes(s, regs)) {
            match out.iter_mut().find(|(t, _)| *t == s) {
                Some((_, groups)) => groups.push(g),
                None => out.push((s, vec![g])),
            }
        }
        out
    }

    /// The any-hit shaders of triangle groups (an intersection group's any-hit runs from its
    /// reports instead).
    fn any_hits(&self, regs: u32) -> Vec<(usize, Vec<usize>)> {
        self.targets(Stage::AnyHit, |g| g.any_hit.filter(|_| g.intersection.is_none()), regs)
    }

    /// The any-hit shader a report of intersection group `g` runs (if it can take `regs`).
    fn report_any_hit(&self, g: Option<usize>, regs: u32) -> Option<usize> {
        g.and_then(|g| self.groups.get(g)).and_then(|g| g.any_hit).filter(|&a| self.takes(a, regs))
    }

    /// Whether traces walk candidate by candidate (some group has an any-hit or intersection
    /// shader).
    fn walks_candidates(&self) -> bool {
        self.groups.iter().any(|g| g.any_hit.is_some() || g.intersection.is_some())
    }
}

/// What a call hands the shader it runs.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    /// The trace's query slot register (hit and miss shaders), whose window the built-ins
    /// read; `which` says whether the candidate (any-hit, intersection) or the committed hit.
    pub slot: Option<u16>,
    pub which: Intersection,
    /// The caller's payload or callable data, and its registers.
    pub payload: Option<Ptr>,
    pub payload_regs: u32,
    /// The ray's tmax register.
    pub tmax: Option<u16>,
    /// The trace's hit attribute registers: candidate (`ATTR_REGS`) and committed.
    pub attrs: Option<(u16, u16)>,
    /// The hit kind registers (`HitKindKHR`): candidate and committed.
    pub kinds: Option<(u16, u16)>,
    /// An any-hit run by `reportIntersectionEXT`: the reported t.
    pub report_t: Option<u16>,
    /// An any-hit's decision register: bit 0 accept, bit 1 terminate.
    pub decision: Option<u16>,
    /// An intersection shader: the closest t accepted so far, and its group (whose any-hit
    /// a report runs).
    pub best_t: Option<u16>,
    pub group: Option<usize>,
    /// The traces and callable calls this shader runs inside.
    pub depth: Depth,
    /// The address of the SBT record that selected the shader (`ShaderRecordBufferKHR`).
    pub record: Option<u16>,
}

impl Call {
    fn new(slot: Option<u16>, which: Intersection, depth: Depth) -> Call {
        Call {
            depth,
            slot,
            which,
            payload: None,
            payload_regs: 0,
            tmax: None,
            attrs: None,
            kinds: None,
            report_t: None,
            decision: None,
            best_t: None,
            group: None,
            record: None,
        }
    }

    /// An any-hit or intersection shader: it may neither trace nor call.
    fn in_walk(&self) -> bool {
        self.decision.is_some() || self.best_t.is_some()
    }
}

pub(super) fn handles(op: Op) -> bool {
    matches!(
        op,
        Op::TraceRayKHR
            | Op::ExecuteCallableKHR
            | Op::ReportIntersectionKHR
            | Op::IgnoreIntersectionKHR
            | Op::TerminateRayKHR
    )
}

/// Decision bits of an any-hit shader.
const ACCEPT: u32 = 1;
const TERMINATE: u32 = 2;

impl<'m> Lowerer<'m> {
    pub(super) fn ray_tracing_inst(&mut self, inst: &Instruction) -> Result<()> {
        match inst.class.opcode {
            Op::TraceRayKHR => self.trace_ray(inst),
            Op::ExecuteCallableKHR => self.execute_callable(inst),
            Op::ReportIntersectionKHR => self.report_intersection(inst),
            Op::IgnoreIntersectionKHR => self.decide(0),
            _ => self.decide(ACCEPT | TERMINATE),
        }
    }

    fn link(&self, what: &str) -> Result<&'m Link> {
        self.rt.ok_or_else(|| unsupported!("{what} outside a ray-tracing pipeline"))
    }

    /// A fresh query slot of the pipeline's reserved region.
    fn trace_slot(&mut self) -> Result<u16> {
        let rt = self.link("OpTraceRayKHR")?;
        let slot = self.num_queries;
        if slot >= rt.slots {
            return Err(limit!("the pipeline needs more than {} ray query slots", rt.slots));
        }
        self.num_queries += 1;
        self.imm(slot)
    }

    /// `OpTraceRayKHR`: the candidate loop with any-hit and intersection shaders, then the
    /// closest-hit or miss shader the records select.
    fn trace_ray(&mut self, inst: &Instruction) -> Result<()> {
        let rt = self.link("OpTraceRayKHR")?;
        let depth = self.depth("traceRayEXT")?;
        if depth.traces >= rt.max.traces {
            // Deeper than maxPipelineRayRecursionDepth (undefined behaviour): no trace runs
            // and the payload keeps what the caller left in it.
            return Ok(());
        }
        let r = |l: &mut Self, k: usize| l.regs(inst.id(k)?);
        let (accel, flags, cull_mask) = (r(self, 0)?, r(self, 1)?, r(self, 2)?);
        let (sbt_offset, sbt_stride, miss_index) = (r(self, 3)?, r(self, 4)?, r(self, 5)?);
        let (origin, tmin, dir, tmax) = (r(self, 6)?, r(self, 7)?, r(self, 8)?, r(self, 9)?);
        let payload = self.ptr(inst.id(10)?)?;
        let q = self.trace_slot()?;
        let ops = self.ray_query;
        ops.initialize(self, q, &Ray { accel, flags, cull_mask, origin, dir, tmin, tmax, confirm_all: false })?;
        let cand = self.e.alloc(ATTR_REGS)?;
        let comm = self.e.alloc(ATTR_REGS)?;
        let kinds = (self.e.alloc(1)?, self.e.alloc(1)?);
        let mut call = Call::new(Some(q), Intersection::Candidate, Depth { traces: depth.traces + 1, ..depth });
        call.payload_regs = self.m.types.regs(payload.ty)?;
        call.payload = Some(payload);
        call.tmax = Some(tmax);
        call.attrs = Some((cand, comm));
        call.kinds = Some(kinds);
        let sbt = Sbt { offset: sbt_offset, stride: sbt_stride };
        if rt.walks_candidates() {
            self.candidate_loop(rt, q, sbt, &call)?;
        } else {
            // Without any-hit or intersection shaders every non-opaque triangle is
            // accepted and every AABB ignored: proceed until the walk ends.
            let (head, body, after) =
                (self.e.label("trace.head"), self.e.label("trace.accept"), self.e.label("trace.done"));
            self.e.jmp(head);
            self.e.place(head)?;
            let c = ops.proceed(self, q)?;
            self.e.bra(c, body, after, after);
            self.e.place(body)?;
            let ty = ops.hit_value(self, q, Intersection::Candidate, HitValue::Type)?;
            let tri = self.is_const(ty, rtu::CANDIDATE_TRIANGLE)?;
            self.when(tri, |l| ops.confirm(l, q))?;
            self.e.jmp(head);
            self.e.place(after)?;
        }
        self.closest_hit_or_miss(rt, q, sbt, flags, miss_index, call)
    }

    /// `OpExecuteCallableKHR`: the callable shader of the callable region's record.
    fn execute_callable(&mut self, inst: &Instruction) -> Result<()> {
        let rt = self.link("OpExecuteCallableKHR")?;
        let depth = self.depth("executeCallableEXT")?;
        if depth.calls >= rt.max.calls {
            // Deeper than the expansion goes (past the stack the default pipeline stack size
            // allows, `expand`): no callable runs, the data is left as it is.
            return Ok(());
        }
        let index = self.regs(inst.id(0)?)?;
        let data = self.ptr(inst.id(1)?)?;
        let record = self.sbt_record(kargs::sbt::CALLABLE, index)?;
        let mut call = Call::new(None, Intersection::Committed, Depth { calls: depth.calls + 1, ..depth });
        call.record = Some(record.address);
        let regs = self.m.types.regs(data.ty)?;
        call.payload_regs = regs;
        call.payload = Some(data);
        for (s, groups) in rt.targets(Stage::Callable, |g| g.general, regs) {
            self.dispatch_to(record.handle, &groups, None, |l| l.lower_callee(s, call.clone()))?;
        }
        Ok(())
    }

    /// The depth of the shader being lowered, which is about to make call `what` (refused
    /// in any-hit and intersection shaders).
    fn depth(&self, what: &str) -> Result<Depth> {
        match &self.call {
            Some(c) if c.in_walk() => Err(invalid!("{what} in an any-hit or intersection shader")),
            Some(c) => Ok(c.depth),
            None => Ok(Depth::default()),
        }
    }

    /// `ignoreIntersectionEXT` / `terminateRayEXT` (the any-hit's branch to its end follows).
    fn decide(&mut self, bits: u32) -> Result<()> {
        let d = self
            .call
            .as_ref()
            .and_then(|c| c.decision)
            .ok_or_else(|| invalid!("ignoreIntersectionEXT or terminateRayEXT outside an any-hit shader"))?;
        self.e.movi(d, bits);
        Ok(())
    }

    /// A register holding `v == k`.
    fn is_const(&mut self, v: u16, k: u32) -> Result<u16> {
        let k = self.imm(k)?;
        self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), v, k)
    }

    /// Runs `f` on the lanes where `pred` holds.
    fn when(&mut self, pred: u16, f: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let (then, join) = (self.e.label("rt.then"), self.e.label("rt.join"));
        self.e.bra(pred, then, join, join);
        self.e.place(then)?;
        f(self)?;
        self.e.jmp(join);
        self.e.place(join)
    }

    /// One link of the dispatcher: `f` runs on the lanes whose handle names one of `groups`
    /// (and where `also` holds).
    fn dispatch_to(
        &mut self,
        handle: u16,
        groups: &[usize],
        also: Option<u16>,
        f: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let mut pred = None;
        for &g in groups {
            let is = self.is_const(handle, g as u32 + 1)?;
            pred = Some(match pred {
                Some(p) => self.e.op2(Vx::Or, p, is)?,
                None => is,
            });
        }
        let mut pred = pred.ok_or_else(|| invalid!("internal: a dispatch to no group"))?;
        if let Some(a) = also {
            pred = self.e.op2(Vx::And, pred, a)?;
        }
        self.when(pred, f)
    }

    /// A `ShaderRecordBufferKHR` variable of type `ty`: the data after the handle in the
    /// record that selected the shader (the ray generation record in the ray generation
    /// shader), read like a physical storage buffer with the type's explicit layout.
    pub(in crate::shader::lower) fn shader_record(&mut self, ty: Id) -> Result<Ptr> {
        let address = match &self.call {
            Some(c) => c.record.ok_or_else(|| invalid!("a shader record in a shader no record selected"))?,
            None => {
                let ka = self.kargs()?;
                let at = (kargs::SBT + kargs::sbt::RAYGEN * kargs::SBT_REGION_BYTES + kargs::sbt::ADDRESS) as u32;
                self.in_prologue(|l| {
                    let r = l.e.alloc(2)?;
                    l.e.emit(I::new(Vx::Ldg).size(MemSize::B64).dst(r).a(ka).imm(at));
                    Ok(r)
                })?
            }
        };
        // Regions start 64-byte aligned and records are `shaderGroupHandleAlignment` (the
        // handle size) apart.
        let off = kargs::sbt::HANDLE_BYTES as u32;
        let kind = PtrKind::Global { base: address, off, align: off, lay: Lay::Plain, origin: Origin::Physical };
        Ok(Ptr { ty, kind })
    }

    /// The address (a register pair) and handle (its group word) of record `index` of SBT
    /// region `region`: handle 0 for an empty region.
    fn sbt_record(&mut self, region: usize, index: u16) -> Result<Record> {
        let ka = self.kargs()?;
        let at = (kargs::SBT + region * kargs::SBT_REGION_BYTES) as u32;
        let base = self.e.alloc(2)?;
        self.e.emit(I::new(Vx::Ldg).size(MemSize::B64).dst(base).a(ka).imm(at + kargs::sbt::ADDRESS as u32));
        let stride = self.e.alloc(1)?;
        self.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(stride).a(ka).imm(at + kargs::sbt::STRIDE as u32));
        // Strides and indices are small: the offset fits 32 bits.
        let off = self.e.alloc(2)?;
        self.e.emit(I::new(Vx::Imul).dst(off).a(stride).b(index));
        self.e.movi(off + 1, 0);
        let address = self.e.op64(Vx::Iadd64, base, off)?;
        let zero = self.imm64(0)?;
        let present = self.e.op2(I::new(Vx::Icmp64).cond(IntCond::Ne), base, zero)?;
        let handle = self.e.alloc(1)?;
        self.e.movi(handle, 0);
        self.when(present, |l| {
            let group = kargs::sbt::HANDLE_GROUP as u32;
            l.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(handle).a(address).imm(group));
            Ok(())
        })?;
        Ok(Record { address, handle })
    }
}

/// A shader binding table record: its address (register pair) and the group its handle
/// names (`group index + 1`, 0 for none).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Record {
    pub address: u16,
    pub handle: u16,
}

/// The trace's SBT offset and stride registers.
#[derive(Clone, Copy)]
struct Sbt {
    offset: u16,
    stride: u16,
}
