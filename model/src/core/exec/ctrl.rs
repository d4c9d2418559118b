//! Control: exits, jumps, barriers, traps, fences and demotion to helper lanes (BRA runs
//! inline in the issue loop); and CSR reads.

use super::{lane_fault, not_executed, ExecEnv, Next, Warp};
use crate::abi::isa::{Instr, Op, TrapCode};
use crate::abi::{csr, gfx};
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
    if csr_per_lane(i.imm) {
        lanes!(mask, nt, |l| {
            let v = csr_value(i.imm, l, w, env);
            w.regs[dd + l] = v;
        });
    } else {
        // The same value in every lane: read once, broadcast.
        let v = csr_value(i.imm, 0, w, env);
        lanes!(mask, nt, |l| {
            w.regs[dd + l] = v;
        });
    }
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

/// True for the CSRs whose value differs between the lanes of a warp.
fn csr_per_lane(id: u32) -> bool {
    matches!(id, csr::LANE_ID | csr::CTA_THREAD_ID_X | csr::CTA_THREAD_ID_Y | csr::CTA_THREAD_ID_Z)
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
