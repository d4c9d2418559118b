//! The output merger's port on the core: `EXP` hands a fragment's colour, depth and sample
//! mask to the output merger. Only fragment warps export.

use super::{illegal, not_executed, ExecEnv, Warp};
use crate::abi::isa::{Instr, Op};
use crate::fault::Fault;

/// Executes export `i` for the lanes in `mask` (helper lanes already removed).
pub(super) fn execute(i: &Instr, _w: &mut Warp, _mask: u32, _env: &mut ExecEnv) -> Result<(), Fault> {
    if i.op != Op::Exp {
        return Err(not_executed(i));
    }
    Err(illegal(i, "EXP outside a fragment kernel"))
}
