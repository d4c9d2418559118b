//! The compiled runs against the interpreter: every covered op, over random and special
//! values, full and partial masks, destinations that are also sources.

use super::*;
use crate::abi::isa::{FloatCond, IntCond, Op, REG_NONE as N};
use crate::abi::MAX_THREADS;
use crate::core::exec::bench::Bench;
use crate::core::exec::execute;
use crate::core::warp::Warp;

const NT: usize = MAX_THREADS;
const REGS: usize = 8;

/// xorshift64*, with the float and integer values that exercise edge cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }

    fn word(&mut self) -> u32 {
        const SPECIAL: [u32; 16] = [
            0,
            1,
            31,
            32,
            33,
            u32::MAX,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0001,
            0xffc1_2345,
            0x3f80_0000,
            0xbf80_0000,
            0x4f80_0000,
            0xcf00_0001,
            0x0000_0001,
        ];
        let r = self.next();
        if r.is_multiple_of(3) {
            SPECIAL[(r >> 8) as usize % SPECIAL.len()]
        } else {
            self.next()
        }
    }
}

/// One instruction of every covered kind (each condition, signed and unsigned forms).
fn covered_ops() -> Vec<Instr> {
    let r = |op, m| Instr::r(op, m, 3, 1, 2, 0, N, 0);
    let mut v = vec![Instr::r(Op::Movi, 0, 3, N, N, N, N, 0xdead_beef)];
    for op in [
        Op::Mov,
        Op::Sel,
        Op::Iadd,
        Op::Isub,
        Op::Imul,
        Op::And,
        Op::Or,
        Op::Xor,
        Op::Not,
        Op::Ineg,
        Op::Iabs,
        Op::Shl,
        Op::Shr,
        Op::Sar,
        Op::Fadd,
        Op::Fsub,
        Op::Fmul,
        Op::Fdiv,
        Op::Fmin,
        Op::Fmax,
        Op::Fneg,
        Op::Fabs,
        Op::Fsqrt,
        Op::Frcp,
        Op::Frsq,
        Op::F2i,
        Op::F2u,
        Op::I2f,
        Op::U2f,
        Op::Ffma,
        Op::Iaddc,
        Op::Isubb,
        Op::Iadd64,
        Op::Isub64,
    ] {
        v.push(r(op, 0));
    }
    for m in [0, 1] {
        v.push(r(Op::Imin, m));
        v.push(r(Op::Imax, m));
    }
    v.extend(IntCond::ALL.iter().map(|&c| r(Op::Icmp, c as u8)));
    v.extend(FloatCond::ALL.iter().map(|&c| r(Op::Fcmp, c as u8)));
    v
}

/// Runs `code` from pc 0 on the interpreter, one instruction at a time.
fn interpret(code: &[Instr], regs: &mut [u32], mask: u32) {
    let mut bench = Bench::empty(16);
    let mut w = Warp::new();
    w.launch(0, mask, REGS, NT, 0);
    w.regs.copy_from_slice(regs);
    let mut env = bench.env(NT);
    for i in code {
        execute(i, &mut w, mask, &mut env).expect("a covered op does not fault");
    }
    regs.copy_from_slice(&w.regs);
}

fn compiled(code: &[Instr]) -> JitKernel {
    let k = compile(code, 0, REGS, NT).expect("compiles").expect("has a run");
    assert_eq!(k.runs(), 1, "one run over the whole line");
    assert_eq!(k.covered(), code.len() as u64);
    k
}

/// True when register `r` of lane `l` was last written by an ADD or MUL of two NaNs and
/// both results are one of them, quieted: which one the host returns depends on operand
/// order the compiler chose (`emit`'s module note). Only for a single op after a MOV.
fn two_nan_commutative(code: &[Instr], regs: &[u32], r: usize, l: usize, want: u32, got: u32) -> bool {
    let [_, i] = code else { return false };
    if !matches!(i.op, Op::Fadd | Op::Fmul) || i.dst as usize != r {
        return false;
    }
    let (x, y) = (regs[i.a as usize * NT + l], regs[i.b as usize * NT + l]);
    let nan = |v: u32| f32::from_bits(v).is_nan();
    let q = |v: u32| v | 0x0040_0000;
    nan(x) && nan(y) && [q(x), q(y)].contains(&want) && [q(x), q(y)].contains(&got)
}

fn check(code: &[Instr], rng: &mut Rng, what: &str) {
    let k = compiled(code);
    for round in 0..40 {
        let regs: Vec<u32> = (0..REGS * NT).map(|_| rng.word()).collect();
        let mask = match round % 4 {
            0 => u32::MAX,
            1 => rng.next(),
            2 => 1 << (rng.next() % 32),
            _ => rng.next() & rng.next(),
        };
        let (mut want, mut got) = (regs.clone(), regs.clone());
        interpret(code, &mut want, mask);
        assert_eq!(k.try_run(0, &mut got, mask, u64::MAX, Args::NONE, None), Some(code.len() as u32));
        for (x, (a, b)) in want.iter().zip(&got).enumerate() {
            let l = x % NT;
            if a != b && two_nan_commutative(code, &regs, x / NT, l, *a, *b) {
                continue;
            }
            let ins = [0, 1, 2].map(|r| format!("{:#x}", regs[r * NT + l]));
            assert_eq!(a, b, "{what}: register {} lane {l} mask {mask:#x}, r0..r2 {ins:?}", x / NT);
        }
    }
}

#[test]
fn ops_match_the_interpreter() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let fma = has_fma(&*host_isa().expect("a supported host"));
    let mut failed = Vec::new();
    for i in covered_ops() {
        if !cover::covered(&i, fma, false) {
            continue;
        }
        // The op alone (after a MOV, a run being two ops at least), and with its
        // destination also its source.
        let mv = Instr::r(Op::Mov, 0, 4, 5, N, N, N, 0);
        let same = Instr { dst: 1, ..i };
        for code in [[mv, i], [mv, same]] {
            let what = crate::abi::isa::disasm(&code[1]);
            if let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&code, &mut rng, &what))) {
                failed.push(e.downcast_ref::<String>().cloned().unwrap_or_default());
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// A long chain of dependent ops: values flow from op to op inside a chunk.
#[test]
fn chains_match_the_interpreter() {
    let mut rng = Rng(77);
    let ops = covered_ops();
    let fma = has_fma(&*host_isa().expect("a supported host"));
    for _ in 0..20 {
        let code: Vec<Instr> = (0..40)
            .map(|_| {
                let mut i = ops[rng.next() as usize % ops.len()];
                while !cover::covered(&i, fma, false) {
                    i = ops[rng.next() as usize % ops.len()];
                }
                // A register pair's high word must be a register too.
                let top = if i.operands().iter().any(|o| o.width > 1) { REGS - 1 } else { REGS };
                let mut reg = || (rng.next() % top as u32) as u16;
                let (d, a, b, c) = (reg(), reg(), reg(), reg());
                Instr { dst: d, a, b, c, ..i }
            })
            .collect();
        check(&code, &mut rng, "chain");
    }
}

/// A run longer than the budget left does not start; the interpreter takes the pcs.
#[test]
fn a_run_starts_only_when_the_budget_holds_it() {
    let code = vec![Instr::r(Op::Iadd, 0, 1, 1, 1, N, N, 0); 3];
    let k = compiled(&code);
    let mut regs = vec![1u32; REGS * NT];
    assert_eq!(k.try_run(0, &mut regs, u32::MAX, 2, Args::NONE, None), None);
    assert_eq!(regs[NT], 1);
    assert_eq!(k.try_run(1, &mut regs, u32::MAX, 100, Args::NONE, None), None, "no run starts mid-line");
    assert_eq!(k.try_run(0, &mut regs, u32::MAX, 3, Args::NONE, None), Some(3));
    assert_eq!(regs[NT], 8);
}

#[test]
fn narrow_warps_are_interpreted() {
    let code = vec![Instr::r(Op::Iadd, 0, 1, 1, 1, N, N, 0); 3];
    assert!(compile(&code, 0, REGS, 2).unwrap().is_none());
    assert!(compile(&code, 0, REGS, 8).unwrap().is_some());
}

/// A kernel compiles only once the interpreter has run `hot` warp instructions per kernel
/// instruction of it, and then once.
#[test]
fn a_kernel_compiles_once_hot() {
    let mut code = vec![Instr::r(Op::Iadd, 0, 1, 1, 1, N, N, 0); 3];
    code.push(Instr::r(Op::Exit, 0, N, N, N, N, N, 0));
    let header = crate::abi::kernel::KernelHeader::new(REGS as u32, [32, 1, 1]);
    let k = DecodedKernel::from_parts(header, "hot", code).expect("a valid kernel");
    let before = stats().kernels;
    assert!(k.jit.get(&k, NT, 0, 10).is_none(), "cold");
    assert!(k.jit.get(&k, NT, 39, 10).is_none(), "39 of 40 instructions");
    assert!(k.jit.get(&k, NT, 1, 10).is_some(), "hot at 40");
    assert!(k.jit.get(&k, NT, 0, 10).is_some(), "compiled once, kept");
    assert!(k.jit.get(&k, 8, 0, 10).is_none(), "compiled for another warp width");
    assert!(stats().kernels > before);
    let eager = DecodedKernel::from_parts(k.header.clone(), "eager", k.code.clone()).expect("a valid kernel");
    assert!(eager.jit.get(&eager, NT, 0, 0).is_some(), "hot = 0 compiles at once");
}

/// A shift by a register holding one constant (its single MOVI runs before any read) is one
/// vector shift: still the interpreter's results, the amount taken modulo 32.
#[test]
fn constant_shifts_match_the_interpreter() {
    let mut rng = Rng(5);
    for k in [0, 1, 5, 31, 32, 33, 0xffff_ffe1] {
        for op in [Op::Shl, Op::Shr, Op::Sar] {
            let code = [
                Instr::r(Op::Movi, 0, 2, N, N, N, N, k),
                Instr::r(op, 0, 3, 1, 2, N, N, 0),
                Instr::r(op, 0, 4, 3, 2, N, N, 0),
            ];
            let zeroed = crate::core::decode::read_before_write(&code, 0, REGS as u32);
            assert_eq!(cover::constants(&code, REGS, &zeroed)[2], Some(k), "r2 is the constant");
            check(&code, &mut rng, &format!("{op:?} by {k}"));
        }
    }
}

/// Loads from the kernel-argument block join runs: the words the interpreter's uniform load
/// reads, in every active lane; without the block's address the run is left to the
/// interpreter, and a block the memory map does not hold gives no address.
#[test]
fn argument_loads_match_the_interpreter() {
    use crate::abi::csr;
    use crate::abi::isa::MemSize;
    let space = crate::mem::AddressSpace::new();
    let block = space.allocate(crate::abi::kernel::kargs::BYTES as u64).expect("room").base;
    let mut bench = Bench::new(space.snapshot(), 16);
    let mem = bench.mem.clone();
    let mem = &*mem;
    let words: Vec<u32> = (0..128u32).map(|k| k.wrapping_mul(0x9e37_79b9)).collect();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.write(block, &bytes).expect("the block is mapped");
    let ldg = |size: MemSize, d, off| Instr::r(Op::Ldg, size as u8, d, 0, N, N, N, off);
    let prologue =
        [Instr::r(Op::Csr, 0, 0, N, N, N, N, csr::PARAM_LO), Instr::r(Op::Csr, 0, 1, N, N, N, N, csr::PARAM_HI)];
    let line = [
        ldg(MemSize::B128, 2, 256),
        Instr::r(Op::Iadd, 0, 6, 2, 5, N, N, 0),
        ldg(MemSize::B32, 7, 8),
        ldg(MemSize::B64, 3, 504),
        Instr::r(Op::Fmul, 0, 4, 4, 6, N, N, 0),
    ];
    let code: Vec<Instr> = prologue.iter().chain(&line).copied().collect();
    // The CSRs that put the block's address in r0:r1 are in the run too.
    let k = compile(&code, 0, REGS, NT).expect("compiles").expect("has a run");
    assert_eq!((k.runs(), k.covered()), (1, code.len() as u64));
    bench.launch.param = block;
    let args = k.args(mem, block);
    let mut rng = Rng(9);
    for mask in [u32::MAX, 0x8000_0001, 0x0f0f_00f0, 1 << 7] {
        let regs: Vec<u32> = (0..REGS * NT).map(|_| rng.word()).collect();
        let (mut want, mut got) = (regs.clone(), regs.clone());
        let mut w = Warp::new();
        w.launch(0, mask, REGS, NT, 0);
        w.regs.copy_from_slice(&want);
        let mut env = bench.env(NT);
        let table = crate::core::exec::csr_table(&w, &env, k.csr_reads());
        for i in &code {
            execute(i, &mut w, mask, &mut env).expect("an argument load does not fault");
        }
        want.copy_from_slice(&w.regs);
        assert_eq!(k.try_run(0, &mut got, mask, u64::MAX, Args::NONE, Some(&table)), None, "no block, no run");
        assert_eq!(k.try_run(0, &mut got, mask, u64::MAX, args, None), None, "no CSR table, no run");
        assert_eq!(k.try_run(0, &mut got, mask, u64::MAX, args, Some(&table)), Some(code.len() as u32));
        assert_eq!(want, got, "mask {mask:#x}");
    }
    let unmapped = block + (1 << 40);
    let table = CsrTable::default();
    let none = k.try_run(0, &mut vec![0; REGS * NT], u32::MAX, u64::MAX, k.args(mem, unmapped), Some(&table));
    assert_eq!(none, None);
}

/// Every CSR the runs read, against the interpreter's CSR op, in a warp whose launch, CTA
/// and position make each value distinct (thread ids of a later warp of a 3-D block).
#[test]
fn csr_reads_match_the_interpreter() {
    let mut bench = Bench::empty(16);
    bench.launch.param = 0x1234_5678_9abc_def0;
    bench.launch.entry = 77;
    bench.launch.grid_dim = [9, 5, 3];
    bench.launch.block_dim = [12, 5, 2];
    bench.launch.cluster_dim = [2, 1, 1];
    bench.cta = crate::core::CtaCtx { block_idx: [4, 3, 2], lmem_base: 0x400, num_warps: 4, ..Default::default() };
    let mut w = Warp::new();
    w.launch(0, u32::MAX, REGS, NT, 0);
    (w.rank, w.cta_slot) = (2, 3);
    let mut env = bench.env(NT);
    (env.core_id, env.warp_id, env.num_warps, env.num_cores) = (5, 6, 8, 4);
    let ids: Vec<u32> = csr::WARP_UNIFORM.iter().chain(&csr::PER_LANE).copied().collect();
    let mut rng = Rng(99);
    for id in ids {
        let code = [Instr::r(Op::Csr, 0, 1, N, N, N, N, id), Instr::r(Op::Iadd, 0, 2, 1, 1, N, N, 0)];
        let k = compiled(&code);
        // The table as a core fills it for this kernel: only the slot its run reads.
        assert_eq!(k.csr_reads(), 1 << csr_slot(id).expect("a table CSR"));
        let table = crate::core::exec::csr_table(&w, &env, k.csr_reads());
        for mask in [u32::MAX, 0x0f0f_00f1, 1 << 31] {
            let regs: Vec<u32> = (0..REGS * NT).map(|_| rng.word()).collect();
            let mut want = regs.clone();
            w.regs.copy_from_slice(&want);
            for i in &code {
                execute(i, &mut w, mask, &mut env).expect("a CSR read does not fault");
            }
            want.copy_from_slice(&w.regs);
            let mut got = regs.clone();
            assert_eq!(k.try_run(0, &mut got, mask, u64::MAX, Args::NONE, None), None, "no table, no run");
            assert_eq!(k.try_run(0, &mut got, mask, u64::MAX, Args::NONE, Some(&table)), Some(2));
            assert_eq!(want, got, "csr {id:#x} mask {mask:#x}");
        }
        // A value that differs lane to lane or from zero shows the read is not a constant.
        assert!(want_nonzero(&table, id), "csr {id:#x} reads zero everywhere: a weak check");
    }
}

fn want_nonzero(t: &CsrTable, id: u32) -> bool {
    match csr_offset(id) {
        Some(CsrAt::Word(_)) => t.uniform[csr_slot(id).unwrap()] != 0,
        Some(CsrAt::Row(_)) => t.lanes[csr_slot(id).unwrap() - csr::WARP_UNIFORM.len()].iter().any(|&v| v != 0),
        None => false,
    }
}
