//! The rdna2 walk's part of the ray log (`VORTEX_RAYLOG`, `docs/RAYLOG.md`). On an rdna2
//! device the RT unit is idle: the shader walks, so the compiler reports each query through
//! `RQLOG` (after `Initialize`, and after every proceed) and this recorder reads the query's
//! private state (`abi::rdna2::query`) there. A query's ray is taken when it is armed; each
//! proceed that hands a candidate to the shader adds it to the trace's candidate list; the
//! proceed that ends the walk writes the trace with the committed record, as a
//! `FLAG_SHADER_WALK` TRACE of the same format as the RT unit's.
//!
//! The lines: where the host form of the loop ([`super::walk`]) can reproduce the walk (no
//! candidate went to the shader, no culling flag), the recorder re-walks the ray on the
//! host and keeps every line that walk read, so `rt_replay` can restore the structure and
//! check the shader's answer against it. That costs a second walk per ray, only while a
//! log is open.

use super::walk::{self, WalkRay};
use crate::abi::raylog as fmt;
use crate::abi::rdna2::query::{self as q, rec};
use crate::abi::rtu::{self as rtu_abi, ray_flags as rf, span};
use crate::mem::MemoryMap;
use crate::rtu::raylog::{encode_trace, CandKey, Decision, LineSet, Sink, TraceRec, TraceResult};
use crate::rtu::TraceRay;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Ray flags the host walk follows; a trace with another one is recorded without lines.
pub const HOST_FLAGS: u32 = rf::OPAQUE | rf::NO_OPAQUE | rf::TERMINATE_ON_FIRST_HIT | rf::SKIP_AABBS;

/// Whether the host walk reproduces a shader-walk trace: a structure, no candidate handed
/// to the shader, only [`HOST_FLAGS`].
pub fn host_replayable(t: &TraceRec) -> bool {
    t.decisions.is_empty() && t.ray.flags & !HOST_FLAGS == 0 && t.ray.accel != 0
}

/// The host walk's ray of a trace.
pub fn walk_ray(r: &TraceRay) -> WalkRay {
    WalkRay { org: r.origin, dir: r.dir, tmin: r.tmin, tmax: r.tmax, cull_mask: r.cull_mask }
}

/// A host walk's answer as a trace result (what the shader walk records for the same hit).
pub fn result_of_walk(hit: Option<walk::WalkHit>, tmax: f32) -> TraceResult {
    let mut r = TraceResult { status: rtu_abi::STS_DONE_MISS, ..TraceResult::default() };
    r.hit[span::T as usize] = tmax.to_bits();
    if let Some(h) = hit {
        r.status = rtu_abi::STS_DONE_HIT;
        let w = &mut r.hit;
        w[span::T as usize] = h.t.to_bits();
        w[span::U as usize] = h.u.to_bits();
        w[span::V as usize] = h.v.to_bits();
        w[span::PRIM as usize] = h.prim;
        w[span::INST_ID as usize] = h.inst;
        w[span::GEOM as usize] = h.geom;
        w[span::CUSTOM as usize] = h.custom;
        w[span::SBT as usize] = h.sbt;
        w[span::KIND as usize] = rtu_abi::COMMITTED_TRIANGLE;
        w[span::FRONT as usize] = h.front as u32;
        r.tri = h.tri;
    }
    r
}

/// Word `w` of a query's state.
fn word(state: &[u8], w: u32) -> u32 {
    let o = 4 * w as usize;
    u32::from_le_bytes([state[o], state[o + 1], state[o + 2], state[o + 3]])
}

fn f32_at(state: &[u8], w: u32) -> f32 {
    f32::from_bits(word(state, w))
}

fn vec3(state: &[u8], w: u32) -> [f32; 3] {
    [f32_at(state, w), f32_at(state, w + 1), f32_at(state, w + 2)]
}

/// The record at state word `at` (candidate or committed) as the log's span words.
fn span_of(state: &[u8], at: u32) -> ([u32; fmt::HIT_WORDS], u64) {
    let r = |o: u32| word(state, at + o);
    let mut w = [0u32; fmt::HIT_WORDS];
    for (s, o) in [
        (span::T, rec::T),
        (span::U, rec::U),
        (span::V, rec::U + 1),
        (span::PRIM, rec::PRIM),
        (span::INST_ID, rec::INST_ID),
        (span::GEOM, rec::GEOM),
        (span::CUSTOM, rec::CUSTOM),
        (span::SBT, rec::SBT),
        (span::KIND, rec::KIND),
        (span::FRONT, rec::FRONT),
    ] {
        w[s as usize] = r(o);
    }
    let node = r(rec::TRI_ADDR) as u64 | (r(rec::TRI_ADDR + 1) as u64) << 32;
    let tri = if node == 0 { 0 } else { node + r(rec::TRI_K) as u64 };
    (w, tri)
}

/// The committed record as a result, with the status a finished (or yielding) walk has.
fn committed(state: &[u8], status: Option<u32>) -> TraceResult {
    let (hit, tri) = span_of(state, q::COMM);
    let hit_kind = hit[span::KIND as usize] != rtu_abi::COMMITTED_NONE;
    let status = status.unwrap_or(if hit_kind { rtu_abi::STS_DONE_HIT } else { rtu_abi::STS_DONE_MISS });
    TraceResult { status, hit, tri }
}

/// A query between arm and the end of its walk.
struct Open {
    ray: TraceRay,
    decisions: Vec<Decision>,
    /// The result as the last yielding proceed left it.
    last: TraceResult,
}

/// A query: (warp, lane, state byte offset).
pub type QueryKey = (u32, u32, u32);

/// One core's recorder of shader walks.
pub struct QueryLog {
    sink: Arc<Sink>,
    lines: LineSet,
    open: FxHashMap<QueryKey, Open>,
    buf: Vec<u8>,
    n: u64,
}

impl QueryLog {
    pub fn new(sink: Arc<Sink>) -> QueryLog {
        QueryLog { sink, lines: LineSet::default(), open: FxHashMap::default(), buf: Vec::new(), n: 0 }
    }

    fn emit(&mut self, o: Open, result: TraceResult, extra: u8) {
        let t = TraceRec {
            ray: o.ray,
            result,
            flags: fmt::FLAG_SHADER_WALK | extra,
            decisions: o.decisions,
            lines_before: 0,
        };
        encode_trace(&mut self.buf, &t);
        self.n += 1;
    }

    /// `Initialize` armed the query whose state is `state` on the structure at `accel`. A
    /// query still open there was abandoned by the shader: it is written as it stands.
    pub fn arm(&mut self, key: QueryKey, state: &[u8], accel: u64) {
        if let Some(o) = self.open.remove(&key) {
            let last = o.last;
            self.emit(o, last, fmt::FLAG_OPEN);
        }
        let ray = TraceRay {
            origin: vec3(state, q::WORLD_ORG),
            tmin: f32_at(state, q::TMIN),
            dir: vec3(state, q::WORLD_DIR),
            // `Initialize` starts the committed t at tmax.
            tmax: f32_at(state, q::COMM + rec::T),
            flags: word(state, q::FLAGS),
            cull_mask: word(state, q::CULL),
            accel,
        };
        let last = TraceResult { status: rtu_abi::STS_PENDING, ..committed(state, None) };
        self.open.insert(key, Open { ray, decisions: Vec::new(), last });
    }

    /// A proceed of the query returned: a candidate went to the shader, or the walk is over
    /// (the trace is written, with the lines of its host walk).
    pub fn proceeded(&mut self, key: QueryKey, state: &[u8], mem: &MemoryMap) {
        let Some(o) = self.open.get_mut(&key) else { return };
        if word(state, q::CTL + q::DONE) == 0 {
            let c = |w: u32| word(state, q::CAND + w);
            let cand = CandKey {
                kind: c(rec::KIND),
                t: c(rec::T),
                prim: c(rec::PRIM),
                geom: c(rec::GEOM),
                inst: c(rec::INST_ID),
            };
            o.decisions.push(Decision { action: 0, t_gen: 0, cand });
            let status =
                if cand.kind == rtu_abi::CANDIDATE_AABB { rtu_abi::STS_YIELD_PROC } else { rtu_abi::STS_YIELD_ANYHIT };
            o.last = committed(state, Some(status));
            return;
        }
        let o = self.open.remove(&key).expect("looked up above");
        let t = TraceRec { ray: o.ray, decisions: Vec::new(), ..TraceRec::default() };
        if o.decisions.is_empty() && host_replayable(&t) {
            let mut reads = Vec::new();
            let first = o.ray.flags & rf::TERMINATE_ON_FIRST_HIT != 0;
            // A walk the host cannot finish leaves its lines short: the replay reports it.
            let _ = walk::walk(mem, o.ray.accel, &walk_ray(&o.ray), first, q::STEP_LIMIT as u64, Some(&mut reads));
            for (addr, len) in reads {
                self.lines.note(mem, addr, len);
            }
        }
        self.emit(o, committed(state, None), 0);
    }

    /// End of a dispatch: queries still open (the shader left them) are written as they
    /// stand, then the lines and traces go to the file.
    pub fn flush(&mut self) {
        let mut keys: Vec<QueryKey> = self.open.keys().copied().collect();
        keys.sort_unstable();
        for k in keys {
            let o = self.open.remove(&k).expect("key just listed");
            let last = o.last;
            self.emit(o, last, fmt::FLAG_OPEN);
        }
        if self.buf.is_empty() && self.lines.lines.is_empty() {
            return;
        }
        self.sink.append(&self.lines.lines, &self.buf, self.n);
        self.lines = LineSet::default();
        self.buf.clear();
        self.n = 0;
    }
}

impl Drop for QueryLog {
    fn drop(&mut self) {
        self.flush();
    }
}
