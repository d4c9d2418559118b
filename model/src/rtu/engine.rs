//! The socket's traversal core (seed 000 §4, `VX_rtu_core`), in timed mode.
//!
//! - **Staging**: one entry per {core, warp, query} (the trace handle; several per warp, the
//!   seed's open gap). TRACE's rays land unconditionally, so a TRACE never stalls.
//! - **Slot pool and fill engine**: `NUM_SLOTS` traversals at once; the fill engine claims a
//!   free slot for the oldest staged trace and streams its lanes into the slot's contexts
//!   one per cycle (each lane's launch starts its reciprocal, then its walk). No free slot:
//!   the trace waits in staging (back-pressure).
//! - **Context scheduler**: `NUM_CTX = NUM_SLOTS × NUM_THREADS` contexts with wake bits and a
//!   three-stage SELECT / ALIGN / EXEC pipeline retiring one micro-step per cycle. A micro-
//!   step either drives the RTCache port with the record the walk asked for, or consumes the
//!   lines that came back: the walker (the same code functional mode runs) advances one
//!   record, and the PE work that record needs (box tests one child per cycle on the shared
//!   box PE into the nearest-first collector, triangle tests, instance transform plus the
//!   reciprocal of the object ray) decides when the context wakes to fetch the next record.
//!   A context never holds the pipeline while it waits.
//! - **Record write-back**: when a slot's lanes have all settled (terminal or candidate), or
//!   `reform_thresh` of them hold a candidate, the commit engine writes the batch to the hit
//!   windows `window_port_words` words per cycle, STATUS last; lanes still traversing read
//!   PENDING. With reformation by SBT key (`reform_sbt`, in a dispatch that selects shaders
//!   by SBT record) a batch holds the terminal lanes and the candidates of one SBT key; the
//!   other candidates read PENDING too and follow, one key per batch, back to back. A slot
//!   with no lane traversing is released: the walk state of a lane waiting
//!   for its CONTINUE stays with its staging home, and its CONTINUE re-stages it. (The seed
//!   keeps such a slot live; releasing it is what makes a nested trace from inside a
//!   proceed loop deadlock-free when the pool is small.)
//!
//! The walk answers never depend on timing: a context runs the walker only when every line
//! its record needs has come back, and then reads the bytes from device memory.

use super::walker::{MemSource, NodeSource, Outcome};
use super::{RtuMsg, RtuStats, RtuUnit};
use crate::abi::LINE_BYTES;
use crate::cache::{line_of, Cache, Refused};
use crate::config::DeviceConfig;
use crate::config::RtuConfig;
use crate::fault::Fault;
use crate::mem::{MemFault, MemoryMap};
use crate::rtu::records::HeaderCache;
use crate::rtu::timeline::{Activity, Timeline};
use crate::tlb::Tlb;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Counters of one traversal core.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EngineStats {
    /// Cycles the core existed (the dispatch's length; summed over traversal cores in totals).
    pub cycles: u64,
    /// Cycles whose EXEC stage retired a micro-step.
    pub busy_cycles: u64,
    /// Idle cycles with a ray in hand: a context traversing (waiting on the RTCache or a
    /// PE) or a trace staged, but nothing to execute.
    pub idle_with_ray: u64,
    /// Idle cycles with no ray anywhere in the unit (starved: the cores did not feed it).
    pub idle_starved: u64,
    /// Sum over cycles of live slots (divide by `cycles` for the mean occupancy).
    pub slot_cycles: u64,
    /// Sum over cycles of traversing contexts.
    pub context_cycles: u64,
    /// Cycles a staged trace waited because every slot was taken.
    pub slot_full_cycles: u64,
    /// Traces staged by TRACE, and lanes re-staged by a CONTINUE after their slot left.
    pub traces: u64,
    pub restaged_lanes: u64,
    /// Record batches written back, lanes reported PENDING in them, window words written.
    pub batches: u64,
    pub pending_lanes: u64,
    pub window_words: u64,
    /// Lanes written back in batches, and those of them holding a candidate.
    pub batch_lanes: u64,
    pub batch_candidates: u64,
    /// Batches holding a candidate, and their distinct SBT keys (instance SBT offset,
    /// geometry index) summed: per candidate batch, how many ways the shader dispatcher's
    /// compare chain splits the warp.
    pub candidate_batches: u64,
    pub batch_sbt_keys: u64,
    /// Candidates the SBT grouping held back for a following batch.
    pub deferred_lanes: u64,
    /// Line reads sent to the RTCache (a record spanning two lines costs two).
    pub line_requests: u64,
    /// Micro-steps that found the RTCache refusing (MSHRs full or bank busy) and retried.
    pub port_retries: u64,
    /// Line requests into a sparse resource (each looked its page up in the TLB), and those
    /// that missed and walked the page table.
    pub tlb_lookups: u64,
    pub tlb_misses: u64,
    /// Cycles the box / triangle / transform PEs accepted work.
    pub box_pe_cycles: u64,
    pub tri_pe_cycles: u64,
    pub xform_pe_cycles: u64,
}

impl EngineStats {
    pub fn add(&mut self, o: &EngineStats) {
        self.cycles += o.cycles;
        self.busy_cycles += o.busy_cycles;
        self.idle_with_ray += o.idle_with_ray;
        self.idle_starved += o.idle_starved;
        self.slot_cycles += o.slot_cycles;
        self.context_cycles += o.context_cycles;
        self.slot_full_cycles += o.slot_full_cycles;
        self.traces += o.traces;
        self.restaged_lanes += o.restaged_lanes;
        self.batches += o.batches;
        self.pending_lanes += o.pending_lanes;
        self.window_words += o.window_words;
        self.batch_lanes += o.batch_lanes;
        self.batch_candidates += o.batch_candidates;
        self.candidate_batches += o.candidate_batches;
        self.batch_sbt_keys += o.batch_sbt_keys;
        self.deferred_lanes += o.deferred_lanes;
        self.line_requests += o.line_requests;
        self.port_retries += o.port_retries;
        self.tlb_lookups += o.tlb_lookups;
        self.tlb_misses += o.tlb_misses;
        self.box_pe_cycles += o.box_pe_cycles;
        self.tri_pe_cycles += o.tri_pe_cycles;
        self.xform_pe_cycles += o.xform_pe_cycles;
    }
}

/// The cores a traversal core serves: their front ends, and a doorbell for parked WAITs.
pub trait Fronts {
    fn unit(&mut self, core: usize) -> &mut RtuUnit;
    /// The front end of `core`, read only.
    fn unit_ref(&self, core: usize) -> &RtuUnit;
    /// A record landed for `warp` of `core`: a WAIT parked there may complete.
    fn wake(&mut self, core: usize, warp: u32);
}

/// Where an RTCache miss goes: returns when the line arrives, asked at cycle `t`.
pub trait Below {
    fn read(&mut self, line: u64, t: u64) -> u64;
}

/// What a traversal core is wired to while it ticks: the front ends of the cores it serves,
/// its RTCache port, what is below the RTCache, and device memory (the walker's records).
pub struct Links<'a, 'm, F: Fronts, B: Below> {
    pub fronts: &'a mut F,
    pub rtcache: &'a mut Cache,
    pub below: &'a mut B,
    pub mem: &'a mut MemSource<'m>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Free,
    /// Streamed in; its reciprocal is in flight.
    Launch,
    /// Ready to run the walker on the lines it holds.
    Run,
    /// Has lines to send to the RTCache.
    Fetch,
    /// Waiting for its lines.
    MemWait,
    /// Waiting for its PE results before fetching the next record.
    PeWait,
    /// Waiting for its PE results before its record settles.
    SettleWait,
    /// Terminal or candidate: waiting for write-back (or, after it, for a CONTINUE).
    Settled,
}

struct Ctx {
    gen: u32,
    phase: Phase,
    /// Lines of the record being fetched, how many were sent, and the cycle the last of
    /// those sent comes back (one wake event a record, however many lines it spans).
    want: Vec<u64>,
    sent: usize,
    lines_at: u64,
    /// Lines of the current record that have come back.
    held: Vec<u64>,
    outcome: Outcome,
}

#[derive(Clone, Debug, Default)]
struct Slot {
    live: bool,
    core: u32,
    warp: u32,
    query: u32,
    /// Member lanes.
    lanes: u32,
    /// Lanes still to stream in, and which of them are fresh arms (vs resumed walks).
    launching: u32,
    arm_lanes: u32,
    traversing: u32,
    /// Settled, not yet written back.
    settled: u32,
    /// Written back with a candidate, waiting for a CONTINUE.
    waiting: u32,
    /// Settled candidates the SBT grouping held back from a batch: written next.
    deferred: u32,
    queued_wb: bool,
}

#[derive(Clone, Copy, Debug)]
struct Stage {
    core: u32,
    warp: u32,
    query: u32,
    arm: u32,
    resume: u32,
}

struct WriteBack {
    slot: usize,
    lanes: u32,
    done_at: u64,
}

/// Pipeline latencies and widths of one traversal core.
#[derive(Clone, Copy, Debug)]
struct Timing {
    box_lat: u64,
    tri_lat: u64,
    xform_lat: u64,
    recip_lat: u64,
    ports: usize,
    record_cycles: u64,
    record_words: u64,
    reform: Reform,
}

/// How the commit engine forms candidate batches (seed 000's ReformationEngine).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reform {
    /// Write a batch once this many lanes hold a candidate (0: once no lane is traversing).
    pub thresh: u32,
    /// One SBT key per candidate batch.
    pub sbt: bool,
}

/// The source the walker reads in timed mode: a record is there only once every line it
/// spans has come back to the context; otherwise the lines are asked for.
struct TimedSource<'a, 'm> {
    mem: &'a mut MemSource<'m>,
    held: &'a mut Vec<u64>,
    want: &'a mut Vec<u64>,
}

impl NodeSource for TimedSource<'_, '_> {
    // Inline: a record whose lines are held is read in place; asking for the lines is the
    // call.
    #[inline(always)]
    fn bytes(&mut self, addr: u64, len: usize) -> Result<Option<&[u8]>, MemFault> {
        let (first, last) = (line_of(addr), line_of(addr + len.max(1) as u64 - 1));
        if holds(self.held, first, last) {
            return self.mem.bytes(addr, len);
        }
        self.ask(addr, len, first, last).map(|()| None)
    }

    fn new_step(&mut self) {
        self.held.clear();
    }

    const TRACKS_STEPS: bool = true;
}

impl TimedSource<'_, '_> {
    /// The record at `addr` (lines `first..=last`) is not all held: its missing lines become
    /// the lines the context asks for.
    #[inline(never)]
    fn ask(&mut self, addr: u64, len: usize, first: u64, last: u64) -> Result<(), MemFault> {
        // Faults as the read would (the same lookup as `check`, with the recent region's
        // test inline).
        self.mem.bytes(addr, len)?;
        self.want.clear();
        if self.held.is_empty() {
            // Right after a new step nothing is held: the record's every line.
            self.want.push(first);
            if last != first {
                self.want.extend(first + 1..=last);
            }
        } else {
            self.want.extend((first..=last).filter(|l| !self.held.contains(l)));
        }
        Ok(())
    }
}

/// Whether `held` has every line of `first..=last`. The common cases first: nothing held
/// (a new step asks for its record) and the one or two lines a record resumed on.
#[inline(always)]
fn holds(held: &[u64], first: u64, last: u64) -> bool {
    match held {
        [] => false,
        [h] => first == *h && last == *h,
        [a, b] if last - first <= 1 => (first == *a || first == *b) && (last == *a || last == *b),
        // A plain loop: `all` over an inclusive range is a generic call that is not inlined.
        _ => {
            let mut l = first;
            while l <= last {
                if !held.contains(&l) {
                    return false;
                }
                l += 1;
            }
            true
        }
    }
}

/// Every line of the record has come back: the lines asked for join those held (without a
/// copy when none are held, the common case after a new step).
#[inline(always)]
fn land(held: &mut Vec<u64>, want: &mut Vec<u64>) {
    if held.is_empty() {
        std::mem::swap(held, want);
    } else {
        held.append(want);
    }
}

type Ev = (u32, u32, bool);

/// A timing wheel of wake events: one bucket per cycle over a window, a heap beyond it.
/// Events are never scheduled in the past, and the core is ticked at every cycle that
/// holds one (its next event is the minimum), so only the current bucket can be due.
struct Wheel {
    // Arrays of the window's size, so a bucket's index needs no bounds check.
    buckets: Box<[Vec<Ev>; WHEEL as usize]>,
    /// Non-empty buckets, one bit each.
    used: [u64; WHEEL as usize / 64],
    far: BinaryHeap<Reverse<(u64, Ev)>>,
    /// Cycle of the last `take_due` (events before it are never pushed).
    base: u64,
    len: usize,
}

const WHEEL: u64 = 1024;

impl Wheel {
    fn new() -> Wheel {
        Wheel {
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            used: [0; WHEEL as usize / 64],
            far: BinaryHeap::new(),
            base: 0,
            len: 0,
        }
    }

    // Inlined into the port and the step (a record's lines back or a PE result per micro-step); the
    // rare event beyond the window goes out of line.
    #[inline(always)]
    fn push(&mut self, at: u64, e: Ev) {
        self.len += 1;
        if at < self.base + WHEEL {
            let b = (at % WHEEL) as usize;
            self.buckets[b].push(e);
            self.used[b / 64] |= 1 << (b % 64);
        } else {
            self.push_far(at, e);
        }
    }

    #[inline(never)]
    fn push_far(&mut self, at: u64, e: Ev) {
        self.far.push(Reverse((at, e)));
    }

    /// Moves the clock to `now` (the window's base, and the far events that now fall in
    /// it) and tells whether any event is due at `now`.
    #[inline(always)]
    fn advance(&mut self, now: u64) -> bool {
        self.base = now;
        if !self.far.is_empty() {
            self.migrate(now);
        }
        let b = (now % WHEEL) as usize;
        self.used[b / 64] >> (b % 64) & 1 != 0
    }

    /// The far events that the window now reaches go to their buckets.
    #[inline(never)]
    fn migrate(&mut self, now: u64) {
        while let Some(Reverse((at, e))) = self.far.peek().copied() {
            if at >= now + WHEEL {
                break;
            }
            self.far.pop();
            self.len -= 1;
            self.push(at, e);
        }
    }

    /// Moves the events due at `now` into `out` ([`Self::advance`] to `now` first).
    #[inline(always)]
    fn take_due(&mut self, now: u64, out: &mut Vec<Ev>) {
        let b = (now % WHEEL) as usize;
        if self.used[b / 64] >> (b % 64) & 1 != 0 {
            self.len -= self.buckets[b].len();
            if out.is_empty() {
                // The bucket's events become `out` and `out`'s buffer the empty bucket: no copy.
                std::mem::swap(out, &mut self.buckets[b]);
            } else {
                out.append(&mut self.buckets[b]);
            }
            self.used[b / 64] &= !(1 << (b % 64));
        }
    }

    /// The earliest cycle after `now` holding an event (`u64::MAX`: none).
    fn next_at(&self, now: u64) -> u64 {
        if self.len == 0 {
            return u64::MAX;
        }
        let words = self.used.len();
        let start = ((now + 1) % WHEEL) as usize;
        let (sw, sb) = (start / 64, start % 64);
        for k in 0..=words {
            let wi = (sw + k) % words;
            let mut bits = self.used[wi];
            if k == 0 {
                bits &= !0u64 << sb;
            } else if k == words {
                bits &= (1u64 << sb).wrapping_sub(1);
            }
            if bits != 0 {
                let b = (wi * 64 + bits.trailing_zeros() as usize) as u64;
                let cur = (now + 1) % WHEEL;
                let d = (b + WHEEL - cur) % WHEEL;
                return now + 1 + d;
            }
        }
        self.far.peek().map_or(u64::MAX, |Reverse((at, _))| *at)
    }
}

/// A cluster's clock as [`RtuCore::stretch`] moves it: the current cycle, the core's next
/// event and the end of the dispatch so far (one past the last cycle ticked).
#[derive(Clone, Copy, Debug)]
pub struct Stretch {
    pub now: u64,
    pub next: u64,
    pub end: u64,
}

/// One traversal core.
// Aligned so units that run on different host threads never share a cache line.
#[repr(align(128))]
pub struct RtuCore {
    cfg: RtuConfig,
    t: Timing,
    nt: usize,
    /// Device-wide id of the cluster's first core (faults name device-wide cores; messages
    /// and fronts use cluster-local core indices).
    pub core_base: u32,
    inbox: BinaryHeap<Reverse<(u64, u64, u32, RtuMsg)>>,
    inbox_seq: u64,
    staging: VecDeque<Stage>,
    slots: Vec<Slot>,
    free_slots: usize,
    ctx: Vec<Ctx>,
    wake: Vec<u64>,
    wake_count: usize,
    rr: usize,
    /// Wake events: (context, generation, whether a record's lines are back), by cycle.
    events: Wheel,
    due: Vec<(u32, u32, bool)>,
    pipe: [Option<(u32, u32)>; 2],
    filling: Option<usize>,
    wb: Option<WriteBack>,
    wb_queue: VecDeque<usize>,
    box_free: u64,
    tri_free: u64,
    xform_free: u64,
    recip_free: u64,
    traversing: u64,
    live_slots: u64,
    /// The cycle being ticked.
    cur: u64,
    /// The first cycle not yet classified (busy, idle with a ray, starved, slot-full).
    acct_from: u64,
    /// The first cycle whose live slots and traversing contexts are not yet summed into the
    /// counters: they change a few times per ray, so they are summed at each change (and at
    /// the end) rather than at every cycle.
    integ_from: u64,
    /// Whether the last ticked cycle left a ray in hand, and a trace waiting for a slot
    /// (for the cycles skipped after it).
    ray_in_hand: bool,
    /// The first cycle the write-back or the fill engine may have work (a write-back's end,
    /// or the next cycle while a slot fills): set to 0 where work is queued or a slot frees,
    /// so the common tick tests one word instead of each queue.
    chores_at: u64,
    slot_full: bool,
    /// A record landed for a parked WAIT in the cycle last ticked: its core is due the next
    /// one.
    rang: bool,
    /// The batch, port and PE counters as they happen; `cycles`, `idle_starved`,
    /// `slot_cycles` and `context_cycles` are complete only after [`Self::finish`].
    pub stats: EngineStats,
    /// The TLB in front of the RTCache port (sparse resources).
    tlb: Tlb,
    /// Structure headers decoded by this core's walks (the decode only: every header is
    /// still fetched through the RTCache).
    headers: HeaderCache,
    /// With `DeviceConfig::detailed_stats`: the same counters over time.
    pub timeline: Option<Timeline>,
}

impl RtuCore {
    pub fn new(cfg: &DeviceConfig, core_base: u32, reform: Reform) -> RtuCore {
        let r = &cfg.rtu;
        let nt = cfg.num_threads as usize;
        let slots = cfg.rtu_slots() as usize;
        let record_words = crate::abi::rtu::span::LEN as u64 + 2;
        let ctx = (0..slots * nt)
            .map(|_| Ctx {
                gen: 0,
                phase: Phase::Free,
                want: Vec::with_capacity(8),
                sent: 0,
                lines_at: 0,
                held: Vec::with_capacity(8),
                outcome: Outcome::Done,
            })
            .collect();
        RtuCore {
            cfg: r.clone(),
            t: Timing {
                box_lat: r.box_latency() as u64,
                tri_lat: r.tri_latency() as u64,
                xform_lat: r.xform_latency() as u64,
                recip_lat: r.recip_latency() as u64,
                ports: r.num_rtu_blocks as usize,
                record_cycles: record_words.div_ceil(r.window_port_words as u64),
                record_words,
                reform,
            },
            nt,
            core_base,
            inbox: BinaryHeap::new(),
            inbox_seq: 0,
            staging: VecDeque::new(),
            slots: vec![Slot::default(); slots],
            free_slots: slots,
            ctx,
            wake: vec![0; (slots * nt).div_ceil(64)],
            wake_count: 0,
            rr: 0,
            events: Wheel::new(),
            due: Vec::new(),
            pipe: [None, None],
            filling: None,
            wb: None,
            wb_queue: VecDeque::new(),
            box_free: 0,
            tri_free: 0,
            xform_free: 0,
            recip_free: 0,
            traversing: 0,
            live_slots: 0,
            cur: 0,
            acct_from: 0,
            integ_from: 0,
            ray_in_hand: false,
            chores_at: 0,
            slot_full: false,
            rang: false,
            stats: EngineStats::default(),
            tlb: Tlb::new(cfg.mem.tlb_entries, cfg.mem.page_walk_latency),
            headers: HeaderCache::default(),
            timeline: cfg.detailed_stats.then(Timeline::default),
        }
    }

    /// A message from core `core` (cluster-local) arrives at cycle `at`.
    pub fn post(&mut self, at: u64, core: u32, msg: RtuMsg) {
        self.inbox.push(Reverse((at, self.inbox_seq, core, msg)));
        self.inbox_seq += 1;
    }

    pub fn debug_state(&self) -> String {
        let live: Vec<_> = self.slots.iter().filter(|s| s.live).collect();
        format!(
            "rtu: staging {:?} slots {:?} wake {} events {} inbox {} wb {:?}/{:?} filling {:?}",
            self.staging,
            live,
            self.wake_count,
            self.events.len,
            self.inbox.len(),
            self.wb.as_ref().map(|w| w.slot),
            self.wb_queue,
            self.filling
        )
    }

    /// True when nothing is in flight (no message, staged trace, live slot or write-back).
    pub fn idle(&self) -> bool {
        self.inbox.is_empty() && self.staging.is_empty() && self.live_slots == 0 && self.wb.is_none()
    }

    /// The next cycle this core has something to do (`u64::MAX`: nothing until poked).
    #[inline]
    pub fn next_event(&self, now: u64) -> u64 {
        if self.wake_count > 0
            || self.pipe.iter().any(|p| p.is_some())
            || self.filling.is_some()
            || (!self.staging.is_empty() && self.free_slots > 0)
            || (self.wb.is_none() && !self.wb_queue.is_empty())
        {
            return now + 1;
        }
        let mut t = u64::MAX;
        if let Some(Reverse((at, ..))) = self.inbox.peek() {
            t = t.min(*at);
        }
        t = t.min(self.events.next_at(now));
        if let Some(wb) = &self.wb {
            t = t.min(wb.done_at);
        }
        t.max(now + 1)
    }

    #[inline]
    fn set_wake(&mut self, c: usize) {
        let (w, b) = (c / 64, 1u64 << (c % 64));
        if self.wake[w] & b == 0 {
            self.wake[w] |= b;
            self.wake_count += 1;
        }
    }

    #[inline]
    fn clear_wake(&mut self, c: usize) {
        let (w, b) = (c / 64, 1u64 << (c % 64));
        if self.wake[w] & b != 0 {
            self.wake[w] &= !b;
            self.wake_count -= 1;
        }
    }

    /// Round-robin SELECT of a context whose wake bit is set.
    #[inline(always)]
    fn select(&mut self) -> Option<usize> {
        if self.wake_count == 0 {
            return None;
        }
        let n = self.ctx.len();
        let words = self.wake.len();
        let start = if self.rr >= n { self.rr - n } else { self.rr };
        if let [word] = self.wake.as_mut_slice() {
            // Up to 64 contexts (the default machine's two slots): the bits from the start on,
            // else the lowest.
            let all = *word;
            let from = all & (!0u64 << start);
            let c = if from != 0 { from } else { all }.trailing_zeros() as usize;
            *word = all & !(1u64 << c);
            self.wake_count -= 1;
            self.rr = c + 1;
            return Some(c);
        }
        let (sw, sb) = (start / 64, start % 64);
        // From the start bit to the end of its word, the words after it (wrapping), then the
        // start word's bits below the start.
        let mut hit = (sw, self.wake[sw] & (!0u64 << sb));
        let mut k = 1;
        while hit.1 == 0 && k < words {
            let wi = if sw + k >= words { sw + k - words } else { sw + k };
            hit = (wi, self.wake[wi]);
            k += 1;
        }
        if hit.1 == 0 {
            hit = (sw, self.wake[sw] & ((1u64 << sb) - 1));
        }
        let (wi, bits) = hit;
        if bits == 0 {
            return None;
        }
        let c = wi * 64 + bits.trailing_zeros() as usize;
        // The bit is set: clear it without `clear_wake`'s test.
        self.wake[wi] &= !(1u64 << (c % 64));
        self.wake_count -= 1;
        self.rr = c + 1;
        Some(c)
    }

    #[inline(always)]
    fn event(&mut self, at: u64, c: usize) {
        self.events.push(at, (c as u32, self.ctx[c].gen, false));
    }

    /// Drops `lanes` of slot `s` (a new TRACE re-armed them, or their warp retired).
    fn abort(&mut self, s: usize, lanes: u32) {
        self.integrate();
        let sl = &mut self.slots[s];
        let lanes = lanes & sl.lanes;
        if lanes == 0 {
            return;
        }
        self.traversing -= (sl.traversing & lanes).count_ones() as u64;
        sl.lanes &= !lanes;
        sl.launching &= !lanes;
        sl.arm_lanes &= !lanes;
        sl.traversing &= !lanes;
        sl.settled &= !lanes;
        sl.waiting &= !lanes;
        sl.deferred &= !lanes;
        let mut m = lanes;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let c = s * self.nt + l;
            self.ctx[c].gen = self.ctx[c].gen.wrapping_add(1);
            self.ctx[c].phase = Phase::Free;
            self.ctx[c].held.clear();
            self.clear_wake(c);
        }
        self.maybe_release(s);
    }

    fn maybe_release(&mut self, s: usize) {
        let in_wb = self.wb.as_ref().is_some_and(|w| w.slot == s);
        let sl = &self.slots[s];
        if sl.live && sl.launching == 0 && sl.traversing == 0 && sl.settled == 0 && !sl.queued_wb && !in_wb {
            let waiting = sl.waiting;
            self.integrate();
            for l in 0..self.nt {
                if waiting >> l & 1 != 0 || self.ctx[s * self.nt + l].phase != Phase::Free {
                    let c = s * self.nt + l;
                    self.ctx[c].gen = self.ctx[c].gen.wrapping_add(1);
                    self.ctx[c].phase = Phase::Free;
                    self.ctx[c].held.clear();
                    self.clear_wake(c);
                }
            }
            if self.filling == Some(s) {
                self.filling = None;
            }
            self.slots[s] = Slot::default();
            self.free_slots += 1;
            self.chores_at = 0;
            self.live_slots -= 1;
        }
    }

    fn stage(&mut self, core: u32, warp: u32, query: u32, arm: u32, resume: u32) {
        self.chores_at = 0;
        if let Some(e) = self.staging.iter_mut().find(|e| e.core == core && e.warp == warp && e.query == query) {
            e.arm |= arm;
            e.resume = (e.resume | resume) & !e.arm;
            return;
        }
        self.staging.push_back(Stage { core, warp, query, arm, resume });
    }

    fn handle(&mut self, core: u32, msg: RtuMsg, now: u64) {
        match msg {
            RtuMsg::Arm { warp, query, mask } => {
                for s in 0..self.slots.len() {
                    let sl = &self.slots[s];
                    if sl.live && sl.core == core && sl.warp == warp && sl.query == query {
                        self.abort(s, mask);
                    }
                }
                for e in self.staging.iter_mut() {
                    if e.core == core && e.warp == warp && e.query == query {
                        e.resume &= !mask;
                    }
                }
                self.stats.traces += 1;
                self.stage(core, warp, query, mask, 0);
            }
            RtuMsg::Resume { warp, query, mask } => {
                self.integrate();
                let mut left = mask;
                for s in 0..self.slots.len() {
                    let sl = &mut self.slots[s];
                    if !(sl.live && sl.core == core && sl.warp == warp && sl.query == query) {
                        continue;
                    }
                    let lanes = sl.waiting & left;
                    if lanes == 0 {
                        continue;
                    }
                    sl.waiting &= !lanes;
                    sl.traversing |= lanes;
                    left &= !lanes;
                    self.traversing += lanes.count_ones() as u64;
                    let mut m = lanes;
                    while m != 0 {
                        let l = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let c = s * self.nt + l;
                        self.ctx[c].phase = Phase::Run;
                        self.ctx[c].held.clear();
                        self.set_wake(c);
                    }
                }
                if left != 0 {
                    self.stats.restaged_lanes += left.count_ones() as u64;
                    self.stage(core, warp, query, 0, left);
                }
            }
            RtuMsg::Release { warp } => {
                for s in 0..self.slots.len() {
                    let sl = &self.slots[s];
                    if sl.live && sl.core == core && sl.warp == warp {
                        let lanes = sl.lanes;
                        self.abort(s, lanes);
                    }
                }
                self.staging.retain(|e| !(e.core == core && e.warp == warp));
            }
        }
        let _ = now;
    }

    /// One cycle.
    pub fn tick<F: Fronts, B: Below>(&mut self, now: u64, links: &mut Links<F, B>) -> Result<(), Fault> {
        self.cycle(now, links)
    }

    /// Whether a record landed for a parked WAIT in the cycle last ticked (its core is due
    /// the next cycle); asking clears it.
    pub fn take_rang(&mut self) -> bool {
        std::mem::take(&mut self.rang)
    }

    /// Ticks this core at each cycle from `at.now` that holds one of its events, for as long
    /// as nothing else is due: up to `limit` or `until` (exclusive), the cycle after one that
    /// rang a doorbell ([`Self::take_rang`]: the WAIT's core is due then), or until no event
    /// is left (returns true). The cluster's loop while only its one traversal core has work,
    /// here so that a tick's state stays in registers from cycle to cycle. `at` is the
    /// cluster's clock: on return, the cycle to go on from, this core's next event and the
    /// end of the dispatch so far (one past the last cycle ticked).
    pub fn stretch<F: Fronts, B: Below>(
        &mut self,
        at: &mut Stretch,
        mut limit: u64,
        until: u64,
        links: &mut Links<F, B>,
    ) -> Result<bool, Fault> {
        let Stretch { mut now, mut next, mut end } = *at;
        let idle = loop {
            if next <= now {
                if let Err(f) = self.cycle(now, links) {
                    *at = Stretch { now, next, end };
                    return Err(f);
                }
                next = self.next_event(now);
                if self.rang {
                    limit = limit.min(now + 1);
                }
            }
            if next.min(limit) == u64::MAX {
                break true;
            }
            end = now + 1;
            now = next.min(limit).min(until).max(now + 1);
            if now >= until || now >= limit {
                break false;
            }
        };
        *at = Stretch { now, next, end };
        Ok(idle)
    }

    #[inline(always)]
    fn cycle<F: Fronts, B: Below>(&mut self, now: u64, links: &mut Links<F, B>) -> Result<(), Fault> {
        // The doorbell flag is this cycle's (a caller that never asks for it, as the RTU
        // harness, leaves no stale ring behind).
        self.rang = false;
        // Cycles skipped since the last tick saw nothing change.
        self.cur = now;
        let from = self.acct_from;
        if now > from {
            self.skipped(from, now - from);
        }

        // Messages from the cores (the arrival cycle tested before the message is copied).
        while self.inbox.peek().is_some_and(|Reverse((at, ..))| *at <= now) {
            let Some(Reverse((_, _, core, msg))) = self.inbox.pop() else { break };
            self.handle(core, msg, now);
        }

        // Wake events: records' lines back, PE results, launches (most ticks have none).
        if self.events.advance(now) {
            self.wake_due(now);
        }
        if now >= self.chores_at {
            self.write_back_and_fill(now, &mut *links.fronts);
        }

        // EXEC, then the pipeline advances and SELECT picks the next context.
        let mut retired = false;
        if let Some((c, gen)) = self.pipe[1] {
            let c = c as usize;
            if self.ctx[c].gen == gen {
                retired = self.exec(c, now, links)?;
            }
        }
        self.pipe[1] = self.pipe[0];
        self.pipe[0] = self.select().map(|c| (c as u32, self.ctx[c].gen));
        self.ray_in_hand = self.traversing > 0 || !self.staging.is_empty();
        self.slot_full = self.filling.is_none() && self.free_slots == 0 && !self.staging.is_empty();
        // This cycle's class (`cycles` and `idle_starved` follow from the others at the end).
        self.stats.busy_cycles += retired as u64;
        self.stats.idle_with_ray += (!retired && self.ray_in_hand) as u64;
        self.stats.slot_full_cycles += self.slot_full as u64;
        if self.timeline.is_some() {
            self.record(now, 1, retired);
        }
        self.acct_from = now + 1;
        Ok(())
    }

    /// The record write-back and the fill engine, in ticks from `chores_at` on (out of line:
    /// most ticks have neither).
    #[inline(never)]
    fn write_back_and_fill(&mut self, now: u64, fronts: &mut dyn Fronts) {
        // Record write-back.
        if let Some(wb) = &self.wb {
            if wb.done_at <= now {
                let wb = self.wb.take().expect("write-back");
                self.finish_writeback(wb, fronts);
            }
        }
        if self.wb.is_none() && !self.wb_queue.is_empty() {
            self.start_writeback(now, &*fronts);
        }

        // Fill engine: one lane per cycle into the claimed slot.
        if self.filling.is_none() && self.free_slots > 0 {
            while let Some(e) = self.staging.pop_front() {
                if e.arm | e.resume == 0 {
                    continue;
                }
                let s = self.slots.iter().position(|s| !s.live).expect("a free slot");
                self.integrate();
                self.free_slots -= 1;
                self.live_slots += 1;
                self.slots[s] = Slot {
                    live: true,
                    core: e.core,
                    warp: e.warp,
                    query: e.query,
                    lanes: e.arm | e.resume,
                    launching: e.arm | e.resume,
                    arm_lanes: e.arm,
                    ..Slot::default()
                };
                for l in 0..self.nt {
                    let c = s * self.nt + l;
                    self.ctx[c].gen = self.ctx[c].gen.wrapping_add(1);
                }
                self.filling = Some(s);
                break;
            }
        }
        if let Some(s) = self.filling.filter(|&s| self.slots[s].launching != 0) {
            let sl = &mut self.slots[s];
            let l = sl.launching.trailing_zeros() as usize;
            let bit = 1u32 << l;
            sl.launching &= !bit;
            sl.traversing |= bit;
            let arm = sl.arm_lanes & bit != 0;
            if sl.launching == 0 {
                self.filling = None;
            }
            self.integrate();
            self.traversing += 1;
            let c = s * self.nt + l;
            let cx = &mut self.ctx[c];
            cx.phase = Phase::Launch;
            cx.held.clear();
            cx.want.clear();
            cx.sent = 0;
            cx.lines_at = 0;
            // A fresh ray needs its direction's reciprocal before the first box test.
            let at = if arm {
                let start = (now + 1).max(self.recip_free);
                self.recip_free = start + 1;
                start + self.t.recip_lat
            } else {
                now + 1
            };
            self.event(at, c);
        }
        // A staged trace waiting for a slot has no work until one frees.
        let every_cycle = self.filling.is_some()
            || (self.free_slots > 0 && !self.staging.is_empty())
            || (self.wb.is_none() && !self.wb_queue.is_empty());
        self.chores_at = match &self.wb {
            _ if every_cycle => now + 1,
            Some(wb) => wb.done_at,
            None => u64::MAX,
        };
    }

    /// Applies the wake events due at `now` ([`Wheel::advance`] found some).
    #[inline(always)]
    fn wake_due(&mut self, now: u64) {
        let mut due = std::mem::take(&mut self.due);
        self.events.take_due(now, &mut due);
        for &(c, gen, line) in &due {
            let c = c as usize;
            if self.ctx[c].gen != gen {
                continue;
            }
            if line {
                let cx = &mut self.ctx[c];
                if cx.phase == Phase::MemWait {
                    let Ctx { want, held, .. } = cx;
                    land(held, want);
                    cx.sent = 0;
                    cx.phase = Phase::Run;
                    self.set_wake(c);
                }
                continue;
            }
            match self.ctx[c].phase {
                Phase::Launch => {
                    self.ctx[c].phase = Phase::Run;
                    self.set_wake(c);
                }
                Phase::PeWait => {
                    self.ctx[c].phase = Phase::Fetch;
                    self.set_wake(c);
                }
                Phase::SettleWait => self.settle(c),
                _ => {}
            }
        }

        due.clear();
        self.due = due;
    }

    /// Classifies the `cycles` idle cycles from cycle `at` on, in the state the last tick
    /// left.
    #[inline]
    fn skipped(&mut self, at: u64, cycles: u64) {
        self.stats.idle_with_ray += self.ray_in_hand as u64 * cycles;
        self.stats.slot_full_cycles += self.slot_full as u64 * cycles;
        if self.timeline.is_some() {
            self.record(at, cycles, false);
        }
    }

    /// The timeline's record of `cycles` cycles from `at` on (with `detailed_stats`).
    #[inline(never)]
    fn record(&mut self, at: u64, cycles: u64, busy: bool) {
        let what = if busy {
            Activity::Busy
        } else if self.ray_in_hand {
            Activity::IdleWithRay
        } else {
            Activity::Starved
        };
        if let Some(t) = &mut self.timeline {
            t.record(at, cycles, what, self.live_slots, self.slot_full);
        }
    }

    /// Adds the live slots and traversing contexts of the cycles from `integ_from` up to the
    /// one being ticked; called before either changes.
    #[inline]
    fn integrate(&mut self) {
        let d = self.cur - self.integ_from;
        self.stats.slot_cycles += self.live_slots * d;
        self.stats.context_cycles += self.traversing * d;
        self.integ_from = self.cur;
    }

    /// Brings the cycle counters up to `end` (the dispatch's last cycle).
    pub fn finish(&mut self, end: u64) {
        let from = self.acct_from;
        if end > from {
            self.skipped(from, end - from);
        }
        let to = from.max(end);
        self.cur = to;
        self.integrate();
        self.acct_from = to;
        self.stats.cycles = to;
        self.stats.idle_starved = to - self.stats.busy_cycles - self.stats.idle_with_ray;
    }

    /// The EXEC stage for context `c`. Returns true if it retired a micro-step.
    #[inline(always)]
    fn exec<F: Fronts, B: Below>(&mut self, c: usize, now: u64, links: &mut Links<F, B>) -> Result<bool, Fault> {
        match self.ctx[c].phase {
            Phase::Fetch => {
                self.issue(c, now, links);
                Ok(true)
            }
            Phase::Run => {
                self.step(c, now, links)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Sends the context's outstanding lines to the RTCache, as many as it has ports. A line
    /// of a sparse resource whose page misses the TLB lands a page walk later.
    fn issue<F: Fronts, B: Below>(&mut self, c: usize, now: u64, links: &mut Links<F, B>) {
        let Links { rtcache, below, mem, .. } = links;
        let mem = mem.map();
        let gen = self.ctx[c].gen;
        let mut issued = 0;
        loop {
            let cx = &mut self.ctx[c];
            let Some(&line) = cx.want.get(cx.sent).filter(|_| issued < self.t.ports) else { break };
            match rtcache.read(line, now, |t| below.read(line, t)) {
                Ok(a) => {
                    cx.sent += 1;
                    issued += 1;
                    self.stats.line_requests += 1;
                    let walk = self.translate(mem, line);
                    let cx = &mut self.ctx[c];
                    cx.lines_at = cx.lines_at.max(a.ready + walk);
                }
                Err(Refused::Mshr | Refused::Bank) => {
                    self.stats.port_retries += 1;
                    break;
                }
            }
        }
        let cx = &mut self.ctx[c];
        if cx.sent == cx.want.len() {
            // A line sent this cycle comes back later: `lines_at <= now` only when every
            // line came back while the rest were still being sent.
            if cx.lines_at <= now {
                let Ctx { want, held, .. } = cx;
                land(held, want);
                cx.sent = 0;
                cx.phase = Phase::Run;
                self.set_wake(c);
            } else {
                cx.phase = Phase::MemWait;
                let at = cx.lines_at;
                self.events.push(at, (c as u32, gen, true));
            }
        } else {
            cx.phase = Phase::Fetch;
            self.set_wake(c);
        }
    }

    /// The page-walk cycles `line`'s translation adds (none outside sparse resources).
    #[inline(always)]
    fn translate(&mut self, mem: &MemoryMap, line: u64) -> u64 {
        if !mem.has_sparse() {
            return 0;
        }
        let walk = self.tlb.translate(mem, line * LINE_BYTES as u64);
        self.stats.tlb_lookups = self.tlb.stats.lookups;
        self.stats.tlb_misses = self.tlb.stats.misses;
        walk
    }

    /// Runs the walker on the lines the context holds: one record, and the PE work it needs.
    #[inline(always)]
    fn step<F: Fronts, B: Below>(&mut self, c: usize, now: u64, links: &mut Links<F, B>) -> Result<(), Fault> {
        let (s, lane) = (c / self.nt, c % self.nt);
        let (core, warp, query) = (self.slots[s].core, self.slots[s].warp, self.slots[s].query);
        let Links { fronts, mem, .. } = links;
        let unit = fronts.unit(core as usize);
        let (walk, rec, st, raylog) = unit.lane(warp as usize, query, lane);
        // The PE work of this step is what the walk's test counters gain.
        let pe = |st: &RtuStats| (st.box_tests + st.aabb_tests, st.tri_tests, st.instance_transforms);
        let before = pe(st);
        let cx = &mut self.ctx[c];
        let map = mem.map();
        let mut src = TimedSource { mem, held: &mut cx.held, want: &mut cx.want };
        let out = match raylog {
            None => walk.run(&mut src, &mut self.headers, &self.cfg, rec, st),
            // VORTEX_RAYLOG: the lines this step reads go to the log too.
            Some(lines) => {
                let mut tap = super::raylog::LineTap { inner: &mut src, mem: map, lines };
                walk.run(&mut tap, &mut self.headers, &self.cfg, rec, st)
            }
        }
        .map_err(|f| Fault {
            core: Some(core + self.core_base),
            warp: Some(warp),
            lane: Some(lane as u32),
            ..f
        })?;
        // PE work of the record just consumed.
        let after = pe(st);
        let (boxes, tris, xforms) = (after.0 - before.0, after.1 - before.1, after.2 - before.2);
        let mut done = now + 1;
        if boxes > 0 {
            // One child per cycle into the box PE, then the collector's insertion.
            let start = (now + 1).max(self.box_free);
            self.box_free = start + boxes;
            self.stats.box_pe_cycles += boxes;
            done = done.max(start + boxes - 1 + self.t.box_lat + 1);
        }
        if tris > 0 {
            let start = (now + 1).max(self.tri_free);
            self.tri_free = start + tris;
            self.stats.tri_pe_cycles += tris;
            done = done.max(start + tris - 1 + self.t.tri_lat);
        }
        if xforms > 0 {
            let start = (now + 1).max(self.xform_free);
            self.xform_free = start + xforms;
            self.stats.xform_pe_cycles += xforms;
            let r = (start + self.t.xform_lat).max(self.recip_free);
            self.recip_free = r + 1;
            done = done.max(r + self.t.recip_lat);
        }
        let cx = &mut self.ctx[c];
        match out {
            Outcome::Parked => {
                cx.sent = 0;
                cx.lines_at = 0;
                if done > now + 1 {
                    cx.phase = Phase::PeWait;
                    self.event(done, c);
                } else {
                    // No PE work: drive the memory port in the same micro-step.
                    self.issue(c, now, links);
                }
            }
            Outcome::Done | Outcome::Yield(_) => {
                cx.outcome = out;
                cx.held.clear();
                if done > now + 1 {
                    cx.phase = Phase::SettleWait;
                    self.event(done, c);
                } else {
                    self.settle(c);
                }
            }
        }
        Ok(())
    }

    /// A lane's walk reached a record (terminal or candidate).
    fn settle(&mut self, c: usize) {
        self.integrate();
        let (s, lane) = (c / self.nt, c % self.nt);
        self.ctx[c].phase = Phase::Settled;
        let bit = 1u32 << lane;
        let sl = &mut self.slots[s];
        if sl.traversing & bit != 0 {
            self.traversing -= 1;
        }
        sl.traversing &= !bit;
        sl.settled |= bit;
        self.check_writeback(s);
    }

    fn check_writeback(&mut self, s: usize) {
        let sl = &self.slots[s];
        if sl.queued_wb || sl.settled == 0 {
            return;
        }
        let all = sl.traversing == 0 && sl.launching == 0;
        let thresh = self.t.reform.thresh;
        // Candidates held back by the SBT grouping were ready with their batch.
        let ready = all || sl.settled & sl.deferred != 0 || {
            thresh > 0 && {
                let mut yields = 0;
                let mut m = sl.settled;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    if matches!(self.ctx[s * self.nt + l].outcome, Outcome::Yield(_)) {
                        yields += 1;
                    }
                }
                yields >= thresh
            }
        };
        if ready {
            self.slots[s].queued_wb = true;
            self.wb_queue.push_back(s);
            self.chores_at = 0;
        }
    }

    fn finish_writeback(&mut self, wb: WriteBack, fronts: &mut dyn Fronts) {
        let s = wb.slot;
        let (core, warp, query) = (self.slots[s].core, self.slots[s].warp, self.slots[s].query);
        let lanes = wb.lanes & self.slots[s].lanes;
        let unit = fronts.unit(core as usize);
        let mut m = lanes;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let c = s * self.nt + l;
            let out = self.ctx[c].outcome;
            unit.land_lane(warp as usize, query, l, out);
            let sl = &mut self.slots[s];
            if matches!(out, Outcome::Yield(_)) {
                sl.waiting |= 1 << l;
            } else {
                sl.lanes &= !(1 << l);
                self.ctx[c].phase = Phase::Free;
            }
        }
        if lanes != 0 {
            fronts.wake(core as usize, warp);
            self.rang = true;
        }
        self.check_writeback(s);
        self.maybe_release(s);
    }

    /// Starts writing the next queued slot's batch back.
    fn start_writeback(&mut self, now: u64, fronts: &dyn Fronts) {
        let Some(s) = self.wb_queue.pop_front() else { return };
        self.slots[s].queued_wb = false;
        let lanes = self.batch(s, fronts);
        let sl = &mut self.slots[s];
        sl.settled &= !lanes;
        self.stats.batches += 1;
        self.stats.batch_lanes += lanes.count_ones() as u64;
        // Lanes still traversing, and candidates held for a later batch, read PENDING.
        self.stats.pending_lanes += (sl.traversing | sl.launching | sl.settled).count_ones() as u64;
        self.stats.window_words += self.t.record_words * lanes.count_ones() as u64;
        self.wb = Some(WriteBack { slot: s, lanes, done_at: now + self.t.record_cycles });
    }

    /// The lanes of slot `s`'s next batch: every settled lane; with SBT grouping, the
    /// terminal lanes and the candidates of the lowest candidate lane's SBT key, the other
    /// candidates held (`deferred`). Counts the batch's candidates and distinct keys.
    fn batch(&mut self, s: usize, fronts: &dyn Fronts) -> u32 {
        let sl = &self.slots[s];
        let (unit, warp, query) = (fronts.unit_ref(sl.core as usize), sl.warp as usize, sl.query);
        let group = self.t.reform.sbt;
        let (mut keys, mut nkeys) = ([0u64; crate::abi::MAX_THREADS], 0);
        let (mut lanes, mut held, mut cands) = (0u32, 0u32, 0u32);
        let mut m = sl.settled;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            if !matches!(self.ctx[s * self.nt + l].outcome, Outcome::Yield(_)) {
                lanes |= 1 << l;
                continue;
            }
            let k = unit.candidate_key(warp, query, l);
            if group && nkeys > 0 && keys[0] != k {
                held |= 1 << l;
                continue;
            }
            lanes |= 1 << l;
            cands |= 1 << l;
            if !keys[..nkeys].contains(&k) {
                keys[nkeys] = k;
                nkeys += 1;
            }
        }
        let st = &mut self.stats;
        st.batch_candidates += cands.count_ones() as u64;
        st.candidate_batches += (cands != 0) as u64;
        st.batch_sbt_keys += nkeys as u64;
        st.deferred_lanes += (held & !self.slots[s].deferred).count_ones() as u64;
        self.slots[s].deferred = held;
        lanes
    }
}
