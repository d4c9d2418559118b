//! `ISECT`: the rdna2 architecture's node intersection, served by the core's
//! node-intersection unit (`crate::isect`). A bad descriptor, a node past the descriptor's
//! count or of a type the unit does not test is a `BadAccelerationStructure` fault naming the
//! lane; a node it cannot read is a memory fault. `RQLOG`: the ray log's hook for the
//! shader's walk (no effect without a log).

use super::{lane_fault, mem_fault, not_executed, pair, ExecEnv};
use crate::abi::isa::{Instr, Op, REG_NONE};
use crate::core::warp::Warp;
use crate::fault::{Fault, FaultKind};
use crate::isect::IsectFault;

pub(super) fn execute(i: &Instr, w: &mut Warp, mask: u32, env: &mut ExecEnv) -> Result<(), Fault> {
    let nt = env.nt;
    let unit = &mut env.units.isect;
    match i.op {
        Op::Isect => unit
            .execute(env.mem, &mut w.regs, nt, mask, env.warp_id as usize, (i.dst as usize, i.a as usize, i.b as usize))
            .map_err(|e| match e.fault {
                IsectFault::Memory(m) => mem_fault(m, e.lane),
                f => lane_fault(Fault::new(FaultKind::BadAccelerationStructure, f.to_string()), e.lane),
            }),
        Op::Rqlog => {
            if unit.raylog.is_some() {
                let regs = &w.regs;
                let (a, b) = (i.a as usize, i.b);
                let slot = |l: usize| regs[a * nt + l];
                let accel = |l: usize| if b == REG_NONE { 0 } else { pair(regs, b as usize, nt, l) };
                unit.log_queries(env.mem, env.warp_id, mask, i.imm, &slot, &accel, &w.private, w.private_bytes);
            }
            Ok(())
        }
        _ => Err(not_executed(i)),
    }
}
