//! The ray-tracing unit.
//!
//! [`RtuUnit`] is the per-core front end (seed 000 §2.2): it owns the core's hit windows and
//! the per-query trace state, and serves the five RTU ops the core executes (TRACE, WAIT,
//! CONTINUE, GETW, GETWF). Traversal itself is done by the walker, a resumable state
//! machine that asks for one node line per step; in functional mode every request is
//! answered at once, so a TRACE or CONTINUE runs its lanes to their next record before the op
//! retires.
//!
//! The window is per (warp, query slot, lane): a warp may hold up to
//! [`abi::rtu::MAX_QUERIES`](crate::abi::rtu::MAX_QUERIES) traces at once.
//!
//! In timed mode the same front end arms the walks but does not run them: TRACE and
//! CONTINUE post a message ([`RtuMsg`]) to the socket's traversal core ([`engine::RtuCore`]),
//! which runs each lane's walk one record per step as its RTCache answers, and writes the
//! records back (STATUS last). A WAIT whose lanes are still owed a record parks the warp.

pub mod classifier;
pub mod engine;
pub mod isect;
pub mod raylog;
pub mod records;
pub mod reference;
pub mod reftrace;
pub mod replay;
pub mod timeline;
pub mod walker;

use crate::abi::rtu as rtu_abi;
use crate::abi::MAX_THREADS;
use crate::config::RtuConfig;
use crate::fault::Fault;
use crate::mem::MemoryMap;
use records::HeaderCache;
use walker::{MemSource, Outcome, Walk};

/// One lane's ray as TRACE delivers it (the 12-register operand of `abi::rtu::ray`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TraceRay {
    pub origin: [f32; 3],
    pub tmin: f32,
    pub dir: [f32; 3],
    pub tmax: f32,
    pub flags: u32,
    pub cull_mask: u32,
    /// Acceleration-structure address; 0 means no structure (the query misses).
    pub accel: u64,
}

impl TraceRay {
    /// Unpacks the TRACE operand registers.
    pub fn from_regs(r: &[u32; rtu_abi::ray::REGS as usize]) -> TraceRay {
        use rtu_abi::ray::*;
        let f = |i: u32| f32::from_bits(r[i as usize]);
        TraceRay {
            origin: [f(ORIGIN), f(ORIGIN + 1), f(ORIGIN + 2)],
            tmin: f(TMIN),
            dir: [f(DIR), f(DIR + 1), f(DIR + 2)],
            tmax: f(TMAX),
            flags: r[FLAGS as usize],
            cull_mask: r[CULL_MASK as usize],
            accel: r[AS_LO as usize] as u64 | (r[AS_HI as usize] as u64) << 32,
        }
    }
}

/// What the RTU did, summed over a dispatch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RtuStats {
    /// Lanes traced (one per lane per TRACE).
    pub rays: u64,
    /// Child boxes tested by the box PE.
    pub box_tests: u64,
    /// Ray/triangle tests by the triangle PE.
    pub tri_tests: u64,
    /// Ray/AABB tests of procedural leaves.
    pub aabb_tests: u64,
    /// World-to-object transforms (instance entries).
    pub instance_transforms: u64,
    /// Node and leaf records fetched.
    pub node_fetches: u64,
    /// Records written back (terminal + candidate).
    pub records: u64,
    /// Candidates handed to the shader.
    pub candidates: u64,
    /// Short-stack overflows that forced a restart from the root.
    pub restarts: u64,
}

impl RtuStats {
    pub fn add(&mut self, o: &RtuStats) {
        self.rays += o.rays;
        self.box_tests += o.box_tests;
        self.tri_tests += o.tri_tests;
        self.aabb_tests += o.aabb_tests;
        self.instance_transforms += o.instance_transforms;
        self.node_fetches += o.node_fetches;
        self.records += o.records;
        self.candidates += o.candidates;
        self.restarts += o.restarts;
    }
}

/// An RTU op failed for one lane (bad structure, memory fault in a node fetch, bad slot).
#[derive(Clone, Debug)]
pub struct RtuError {
    pub lane: u32,
    pub fault: Fault,
}

/// Per-warp trace state: the window rows and walker contexts of every (query, lane).
#[derive(Default)]
struct WarpTraces {
    num_queries: u32,
    /// The rows of every (query, lane); a row whose bit is set in `idle` still holds an
    /// earlier warp's words and reads as idle until it is first written.
    window: Vec<u32>,
    /// Per query: lanes whose row has not been touched since the warp was launched. Rows
    /// are made idle on first use instead of clearing the whole window (96 words per
    /// (query, lane)) at every warp launch.
    idle: Vec<u32>,
    /// One walker context per (query, lane); kept across warp launches so their stacks
    /// are allocated once.
    walks: Vec<Walk>,
    /// Timed mode, per query: lanes the RTU owes a record.
    outstanding: Vec<u32>,
    /// Timed mode, per query: lanes whose record landed since the last WAIT saw them (the
    /// per-lane `response_ready` bits of seed 000 §2.2).
    fresh: Vec<u32>,
    /// Per query: lanes whose trace was armed with `TRACE_CONFIRM_ALL` (functional mode
    /// accepts their triangle candidates itself).
    confirm_all: Vec<u32>,
}

impl WarpTraces {
    /// The row of (`query`, `lane`) as launched: all zero but STATUS = DONE_MISS, if it has
    /// not been touched since the launch.
    #[inline]
    fn touch(&mut self, query: u32, lane: usize, nt: usize) {
        let (q, bit) = (query as usize, 1u32 << lane);
        if self.idle[q] & bit != 0 {
            self.idle[q] &= !bit;
            let base = (q * nt + lane) * rtu_abi::SLOT_COUNT as usize;
            let row = &mut self.window[base..base + rtu_abi::SLOT_COUNT as usize];
            row.fill(0);
            row[rtu_abi::STATUS as usize] = rtu_abi::STS_DONE_MISS;
        }
    }

    /// The row of (`query`, `lane`) is about to be rewritten whole (TRACE): it stops being
    /// idle without being cleared first.
    #[inline]
    fn claim(&mut self, query: u32, lane: usize) {
        self.idle[query as usize] &= !(1u32 << lane);
    }

    /// Word `slot` of the row at `base` (of `query`, `lane`), as the kernel reads it.
    #[inline]
    fn word(&self, query: u32, lane: usize, base: usize, slot: u32) -> u32 {
        if self.idle[query as usize] >> lane & 1 != 0 {
            if slot == rtu_abi::STATUS {
                rtu_abi::STS_DONE_MISS
            } else {
                0
            }
        } else {
            self.window[base + slot as usize]
        }
    }
}

/// What the front end tells the socket's traversal core (timed mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RtuMsg {
    /// TRACE armed `mask` lanes of (warp, query): their rays are staged.
    Arm { warp: u32, query: u32, mask: u32 },
    /// CONTINUE resumed `mask` lanes of (warp, query) (an open candidate was decided).
    Resume { warp: u32, query: u32, mask: u32 },
    /// The warp retired: whatever it left in flight is dropped.
    Release { warp: u32 },
}

/// The per-core RTU front end.
pub struct RtuUnit {
    cfg: RtuConfig,
    nt: usize,
    warps: Vec<WarpTraces>,
    stats: RtuStats,
    timed: bool,
    /// Functional mode: the structure headers this core's walks decoded in the dispatch.
    headers: HeaderCache,
    /// Timed mode: messages for the traversal core, drained by the core after each op.
    pub outbox: Vec<RtuMsg>,
    /// `VORTEX_RAYLOG`: the recorder, only while a log is open (`raylog.rs`).
    raylog: Option<Box<raylog::Recorder>>,
    /// Timed mode: lanes a completed WAIT found still PENDING (each goes around the proceed
    /// loop's WAIT again).
    pub(crate) pending_reads: u64,
    /// Detailed stats: each walk counts its work for [`Self::take_lane_work`].
    lane_work: bool,
}

impl RtuUnit {
    pub fn new(cfg: &RtuConfig, num_warps: usize, num_threads: usize) -> RtuUnit {
        RtuUnit {
            cfg: cfg.clone(),
            nt: num_threads,
            warps: (0..num_warps).map(|_| WarpTraces::default()).collect(),
            stats: RtuStats::default(),
            timed: false,
            headers: HeaderCache::default(),
            outbox: Vec::new(),
            raylog: None,
            pending_reads: 0,
            lane_work: false,
        }
    }

    /// Keeps per-lane work (detailed stats): the walks of warps launched from now on count
    /// what they do for [`Self::take_lane_work`].
    pub fn track_lane_work(&mut self) {
        self.lane_work = true;
    }

    /// Records every trace this unit serves into `sink` (None: stop recording, after
    /// writing what was recorded).
    pub fn set_raylog(&mut self, sink: Option<std::sync::Arc<raylog::Sink>>) {
        self.flush_raylog();
        self.raylog = sink.map(|s| Box::new(raylog::Recorder::new(s)));
    }

    /// Writes what the recorder holds (end of a dispatch): traces a warp left open are
    /// written as they stand.
    pub fn flush_raylog(&mut self) {
        let Some(log) = self.raylog.as_deref_mut() else { return };
        for (wi, w) in self.warps.iter().enumerate() {
            log.close_warp(wi, &w.window, rtu_abi::SLOT_COUNT as usize);
        }
        log.flush();
    }

    /// Timed mode: TRACE and CONTINUE hand their lanes to the traversal core instead of
    /// walking them before the op retires.
    /// Also starts a new dispatch: headers decoded in the last one are forgotten.
    pub fn set_timed(&mut self, timed: bool) {
        self.timed = timed;
        self.pending_reads = 0;
        self.outbox.clear();
        self.headers.clear();
    }

    pub fn is_timed(&self) -> bool {
        self.timed
    }

    pub fn num_threads(&self) -> usize {
        self.nt
    }

    pub fn config(&self) -> &RtuConfig {
        &self.cfg
    }

    /// Adds `lane` of `query` to the message of `kind` in the outbox.
    fn post(&mut self, warp: usize, query: u32, lane: usize, resume: bool) {
        let (w, bit) = (warp as u32, 1u32 << lane);
        for m in self.outbox.iter_mut().rev() {
            match m {
                RtuMsg::Arm { warp, query: q, mask } if !resume && *warp == w && *q == query => {
                    *mask |= bit;
                    return;
                }
                RtuMsg::Resume { warp, query: q, mask } if resume && *warp == w && *q == query => {
                    *mask |= bit;
                    return;
                }
                _ => {}
            }
        }
        self.outbox.push(if resume {
            RtuMsg::Resume { warp: w, query, mask: bit }
        } else {
            RtuMsg::Arm { warp: w, query, mask: bit }
        });
    }

    /// Timed mode: lane `lane` of (warp, query) is owed a record again.
    fn owe(&mut self, warp: usize, query: u32, lane: usize, rec_base: usize) {
        let w = &mut self.warps[warp];
        w.touch(query, lane, self.nt);
        w.outstanding[query as usize] |= 1 << lane;
        w.fresh[query as usize] &= !(1 << lane);
        w.window[rec_base + rtu_abi::STATUS as usize] = rtu_abi::STS_PENDING;
    }

    /// The traversal core's access to one lane's walk, window row and counters.
    /// With a ray log open, also the set its walks' lines go to.
    #[inline(always)]
    pub(crate) fn lane(
        &mut self,
        warp: usize,
        query: u32,
        lane: usize,
    ) -> (&mut Walk, &mut [u32], &mut RtuStats, Option<&mut raylog::LineSet>) {
        let w = &mut self.warps[warp];
        let ctx = query as usize * self.nt + lane;
        w.touch(query, lane, self.nt);
        let base = ctx * rtu_abi::SLOT_COUNT as usize;
        let lines = self.raylog.as_deref_mut().map(|r| &mut r.lines);
        (&mut w.walks[ctx], &mut w.window[base..base + rtu_abi::SLOT_COUNT as usize], &mut self.stats, lines)
    }

    /// The traversal core wrote a record for `lane` of (warp, query) whose walk ended its
    /// step with `out`: STATUS goes last, and the lane's parked WAIT may complete.
    pub(crate) fn land_lane(&mut self, warp: usize, query: u32, lane: usize, out: Outcome) {
        let nt = self.nt;
        let w = &mut self.warps[warp];
        if query >= w.num_queries {
            return;
        }
        let ctx = query as usize * nt + lane;
        w.touch(query, lane, nt);
        let base = ctx * rtu_abi::SLOT_COUNT as usize;
        let rec = &mut w.window[base..base + rtu_abi::SLOT_COUNT as usize];
        Self::land(rec, &w.walks[ctx], out, &mut self.stats);
        if out == Outcome::Done {
            if let Some(log) = self.raylog.as_deref_mut() {
                log.finish(warp, ctx, rec);
            }
        }
        w.outstanding[query as usize] &= !(1 << lane);
        w.fresh[query as usize] |= 1 << lane;
    }

    /// The SBT key of the candidate in the row of `lane` of (warp, query): the instance's SBT
    /// record offset and the geometry index, what the hit record's index depends on besides
    /// the trace's own offset and stride (which the RTU never sees).
    pub(crate) fn candidate_key(&self, warp: usize, query: u32, lane: usize) -> u64 {
        let base = (query as usize * self.nt + lane) * rtu_abi::SLOT_COUNT as usize;
        let w = &self.warps[warp];
        let word = |s: u32| w.word(query, lane, base, rtu_abi::CANDIDATE + s) as u64;
        word(rtu_abi::span::SBT) << 32 | word(rtu_abi::span::GEOM)
    }

    /// The RTU work (records fetched plus primitive tests) each lane of `warp` caused since
    /// the warp was launched, and resets it; the core attributes it to the lanes'
    /// invocations when the warp retires. All zero unless [`Self::track_lane_work`].
    pub fn take_lane_work(&mut self, warp: usize) -> [u32; MAX_THREADS] {
        let nt = self.nt;
        let w = &mut self.warps[warp];
        let mut out = [0u32; MAX_THREADS];
        for (ctx, walk) in w.walks.iter_mut().take(w.num_queries as usize * nt).enumerate() {
            out[ctx % nt] = out[ctx % nt].saturating_add(walk.take_work());
        }
        out
    }

    /// A warp slot starts running a new warp whose kernel declares `num_queries` query slots:
    /// every (query, lane) record is idle (status DONE_MISS, nothing committed).
    pub fn launch_warp(&mut self, warp: usize, num_queries: u32) {
        let w = &mut self.warps[warp];
        if let Some(log) = self.raylog.as_deref_mut() {
            log.close_warp(warp, &w.window, rtu_abi::SLOT_COUNT as usize);
        }
        w.num_queries = num_queries;
        // Every row reads as idle from now on; rows are cleared when first touched
        // (`WarpTraces::touch`), not here.
        let len = num_queries as usize * self.nt * rtu_abi::SLOT_COUNT as usize;
        if w.window.len() < len {
            w.window.resize(len, 0);
        }
        w.idle.clear();
        w.idle.resize(num_queries as usize, crate::cta_dispatch::full_mask(self.nt as u32));
        let n = num_queries as usize * self.nt;
        if w.walks.len() < n {
            w.walks.resize_with(n, Walk::default);
        }
        for walk in &mut w.walks[..n] {
            walk.finish();
            walk.take_work();
            walk.count_work(self.lane_work);
        }
        w.outstanding.clear();
        w.outstanding.resize(num_queries as usize, 0);
        w.fresh.clear();
        w.fresh.resize(num_queries as usize, 0);
        w.confirm_all.clear();
        w.confirm_all.resize(num_queries as usize, 0);
    }

    /// The window row of (`warp`, `q`, `lane`), or the fault of an RTU op naming that slot.
    #[inline]
    fn check_slot(&self, warp: usize, lane: usize, q: u32) -> Result<usize, RtuError> {
        if !self.cfg.enable || q >= self.warps[warp].num_queries {
            return Err(self.slot_fault(warp, lane, q));
        }
        Ok((q as usize * self.nt + lane) * rtu_abi::SLOT_COUNT as usize)
    }

    /// Why [`Self::check_slot`] refused.
    #[cold]
    #[inline(never)]
    fn slot_fault(&self, warp: usize, lane: usize, q: u32) -> RtuError {
        if !self.cfg.enable {
            return RtuError {
                lane: lane as u32,
                fault: Fault::new(
                    crate::fault::FaultKind::IllegalInstruction,
                    "RTU op on a device built without an RTU (rtu.enable = false)",
                ),
            };
        }
        RtuError {
            lane: lane as u32,
            fault: Fault::new(
                crate::fault::FaultKind::IllegalInstruction,
                format!("ray-query slot {q} outside the kernel's {} slots", self.warps[warp].num_queries),
            ),
        }
    }

    /// TRACE: arms query slot `q[lane]` of every lane in `mask` with `rays[lane]` and runs
    /// each lane's walk to its first record (functional mode: before the op retires).
    pub fn trace(
        &mut self,
        mem: &MemoryMap,
        warp: usize,
        mask: u32,
        q: &[u32; MAX_THREADS],
        rays: &[TraceRay; MAX_THREADS],
    ) -> Result<(), RtuError> {
        self.trace_with(mem, warp, mask, q, 0, |lane| rays[lane])
    }

    /// [`Self::trace`] with TRACE's `imm` hints (`abi::rtu::TRACE_CONFIRM_ALL`) and each
    /// lane's ray from `ray(lane)`, asked for as the lane is armed.
    pub fn trace_with(
        &mut self,
        mem: &MemoryMap,
        warp: usize,
        mask: u32,
        q: &[u32; MAX_THREADS],
        hints: u32,
        ray: impl Fn(usize) -> TraceRay,
    ) -> Result<(), RtuError> {
        let mut src = MemSource::new(mem);
        let confirm_all = hints & rtu_abi::TRACE_CONFIRM_ALL != 0;
        for lane in (0..self.nt).filter(|l| mask >> l & 1 != 0) {
            let base = self.check_slot(warp, lane, q[lane])?;
            let ctx = base / rtu_abi::SLOT_COUNT as usize;
            let w = &mut self.warps[warp];
            let bit = 1u32 << lane;
            let all = &mut w.confirm_all[q[lane] as usize];
            *all = if confirm_all { *all | bit } else { *all & !bit };
            if self.raylog.is_some() {
                // The recorder reads the row before it is rewritten.
                w.touch(q[lane], lane, self.nt);
            } else {
                w.claim(q[lane], lane);
            }
            let rec = &mut w.window[base..base + rtu_abi::SLOT_COUNT as usize];
            let walk = &mut w.walks[ctx];
            // The ray by value, never referenced: its words stay in registers from the
            // operand rows to `begin` (a copy in memory read back at other widths stalls
            // store forwarding); the recorder gets a copy of its own.
            let r = ray(lane);
            if let Some(log) = self.raylog.as_deref_mut() {
                let logged = r;
                log.arm(warp, ctx, &logged, rec);
            }
            // A fixed-size row, written through the array (no bounds checks). The committed
            // span's T goes between two clears of at most 256 bytes each, so neither becomes
            // a `memset` call (the committed kind is COMMITTED_NONE, zero).
            const _: () = assert!(rtu_abi::COMMITTED_NONE == 0 && rtu_abi::span::T == 0);
            let row: &mut [u32; rtu_abi::SLOT_COUNT as usize] = rec.try_into().expect("a window row");
            const K: usize = rtu_abi::COMMITTED as usize;
            const MID: usize = rtu_abi::CANDIDATE as usize;
            row[K + 1..MID].fill(0);
            row[K] = r.tmax.to_bits();
            row[MID..].fill(0);
            for i in 0..3 {
                row[rtu_abi::RAY_ORIGIN as usize + i] = r.origin[i].to_bits();
                row[rtu_abi::RAY_DIR as usize + i] = r.dir[i].to_bits();
            }
            row[rtu_abi::RAY_TMIN as usize] = r.tmin.to_bits();
            row[rtu_abi::RAY_TMAX as usize] = r.tmax.to_bits();
            row[rtu_abi::RAY_FLAGS as usize] = r.flags;
            row[rtu_abi::RAY_CULL_MASK as usize] = r.cull_mask;
            self.stats.rays += 1;
            // `begin` also forgets the lane's previous commit: a null structure misses even
            // after a trace that hit (found by replaying a ray log).
            walk.begin(&self.cfg, r.accel, r.origin, r.dir, r.tmin, r.tmax, r.flags, r.cull_mask);
            if r.accel == 0 {
                walk.finish();
            }
            self.walk_lane(&mut src, mem, warp, lane, q[lane], base, false)?;
        }
        Ok(())
    }

    /// Hands lane `lane`'s armed (or resumed) walk, whose record is at window offset `base`,
    /// to the RTU: timed mode queues it, functional mode runs it now (TRACE and CONTINUE
    /// alike).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn walk_lane<'m>(
        &mut self,
        src: &mut MemSource<'m>,
        mem: &'m MemoryMap,
        warp: usize,
        lane: usize,
        query: u32,
        base: usize,
        resume: bool,
    ) -> Result<(), RtuError> {
        if self.timed {
            self.owe(warp, query, lane, base);
            self.post(warp, query, lane, resume);
            return Ok(());
        }
        let ctx = base / rtu_abi::SLOT_COUNT as usize;
        let w = &mut self.warps[warp];
        let confirm_all = w.confirm_all[query as usize] >> lane & 1 != 0;
        let rec = &mut w.window[base..base + rtu_abi::SLOT_COUNT as usize];
        let fe = Functional {
            src,
            mem,
            raylog: self.raylog.as_deref_mut(),
            headers: &mut self.headers,
            cfg: &self.cfg,
            stats: &mut self.stats,
        };
        fe.run(&mut w.walks[ctx], rec, warp, ctx, lane, confirm_all)
    }

    /// Writes a record's STATUS (last): the record has landed.
    #[inline]
    pub(crate) fn land(rec: &mut [u32], walk: &Walk, out: Outcome, stats: &mut RtuStats) {
        let status = match out {
            Outcome::Yield(s) => s,
            Outcome::Parked => rtu_abi::STS_PENDING,
            Outcome::Done if walk.has_committed() => rtu_abi::STS_DONE_HIT,
            Outcome::Done => rtu_abi::STS_DONE_MISS,
        };
        if out != Outcome::Parked {
            stats.records += 1;
        }
        rec[rtu_abi::STATUS as usize] = status;
    }

    /// The completion rule of a timed WAIT, without consuming anything: per query, one of its
    /// lanes has a record it has not seen, or none of its lanes is owed one.
    pub fn landed(&self, warp: usize, mask: u32, q: &[u32; MAX_THREADS]) -> Result<bool, RtuError> {
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros() as usize;
            self.check_slot(warp, lane, q[lane])?;
            let query = q[lane];
            let mut group = 0u32;
            let mut g = m;
            while g != 0 {
                let l = g.trailing_zeros() as usize;
                g &= g - 1;
                if q[l] == query {
                    group |= 1 << l;
                }
            }
            m &= !group;
            let w = &self.warps[warp];
            if w.fresh[query as usize] & group == 0 && w.outstanding[query as usize] & group != 0 {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// WAIT: writes the status of each active lane's record into `status`. Returns false if
    /// some lane's record has not landed yet (the warp stays parked and retries).
    pub fn wait(
        &mut self,
        warp: usize,
        mask: u32,
        q: &[u32; MAX_THREADS],
        status: &mut [u32; MAX_THREADS],
    ) -> Result<bool, RtuError> {
        if self.timed && !self.landed(warp, mask, q)? {
            return Ok(false);
        }
        if !self.timed {
            if let Some(q0) = self.one_query(warp, mask, q) {
                // Every lane waits on one valid slot: the statuses straight from its rows.
                let w = &self.warps[warp];
                let slots = rtu_abi::SLOT_COUNT as usize;
                let idle = w.idle[q0 as usize];
                let rows = &w.window[q0 as usize * self.nt * slots..][..self.nt * slots];
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    status[l] = if idle >> l & 1 != 0 {
                        rtu_abi::STS_DONE_MISS
                    } else {
                        rows[l * slots + rtu_abi::STATUS as usize]
                    };
                }
                return Ok(true);
            }
        }
        for lane in (0..self.nt).filter(|l| mask >> l & 1 != 0) {
            let base = self.check_slot(warp, lane, q[lane])?;
            status[lane] = self.warps[warp].word(q[lane], lane, base, rtu_abi::STATUS);
            if self.timed {
                self.warps[warp].fresh[q[lane] as usize] &= !(1 << lane);
                self.pending_reads += (status[lane] == rtu_abi::STS_PENDING) as u64;
            }
        }
        Ok(true)
    }

    /// The query slot every lane in `mask` names, when they name one and it is valid (the
    /// checks [`Self::check_slot`] makes lane by lane then pass for all of them).
    #[inline]
    fn one_query(&self, warp: usize, mask: u32, q: &[u32; MAX_THREADS]) -> Option<u32> {
        if mask == 0 {
            return None;
        }
        let q0 = q[mask.trailing_zeros() as usize];
        let mut diff = 0;
        let mut m = mask;
        while m != 0 {
            diff |= q[m.trailing_zeros() as usize] ^ q0;
            m &= m - 1;
        }
        (diff == 0 && self.cfg.enable && q0 < self.warps[warp].num_queries).then_some(q0)
    }

    /// CONTINUE: resumes each active lane's query with `action[lane]` (an `ACT_*` bit set)
    /// and, for a generated intersection, hit distance `t[lane]`. Lanes without an open
    /// candidate ignore the action, except TERMINATE, which ends a walk still running.
    pub fn cont(
        &mut self,
        mem: &MemoryMap,
        warp: usize,
        mask: u32,
        q: &[u32; MAX_THREADS],
        action: &[u32; MAX_THREADS],
        t: &[f32; MAX_THREADS],
    ) -> Result<(), RtuError> {
        let mut src = MemSource::new(mem);
        for lane in (0..self.nt).filter(|l| mask >> l & 1 != 0) {
            let base = self.check_slot(warp, lane, q[lane])?;
            let ctx = base / rtu_abi::SLOT_COUNT as usize;
            let w = &mut self.warps[warp];
            w.touch(q[lane], lane, self.nt);
            let rec = &mut w.window[base..base + rtu_abi::SLOT_COUNT as usize];
            let walk = &mut w.walks[ctx];
            let status = rec[rtu_abi::STATUS as usize];
            let act = action[lane];
            if rtu_abi::status_is_yield(status) {
                if let Some(log) = self.raylog.as_deref_mut() {
                    log.decide(warp, ctx, act, t[lane], rec);
                }
                if act & rtu_abi::ACT_ACCEPT != 0 && walk.accept(rec, t[lane]) {
                    walk.finish();
                }
                if act & rtu_abi::ACT_TERMINATE != 0 {
                    walk.finish();
                }
            } else if status == rtu_abi::STS_PENDING && act & rtu_abi::ACT_TERMINATE != 0 {
                walk.finish();
                if let Some(log) = self.raylog.as_deref_mut() {
                    log.terminated_running(warp, ctx);
                }
                if self.timed {
                    // Still traversing in the RTU: its next step sees the walk ended.
                    continue;
                }
            } else {
                continue;
            }
            self.walk_lane(&mut src, mem, warp, lane, q[lane], base, true)?;
        }
        Ok(())
    }

    /// GETW / GETWF: one window slot of (warp, lane, query).
    pub fn read(&self, warp: usize, lane: usize, q: u32, slot: u32) -> Result<u32, RtuError> {
        let mut v = 0;
        self.read_words(warp, lane, q, slot, 1, |_, w| v = w)?;
        Ok(v)
    }

    /// GETW / GETWF of `count` consecutive slots from `slot` of (warp, lane, query): word `k`
    /// goes to `put(k, word)`. The query slot is checked once; a slot out of range faults
    /// when reached, as `count` separate reads would.
    #[inline]
    pub fn read_words(
        &self,
        warp: usize,
        lane: usize,
        q: u32,
        slot: u32,
        count: u32,
        mut put: impl FnMut(usize, u32),
    ) -> Result<(), RtuError> {
        let base = self.check_slot(warp, lane, q)?;
        let w = &self.warps[warp];
        for k in 0..count {
            let s = slot + k;
            if s >= rtu_abi::SLOT_COUNT {
                return Err(RtuError {
                    lane: lane as u32,
                    fault: Fault::new(
                        crate::fault::FaultKind::IllegalInstruction,
                        format!("window slot {s} out of range"),
                    ),
                });
            }
            put(k as usize, w.word(q, lane, base, s));
        }
        Ok(())
    }

    /// GETW / GETWF for the lanes in `mask`, lane `l` of query slot `q[l]`: word `k` of lane
    /// `l` goes to `put(k, l, word)`. The same words and faults as [`Self::read_words`] lane
    /// by lane in lane order; when every lane names the same valid slot and the words are in
    /// range (the common case), the checks are made once for the warp.
    #[inline]
    pub fn read_lanes(
        &self,
        warp: usize,
        mask: u32,
        q: &[u32; MAX_THREADS],
        slot: u32,
        count: u32,
        mut put: impl FnMut(usize, usize, u32),
    ) -> Result<(), RtuError> {
        if mask == 0 {
            return Ok(());
        }
        let in_range = slot.checked_add(count).is_some_and(|end| end <= rtu_abi::SLOT_COUNT);
        if let Some(q0) = self.one_query(warp, mask, q).filter(|_| in_range) {
            let w = &self.warps[warp];
            let slots = rtu_abi::SLOT_COUNT as usize;
            let nt = self.nt;
            let idle = w.idle[q0 as usize];
            let rows = &w.window[q0 as usize * nt * slots..][..nt * slots];
            for k in 0..count {
                let s = (slot + k) as usize;
                let idle_word = if s == rtu_abi::STATUS as usize { rtu_abi::STS_DONE_MISS } else { 0 };
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    put(k as usize, l, if idle >> l & 1 != 0 { idle_word } else { rows[l * slots + s] });
                }
            }
            return Ok(());
        }
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            self.read_words(warp, l, q[l], slot, count, |k, v| put(k, l, v))?;
        }
        Ok(())
    }

    pub fn stats(&self) -> &RtuStats {
        &self.stats
    }

    pub fn take_stats(&mut self) -> RtuStats {
        std::mem::take(&mut self.stats)
    }
}

/// What a functional-mode run of one lane's walk needs besides the walk and its record.
struct Functional<'s, 'm> {
    src: &'s mut MemSource<'m>,
    mem: &'m MemoryMap,
    raylog: Option<&'s mut raylog::Recorder>,
    headers: &'s mut HeaderCache,
    cfg: &'s RtuConfig,
    stats: &'s mut RtuStats,
}

impl Functional<'_, '_> {
    /// Runs the walk until it lands (done or a yield), through the ray log's line tap when
    /// recording; writes the record's STATUS last and closes the log entry of a finished
    /// trace. A trace armed with `TRACE_CONFIRM_ALL` (`confirm_all`) has the walker accept
    /// its triangle candidates as the kernel's proceed loop would (the same records,
    /// counters and window) and go on walking; a procedural candidate still goes to the
    /// shader, which decides it. Recorded traces keep the round trips, so the log sees every
    /// decision.
    fn run(
        self,
        walk: &mut Walk,
        rec: &mut [u32],
        warp: usize,
        ctx: usize,
        lane: usize,
        confirm_all: bool,
    ) -> Result<(), RtuError> {
        let mut raylog = self.raylog;
        walk.set_confirm_all(confirm_all && raylog.is_none());
        let out = match raylog.as_deref_mut() {
            None => walk.run(self.src, self.headers, self.cfg, rec, self.stats),
            Some(log) => {
                let mut tap = raylog::LineTap { inner: self.src, mem: self.mem, lines: &mut log.lines };
                walk.run(&mut tap, self.headers, self.cfg, rec, self.stats)
            }
        }
        .map_err(|fault| RtuError { lane: lane as u32, fault })?;
        RtuUnit::land(rec, walk, out, self.stats);
        if out == Outcome::Done {
            if let Some(log) = raylog {
                log.finish(warp, ctx, rec);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A relaunched warp slot reads every row as idle (zero, STATUS = DONE_MISS) even though
    /// the rows are only cleared when first touched; a row TRACE wrote reads what it wrote.
    #[test]
    fn relaunched_rows_read_idle() {
        let (nt, slots) = (4, rtu_abi::SLOT_COUNT);
        let mut u = RtuUnit::new(&RtuConfig::default(), 2, nt);
        let mem = MemoryMap::default();
        let idle =
            |u: &RtuUnit, q: u32, lane: usize| (0..slots).map(|s| u.read(1, lane, q, s).unwrap()).collect::<Vec<_>>();
        let mut expect = vec![0; slots as usize];
        expect[rtu_abi::STATUS as usize] = rtu_abi::STS_DONE_MISS;
        u.launch_warp(1, 2);
        assert_eq!(idle(&u, 1, 2), expect);
        // A null structure misses: the row holds the ray and COMMITTED.T = tmax.
        let ray = TraceRay { tmax: 7.0, dir: [0.0, 0.0, 1.0], ..TraceRay::default() };
        let (q, rays) = ([1u32; MAX_THREADS], [ray; MAX_THREADS]);
        u.trace(&mem, 1, 0b0110, &q, &rays).unwrap();
        let t = rtu_abi::COMMITTED + rtu_abi::span::T;
        assert_eq!(u.read(1, 2, 1, t).unwrap(), 7f32.to_bits());
        assert_eq!(u.read(1, 2, 1, rtu_abi::STATUS).unwrap(), rtu_abi::STS_DONE_MISS);
        assert_eq!(idle(&u, 1, 0), expect, "an untraced lane stays idle");
        // CONTINUE on an idle row does nothing and leaves it idle.
        u.cont(&mem, 1, 0b0001, &q, &[rtu_abi::ACT_TERMINATE; MAX_THREADS], &[0.0; MAX_THREADS]).unwrap();
        assert_eq!(idle(&u, 1, 0), expect);
        // The next warp in the slot sees idle rows again, through GETW and WAIT.
        u.launch_warp(1, 2);
        for lane in 0..nt {
            assert_eq!(idle(&u, 1, lane), expect, "lane {lane}");
        }
        let mut status = [0u32; MAX_THREADS];
        assert!(u.wait(1, 0b1111, &q, &mut status).unwrap());
        assert_eq!(&status[..nt], &[rtu_abi::STS_DONE_MISS; 4]);
    }

    /// GETW of several words reads what as many one-word reads would, and faults where they
    /// would (a slot past the window, a query slot the kernel does not have).
    #[test]
    fn read_words_matches_reads() {
        let nt = 4;
        let mut u = RtuUnit::new(&RtuConfig::default(), 1, nt);
        let mem = MemoryMap::default();
        u.launch_warp(0, 2);
        let ray = TraceRay { tmax: 3.0, tmin: 0.5, dir: [0.0, 1.0, 0.0], flags: 5, ..TraceRay::default() };
        u.trace(&mem, 0, 0b0101, &[1u32; MAX_THREADS], &[ray; MAX_THREADS]).unwrap();
        for (lane, q) in [(0, 1), (1, 1), (2, 0), (2, 1)] {
            for first in [0, rtu_abi::RAY_ORIGIN, rtu_abi::STATUS - 2, rtu_abi::SLOT_COUNT - 3] {
                let mut got = [0u32; 4];
                let r = u.read_words(0, lane, q, first, 4, |k, v| got[k] = v);
                for (k, &g) in got.iter().enumerate() {
                    match u.read(0, lane, q, first + k as u32) {
                        Ok(v) => assert_eq!(g, v, "lane {lane} query {q} slot {}", first + k as u32),
                        Err(e) => {
                            assert_eq!(r.as_ref().unwrap_err().fault.to_string(), e.fault.to_string());
                            break;
                        }
                    }
                }
            }
        }
        let e = u.read_words(0, 3, 2, 0, 2, |_, _| {}).unwrap_err();
        assert_eq!(e.fault.to_string(), u.read(0, 3, 2, 0).unwrap_err().fault.to_string());
        assert_eq!(e.lane, 3);
    }

    /// WAIT reads each lane's STATUS as a one-word read would, whether every lane names one
    /// query slot (read once for the warp) or not, idle rows included; a bad slot faults at
    /// the same lane either way.
    #[test]
    fn wait_matches_status_reads() {
        let nt = 8;
        let mut u = RtuUnit::new(&RtuConfig::default(), 2, nt);
        let mem = MemoryMap::default();
        u.launch_warp(1, 2);
        let ray = TraceRay { tmax: 9.0, dir: [1.0, 0.0, 0.0], ..TraceRay::default() };
        u.trace(&mem, 1, 0b0110_1001, &[1u32; MAX_THREADS], &[ray; MAX_THREADS]).unwrap();
        // The second row of lane 3 is marked pending by hand, so rows differ.
        let base = (nt + 3) * rtu_abi::SLOT_COUNT as usize;
        u.warps[1].window[base + rtu_abi::STATUS as usize] = rtu_abi::STS_PENDING;
        let mixed: [u32; MAX_THREADS] = std::array::from_fn(|l| (l % 3 != 0) as u32);
        for (q, mask) in
            [([1u32; MAX_THREADS], 0xff), ([0; MAX_THREADS], 0b1010_0101), (mixed, 0xff), ([1; MAX_THREADS], 0)]
        {
            let mut status = [u32::MAX; MAX_THREADS];
            assert!(u.wait(1, mask, &q, &mut status).unwrap());
            for l in 0..nt {
                let want = if mask >> l & 1 != 0 { u.read(1, l, q[l], rtu_abi::STATUS).unwrap() } else { u32::MAX };
                assert_eq!(status[l], want, "lane {l} mask {mask:#x}");
            }
        }
        let mut bad = [1u32; MAX_THREADS];
        bad[5] = 2;
        let mut status = [0; MAX_THREADS];
        assert_eq!(u.wait(1, 0xff, &bad, &mut status).unwrap_err().lane, 5);
        assert_eq!(u.wait(1, 0xff, &[2; MAX_THREADS], &mut status).unwrap_err().lane, 0);
    }

    /// GETW over a warp reads what lane-by-lane reads would, for one shared query slot and
    /// for mixed ones, touched and idle rows, and faults at the same lane with the same
    /// message.
    #[test]
    fn read_lanes_matches_read_words() {
        let nt = 8;
        let mut u = RtuUnit::new(&RtuConfig::default(), 2, nt);
        let mem = MemoryMap::default();
        u.launch_warp(1, 2);
        let ray = TraceRay { tmax: 9.0, dir: [1.0, 0.0, 0.0], cull_mask: 7, ..TraceRay::default() };
        u.trace(&mem, 1, 0b0110_1001, &[1u32; MAX_THREADS], &[ray; MAX_THREADS]).unwrap();
        u.trace(&mem, 1, 0b0000_0110, &[0u32; MAX_THREADS], &[ray; MAX_THREADS]).unwrap();
        let cases: [(u32, [u32; 8]); 5] = [
            (0xff, [1; 8]),
            (0b1011_0110, [0; 8]),
            (0xff, [0, 1, 0, 1, 1, 0, 1, 0]),
            (0b1111_0000, [0, 0, 0, 0, 1, 1, 2, 1]),
            (0xff, [2; 8]),
        ];
        for (mask, qs) in cases {
            let mut q = [0u32; MAX_THREADS];
            q[..8].copy_from_slice(&qs);
            for (slot, count) in [(0, 4), (rtu_abi::RAY_ORIGIN, 3), (rtu_abi::STATUS, 1), (rtu_abi::SLOT_COUNT - 2, 4)]
            {
                let (mut a, mut b) = ([[0u32; MAX_THREADS]; 4], [[0u32; MAX_THREADS]; 4]);
                let ra = u.read_lanes(1, mask, &q, slot, count, |k, l, v| a[k][l] = v);
                let mut rb = Ok(());
                for l in (0..nt).filter(|l| mask >> l & 1 != 0) {
                    rb = u.read_words(1, l, q[l], slot, count, |k, v| b[k][l] = v);
                    if rb.is_err() {
                        break;
                    }
                }
                let text = |r: &Result<(), RtuError>| r.as_ref().err().map(|e| (e.lane, e.fault.to_string()));
                assert_eq!(text(&ra), text(&rb), "mask {mask:#x} q {qs:?} slot {slot}");
                if ra.is_ok() {
                    assert_eq!(a, b, "mask {mask:#x} q {qs:?} slot {slot}");
                }
            }
        }
    }
}
