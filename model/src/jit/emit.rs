//! Cranelift IR for one run: the run's ops over the warp's lanes, four lanes (one host
//! vector) at a time.
//!
//! Every op in a run is lane-wise, so the run executes chunk by chunk: a chunk's register
//! values stay in host registers from op to op, each row is loaded once and each written
//! row stored once, blended under the execution mask so inactive lanes keep their values
//! (as the interpreter's masked stores do). Each op computes what the interpreter's handler
//! computes, bit for bit (`tests::ops_match_the_interpreter` checks every covered op), with
//! one exception the interpreter shares: ADD and MUL of two NaNs return one of them
//! (quieted), and which one depends on the operand order the compiler picked, which even
//! differs between the interpreter's own full-warp and partial-warp paths and from lane to
//! lane; the compiled code returns the first operand's, as the partial path does.

use crate::abi::isa::{FloatCond, Instr, IntCond, Op};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, Block, ConstantData, Endianness, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;
use std::collections::HashMap;

/// Lanes per host vector.
pub const VLANES: usize = 4;

/// The IR for one chunk of lanes.
struct Chunk<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    /// This chunk's lanes of register 0 (the loop's pointer).
    regs: Value,
    /// Bytes per register row.
    row_bytes: i32,
    vals: HashMap<u16, Value>,
    written: Vec<u16>,
    /// Registers that hold one constant wherever they are read ([`super::cover::constants`]).
    consts: &'a [Option<u32>],
    /// The argument words the run's loads read, by byte offset, each splat to a vector
    /// once before the chunk loop.
    arg_words: &'a HashMap<u32, Value>,
    /// The warp-uniform CSRs the run reads, by id, splat once before the chunk loop.
    csr_words: &'a HashMap<u32, Value>,
    /// This chunk's first lane in the warp's [`super::CsrTable`] rows: the table's address
    /// plus the chunk's byte offset in a register row.
    csr_lanes: Value,
}

/// Register rows are 4-byte aligned host memory that decode-time validation keeps in range.
fn row_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// The kernel-argument block: little-endian device memory the core checked is mapped for
/// every offset a run reads (`JitKernel::args_span`) before it passes its address.
fn args_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap().with_endianness(Endianness::Little)
}

fn vflags() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

impl Chunk<'_, '_> {
    fn get(&mut self, r: u16) -> Value {
        if let Some(&v) = self.vals.get(&r) {
            return v;
        }
        let off = r as i32 * self.row_bytes;
        let v = self.b.ins().load(types::I32X4, row_flags(), self.regs, off);
        self.vals.insert(r, v);
        v
    }

    fn getf(&mut self, r: u16) -> Value {
        let v = self.get(r);
        self.b.ins().bitcast(types::F32X4, vflags(), v)
    }

    fn set(&mut self, r: u16, v: Value) {
        if !self.written.contains(&r) {
            self.written.push(r);
        }
        self.vals.insert(r, v);
    }

    fn setf(&mut self, r: u16, v: Value) {
        let v = self.b.ins().bitcast(types::I32X4, vflags(), v);
        self.set(r, v);
    }

    fn splat(&mut self, x: u32) -> Value {
        let s = self.b.ins().iconst(types::I32, x as i32 as i64);
        self.b.ins().splat(types::I32X4, s)
    }

    fn splatf(&mut self, x: f32) -> Value {
        let s = self.b.ins().f32const(x);
        self.b.ins().splat(types::F32X4, s)
    }

    /// -1/0 lanes to 1/0.
    fn bool01(&mut self, m: Value) -> Value {
        self.b.ins().ushr_imm_u(m, 31)
    }

    /// A per-lane shift (vector shifts take one amount for all lanes): lane by lane.
    fn shift(&mut self, op: Op, x: Value, y: Value) -> Value {
        let mut out = None;
        for l in 0..VLANES as u8 {
            let (a, s) = (self.b.ins().extractlane(x, l), self.b.ins().extractlane(y, l));
            // Scalar shifts take the amount modulo 32, like the interpreter's `y & 31`.
            let r = match op {
                Op::Shl => self.b.ins().ishl(a, s),
                Op::Shr => self.b.ins().ushr(a, s),
                _ => self.b.ins().sshr(a, s),
            };
            out = Some(match out {
                None => self.b.ins().splat(types::I32X4, r),
                Some(v) => self.b.ins().insertlane(v, r, l),
            });
        }
        out.expect("four lanes")
    }

    /// The interpreter's `f32::min`/`max`: a NaN operand yields the other one; otherwise
    /// `y` when it is strictly smaller (larger), else `x`.
    fn minmax(&mut self, x: Value, y: Value, max: bool) -> Value {
        let cc = if max { FloatCC::GreaterThan } else { FloatCC::LessThan };
        let pick_y = self.b.ins().fcmp(cc, y, x);
        let x_nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let pick_y = self.b.ins().bor(pick_y, x_nan);
        let xi = self.b.ins().bitcast(types::I32X4, vflags(), x);
        let yi = self.b.ins().bitcast(types::I32X4, vflags(), y);
        let out = self.b.ins().bitselect(pick_y, yi, xi);
        self.b.ins().bitcast(types::F32X4, vflags(), out)
    }

    /// `v` quieted, as x86 returns a NaN operand.
    fn quiet(&mut self, v: Value) -> Value {
        let q = self.splat(0x0040_0000);
        self.b.ins().bor(v, q)
    }

    fn is_nan(&mut self, x: Value) -> Value {
        self.b.ins().fcmp(FloatCC::Unordered, x, x)
    }

    /// Fused multiply-add with the interpreter's NaN: the first NaN of `x`, `y`, `z`.
    fn fma(&mut self, x: Value, y: Value, z: Value) -> Value {
        let r = self.b.ins().fma(x, y, z);
        let mut out = self.b.ins().bitcast(types::I32X4, vflags(), r);
        for v in [z, y, x] {
            let n = self.is_nan(v);
            let vi = self.b.ins().bitcast(types::I32X4, vflags(), v);
            let q = self.quiet(vi);
            out = self.b.ins().bitselect(n, q, out);
        }
        self.b.ins().bitcast(types::F32X4, vflags(), out)
    }

    /// Emits instruction `i` for this chunk.
    fn op(&mut self, i: &Instr) {
        let (d, a, b, c) = (i.dst, i.a, i.b, i.c);
        match i.op {
            Op::Mov => {
                let v = self.get(a);
                self.set(d, v)
            }
            Op::Ldg => {
                let words = super::cover::arg_words(i).expect("covered: an argument load");
                for k in 0..words {
                    let v = self.arg_words[&(i.imm + 4 * k)];
                    self.set(d + k as u16, v);
                }
            }
            Op::Movi => {
                let v = self.splat(i.imm);
                self.set(d, v)
            }
            Op::Csr => {
                let v = match super::csr_offset(i.imm).expect("covered: a CSR of the table") {
                    super::CsrAt::Word(_) => self.csr_words[&i.imm],
                    super::CsrAt::Row(row) => self.b.ins().load(types::I32X4, csr_flags(), self.csr_lanes, row),
                };
                self.set(d, v)
            }
            Op::Sel => {
                let (p, x, y) = (self.get(a), self.get(b), self.get(c));
                let z = self.splat(0);
                let m = self.b.ins().icmp(IntCC::NotEqual, p, z);
                let v = self.b.ins().bitselect(m, x, y);
                self.set(d, v)
            }
            Op::Not | Op::Ineg | Op::Iabs => {
                let x = self.get(a);
                let v = match i.op {
                    Op::Not => self.b.ins().bnot(x),
                    Op::Ineg => self.b.ins().ineg(x),
                    _ => self.b.ins().iabs(x),
                };
                self.set(d, v)
            }
            Op::Shl | Op::Shr | Op::Sar => {
                let x = self.get(a);
                let v = match self.consts.get(b as usize).copied().flatten() {
                    // One amount for every lane: one vector shift (Cranelift takes a
                    // vector's shift amount modulo the lane width, as the interpreter does).
                    Some(k) => {
                        let k = self.b.ins().iconst(types::I32, (k & 31) as i64);
                        match i.op {
                            Op::Shl => self.b.ins().ishl(x, k),
                            Op::Shr => self.b.ins().ushr(x, k),
                            _ => self.b.ins().sshr(x, k),
                        }
                    }
                    None => {
                        let y = self.get(b);
                        self.shift(i.op, x, y)
                    }
                };
                self.set(d, v)
            }
            Op::Iadd | Op::Isub | Op::Imul | Op::And | Op::Or | Op::Xor | Op::Imin | Op::Imax => {
                let (x, y) = (self.get(a), self.get(b));
                let ins = self.b.ins();
                let signed = i.modifier == 1;
                let v = match i.op {
                    Op::Iadd => ins.iadd(x, y),
                    Op::Isub => ins.isub(x, y),
                    Op::Imul => ins.imul(x, y),
                    Op::And => ins.band(x, y),
                    Op::Or => ins.bor(x, y),
                    Op::Xor => ins.bxor(x, y),
                    Op::Imin if signed => ins.smin(x, y),
                    Op::Imin => ins.umin(x, y),
                    Op::Imax if signed => ins.smax(x, y),
                    _ => ins.umax(x, y),
                };
                self.set(d, v)
            }
            Op::Iaddc | Op::Isubb => {
                // The sum (difference) and, in the register above, its carry (borrow) as 1/0.
                let (x, y) = (self.get(a), self.get(b));
                let (v, c) = if i.op == Op::Iaddc {
                    let v = self.b.ins().iadd(x, y);
                    (v, self.b.ins().icmp(IntCC::UnsignedLessThan, v, x))
                } else {
                    (self.b.ins().isub(x, y), self.b.ins().icmp(IntCC::UnsignedLessThan, x, y))
                };
                let c = self.bool01(c);
                self.set(d, v);
                self.set(d + 1, c)
            }
            Op::Iadd64 | Op::Isub64 => {
                // Pairs low word first; the carry (borrow) compare gives -1/0, which the
                // high words' sum takes away (adds).
                let (xl, xh, yl, yh) = (self.get(a), self.get(a + 1), self.get(b), self.get(b + 1));
                let (lo, hi) = if i.op == Op::Iadd64 {
                    let lo = self.b.ins().iadd(xl, yl);
                    let c = self.b.ins().icmp(IntCC::UnsignedLessThan, lo, xl);
                    let h = self.b.ins().iadd(xh, yh);
                    (lo, self.b.ins().isub(h, c))
                } else {
                    let lo = self.b.ins().isub(xl, yl);
                    let c = self.b.ins().icmp(IntCC::UnsignedLessThan, xl, yl);
                    let h = self.b.ins().isub(xh, yh);
                    (lo, self.b.ins().iadd(h, c))
                };
                self.set(d, lo);
                self.set(d + 1, hi)
            }
            Op::Icmp => {
                let cc = int_cc(IntCond::from_u8(i.modifier).expect("covered: a valid condition"));
                let (x, y) = (self.get(a), self.get(b));
                let m = self.b.ins().icmp(cc, x, y);
                let v = self.bool01(m);
                self.set(d, v)
            }
            Op::Fcmp => {
                let cond = FloatCond::from_u8(i.modifier).expect("covered: a valid condition");
                let x = self.getf(a);
                let m = match cond {
                    FloatCond::IsNan => self.b.ins().fcmp(FloatCC::Unordered, x, x),
                    FloatCond::IsInf => {
                        let ax = self.b.ins().fabs(x);
                        let inf = self.splatf(f32::INFINITY);
                        self.b.ins().fcmp(FloatCC::Equal, ax, inf)
                    }
                    _ => {
                        let y = self.getf(b);
                        match cond {
                            // The host has no single vector compare for these two.
                            FloatCond::One | FloatCond::Ueq => {
                                let uno = self.b.ins().fcmp(FloatCC::Unordered, x, y);
                                if cond == FloatCond::One {
                                    let ne = self.b.ins().fcmp(FloatCC::NotEqual, x, y);
                                    self.b.ins().band_not(ne, uno)
                                } else {
                                    let eq = self.b.ins().fcmp(FloatCC::Equal, x, y);
                                    self.b.ins().bor(eq, uno)
                                }
                            }
                            _ => self.b.ins().fcmp(float_cc(cond), x, y),
                        }
                    }
                };
                let v = self.bool01(m);
                self.set(d, v)
            }
            Op::Fneg | Op::Fabs => {
                let x = self.get(a);
                let k = self.splat(if i.op == Op::Fneg { 0x8000_0000 } else { 0x7FFF_FFFF });
                let v = if i.op == Op::Fneg { self.b.ins().bxor(x, k) } else { self.b.ins().band(x, k) };
                self.set(d, v)
            }
            Op::Fadd | Op::Fsub | Op::Fmul | Op::Fdiv | Op::Fmin | Op::Fmax => {
                let (x, y) = (self.getf(a), self.getf(b));
                let v = match i.op {
                    Op::Fadd => self.b.ins().fadd(x, y),
                    Op::Fsub => self.b.ins().fsub(x, y),
                    Op::Fmul => self.b.ins().fmul(x, y),
                    Op::Fdiv => self.b.ins().fdiv(x, y),
                    Op::Fmin => self.minmax(x, y, false),
                    _ => self.minmax(x, y, true),
                };
                self.setf(d, v)
            }
            Op::Ffma => {
                let (x, y, z) = (self.getf(a), self.getf(b), self.getf(c));
                let v = self.fma(x, y, z);
                self.setf(d, v)
            }
            Op::Fsqrt | Op::Frcp | Op::Frsq => {
                let x = self.getf(a);
                let one = self.splatf(1.0);
                let v = match i.op {
                    Op::Fsqrt => self.b.ins().sqrt(x),
                    Op::Frcp => self.b.ins().fdiv(one, x),
                    _ => {
                        let s = self.b.ins().sqrt(x);
                        self.b.ins().fdiv(one, s)
                    }
                };
                self.setf(d, v)
            }
            Op::F2i | Op::F2u => {
                let x = self.getf(a);
                let v = if i.op == Op::F2i {
                    self.b.ins().fcvt_to_sint_sat(types::I32X4, x)
                } else {
                    self.b.ins().fcvt_to_uint_sat(types::I32X4, x)
                };
                self.set(d, v)
            }
            Op::I2f | Op::U2f => {
                let x = self.get(a);
                let v = if i.op == Op::I2f {
                    self.b.ins().fcvt_from_sint(types::F32X4, x)
                } else {
                    self.b.ins().fcvt_from_uint(types::F32X4, x)
                };
                self.setf(d, v)
            }
            _ => unreachable!("{:?} is not covered", i.op),
        }
    }

    /// Stores every written row: whole when all four lanes are active, else blending in
    /// the old values of the lanes outside `lanes`. Leaves the builder in `next`.
    fn store(&mut self, bits: Value, lanes: Value, next: Block) {
        let (full, part) = (self.b.create_block(), self.b.create_block());
        let all = self.b.ins().icmp_imm_u(IntCC::Equal, bits, (1 << VLANES) - 1);
        self.b.ins().brif(all, full, &[], part, &[]);
        for (block, blend) in [(full, false), (part, true)] {
            self.b.switch_to_block(block);
            for r in self.written.clone() {
                let off = r as i32 * self.row_bytes;
                let mut v = self.vals[&r];
                if blend {
                    let old = self.b.ins().load(types::I32X4, row_flags(), self.regs, off);
                    v = self.b.ins().bitselect(lanes, v, old);
                }
                self.b.ins().store(row_flags(), v, self.regs, off);
            }
            self.b.ins().jump(next, &[]);
        }
    }
}

fn int_cc(c: IntCond) -> IntCC {
    match c {
        IntCond::Eq => IntCC::Equal,
        IntCond::Ne => IntCC::NotEqual,
        IntCond::Ult => IntCC::UnsignedLessThan,
        IntCond::Ule => IntCC::UnsignedLessThanOrEqual,
        IntCond::Ugt => IntCC::UnsignedGreaterThan,
        IntCond::Uge => IntCC::UnsignedGreaterThanOrEqual,
        IntCond::Slt => IntCC::SignedLessThan,
        IntCond::Sle => IntCC::SignedLessThanOrEqual,
        IntCond::Sgt => IntCC::SignedGreaterThan,
        IntCond::Sge => IntCC::SignedGreaterThanOrEqual,
    }
}

fn float_cc(c: FloatCond) -> FloatCC {
    match c {
        FloatCond::Oeq => FloatCC::Equal,
        FloatCond::Olt => FloatCC::LessThan,
        FloatCond::Ole => FloatCC::LessThanOrEqual,
        FloatCond::Ogt => FloatCC::GreaterThan,
        FloatCond::Oge => FloatCC::GreaterThanOrEqual,
        FloatCond::Une => FloatCC::NotEqual,
        FloatCond::Ult => FloatCC::UnorderedOrLessThan,
        FloatCond::Ule => FloatCC::UnorderedOrLessThanOrEqual,
        FloatCond::Ugt => FloatCC::UnorderedOrGreaterThan,
        FloatCond::Uge => FloatCC::UnorderedOrGreaterThanOrEqual,
        FloatCond::Ord => FloatCC::Ordered,
        // One, Ueq, IsNan and IsInf are emitted apart.
        FloatCond::Uno | FloatCond::IsNan | FloatCond::IsInf => FloatCC::Unordered,
        FloatCond::One => FloatCC::OrderedNotEqual,
        FloatCond::Ueq => FloatCC::UnorderedOrEqual,
    }
}

/// The parameters of a run function `(regs: *mut u32, mask: u32, args: *const u8, csrs:
/// *const CsrTable)`.
pub struct Params {
    pub regs: Value,
    pub mask: Value,
    pub args: Value,
    pub csrs: Value,
}

/// The warp's CSR table: host memory the core keeps filled and alive for the call.
fn csr_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// Emits the body of a run function ([`Params`]) for `code` over `nt` lanes, into the
/// builder's current block, ending with the return: one loop iteration per host vector of
/// lanes (the IR holds the run once, whatever the warp's width), skipping a chunk whose
/// lanes are all inactive.
pub fn run_body(b: &mut FunctionBuilder, p: Params, code: &[Instr], nt: usize, consts: &[Option<u32>]) {
    let Params { regs, mask, args, csrs } = p;
    let ptr = b.func.dfg.value_type(regs);
    // Every lane reads the same argument words: each loaded once for the whole run.
    let mut arg_words = HashMap::new();
    for i in code.iter().filter(|i| i.op == Op::Ldg) {
        for k in 0..super::cover::arg_words(i).expect("covered: an argument load") {
            let off = i.imm + 4 * k;
            arg_words.entry(off).or_insert_with(|| {
                let x = b.ins().load(types::I32, args_flags(), args, off as i32);
                b.ins().splat(types::I32X4, x)
            });
        }
    }
    // Every lane reads the same uniform CSR words: each loaded once too.
    let mut csr_words = HashMap::new();
    for i in code.iter().filter(|i| i.op == Op::Csr) {
        if let Some(super::CsrAt::Word(off)) = super::csr_offset(i.imm) {
            csr_words.entry(i.imm).or_insert_with(|| {
                let x = b.ins().load(types::I32, csr_flags(), csrs, off);
                b.ins().splat(types::I32X4, x)
            });
        }
    }
    let (body, latch, exit) = (b.create_block(), b.create_block(), b.create_block());
    let (head, end) = (b.create_block(), b.ins().iadd_imm_u(regs, (nt * 4) as i64));
    b.ins().jump(head, &[regs.into(), mask.into()]);

    // head(p, m): `p` points at this chunk's lanes of register 0, `m` holds its mask bits
    // in the low four.
    b.switch_to_block(head);
    let (p, m) = (b.append_block_param(head, ptr), b.append_block_param(head, types::I32));
    let bits = b.ins().band_imm_u(m, (1 << VLANES) - 1);
    b.ins().brif(bits, body, &[], latch, &[]);

    b.switch_to_block(body);
    let lane_bits: Vec<u8> = (0..VLANES).flat_map(|l| (1u32 << l).to_le_bytes()).collect();
    let handle = b.func.dfg.constants.insert(ConstantData::from(lane_bits));
    let lane_bits = b.ins().vconst(types::I32X4, handle);
    let mv = b.ins().splat(types::I32X4, m);
    let sel = b.ins().band(mv, lane_bits);
    let zero = b.ins().iconst(types::I32, 0);
    let zero = b.ins().splat(types::I32X4, zero);
    let lanes = b.ins().icmp(IntCC::NotEqual, sel, zero);
    let row_off = b.ins().isub(p, regs);
    let csr_lanes = b.ins().iadd(csrs, row_off);
    let mut ch = Chunk {
        b: &mut *b,
        regs: p,
        row_bytes: (nt * 4) as i32,
        vals: HashMap::new(),
        written: Vec::new(),
        consts,
        arg_words: &arg_words,
        csr_words: &csr_words,
        csr_lanes,
    };
    for i in code {
        ch.op(i);
    }
    ch.store(bits, lanes, latch);

    b.switch_to_block(latch);
    let next_p = b.ins().iadd_imm_u(p, (VLANES * 4) as i64);
    let next_m = b.ins().ushr_imm_u(m, VLANES as i64);
    let more = b.ins().icmp(IntCC::UnsignedLessThan, next_p, end);
    b.ins().brif(more, head, &[next_p.into(), next_m.into()], exit, &[]);

    b.switch_to_block(exit);
    b.ins().return_(&[]);
}
