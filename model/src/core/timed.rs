//! The SIMT core in timed mode: the same warps, CTA dispatcher and instruction semantics as
//! functional mode, issued one instruction per cycle under a timing model.
//!
//! - **Warp scheduler**: round-robin over warps that are ready and whose next instruction's
//!   operands are ready; one issue per cycle per core (in-order within a warp).
//! - **Scoreboard**: every register carries the cycle its value is ready; an instruction
//!   waits for all its source registers. An instruction executes (its results are computed)
//!   when it issues, and its destination becomes ready `latency` cycles later, the latency
//!   of its op class (`[core]` knobs) or of the memory system for loads.
//! - **LSU**: a global access coalesces its lanes into 64-byte lines through the L1 (banks
//!   take one line per cycle each); stores write through; atomics go to the L2. LMEM pays one
//!   cycle per extra bank-conflict way.
//! - **TEX**: the core's texture unit takes one request per warp `TEX` (`tex/timed.rs`):
//!   its lines through a texture cache, its texels through a filter stage of fixed
//!   throughput; the destination is ready when the filtered result is.
//! - **RTU ops**: TRACE holds the issue port for its burst (`trace_beats` uops under the FU
//!   lock) and posts the armed lanes to the traversal core; CONTINUE posts its resumed lanes;
//!   a WAIT whose record has not landed parks the warp (or, in the `hold` ablation, keeps
//!   the issue port until it lands). The landing re-runs the WAIT's writeback.
//! - **CTA dispatch**: the dispatcher takes one CTA when idle and emits one warp per cycle
//!   (seed 002 §5.1); a warp starts `launch_latency` cycles after its CTA left the KMU.

use super::exec::{self, Next};
use super::warp::WarpState;
use super::{Core, DispatchCtx};
use crate::abi::isa::{Instr, MemSize, Op, OpClass, REG_NONE};
use crate::abi::LINE_BYTES;
use crate::cache::{line_of, Cache, CacheGeom, CacheStats, Dram};
use crate::config::{CoreConfig, DeviceConfig, WaitMode};
use crate::cta_dispatch::{Admitted, CtaDispatcher};
use crate::fault::Fault;
use crate::kmu::CtaDesc;
use crate::mem::MemoryMap;
use crate::rtu::RtuMsg;
use crate::tex::timed::{TexStats, TexTiming};
use crate::tlb::{Tlb, TlbStats};
use serde::Serialize;

/// Issue-time facts of one instruction, decoded once per kernel.
#[derive(Clone, Copy, Debug)]
struct OpTiming {
    src_start: u32,
    src_len: u16,
    dst: u16,
    ndst: u16,
    class: OpClass,
    /// The code region the instruction lies in (`abi::kernel::region`, 0: none).
    region: u8,
}

/// The kernel's instructions as the scoreboard sees them.
pub struct KernelTiming {
    ops: Vec<OpTiming>,
    srcs: Vec<u16>,
}

impl KernelTiming {
    /// The scoreboard's view of each instruction, from the ISA table ([`Instr::operands`]):
    /// the written rows become pending at issue, the read rows must be ready.
    pub fn new(code: &[Instr]) -> KernelTiming {
        let mut ops = Vec::with_capacity(code.len());
        let mut srcs = Vec::new();
        for i in code {
            let operands = i.operands();
            let (dst, ndst) = match operands.dst() {
                Some(o) if o.reg != REG_NONE => (o.reg, o.width as u16),
                _ => (REG_NONE, 0),
            };
            let start = srcs.len() as u32;
            for o in operands.iter().filter(|o| !o.write && o.reg != REG_NONE) {
                srcs.extend(o.reg..o.reg + o.width as u16);
            }
            ops.push(OpTiming {
                src_start: start,
                src_len: (srcs.len() as u32 - start) as u16,
                dst,
                ndst,
                class: i.op.class(),
                region: 0,
            });
        }
        KernelTiming { ops, srcs }
    }

    /// Marks the instructions of the kernel's code regions (a later, nested region wins).
    pub fn with_regions(mut self, regions: &[crate::abi::kernel::CodeRegion]) -> KernelTiming {
        for r in regions {
            for op in &mut self.ops[r.start as usize..r.end as usize] {
                op.region = r.kind as u8;
            }
        }
        self
    }

    /// Instruction `pc`'s destination rows (first register, count) and source rows.
    #[cfg(test)]
    pub(crate) fn regs_of(&self, pc: usize) -> ((u16, u16), &[u16]) {
        let o = &self.ops[pc];
        ((o.dst, o.ndst), &self.srcs[o.src_start as usize..][..o.src_len as usize])
    }
}

/// What one core did in timed mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CoreTimedStats {
    /// Cycles of the dispatch.
    pub cycles: u64,
    /// Cycles with at least one resident warp.
    pub active_cycles: u64,
    /// Cycles an instruction issued.
    pub issue_cycles: u64,
    /// Sum over cycles of resident warps (divide by cycles × NUM_WARPS for occupancy).
    pub warp_cycles: u64,
    /// Cycles nothing issued although a warp was resident, by cause: every ready warp's
    /// operands were pending; the port was held by a TRACE burst; a WAIT held the port
    /// (`hold` mode); the LSU was busy; no warp was ready (all at barriers or parked).
    pub stall_scoreboard: u64,
    pub stall_trace_burst: u64,
    pub stall_wait_hold: u64,
    pub stall_lsu: u64,
    pub stall_no_ready_warp: u64,
    /// WAITs that parked their warp, and cycles warps spent parked.
    pub waits_parked: u64,
    pub parked_warp_cycles: u64,
    /// LMEM accesses and the extra cycles bank conflicts cost them.
    pub lmem_accesses: u64,
    pub lmem_conflict_cycles: u64,
    /// Global memory instructions and the lines they touched.
    pub global_accesses: u64,
    pub global_lines: u64,
    pub l1: CacheStats,
    /// The LSU's translations of lines in sparse resources.
    pub tlb: TlbStats,
    /// The texture unit: requests, texels, lines, filter and queue cycles, its cache.
    pub tex: TexStats,
    /// The node-intersection unit (rdna2): requests, lines, test and queue cycles, its cache.
    pub isect: crate::isect::timed::IsectStats,
    /// Resident warps the kernel's register and private-memory footprint allows
    /// (`[core] register_file`, `private_memory`; NUM_WARPS when `occupancy` is off).
    pub resident_warp_limit: u64,
    /// Cycles from a CTA refused by that bound alone (free warp slots and LMEM, no budget)
    /// to the core's next admission.
    pub occupancy_limited_cycles: u64,
    /// Warp instructions issued in the kernel's candidate-callback code (any-hit and
    /// intersection shaders of a ray-tracing pipeline), and their active lanes; the same for
    /// closest-hit, miss and callable shaders (`abi::kernel::region`).
    pub callback_instructions: u64,
    pub callback_lanes: u64,
    pub hit_shader_instructions: u64,
    pub hit_shader_lanes: u64,
    /// Lanes a completed WAIT found still PENDING (the front end's count).
    pub pending_reads: u64,
}

impl CoreTimedStats {
    /// Adds the counters of a phase that ran after this one on the same core.
    pub fn add(&mut self, o: &CoreTimedStats) {
        self.cycles += o.cycles;
        self.active_cycles += o.active_cycles;
        self.issue_cycles += o.issue_cycles;
        self.warp_cycles += o.warp_cycles;
        self.stall_scoreboard += o.stall_scoreboard;
        self.stall_trace_burst += o.stall_trace_burst;
        self.stall_wait_hold += o.stall_wait_hold;
        self.stall_lsu += o.stall_lsu;
        self.stall_no_ready_warp += o.stall_no_ready_warp;
        self.waits_parked += o.waits_parked;
        self.parked_warp_cycles += o.parked_warp_cycles;
        self.lmem_accesses += o.lmem_accesses;
        self.lmem_conflict_cycles += o.lmem_conflict_cycles;
        self.global_accesses += o.global_accesses;
        self.global_lines += o.global_lines;
        self.l1.add(&o.l1);
        self.tlb.add(&o.tlb);
        self.tex.add(&o.tex);
        self.isect.add(&o.isect);
        self.resident_warp_limit = self.resident_warp_limit.max(o.resident_warp_limit);
        self.occupancy_limited_cycles += o.occupancy_limited_cycles;
        self.callback_instructions += o.callback_instructions;
        self.callback_lanes += o.callback_lanes;
        self.hit_shader_instructions += o.hit_shader_instructions;
        self.hit_shader_lanes += o.hit_shader_lanes;
        self.pending_reads += o.pending_reads;
    }
}

/// Why a core did not issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stall {
    Scoreboard,
    TraceBurst,
    WaitHold,
    NoReadyWarp,
}

/// A core's timed state for one dispatch.
// Aligned so units that run on different host threads never share a cache line.
#[repr(align(128))]
pub struct Clock {
    /// Why the core waits until its next event (for the cycles it is not ticked).
    cause: Stall,
    cfg: CoreConfig,
    launch_latency: u64,
    l1_banks: u64,
    /// Per warp, per register: the cycle its value is ready.
    ready: Vec<Vec<u64>>,
    /// Per warp: the first cycle its next instruction may issue, `u64::MAX` while the warp
    /// is not ready (done, at a barrier, parked). The scheduler reads only this array, so a
    /// cycle's scan and the next-event search never touch the warps themselves.
    next_issue: Vec<u64>,
    /// The warps whose `next_issue` is not `u64::MAX`, one bit each (NUM_WARPS <= 64): the
    /// scan and the next-event search visit only these.
    ready_warps: u64,
    port_free: u64,
    lsu_free: u64,
    hold: Option<usize>,
    rr: usize,
    pub(crate) disp: CtaDispatcher,
    disp_free: u64,
    pub(crate) wakes: Vec<u32>,
    /// RTU messages for the socket: (arrival cycle, message).
    pub(crate) outgoing: Vec<(u64, RtuMsg)>,
    resident: u64,
    parked: u64,
    last_tick: Option<u64>,
    /// Set when a warp retired or a CTA slot freed (the launch fabric may go on).
    pub(crate) dirty: bool,
    /// Since when a CTA has waited for this core's occupancy bound (None: not waiting).
    occupancy_wait: Option<u64>,
    pub l1: Cache,
    /// The LSU's TLB (sparse resources).
    pub tlb: Tlb,
    /// The texture unit's timing.
    pub tex: TexTiming,
    /// The node-intersection unit's timing (rdna2).
    pub isect: crate::isect::timed::IsectTiming,
    pub stats: CoreTimedStats,
    /// The counters functional mode keeps too (instructions, CTAs, warps).
    pub counts: super::CoreStats,
}

impl Clock {
    pub fn new(cfg: &DeviceConfig, disp: CtaDispatcher) -> Clock {
        let m = &cfg.mem;
        Clock {
            cause: Stall::NoReadyWarp,
            cfg: cfg.core,
            launch_latency: cfg.sim.launch_latency as u64,
            l1_banks: m.l1_banks as u64,
            ready: vec![Vec::new(); cfg.num_warps as usize],
            next_issue: vec![u64::MAX; cfg.num_warps as usize],
            ready_warps: 0,
            port_free: 0,
            lsu_free: 0,
            hold: None,
            rr: 0,
            disp,
            disp_free: 0,
            wakes: Vec::new(),
            outgoing: Vec::new(),
            resident: 0,
            parked: 0,
            last_tick: None,
            dirty: false,
            occupancy_wait: None,
            tlb: Tlb::new(m.tlb_entries, m.page_walk_latency),
            l1: Cache::new(CacheGeom {
                size: m.l1_size,
                ways: m.l1_ways,
                banks: m.l1_banks,
                mshrs: m.l1_mshrs,
                latency: m.l1_latency,
                merge_depth: None,
            }),
            tex: TexTiming::new(&cfg.tex),
            isect: crate::isect::timed::IsectTiming::new(&cfg.isect),
            stats: CoreTimedStats::default(),
            counts: super::CoreStats::default(),
        }
    }

    /// The dispatcher can take a CTA this cycle (it is not expanding one).
    pub fn disp_ready(&self, now: u64) -> bool {
        now >= self.disp_free
    }

    /// The cycle the dispatcher finishes expanding its current CTA.
    pub fn disp_free_at(&self) -> u64 {
        self.disp_free
    }

    /// The launch fabric offered a CTA at cycle `now` and the dispatcher refused it: when the
    /// occupancy bound alone refused, the core's occupancy-limited wait starts.
    pub fn refused(&mut self, now: u64) {
        if self.disp.take_occupancy_refusal() && self.occupancy_wait.is_none() {
            self.occupancy_wait = Some(now);
        }
    }

    /// The dispatcher admitted a CTA at cycle `now`: a wait for the occupancy bound ends.
    fn admitted(&mut self, now: u64) {
        if let Some(since) = self.occupancy_wait.take() {
            self.stats.occupancy_limited_cycles += now - since;
        }
    }

    /// Warps resident on the core.
    pub fn resident(&self) -> u64 {
        self.resident
    }

    /// True when no CTA is resident and the dispatcher is idle.
    pub fn idle(&self, now: u64) -> bool {
        self.disp.idle() && now >= self.disp_free
    }

    fn account(&mut self, cycles: u64) {
        self.stats.cycles += cycles;
        if self.resident > 0 {
            self.stats.active_cycles += cycles;
        }
        self.stats.warp_cycles += self.resident * cycles;
        self.stats.parked_warp_cycles += self.parked * cycles;
    }

    /// Cycles skipped between ticks: the core waited for the reason its last tick saw.
    fn account_skipped(&mut self, cycles: u64) {
        self.account(cycles);
        if self.resident > 0 {
            match self.cause {
                Stall::Scoreboard => self.stats.stall_scoreboard += cycles,
                Stall::TraceBurst => self.stats.stall_trace_burst += cycles,
                Stall::WaitHold => self.stats.stall_wait_hold += cycles,
                Stall::NoReadyWarp => self.stats.stall_no_ready_warp += cycles,
            }
        }
    }

    /// Brings the cycle counters up to `end`.
    pub fn finish(&mut self, end: u64) {
        let from = self.last_tick.map_or(0, |t| t + 1);
        if end > from {
            self.account_skipped(end - from);
        }
        self.last_tick = Some(end.max(1) - 1);
        if let Some(since) = self.occupancy_wait.take() {
            self.stats.occupancy_limited_cycles += end.saturating_sub(since);
        }
        self.stats.resident_warp_limit = self.disp.max_warps() as u64;
        self.stats.l1 = self.l1.stats.clone();
        self.stats.tlb = self.tlb.stats.clone();
        self.stats.tex = self.tex.stats.clone();
        self.stats.isect = self.isect.stats.clone();
    }
}

/// The shared levels below a core's L1.
pub struct Below<'a> {
    pub l2: &'a mut Cache,
    pub dram: &'a mut Dram,
}

impl Below<'_> {
    pub fn read(&mut self, line: u64, t: u64) -> u64 {
        let dram = &mut *self.dram;
        self.l2.read_delayed(line, t, |t2| dram.read(t2)).ready
    }
}

impl crate::rtu::engine::Below for Below<'_> {
    fn read(&mut self, line: u64, t: u64) -> u64 {
        Below::read(self, line, t)
    }
}

#[inline]
fn pair(regs: &[u32], r: usize, nt: usize, l: usize) -> u64 {
    regs[r * nt + l] as u64 | (regs[(r + 1) * nt + l] as u64) << 32
}

impl Core {
    /// Puts the core in timed mode for a dispatch.
    pub(crate) fn begin_timed(&mut self) {
        self.lmem.fill(0);
        for w in &mut self.warps {
            w.state = WarpState::Done;
        }
        self.units.rtu.set_timed(true);
        self.units.tex.set_timed(true);
        self.units.isect.set_timed(true);
    }

    pub(crate) fn end_timed(&mut self) {
        self.units.rtu.set_timed(false);
        self.units.tex.set_timed(false);
        self.units.isect.set_timed(false);
    }

    /// The dispatcher accepted `cta` at cycle `now`: its warps start one per cycle after the
    /// launch latency.
    pub(crate) fn launch_cta_timed(
        &mut self,
        clk: &mut Clock,
        ctx: &DispatchCtx,
        cta: &CtaDesc,
        adm: Admitted,
        now: u64,
    ) {
        let n = adm.warps.len() as u32;
        let num_regs = ctx.kernel.header.num_regs as usize;
        for (rank, &wid) in adm.warps.iter().enumerate() {
            let r = &mut clk.ready[wid as usize];
            r.clear();
            r.resize(num_regs, 0);
            let at = now + clk.launch_latency + 1 + rank as u64;
            clk.set_next_issue(wid as usize, at);
        }
        clk.disp_free = now + n as u64;
        clk.admitted(now);
        clk.resident += n as u64;
        clk.counts.ctas += 1;
        clk.counts.warps += n as u64;
        self.launch_cta(ctx, cta, adm);
    }

    /// Earliest cycle from `t` at which warp `w`'s next instruction has its operands.
    #[inline]
    fn operands_ready(&mut self, clk: &Clock, kt: &KernelTiming, w: usize, t: u64) -> u64 {
        let Some(top) = self.warps[w].top() else { return t };
        let op = &kt.ops[top.pc as usize];
        let ready = &clk.ready[w];
        let mut at = t;
        for &r in &kt.srcs[op.src_start as usize..op.src_start as usize + op.src_len as usize] {
            at = at.max(ready[r as usize]);
        }
        at
    }

    fn retire_warp_timed(
        &mut self,
        clk: &mut Clock,
        ctx: &DispatchCtx,
        kt: &KernelTiming,
        w: usize,
        now: u64,
    ) -> Result<(), Fault> {
        self.record_work(w, ctx.launch);
        self.merge_fragments(ctx, w, now)?;
        let slot = self.warps[w].cta_slot as usize;
        self.ctas[slot].live_warps -= 1;
        clk.disp.retire_warp(slot as u32, w as u32);
        clk.resident -= 1;
        clk.dirty = true;
        if ctx.kernel.header.num_queries > 0 {
            clk.outgoing.push((now + 1, RtuMsg::Release { warp: w as u32 }));
        }
        self.release_barrier_timed(clk, kt, slot, now);
        Ok(())
    }

    fn release_barrier_timed(&mut self, clk: &mut Clock, kt: &KernelTiming, slot: usize, now: u64) {
        let before: u64 = self
            .warps
            .iter()
            .enumerate()
            .filter(|(_, w)| w.state == WarpState::Barrier)
            .fold(0, |m, (i, _)| m | 1 << i);
        self.release_barrier(slot);
        let mut m = before;
        while m != 0 {
            let w = m.trailing_zeros() as usize;
            m &= m - 1;
            if self.warps[w].state == WarpState::Ready {
                let at = self.operands_ready(clk, kt, w, now + 1);
                clk.set_next_issue(w, at);
            }
        }
    }

    /// One cycle of the core.
    pub(crate) fn tick_timed(
        &mut self,
        clk: &mut Clock,
        now: u64,
        ctx: &DispatchCtx,
        kt: &KernelTiming,
        below: &mut Below,
    ) -> Result<(), Fault> {
        let from = clk.last_tick.map_or(0, |t| t + 1);
        if now > from {
            clk.account_skipped(now - from);
        }
        clk.last_tick = Some(now);
        clk.account(1);

        // Records landed: parked WAITs complete (their writeback needs no issue slot).
        while let Some(w) = clk.wakes.pop() {
            let w = w as usize;
            if self.warps[w].state == WarpState::Parked {
                self.retry_wait(clk, ctx, kt, w, now)?;
            }
        }

        if now < clk.port_free {
            if clk.resident > 0 {
                clk.stats.stall_trace_burst += 1;
            }
            return Ok(());
        }
        if let Some(h) = clk.hold {
            if self.warps[h].state == WarpState::Parked {
                clk.stats.stall_wait_hold += 1;
                return Ok(());
            }
            clk.hold = None;
        }
        let nw = self.warps.len();
        let mut saw_ready = false;
        let mut saw_lsu = false;
        // Round robin from `rr` over the ready warps, reading the set afresh at every step
        // (a retirement in the scan may release a barrier).
        let rr = clk.rr.min(nw);
        let (mut from, mut end, mut second) = (rr, nw, rr == 0);
        loop {
            let Some(w) = next_bit(clk.ready_warps, from, end) else {
                if second {
                    break;
                }
                (from, end, second) = (0, rr, true);
                continue;
            };
            from = w + 1;
            let at = clk.next_issue[w];
            debug_assert_eq!(self.warps[w].state, WarpState::Ready);
            saw_ready = true;
            if at > now {
                continue;
            }
            let Some(top) = self.warps[w].top() else {
                self.warps[w].state = WarpState::Done;
                clk.set_next_issue(w, u64::MAX);
                self.retire_warp_timed(clk, ctx, kt, w, now)?;
                continue;
            };
            let pc = top.pc as usize;
            if kt.ops.get(pc).is_some_and(|o| o.class == OpClass::Lsu) && clk.lsu_free > now {
                saw_lsu = true;
                continue;
            }
            clk.rr = w + 1;
            clk.stats.issue_cycles += 1;
            return self.issue(clk, now, ctx, kt, below, w);
        }
        if clk.resident > 0 {
            if saw_lsu {
                clk.stats.stall_lsu += 1;
            } else if saw_ready {
                clk.stats.stall_scoreboard += 1;
            } else {
                clk.stats.stall_no_ready_warp += 1;
            }
        }
        Ok(())
    }

    /// The next cycle this core may do something (`u64::MAX`: only when poked). Also notes
    /// why it waits, so the cycles it skips are counted as the right kind of stall.
    pub(crate) fn next_event(&self, clk: &mut Clock, now: u64) -> u64 {
        if !clk.wakes.is_empty() {
            return now + 1;
        }
        if clk.hold.is_some_and(|h| self.warps[h].state == WarpState::Parked) {
            clk.cause = Stall::WaitHold;
            return u64::MAX;
        }
        let mut t = u64::MAX;
        let mut m = clk.ready_warps;
        while m != 0 {
            t = t.min(clk.next_issue[m.trailing_zeros() as usize]);
            m &= m - 1;
        }
        if t == u64::MAX {
            clk.cause = Stall::NoReadyWarp;
            return t;
        }
        clk.cause = if clk.port_free > now + 1 { Stall::TraceBurst } else { Stall::Scoreboard };
        t.max(clk.port_free).max(now + 1)
    }

    fn exec_env_run(&mut self, ctx: &DispatchCtx, w: usize, instr: &Instr, mask: u32) -> Result<Next, Fault> {
        let (warp, mut env) = self.warp_env(ctx, w);
        exec::execute(instr, warp, mask, &mut env)
    }

    fn retry_wait(
        &mut self,
        clk: &mut Clock,
        ctx: &DispatchCtx,
        kt: &KernelTiming,
        w: usize,
        now: u64,
    ) -> Result<(), Fault> {
        let Some(top) = self.warps[w].top() else { return Ok(()) };
        let (pc, mask) = (top.pc, top.mask);
        let instr = ctx.kernel.code[pc as usize];
        self.warps[w].state = WarpState::Ready;
        match self.exec_env_run(ctx, w, &instr, mask) {
            Ok(Next::Step) => {
                if let Some(t) = self.warps[w].stack.last_mut() {
                    t.pc += 1;
                }
                clk.parked -= 1;
                let op = kt.ops[pc as usize];
                if op.dst != REG_NONE {
                    for r in op.dst..op.dst + op.ndst {
                        clk.ready[w][r as usize] = now + 1;
                    }
                }
                let at = self.operands_ready(clk, kt, w, now + 1);
                clk.set_next_issue(w, at);
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(f) => Err(f.at(&ctx.kernel.name, pc, self.id, w as u32, None)),
        }
    }

    /// Issues warp `w`'s next instruction at cycle `now`.
    fn issue(
        &mut self,
        clk: &mut Clock,
        now: u64,
        ctx: &DispatchCtx,
        kt: &KernelTiming,
        below: &mut Below,
        w: usize,
    ) -> Result<(), Fault> {
        let nt = self.nt;
        let top = *self.warps[w].top().expect("issuing warp has a stack");
        let (pc, mask) = (top.pc, top.mask);
        let instr = ctx.kernel.code[pc as usize];
        let op = kt.ops[pc as usize];
        let c = clk.cfg;
        // Latency by op class; the memory ops look at their addresses before they execute
        // (the instruction may overwrite its own address register).
        let mut lat = match op.class {
            OpClass::Ctrl => 1,
            OpClass::Alu => c.alu_latency,
            OpClass::Fma => c.fma_latency,
            OpClass::Div => c.div_latency,
            OpClass::Sfu => c.sfu_latency,
            OpClass::Csr => c.csr_latency,
            OpClass::Tex => c.tex_latency,
            OpClass::Lsu => c.private_latency,
            OpClass::Warp => c.warp_latency,
            OpClass::Rtu => match instr.op {
                Op::Trace => c.trace_beats,
                Op::Getw | Op::Getwf => c.window_latency,
                _ => 1,
            },
        } as u64;
        match instr.op {
            Op::Ldg | Op::Stg | Op::Atomg => {
                lat = self.global_access(clk, now, below, ctx.mem, w, &instr, mask);
            }
            Op::Ldl | Op::Stl | Op::Atoml => {
                let regs = &self.warps[w].regs;
                let banks = c.lmem_banks as u64;
                let imm = if instr.op == Op::Atoml { 0 } else { instr.imm };
                let mut words = [u64::MAX; 32];
                let mut per_bank = [0u8; 64];
                let mut worst = 1u64;
                let mut m = mask;
                let mut n = 0;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let word = (regs[instr.a as usize * nt + l].wrapping_add(imm) >> 2) as u64;
                    if words[..n].contains(&word) {
                        continue;
                    }
                    words[n] = word;
                    n += 1;
                    let b = (word % banks) as usize % 64;
                    per_bank[b] += 1;
                    worst = worst.max(per_bank[b] as u64);
                }
                clk.stats.lmem_accesses += 1;
                clk.stats.lmem_conflict_cycles += worst - 1;
                lat = c.lmem_latency as u64 + worst - 1;
            }
            _ => {}
        }
        let wait_mode = c.wait_mode;
        let trace_beats = c.trace_beats as u64;
        let result = self.exec_env_run(ctx, w, &instr, mask);
        clk.stats_instr(mask);
        if op.region != 0 {
            clk.stats_region(op.region, mask);
        }
        if instr.op == Op::Tex && result.is_ok() {
            let t = &self.units.tex;
            lat = clk.tex.request(now, &t.lines, t.texels, |line, at| below.read(line, at));
        }
        if instr.op == Op::Isect && result.is_ok() {
            let x = &self.units.isect;
            lat = clk.isect.request(now, &x.lines, x.box_lanes, x.tri_lanes, |line, at| below.read(line, at));
        }
        match result {
            Ok(Next::Step) => {
                if let Some(t) = self.warps[w].stack.last_mut() {
                    t.pc += 1;
                }
            }
            Ok(Next::Moved) => {
                if self.warps[w].state == WarpState::Done {
                    self.retire_warp_timed(clk, ctx, kt, w, now)?;
                }
            }
            Ok(Next::Block) => match self.warps[w].state {
                WarpState::Barrier => {
                    let slot = self.warps[w].cta_slot as usize;
                    self.ctas[slot].at_barrier += 1;
                    self.release_barrier_timed(clk, kt, slot, now);
                }
                WarpState::Parked => {
                    clk.stats.waits_parked += 1;
                    clk.parked += 1;
                    if wait_mode == WaitMode::Hold {
                        clk.hold = Some(w);
                    }
                }
                _ => {}
            },
            Err(f) => return Err(f.at(&ctx.kernel.name, pc, self.id, w as u32, None)),
        }
        if self.warps[w].state != WarpState::Parked && op.dst != REG_NONE {
            for r in op.dst..op.dst + op.ndst {
                clk.ready[w][r as usize] = now + lat;
            }
        }
        if instr.op == Op::Trace {
            clk.port_free = now + trace_beats;
        }
        if !self.units.rtu.outbox.is_empty() {
            for m in self.units.rtu.outbox.drain(..) {
                let at = match m {
                    RtuMsg::Arm { .. } => now + trace_beats,
                    _ => now + 1,
                };
                clk.outgoing.push((at, m));
            }
        }
        let at =
            if self.warps[w].state == WarpState::Ready { self.operands_ready(clk, kt, w, now + 1) } else { u64::MAX };
        clk.set_next_issue(w, at);
        Ok(())
    }

    /// Times a global load/store/atomic: the lanes' lines through the L1 (one line per bank
    /// per cycle), stores written through, atomics performed at the L2; a line of a sparse
    /// resource whose page misses the TLB arrives a page walk later.
    fn global_access(
        &mut self,
        clk: &mut Clock,
        now: u64,
        below: &mut Below,
        mem: &MemoryMap,
        w: usize,
        i: &Instr,
        mask: u32,
    ) -> u64 {
        let nt = self.nt;
        let regs = &self.warps[w].regs;
        let bytes = if i.op == Op::Atomg {
            if i.imm & 1 != 0 {
                8
            } else {
                4
            }
        } else {
            MemSize::from_u8(i.modifier).map_or(4, |s| s.bytes() as u64)
        };
        let off = if i.op == Op::Atomg { 0 } else { i.imm as i32 as i64 as u64 };
        let mut lines = [0u64; 64];
        let mut n = 0;
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = pair(regs, i.a as usize, nt, l).wrapping_add(off);
            let (first, last) = (line_of(a), line_of(a.wrapping_add(bytes - 1)));
            let spans = [first, last];
            for line in &spans[..1 + (last != first) as usize] {
                // Neighbouring lanes mostly share the line just added: tested before the rest.
                let seen = n > 0 && lines[n - 1] == *line || lines[..n].contains(line);
                if !seen && n < lines.len() {
                    lines[n] = *line;
                    n += 1;
                }
            }
        }
        clk.stats.global_accesses += 1;
        clk.stats.global_lines += n as u64;
        let per_cycle = clk.l1_banks.max(1);
        clk.lsu_free = now + (n as u64).div_ceil(per_cycle).max(1);
        let l1_lat = clk.l1.latency() as u64;
        let mut done = now + 1;
        for (k, &line) in lines[..n].iter().enumerate() {
            let t = now + k as u64 / per_cycle;
            let walk = clk.tlb.translate(mem, line * LINE_BYTES as u64);
            match i.op {
                Op::Ldg => {
                    let a = clk.l1.read_delayed(line, t, |t2| below.read(line, t2));
                    done = done.max(a.ready + walk);
                }
                Op::Stg => {
                    // Write-through, no allocate: the L2 takes the line; nobody waits for it.
                    below.read(line, t + l1_lat);
                }
                _ => {
                    done = done.max(below.read(line, t + l1_lat) + walk);
                }
            }
        }
        done - now
    }
}

/// The lowest set bit of `mask` in `[from, end)`.
#[inline]
fn next_bit(mask: u64, from: usize, end: usize) -> Option<usize> {
    if from >= end {
        return None;
    }
    let below_end = if end >= 64 { u64::MAX } else { (1u64 << end) - 1 };
    let m = mask & (u64::MAX << from) & below_end;
    (m != 0).then(|| m.trailing_zeros() as usize)
}

impl Clock {
    /// Warp `w` may next issue at `at` (`u64::MAX`: it is not ready).
    #[inline]
    fn set_next_issue(&mut self, w: usize, at: u64) {
        self.next_issue[w] = at;
        if at == u64::MAX {
            self.ready_warps &= !(1u64 << w);
        } else {
            self.ready_warps |= 1u64 << w;
        }
    }

    #[inline]
    fn stats_instr(&mut self, mask: u32) {
        self.counts.instructions += 1;
        self.counts.thread_instructions += mask.count_ones() as u64;
    }

    /// An instruction of a marked code region issued with `mask` (a pipeline's shaders).
    #[inline(never)]
    fn stats_region(&mut self, region: u8, mask: u32) {
        let lanes = mask.count_ones() as u64;
        if region as u32 == crate::abi::kernel::region::CANDIDATE_CALLBACK {
            self.stats.callback_instructions += 1;
            self.stats.callback_lanes += lanes;
        } else {
            self.stats.hit_shader_instructions += 1;
            self.stats.hit_shader_lanes += lanes;
        }
    }
}

/// The cores of a dispatch start from an empty dispatcher each (a CTA dispatcher is per
/// kernel: its stride and occupancy bound come from the launch).
pub fn dispatcher(cfg: &DeviceConfig, ctx: &DispatchCtx) -> Result<CtaDispatcher, Fault> {
    let launch = ctx.launch;
    let lmem_per_cta = crate::abi::dcr::aligned_lmem_size(launch.lmem_size.max(ctx.kernel.header.lmem_bytes));
    let d = CtaDispatcher::new(cfg.num_warps, cfg.num_threads, cfg.lmem_bytes, lmem_per_cta, launch.block_size)?;
    let k = &ctx.kernel.header;
    Ok(d.with_warp_limit(occupancy_limit(cfg, k.num_regs, k.private_bytes)))
}

/// Resident warps a core holds for a kernel with `num_regs` registers and `private_bytes` of
/// private memory per lane: as many as both budgets of `[core]` fit (NUM_WARPS with
/// `occupancy` off). A long shader loop that keeps much state live pays here.
pub fn occupancy_limit(cfg: &DeviceConfig, num_regs: u32, private_bytes: u32) -> u32 {
    let c = &cfg.core;
    if !c.occupancy {
        return cfg.num_warps;
    }
    let per_warp = |per_lane: u32| per_lane as u64 * cfg.num_threads as u64;
    let fit = |budget: u32, per_lane: u32| match per_warp(per_lane) {
        0 => u64::MAX,
        w => budget as u64 / w,
    };
    let warps = fit(c.register_file, num_regs).min(fit(c.private_memory, private_bytes));
    warps.min(cfg.num_warps as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::occupancy_limit;
    use crate::config::DeviceConfig;

    #[test]
    fn occupancy_is_the_tighter_budget() {
        let mut c = DeviceConfig::default();
        // 64 registers per lane fill a 65,536-register file with 32 warps; 101 leave 20.
        assert_eq!(occupancy_limit(&c, 64, 0), 32);
        assert_eq!(occupancy_limit(&c, 101, 16), 20);
        // 1,192 private bytes per lane: 38,144 per warp, three in 128 KB.
        assert_eq!(occupancy_limit(&c, 160, 1192), 3);
        c.core.occupancy = false;
        assert_eq!(occupancy_limit(&c, 160, 1192), 32);
    }
}
