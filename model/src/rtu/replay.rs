//! Replaying a ray log (`rt_replay`, `docs/RAYLOG.md`): restore every recorded line at its
//! original address in a fresh address space, re-trace the rays in warp-padded batches
//! through an engine — the functional walker, the timed traversal core, or the CPU
//! reference traversal ([`super::reftrace`]) — answering each candidate with the decision
//! the log recorded for it, and classify every result that differs from the recorded one.
//! Traces an rdna2 device's shader walk recorded (`FLAG_SHADER_WALK`) go to the `rdna2`
//! engine instead, the host form of that loop (`isect::walk`); [`agreement`] compares two
//! logs of one workload ray by ray (an rtu device's and an rdna2 device's).

use super::raylog::{CandKey, RayLog, TraceRec, TraceResult};
use super::reference::Harness;
use super::reftrace::{self, Offer};
use super::TraceRay;
use crate::abi::raylog as fmt;
use crate::abi::rtu::{self as rtu_abi, span};
use crate::abi::{LINE_BYTES, MAX_THREADS};
use crate::config::RtuConfig;
use crate::mem::{AddressSpace, MemoryMap};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Which model re-traces the rays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The RTU front end and walker in functional mode.
    Functional,
    /// The same front end with a timed traversal core (staging, slots, RTCache, PEs).
    Timed,
    /// The CPU reference traversal (`reftrace`): recursive, unbounded stack, no RTU code
    /// but the PEs' arithmetic.
    Reference,
    /// The host form of the rdna2 shader loop (`isect::walk`), for the traces an rdna2
    /// device recorded (closest or first hit, opaque, no culling flag).
    Rdna2,
}

impl Engine {
    /// The engines that re-trace the RT unit's traces.
    pub const ALL: [Engine; 3] = [Engine::Functional, Engine::Timed, Engine::Reference];

    pub fn name(self) -> &'static str {
        match self {
            Engine::Functional => "functional",
            Engine::Timed => "timed",
            Engine::Reference => "reference",
            Engine::Rdna2 => "rdna2",
        }
    }

    pub fn parse(s: &str) -> Option<Engine> {
        Engine::ALL.into_iter().chain([Engine::Rdna2]).find(|e| e.name() == s)
    }

    /// Whether this engine re-traces `t` (the RT unit's engines take the RT unit's traces,
    /// the rdna2 engine the shader walk's that its host loop can reproduce).
    pub fn takes(self, t: &TraceRec) -> bool {
        match self {
            Engine::Rdna2 => t.shader_walk() && crate::isect::raylog::host_replayable(t),
            _ => !t.shader_walk(),
        }
    }
}

/// How a replayed result relates to the recorded one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Bit-identical.
    Match,
    /// The log has a hit, the replay none.
    RefHitGotMiss,
    /// The log has no hit, the replay one.
    RefMissGotHit,
    /// Another primitive or instance at exactly the same t bits.
    TieExact,
    /// Another primitive within [`NEAR_TIE_ULPS`] of the recorded t.
    NearTie,
    /// Another primitive, clearly nearer.
    GotNearerHit,
    /// Another primitive, clearly farther.
    GotFartherHit,
    /// The same primitive with other t or barycentric bits.
    SamePrimBits,
    /// The same hit and t/u/v, but another field (front face, custom index, SBT offset,
    /// triangle address, status) differs.
    OtherFields,
    /// The replay offered another candidate sequence than the log's.
    DecisionsDiverged,
    /// The engine faulted (bad structure, a record the log does not hold).
    Fault,
}

impl Class {
    pub const ALL: [Class; 11] = [
        Class::Match,
        Class::RefHitGotMiss,
        Class::RefMissGotHit,
        Class::TieExact,
        Class::NearTie,
        Class::GotNearerHit,
        Class::GotFartherHit,
        Class::SamePrimBits,
        Class::OtherFields,
        Class::DecisionsDiverged,
        Class::Fault,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Match => "match",
            Class::RefHitGotMiss => "ref_hit_got_miss",
            Class::RefMissGotHit => "ref_miss_got_hit",
            Class::TieExact => "tie_exact",
            Class::NearTie => "near_tie",
            Class::GotNearerHit => "got_nearer_hit",
            Class::GotFartherHit => "got_farther_hit",
            Class::SamePrimBits => "same_prim_bits",
            Class::OtherFields => "other_fields",
            Class::DecisionsDiverged => "decisions_diverged",
            Class::Fault => "fault",
        }
    }
}

/// Two hits of different primitives whose t differ by at most this many ULPs are a near tie.
pub const NEAR_TIE_ULPS: u64 = 4;

/// Distance in ULPs between two finite floats (across zero too).
pub fn ulps(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let i = x.to_bits() as i32;
        if i < 0 {
            i64::from(i32::MIN) - i64::from(i)
        } else {
            i64::from(i)
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// Classifies a replayed result against the recorded one.
pub fn classify(rec: &TraceResult, got: &TraceResult, diverged: bool) -> Class {
    if diverged {
        return Class::DecisionsDiverged;
    }
    if rec == got {
        return Class::Match;
    }
    match (rec.has_hit(), got.has_hit()) {
        (true, false) => Class::RefHitGotMiss,
        (false, true) => Class::RefMissGotHit,
        (false, false) => Class::OtherFields,
        (true, true) => {
            let id = |r: &TraceResult| [span::PRIM, span::GEOM, span::INST_ID, span::KIND].map(|o| r.word(o));
            let bits = |r: &TraceResult| [span::T, span::U, span::V].map(|o| r.word(o));
            if id(rec) == id(got) {
                if bits(rec) != bits(got) {
                    Class::SamePrimBits
                } else {
                    Class::OtherFields
                }
            } else if rec.word(span::T) == got.word(span::T) {
                Class::TieExact
            } else if ulps(rec.t(), got.t()) <= NEAR_TIE_ULPS {
                Class::NearTie
            } else if got.t() < rec.t() {
                Class::GotNearerHit
            } else {
                Class::GotFartherHit
            }
        }
    }
}

/// One ray whose replay differs from the log.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// Index of the trace in the log.
    pub index: usize,
    pub class: Class,
    pub ray: TraceRay,
    pub recorded: TraceResult,
    pub got: TraceResult,
    pub detail: String,
}

/// What a replay found.
#[derive(Clone, Debug)]
pub struct Report {
    pub engine: Engine,
    /// Traces in the log.
    pub rays: u64,
    /// Traces not replayable (terminated while traversing, decision list cut, left
    /// PENDING): not compared.
    pub skipped: u64,
    /// Count per [`Class`] (in `Class::ALL` order).
    pub counts: [u64; Class::ALL.len()],
    /// The first mismatches (up to the `keep` asked for).
    pub mismatches: Vec<Mismatch>,
    /// Warp batches run.
    pub batches: u64,
}

impl Report {
    pub fn count(&self, c: Class) -> u64 {
        self.counts[Class::ALL.iter().position(|&x| x == c).expect("every class is listed")]
    }

    /// Compared traces whose result differs.
    pub fn mismatched(&self) -> u64 {
        self.counts.iter().sum::<u64>() - self.count(Class::Match)
    }
}

/// A fresh address space holding every line of the log at its address (zeroed: the lines
/// are written as the replay reaches them). Contiguous lines share one region.
pub fn restore_space(log: &RayLog) -> Result<Arc<AddressSpace>, String> {
    let mut addrs: Vec<u64> = log.lines.iter().map(|l| l.0).collect();
    addrs.sort_unstable();
    addrs.dedup();
    let space = Arc::new(AddressSpace::new());
    let lb = LINE_BYTES as u64;
    let mut i = 0;
    while i < addrs.len() {
        let start = addrs[i];
        let mut end = start + lb;
        i += 1;
        while i < addrs.len() && addrs[i] == end {
            end += lb;
            i += 1;
        }
        space.allocate_at(start, end - start).map_err(|e| format!("cannot restore lines at {start:#x}: {e}"))?;
    }
    Ok(space)
}

/// Follows one trace's recorded decisions while an engine re-traces it.
struct Follow<'a> {
    tr: &'a TraceRec,
    next: usize,
    diverged: Option<String>,
    /// For a trace the shader left open: the record at the point where the log stops.
    open_at: Option<TraceResult>,
}

impl<'a> Follow<'a> {
    fn new(tr: &'a TraceRec) -> Follow<'a> {
        Follow { tr, next: 0, diverged: None, open_at: None }
    }

    fn offer(&mut self, cand: CandKey, at: TraceResult) -> (u32, f32) {
        if self.open_at.is_some() {
            return (rtu_abi::ACT_TERMINATE, 0.0);
        }
        if let Some(d) = self.tr.decisions.get(self.next) {
            self.next += 1;
            if d.cand != cand && self.diverged.is_none() {
                self.diverged = Some(format!("candidate {} offered {cand:?}, the log has {:?}", self.next - 1, d.cand));
            }
            (d.action, f32::from_bits(d.t_gen))
        } else if self.tr.flags & fmt::FLAG_OPEN != 0 {
            self.open_at = Some(at);
            (rtu_abi::ACT_TERMINATE, 0.0)
        } else {
            if self.diverged.is_none() {
                self.diverged = Some(format!("an extra candidate {} offered: {cand:?}", self.next));
            }
            (rtu_abi::ACT_IGNORE, 0.0)
        }
    }

    /// The result to compare and whether the candidate sequence diverged.
    fn finish(mut self, terminal: TraceResult) -> (TraceResult, Option<String>) {
        if self.diverged.is_none() && self.next < self.tr.decisions.len() {
            self.diverged =
                Some(format!("the walk ended after {} candidates; the log has {}", self.next, self.tr.decisions.len()));
        }
        if self.diverged.is_none() && self.tr.flags & fmt::FLAG_OPEN != 0 && self.open_at.is_none() {
            self.diverged = Some("the walk ended where the log has the query left open".into());
        }
        (self.open_at.unwrap_or(terminal), self.diverged)
    }
}

/// The engine's per-batch state.
enum Runner {
    Rtu(Box<Harness>),
    Reference,
    Rdna2,
}

impl Runner {
    fn new(engine: Engine, cfg: &RtuConfig) -> Runner {
        match engine {
            Engine::Functional => Runner::Rtu(Box::new(Harness::functional(cfg, MAX_THREADS, 1))),
            Engine::Timed => Runner::Rtu(Box::new(Harness::timed(cfg, MAX_THREADS, 1))),
            Engine::Reference => Runner::Reference,
            Engine::Rdna2 => Runner::Rdna2,
        }
    }
}

/// Re-traces one batch (at most a warp): per trace, the result to compare, the divergence
/// and a fault, if any.
type Outcome = Result<(TraceResult, Option<String>), String>;

fn run_batch(runner: &mut Runner, mem: &MemoryMap, cfg: &RtuConfig, batch: &[&TraceRec]) -> Vec<Outcome> {
    match runner {
        Runner::Rdna2 => batch.iter().map(|tr| rdna2_walk(mem, tr)).collect(),
        Runner::Reference => batch
            .iter()
            .map(|tr| {
                let mut f = Follow::new(tr);
                let r = reftrace::trace(mem, &tr.ray, cfg.max_visits, |o: &Offer| f.offer(o.cand, o.at))?;
                Ok(f.finish(r))
            })
            .collect(),
        Runner::Rtu(h) => {
            let rays: Vec<TraceRay> = batch.iter().map(|t| t.ray).collect();
            let mut follow: Vec<Follow> = batch.iter().map(|t| Follow::new(t)).collect();
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                h.run(mem, &rays, |i, row| {
                    let (cand, at) = (CandKey::of_row(&row.0), TraceResult::of_row(&row.0));
                    follow[i].offer(cand, at)
                })
            }));
            match run {
                Ok(Ok(rows)) => {
                    follow.into_iter().zip(rows).map(|(f, row)| Ok(f.finish(TraceResult::of_row(&row.0)))).collect()
                }
                Ok(Err(e)) => {
                    let msg = format!("lane {} of the batch faulted: {}", e.lane, e.fault);
                    batch.iter().map(|_| Err(msg.clone())).collect()
                }
                Err(_) => batch.iter().map(|_| Err("the engine panicked on this batch".to_string())).collect(),
            }
        }
    }
}

/// Replays `log` through `engine` under `cfg`. Keeps the first `keep` mismatches;
/// `progress(done, total)` is called after every batch.
pub fn replay(
    log: &RayLog,
    engine: Engine,
    cfg: &RtuConfig,
    keep: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, String> {
    let space = restore_space(log)?;
    let mem = space.snapshot();
    let mut report = Report {
        engine,
        rays: log.traces.len() as u64,
        skipped: 0,
        counts: [0; Class::ALL.len()],
        mismatches: Vec::new(),
        batches: 0,
    };
    // A line whose contents change later in the log (a structure rebuilt in place) starts
    // a new epoch: no batch spans one, and each epoch gets a fresh engine (no stale
    // decoded headers).
    let mut last: FxHashMap<u64, &[u8; LINE_BYTES]> = FxHashMap::default();
    let mut changes: Vec<usize> = Vec::new();
    for (i, (addr, data)) in log.lines.iter().enumerate() {
        if let Some(prev) = last.insert(*addr, data) {
            if prev != data {
                changes.push(i);
            }
        }
    }
    let mut applied = 0usize;
    let apply = |upto: usize, applied: &mut usize| -> Result<(), String> {
        while *applied < upto.min(log.lines.len()) {
            let (addr, data) = &log.lines[*applied];
            mem.write(*addr, data).map_err(|e| format!("restoring line {addr:#x}: {e}"))?;
            *applied += 1;
        }
        Ok(())
    };
    let mut runner = Runner::new(engine, cfg);
    let total = log.traces.len();
    let mut i = 0;
    while i < total {
        // The batch: up to a warp of traces with no changed line between them.
        let first_lines = log.traces[i].lines_before;
        let next_change = changes.iter().copied().find(|&c| c >= first_lines.max(applied)).unwrap_or(usize::MAX);
        if applied > 0 && changes.iter().any(|&c| c >= applied && c < first_lines) {
            runner = Runner::new(engine, cfg);
        }
        let mut j = i;
        let mut batch: Vec<(usize, &TraceRec)> = Vec::with_capacity(MAX_THREADS);
        while j < total && batch.len() < MAX_THREADS {
            let t = &log.traces[j];
            if j > i && t.lines_before > next_change {
                break;
            }
            if t.replayable() && t.result.status != rtu_abi::STS_PENDING && engine.takes(t) {
                batch.push((j, t));
            } else {
                report.skipped += 1;
            }
            j += 1;
        }
        apply(log.traces[j - 1].lines_before, &mut applied)?;
        if !batch.is_empty() {
            let traces: Vec<&TraceRec> = batch.iter().map(|b| b.1).collect();
            let outs = run_batch(&mut runner, &mem, cfg, &traces);
            report.batches += 1;
            let mut faulted = false;
            for ((index, tr), out) in batch.iter().zip(outs) {
                let (class, got, detail) = match out {
                    Ok((got, div)) => (classify(&tr.result, &got, div.is_some()), got, div.unwrap_or_default()),
                    Err(e) => {
                        faulted = true;
                        (Class::Fault, TraceResult::default(), e)
                    }
                };
                report.counts[Class::ALL.iter().position(|&c| c == class).expect("listed")] += 1;
                if class != Class::Match && report.mismatches.len() < keep {
                    report.mismatches.push(Mismatch {
                        index: *index,
                        class,
                        ray: tr.ray,
                        recorded: tr.result,
                        got,
                        detail,
                    });
                }
            }
            if faulted {
                // The engine's state after a fault is not to be trusted.
                runner = Runner::new(engine, cfg);
            }
        }
        i = j;
        progress(i, total);
    }
    Ok(report)
}

/// The rdna2 host walk of one shader-walk trace.
fn rdna2_walk(mem: &MemoryMap, tr: &TraceRec) -> Outcome {
    use crate::isect::{raylog as r2log, walk};
    let first = tr.ray.flags & rtu_abi::ray_flags::TERMINATE_ON_FIRST_HIT != 0;
    let max = crate::abi::rdna2::query::STEP_LIMIT as u64;
    let (hit, _) =
        walk::walk(mem, tr.ray.accel, &r2log::walk_ray(&tr.ray), first, max, None).map_err(|e| e.to_string())?;
    Ok((r2log::result_of_walk(hit, tr.ray.tmax), None))
}

/// How two logs of one workload agree ray by ray ([`agreement`]).
#[derive(Clone, Debug, Default)]
pub struct Agreement {
    /// Rays of the first log that found their twin in the second.
    pub paired: u64,
    /// Of those, rays with terminate-on-first-hit: which hit is found depends on the
    /// structure's order, so only hit or miss is compared.
    pub hit_only: u64,
    /// Rays of either log without a twin in the other.
    pub unpaired: u64,
    /// Count per [`Class`] (the first log as the recorded side).
    pub counts: [u64; Class::ALL.len()],
    pub mismatches: Vec<Mismatch>,
}

impl Agreement {
    pub fn count(&self, c: Class) -> u64 {
        self.counts[Class::ALL.iter().position(|&x| x == c).expect("every class is listed")]
    }

    /// Paired rays that differ, plus the unpaired ones.
    pub fn disagreeing(&self) -> u64 {
        self.counts.iter().sum::<u64>() - self.count(Class::Match) + self.unpaired
    }
}

/// A ray's identity across logs: everything but the structure's address (two devices
/// may place it elsewhere).
fn ray_key(r: &TraceRay) -> [u32; 10] {
    let b = |v: [f32; 3]| v.map(f32::to_bits);
    let (o, d) = (b(r.origin), b(r.dir));
    [o[0], o[1], o[2], d[0], d[1], d[2], r.tmin.to_bits(), r.tmax.to_bits(), r.flags, r.cull_mask]
}

/// A result as the two architectures can agree on it: the status and, for a hit, the
/// committed words (t, u, v, primitive, instance, geometry, custom index, SBT offset, kind,
/// front face); the triangle's address is each layout's own.
fn comparable(r: &TraceResult) -> TraceResult {
    let mut c = TraceResult { status: r.status, ..TraceResult::default() };
    if r.has_hit() {
        c.hit = r.hit;
    }
    c
}

/// Compares the closest hits of two logs of one workload ray by ray — an rtu device's
/// and an rdna2 device's, say: each finished trace of `a` is paired with the trace of `b`
/// that has the same ray (in order, for repeated rays), and their committed results are
/// classified as a replay's are (`a` as the recorded side), bit for bit. Traces left open
/// or not replayable are left out on both sides.
pub fn agreement(a: &RayLog, b: &RayLog, keep: usize) -> Agreement {
    let done =
        |t: &&TraceRec| t.replayable() && t.flags & fmt::FLAG_OPEN == 0 && rtu_abi::status_is_terminal(t.result.status);
    let mut twins: FxHashMap<[u32; 10], std::collections::VecDeque<&TraceRec>> = FxHashMap::default();
    for t in b.traces.iter().filter(done) {
        twins.entry(ray_key(&t.ray)).or_default().push_back(t);
    }
    let mut out = Agreement::default();
    for (index, t) in a.traces.iter().enumerate().filter(|(_, t)| done(t)) {
        let Some(u) = twins.get_mut(&ray_key(&t.ray)).and_then(|q| q.pop_front()) else {
            out.unpaired += 1;
            continue;
        };
        out.paired += 1;
        let (rec, got) = (comparable(&t.result), comparable(&u.result));
        let class = if t.ray.flags & rtu_abi::ray_flags::TERMINATE_ON_FIRST_HIT != 0 {
            out.hit_only += 1;
            match (rec.has_hit(), got.has_hit()) {
                (true, false) => Class::RefHitGotMiss,
                (false, true) => Class::RefMissGotHit,
                _ => Class::Match,
            }
        } else {
            classify(&rec, &got, false)
        };
        out.counts[Class::ALL.iter().position(|&c| c == class).expect("listed")] += 1;
        if class != Class::Match && out.mismatches.len() < keep {
            let detail = String::new();
            out.mismatches.push(Mismatch { index, class, ray: t.ray, recorded: t.result, got: u.result, detail });
        }
    }
    out.unpaired += twins.values().map(|q| q.len() as u64).sum::<u64>();
    out
}

/// One result as a line of text.
pub fn describe(r: &TraceResult) -> String {
    let w = |o: u32| r.word(o);
    let status = match r.status {
        rtu_abi::STS_DONE_HIT => "hit",
        rtu_abi::STS_DONE_MISS => "miss",
        rtu_abi::STS_YIELD_ANYHIT => "open(any-hit)",
        rtu_abi::STS_YIELD_PROC => "open(proc)",
        _ => "pending",
    };
    format!(
        "{status} kind={} t={:e} ({:#010x}) u={:#010x} v={:#010x} prim={} geom={} inst={} custom={:#x} sbt={} front={} tri={:#x}",
        w(span::KIND),
        r.t(),
        w(span::T),
        w(span::U),
        w(span::V),
        w(span::PRIM),
        w(span::GEOM),
        w(span::INST_ID),
        w(span::CUSTOM),
        w(span::SBT),
        w(span::FRONT),
        r.tri
    )
}

/// A ray as a line of text.
pub fn describe_ray(r: &TraceRay) -> String {
    format!(
        "org=({:e}, {:e}, {:e}) dir=({:e}, {:e}, {:e}) t=[{:e}, {:e}] flags={:#x} mask={:#x} as={:#x}",
        r.origin[0],
        r.origin[1],
        r.origin[2],
        r.dir[0],
        r.dir[1],
        r.dir[2],
        r.tmin,
        r.tmax,
        r.flags,
        r.cull_mask,
        r.accel
    )
}

/// The summary table of several replays (one column per engine).
pub fn summary(reports: &[Report]) -> String {
    let mut s = String::new();
    s.push_str(&format!("{:<20}", "class"));
    for r in reports {
        s.push_str(&format!("{:>12}", r.engine.name()));
    }
    s.push('\n');
    let row = |s: &mut String, name: &str, f: &dyn Fn(&Report) -> u64| {
        s.push_str(&format!("{name:<20}"));
        for r in reports {
            s.push_str(&format!("{:>12}", f(r)));
        }
        s.push('\n');
    };
    row(&mut s, "rays", &|r| r.rays);
    row(&mut s, "skipped", &|r| r.skipped);
    for c in Class::ALL {
        row(&mut s, c.name(), &|r| r.count(c));
    }
    row(&mut s, "mismatched", &|r| r.mismatched());
    s
}
