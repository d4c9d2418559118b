//! Cross-lane ops: votes, ballots, shuffles, reductions and scans over the warp's active
//! lanes, and derivatives within 2x2 quads, through the warp's own datapath.

use super::{illegal, not_executed, pair, set_pair, store_row};
use crate::abi::isa::{self, Instr, Op, RedOp, ShflMode, VoteOp};
use crate::abi::MAX_THREADS;
use crate::fault::Fault;

/// One step of a `RED` reduction or scan on 32-bit (`wide` false) or 64-bit values.
fn red_apply(op: RedOp, wide: bool, x: u64, y: u64) -> u64 {
    let (f32_, f64_) = (|v: u64| f32::from_bits(v as u32), f64::from_bits);
    let v = match op {
        RedOp::Iadd => x.wrapping_add(y),
        RedOp::Imul => x.wrapping_mul(y),
        RedOp::And => x & y,
        RedOp::Or => x | y,
        RedOp::Xor => x ^ y,
        RedOp::Umin => x.min(y),
        RedOp::Umax => x.max(y),
        RedOp::Smin | RedOp::Smax => {
            let (a, b) = if wide { (x as i64, y as i64) } else { (x as u32 as i32 as i64, y as u32 as i32 as i64) };
            let m = if op == RedOp::Smin { a.min(b) } else { a.max(b) };
            m as u64
        }
        RedOp::Fadd | RedOp::Fmul | RedOp::Fmin | RedOp::Fmax if wide => {
            let (a, b) = (f64_(x), f64_(y));
            (match op {
                RedOp::Fadd => a + b,
                RedOp::Fmul => a * b,
                RedOp::Fmin => a.min(b),
                _ => a.max(b),
            })
            .to_bits()
        }
        _ => {
            let (a, b) = (f32_(x), f32_(y));
            (match op {
                RedOp::Fadd => a + b,
                RedOp::Fmul => a * b,
                RedOp::Fmin => a.min(b),
                _ => a.max(b),
            })
            .to_bits() as u64
        }
    };
    if wide {
        v
    } else {
        v & 0xFFFF_FFFF
    }
}

/// The identity of a `RED` op (what the first lane of an exclusive scan gets).
fn red_identity(op: RedOp, wide: bool) -> u64 {
    let (bits, sign) = if wide { (u64::MAX, 1u64 << 63) } else { (u32::MAX as u64, 1u64 << 31) };
    match op {
        RedOp::Iadd | RedOp::Or | RedOp::Xor | RedOp::Umax => 0,
        RedOp::Imul => 1,
        RedOp::And | RedOp::Umin => bits,
        RedOp::Smin => bits >> 1,
        RedOp::Smax => sign,
        RedOp::Fadd if wide => 0f64.to_bits(),
        RedOp::Fadd => 0f32.to_bits() as u64,
        RedOp::Fmul if wide => 1f64.to_bits(),
        RedOp::Fmul => 1f32.to_bits() as u64,
        RedOp::Fmin if wide => f64::INFINITY.to_bits(),
        RedOp::Fmin => f32::INFINITY.to_bits() as u64,
        RedOp::Fmax if wide => f64::NEG_INFINITY.to_bits(),
        RedOp::Fmax => f32::NEG_INFINITY.to_bits() as u64,
    }
}

/// Executes cross-lane op `i` over the lanes in `mask`.
pub(super) fn execute(i: &Instr, regs: &mut [u32], nt: usize, mask: u32) -> Result<(), Fault> {
    let (d, a, b) = (i.dst, i.a, i.b);
    match i.op {
        Op::Vote => {
            let op = VoteOp::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad vote"))?;
            let (dd, aa) = (d as usize * nt, a as usize * nt);
            let (mut all, mut any, mut eq, mut first) = (true, false, true, None);
            lanes!(mask, nt, |l| {
                let v = regs[aa + l];
                all &= v != 0;
                any |= v != 0;
                match first {
                    None => first = Some(v),
                    Some(f) => eq &= f == v,
                }
            });
            let r = match op {
                VoteOp::All => all,
                VoteOp::Any => any,
                VoteOp::Eq => eq,
            } as u32;
            lanes!(mask, nt, |l| {
                regs[dd + l] = r;
            });
        }
        Op::Ballot => {
            let (dd, aa) = (d as usize * nt, a as usize * nt);
            let mut bits = 0u32;
            lanes!(mask, nt, |l| {
                if regs[aa + l] != 0 {
                    bits |= 1 << l;
                }
            });
            lanes!(mask, nt, |l| {
                regs[dd + l] = bits;
            });
        }
        Op::Shfl => {
            let mode = ShflMode::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad shuffle mode"))?;
            let (dd, aa, bb) = (d as usize * nt, a as usize * nt, b as usize * nt);
            let mut out = [0u32; MAX_THREADS];
            lanes!(mask, nt, |l| {
                let k = regs[bb + l] as i64;
                let src = match mode {
                    ShflMode::Idx => k,
                    ShflMode::Up => l as i64 - k,
                    ShflMode::Down => l as i64 + k,
                    ShflMode::Xor => (l as i64) ^ (k & 0xFFFF_FFFF),
                };
                let ok = (0..nt as i64).contains(&src) && mask >> src & 1 != 0;
                out[l] = regs[aa + if ok { src as usize } else { l }];
            });
            // Written after every lane read (dst may be `a`).
            let mut mm = mask;
            while mm != 0 {
                let l = mm.trailing_zeros() as usize;
                mm &= mm - 1;
                regs[dd + l] = out[l];
            }
        }
        Op::Red => red(i, regs, nt, mask)?,
        Op::Deriv => deriv(i, regs, nt, mask)?,
        _ => return Err(not_executed(i)),
    }
    Ok(())
}

/// `RED`: a reduction or a scan of `a`, per cluster of lanes, in lane order.
fn red(i: &Instr, regs: &mut [u32], nt: usize, mask: u32) -> Result<(), Fault> {
    let (d, a) = (i.dst, i.a);
    let op = RedOp::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad reduction"))?;
    let wide = i.imm & isa::RED_WIDE != 0;
    let kind = i.imm & 3;
    let cluster = match (i.imm >> isa::RED_CLUSTER_SHIFT) & 0xFF {
        0 => nt,
        c => (c as usize).min(nt),
    };
    let get = |regs: &[u32], l: usize| {
        if wide {
            pair(regs, a as usize, nt, l)
        } else {
            regs[a as usize * nt + l] as u64
        }
    };
    let mut out = [0u64; MAX_THREADS];
    for c0 in (0..nt).step_by(cluster.max(1)) {
        let lanes_in = (c0..c0 + cluster).filter(|&l| mask >> l & 1 != 0);
        let mut acc = red_identity(op, wide);
        let mut started = false;
        for l in lanes_in.clone() {
            let v = get(regs, l);
            let before = acc;
            acc = if started { red_apply(op, wide, acc, v) } else { v };
            started = true;
            out[l] = if kind == isa::RED_EXCLUSIVE { before } else { acc };
        }
        if kind == isa::RED_REDUCE {
            for l in lanes_in {
                out[l] = acc;
            }
        }
    }
    lanes!(mask, nt, |l| {
        if wide {
            set_pair(regs, d as usize, nt, l, out[l]);
        } else {
            regs[d as usize * nt + l] = out[l] as u32;
        }
    });
    Ok(())
}

/// `DERIV`: the difference across the lane's 2x2 quad (lanes `4q..4q+4` are pixels (x, y),
/// (x+1, y), (x, y+1), (x+1, y+1)). Coarse derivatives take the quad's first row or column
/// for all four lanes, fine ones the lane's own row or column. Every lane of the quad is read
/// whether it is active or not (helper lanes are active; a lane of a quad split by divergence
/// still holds its last value, which is what "undefined" becomes here). A partner outside a
/// warp narrower than a quad reads the lane itself (0).
fn deriv(i: &Instr, regs: &mut [u32], nt: usize, mask: u32) -> Result<(), Fault> {
    use crate::abi::gfx::deriv as kind;
    let a = i.a as usize * nt;
    let k = i.modifier;
    if kind::name(k).is_none() {
        return Err(illegal(i, "bad derivative kind"));
    }
    let mut out = [0u32; MAX_THREADS];
    lanes!(mask, nt, |l| {
        let (q, p) = (l & !3, l & 3);
        // (from, to) pixels of the quad whose difference the lane gets.
        let (from, to) = match k {
            kind::COARSE_X => (0, 1),
            kind::COARSE_Y => (0, 2),
            kind::FINE_X => (p & 2, (p & 2) + 1),
            _ => (p & 1, (p & 1) + 2),
        };
        let at = |px: usize| if q + px < nt { regs[a + q + px] } else { regs[a + l] };
        out[l] = (f32::from_bits(at(to)) - f32::from_bits(at(from))).to_bits();
    });
    store_row(regs, i.dst, nt, mask, &out);
    Ok(())
}
