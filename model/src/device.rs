//! The whole device as the host sees it: a DCR file, a start pulse, and memory.
//!
//! `start` latches the launch, decodes the kernel (once per kernel id), and lets the KMU hand
//! clusters to the cores until the grid is done. In functional mode the cores run on host
//! threads; a core pulls its next cluster when its dispatcher can take it, as the launch
//! fabric's round-robin over ready cores does. In timed mode the device's clusters advance
//! cycle by cycle (`cluster.rs`), each on a host thread: the KMU's launch messages go to the
//! clusters in a fixed round robin, so clusters never need to synchronise.

use crate::cluster::{Cluster, LaunchSource};
use crate::config::{DeviceConfig, Mode};
use crate::core::decode::DecodedKernel;
use crate::core::timed::KernelTiming;
use crate::core::{Core, CoreStats, DispatchCtx};
use crate::dcr::{DcrFile, LaunchState};
use crate::fault::{Fault, FaultKind};
use crate::gfx::{DrawStats, Stage};
use crate::kmu::{CtaDesc, Kmu};
use crate::mem::{AddressSpace, MemoryMap};
use crate::stats::TimedReport;
use crate::watchdog::{Reporter, Watchdog};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one dispatch did.
#[derive(Clone, Debug, Default)]
pub struct DispatchReport {
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub totals: CoreStats,
    pub per_core: Vec<CoreStats>,
    pub wall: Duration,
    /// Timed mode's cycles and unit counters.
    pub timed: Option<TimedReport>,
    /// With `DeviceConfig::detailed_stats`: the RTU work (records fetched plus primitive
    /// tests) of every invocation that traced, by grid-relative global invocation id.
    pub work: Vec<([u32; 3], u32)>,
    /// A draw's fixed-function counters (`Device::draw`); `None` for a dispatch.
    pub draw: Option<DrawStats>,
    /// The device's ray-tracing architecture.
    pub rt_arch: crate::config::RtArch,
    /// Host time spent compiling kernels for the JIT during the dispatch (a kernel is
    /// compiled inside the dispatch that makes it hot; process-wide, so a concurrent
    /// dispatch of another device adds in).
    pub jit_compile: Duration,
}

impl DispatchReport {
    /// Adds the counters of a stage that ran after this one (a draw's fragment stage after
    /// its vertex stage): instructions, CTAs and warps add up, timed mode's cycles too.
    pub fn absorb(&mut self, next: DispatchReport) {
        self.rt_arch = next.rt_arch;
        self.jit_compile += next.jit_compile;
        self.totals.add(&next.totals);
        for (i, c) in next.per_core.iter().enumerate() {
            match self.per_core.get_mut(i) {
                Some(p) => p.add(c),
                None => self.per_core.push(c.clone()),
            }
        }
        self.timed = match (self.timed.take(), next.timed) {
            (Some(mut a), Some(b)) => {
                a.then(&b);
                Some(a)
            }
            (a, b) => a.or(b),
        };
        self.work.extend(next.work);
    }
}

/// Where a launch's CTAs come from.
#[derive(Clone, Copy)]
pub enum Source<'a> {
    /// The KMU's walk of the grid, load-balanced over the cores (dispatches, vertex kernels).
    Kmu(&'a Kmu),
    /// A list of CTAs per core, each run in order on its core (fragment warps by tile), with
    /// the cycle each may launch at (timed mode).
    PerCore(&'a [Vec<CtaDesc>], &'a [Vec<u64>]),
}

pub struct Device {
    cfg: DeviceConfig,
    space: Arc<AddressSpace>,
    dcrs: DcrFile,
    kernels: HashMap<(u64, u64), Arc<DecodedKernel>>,
    cores: Vec<Core>,
}

impl Device {
    /// A device with its own address space.
    pub fn new(cfg: DeviceConfig) -> Result<Device, String> {
        Device::with_memory(cfg, Arc::new(AddressSpace::new()))
    }

    /// A device over an existing address space (the runtime owns allocation).
    pub fn with_memory(cfg: DeviceConfig, space: Arc<AddressSpace>) -> Result<Device, String> {
        cfg.validate()?;
        let cores = (0..cfg.num_cores()).map(|i| Core::new(i, &cfg)).collect();
        let mut dev = Device { cfg, space, dcrs: DcrFile::default(), kernels: HashMap::new(), cores };
        if let Some(sink) = crate::rtu::raylog::Sink::from_env() {
            dev.set_raylog(Some(sink));
        }
        Ok(dev)
    }

    /// Records every trace the device's RTUs serve, and every ray query an rdna2 shader walk
    /// reports (`RQLOG`), into `sink` (`VORTEX_RAYLOG` does this for every device of the
    /// process; `docs/RAYLOG.md`). None stops recording.
    pub fn set_raylog(&mut self, sink: Option<Arc<crate::rtu::raylog::Sink>>) {
        for core in &mut self.cores {
            core.units.rtu.set_raylog(sink.clone());
            core.units.isect.set_raylog(sink.clone());
        }
    }

    pub fn config(&self) -> &DeviceConfig {
        &self.cfg
    }

    pub fn memory(&self) -> &Arc<AddressSpace> {
        &self.space
    }

    pub fn dcr_write(&mut self, addr: u32, value: u32) -> Result<(), Fault> {
        self.dcrs.write(addr, value).map_err(|e| Fault::new(FaultKind::BadLaunch, e))
    }

    pub fn dcrs(&self) -> &DcrFile {
        &self.dcrs
    }

    /// The decoded kernel at `pc` (decoded once per image and kernel id).
    pub(crate) fn kernel(&mut self, mem: &MemoryMap, pc: u64) -> Result<Arc<DecodedKernel>, Fault> {
        let head: [u8; crate::abi::kernel::image::HEADER_BYTES] = mem
            .read_array(pc)
            .map_err(|m| Fault::new(FaultKind::BadKernel, format!("kernel image at {pc:#x}: {m}")))?;
        let id = crate::abi::kernel::KernelHeader::parse(&head)
            .map_err(|e| Fault::new(FaultKind::BadKernel, format!("kernel image at {pc:#x}: {e}")))?
            .kernel_id;
        if let Some(k) = self.kernels.get(&(pc, id)) {
            return Ok(k.clone());
        }
        let k = Arc::new(DecodedKernel::load(mem, pc)?);
        if self.kernels.len() > 4096 {
            self.kernels.clear();
        }
        self.kernels.insert((pc, id), k.clone());
        Ok(k)
    }

    /// The start pulse: runs the launch programmed in the DCRs to completion.
    pub fn start(&mut self) -> Result<DispatchReport, Fault> {
        let r = self.start_inner();
        // VORTEX_RAYLOG: the dispatch's traces and lines go to the file (a no-op otherwise).
        for core in &mut self.cores {
            core.units.rtu.flush_raylog();
            core.units.isect.flush_raylog();
        }
        r
    }

    fn start_inner(&mut self) -> Result<DispatchReport, Fault> {
        // A faulted dispatch may have left per-invocation work behind; it is not this one's.
        for core in &mut self.cores {
            core.take_work();
        }
        let launch: LaunchState = self.dcrs.launch();
        // An empty grid is not an error and walks nothing.
        if !launch.grid_nonempty() {
            return Ok(DispatchReport { grid: launch.grid_dim, block: launch.block_dim, ..Default::default() });
        }
        let mem = self.space.snapshot();
        let kernel = self.kernel(&mem, launch.pc)?;
        let kmu = Kmu::new(&launch)?;
        self.run(&mem, &launch, &kernel, None, Source::Kmu(&kmu))
    }

    /// Runs `kernel` over the CTAs of `source` to completion, in the device's mode: a
    /// dispatch, or one stage of a draw (`gfx`).
    pub(crate) fn run(
        &mut self,
        mem: &MemoryMap,
        launch: &LaunchState,
        kernel: &Arc<DecodedKernel>,
        gfx: Option<Stage>,
        source: Source,
    ) -> Result<DispatchReport, Fault> {
        let t0 = Instant::now();
        let compiled0 = crate::jit::stats().compile_ns;
        let mut report = DispatchReport {
            kernel: kernel.name.clone(),
            grid: launch.grid_dim,
            block: launch.block_dim,
            rt_arch: self.cfg.rt_arch,
            ..Default::default()
        };
        let watchdog = Watchdog::new(&self.cfg);
        let ctx = DispatchCtx { mem, kernel, launch, num_cores: self.cfg.num_cores(), watchdog: &watchdog, gfx };
        // A watchdog fault names the rule, the progress and the warps still running on the
        // cores that ran the dispatch.
        let lost = |f: Fault, cores: &[Core]| {
            let mut f = watchdog.describe(f, cores);
            if f.is_watchdog() {
                f.kernel = Some(kernel.name.clone());
            }
            f
        };
        if self.cfg.mode == Mode::Timed {
            if let Err(f) = self.run_timed(&ctx, source, &mut report) {
                return Err(lost(f, &self.cores));
            }
        } else {
            for c in &mut self.cores {
                c.units.rtu.set_timed(false);
            }
            let (results, ran) = match source {
                Source::Kmu(kmu) => self.run_functional(&ctx, kmu),
                Source::PerCore(lists, _) => self.run_lists(&ctx, lists),
            };
            let mut first_fault: Option<Fault> = None;
            for r in results {
                match r {
                    Ok(s) => {
                        report.totals.add(&s);
                        report.per_core.push(s);
                    }
                    Err(f) => {
                        // Prefer the fault that caused the stop over the cores that merely
                        // stopped.
                        let secondary = f.detail.starts_with("stopped:");
                        if first_fault.as_ref().is_none_or(|g| g.detail.starts_with("stopped:") && !secondary) {
                            first_fault = Some(f);
                        }
                    }
                }
            }
            if let Some(f) = first_fault {
                return Err(lost(f, &self.cores[..ran]));
            }
        }
        report.work = self.cores.iter_mut().flat_map(|c| c.take_work()).collect();
        report.wall = t0.elapsed();
        report.jit_compile = Duration::from_nanos(crate::jit::stats().compile_ns.saturating_sub(compiled0));
        Ok(report)
    }

    /// Functional mode over the KMU's walk: cores on host threads, each pulling its next
    /// cluster when it can take one. Returns each core's result and how many cores (from the
    /// first) ran.
    fn run_functional(&mut self, ctx: &DispatchCtx, kmu: &Kmu) -> (Vec<Result<CoreStats, Fault>>, usize) {
        let next = AtomicU64::new(0);
        let total = kmu.num_clusters();
        let pull = || {
            let i = next.fetch_add(1, Ordering::Relaxed);
            (i < total).then(|| kmu.cluster(i).collect::<Vec<_>>())
        };
        let threads = self.cfg.host_threads().min(self.cores.len()).min(total as usize).max(1);
        let ran = threads;
        if threads == 1 {
            let mut pull = pull;
            return (vec![self.cores[0].run(ctx, &mut pull)], ran);
        }
        let pull = &pull;
        let results = std::thread::scope(|s| {
            let handles: Vec<_> = self.cores[..threads]
                .iter_mut()
                .map(|core| {
                    s.spawn(move || {
                        let mut p = || pull();
                        let r = core.run(ctx, &mut p);
                        if r.is_err() {
                            ctx.watchdog.stop();
                        }
                        r
                    })
                })
                .collect();
            join_all(handles)
        });
        (results, ran)
    }

    /// Functional mode over per-core lists: every core with work runs its list in order;
    /// host threads take the cores round robin.
    fn run_lists(&mut self, ctx: &DispatchCtx, lists: &[Vec<CtaDesc>]) -> (Vec<Result<CoreStats, Fault>>, usize) {
        let busy: Vec<usize> = (0..self.cores.len()).filter(|&c| lists.get(c).is_some_and(|l| !l.is_empty())).collect();
        let threads = self.cfg.host_threads().min(busy.len()).max(1);
        let ran = self.cores.len();
        let mut groups: Vec<Vec<(&mut Core, &[CtaDesc])>> = (0..threads).map(|_| Vec::new()).collect();
        for (i, core) in self.cores.iter_mut().enumerate() {
            if let Some(k) = busy.iter().position(|&c| c == i) {
                groups[k % threads].push((core, &lists[i]));
            }
        }
        let run_group = |g: Vec<(&mut Core, &[CtaDesc])>| -> Vec<Result<CoreStats, Fault>> {
            g.into_iter()
                .map(|(core, list)| {
                    let mut it = list.iter();
                    let mut pull = || it.next().map(|c| vec![*c]);
                    let r = core.run(ctx, &mut pull);
                    if r.is_err() {
                        ctx.watchdog.stop();
                    }
                    r
                })
                .collect()
        };
        if threads == 1 {
            return (groups.into_iter().flat_map(run_group).collect(), ran);
        }
        let run_group = &run_group;
        let results = std::thread::scope(|s| {
            let handles: Vec<_> = groups.into_iter().map(|g| s.spawn(move || run_group(g))).collect();
            handles
                .into_iter()
                .flat_map(|h| {
                    h.join().unwrap_or_else(|_| vec![Err(Fault::new(FaultKind::BadLaunch, "a core thread panicked"))])
                })
                .collect()
        });
        (results, ran)
    }

    /// Every core's output-merger port starts a fragment stage.
    pub(crate) fn begin_fragments(&mut self) {
        let warps = self.cfg.num_warps as usize;
        let timed = (self.cfg.mode == Mode::Timed).then_some(&self.cfg.gfx);
        for c in &mut self.cores {
            c.units.om.begin(warps, timed);
        }
    }

    /// The fragment stage ended: the output mergers' counters (every warp merged), and the
    /// cycle the last merge finished (timed mode).
    pub(crate) fn end_fragments(&mut self) -> Result<(crate::gfx::om::OmStats, u64), Fault> {
        let (mut s, mut end) = (crate::gfx::om::OmStats::default(), 0);
        for c in &mut self.cores {
            if !c.units.om.drained() {
                return Err(Fault::new(FaultKind::BadLaunch, "a fragment warp never merged"));
            }
            s.add(&c.units.om.stats);
            end = end.max(c.units.om.end);
        }
        Ok((s, end))
    }
}

fn join_all(
    handles: Vec<std::thread::ScopedJoinHandle<'_, Result<CoreStats, Fault>>>,
) -> Vec<Result<CoreStats, Fault>> {
    handles
        .into_iter()
        .map(|h| h.join().unwrap_or_else(|_| Err(Fault::new(FaultKind::BadLaunch, "a core thread panicked"))))
        .collect()
}

/// Cycles a cluster runs between checks of the watchdog: a few milliseconds of host time
/// even when one warp issues every cycle.
const CHUNK: u64 = 1 << 16;

impl Device {
    fn run_timed(&mut self, ctx: &DispatchCtx, source: Source, report: &mut DispatchReport) -> Result<(), Fault> {
        let cfg = self.cfg.clone();
        let kt = KernelTiming::new(&ctx.kernel.code).with_regions(&ctx.kernel.regions);
        let dcr_thresh = self.dcrs.read(crate::abi::dcr::RTU_REFORM_THRESH);
        let reform = crate::rtu::engine::Reform {
            thresh: if dcr_thresh != 0 { dcr_thresh } else { cfg.rtu.reform_thresh },
            // Grouping by SBT key only where candidates select their shader by SBT record.
            sbt: cfg.rtu.reform_sbt && self.dcrs.rtu().sbt_dispatch,
        };
        let ncl = cfg.num_clusters as usize;
        let mut clusters = Vec::with_capacity(ncl);
        let cpc = cfg.cores_per_cluster as usize;
        for (i, cores) in self.cores.chunks_mut(cpc).enumerate() {
            let source = match source {
                Source::Kmu(kmu) => LaunchSource::new(kmu, i as u64, ncl as u64),
                Source::PerCore(lists, ready) => {
                    LaunchSource::lists(&lists[i * cpc..(i + 1) * cpc], &ready[i * cpc..(i + 1) * cpc])
                }
            };
            clusters.push(Cluster::new(&cfg, i as u32, cores, ctx, source, reform)?);
        }
        // Clusters share nothing but the KMU's fixed assignment of launch messages, so each
        // runs to completion on its own host thread.
        let threads = cfg.host_threads().min(ncl).max(1);
        let run_one = |cl: &mut Cluster| -> Result<(), Fault> {
            let mut reporter = Reporter::default();
            while !cl.finished() {
                let until = cl.now + CHUNK;
                let checked = cl.run(until, ctx, &kt).and_then(|()| ctx.watchdog.check(&mut reporter, cl.progress()));
                if let Err(f) = checked {
                    ctx.watchdog.stop();
                    return Err(f);
                }
            }
            reporter.report(ctx.watchdog, cl.progress());
            Ok(())
        };
        let results: Vec<Result<(), Fault>> = if threads == 1 {
            clusters.iter_mut().map(run_one).collect()
        } else {
            let mut groups: Vec<Vec<&mut Cluster>> = (0..threads).map(|_| Vec::new()).collect();
            for (i, cl) in clusters.iter_mut().enumerate() {
                groups[i % threads].push(cl);
            }
            std::thread::scope(|s| {
                let handles: Vec<_> = groups
                    .into_iter()
                    .map(|g| {
                        let run_one = &run_one;
                        s.spawn(move || g.into_iter().map(run_one).collect::<Vec<_>>())
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| {
                        h.join().unwrap_or_else(|_| {
                            vec![Err(Fault::new(FaultKind::BadLaunch, "a cluster thread panicked"))]
                        })
                    })
                    .collect()
            })
        };
        let mut result = Ok(());
        for r in results {
            if let Err(f) = r {
                let secondary = f.detail.starts_with("stopped:");
                if result.as_ref().err().is_none_or(|g: &Fault| g.detail.starts_with("stopped:") && !secondary) {
                    result = Err(f);
                }
            }
        }
        let end = clusters.iter().map(|c| c.end).max().unwrap_or(0);
        let mut t = TimedReport {
            cycles: end,
            rtu_slots: cfg.rtu_slots(),
            rtu_contexts: cfg.rtu_contexts(),
            num_warps: cfg.num_warps,
            num_threads: cfg.num_threads,
            host_threads: threads as u32,
            ..Default::default()
        };
        for cl in &mut clusters {
            let rep = cl.report(end);
            for (counts, timed) in rep.cores {
                report.totals.add(&counts);
                report.per_core.push(counts);
                t.cores.push(timed);
            }
            t.rtus.extend(rep.rtus);
            if let Some(tl) = &rep.rtu_timeline {
                t.rtu_timeline.get_or_insert_with(Default::default).add(tl);
            }
            t.rtcaches.extend(rep.rtcaches);
            t.l2.push(rep.l2);
            t.dram_reads += rep.dram_reads;
            t.dram_queue_cycles += rep.dram_queue_cycles;
        }
        report.timed = Some(t);
        result
    }
}
