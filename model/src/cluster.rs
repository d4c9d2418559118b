//! A cluster in timed mode: its cores, its sockets (each with its traversal cores and
//! RTCaches), its L2 and DRAM channel, and the launch fabric from the KMU to its cores.
//!
//! Units talk through what the hardware has between them: the launch link (one CTA beat per
//! cycle), the socket RTU bus (TRACE arms after their burst, CONTINUEs, retirements), the
//! record write-back doorbell to a core's parked WAITs, and memory requests with their
//! arrival cycles. A cluster advances cycle by cycle, skipping cycles in which no unit has
//! anything to do.
//!
//! Clusters are independent between KMU deliveries, so the device runs each on its own host
//! thread and synchronises them every `sim.quantum` cycles, when the KMU hands each cluster
//! the next launch messages (see `device.rs`). A device of one cluster is fed by the KMU
//! directly, every cycle.

use crate::cache::{Cache, CacheGeom, CacheStats, Dram};
use crate::config::DeviceConfig;
use crate::core::timed::{Below, Clock, CoreTimedStats, KernelTiming};
use crate::core::{Core, CoreStats, DispatchCtx};
use crate::fault::Fault;
use crate::kmu::{CtaDesc, Kmu};
use crate::rtu::engine::{EngineStats, Fronts, RtuCore};
use crate::rtu::RtuUnit;
use std::collections::VecDeque;

/// Where a cluster's launch messages (one cluster of CTAs each) come from.
pub enum LaunchSource<'k> {
    /// The KMU itself (a one-cluster device).
    Kmu { kmu: &'k Kmu, next: u64 },
    /// A link the device refills at quantum boundaries.
    Link { queue: VecDeque<Vec<CtaDesc>>, kmu_done: bool },
}

impl LaunchSource<'_> {
    fn pull(&mut self) -> Option<Vec<CtaDesc>> {
        match self {
            LaunchSource::Kmu { kmu, next } => {
                if *next < kmu.num_clusters() {
                    let m = kmu.cluster(*next).collect();
                    *next += 1;
                    Some(m)
                } else {
                    None
                }
            }
            LaunchSource::Link { queue, .. } => queue.pop_front(),
        }
    }

    fn exhausted(&self) -> bool {
        match self {
            LaunchSource::Kmu { kmu, next } => *next >= kmu.num_clusters(),
            LaunchSource::Link { queue, kmu_done } => queue.is_empty() && *kmu_done,
        }
    }

    fn pending(&self) -> bool {
        match self {
            LaunchSource::Kmu { .. } => !self.exhausted(),
            LaunchSource::Link { queue, .. } => !queue.is_empty(),
        }
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
    pub rtcaches: Vec<CacheStats>,
    pub l2: CacheStats,
    pub dram_reads: u64,
    pub dram_queue_cycles: u64,
    /// The cycle after the cluster's last activity.
    pub end: u64,
}

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
    pub source: LaunchSource<'a>,
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
        &mut self.cores[core].rtu
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
        reform_thresh: u32,
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
                rtus.push(RtuCore::new(cfg, base, reform_thresh));
                rtcache_of_rtu.push(first_cache + (k / 4) as usize);
                let _ = s;
            }
        }
        let rtu_of_core = (0..cores.len() as u32)
            .map(|c| (c / cfg.socket_size * nrc + (c % cfg.socket_size) / cpr) as usize)
            .collect();
        let m = &cfg.mem;
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
            source,
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

    /// One launch-fabric cycle: offers the current CTA to a ready core.
    fn launch(&mut self, ctx: &DispatchCtx) -> bool {
        let now = self.now;
        if self.arb.cur.is_none() {
            match self.source.pull() {
                Some(m) => self.arb.cur = Some((m, 0, None)),
                None => return false,
            }
        }
        let n = self.cores.len();
        let (ctas, idx, dest) = self.arb.cur.as_mut().expect("a message");
        let cta = ctas[*idx];
        let order: Vec<usize> = match *dest {
            Some(d) => vec![d],
            None => (0..n).map(|k| (self.arb.rr + k) % n).collect(),
        };
        for c in order {
            let clk = &mut self.clocks[c];
            if !clk.disp_ready(now) {
                continue;
            }
            let Some(adm) = clk.disp.try_admit(&cta, self.arb.cluster_size) else { continue };
            self.cores[c].launch_cta_timed(clk, ctx, &cta, adm, now);
            *idx += 1;
            *dest = Some(c);
            if *idx == ctas.len() {
                self.arb.rr = c + 1;
                self.arb.cur = None;
            }
            return true;
        }
        false
    }

    /// Runs until cycle `until` (exclusive) or until the cluster has finished.
    pub fn run(&mut self, until: u64, ctx: &DispatchCtx, kt: &KernelTiming) -> Result<(), Fault> {
        let mem = ctx.mem;
        while self.now < until {
            let now = self.now;
            let launched = self.launch(ctx);
            let mut below = Below { l2: &mut self.l2, dram: &mut self.dram };
            for (c, core) in self.cores.iter_mut().enumerate() {
                let clk = &mut self.clocks[c];
                core.tick_timed(clk, now, ctx, kt, &mut below)?;
                if !clk.outgoing.is_empty() {
                    let r = self.rtu_of_core[c];
                    for (at, m) in clk.outgoing.drain(..) {
                        self.rtus[r].post(at, c as u32, m);
                    }
                }
            }
            for (r, rtu) in self.rtus.iter_mut().enumerate() {
                let mut fronts = FrontsView { cores: &mut *self.cores, clocks: &mut self.clocks };
                let cache = &mut self.rtcaches[self.rtcache_of_rtu[r]];
                rtu.tick(now, &mut fronts, cache, &mut below, mem)?;
            }
            // The next cycle anything can happen.
            let mut next = u64::MAX;
            let mut dirty = launched;
            for (c, core) in self.cores.iter().enumerate() {
                let clk = &mut self.clocks[c];
                dirty |= std::mem::take(&mut clk.dirty);
                next = next.min(core.next_event(clk, now));
            }
            for rtu in &self.rtus {
                next = next.min(rtu.next_event(now));
            }
            if self.arb.cur.is_some() || self.source.pending() {
                if dirty {
                    next = now + 1;
                } else if let Some(t) = self.clocks.iter().map(|c| c.disp_free_at()).filter(|&t| t > now).min() {
                    // A blocked message waits for a dispatcher to finish expanding, or for a
                    // retirement to free a slot (an issue event, which marks the core dirty).
                    next = next.min(t);
                }
            }
            if self.busy() {
                self.end = now + 1;
            }
            if next == u64::MAX {
                if self.clocks.iter().any(|c| c.resident() > 0) {
                    for (i, c) in self.cores.iter().enumerate() {
                        tracing::debug!(
                            "deadlock: core {i} warps {:?}",
                            c.warps.iter().map(|w| w.state).collect::<Vec<_>>()
                        );
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
                // Idle until the KMU link brings work (or done).
                self.now = if self.finished() { now + 1 } else { until };
                return Ok(());
            }
            self.now = next.min(until).max(now + 1);
        }
        Ok(())
    }

    /// Brings every counter to `end` and collects them.
    pub fn report(&mut self, end: u64) -> ClusterReport {
        let mut rep = ClusterReport { end: self.end, ..Default::default() };
        for (core, clk) in self.cores.iter_mut().zip(self.clocks.iter_mut()) {
            clk.finish(end);
            let mut counts = clk.counts.clone();
            counts.rtu = core.rtu.take_stats();
            rep.cores.push((counts, clk.stats.clone()));
            core.end_timed();
        }
        for rtu in &mut self.rtus {
            rtu.finish(end);
            rep.rtus.push(rtu.stats.clone());
        }
        rep.rtcaches = self.rtcaches.iter().map(|c| c.stats.clone()).collect();
        rep.l2 = self.l2.stats.clone();
        rep.dram_reads = self.dram.reads;
        rep.dram_queue_cycles = self.dram.queue_cycles;
        rep
    }

    pub fn set_link(&mut self, queue_push: impl FnOnce(&mut VecDeque<Vec<CtaDesc>>, &mut bool)) {
        if let LaunchSource::Link { queue, kmu_done } = &mut self.source {
            queue_push(queue, kmu_done);
        }
    }

    pub fn link_len(&self) -> usize {
        match &self.source {
            LaunchSource::Link { queue, .. } => queue.len(),
            LaunchSource::Kmu { .. } => 0,
        }
    }
}
