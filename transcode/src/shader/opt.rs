//! Register optimisation of the emitted program, between lowering and layout.
//!
//! Lowering gives every SSA value fresh registers and copies freely (loads of promoted
//! variables, phi edge copies, composite moves, ray assembly), so a kernel is mostly moves
//! over hundreds of registers. This pass removes that waste without changing a result:
//!
//! First, **private words in registers** (`private.rs`): when every private access is a
//! whole-word load or store at a constant address, each word becomes a register (kept only
//! when the steps below then allocate no more registers than without it).
//!
//! 0. **Kernel-argument loads reused** (`args.rs`): a push-constant (or other argument)
//!    load whose words every path has already put in registers becomes moves.
//! 1. **Copy propagation**, inside each block: after `mov d, s`, later reads of `d` read `s`
//!    until either register is written again.
//! 2. **Copy coalescing**, inside each block: `x = op ..; .. mov d, x` where `x` has no other
//!    definition or use and `d` is untouched in between becomes `d = op ..`.
//! 3. **Dead-code elimination** with global liveness: an instruction whose results are never
//!    read goes, if it has no effect besides its destination (ALU, FMA, DIV, SFU, CSR and
//!    cross-lane ops, and loads from the kernel-argument block; never other memory, image,
//!    ray-tracing or control ops).
//! 4. **Register allocation**: every register (or group of registers that some instruction
//!    uses as a range) gets a live interval over the layout, and a linear scan packs the
//!    intervals into as few registers as it can.
//!
//! **Why per-lane reasoning is sound under SIMT.** Every register write is masked by the
//! active lanes, and the reconvergence stack runs each lane along exactly its own path
//! through the CFG (a lane parked at a reconvergence point resumes where its own path goes
//! next: the point post-dominates its branch). So each lane sees the program as a scalar
//! thread would, and lanes inactive in a region keep their registers because, on their own
//! path, the region's writes never happened. The analyses here are therefore the scalar,
//! per-lane ones over all CFG paths. The cross-lane ops read other lanes' registers, but only
//! of lanes active at the same instruction, for which the operand is live by the same
//! per-lane argument. Propagation and coalescing stay inside a block (one mask throughout),
//! which keeps them simple. Registers start at zero at launch: a register some path reads
//! before writing is live at the entry, so its interval starts at the first instruction and
//! nothing else ever shares its register before that read.
//!
//! Ranges (64-bit pairs, vectors of loads and image ops, the 12-register TRACE ray, window
//! reads) are kept intact: registers used inside any range operand are allocated as one
//! contiguous unit, and only single-register operands are propagated into.

use super::args;
use super::private;
use std::collections::{BTreeSet, BinaryHeap};
use vortex_model::abi::isa::{Instr, Op, Operands, REG_NONE};

/// Whether `i` does nothing but write its destination, so it may go when that is dead
/// ([`Instr::effect_free`], from the ISA table: no memory, control or ray-tracing effect, and
/// a modifier the device accepts).
fn removable(i: &Instr) -> bool {
    i.effect_free()
}

/// Whether `i` computes a whole row of results from its (single-register) sources before it
/// writes its (single-register) destination, so the destination may share a register with
/// a source: the plain ALU-style ops. Everything else (ranges, memory, RTU) gets a
/// destination distinct from its sources.
fn reads_before_write(i: &Instr, ops: &Operands) -> bool {
    removable(i) && ops.iter().all(|o| o.width == 1)
}

/// What the pass did, for the emitter.
pub(crate) struct Optimized {
    pub num_regs: u32,
    /// Per block, per instruction: the register its destination had before allocation
    /// (REG_NONE when it writes none), so listings can still name values.
    pub virt_dst: Vec<Vec<u16>>,
}

/// Caps on the work the pass takes on: beyond these, the kernel is left as lowered.
const MAX_BITSET_WORDS: usize = 1 << 21;
const ROUNDS: usize = 4;

/// Optimises `blocks` (layout order; `succ[b]` are the layout indices control can go to
/// after block `b`, fall-through included) over `num_regs` registers; `private_bytes` is the
/// kernel's private memory per lane. Returns `None`, with the code untouched, when the
/// program is not one the pass understands (a branch inside a block, an out-of-range
/// operand) or is too large; the assembler then reports or takes it as it is.
///
/// Private words promoted to registers stay live where their memory held them, so the
/// promotion is kept only when the kernel then allocates no more registers than without
/// it: registers decide how many warps a core keeps resident (`[core] register_file`).
pub(crate) fn optimize(
    blocks: &mut [Vec<Instr>],
    succ: &[Vec<usize>],
    num_regs: u32,
    private_bytes: u32,
) -> Option<Optimized> {
    let n = num_regs as usize;
    if !understood(blocks, succ, n) {
        return None;
    }
    let promoted = private::promote(blocks, succ, n, private_bytes).filter(|(p, m)| understood(p, succ, *m));
    let plain = optimize_over(blocks, succ, n);
    if let Some((mut code, m)) = promoted {
        let p = optimize_over(&mut code, succ, m);
        if p.num_regs <= plain.num_regs {
            blocks.clone_from_slice(&code);
            return Some(p);
        }
    }
    Some(plain)
}

/// Whether the pass understands the program (see [`optimize`]) and can afford it.
fn understood(blocks: &[Vec<Instr>], succ: &[Vec<usize>], n: usize) -> bool {
    if blocks.is_empty() || succ.len() != blocks.len() {
        return false;
    }
    for b in blocks.iter() {
        for (k, i) in b.iter().enumerate() {
            if matches!(i.op, Op::Jmp | Op::Bra) && k + 1 != b.len() {
                return false;
            }
            for o in i.operands().iter() {
                if o.reg == REG_NONE || o.reg as usize + o.width as usize > n {
                    return false;
                }
            }
        }
    }
    if succ.iter().flatten().any(|&s| s >= blocks.len()) {
        return false;
    }
    let words = n.div_ceil(64);
    words.saturating_mul(blocks.len()).saturating_mul(2) <= MAX_BITSET_WORDS
}

/// The pass proper over `n` registers, on a program [`understood`] accepts.
fn optimize_over(blocks: &mut [Vec<Instr>], succ: &[Vec<usize>], n: usize) -> Optimized {
    let mut fwd = Forward::new(n);
    rounds(blocks, succ, n, &mut fwd);
    reuse_args(blocks, succ, n, &mut fwd);
    let live = Liveness::compute(blocks, succ, n);
    let mut virt_dst: Vec<Vec<u16>> = blocks
        .iter()
        .map(|b| b.iter().map(|i| i.operands().iter().find(|o| o.write).map_or(REG_NONE, |o| o.reg)).collect())
        .collect();
    let num_regs = match allocate(blocks, &live, n) {
        Some(k) => {
            // Copies whose ends landed in one register are no-ops now.
            for (code, virt) in blocks.iter_mut().zip(&mut virt_dst) {
                let keep: Vec<bool> = code.iter().map(|i| !(i.op == Op::Mov && i.dst == i.a)).collect();
                let mut t = 0;
                code.retain(|_| {
                    t += 1;
                    keep[t - 1]
                });
                t = 0;
                virt.retain(|_| {
                    t += 1;
                    keep[t - 1]
                });
            }
            k
        }
        None => n as u32,
    };
    Optimized { num_regs, virt_dst }
}

/// Copy propagation, coalescing and dead code, repeated until nothing changes.
fn rounds(blocks: &mut [Vec<Instr>], succ: &[Vec<usize>], n: usize, fwd: &mut Forward) {
    for _ in 0..ROUNDS {
        let mut changed = false;
        for b in blocks.iter_mut() {
            changed |= fwd.propagate(b);
        }
        changed |= coalesce(blocks, n);
        let live = Liveness::compute(blocks, succ, n);
        let base = args::ArgBase::find(blocks, succ);
        changed |= dce(blocks, &live, &base);
        if !changed {
            break;
        }
    }
}

/// Kernel-argument loads tried for reuse ([`args::candidates`]), in program order.
const REUSE_TRIALS: usize = 32;

/// Replaces the kernel-argument loads whose words are already in registers with moves where
/// that costs no register. A reused value stays live from its first load on, and registers
/// decide how many warps a core keeps resident (`[core] register_file`), so a load is
/// cheaper than a lost warp. All candidates are tried at once, and if that allocates more
/// registers than none, each in program order (at most [`REUSE_TRIALS`]), kept when the
/// kernel with it allocates no more than with none. A trial allocates the code as it is
/// (the copies hinted into one register); the rounds that then clean up the moves could
/// still move the count, so the cleaned result is checked once more and dropped if it grew.
/// Leaves `blocks` as the rounds left them either way.
fn reuse_args(blocks: &mut [Vec<Instr>], succ: &[Vec<usize>], n: usize, fwd: &mut Forward) {
    let found = args::candidates(blocks, succ);
    if found.is_empty() {
        return;
    }
    let regs = |code: &[Vec<Instr>]| -> u32 {
        let mut t = code.to_vec();
        let live = Liveness::compute(&t, succ, n);
        allocate(&mut t, &live, n).unwrap_or(n as u32)
    };
    let budget = regs(blocks);
    // Splices `c` into `code`, where `shift` counts what earlier splices added to the block.
    let splice = |code: &mut [Vec<Instr>], c: &args::Reuse, shift: &mut [usize]| {
        let at = c.at + shift[c.block];
        code[c.block].splice(at..at + 1, c.moves.iter().copied());
        shift[c.block] += c.moves.len() - 1;
    };
    let mut work = blocks.to_vec();
    let mut shift = vec![0usize; blocks.len()];
    for c in &found {
        splice(&mut work, c, &mut shift);
    }
    if regs(&work) > budget {
        work = blocks.to_vec();
        shift.fill(0);
        for c in found.iter().take(REUSE_TRIALS) {
            let mut trial = work.clone();
            let mut s = shift.clone();
            splice(&mut trial, c, &mut s);
            if regs(&trial) <= budget {
                work = trial;
                shift = s;
            }
        }
    }
    rounds(&mut work, succ, n, fwd);
    if regs(&work) <= budget {
        blocks.clone_from_slice(&work);
    }
}

/// Block-local copy propagation state: `src[d]` is the register `d` is a copy of.
struct Forward {
    src: Vec<u16>,
    /// `copies[s]`: registers that were made copies of `s` (entries may be stale: checked
    /// against `src`).
    copies: Vec<Vec<u16>>,
    touched: Vec<u16>,
}

impl Forward {
    fn new(n: usize) -> Forward {
        Forward { src: vec![REG_NONE; n], copies: vec![Vec::new(); n], touched: Vec::new() }
    }

    /// `r` is written: no copy relation involving it holds any more.
    fn kill(&mut self, r: u16) {
        self.src[r as usize] = REG_NONE;
        let cs = std::mem::take(&mut self.copies[r as usize]);
        for &d in &cs {
            if self.src[d as usize] == r {
                self.src[d as usize] = REG_NONE;
            }
        }
        // Keep the allocation.
        let mut cs = cs;
        cs.clear();
        self.copies[r as usize] = cs;
    }

    fn propagate(&mut self, code: &mut Vec<Instr>) -> bool {
        let mut changed = false;
        let mut out = Vec::with_capacity(code.len());
        for mut i in code.drain(..) {
            let ops = i.operands();
            let wide = ops.iter().any(|o| o.width > 1);
            let writes =
                |r: u16| ops.iter().any(|o| o.write && (o.reg as u32..o.reg as u32 + o.width).contains(&(r as u32)));
            for o in ops.iter().filter(|o| !o.write && o.width == 1) {
                let s = self.src[o.reg as usize];
                if s == REG_NONE {
                    continue;
                }
                // Ops with ranges: never make a source overlap a destination it did not
                // already overlap.
                if wide && writes(s) {
                    continue;
                }
                i.set_reg(o.field, s);
                changed = true;
            }
            if i.op == Op::Mov && i.dst == i.a {
                changed = true;
                continue;
            }
            for o in ops.iter().filter(|o| o.write) {
                for r in o.reg..o.reg + o.width as u16 {
                    self.kill(r);
                }
            }
            if i.op == Op::Mov {
                self.src[i.dst as usize] = i.a;
                self.copies[i.a as usize].push(i.dst);
                self.touched.push(i.dst);
                self.touched.push(i.a);
            }
            out.push(i);
        }
        *code = out;
        for r in self.touched.drain(..) {
            self.src[r as usize] = REG_NONE;
            self.copies[r as usize].clear();
        }
        changed
    }
}

/// Per register over the whole program: definitions, uses, and whether it appears in a
/// range operand.
pub(super) fn counts(blocks: &[Vec<Instr>], n: usize) -> (Vec<u32>, Vec<u32>, Vec<bool>) {
    let (mut defs, mut uses, mut wide) = (vec![0u32; n], vec![0u32; n], vec![false; n]);
    for i in blocks.iter().flatten() {
        for o in i.operands().iter() {
            let t = if o.write { &mut defs } else { &mut uses };
            for r in o.reg as usize..o.reg as usize + o.width as usize {
                t[r] += 1;
                wide[r] |= o.width > 1;
            }
        }
    }
    (defs, uses, wide)
}

/// How far (in instructions) coalescing looks for conflicting references.
const COALESCE_WINDOW: usize = 512;

fn refers_to(i: &Instr, r: u16) -> bool {
    i.operands().iter().any(|o| (o.reg as u32..o.reg as u32 + o.width).contains(&(r as u32)))
}

/// Block-local coalescing. `x = op ..; ..; mov d, x; ..` where `x` has no other definition,
/// all its uses (single-register operands) follow its definition in this block, and `d` is
/// neither read nor written from there to the last use of `x` (the copy aside): `op` writes
/// `d`, the uses of `x` read `d`, and the copy goes.
fn coalesce(blocks: &mut [Vec<Instr>], n: usize) -> bool {
    let (mut defs, mut uses, wide) = counts(blocks, n);
    const NONE: u32 = u32::MAX;
    let mut last_def = vec![NONE; n];
    // Per block: uses of each register, first and last use.
    let mut buses = vec![0u32; n];
    let mut first_use = vec![NONE; n];
    let mut last_use = vec![NONE; n];
    let mut touched: Vec<usize> = Vec::new();
    let mut changed = false;
    for code in blocks.iter_mut() {
        for (t, i) in code.iter().enumerate() {
            for o in i.operands().iter().filter(|o| !o.write) {
                for r in o.reg as usize..o.reg as usize + o.width as usize {
                    buses[r] += 1;
                    first_use[r] = first_use[r].min(t as u32);
                    last_use[r] = t as u32;
                    touched.push(r);
                }
            }
        }
        let mut dead = vec![false; code.len()];
        for j in 0..code.len() {
            let i = code[j];
            if i.op == Op::Mov && i.dst != i.a {
                let (d, x) = (i.dst as usize, i.a as usize);
                let k = last_def[x];
                let ok = k != NONE
                    && defs[x] == 1
                    && !wide[x]
                    && buses[x] == uses[x]
                    && first_use[x] > k
                    && (last_use[x] - k) as usize <= COALESCE_WINDOW;
                if ok {
                    let (k, l) = (k as usize, last_use[x] as usize);
                    let def = code[k];
                    let dops = def.operands();
                    let single = dops.iter().filter(|o| o.write).count() == 1
                        && dops.iter().any(|o| o.write && o.width == 1 && o.reg as usize == x);
                    let at_def = !refers_to(&def, d as u16) || reads_before_write(&def, &dops);
                    let clear = (k + 1..=l).all(|t| t == j || dead[t] || !refers_to(&code[t], d as u16));
                    if single && at_def && clear {
                        code[k].dst = d as u16;
                        dead[j] = true;
                        let mut renamed = 0;
                        for t in k + 1..=l {
                            if t == j || dead[t] {
                                continue;
                            }
                            let mut ins = code[t];
                            for o in ins.operands().iter().filter(|o| !o.write && o.reg as usize == x) {
                                ins.set_reg(o.field, d as u16);
                                renamed += 1;
                            }
                            code[t] = ins;
                        }
                        uses[d] += renamed;
                        buses[d] += renamed;
                        if renamed > 0 {
                            first_use[d] = first_use[d].min(k as u32 + 1);
                            last_use[d] = if last_use[d] == NONE { l as u32 } else { last_use[d].max(l as u32) };
                        }
                        defs[x] = 0;
                        uses[x] = 0;
                        buses[x] = 0;
                        last_def[x] = NONE;
                        last_def[d] = k as u32;
                        touched.push(d);
                        changed = true;
                        continue;
                    }
                }
            }
            for o in i.operands().iter().filter(|o| o.write) {
                let rs = o.reg as usize..o.reg as usize + o.width as usize;
                last_def[rs.clone()].fill(j as u32);
                touched.extend(rs);
            }
        }
        if dead.iter().any(|&x| x) {
            let mut k = 0;
            code.retain(|_| {
                k += 1;
                !dead[k - 1]
            });
        }
        for r in touched.drain(..) {
            last_def[r] = NONE;
            buses[r] = 0;
            first_use[r] = NONE;
            last_use[r] = NONE;
        }
    }
    changed
}

/// Fixed-size bit sets over registers.
#[derive(Clone, PartialEq, Eq)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn get(&self, r: usize) -> bool {
        self.0[r / 64] >> (r % 64) & 1 != 0
    }
    fn set(&mut self, r: usize) {
        self.0[r / 64] |= 1 << (r % 64);
    }
    fn clear(&mut self, r: usize) {
        self.0[r / 64] &= !(1 << (r % 64));
    }
    fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(k, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(k * 64 + b)
            })
        })
    }
}

/// Per-lane liveness at block boundaries.
struct Liveness {
    live_in: Vec<Bits>,
    live_out: Vec<Bits>,
}

impl Liveness {
    fn compute(blocks: &[Vec<Instr>], succ: &[Vec<usize>], n: usize) -> Liveness {
        let nb = blocks.len();
        // gen: read before written in the block; kill: written in the block.
        let mut gen = vec![Bits::new(n); nb];
        let mut kill = vec![Bits::new(n); nb];
        for (b, code) in blocks.iter().enumerate() {
            for i in code.iter().rev() {
                let ops = i.operands();
                for o in ops.iter().filter(|o| o.write) {
                    for r in o.reg as usize..o.reg as usize + o.width as usize {
                        kill[b].set(r);
                        gen[b].clear(r);
                    }
                }
                for o in ops.iter().filter(|o| !o.write) {
                    for r in o.reg as usize..o.reg as usize + o.width as usize {
                        gen[b].set(r);
                    }
                }
            }
        }
        let mut live_in = gen.clone();
        let mut live_out = vec![Bits::new(n); nb];
        loop {
            let mut changed = false;
            for b in (0..nb).rev() {
                let mut out = Bits::new(n);
                for &s in &succ[b] {
                    for (o, x) in out.0.iter_mut().zip(&live_in[s].0) {
                        *o |= x;
                    }
                }
                let mut inn = gen[b].clone();
                for ((x, o), k) in inn.0.iter_mut().zip(&out.0).zip(&kill[b].0) {
                    *x |= o & !k;
                }
                if inn != live_in[b] {
                    live_in[b] = inn;
                    changed = true;
                }
                live_out[b] = out;
            }
            if !changed {
                break;
            }
        }
        Liveness { live_in, live_out }
    }
}

/// Removes the removable instructions (and the kernel-argument loads) whose results are all
/// dead.
fn dce(blocks: &mut [Vec<Instr>], live: &Liveness, base: &args::ArgBase) -> bool {
    let mut changed = false;
    for (b, code) in blocks.iter_mut().enumerate() {
        let mut l = live.live_out[b].clone();
        let mut dead = vec![false; code.len()];
        for (k, i) in code.iter().enumerate().rev() {
            let ops = i.operands();
            let writes =
                || ops.iter().filter(|o| o.write).flat_map(|o| o.reg as usize..o.reg as usize + o.width as usize);
            if (removable(i) || base.is_load(i)) && writes().all(|r| !l.get(r)) {
                dead[k] = true;
                continue;
            }
            for r in writes() {
                l.clear(r);
            }
            for o in ops.iter().filter(|o| !o.write) {
                for r in o.reg as usize..o.reg as usize + o.width as usize {
                    l.set(r);
                }
            }
        }
        if dead.iter().any(|&x| x) {
            changed = true;
            let mut k = 0;
            code.retain(|_| {
                k += 1;
                !dead[k - 1]
            });
        }
    }
    changed
}

/// Linear-scan allocation over live intervals; rewrites every register operand. Returns the
/// new register count, or `None` (code untouched) if it would not be smaller.
fn allocate(blocks: &mut [Vec<Instr>], live: &Liveness, n: usize) -> Option<u32> {
    const NONE: u32 = u32::MAX;
    // Units: maximal runs of registers that range operands tie together; every other
    // register is a unit of its own.
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for i in blocks.iter().flatten() {
        for o in i.operands().iter().filter(|o| o.width > 1) {
            ranges.push((o.reg as u32, o.reg as u32 + o.width - 1));
        }
    }
    ranges.sort_unstable();
    let mut unit_of = vec![NONE; n];
    let mut units: Vec<(u32, u32)> = Vec::new(); // (first, last register)
    for (lo, hi) in ranges {
        match units.last_mut() {
            Some(u) if lo <= u.1 => u.1 = u.1.max(hi),
            _ => units.push((lo, hi)),
        }
    }
    for (k, &(lo, hi)) in units.iter().enumerate() {
        for r in lo..=hi {
            unit_of[r as usize] = k as u32;
        }
    }
    // Intervals over positions: instruction p reads at 2p (2p + 1 unless it reads before it
    // writes) and writes at 2p + 1.
    let mut span: Vec<(u32, u32)> = vec![(NONE, 0); units.len()];
    let mut unit = |r: usize, units: &mut Vec<(u32, u32)>, span: &mut Vec<(u32, u32)>| -> usize {
        if unit_of[r] == NONE {
            unit_of[r] = units.len() as u32;
            units.push((r as u32, r as u32));
            span.push((NONE, 0));
        }
        unit_of[r] as usize
    };
    let mut p = 0u32;
    for (b, code) in blocks.iter().enumerate() {
        let (first, last) = (2 * p, (2 * (p + code.len() as u32)).saturating_sub(1).max(2 * p));
        for r in live.live_in[b].ones() {
            let u = unit(r, &mut units, &mut span);
            span[u] = (span[u].0.min(first), span[u].1.max(first));
        }
        for r in live.live_out[b].ones() {
            let u = unit(r, &mut units, &mut span);
            span[u] = (span[u].0.min(last), span[u].1.max(last));
        }
        for i in code {
            let ops = i.operands();
            let early = reads_before_write(i, &ops);
            for o in ops.iter() {
                let at = if o.write || !early { 2 * p + 1 } else { 2 * p };
                for r in o.reg as usize..o.reg as usize + o.width as usize {
                    let u = unit(r, &mut units, &mut span);
                    span[u] = (span[u].0.min(at), span[u].1.max(at));
                }
            }
            p += 1;
        }
    }
    // Copies between single registers: each end prefers the other's register, so that a
    // copy from a value that dies into one that starts there becomes a no-op.
    let mut hints: Vec<Vec<u32>> = vec![Vec::new(); units.len()];
    for i in blocks.iter().flatten().filter(|i| i.op == Op::Mov) {
        let (d, s) = (unit_of[i.dst as usize] as usize, unit_of[i.a as usize] as usize);
        let single = |u: usize| units[u].0 == units[u].1;
        if d != s && single(d) && single(s) {
            for (x, y) in [(d, s), (s, d)] {
                if hints[x].len() < 4 {
                    hints[x].push(y as u32);
                }
            }
        }
    }
    // Linear scan, lowest free register first.
    let mut order: Vec<usize> = (0..units.len()).filter(|&u| span[u].0 != NONE).collect();
    order.sort_unstable_by_key(|&u| (span[u].0, u));
    let mut base = vec![NONE; units.len()];
    let mut active: BinaryHeap<std::cmp::Reverse<(u32, usize)>> = BinaryHeap::new();
    let mut free: BTreeSet<u32> = BTreeSet::new();
    let mut top = 0u32;
    for u in order {
        let (start, end) = span[u];
        while let Some(&std::cmp::Reverse((e, v))) = active.peek() {
            if e >= start {
                break;
            }
            active.pop();
            let size = units[v].1 - units[v].0 + 1;
            free.extend(base[v]..base[v] + size);
        }
        let size = units[u].1 - units[u].0 + 1;
        let hinted = hints[u].iter().map(|&h| base[h as usize]).find(|b| *b != NONE && free.contains(b));
        let b = if let Some(b) = hinted.filter(|_| size == 1) {
            free.remove(&b);
            b
        } else if size == 1 {
            match free.pop_first() {
                Some(r) => r,
                None => {
                    top += 1;
                    top - 1
                }
            }
        } else {
            // The lowest run of `size` free registers, possibly extended past the top.
            let mut found = None;
            let (mut run_start, mut run_len) = (0u32, 0u32);
            for &r in &free {
                if run_len > 0 && r == run_start + run_len {
                    run_len += 1;
                } else {
                    run_start = r;
                    run_len = 1;
                }
                if run_len == size {
                    found = Some(run_start);
                    break;
                }
            }
            let b = match found {
                Some(b) => b,
                None if run_len > 0 && run_start + run_len == top => run_start,
                None => top,
            };
            for r in b..b + size {
                free.remove(&r);
            }
            top = top.max(b + size);
            b
        };
        base[u] = b;
        active.push(std::cmp::Reverse((end, u)));
    }
    if top as usize >= n {
        return None;
    }
    for i in blocks.iter_mut().flatten() {
        for o in i.operands().iter() {
            let u = unit_of[o.reg as usize] as usize;
            let r = base[u] + (o.reg as u32 - units[u].0);
            i.set_reg(o.field, r as u16);
        }
    }
    Some(top.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use vortex_model::abi::isa::{Field, MemSize, RED_WIDE};
    use vortex_model::core::decode::operand_widths;

    const N: u16 = REG_NONE;

    /// Two private words stored in the entry block and read after a stretch that needs four
    /// more registers; `words` = 1 reads only the first.
    fn private_words(words: u32) -> Vec<Vec<Instr>> {
        let r = |op, d, a, b, imm| Instr::r(op, 0, d, a, b, N, N, imm);
        let st = |off, v| Instr::r(Op::Stp, MemSize::B32 as u8, N, 0, v, N, N, off);
        let ld = |d, off| Instr::r(Op::Ldp, MemSize::B32 as u8, d, 0, N, N, N, off);
        let mut tail = vec![
            r(Op::Movi, 3, N, N, 1),
            r(Op::Movi, 4, N, N, 2),
            r(Op::Movi, 5, N, N, 3),
            r(Op::Movi, 6, N, N, 4),
            r(Op::Iadd, 7, 3, 4, 0),
            r(Op::Iadd, 8, 5, 6, 0),
            r(Op::Iadd, 9, 7, 8, 0),
            ld(10, 0),
        ];
        if words == 2 {
            tail.extend([ld(11, 4), r(Op::Iadd, 10, 10, 11, 0)]);
        }
        tail.extend([
            r(Op::Iadd, 12, 9, 10, 0),
            r(Op::Movi, 14, N, N, 0),
            r(Op::Movi, 15, N, N, 0),
            Instr::r(Op::Stg, MemSize::B32 as u8, N, 14, 12, N, N, 0),
            r(Op::Exit, N, N, N, 0),
        ]);
        vec![
            vec![
                r(Op::Movi, 0, N, N, 0),
                r(Op::Movi, 1, N, N, 7),
                r(Op::Movi, 2, N, N, 9),
                st(0, 1),
                st(4, 2),
                r(Op::Jmp, N, N, N, 1),
            ],
            tail,
        ]
    }

    #[test]
    fn private_words_become_registers_unless_that_costs_registers() {
        let succ = vec![vec![1], vec![]];
        let private = |b: &[Vec<Instr>]| b.iter().flatten().filter(|i| matches!(i.op, Op::Ldp | Op::Stp)).count();
        // One word: its register replaces the address register across the stretch.
        let mut one = private_words(1);
        let o = optimize(&mut one, &succ, 16, 8).expect("optimizes");
        assert_eq!(private(&one), 0, "{one:?}");
        let mut kept = private_words(1);
        let plain = optimize(&mut kept, &succ, 16, 0).expect("optimizes");
        assert_eq!(private(&kept), 3, "outside the private bytes: left as it is");
        assert!(o.num_regs <= plain.num_regs);
        // Two words live across the stretch where one address register was: kept in memory.
        let mut two = private_words(2);
        let o = optimize(&mut two, &succ, 16, 8).expect("optimizes");
        assert_eq!(private(&two), 4, "{two:?}");
        let (mut forced, m) = private::promote(&private_words(2), &succ, 16, 8).expect("promotable");
        let p = optimize_over(&mut forced, &succ, m);
        assert!(p.num_regs > o.num_regs, "promoted {} against {}", p.num_regs, o.num_regs);
    }

    #[test]
    fn operand_table_matches_the_decoder() {
        // Every op, with a spread of modifiers and immediates (memory sizes, wide atomics
        // and reductions, window read counts) and with optional fields present or absent.
        for &op in Op::ALL {
            for m in 0..8u8 {
                for imm in [0u32, 1, RED_WIDE, 5] {
                    for opt in [N, 9] {
                        let i = Instr::r(op, m, 1, 20, opt, 40, opt, imm);
                        let mut mine: Vec<(u16, u32)> = i.operands().iter().map(|o| (o.reg, o.width)).collect();
                        let mut theirs = operand_widths(&i);
                        mine.sort_unstable();
                        theirs.sort_unstable();
                        if op != Op::Bra {
                            assert_eq!(mine, theirs, "{op:?} mod {m} imm {imm}");
                        }
                        for o in i.operands().iter() {
                            assert_eq!(o.write, o.field == Field::Dst, "{op:?}");
                        }
                    }
                }
            }
        }
        let b = Instr::bra(7, 1, 2, 3);
        assert_eq!(b.operands().iter().map(|o| (o.reg, o.width)).collect::<Vec<_>>(), operand_widths(&b));
    }

    /// What the pass may delete when its destination is dead, written out: everything but
    /// the control, memory, image, node-intersection (it faults on a bad node) and ray-tracing ops, with a `mod` the device accepts (a bad
    /// one faults when executed, which is an effect).
    #[test]
    fn removable_matches_expectations() {
        use Op::*;
        let effects = [
            Nop, Exit, Jmp, Bra, Bar, Fence, Trap, Demote, Ldg, Stg, Ldl, Stl, Ldp, Stp, Atomg, Atoml, Ild, Ist, Iatom,
            Tex, Exp, Isect, Rqlog, Trace, Wait, Cont, Getw, Getwf,
        ];
        let accepted = |op: Op, m: u8| match op {
            Icmp | Icmp64 => m <= 9,
            Fcmp | Dcmp => m <= 15,
            Fround | Dround => m <= 4,
            Fsfu => m <= 17,
            Vote => m <= 2,
            Shfl => m <= 3,
            Red => m <= 12,
            Deriv => m <= 3,
            Ext => (1..=31).contains(&m),
            _ => true,
        };
        for &op in Op::ALL {
            for m in 0..=255u8 {
                let i = Instr::r(op, m, 1, 2, 3, 4, 5, 0);
                assert_eq!(removable(&i), !effects.contains(&op) && accepted(op, m), "{op:?} mod {m}");
            }
        }
    }

    fn mov(d: u16, s: u16) -> Instr {
        Instr::r(Op::Mov, 0, d, s, N, N, N, 0)
    }
    fn movi(d: u16, v: u32) -> Instr {
        Instr::r(Op::Movi, 0, d, N, N, N, N, v)
    }
    fn op2(op: Op, d: u16, a: u16, b: u16) -> Instr {
        Instr::r(op, 0, d, a, b, N, N, 0)
    }
    fn stg(addr: u16, v: u16) -> Instr {
        Instr::r(Op::Stg, MemSize::B32 as u8, N, addr, v, N, N, 0)
    }
    fn exit() -> Instr {
        Instr::r(Op::Exit, 0, N, N, N, N, N, 0)
    }

    /// Runs straight-line code on one lane (registers zero at the start) and returns the
    /// stores it made as (address register value, stored value).
    fn run(code: &[Instr], nregs: usize) -> Vec<(u64, u32)> {
        let mut r = vec![0u32; nregs.max(64)];
        let mut stores = Vec::new();
        for i in code {
            let (d, a, b) = (i.dst as usize, i.a as usize, i.b as usize);
            match i.op {
                Op::Mov => r[d] = r[a],
                Op::Movi => r[d] = i.imm,
                Op::Iadd => r[d] = r[a].wrapping_add(r[b]),
                Op::Imul => r[d] = r[a].wrapping_mul(r[b]),
                Op::Iadd64 => {
                    let x = (r[a] as u64 | (r[a + 1] as u64) << 32).wrapping_add(r[b] as u64 | (r[b + 1] as u64) << 32);
                    r[d] = x as u32;
                    r[d + 1] = (x >> 32) as u32;
                }
                Op::Stg => stores.push((r[a] as u64 | (r[a + 1] as u64) << 32, r[b])),
                Op::Exit => break,
                op => panic!("test interpreter: {op:?}"),
            }
        }
        stores
    }

    fn opt1(code: &[Instr], nregs: u32) -> (Vec<Instr>, u32) {
        let mut blocks = vec![code.to_vec()];
        let o = optimize(&mut blocks, &[vec![]], nregs, 0).expect("optimizes");
        (blocks.pop().unwrap(), o.num_regs)
    }

    fn same(code: &[Instr], nregs: u32) -> (Vec<Instr>, u32) {
        let (out, n) = opt1(code, nregs);
        assert_eq!(run(code, nregs as usize), run(&out, n as usize), "{code:#?}\n->\n{out:#?}");
        (out, n)
    }

    #[test]
    fn copies_propagate_and_die() {
        // r10:11 address; r2 = r1 + r1 through two copies.
        let code = [
            movi(10, 0x100),
            movi(11, 0),
            movi(1, 7),
            mov(2, 1),
            mov(3, 2),
            op2(Op::Iadd, 4, 3, 2),
            stg(10, 4),
            exit(),
        ];
        let (out, n) = same(&code, 12);
        assert!(out.iter().all(|i| i.op != Op::Mov), "{out:#?}");
        assert_eq!(out.len(), 6);
        assert!(n <= 4, "{n} registers");
    }

    #[test]
    fn no_propagation_across_a_redefinition() {
        let code = [
            movi(10, 0x100),
            movi(11, 0),
            movi(1, 7),
            mov(2, 1),
            movi(1, 9), // the source changes: r2 still holds 7
            op2(Op::Iadd, 3, 2, 1),
            stg(10, 3),
            mov(4, 3),
            movi(3, 1), // the copy changes: r4 still holds 16
            op2(Op::Iadd, 5, 4, 3),
            stg(10, 5),
            exit(),
        ];
        let (out, _) = same(&code, 12);
        assert_eq!(run(&out, 64), vec![(0x100, 16), (0x100, 17)]);
    }

    #[test]
    fn effects_are_kept_and_dead_values_go() {
        let code = [
            movi(10, 0x100),
            movi(11, 0),
            movi(1, 7),
            op2(Op::Imul, 2, 1, 1),                                   // dead
            Instr::r(Op::Ldg, MemSize::B32 as u8, 3, 10, N, N, N, 0), // dead, but may fault
            Instr::r(Op::Atomg, 0, 4, 10, 1, N, N, 0),                // result dead, effect kept
            Instr::r(Op::Csr, 0, 5, N, N, N, N, 0xCC0),               // dead
            stg(10, 1),
            Instr::r(Op::Bar, 0, N, N, N, N, N, 0),
            exit(),
        ];
        let (out, _) = opt1(&code, 12);
        let ops: Vec<Op> = out.iter().map(|i| i.op).collect();
        assert_eq!(ops, [Op::Movi, Op::Movi, Op::Movi, Op::Ldg, Op::Atomg, Op::Stg, Op::Bar, Op::Exit]);
    }

    #[test]
    fn ranges_stay_contiguous() {
        // A 64-bit add whose operands are assembled by moves: the pair registers keep their
        // layout, the copies into them are not propagated into the wide operands.
        let code = [
            movi(10, 0x100),
            movi(11, 0),
            movi(20, 5),
            movi(21, 1),
            mov(30, 20),
            mov(31, 21),
            op2(Op::Iadd64, 40, 30, 10),
            mov(50, 40),
            stg(10, 50),
            stg(10, 41),
            exit(),
        ];
        let (out, n) = same(&code, 60);
        let add = out.iter().find(|i| i.op == Op::Iadd64).unwrap();
        let w = add.operands();
        let regs: Vec<u16> = w.iter().map(|o| o.reg).collect();
        // The destination pair and the source pairs do not overlap.
        for (k, x) in regs.iter().enumerate() {
            for y in &regs[k + 1..] {
                assert!(x.abs_diff(*y) >= 2, "{add:?}");
            }
        }
        assert!(n < 60);
    }

    #[test]
    fn coalescing_writes_the_copy_destination_directly() {
        // x = a + b; mov d, x  ->  d = a + b, also when the op reads d itself.
        let code = [
            movi(10, 0x100),
            movi(11, 0),
            movi(1, 3),
            movi(2, 4),
            op2(Op::Iadd, 5, 1, 2),
            mov(1, 5), // r1 = r1 + r2
            stg(10, 1),
            op2(Op::Iadd, 6, 1, 2),
            stg(10, 2), // reads r2 between the def of r6 and the copy into r2: fine
            mov(2, 6),
            stg(10, 2),
            exit(),
        ];
        let (out, _) = same(&code, 12);
        assert!(out.iter().all(|i| i.op != Op::Mov), "{out:#?}");
    }

    #[test]
    fn coalescing_renames_later_uses_and_drops_copies_that_land_in_one_register() {
        // x = a * a; mov d, x; uses of x after the copy (propagation's doing) read d.
        let code = [
            movi(10, 0x100),
            movi(11, 0),
            movi(1, 3),
            op2(Op::Imul, 5, 1, 1),
            mov(6, 5),
            op2(Op::Iadd, 7, 5, 6),
            stg(10, 7),
            stg(10, 6),
            exit(),
        ];
        let (out, n) = same(&code, 12);
        assert!(out.iter().all(|i| i.op != Op::Mov), "{out:#?}");
        assert_eq!(run(&out, 64), vec![(0x100, 18), (0x100, 9)]);
        assert!(n <= 4, "{n}");
    }

    #[test]
    fn coalescing_respects_reads_in_between() {
        let code = [
            movi(10, 0x100),
            movi(11, 0),
            movi(1, 3),
            op2(Op::Iadd, 5, 1, 1),
            stg(10, 1), // reads r1 after r5 is computed: r1 may not be written early
            mov(1, 5),
            stg(10, 1),
            exit(),
        ];
        let (out, _) = same(&code, 12);
        assert_eq!(run(&out, 64), vec![(0x100, 3), (0x100, 6)]);
    }

    #[test]
    fn liveness_crosses_blocks_and_keeps_uninitialized_reads_zero() {
        // b0: r1 = 5; bra r2 (never written: 0), b1, b2 ; b1: r3 = r1 ; b2: store r3 (0 on
        // the path through b2 only), exit. r3 must stay a register nothing else writes.
        let mut blocks = vec![
            vec![movi(10, 0x100), movi(11, 0), movi(1, 5), movi(7, 9), Instr::bra(2, 1, 2, 2)],
            vec![mov(3, 1), op2(Op::Iadd, 8, 7, 7), stg(10, 8)],
            vec![stg(10, 3), stg(10, 7), exit()],
        ];
        let succ = vec![vec![1, 2], vec![2], vec![]];
        let o = optimize(&mut blocks, &succ, 12, 0).unwrap();
        // r3 (read uninitialized on the b0 -> b2 path) is live from the entry, so it gets a
        // register no other value shares.
        let r3 = blocks[2][0].b;
        for i in blocks.iter().flatten() {
            for op in i.operands().iter().filter(|o| o.write) {
                if op.reg == r3 {
                    assert_eq!(i.op, Op::Mov, "{blocks:#?}");
                }
            }
        }
        assert!(o.num_regs < 12);
        // The copy into r3 crosses blocks: it stays.
        assert_eq!(blocks[1][0].op, Op::Mov);
    }
}
