//! Arithmetic, logic, comparisons, conversions, composites and matrix algebra.
//!
//! Scalar and vector operations map component by component through `num`'s per-width
//! selection (8/16/32/64-bit integers, 16/32/64-bit floats); bitwise and logical ops work
//! per register.

use super::num::{FOp, FUn, IOp};
use super::{Lowerer, Val};
use crate::shader::emit::I;
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::module::InstExt;
use crate::shader::types::{Id, Scalar, Shape, Type};
use rspirv::dr::Instruction;
use spirv::Op;
use vortex_model::abi::isa::{FloatCond, IntCond, Op as Vx, Round};

impl<'m> Lowerer<'m> {
    pub(super) fn alu_inst(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        let op = inst.class.opcode;
        match op {
            IAdd | ISub | IMul | UDiv | SDiv | UMod | SRem | SMod | ShiftLeftLogical | ShiftRightLogical
            | ShiftRightArithmetic | BitwiseAnd | LogicalAnd | BitwiseOr | LogicalOr | BitwiseXor | LogicalNotEqual
            | FAdd | FSub | FMul | FDiv | FRem | FMod => self.arith_inst(inst),
            LogicalEqual
            | IEqual
            | INotEqual
            | UGreaterThan
            | UGreaterThanEqual
            | ULessThan
            | ULessThanEqual
            | SGreaterThan
            | SGreaterThanEqual
            | SLessThan
            | SLessThanEqual
            | FOrdEqual
            | FOrdNotEqual
            | FOrdLessThan
            | FOrdLessThanEqual
            | FOrdGreaterThan
            | FOrdGreaterThanEqual
            | FUnordEqual
            | FUnordNotEqual
            | FUnordLessThan
            | FUnordLessThanEqual
            | FUnordGreaterThan
            | FUnordGreaterThanEqual
            | Ordered
            | Unordered => self.compare_inst(inst),
            IsNan | IsInf | SNegate | FNegate | Not | LogicalNot | BitReverse | QuantizeToF16 => self.unary_inst(inst),
            BitCount => self.bit_count(inst),
            BitFieldInsert => self.bitfield(inst, Vx::Bfi, false),
            BitFieldSExtract => self.bitfield(inst, Vx::Bfe, true),
            BitFieldUExtract => self.bitfield(inst, Vx::Bfe, false),
            IAddCarry => self.wide_pair(inst, Vx::Iaddc, false),
            ISubBorrow => self.wide_pair(inst, Vx::Isubb, false),
            UMulExtended => self.wide_pair(inst, Vx::Imulx, false),
            SMulExtended => self.wide_pair(inst, Vx::Imulx, true),
            Any | All => self.reduce(inst, if op == Any { Vx::Or } else { Vx::And }),
            Select => self.select(inst),
            ConvertFToS | ConvertFToU | ConvertSToF | ConvertUToF => self.convert(inst),
            UConvert | SConvert => self.resize(inst),
            FConvert => self.fconvert(inst),
            Bitcast => self.bitcast(inst),
            CompositeConstruct => self.construct(inst),
            CompositeExtract => self.extract(inst),
            CompositeInsert => self.insert(inst),
            VectorShuffle => self.shuffle(inst),
            VectorExtractDynamic => self.extract_dynamic(inst),
            VectorInsertDynamic => self.insert_dynamic(inst),
            Transpose | Dot | VectorTimesScalar | MatrixTimesScalar | MatrixTimesVector | VectorTimesMatrix
            | MatrixTimesMatrix | OuterProduct => self.matrix_inst(inst),
            ConvertUToPtr | ConvertPtrToU | PtrEqual | PtrNotEqual | PtrDiff => self.pointer_inst(inst),
            _ => Err(unsupported!("SPIR-V instruction Op{}", inst.class.opname)),
        }
    }

    /// Integer, float, bitwise and logical binary arithmetic.
    fn arith_inst(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        match inst.class.opcode {
            IAdd => self.int_binary(inst, IOp::Add),
            ISub => self.int_binary(inst, IOp::Sub),
            IMul => self.int_binary(inst, IOp::Mul),
            UDiv => self.int_binary(inst, IOp::UDiv),
            SDiv => self.int_binary(inst, IOp::SDiv),
            UMod => self.int_binary(inst, IOp::URem),
            SRem => self.int_binary(inst, IOp::SRem),
            SMod => self.int_binary(inst, IOp::SMod),
            ShiftLeftLogical => self.int_binary(inst, IOp::Shl),
            ShiftRightLogical => self.int_binary(inst, IOp::Shr),
            ShiftRightArithmetic => self.int_binary(inst, IOp::Sar),
            BitwiseAnd | LogicalAnd => self.per_word(inst, Vx::And),
            BitwiseOr | LogicalOr => self.per_word(inst, Vx::Or),
            BitwiseXor | LogicalNotEqual => self.per_word(inst, Vx::Xor),
            FAdd => self.float_binary(inst, FOp::Add),
            FSub => self.float_binary(inst, FOp::Sub),
            FMul => self.float_binary(inst, FOp::Mul),
            FDiv => self.float_binary(inst, FOp::Div),
            FRem | FMod => self.float_rem(inst),
            _ => Err(unsupported!("SPIR-V instruction Op{}", inst.class.opname)),
        }
    }

    /// Integer, logical and float comparisons.
    fn compare_inst(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        match inst.class.opcode {
            LogicalEqual | IEqual => self.int_compare(inst, IntCond::Eq),
            INotEqual => self.int_compare(inst, IntCond::Ne),
            UGreaterThan => self.int_compare(inst, IntCond::Ugt),
            UGreaterThanEqual => self.int_compare(inst, IntCond::Uge),
            ULessThan => self.int_compare(inst, IntCond::Ult),
            ULessThanEqual => self.int_compare(inst, IntCond::Ule),
            SGreaterThan => self.int_compare(inst, IntCond::Sgt),
            SGreaterThanEqual => self.int_compare(inst, IntCond::Sge),
            SLessThan => self.int_compare(inst, IntCond::Slt),
            SLessThanEqual => self.int_compare(inst, IntCond::Sle),
            FOrdEqual => self.float_compare(inst, FloatCond::Oeq),
            FOrdNotEqual => self.float_compare(inst, FloatCond::One),
            FOrdLessThan => self.float_compare(inst, FloatCond::Olt),
            FOrdLessThanEqual => self.float_compare(inst, FloatCond::Ole),
            FOrdGreaterThan => self.float_compare(inst, FloatCond::Ogt),
            FOrdGreaterThanEqual => self.float_compare(inst, FloatCond::Oge),
            FUnordEqual => self.float_compare(inst, FloatCond::Ueq),
            FUnordNotEqual => self.float_compare(inst, FloatCond::Une),
            FUnordLessThan => self.float_compare(inst, FloatCond::Ult),
            FUnordLessThanEqual => self.float_compare(inst, FloatCond::Ule),
            FUnordGreaterThan => self.float_compare(inst, FloatCond::Ugt),
            FUnordGreaterThanEqual => self.float_compare(inst, FloatCond::Uge),
            Ordered => self.float_compare(inst, FloatCond::Ord),
            Unordered => self.float_compare(inst, FloatCond::Uno),
            _ => Err(unsupported!("SPIR-V instruction Op{}", inst.class.opname)),
        }
    }

    /// Componentwise unary operations: negation, not, float classes, bit reverse, quantize.
    fn unary_inst(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        let op = inst.class.opcode;
        match op {
            IsNan | IsInf => {
                let c = if op == IsNan { FloatCond::IsNan } else { FloatCond::IsInf };
                // The class tests ignore `b`, but the encoding requires a register.
                self.unary(inst, |l, s, d, a| {
                    l.fcmp(c, s, d, a, a);
                    Ok(())
                })
            }
            SNegate => self.unary(inst, |l, s, d, a| l.ineg(s, d, a)),
            FNegate => self.unary(inst, |l, s, d, a| l.fneg(s, d, a)),
            Not => self.unary(inst, |l, s, d, a| {
                for w in 0..s.regs() as u16 {
                    l.un(Vx::Not, d + w, a + w)?;
                }
                l.canon(s, d)
            }),
            LogicalNot => {
                let one = self.imm(1)?;
                self.unary(inst, |l, _, d, a| {
                    l.e.emit(I::new(Vx::Xor).dst(d).a(a).b(one));
                    Ok(())
                })
            }
            BitReverse => self.unary(inst, |l, s, d, a| {
                if s == Scalar::I64 {
                    l.un(Vx::Brev, d, a + 1)?;
                    l.un(Vx::Brev, d + 1, a)
                } else {
                    l.un(Vx::Brev, d, a)?;
                    if s.is_narrow_int() {
                        let sh = l.imm(32 - s.bits())?;
                        l.e.emit(I::new(Vx::Shr).dst(d).a(d).b(sh));
                    }
                    Ok(())
                }
            }),
            QuantizeToF16 => self.unary(inst, |l, _, d, a| {
                l.e.mov(d, a);
                l.quantize(d);
                Ok(())
            }),
            _ => Err(unsupported!("SPIR-V instruction Op{}", inst.class.opname)),
        }
    }

    /// Matrix and vector algebra.
    fn matrix_inst(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        match inst.class.opcode {
            Transpose => self.transpose(inst),
            Dot => {
                let (a, b) = (inst.id(0)?, inst.id(1)?);
                let (ar, sh) = self.operand(a)?;
                let br = self.regs(b)?;
                let d = self.dot_typed(sh.scalar, ar, br, sh.n)?;
                self.define(inst.rid()?, d, inst.rty()?);
                Ok(())
            }
            VectorTimesScalar | MatrixTimesScalar => {
                let (ty, rid) = (inst.rty()?, inst.rid()?);
                let (v, s) = (self.regs(inst.id(0)?)?, self.regs(inst.id(1)?)?);
                let fs = self.float_kind(inst.id(1)?)?;
                let n = self.m.types.regs(ty)? / fs.regs();
                let cr = fs.regs() as u16;
                let d = self.e.alloc(n * fs.regs())?;
                for k in 0..n as u16 {
                    self.fbin(FOp::Mul, fs, d + k * cr, v + k * cr, s)?;
                }
                self.define(rid, d, ty);
                Ok(())
            }
            MatrixTimesVector => {
                let (mt, m) = (self.type_of(inst.id(0)?)?, self.regs(inst.id(0)?)?);
                let v = self.regs(inst.id(1)?)?;
                let (cols, rows, fs) = self.matrix_dims(mt)?;
                let d = self.mat_vec(fs, m, cols, rows, v)?;
                self.define(inst.rid()?, d, inst.rty()?);
                Ok(())
            }
            VectorTimesMatrix => {
                let v = self.regs(inst.id(0)?)?;
                let (mt, m) = (self.type_of(inst.id(1)?)?, self.regs(inst.id(1)?)?);
                let (cols, rows, fs) = self.matrix_dims(mt)?;
                let cr = fs.regs() as u16;
                let d = self.e.alloc(cols * fs.regs())?;
                for c in 0..cols as u16 {
                    let t = self.dot_typed(fs, v, m + c * rows as u16 * cr, rows)?;
                    self.copy_regs(d + c * cr, t, cr as u32);
                }
                self.define(inst.rid()?, d, inst.rty()?);
                Ok(())
            }
            MatrixTimesMatrix => {
                let (at, a) = (self.type_of(inst.id(0)?)?, self.regs(inst.id(0)?)?);
                let (bt, b) = (self.type_of(inst.id(1)?)?, self.regs(inst.id(1)?)?);
                let (acols, rows, fs) = self.matrix_dims(at)?;
                let (bcols, _, _) = self.matrix_dims(bt)?;
                let cr = fs.regs() as u16;
                let d = self.e.alloc(bcols * rows * fs.regs())?;
                for j in 0..bcols as u16 {
                    let col = self.mat_vec(fs, a, acols, rows, b + j * acols as u16 * cr)?;
                    self.copy_regs(d + j * rows as u16 * cr, col, rows * cr as u32);
                }
                self.define(inst.rid()?, d, inst.rty()?);
                Ok(())
            }
            OuterProduct => {
                let ty = inst.rty()?;
                let (cols, rows, fs) = self.matrix_dims(ty)?;
                let cr = fs.regs() as u16;
                let (c, r) = (self.regs(inst.id(0)?)?, self.regs(inst.id(1)?)?);
                let d = self.e.alloc(cols * rows * fs.regs())?;
                for j in 0..cols as u16 {
                    for i in 0..rows as u16 {
                        self.fbin(FOp::Mul, fs, d + (j * rows as u16 + i) * cr, c + i * cr, r + j * cr)?;
                    }
                }
                self.define(inst.rid()?, d, ty);
                Ok(())
            }
            _ => Err(unsupported!("SPIR-V instruction Op{}", inst.class.opname)),
        }
    }

    /// Physical-storage-buffer pointers as values: conversions, comparisons, differences.
    fn pointer_inst(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        let op = inst.class.opcode;
        match op {
            // Physical storage buffer pointers are their 64-bit address.
            ConvertUToPtr | ConvertPtrToU => {
                let (rid, rty) = (inst.rid()?, inst.rty()?);
                let src = inst.id(0)?;
                let r = self.regs(src)?;
                let sty = self.type_of(src)?;
                let ok = |t: &Type| super::super::types::is_physical(t) || matches!(t, Type::Int { width: 64, .. });
                if !ok(self.m.types.get(sty)?) || !ok(self.m.types.get(rty)?) {
                    return Err(unsupported!(
                        "{} other than between a 64-bit integer and a physical pointer",
                        inst.name()
                    ));
                }
                self.vals.insert(rid, Val::Regs { r, ty: rty });
                Ok(())
            }
            PtrEqual | PtrNotEqual | PtrDiff => {
                let (rid, rty) = (inst.rid()?, inst.rty()?);
                let (a, b) = (self.regs(inst.id(0)?)?, self.regs(inst.id(1)?)?);
                let d = match op {
                    PtrEqual => self.e.op2(I::new(Vx::Icmp64).cond(IntCond::Eq), a, b)?,
                    PtrNotEqual => self.e.op2(I::new(Vx::Icmp64).cond(IntCond::Ne), a, b)?,
                    _ => {
                        // (a - b) / stride of the pointee, in the result's width.
                        let pty = self.type_of(inst.id(0)?)?;
                        let stride = self
                            .m
                            .decos(pty)
                            .array_stride
                            .ok_or_else(|| invalid!("{}: pointer type without ArrayStride", inst.name()))?;
                        let diff = self.e.op64(Vx::Isub64, a, b)?;
                        let k = self.imm64(stride as u64)?;
                        // A 32-bit result is the pair's low word.
                        self.e.op64(Vx::Sdiv64, diff, k)?
                    }
                };
                self.define(rid, d, rty);
                Ok(())
            }
            _ => Err(unsupported!("SPIR-V instruction Op{}", inst.class.opname)),
        }
    }

    /// The float kind of a scalar or vector value.
    fn float_kind(&mut self, id: Id) -> Result<Scalar> {
        let ty = self.type_of(id)?;
        let s = self.m.types.shape(ty)?.scalar;
        if !s.is_float() {
            return Err(invalid!("%{id} is not a float value"));
        }
        Ok(s)
    }

    /// `dst = op(a)` for a unary 32-bit op.
    pub(super) fn un(&mut self, op: Vx, d: u16, a: u16) -> Result<()> {
        self.e.emit(I::new(op).dst(d).a(a));
        Ok(())
    }

    /// Componentwise unary op: `f(lowerer, operand component kind, dst, a)` per component.
    pub(super) fn unary(
        &mut self,
        inst: &Instruction,
        mut f: impl FnMut(&mut Self, Scalar, u16, u16) -> Result<()>,
    ) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (a, ash) = self.operand(inst.id(0)?)?;
        let rsh = self.m.types.shape(rty)?;
        let d = self.e.alloc(rsh.n * rsh.scalar.regs())?;
        for k in 0..rsh.n as u16 {
            f(self, ash.scalar, d + k * rsh.scalar.regs() as u16, a + k * ash.scalar.regs() as u16)?;
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// Componentwise binary op on operands 0 and 1: `f(lowerer, operand kind, d, x, y)`.
    pub(super) fn binary_with(
        &mut self,
        inst: &Instruction,
        mut f: impl FnMut(&mut Self, Scalar, u16, u16, u16) -> Result<()>,
    ) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (x, xs) = self.operand(inst.id(0)?)?;
        let (y, ys) = self.operand(inst.id(1)?)?;
        let rsh = self.m.types.shape(rty)?;
        let d = self.e.alloc(rsh.n * rsh.scalar.regs())?;
        for k in 0..rsh.n as u16 {
            let (dk, xk, yk) =
                (d + k * rsh.scalar.regs() as u16, x + k * xs.scalar.regs() as u16, y + k * ys.scalar.regs() as u16);
            f(self, xs.scalar, dk, xk, yk)?;
        }
        self.define(rid, d, rty);
        Ok(())
    }

    fn int_binary(&mut self, inst: &Instruction, op: IOp) -> Result<()> {
        self.binary_with(inst, |l, s, d, x, y| l.ibin(op, s, d, x, y))
    }

    fn float_binary(&mut self, inst: &Instruction, op: FOp) -> Result<()> {
        self.binary_with(inst, |l, s, d, x, y| l.fbin(op, s, d, x, y))
    }

    fn int_compare(&mut self, inst: &Instruction, c: IntCond) -> Result<()> {
        self.binary_with(inst, |l, s, d, x, y| l.icmp(c, s, d, x, y))
    }

    fn float_compare(&mut self, inst: &Instruction, c: FloatCond) -> Result<()> {
        self.binary_with(inst, |l, s, d, x, y| {
            l.fcmp(c, s, d, x, y);
            Ok(())
        })
    }

    /// Bitwise and logical ops: every register independently.
    fn per_word(&mut self, inst: &Instruction, op: Vx) -> Result<()> {
        self.binary_with(inst, |l, s, d, x, y| {
            for w in 0..s.regs() as u16 {
                l.e.emit(I::new(op).dst(d + w).a(x + w).b(y + w));
            }
            Ok(())
        })
    }

    /// OpFRem (sign of x, truncated quotient) and OpFMod (sign of y, floored quotient).
    fn float_rem(&mut self, inst: &Instruction) -> Result<()> {
        let round = if inst.class.opcode == Op::FRem { Round::Trunc } else { Round::Floor };
        self.binary_with(inst, |l, s, d, x, y| l.frem(s, round, d, x, y))
    }

    /// `x - y * round(x / y)`.
    pub(super) fn frem(&mut self, s: Scalar, round: Round, d: u16, x: u16, y: u16) -> Result<()> {
        let q = self.fbin_new(FOp::Div, s, x, y)?;
        let q = self.fun_new(FUn::Round(round), s, q)?;
        let p = self.fbin_new(FOp::Mul, s, y, q)?;
        self.fbin(FOp::Sub, s, d, x, p)
    }

    fn bit_count(&mut self, inst: &Instruction) -> Result<()> {
        self.unary(inst, |l, s, d, a| {
            l.un(Vx::Popc, d, a)?;
            if s == Scalar::I64 {
                let hi = l.e.op1(Vx::Popc, a + 1)?;
                l.e.emit(I::new(Vx::Iadd).dst(d).a(d).b(hi));
            }
            Ok(())
        })
    }

    /// BitFieldInsert (base, insert, offset, count) and Bit­Field[SU]Extract (base, offset,
    /// count); offset and count are scalars shared by every component. 8- and 16-bit
    /// operands work on their canonical registers (a signed extract then masks its result);
    /// 64-bit ones are split at the word boundary.
    fn bitfield(&mut self, inst: &Instruction, op: Vx, signed: bool) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let sh = self.m.types.shape(rty)?;
        let s = sh.scalar;
        let cr = s.regs() as u16;
        let base = self.regs(inst.id(0)?)?;
        let d = self.e.alloc(sh.n * s.regs())?;
        if op == Vx::Bfi {
            let ins = self.regs(inst.id(1)?)?;
            let (off, cnt) = (self.regs(inst.id(2)?)?, self.regs(inst.id(3)?)?);
            for k in 0..sh.n as u16 {
                let (dk, bk, ik) = (d + k * cr, base + k * cr, ins + k * cr);
                if s == Scalar::I64 {
                    self.bfi64(dk, bk, ik, off, cnt)?;
                } else {
                    self.e.emit(I::new(Vx::Bfi).dst(dk).a(bk).b(ik).c(off).d(cnt));
                    self.canon(s, dk)?;
                }
            }
        } else {
            let (off, cnt) = (self.regs(inst.id(1)?)?, self.regs(inst.id(2)?)?);
            for k in 0..sh.n as u16 {
                let (dk, bk) = (d + k * cr, base + k * cr);
                if s == Scalar::I64 {
                    self.bfe64(dk, bk, off, cnt, signed)?;
                } else {
                    self.e.emit(I::new(Vx::Bfe).signed(signed).dst(dk).a(bk).b(off).c(cnt));
                    self.canon(s, dk)?;
                }
            }
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// 64-bit extract: shift the field down to bit 0, then clear (or sign-fill) above it.
    fn bfe64(&mut self, d: u16, base: u16, off: u16, cnt: u16, signed: bool) -> Result<()> {
        let (zero, c64) = (self.imm(0)?, self.imm(64)?);
        let t = self.e.op64(Vx::Shr64, base, off)?;
        // Keep the low `cnt` bits: shift up by 64 - cnt, then back down (a count of zero
        // gives zero).
        let up = self.e.op2(Vx::Isub, c64, cnt)?;
        let t = self.e.op64(Vx::Shl64, t, up)?;
        let back = self.e.op64(if signed { Vx::Sar64 } else { Vx::Shr64 }, t, up)?;
        let none = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), cnt, zero)?;
        let z64 = self.imm64(0)?;
        self.sel_words(d, none, z64, back, 2);
        Ok(())
    }

    /// 64-bit insert: `base & !mask | (insert << off) & mask`, mask = `cnt` ones at `off`.
    fn bfi64(&mut self, d: u16, base: u16, ins: u16, off: u16, cnt: u16) -> Result<()> {
        let (zero, c64) = (self.imm(0)?, self.imm(64)?);
        let ones = self.imm64(u64::MAX)?;
        let up = self.e.op2(Vx::Isub, c64, cnt)?;
        let m = self.e.op64(Vx::Shr64, ones, up)?;
        let none = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), cnt, zero)?;
        let z64 = self.imm64(0)?;
        let m2 = self.e.alloc(2)?;
        self.sel_words(m2, none, z64, m, 2);
        let m = self.e.op64(Vx::Shl64, m2, off)?;
        let v = self.e.op64(Vx::Shl64, ins, off)?;
        for w in 0..2u16 {
            let keep = self.e.op1(Vx::Not, m + w)?;
            let b = self.e.op2(Vx::And, base + w, keep)?;
            let i = self.e.op2(Vx::And, v + w, m + w)?;
            self.e.emit(I::new(Vx::Or).dst(d + w).a(b).b(i));
        }
        Ok(())
    }

    /// IAddCarry / ISubBorrow / [SU]MulExtended: the op writes (low, high) as a pair; the
    /// result struct holds all low components, then all high components.
    fn wide_pair(&mut self, inst: &Instruction, op: Vx, signed: bool) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (x, sh) = self.operand(inst.id(0)?)?;
        let y = self.regs(inst.id(1)?)?;
        if sh.scalar != Scalar::I32 {
            return Err(unsupported!("{}-bit Op{}", sh.scalar.bits(), inst.class.opname));
        }
        let n = sh.n as u16;
        let d = self.e.alloc(2 * sh.n)?;
        for k in 0..n {
            let t = self.e.alloc(2)?;
            self.e.emit(I::new(op).signed(signed).dst(t).a(x + k).b(y + k));
            self.e.mov(d + k, t);
            self.e.mov(d + n + k, t + 1);
        }
        self.define(rid, d, rty);
        Ok(())
    }

    fn reduce(&mut self, inst: &Instruction, op: Vx) -> Result<()> {
        let (v, sh) = self.operand(inst.id(0)?)?;
        let mut acc = v;
        for k in 1..sh.n as u16 {
            acc = self.e.op2(op, acc, v + k)?;
        }
        self.define(inst.rid()?, acc, inst.rty()?);
        Ok(())
    }

    fn select(&mut self, inst: &Instruction) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let t = self.m.types.get(rty)?;
        if matches!(t, Type::Pointer { .. }) && !super::super::types::is_physical(t) {
            return Err(unsupported!("OpSelect %{rid} of pointers (variable pointers)"));
        }
        let (c, csh) = self.operand(inst.id(0)?)?;
        let (a, b) = (self.regs(inst.id(1)?)?, self.regs(inst.id(2)?)?);
        let n = self.m.types.regs(rty)?;
        // A vector condition selects per component; a scalar one selects the whole object.
        let per_comp = if csh.n > 1 { (n / csh.n).max(1) } else { n };
        let d = self.e.alloc(n)?;
        for i in 0..n {
            let ci = if csh.n > 1 { c + (i / per_comp) as u16 } else { c };
            self.e.emit(I::new(Vx::Sel).dst(d + i as u16).a(ci).b(a + i as u16).c(b + i as u16));
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// Float <-> integer conversions, every width (out-of-range values are undefined in
    /// SPIR-V; here they saturate, and narrow results keep their low bits).
    fn convert(&mut self, inst: &Instruction) -> Result<()> {
        let rs = self.m.types.shape(inst.rty()?)?.scalar;
        let op = inst.class.opcode;
        self.unary(inst, move |l, s, d, a| match op {
            Op::ConvertFToS | Op::ConvertFToU => {
                let signed = op == Op::ConvertFToS;
                let vx = match (s == Scalar::F64, rs == Scalar::I64, signed) {
                    (false, false, true) => Vx::F2i,
                    (false, false, false) => Vx::F2u,
                    (false, true, true) => Vx::F2l,
                    (false, true, false) => Vx::F2ul,
                    (true, false, true) => Vx::D2i,
                    (true, false, false) => Vx::D2u,
                    (true, true, true) => Vx::D2l,
                    (true, true, false) => Vx::D2ul,
                };
                l.un(vx, d, a)?;
                l.canon(rs, d)
            }
            _ => {
                let signed = op == Op::ConvertSToF;
                let a = if signed { l.sext(s, a)? } else { a };
                let vx = match (s == Scalar::I64, rs == Scalar::F64, signed) {
                    (false, false, true) => Vx::I2f,
                    (false, false, false) => Vx::U2f,
                    (true, false, true) => Vx::L2f,
                    (true, false, false) => Vx::Ul2f,
                    (false, true, true) => Vx::I2d,
                    (false, true, false) => Vx::U2d,
                    (true, true, true) => Vx::L2d,
                    (true, true, false) => Vx::Ul2d,
                };
                l.un(vx, d, a)?;
                if rs == Scalar::F16 {
                    l.quantize(d);
                }
                Ok(())
            }
        })
    }

    /// UConvert / SConvert between integer widths: extend (zero or sign) or truncate.
    fn resize(&mut self, inst: &Instruction) -> Result<()> {
        let rs = self.m.types.shape(inst.rty()?)?.scalar;
        let signed = inst.class.opcode == Op::SConvert;
        let sh31 = self.imm(31)?;
        let zero = self.imm(0)?;
        self.unary(inst, move |l, s, d, a| {
            let lo = if signed && s.bits() < rs.bits() { l.sext(s, a)? } else { a };
            l.e.mov(d, lo);
            if rs == Scalar::I64 {
                if s == Scalar::I64 {
                    l.e.mov(d + 1, a + 1);
                } else if signed {
                    l.e.emit(I::new(Vx::Sar).dst(d + 1).a(lo).b(sh31));
                } else {
                    l.e.mov(d + 1, zero);
                }
            } else {
                l.canon(rs, d)?;
            }
            Ok(())
        })
    }

    /// FConvert between float widths (round to nearest even when narrowing).
    fn fconvert(&mut self, inst: &Instruction) -> Result<()> {
        let rs = self.m.types.shape(inst.rty()?)?.scalar;
        self.unary(inst, move |l, s, d, a| {
            match (s, rs) {
                (Scalar::F64, Scalar::F64) => l.copy_regs(d, a, 2),
                (Scalar::F64, Scalar::F32) => l.un(Vx::D2f, d, a)?,
                (Scalar::F64, _) => {
                    l.un(Vx::D2h, d, a)?;
                    l.un(Vx::H2f, d, d)?;
                }
                (_, Scalar::F64) => l.un(Vx::F2d, d, a)?,
                (Scalar::F32, Scalar::F16) => {
                    l.e.mov(d, a);
                    l.quantize(d);
                }
                _ => l.e.mov(d, a),
            }
            Ok(())
        })
    }

    /// Bitcast: same-width components alias (or convert between an f16 and its bits);
    /// otherwise the value goes through its little-endian image in 32-bit words.
    fn bitcast(&mut self, inst: &Instruction) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let src = inst.id(0)?;
        let sty = self.type_of(src)?;
        let r = self.regs(src)?;
        // A physical pointer and a 64-bit integer or a uvec2 share their register image.
        let (st, rt) = (self.m.types.get(sty)?.clone(), self.m.types.get(rty)?.clone());
        let (sp, rp) = (super::super::types::is_physical(&st), super::super::types::is_physical(&rt));
        if sp || rp {
            if self.m.types.regs(sty)? != 2 || self.m.types.regs(rty)? != 2 {
                return Err(invalid!("OpBitcast %{rid} between a pointer and a value of another size"));
            }
            self.vals.insert(rid, Val::Regs { r, ty: rty });
            return Ok(());
        }
        if matches!(rt, Type::Pointer { .. }) || matches!(st, Type::Pointer { .. }) {
            return Err(unsupported!("OpBitcast %{rid} of a logical pointer"));
        }
        let (ss, rsh) = (self.m.types.shape(sty)?, self.m.types.shape(rty)?);
        if ss.scalar.bits() * ss.n != rsh.scalar.bits() * rsh.n {
            return Err(invalid!("OpBitcast %{rid} between types of different sizes"));
        }
        let (sf16, rf16) = (ss.scalar == Scalar::F16, rsh.scalar == Scalar::F16);
        if ss.scalar.bits() == rsh.scalar.bits() && !sf16 && !rf16 {
            self.vals.insert(rid, Val::Regs { r, ty: rty });
            return Ok(());
        }
        // The source's raw bits per component (f16 values back to their bits).
        let raw = if sf16 {
            let t = self.e.alloc(ss.n)?;
            for k in 0..ss.n as u16 {
                self.e.emit(I::new(Vx::F2h).dst(t + k).a(r + k));
            }
            t
        } else {
            r
        };
        let d = self.e.alloc(rsh.n * rsh.scalar.regs())?;
        if ss.scalar.bits() == rsh.scalar.bits() {
            // 16-bit integer <-> f16.
            for k in 0..rsh.n as u16 {
                if rf16 {
                    self.e.emit(I::new(Vx::H2f).dst(d + k).a(raw + k));
                } else {
                    self.e.mov(d + k, raw + k);
                }
            }
        } else {
            let words = self.pack_words(raw, ss.scalar.bits(), ss.n)?;
            self.unpack_words(d, words, rsh.scalar.bits(), rsh.n)?;
            if rf16 {
                for k in 0..rsh.n as u16 {
                    self.e.emit(I::new(Vx::H2f).dst(d + k).a(d + k));
                }
            }
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// `n` components of `bits` bits (canonical registers, raw bits) -> 32-bit words.
    fn pack_words(&mut self, r: u16, bits: u32, n: u32) -> Result<u16> {
        if bits >= 32 {
            return Ok(r);
        }
        let total = bits * n;
        let nw = total.div_ceil(32);
        let w = self.e.alloc(nw)?;
        let per = 32 / bits;
        for k in 0..n {
            let (word, sh) = ((k / per) as u16, (k % per) * bits);
            if sh == 0 {
                self.e.mov(w + word, r + k as u16);
            } else {
                let s = self.imm(sh)?;
                let t = self.e.op2(Vx::Shl, r + k as u16, s)?;
                self.e.emit(I::new(Vx::Or).dst(w + word).a(w + word).b(t));
            }
        }
        Ok(w)
    }

    /// 32-bit words -> `n` components of `bits` bits in `d` (canonical form).
    fn unpack_words(&mut self, d: u16, w: u16, bits: u32, n: u32) -> Result<()> {
        if bits >= 32 {
            self.copy_regs(d, w, n * bits / 32);
            return Ok(());
        }
        let per = 32 / bits;
        let width = self.imm(bits)?;
        for k in 0..n {
            let (word, sh) = ((k / per) as u16, self.imm((k % per) * bits)?);
            self.e.emit(I::new(Vx::Bfe).dst(d + k as u16).a(w + word).b(sh).c(width));
        }
        Ok(())
    }

    /// Copies `n` registers from `src` to `dst`.
    pub(super) fn copy_regs(&mut self, dst: u16, src: u16, n: u32) {
        for k in 0..n as u16 {
            self.e.mov(dst + k, src + k);
        }
    }

    fn construct(&mut self, inst: &Instruction) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let total = self.m.types.regs(rty)?;
        let d = self.e.alloc(total)?;
        let mut at = 0u32;
        for i in 0..inst.operands.len() {
            let id = inst.id(i)?;
            let (r, ty) = (self.regs(id)?, self.type_of(id)?);
            let n = self.m.types.regs(ty)?;
            if at + n > total {
                return Err(invalid!("OpCompositeConstruct %{rid}: constituents exceed the result type"));
            }
            self.copy_regs(d + at as u16, r, n);
            at += n;
        }
        if at != total {
            return Err(invalid!("OpCompositeConstruct %{rid}: constituents do not fill the result type"));
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// Register offset and type reached by literal `indices` (operands `from..`) into `ty`.
    fn path(&self, inst: &Instruction, mut ty: Id, from: usize) -> Result<(u32, Id)> {
        let mut off = 0;
        for i in from..inst.operands.len() {
            let (o, t) = self.m.types.member(ty, inst.lit(i)?)?;
            off += o;
            ty = t;
        }
        Ok((off, ty))
    }

    fn extract(&mut self, inst: &Instruction) -> Result<()> {
        let src = inst.id(0)?;
        let (r, ty) = (self.regs(src)?, self.type_of(src)?);
        let (off, mty) = self.path(inst, ty, 1)?;
        // A sub-range of an SSA value: alias it.
        self.vals.insert(inst.rid()?, Val::Regs { r: r + off as u16, ty: mty });
        Ok(())
    }

    fn insert(&mut self, inst: &Instruction) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (obj, comp) = (inst.id(0)?, inst.id(1)?);
        let (o, c) = (self.regs(obj)?, self.regs(comp)?);
        let n = self.m.types.regs(rty)?;
        let (off, oty) = self.path(inst, rty, 2)?;
        let on = self.m.types.regs(oty)?;
        let d = self.e.alloc(n)?;
        self.copy_regs(d, c, n);
        self.copy_regs(d + off as u16, o, on);
        self.define(rid, d, rty);
        Ok(())
    }

    fn shuffle(&mut self, inst: &Instruction) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (a, ash) = self.operand(inst.id(0)?)?;
        let b = self.regs(inst.id(1)?)?;
        let cr = ash.scalar.regs() as u16;
        let rsh = self.m.types.shape(rty)?;
        let d = self.e.alloc(rsh.n * cr as u32)?;
        for k in 0..rsh.n as u16 {
            let sel = inst.lit(2 + k as usize)?;
            if sel == u32::MAX {
                continue; // undefined component
            }
            let src = if sel < ash.n { a + sel as u16 * cr } else { b + (sel - ash.n) as u16 * cr };
            self.copy_regs(d + k * cr, src, cr as u32);
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// `v[i]` with a run-time `i`: a chain of selects.
    fn extract_dynamic(&mut self, inst: &Instruction) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (v, sh) = self.operand(inst.id(0)?)?;
        let idx = self.regs(inst.id(1)?)?;
        let cr = sh.scalar.regs() as u16;
        let d = self.e.alloc(cr as u32)?;
        self.copy_regs(d, v, cr as u32);
        for k in 1..sh.n as u16 {
            let kk = self.imm(k as u32)?;
            let c = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), idx, kk)?;
            for w in 0..cr {
                self.e.emit(I::new(Vx::Sel).dst(d + w).a(c).b(v + k * cr + w).c(d + w));
            }
        }
        self.define(rid, d, rty);
        Ok(())
    }

    fn insert_dynamic(&mut self, inst: &Instruction) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (v, sh) = self.operand(inst.id(0)?)?;
        let x = self.regs(inst.id(1)?)?;
        let idx = self.regs(inst.id(2)?)?;
        let cr = sh.scalar.regs() as u16;
        let d = self.e.alloc(sh.n * cr as u32)?;
        for k in 0..sh.n as u16 {
            let kk = self.imm(k as u32)?;
            let c = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), idx, kk)?;
            for w in 0..cr {
                self.e.emit(I::new(Vx::Sel).dst(d + k * cr + w).a(c).b(x + w).c(v + k * cr + w));
            }
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// (columns, rows, component kind) of a matrix type.
    pub(super) fn matrix_dims(&self, ty: Id) -> Result<(u32, u32, Scalar)> {
        match self.m.types.get(ty)? {
            Type::Matrix { col, cols } => {
                let sh = self.m.types.shape(*col)?;
                Ok((*cols, sh.n, sh.scalar))
            }
            _ => Err(invalid!("%{ty} is not a matrix type")),
        }
    }

    fn transpose(&mut self, inst: &Instruction) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let src = inst.id(0)?;
        let (m, mt) = (self.regs(src)?, self.type_of(src)?);
        let (cols, rows, fs) = self.matrix_dims(mt)?;
        let cr = fs.regs() as u16;
        let d = self.e.alloc(cols * rows * fs.regs())?;
        for c in 0..cols as u16 {
            for r in 0..rows as u16 {
                self.copy_regs(d + (r * cols as u16 + c) * cr, m + (c * rows as u16 + r) * cr, cr as u32);
            }
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// Column-major matrix (cols x rows, components of kind `s`) times vector (cols
    /// components).
    fn mat_vec(&mut self, s: Scalar, m: u16, cols: u32, rows: u32, v: u16) -> Result<u16> {
        let cr = s.regs() as u16;
        let d = self.e.alloc(rows * s.regs())?;
        for r in 0..rows as u16 {
            self.fbin(FOp::Mul, s, d + r * cr, m + r * cr, v)?;
            for c in 1..cols as u16 {
                let mc = m + (c * rows as u16 + r) * cr;
                self.ffma(s, d + r * cr, mc, v + c * cr, d + r * cr)?;
            }
        }
        Ok(d)
    }

    /// Shape of a result type (helper for the GLSL module).
    pub(super) fn shape_of(&self, ty: Id) -> Result<Shape> {
        self.m.types.shape(ty)
    }
}
