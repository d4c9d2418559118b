//! Private words at constant addresses kept in registers.
//!
//! The lowering keeps what a lane owns but cannot name by a register in per-lane private
//! memory: each ray query's state (`slot * state_bytes()`, `lower/rayquery`), function
//! variables reached through pointers. Most kernels reach every private word at an address
//! the kernel computes from constants (the query's slot is a constant), so the words are
//! registers in all but name, and every `LDP`/`STP` of them is a memory access the LSU
//! serves (and a cycle in timed mode) for what a move does.
//!
//! When every private access of the kernel is a whole-word `LDP` or `STP` at a constant
//! address inside the kernel's private bytes, each word gets a register of its own: a load
//! becomes moves from the word's registers, a store moves into them, and copy propagation
//! and dead-code elimination then remove most of the moves. Per lane this is exact: a
//! lane's private words are reached only by its own accesses (nothing else reads private
//! memory once no access has a computed address), a masked store is a masked register
//! write, and registers, like private memory, are zero at launch.
//!
//! An address is constant at an access when its register has exactly one definition, a
//! `MOVI` or a move or integer op over registers constant at that definition, and the
//! definition runs before the access on every path: earlier in the access's block (one
//! mask throughout), or in the entry block, which every lane runs first and no block
//! branches back to. Anything else (a computed address, a sub-word access, an address
//! outside the private bytes, the rdna2 walk's stack or ray-log hook) leaves the kernel as
//! it is.

use std::collections::BTreeMap;
use vortex_model::abi::isa::{Instr, MemSize, Op, REG_NONE};

/// Where each register is last defined, (block, index), and how many definitions it has
/// (`opt`'s counts).
struct Defs {
    at: Vec<Option<(usize, usize)>>,
    count: Vec<u32>,
}

impl Defs {
    fn new(blocks: &[Vec<Instr>], n: usize) -> Defs {
        let mut at = vec![None; n];
        for (b, code) in blocks.iter().enumerate() {
            for (k, i) in code.iter().enumerate() {
                for o in i.operands().iter().filter(|o| o.write) {
                    at[o.reg as usize..o.reg as usize + o.width as usize].fill(Some((b, k)));
                }
            }
        }
        Defs { at, count: super::opt::counts(blocks, n).0 }
    }
}

/// Deepest definition chain [`Consts`] follows.
const MAX_DEPTH: u32 = 16;

/// The constant registers: their values, each worked out once at its single definition.
struct Consts<'a> {
    blocks: &'a [Vec<Instr>],
    defs: Defs,
    /// Whether block 0 is entered only at the start (no block branches to it).
    entry_once: bool,
    memo: BTreeMap<u16, Option<u32>>,
}

impl Consts<'_> {
    /// The value register `r` holds at instruction `k` of block `b` on every path, when it
    /// is a constant defined before that point.
    fn at(&mut self, r: u16, b: usize, k: usize) -> Option<u32> {
        self.at_depth(r, b, k, 0)
    }

    fn at_depth(&mut self, r: u16, b: usize, k: usize, depth: u32) -> Option<u32> {
        let (db, dk) = (*self.defs.at.get(r as usize)?)?;
        if self.defs.count[r as usize] != 1 {
            return None;
        }
        let before = (db == b && dk < k) || (db == 0 && self.entry_once && b != 0);
        if !before {
            return None;
        }
        self.value(r, depth)
    }

    /// The value the single definition of `r` writes, when constant. Addresses are a few
    /// ops from their constants, so a definition deeper than [`MAX_DEPTH`] counts as no
    /// constant (and a long chain of them cannot exhaust the stack).
    fn value(&mut self, r: u16, depth: u32) -> Option<u32> {
        if let Some(&v) = self.memo.get(&r) {
            return v;
        }
        if depth >= MAX_DEPTH {
            return None;
        }
        // A definition that reads itself (through a cycle of single definitions) is no
        // constant: mark it before recursing.
        self.memo.insert(r, None);
        let (b, k) = self.defs.at[r as usize]?;
        let i = self.blocks[b][k];
        let v = match i.op {
            Op::Movi => Some(i.imm),
            Op::Mov => self.at_depth(i.a, b, k, depth + 1),
            Op::Iadd | Op::Isub | Op::Imul | Op::Shl | Op::Shr | Op::And | Op::Or | Op::Xor => {
                match (self.at_depth(i.a, b, k, depth + 1), self.at_depth(i.b, b, k, depth + 1)) {
                    (Some(x), Some(y)) => Some(match i.op {
                        Op::Iadd => x.wrapping_add(y),
                        Op::Isub => x.wrapping_sub(y),
                        Op::Imul => x.wrapping_mul(y),
                        Op::Shl => x << (y & 31),
                        Op::Shr => x >> (y & 31),
                        Op::And => x & y,
                        Op::Or => x | y,
                        _ => x ^ y,
                    }),
                    _ => None,
                }
            }
            _ => None,
        };
        self.memo.insert(r, v);
        v
    }
}

/// `reg_of` of a word no access stores.
const NEVER_STORED: u16 = REG_NONE;

/// Words of a whole-word private access.
fn words(i: &Instr) -> Option<u32> {
    match MemSize::from_u8(i.modifier)? {
        MemSize::B32 => Some(1),
        MemSize::B64 => Some(2),
        MemSize::B128 => Some(4),
        _ => None,
    }
}

/// `blocks` (layout order, block 0 the entry; `succ` as in `opt::optimize`, over `n`
/// registers) with its private words in registers `n..`, and the new register count, when
/// every private access qualifies (see the module comment) and `private_bytes` holds them.
pub(crate) fn promote(
    blocks: &[Vec<Instr>],
    succ: &[Vec<usize>],
    n: usize,
    private_bytes: u32,
) -> Option<(Vec<Vec<Instr>>, usize)> {
    let uses = |i: &Instr| matches!(i.op, Op::Ldp | Op::Stp);
    if !blocks.iter().flatten().any(uses) {
        return None;
    }
    if blocks.iter().flatten().any(|i| matches!(i.op, Op::Isect | Op::Rqlog)) {
        return None;
    }
    let mut c = Consts {
        blocks,
        defs: Defs::new(blocks, n),
        entry_once: !succ.iter().flatten().any(|&s| s == 0),
        memo: BTreeMap::new(),
    };
    // Every access's first byte address, in program order.
    let mut addrs = Vec::new();
    for (b, code) in blocks.iter().enumerate() {
        for (k, i) in code.iter().enumerate().filter(|(_, i)| uses(i)) {
            let w = words(i)?;
            let at = c.at(i.a, b, k)?.checked_add(i.imm)?;
            let fits = at.is_multiple_of(4) && at.checked_add(4 * w).is_some_and(|end| end <= private_bytes);
            if !fits {
                return None;
            }
            addrs.push(at);
        }
    }
    // One register per stored word, numbered in address order; a word no access stores
    // is zero throughout, so it needs none.
    let mut reg_of: BTreeMap<u32, u16> = BTreeMap::new();
    for (&at, i) in addrs.iter().zip(blocks.iter().flatten().filter(|i| uses(i))) {
        for w in 0..words(i)? {
            let stored = reg_of.entry(at + 4 * w).or_insert(NEVER_STORED);
            if i.op == Op::Stp {
                *stored = 0;
            }
        }
    }
    let mut total = n;
    for r in reg_of.values_mut().filter(|r| **r != NEVER_STORED) {
        *r = total as u16;
        total += 1;
    }
    if total >= REG_NONE as usize {
        return None;
    }
    let mut next = addrs.into_iter();
    let mut promoted = Vec::with_capacity(blocks.len());
    for code in blocks {
        let mut out = Vec::with_capacity(code.len());
        for &i in code {
            if !uses(&i) {
                out.push(i);
                continue;
            }
            let at = next.next().expect("an address per access");
            for w in 0..words(&i).expect("checked above") {
                let word = reg_of[&(at + 4 * w)];
                out.push(match (i.op, word) {
                    (Op::Ldp, NEVER_STORED) => {
                        Instr::r(Op::Movi, 0, i.dst + w as u16, REG_NONE, REG_NONE, REG_NONE, REG_NONE, 0)
                    }
                    (Op::Ldp, _) => Instr::r(Op::Mov, 0, i.dst + w as u16, word, REG_NONE, REG_NONE, REG_NONE, 0),
                    _ => Instr::r(Op::Mov, 0, word, i.b + w as u16, REG_NONE, REG_NONE, REG_NONE, 0),
                });
            }
        }
        promoted.push(out);
    }
    Some((promoted, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ins(op: Op, dst: u16, a: u16, b: u16, imm: u32) -> Instr {
        Instr::r(op, 0, dst, a, b, REG_NONE, REG_NONE, imm)
    }
    fn movi(d: u16, v: u32) -> Instr {
        ins(Op::Movi, d, REG_NONE, REG_NONE, v)
    }
    fn ldp(d: u16, a: u16, imm: u32) -> Instr {
        Instr { modifier: MemSize::B32 as u8, ..ins(Op::Ldp, d, a, REG_NONE, imm) }
    }
    fn stp(a: u16, v: u16, imm: u32) -> Instr {
        Instr { modifier: MemSize::B32 as u8, ..ins(Op::Stp, REG_NONE, a, v, imm) }
    }
    /// [`promote`] in place, as the tests read it: the new register count.
    fn run(blocks: &mut Vec<Vec<Instr>>, succ: &[Vec<usize>], n: usize, private_bytes: u32) -> Option<usize> {
        let (code, m) = promote(blocks, succ, n, private_bytes)?;
        *blocks = code;
        Some(m)
    }
    fn movs(code: &[Instr]) -> Vec<(u16, u16)> {
        code.iter().filter(|i| i.op == Op::Mov).map(|i| (i.dst, i.a)).collect()
    }

    #[test]
    fn constant_addresses_become_registers() {
        // r0 = 1; r1 = 3; block 1: r2 = r0 << r1 (8); stp [r2 + 0], r3; ldp r4, [r2 + 4].
        let mut blocks = vec![
            vec![movi(0, 1), movi(1, 3), ins(Op::Jmp, REG_NONE, REG_NONE, REG_NONE, 1)],
            vec![ins(Op::Shl, 2, 0, 1, 0), stp(2, 3, 0), ldp(4, 2, 4), ins(Op::Exit, REG_NONE, REG_NONE, REG_NONE, 0)],
        ];
        let succ = vec![vec![1], vec![]];
        assert_eq!(run(&mut blocks, &succ, 8, 16), Some(9));
        // Word 8 is register 8; word 12 is never stored, so it reads as zero.
        assert_eq!(movs(&blocks[1]), vec![(8, 3)]);
        assert!(blocks[1].iter().any(|i| i.op == Op::Movi && i.dst == 4 && i.imm == 0));
        assert!(!blocks.iter().flatten().any(|i| matches!(i.op, Op::Ldp | Op::Stp)));
    }

    #[test]
    fn wide_accesses_move_each_word() {
        let mut blocks = vec![vec![
            movi(0, 0),
            Instr { modifier: MemSize::B64 as u8, ..stp(0, 2, 0) },
            Instr { modifier: MemSize::B128 as u8, ..ldp(4, 0, 0) },
        ]];
        assert_eq!(run(&mut blocks, &[vec![]], 8, 16), Some(10));
        assert_eq!(movs(&blocks[0]), vec![(8, 2), (9, 3), (4, 8), (5, 9)]);
        let zeros: Vec<u16> = blocks[0].iter().filter(|i| i.op == Op::Movi && i.imm == 0).map(|i| i.dst).collect();
        assert_eq!(zeros, vec![0, 6, 7]);
    }

    #[test]
    fn long_definition_chains_end_the_search() {
        // r0 = 0; r1 = r0; ...; r[k] = r[k-1]: an address far deeper than any lowering makes
        // is no constant (and the search does not recurse through all of it).
        let k = 50_000u16;
        let mut code = vec![movi(0, 0)];
        code.extend((1..=k).map(|r| ins(Op::Mov, r, r - 1, REG_NONE, 0)));
        code.push(stp(k, 0, 0));
        let mut blocks = vec![code];
        assert_eq!(run(&mut blocks, &[vec![]], k as usize + 1, 16), None);
        // A short chain is followed.
        let mut blocks = vec![vec![movi(0, 4), ins(Op::Mov, 1, 0, REG_NONE, 0), stp(1, 0, 0)]];
        assert_eq!(run(&mut blocks, &[vec![]], 2, 16), Some(3));
    }

    #[test]
    fn any_unprovable_access_leaves_the_kernel() {
        type Case = (Vec<Vec<Instr>>, Vec<Vec<usize>>);
        let cases: Vec<Case> = vec![
            // A computed address (register 0 is written twice).
            (vec![vec![movi(0, 0), movi(0, 4), stp(0, 2, 0), ldp(3, 1, 0)]], vec![vec![]]),
            // Defined after the access.
            (vec![vec![stp(0, 2, 0), movi(0, 0)]], vec![vec![]]),
            // Defined in another block that is not the entry.
            (
                vec![vec![ins(Op::Jmp, REG_NONE, REG_NONE, REG_NONE, 1)], vec![movi(0, 0)], vec![stp(0, 2, 0)]],
                vec![vec![1], vec![2], vec![]],
            ),
            // Defined in an entry block that a loop re-enters.
            (vec![vec![movi(0, 0), stp(0, 2, 0)], vec![stp(0, 2, 4)]], vec![vec![1], vec![0]]),
            // Outside the private bytes, unaligned, sub-word.
            (vec![vec![movi(0, 16), stp(0, 2, 0)]], vec![vec![]]),
            (vec![vec![movi(0, 2), stp(0, 2, 0)]], vec![vec![]]),
            (vec![vec![movi(0, 0), Instr { modifier: MemSize::U16 as u8, ..stp(0, 2, 0) }]], vec![vec![]]),
            // A register from a non-integer op.
            (vec![vec![ins(Op::U2f, 0, 1, REG_NONE, 0), stp(0, 2, 0)]], vec![vec![]]),
        ];
        for (k, (blocks, succ)) in cases.into_iter().enumerate() {
            assert!(promote(&blocks, &succ, 8, 16).is_none(), "case {k}");
        }
    }
}
