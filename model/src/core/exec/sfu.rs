//! The SFU: transcendentals.

use super::{binary, f, illegal, not_executed, u, unary};
use crate::abi::isa::{Instr, Op, SfuFunc, REG_NONE};
use crate::fault::Fault;

fn sfu(func: SfuFunc, a: f32, b: f32) -> f32 {
    use SfuFunc::*;
    match func {
        Sin => a.sin(),
        Cos => a.cos(),
        Tan => a.tan(),
        Asin => a.asin(),
        Acos => a.acos(),
        Atan => a.atan(),
        Sinh => a.sinh(),
        Cosh => a.cosh(),
        Tanh => a.tanh(),
        Asinh => a.asinh(),
        Acosh => a.acosh(),
        Atanh => a.atanh(),
        Exp => a.exp(),
        Log => a.ln(),
        Exp2 => a.exp2(),
        Log2 => a.log2(),
        Pow => a.powf(b),
        Atan2 => a.atan2(b),
    }
}

/// Executes `FSFU` for the lanes in `mask`.
pub(super) fn execute(i: &Instr, regs: &mut [u32], nt: usize, mask: u32) -> Result<(), Fault> {
    let (d, a, b) = (i.dst, i.a, i.b);
    match i.op {
        Op::Fsfu => {
            let func = SfuFunc::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad SFU function"))?;
            if b == REG_NONE {
                unary(regs, nt, mask, d, a, |x| u(sfu(func, f(x), 0.0)))
            } else {
                binary(regs, nt, mask, d, a, b, |x, y| u(sfu(func, f(x), f(y))))
            }
        }
        _ => return Err(not_executed(i)),
    }
    Ok(())
}
