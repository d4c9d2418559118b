//! The core's side of the RTU: TRACE arms lanes' queries, WAIT collects their results
//! (parking the warp until they land), CONTINUE resumes them, GETW reads their hit windows.

use super::{f, not_executed, row, row_full, ExecEnv, Next, Warp};
use crate::abi::isa::{Instr, Op, REG_NONE};
use crate::abi::rtu as rtu_abi;
use crate::abi::MAX_THREADS;
use crate::core::warp::WarpState;
use crate::fault::Fault;
use crate::rtu::{RtuError, TraceRay};

fn rtu_fault(e: RtuError) -> Fault {
    Fault { lane: Some(e.lane), ..e.fault }
}

/// Executes ray-query op `i` for the lanes in `mask`.
pub(super) fn execute(i: &Instr, w: &mut Warp, mask: u32, env: &mut ExecEnv) -> Result<Next, Fault> {
    let nt = env.nt;
    let regs = &mut w.regs[..];
    let (d, a, b, c) = (i.dst, i.a, i.b, i.c);
    match i.op {
        Op::Trace => trace(i, regs, nt, mask, env)?,
        Op::Wait => {
            let mut q = [0u32; MAX_THREADS];
            lanes!(mask, nt, |l| {
                q[l] = regs[a as usize * nt + l];
            });
            let mut status = [0u32; MAX_THREADS];
            if !env.units.rtu.wait(env.warp_id as usize, mask, &q, &mut status).map_err(rtu_fault)? {
                w.state = WarpState::Parked;
                return Ok(Next::Block);
            }
            lanes!(mask, nt, |l| {
                regs[d as usize * nt + l] = status[l];
            });
        }
        Op::Cont => {
            let mut q = [0u32; MAX_THREADS];
            let mut act = [0u32; MAX_THREADS];
            let mut t = [0f32; MAX_THREADS];
            lanes!(mask, nt, |l| {
                q[l] = regs[a as usize * nt + l];
                act[l] = regs[b as usize * nt + l];
                t[l] = f(regs[c as usize * nt + l]);
            });
            env.units.rtu.cont(env.mem, env.warp_id as usize, mask, &q, &act, &t).map_err(rtu_fault)?;
        }
        Op::Getw | Op::Getwf => {
            let count = i.modifier.max(1) as u32;
            let dd = d as usize;
            let q = if nt == MAX_THREADS {
                row_full(regs, a)
            } else {
                let mut q = [0u32; MAX_THREADS];
                q[..nt].copy_from_slice(row(regs, a, nt));
                q
            };
            env.units
                .rtu
                .read_lanes(env.warp_id as usize, mask, &q, i.imm, count, |k, l, v| regs[(dd + k) * nt + l] = v)
                .map_err(rtu_fault)?;
        }
        _ => return Err(not_executed(i)),
    }
    Ok(Next::Step)
}

/// TRACE: arms each active lane's query with the ray in its operand registers.
fn trace(i: &Instr, regs: &mut [u32], nt: usize, mask: u32, env: &mut ExecEnv) -> Result<(), Fault> {
    let (d, a, b) = (i.dst, i.a, i.b);
    let mut q = [0u32; MAX_THREADS];
    lanes!(mask, nt, |l| {
        q[l] = regs[a as usize * nt + l];
    });
    // Each lane's ray is read from its operand registers as the RTU arms the lane.
    const N: usize = rtu_abi::ray::REGS as usize;
    let warp = env.warp_id as usize;
    if nt == MAX_THREADS {
        // Full-width rows: one lane bound check per ray instead of one per register.
        const NO_ROW: &[u32; MAX_THREADS] = &[0; MAX_THREADS];
        let mut rows = [NO_ROW; N];
        for (k, r) in rows.iter_mut().enumerate() {
            *r = regs[(b as usize + k) * MAX_THREADS..][..MAX_THREADS].try_into().expect("a full row");
        }
        let ray = |l: usize| TraceRay::from_regs(&rows.map(|r| r[l]));
        env.units.rtu.trace_with(env.mem, warp, mask, &q, i.imm, ray).map_err(rtu_fault)?;
    } else {
        let rows = &regs[b as usize * nt..(b as usize + N) * nt];
        let ray = |l: usize| {
            let mut r = [0u32; N];
            for (k, x) in r.iter_mut().enumerate() {
                *x = rows[k * nt + l];
            }
            TraceRay::from_regs(&r)
        };
        env.units.rtu.trace_with(env.mem, warp, mask, &q, i.imm, ray).map_err(rtu_fault)?;
    }
    if d != REG_NONE {
        lanes!(mask, nt, |l| {
            regs[d as usize * nt + l] = q[l];
        });
    }
    Ok(())
}
