//! Which instructions the JIT compiles, and how a kernel splits into compiled runs.
//!
//! A run is a straight line of lane-wise register ops (no memory, no control flow, no
//! faults, no effect beyond its destination): every lane computes from its own row
//! entries only, so a run executes the same whatever the mask, and the pc advances by its
//! length. A run never extends past a pc where the reconvergence stack may change hands (a
//! branch or jump target, a reconvergence point), so the mask is one for the whole run.

use crate::abi::isa::{FloatCond, Instr, IntCond, Op};

/// Shortest run worth a call: a single op runs as fast inline in the issue loop.
pub const MIN_RUN: usize = 2;
/// Longest run: bounds one function's size (a longer line is several runs back to back).
pub const MAX_RUN: usize = 256;

/// True when the JIT compiles `i` (with fused multiply-add only where the host has it: the
/// interpreter's `mul_add` rounds once, and so must the compiled code).
pub fn covered(i: &Instr, has_fma: bool) -> bool {
    match i.op {
        Op::Mov | Op::Movi | Op::Sel => true,
        Op::Iadd | Op::Isub | Op::Imul | Op::And | Op::Or | Op::Xor | Op::Not | Op::Ineg | Op::Iabs => true,
        Op::Shl | Op::Shr | Op::Sar | Op::Imin | Op::Imax => true,
        Op::Icmp => IntCond::from_u8(i.modifier).is_some(),
        Op::Fcmp => FloatCond::from_u8(i.modifier).is_some(),
        Op::Fadd | Op::Fsub | Op::Fmul | Op::Fdiv | Op::Fmin | Op::Fmax | Op::Fneg | Op::Fabs => true,
        Op::Fsqrt | Op::Frcp | Op::Frsq => true,
        Op::F2i | Op::F2u | Op::I2f | Op::U2f => true,
        Op::Ffma => has_fma,
        _ => false,
    }
}

/// The pcs a run may not run through: where another path joins (branch and jump targets)
/// or the reconvergence stack pops an entry (reconvergence points).
pub fn joins(code: &[Instr], entry: u32) -> Vec<bool> {
    let mut j = vec![false; code.len() + 1];
    j[entry as usize] = true;
    for i in code {
        match i.op {
            Op::Bra => {
                for t in [i.imm, i.imm2, i.imm3] {
                    if let Some(x) = j.get_mut(t as usize) {
                        *x = true;
                    }
                }
            }
            Op::Jmp => {
                if let Some(x) = j.get_mut(i.imm as usize) {
                    *x = true;
                }
            }
            _ => {}
        }
    }
    j
}

/// The runs of `code`, as (first pc, length): maximal lines of covered ops that cross no
/// join, cut at [`MAX_RUN`], at least [`MIN_RUN`] long.
pub fn runs(code: &[Instr], entry: u32, has_fma: bool) -> Vec<(u32, u32)> {
    let joins = joins(code, entry);
    let mut out = Vec::new();
    let mut pc = 0;
    while pc < code.len() {
        if !covered(&code[pc], has_fma) {
            pc += 1;
            continue;
        }
        let start = pc;
        pc += 1;
        while pc < code.len() && pc - start < MAX_RUN && !joins[pc] && covered(&code[pc], has_fma) {
            pc += 1;
        }
        if pc - start >= MIN_RUN {
            out.push((start as u32, (pc - start) as u32));
        }
    }
    out
}

/// Per register, the value every read of it sees when that is one constant: its only
/// writer in the kernel is one `MOVI`, and every lane writes it before reading it (it is not
/// among the registers a launch zeroes, `zeroed`). The compiled code then shifts a whole
/// host vector by that amount instead of lane by lane.
pub fn constants(code: &[Instr], num_regs: usize, zeroed: &[u16]) -> Vec<Option<u32>> {
    // Writers per register: 0, 1 (the MOVI's value) or more.
    let mut writers: Vec<(u32, Option<u32>)> = vec![(0, None); num_regs];
    for i in code {
        for o in i.operands().iter().filter(|o| o.write) {
            for r in o.reg as usize..(o.reg as usize + o.width as usize).min(num_regs) {
                let w = &mut writers[r];
                w.0 += 1;
                w.1 = (i.op == Op::Movi && o.width == 1).then_some(i.imm);
            }
        }
    }
    let mut out: Vec<Option<u32>> = writers.iter().map(|&(n, v)| if n == 1 { v } else { None }).collect();
    for &r in zeroed {
        if let Some(c) = out.get_mut(r as usize) {
            *c = None;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::isa::REG_NONE as N;

    fn op(op: Op) -> Instr {
        Instr::r(op, 0, 1, 2, 3, N, N, 0)
    }

    #[test]
    fn runs_stop_at_joins_and_uncovered_ops() {
        let code = vec![
            op(Op::Iadd),           // 0
            op(Op::Fmul),           // 1
            op(Op::Fadd),           // 2 (branch target: a new run)
            op(Op::Isub),           // 3
            Instr::bra(1, 2, 5, 6), // 4
            op(Op::Iadd),           // 5 (alone: too short)
            op(Op::Ldg),            // 6
            op(Op::Iadd),           // 7
            op(Op::Iadd),           // 8
        ];
        assert_eq!(runs(&code, 0, true), vec![(0, 2), (2, 2), (7, 2)]);
        // Entered at 1: pc 0 and pc 1 are lines of one.
        assert_eq!(runs(&code, 1, true), vec![(2, 2), (7, 2)]);
        // Without FMA on the host, FFMA ends a run.
        let code = vec![op(Op::Iadd), op(Op::Ffma), op(Op::Iadd), op(Op::Iadd)];
        assert_eq!(runs(&code, 0, false), vec![(2, 2)]);
        assert_eq!(runs(&code, 0, true), vec![(0, 4)]);
    }

    #[test]
    fn constants_are_single_movis_written_before_read() {
        let movi = |d, v| Instr::r(Op::Movi, 0, d, N, N, N, N, v);
        let code = vec![movi(0, 7), movi(1, 3), movi(1, 4), movi(2, 5), op(Op::Iadd), movi(4, 9)];
        // r0: one MOVI; r1: two; r2: one MOVI but also read before written (zeroed); r3:
        // the IADD's destination; r4: one MOVI.
        assert_eq!(constants(&code, 5, &[2]), vec![Some(7), None, None, None, Some(9)]);
        let code = vec![Instr::r(Op::Iadd64, 0, 0, 2, 4, N, N, 0), movi(1, 3)];
        assert_eq!(constants(&code, 6, &[])[..2], [None, None], "a pair's high word is written too");
    }
}
