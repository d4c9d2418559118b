//! Control: exits, jumps, barriers, traps, fences and demotion to helper lanes (BRA runs
//! inline in the issue loop); and CSR reads.

use super::{lane_fault, not_executed, ExecEnv, Next, Warp};
use crate::abi::isa::{Instr, Op, TrapCode};
use crate::abi::{csr, gfx, MAX_THREADS};
use crate::core::warp::WarpState;
use crate::fault::{Fault, FaultKind};
use crate::gfx::{frag, Stage};

/// Executes control op `i` for the lanes in `mask`.
pub(super) fn execute(i: &Instr, w: &mut Warp, mask: u32) -> Result<Next, Fault> {
    match i.op {
        Op::Nop | Op::Fence => Ok(Next::Step),
        Op::Exit => {
            w.exit_lanes(mask);
            Ok(Next::Moved)
        }
        Op::Demote => {
            w.helper |= mask;
            Ok(Next::Step)
        }
        Op::Jmp => {
            w.stack.last_mut().expect("executing warp has a stack").pc = i.imm;
            Ok(Next::Moved)
        }
        Op::Bar => {
            w.state = WarpState::Barrier;
            w.stack.last_mut().expect("executing warp has a stack").pc += 1;
            Ok(Next::Block)
        }
        Op::Trap => {
            let what = match i.imm {
                x if x == TrapCode::Unreachable as u32 => "OpUnreachable reached",
                x if x == TrapCode::BadQuery as u32 => "ray-query slot out of range",
                x if x == TrapCode::Kill as u32 => "invocation killed",
                x if x == TrapCode::RayQueryStack as u32 => "rdna2 ray query: traversal stack overflow",
                x if x == TrapCode::RayQuerySteps as u32 => "rdna2 ray query: traversal exceeded its node-visit bound",
                _ => "trap",
            };
            let lane = mask.trailing_zeros() as usize;
            Err(lane_fault(Fault::new(FaultKind::Trap { code: i.imm }, what), lane))
        }
        _ => Err(not_executed(i)),
    }
}

/// `CSR dst, imm`: the register's value in every lane in `mask`.
pub(super) fn csr(i: &Instr, w: &mut Warp, mask: u32, env: &mut ExecEnv) {
    let (nt, dd) = (env.nt, i.dst as usize * env.nt);
    if (gfx::csr::BEGIN..=gfx::csr::END).contains(&i.imm) {
        return gfx_csr(i, w, mask, env);
    }
    if let Some(k) = thread_id_axis(i.imm) {
        let ids = thread_id_row(w.rank, nt, env.launch.block_dim, k);
        super::store_row(&mut w.regs, i.dst, nt, mask, &ids);
    } else if csr_per_lane(i.imm) {
        lanes!(mask, nt, |l| {
            let v = csr_value(i.imm, l, w, env);
            w.regs[dd + l] = v;
        });
    } else {
        // The same value in every lane: read once, broadcast (a whole row at once when
        // every lane is active).
        let v = csr_value(i.imm, 0, w, env);
        if super::full_warp(nt, mask) {
            super::row_full_mut(&mut w.regs, i.dst).fill(v);
        } else {
            lanes!(mask, nt, |l| {
                w.regs[dd + l] = v;
            });
        }
    }
}

/// The warp's [`crate::jit::CsrTable`]: the CSRs in slots `wanted` (bits of
/// [`crate::jit::csr_slot`]) as [`csr`] reads them, the others zero.
pub(crate) fn csr_table(w: &Warp, env: &ExecEnv, wanted: u32) -> crate::jit::CsrTable {
    let mut t = crate::jit::CsrTable::default();
    for (k, (v, &id)) in t.uniform.iter_mut().zip(&csr::WARP_UNIFORM).enumerate() {
        if wanted >> k & 1 != 0 {
            *v = csr_value(id, 0, w, env);
        }
    }
    for (k, (row, &id)) in t.lanes.iter_mut().zip(&csr::PER_LANE).enumerate() {
        if wanted >> (csr::WARP_UNIFORM.len() + k) & 1 != 0 {
            *row = match thread_id_axis(id) {
                Some(a) => thread_id_row(w.rank, env.nt, env.launch.block_dim, a),
                None => std::array::from_fn(|l| csr_value(id, l, w, env)),
            };
        }
    }
    t
}

/// The graphics stages' CSRs (zero outside a draw). A fragment lane's interpolated values
/// are computed once, when the lane first reads one.
fn gfx_csr(i: &Instr, w: &mut Warp, mask: u32, env: &mut ExecEnv) {
    let (nt, dd, id) = (env.nt, i.dst as usize * env.nt, i.imm);
    let block = env.cta.block_idx;
    let wid = env.warp_id as usize;
    if crate::gfx::uniform_csr(id) {
        let v = env.gfx.map_or(0, |g| g.csr(id, block, 0, nt, w.helper));
        lanes!(mask, nt, |l| {
            w.regs[dd + l] = v;
        });
        return;
    }
    lanes!(mask, nt, |l| {
        let v = match env.gfx {
            Some(Stage::Fragment(fs)) if frag::interpolated(id) => {
                env.units.samples.get(wid, l, || fs.sample(block, l)).csr(id)
            }
            Some(g) => g.csr(id, block, l, nt, w.helper),
            None => 0,
        };
        w.regs[dd + l] = v;
    });
}

/// The axis (0, 1, 2) a `CTA_THREAD_ID_*` CSR reads.
fn thread_id_axis(id: u32) -> Option<usize> {
    match id {
        csr::CTA_THREAD_ID_X => Some(0),
        csr::CTA_THREAD_ID_Y => Some(1),
        csr::CTA_THREAD_ID_Z => Some(2),
        _ => None,
    }
}

/// Component `k` of [`crate::core::thread_index`] for every lane of the warp of `rank`: the
/// first lane's index divided out once, then counted up lane by lane (the per-lane
/// divisions cost more than the rest of a warp's prologue).
fn thread_id_row(rank: u32, nt: usize, block_dim: [u32; 3], k: usize) -> [u32; MAX_THREADS] {
    let bd = block_dim.map(|d| d.max(1));
    let mut t = crate::core::thread_index(rank, 0, nt, block_dim);
    let mut out = [0u32; MAX_THREADS];
    for o in out.iter_mut().take(nt) {
        *o = t[k];
        t[0] += 1;
        if t[0] == bd[0] {
            t[0] = 0;
            t[1] += 1;
            if t[1] == bd[1] {
                t[1] = 0;
                t[2] += 1;
            }
        }
    }
    out
}

/// True for the CSRs whose value differs between the lanes of a warp.
fn csr_per_lane(id: u32) -> bool {
    csr::PER_LANE.contains(&id)
}

/// Reads the CSR `id` for `lane`.
fn csr_value(id: u32, lane: usize, w: &Warp, env: &ExecEnv) -> u32 {
    let ls = env.launch;
    let tid = |k: usize| crate::core::thread_index(w.rank, lane, env.nt, ls.block_dim)[k];
    match id {
        csr::LANE_ID => lane as u32,
        csr::WARP_ID => env.warp_id,
        csr::CORE_ID => env.core_id,
        csr::NUM_THREADS => env.nt as u32,
        csr::NUM_WARPS => env.num_warps,
        csr::NUM_CORES => env.num_cores,
        csr::CTA_ID => w.cta_slot,
        csr::CTA_RANK => w.rank,
        csr::CTA_SIZE => env.cta.num_warps,
        csr::CTA_THREAD_ID_X => tid(0),
        csr::CTA_THREAD_ID_Y => tid(1),
        csr::CTA_THREAD_ID_Z => tid(2),
        csr::CTA_BLOCK_ID_X => env.cta.block_idx[0],
        csr::CTA_BLOCK_ID_Y => env.cta.block_idx[1],
        csr::CTA_BLOCK_ID_Z => env.cta.block_idx[2],
        csr::CTA_BLOCK_DIM_X => ls.block_dim[0],
        csr::CTA_BLOCK_DIM_Y => ls.block_dim[1],
        csr::CTA_BLOCK_DIM_Z => ls.block_dim[2],
        csr::CTA_GRID_DIM_X => ls.grid_dim[0],
        csr::CTA_GRID_DIM_Y => ls.grid_dim[1],
        csr::CTA_GRID_DIM_Z => ls.grid_dim[2],
        csr::CTA_LMEM_ADDR => env.cta.lmem_base,
        csr::CTA_CLUSTER_SIZE => ls.cluster_size(),
        csr::CTA_ENTRY => ls.entry as u32,
        csr::PARAM_LO => ls.param as u32,
        csr::PARAM_HI => (ls.param >> 32) as u32,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counted rows equal `thread_index` lane by lane, for block shapes whose rows
    /// wrap inside a warp on every axis, and for a warp past the block's last thread.
    #[test]
    fn thread_id_rows_match_thread_index() {
        let shapes = [[8, 8, 1], [1, 1, 1], [3, 5, 7], [64, 1, 1], [2, 2, 64], [0, 3, 0], [7, 1, 9], [33, 2, 1]];
        for block in shapes {
            for nt in [4usize, 8, 32] {
                for rank in 0..6u32 {
                    for k in 0..3 {
                        let row = thread_id_row(rank, nt, block, k);
                        for (l, &v) in row.iter().enumerate().take(nt) {
                            let want = crate::core::thread_index(rank, l, nt, block)[k];
                            assert_eq!(v, want, "block {block:?} nt {nt} rank {rank} axis {k} lane {l}");
                        }
                    }
                }
            }
        }
    }
}
