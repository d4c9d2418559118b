//! Integer dot products (`OpSDot`, `OpUDot`, `OpSUDot` and their `AccSat` forms,
//! `shaderIntegerDotProduct`): on vectors of any integer width, or on two 32-bit words each
//! packing four 8-bit components (`PackedVectorFormat4x8Bit`). As SPIR-V defines them, the
//! components are extended (by each operand's signedness) to the result's width, multiplied
//! and summed there; only the final addition of the accumulator saturates (an overflow before
//! it leaves the result undefined, so wrapping arithmetic gives the defined results). Lowered
//! to the multiply-adds every width already has (`num.rs`); no form is faster than that, which
//! the device's properties say.

use super::Lowerer;
use crate::shader::emit::I;
use crate::shader::error::{invalid, Result};
use crate::shader::module::InstExt;
use crate::shader::types::{Id, Scalar};
use rspirv::dr::Instruction;
use spirv::Op;
use vortex_model::abi::isa::{IntCond, Op as Vx};

use super::num::IOp;

/// Whether `op` is an integer dot product.
pub(super) fn handles(op: Op) -> bool {
    matches!(op, Op::SDot | Op::UDot | Op::SUDot | Op::SDotAccSat | Op::UDotAccSat | Op::SUDotAccSat)
}

impl Lowerer<'_> {
    pub(super) fn int_dot(&mut self, inst: &Instruction) -> Result<()> {
        let op = inst.class.opcode;
        let (s1, s2) = match op {
            Op::SDot | Op::SDotAccSat => (true, true),
            Op::UDot | Op::UDotAccSat => (false, false),
            _ => (true, false),
        };
        let rty = inst.rty()?;
        let rs = self.m.types.scalar(rty)?;
        let x = self.dot_operand(inst.id(0)?, s1, rs)?;
        let y = self.dot_operand(inst.id(1)?, s2, rs)?;
        if x.len() != y.len() {
            return Err(invalid!("{} of vectors of different lengths", inst.name()));
        }
        let n = rs.regs() as u16;
        let sum = self.e.alloc(n as u32)?;
        let prod = self.e.alloc(n as u32)?;
        for (k, (&a, &b)) in x.iter().zip(&y).enumerate() {
            let dst = if k == 0 { sum } else { prod };
            self.ibin(IOp::Mul, rs, dst, a, b)?;
            if k > 0 {
                self.ibin(IOp::Add, rs, sum, sum, prod)?;
            }
        }
        let d = if matches!(op, Op::SDotAccSat | Op::UDotAccSat | Op::SUDotAccSat) {
            let acc = self.regs(inst.id(2)?)?;
            self.dot_add_sat(rs, s1, sum, acc)?
        } else {
            sum
        };
        self.define(inst.rid()?, d, rty);
        Ok(())
    }

    /// The components of dot-product operand `id`, each extended to `rs` (signed or not).
    fn dot_operand(&mut self, id: Id, signed: bool, rs: Scalar) -> Result<Vec<u16>> {
        let ty = self.type_of(id)?;
        let shape = self.m.types.shape(ty)?;
        let r = self.regs(id)?;
        let words: Vec<(Scalar, u16)> = if shape.n == 1 {
            // Four 8-bit components packed into a 32-bit word, lowest byte first.
            let mask = self.imm(0xff)?;
            (0..4u32)
                .map(|k| {
                    let sh = self.imm(8 * k)?;
                    let b = self.e.op2(Vx::Shr, r, sh)?;
                    self.e.emit(I::new(Vx::And).dst(b).a(b).b(mask));
                    Ok((Scalar::I8, b))
                })
                .collect::<Result<_>>()?
        } else {
            let step = shape.scalar.regs() as u16;
            (0..shape.n as u16).map(|k| (shape.scalar, r + k * step)).collect()
        };
        words.into_iter().map(|(s, a)| self.dot_extend(s, rs, signed, a)).collect()
    }

    /// `a` of kind `s` extended to kind `rs` (as `OpSConvert` / `OpUConvert` would).
    fn dot_extend(&mut self, s: Scalar, rs: Scalar, signed: bool, a: u16) -> Result<u16> {
        if s == rs {
            return Ok(a);
        }
        let lo = if signed { self.sext(s, a)? } else { a };
        if rs == Scalar::I64 {
            let d = self.e.alloc(2)?;
            self.e.mov(d, lo);
            if signed {
                let sh31 = self.imm(31)?;
                self.e.emit(I::new(Vx::Sar).dst(d + 1).a(lo).b(sh31));
            } else {
                let zero = self.imm(0)?;
                self.e.mov(d + 1, zero);
            }
            return Ok(d);
        }
        let d = self.e.alloc(1)?;
        self.e.mov(d, lo);
        self.canon(rs, d)?;
        Ok(d)
    }

    /// `sum + acc` saturated to kind `rs` (signed or not).
    fn dot_add_sat(&mut self, rs: Scalar, signed: bool, sum: u16, acc: u16) -> Result<u16> {
        if rs.is_narrow_int() {
            // Exact in 32 bits, then clamped to the narrow range.
            let bits = rs.bits();
            let d = self.e.alloc(1)?;
            if signed {
                let (a, b) = (self.sext(rs, sum)?, self.sext(rs, acc)?);
                self.e.emit(I::new(Vx::Iadd).dst(d).a(a).b(b));
                let (lo, hi) = (self.imm((-(1i64 << (bits - 1))) as u32)?, self.imm((1u32 << (bits - 1)) - 1)?);
                self.e.emit(I::new(Vx::Imax).signed(true).dst(d).a(d).b(lo));
                self.e.emit(I::new(Vx::Imin).signed(true).dst(d).a(d).b(hi));
                self.canon(rs, d)?;
            } else {
                self.e.emit(I::new(Vx::Iadd).dst(d).a(sum).b(acc));
                let hi = self.imm(((1u64 << bits) - 1) as u32)?;
                self.e.emit(I::new(Vx::Imin).dst(d).a(d).b(hi));
            }
            return Ok(d);
        }
        let n = rs.regs() as u16;
        let r = self.e.alloc(n as u32)?;
        self.ibin(IOp::Add, rs, r, sum, acc)?;
        let over = self.e.alloc(1)?;
        let sat = self.e.alloc(n as u32)?;
        let top = n - 1; // the word holding the sign
        if signed {
            // Overflow: both operands' signs differ from the result's. The bound has the
            // sign of the accumulator's operand `sum` (equal to acc's on overflow).
            let t = self.e.alloc(n as u32)?;
            let u = self.e.alloc(n as u32)?;
            self.ibin(IOp::Xor, rs, t, sum, r)?;
            self.ibin(IOp::Xor, rs, u, acc, r)?;
            self.ibin(IOp::And, rs, t, t, u)?;
            let zero = self.imm(0)?;
            self.e.emit(I::new(Vx::Icmp).cond(IntCond::Slt).dst(over).a(t + top).b(zero));
            let sh31 = self.imm(31)?;
            let sign = self.e.op2(Vx::Sar, sum + top, sh31)?;
            let (ones, max_top) = (self.imm(u32::MAX)?, self.imm(i32::MAX as u32)?);
            for k in 0..n {
                let bound = if k == top { max_top } else { ones };
                self.e.emit(I::new(Vx::Xor).dst(sat + k).a(sign).b(bound));
            }
        } else {
            // Overflow: the result is below an operand.
            self.icmp(IntCond::Ult, rs, over, r, sum)?;
            let ones = self.imm(u32::MAX)?;
            for k in 0..n {
                self.e.mov(sat + k, ones);
            }
        }
        let d = self.e.alloc(n as u32)?;
        self.sel_words(d, over, sat, r, n);
        Ok(d)
    }
}
