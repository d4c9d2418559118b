//! The ray log (`VORTEX_RAYLOG=path`, `docs/RAYLOG.md`): every trace the RTU serves — the
//! ray, the shader's decision on each candidate in offer order, and the result as the walk
//! left it — plus every 64-byte line the walks read, so `rt_replay` can restore the scene at
//! its original addresses and re-trace the rays without the application.
//!
//! Recording sits in the RTU front end ([`super::RtuUnit`]): each unit owns a [`Recorder`]
//! only while a log is open, so an unset variable costs one `Option` test per lane per
//! TRACE/CONTINUE. The walks' line reads are seen through [`LineTap`], a [`NodeSource`] that
//! wraps whichever source the mode uses (functional or the timed RTCache's), so both modes
//! log the same lines. Units buffer their records and hand them to the shared [`Sink`] at
//! the end of each dispatch; the sink writes a line again only when its contents changed.
//!
//! The byte layout is `abi::raylog`; this module also reads it back ([`RayLog::parse`]),
//! refusing a malformed or truncated file with the byte offset of the problem.

use super::walker::NodeSource;
use super::TraceRay;
use crate::abi::raylog as fmt;
use crate::abi::rtu::{self as rtu_abi, span};
use crate::abi::{rd_f32, rd_u32, rd_u64, LINE_BYTES};
use crate::mem::{MemFault, MemoryMap};
use parking_lot::Mutex;
use rustc_hash::{FxHashMap, FxHashSet};
use std::io::{BufWriter, Write};
use std::sync::{Arc, OnceLock};

/// One line of device memory as a walk read it.
pub type Line = (u64, [u8; LINE_BYTES]);

/// A candidate as the walk offered it, and the shader's answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// `abi::rtu::ACT_*` bits.
    pub action: u32,
    /// Generated hit distance (bits), for a procedural ACCEPT.
    pub t_gen: u32,
    pub cand: CandKey,
}

/// What identifies an offered candidate: kind, t bits, primitive, geometry, instance id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CandKey {
    pub kind: u32,
    pub t: u32,
    pub prim: u32,
    pub geom: u32,
    pub inst: u32,
}

impl CandKey {
    /// The candidate span of a window record.
    pub fn of_row(row: &[u32]) -> CandKey {
        let c = |o: u32| row[(rtu_abi::CANDIDATE + o) as usize];
        CandKey { kind: c(span::KIND), t: c(span::T), prim: c(span::PRIM), geom: c(span::GEOM), inst: c(span::INST_ID) }
    }
}

/// A trace's result: the record's status, the committed span's first words and the
/// committed triangle's address, bit for bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceResult {
    pub status: u32,
    /// `span::T ..= span::FRONT` of the committed span.
    pub hit: [u32; fmt::HIT_WORDS],
    pub tri: u64,
}

impl TraceResult {
    pub fn of_row(row: &[u32]) -> TraceResult {
        let k = rtu_abi::COMMITTED as usize;
        let t = rtu_abi::COMMITTED_TRI as usize;
        TraceResult {
            status: row[rtu_abi::STATUS as usize],
            hit: std::array::from_fn(|i| row[k + i]),
            tri: row[t] as u64 | (row[t + 1] as u64) << 32,
        }
    }
    pub fn word(&self, off: u32) -> u32 {
        self.hit[off as usize]
    }
    pub fn t(&self) -> f32 {
        f32::from_bits(self.hit[span::T as usize])
    }
    /// Something is committed (a terminal hit, or an open query with a commit).
    pub fn has_hit(&self) -> bool {
        self.word(span::KIND) != rtu_abi::COMMITTED_NONE
    }
}

/// One recorded trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceRec {
    pub ray: TraceRay,
    pub result: TraceResult,
    /// `abi::raylog::FLAG_*`.
    pub flags: u8,
    pub decisions: Vec<Decision>,
    /// How many LINE records precede this trace in the file.
    pub lines_before: usize,
}

impl TraceRec {
    /// Whether a replay can reproduce this trace (not cut short by timing or a cap).
    pub fn replayable(&self) -> bool {
        self.flags & (fmt::FLAG_TERMINATED_RUNNING | fmt::FLAG_DECISIONS_CUT) == 0
    }

    /// Recorded by an rdna2 device's shader walk (`FLAG_SHADER_WALK`).
    pub fn shader_walk(&self) -> bool {
        self.flags & fmt::FLAG_SHADER_WALK != 0
    }
}

/// A whole log, in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RayLog {
    pub lines: Vec<Line>,
    pub traces: Vec<TraceRec>,
}

/// A malformed log: what is wrong and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogError {
    pub offset: usize,
    pub what: String,
}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed ray log at byte {}: {}", self.offset, self.what)
    }
}

impl std::error::Error for LogError {}

/// Encodes one TRACE record (tag included) onto `out`.
pub fn encode_trace(out: &mut Vec<u8>, t: &TraceRec) {
    use fmt::trace as tr;
    let start = out.len();
    out.push(fmt::TAG_TRACE);
    out.resize(start + 1 + tr::FIXED, 0);
    let b = &mut out[start + 1..];
    let put32 = |b: &mut [u8], o: usize, v: u32| b[o..o + 4].copy_from_slice(&v.to_le_bytes());
    for i in 0..3 {
        put32(b, tr::ORIGIN + 4 * i, t.ray.origin[i].to_bits());
        put32(b, tr::DIR + 4 * i, t.ray.dir[i].to_bits());
    }
    put32(b, tr::TMIN, t.ray.tmin.to_bits());
    put32(b, tr::TMAX, t.ray.tmax.to_bits());
    put32(b, tr::FLAGS, t.ray.flags);
    put32(b, tr::CULL_MASK, t.ray.cull_mask);
    b[tr::ACCEL..tr::ACCEL + 8].copy_from_slice(&t.ray.accel.to_le_bytes());
    put32(b, tr::STATUS, t.result.status);
    for i in 0..fmt::HIT_WORDS {
        put32(b, tr::HIT + 4 * i, t.result.hit[i]);
    }
    b[tr::TRI..tr::TRI + 8].copy_from_slice(&t.result.tri.to_le_bytes());
    let n = t.decisions.len().min(u16::MAX as usize);
    let cut = if n < t.decisions.len() { fmt::FLAG_DECISIONS_CUT } else { 0 };
    b[tr::TRACE_FLAGS] = t.flags | cut;
    b[tr::RESERVED] = 0;
    b[tr::DECISIONS..tr::DECISIONS + 2].copy_from_slice(&(n as u16).to_le_bytes());
    use fmt::decision as dc;
    for d in &t.decisions[..n] {
        let at = out.len();
        out.resize(at + dc::BYTES, 0);
        let b = &mut out[at..];
        for (o, v) in [
            (dc::ACTION, d.action),
            (dc::T_GEN, d.t_gen),
            (dc::KIND, d.cand.kind),
            (dc::T, d.cand.t),
            (dc::PRIM, d.cand.prim),
            (dc::GEOM, d.cand.geom),
            (dc::INST, d.cand.inst),
        ] {
            put32(b, o, v);
        }
    }
}

/// Encodes one LINE record onto `out`.
pub fn encode_line(out: &mut Vec<u8>, addr: u64, data: &[u8; LINE_BYTES]) {
    out.push(fmt::TAG_LINE);
    out.extend_from_slice(&addr.to_le_bytes());
    out.extend_from_slice(data);
}

/// The file header.
pub fn encode_header(out: &mut Vec<u8>) {
    let mut h = [0u8; fmt::header::BYTES];
    h[fmt::header::MAGIC..fmt::header::MAGIC + 8].copy_from_slice(&fmt::MAGIC);
    h[fmt::header::VERSION..fmt::header::VERSION + 4].copy_from_slice(&fmt::VERSION.to_le_bytes());
    h[fmt::header::LINE_BYTES..fmt::header::LINE_BYTES + 4].copy_from_slice(&(LINE_BYTES as u32).to_le_bytes());
    out.extend_from_slice(&h);
}

impl RayLog {
    /// The whole log as a file: header, then every line before the first trace that comes
    /// after it in `lines_before` order.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        encode_header(&mut out);
        let mut li = 0;
        for t in &self.traces {
            while li < t.lines_before.min(self.lines.len()) {
                encode_line(&mut out, self.lines[li].0, &self.lines[li].1);
                li += 1;
            }
            encode_trace(&mut out, t);
        }
        for l in &self.lines[li..] {
            encode_line(&mut out, l.0, &l.1);
        }
        out
    }

    /// Reads a log, checking every length: a truncated or malformed file is an error.
    pub fn parse(b: &[u8]) -> Result<RayLog, LogError> {
        let err = |offset: usize, what: String| LogError { offset, what };
        let h = fmt::header::BYTES;
        if b.len() < 8 || b[..8] != fmt::MAGIC {
            return Err(err(0, "not a ray log (bad magic; expected \"VXRAYLOG\")".into()));
        }
        if b.len() < h {
            return Err(err(b.len(), format!("truncated header ({} of {h} bytes)", b.len())));
        }
        let version = rd_u32(b, fmt::header::VERSION);
        if version != fmt::VERSION {
            return Err(err(
                fmt::header::VERSION,
                format!("unsupported version {version} (this tool reads {})", fmt::VERSION),
            ));
        }
        let lb = rd_u32(b, fmt::header::LINE_BYTES);
        if lb as usize != LINE_BYTES {
            return Err(err(fmt::header::LINE_BYTES, format!("line size {lb}, expected {LINE_BYTES}")));
        }
        let mut log = RayLog::default();
        let mut at = h;
        while at < b.len() {
            let rec = at;
            let tag = b[at];
            at += 1;
            let need = |at: usize, n: usize, what: &str| -> Result<(), LogError> {
                if b.len() - at < n {
                    Err(err(rec, format!("truncated {what} record ({} of {n} bytes)", b.len() - at)))
                } else {
                    Ok(())
                }
            };
            match tag {
                fmt::TAG_LINE => {
                    need(at, fmt::line::BYTES, "LINE")?;
                    let addr = rd_u64(b, at + fmt::line::ADDR);
                    if !addr.is_multiple_of(LINE_BYTES as u64) {
                        return Err(err(rec, format!("line address {addr:#x} is not 64-byte aligned")));
                    }
                    let mut data = [0u8; LINE_BYTES];
                    data.copy_from_slice(&b[at + fmt::line::DATA..at + fmt::line::BYTES]);
                    log.lines.push((addr, data));
                    at += fmt::line::BYTES;
                }
                fmt::TAG_TRACE => {
                    use fmt::trace as tr;
                    need(at, tr::FIXED, "TRACE")?;
                    let t = &b[at..at + tr::FIXED];
                    let f3 = |o: usize| [rd_f32(t, o), rd_f32(t, o + 4), rd_f32(t, o + 8)];
                    let ray = TraceRay {
                        origin: f3(tr::ORIGIN),
                        tmin: rd_f32(t, tr::TMIN),
                        dir: f3(tr::DIR),
                        tmax: rd_f32(t, tr::TMAX),
                        flags: rd_u32(t, tr::FLAGS),
                        cull_mask: rd_u32(t, tr::CULL_MASK),
                        accel: rd_u64(t, tr::ACCEL),
                    };
                    let result = TraceResult {
                        status: rd_u32(t, tr::STATUS),
                        hit: std::array::from_fn(|i| rd_u32(t, tr::HIT + 4 * i)),
                        tri: rd_u64(t, tr::TRI),
                    };
                    if result.status > rtu_abi::STS_PENDING {
                        return Err(err(rec, format!("trace status {} is not an RTU status", result.status)));
                    }
                    let flags = t[tr::TRACE_FLAGS];
                    if flags & !fmt::FLAGS_KNOWN != 0 {
                        return Err(err(rec, format!("unknown trace flags {flags:#04x}")));
                    }
                    let n = u16::from_le_bytes([t[tr::DECISIONS], t[tr::DECISIONS + 1]]) as usize;
                    at += tr::FIXED;
                    use fmt::decision as dc;
                    need(at, n * dc::BYTES, "TRACE")?;
                    let decisions = (0..n)
                        .map(|i| {
                            let d = &b[at + i * dc::BYTES..];
                            Decision {
                                action: rd_u32(d, dc::ACTION),
                                t_gen: rd_u32(d, dc::T_GEN),
                                cand: CandKey {
                                    kind: rd_u32(d, dc::KIND),
                                    t: rd_u32(d, dc::T),
                                    prim: rd_u32(d, dc::PRIM),
                                    geom: rd_u32(d, dc::GEOM),
                                    inst: rd_u32(d, dc::INST),
                                },
                            }
                        })
                        .collect();
                    at += n * dc::BYTES;
                    log.traces.push(TraceRec { ray, result, flags, decisions, lines_before: log.lines.len() });
                }
                other => return Err(err(rec, format!("unknown record tag {other}"))),
            }
        }
        Ok(log)
    }

    /// Reads and parses a log file.
    pub fn read(path: &std::path::Path) -> Result<RayLog, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        RayLog::parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Whether this process records a ray log (`VORTEX_RAYLOG` names a file that could be
/// created): compilers emit the rdna2 walk's log hooks only then.
pub fn enabled() -> bool {
    Sink::from_env().is_some()
}

struct SinkInner {
    out: Option<BufWriter<Box<dyn Write + Send>>>,
    /// Contents of every line as last written.
    lines: FxHashMap<u64, [u8; LINE_BYTES]>,
    traces: u64,
}

/// The open log file, shared by every RTU front end of the process that records into it.
pub struct Sink {
    path: String,
    inner: Mutex<SinkInner>,
}

impl Sink {
    /// Creates (truncates) `path` and writes the header.
    pub fn create(path: &str) -> std::io::Result<Arc<Sink>> {
        let file = std::fs::File::create(path)?;
        let mut out: BufWriter<Box<dyn Write + Send>> = BufWriter::with_capacity(1 << 20, Box::new(file));
        let mut h = Vec::new();
        encode_header(&mut h);
        out.write_all(&h)?;
        out.flush()?;
        Ok(Arc::new(Sink {
            path: path.to_string(),
            inner: Mutex::new(SinkInner { out: Some(out), lines: FxHashMap::default(), traces: 0 }),
        }))
    }

    /// The process's log when `VORTEX_RAYLOG` names a file (opened on first use, shared by
    /// every device); `None` when unset or when the file cannot be created (reported once).
    pub fn from_env() -> Option<Arc<Sink>> {
        static SINK: OnceLock<Option<Arc<Sink>>> = OnceLock::new();
        SINK.get_or_init(|| {
            let path = std::env::var("VORTEX_RAYLOG").ok().filter(|p| !p.trim().is_empty())?;
            match Sink::create(&path) {
                Ok(s) => {
                    tracing::info!("VORTEX_RAYLOG: recording every trace into {path}");
                    Some(s)
                }
                Err(e) => {
                    tracing::error!("VORTEX_RAYLOG={path}: {e}; no ray log is written");
                    None
                }
            }
        })
        .clone()
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// Traces written so far.
    pub fn traces(&self) -> u64 {
        self.inner.lock().traces
    }

    /// Appends a unit's lines (those new or changed) and then its trace records, and
    /// flushes the file. A write error is reported once and ends the log.
    pub(crate) fn append(&self, lines: &[Line], traces: &[u8], n: u64) {
        let mut g = self.inner.lock();
        let inner = &mut *g;
        let Some(out) = inner.out.as_mut() else { return };
        let mut buf = Vec::with_capacity(lines.len() * (1 + fmt::line::BYTES) + traces.len());
        for (addr, data) in lines {
            if inner.lines.get(addr) != Some(data) {
                inner.lines.insert(*addr, *data);
                encode_line(&mut buf, *addr, data);
            }
        }
        buf.extend_from_slice(traces);
        if let Err(e) = out.write_all(&buf).and_then(|()| out.flush()) {
            tracing::error!("VORTEX_RAYLOG={}: {e}; the log stops here", self.path);
            inner.out = None;
            return;
        }
        inner.traces += n;
    }
}

/// What a trace in progress has gathered.
struct Open {
    ray: TraceRay,
    decisions: Vec<Decision>,
    flags: u8,
}

/// Lines the walks of one front end read since its last flush.
#[derive(Default)]
pub struct LineSet {
    seen: FxHashSet<u64>,
    pub(crate) lines: Vec<Line>,
}

impl LineSet {
    /// Notes every line of `[addr, addr+len)`, copying the bytes of those not seen yet.
    pub(crate) fn note(&mut self, mem: &MemoryMap, addr: u64, len: usize) {
        let lb = LINE_BYTES as u64;
        let first = addr / lb * lb;
        let mut line = first;
        while line < addr + len.max(1) as u64 {
            if self.seen.insert(line) {
                let mut data = [0u8; LINE_BYTES];
                // The access itself is mapped; a line may run past its region's ends, and
                // those bytes (never read) stay zero.
                mem.read_mapped(line, &mut data);
                self.lines.push((line, data));
            }
            line += lb;
        }
    }
}

/// A [`NodeSource`] that notes the lines of every record the walk reads through it.
pub struct LineTap<'a, S: NodeSource> {
    pub inner: &'a mut S,
    pub mem: &'a MemoryMap,
    pub lines: &'a mut LineSet,
}

impl<S: NodeSource> NodeSource for LineTap<'_, S> {
    #[inline]
    fn bytes(&mut self, addr: u64, len: usize) -> Result<Option<&[u8]>, MemFault> {
        let r = self.inner.bytes(addr, len)?;
        if r.is_some() {
            self.lines.note(self.mem, addr, len);
        }
        Ok(r)
    }

    #[inline]
    fn new_step(&mut self) {
        self.inner.new_step();
    }

    // The tap must not change how the walk drives the wrapped source (the timed source
    // starts a new RTCache trip per record).
    const TRACKS_STEPS: bool = S::TRACKS_STEPS;
}

/// One RTU front end's recorder: the traces in progress per (warp, query-lane context),
/// the lines read, and the finished records waiting for the next flush.
pub struct Recorder {
    sink: Arc<Sink>,
    pub lines: LineSet,
    open: FxHashMap<(u32, u32), Open>,
    buf: Vec<u8>,
    n: u64,
}

impl Recorder {
    pub fn new(sink: Arc<Sink>) -> Recorder {
        Recorder { sink, lines: LineSet::default(), open: FxHashMap::default(), buf: Vec::new(), n: 0 }
    }

    pub fn sink(&self) -> &Arc<Sink> {
        &self.sink
    }

    fn emit(&mut self, o: Open, row: &[u32], extra_flags: u8) {
        let rec = TraceRec {
            ray: o.ray,
            result: TraceResult::of_row(row),
            flags: o.flags | extra_flags,
            decisions: o.decisions,
            lines_before: 0,
        };
        encode_trace(&mut self.buf, &rec);
        self.n += 1;
    }

    /// TRACE armed context `ctx` of `warp` with `ray`; `row` is the record before the arm
    /// (a trace still open there was left by the shader: it is written as it stands).
    pub fn arm(&mut self, warp: usize, ctx: usize, ray: &TraceRay, row: &[u32]) {
        if let Some(o) = self.open.remove(&(warp as u32, ctx as u32)) {
            self.emit(o, row, fmt::FLAG_OPEN);
        }
        self.open.insert((warp as u32, ctx as u32), Open { ray: *ray, decisions: Vec::new(), flags: 0 });
    }

    /// CONTINUE answered the candidate in `row` with `action` (and `t_gen`).
    pub fn decide(&mut self, warp: usize, ctx: usize, action: u32, t_gen: f32, row: &[u32]) {
        if let Some(o) = self.open.get_mut(&(warp as u32, ctx as u32)) {
            o.decisions.push(Decision { action, t_gen: t_gen.to_bits(), cand: CandKey::of_row(row) });
        }
    }

    /// CONTINUE terminated a walk the RTU was still running (timed mode).
    pub fn terminated_running(&mut self, warp: usize, ctx: usize) {
        if let Some(o) = self.open.get_mut(&(warp as u32, ctx as u32)) {
            o.flags |= fmt::FLAG_TERMINATED_RUNNING;
        }
    }

    /// The walk of context `ctx` ended; `row` is its terminal record.
    pub fn finish(&mut self, warp: usize, ctx: usize, row: &[u32]) {
        if let Some(o) = self.open.remove(&(warp as u32, ctx as u32)) {
            self.emit(o, row, 0);
        }
    }

    /// The warp slot is reused: traces its last warp left open are written as they stand
    /// (`window` holds the old warp's records, `slot_count` words each).
    pub fn close_warp(&mut self, warp: usize, window: &[u32], slot_count: usize) {
        let mut keys: Vec<(u32, u32)> = self.open.keys().copied().filter(|k| k.0 == warp as u32).collect();
        keys.sort_unstable();
        for k in keys {
            let o = self.open.remove(&k).expect("key just listed");
            let base = k.1 as usize * slot_count;
            if let Some(row) = window.get(base..base + slot_count) {
                self.emit(o, row, fmt::FLAG_OPEN);
            }
        }
    }

    /// Hands the lines and finished traces to the sink (end of a dispatch). Lines are
    /// forgotten, so the next dispatch notes them again (the sink drops unchanged ones).
    pub fn flush(&mut self) {
        if self.buf.is_empty() && self.lines.lines.is_empty() {
            return;
        }
        self.sink.append(&self.lines.lines, &self.buf, self.n);
        self.lines = LineSet::default();
        self.buf.clear();
        self.n = 0;
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.flush();
    }
}
