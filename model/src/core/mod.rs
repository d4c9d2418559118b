//! A SIMT core: warp slots, the CTA dispatcher feeding them, local memory, and the core's RTU
//! front end. In functional mode a core runs each ready warp until it blocks (barrier,
//! parked WAIT), exits, or uses up its quantum, round-robin over its warps.

pub mod decode;
pub mod exec;
#[cfg(test)]
mod isa_facts;
pub mod timed;
pub mod warp;

use crate::abi::rtu as rtu_abi;
use crate::config::DeviceConfig;
use crate::cta_dispatch::{full_mask, Admitted, CtaDispatcher};
use crate::dcr::LaunchState;
use crate::fault::{Fault, FaultKind};
use crate::gfx::Stage;
use crate::kmu::CtaDesc;
use crate::mem::MemoryMap;
use crate::rtu::RtuStats;
use crate::watchdog::{Reporter, Tally, Watchdog};
use decode::DecodedKernel;
use exec::{CoreUnits, Next};
use std::collections::VecDeque;
use warp::{Warp, WarpState};

/// Per-CTA context, indexed by dispatcher slot.
#[derive(Clone, Debug, Default)]
pub struct CtaCtx {
    pub block_idx: [u32; 3],
    pub lmem_base: u32,
    pub num_warps: u32,
    /// Warps of this CTA still running.
    pub live_warps: u32,
    /// Warps waiting at the barrier.
    pub at_barrier: u32,
}

/// What a core did during one dispatch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreStats {
    /// Warp instructions issued.
    pub instructions: u64,
    /// Thread instructions (active lanes summed over instructions).
    pub thread_instructions: u64,
    pub ctas: u64,
    pub warps: u64,
    pub rtu: RtuStats,
    /// The node-intersection unit's work (rdna2).
    pub isect: crate::isect::unit::IsectCounters,
    /// Of `instructions`, those compiled runs executed (functional mode's JIT).
    pub jit_instructions: u64,
}

impl CoreStats {
    pub fn add(&mut self, o: &CoreStats) {
        self.instructions += o.instructions;
        self.thread_instructions += o.thread_instructions;
        self.ctas += o.ctas;
        self.warps += o.warps;
        self.rtu.add(&o.rtu);
        self.isect.add(&o.isect);
        self.jit_instructions += o.jit_instructions;
    }
}

/// Shared, read-only state of one dispatch.
pub struct DispatchCtx<'a> {
    pub mem: &'a MemoryMap,
    pub kernel: &'a DecodedKernel,
    pub launch: &'a LaunchState,
    pub num_cores: u32,
    /// Where units report progress and learn that the dispatch must stop (a fault
    /// elsewhere, or a watchdog rule fired).
    pub watchdog: &'a Watchdog,
    /// The graphics stage the kernel runs as (`None` for a dispatch).
    pub gfx: Option<Stage<'a>>,
}

/// Instructions a warp runs before the core looks at its other warps; the core checks the
/// watchdog once per quantum of instructions, so even one warp that never blocks is looked
/// at every few milliseconds.
const QUANTUM: u64 = 1 << 14;

// Aligned so units that run on different host threads never share a cache line.
#[repr(align(128))]
pub struct Core {
    pub id: u32,
    nt: usize,
    num_warps: u32,
    lmem_bytes: u32,
    lmem: Vec<u8>,
    pub(crate) warps: Vec<Warp>,
    ctas: Vec<CtaCtx>,
    /// The units a warp instruction may use besides the register file (the RTU front end).
    pub(crate) units: CoreUnits,
    /// With `detailed_stats`: (grid-relative invocation id, RTU work) of every lane that
    /// traced, recorded as its warp retires.
    detailed_stats: bool,
    work: Vec<([u32; 3], u32)>,
    /// Run straight lines of register ops as JIT code (`crate::jit`).
    jit: bool,
    /// The kernel's heat at which it is compiled (`DeviceConfig::jit_hot`).
    jit_hot: u64,
    /// Warp instructions JIT code executed in this dispatch.
    jit_instrs: u64,
}

/// A lane's thread index within its CTA (what the `CTA_THREAD_ID_*` CSRs read).
pub fn thread_index(rank: u32, lane: usize, nt: usize, block_dim: [u32; 3]) -> [u32; 3] {
    let bd = block_dim.map(|d| d.max(1));
    let tid = rank * nt as u32 + lane as u32;
    [tid % bd[0], (tid / bd[0]) % bd[1], tid / (bd[0] * bd[1])]
}

impl Core {
    pub fn new(id: u32, cfg: &DeviceConfig) -> Core {
        Core {
            id,
            nt: cfg.num_threads as usize,
            num_warps: cfg.num_warps,
            lmem_bytes: cfg.lmem_bytes,
            lmem: vec![0; cfg.lmem_bytes as usize],
            warps: (0..cfg.num_warps).map(|_| Warp::new()).collect(),
            ctas: vec![CtaCtx::default(); cfg.num_warps as usize],
            units: CoreUnits::new(cfg),
            detailed_stats: cfg.detailed_stats,
            work: Vec::new(),
            jit: cfg.jit,
            jit_hot: cfg.jit_hot,
            jit_instrs: 0,
        }
    }

    /// A warp retired: with `detailed_stats`, the RTU work (or, on rdna2, the intersection
    /// unit's) of each of its lanes goes to the lane's invocation (grid-relative global id).
    pub(crate) fn record_work(&mut self, wid: usize, launch: &LaunchState) {
        if !self.detailed_stats {
            return;
        }
        let mut lanes = self.units.rtu.take_lane_work(wid);
        for (l, w) in lanes.iter_mut().zip(self.units.isect.take_lane_work(wid)) {
            *l = l.saturating_add(w);
        }
        let w = &self.warps[wid];
        let block = self.ctas[w.cta_slot as usize].block_idx;
        for (lane, &work) in lanes.iter().enumerate().take(self.nt) {
            if work == 0 {
                continue;
            }
            let t = thread_index(w.rank, lane, self.nt, launch.block_dim);
            let id = [0, 1, 2].map(|i| block[i] * launch.block_dim[i].max(1) + t[i]);
            self.work.push((id, work));
        }
    }

    /// The work recorded since the last call.
    pub fn take_work(&mut self) -> Vec<([u32; 3], u32)> {
        std::mem::take(&mut self.work)
    }

    fn launch_cta(&mut self, ctx: &DispatchCtx, cta: &CtaDesc, adm: Admitted) {
        let k = &ctx.kernel.header;
        let n = adm.warps.len() as u32;
        self.ctas[adm.slot as usize] =
            CtaCtx { block_idx: cta.block_idx, lmem_base: adm.lmem_base, num_warps: n, live_warps: n, at_barrier: 0 };
        // A graphics stage decides which lanes run (vertices that exist, quads' pixels) and
        // which of them are helpers.
        let (live, helper) = ctx.gfx.map_or((u32::MAX, 0), |g| g.lanes(cta.block_idx, self.nt));
        for (rank, &wid) in adm.warps.iter().enumerate() {
            let mask = if rank as u32 == n - 1 { adm.last_mask } else { full_mask(self.nt as u32) } & live;
            if let Some(Stage::Fragment(_)) = ctx.gfx {
                self.units.om.launch(wid as usize, self.nt);
                self.units.samples.reset(wid as usize);
            }
            let w = &mut self.warps[wid as usize];
            w.cta_slot = adm.slot;
            w.rank = rank as u32;
            w.launch_zeroing(
                k.entry,
                mask,
                k.num_regs as usize,
                self.nt,
                k.private_bytes as usize,
                &ctx.kernel.zeroed_regs,
            );
            w.helper = helper;
            self.units.rtu.launch_warp(wid as usize, k.num_queries);
        }
    }

    /// Runs CTAs pulled from `next_cluster` until the KMU has no more and every warp retired.
    pub fn run(
        &mut self,
        ctx: &DispatchCtx,
        next_cluster: &mut dyn FnMut() -> Option<Vec<CtaDesc>>,
    ) -> Result<CoreStats, Fault> {
        let mut stats = CoreStats::default();
        let launch = ctx.launch;
        let lmem_per_cta = crate::abi::dcr::aligned_lmem_size(launch.lmem_size.max(ctx.kernel.header.lmem_bytes));
        let mut disp =
            CtaDispatcher::new(self.num_warps, self.nt as u32, self.lmem_bytes, lmem_per_cta, launch.block_size)?;
        let cluster_size = launch.cluster_size();
        let mut pending: VecDeque<CtaDesc> = VecDeque::new();
        let mut kmu_done = false;
        self.lmem.fill(0);
        for w in &mut self.warps {
            w.state = WarpState::Done;
        }
        let mut since_check = 0u64;
        // Progress for the watchdog, reported once per quantum rather than per event.
        let mut retired = 0u64;
        let rays_before = self.units.rtu.stats().records + self.units.isect.counters.instrs;
        let mut reporter = Reporter::default();
        // The kernel's compiled code once it is hot: the interpreted instructions are added to
        // its heat once per quantum and at the end.
        let heat = |core: &Core, ran: u64| match core.jit {
            true => ctx.kernel.jit.get(ctx.kernel, core.nt, ran, core.jit_hot),
            false => None,
        };
        let mut jit = heat(self, 0);
        // The kernel-argument block's host address for the runs that read it.
        let args = |jit: Option<&crate::jit::JitKernel>| match jit {
            Some(j) => j.args(ctx.mem, launch.param),
            None => crate::jit::Args::NONE,
        };
        let mut jit_args = args(jit);
        let tally = |core: &Core, stats: &CoreStats, retired: u64| Tally {
            warps_retired: retired,
            ctas_launched: stats.ctas,
            rays_completed: core.units.rtu.stats().records + core.units.isect.counters.instrs - rays_before,
        };
        loop {
            // Admission: take CTAs while the dispatcher accepts them.
            loop {
                if pending.is_empty() && !kmu_done {
                    match next_cluster() {
                        Some(c) => pending.extend(c),
                        None => kmu_done = true,
                    }
                }
                let Some(cta) = pending.front().copied() else { break };
                match disp.try_admit(&cta, cluster_size) {
                    Some(adm) => {
                        pending.pop_front();
                        stats.ctas += 1;
                        stats.warps += adm.warps.len() as u64;
                        self.launch_cta(ctx, &cta, adm);
                    }
                    None => break,
                }
            }
            if disp.idle() {
                if pending.is_empty() && kmu_done {
                    break;
                }
                if !pending.is_empty() {
                    return Err(Fault::new(FaultKind::BadLaunch, "CTA dispatcher refused a CTA on an idle core"));
                }
            }
            // Issue: every ready warp gets a quantum.
            let mut progressed = false;
            for wid in 0..self.warps.len() {
                if self.warps[wid].state != WarpState::Ready {
                    continue;
                }
                progressed = true;
                let (instrs, threads) = self.run_warp(ctx, jit.map(|j| (j, jit_args)), wid, QUANTUM)?;
                stats.instructions += instrs;
                stats.thread_instructions += threads;
                since_check += instrs;
                let slot = self.warps[wid].cta_slot as usize;
                match self.warps[wid].state {
                    WarpState::Done => {
                        retired += 1;
                        self.record_work(wid, ctx.launch);
                        self.merge_fragments(ctx, wid, 0)?;
                        let cta = &mut self.ctas[slot];
                        cta.live_warps -= 1;
                        disp.retire_warp(slot as u32, wid as u32);
                        self.release_barrier(slot);
                    }
                    WarpState::Barrier => {
                        self.ctas[slot].at_barrier += 1;
                        self.release_barrier(slot);
                    }
                    WarpState::Parked => {
                        // Functional mode answers every fetch at once, so a parked WAIT can
                        // only retry; the timed model wakes it when the record lands.
                        self.warps[wid].state = WarpState::Ready;
                    }
                    WarpState::Ready => {}
                }
            }
            if since_check >= QUANTUM {
                self.report_jit(&mut stats);
                if jit.is_none() {
                    jit = heat(self, since_check);
                    jit_args = args(jit);
                }
                since_check = 0;
                ctx.watchdog.check(&mut reporter, tally(self, &stats, retired))?;
            }
            if !progressed && !disp.idle() {
                return Err(Fault::new(
                    FaultKind::BadLaunch,
                    "every resident warp waits at a barrier that can never complete (barrier in divergent or \
                     early-exited code)",
                ));
            }
        }
        reporter.report(ctx.watchdog, tally(self, &stats, retired));
        self.report_jit(&mut stats);
        if jit.is_none() {
            heat(self, since_check);
        }
        stats.rtu = self.units.rtu.take_stats();
        stats.isect = std::mem::take(&mut self.units.isect.counters);
        Ok(stats)
    }

    /// A retired fragment warp hands its exports to the core's output merger (at cycle
    /// `now` in timed mode).
    pub(crate) fn merge_fragments(&mut self, ctx: &DispatchCtx, wid: usize, now: u64) -> Result<(), Fault> {
        if let Some(Stage::Fragment(fs)) = ctx.gfx {
            let block = self.ctas[self.warps[wid].cta_slot as usize].block_idx;
            let (id, name) = (self.id, &ctx.kernel.name);
            self.units.om.retire(wid, block[0], fs, ctx.mem, now).map_err(|f| f.at(name, 0, id, wid as u32, None))?;
        }
        Ok(())
    }

    fn release_barrier(&mut self, slot: usize) {
        let cta = &mut self.ctas[slot];
        if cta.at_barrier > 0 && cta.at_barrier >= cta.live_warps {
            cta.at_barrier = 0;
            for w in &mut self.warps {
                if w.state == WarpState::Barrier && w.cta_slot as usize == slot {
                    w.state = WarpState::Ready;
                }
            }
        }
    }

    /// Runs warp `wid` for up to `budget` instructions or until it blocks or finishes, with
    /// the kernel's compiled runs where `jit` has them (and the argument block's address for
    /// them). Returns (warp instructions, thread instructions).
    fn run_warp(
        &mut self,
        ctx: &DispatchCtx,
        jit: Option<(&crate::jit::JitKernel, crate::jit::Args)>,
        wid: usize,
        budget: u64,
    ) -> Result<(u64, u64), Fault> {
        let code = &ctx.kernel.code;
        let core_id = self.id;
        let mut n = 0u64;
        let mut threads = 0u64;
        let mut jitted = 0u64;
        let (w, mut env) = self.warp_env(ctx, wid);
        if let Some((j, _)) = jit.filter(|(j, _)| j.csr_reads() != 0 && !w.csrs_ready) {
            *w.csrs = exec::csr_table(w, &env, j.csr_reads());
            w.csrs_ready = true;
        }
        while n < budget {
            let Some(top) = w.top() else {
                w.state = WarpState::Done;
                break;
            };
            let (pc, mask) = (top.pc, top.mask);
            // A compiled run executes only when the quantum holds all of it, so warps
            // interleave exactly as under the interpreter.
            let csrs = w.csrs_ready.then_some(&*w.csrs);
            if let Some(len) = jit.and_then(|(j, a)| j.try_run(pc, &mut w.regs, mask, budget - n, a, csrs)) {
                if let Some(t) = w.stack.last_mut() {
                    t.pc += len;
                }
                let len = len as u64;
                n += len;
                jitted += len;
                threads += len * if mask == u32::MAX { 32 } else { mask.count_ones() as u64 };
                continue;
            }
            let Some(instr) = code.get(pc as usize) else {
                return Err(Fault::new(
                    FaultKind::IllegalInstruction,
                    format!("pc {pc} ran off the end of the kernel"),
                )
                .at(&ctx.kernel.name, pc, core_id, wid as u32, None));
            };
            n += 1;
            // (The full warp without a population count: the baseline x86-64 target has no
            // `popcnt`, and nearly every instruction runs on all lanes.)
            threads += if mask == u32::MAX { 32 } else { mask.count_ones() as u64 };
            match exec::execute(instr, w, mask, &mut env) {
                Ok(Next::Step) => {
                    if let Some(t) = w.stack.last_mut() {
                        t.pc += 1;
                    }
                }
                Ok(Next::Moved) => {
                    if w.state == WarpState::Done {
                        break;
                    }
                }
                Ok(Next::Block) => break,
                Err(f) => return Err(f.at(&ctx.kernel.name, pc, core_id, wid as u32, None)),
            }
        }
        self.jit_instrs += jitted;
        Ok((n, threads))
    }

    /// Moves the instructions compiled runs executed since the last report into the
    /// dispatch's counters and the process-wide JIT counters.
    fn report_jit(&mut self, stats: &mut CoreStats) {
        let n = std::mem::take(&mut self.jit_instrs);
        stats.jit_instructions += n;
        crate::jit::count_instructions(n);
    }
}

/// Statuses a WAIT returns, re-exported for tools that print them.
pub fn status_name(s: u32) -> &'static str {
    match s {
        rtu_abi::STS_DONE_HIT => "DONE_HIT",
        rtu_abi::STS_DONE_MISS => "DONE_MISS",
        rtu_abi::STS_YIELD_ANYHIT => "YIELD_ANYHIT",
        rtu_abi::STS_YIELD_PROC => "YIELD_PROC",
        rtu_abi::STS_PENDING => "PENDING",
        _ => "?",
    }
}
