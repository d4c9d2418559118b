//! Code emission: labelled blocks of VX instructions, virtual registers, parallel copies, and
//! final assembly (layout, fall-through elision, branch-target resolution).
//!
//! Branches are emitted with *labels* in their target fields; `assemble` lays the blocks out
//! in placement order and rewrites every `JMP`/`BRA` target and reconvergence point to an
//! instruction index.

use super::error::{invalid, limit, Result};
use super::opt;
use std::collections::HashMap;
use vortex_model::abi::isa::{
    disasm, AtomicOp, FloatCond, Instr, IntCond, MemSize, Op, RedOp, Round, SfuFunc, ShflMode, VoteOp, REG_NONE,
};
use vortex_model::abi::kernel::CodeRegion;
use vortex_model::core::decode::operand_widths;

pub(crate) type Label = u32;

/// Registers a kernel may use. The ISA's operand field is 16 bits (`0xFFFF` is "none"); half
/// of that, plus at most `types::MAX_VALUE_REGS` of offset into a value, never overflows.
pub(crate) const MAX_REGS: u32 = 32 * 1024;

/// Largest kernel, in instructions (the device decoder accepts 4M).
const MAX_INSTRS: usize = 1 << 22;

const N: u16 = REG_NONE;

/// One R-format instruction, built by naming its parts: `I::new(Op::Ldg).size(MemSize::B32)
/// .dst(d).a(addr).imm(off)`. Operands left out are `REG_NONE`, the modifier and the
/// immediate 0. The modifier is set through the method for what it means to the opcode
/// (`ISA.md`), so a memory size cannot be handed to a comparison by position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct I(Instr);

/// A comparison condition: `ICMP`/`ICMP64` take an [`IntCond`], `FCMP`/`DCMP` a [`FloatCond`].
pub(crate) trait Cond: Copy {
    fn code(self) -> u8;
}

impl Cond for IntCond {
    fn code(self) -> u8 {
        self as u8
    }
}

impl Cond for FloatCond {
    fn code(self) -> u8 {
        self as u8
    }
}

impl I {
    pub fn new(op: Op) -> I {
        I(Instr::r(op, 0, N, N, N, N, N, 0))
    }

    pub fn dst(mut self, r: u16) -> I {
        self.0.dst = r;
        self
    }

    pub fn a(mut self, r: u16) -> I {
        self.0.a = r;
        self
    }

    pub fn b(mut self, r: u16) -> I {
        self.0.b = r;
        self
    }

    pub fn c(mut self, r: u16) -> I {
        self.0.c = r;
        self
    }

    pub fn d(mut self, r: u16) -> I {
        self.0.d = r;
        self
    }

    pub fn imm(mut self, v: u32) -> I {
        self.0.imm = v;
        self
    }

    fn modifier(mut self, m: u8) -> I {
        self.0.modifier = m;
        self
    }

    /// Access size of a load or store.
    pub fn size(self, s: MemSize) -> I {
        self.modifier(s as u8)
    }

    /// Condition of a comparison.
    pub fn cond(self, c: impl Cond) -> I {
        self.modifier(c.code())
    }

    /// Rounding mode of `FROUND`/`DROUND`.
    pub fn round(self, r: Round) -> I {
        self.modifier(r as u8)
    }

    /// Function of `FSFU`.
    pub fn sfu(self, f: SfuFunc) -> I {
        self.modifier(f as u8)
    }

    /// Operation of `ATOMG`/`ATOML`/`IATOM`.
    pub fn atomic(self, op: AtomicOp) -> I {
        self.modifier(op as u8)
    }

    pub fn vote(self, v: VoteOp) -> I {
        self.modifier(v as u8)
    }

    pub fn shfl(self, m: ShflMode) -> I {
        self.modifier(m as u8)
    }

    pub fn red(self, op: RedOp) -> I {
        self.modifier(op as u8)
    }

    /// The signed form (`IMIN`/`IMAX`, `IMULHI`, `IMULX`, `BFE`, `FMSB`): modifier 1.
    pub fn signed(self, signed: bool) -> I {
        self.modifier(signed as u8)
    }

    /// `EXT`: the width in bits of the value in the low bits of `a`.
    pub fn width(self, bits: u32) -> I {
        self.modifier(bits as u8)
    }

    /// `GETW`/`GETWF`: how many window slots (and registers) the read covers.
    pub fn count(self, n: u8) -> I {
        self.modifier(n)
    }

    /// `BAR`: the memory it orders (`BAR_MEM_*`).
    pub fn mem(self, flags: u8) -> I {
        self.modifier(flags)
    }

    /// `TEX`: the texture-unit op (`gfx::tex::op`).
    pub fn tex(self, op: u8) -> I {
        self.modifier(op)
    }

    /// `EXP`: the export target (`gfx::export`).
    pub fn export(self, target: u8) -> I {
        self.modifier(target)
    }

    /// `DERIV`: the derivative kind (`gfx::deriv`).
    pub fn deriv(self, kind: u8) -> I {
        self.modifier(kind)
    }
}

impl From<Op> for I {
    fn from(op: Op) -> I {
        I::new(op)
    }
}

struct Block {
    name: String,
    code: Vec<Instr>,
    placed: bool,
}

/// Provenance of a register range, for dumps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegName {
    pub first: u16,
    pub count: u16,
    pub name: String,
}

/// The assembled program.
pub(crate) struct Assembled {
    pub code: Vec<Instr>,
    /// (first instruction, block name) in layout order.
    pub blocks: Vec<(u32, String)>,
    /// Registers the code uses (at least 1).
    pub num_regs: u32,
    /// When the registers were reallocated: per instruction, the register its destination
    /// had before (what the register names refer to). Empty otherwise.
    pub virt_dst: Vec<u16>,
    /// The marked code regions as instruction ranges, in the order they opened.
    pub regions: Vec<CodeRegion>,
}

/// A marked code region as layout positions: the blocks placed from `from` to `to`.
struct RegionMark {
    from: usize,
    to: usize,
    kind: u32,
}

pub(crate) struct Emitter {
    blocks: Vec<Block>,
    order: Vec<Label>,
    cur: Label,
    num_regs: u32,
    total: usize,
    pub reg_names: Vec<RegName>,
    regions: Vec<RegionMark>,
}

impl Emitter {
    pub fn new() -> Emitter {
        Emitter {
            blocks: Vec::new(),
            order: Vec::new(),
            cur: 0,
            num_regs: 0,
            total: 0,
            reg_names: Vec::new(),
            regions: Vec::new(),
        }
    }

    /// Opens a code region of `kind` (`abi::kernel::region`): the blocks placed from now
    /// until [`Self::close_region`] (timed mode attributes what they issue).
    pub fn open_region(&mut self, kind: u32) -> usize {
        self.regions.push(RegionMark { from: self.order.len(), to: usize::MAX, kind });
        self.regions.len() - 1
    }

    pub fn close_region(&mut self, r: usize) {
        let to = self.order.len();
        if let Some(m) = self.regions.get_mut(r) {
            m.to = to;
        }
    }

    /// A new, not yet placed block.
    pub fn label(&mut self, name: impl Into<String>) -> Label {
        self.blocks.push(Block { name: name.into(), code: Vec::new(), placed: false });
        (self.blocks.len() - 1) as Label
    }

    /// Appends `l` to the layout and makes it current.
    pub fn place(&mut self, l: Label) -> Result<()> {
        let b = self.blocks.get_mut(l as usize).ok_or_else(|| invalid!("internal: unknown label {l}"))?;
        if b.placed {
            return Err(invalid!("internal: block `{}` placed twice", b.name));
        }
        b.placed = true;
        self.order.push(l);
        self.cur = l;
        Ok(())
    }

    /// Makes `l` current without placing it (to append to an earlier block, e.g. the
    /// prologue); returns the previous current block.
    pub fn switch_to(&mut self, l: Label) -> Label {
        std::mem::replace(&mut self.cur, l)
    }

    pub fn push(&mut self, i: Instr) {
        self.total += 1;
        if let Some(b) = self.blocks.get_mut(self.cur as usize) {
            b.code.push(i);
        }
    }

    pub fn alloc(&mut self, n: u32) -> Result<u16> {
        let r = self.num_regs;
        if r.saturating_add(n) > MAX_REGS {
            return Err(limit!("the kernel needs more than {MAX_REGS} registers"));
        }
        self.num_regs += n;
        Ok(r as u16)
    }

    pub fn num_regs(&self) -> u32 {
        self.num_regs
    }

    pub fn name_regs(&mut self, first: u16, count: u32, name: String) {
        self.reg_names.push(RegName { first, count: count.min(u16::MAX as u32) as u16, name });
    }

    pub fn emit(&mut self, i: I) {
        self.push(i.0);
    }

    /// `dst = op(a)` into a fresh register (`op` with its modifier and immediate, if any).
    pub fn op1(&mut self, op: impl Into<I>, a: u16) -> Result<u16> {
        let d = self.alloc(1)?;
        self.emit(op.into().dst(d).a(a));
        Ok(d)
    }

    pub fn op2(&mut self, op: impl Into<I>, a: u16, b: u16) -> Result<u16> {
        let d = self.alloc(1)?;
        self.emit(op.into().dst(d).a(a).b(b));
        Ok(d)
    }

    pub fn op3(&mut self, op: impl Into<I>, a: u16, b: u16, c: u16) -> Result<u16> {
        let d = self.alloc(1)?;
        self.emit(op.into().dst(d).a(a).b(b).c(c));
        Ok(d)
    }

    /// A 64-bit op on register pairs into a fresh pair.
    pub fn op64(&mut self, op: impl Into<I>, a: u16, b: u16) -> Result<u16> {
        let d = self.alloc(2)?;
        self.emit(op.into().dst(d).a(a).b(b));
        Ok(d)
    }

    pub fn mov(&mut self, dst: u16, src: u16) {
        if dst != src {
            self.emit(I::new(Op::Mov).dst(dst).a(src));
        }
    }

    pub fn movi(&mut self, dst: u16, imm: u32) {
        self.emit(I::new(Op::Movi).dst(dst).imm(imm));
    }

    pub fn jmp(&mut self, target: Label) {
        self.emit(I::new(Op::Jmp).imm(target));
    }

    pub fn bra(&mut self, pred: u16, taken: Label, not_taken: Label, reconv: Label) {
        self.push(Instr::bra(pred, taken, not_taken, reconv));
    }

    /// Copies `src -> dst` for every pair *as if simultaneously* (phi semantics): a move is
    /// emitted once nothing still pending reads its destination; when only cycles remain,
    /// one destination is saved to a fresh temporary and its readers redirected. Linear in
    /// the number of moves (a phi of a large aggregate moves thousands of registers).
    /// Destinations must be distinct.
    pub fn parallel_copy(&mut self, moves: &[(u16, u16)]) -> Result<()> {
        let mut mv: Vec<(u16, u16)> = moves.iter().copied().filter(|(d, s)| d != s).collect();
        let mut readers: HashMap<u16, Vec<usize>> = HashMap::new();
        let mut by_dst: HashMap<u16, usize> = HashMap::new();
        for (k, &(d, s)) in mv.iter().enumerate() {
            readers.entry(s).or_default().push(k);
            if by_dst.insert(d, k).is_some() {
                return Err(invalid!("internal: parallel copy writes r{d} twice"));
            }
        }
        let pending_reads = |readers: &HashMap<u16, Vec<usize>>, r: u16| readers.get(&r).map_or(0, Vec::len);
        let mut done = vec![false; mv.len()];
        let mut ready: Vec<usize> = (0..mv.len()).filter(|&k| pending_reads(&readers, mv[k].0) == 0).collect();
        let mut left = mv.len();
        let mut next_cycle = 0;
        while left > 0 {
            while let Some(k) = ready.pop() {
                if done[k] {
                    continue;
                }
                let (d, s) = mv[k];
                self.mov(d, s);
                done[k] = true;
                left -= 1;
                if let Some(rs) = readers.get_mut(&s) {
                    rs.retain(|&j| j != k);
                    // The move that overwrites `s` may now go.
                    if rs.is_empty() {
                        if let Some(&w) = by_dst.get(&s) {
                            ready.push(w);
                        }
                    }
                }
            }
            if left == 0 {
                break;
            }
            // Only cycles remain: save one destination and redirect its readers.
            while done[next_cycle] {
                next_cycle += 1;
            }
            let d = mv[next_cycle].0;
            let t = self.alloc(1)?;
            self.mov(t, d);
            let rs = readers.remove(&d).unwrap_or_default();
            for &j in &rs {
                mv[j].1 = t;
            }
            readers.insert(t, rs);
            ready.push(next_cycle);
        }
        Ok(())
    }

    /// Runs the register optimisation (`opt`) over the placed blocks in layout order.
    /// Returns the new register count and, per block, the pre-allocation destinations; `None`
    /// leaves everything as it was.
    fn optimize(&mut self, private_bytes: u32) -> Option<(u32, Vec<Vec<u16>>)> {
        let mut pos = vec![usize::MAX; self.blocks.len()];
        for (k, &l) in self.order.iter().enumerate() {
            pos[l as usize] = k;
        }
        let at = |l: u32| pos.get(l as usize).copied().filter(|&p| p != usize::MAX);
        let mut succ = Vec::with_capacity(self.order.len());
        for (k, &l) in self.order.iter().enumerate() {
            let s = match self.blocks[l as usize].code.last() {
                Some(i) if i.op == Op::Jmp => vec![at(i.imm)?],
                Some(i) if i.op == Op::Bra => vec![at(i.imm)?, at(i.imm2)?],
                Some(i) if matches!(i.op, Op::Exit | Op::Trap) => vec![],
                _ if k + 1 < self.order.len() => vec![k + 1],
                _ => vec![],
            };
            succ.push(s);
        }
        let mut code: Vec<Vec<Instr>> =
            self.order.iter().map(|&l| std::mem::take(&mut self.blocks[l as usize].code)).collect();
        let out = opt::optimize(&mut code, &succ, self.num_regs.max(1), private_bytes);
        for (&l, c) in self.order.iter().zip(code) {
            self.blocks[l as usize].code = c;
        }
        out.map(|o| (o.num_regs, o.virt_dst))
    }

    /// Lays the placed blocks out, drops jumps to the next block, and resolves labels. With
    /// `optimize`, first removes copies and dead code and reallocates registers (`opt`);
    /// `private_bytes` is the kernel's private memory per lane.
    pub fn assemble(mut self, optimize: bool, private_bytes: u32) -> Result<Assembled> {
        if self.total > MAX_INSTRS {
            return Err(limit!("the kernel has more than {MAX_INSTRS} instructions"));
        }
        let mut num_regs = self.num_regs.max(1);
        // Per label: the pre-allocation destinations of its instructions.
        let mut virt: Vec<Vec<u16>> = Vec::new();
        if optimize {
            if let Some((n, v)) = self.optimize(private_bytes) {
                num_regs = n;
                virt = vec![Vec::new(); self.blocks.len()];
                for (&l, d) in self.order.iter().zip(v) {
                    virt[l as usize] = d;
                }
            }
        }
        let mut blocks = self.blocks;
        // Elide `JMP next`.
        for w in self.order.windows(2) {
            let b = &mut blocks[w[0] as usize];
            if let Some(last) = b.code.last() {
                if last.op == Op::Jmp && last.imm == w[1] {
                    b.code.pop();
                    if let Some(v) = virt.get_mut(w[0] as usize) {
                        v.pop();
                    }
                }
            }
        }
        let mut start = vec![u32::MAX; blocks.len()];
        // The first instruction of each layout position (and the end).
        let mut at_pos = Vec::with_capacity(self.order.len() + 1);
        let mut pc = 0u32;
        for &l in &self.order {
            start[l as usize] = pc;
            at_pos.push(pc);
            pc += blocks[l as usize].code.len() as u32;
        }
        at_pos.push(pc);
        let regions = self
            .regions
            .iter()
            .map(|m| CodeRegion { start: at_pos[m.from], end: at_pos[m.to.min(self.order.len())], kind: m.kind })
            .filter(|r| r.start < r.end)
            .collect();
        let resolve = |l: u32| -> Result<u32> {
            match start.get(l as usize) {
                Some(&s) if s != u32::MAX => Ok(s),
                _ => Err(invalid!("internal: branch to a block that was never placed")),
            }
        };
        let mut code = Vec::with_capacity(pc as usize);
        let mut names = Vec::with_capacity(self.order.len());
        let mut virt_dst = Vec::with_capacity(if virt.is_empty() { 0 } else { pc as usize });
        for &l in &self.order {
            let b = &blocks[l as usize];
            names.push((start[l as usize], b.name.clone()));
            if let Some(v) = virt.get(l as usize) {
                virt_dst.extend_from_slice(v);
            }
            for i in &b.code {
                let mut i = *i;
                match i.op {
                    Op::Jmp => i.imm = resolve(i.imm)?,
                    Op::Bra => {
                        i.imm = resolve(i.imm)?;
                        i.imm2 = resolve(i.imm2)?;
                        i.imm3 = resolve(i.imm3)?;
                    }
                    _ => {}
                }
                code.push(i);
            }
        }
        match code.last().map(|i| i.op) {
            Some(Op::Exit | Op::Jmp | Op::Bra | Op::Trap) => {}
            _ => return Err(invalid!("internal: the last block does not end the kernel")),
        }
        // The device decoder's operand rules, checked here so an inconsistency (or a hostile
        // module that slipped past the checks) is a compile error, never a kernel the device
        // refuses.
        for (pc, i) in code.iter().enumerate() {
            for (r, width) in operand_widths(i) {
                if r == REG_NONE || r as u32 + width > num_regs {
                    return Err(invalid!("internal: instruction {pc} `{}` has a bad register operand", disasm(i)));
                }
            }
        }
        Ok(Assembled { code, blocks: names, num_regs, virt_dst, regions })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a straight-line sequence of MOVs on a register file.
    fn run(code: &[Instr], regs: &mut [u32]) {
        for i in code {
            assert_eq!(i.op, Op::Mov);
            regs[i.dst as usize] = regs[i.a as usize];
        }
    }

    fn check(moves: &[(u16, u16)]) {
        let mut e = Emitter::new();
        e.alloc(16).unwrap();
        let l = e.label("b");
        e.place(l).unwrap();
        e.parallel_copy(moves).unwrap();
        let code = e.blocks[0].code.clone();
        let mut regs: Vec<u32> = (0..32).map(|r| 100 + r).collect();
        let before = regs.clone();
        run(&code, &mut regs);
        for &(d, s) in moves {
            assert_eq!(regs[d as usize], before[s as usize], "{moves:?} -> {code:?}");
        }
    }

    #[test]
    fn parallel_copies_swap_rotate_and_fan_out() {
        check(&[(0, 1), (1, 0)]);
        check(&[(0, 1), (1, 2), (2, 0)]);
        check(&[(0, 1), (2, 1), (1, 3)]);
        check(&[(0, 0), (1, 2)]);
        check(&[(0, 1), (1, 0), (2, 3), (3, 2), (4, 0)]);
        check(&[(1, 0), (2, 1), (3, 2), (0, 3), (5, 0), (6, 6)]);
        // A big rotation is emitted in linear time.
        let big: Vec<(u16, u16)> = (0..3000u16).map(|i| (i, (i + 1) % 3000)).collect();
        let mut e = Emitter::new();
        e.alloc(3000).unwrap();
        let l = e.label("b");
        e.place(l).unwrap();
        e.parallel_copy(&big).unwrap();
        assert_eq!(e.blocks[0].code.len(), 3001, "one temporary for the single cycle");
    }

    #[test]
    fn the_builder_sets_exactly_the_parts_it_names() {
        assert_eq!(I::new(Op::Exit).0, Instr::r(Op::Exit, 0, N, N, N, N, N, 0));
        assert_eq!(I::from(Op::Iadd).dst(1).a(2).b(3).0, Instr::r(Op::Iadd, 0, 1, 2, 3, N, N, 0));
        let st = I::new(Op::Stg).size(MemSize::B64).a(4).b(6).imm(24);
        assert_eq!(st.0, Instr::r(Op::Stg, MemSize::B64 as u8, N, 4, 6, N, N, 24));
        let at = I::new(Op::Iatom).atomic(AtomicOp::CmpXchg).dst(1).a(2).b(3).c(4).d(5).imm(7);
        assert_eq!(at.0, Instr::r(Op::Iatom, AtomicOp::CmpXchg as u8, 1, 2, 3, 4, 5, 7));
        // Every modifier lands in the modifier field with the value the decoder reads.
        let m = |i: I| i.0.modifier;
        assert_eq!(m(I::new(Op::Icmp).cond(IntCond::Sge)), IntCond::Sge as u8);
        assert_eq!(m(I::new(Op::Fcmp).cond(FloatCond::IsInf)), FloatCond::IsInf as u8);
        assert_eq!(m(I::new(Op::Fround).round(Round::Away)), Round::Away as u8);
        assert_eq!(m(I::new(Op::Fsfu).sfu(SfuFunc::Atan2)), SfuFunc::Atan2 as u8);
        assert_eq!(m(I::new(Op::Vote).vote(VoteOp::Eq)), VoteOp::Eq as u8);
        assert_eq!(m(I::new(Op::Shfl).shfl(ShflMode::Xor)), ShflMode::Xor as u8);
        assert_eq!(m(I::new(Op::Red).red(RedOp::Fmax)), RedOp::Fmax as u8);
        assert_eq!((m(I::new(Op::Imin).signed(true)), m(I::new(Op::Imin).signed(false))), (1, 0));
        assert_eq!(m(I::new(Op::Ext).width(16)), 16);
        assert_eq!(m(I::new(Op::Getw).count(12)), 12);
        assert_eq!(m(I::new(Op::Bar).mem(3)), 3);
    }

    #[test]
    fn assembly_resolves_labels_and_elides_fallthrough() {
        let mut e = Emitter::new();
        let a = e.label("a");
        let b = e.label("b");
        let c = e.label("c");
        e.place(a).unwrap();
        e.movi(0, 1);
        e.jmp(b);
        e.place(b).unwrap();
        e.bra(0, c, b, c);
        e.place(c).unwrap();
        e.emit(I::new(Op::Exit));
        let out = e.assemble(false, 0).unwrap();
        assert_eq!(out.code.len(), 3, "the jump to the next block is gone");
        assert_eq!((out.code[1].imm, out.code[1].imm2, out.code[1].imm3), (2, 1, 2));
        assert_eq!(out.blocks, vec![(0, "a".to_string()), (1, "b".to_string()), (2, "c".to_string())]);
    }

    /// A region is the instructions of the blocks placed while it was open, after the
    /// fall-through jumps are gone; a region with no instructions is dropped.
    #[test]
    fn regions_cover_the_blocks_placed_while_open() {
        let mut e = Emitter::new();
        let [a, b, c, d] = ["a", "b", "c", "d"].map(|n| e.label(n));
        e.place(a).unwrap();
        e.movi(0, 1);
        e.jmp(b);
        let outer = e.open_region(1);
        e.place(b).unwrap();
        e.movi(0, 2);
        let empty = e.open_region(2);
        e.close_region(empty);
        let inner = e.open_region(2);
        e.place(c).unwrap();
        e.movi(0, 3);
        e.movi(0, 4);
        e.jmp(d);
        e.close_region(inner);
        e.close_region(outer);
        e.place(d).unwrap();
        e.emit(I::new(Op::Exit));
        let out = e.assemble(false, 0).unwrap();
        assert_eq!(out.code.len(), 5, "both jumps fall through");
        let r = |start, end, kind| CodeRegion { start, end, kind };
        assert_eq!(out.regions, vec![r(1, 4, 1), r(2, 4, 2)]);
    }
}
