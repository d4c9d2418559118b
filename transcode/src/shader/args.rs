//! Loads from the kernel-argument block (`abi::kernel::kargs`: the push constants, the
//! descriptor-set addresses, the dispatch's base group and group counts).
//!
//! The driver writes the block before the kernel starts and nothing writes it while the
//! kernel runs, so a load from it at a constant offset is a pure function of that offset:
//! it cannot fault (the offset lies inside the block) and always reads the same words. The
//! lowering loads a push-constant member wherever the shader reads one, so a kernel reloads
//! the same words in many blocks (and a vector's members one by one after loading the
//! vector). This pass turns a load whose words every path to it has already loaded, into
//! registers nothing has written since, into moves (which copy propagation then mostly
//! removes), and [`ArgBase::is_load`] lets the optimiser's dead-code elimination drop
//! argument loads whose results are never read.
//!
//! The reasoning is per lane, as everywhere in the optimiser (`opt.rs`): each lane runs
//! along its own path through the CFG, so a lane that reaches the load has, on its own path,
//! executed the earlier load (its register written for it) and no later write of that
//! register. "Every path" is a must-availability analysis over the CFG.

use std::collections::BTreeSet;
use vortex_model::abi::csr;
use vortex_model::abi::isa::{Instr, MemSize, Op, REG_NONE};
use vortex_model::abi::kernel::kargs;

/// The register pairs that hold the block's address wherever they are read.
pub(crate) struct ArgBase {
    pairs: Vec<u16>,
}

impl ArgBase {
    /// The pairs `r:r+1` written exactly once each in the whole program, by `csr r,
    /// param.lo` and `csr r+1, param.hi` in the entry block (block 0, which no block
    /// branches back to), and read nowhere in that block before both are written.
    pub(crate) fn find(blocks: &[Vec<Instr>], succ: &[Vec<usize>]) -> ArgBase {
        let none = ArgBase { pairs: Vec::new() };
        if blocks.is_empty() || succ.iter().flatten().any(|&s| s == 0) {
            return none;
        }
        let regs = |i: &Instr| i.operands().iter().map(|o| o.reg as usize + o.width as usize).max().unwrap_or(0);
        let (defs, _, _) = super::opt::counts(blocks, blocks.iter().flatten().map(regs).max().unwrap_or(0));
        let once = |r: u16| defs.get(r as usize) == Some(&1);
        let entry = &blocks[0];
        let csr_at = |which: u32, r: u16| entry.iter().position(|i| i.op == Op::Csr && i.imm == which && i.dst == r);
        let reads =
            |i: &Instr, r: u16| i.operands().iter().any(|o| !o.write && (o.reg..o.reg + o.width as u16).contains(&r));
        let mut pairs = Vec::new();
        for hi in entry.iter().filter(|i| i.op == Op::Csr && i.imm == csr::PARAM_HI).map(|i| i.dst) {
            let lo = hi.wrapping_sub(1);
            let (Some(pl), Some(ph)) = (csr_at(csr::PARAM_LO, lo), csr_at(csr::PARAM_HI, hi)) else { continue };
            let early = entry[..pl.max(ph)].iter().any(|i| reads(i, lo) || reads(i, hi));
            if once(lo) && once(hi) && !early {
                pairs.push(lo);
            }
        }
        ArgBase { pairs }
    }

    /// `(byte offset, words)` when `i` is a load of whole words from the block at a constant
    /// offset inside it.
    pub(crate) fn load(&self, i: &Instr) -> Option<(u32, u16)> {
        if i.op != Op::Ldg || !self.pairs.contains(&i.a) {
            return None;
        }
        let words = match MemSize::from_u8(i.modifier)? {
            MemSize::B32 => 1,
            MemSize::B64 => 2,
            MemSize::B128 => 4,
            _ => return None,
        };
        let end = i.imm as u64 + 4 * words as u64;
        (i.imm.is_multiple_of(4) && end <= kargs::BYTES as u64).then_some((i.imm, words))
    }

    /// Whether `i` only writes its destination: a load from the block.
    pub(crate) fn is_load(&self, i: &Instr) -> bool {
        self.load(i).is_some()
    }
}

/// The block's words known to be in registers: (byte offset, register) pairs. A set, not a
/// map, so that the transfer is monotone (a word may be in several registers).
type Avail = BTreeSet<(u32, u16)>;

/// A register that holds the word at byte offset `off`.
fn holder(avail: &Avail, off: u32) -> Option<u16> {
    avail.range((off, 0)..=(off, u16::MAX)).next().map(|&(_, r)| r)
}

/// `avail` after instruction `i`.
fn step(base: &ArgBase, avail: &mut Avail, i: &Instr) {
    for o in i.operands().iter().filter(|o| o.write) {
        let written = o.reg as u32..o.reg as u32 + o.width;
        avail.retain(|&(_, r)| !written.contains(&(r as u32)));
    }
    if let Some((off, words)) = base.load(i) {
        for k in 0..words {
            avail.insert((off + 4 * k as u32, i.dst + k));
        }
    }
}

/// The moves that replace load `i`, when all its words are in registers that the moves, in
/// order, do not overwrite before they read them.
fn as_moves(base: &ArgBase, avail: &Avail, i: &Instr) -> Option<Vec<Instr>> {
    let (off, words) = base.load(i)?;
    let src: Vec<u16> = (0..words).map(|k| holder(avail, off + 4 * k as u32)).collect::<Option<_>>()?;
    for k in 0..words as usize {
        if src[k + 1..].contains(&(i.dst + k as u16)) {
            return None;
        }
    }
    Some(
        (0..words).map(|k| Instr::r(Op::Mov, 0, i.dst + k, src[k as usize], REG_NONE, REG_NONE, REG_NONE, 0)).collect(),
    )
}

/// An argument load whose words are already in registers on every path to it: block
/// `block`'s instruction `at`, and the moves that may replace it.
pub(crate) struct Reuse {
    pub block: usize,
    pub at: usize,
    pub moves: Vec<Instr>,
}

/// Every argument load that moves may replace, in program order. Each stays valid whichever
/// of the others are replaced too: a replaced load's registers get the same words from its
/// moves.
pub(crate) fn candidates(blocks: &[Vec<Instr>], succ: &[Vec<usize>]) -> Vec<Reuse> {
    let base = ArgBase::find(blocks, succ);
    if base.pairs.is_empty() {
        return Vec::new();
    }
    let n = blocks.len();
    let mut preds = vec![Vec::new(); n];
    for (b, ss) in succ.iter().enumerate() {
        for &s in ss {
            preds[s].push(b);
        }
    }
    // Must-availability: `out[b]` None is "not reached yet" (every fact), so the
    // round-robin iteration only ever shrinks a block's set and ends.
    let mut out: Vec<Option<Avail>> = vec![None; n];
    let entry = |b: usize, out: &[Option<Avail>]| -> Option<Avail> {
        if b == 0 {
            return Some(Avail::new());
        }
        let mut known = preds[b].iter().filter_map(|&p| out[p].as_ref());
        let mut a = known.next()?.clone();
        for o in known {
            a.retain(|f| o.contains(f));
        }
        Some(a)
    };
    let mut changed = true;
    while changed {
        changed = false;
        for b in 0..n {
            let Some(mut a) = entry(b, &out) else { continue };
            for i in &blocks[b] {
                step(&base, &mut a, i);
            }
            if out[b].as_ref() != Some(&a) {
                out[b] = Some(a);
                changed = true;
            }
        }
    }
    let mut found = Vec::new();
    for (b, code) in blocks.iter().enumerate() {
        // A block no path reaches keeps its loads.
        let mut a = entry(b, &out).unwrap_or_default();
        for (at, i) in code.iter().enumerate() {
            if let Some(moves) = as_moves(&base, &a, i) {
                found.push(Reuse { block: b, at, moves });
            }
            step(&base, &mut a, i);
        }
    }
    found
}

/// Replaces every candidate load with its moves. Returns whether anything changed.
#[cfg(test)]
fn reuse(blocks: &mut [Vec<Instr>], succ: &[Vec<usize>]) -> bool {
    let found = candidates(blocks, succ);
    for c in found.iter().rev() {
        blocks[c.block].splice(c.at..c.at + 1, c.moves.iter().copied());
    }
    !found.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    const N: u16 = REG_NONE;

    fn csr(d: u16, which: u32) -> Instr {
        Instr::r(Op::Csr, 0, d, N, N, N, N, which)
    }
    /// The argument pair r0:r1, as the lowering's prologue writes it.
    fn prologue() -> Vec<Instr> {
        vec![csr(0, csr::PARAM_LO), csr(1, csr::PARAM_HI)]
    }
    fn ldg(size: MemSize, d: u16, a: u16, off: u32) -> Instr {
        Instr::r(Op::Ldg, size as u8, d, a, N, N, N, off)
    }
    fn add(d: u16, a: u16, b: u16) -> Instr {
        Instr::r(Op::Iadd, 0, d, a, b, N, N, 0)
    }
    fn mov(d: u16, s: u16) -> Instr {
        Instr::r(Op::Mov, 0, d, s, N, N, N, 0)
    }
    fn bra(p: u16) -> Instr {
        Instr::bra(p, 1, 2, 3)
    }

    #[test]
    fn a_reload_on_every_path_becomes_moves_and_a_word_of_a_vector_one_move() {
        // b0: r4..r7 = [256..272); bra -> b1 | b2; both -> b3: reload [256] as b64 and
        // [268] as a word.
        let mut b0 = prologue();
        b0.extend([ldg(MemSize::B128, 4, 0, 256), bra(9)]);
        let mut blocks = vec![
            b0,
            vec![add(10, 4, 4)],
            vec![add(11, 5, 5)],
            vec![ldg(MemSize::B64, 12, 0, 256), ldg(MemSize::B32, 14, 0, 268), add(15, 12, 14)],
        ];
        let succ = vec![vec![1, 2], vec![3], vec![3], vec![]];
        assert!(reuse(&mut blocks, &succ));
        assert_eq!(blocks[3][..3], [mov(12, 4), mov(13, 5), mov(14, 7)]);
        assert_eq!(blocks[3][3], add(15, 12, 14));
    }

    #[test]
    fn a_load_on_one_path_or_a_rewritten_register_is_not_reused() {
        // b1 loads [300] into r4, b2 does not; b3's load must stay. b0's [304] in r5 is
        // rewritten in b2, so b3's load of [304] stays too; [308] in r6 survives both.
        let mut b0 = prologue();
        b0.extend([ldg(MemSize::B32, 5, 0, 304), ldg(MemSize::B32, 6, 0, 308), bra(9)]);
        let mut blocks = vec![
            b0,
            vec![ldg(MemSize::B32, 4, 0, 300)],
            vec![add(5, 5, 5)],
            vec![ldg(MemSize::B32, 7, 0, 300), ldg(MemSize::B32, 8, 0, 304), ldg(MemSize::B32, 9, 0, 308)],
        ];
        let succ = vec![vec![1, 2], vec![3], vec![3], vec![]];
        assert!(reuse(&mut blocks, &succ));
        assert_eq!(blocks[3][0], ldg(MemSize::B32, 7, 0, 300));
        assert_eq!(blocks[3][1], ldg(MemSize::B32, 8, 0, 304));
        assert_eq!(blocks[3][2], mov(9, 6));
    }

    #[test]
    fn a_loop_keeps_a_load_its_body_clobbers() {
        // b0 loads [320] into r4; the loop b1 <-> b2 reloads it in b1 and rewrites r4 in
        // b2, so b1's load must stay (the back edge brings r4 rewritten).
        let mut b0 = prologue();
        b0.push(ldg(MemSize::B32, 4, 0, 320));
        let mut blocks = vec![b0, vec![ldg(MemSize::B32, 5, 0, 320), bra(5)], vec![add(4, 5, 5)], vec![add(6, 4, 5)]];
        let succ = vec![vec![1], vec![2, 3], vec![1], vec![]];
        assert!(!reuse(&mut blocks, &succ));
        assert_eq!(blocks[1][0], ldg(MemSize::B32, 5, 0, 320));
    }

    #[test]
    fn only_the_argument_pair_is_a_base() {
        // Loads through another pair, sub-word loads, offsets past the block, and a pair
        // written twice are not argument loads.
        let b0 = prologue();
        let base = ArgBase::find(std::slice::from_ref(&b0), &[vec![]]);
        assert_eq!(base.load(&ldg(MemSize::B128, 4, 0, 256)), Some((256, 4)));
        assert_eq!(base.load(&ldg(MemSize::B32, 4, 2, 256)), None);
        assert_eq!(base.load(&ldg(MemSize::U16, 4, 0, 256)), None);
        assert_eq!(base.load(&ldg(MemSize::B32, 4, 0, kargs::BYTES as u32)), None);
        assert_eq!(base.load(&ldg(MemSize::B32, 4, 0, 258)), None);
        let mut twice = b0.clone();
        twice.push(mov(0, 3));
        assert!(ArgBase::find(&[twice], &[vec![]]).pairs.is_empty());
        // Read before it is whole, or written outside the entry block: not a base.
        let early = vec![csr(0, csr::PARAM_LO), ldg(MemSize::B32, 4, 0, 256), csr(1, csr::PARAM_HI)];
        assert!(ArgBase::find(&[early], &[vec![]]).pairs.is_empty());
        let late = vec![vec![bra(9)], prologue()];
        assert!(ArgBase::find(&late, &[vec![1], vec![]]).pairs.is_empty());
        // An entry block something branches back to: not a base.
        assert!(ArgBase::find(&[b0], &[vec![0]]).pairs.is_empty());
    }

    #[test]
    fn moves_that_would_overwrite_a_later_source_are_not_made() {
        // r5:r6 = [256]; reloading [256] into r4:r5 as moves would write r5 (mov r4, r5 is
        // fine) ... and into r6:r7: mov r6, r5 then mov r7, r6 reads the new r6.
        let mut b0 = prologue();
        b0.extend([ldg(MemSize::B64, 5, 0, 256), add(9, 5, 6), ldg(MemSize::B64, 6, 0, 256)]);
        let mut blocks = vec![b0];
        reuse(&mut blocks, &[vec![]]);
        assert_eq!(blocks[0][4], ldg(MemSize::B64, 6, 0, 256));
    }

    #[test]
    fn the_optimiser_drops_dead_argument_loads_and_keeps_other_dead_loads() {
        // r4 = [r0 + 8] (an argument: dead, goes); r6 = [r2 + 8] (any memory: may fault, stays).
        let mut b0 = prologue();
        b0.extend([
            csr(2, csr::PARAM_LO),
            csr(3, csr::PARAM_HI),
            Instr::r(Op::Iadd64, 0, 2, 2, 0, N, N, 0),
            ldg(MemSize::B32, 4, 0, 8),
            ldg(MemSize::B32, 6, 2, 8),
            Instr::r(Op::Exit, 0, N, N, N, N, N, 0),
        ]);
        let mut blocks = vec![b0];
        crate::shader::opt::optimize(&mut blocks, &[vec![]], 8, 0).expect("optimizes");
        let loads: Vec<_> = blocks[0].iter().filter(|i| i.op == Op::Ldg).collect();
        let sum = blocks[0].iter().find(|i| i.op == Op::Iadd64).expect("the address sum stays");
        assert_eq!(loads.len(), 1, "{blocks:#?}");
        assert_eq!(loads[0].a, sum.dst, "{blocks:#?}");
    }

    /// Eight values live at once, then `[256]` loaded, used and reloaded after `pressure`
    /// values were live at once, and `[260]` loaded last: the loads the optimiser leaves.
    fn loads_left(pressure: u16) -> usize {
        let movi = |d: u16, v: u32| Instr::r(Op::Movi, 0, d, N, N, N, N, v);
        let stg = |a: u16, v: u16| Instr::r(Op::Stg, MemSize::B32 as u8, N, a, v, N, N, 0);
        // `k` values from register `first` on, all live until they are summed and stored.
        let live = |first: u16, k: u16| {
            let mut c: Vec<Instr> = (0..k).map(|j| movi(first + j, j as u32)).collect();
            c.extend((1..k).map(|j| add(first, first, first + j)));
            c.push(stg(2, first));
            c
        };
        let mut code = prologue();
        code.extend([movi(2, 0x1000), movi(3, 0)]);
        code.extend(live(20, 8));
        code.extend([ldg(MemSize::B32, 4, 0, 256), add(5, 4, 4), stg(2, 5)]);
        code.extend(live(10, pressure));
        code.extend([ldg(MemSize::B32, 6, 0, 256), add(7, 6, 6), stg(2, 7)]);
        // The argument pair stays live to the end either way.
        code.extend([ldg(MemSize::B32, 8, 0, 260), stg(2, 8)]);
        code.push(Instr::r(Op::Exit, 0, N, N, N, N, N, 0));
        let mut blocks = vec![code];
        crate::shader::opt::optimize(&mut blocks, &[vec![]], 64, 0).expect("optimizes");
        blocks[0].iter().filter(|i| i.op == Op::Ldg).count()
    }

    #[test]
    fn a_reload_stays_where_keeping_the_value_would_cost_a_register() {
        // Below the kernel's peak, the value rides along in its register.
        assert_eq!(loads_left(2), 2);
        // At the peak, keeping it would need a register more than the kernel has; the
        // reload needs none.
        assert_eq!(loads_left(8), 3);
    }
}
