//! The integer ALU: the integer and logic ops the issue loop does not run inline, and the
//! ops on 64-bit integers (register pairs, carries, full products).

use super::{
    binary, binary64, full_warp, illegal, not_executed, pair, row_full, row_full_mut, set_pair, ternary, unary,
};
use crate::abi::isa::{Instr, IntCond, Op};
use crate::abi::MAX_THREADS;
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

/// A 64-bit result from two 32-bit operands into the pair at `d`, lane by lane; a full
/// warp's rows are read whole before the pair is written, which is the same per lane.
#[inline(always)]
fn widening(regs: &mut [u32], nt: usize, mask: u32, d: u16, a: u16, b: u16, op: impl Fn(u32, u32) -> u64) {
    if full_warp(nt, mask) {
        let (x, y) = (row_full(regs, a), row_full(regs, b));
        let (mut lo, mut hi) = ([0u32; MAX_THREADS], [0u32; MAX_THREADS]);
        for l in 0..MAX_THREADS {
            let v = op(x[l], y[l]);
            (lo[l], hi[l]) = (v as u32, (v >> 32) as u32);
        }
        *row_full_mut(regs, d) = lo;
        *row_full_mut(regs, d + 1) = hi;
        return;
    }
    let (aa, bb) = (a as usize * nt, b as usize * nt);
    lanes!(mask, nt, |l| {
        let v = op(regs[aa + l], regs[bb + l]);
        set_pair(regs, d as usize, nt, l, v);
    });
}

/// The ops with a 64-bit operand or result.
fn wide(i: &Instr, regs: &mut [u32], nt: usize, mask: u32) -> Result<(), Fault> {
    let (d, a, b) = (i.dst, i.a, i.b);
    match i.op {
        Op::Iaddc => widening(regs, nt, mask, d, a, b, |x, y| {
            let (s, c) = x.overflowing_add(y);
            s as u64 | (c as u64) << 32
        }),
        Op::Isubb => widening(regs, nt, mask, d, a, b, |x, y| {
            let (s, c) = x.overflowing_sub(y);
            s as u64 | (c as u64) << 32
        }),
        Op::Imulx if i.modifier == 1 => {
            widening(regs, nt, mask, d, a, b, |x, y| (x as i32 as i64).wrapping_mul(y as i32 as i64) as u64)
        }
        Op::Imulx => widening(regs, nt, mask, d, a, b, |x, y| x as u64 * y as u64),

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

#[cfg(test)]
mod tests {
    use super::super::tests::{random_regs, Rng, NT, REGS};
    use super::*;
    use crate::abi::isa::REG_NONE as N;

    /// The 64-bit and widening ops over a full warp's rows equal the same ops lane by lane
    /// (one lane at a time), also when the destination pair overlaps a source.
    #[test]
    fn wide_full_warp_matches_lanes() {
        let mut rng = Rng(0x5eed_0064_beef_f00d);
        let ops = [
            (Op::Iaddc, 0),
            (Op::Isubb, 0),
            (Op::Imulx, 0),
            (Op::Imulx, 1),
            (Op::Iadd64, 0),
            (Op::Isub64, 0),
            (Op::Imul64, 0),
            (Op::Udiv64, 0),
            (Op::Urem64, 0),
            (Op::Sdiv64, 0),
            (Op::Srem64, 0),
        ];
        for round in 0..60 {
            let regs = random_regs(&mut rng);
            let pair = |rng: &mut Rng| (rng.next() % (REGS as u32 - 1)) as u16;
            let (d, a, b) = match round % 4 {
                0 => (0, 0, 2),
                1 => (1, 0, 2),
                _ => (pair(&mut rng), pair(&mut rng), pair(&mut rng)),
            };
            for (op, modifier) in ops {
                let i = Instr::r(op, modifier, d, a, b, N, N, 0);
                let mut whole = regs.clone();
                execute(&i, &mut whole, NT, u32::MAX).unwrap();
                let mut lanes = regs.clone();
                for l in 0..NT {
                    execute(&i, &mut lanes, NT, 1 << l).unwrap();
                }
                assert_eq!(whole, lanes, "{op:?}.{modifier} d {d} a {a} b {b}");
            }
        }
    }
}
