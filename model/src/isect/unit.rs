//! One core's node-intersection unit in the issue path: a warp's `ISECT` runs its active
//! lanes in lane order (the descriptor decoded once per distinct value), and the unit keeps
//! what the instruction cost, for the counters and for timed mode's [`super::timed`].

use super::{intersect, IsectFault, IsectRay};
use crate::abi::rdna2::{ray, Descriptor};
use crate::cache::line_of;
use serde::Serialize;

/// What a core's `ISECT`s did (both modes).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IsectCounters {
    /// `ISECT` instructions and the lanes they ran for.
    pub instrs: u64,
    pub lanes: u64,
    /// Lanes whose ray was inactive (a NaN, or an infinite origin): no fetch, no test.
    pub inactive_lanes: u64,
    /// Node fetches (one per active lane) and their bytes.
    pub node_fetches: u64,
    pub node_bytes: u64,
    /// Ray/box tests (four per box node) and ray/triangle tests.
    pub box_tests: u64,
    pub tri_tests: u64,
    /// The shader walk's stack traffic in private memory: lane pushes (`STP`) and pops
    /// (`LDP`) at the stack's immediate (`abi::rdna2::query::STACK_IMM`), and their bytes.
    pub stack_pushes: u64,
    pub stack_pops: u64,
    pub stack_bytes: u64,
}

impl IsectCounters {
    pub fn add(&mut self, o: &IsectCounters) {
        self.instrs += o.instrs;
        self.lanes += o.lanes;
        self.inactive_lanes += o.inactive_lanes;
        self.node_fetches += o.node_fetches;
        self.node_bytes += o.node_bytes;
        self.box_tests += o.box_tests;
        self.tri_tests += o.tri_tests;
        self.stack_pushes += o.stack_pushes;
        self.stack_pops += o.stack_pops;
        self.stack_bytes += o.stack_bytes;
    }

    /// A private access of `lanes` lanes, `bytes` each, at immediate `imm`: counted when it
    /// is the shader walk's stack.
    #[inline]
    pub fn private_access(&mut self, imm: u32, store: bool, lanes: u32, bytes: usize) {
        if imm == crate::abi::rdna2::query::STACK_IMM {
            self.stack_bytes += lanes as u64 * bytes as u64;
            if store {
                self.stack_pushes += lanes as u64;
            } else {
                self.stack_pops += lanes as u64;
            }
        }
    }
}

/// A core's unit.
#[derive(Default)]
pub struct IsectUnit {
    timed: bool,
    /// The last instruction's node lines (sorted, each once), box-node lanes and triangle
    /// lanes: what the timed model charges it (timed mode only).
    pub lines: Vec<u64>,
    pub box_lanes: u32,
    pub tri_lanes: u32,
    pub counters: IsectCounters,
    /// `VORTEX_RAYLOG`: the shader walks' recorder, only while a log is open.
    pub raylog: Option<Box<super::raylog::QueryLog>>,
    /// With detailed stats: the work (node fetches plus triangle tests, as the RTU counts
    /// records fetched plus primitives tested) of each lane of each warp slot, for the
    /// per-invocation work map (`render`'s heatmap).
    lane_work: Vec<u32>,
}

/// A lane's fault.
pub struct LaneFault {
    pub lane: usize,
    pub fault: IsectFault,
}

impl IsectUnit {
    pub fn set_timed(&mut self, on: bool) {
        self.timed = on;
    }

    /// Keeps per-lane work for `warps` warp slots (detailed stats).
    pub fn track_lane_work(&mut self, warps: usize) {
        self.lane_work = vec![0; warps * crate::abi::MAX_THREADS];
    }

    /// The work each lane of warp slot `warp` caused since the last call, reset.
    pub fn take_lane_work(&mut self, warp: usize) -> [u32; crate::abi::MAX_THREADS] {
        let mut out = [0u32; crate::abi::MAX_THREADS];
        if let Some(w) = self.lane_work.get_mut(warp * out.len()..(warp + 1) * out.len()) {
            out.copy_from_slice(w);
            w.fill(0);
        }
        out
    }

    /// Records the shader walks' queries into `sink` (None stops recording).
    pub fn set_raylog(&mut self, sink: Option<std::sync::Arc<crate::rtu::raylog::Sink>>) {
        self.flush_raylog();
        self.raylog = sink.map(|s| Box::new(super::raylog::QueryLog::new(s)));
    }

    /// End of a dispatch: the recorded queries go to the file.
    pub fn flush_raylog(&mut self) {
        if let Some(log) = self.raylog.as_deref_mut() {
            log.flush();
        }
    }

    /// `RQLOG` for the lanes of `mask`: `slot[l]` is lane l's query state offset, `private`
    /// the warp's private memory (`pb` bytes a lane), `accel[l]` the structure (arming).
    #[allow(clippy::too_many_arguments)]
    pub fn log_queries(
        &mut self,
        mem: &crate::mem::MemoryMap,
        warp: u32,
        mask: u32,
        what: u32,
        slot: &dyn Fn(usize) -> u32,
        accel: &dyn Fn(usize) -> u64,
        private: &[u8],
        pb: usize,
    ) {
        let Some(log) = self.raylog.as_deref_mut() else { return };
        let bytes = crate::abi::rdna2::query::BYTES as usize;
        let mut todo = mask;
        while todo != 0 {
            let l = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let at = slot(l) as usize;
            // The compiler puts every slot inside the lane's private memory; a state out of
            // it is not a query's (nothing to record).
            let Some(state) = private.get(l * pb + at..l * pb + at + bytes).filter(|_| at + bytes <= pb) else {
                continue;
            };
            let key = (warp, l as u32, at as u32);
            if what == crate::abi::rdna2::query::LOG_ARM {
                log.arm(key, state, accel(l));
            } else {
                log.proceeded(key, state, mem);
            }
        }
    }

    /// Runs `ISECT` for the lanes of `mask`: the descriptor in registers `desc..desc+3`, the
    /// ray in `ray_reg..ray_reg+10`, the four result words into `dst..dst+3`.
    pub fn execute(
        &mut self,
        mem: &crate::mem::MemoryMap,
        regs: &mut [u32],
        nt: usize,
        mask: u32,
        warp: usize,
        (dst, desc, ray_reg): (usize, usize, usize),
    ) -> Result<(), LaneFault> {
        self.lines.clear();
        self.box_lanes = 0;
        self.tri_lanes = 0;
        self.counters.instrs += 1;
        let mut cached: Option<([u32; 4], Descriptor)> = None;
        let mut todo = mask;
        while todo != 0 {
            let l = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let words: [u32; 4] = std::array::from_fn(|k| regs[(desc + k) * nt + l]);
            let d = match cached {
                Some((w, d)) if w == words => d,
                _ => {
                    let d = Descriptor::decode(words)
                        .map_err(|e| LaneFault { lane: l, fault: IsectFault::Descriptor(e) })?;
                    cached = Some((words, d));
                    d
                }
            };
            let rw: [u32; ray::REGS as usize] = std::array::from_fn(|k| regs[(ray_reg + k) * nt + l]);
            let (out, work) =
                intersect(mem, d, &IsectRay::from_words(&rw)).map_err(|fault| LaneFault { lane: l, fault })?;
            for (k, v) in out.iter().enumerate() {
                regs[(dst + k) * nt + l] = *v;
            }
            self.account(&work);
            if let Some(c) = self.lane_work.get_mut(warp * crate::abi::MAX_THREADS + l) {
                *c = c.saturating_add((work.bytes > 0) as u32 + work.tri_tests);
            }
        }
        if self.timed {
            self.lines.sort_unstable();
            self.lines.dedup();
        }
        Ok(())
    }

    fn account(&mut self, w: &super::Work) {
        let c = &mut self.counters;
        c.lanes += 1;
        if w.bytes == 0 {
            c.inactive_lanes += 1;
            return;
        }
        c.node_fetches += 1;
        c.node_bytes += w.bytes as u64;
        c.box_tests += w.box_tests as u64;
        c.tri_tests += w.tri_tests as u64;
        if w.box_tests > 0 {
            self.box_lanes += 1;
        } else {
            self.tri_lanes += 1;
        }
        if self.timed {
            let first = line_of(w.addr);
            let last = line_of(w.addr + w.bytes as u64 - 1);
            self.lines.extend(first..=last);
        }
    }
}
