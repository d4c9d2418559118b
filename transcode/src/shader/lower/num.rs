//! Arithmetic on one scalar component of any width: the per-type instruction selection every
//! other lowering module builds on.
//!
//! How each kind lives in registers (`types::Scalar`):
//! - 32-bit integers and floats: one register.
//! - 64-bit integers and floats: a register pair, low word first (floats as raw IEEE bits).
//! - 8- and 16-bit integers: one register holding the value *zero-extended* (the canonical
//!   form): ops whose result can spill past the width (add, sub, mul, shift left, negate,
//!   not) mask it, signed ops sign-extend their operands first (`EXT`). Loads of `u8`/`u16`
//!   produce the canonical form directly and stores keep the low bytes.
//! - 16-bit floats: one register holding an f32 that is exactly representable in f16;
//!   every operation that can produce another value rounds back (`F2H` then `H2F`). Adding,
//!   multiplying, dividing and taking square roots in f32 and rounding once more is
//!   correctly rounded for f16 (24 >= 2 * 11 + 2 bits), so only fused multiply-add can
//!   differ from a native f16 unit, by the double rounding.

use super::Lowerer;
use crate::shader::emit::I;
use crate::shader::error::{unsupported, Result};
use crate::shader::types::Scalar;
use vortex_model::abi::isa::{FloatCond, IntCond, Op as Vx, Round, SfuFunc};

/// Integer binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IOp {
    Add,
    Sub,
    Mul,
    UDiv,
    SDiv,
    URem,
    SRem,
    SMod,
    Shl,
    Shr,
    Sar,
    And,
    Or,
    Xor,
    UMin,
    UMax,
    SMin,
    SMax,
}

/// Float binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FOp {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
}

/// Float unary operations with an instruction of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FUn {
    Sqrt,
    Rsq,
    Fract,
    Round(Round),
}

fn signed(c: IntCond) -> bool {
    matches!(c, IntCond::Slt | IntCond::Sle | IntCond::Sgt | IntCond::Sge)
}

impl<'m> Lowerer<'m> {
    /// The all-ones mask of a narrow integer's width.
    fn width_mask(&mut self, s: Scalar) -> Result<u16> {
        self.imm(((1u64 << s.bits()) - 1) as u32)
    }

    /// Masks register `d` in place to the canonical form of narrow type `s`.
    pub(super) fn canon(&mut self, s: Scalar, d: u16) -> Result<()> {
        if s.is_narrow_int() {
            let m = self.width_mask(s)?;
            self.e.emit(I::new(Vx::And).dst(d).a(d).b(m));
        }
        Ok(())
    }

    /// `a` sign-extended to 32 bits (narrow integers; a 32-bit register is returned as is).
    pub(super) fn sext(&mut self, s: Scalar, a: u16) -> Result<u16> {
        if s.is_narrow_int() {
            let d = self.e.alloc(1)?;
            self.e.emit(I::new(Vx::Ext).width(s.bits()).dst(d).a(a).imm(1));
            Ok(d)
        } else {
            Ok(a)
        }
    }

    /// `d = x op y` on one integer component of kind `s`.
    pub(super) fn ibin(&mut self, op: IOp, s: Scalar, d: u16, x: u16, y: u16) -> Result<()> {
        use IOp::*;
        if s == Scalar::I64 {
            return self.ibin64(op, d, x, y);
        }
        let (vx, signed) = match op {
            Add => (Vx::Iadd, false),
            Sub => (Vx::Isub, false),
            Mul => (Vx::Imul, false),
            UDiv => (Vx::Udiv, false),
            SDiv => (Vx::Sdiv, false),
            URem => (Vx::Urem, false),
            SRem => (Vx::Srem, false),
            SMod => (Vx::Smod, false),
            Shl => (Vx::Shl, false),
            Shr => (Vx::Shr, false),
            Sar => (Vx::Sar, false),
            And => (Vx::And, false),
            Or => (Vx::Or, false),
            Xor => (Vx::Xor, false),
            UMin => (Vx::Imin, false),
            UMax => (Vx::Imax, false),
            SMin => (Vx::Imin, true),
            SMax => (Vx::Imax, true),
        };
        if !s.is_narrow_int() {
            self.e.emit(I::new(vx).signed(signed).dst(d).a(x).b(y));
            return Ok(());
        }
        // Narrow integers: signed ops see sign-extended operands (the shift amount is a
        // count, not a value of the type); results that can leave the width are masked.
        let (x, y) = match op {
            SDiv | SRem | SMod | SMin | SMax => (self.sext(s, x)?, self.sext(s, y)?),
            Sar => (self.sext(s, x)?, y),
            _ => (x, y),
        };
        self.e.emit(I::new(vx).signed(signed).dst(d).a(x).b(y));
        if !matches!(op, UDiv | URem | Shr | And | Or | Xor | UMin | UMax) {
            self.canon(s, d)?;
        }
        Ok(())
    }

    fn ibin64(&mut self, op: IOp, d: u16, x: u16, y: u16) -> Result<()> {
        use IOp::*;
        let simple = match op {
            Add => Some(Vx::Iadd64),
            Sub => Some(Vx::Isub64),
            Mul => Some(Vx::Imul64),
            UDiv => Some(Vx::Udiv64),
            SDiv => Some(Vx::Sdiv64),
            URem => Some(Vx::Urem64),
            SRem => Some(Vx::Srem64),
            Shl => Some(Vx::Shl64),
            Shr => Some(Vx::Shr64),
            Sar => Some(Vx::Sar64),
            _ => None,
        };
        if let Some(vx) = simple {
            self.e.emit(I::new(vx).dst(d).a(x).b(y));
            return Ok(());
        }
        match op {
            And | Or | Xor => {
                let vx = [Vx::And, Vx::Or, Vx::Xor][[And, Or, Xor].iter().position(|o| *o == op).unwrap_or(0)];
                self.e.emit(I::new(vx).dst(d).a(x).b(y));
                self.e.emit(I::new(vx).dst(d + 1).a(x + 1).b(y + 1));
            }
            UMin | UMax | SMin | SMax => {
                let cond = match op {
                    UMin => IntCond::Ult,
                    UMax => IntCond::Ugt,
                    SMin => IntCond::Slt,
                    _ => IntCond::Sgt,
                };
                let c = self.e.op2(I::new(Vx::Icmp64).cond(cond), x, y)?;
                self.sel_words(d, c, x, y, 2);
            }
            _ => {
                // SMod: the remainder takes the sign of the divisor.
                let r = self.e.op64(Vx::Srem64, x, y)?;
                let zero = self.imm64(0)?;
                let nz = self.e.op2(I::new(Vx::Icmp64).cond(IntCond::Ne), r, zero)?;
                let signs = self.e.op2(Vx::Xor, r + 1, y + 1)?;
                let z32 = self.imm(0)?;
                let differ = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Slt), signs, z32)?;
                let c = self.e.op2(Vx::And, nz, differ)?;
                let adj = self.e.op64(Vx::Iadd64, r, y)?;
                self.sel_words(d, c, adj, r, 2);
            }
        }
        Ok(())
    }

    /// `d[k] = c ? a[k] : b[k]` for `n` words.
    pub(super) fn sel_words(&mut self, d: u16, c: u16, a: u16, b: u16, n: u16) {
        for k in 0..n {
            self.e.emit(I::new(Vx::Sel).dst(d + k).a(c).b(a + k).c(b + k));
        }
    }

    /// `d = cond(x, y)` (one register, 0/1) on one integer (or bool) component.
    pub(super) fn icmp(&mut self, cond: IntCond, s: Scalar, d: u16, x: u16, y: u16) -> Result<()> {
        match s {
            Scalar::I64 => self.e.emit(I::new(Vx::Icmp64).cond(cond).dst(d).a(x).b(y)),
            _ if s.is_narrow_int() && signed(cond) => {
                let (x, y) = (self.sext(s, x)?, self.sext(s, y)?);
                self.e.emit(I::new(Vx::Icmp).cond(cond).dst(d).a(x).b(y));
            }
            _ => self.e.emit(I::new(Vx::Icmp).cond(cond).dst(d).a(x).b(y)),
        }
        Ok(())
    }

    /// `d = -a` on one integer component.
    pub(super) fn ineg(&mut self, s: Scalar, d: u16, a: u16) -> Result<()> {
        if s == Scalar::I64 {
            let z = self.imm64(0)?;
            self.e.emit(I::new(Vx::Isub64).dst(d).a(z).b(a));
        } else {
            self.e.emit(I::new(Vx::Ineg).dst(d).a(a));
            self.canon(s, d)?;
        }
        Ok(())
    }

    /// Rounds f16 values kept as f32 back to f16 precision.
    pub(super) fn quantize(&mut self, d: u16) {
        self.e.emit(I::new(Vx::F2h).dst(d).a(d));
        self.e.emit(I::new(Vx::H2f).dst(d).a(d));
    }

    /// `d = x op y` on one float component of kind `s`.
    pub(super) fn fbin(&mut self, op: FOp, s: Scalar, d: u16, x: u16, y: u16) -> Result<()> {
        let (f, dbl) = match op {
            FOp::Add => (Vx::Fadd, Vx::Dadd),
            FOp::Sub => (Vx::Fsub, Vx::Dsub),
            FOp::Mul => (Vx::Fmul, Vx::Dmul),
            FOp::Div => (Vx::Fdiv, Vx::Ddiv),
            FOp::Min => (Vx::Fmin, Vx::Dmin),
            FOp::Max => (Vx::Fmax, Vx::Dmax),
        };
        if s == Scalar::F64 {
            self.e.emit(I::new(dbl).dst(d).a(x).b(y));
        } else {
            self.e.emit(I::new(f).dst(d).a(x).b(y));
            if s == Scalar::F16 && !matches!(op, FOp::Min | FOp::Max) {
                self.quantize(d);
            }
        }
        Ok(())
    }

    /// `x op y` into fresh registers.
    pub(super) fn fbin_new(&mut self, op: FOp, s: Scalar, x: u16, y: u16) -> Result<u16> {
        let d = self.e.alloc(s.regs())?;
        self.fbin(op, s, d, x, y)?;
        Ok(d)
    }

    /// `d = a * b + c` (fused where the unit fuses).
    pub(super) fn ffma(&mut self, s: Scalar, d: u16, a: u16, b: u16, c: u16) -> Result<()> {
        if s == Scalar::F64 {
            self.e.emit(I::new(Vx::Dfma).dst(d).a(a).b(b).c(c));
        } else {
            self.e.emit(I::new(Vx::Ffma).dst(d).a(a).b(b).c(c));
            if s == Scalar::F16 {
                self.quantize(d);
            }
        }
        Ok(())
    }

    pub(super) fn fun(&mut self, op: FUn, s: Scalar, d: u16, a: u16) -> Result<()> {
        let (f, dbl) = match op {
            FUn::Sqrt => (I::new(Vx::Fsqrt), I::new(Vx::Dsqrt)),
            FUn::Rsq => (I::new(Vx::Frsq), I::new(Vx::Drsq)),
            FUn::Fract => (I::new(Vx::Ffract), I::new(Vx::Dfract)),
            FUn::Round(r) => (I::new(Vx::Fround).round(r), I::new(Vx::Dround).round(r)),
        };
        if s == Scalar::F64 {
            self.e.emit(dbl.dst(d).a(a));
        } else {
            self.e.emit(f.dst(d).a(a));
            // Rounding to an integer stays representable; the others may not.
            if s == Scalar::F16 && !matches!(op, FUn::Round(_)) {
                self.quantize(d);
            }
        }
        Ok(())
    }

    pub(super) fn fun_new(&mut self, op: FUn, s: Scalar, a: u16) -> Result<u16> {
        let d = self.e.alloc(s.regs())?;
        self.fun(op, s, d, a)?;
        Ok(d)
    }

    /// `d = -a`: a sign-bit flip, exact at every width.
    pub(super) fn fneg(&mut self, s: Scalar, d: u16, a: u16) -> Result<()> {
        if s == Scalar::F64 {
            let sign = self.imm(0x8000_0000)?;
            self.e.mov(d, a);
            self.e.emit(I::new(Vx::Xor).dst(d + 1).a(a + 1).b(sign));
        } else {
            self.e.emit(I::new(Vx::Fneg).dst(d).a(a));
        }
        Ok(())
    }

    pub(super) fn fabs(&mut self, s: Scalar, d: u16, a: u16) -> Result<()> {
        if s == Scalar::F64 {
            let mag = self.imm(0x7FFF_FFFF)?;
            self.e.mov(d, a);
            self.e.emit(I::new(Vx::And).dst(d + 1).a(a + 1).b(mag));
        } else {
            self.e.emit(I::new(Vx::Fabs).dst(d).a(a));
        }
        Ok(())
    }

    /// `d = cond(x, y)` (one register, 0/1).
    pub(super) fn fcmp(&mut self, cond: FloatCond, s: Scalar, d: u16, x: u16, y: u16) {
        let op = if s == Scalar::F64 { Vx::Dcmp } else { Vx::Fcmp };
        self.e.emit(I::new(op).cond(cond).dst(d).a(x).b(y));
    }

    pub(super) fn fcmp_new(&mut self, cond: FloatCond, s: Scalar, x: u16, y: u16) -> Result<u16> {
        let d = self.e.alloc(1)?;
        self.fcmp(cond, s, d, x, y);
        Ok(d)
    }

    /// A register (pair) holding the float constant `v` as type `s` (prologue, shared).
    pub(super) fn fconst(&mut self, s: Scalar, v: f64) -> Result<u16> {
        match s {
            Scalar::F64 => self.imm64(v.to_bits()),
            Scalar::F16 => self.imm(half::f16::from_f64(v).to_f32().to_bits()),
            _ => self.imm((v as f32).to_bits()),
        }
    }

    /// FSign: 1.0, -1.0, or +0.0 for zeros (NaN stays NaN).
    pub(super) fn fsign(&mut self, s: Scalar, d: u16, a: u16) -> Result<()> {
        if s != Scalar::F64 {
            self.e.emit(I::new(Vx::Fsign).dst(d).a(a));
            return Ok(());
        }
        let (zero, one, neg) = (self.fconst(s, 0.0)?, self.fconst(s, 1.0)?, self.fconst(s, -1.0)?);
        let gt = self.fcmp_new(FloatCond::Ogt, s, a, zero)?;
        let lt = self.fcmp_new(FloatCond::Olt, s, a, zero)?;
        let nan = self.fcmp_new(FloatCond::Uno, s, a, a)?;
        let t = self.e.alloc(2)?;
        self.sel_words(t, nan, a, zero, 2);
        self.sel_words(t, lt, neg, t, 2);
        self.sel_words(d, gt, one, t, 2);
        Ok(())
    }

    /// A transcendental function (16- and 32-bit floats only: SPIR-V allows no others).
    pub(super) fn fsfu(&mut self, f: SfuFunc, s: Scalar, d: u16, a: u16, b: u16) -> Result<()> {
        if s == Scalar::F64 {
            return Err(unsupported!("GLSL.std.450 {} on 64-bit floats", f.name()));
        }
        self.e.emit(I::new(Vx::Fsfu).sfu(f).dst(d).a(a).b(b));
        if s == Scalar::F16 {
            self.quantize(d);
        }
        Ok(())
    }

    /// Dot product of two `n`-component float vectors of kind `s` into fresh registers.
    pub(super) fn dot_typed(&mut self, s: Scalar, a: u16, b: u16, n: u32) -> Result<u16> {
        let cr = s.regs() as u16;
        let d = self.fbin_new(FOp::Mul, s, a, b)?;
        for k in 1..n as u16 {
            self.ffma(s, d, a + k * cr, b + k * cr, d)?;
        }
        Ok(d)
    }
}
