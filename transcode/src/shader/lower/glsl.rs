//! `GLSL.std.450` extended instructions.

use super::num::{FOp, FUn, IOp};
use super::Lowerer;
use crate::shader::emit::I;
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::module::InstExt;
use crate::shader::types::Scalar;
use rspirv::dr::Instruction;
use vortex_model::abi::isa::{FloatCond, IntCond, Op as Vx, Round, SfuFunc, REG_NONE as N};

/// `GLSL.std.450` instruction numbers (the extended-instruction set's own enumeration).
mod g {
    pub const ROUND: u32 = 1;
    pub const ROUND_EVEN: u32 = 2;
    pub const TRUNC: u32 = 3;
    pub const FABS: u32 = 4;
    pub const SABS: u32 = 5;
    pub const FSIGN: u32 = 6;
    pub const SSIGN: u32 = 7;
    pub const FLOOR: u32 = 8;
    pub const CEIL: u32 = 9;
    pub const FRACT: u32 = 10;
    pub const RADIANS: u32 = 11;
    pub const DEGREES: u32 = 12;
    pub const SIN: u32 = 13;
    pub const ATANH: u32 = 24;
    pub const ATAN2: u32 = 25;
    pub const POW: u32 = 26;
    pub const EXP: u32 = 27;
    pub const LOG: u32 = 28;
    pub const EXP2: u32 = 29;
    pub const LOG2: u32 = 30;
    pub const SQRT: u32 = 31;
    pub const INVERSE_SQRT: u32 = 32;
    pub const DETERMINANT: u32 = 33;
    pub const MATRIX_INVERSE: u32 = 34;
    pub const MODF: u32 = 35;
    pub const MODF_STRUCT: u32 = 36;
    pub const FMIN: u32 = 37;
    pub const UMIN: u32 = 38;
    pub const SMIN: u32 = 39;
    pub const FMAX: u32 = 40;
    pub const UMAX: u32 = 41;
    pub const SMAX: u32 = 42;
    pub const FCLAMP: u32 = 43;
    pub const UCLAMP: u32 = 44;
    pub const SCLAMP: u32 = 45;
    pub const FMIX: u32 = 46;
    pub const STEP: u32 = 48;
    pub const SMOOTH_STEP: u32 = 49;
    pub const FMA: u32 = 50;
    pub const FREXP: u32 = 51;
    pub const FREXP_STRUCT: u32 = 52;
    pub const LDEXP: u32 = 53;
    pub const PACK_SNORM4X8: u32 = 54;
    pub const PACK_UNORM4X8: u32 = 55;
    pub const PACK_SNORM2X16: u32 = 56;
    pub const PACK_UNORM2X16: u32 = 57;
    pub const PACK_HALF2X16: u32 = 58;
    pub const PACK_DOUBLE2X32: u32 = 59;
    pub const UNPACK_SNORM2X16: u32 = 60;
    pub const UNPACK_UNORM2X16: u32 = 61;
    pub const UNPACK_HALF2X16: u32 = 62;
    pub const UNPACK_SNORM4X8: u32 = 63;
    pub const UNPACK_UNORM4X8: u32 = 64;
    pub const UNPACK_DOUBLE2X32: u32 = 65;
    pub const LENGTH: u32 = 66;
    pub const DISTANCE: u32 = 67;
    pub const CROSS: u32 = 68;
    pub const NORMALIZE: u32 = 69;
    pub const FACE_FORWARD: u32 = 70;
    pub const REFLECT: u32 = 71;
    pub const REFRACT: u32 = 72;
    pub const FIND_ILSB: u32 = 73;
    pub const FIND_SMSB: u32 = 74;
    pub const FIND_UMSB: u32 = 75;
    pub const NMIN: u32 = 79;
    pub const NMAX: u32 = 80;
    pub const NCLAMP: u32 = 81;
}

/// SFU functions for `Sin` (13) .. `Atanh` (24), in instruction-number order.
const TRIG: [SfuFunc; 12] = [
    SfuFunc::Sin,
    SfuFunc::Cos,
    SfuFunc::Tan,
    SfuFunc::Asin,
    SfuFunc::Acos,
    SfuFunc::Atan,
    SfuFunc::Sinh,
    SfuFunc::Cosh,
    SfuFunc::Tanh,
    SfuFunc::Asinh,
    SfuFunc::Acosh,
    SfuFunc::Atanh,
];

impl<'m> Lowerer<'m> {
    pub(super) fn glsl_inst(&mut self, inst: &Instruction) -> Result<()> {
        let n = inst.lit(1)?;
        match n {
            g::LENGTH | g::DISTANCE | g::NORMALIZE | g::CROSS | g::REFLECT | g::FACE_FORWARD | g::REFRACT => {
                self.glsl_geometric(inst, n)
            }
            g::MODF | g::MODF_STRUCT => self.modf(inst, n == g::MODF_STRUCT),
            g::FREXP | g::FREXP_STRUCT => self.frexp(inst, n == g::FREXP_STRUCT),
            g::LDEXP => self.ldexp(inst),
            g::DETERMINANT => self.determinant(inst),
            g::MATRIX_INVERSE => self.inverse(inst),
            g::PACK_SNORM4X8..=g::UNPACK_DOUBLE2X32 => self.glsl_pack(inst, n),
            _ => self.glsl_componentwise(inst, n),
        }
    }

    /// The functions applied component by component: rounding, abs and sign, angles,
    /// transcendentals, min/max/clamp, mix, fma, step, smoothstep, the bit finds.
    fn glsl_componentwise(&mut self, inst: &Instruction, n: u32) -> Result<()> {
        match n {
            g::ROUND => self.ext_unary(inst, |l, s, d, a| l.fun(FUn::Round(Round::Away), s, d, a)),
            g::ROUND_EVEN => self.ext_unary(inst, |l, s, d, a| l.fun(FUn::Round(Round::Even), s, d, a)),
            g::TRUNC => self.ext_unary(inst, |l, s, d, a| l.fun(FUn::Round(Round::Trunc), s, d, a)),
            g::FLOOR => self.ext_unary(inst, |l, s, d, a| l.fun(FUn::Round(Round::Floor), s, d, a)),
            g::CEIL => self.ext_unary(inst, |l, s, d, a| l.fun(FUn::Round(Round::Ceil), s, d, a)),
            g::FRACT => self.ext_unary(inst, |l, s, d, a| l.fun(FUn::Fract, s, d, a)),
            g::FABS => self.ext_unary(inst, |l, s, d, a| l.fabs(s, d, a)),
            g::FSIGN => self.ext_unary(inst, |l, s, d, a| l.fsign(s, d, a)),
            g::SABS => self.ext_unary(inst, |l, s, d, a| {
                // |x| = x < 0 ? -x : x
                let z = l.int_zero(s)?;
                let neg = l.e.alloc(s.regs())?;
                l.ineg(s, neg, a)?;
                let c = l.e.alloc(1)?;
                l.icmp(IntCond::Slt, s, c, a, z)?;
                l.sel_words(d, c, neg, a, s.regs() as u16);
                Ok(())
            }),
            g::SSIGN => self.ext_unary(inst, |l, s, d, a| {
                // (x > 0) - (x < 0)
                let z = l.int_zero(s)?;
                let (one, minus) = (l.int_const(s, 1)?, l.int_const(s, u64::MAX)?);
                let (gt, lt) = (l.e.alloc(1)?, l.e.alloc(1)?);
                l.icmp(IntCond::Sgt, s, gt, a, z)?;
                l.icmp(IntCond::Slt, s, lt, a, z)?;
                let t = l.e.alloc(s.regs())?;
                l.sel_words(t, lt, minus, z, s.regs() as u16);
                l.sel_words(d, gt, one, t, s.regs() as u16);
                Ok(())
            }),
            g::RADIANS | g::DEGREES => {
                let f = if n == g::RADIANS { std::f64::consts::PI / 180.0 } else { 180.0 / std::f64::consts::PI };
                self.ext_unary(inst, move |l, s, d, a| {
                    let k = l.fconst(s, f)?;
                    l.fbin(FOp::Mul, s, d, a, k)
                })
            }
            g::SIN..=g::ATANH => {
                let f = TRIG[(n - g::SIN) as usize];
                self.ext_unary(inst, move |l, s, d, a| l.fsfu(f, s, d, a, N))
            }
            g::EXP | g::LOG | g::EXP2 | g::LOG2 => {
                let f = [SfuFunc::Exp, SfuFunc::Log, SfuFunc::Exp2, SfuFunc::Log2][(n - g::EXP) as usize];
                self.ext_unary(inst, move |l, s, d, a| l.fsfu(f, s, d, a, N))
            }
            g::ATAN2 => self.ext_binary(inst, |l, s, d, a, b| l.fsfu(SfuFunc::Atan2, s, d, a, b)),
            g::POW => self.ext_binary(inst, |l, s, d, a, b| l.fsfu(SfuFunc::Pow, s, d, a, b)),
            g::SQRT => self.ext_unary(inst, |l, s, d, a| l.fun(FUn::Sqrt, s, d, a)),
            g::INVERSE_SQRT => self.ext_unary(inst, |l, s, d, a| l.fun(FUn::Rsq, s, d, a)),
            g::FMIN | g::NMIN => self.ext_binary(inst, |l, s, d, a, b| l.fbin(FOp::Min, s, d, a, b)),
            g::FMAX | g::NMAX => self.ext_binary(inst, |l, s, d, a, b| l.fbin(FOp::Max, s, d, a, b)),
            g::UMIN => self.ext_binary(inst, |l, s, d, a, b| l.ibin(IOp::UMin, s, d, a, b)),
            g::SMIN => self.ext_binary(inst, |l, s, d, a, b| l.ibin(IOp::SMin, s, d, a, b)),
            g::UMAX => self.ext_binary(inst, |l, s, d, a, b| l.ibin(IOp::UMax, s, d, a, b)),
            g::SMAX => self.ext_binary(inst, |l, s, d, a, b| l.ibin(IOp::SMax, s, d, a, b)),
            g::FCLAMP | g::NCLAMP => self.ext_ternary(inst, |l, s, d, x, lo, hi| {
                let t = l.fbin_new(FOp::Max, s, x, lo)?;
                l.fbin(FOp::Min, s, d, t, hi)
            }),
            g::UCLAMP | g::SCLAMP => {
                let (max, min) = if n == g::UCLAMP { (IOp::UMax, IOp::UMin) } else { (IOp::SMax, IOp::SMin) };
                self.ext_ternary(inst, move |l, s, d, x, lo, hi| {
                    let t = l.e.alloc(s.regs())?;
                    l.ibin(max, s, t, x, lo)?;
                    l.ibin(min, s, d, t, hi)
                })
            }
            g::FMIX => self.ext_ternary(inst, |l, s, d, x, y, a| {
                // x * (1 - a) + y * a, as GLSL defines it.
                let one = l.fconst(s, 1.0)?;
                let t = l.fbin_new(FOp::Sub, s, one, a)?;
                let t = l.fbin_new(FOp::Mul, s, x, t)?;
                l.ffma(s, d, y, a, t)
            }),
            g::FMA => self.ext_ternary(inst, |l, s, d, a, b, c| l.ffma(s, d, a, b, c)),
            g::STEP => self.ext_binary(inst, |l, s, d, edge, x| {
                // x < edge ? 0 : 1
                let (zero, one) = (l.fconst(s, 0.0)?, l.fconst(s, 1.0)?);
                let c = l.fcmp_new(FloatCond::Olt, s, x, edge)?;
                l.sel_words(d, c, zero, one, s.regs() as u16);
                Ok(())
            }),
            g::SMOOTH_STEP => self.ext_ternary(inst, |l, s, d, e0, e1, x| {
                let (zero, one) = (l.fconst(s, 0.0)?, l.fconst(s, 1.0)?);
                let (two, three) = (l.fconst(s, 2.0)?, l.fconst(s, 3.0)?);
                let num = l.fbin_new(FOp::Sub, s, x, e0)?;
                let den = l.fbin_new(FOp::Sub, s, e1, e0)?;
                let t = l.fbin_new(FOp::Div, s, num, den)?;
                let t = l.fbin_new(FOp::Max, s, t, zero)?;
                let t = l.fbin_new(FOp::Min, s, t, one)?;
                let u = l.fbin_new(FOp::Mul, s, two, t)?;
                let u = l.fbin_new(FOp::Sub, s, three, u)?;
                let t2 = l.fbin_new(FOp::Mul, s, t, t)?;
                l.fbin(FOp::Mul, s, d, t2, u)
            }),
            g::FIND_ILSB | g::FIND_UMSB | g::FIND_SMSB => self.find_bit(inst, n),
            _ => Err(unsupported!("GLSL.std.450 instruction {n}")),
        }
    }

    /// Vector geometry: length, distance, normalize, cross, reflect, faceforward, refract.
    fn glsl_geometric(&mut self, inst: &Instruction, n: u32) -> Result<()> {
        // Operand ids of the extended instruction start at operand 2.
        let arg = |i: usize| inst.id(2 + i);
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        match n {
            g::LENGTH => {
                let (v, sh) = self.operand(arg(0)?)?;
                let d = self.length(sh.scalar, v, sh.n)?;
                self.define(rid, d, rty);
                Ok(())
            }
            g::DISTANCE => {
                let (a, sh) = self.operand(arg(0)?)?;
                let b = self.regs(arg(1)?)?;
                let (s, cr) = (sh.scalar, sh.scalar.regs() as u16);
                let t = self.e.alloc(sh.n * s.regs())?;
                for k in 0..sh.n as u16 {
                    self.fbin(FOp::Sub, s, t + k * cr, a + k * cr, b + k * cr)?;
                }
                let d = self.length(s, t, sh.n)?;
                self.define(rid, d, rty);
                Ok(())
            }
            g::NORMALIZE => {
                let (v, sh) = self.operand(arg(0)?)?;
                let (s, cr) = (sh.scalar, sh.scalar.regs() as u16);
                let dt = self.dot_typed(s, v, v, sh.n)?;
                let r = self.fun_new(FUn::Rsq, s, dt)?;
                let d = self.e.alloc(sh.n * s.regs())?;
                for k in 0..sh.n as u16 {
                    self.fbin(FOp::Mul, s, d + k * cr, v + k * cr, r)?;
                }
                self.define(rid, d, rty);
                Ok(())
            }
            g::CROSS => {
                let (a, sh) = self.operand(arg(0)?)?;
                let b = self.regs(arg(1)?)?;
                let (s, cr) = (sh.scalar, sh.scalar.regs() as u16);
                let d = self.e.alloc(3 * s.regs())?;
                for (k, (i, j)) in [(1u16, 2u16), (2, 0), (0, 1)].into_iter().enumerate() {
                    // d[k] = a[i] * b[j] - a[j] * b[i]
                    let t = self.fbin_new(FOp::Mul, s, a + j * cr, b + i * cr)?;
                    let u = self.fbin_new(FOp::Mul, s, a + i * cr, b + j * cr)?;
                    self.fbin(FOp::Sub, s, d + k as u16 * cr, u, t)?;
                }
                self.define(rid, d, rty);
                Ok(())
            }
            g::REFLECT => {
                // I - 2 * dot(N, I) * N
                let (i, sh) = self.operand(arg(0)?)?;
                let nn = self.regs(arg(1)?)?;
                let (s, cr) = (sh.scalar, sh.scalar.regs() as u16);
                let two = self.fconst(s, 2.0)?;
                let dt = self.dot_typed(s, nn, i, sh.n)?;
                let k2 = self.fbin_new(FOp::Mul, s, dt, two)?;
                let d = self.e.alloc(sh.n * s.regs())?;
                for k in 0..sh.n as u16 {
                    let t = self.fbin_new(FOp::Mul, s, k2, nn + k * cr)?;
                    self.fbin(FOp::Sub, s, d + k * cr, i + k * cr, t)?;
                }
                self.define(rid, d, rty);
                Ok(())
            }
            g::FACE_FORWARD => {
                // dot(Nref, I) < 0 ? N : -N
                let (nn, sh) = self.operand(arg(0)?)?;
                let (i, nref) = (self.regs(arg(1)?)?, self.regs(arg(2)?)?);
                let (s, cr) = (sh.scalar, sh.scalar.regs() as u16);
                let zero = self.fconst(s, 0.0)?;
                let dt = self.dot_typed(s, nref, i, sh.n)?;
                let c = self.fcmp_new(FloatCond::Olt, s, dt, zero)?;
                let d = self.e.alloc(sh.n * s.regs())?;
                for k in 0..sh.n as u16 {
                    let neg = self.e.alloc(s.regs())?;
                    self.fneg(s, neg, nn + k * cr)?;
                    self.sel_words(d + k * cr, c, nn + k * cr, neg, cr);
                }
                self.define(rid, d, rty);
                Ok(())
            }
            g::REFRACT => self.refract(inst),
            _ => Err(unsupported!("GLSL.std.450 instruction {n}")),
        }
    }

    /// Determinant of a square matrix, by Laplace expansion.
    fn determinant(&mut self, inst: &Instruction) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let src = inst.id(2)?;
        let (m, mt) = (self.regs(src)?, self.type_of(src)?);
        let (cols, rows, s) = self.matrix_dims(mt)?;
        if cols != rows {
            return Err(invalid!("determinant of a non-square matrix"));
        }
        let idx: Vec<u16> = (0..cols as u16).collect();
        let d = self.det(s, m, rows as u16, &idx, &idx)?;
        self.define(rid, d, rty);
        Ok(())
    }

    /// Packing and unpacking: halves, doubles, normalized integers.
    fn glsl_pack(&mut self, inst: &Instruction, n: u32) -> Result<()> {
        let arg = |i: usize| inst.id(2 + i);
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        match n {
            g::PACK_HALF2X16 => {
                let v = self.regs(arg(0)?)?;
                let lo = self.e.op1(Vx::F2h, v)?;
                let hi = self.e.op1(Vx::F2h, v + 1)?;
                let sh = self.imm(16)?;
                let hi = self.e.op2(Vx::Shl, hi, sh)?;
                let d = self.e.op2(Vx::Or, lo, hi)?;
                self.define(rid, d, rty);
                Ok(())
            }
            g::UNPACK_HALF2X16 => {
                let v = self.regs(arg(0)?)?;
                let sh = self.imm(16)?;
                let d = self.e.alloc(2)?;
                self.e.emit(I::new(Vx::H2f).dst(d).a(v));
                let hi = self.e.op2(Vx::Shr, v, sh)?;
                self.e.emit(I::new(Vx::H2f).dst(d + 1).a(hi));
                self.define(rid, d, rty);
                Ok(())
            }
            // A double and a uvec2 share their register image (the low word first).
            g::PACK_DOUBLE2X32 | g::UNPACK_DOUBLE2X32 => {
                let v = self.regs(arg(0)?)?;
                self.vals.insert(rid, super::Val::Regs { r: v, ty: rty });
                Ok(())
            }
            g::PACK_UNORM4X8 | g::PACK_SNORM4X8 | g::PACK_UNORM2X16 | g::PACK_SNORM2X16 => self.pack_norm(inst, n),
            g::UNPACK_UNORM4X8 | g::UNPACK_SNORM4X8 | g::UNPACK_UNORM2X16 | g::UNPACK_SNORM2X16 => {
                self.unpack_norm(inst, n)
            }
            _ => Err(unsupported!("GLSL.std.450 instruction {n}")),
        }
    }

    /// Zero of integer kind `s` (a register or pair).
    fn int_zero(&mut self, s: Scalar) -> Result<u16> {
        self.int_const(s, 0)
    }

    /// Integer constant `v` (truncated to the kind's width) in a register or pair.
    fn int_const(&mut self, s: Scalar, v: u64) -> Result<u16> {
        if s == Scalar::I64 {
            self.imm64(v)
        } else {
            let m = if s.bits() >= 32 { u32::MAX as u64 } else { (1u64 << s.bits()) - 1 };
            self.imm((v & m) as u32)
        }
    }

    /// FindILsb, FindUMsb, FindSMsb at any width (-1 when there is no such bit); 64-bit
    /// operands combine the two words, narrow ones see their sign-extended value.
    fn find_bit(&mut self, inst: &Instruction, n: u32) -> Result<()> {
        let rs = self.shape_of(inst.rty()?)?.scalar;
        self.ext_unary(inst, move |l, s, d, a| {
            if s == Scalar::I64 {
                let (zero, c32) = (l.imm(0)?, l.imm(32)?);
                let (lo, hi) = if n == g::FIND_SMSB {
                    // The most significant bit that differs from the sign.
                    let sign = l.imm(31)?;
                    let fill = l.e.op2(Vx::Sar, a + 1, sign)?;
                    (l.e.op2(Vx::Xor, a, fill)?, l.e.op2(Vx::Xor, a + 1, fill)?)
                } else {
                    (a, a + 1)
                };
                if n == g::FIND_ILSB {
                    let fl = l.e.op1(Vx::Flsb, lo)?;
                    let fh = l.e.op1(Vx::Flsb, hi)?;
                    let fh = l.e.op2(Vx::Iadd, fh, c32)?;
                    let none = l.e.op1(Vx::Flsb, hi)?; // -1 stays -1 below
                    let lo_zero = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), lo, zero)?;
                    let hi_zero = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), hi, zero)?;
                    let t = l.e.op3(Vx::Sel, hi_zero, none, fh)?;
                    l.e.emit(I::new(Vx::Sel).dst(d).a(lo_zero).b(t).c(fl));
                } else {
                    let fl = l.e.op1(Vx::Fmsb, lo)?;
                    let fh = l.e.op1(Vx::Fmsb, hi)?;
                    let fh = l.e.op2(Vx::Iadd, fh, c32)?;
                    let hi_zero = l.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), hi, zero)?;
                    l.e.emit(I::new(Vx::Sel).dst(d).a(hi_zero).b(fl).c(fh));
                }
            } else {
                let a = if n == g::FIND_SMSB { l.sext(s, a)? } else { a };
                let (op, signed) = match n {
                    g::FIND_ILSB => (Vx::Flsb, false),
                    g::FIND_UMSB => (Vx::Fmsb, false),
                    _ => (Vx::Fmsb, true),
                };
                l.e.emit(I::new(op).signed(signed).dst(d).a(a));
            }
            if rs == Scalar::I64 {
                // A 64-bit result: sign-extend the index (-1 stays -1).
                let sh = l.imm(31)?;
                l.e.emit(I::new(Vx::Sar).dst(d + 1).a(d).b(sh));
            } else {
                l.canon(rs, d)?;
            }
            Ok(())
        })
    }

    /// Componentwise over the extended instruction's first operand.
    fn ext_unary(
        &mut self,
        inst: &Instruction,
        mut f: impl FnMut(&mut Self, Scalar, u16, u16) -> Result<()>,
    ) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (a, ash) = self.operand(inst.id(2)?)?;
        let rsh = self.shape_of(rty)?;
        let d = self.e.alloc(rsh.n * rsh.scalar.regs())?;
        for k in 0..rsh.n as u16 {
            f(self, ash.scalar, d + k * rsh.scalar.regs() as u16, a + k * ash.scalar.regs() as u16)?;
        }
        self.define(rid, d, rty);
        Ok(())
    }

    fn ext_binary(
        &mut self,
        inst: &Instruction,
        mut f: impl FnMut(&mut Self, Scalar, u16, u16, u16) -> Result<()>,
    ) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (a, ash) = self.operand(inst.id(2)?)?;
        let (b, bsh) = self.operand(inst.id(3)?)?;
        let rsh = self.shape_of(rty)?;
        let (cr, br) = (rsh.scalar.regs() as u16, bsh.scalar.regs() as u16);
        let d = self.e.alloc(rsh.n * rsh.scalar.regs())?;
        for k in 0..rsh.n as u16 {
            // GLSL allows a scalar second operand for some functions (step's edge).
            let bk = if bsh.n == 1 { b } else { b + k * br };
            f(self, ash.scalar, d + k * cr, a + k * ash.scalar.regs() as u16, bk)?;
        }
        self.define(rid, d, rty);
        Ok(())
    }

    fn ext_ternary(
        &mut self,
        inst: &Instruction,
        mut f: impl FnMut(&mut Self, Scalar, u16, u16, u16, u16) -> Result<()>,
    ) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (a, _) = self.operand(inst.id(2)?)?;
        let (b, bsh) = self.operand(inst.id(3)?)?;
        let (c, csh) = self.operand(inst.id(4)?)?;
        let rsh = self.shape_of(rty)?;
        let (s, cr) = (rsh.scalar, rsh.scalar.regs() as u16);
        let d = self.e.alloc(rsh.n * s.regs())?;
        for k in 0..rsh.n as u16 {
            let bk = if bsh.n == 1 { b } else { b + k * cr };
            let ck = if csh.n == 1 { c } else { c + k * cr };
            f(self, s, d + k * cr, a + k * cr, bk, ck)?;
        }
        self.define(rid, d, rty);
        Ok(())
    }

    fn length(&mut self, s: Scalar, v: u16, n: u32) -> Result<u16> {
        if n == 1 {
            let d = self.e.alloc(s.regs())?;
            self.fabs(s, d, v)?;
            return Ok(d);
        }
        let dt = self.dot_typed(s, v, v, n)?;
        self.fun_new(FUn::Sqrt, s, dt)
    }

    fn refract(&mut self, inst: &Instruction) -> Result<()> {
        // k = 1 - eta^2 (1 - dot(N,I)^2); k < 0 ? 0 : eta I - (eta dot(N,I) + sqrt(k)) N
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (i, sh) = self.operand(inst.id(2)?)?;
        let (nn, eta) = (self.regs(inst.id(3)?)?, self.regs(inst.id(4)?)?);
        // Eta may be a float of another width than the vectors (SPIR-V allows it).
        let eta_ty = self.type_of(inst.id(4)?)?;
        let eta_s = self.shape_of(eta_ty)?.scalar;
        let (s, cr) = (sh.scalar, sh.scalar.regs() as u16);
        let eta = if eta_s == s {
            eta
        } else {
            let t = self.e.alloc(s.regs())?;
            match (eta_s, s) {
                (Scalar::F64, _) => self.e.emit(I::new(Vx::D2f).dst(t).a(eta)),
                (_, Scalar::F64) => self.e.emit(I::new(Vx::F2d).dst(t).a(eta)),
                _ => {
                    self.e.mov(t, eta);
                    if s == Scalar::F16 {
                        self.quantize(t);
                    }
                }
            }
            t
        };
        let (zero, one) = (self.fconst(s, 0.0)?, self.fconst(s, 1.0)?);
        let dt = self.dot_typed(s, nn, i, sh.n)?;
        let dt2 = self.fbin_new(FOp::Mul, s, dt, dt)?;
        let t = self.fbin_new(FOp::Sub, s, one, dt2)?;
        let e2 = self.fbin_new(FOp::Mul, s, eta, eta)?;
        let t = self.fbin_new(FOp::Mul, s, e2, t)?;
        let k = self.fbin_new(FOp::Sub, s, one, t)?;
        let neg = self.fcmp_new(FloatCond::Olt, s, k, zero)?;
        let sk = self.fun_new(FUn::Sqrt, s, k)?;
        let m = self.e.alloc(s.regs())?;
        self.ffma(s, m, eta, dt, sk)?;
        let d = self.e.alloc(sh.n * s.regs())?;
        for c in 0..sh.n as u16 {
            let a = self.fbin_new(FOp::Mul, s, eta, i + c * cr)?;
            let b = self.fbin_new(FOp::Mul, s, m, nn + c * cr)?;
            let r = self.fbin_new(FOp::Sub, s, a, b)?;
            self.sel_words(d + c * cr, neg, zero, r, cr);
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// Modf: fraction returned, whole part stored through the pointer (or the struct's second
    /// member for ModfStruct).
    fn modf(&mut self, inst: &Instruction, is_struct: bool) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (x, sh) = self.operand(inst.id(2)?)?;
        let (s, cr) = (sh.scalar, sh.scalar.regs() as u16);
        let n = sh.n as u16;
        let d = self.e.alloc(2 * sh.n * s.regs())?;
        let whole = d + n * cr;
        // Both parts carry the sign of x (so -3.0 gives -0.0 and -3.0), and an infinite x
        // has fraction zero. The sign lives in the top register of the component.
        let hi = cr - 1;
        let (sign, mag, zero) = (self.imm(0x8000_0000)?, self.imm(0x7FFF_FFFF)?, self.fconst(s, 0.0)?);
        for k in 0..n {
            let (xk, fk, wk) = (x + k * cr, d + k * cr, whole + k * cr);
            self.fun(FUn::Round(Round::Trunc), s, wk, xk)?;
            let f = self.fbin_new(FOp::Sub, s, xk, wk)?;
            let inf = self.fcmp_new(FloatCond::IsInf, s, xk, xk)?;
            self.sel_words(fk, inf, zero, f, cr);
            let m = self.e.op2(Vx::And, fk + hi, mag)?;
            let sg = self.e.op2(Vx::And, xk + hi, sign)?;
            self.e.emit(I::new(Vx::Or).dst(fk + hi).a(m).b(sg));
        }
        if !is_struct {
            let p = self.ptr(inst.id(3)?)?;
            let whole_ty = p.ty;
            self.store(&p, whole_ty, whole)?;
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// Frexp for normal numbers and zero: x = m * 2^e with |m| in [0.5, 1). The exponent
    /// field sits in the component's top register (11 bits for doubles).
    fn frexp(&mut self, inst: &Instruction, is_struct: bool) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (x, sh) = self.operand(inst.id(2)?)?;
        let (s, cr) = (sh.scalar, sh.scalar.regs() as u16);
        // The exponent's type (an int vector of any width) comes from the result struct or
        // the out pointer.
        let ety = if is_struct {
            self.m.types.member(rty, 1)?.1
        } else {
            let p = self.ptr(inst.id(3)?)?;
            p.ty
        };
        let es = self.shape_of(ety)?.scalar;
        let n = sh.n as u16;
        let (shift, bias, field, keep, half) = if s == Scalar::F64 {
            (20, 1022, 0x7FF, 0x800F_FFFF, 1022 << 20)
        } else {
            (23, 126, 0xFF, 0x807F_FFFF, 126 << 23)
        };
        let (zero, fzero) = (self.imm(0)?, self.fconst(s, 0.0)?);
        let (c_shift, c_bias, c_field, c_keep, c_half) =
            (self.imm(shift)?, self.imm(bias)?, self.imm(field)?, self.imm(keep)?, self.imm(half)?);
        let mant = self.e.alloc(sh.n * s.regs())?;
        let exps = self.e.alloc(sh.n * es.regs())?;
        for k in 0..n {
            let (xk, mk, ek) = (x + k * cr, mant + k * cr, exps + k * es.regs() as u16);
            let top = xk + cr - 1;
            let isz = self.fcmp_new(FloatCond::Oeq, s, xk, fzero)?;
            let e = self.e.op2(Vx::Shr, top, c_shift)?;
            let e = self.e.op2(Vx::And, e, c_field)?;
            let e = self.e.op2(Vx::Isub, e, c_bias)?;
            let m = self.e.op2(Vx::And, top, c_keep)?;
            let m = self.e.op2(Vx::Or, m, c_half)?;
            if cr == 2 {
                self.e.emit(I::new(Vx::Sel).dst(mk).a(isz).b(xk).c(xk));
            }
            self.e.emit(I::new(Vx::Sel).dst(mk + cr - 1).a(isz).b(top).c(m));
            self.e.emit(I::new(Vx::Sel).dst(ek).a(isz).b(zero).c(e));
            if es == Scalar::I64 {
                let sh = self.imm(31)?;
                self.e.emit(I::new(Vx::Sar).dst(ek + 1).a(ek).b(sh));
            } else {
                self.canon(es, ek)?;
            }
        }
        let d = if is_struct {
            let d = self.e.alloc(self.m.types.regs(rty)?)?;
            let mr = sh.n * s.regs();
            self.copy_regs(d, mant, mr);
            self.copy_regs(d + mr as u16, exps, sh.n * es.regs());
            d
        } else {
            let p = self.ptr(inst.id(3)?)?;
            let ty = p.ty;
            self.store(&p, ty, exps)?;
            mant
        };
        self.define(rid, d, rty);
        Ok(())
    }

    /// x * 2^e, as two exact power-of-two multiplies so exponents past the float range still
    /// round once (the exponent may be an integer of any width).
    fn ldexp(&mut self, inst: &Instruction) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (x, sh) = self.operand(inst.id(2)?)?;
        let (e, esh) = self.operand(inst.id(3)?)?;
        let (s, cr) = (sh.scalar, sh.scalar.regs() as u16);
        let (lo, hi, shift) = if s == Scalar::F64 { (-1022i32, 1023, 20) } else { (-126i32, 127, 23) };
        let (c_lo, c_hi, c_bias, c_shift, one) =
            (self.imm(lo as u32)?, self.imm(hi as u32)?, self.imm(hi as u32)?, self.imm(shift)?, self.imm(1)?);
        let d = self.e.alloc(sh.n * s.regs())?;
        for k in 0..sh.n as u16 {
            let ek = e + if esh.n == 1 { 0 } else { k * esh.scalar.regs() as u16 };
            // The exponent as a 32-bit value, clamped far past the useful range.
            let ek = if esh.scalar == Scalar::I64 {
                let (big, small) = (self.imm64(4096)?, self.imm64((-4096i64) as u64)?);
                let t = self.e.alloc(2)?;
                self.ibin(IOp::SMin, Scalar::I64, t, ek, big)?;
                self.ibin(IOp::SMax, Scalar::I64, t, t, small)?;
                t
            } else {
                self.sext(esh.scalar, ek)?
            };
            let e1 = self.e.op2(Vx::Sar, ek, one)?;
            let e2 = self.e.op2(Vx::Isub, ek, e1)?;
            let mut acc = x + k * cr;
            for part in [e1, e2] {
                let p = self.e.op2(I::new(Vx::Imax).signed(true), part, c_lo)?;
                let p = self.e.op2(I::new(Vx::Imin).signed(true), p, c_hi)?;
                let p = self.e.op2(Vx::Iadd, p, c_bias)?;
                let p = self.e.op2(Vx::Shl, p, c_shift)?;
                let f = if s == Scalar::F64 {
                    // The power of two as a double: exponent bits in the high word.
                    let z = self.imm(0)?;
                    let f = self.e.alloc(2)?;
                    self.e.mov(f, z);
                    self.e.mov(f + 1, p);
                    f
                } else {
                    p
                };
                acc = self.fbin_new(FOp::Mul, if s == Scalar::F16 { Scalar::F32 } else { s }, acc, f)?;
            }
            self.copy_regs(d + k * cr, acc, cr as u32);
            if s == Scalar::F16 {
                self.quantize(d + k * cr);
            }
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// Determinant of the sub-matrix of column-major `m` (stride `rows`) picking `r` rows
    /// and `c` columns, by Laplace expansion along the first column.
    fn det(&mut self, s: Scalar, m: u16, rows: u16, r: &[u16], c: &[u16]) -> Result<u16> {
        let cr = s.regs() as u16;
        let at = |ri: u16, ci: u16| m + (ci * rows + ri) * cr;
        if r.len() == 1 {
            return Ok(at(r[0], c[0]));
        }
        if r.len() == 2 {
            let p = self.fbin_new(FOp::Mul, s, at(r[0], c[0]), at(r[1], c[1]))?;
            let q = self.fbin_new(FOp::Mul, s, at(r[1], c[0]), at(r[0], c[1]))?;
            return self.fbin_new(FOp::Sub, s, p, q);
        }
        let mut acc: Option<u16> = None;
        for (k, &rk) in r.iter().enumerate() {
            let sub_r: Vec<u16> = r.iter().copied().filter(|&x| x != rk).collect();
            let minor = self.det(s, m, rows, &sub_r, &c[1..])?;
            let term = self.fbin_new(FOp::Mul, s, at(rk, c[0]), minor)?;
            acc = Some(match acc {
                None => term,
                Some(a) => self.fbin_new(if k % 2 == 1 { FOp::Sub } else { FOp::Add }, s, a, term)?,
            });
        }
        acc.ok_or_else(|| invalid!("determinant of an empty matrix"))
    }

    /// Inverse = adjugate / determinant.
    fn inverse(&mut self, inst: &Instruction) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let src = inst.id(2)?;
        let (m, mt) = (self.regs(src)?, self.type_of(src)?);
        let (cols, rows, s) = self.matrix_dims(mt)?;
        if cols != rows {
            return Err(invalid!("inverse of a non-square matrix"));
        }
        let cr = s.regs() as u16;
        let n = rows as u16;
        let all: Vec<u16> = (0..n).collect();
        let det = self.det(s, m, n, &all, &all)?;
        let one = self.fconst(s, 1.0)?;
        let inv = self.fbin_new(FOp::Div, s, one, det)?;
        let d = self.e.alloc(rows * cols * s.regs())?;
        for i in 0..n {
            for j in 0..n {
                // inverse[col j][row i] = (-1)^(i+j) * minor(row j, col i) / det
                let rr: Vec<u16> = all.iter().copied().filter(|&x| x != j).collect();
                let cc: Vec<u16> = all.iter().copied().filter(|&x| x != i).collect();
                let minor = if n == 1 { one } else { self.det(s, m, n, &rr, &cc)? };
                let v = self.fbin_new(FOp::Mul, s, minor, inv)?;
                let dst = d + (j * n + i) * cr;
                if (i + j) % 2 == 1 {
                    self.fneg(s, dst, v)?;
                } else {
                    self.copy_regs(dst, v, cr as u32);
                }
            }
        }
        self.define(rid, d, rty);
        Ok(())
    }

    fn pack_norm(&mut self, inst: &Instruction, n: u32) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let v = self.regs(inst.id(2)?)?;
        let (comps, bits, signed) = match n {
            g::PACK_UNORM4X8 => (4u16, 8u32, false),
            g::PACK_SNORM4X8 => (4, 8, true),
            g::PACK_UNORM2X16 => (2, 16, false),
            _ => (2, 16, true),
        };
        let scale = if signed { ((1u32 << (bits - 1)) - 1) as f32 } else { ((1u32 << bits) - 1) as f32 };
        let (lo, hi) = if signed { (-1.0f32, 1.0f32) } else { (0.0, 1.0) };
        let (lo, hi, k) = (self.imm(lo.to_bits())?, self.imm(hi.to_bits())?, self.imm(scale.to_bits())?);
        let maskr = self.imm((1u32 << bits) - 1)?;
        let d = self.e.alloc(1)?;
        self.e.movi(d, 0);
        for c in 0..comps {
            let t = self.e.op2(Vx::Fmax, v + c, lo)?;
            let t = self.e.op2(Vx::Fmin, t, hi)?;
            let t = self.e.op2(Vx::Fmul, t, k)?;
            let t = self.e.op1(I::new(Vx::Fround).round(Round::Even), t)?;
            let t = self.e.op1(if signed { Vx::F2i } else { Vx::F2u }, t)?;
            let t = self.e.op2(Vx::And, t, maskr)?;
            let sh = self.imm(c as u32 * bits)?;
            let t = self.e.op2(Vx::Shl, t, sh)?;
            self.e.emit(I::new(Vx::Or).dst(d).a(d).b(t));
        }
        self.define(rid, d, rty);
        Ok(())
    }

    fn unpack_norm(&mut self, inst: &Instruction, n: u32) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let p = self.regs(inst.id(2)?)?;
        let (comps, bits, signed) = match n {
            g::UNPACK_UNORM4X8 => (4u16, 8u32, false),
            g::UNPACK_SNORM4X8 => (4, 8, true),
            g::UNPACK_UNORM2X16 => (2, 16, false),
            _ => (2, 16, true),
        };
        let scale = if signed { ((1u32 << (bits - 1)) - 1) as f32 } else { ((1u32 << bits) - 1) as f32 };
        let k = self.imm(scale.to_bits())?;
        let (width, neg1) = (self.imm(bits)?, self.imm((-1.0f32).to_bits())?);
        let d = self.e.alloc(comps as u32)?;
        for c in 0..comps {
            let off = self.imm(c as u32 * bits)?;
            let t = self.e.op3(I::new(Vx::Bfe).signed(signed), p, off, width)?;
            let t = self.e.op1(if signed { Vx::I2f } else { Vx::U2f }, t)?;
            let t = self.e.op2(Vx::Fdiv, t, k)?;
            if signed {
                self.e.emit(I::new(Vx::Fmax).dst(d + c).a(t).b(neg1));
            } else {
                self.e.mov(d + c, t);
            }
        }
        self.define(rid, d, rty);
        Ok(())
    }
}
