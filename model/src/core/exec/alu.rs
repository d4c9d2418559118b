//! The integer ALU: the integer and logic ops the issue loop does not run inline, and the
//! ops on 64-bit integers (register pairs, carries, full products).

use super::{binary, binary64, illegal, not_executed, pair, set_pair, ternary, unary};
use crate::abi::isa::{Instr, IntCond, Op};
use crate::fault::Fault;

/// Integer comparisons for one word width.
macro_rules! int_cond {
    ($name:ident, $u:ty, $s:ty) => {
        #[inline(always)]
        pub(super) fn $name(c: IntCond, a: $u, b: $u) -> bool {
            let (sa, sb) = (a as $s, b as $s);
            match c {
                IntCond::Eq => a == b,
                IntCond::Ne => a != b,
                IntCond::Ult => a < b,
                IntCond::Ule => a <= b,
                IntCond::Ugt => a > b,
                IntCond::Uge => a >= b,
                IntCond::Slt => sa < sb,
                IntCond::Sle => sa <= sb,
                IntCond::Sgt => sa > sb,
                IntCond::Sge => sa >= sb,
            }
        }
    };
}

int_cond!(int_cond, u32, i32);
int_cond!(int_cond64, u64, i64);

fn msb_u(x: u32) -> u32 {
    if x == 0 {
        u32::MAX
    } else {
        31 - x.leading_zeros()
    }
}

/// Executes integer op `i` for the lanes in `mask`.
pub(super) fn execute(i: &Instr, regs: &mut [u32], nt: usize, mask: u32) -> Result<(), Fault> {
    let (d, a, b, c) = (i.dst, i.a, i.b, i.c);
    match i.op {
        Op::Imulhi => {
            if i.modifier == 1 {
                binary(regs, nt, mask, d, a, b, |x, y| ((x as i32 as i64 * y as i32 as i64) >> 32) as u32)
            } else {
                binary(regs, nt, mask, d, a, b, |x, y| ((x as u64 * y as u64) >> 32) as u32)
            }
        }
        Op::Udiv => binary(regs, nt, mask, d, a, b, |x, y| x.checked_div(y).unwrap_or(u32::MAX)),
        Op::Sdiv => {
            binary(
                regs,
                nt,
                mask,
                d,
                a,
                b,
                |x, y| {
                    if y == 0 {
                        u32::MAX
                    } else {
                        (x as i32).wrapping_div(y as i32) as u32
                    }
                },
            )
        }
        Op::Urem => binary(regs, nt, mask, d, a, b, |x, y| if y == 0 { x } else { x % y }),
        Op::Srem => {
            binary(regs, nt, mask, d, a, b, |x, y| if y == 0 { x } else { (x as i32).wrapping_rem(y as i32) as u32 })
        }
        Op::Smod => binary(regs, nt, mask, d, a, b, |x, y| {
            if y == 0 {
                return x;
            }
            let (x, y) = (x as i32, y as i32);
            let r = x.wrapping_rem(y);
            (if r != 0 && ((r < 0) != (y < 0)) { r + y } else { r }) as u32
        }),
        Op::Not => unary(regs, nt, mask, d, a, |x| !x),
        Op::Ineg => unary(regs, nt, mask, d, a, |x| x.wrapping_neg()),
        Op::Iabs => unary(regs, nt, mask, d, a, |x| (x as i32).wrapping_abs() as u32),
        Op::Imin => {
            if i.modifier == 1 {
                binary(regs, nt, mask, d, a, b, |x, y| (x as i32).min(y as i32) as u32)
            } else {
                binary(regs, nt, mask, d, a, b, u32::min)
            }
        }
        Op::Imax => {
            if i.modifier == 1 {
                binary(regs, nt, mask, d, a, b, |x, y| (x as i32).max(y as i32) as u32)
            } else {
                binary(regs, nt, mask, d, a, b, u32::max)
            }
        }
        Op::Bfe => {
            let signed = i.modifier == 1;
            ternary(regs, nt, mask, d, a, b, c, |x, off, cnt| {
                let off = off & 31;
                let cnt = cnt.min(32 - off);
                if cnt == 0 {
                    return 0;
                }
                let v = x >> off;
                let sh = 32 - cnt;
                if signed {
                    (((v << sh) as i32) >> sh) as u32
                } else {
                    (v << sh) >> sh
                }
            })
        }
        Op::Bfi => {
            let (dd, aa, bb, cc, ee) =
                (d as usize * nt, a as usize * nt, b as usize * nt, c as usize * nt, i.d as usize * nt);
            lanes!(mask, nt, |l| {
                let off = regs[cc + l] & 31;
                let cnt = regs[ee + l].min(32 - off);
                let m = if cnt == 32 { u32::MAX } else { ((1u32 << cnt) - 1) << off };
                regs[dd + l] = (regs[aa + l] & !m) | ((regs[bb + l] << off) & m);
            });
        }
        Op::Brev => unary(regs, nt, mask, d, a, u32::reverse_bits),
        Op::Popc => unary(regs, nt, mask, d, a, u32::count_ones),
        Op::Flsb => unary(regs, nt, mask, d, a, |x| if x == 0 { u32::MAX } else { x.trailing_zeros() }),
        Op::Fmsb => {
            if i.modifier == 1 {
                unary(regs, nt, mask, d, a, |x| if (x as i32) < 0 { msb_u(!x) } else { msb_u(x) })
            } else {
                unary(regs, nt, mask, d, a, msb_u)
            }
        }
        Op::Ext => {
            let bits = i.modifier as u32;
            if bits == 0 || bits >= 32 {
                return Err(illegal(i, "extension width must be 1..31"));
            }
            let sign = i.imm & 1 != 0;
            let sh = 32 - bits;
            unary(regs, nt, mask, d, a, |x| if sign { (((x << sh) as i32) >> sh) as u32 } else { (x << sh) >> sh })
        }
        Op::Iaddc
        | Op::Isubb
        | Op::Imulx
        | Op::Iadd64
        | Op::Isub64
        | Op::Imul64
        | Op::Udiv64
        | Op::Urem64
        | Op::Sdiv64
        | Op::Srem64
        | Op::Shl64
        | Op::Shr64
        | Op::Sar64
        | Op::Icmp64 => wide(i, regs, nt, mask)?,
        _ => return Err(not_executed(i)),
    }
    Ok(())
}

/// The ops with a 64-bit operand or result.
fn wide(i: &Instr, regs: &mut [u32], nt: usize, mask: u32) -> Result<(), Fault> {
    let (d, a, b) = (i.dst, i.a, i.b);
    match i.op {
        Op::Iaddc | Op::Isubb | Op::Imulx => {
            let (dd, aa, bb) = (d as usize, a as usize * nt, b as usize * nt);
            let signed = i.modifier == 1;
            lanes!(mask, nt, |l| {
                let (x, y) = (regs[aa + l], regs[bb + l]);
                let v: u64 = match i.op {
                    Op::Iaddc => {
                        let (s, c) = x.overflowing_add(y);
                        s as u64 | (c as u64) << 32
                    }
                    Op::Isubb => {
                        let (s, c) = x.overflowing_sub(y);
                        s as u64 | (c as u64) << 32
                    }
                    _ if signed => (x as i32 as i64).wrapping_mul(y as i32 as i64) as u64,
                    _ => x as u64 * y as u64,
                };
                set_pair(regs, dd, nt, l, v);
            });
        }

        Op::Iadd64 => binary64(regs, nt, mask, i, u64::wrapping_add),
        Op::Isub64 => binary64(regs, nt, mask, i, u64::wrapping_sub),
        Op::Imul64 => binary64(regs, nt, mask, i, u64::wrapping_mul),
        Op::Udiv64 => binary64(regs, nt, mask, i, |x, y| x.checked_div(y).unwrap_or(u64::MAX)),
        Op::Urem64 => binary64(regs, nt, mask, i, |x, y| if y == 0 { x } else { x % y }),
        Op::Sdiv64 => {
            binary64(regs, nt, mask, i, |x, y| if y == 0 { u64::MAX } else { (x as i64).wrapping_div(y as i64) as u64 })
        }
        Op::Srem64 => {
            binary64(regs, nt, mask, i, |x, y| if y == 0 { x } else { (x as i64).wrapping_rem(y as i64) as u64 })
        }
        Op::Shl64 | Op::Shr64 | Op::Sar64 => {
            let (dd, aa, bb) = (d as usize, a as usize, b as usize * nt);
            lanes!(mask, nt, |l| {
                let x = pair(regs, aa, nt, l);
                let s = regs[bb + l] & 63;
                let v = match i.op {
                    Op::Shl64 => x << s,
                    Op::Shr64 => x >> s,
                    _ => ((x as i64) >> s) as u64,
                };
                set_pair(regs, dd, nt, l, v);
            });
        }
        Op::Icmp64 => {
            let cond = IntCond::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad integer condition"))?;
            let (dd, aa, bb) = (d as usize * nt, a as usize, b as usize);
            lanes!(mask, nt, |l| {
                regs[dd + l] = int_cond64(cond, pair(regs, aa, nt, l), pair(regs, bb, nt, l)) as u32;
            });
        }
        _ => return Err(not_executed(i)),
    }
    Ok(())
}
