//! Timed caches and DRAM: the L1 data cache of each core, the L2 of each cluster, the
//! RTCache of each socket (seed 000 §5), and the DRAM channel behind each cluster's L2.
//!
//! They hold tags only: data always comes from device memory, so timing can never change a
//! result. A request is timed when it is made: a hit answers after the cache's latency; a
//! miss takes an MSHR and asks the next level at that moment, and the line is filled when the
//! answer comes back. Banks take one request per cycle each; a full MSHR file or a busy bank
//! refuses the request and the requester retries (that refusal is the back-pressure the RTU
//! counts as an MSHR-full stall).

use serde::Serialize;

/// Bytes per cache line (a CW-BVH4 node is exactly one).
pub const LINE_BYTES: u64 = 64;
pub const LINE_SHIFT: u32 = 6;

/// The line an address falls in.
#[inline]
pub fn line_of(addr: u64) -> u64 {
    addr >> LINE_SHIFT
}

/// Counters of one cache.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    /// Requests that rode an in-flight MSHR for the same line instead of going out again.
    pub merges: u64,
    /// Requests refused because every MSHR was busy (the requester retries).
    pub mshr_full_stalls: u64,
    /// Requests refused because their bank already took one this cycle.
    pub bank_stalls: u64,
}

impl CacheStats {
    pub fn add(&mut self, o: &CacheStats) {
        self.accesses += o.accesses;
        self.hits += o.hits;
        self.misses += o.misses;
        self.merges += o.merges;
        self.mshr_full_stalls += o.mshr_full_stalls;
        self.bank_stalls += o.bank_stalls;
    }
}

/// Geometry and timing of one cache.
#[derive(Clone, Copy, Debug)]
pub struct CacheGeom {
    pub size: u32,
    pub ways: u32,
    pub banks: u32,
    pub mshrs: u32,
    pub latency: u32,
    /// Later requests that may ride one in-flight MSHR (`None`: any number).
    pub merge_depth: Option<u32>,
}

#[derive(Clone, Copy, Debug)]
struct Mshr {
    line: u64,
    ready: u64,
    merged: u32,
}

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    Bank,
    Mshr,
}

/// What a request got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    /// Cycle the line is available to the requester.
    pub ready: u64,
    pub hit: bool,
}

/// A set-associative, LRU, tag-only cache.
pub struct Cache {
    geom: CacheGeom,
    sets: u64,
    /// `sets - 1` when the set count is a power of two above one (0 otherwise).
    set_mask: u64,
    tags: Vec<u64>,
    stamp: Vec<u64>,
    clock: u64,
    bank_busy: Vec<u64>,
    mshr: Vec<Mshr>,
    /// The earliest `ready` among the MSHRs (`u64::MAX`: none): a request before it has no
    /// fill to retire, so it skips the scan.
    next_fill: u64,
    /// One bit per `line % 64` of the lines in the MSHRs: a line whose bit is clear is not
    /// in flight, so the common miss skips the MSHR search.
    inflight: u64,
    pub stats: CacheStats,
}

const INVALID: u64 = u64::MAX;

impl Cache {
    pub fn new(geom: CacheGeom) -> Cache {
        let lines = (geom.size as u64 / LINE_BYTES).max(1);
        let sets = (lines / geom.ways as u64).max(1);
        Cache {
            geom,
            sets,
            set_mask: if sets.is_power_of_two() { sets - 1 } else { 0 },
            tags: vec![INVALID; (sets * geom.ways as u64) as usize],
            stamp: vec![0; (sets * geom.ways as u64) as usize],
            clock: 0,
            bank_busy: vec![u64::MAX; geom.banks.max(1) as usize],
            mshr: Vec::with_capacity(geom.mshrs as usize),
            next_fill: u64::MAX,
            inflight: 0,
            stats: CacheStats::default(),
        }
    }

    pub fn latency(&self) -> u32 {
        self.geom.latency
    }

    /// Fills the lines whose misses have come back by `now`.
    #[inline]
    fn retire(&mut self, now: u64) {
        if now < self.next_fill {
            return;
        }
        let mut i = 0;
        let mut next = u64::MAX;
        let mut inflight = 0;
        while i < self.mshr.len() {
            if self.mshr[i].ready <= now {
                let line = self.mshr.swap_remove(i).line;
                self.fill(line);
            } else {
                next = next.min(self.mshr[i].ready);
                inflight |= Self::bit(self.mshr[i].line);
                i += 1;
            }
        }
        self.next_fill = next;
        self.inflight = inflight;
    }

    #[inline]
    fn bit(line: u64) -> u64 {
        1 << (line & 63)
    }

    /// The MSHR holding `line` that `ok` accepts, if any.
    #[inline]
    fn in_flight(&self, line: u64, ok: impl Fn(&Mshr) -> bool) -> Option<usize> {
        if self.inflight & Self::bit(line) == 0 {
            return None;
        }
        self.mshr.iter().position(|m| m.line == line && ok(m))
    }

    /// A miss takes an MSHR until `ready`.
    #[inline]
    fn allocate(&mut self, line: u64, ready: u64) {
        self.mshr.push(Mshr { line, ready, merged: 0 });
        self.next_fill = self.next_fill.min(ready);
        self.inflight |= Self::bit(line);
    }

    /// The set `line` maps to (a mask when the set count is a power of two, as the
    /// configuration's caches are).
    #[inline]
    fn set_of(&self, line: u64) -> usize {
        if self.set_mask != 0 {
            (line & self.set_mask) as usize
        } else {
            (line % self.sets) as usize
        }
    }

    fn fill(&mut self, line: u64) {
        let set = self.set_of(line);
        let w = self.geom.ways as usize;
        self.clock += 1;
        let (tags, stamp) = (&mut self.tags[set * w..set * w + w], &mut self.stamp[set * w..set * w + w]);
        // One pass: the line's own way if it is there, else the first least recently used
        // way (an invalid one before any valid one).
        let (mut victim, mut oldest) = (0, u64::MAX);
        for i in 0..w {
            if tags[i] == line {
                stamp[i] = self.clock;
                return;
            }
            let age = if tags[i] == INVALID { 0 } else { stamp[i] };
            if age < oldest {
                (victim, oldest) = (i, age);
            }
        }
        tags[victim] = line;
        stamp[victim] = self.clock;
    }

    #[inline]
    fn lookup(&mut self, line: u64) -> bool {
        let set = self.set_of(line);
        let w = self.geom.ways as usize;
        // The set's ways as one slice: one bounds check, not one a way.
        let Some(i) = self.tags[set * w..set * w + w].iter().position(|&t| t == line) else { return false };
        self.clock += 1;
        self.stamp[set * w + i] = self.clock;
        true
    }

    /// True if `line` is resident or in flight (no side effects on LRU or counters).
    pub fn holds(&self, line: u64) -> bool {
        let set = self.set_of(line);
        let w = self.geom.ways as usize;
        self.tags[set * w..set * w + w].contains(&line) || self.mshr.iter().any(|m| m.line == line)
    }

    /// A read of `line` made at cycle `now`. On a miss, `below(t)` is asked for the line at
    /// cycle `t` and returns when it arrives.
    #[inline]
    pub fn read(&mut self, line: u64, now: u64, below: impl FnOnce(u64) -> u64) -> Result<Answer, Refused> {
        self.retire(now);
        let bank = (line & (self.bank_busy.len() as u64 - 1)) as usize;
        if self.bank_busy[bank] == now {
            self.stats.bank_stalls += 1;
            return Err(Refused::Bank);
        }
        if self.lookup(line) {
            self.bank_busy[bank] = now;
            self.stats.accesses += 1;
            self.stats.hits += 1;
            return Ok(Answer { ready: now + self.geom.latency as u64, hit: true });
        }
        let depth = self.geom.merge_depth;
        if let Some(i) = self.in_flight(line, |m| depth.is_none_or(|d| m.merged < d)) {
            let m = &mut self.mshr[i];
            m.merged += 1;
            let ready = m.ready.max(now + self.geom.latency as u64);
            self.bank_busy[bank] = now;
            self.stats.accesses += 1;
            self.stats.misses += 1;
            self.stats.merges += 1;
            return Ok(Answer { ready, hit: false });
        }
        if self.mshr.len() >= self.geom.mshrs as usize {
            self.stats.mshr_full_stalls += 1;
            return Err(Refused::Mshr);
        }
        self.bank_busy[bank] = now;
        self.stats.accesses += 1;
        self.stats.misses += 1;
        let ready = below(now + self.geom.latency as u64).max(now + self.geom.latency as u64);
        self.allocate(line, ready);
        Ok(Answer { ready, hit: false })
    }

    /// A read that never refuses: a busy bank or a full MSHR file delays the request to when
    /// it would be taken (the shared L2 uses this; its requesters have already been timed).
    pub fn read_delayed(&mut self, line: u64, at: u64, below: impl FnOnce(u64) -> u64) -> Answer {
        self.retire(at);
        let bank = (line & (self.bank_busy.len() as u64 - 1)) as usize;
        let mut t = at;
        if self.bank_busy[bank] != u64::MAX && self.bank_busy[bank] >= t {
            self.stats.bank_stalls += 1;
            t = self.bank_busy[bank] + 1;
        }
        self.bank_busy[bank] = t;
        self.stats.accesses += 1;
        if self.lookup(line) {
            self.stats.hits += 1;
            return Answer { ready: t + self.geom.latency as u64, hit: true };
        }
        self.stats.misses += 1;
        if let Some(i) = self.in_flight(line, |_| true) {
            let m = &mut self.mshr[i];
            m.merged += 1;
            self.stats.merges += 1;
            return Answer { ready: m.ready.max(t + self.geom.latency as u64), hit: false };
        }
        if self.mshr.len() >= self.geom.mshrs as usize {
            self.stats.mshr_full_stalls += 1;
            let (i, first) =
                self.mshr.iter().enumerate().min_by_key(|(_, m)| m.ready).map(|(i, m)| (i, m.ready)).unwrap();
            let line = self.mshr.swap_remove(i).line;
            self.fill(line);
            self.next_fill = self.mshr.iter().map(|m| m.ready).min().unwrap_or(u64::MAX);
            self.inflight = self.mshr.iter().fold(0, |b, m| b | Self::bit(m.line));
            t = t.max(first);
        }
        let ready = below(t + self.geom.latency as u64).max(t + self.geom.latency as u64);
        self.allocate(line, ready);
        Answer { ready, hit: false }
    }
}

/// A DRAM channel: fixed latency behind a bandwidth limit.
pub struct Dram {
    latency: u64,
    cycles_per_line: u64,
    free: u64,
    pub reads: u64,
    /// Cycles requests spent queued behind the channel.
    pub queue_cycles: u64,
}

impl Dram {
    pub fn new(latency: u32, bytes_per_cycle: u32) -> Dram {
        Dram {
            latency: latency as u64,
            cycles_per_line: LINE_BYTES.div_ceil(bytes_per_cycle.max(1) as u64),
            free: 0,
            reads: 0,
            queue_cycles: 0,
        }
    }

    /// A line requested at `t` arrives at the returned cycle.
    pub fn read(&mut self, t: u64) -> u64 {
        let start = t.max(self.free);
        self.queue_cycles += start - t;
        self.free = start + self.cycles_per_line;
        self.reads += 1;
        start + self.latency
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geom(merge: Option<u32>) -> CacheGeom {
        CacheGeom { size: 256, ways: 2, banks: 1, mshrs: 2, latency: 2, merge_depth: merge }
    }

    #[test]
    fn hit_after_fill_and_lru_eviction() {
        let mut c = Cache::new(geom(None));
        let a = c.read(0, 0, |t| t + 10).unwrap();
        assert_eq!((a.ready, a.hit), (12, false));
        // Before the fill lands the line is in flight: a merge, same arrival.
        let b = c.read(0, 1, |_| unreachable!()).unwrap();
        assert_eq!((b.ready, b.hit), (12, false));
        assert_eq!(c.stats.merges, 1);
        let h = c.read(0, 20, |_| unreachable!()).unwrap();
        assert_eq!((h.ready, h.hit), (22, true));
        // Two sets of two ways: lines 0, 2, 4 share set 0; 4 evicts 2 (LRU), not 0.
        c.read(2, 21, |t| t).unwrap();
        c.read(0, 30, |_| unreachable!()).unwrap();
        c.read(4, 31, |t| t).unwrap();
        assert!(c.read(0, 40, |_| unreachable!()).unwrap().hit);
        assert!(!c.read(2, 41, |t| t).unwrap().hit);
    }

    #[test]
    fn no_merge_takes_another_mshr_and_full_mshrs_refuse() {
        let mut c = Cache::new(geom(Some(0)));
        c.read(0, 0, |t| t + 100).unwrap();
        assert_eq!(c.read(0, 1, |t| t + 100).unwrap().ready, 103, "a second request goes out again");
        assert_eq!(c.read(1, 2, |t| t + 100), Err(Refused::Mshr));
        assert_eq!(c.stats.mshr_full_stalls, 1);
        // Same-cycle requests to one bank: the second is refused.
        let mut d = Cache::new(geom(None));
        d.read(0, 5, |t| t).unwrap();
        assert_eq!(d.read(1, 5, |t| t), Err(Refused::Bank));
    }

    #[test]
    fn fills_due_together_keep_the_mshr_scan_order() {
        // One set of two ways, three misses due at the same cycle in MSHRs 0, 1, 2: the scan
        // fills A, then C (moved into A's place), then B, which evicts A. C is then the least
        // recently used line, so the next fill evicts C and B stays.
        let g = CacheGeom { size: 128, ways: 2, banks: 1, mshrs: 4, latency: 1, merge_depth: None };
        let mut c = Cache::new(g);
        let (a, b, cc, d) = (1, 2, 3, 4);
        c.read(a, 0, |_| 10).unwrap();
        c.read(b, 1, |_| 10).unwrap();
        c.read(cc, 2, |_| 10).unwrap();
        // The three fills land as this read starts; A is gone.
        c.read(d, 10, |_| 20).unwrap();
        assert!(!c.holds(a));
        // D's fill lands as this read starts and evicts C; B still hits.
        assert!(c.read(b, 30, |_| unreachable!()).unwrap().hit);
        assert!(c.tags.contains(&d) && !c.tags.contains(&cc));
    }

    #[test]
    fn dram_bandwidth_queues() {
        let mut d = Dram::new(100, 16);
        assert_eq!(d.read(0), 100);
        assert_eq!(d.read(0), 104);
        assert_eq!(d.queue_cycles, 4);
    }
}
