//! `ISECT`: the rdna2 architecture's node intersection, served by the core's
//! node-intersection unit (`crate::isect`). A bad descriptor, a node past the descriptor's
//! count or of a type the unit does not test is a `BadAccelerationStructure` fault naming the
//! lane; a node it cannot read is a memory fault.

use super::{lane_fault, mem_fault, not_executed};
use crate::abi::isa::{Instr, Op};
use crate::fault::{Fault, FaultKind};
use crate::isect::unit::IsectUnit;
use crate::isect::IsectFault;
use crate::mem::MemoryMap;

pub(super) fn execute(
    i: &Instr,
    regs: &mut [u32],
    nt: usize,
    mask: u32,
    mem: &MemoryMap,
    unit: &mut IsectUnit,
) -> Result<(), Fault> {
    if i.op != Op::Isect {
        return Err(not_executed(i));
    }
    unit.execute(mem, regs, nt, mask, (i.dst as usize, i.a as usize, i.b as usize)).map_err(|e| match e.fault {
        IsectFault::Memory(m) => mem_fault(m, e.lane),
        f => lane_fault(Fault::new(FaultKind::BadAccelerationStructure, f.to_string()), e.lane),
    })
}
