//! The traversal walker: one resumable state machine per (warp, query slot, lane).
//!
//! Every step asks a [`NodeSource`] for exactly one record (AS header, internal node, leaf,
//! instance leaf). Functional mode answers at once from [`MemoryMap`]; a timed mode answers
//! later — the step then returns [`Outcome::Parked`] with its state unchanged and is simply
//! run again when the line has landed (every state is idempotent until it completes).
//!
//! Semantics (see `docs/BVH.md` for the full story):
//! - nearest-first descent: a node's hit children are sorted by entry distance (ties by
//!   slot); the nearest is visited next, the others pushed farthest first;
//! - a short stack of `RtuConfig::stack_depth` entries; on overflow the bottom entry (the
//!   one the walk would reach last) is dropped and remembered as the *resume point*;
//! - when a level's stack runs dry with a resume point set, the walk restarts from that
//!   level's root with the current best t and re-descends straight to the resume point
//!   (records are laid out in pre-order, so the child whose subtree holds it is found from
//!   the child offsets), pushing only what comes after it in the walk order. Nothing before
//!   the resume point is visited twice, so no candidate is ever offered twice. Restarts
//!   are bounded by `restart_cap` per BLAS entry (and per trace for the top level);
//! - total visits per trace are bounded by `max_visits`;
//! - a TLAS instance leaf moves the ray into object space with the stored world-to-object
//!   matrix (no renormalisation: t is the same in both spaces), walks the BLAS and comes
//!   back when the BLAS's part of the stack is exhausted;
//! - opaque triangles in `[tmin, best_t]` commit directly; non-opaque triangles and every
//!   AABB stop the walk with a candidate ([`Outcome::Yield`]).
//!
//! A malformed structure (bad header, out-of-range child, a record of the wrong kind, a
//! layout that breaks the pre-order rule) or an exceeded bound is a fault, never a miss.

use super::classifier::{self as cls, Opacity, TriAction};
use super::isect::{self, RayPrep, IDENTITY_3X4};
use super::RtuStats;
use crate::abi::bvh::{self, header, inst, node, proc, tri};
use crate::abi::rtu::{self as rtu_abi, span};
use crate::abi::{rd_f32, rd_u32, rd_u64};
use crate::config::RtuConfig;
use crate::fault::{Fault, FaultKind};
use crate::mem::{MemFault, MemFaultKind, MemoryMap, Region};

/// Where the walker's records come from.
pub trait NodeSource {
    /// Copies the `out.len()` bytes at device address `addr` into `out` and returns true,
    /// or returns false when the bytes are not there yet (the request stays outstanding and
    /// the walker asks again for the same bytes when resumed).
    fn fetch(&mut self, addr: u64, out: &mut [u8]) -> Result<bool, MemFault>;

    /// The walk moved on to another record: what was fetched for the previous one may not
    /// answer the next. A timed source starts a new fetch here, so every record costs a
    /// trip to the RTCache even when it shares a line with the last; the functional source
    /// ignores it.
    #[inline]
    fn new_step(&mut self) {}
}

/// Functional-mode source: reads device memory at once, remembering the last region hit.
pub struct MemSource<'a> {
    mem: &'a MemoryMap,
    hot: Option<&'a Region>,
}

impl<'a> MemSource<'a> {
    pub fn new(mem: &'a MemoryMap) -> MemSource<'a> {
        MemSource { mem, hot: None }
    }
}

impl MemSource<'_> {
    /// Faults exactly as a fetch of `len` bytes at `addr` would, without reading them.
    pub fn check(&mut self, addr: u64, len: u64) -> Result<(), MemFault> {
        match self.hot {
            Some(r) if addr >= r.base && addr.checked_add(len).is_some_and(|e| e <= r.base + r.len) => Ok(()),
            _ => {
                let r = self.mem.region(addr, len).ok_or(MemFault { addr, size: len, kind: MemFaultKind::Unmapped })?;
                self.hot = Some(r);
                Ok(())
            }
        }
    }
}

impl NodeSource for MemSource<'_> {
    #[inline]
    fn fetch(&mut self, addr: u64, out: &mut [u8]) -> Result<bool, MemFault> {
        let len = out.len() as u64;
        let inside = |r: &Region| addr >= r.base && addr.checked_add(len).is_some_and(|e| e <= r.base + r.len);
        let r = match self.hot {
            Some(r) if inside(r) => r,
            _ => {
                let r = self.mem.region(addr, len).ok_or(MemFault { addr, size: len, kind: MemFaultKind::Unmapped })?;
                self.hot = Some(r);
                r
            }
        };
        // SAFETY: `[addr, addr+len)` lies inside the region's live backing (checked above)
        // and `out` is a host buffer, so the ranges cannot overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(
                r.backing.host_ptr().add((addr - r.base) as usize),
                out.as_mut_ptr(),
                out.len(),
            )
        };
        Ok(true)
    }
}

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

/// Largest record the walker fetches in one piece.
const MAX_RECORD: usize = max(
    max(tri::bytes(tri::MAX_COUNT), proc::bytes(proc::MAX_COUNT)),
    max(max(inst::BYTES, header::BYTES), bvh::node_bytes(6)),
);

/// Most children a node may have.
const MAX_WIDTH: usize = 6;

/// What a run of the walker ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The walk is over; the committed span holds the result.
    Done,
    /// A candidate is in the candidate span: `STS_YIELD_ANYHIT` or `STS_YIELD_PROC`.
    Yield(u32),
    /// Waiting for a record (timed mode only).
    Parked,
}

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    word: u32,
    t: f32,
}

/// A short stack as a ring: a push onto a full stack drops the bottom entry.
#[derive(Default)]
struct ShortStack {
    buf: Vec<Entry>,
    bottom: usize,
    len: usize,
}

impl ShortStack {
    fn reset(&mut self, cap: usize) {
        if self.buf.len() != cap {
            self.buf.clear();
            self.buf.resize(cap, Entry::default());
        }
        self.bottom = 0;
        self.len = 0;
    }

    /// Pushes `e`; returns the entry dropped to make room, if any.
    #[inline]
    fn push(&mut self, e: Entry) -> Option<Entry> {
        let cap = self.buf.len();
        let mut dropped = None;
        if self.len == cap {
            dropped = Some(self.buf[self.bottom]);
            self.bottom += 1;
            if self.bottom == cap {
                self.bottom = 0;
            }
            self.len -= 1;
        }
        let mut top = self.bottom + self.len;
        if top >= cap {
            top -= cap;
        }
        self.buf[top] = e;
        self.len += 1;
        dropped
    }

    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let mut i = self.bottom + self.len;
        if i >= self.buf.len() {
            i -= self.buf.len();
        }
        Some(self.buf[i])
    }
}

/// One acceleration structure being walked.
#[derive(Clone, Copy, Debug, Default)]
struct Level {
    base: u64,
    size: u64,
    root: u32,
    width: u32,
    kind: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Not armed.
    Idle,
    /// Fetch and check the AS header.
    Start,
    /// Visit the record a child word names.
    Visit(u32),
    /// Go on with the primitives of a leaf from index `next` (after a candidate).
    Leaf {
        word: u32,
        next: u8,
    },
    /// Take the next stack entry (or restart, or leave the BLAS, or finish).
    Pop,
    /// Re-descend from a root towards `target`; `word`'s subtree is `[lo, hi)`.
    Restart {
        word: u32,
        lo: u64,
        hi: u64,
        target: u32,
    },
    Done,
}

/// The instance a BLAS walk entered through.
#[derive(Clone, Copy, Debug)]
struct Instance {
    index: u32,
    custom_mask: u32,
    sbt_flags: u32,
    w2o: [f32; 12],
    o2w: [f32; 12],
}

impl Default for Instance {
    fn default() -> Self {
        Instance { index: 0, custom_mask: 0, sbt_flags: 0, w2o: IDENTITY_3X4, o2w: IDENTITY_3X4 }
    }
}

/// The per-lane traversal context.
pub struct Walk {
    state: State,
    world: RayPrep,
    obj: RayPrep,
    tmin: f32,
    best_t: f32,
    committed: bool,
    flags: u32,
    cull_mask: u32,
    top: Level,
    blas: Level,
    in_blas: bool,
    inst: Instance,
    stack: ShortStack,
    /// Stack entries (at the bottom) that belong to the top level while in a BLAS.
    top_entries: usize,
    top_resume: u32,
    blas_resume: u32,
    top_restarts: u32,
    blas_restarts: u32,
    visits: u64,
    /// RTU work done for this walk since the last `take_work`: records fetched plus
    /// triangle and AABB tests (what the traversal-cost heatmap shows per ray).
    work: u32,
}

impl Default for Walk {
    fn default() -> Self {
        Walk {
            state: State::Idle,
            world: RayPrep::default(),
            obj: RayPrep::default(),
            tmin: 0.0,
            best_t: 0.0,
            committed: false,
            flags: 0,
            cull_mask: 0,
            top: Level::default(),
            blas: Level::default(),
            in_blas: false,
            inst: Instance::default(),
            stack: ShortStack::default(),
            top_entries: 0,
            top_resume: 0,
            blas_resume: 0,
            top_restarts: 0,
            blas_restarts: 0,
            visits: 0,
            work: 0,
        }
    }
}

fn bad(detail: String) -> Fault {
    Fault::new(FaultKind::BadAccelerationStructure, detail)
}

#[inline]
fn v3(b: &[u8], off: usize) -> [f32; 3] {
    [rd_f32(b, off), rd_f32(b, off + 4), rd_f32(b, off + 8)]
}

fn m3x4(b: &[u8], off: usize) -> [f32; 12] {
    std::array::from_fn(|i| rd_f32(b, off + 4 * i))
}

/// Key order of the nearest-first walk: by entry distance, ties by slot.
#[inline]
fn before(a: (f32, usize), b: (f32, usize)) -> bool {
    a.0 < b.0 || (a.0 == b.0 && a.1 < b.1)
}

/// One child of a decoded node.
#[derive(Clone, Copy, Default)]
struct Child {
    word: u32,
    near: f32,
    hit: bool,
}

impl Walk {
    /// Arms the walk for a new trace of `accel` (non-zero). The caller has written the ray
    /// echo and the empty committed span.
    #[allow(clippy::too_many_arguments)]
    pub fn begin(
        &mut self,
        cfg: &RtuConfig,
        accel: u64,
        origin: [f32; 3],
        dir: [f32; 3],
        tmin: f32,
        tmax: f32,
        flags: u32,
        cull_mask: u32,
    ) {
        self.world = RayPrep::new(origin, dir);
        self.obj = self.world;
        self.tmin = tmin;
        self.best_t = tmax;
        self.committed = false;
        self.flags = flags;
        self.cull_mask = cull_mask;
        self.top = Level { base: accel, ..Level::default() };
        self.in_blas = false;
        self.inst = Instance::default();
        self.stack.reset(cfg.stack_depth.max(1) as usize);
        self.top_entries = 0;
        self.top_resume = 0;
        self.blas_resume = 0;
        self.top_restarts = 0;
        self.blas_restarts = 0;
        self.visits = 0;
        self.state = if self.world.is_degenerate() || tmin.partial_cmp(&tmax).is_none_or(|o| o.is_gt()) {
            State::Done
        } else {
            State::Start
        };
    }

    /// Marks the walk finished (TERMINATE, or a trace that never started).
    pub fn finish(&mut self) {
        self.state = State::Done;
    }

    /// True while the walk has more to do.
    pub fn is_live(&self) -> bool {
        !matches!(self.state, State::Done | State::Idle)
    }

    pub fn has_committed(&self) -> bool {
        self.committed
    }

    /// ACCEPT of the open candidate: commits it (an AABB as a generated hit at `t_gen`,
    /// barycentrics 0). Returns true when the ray flags make the commit end the walk.
    pub fn accept(&mut self, win: &mut [u32], t_gen: f32) -> bool {
        let (c, k) = (rtu_abi::CANDIDATE as usize, rtu_abi::COMMITTED as usize);
        let len = span::LEN as usize;
        win.copy_within(c..c + len, k);
        if win[c + span::KIND as usize] == rtu_abi::CANDIDATE_AABB {
            win[k + span::KIND as usize] = rtu_abi::COMMITTED_GENERATED;
            win[k + span::T as usize] = t_gen.to_bits();
            win[k + span::U as usize] = 0;
            win[k + span::V as usize] = 0;
            win[k + span::FRONT as usize] = 0;
            self.best_t = t_gen;
        } else {
            win[k + span::KIND as usize] = rtu_abi::COMMITTED_TRIANGLE;
            self.best_t = f32::from_bits(win[c + span::T as usize]);
        }
        self.committed = true;
        cls::terminate_on_commit(self.flags)
    }

    #[inline]
    fn ray(&self) -> &RayPrep {
        if self.in_blas {
            &self.obj
        } else {
            &self.world
        }
    }

    #[inline]
    fn level(&self) -> &Level {
        if self.in_blas {
            &self.blas
        } else {
            &self.top
        }
    }

    #[inline]
    fn inst_flags(&self) -> u32 {
        if self.in_blas {
            self.inst.sbt_flags >> 24
        } else {
            0
        }
    }

    /// Writes a hit (committed or candidate) into the span at `base`.
    #[allow(clippy::too_many_arguments)]
    fn write_span(
        &self,
        win: &mut [u32],
        base: u32,
        t: f32,
        u: f32,
        v: f32,
        prim: u32,
        geom: u32,
        kind: u32,
        front: bool,
    ) {
        let s = &mut win[base as usize..(base + span::LEN) as usize];
        s[span::T as usize] = t.to_bits();
        s[span::U as usize] = u.to_bits();
        s[span::V as usize] = v.to_bits();
        s[span::PRIM as usize] = prim;
        s[span::GEOM as usize] = geom;
        s[span::KIND as usize] = kind;
        s[span::FRONT as usize] = front as u32;
        let r = self.ray();
        for i in 0..3 {
            s[span::OBJ_ORIGIN as usize + i] = r.org[i].to_bits();
            s[span::OBJ_DIR as usize + i] = r.dir[i].to_bits();
        }
        let (inst, custom, sbt) = if self.in_blas {
            (self.inst.index, self.inst.custom_mask & 0xff_ffff, self.inst.sbt_flags & 0xff_ffff)
        } else {
            (0, 0, 0)
        };
        s[span::INST_ID as usize] = inst;
        s[span::CUSTOM as usize] = custom;
        s[span::SBT as usize] = sbt;
        let (o2w, w2o) = if self.in_blas { (&self.inst.o2w, &self.inst.w2o) } else { (&IDENTITY_3X4, &IDENTITY_3X4) };
        for i in 0..12 {
            s[span::O2W as usize + i] = o2w[i].to_bits();
            s[span::W2O as usize + i] = w2o[i].to_bits();
        }
    }

    /// RTU work done since the last call (records fetched plus primitive tests), and resets
    /// it: the front end attributes it to the lane that traced.
    pub fn take_work(&mut self) -> u32 {
        std::mem::take(&mut self.work)
    }

    /// Runs the walk until it finishes, yields a candidate or parks.
    pub fn run<S: NodeSource>(
        &mut self,
        src: &mut S,
        cfg: &RtuConfig,
        win: &mut [u32],
        st: &mut RtuStats,
    ) -> Result<Outcome, Fault> {
        let work = |s: &RtuStats| s.node_fetches + s.tri_tests + s.aabb_tests;
        let before = work(st);
        let out = self.run_steps(src, cfg, win, st);
        self.work = self.work.saturating_add((work(st) - before).min(u32::MAX as u64) as u32);
        out
    }

    fn run_steps<S: NodeSource>(
        &mut self,
        src: &mut S,
        cfg: &RtuConfig,
        win: &mut [u32],
        st: &mut RtuStats,
    ) -> Result<Outcome, Fault> {
        let mut buf = [0u8; MAX_RECORD];
        let mut at = self.state;
        loop {
            if self.state != at {
                at = self.state;
                src.new_step();
            }
            match self.state {
                State::Idle | State::Done => return Ok(Outcome::Done),
                State::Start => {
                    let base = self.top.base;
                    if !src.fetch(base, &mut buf[..header::BYTES])? {
                        return Ok(Outcome::Parked);
                    }
                    self.top = self.parse_header(base, &buf)?;
                    self.state = if self.top.root == 0 { State::Done } else { State::Visit(self.top.root) };
                }
                State::Visit(word) => {
                    if bvh::child_is_leaf(word) {
                        if let Some(out) = self.leaf(src, cfg, win, st, &mut buf, word, 0, true)? {
                            return Ok(out);
                        }
                    } else {
                        let lvl = *self.level();
                        let addr = self.record_addr(&lvl, word, bvh::node_bytes(lvl.width))?;
                        let nb = bvh::node_bytes(lvl.width);
                        if !src.fetch(addr, &mut buf[..nb])? {
                            return Ok(Outcome::Parked);
                        }
                        self.count_visit(cfg, st)?;
                        self.node(&lvl, word, &buf, st)?;
                    }
                }
                State::Leaf { word, next } => {
                    if let Some(out) = self.leaf(src, cfg, win, st, &mut buf, word, next, false)? {
                        return Ok(out);
                    }
                }
                State::Pop => self.pop(cfg, st)?,
                State::Restart { word, lo, hi, target } => {
                    let lvl = *self.level();
                    let nb = bvh::node_bytes(lvl.width);
                    let addr = self.record_addr(&lvl, word, nb)?;
                    if !src.fetch(addr, &mut buf[..nb])? {
                        return Ok(Outcome::Parked);
                    }
                    self.count_visit(cfg, st)?;
                    self.restart_step(&lvl, word, lo, hi, target, &buf, st)?;
                }
            }
        }
    }

    fn parse_header(&self, base: u64, buf: &[u8]) -> Result<Level, Fault> {
        let h = bvh::Header::parse(&buf[..header::BYTES])
            .map_err(|e| bad(format!("acceleration structure at {base:#x}: {e}")))?;
        if h.root != 0 && (h.size < header::BYTES as u64 + bvh::RECORD_ALIGN as u64 || h.size > u32::MAX as u64 * 16) {
            return Err(bad(format!("acceleration structure at {base:#x}: implausible size {}", h.size)));
        }
        Ok(Level { base, size: h.size, root: h.root, width: h.width, kind: h.kind })
    }

    /// Device address of the record `word` names, checked against the structure's extent.
    #[inline]
    fn record_addr(&self, lvl: &Level, word: u32, len: usize) -> Result<u64, Fault> {
        let off = bvh::child_offset(word);
        if off < header::BYTES as u64 || off + len as u64 > lvl.size {
            return Err(bad(format!(
                "child word {word:#010x} of the structure at {:#x} names bytes {off}..{} outside its records (size {})",
                lvl.base,
                off + len as u64,
                lvl.size
            )));
        }
        Ok(lvl.base + off)
    }

    #[inline]
    fn count_visit(&mut self, cfg: &RtuConfig, st: &mut RtuStats) -> Result<(), Fault> {
        self.visits += 1;
        st.node_fetches += 1;
        if self.visits > cfg.max_visits {
            return Err(bad(format!(
                "walk of the structure at {:#x} exceeded {} record visits (cyclic or corrupt BVH)",
                self.top.base, cfg.max_visits
            )));
        }
        Ok(())
    }

    #[inline]
    fn push(&mut self, e: Entry) {
        if let Some(dropped) = self.stack.push(e) {
            if self.in_blas && self.top_entries == 0 {
                self.blas_resume = dropped.word;
            } else {
                self.top_entries = self.top_entries.saturating_sub(1);
                self.top_resume = dropped.word;
            }
        }
    }

    /// Decodes a node's children against the current ray and interval.
    #[inline]
    fn decode_children(
        &self,
        lvl: &Level,
        word: u32,
        b: &[u8],
        st: &mut RtuStats,
    ) -> Result<([Child; MAX_WIDTH], usize), Fault> {
        let w = lvl.width;
        let n = b[node::COUNT] as usize;
        if b[node::KIND] != bvh::NODE_INTERNAL || n == 0 || n > w as usize {
            return Err(bad(format!(
                "record {word:#010x} of the structure at {:#x} is not an internal node of width {w} (kind {}, {} children)",
                lvl.base,
                b[node::KIND],
                n
            )));
        }
        let origin = v3(b, node::ORIGIN);
        let exps = [b[node::EXP] as i8, b[node::EXP + 1] as i8, b[node::EXP + 2] as i8];
        let scale = [bvh::exp2i(exps[0] as i32), bvh::exp2i(exps[1] as i32), bvh::exp2i(exps[2] as i32)];
        let (qlo, qhi) = (node::qlo(w), node::qhi(w));
        let r = self.ray();
        let mut out = [Child::default(); MAX_WIDTH];
        for (c, ch) in out.iter_mut().enumerate().take(n) {
            let cw = rd_u32(b, node::CHILD + 4 * c);
            let mut lo = [0.0f32; 3];
            let mut hi = [0.0f32; 3];
            for a in 0..3 {
                lo[a] = origin[a] + b[qlo + 3 * c + a] as f32 * scale[a];
                hi[a] = origin[a] + b[qhi + 3 * c + a] as f32 * scale[a];
            }
            let (near, hit) = isect::slab_near(r, lo, hi, self.tmin, self.best_t);
            *ch = Child { word: cw, near, hit };
        }
        st.box_tests += n as u64;
        Ok((out, n))
    }

    fn node(&mut self, lvl: &Level, word: u32, b: &[u8], st: &mut RtuStats) -> Result<(), Fault> {
        let (kids, n) = self.decode_children(lvl, word, b, st)?;
        // Insertion sort of the hit children by (near, slot).
        let mut order = [0usize; MAX_WIDTH];
        let mut nh = 0;
        for c in 0..n {
            if !kids[c].hit {
                continue;
            }
            let key = (kids[c].near, c);
            let mut i = nh;
            while i > 0 && before(key, (kids[order[i - 1]].near, order[i - 1])) {
                order[i] = order[i - 1];
                i -= 1;
            }
            order[i] = c;
            nh += 1;
        }
        if nh == 0 {
            self.state = State::Pop;
            return Ok(());
        }
        for &c in order[1..nh].iter().rev() {
            self.push(Entry { word: kids[c].word, t: kids[c].near });
        }
        let first = kids[order[0]].word;
        if first == 0 {
            return Err(bad(format!("node {word:#010x} of the structure at {:#x} has a null child", lvl.base)));
        }
        self.state = State::Visit(first);
        Ok(())
    }

    /// One step of a restart: at node `word` (subtree `[lo, hi)`), find the child whose
    /// subtree holds `target`, push the children that come after it in walk order, and go
    /// on into it.
    #[allow(clippy::too_many_arguments)]
    fn restart_step(
        &mut self,
        lvl: &Level,
        word: u32,
        lo: u64,
        hi: u64,
        target: u32,
        b: &[u8],
        st: &mut RtuStats,
    ) -> Result<(), Fault> {
        let (kids, n) = self.decode_children(lvl, word, b, st)?;
        let toff = bvh::child_offset(target);
        let layout_err = || {
            bad(format!(
                "restart in the structure at {:#x}: node {word:#010x} breaks the pre-order layout rule \
                 or does not lead to record {target:#010x}",
                lvl.base
            ))
        };
        let mut prev = lo;
        let mut p = None;
        for (c, k) in kids.iter().enumerate().take(n) {
            let off = bvh::child_offset(k.word);
            if off <= prev || off >= hi {
                return Err(layout_err());
            }
            prev = off;
            if off <= toff {
                p = Some(c);
            }
        }
        let p = p.ok_or_else(layout_err)?;
        if toff >= hi {
            return Err(layout_err());
        }
        let p_hi = if p + 1 < n { bvh::child_offset(kids[p + 1].word) } else { hi };
        let pkey = (kids[p].near, p);
        // Siblings after the path child, pushed farthest first.
        let mut after = [0usize; MAX_WIDTH];
        let mut na = 0;
        for c in 0..n {
            if c != p && kids[c].hit && before(pkey, (kids[c].near, c)) {
                let key = (kids[c].near, c);
                let mut i = na;
                while i > 0 && before(key, (kids[after[i - 1]].near, after[i - 1])) {
                    after[i] = after[i - 1];
                    i -= 1;
                }
                after[i] = c;
                na += 1;
            }
        }
        for &c in after[..na].iter().rev() {
            self.push(Entry { word: kids[c].word, t: kids[c].near });
        }
        let pw = kids[p].word;
        self.state = if !kids[p].hit {
            State::Pop
        } else if pw == target {
            State::Visit(target)
        } else if bvh::child_is_leaf(pw) {
            return Err(layout_err());
        } else {
            State::Restart { word: pw, lo: bvh::child_offset(pw), hi: p_hi, target }
        };
        Ok(())
    }

    fn pop(&mut self, cfg: &RtuConfig, st: &mut RtuStats) -> Result<(), Fault> {
        loop {
            if self.in_blas && self.stack.len == self.top_entries {
                if self.blas_resume != 0 {
                    let target = std::mem::take(&mut self.blas_resume);
                    self.blas_restarts += 1;
                    if self.blas_restarts > cfg.restart_cap {
                        return Err(bad(format!(
                            "walk of the BLAS at {:#x} needed more than {} restarts",
                            self.blas.base, cfg.restart_cap
                        )));
                    }
                    st.restarts += 1;
                    let lvl = self.blas;
                    self.state = self.restart_from(&lvl, target)?;
                    return Ok(());
                }
                self.in_blas = false;
                self.inst = Instance::default();
                continue;
            }
            if !self.in_blas && self.stack.len == 0 {
                if self.top_resume != 0 {
                    let target = std::mem::take(&mut self.top_resume);
                    self.top_restarts += 1;
                    if self.top_restarts > cfg.restart_cap {
                        return Err(bad(format!(
                            "walk of the structure at {:#x} needed more than {} restarts",
                            self.top.base, cfg.restart_cap
                        )));
                    }
                    st.restarts += 1;
                    let lvl = self.top;
                    self.state = self.restart_from(&lvl, target)?;
                    return Ok(());
                }
                self.state = State::Done;
                return Ok(());
            }
            let e = self.stack.pop().expect("stack holds entries of this level");
            if e.t <= self.best_t {
                self.state = State::Visit(e.word);
                return Ok(());
            }
        }
    }

    fn restart_from(&self, lvl: &Level, target: u32) -> Result<State, Fault> {
        if bvh::child_is_leaf(lvl.root) {
            return Err(bad(format!("restart in the structure at {:#x} whose root is a leaf", lvl.base)));
        }
        Ok(State::Restart { word: lvl.root, lo: bvh::child_offset(lvl.root), hi: lvl.size, target })
    }

    /// Visits (or resumes) a leaf. Returns `Some` when the run must return.
    #[allow(clippy::too_many_arguments)]
    fn leaf<S: NodeSource>(
        &mut self,
        src: &mut S,
        cfg: &RtuConfig,
        win: &mut [u32],
        st: &mut RtuStats,
        buf: &mut [u8; MAX_RECORD],
        word: u32,
        next: u8,
        first_visit: bool,
    ) -> Result<Option<Outcome>, Fault> {
        let lvl = *self.level();
        let addr = self.record_addr(&lvl, word, bvh::RECORD_ALIGN)?;
        if !src.fetch(addr, &mut buf[..bvh::RECORD_ALIGN])? {
            return Ok(Some(Outcome::Parked));
        }
        let kind = buf[0];
        let count = buf[1] as usize;
        let len = match kind {
            bvh::LEAF_TRI if (1..=tri::MAX_COUNT).contains(&count) => tri::bytes(count),
            bvh::LEAF_PROC if (1..=proc::MAX_COUNT).contains(&count) => proc::bytes(count),
            bvh::LEAF_INST => inst::BYTES,
            _ => {
                return Err(bad(format!(
                    "record {word:#010x} of the structure at {:#x} is not a leaf (kind {kind}, count {count})",
                    lvl.base
                )))
            }
        };
        let allowed = match kind {
            bvh::LEAF_INST => lvl.kind == bvh::KIND_TOP && !self.in_blas,
            _ => lvl.kind == bvh::KIND_BOTTOM,
        };
        if !allowed {
            return Err(bad(format!(
                "leaf kind {kind} at {word:#010x} does not belong in the {} structure at {:#x}",
                if lvl.kind == bvh::KIND_TOP { "top-level" } else { "bottom-level" },
                lvl.base
            )));
        }
        self.record_addr(&lvl, word, len)?;
        if len > bvh::RECORD_ALIGN && !src.fetch(addr, &mut buf[..len])? {
            return Ok(Some(Outcome::Parked));
        }
        if kind == bvh::LEAF_INST {
            return self.instance(src, cfg, st, buf, word);
        }
        if first_visit {
            self.count_visit(cfg, st)?;
        } else {
            st.node_fetches += 1;
        }
        let b = &buf[..len];
        let geom = rd_u32(b, tri::GEOM_INDEX);
        let inst_flags = self.inst_flags();
        let op = cls::opacity(rd_u32(b, tri::GEOM_FLAGS), inst_flags, self.flags);
        if kind == bvh::LEAF_TRI {
            if cls::cull_triangle_leaf(self.flags, op) {
                self.state = State::Pop;
                return Ok(None);
            }
            for i in next as usize..count {
                let rec = tri::HEADER + i * tri::RECORD;
                st.tri_tests += 1;
                let r = self.ray();
                let Some(h) = isect::triangle(
                    r,
                    v3(b, rec + tri::V0),
                    v3(b, rec + tri::V1),
                    v3(b, rec + tri::V2),
                    self.tmin,
                    self.best_t,
                ) else {
                    continue;
                };
                if self.committed && h.t >= self.best_t {
                    continue;
                }
                let front = cls::front_face(isect::geometric_front(&h), inst_flags);
                let prim = rd_u32(b, rec + tri::PRIM);
                match cls::triangle_action(self.flags, inst_flags, op, front) {
                    TriAction::Cull => continue,
                    TriAction::Commit => {
                        self.write_span(
                            win,
                            rtu_abi::COMMITTED,
                            h.t,
                            h.u,
                            h.v,
                            prim,
                            geom,
                            rtu_abi::COMMITTED_TRIANGLE,
                            front,
                        );
                        self.best_t = h.t;
                        self.committed = true;
                        if cls::terminate_on_commit(self.flags) {
                            self.state = State::Done;
                            return Ok(Some(Outcome::Done));
                        }
                    }
                    TriAction::Candidate => {
                        self.write_span(
                            win,
                            rtu_abi::CANDIDATE,
                            h.t,
                            h.u,
                            h.v,
                            prim,
                            geom,
                            rtu_abi::CANDIDATE_TRIANGLE,
                            front,
                        );
                        st.candidates += 1;
                        self.state = State::Leaf { word, next: i as u8 + 1 };
                        return Ok(Some(Outcome::Yield(rtu_abi::STS_YIELD_ANYHIT)));
                    }
                }
            }
        } else {
            if cls::cull_aabb_leaf(self.flags, op) {
                self.state = State::Pop;
                return Ok(None);
            }
            for i in next as usize..count {
                let rec = proc::HEADER + i * proc::RECORD;
                st.aabb_tests += 1;
                let (lo, hi) = (v3(b, rec + proc::MIN), v3(b, rec + proc::MAX));
                let Some(t) = isect::slab(self.ray(), lo, hi, self.tmin, self.best_t) else {
                    continue;
                };
                let prim = rd_u32(b, rec + proc::PRIM);
                self.write_span(win, rtu_abi::CANDIDATE, t, 0.0, 0.0, prim, geom, rtu_abi::CANDIDATE_AABB, false);
                win[rtu_abi::CAND_AABB_OPAQUE as usize] = (op == Opacity::Opaque) as u32;
                st.candidates += 1;
                self.state = State::Leaf { word, next: i as u8 + 1 };
                return Ok(Some(Outcome::Yield(rtu_abi::STS_YIELD_PROC)));
            }
        }
        self.state = State::Pop;
        Ok(None)
    }

    /// An instance leaf of the TLAS (already in `buf`): enter its BLAS.
    fn instance<S: NodeSource>(
        &mut self,
        src: &mut S,
        cfg: &RtuConfig,
        st: &mut RtuStats,
        buf: &mut [u8; MAX_RECORD],
        word: u32,
    ) -> Result<Option<Outcome>, Fault> {
        let b = &buf[..inst::BYTES];
        let custom_mask = rd_u32(b, inst::CUSTOM_MASK);
        let blas_addr = rd_u64(b, inst::BLAS);
        let instance = Instance {
            index: rd_u32(b, inst::INDEX),
            custom_mask,
            sbt_flags: rd_u32(b, inst::SBT_FLAGS),
            w2o: m3x4(b, inst::W2O),
            o2w: m3x4(b, inst::O2W),
        };
        if !cls::instance_visible(custom_mask >> 24, self.cull_mask) || blas_addr == 0 {
            self.count_visit(cfg, st)?;
            self.state = State::Pop;
            return Ok(None);
        }
        if !src.fetch(blas_addr, &mut buf[..header::BYTES])? {
            return Ok(Some(Outcome::Parked));
        }
        self.count_visit(cfg, st)?;
        let blas = self.parse_header(blas_addr, &buf[..])?;
        if blas.kind != bvh::KIND_BOTTOM {
            return Err(bad(format!(
                "instance {} (leaf {word:#010x}) of the TLAS at {:#x} references {blas_addr:#x}, which is not a bottom-level structure",
                instance.index, self.top.base
            )));
        }
        if blas.root == 0 {
            self.state = State::Pop;
            return Ok(None);
        }
        st.instance_transforms += 1;
        let o = isect::xform_point(&instance.w2o, self.world.org);
        let d = isect::xform_vector(&instance.w2o, self.world.dir);
        self.obj = RayPrep::new(o, d);
        self.inst = instance;
        self.blas = blas;
        self.in_blas = true;
        self.top_entries = self.stack.len;
        self.blas_resume = 0;
        self.blas_restarts = 0;
        self.state = if self.obj.is_degenerate() { State::Pop } else { State::Visit(blas.root) };
        Ok(None)
    }
}
