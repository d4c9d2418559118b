//! Which instructions the JIT compiles, and how a kernel splits into compiled runs.
//!
//! A run is a straight line of lane-wise register ops (no control flow, no faults, no
//! effect beyond its destination): every lane computes from its own row entries only, so a
//! run executes the same whatever the mask, and the pc advances by its length. The one
//! memory op a run holds is a load from the kernel-argument block through the register
//! pair that holds its address in every lane ([`arg_loads`]): the block is written before
//! the dispatch and read-only while it runs, so every lane reads the same words, and the
//! core hands the run the block's host address once it has checked the block is mapped
//! (else the interpreter runs the run's pcs, and faults as it would). A CSR read is one
//! too when the CSR's value is fixed for the warp's life ([`super::csr_offset`]): the core
//! hands the run the warp's table of them. A run never extends
//! past a pc where the reconvergence stack may change hands (a branch or jump target, a
//! reconvergence point), so the mask is one for the whole run.

use crate::abi::csr;
use crate::abi::isa::{FloatCond, Instr, IntCond, MemSize, Op};
use crate::abi::kernel::kargs;

/// Shortest run worth a call: a single op runs as fast inline in the issue loop.
pub const MIN_RUN: usize = 2;
/// Longest run: bounds one function's size (a longer line is several runs back to back).
pub const MAX_RUN: usize = 256;

/// True when the JIT compiles `i` (with fused multiply-add only where the host has it: the
/// interpreter's `mul_add` rounds once, and so must the compiled code); `arg_load` when `i`
/// is a load from the kernel-argument block ([`arg_loads`]).
pub fn covered(i: &Instr, has_fma: bool, arg_load: bool) -> bool {
    match i.op {
        Op::Ldg => arg_load,
        Op::Csr => super::csr_offset(i.imm).is_some(),
        Op::Mov | Op::Movi | Op::Sel => true,
        Op::Iadd | Op::Isub | Op::Imul | Op::And | Op::Or | Op::Xor | Op::Not | Op::Ineg | Op::Iabs => true,
        // Address arithmetic: a sum with its carry, and 64-bit sums of register pairs.
        Op::Iaddc | Op::Isubb | Op::Iadd64 | Op::Isub64 => true,
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

/// Words an `LDG` reads from the kernel-argument block when it is one a run may hold: whole
/// words at a word-aligned offset inside the block.
pub fn arg_words(i: &Instr) -> Option<u32> {
    let words = match MemSize::from_u8(i.modifier)? {
        MemSize::B32 => 1,
        MemSize::B64 => 2,
        MemSize::B128 => 4,
        _ => return None,
    };
    let inside = i.imm as u64 + 4 * words as u64 <= kargs::BYTES as u64;
    (i.imm.is_multiple_of(4) && inside).then_some(words)
}

/// Per pc, whether the instruction there is a load from the kernel-argument block a run may
/// hold: an `LDG` of whole words inside the block ([`arg_words`]) through a register pair
/// `r:r+1` that on every path from the entry was last written by `csr r, param.lo` and
/// `csr r+1, param.hi`. Both CSRs read the launch's one parameter address, so each lane
/// that reaches the load (its own path passed both writes, as every path did) holds the
/// same address there. The paths are the interpreter's: `BRA` to either side, `JMP`, the
/// next pc, none after `EXIT` and `TRAP`.
pub fn arg_loads(code: &[Instr], entry: u32) -> Vec<bool> {
    let n = code.len();
    let mut out = vec![false; n];
    if entry as usize >= n {
        return out;
    }
    let csr_into = |which: u32| code.iter().filter(move |i| i.op == Op::Csr && i.imm == which).map(|i| i.dst);
    let his: Vec<u16> = csr_into(csr::PARAM_HI).collect();
    let mut pairs: Vec<u16> = csr_into(csr::PARAM_LO).filter(|&r| his.contains(&r.wrapping_add(1))).collect();
    pairs.sort_unstable();
    pairs.dedup();
    for &r in pairs.iter().take(4) {
        // held[pc]: bit 0 when `r` holds param.lo on every path to pc, bit 1 for `r+1` and
        // param.hi (None: no path seen yet).
        let mut held: Vec<Option<u8>> = vec![None; n];
        held[entry as usize] = Some(0);
        let mut work = vec![entry as usize];
        while let Some(pc) = work.pop() {
            let i = &code[pc];
            let mut bits = held[pc].unwrap_or(0);
            for o in i.operands().iter().filter(|o| o.write) {
                let w = o.reg as u32..o.reg as u32 + o.width;
                for (bit, reg, which) in [(1u8, r, csr::PARAM_LO), (2, r.wrapping_add(1), csr::PARAM_HI)] {
                    if w.contains(&(reg as u32)) {
                        let set = i.op == Op::Csr && i.imm == which && i.dst == reg;
                        bits = if set { bits | bit } else { bits & !bit };
                    }
                }
            }
            let next = (pc + 1 < n).then_some(pc + 1);
            let succ = match i.op {
                Op::Exit | Op::Trap => [None, None],
                Op::Jmp => [Some(i.imm as usize), None],
                Op::Bra => [Some(i.imm as usize), Some(i.imm2 as usize)],
                _ => [next, None],
            };
            for s in succ.into_iter().flatten().filter(|&s| s < n) {
                let met = held[s].map_or(bits, |h| h & bits);
                if held[s] != Some(met) {
                    held[s] = Some(met);
                    work.push(s);
                }
            }
        }
        for (pc, i) in code.iter().enumerate() {
            if i.op == Op::Ldg && i.a == r && held[pc] == Some(3) && arg_words(i).is_some() {
                out[pc] = true;
            }
        }
    }
    out
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
pub fn runs(code: &[Instr], entry: u32, has_fma: bool, arg_loads: &[bool]) -> Vec<(u32, u32)> {
    let joins = joins(code, entry);
    let mut out = Vec::new();
    let mut pc = 0;
    while pc < code.len() {
        if !covered(&code[pc], has_fma, arg_loads[pc]) {
            pc += 1;
            continue;
        }
        let start = pc;
        pc += 1;
        while pc < code.len() && pc - start < MAX_RUN && !joins[pc] && covered(&code[pc], has_fma, arg_loads[pc]) {
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

    trait Positions {
        fn positions(self) -> Vec<usize>;
    }
    impl<'a, I: Iterator<Item = &'a bool>> Positions for I {
        fn positions(self) -> Vec<usize> {
            self.enumerate().filter(|(_, &b)| b).map(|(k, _)| k).collect()
        }
    }
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
        let none = [false; 9];
        assert_eq!(runs(&code, 0, true, &none), vec![(0, 2), (2, 2), (7, 2)]);
        // Entered at 1: pc 0 and pc 1 are lines of one.
        assert_eq!(runs(&code, 1, true, &none), vec![(2, 2), (7, 2)]);
        // Without FMA on the host, FFMA ends a run.
        let code = vec![op(Op::Iadd), op(Op::Ffma), op(Op::Iadd), op(Op::Iadd)];
        let none = [false; 4];
        assert_eq!(runs(&code, 0, false, &none), vec![(2, 2)]);
        assert_eq!(runs(&code, 0, true, &none), vec![(0, 4)]);
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

    #[test]
    fn argument_loads_join_runs_through_the_argument_pair_only() {
        let csr_ = |d, which| Instr::r(Op::Csr, 0, d, N, N, N, N, which);
        let ldg = |size: MemSize, d, a, off| Instr::r(Op::Ldg, size as u8, d, a, N, N, N, off);
        let add = Instr::r(Op::Iadd, 0, 7, 6, 6, N, N, 0);
        let code = vec![
            csr_(0, csr::PARAM_LO),        // 0
            csr_(1, csr::PARAM_HI),        // 1
            ldg(MemSize::B128, 4, 0, 256), // 2
            add,                           // 3
            ldg(MemSize::B32, 5, 2, 256),  // 4: another pair
            add,                           // 5
            ldg(MemSize::U16, 5, 0, 256),  // 6: not whole words
            add,                           // 7
            ldg(MemSize::B32, 5, 0, 510),  // 8: not word-aligned
            ldg(MemSize::B64, 5, 0, 508),  // 9: past the block
            add,                           // 10
            ldg(MemSize::B32, 6, 0, 8),    // 11
        ];
        let loads = arg_loads(&code, 0);
        assert_eq!(loads.iter().positions(), vec![2, 11]);
        // The CSRs writing the pair run with the loads that use it.
        assert_eq!(runs(&code, 0, true, &loads), vec![(0, 4), (10, 2)]);
        assert_eq!(runs(&code, 0, true, &[false; 12]), vec![(0, 2)]);
        // The pair rewritten on one path to a load, or read before it is written: not the
        // block's address there.
        let mut branchy = code[..3].to_vec();
        branchy.extend([
            Instr::bra(6, 4, 6, 7),                 // 3
            Instr::r(Op::Mov, 0, 1, 7, N, N, N, 0), // 4: the taken side rewrites r1
            Instr::r(Op::Jmp, 0, N, N, N, N, N, 7), // 5
            ldg(MemSize::B32, 5, 0, 8),             // 6: the other side only
            ldg(MemSize::B32, 5, 0, 8),             // 7: the join
        ]);
        assert_eq!(arg_loads(&branchy, 0).iter().positions(), vec![2, 6]);
        let early = [ldg(MemSize::B32, 5, 0, 8), csr_(0, csr::PARAM_LO), csr_(1, csr::PARAM_HI)];
        assert_eq!(arg_loads(&early, 0).iter().positions(), Vec::<usize>::new());
    }
}
