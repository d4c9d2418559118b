//! Per-dispatch counters as an architect reads them (`VORTEX_STATS=out.json`, and the
//! `VORTEX_LOG=info` summary).
//!
//! Functional mode fills what does not need time (instructions, CTAs, rays, box and triangle
//! tests, transforms, node fetches); timed mode adds cycles, IPC, warp occupancy, the
//! memory system, and the RTU's RTCache, slot occupancy and idle causes.

use crate::cache::CacheStats;
use crate::core::timed::CoreTimedStats;
use crate::device::DispatchReport;
use crate::rtu::engine::EngineStats;
use crate::rtu::timeline::Timeline;
use crate::tex::timed::TexStats;
use crate::tlb::TlbStats;
use serde::Serialize;

/// What timed mode adds to a dispatch's report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimedReport {
    pub cycles: u64,
    pub cores: Vec<CoreTimedStats>,
    /// One per traversal core (sockets × NUM_RTU_CORES per cluster, in cluster order).
    pub rtus: Vec<EngineStats>,
    /// The traversal cores' activity over time, summed (with `DeviceConfig::detailed_stats`).
    pub rtu_timeline: Option<Timeline>,
    pub rtcaches: Vec<CacheStats>,
    /// One per cluster.
    pub l2: Vec<CacheStats>,
    pub dram_reads: u64,
    pub dram_queue_cycles: u64,
    /// RTU slots per traversal core and warp slots per core (for occupancy ratios).
    pub rtu_slots: u32,
    pub rtu_contexts: u32,
    pub num_warps: u32,
    pub num_threads: u32,
    /// Host threads the clusters ran on.
    pub host_threads: u32,
}

#[derive(Serialize)]
struct RtuJson {
    rays: u64,
    box_tests: u64,
    tri_tests: u64,
    aabb_tests: u64,
    instance_transforms: u64,
    node_fetches: u64,
    records: u64,
    candidates: u64,
    restarts: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    timed: Option<RtuTimedJson>,
}

#[derive(Serialize)]
struct RtuTimedJson {
    traversal_cores: usize,
    line_requests: u64,
    rtcache: CacheStats,
    rtcache_hit_rate: f64,
    /// Mean live slots / NUM_SLOTS, mean traversing contexts / NUM_CTX.
    slot_occupancy: f64,
    context_occupancy: f64,
    /// Fractions of traversal-core cycles: a micro-step retired; idle with a ray in hand;
    /// idle with no ray (starved).
    busy: f64,
    idle_with_ray: f64,
    idle_starved: f64,
    /// Candidate batches and the SIMT efficiency of the code they feed (`reform`).
    batches: BatchJson,
    totals: EngineStats,
}

/// The commit engine's record batches and what the shaders made of them (timed mode).
#[derive(Serialize)]
struct BatchJson {
    /// Record batches written back, and their mean lanes.
    batches: u64,
    lanes_per_batch: f64,
    /// Batches holding a candidate, and their mean distinct SBT keys (instance SBT offset,
    /// geometry index): how many ways the shader dispatcher's compare chain splits a batch.
    candidate_batches: u64,
    sbt_keys_per_candidate_batch: f64,
    /// Candidates held back for a following batch by reformation by SBT key.
    deferred_lanes: u64,
    /// Lanes a completed WAIT read as PENDING (another trip around the proceed loop).
    pending_lane_reads: u64,
    /// Active lanes / NUM_THREADS over the warp instructions issued in a ray-tracing
    /// pipeline's any-hit and intersection shaders, and in its closest-hit, miss and
    /// callable shaders (0 instructions: 0).
    callback_instructions: u64,
    callback_simt_efficiency: f64,
    hit_shader_instructions: u64,
    hit_shader_simt_efficiency: f64,
}

impl BatchJson {
    fn new(t: &TimedReport, tot: &EngineStats) -> BatchJson {
        let sum = |f: fn(&CoreTimedStats) -> u64| t.cores.iter().map(f).sum::<u64>();
        let nt = t.num_threads.max(1) as u64;
        let (cb, cb_lanes) = (sum(|c| c.callback_instructions), sum(|c| c.callback_lanes));
        let (hs, hs_lanes) = (sum(|c| c.hit_shader_instructions), sum(|c| c.hit_shader_lanes));
        BatchJson {
            batches: tot.batches,
            lanes_per_batch: ratio(tot.batch_lanes, tot.batches),
            candidate_batches: tot.candidate_batches,
            sbt_keys_per_candidate_batch: ratio(tot.batch_sbt_keys, tot.candidate_batches),
            deferred_lanes: tot.deferred_lanes,
            pending_lane_reads: sum(|c| c.pending_reads),
            callback_instructions: cb,
            callback_simt_efficiency: ratio(cb_lanes, cb * nt),
            hit_shader_instructions: hs,
            hit_shader_simt_efficiency: ratio(hs_lanes, hs * nt),
        }
    }
}

/// The texture units' counters, summed over cores (timed mode, dispatches that sampled).
#[derive(Serialize)]
struct TexJson {
    requests: u64,
    texels: u64,
    lines: u64,
    filter_cycles: u64,
    queue_cycles: u64,
    cache: CacheStats,
    cache_hit_rate: f64,
}

#[derive(Serialize)]
struct MemJson {
    l1: CacheStats,
    l2: CacheStats,
    dram_reads: u64,
    dram_queue_cycles: u64,
    /// Translations of sparse-resource lines: by the cores' LSUs, by the traversal cores.
    lsu_tlb: TlbStats,
    rtu_tlb: TlbStats,
}

#[derive(Serialize)]
struct DispatchJson<'a> {
    kernel: &'a str,
    mode: &'static str,
    /// The device's ray-tracing architecture (`rtu` or `rdna2`).
    rt_arch: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    ctas: u64,
    warps: u64,
    instructions: u64,
    thread_instructions: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cycles: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ipc: Option<f64>,
    /// Mean resident warps / warp slots, over cores and cycles.
    #[serde(skip_serializing_if = "Option::is_none")]
    warp_occupancy: Option<f64>,
    rtu: RtuJson,
    /// The node-intersection unit's counters, when the dispatch ran `ISECT`.
    #[serde(skip_serializing_if = "Option::is_none")]
    isect: Option<&'a crate::isect::unit::IsectCounters>,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory: Option<MemJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tex: Option<TexJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cores: Option<&'a [CoreTimedStats]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rtu_timeline: Option<TimelineJson>,
    wall_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    simulated_cycles_per_second: Option<f64>,
    /// A draw's fixed-function counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    draw: Option<&'a crate::gfx::DrawStats>,
    /// Functional mode's JIT, when it compiled or ran code in the dispatch.
    #[serde(skip_serializing_if = "Option::is_none")]
    jit: Option<JitJson>,
}

/// What the JIT did in one dispatch.
#[derive(Serialize)]
struct JitJson {
    /// Warp instructions executed by compiled runs (counted in `instructions` too).
    instructions: u64,
    /// Host time spent compiling during the dispatch.
    compile_ms: f64,
}

/// The traversal cores' timeline as parallel arrays, one entry per bucket, each a fraction
/// of the bucket's traversal-core cycles (occupancy: of its slot-cycles).
#[derive(Serialize)]
struct TimelineJson {
    bucket_cycles: u64,
    traversal_cores: usize,
    slots_per_core: u32,
    busy: Vec<f64>,
    idle_with_ray: Vec<f64>,
    idle_starved: Vec<f64>,
    slot_occupancy: Vec<f64>,
    slot_full: Vec<f64>,
}

impl TimelineJson {
    fn new(t: &Timeline, traversal_cores: usize, slots_per_core: u32) -> TimelineJson {
        let frac = |f: fn(&crate::rtu::timeline::Bucket) -> u64| {
            t.buckets.iter().map(|b| ratio(f(b), b.cycles())).collect::<Vec<f64>>()
        };
        TimelineJson {
            bucket_cycles: t.bucket_cycles,
            traversal_cores,
            slots_per_core,
            busy: frac(|b| b.busy),
            idle_with_ray: frac(|b| b.idle_with_ray),
            idle_starved: frac(|b| b.idle_starved),
            slot_occupancy: t
                .buckets
                .iter()
                .map(|b| ratio(b.slot_cycles, b.cycles() * slots_per_core as u64))
                .collect(),
            slot_full: frac(|b| b.slot_full),
        }
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl TimedReport {
    /// Appends a phase that ran after this one on the same machine (a draw's stages): cycles
    /// add up, and so does every unit's counters, unit by unit.
    pub fn then(&mut self, o: &TimedReport) {
        fn zip<T: Clone>(a: &mut Vec<T>, b: &[T], add: impl Fn(&mut T, &T)) {
            for (i, x) in b.iter().enumerate() {
                match a.get_mut(i) {
                    Some(y) => add(y, x),
                    None => a.push(x.clone()),
                }
            }
        }
        self.cycles += o.cycles;
        zip(&mut self.cores, &o.cores, CoreTimedStats::add);
        zip(&mut self.rtus, &o.rtus, EngineStats::add);
        zip(&mut self.rtcaches, &o.rtcaches, CacheStats::add);
        zip(&mut self.l2, &o.l2, CacheStats::add);
        if let Some(t) = &o.rtu_timeline {
            self.rtu_timeline.get_or_insert_with(Default::default).add(t);
        }
        self.dram_reads += o.dram_reads;
        self.dram_queue_cycles += o.dram_queue_cycles;
    }

    pub fn rtu_totals(&self) -> EngineStats {
        let mut t = EngineStats::default();
        for r in &self.rtus {
            t.add(r);
        }
        t
    }

    pub fn rtcache_totals(&self) -> CacheStats {
        let mut t = CacheStats::default();
        for c in &self.rtcaches {
            t.add(c);
        }
        t
    }

    pub fn l1_totals(&self) -> CacheStats {
        let mut t = CacheStats::default();
        for c in &self.cores {
            t.add(&c.l1);
        }
        t
    }

    /// The LSUs' TLB counters, summed over cores.
    pub fn lsu_tlb_totals(&self) -> TlbStats {
        let mut t = TlbStats::default();
        for c in &self.cores {
            t.add(&c.tlb);
        }
        t
    }

    /// The texture units' counters, summed over cores.
    pub fn tex_totals(&self) -> TexStats {
        let mut t = TexStats::default();
        for c in &self.cores {
            t.add(&c.tex);
        }
        t
    }

    /// The traversal cores' TLB counters, summed.
    pub fn rtu_tlb_totals(&self) -> TlbStats {
        let t = self.rtu_totals();
        TlbStats { lookups: t.tlb_lookups, misses: t.tlb_misses }
    }

    pub fn l2_totals(&self) -> CacheStats {
        let mut t = CacheStats::default();
        for c in &self.l2 {
            t.add(c);
        }
        t
    }

    /// Mean resident warps / warp slots over cores and cycles.
    pub fn warp_occupancy(&self) -> f64 {
        let warp_cycles: u64 = self.cores.iter().map(|c| c.warp_cycles).sum();
        ratio(warp_cycles, self.cycles * self.cores.len() as u64 * self.num_warps as u64)
    }

    /// (busy, idle with a ray, starved) as fractions of traversal-core cycles.
    pub fn rtu_fractions(&self) -> (f64, f64, f64) {
        let t = self.rtu_totals();
        let all = t.busy_cycles + t.idle_with_ray + t.idle_starved;
        (ratio(t.busy_cycles, all), ratio(t.idle_with_ray, all), ratio(t.idle_starved, all))
    }
}

impl DispatchReport {
    /// Warp instructions per cycle (timed mode).
    pub fn ipc(&self) -> Option<f64> {
        self.timed.as_ref().map(|t| ratio(self.totals.instructions, t.cycles))
    }

    /// The dispatch as a JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        let r = &self.totals.rtu;
        let timed = self.timed.as_ref().map(|t| {
            let tot = t.rtu_totals();
            let rc = t.rtcache_totals();
            let (busy, with_ray, starved) = t.rtu_fractions();
            let n = t.rtus.len() as u64;
            RtuTimedJson {
                traversal_cores: t.rtus.len(),
                line_requests: tot.line_requests,
                rtcache_hit_rate: ratio(rc.hits, rc.accesses),
                rtcache: rc,
                slot_occupancy: ratio(tot.slot_cycles, t.cycles * n * t.rtu_slots as u64),
                context_occupancy: ratio(tot.context_cycles, t.cycles * n * t.rtu_contexts as u64),
                busy,
                idle_with_ray: with_ray,
                idle_starved: starved,
                batches: BatchJson::new(t, &tot),
                totals: tot,
            }
        });
        let j = DispatchJson {
            kernel: &self.kernel,
            mode: if self.timed.is_some() { "timed" } else { "functional" },
            rt_arch: self.rt_arch.name(),
            isect: Some(&self.totals.isect).filter(|c| c.instrs > 0),
            grid: self.grid,
            block: self.block,
            ctas: self.totals.ctas,
            warps: self.totals.warps,
            instructions: self.totals.instructions,
            thread_instructions: self.totals.thread_instructions,
            cycles: self.timed.as_ref().map(|t| t.cycles),
            ipc: self.ipc(),
            warp_occupancy: self.timed.as_ref().map(|t| t.warp_occupancy()),
            rtu: RtuJson {
                rays: r.rays,
                box_tests: r.box_tests,
                tri_tests: r.tri_tests,
                aabb_tests: r.aabb_tests,
                instance_transforms: r.instance_transforms,
                node_fetches: r.node_fetches,
                records: r.records,
                candidates: r.candidates,
                restarts: r.restarts,
                timed,
            },
            memory: self.timed.as_ref().map(|t| MemJson {
                l1: t.l1_totals(),
                l2: t.l2_totals(),
                dram_reads: t.dram_reads,
                dram_queue_cycles: t.dram_queue_cycles,
                lsu_tlb: t.lsu_tlb_totals(),
                rtu_tlb: t.rtu_tlb_totals(),
            }),
            tex: self.timed.as_ref().map(|t| t.tex_totals()).filter(|t| t.requests > 0).map(|t| TexJson {
                requests: t.requests,
                texels: t.texels,
                lines: t.lines,
                filter_cycles: t.filter_cycles,
                queue_cycles: t.queue_cycles,
                cache_hit_rate: ratio(t.cache.hits, t.cache.accesses),
                cache: t.cache,
            }),
            cores: self.timed.as_ref().map(|t| &t.cores[..]),
            rtu_timeline: self
                .timed
                .as_ref()
                .and_then(|t| t.rtu_timeline.as_ref().map(|tl| TimelineJson::new(tl, t.rtus.len(), t.rtu_slots))),
            wall_ms: self.wall.as_secs_f64() * 1e3,
            simulated_cycles_per_second: self
                .timed
                .as_ref()
                .map(|t| t.cycles as f64 / self.wall.as_secs_f64().max(1e-9)),
            draw: self.draw.as_ref(),
            jit: (self.totals.jit_instructions > 0 || !self.jit_compile.is_zero()).then_some(JitJson {
                instructions: self.totals.jit_instructions,
                compile_ms: self.jit_compile.as_secs_f64() * 1e3,
            }),
        };
        serde_json::to_value(j).expect("counters serialise")
    }

    /// One human-readable paragraph (the `VORTEX_LOG=info` line).
    pub fn summary(&self) -> String {
        let r = &self.totals.rtu;
        let mut s = format!(
            "dispatch '{}' grid {:?} x block {:?}: {} CTAs, {} warp instrs ({} thread instrs), {} rays, {} box tests, \
             {} tri tests, {} transforms, {} node fetches, {:.3} ms",
            self.kernel,
            self.grid,
            self.block,
            self.totals.ctas,
            self.totals.instructions,
            self.totals.thread_instructions,
            r.rays,
            r.box_tests,
            r.tri_tests,
            r.instance_transforms,
            r.node_fetches,
            self.wall.as_secs_f64() * 1e3
        );
        if let Some(t) = &self.timed {
            let rc = t.rtcache_totals();
            let (busy, with_ray, starved) = t.rtu_fractions();
            let tot = t.rtu_totals();
            let n = t.rtus.len().max(1) as u64;
            s += &format!(
                "; timed: {} cycles, IPC {:.3}, warp occupancy {:.1}%, RTCache {} hits / {} misses / {} MSHR-full \
                 stalls, RTU slots {:.1}% occupied, RTU busy {:.1}% / idle with a ray {:.1}% / starved {:.1}%, \
                 {:.2} M cycles/s",
                t.cycles,
                self.ipc().unwrap_or(0.0),
                100.0 * t.warp_occupancy(),
                rc.hits,
                rc.misses,
                rc.mshr_full_stalls,
                100.0 * ratio(tot.slot_cycles, t.cycles * n * t.rtu_slots as u64),
                100.0 * busy,
                100.0 * with_ray,
                100.0 * starved,
                t.cycles as f64 / self.wall.as_secs_f64().max(1e-9) / 1e6
            );
            let (lsu, rtu) = (t.lsu_tlb_totals(), t.rtu_tlb_totals());
            if lsu.lookups + rtu.lookups > 0 {
                s += &format!(
                    ", TLB (sparse pages) LSU {} lookups / {} misses, RTU {} lookups / {} misses",
                    lsu.lookups, lsu.misses, rtu.lookups, rtu.misses
                );
            }
            let tex = t.tex_totals();
            if tex.requests > 0 {
                s += &format!(
                    "; texture: {} requests, {} texels, cache {} hits / {} misses",
                    tex.requests, tex.texels, tex.cache.hits, tex.cache.misses
                );
            }
        }
        s
    }
}
