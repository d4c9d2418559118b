//! A cluster in timed mode: its cores, its sockets (each with its traversal cores and
//! RTCaches), its L2 and DRAM channel, and the launch fabric from the KMU to its cores.
//!
//! Units talk through what the hardware has between them: the launch link (one CTA beat per
//! cycle), the socket RTU bus (TRACE arms after their burst, CONTINUEs, retirements), the
//! record write-back doorbell to a core's parked WAITs, and memory requests with their
//! arrival cycles. A cluster advances cycle by cycle, skipping cycles in which no unit has
//! anything to do.
//!
//! Clusters share nothing but the KMU's fixed assignment of launch messages (see
//! [`LaunchSource`]), so the device runs each on its own host thread.

use crate::cache::{Cache, CacheGeom, CacheStats, Dram};
use crate::config::DeviceConfig;
use crate::core::timed::{Below, Clock, CoreTimedStats, KernelTiming};
use crate::core::{Core, CoreStats, DispatchCtx};
use crate::fault::Fault;
use crate::kmu::{CtaDesc, Kmu};
use crate::rtu::engine::{EngineStats, Fronts, Links, Reform, RtuCore, Stretch};
use crate::rtu::timeline::Timeline;
use crate::rtu::walker::MemSource;
use crate::rtu::RtuUnit;
use crate::watchdog::Tally;

/// Where a cluster's launch messages (one cluster of CTAs each) come from: the KMU's walk,
/// of which cluster `c` of `n` takes messages `c, c + n, c + 2n, ...`.
///
/// The device-level router sends message `i` to GPU cluster `i mod n`: its round-robin
/// pointer is fixed before a message is sent and a busy cluster stalls its own stream
/// rather than yielding its turn (SimX's rule, seed 002 §4.5). Each cluster's stream is
/// modelled independently (a stalled cluster does not hold up the KMU for the others), which
/// is what lets clusters run on separate host threads with no synchronisation and still
/// give the same cycle counts on any number of threads.
///
/// Or, for a draw's fragment warps, a list of CTAs for each of the cluster's cores: a CTA
/// goes to its core, in list order.
pub enum LaunchSource<'k> {
    Kmu { kmu: &'k Kmu, next: u64, stride: u64 },
    Lists { lists: &'k [Vec<CtaDesc>], ready: &'k [Vec<u64>], next: Vec<usize> },
}

impl<'k> LaunchSource<'k> {
    pub fn new(kmu: &'k Kmu, first: u64, stride: u64) -> LaunchSource<'k> {
        LaunchSource::Kmu { kmu, next: first, stride: stride.max(1) }
    }

    /// CTAs for each of the cluster's cores, in order, each launched no earlier than its
    /// `ready` cycle.
    pub fn lists(lists: &'k [Vec<CtaDesc>], ready: &'k [Vec<u64>]) -> LaunchSource<'k> {
        LaunchSource::Lists { lists, ready, next: vec![0; lists.len()] }
    }

    fn pull(&mut self) -> Option<Vec<CtaDesc>> {
        match self {
            LaunchSource::Kmu { kmu, next, stride } if *next < kmu.num_clusters() => {
                let m = kmu.cluster(*next).collect();
                *next += *stride;
                Some(m)
            }
            _ => None,
        }
    }

    /// The next CTA listed for `core`, if it is ready at cycle `now`.
    fn peek(&self, core: usize, now: u64) -> Option<CtaDesc> {
        match self {
            LaunchSource::Lists { lists, ready, next } => {
                lists[core].get(next[core]).copied().filter(|_| ready[core][next[core]] <= now)
            }
            LaunchSource::Kmu { .. } => None,
        }
    }

    /// The first cycle after `now` at which a listed CTA becomes ready.
    fn next_ready(&self, now: u64) -> Option<u64> {
        match self {
            LaunchSource::Lists { ready, next, .. } => {
                ready.iter().zip(next).filter_map(|(r, &n)| r.get(n).copied()).filter(|&t| t > now).min()
            }
            LaunchSource::Kmu { .. } => None,
        }
    }

    fn advance(&mut self, core: usize) {
        if let LaunchSource::Lists { next, .. } = self {
            next[core] += 1;
        }
    }

    fn exhausted(&self) -> bool {
        match self {
            LaunchSource::Kmu { kmu, next, .. } => *next >= kmu.num_clusters(),
            LaunchSource::Lists { lists, next, .. } => lists.iter().zip(next).all(|(l, &n)| n >= l.len()),
        }
    }

    fn pending(&self) -> bool {
        !self.exhausted()
    }
}

/// The cluster's launch router: a message (one cluster of CTAs) is locked to the core its
/// first CTA lands on until its last CTA; the round-robin pointer advances per message.
struct LaunchArb {
    cur: Option<(Vec<CtaDesc>, usize, Option<usize>)>,
    rr: usize,
    cluster_size: u32,
}

/// What one cluster did.
#[derive(Clone, Debug, Default)]
pub struct ClusterReport {
    pub cores: Vec<(CoreStats, CoreTimedStats)>,
    pub rtus: Vec<EngineStats>,
    /// The traversal cores' timelines, summed (with `DeviceConfig::detailed_stats`).
    pub rtu_timeline: Option<Timeline>,
    pub rtcaches: Vec<CacheStats>,
    pub l2: CacheStats,
    pub dram_reads: u64,
    pub dram_queue_cycles: u64,
    /// The cycle after the cluster's last activity.
    pub end: u64,
}

// Aligned so units that run on different host threads never share a cache line.
#[repr(align(128))]
pub struct Cluster<'a> {
    pub id: u32,
    cores: &'a mut [Core],
    clocks: Vec<Clock>,
    rtus: Vec<RtuCore>,
    rtcaches: Vec<Cache>,
    /// Traversal core serving each core; RTCache of each traversal core.
    rtu_of_core: Vec<usize>,
    rtcache_of_rtu: Vec<usize>,
    l2: Cache,
    dram: Dram,
    arb: LaunchArb,
    /// Next cycle each unit has something to do.
    core_next: Vec<u64>,
    rtu_next: Vec<u64>,
    arb_next: u64,
    pub source: LaunchSource<'a>,
    /// The cores' completed walks when the dispatch began (their counters run on).
    rays_before: u64,
    pub now: u64,
    /// The cycle after the last one in which anything happened.
    pub end: u64,
}

struct FrontsView<'b> {
    cores: &'b mut [Core],
    clocks: &'b mut [Clock],
}

impl Fronts for FrontsView<'_> {
    fn unit(&mut self, core: usize) -> &mut RtuUnit {
        &mut self.cores[core].units.rtu
    }
    fn unit_ref(&self, core: usize) -> &RtuUnit {
        &self.cores[core].units.rtu
    }
    fn wake(&mut self, core: usize, warp: u32) {
        self.clocks[core].wakes.push(warp);
    }
}

impl<'a> Cluster<'a> {
    pub fn new(
        cfg: &DeviceConfig,
        id: u32,
        cores: &'a mut [Core],
        ctx: &DispatchCtx,
        source: LaunchSource<'a>,
        reform: Reform,
    ) -> Result<Cluster<'a>, Fault> {
        let mut clocks = Vec::with_capacity(cores.len());
        for c in cores.iter_mut() {
            c.begin_timed();
            clocks.push(Clock::new(cfg, crate::core::timed::dispatcher(cfg, ctx)?));
        }
        let base = id * cfg.cores_per_cluster;
        let (nrc, cpr) = (cfg.num_rtu_cores(), cfg.cores_per_rtu());
        let sockets = cfg.sockets_per_cluster();
        let mut rtus = Vec::new();
        let mut rtcache_of_rtu = Vec::new();
        let mut rtcaches = Vec::new();
        let r = &cfg.rtu;
        for s in 0..sockets {
            let first_cache = rtcaches.len();
            for _ in 0..cfg.num_rtcaches() {
                rtcaches.push(Cache::new(CacheGeom {
                    size: r.rtcache_size,
                    ways: r.rtcache_ways,
                    banks: r.rtcache_banks,
                    mshrs: r.rtcache_mshrs,
                    latency: r.rtcache_latency,
                    merge_depth: Some(r.merge_depth),
                }));
            }
            for k in 0..nrc {
                rtus.push(RtuCore::new(cfg, base, reform));
                rtcache_of_rtu.push(first_cache + (k / 4) as usize);
                let _ = s;
            }
        }
        let rtu_of_core = (0..cores.len() as u32)
            .map(|c| (c / cfg.socket_size * nrc + (c % cfg.socket_size) / cpr) as usize)
            .collect();
        let m = &cfg.mem;
        let (cores_len, rtus_len) = (cores.len(), rtus.len());
        let rays_before = cores.iter().map(|c| c.units.rtu.stats().records + c.units.isect.counters.instrs).sum();
        Ok(Cluster {
            id,
            cores,
            clocks,
            rtus,
            rtcaches,
            rtu_of_core,
            rtcache_of_rtu,
            l2: Cache::new(CacheGeom {
                size: m.l2_size,
                ways: m.l2_ways,
                banks: m.l2_banks,
                mshrs: m.l2_mshrs,
                latency: m.l2_latency,
                merge_depth: None,
            }),
            dram: Dram::new(m.dram_latency, m.dram_bytes_per_cycle),
            arb: LaunchArb { cur: None, rr: 0, cluster_size: ctx.launch.cluster_size() },
            core_next: vec![u64::MAX; cores_len],
            rtu_next: vec![u64::MAX; rtus_len],
            arb_next: 0,
            source,
            rays_before,
            now: 0,
            end: 0,
        })
    }

    /// True while anything is in flight: a launch message, a resident CTA, a dispatcher
    /// expanding, RTU work (seed 002 §1.1: busy covers every beat in flight).
    pub fn busy(&self) -> bool {
        self.arb.cur.is_some()
            || self.source.pending()
            || self.clocks.iter().any(|c| !c.idle(self.now))
            || self.rtus.iter().any(|r| !r.idle())
    }

    /// True when the cluster has finished everything it will ever be given.
    pub fn finished(&self) -> bool {
        !self.busy() && self.source.exhausted()
    }

    /// The cluster's progress for the watchdog: CTAs its cores accepted, warps that retired
    /// (launched minus resident), walks that reached their record.
    pub fn progress(&self) -> Tally {
        let mut t = Tally::default();
        for (core, clk) in self.cores.iter().zip(&self.clocks) {
            t.ctas_launched += clk.counts.ctas;
            t.warps_retired += clk.counts.warps - clk.resident();
            t.rays_completed += core.units.rtu.stats().records + core.units.isect.counters.instrs;
        }
        t.rays_completed -= self.rays_before;
        t
    }

    /// One launch-fabric cycle: offers the current CTA to a ready core; returns the core
    /// that took it.
    fn launch(&mut self, ctx: &DispatchCtx) -> Option<usize> {
        if matches!(self.source, LaunchSource::Lists { .. }) {
            return self.launch_listed(ctx);
        }
        let now = self.now;
        if self.arb.cur.is_none() {
            self.arb.cur = Some((self.source.pull()?, 0, None));
        }
        let n = self.cores.len();
        let (ctas, idx, dest) = self.arb.cur.as_mut().expect("a message");
        let cta = ctas[*idx];
        let (first, count) = match *dest {
            Some(d) => (d, 1),
            None => (self.arb.rr, n),
        };
        for k in 0..count {
            let c = (first + k) % n;
            let clk = &mut self.clocks[c];
            if !clk.disp_ready(now) {
                continue;
            }
            let Some(adm) = clk.disp.try_admit(&cta, self.arb.cluster_size) else {
                clk.refused(now);
                continue;
            };
            self.cores[c].launch_cta_timed(clk, ctx, &cta, adm, now);
            *idx += 1;
            *dest = Some(c);
            if *idx == ctas.len() {
                self.arb.rr = c + 1;
                self.arb.cur = None;
            }
            return Some(c);
        }
        None
    }

    /// [`Self::launch`] from per-core lists: one CTA a cycle, to the first core in
    /// round-robin order whose next listed CTA its dispatcher takes.
    fn launch_listed(&mut self, ctx: &DispatchCtx) -> Option<usize> {
        let (now, n) = (self.now, self.cores.len());
        for k in 0..n {
            let c = (self.arb.rr + k) % n;
            let Some(cta) = self.source.peek(c, now) else { continue };
            let clk = &mut self.clocks[c];
            if !clk.disp_ready(now) {
                continue;
            }
            let Some(adm) = clk.disp.try_admit(&cta, 1) else {
                clk.refused(now);
                continue;
            };
            self.cores[c].launch_cta_timed(clk, ctx, &cta, adm, now);
            self.source.advance(c);
            self.arb.rr = c + 1;
            return Some(c);
        }
        None
    }

    /// Runs until cycle `until` (exclusive) or until the cluster has finished.
    ///
    /// Each unit is ticked only in cycles where it has something to do (its next event, a
    /// message or a doorbell); a unit's counters account for the cycles it skipped.
    pub fn run(&mut self, until: u64, ctx: &DispatchCtx, kt: &KernelTiming) -> Result<(), Fault> {
        // One node source per traversal core for the whole run: it remembers the regions its
        // walks last read, as functional mode's does for a whole walk.
        let mut srcs: Vec<MemSource> = self.rtus.iter().map(|_| MemSource::new(ctx.mem)).collect();
        while self.now < until {
            let now = self.now;
            if now < self.arb_next && self.core_next.iter().all(|&t| t > now) {
                if self.run_rtus(until, &mut srcs)? {
                    return Ok(());
                }
                continue;
            }
            let mut dirty = false;
            if now >= self.arb_next {
                self.arb_next = u64::MAX;
                if let Some(c) = self.launch(ctx) {
                    dirty = true;
                    self.core_next[c] = self.core_next[c].min(self.cores[c].next_event(&mut self.clocks[c], now));
                }
            }
            let mut below = Below { l2: &mut self.l2, dram: &mut self.dram };
            for (c, core) in self.cores.iter_mut().enumerate() {
                if self.core_next[c] > now {
                    continue;
                }
                let clk = &mut self.clocks[c];
                core.tick_timed(clk, now, ctx, kt, &mut below)?;
                if !clk.outgoing.is_empty() {
                    let r = self.rtu_of_core[c];
                    for (at, m) in clk.outgoing.drain(..) {
                        self.rtus[r].post(at, c as u32, m);
                        self.rtu_next[r] = self.rtu_next[r].min(at);
                    }
                }
                dirty |= std::mem::take(&mut clk.dirty);
                self.core_next[c] = core.next_event(clk, now);
            }
            self.tick_rtus(now, &mut srcs)?;
            if self.arb.cur.is_some() || self.source.pending() {
                if dirty {
                    self.arb_next = now + 1;
                } else if let Some(t) = self.clocks.iter().map(|c| c.disp_free_at()).filter(|&t| t > now).min() {
                    // A blocked message waits for a dispatcher to finish expanding, or for a
                    // retirement to free a slot (an issue event, which marks the core dirty).
                    self.arb_next = self.arb_next.min(t);
                }
                // A listed CTA waits for the raster unit to have produced it.
                if let Some(t) = self.source.next_ready(now) {
                    self.arb_next = self.arb_next.min(t);
                }
            }
            // The next cycle anything can happen.
            let next =
                self.core_next.iter().chain(self.rtu_next.iter()).copied().min().unwrap_or(u64::MAX).min(self.arb_next);
            if next == u64::MAX {
                return self.stop(now);
            }
            self.end = now + 1;
            self.now = next.min(until).max(now + 1);
        }
        Ok(())
    }

    /// The traversal cores' part of cycle `now`: each one with something to do ticks, and a
    /// record that lands for a parked WAIT makes its core due the next cycle.
    #[inline]
    fn tick_rtus(&mut self, now: u64, srcs: &mut [MemSource]) -> Result<(), Fault> {
        let mut below = Below { l2: &mut self.l2, dram: &mut self.dram };
        for (r, rtu) in self.rtus.iter_mut().enumerate() {
            if self.rtu_next[r] > now {
                continue;
            }
            let mut fronts = FrontsView { cores: &mut *self.cores, clocks: &mut self.clocks };
            let cache = &mut self.rtcaches[self.rtcache_of_rtu[r]];
            rtu.tick(now, &mut Links { fronts: &mut fronts, rtcache: cache, below: &mut below, mem: &mut srcs[r] })?;
            self.rtu_next[r] = rtu.next_event(now);
            if rtu.take_rang() {
                for (c, clk) in self.clocks.iter().enumerate() {
                    if !clk.wakes.is_empty() {
                        self.core_next[c] = now + 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// Runs from `self.now`, a cycle in which no core and no launch is due, for as long as only
    /// the traversal cores have work (most cycles of a ray-bound kernel, while the warps wait
    /// on their records): the same cycles the full loop would take, without its checks of
    /// the cores and the launch fabric, which cannot change while no core ticks. Returns
    /// true when the cluster ran out of work.
    fn run_rtus(&mut self, until: u64, srcs: &mut [MemSource]) -> Result<bool, Fault> {
        let mut limit = self.core_next.iter().copied().min().unwrap_or(u64::MAX).min(self.arb_next);
        if self.rtus.len() == 1 {
            return self.run_rtu(until, limit, &mut srcs[0]);
        }
        loop {
            let now = self.now;
            self.tick_rtus(now, srcs)?;
            limit = limit.min(self.core_next.iter().copied().min().unwrap_or(u64::MAX));
            let next = self.rtu_next.iter().copied().min().unwrap_or(u64::MAX).min(limit);
            if next == u64::MAX {
                return self.stop(now).map(|()| true);
            }
            self.end = now + 1;
            self.now = next.min(until).max(now + 1);
            if self.now >= until || self.now >= limit {
                return Ok(false);
            }
        }
    }

    /// [`Self::run_rtus`] for a cluster with one traversal core (the default machine): the
    /// same cycles, run by the core itself ([`RtuCore::stretch`]: its tick inlined in the
    /// loop, the front-end view, RTCache and memory below it taken once for the stretch). A
    /// doorbell makes its core due the next cycle, which ends the stretch there, as in the
    /// loop above.
    fn run_rtu(&mut self, until: u64, limit: u64, src: &mut MemSource) -> Result<bool, Fault> {
        let Cluster { cores, clocks, rtus, rtcaches, rtcache_of_rtu, l2, dram, rtu_next, .. } = self;
        let rtu = &mut rtus[0];
        let cache = &mut rtcaches[rtcache_of_rtu[0]];
        let mut below = Below { l2, dram };
        let mut fronts = FrontsView { cores, clocks };
        let mut at = Stretch { now: self.now, next: rtu_next[0], end: self.end };
        let mut links = Links { fronts: &mut fronts, rtcache: cache, below: &mut below, mem: src };
        let r = rtu.stretch(&mut at, limit, until, &mut links);
        (self.now, self.end, rtu_next[0]) = (at.now, at.end, at.next);
        let rang = rtu.take_rang();
        let idle = r?;
        if rang {
            // The stretch ended the cycle after the ring: the WAIT's core is due then.
            for (c, clk) in self.clocks.iter().enumerate() {
                if !clk.wakes.is_empty() {
                    self.core_next[c] = at.now;
                }
            }
        }
        if idle {
            return self.stop(self.now).map(|()| true);
        }
        Ok(false)
    }

    /// Nothing is due after cycle `now`: the dispatch ends there, or every resident warp
    /// waits at a barrier that can never complete.
    fn stop(&mut self, now: u64) -> Result<(), Fault> {
        // Whatever ticked this cycle (if only to find nothing left to do) was part of the
        // dispatch: every unit's counters then cover exactly `end` cycles.
        self.end = now + 1;
        if self.clocks.iter().any(|c| c.resident() > 0) {
            for (i, c) in self.cores.iter().enumerate() {
                tracing::debug!("deadlock: core {i} warps {:?}", c.warps.iter().map(|w| w.state).collect::<Vec<_>>());
            }
            for r in &self.rtus {
                tracing::debug!("deadlock: {}", r.debug_state());
            }
            return Err(Fault::new(
                crate::fault::FaultKind::BadLaunch,
                "every resident warp waits at a barrier that can never complete (barrier in divergent or \
                 early-exited code)",
            ));
        }
        self.now = now + 1;
        Ok(())
    }

    /// Brings every counter to `end` and collects them.
    pub fn report(&mut self, end: u64) -> ClusterReport {
        let mut rep = ClusterReport { end: self.end, ..Default::default() };
        for (core, clk) in self.cores.iter_mut().zip(self.clocks.iter_mut()) {
            clk.finish(end);
            let mut counts = clk.counts.clone();
            counts.rtu = core.units.rtu.take_stats();
            clk.stats.pending_reads = std::mem::take(&mut core.units.rtu.pending_reads);
            counts.isect = std::mem::take(&mut core.units.isect.counters);
            rep.cores.push((counts, clk.stats.clone()));
            core.end_timed();
        }
        for rtu in &mut self.rtus {
            rtu.finish(end);
            rep.rtus.push(rtu.stats.clone());
            if let Some(t) = &rtu.timeline {
                rep.rtu_timeline.get_or_insert_with(Timeline::default).add(t);
            }
        }
        rep.rtcaches = self.rtcaches.iter().map(|c| c.stats.clone()).collect();
        rep.l2 = self.l2.stats.clone();
        rep.dram_reads = self.dram.reads;
        rep.dram_queue_cycles = self.dram.queue_cycles;
        rep
    }
}
