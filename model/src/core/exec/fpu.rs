//! The FPU: f32 and f64 arithmetic, compares, min/max, rounding and conversions, beyond the
//! f32 ops the issue loop runs inline.

use super::{binary, binary64, f, illegal, not_executed, pair, set_pair, u, unary};
use crate::abi::isa::{FloatCond, Instr, Op, Round};
use crate::fault::Fault;

#[inline]
fn fd(x: u64) -> f64 {
    f64::from_bits(x)
}

/// Float comparisons for one width.
macro_rules! float_cond {
    ($name:ident, $f:ty) => {
        pub(super) fn $name(c: FloatCond, a: $f, b: $f) -> bool {
            let uno = a.is_nan() || b.is_nan();
            match c {
                FloatCond::Oeq => !uno && a == b,
                FloatCond::One => !uno && a != b,
                FloatCond::Olt => !uno && a < b,
                FloatCond::Ole => !uno && a <= b,
                FloatCond::Ogt => !uno && a > b,
                FloatCond::Oge => !uno && a >= b,
                FloatCond::Ueq => uno || a == b,
                FloatCond::Une => uno || a != b,
                FloatCond::Ult => uno || a < b,
                FloatCond::Ule => uno || a <= b,
                FloatCond::Ugt => uno || a > b,
                FloatCond::Uge => uno || a >= b,
                FloatCond::Ord => !uno,
                FloatCond::Uno => uno,
                FloatCond::IsNan => a.is_nan(),
                FloatCond::IsInf => a.is_infinite(),
            }
        }
    };
}

float_cond!(float_cond, f32);
float_cond!(float_cond64, f64);

/// `FROUND`/`DROUND` for one width.
macro_rules! round {
    ($name:ident, $f:ty) => {
        fn $name(mode: Round, x: $f) -> $f {
            match mode {
                Round::Floor => x.floor(),
                Round::Ceil => x.ceil(),
                Round::Trunc => x.trunc(),
                Round::Even => x.round_ties_even(),
                Round::Away => x.round(),
            }
        }
    };
}

round!(round, f32);
round!(round64, f64);

/// Executes floating-point op `i` for the lanes in `mask`.
pub(super) fn execute(i: &Instr, regs: &mut [u32], nt: usize, mask: u32) -> Result<(), Fault> {
    let (d, a, b) = (i.dst, i.a, i.b);
    match i.op {
        Op::Fdiv => binary(regs, nt, mask, d, a, b, |x, y| u(f(x) / f(y))),
        Op::Fcmp => {
            let cond = FloatCond::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad float condition"))?;
            if matches!(cond, FloatCond::IsNan | FloatCond::IsInf) {
                unary(regs, nt, mask, d, a, |x| float_cond(cond, f(x), 0.0) as u32)
            } else {
                binary(regs, nt, mask, d, a, b, |x, y| float_cond(cond, f(x), f(y)) as u32)
            }
        }
        Op::Fsqrt => unary(regs, nt, mask, d, a, |x| u(f(x).sqrt())),
        Op::Frsq => unary(regs, nt, mask, d, a, |x| u(1.0 / f(x).sqrt())),
        Op::Frcp => unary(regs, nt, mask, d, a, |x| u(1.0 / f(x))),
        Op::Fround => {
            let mode = Round::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad rounding mode"))?;
            unary(regs, nt, mask, d, a, |x| u(round(mode, f(x))))
        }
        Op::Ffract => unary(regs, nt, mask, d, a, |x| u(f(x) - f(x).floor())),
        // FSign: 1.0, -1.0, or +0.0 for either zero (GLSL.std.450: "0.0 if x = 0"); NaN stays NaN.
        Op::Fsign => unary(regs, nt, mask, d, a, |x| {
            let v = f(x);
            u(if v > 0.0 {
                1.0
            } else if v < 0.0 {
                -1.0
            } else if v == 0.0 {
                0.0
            } else {
                v
            })
        }),
        Op::F2u => unary(regs, nt, mask, d, a, |x| f(x) as u32),
        Op::F2h => unary(regs, nt, mask, d, a, |x| half::f16::from_f32(f(x)).to_bits() as u32),
        Op::H2f => unary(regs, nt, mask, d, a, |x| u(half::f16::from_bits(x as u16).to_f32())),
        Op::L2f | Op::Ul2f => {
            let (dd, aa) = (d as usize * nt, a as usize);
            lanes!(mask, nt, |l| {
                let x = pair(regs, aa, nt, l);
                regs[dd + l] = u(if i.op == Op::L2f { x as i64 as f32 } else { x as f32 });
            });
        }
        Op::F2l | Op::F2ul => {
            let (dd, aa) = (d as usize, a as usize * nt);
            lanes!(mask, nt, |l| {
                let x = f(regs[aa + l]);
                let v = if i.op == Op::F2l { x as i64 as u64 } else { x as u64 };
                set_pair(regs, dd, nt, l, v);
            });
        }

        Op::Dadd
        | Op::Dsub
        | Op::Dmul
        | Op::Ddiv
        | Op::Dmin
        | Op::Dmax
        | Op::Dfma
        | Op::Dcmp
        | Op::Dsqrt
        | Op::Drsq
        | Op::Drcp
        | Op::Dround
        | Op::Dfract
        | Op::F2d
        | Op::I2d
        | Op::U2d
        | Op::D2f
        | Op::D2i
        | Op::D2u
        | Op::D2h
        | Op::D2l
        | Op::D2ul
        | Op::L2d
        | Op::Ul2d => double(i, regs, nt, mask)?,
        _ => return Err(not_executed(i)),
    }
    Ok(())
}

/// The f64 ops (register pairs) and the conversions to and from f64.
fn double(i: &Instr, regs: &mut [u32], nt: usize, mask: u32) -> Result<(), Fault> {
    let (d, a, b, c) = (i.dst, i.a, i.b, i.c);
    match i.op {
        Op::Dadd => binary64(regs, nt, mask, i, |x, y| (fd(x) + fd(y)).to_bits()),
        Op::Dsub => binary64(regs, nt, mask, i, |x, y| (fd(x) - fd(y)).to_bits()),
        Op::Dmul => binary64(regs, nt, mask, i, |x, y| (fd(x) * fd(y)).to_bits()),
        Op::Ddiv => binary64(regs, nt, mask, i, |x, y| (fd(x) / fd(y)).to_bits()),
        Op::Dmin => binary64(regs, nt, mask, i, |x, y| fd(x).min(fd(y)).to_bits()),
        Op::Dmax => binary64(regs, nt, mask, i, |x, y| fd(x).max(fd(y)).to_bits()),
        Op::Dfma => {
            let (dd, aa, bb, cc) = (d as usize, a as usize, b as usize, c as usize);
            lanes!(mask, nt, |l| {
                let v = fd(pair(regs, aa, nt, l)).mul_add(fd(pair(regs, bb, nt, l)), fd(pair(regs, cc, nt, l)));
                set_pair(regs, dd, nt, l, v.to_bits());
            });
        }
        Op::Dcmp => {
            let cond = FloatCond::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad float condition"))?;
            let (dd, aa, bb) = (d as usize * nt, a as usize, b as usize);
            lanes!(mask, nt, |l| {
                regs[dd + l] = float_cond64(cond, fd(pair(regs, aa, nt, l)), fd(pair(regs, bb, nt, l))) as u32;
            });
        }
        Op::Dsqrt | Op::Drsq | Op::Drcp | Op::Dround | Op::Dfract => {
            let mode = if i.op == Op::Dround {
                Some(Round::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad rounding mode"))?)
            } else {
                None
            };
            let (dd, aa) = (d as usize, a as usize);
            lanes!(mask, nt, |l| {
                let x = fd(pair(regs, aa, nt, l));
                let v = match (i.op, mode) {
                    (Op::Dsqrt, _) => x.sqrt(),
                    (Op::Drsq, _) => 1.0 / x.sqrt(),
                    (Op::Drcp, _) => 1.0 / x,
                    (Op::Dround, Some(m)) => round64(m, x),
                    _ => x - x.floor(),
                };
                set_pair(regs, dd, nt, l, v.to_bits());
            });
        }
        Op::F2d | Op::I2d | Op::U2d => {
            let (dd, aa) = (d as usize, a as usize * nt);
            lanes!(mask, nt, |l| {
                let x = regs[aa + l];
                let v = match i.op {
                    Op::F2d => f(x) as f64,
                    Op::I2d => x as i32 as f64,
                    _ => x as f64,
                };
                set_pair(regs, dd, nt, l, v.to_bits());
            });
        }
        Op::D2f | Op::D2i | Op::D2u | Op::D2h => {
            let (dd, aa) = (d as usize * nt, a as usize);
            lanes!(mask, nt, |l| {
                let x = fd(pair(regs, aa, nt, l));
                regs[dd + l] = match i.op {
                    Op::D2f => u(x as f32),
                    Op::D2i => x as i32 as u32,
                    Op::D2u => x as u32,
                    _ => half::f16::from_f64(x).to_bits() as u32,
                };
            });
        }
        Op::D2l | Op::D2ul | Op::L2d | Op::Ul2d => {
            let (dd, aa) = (d as usize, a as usize);
            lanes!(mask, nt, |l| {
                let x = pair(regs, aa, nt, l);
                let v = match i.op {
                    Op::D2l => fd(x) as i64 as u64,
                    Op::D2ul => fd(x) as u64,
                    Op::L2d => (x as i64 as f64).to_bits(),
                    _ => (x as f64).to_bits(),
                };
                set_pair(regs, dd, nt, l, v);
            });
        }

        _ => return Err(not_executed(i)),
    }
    Ok(())
}
