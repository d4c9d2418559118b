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
use super::isect::{self, BoxRay, RayPrep, IDENTITY_3X4};
use super::records::{self, HeaderCache, Level, Node, NotANode};
use super::RtuStats;
use crate::abi::bvh::{self, header, node};
use crate::abi::rd_u32;
use crate::abi::rtu::{self as rtu_abi, span};
use crate::config::RtuConfig;
use crate::fault::{Fault, FaultKind};
use crate::mem::{MemFault, MemoryMap, Region};

/// Where the walker's records come from.
pub trait NodeSource {
    /// The `len` bytes at device address `addr`, or None when they are not there yet (the
    /// request stays outstanding and the walker asks again for the same bytes when resumed).
    fn bytes(&mut self, addr: u64, len: usize) -> Result<Option<&[u8]>, MemFault>;

    /// The walk moved on to another record: what was fetched for the previous one may not
    /// answer the next. A timed source starts a new fetch here, so every record costs a
    /// trip to the RTCache even when it shares a line with the last; the functional source
    /// ignores it.
    #[inline]
    fn new_step(&mut self) {}

    /// Whether `new_step` does anything: when not, the walker skips noticing steps.
    const TRACKS_STEPS: bool = false;
}

/// Functional-mode source: reads device memory in place, remembering the last three regions
/// hit (a TLAS, a BLAS's header and its nodes can be three allocations, which every lane of
/// a TRACE entering an instance goes through in turn). A record that
/// crosses a page between two bindings of a sparse resource is copied out of them instead.
pub struct MemSource<'a> {
    mem: &'a MemoryMap,
    /// The recent regions' extents, most recent first.
    hot: [Extent; 3],
    /// The last record no one region held.
    pieced: Vec<u8>,
}

/// A region's extent and its backing's host address (an empty extent holds nothing).
#[derive(Clone, Copy)]
struct Extent {
    base: u64,
    len: u64,
    host: *mut u8,
}

impl Extent {
    const NONE: Extent = Extent { base: 0, len: 0, host: std::ptr::null_mut() };

    fn of(r: &Region) -> Extent {
        Extent { base: r.base, len: r.len, host: r.host_ptr() }
    }

    /// Host address of `[addr, addr+len)` when the extent holds all of it (`off` wraps past
    /// `self.len` below the base).
    #[inline(always)]
    fn at(&self, addr: u64, len: u64) -> Option<*const u8> {
        let off = addr.wrapping_sub(self.base);
        (off < self.len && len <= self.len - off).then(|| self.host.wrapping_add(off as usize) as *const u8)
    }
}

impl<'a> MemSource<'a> {
    pub fn new(mem: &'a MemoryMap) -> MemSource<'a> {
        MemSource { mem, hot: [Extent::NONE; 3], pieced: Vec::new() }
    }

    /// Host address of `[addr, addr+len)`, or the fault a read of it takes.
    #[inline]
    fn host(&mut self, addr: u64, len: u64) -> Result<*const u8, MemFault> {
        match self.hot[0].at(addr, len) {
            Some(p) => Ok(p),
            None => self.elsewhere(addr, len),
        }
    }

    /// [`Self::host`] past `hot[0]`: another recent region, or [`Self::find_host`]. Out of
    /// line, so the record fetch's test of `hot[0]` stays small enough to inline.
    #[inline(never)]
    fn elsewhere(&mut self, addr: u64, len: u64) -> Result<*const u8, MemFault> {
        if let Some(p) = self.hot[1].at(addr, len) {
            self.hot.swap(0, 1);
            return Ok(p);
        }
        if let Some(p) = self.hot[2].at(addr, len) {
            self.hot.rotate_right(1);
            return Ok(p);
        }
        self.find_host(addr, len)
    }

    /// [`Self::host`] when no recent region holds the bytes: another region, or (a
    /// record crossing a page between two bindings of a sparse resource) a copy of its
    /// pieces in `pieced`, valid until the next fetch.
    #[inline]
    fn find_host(&mut self, addr: u64, len: u64) -> Result<*const u8, MemFault> {
        let Some(r) = self.mem.region(addr, len) else {
            self.pieced.resize(len as usize, 0);
            self.mem.read(addr, &mut self.pieced)?;
            return Ok(self.pieced.as_ptr());
        };
        self.hot.rotate_right(1);
        self.hot[0] = Extent::of(r);
        Ok(r.host_ptr().wrapping_add((addr - r.base) as usize))
    }

    /// The memory map the source reads.
    pub fn map(&self) -> &'a MemoryMap {
        self.mem
    }

    /// Faults exactly as a fetch of `len` bytes at `addr` would, without using them.
    pub fn check(&mut self, addr: u64, len: u64) -> Result<(), MemFault> {
        self.host(addr, len).map(|_| ())
    }
}

impl NodeSource for MemSource<'_> {
    #[inline(always)]
    fn bytes(&mut self, addr: u64, len: usize) -> Result<Option<&[u8]>, MemFault> {
        // The last region, then the one before it inline (a walk alternates a TLAS and a
        // BLAS), the rest out of line.
        let p = match self.hot[0].at(addr, len as u64) {
            Some(p) => p,
            None => match self.hot[1].at(addr, len as u64) {
                Some(p) => {
                    self.hot.swap(0, 1);
                    p
                }
                None => self.elsewhere(addr, len as u64)?,
            },
        };
        // SAFETY: `p` is `addr`'s host address in a region holding all `len` bytes (an
        // extent of `hot` is a region of `mem`, found by `find_host`), whose backing the map
        // snapshot keeps alive for `'a`, or in `pieced`, which only the next fetch (a
        // `&mut self` call, after this slice's borrow ends) changes; every byte value is a
        // valid `u8`. A shader writing a structure while a query traces it is a data race
        // the Vulkan program must not have (the same contract as `MemoryMap::read`).
        Ok(Some(unsafe { std::slice::from_raw_parts(p, len) }))
    }
}

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
    /// Re-descend from a root towards the walk's [`Descent`] target, at node `word`.
    Restart {
        word: u32,
    },
    Done,
}

/// Where a restart is going: node `Restart::word`'s subtree is `[lo, hi)` (record offsets)
/// and holds `target`. Kept beside the state, so that the state is one word that every step
/// copies and compares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Descent {
    lo: u64,
    hi: u64,
    target: u32,
}

/// The per-lane traversal context.
pub struct Walk {
    state: State,
    /// The restart under way (meaningful in `State::Restart`).
    descent: Descent,
    world: RayPrep,
    obj: RayPrep,
    /// `world` and `obj` as the 4-wide node box test takes them.
    world_box: BoxRay,
    obj_box: BoxRay,
    tmin: f32,
    best_t: f32,
    committed: bool,
    flags: u32,
    cull_mask: u32,
    top: Level,
    blas: Level,
    in_blas: bool,
    /// The instance a BLAS walk entered through (meaningful while `in_blas`).
    inst: bvh::inst::Leaf,
    stack: ShortStack,
    /// Stack entries (at the bottom) that belong to the top level while in a BLAS.
    top_entries: usize,
    top_resume: u32,
    blas_resume: u32,
    top_restarts: u32,
    blas_restarts: u32,
    visits: u64,
    /// Accept every triangle candidate in place (functional mode's `TRACE_CONFIRM_ALL`,
    /// set by the front end after `begin`): see [`Self::confirm_candidate`].
    confirm_all: bool,
    /// RTU work done for this walk since the last `take_work`: records fetched plus
    /// triangle and AABB tests (what the traversal-cost heatmap shows per ray), counted
    /// only while `count_work`.
    work: u32,
    count_work: bool,
}

impl Default for Walk {
    fn default() -> Self {
        Walk {
            state: State::Idle,
            descent: Descent::default(),
            world: RayPrep::default(),
            obj: RayPrep::default(),
            world_box: BoxRay::default(),
            obj_box: BoxRay::default(),
            tmin: 0.0,
            best_t: 0.0,
            committed: false,
            flags: 0,
            cull_mask: 0,
            top: Level::default(),
            blas: Level::default(),
            in_blas: false,
            inst: bvh::inst::Leaf::default(),
            stack: ShortStack::default(),
            top_entries: 0,
            top_resume: 0,
            blas_resume: 0,
            top_restarts: 0,
            blas_restarts: 0,
            visits: 0,
            confirm_all: false,
            work: 0,
            count_work: false,
        }
    }
}

fn bad(detail: String) -> Fault {
    Fault::new(FaultKind::BadAccelerationStructure, detail)
}

/// Key order of the nearest-first walk: by entry distance, ties by slot.
#[inline]
fn before(a: (f32, usize), b: (f32, usize)) -> bool {
    a.0 < b.0 || (a.0 == b.0 && a.1 < b.1)
}

impl Walk {
    /// Arms the walk for a new trace of `accel` (non-zero). The caller has written the ray
    /// echo and the empty committed span.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
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
        // `obj`, `obj_box` and `inst` are only read in a BLAS, which sets them on entry.
        // Both forms of the ray from values in registers: reading back the fields just
        // stored, at other widths, would stall on store forwarding.
        let world = RayPrep::for_boxes(origin, dir);
        self.world_box = BoxRay::new(&world);
        let degenerate = world.is_degenerate();
        self.world = world;
        self.tmin = tmin;
        self.best_t = tmax;
        self.committed = false;
        self.flags = flags;
        self.cull_mask = cull_mask;
        self.top = Level { base: accel, ..Level::default() };
        self.in_blas = false;
        self.stack.reset(cfg.stack_depth.max(1) as usize);
        self.top_entries = 0;
        self.top_resume = 0;
        self.blas_resume = 0;
        self.top_restarts = 0;
        self.blas_restarts = 0;
        self.visits = 0;
        self.confirm_all = false;
        self.state =
            if degenerate || tmin.partial_cmp(&tmax).is_none_or(|o| o.is_gt()) { State::Done } else { State::Start };
    }

    /// Makes the walk accept its triangle candidates itself (`on`) or hand them to the shader.
    pub fn set_confirm_all(&mut self, on: bool) {
        self.confirm_all = on;
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
        if win[c + span::KIND as usize] != rtu_abi::CANDIDATE_AABB {
            let words: Span = win[c..c + len].try_into().expect("a span");
            let ct = rtu_abi::CANDIDATE_TRI as usize;
            return self.commit_candidate_triangle(win, words, [win[ct], win[ct + 1]]);
        }
        win.copy_within(c..c + len, k);
        win[k + span::KIND as usize] = rtu_abi::COMMITTED_GENERATED;
        win[k + span::T as usize] = t_gen.to_bits();
        win[k + span::U as usize] = 0;
        win[k + span::V as usize] = 0;
        win[k + span::FRONT as usize] = 0;
        let kt = rtu_abi::COMMITTED_TRI as usize;
        win[kt..kt + 2].fill(0);
        self.best_t = t_gen;
        self.committed = true;
        cls::terminate_on_commit(self.flags)
    }

    /// ACCEPT of a triangle candidate whose span holds `words` and whose record address
    /// words are `tri`: the committed span becomes the candidate's, as a committed
    /// triangle. Returns true when the ray flags make the commit end the walk.
    #[inline(always)]
    fn commit_candidate_triangle(&mut self, win: &mut [u32], mut words: Span, tri: [u32; 2]) -> bool {
        words[span::KIND as usize] = rtu_abi::COMMITTED_TRIANGLE;
        let (k, kt) = (rtu_abi::COMMITTED as usize, rtu_abi::COMMITTED_TRI as usize);
        win[k..k + span::LEN as usize].copy_from_slice(&words);
        win[kt..kt + 2].copy_from_slice(&tri);
        self.best_t = f32::from_bits(words[span::T as usize]);
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

    /// Writes a hit (committed or candidate) into the span at `base`. (Triangle hits also
    /// record their triangle's address: [`set_tri`].)
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
        let words = self.span_words(t, u, v, prim, geom, kind, front);
        win[base as usize..(base + span::LEN) as usize].copy_from_slice(&words);
    }

    /// The words of a hit's span ([`Self::write_span`]).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn span_words(&self, t: f32, u: f32, v: f32, prim: u32, geom: u32, kind: u32, front: bool) -> Span {
        let mut s: Span = [0; span::LEN as usize];
        s[span::T as usize] = t.to_bits();
        s[span::U as usize] = u.to_bits();
        s[span::V as usize] = v.to_bits();
        s[span::PRIM as usize] = prim;
        s[span::GEOM as usize] = geom;
        s[span::KIND as usize] = kind;
        s[span::FRONT as usize] = front as u32;
        let r = self.ray();
        let bits = |v: &[f32]| -> [u32; 12] { std::array::from_fn(|i| v.get(i).map_or(0, |x| x.to_bits())) };
        s[span::OBJ_ORIGIN as usize..span::OBJ_ORIGIN as usize + 3].copy_from_slice(&bits(&r.org)[..3]);
        s[span::OBJ_DIR as usize..span::OBJ_DIR as usize + 3].copy_from_slice(&bits(&r.dir)[..3]);
        let (inst, custom, sbt) = if self.in_blas {
            (self.inst.index, self.inst.custom_mask & 0xff_ffff, self.inst.sbt_flags & 0xff_ffff)
        } else {
            (0, 0, 0)
        };
        s[span::INST_ID as usize] = inst;
        s[span::CUSTOM as usize] = custom;
        s[span::SBT as usize] = sbt;
        let (o2w, w2o) = if self.in_blas { (&self.inst.o2w, &self.inst.w2o) } else { (&IDENTITY_3X4, &IDENTITY_3X4) };
        const _: () = assert!(span::W2O == span::O2W + 12 && span::W2O + 12 == span::LEN);
        s[span::O2W as usize..span::O2W as usize + 12].copy_from_slice(&bits(o2w));
        s[span::W2O as usize..span::W2O as usize + 12].copy_from_slice(&bits(w2o));
        s
    }

    /// RTU work done since the last call (records fetched plus primitive tests), and resets
    /// it: the front end attributes it to the lane that traced.
    pub fn take_work(&mut self) -> u32 {
        std::mem::take(&mut self.work)
    }

    /// Whether the walk counts its work (`take_work`; the work map of detailed stats).
    pub fn count_work(&mut self, on: bool) {
        self.count_work = on;
    }

    /// Runs the walk until it finishes, yields a candidate or parks. Records come from
    /// `src`; `headers` keeps the dispatch's decoded structure headers.
    pub fn run<S: NodeSource>(
        &mut self,
        src: &mut S,
        headers: &mut HeaderCache,
        cfg: &RtuConfig,
        win: &mut [u32],
        st: &mut RtuStats,
    ) -> Result<Outcome, Fault> {
        // The work map only (detailed stats): the walk's share of the unit's counters.
        let work = |s: &RtuStats| s.node_fetches + s.tri_tests + s.aabb_tests;
        let before = if self.count_work { work(st) } else { 0 };
        let out = self.run_steps(src, headers, cfg, win, st);
        if self.count_work {
            self.work = self.work.saturating_add((work(st) - before).min(u32::MAX as u64) as u32);
        }
        out
    }

    #[inline(always)]
    fn run_steps<S: NodeSource>(
        &mut self,
        src: &mut S,
        headers: &mut HeaderCache,
        cfg: &RtuConfig,
        win: &mut [u32],
        st: &mut RtuStats,
    ) -> Result<Outcome, Fault> {
        let mut at = self.state;
        loop {
            if S::TRACKS_STEPS && self.state != at {
                at = self.state;
                src.new_step();
            }
            match self.state {
                State::Idle | State::Done => return Ok(Outcome::Done),
                State::Start => {
                    let Some(top) = Self::header(src, headers, self.top.base)? else {
                        return Ok(Outcome::Parked);
                    };
                    self.top = top;
                    if top.is_bottom() {
                        // A BLAS traced as the top structure: its triangles take the world ray.
                        self.world = self.world.sheared();
                    }
                    self.state = if top.root == 0 { State::Done } else { State::Visit(top.root) };
                }
                State::Visit(word) => {
                    // Without step tracking `descend` takes a leaf too (inline, and it goes on
                    // with this level's entries after it).
                    if S::TRACKS_STEPS && bvh::child_is_leaf(word) {
                        if let Some(out) = self.leaf_step(src, headers, cfg, win, st, word, 0, true)? {
                            return Ok(out);
                        }
                    } else {
                        let out = match self.level().width {
                            4 => self.descend::<4, S>(src, headers, cfg, win, st, word)?,
                            _ => self.descend::<6, S>(src, headers, cfg, win, st, word)?,
                        };
                        if let Some(out) = out {
                            return Ok(out);
                        }
                    }
                }
                State::Leaf { word, next } => {
                    if let Some(out) = self.leaf_step(src, headers, cfg, win, st, word, next, false)? {
                        return Ok(out);
                    }
                }
                State::Pop => {
                    // The common cases inline: leaving a BLAS whose part of the stack is
                    // exhausted (no resume point), then an entry of the current level.
                    if self.in_blas && self.stack.len == self.top_entries && self.blas_resume == 0 {
                        self.in_blas = false;
                    }
                    let floor = if self.in_blas { self.top_entries } else { 0 };
                    if self.stack.len != floor {
                        let e = self.stack.pop().expect("stack holds entries of this level");
                        if e.t <= self.best_t {
                            self.state = State::Visit(e.word);
                        }
                    } else {
                        self.pop(cfg, st)?;
                    }
                }
                State::Restart { word } => {
                    let Descent { lo, hi, target } = self.descent;
                    let parked = match self.level().width {
                        4 => self.restart_node::<4, S>(src, cfg, st, word, lo, hi, target)?,
                        _ => self.restart_node::<6, S>(src, cfg, st, word, lo, hi, target)?,
                    };
                    if parked {
                        return Ok(Outcome::Parked);
                    }
                }
            }
        }
    }

    /// The header of the structure at `base` (None: parked).
    #[inline(always)]
    fn header<S: NodeSource>(src: &mut S, headers: &mut HeaderCache, base: u64) -> Result<Option<Level>, Fault> {
        let Some(b) = src.bytes(base, header::BYTES)? else {
            return Ok(None);
        };
        if let Some(l) = headers.get(base) {
            return Ok(Some(l));
        }
        Self::decode_header(headers, base, b).map(Some)
    }

    /// A header met for the first time in this dispatch.
    #[inline(never)]
    fn decode_header(headers: &mut HeaderCache, base: u64, b: &[u8]) -> Result<Level, Fault> {
        let l = Level::decode(base, b).map_err(|e| bad(format!("acceleration structure at {base:#x}: {}", e.0)))?;
        headers.insert(l);
        Ok(l)
    }

    /// The internal node `word` names, decoded as width `W` (None: parked).
    #[inline(always)]
    fn fetch_node<const W: usize, S: NodeSource>(&self, src: &mut S, word: u32) -> Result<Option<Node<W>>, Fault> {
        let lvl = self.level();
        let addr = record_addr(lvl, word, bvh::node_bytes(W as u32))?;
        let Some(b) = src.bytes(addr, bvh::node_bytes(W as u32))? else {
            return Ok(None);
        };
        Node::<W>::decode(b).map(Some).map_err(|e| {
            bad(format!(
                "record {word:#010x} of the structure at {:#x} is not an internal node of width {W} (kind {}, {} children)",
                lvl.base, e.kind, e.count
            ))
        })
    }

    /// Visits internal node `word` (state `Visit(word)`) and, when the source does not track
    /// steps (functional mode), goes on through the steps that follow for as long as they
    /// stay in this level: internal nodes, leaves (unless one yields, finishes the walk or
    /// enters a BLAS) and pops of this level's entries, exactly the steps the state machine
    /// would take one at a time, without leaving this loop. Returns what the run must return
    /// (`Parked`: the state is `Visit` of the node asked for), or None to go on with the
    /// state machine.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn descend<const W: usize, S: NodeSource>(
        &mut self,
        src: &mut S,
        headers: &mut HeaderCache,
        cfg: &RtuConfig,
        win: &mut [u32],
        st: &mut RtuStats,
        mut word: u32,
    ) -> Result<Option<Outcome>, Fault> {
        let mut lvl = *self.level();
        let mut in_blas = self.in_blas;
        let (tmin, mut best_t) = (self.tmin, self.best_t);
        let len = bvh::node_bytes(W as u32);
        // The counters live in locals for the loop (written back on every way out).
        let mut visits = self.visits;
        let (mut fetches, mut boxes) = (0u64, 0u64);
        let out = 'walk: loop {
            if !S::TRACKS_STEPS && bvh::child_is_leaf(word) {
                // A leaf of this level (the state is `Visit(word)`).
                self.visits = visits;
                let r = self.leaf(src, headers, cfg, win, st, word, 0, true);
                visits = self.visits;
                match r {
                    Err(e) => break 'walk Err(e),
                    Ok(Some(out)) => break 'walk Ok(Some(out)),
                    Ok(None) => {}
                }
                best_t = self.best_t;
                if self.in_blas != in_blas {
                    // An instance entered: its BLAS's root next, in this loop when the BLAS
                    // has this width.
                    match self.state {
                        State::Visit(root) if same_width::<W>(self.blas.width) => {
                            (lvl, in_blas, word) = (self.blas, true, root);
                            continue;
                        }
                        _ => break 'walk Ok(None),
                    }
                }
                if self.state != State::Pop {
                    break 'walk Ok(None);
                }
                match self.next_entry::<W>(&mut lvl, &mut in_blas, best_t) {
                    Some(w) => {
                        word = w;
                        continue;
                    }
                    None => break 'walk Ok(None),
                }
            }
            let (ray, bx) = if in_blas { (&self.obj, &self.obj_box) } else { (&self.world, &self.world_box) };
            let addr = match record_addr(&lvl, word, len) {
                Ok(a) => a,
                Err(e) => break 'walk Err(e),
            };
            let b = match src.bytes(addr, len) {
                Ok(Some(b)) => b,
                Ok(None) => {
                    self.state = State::Visit(word);
                    break 'walk Ok(Some(Outcome::Parked));
                }
                Err(e) => break 'walk Err(Fault::from(e)),
            };
            let mut near = [0.0; W];
            let (mut m, count) = match test_node::<W>(b, ray, bx, tmin, best_t, &mut near) {
                Ok(t) => t,
                Err(e) => {
                    break 'walk Err(bad(format!(
                        "record {word:#010x} of the structure at {:#x} is not an internal node of width {W} (kind {}, {} children)",
                        lvl.base, e.kind, e.count
                    )))
                }
            };
            visits += 1;
            fetches += 1;
            if visits > cfg.max_visits {
                break 'walk Err(too_many_visits(self.top.base, cfg));
            }
            boxes += count as u64;
            let next = if m == 0 {
                None
            } else {
                // The hit children by (near, slot): the nearest is next, the others are
                // pushed farthest first.
                let first = m.trailing_zeros() as usize;
                m &= m - 1;
                let first = if m == 0 {
                    first
                } else if m & (m - 1) == 0 {
                    // Two hits, the most common case after one: ordered by a select rather
                    // than a branch on the distances (which goes either way). The second
                    // has the higher slot, so it goes first only when strictly nearer.
                    let second = m.trailing_zeros() as usize;
                    let swap = near[second] < near[first];
                    let (a, z) = if swap { (second, first) } else { (first, second) };
                    self.push(Entry { word: child(b, z), t: near[z] });
                    a
                } else {
                    let mut order = [0usize; W];
                    order[0] = first;
                    let mut nh = 1;
                    while m != 0 {
                        let c = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let key = (near[c], c);
                        let mut i = nh;
                        while i > 0 && before(key, (near[order[i - 1]], order[i - 1])) {
                            order[i] = order[i - 1];
                            i -= 1;
                        }
                        order[i] = c;
                        nh += 1;
                    }
                    for &c in order[1..nh].iter().rev() {
                        self.push(Entry { word: child(b, c), t: near[c] });
                    }
                    order[0]
                };
                let first = child(b, first);
                if first == 0 {
                    break 'walk Err(bad(format!(
                        "node {word:#010x} of the structure at {:#x} has a null child",
                        lvl.base
                    )));
                }
                Some(first)
            };
            // The nearest hit child, else the stack's next entry (functional mode: of the TLAS once
            // a BLAS is done).
            let next = next.or_else(|| {
                if S::TRACKS_STEPS {
                    self.pop_level(in_blas, best_t)
                } else {
                    self.next_entry::<W>(&mut lvl, &mut in_blas, best_t)
                }
            });
            if S::TRACKS_STEPS {
                // The next internal node starts its step here rather than through more
                // passes of the state machine: the same new step and fetch, parked on its
                // lines (or visited at once if the source already has them).
                self.state = next.map_or(State::Pop, State::Visit);
                let Some(w) = next.filter(|&w| !bvh::child_is_leaf(w)) else { break 'walk Ok(None) };
                src.new_step();
                let addr = match record_addr(&lvl, w, len) {
                    Ok(a) => a,
                    Err(e) => break 'walk Err(e),
                };
                match src.bytes(addr, len) {
                    Ok(None) => break 'walk Ok(Some(Outcome::Parked)),
                    Ok(Some(_)) => {
                        word = w;
                        continue;
                    }
                    Err(e) => break 'walk Err(Fault::from(e)),
                }
            }
            let Some(w) = next else { break 'walk Ok(None) };
            word = w;
        };
        self.visits = visits;
        st.node_fetches += fetches;
        st.box_tests += boxes;
        out
    }

    /// `pop` while the stack holds entries of the current level: the next entry not beyond
    /// `best_t`, or None with the state `Pop` when the level has none left.
    #[inline(always)]
    fn pop_level(&mut self, in_blas: bool, best_t: f32) -> Option<u32> {
        let floor = if in_blas { self.top_entries } else { 0 };
        while self.stack.len != floor {
            let e = self.stack.pop().expect("stack holds entries of this level");
            if e.t <= best_t {
                return Some(e.word);
            }
        }
        self.state = State::Pop;
        None
    }

    /// Functional mode's next entry once a step of `descend` has no child to go on with:
    /// the level's next stack entry or, when a BLAS has none left and no resume point, the
    /// TLAS's next (leaving the BLAS as `State::Pop` would, when the TLAS has width `W`;
    /// `lvl` and `in_blas` follow). None with the state `Pop`, for the state machine, or
    /// `Done` when the TLAS has nothing left either (what `pop` would decide).
    #[inline(always)]
    fn next_entry<const W: usize>(&mut self, lvl: &mut Level, in_blas: &mut bool, best_t: f32) -> Option<u32> {
        if let Some(w) = self.pop_level(*in_blas, best_t) {
            return Some(w);
        }
        if *in_blas {
            if self.blas_resume != 0 || !same_width::<W>(self.top.width) {
                return None;
            }
            (self.in_blas, *in_blas, *lvl) = (false, false, self.top);
            if let Some(w) = self.pop_level(false, best_t) {
                return Some(w);
            }
        }
        if self.stack.len == 0 && self.top_resume == 0 {
            self.state = State::Done;
        }
        None
    }

    /// One restart step at node `word`. Returns true when parked.
    #[allow(clippy::too_many_arguments)]
    fn restart_node<const W: usize, S: NodeSource>(
        &mut self,
        src: &mut S,
        cfg: &RtuConfig,
        st: &mut RtuStats,
        word: u32,
        lo: u64,
        hi: u64,
        target: u32,
    ) -> Result<bool, Fault> {
        let Some(n) = self.fetch_node::<W, S>(src, word)? else {
            return Ok(true);
        };
        self.count_visit(cfg, st)?;
        self.restart_step(word, lo, hi, target, &n, st)?;
        Ok(false)
    }

    #[inline]
    fn count_visit(&mut self, cfg: &RtuConfig, st: &mut RtuStats) -> Result<(), Fault> {
        self.visits += 1;
        st.node_fetches += 1;
        if self.visits > cfg.max_visits {
            return Err(too_many_visits(self.top.base, cfg));
        }
        Ok(())
    }

    /// Pushes `e` onto the walk's stack; an entry the short stack drops becomes its level's
    /// resume point (the bottom `top_entries` entries belong to the top level while in a BLAS).
    #[inline(always)]
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

    /// The box PE on every child of `n` against the current ray and interval: entry
    /// distances and hits (only the first `count` lanes mean anything).
    #[inline(always)]
    fn test_children<const W: usize>(&self, n: &Node<W>, st: &mut RtuStats) -> ([f32; W], [bool; W]) {
        st.box_tests += n.count as u64;
        isect::slab_near_lanes(self.ray(), &n.lo, &n.hi, self.tmin, self.best_t)
    }

    /// One step of a restart: at node `word` (subtree `[lo, hi)`), find the child whose
    /// subtree holds `target`, push the children that come after it in walk order, and go
    /// on into it.
    #[allow(clippy::too_many_arguments)]
    fn restart_step<const W: usize>(
        &mut self,
        word: u32,
        lo: u64,
        hi: u64,
        target: u32,
        node: &Node<W>,
        st: &mut RtuStats,
    ) -> Result<(), Fault> {
        let (near, hit) = self.test_children(node, st);
        let n = node.count;
        let base = self.level().base;
        let toff = bvh::child_offset(target);
        let layout_err = || {
            bad(format!(
                "restart in the structure at {:#x}: node {word:#010x} breaks the pre-order layout rule \
                 or does not lead to record {target:#010x}",
                base
            ))
        };
        let mut prev = lo;
        let mut p = None;
        for c in 0..n {
            let off = bvh::child_offset(node.child[c]);
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
        let p_hi = if p + 1 < n { bvh::child_offset(node.child[p + 1]) } else { hi };
        let pkey = (near[p], p);
        // Siblings after the path child, pushed farthest first.
        let mut after = [0usize; W];
        let mut na = 0;
        for c in 0..n {
            if c != p && hit[c] && before(pkey, (near[c], c)) {
                let key = (near[c], c);
                let mut i = na;
                while i > 0 && before(key, (near[after[i - 1]], after[i - 1])) {
                    after[i] = after[i - 1];
                    i -= 1;
                }
                after[i] = c;
                na += 1;
            }
        }
        for &c in after[..na].iter().rev() {
            self.push(Entry { word: node.child[c], t: near[c] });
        }
        let pw = node.child[p];
        self.state = if !hit[p] {
            State::Pop
        } else if pw == target {
            State::Visit(target)
        } else if bvh::child_is_leaf(pw) {
            return Err(layout_err());
        } else {
            self.descent = Descent { lo: bvh::child_offset(pw), hi: p_hi, target };
            State::Restart { word: pw }
        };
        Ok(())
    }

    fn pop(&mut self, cfg: &RtuConfig, st: &mut RtuStats) -> Result<(), Fault> {
        loop {
            if self.in_blas && self.stack.len == self.top_entries {
                if self.blas_resume != 0 {
                    let target = std::mem::take(&mut self.blas_resume);
                    let lvl = self.blas;
                    (self.state, self.descent) = Self::restart(&mut self.blas_restarts, cfg, st, &lvl, target, "BLAS")?;
                    return Ok(());
                }
                self.in_blas = false;
                continue;
            }
            if !self.in_blas && self.stack.len == 0 {
                if self.top_resume != 0 {
                    let target = std::mem::take(&mut self.top_resume);
                    let lvl = self.top;
                    (self.state, self.descent) =
                        Self::restart(&mut self.top_restarts, cfg, st, &lvl, target, "structure")?;
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

    /// A restart of level `lvl` towards `target` (the short stack dropped it), counted
    /// against the level's restart budget.
    fn restart(
        restarts: &mut u32,
        cfg: &RtuConfig,
        st: &mut RtuStats,
        lvl: &Level,
        target: u32,
        what: &str,
    ) -> Result<(State, Descent), Fault> {
        *restarts += 1;
        if *restarts > cfg.restart_cap {
            return Err(bad(format!(
                "walk of the {what} at {:#x} needed more than {} restarts",
                lvl.base, cfg.restart_cap
            )));
        }
        st.restarts += 1;
        Self::restart_from(lvl, target)
    }

    fn restart_from(lvl: &Level, target: u32) -> Result<(State, Descent), Fault> {
        if bvh::child_is_leaf(lvl.root) {
            return Err(bad(format!("restart in the structure at {:#x} whose root is a leaf", lvl.base)));
        }
        Ok((State::Restart { word: lvl.root }, Descent { lo: bvh::child_offset(lvl.root), hi: lvl.size, target }))
    }

    /// [`Self::leaf`] out of line, for the state machine's steps (a leaf met by `descend`'s
    /// loop, the common case, takes the inlined one).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn leaf_step<S: NodeSource>(
        &mut self,
        src: &mut S,
        headers: &mut HeaderCache,
        cfg: &RtuConfig,
        win: &mut [u32],
        st: &mut RtuStats,
        word: u32,
        next: u8,
        first_visit: bool,
    ) -> Result<Option<Outcome>, Fault> {
        self.leaf(src, headers, cfg, win, st, word, next, first_visit)
    }

    /// Visits (or resumes) a leaf. Returns `Some` when the run must return. Inlined: a
    /// triangle leaf's test is the hot path; instance and procedural leaves, candidates and
    /// faults are out of line.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn leaf<S: NodeSource>(
        &mut self,
        src: &mut S,
        headers: &mut HeaderCache,
        cfg: &RtuConfig,
        win: &mut [u32],
        st: &mut RtuStats,
        word: u32,
        next: u8,
        first_visit: bool,
    ) -> Result<Option<Outcome>, Fault> {
        let lvl = *self.level();
        let addr = record_addr(&lvl, word, bvh::RECORD_ALIGN)?;
        // The first line of the record says what it is and how long.
        let Some(head) = src.bytes(addr, bvh::RECORD_ALIGN)? else {
            return Ok(Some(Outcome::Parked));
        };
        let kind = head[0];
        let len = match records::leaf_len(head) {
            Ok(len) => len,
            Err(e) => return Err(not_a_leaf(&lvl, word, e)),
        };
        let allowed = match kind {
            bvh::LEAF_INST => lvl.is_top() && !self.in_blas,
            _ => lvl.is_bottom(),
        };
        if !allowed {
            return Err(misplaced_leaf(&lvl, word, kind));
        }
        record_addr(&lvl, word, len)?;
        let Some(b) = src.bytes(addr, len)? else {
            return Ok(Some(Outcome::Parked));
        };
        if kind == bvh::LEAF_INST {
            self.inst = bvh::inst::Leaf::decode(b);
            return self.instance(src, headers, cfg, st, word);
        }
        if first_visit {
            self.count_visit(cfg, st)?;
        } else {
            st.node_fetches += 1;
        }
        if kind == bvh::LEAF_TRI {
            self.triangles(win, st, b, addr, word, next)
        } else {
            self.aabbs(win, st, b, word, next)
        }
    }

    /// The triangles of leaf `word` (bytes `b` at `addr`) from index `next`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn triangles(
        &mut self,
        win: &mut [u32],
        st: &mut RtuStats,
        b: &[u8],
        addr: u64,
        word: u32,
        next: u8,
    ) -> Result<Option<Outcome>, Fault> {
        let count = b[1] as usize;
        let (geom, geom_flags) = records::leaf_geometry(b);
        let inst_flags = self.inst_flags();
        let op = cls::opacity(geom_flags, inst_flags, self.flags);
        if cls::cull_triangle_leaf(self.flags, op) {
            self.state = State::Pop;
            return Ok(None);
        }
        // Up to four triangles at a time: the lane-parallel part of the test first,
        // then the hits in stored order against the current best t (an opaque commit
        // shrinks it), exactly as one test after the other.
        let mut i = next as usize;
        while i < count {
            let n = (count - i).min(4);
            let (ray, bx) = if self.in_blas { (&self.obj, &self.obj_box) } else { (&self.world, &self.world_box) };
            let m = isect::triangle4(ray, bx, b, i, n, self.tmin, self.best_t);
            let mut lanes = m.hit | m.exact;
            while lanes != 0 {
                let j = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                let k = i + j;
                let h = if m.exact >> j & 1 != 0 {
                    let (v, _) = records::triangle(b, k);
                    let Some(h) = isect::triangle(self.ray(), v[0], v[1], v[2], self.tmin, self.best_t) else {
                        continue;
                    };
                    h
                } else if m.t[j] <= self.best_t {
                    // The scalar test's `t <= tmax` with the current best t (`t >= tmin`
                    // held in the lanes).
                    m.lane(j)
                } else {
                    continue;
                };
                if self.committed && h.t >= self.best_t {
                    continue;
                }
                let prim = records::triangle(b, k).1;
                let front = cls::front_face(isect::geometric_front(&h), inst_flags);
                let tri = addr + records::triangle_record(k) as u64;
                match cls::triangle_action(self.flags, inst_flags, op, front) {
                    TriAction::Cull => continue,
                    TriAction::Commit => {
                        if self.commit_triangle(win, &h, prim, geom, front, tri) {
                            st.tri_tests += j as u64 + 1;
                            return Ok(Some(Outcome::Done));
                        }
                    }
                    TriAction::Candidate if self.confirm_all => {
                        if self.confirm_candidate(win, st, &h, prim, geom, front, tri) {
                            st.tri_tests += j as u64 + 1;
                            return Ok(Some(Outcome::Done));
                        }
                    }
                    TriAction::Candidate => {
                        st.tri_tests += j as u64 + 1;
                        return Ok(Some(self.triangle_candidate(win, st, &h, prim, geom, front, tri, word, k)));
                    }
                }
            }
            st.tri_tests += n as u64;
            i += n;
        }
        self.state = State::Pop;
        Ok(None)
    }

    /// Commits triangle hit `h` (record at `tri`). Returns true when the ray flags make
    /// the commit end the walk (the state is then `Done`).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn commit_triangle(
        &mut self,
        win: &mut [u32],
        h: &isect::TriHit,
        prim: u32,
        geom: u32,
        front: bool,
        tri: u64,
    ) -> bool {
        self.write_span(win, rtu_abi::COMMITTED, h.t, h.u, h.v, prim, geom, rtu_abi::COMMITTED_TRIANGLE, front);
        set_tri(win, rtu_abi::COMMITTED_TRI, tri);
        self.best_t = h.t;
        self.committed = true;
        if cls::terminate_on_commit(self.flags) {
            self.state = State::Done;
            return true;
        }
        false
    }

    /// Hands triangle hit `h` (triangle `k` of leaf `word`, record at `tri`) to the shader
    /// as a candidate.
    #[allow(clippy::too_many_arguments)]
    #[cold]
    #[inline(never)]
    fn triangle_candidate(
        &mut self,
        win: &mut [u32],
        st: &mut RtuStats,
        h: &isect::TriHit,
        prim: u32,
        geom: u32,
        front: bool,
        tri: u64,
        word: u32,
        k: usize,
    ) -> Outcome {
        self.write_span(win, rtu_abi::CANDIDATE, h.t, h.u, h.v, prim, geom, rtu_abi::CANDIDATE_TRIANGLE, front);
        set_tri(win, rtu_abi::CANDIDATE_TRI, tri);
        st.candidates += 1;
        self.state = State::Leaf { word, next: k as u8 + 1 };
        Outcome::Yield(rtu_abi::STS_YIELD_ANYHIT)
    }

    /// Triangle hit `h` of a confirm-all walk: what the round trip through the shader leaves
    /// (the candidate span and its record landing, CONTINUE's ACCEPT, the leaf fetched
    /// again to go on after it) without leaving the leaf: the triangles after it are the
    /// ones the resume would test, against the new best t either way. Returns true when
    /// the commit ends the walk (the state is then `Done`).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn confirm_candidate(
        &mut self,
        win: &mut [u32],
        st: &mut RtuStats,
        h: &isect::TriHit,
        prim: u32,
        geom: u32,
        front: bool,
        tri: u64,
    ) -> bool {
        // The candidate's span and record landing, then ACCEPT from the words in hand (the
        // same words `accept` would read back from the window).
        let words = self.span_words(h.t, h.u, h.v, prim, geom, rtu_abi::CANDIDATE_TRIANGLE, front);
        let c = rtu_abi::CANDIDATE as usize;
        win[c..c + span::LEN as usize].copy_from_slice(&words);
        set_tri(win, rtu_abi::CANDIDATE_TRI, tri);
        st.candidates += 1;
        st.records += 1;
        win[rtu_abi::STATUS as usize] = rtu_abi::STS_YIELD_ANYHIT;
        if self.commit_candidate_triangle(win, words, [tri as u32, (tri >> 32) as u32]) {
            self.state = State::Done;
            return true;
        }
        st.node_fetches += 1;
        false
    }

    /// The boxes of procedural leaf `word` (bytes `b`) from index `next`.
    #[inline(never)]
    fn aabbs(
        &mut self,
        win: &mut [u32],
        st: &mut RtuStats,
        b: &[u8],
        word: u32,
        next: u8,
    ) -> Result<Option<Outcome>, Fault> {
        let count = b[1] as usize;
        let (geom, geom_flags) = records::leaf_geometry(b);
        let op = cls::opacity(geom_flags, self.inst_flags(), self.flags);
        if cls::cull_aabb_leaf(self.flags, op) {
            self.state = State::Pop;
            return Ok(None);
        }
        for i in next as usize..count {
            st.aabb_tests += 1;
            let (lo, hi, prim) = records::aabb(b, i);
            let Some(t) = isect::slab(self.ray(), lo, hi, self.tmin, self.best_t) else {
                continue;
            };
            self.write_span(win, rtu_abi::CANDIDATE, t, 0.0, 0.0, prim, geom, rtu_abi::CANDIDATE_AABB, false);
            win[rtu_abi::CAND_AABB_OPAQUE as usize] = (op == Opacity::Opaque) as u32;
            st.candidates += 1;
            self.state = State::Leaf { word, next: i as u8 + 1 };
            return Ok(Some(Outcome::Yield(rtu_abi::STS_YIELD_PROC)));
        }
        self.state = State::Pop;
        Ok(None)
    }

    /// An instance leaf of the TLAS: enter its BLAS.
    #[inline(never)]
    fn instance<S: NodeSource>(
        &mut self,
        src: &mut S,
        headers: &mut HeaderCache,
        cfg: &RtuConfig,
        st: &mut RtuStats,
        word: u32,
    ) -> Result<Option<Outcome>, Fault> {
        let it = &self.inst;
        if !cls::instance_visible(it.custom_mask >> 24, self.cull_mask) || it.blas == 0 {
            self.count_visit(cfg, st)?;
            self.state = State::Pop;
            return Ok(None);
        }
        let Some(blas) = Self::header(src, headers, self.inst.blas)? else {
            return Ok(Some(Outcome::Parked));
        };
        self.count_visit(cfg, st)?;
        if !blas.is_bottom() {
            return Err(bad(format!(
                "instance {} (leaf {word:#010x}) of the TLAS at {:#x} references {:#x}, which is not a bottom-level structure",
                self.inst.index, self.top.base, self.inst.blas
            )));
        }
        if blas.root == 0 {
            self.state = State::Pop;
            return Ok(None);
        }
        st.instance_transforms += 1;
        let o = isect::xform_point(&self.inst.w2o, self.world.org);
        let d = isect::xform_vector(&self.inst.w2o, self.world.dir);
        self.obj = RayPrep::new(o, d);
        self.obj_box = BoxRay::new(&self.obj);
        self.blas = blas;
        self.in_blas = true;
        self.top_entries = self.stack.len;
        self.blas_resume = 0;
        self.blas_restarts = 0;
        self.state = if self.obj.is_degenerate() { State::Pop } else { State::Visit(blas.root) };
        Ok(None)
    }
}

/// True when `descend::<W>` walks a level of width `width` (the state machine's choice).
#[inline(always)]
fn same_width<const W: usize>(width: u32) -> bool {
    (width == 4) == (W == 4)
}

/// The fault of a record named as a leaf that is not one.
#[cold]
#[inline(never)]
fn not_a_leaf(lvl: &Level, word: u32, e: records::NotALeaf) -> Fault {
    bad(format!(
        "record {word:#010x} of the structure at {:#x} is not a leaf (kind {}, count {})",
        lvl.base, e.kind, e.count
    ))
}

/// The fault of a leaf of kind `kind` in a structure of the wrong level.
#[cold]
#[inline(never)]
fn misplaced_leaf(lvl: &Level, word: u32, kind: u8) -> Fault {
    bad(format!(
        "leaf kind {kind} at {word:#010x} does not belong in the {} structure at {:#x}",
        if lvl.is_top() { "top-level" } else { "bottom-level" },
        lvl.base
    ))
}

/// A hit's span of window words (`abi::rtu::span`).
type Span = [u32; span::LEN as usize];

/// Stores a triangle record's device address into window slots `at`, `at + 1`.
fn set_tri(win: &mut [u32], at: u32, addr: u64) {
    win[at as usize] = addr as u32;
    win[at as usize + 1] = (addr >> 32) as u32;
}

/// Device address of the record `word` names, checked against the structure's extent.
#[inline]
fn record_addr(lvl: &Level, word: u32, len: usize) -> Result<u64, Fault> {
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

fn too_many_visits(top: u64, cfg: &RtuConfig) -> Fault {
    bad(format!("walk of the structure at {top:#x} exceeded {} record visits (cyclic or corrupt BVH)", cfg.max_visits))
}

/// Child word `c` of an internal node's bytes.
#[inline(always)]
fn child(b: &[u8], c: usize) -> u32 {
    rd_u32(b, node::CHILD + 4 * c)
}

/// The box PE on the internal node of width `W` in `b` against `ray` (`bx` for the vector
/// form) and `[tmin, tmax]`: the children's entry distances into `near`, and a mask
/// of the children hit and the child count. The same bits as `Node::<W>::decode` and
/// [`isect::slab_near_lanes`], and the same refusal of a record that is not such a node.
#[inline(always)]
fn test_node<const W: usize>(
    b: &[u8],
    ray: &RayPrep,
    bx: &BoxRay,
    tmin: f32,
    tmax: f32,
    near: &mut [f32; W],
) -> Result<(u32, usize), NotANode> {
    #[cfg(target_arch = "x86_64")]
    {
        let _ = ray;
        let count = records::node_count::<W>(b)?;
        let (n, m) = isect::slab_node::<W>(b, bx, count, tmin, tmax);
        *near = n;
        Ok((m, count))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = bx;
        let n = Node::<W>::decode(b)?;
        let hit;
        (*near, hit) = isect::slab_near_lanes(ray, &n.lo, &n.hi, tmin, tmax);
        let mut m = 0;
        for (c, &h) in hit.iter().enumerate().take(n.count) {
            m |= (h as u32) << c;
        }
        Ok((m, n.count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::AddressSpace;

    /// A record crossing a page between two bindings of a sparse resource comes back whole
    /// (copied out of both memories); one reaching an unbound page faults naming it; the
    /// regions it remembers still answer in place afterwards.
    #[test]
    fn mem_source_pieces_records_across_sparse_bindings() {
        use crate::abi::PAGE_BYTES as P;
        let space = AddressSpace::new();
        let res = space.reserve(3 * P).unwrap();
        let (a, b) = (space.allocate(P).unwrap(), space.allocate(P).unwrap());
        space.bind(res.base, 0, P, Some((&b, 0))).unwrap();
        space.bind(res.base, P, P, Some((&a, 0))).unwrap();
        let pattern: Vec<u8> = (0..2 * P).map(|k| (k * 7 % 256) as u8).collect();
        space.snapshot().write(res.base, &pattern).unwrap();
        let map = space.snapshot();
        let mut src = MemSource::new(&map);
        let inside = src.bytes(res.base + 64, 64).unwrap().unwrap().as_ptr();
        assert_eq!(inside, b.host_ptr().wrapping_add(64) as *const u8, "in place");
        for at in [P - 8, P - 63, P - 1] {
            let got = src.bytes(res.base + at, 64).unwrap().unwrap().to_vec();
            assert_eq!(got, pattern[at as usize..][..64], "record at {at:#x}");
            src.check(res.base + at, 64).unwrap();
        }
        let f = src.bytes(res.base + 2 * P - 16, 64).unwrap_err();
        assert_eq!(f.kind, crate::mem::MemFaultKind::Unbound { page: res.base + 2 * P });
        assert!(src.check(res.base + 2 * P - 16, 64).is_err());
        assert_eq!(src.bytes(res.base + 64, 64).unwrap().unwrap().as_ptr(), inside);
    }

    /// The functional source answers exactly what the memory map does, wherever the bytes
    /// lie against the regions it remembers (inside, straddling an end, between regions).
    #[test]
    fn mem_source_answers_like_the_map() {
        let space = AddressSpace::new();
        let regions: Vec<Region> = [256u64, 4096, 64, 1000].iter().map(|&n| space.allocate(n).unwrap()).collect();
        let map = space.snapshot();
        let mut rng = crate::rtu::reference::Rng::new(77);
        let mut src = MemSource::new(&map);
        for _ in 0..20_000 {
            let r = &regions[(rng.next_u64() % regions.len() as u64) as usize];
            let addr = match rng.next_u64() % 4 {
                0 => r.base + r.len - (rng.next_u64() % 100),
                1 => r.base.wrapping_sub(rng.next_u64() % 100),
                _ => r.base + rng.next_u64() % r.len,
            };
            let len = (rng.next_u64() % 130) as usize;
            let want = map.region(addr, len as u64).map(|r| r.host_ptr().wrapping_add((addr - r.base) as usize));
            match src.bytes(addr, len) {
                Ok(Some(b)) => {
                    assert_eq!((Some(b.as_ptr()), b.len()), (want.map(|p| p as *const u8), len), "{addr:#x}+{len}")
                }
                Ok(None) => panic!("the functional source never parks"),
                Err(e) => {
                    assert!(want.is_none(), "{addr:#x}+{len}");
                    assert_eq!((e.addr, e.size), (addr, len as u64));
                }
            }
        }
    }
}
