//! `GLSL.std.450` extended instructions.

use super::alu::Bin;
use super::Lowerer;
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::module::InstExt;
use crate::shader::types::Scalar;
use rspirv::dr::Instruction;
use vortex_model::abi::isa::{FloatCond, Op as Vx, Round, SfuFunc, REG_NONE as N};

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
    pub const UNPACK_SNORM2X16: u32 = 60;
    pub const UNPACK_UNORM2X16: u32 = 61;
    pub const UNPACK_HALF2X16: u32 = 62;
    pub const UNPACK_SNORM4X8: u32 = 63;
    pub const UNPACK_UNORM4X8: u32 = 64;
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
        // Operand ids of the extended instruction start at operand 2.
        let arg = |i: usize| inst.id(2 + i);
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        match n {
            g::ROUND => self.ext_unary(inst, |l, _, d, a| l.fround(Round::Away, d, a)),
            g::ROUND_EVEN => self.ext_unary(inst, |l, _, d, a| l.fround(Round::Even, d, a)),
            g::TRUNC => self.ext_unary(inst, |l, _, d, a| l.fround(Round::Trunc, d, a)),
            g::FLOOR => self.ext_unary(inst, |l, _, d, a| l.fround(Round::Floor, d, a)),
            g::CEIL => self.ext_unary(inst, |l, _, d, a| l.fround(Round::Ceil, d, a)),
            g::FABS => self.ext_unary(inst, |l, _, d, a| l.un(Vx::Fabs, d, a)),
            g::SABS => self.ext_unary(inst, |l, _, d, a| l.un(Vx::Iabs, d, a)),
            g::FSIGN => self.ext_unary(inst, |l, _, d, a| l.un(Vx::Fsign, d, a)),
            g::SSIGN => {
                let (one, neg) = (self.imm(1)?, self.imm(u32::MAX)?);
                self.ext_unary(inst, move |l, _, d, a| {
                    let t = l.e.op2(Vx::Imin, 1, a, one)?;
                    l.e.ins(Vx::Imax, 1, d, t, neg, N, N, 0);
                    Ok(())
                })
            }
            g::FRACT => self.ext_unary(inst, |l, _, d, a| l.un(Vx::Ffract, d, a)),
            g::RADIANS | g::DEGREES => {
                let f = if n == g::RADIANS { std::f32::consts::PI / 180.0 } else { 180.0 / std::f32::consts::PI };
                let k = self.imm(f.to_bits())?;
                self.ext_unary(inst, move |l, _, d, a| {
                    l.e.ins(Vx::Fmul, 0, d, a, k, N, N, 0);
                    Ok(())
                })
            }
            g::SIN..=g::ATANH => {
                let f = TRIG[(n - g::SIN) as usize];
                self.ext_unary(inst, move |l, _, d, a| l.sfu(f, d, a, N))
            }
            g::EXP | g::LOG | g::EXP2 | g::LOG2 => {
                let f = [SfuFunc::Exp, SfuFunc::Log, SfuFunc::Exp2, SfuFunc::Log2][(n - g::EXP) as usize];
                self.ext_unary(inst, move |l, _, d, a| l.sfu(f, d, a, N))
            }
            g::ATAN2 => self.ext_binary(inst, |l, _, d, a, b| l.sfu(SfuFunc::Atan2, d, a, b)),
            g::POW => self.ext_binary(inst, |l, _, d, a, b| l.sfu(SfuFunc::Pow, d, a, b)),
            g::SQRT => self.ext_unary(inst, |l, _, d, a| l.un(Vx::Fsqrt, d, a)),
            g::INVERSE_SQRT => self.ext_unary(inst, |l, _, d, a| l.un(Vx::Frsq, d, a)),
            g::FMIN | g::NMIN => self.ext_bin(inst, Bin::Float(Vx::Fmin)),
            g::FMAX | g::NMAX => self.ext_bin(inst, Bin::Float(Vx::Fmax)),
            g::UMIN => self.ext_bin(inst, Bin::Int(Vx::Imin, None, 0)),
            g::SMIN => self.ext_bin(inst, Bin::Int(Vx::Imin, None, 1)),
            g::UMAX => self.ext_bin(inst, Bin::Int(Vx::Imax, None, 0)),
            g::SMAX => self.ext_bin(inst, Bin::Int(Vx::Imax, None, 1)),
            g::FCLAMP | g::NCLAMP => self.clamp(inst, Vx::Fmax, Vx::Fmin, 0),
            g::UCLAMP => self.clamp(inst, Vx::Imax, Vx::Imin, 0),
            g::SCLAMP => self.clamp(inst, Vx::Imax, Vx::Imin, 1),
            g::FMIX => self.ext_ternary(inst, |l, d, x, y, a| {
                // x * (1 - a) + y * a, as GLSL defines it.
                let one = l.imm(1.0f32.to_bits())?;
                let t = l.e.op2(Vx::Fsub, 0, one, a)?;
                let t = l.e.op2(Vx::Fmul, 0, x, t)?;
                l.e.ins(Vx::Ffma, 0, d, y, a, t, N, 0);
                Ok(())
            }),
            g::FMA => self.ext_ternary(inst, |l, d, a, b, c| {
                l.e.ins(Vx::Ffma, 0, d, a, b, c, N, 0);
                Ok(())
            }),
            g::STEP => self.ext_binary(inst, |l, _, d, edge, x| {
                // x < edge ? 0 : 1
                let (zero, one) = (l.imm(0)?, l.imm(1.0f32.to_bits())?);
                let c = l.e.op2(Vx::Fcmp, FloatCond::Olt as u8, x, edge)?;
                l.e.ins(Vx::Sel, 0, d, c, zero, one, N, 0);
                Ok(())
            }),
            g::SMOOTH_STEP => self.ext_ternary(inst, |l, d, e0, e1, x| {
                let (zero, one) = (l.imm(0)?, l.imm(1.0f32.to_bits())?);
                let (two, three) = (l.imm(2.0f32.to_bits())?, l.imm(3.0f32.to_bits())?);
                let num = l.e.op2(Vx::Fsub, 0, x, e0)?;
                let den = l.e.op2(Vx::Fsub, 0, e1, e0)?;
                let t = l.e.op2(Vx::Fdiv, 0, num, den)?;
                let t = l.e.op2(Vx::Fmax, 0, t, zero)?;
                let t = l.e.op2(Vx::Fmin, 0, t, one)?;
                let u = l.e.op2(Vx::Fmul, 0, two, t)?;
                let u = l.e.op2(Vx::Fsub, 0, three, u)?;
                let t2 = l.e.op2(Vx::Fmul, 0, t, t)?;
                l.e.ins(Vx::Fmul, 0, d, t2, u, N, N, 0);
                Ok(())
            }),
            g::FIND_ILSB => self.ext_unary(inst, |l, _, d, a| l.un(Vx::Flsb, d, a)),
            g::FIND_UMSB => self.ext_unary(inst, |l, _, d, a| l.un(Vx::Fmsb, d, a)),
            g::FIND_SMSB => self.ext_unary(inst, |l, _, d, a| {
                l.e.ins(Vx::Fmsb, 1, d, a, N, N, N, 0);
                Ok(())
            }),
            g::LENGTH => {
                let (v, sh) = self.operand(arg(0)?)?;
                let d = self.length(v, sh.n)?;
                self.define(rid, d, rty);
                Ok(())
            }
            g::DISTANCE => {
                let (a, sh) = self.operand(arg(0)?)?;
                let b = self.regs(arg(1)?)?;
                let t = self.e.alloc(sh.n)?;
                for k in 0..sh.n as u16 {
                    self.e.ins(Vx::Fsub, 0, t + k, a + k, b + k, N, N, 0);
                }
                let d = self.length(t, sh.n)?;
                self.define(rid, d, rty);
                Ok(())
            }
            g::NORMALIZE => {
                let (v, sh) = self.operand(arg(0)?)?;
                let s = self.dot(v, v, sh.n)?;
                let s = self.e.op1(Vx::Frsq, 0, s)?;
                let d = self.e.alloc(sh.n)?;
                for k in 0..sh.n as u16 {
                    self.e.ins(Vx::Fmul, 0, d + k, v + k, s, N, N, 0);
                }
                self.define(rid, d, rty);
                Ok(())
            }
            g::CROSS => {
                let (a, b) = (self.regs(arg(0)?)?, self.regs(arg(1)?)?);
                let d = self.e.alloc(3)?;
                for (k, (i, j)) in [(1u16, 2u16), (2, 0), (0, 1)].into_iter().enumerate() {
                    // d[k] = a[i] * b[j] - a[j] * b[i]
                    let t = self.e.op2(Vx::Fmul, 0, a + j, b + i)?;
                    let u = self.e.op2(Vx::Fmul, 0, a + i, b + j)?;
                    self.e.ins(Vx::Fsub, 0, d + k as u16, u, t, N, N, 0);
                }
                self.define(rid, d, rty);
                Ok(())
            }
            g::REFLECT => {
                // I - 2 * dot(N, I) * N
                let (i, sh) = self.operand(arg(0)?)?;
                let nn = self.regs(arg(1)?)?;
                let two = self.imm(2.0f32.to_bits())?;
                let dt = self.dot(nn, i, sh.n)?;
                let s = self.e.op2(Vx::Fmul, 0, dt, two)?;
                let d = self.e.alloc(sh.n)?;
                for k in 0..sh.n as u16 {
                    let t = self.e.op2(Vx::Fmul, 0, s, nn + k)?;
                    self.e.ins(Vx::Fsub, 0, d + k, i + k, t, N, N, 0);
                }
                self.define(rid, d, rty);
                Ok(())
            }
            g::FACE_FORWARD => {
                // dot(Nref, I) < 0 ? N : -N
                let (nn, sh) = self.operand(arg(0)?)?;
                let (i, nref) = (self.regs(arg(1)?)?, self.regs(arg(2)?)?);
                let zero = self.imm(0)?;
                let dt = self.dot(nref, i, sh.n)?;
                let c = self.e.op2(Vx::Fcmp, FloatCond::Olt as u8, dt, zero)?;
                let d = self.e.alloc(sh.n)?;
                for k in 0..sh.n as u16 {
                    let neg = self.e.op1(Vx::Fneg, 0, nn + k)?;
                    self.e.ins(Vx::Sel, 0, d + k, c, nn + k, neg, N, 0);
                }
                self.define(rid, d, rty);
                Ok(())
            }
            g::REFRACT => self.refract(inst),
            g::MODF | g::MODF_STRUCT => self.modf(inst, n == g::MODF_STRUCT),
            g::FREXP | g::FREXP_STRUCT => self.frexp(inst, n == g::FREXP_STRUCT),
            g::LDEXP => self.ldexp(inst),
            g::DETERMINANT => {
                let src = arg(0)?;
                let (m, mt) = (self.regs(src)?, self.type_of(src)?);
                let (cols, rows) = self.matrix_dims(mt)?;
                if cols != rows {
                    return Err(invalid!("determinant of a non-square matrix"));
                }
                let idx: Vec<u16> = (0..cols as u16).collect();
                let d = self.det(m, rows as u16, &idx, &idx)?;
                self.define(rid, d, rty);
                Ok(())
            }
            g::MATRIX_INVERSE => self.inverse(inst),
            g::PACK_HALF2X16 => {
                let v = self.regs(arg(0)?)?;
                let lo = self.e.op1(Vx::F2h, 0, v)?;
                let hi = self.e.op1(Vx::F2h, 0, v + 1)?;
                let sh = self.imm(16)?;
                let hi = self.e.op2(Vx::Shl, 0, hi, sh)?;
                let d = self.e.op2(Vx::Or, 0, lo, hi)?;
                self.define(rid, d, rty);
                Ok(())
            }
            g::UNPACK_HALF2X16 => {
                let v = self.regs(arg(0)?)?;
                let sh = self.imm(16)?;
                let d = self.e.alloc(2)?;
                self.e.ins(Vx::H2f, 0, d, v, N, N, N, 0);
                let hi = self.e.op2(Vx::Shr, 0, v, sh)?;
                self.e.ins(Vx::H2f, 0, d + 1, hi, N, N, N, 0);
                self.define(rid, d, rty);
                Ok(())
            }
            g::PACK_UNORM4X8 | g::PACK_SNORM4X8 | g::PACK_UNORM2X16 | g::PACK_SNORM2X16 => self.pack_norm(inst, n),
            g::UNPACK_UNORM4X8 | g::UNPACK_SNORM4X8 | g::UNPACK_UNORM2X16 | g::UNPACK_SNORM2X16 => {
                self.unpack_norm(inst, n)
            }
            _ => Err(unsupported!("GLSL.std.450 instruction {n}")),
        }
    }

    fn fround(&mut self, mode: Round, d: u16, a: u16) -> Result<()> {
        self.e.ins(Vx::Fround, mode as u8, d, a, N, N, N, 0);
        Ok(())
    }

    fn sfu(&mut self, f: SfuFunc, d: u16, a: u16, b: u16) -> Result<()> {
        self.e.ins(Vx::Fsfu, f as u8, d, a, b, N, N, 0);
        Ok(())
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
        let d = self.e.alloc(rsh.n * rsh.scalar.regs())?;
        for k in 0..rsh.n as u16 {
            // GLSL allows a scalar second operand for some functions (step's edge).
            let bk = if bsh.n == 1 { b } else { b + k };
            f(self, ash.scalar, d + k, a + k, bk)?;
        }
        self.define(rid, d, rty);
        Ok(())
    }

    fn ext_bin(&mut self, inst: &Instruction, b: Bin) -> Result<()> {
        self.ext_binary(inst, |l, s, d, x, y| {
            if s == Scalar::I64 {
                return Err(unsupported!("64-bit GLSL.std.450 min/max"));
            }
            l.bin(b, s, d, x, y, inst)
        })
    }

    fn ext_ternary(
        &mut self,
        inst: &Instruction,
        mut f: impl FnMut(&mut Self, u16, u16, u16, u16) -> Result<()>,
    ) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (a, _) = self.operand(inst.id(2)?)?;
        let (b, bsh) = self.operand(inst.id(3)?)?;
        let (c, csh) = self.operand(inst.id(4)?)?;
        let rsh = self.shape_of(rty)?;
        if rsh.scalar == Scalar::I64 {
            return Err(unsupported!("64-bit GLSL.std.450 instruction {}", inst.lit(1)?));
        }
        let d = self.e.alloc(rsh.n)?;
        for k in 0..rsh.n as u16 {
            let bk = if bsh.n == 1 { b } else { b + k };
            let ck = if csh.n == 1 { c } else { c + k };
            f(self, d + k, a + k, bk, ck)?;
        }
        self.define(rid, d, rty);
        Ok(())
    }

    fn clamp(&mut self, inst: &Instruction, max: Vx, min: Vx, m: u8) -> Result<()> {
        self.ext_ternary(inst, |l, d, x, lo, hi| {
            let t = l.e.op2(max, m, x, lo)?;
            l.e.ins(min, m, d, t, hi, N, N, 0);
            Ok(())
        })
    }

    fn length(&mut self, v: u16, n: u32) -> Result<u16> {
        if n == 1 {
            return self.e.op1(Vx::Fabs, 0, v);
        }
        let s = self.dot(v, v, n)?;
        self.e.op1(Vx::Fsqrt, 0, s)
    }

    fn refract(&mut self, inst: &Instruction) -> Result<()> {
        // k = 1 - eta^2 (1 - dot(N,I)^2); k < 0 ? 0 : eta I - (eta dot(N,I) + sqrt(k)) N
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (i, sh) = self.operand(inst.id(2)?)?;
        let (nn, eta) = (self.regs(inst.id(3)?)?, self.regs(inst.id(4)?)?);
        let (zero, one) = (self.imm(0)?, self.imm(1.0f32.to_bits())?);
        let dt = self.dot(nn, i, sh.n)?;
        let dt2 = self.e.op2(Vx::Fmul, 0, dt, dt)?;
        let t = self.e.op2(Vx::Fsub, 0, one, dt2)?;
        let e2 = self.e.op2(Vx::Fmul, 0, eta, eta)?;
        let t = self.e.op2(Vx::Fmul, 0, e2, t)?;
        let k = self.e.op2(Vx::Fsub, 0, one, t)?;
        let neg = self.e.op2(Vx::Fcmp, FloatCond::Olt as u8, k, zero)?;
        let sk = self.e.op1(Vx::Fsqrt, 0, k)?;
        let s = self.e.op3(Vx::Ffma, 0, eta, dt, sk)?;
        let d = self.e.alloc(sh.n)?;
        for c in 0..sh.n as u16 {
            let a = self.e.op2(Vx::Fmul, 0, eta, i + c)?;
            let b = self.e.op2(Vx::Fmul, 0, s, nn + c)?;
            let r = self.e.op2(Vx::Fsub, 0, a, b)?;
            self.e.ins(Vx::Sel, 0, d + c, neg, zero, r, N, 0);
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// Modf: fraction returned, whole part stored through the pointer (or the struct's second
    /// member for ModfStruct).
    fn modf(&mut self, inst: &Instruction, is_struct: bool) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (x, sh) = self.operand(inst.id(2)?)?;
        let n = sh.n as u16;
        let d = self.e.alloc(2 * sh.n)?;
        // Both parts carry the sign of x (so -3.0 gives -0.0 and -3.0), and an infinite x
        // has fraction zero.
        let (sign, mag, zero) = (self.imm(0x8000_0000)?, self.imm(0x7FFF_FFFF)?, self.imm(0)?);
        for k in 0..n {
            self.e.ins(Vx::Fround, Round::Trunc as u8, d + n + k, x + k, N, N, N, 0);
            let f = self.e.op2(Vx::Fsub, 0, x + k, d + n + k)?;
            let inf = self.e.op2(Vx::Fcmp, FloatCond::IsInf as u8, x + k, x + k)?;
            let f = self.e.op3(Vx::Sel, 0, inf, zero, f)?;
            let f = self.e.op2(Vx::And, 0, f, mag)?;
            let s = self.e.op2(Vx::And, 0, x + k, sign)?;
            self.e.ins(Vx::Or, 0, d + k, f, s, N, N, 0);
        }
        if is_struct {
            self.define(rid, d, rty);
        } else {
            let p = self.ptr(inst.id(3)?)?;
            let whole_ty = p.ty;
            self.store(&p, whole_ty, d + n)?;
            self.define(rid, d, rty);
        }
        Ok(())
    }

    /// Frexp for normal numbers and zero: x = m * 2^e with |m| in [0.5, 1).
    fn frexp(&mut self, inst: &Instruction, is_struct: bool) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let (x, sh) = self.operand(inst.id(2)?)?;
        let n = sh.n as u16;
        let (zero, c23, c126, mexp, half) =
            (self.imm(0)?, self.imm(23)?, self.imm(126)?, self.imm(0x807F_FFFF)?, self.imm(126 << 23)?);
        let c255 = self.imm(0xFF)?;
        let d = self.e.alloc(2 * sh.n)?;
        for k in 0..n {
            let xk = x + k;
            let isz = self.e.op2(Vx::Fcmp, FloatCond::Oeq as u8, xk, zero)?;
            let e = self.e.op2(Vx::Shr, 0, xk, c23)?;
            let e = self.e.op2(Vx::And, 0, e, c255)?;
            let e = self.e.op2(Vx::Isub, 0, e, c126)?;
            let m = self.e.op2(Vx::And, 0, xk, mexp)?;
            let m = self.e.op2(Vx::Or, 0, m, half)?;
            self.e.ins(Vx::Sel, 0, d + k, isz, xk, m, N, 0);
            self.e.ins(Vx::Sel, 0, d + n + k, isz, zero, e, N, 0);
        }
        if !is_struct {
            let p = self.ptr(inst.id(3)?)?;
            let ety = p.ty;
            self.store(&p, ety, d + n)?;
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// x * 2^e, as two exact power-of-two multiplies so exponents past the f32 range still
    /// round once.
    fn ldexp(&mut self, inst: &Instruction) -> Result<()> {
        let (lo, hi, bias, c23, one) =
            (self.imm(-126i32 as u32)?, self.imm(127)?, self.imm(127)?, self.imm(23)?, self.imm(1)?);
        self.ext_binary(inst, |l, _, d, x, e| {
            let e1 = l.e.op2(Vx::Sar, 0, e, one)?;
            let e2 = l.e.op2(Vx::Isub, 0, e, e1)?;
            let mut acc = x;
            for part in [e1, e2] {
                let p = l.e.op2(Vx::Imax, 1, part, lo)?;
                let p = l.e.op2(Vx::Imin, 1, p, hi)?;
                let p = l.e.op2(Vx::Iadd, 0, p, bias)?;
                let p = l.e.op2(Vx::Shl, 0, p, c23)?;
                acc = l.e.op2(Vx::Fmul, 0, acc, p)?;
            }
            l.e.mov(d, acc);
            Ok(())
        })
    }

    /// Determinant of the sub-matrix of column-major `m` (stride `rows`) picking `r` rows
    /// and `c` columns, by Laplace expansion along the first column.
    fn det(&mut self, m: u16, rows: u16, r: &[u16], c: &[u16]) -> Result<u16> {
        let at = |ri: u16, ci: u16| m + ci * rows + ri;
        if r.len() == 1 {
            return Ok(at(r[0], c[0]));
        }
        if r.len() == 2 {
            let p = self.e.op2(Vx::Fmul, 0, at(r[0], c[0]), at(r[1], c[1]))?;
            let q = self.e.op2(Vx::Fmul, 0, at(r[1], c[0]), at(r[0], c[1]))?;
            return self.e.op2(Vx::Fsub, 0, p, q);
        }
        let mut acc: Option<u16> = None;
        for (k, &rk) in r.iter().enumerate() {
            let sub_r: Vec<u16> = r.iter().copied().filter(|&x| x != rk).collect();
            let minor = self.det(m, rows, &sub_r, &c[1..])?;
            let term = self.e.op2(Vx::Fmul, 0, at(rk, c[0]), minor)?;
            acc = Some(match acc {
                None => term,
                Some(a) => self.e.op2(if k % 2 == 1 { Vx::Fsub } else { Vx::Fadd }, 0, a, term)?,
            });
        }
        acc.ok_or_else(|| invalid!("determinant of an empty matrix"))
    }

    /// Inverse = adjugate / determinant.
    fn inverse(&mut self, inst: &Instruction) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let src = inst.id(2)?;
        let (m, mt) = (self.regs(src)?, self.type_of(src)?);
        let (cols, rows) = self.matrix_dims(mt)?;
        if cols != rows {
            return Err(invalid!("inverse of a non-square matrix"));
        }
        let n = rows as u16;
        let all: Vec<u16> = (0..n).collect();
        let det = self.det(m, n, &all, &all)?;
        let one = self.imm(1.0f32.to_bits())?;
        let inv = self.e.op2(Vx::Fdiv, 0, one, det)?;
        let d = self.e.alloc(rows * cols)?;
        for i in 0..n {
            for j in 0..n {
                // inverse[col j][row i] = (-1)^(i+j) * minor(row j, col i) / det
                let rr: Vec<u16> = all.iter().copied().filter(|&x| x != j).collect();
                let cc: Vec<u16> = all.iter().copied().filter(|&x| x != i).collect();
                let minor = if n == 1 { one } else { self.det(m, n, &rr, &cc)? };
                let v = self.e.op2(Vx::Fmul, 0, minor, inv)?;
                let dst = d + j * n + i;
                if (i + j) % 2 == 1 {
                    self.e.ins(Vx::Fneg, 0, dst, v, N, N, N, 0);
                } else {
                    self.e.mov(dst, v);
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
            let t = self.e.op2(Vx::Fmax, 0, v + c, lo)?;
            let t = self.e.op2(Vx::Fmin, 0, t, hi)?;
            let t = self.e.op2(Vx::Fmul, 0, t, k)?;
            let t = self.e.op1(Vx::Fround, Round::Even as u8, t)?;
            let t = self.e.op1(if signed { Vx::F2i } else { Vx::F2u }, 0, t)?;
            let t = self.e.op2(Vx::And, 0, t, maskr)?;
            let sh = self.imm(c as u32 * bits)?;
            let t = self.e.op2(Vx::Shl, 0, t, sh)?;
            self.e.ins(Vx::Or, 0, d, d, t, N, N, 0);
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
            let t = self.e.op3(Vx::Bfe, signed as u8, p, off, width)?;
            let t = self.e.op1(if signed { Vx::I2f } else { Vx::U2f }, 0, t)?;
            let t = self.e.op2(Vx::Fdiv, 0, t, k)?;
            if signed {
                self.e.ins(Vx::Fmax, 0, d + c, t, neg1, N, N, 0);
            } else {
                self.e.mov(d + c, t);
            }
        }
        self.define(rid, d, rty);
        Ok(())
    }
}
