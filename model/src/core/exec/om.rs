//! The output merger's port on the core: `EXP` hands each lane's colour, depth or sample
//! mask to the core's output merger (`gfx::om::Port`), which merges the fragment when its
//! warp retires. Only fragment warps export; helper lanes never reach here (they skip
//! `EXP`).

use super::{illegal, not_executed, ExecEnv, Warp};
use crate::abi::gfx::export;
use crate::abi::isa::{Instr, Op};
use crate::fault::Fault;
use crate::gfx::Stage;

/// Executes export `i` for the lanes in `mask`.
pub(super) fn execute(i: &Instr, w: &mut Warp, mask: u32, env: &mut ExecEnv) -> Result<(), Fault> {
    if i.op != Op::Exp {
        return Err(not_executed(i));
    }
    if !matches!(env.gfx, Some(Stage::Fragment(_))) {
        return Err(illegal(i, "EXP outside a fragment kernel"));
    }
    let n = export::regs(i.modifier).ok_or_else(|| illegal(i, "bad export target"))? as usize;
    let (nt, a, wid) = (env.nt, i.a as usize, env.warp_id as usize);
    let done = i.imm & export::DONE != 0;
    lanes!(mask, nt, |l| {
        let mut data = [0u32; 4];
        for (k, d) in data.iter_mut().enumerate().take(n) {
            *d = w.regs[(a + k) * nt + l];
        }
        env.units.om.export(wid, l, i.modifier, data, done);
    });
    Ok(())
}
