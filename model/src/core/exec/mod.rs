//! Instruction semantics: what one VX instruction does to a warp's lanes.
//!
//! [`execute`] runs the ops a ray-query kernel issues most inline, in the core's issue loop;
//! every other op goes out of line to the module of the unit that executes it, the ISA
//! table's [`Unit`] column: `alu`, `fpu`, `sfu`, `lsu`, `tex`, `om`, `warp_ops`, `ctrl` (and
//! CSR reads), `rtu`. Adding an op is its table line plus its arm in its unit's module.
//!
//! Each handler loops over the active lanes of one contiguous register row per operand
//! (`regs[r * NT + lane]`); decode-time validation guarantees every row is in range.

use super::warp::Warp;
use super::{Core, CtaCtx, DispatchCtx};
use crate::abi::isa::{Instr, IntCond, Op, Unit};
use crate::abi::MAX_THREADS;
use crate::config::DeviceConfig;
use crate::dcr::LaunchState;
use crate::fault::{Fault, FaultKind};
use crate::mem::{MemFault, MemoryMap};
use crate::rtu::RtuUnit;
use crate::tex::TexUnit;

/// Runs `body` for every active lane (a straight loop when all lanes are active, so the
/// common case vectorises; a bit walk otherwise).
macro_rules! lanes {
    ($mask:expr, $nt:expr, |$l:ident| $body:block) => {{
        let m: u32 = $mask;
        let nt: usize = $nt;
        if m == crate::cta_dispatch::full_mask(nt as u32) {
            for $l in 0..nt $body
        } else {
            let mut mm = m;
            while mm != 0 {
                let $l = mm.trailing_zeros() as usize;
                mm &= mm - 1;
                $body
            }
        }
    }};
}

mod alu;
#[cfg(test)]
pub(crate) mod bench;
mod ctrl;
mod fpu;
mod isect;
mod lsu;
mod om;
mod rtu;
mod sfu;
mod tex;
mod warp_ops;

use alu::int_cond;
pub(crate) use ctrl::csr_table;

/// What the warp does after an instruction.
pub enum Next {
    /// Advance to pc + 1.
    Step,
    /// The instruction set the pc itself (branches) or retired lanes.
    Moved,
    /// The warp blocks (barrier, parked WAIT) with pc already advanced or kept.
    Block,
}

/// The units beside the register file that keep state across a warp's instructions, one
/// set per core: the RTU front end, the output-merger port, fragment samples and the texture
/// unit. A new unit (node intersection) is
/// a field here plus its module in `exec`.
pub struct CoreUnits {
    pub rtu: RtuUnit,
    /// The core's port to the output merger (`EXP`).
    pub om: crate::gfx::om::Port,
    /// Fragment lanes' interpolated values, computed when first read.
    pub samples: crate::gfx::frag::SampleCache,
    pub tex: TexUnit,
    /// The rdna2 architecture's node-intersection unit.
    pub isect: crate::isect::unit::IsectUnit,
}

impl CoreUnits {
    pub fn new(cfg: &DeviceConfig) -> CoreUnits {
        CoreUnits {
            rtu: {
                let mut u = RtuUnit::new(&cfg.rtu, cfg.num_warps as usize, cfg.num_threads as usize);
                if cfg.detailed_stats {
                    u.track_lane_work();
                }
                u
            },
            om: Default::default(),
            samples: Default::default(),
            tex: TexUnit::new(),
            isect: {
                let mut u = crate::isect::unit::IsectUnit::default();
                if cfg.detailed_stats {
                    u.track_lane_work(cfg.num_warps as usize);
                }
                u
            },
        }
    }
}

/// Everything an instruction may touch besides the warp itself.
pub struct ExecEnv<'a> {
    pub mem: &'a MemoryMap,
    pub launch: &'a LaunchState,
    pub cta: &'a CtaCtx,
    pub lmem: &'a mut [u8],
    pub units: &'a mut CoreUnits,
    pub core_id: u32,
    pub warp_id: u32,
    pub num_warps: u32,
    pub num_cores: u32,
    pub nt: usize,
    /// The graphics stage the kernel runs as.
    pub gfx: Option<crate::gfx::Stage<'a>>,
    /// The memory regions the warp's last global loads and stores used, most recent first
    /// (a memo of `mem`'s lookups).
    pub hot: [Option<&'a crate::mem::Region>; 2],
}

impl Core {
    /// Warp `wid` and the environment its instructions execute in: the one place an
    /// [`ExecEnv`] is built, for functional mode's issue loop and timed mode's issue alike.
    pub(super) fn warp_env<'e>(&'e mut self, ctx: &DispatchCtx<'e>, wid: usize) -> (&'e mut Warp, ExecEnv<'e>) {
        let Core { warps, ctas, lmem, units, id, num_warps, nt, .. } = self;
        let w = &mut warps[wid];
        let env = ExecEnv {
            mem: ctx.mem,
            launch: ctx.launch,
            cta: &ctas[w.cta_slot as usize],
            lmem: &mut lmem[..],
            units,
            core_id: *id,
            warp_id: wid as u32,
            num_warps: *num_warps,
            num_cores: ctx.num_cores,
            nt: *nt,
            gfx: ctx.gfx,
            hot: [None; 2],
        };
        (w, env)
    }
}

fn lane_fault(f: Fault, lane: usize) -> Fault {
    Fault { lane: Some(lane as u32), ..f }
}

fn mem_fault(m: MemFault, lane: usize) -> Fault {
    lane_fault(Fault::memory(m), lane)
}

#[inline]
fn pair(regs: &[u32], r: usize, nt: usize, l: usize) -> u64 {
    regs[r * nt + l] as u64 | (regs[(r + 1) * nt + l] as u64) << 32
}

#[inline]
fn set_pair(regs: &mut [u32], r: usize, nt: usize, l: usize, v: u64) {
    regs[r * nt + l] = v as u32;
    regs[(r + 1) * nt + l] = (v >> 32) as u32;
}

#[inline]
fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

#[inline]
fn u(x: f32) -> u32 {
    x.to_bits()
}

// The ALU helpers compute every lane into a local row and then store the active lanes:
// bounds are checked once per row instead of once per lane, the lane loop vectorises, and a
// destination that is also a source reads the old values.

/// Register `r`'s row of `nt` lanes.
#[inline(always)]
fn row(regs: &[u32], r: u16, nt: usize) -> &[u32] {
    &regs[r as usize * nt..][..nt]
}

/// Stores the lanes of `out` that `mask` enables into register `d`.
#[inline(always)]
fn store_row(regs: &mut [u32], d: u16, nt: usize, mask: u32, out: &[u32; MAX_THREADS]) {
    let dst = &mut regs[d as usize * nt..][..nt];
    if mask == crate::cta_dispatch::full_mask(nt as u32) {
        dst.copy_from_slice(&out[..nt]);
    } else {
        for (l, v) in dst.iter_mut().enumerate() {
            if mask >> l & 1 != 0 {
                *v = out[l];
            }
        }
    }
}

/// True when an instruction covers every lane of a warp of the widest kind: the helpers
/// then work on fixed-size rows (no per-lane mask tests, no run-time-length copies).
#[inline(always)]
fn full_warp(nt: usize, mask: u32) -> bool {
    nt == MAX_THREADS && mask == u32::MAX
}

/// Register `r`'s row in a warp of `MAX_THREADS` lanes, copied out (a destination that is
/// also a source then reads the old values).
#[inline(always)]
fn row_full(regs: &[u32], r: u16) -> [u32; MAX_THREADS] {
    let row: &[u32; MAX_THREADS] = regs[r as usize * MAX_THREADS..][..MAX_THREADS].try_into().expect("a full row");
    *row
}

/// Register `r`'s row in a warp of `MAX_THREADS` lanes, for writing.
#[inline(always)]
fn row_full_mut(regs: &mut [u32], r: u16) -> &mut [u32; MAX_THREADS] {
    (&mut regs[r as usize * MAX_THREADS..][..MAX_THREADS]).try_into().expect("a full row")
}

/// Bit `l` set for every lane `l` of `row` that is not zero.
#[inline(always)]
fn nonzero_lanes(row: &[u32]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if let Ok(r) = <&[u32; MAX_THREADS]>::try_from(row) {
        return nonzero_lanes_sse2(r);
    }
    nonzero_lanes_scalar(row)
}

/// [`nonzero_lanes`] for any row length.
#[inline(always)]
fn nonzero_lanes_scalar(row: &[u32]) -> u32 {
    row.iter().enumerate().fold(0u32, |t, (l, &x)| t | ((x != 0) as u32) << l)
}

/// [`nonzero_lanes`] of a full row with SSE2: compare with zero, pack the 32 lane masks to
/// bytes, two byte movemasks.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn nonzero_lanes_sse2(r: &[u32; MAX_THREADS]) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline. The eight unaligned 16-byte loads read
    // words 4k..4k+4 of `r` for k < 8, all inside the 32-word array.
    unsafe {
        let p = r.as_ptr().cast::<__m128i>();
        let zero = _mm_setzero_si128();
        let is_zero = |k: usize| _mm_cmpeq_epi32(_mm_loadu_si128(p.add(k)), zero);
        // Lanes 16h..16h+16 as one byte each (0xff where the word is zero), in lane order.
        let half = |h: usize| {
            let lo = _mm_packs_epi32(is_zero(4 * h), is_zero(4 * h + 1));
            let hi = _mm_packs_epi32(is_zero(4 * h + 2), is_zero(4 * h + 3));
            _mm_movemask_epi8(_mm_packs_epi16(lo, hi)) as u32
        };
        !(half(0) | half(1) << 16)
    }
}

#[inline(always)]
fn unary(regs: &mut [u32], nt: usize, mask: u32, d: u16, a: u16, op: impl Fn(u32) -> u32) {
    if full_warp(nt, mask) {
        let x = row_full(regs, a);
        let dst = row_full_mut(regs, d);
        for l in 0..MAX_THREADS {
            dst[l] = op(x[l]);
        }
    } else {
        unary_lanes(regs, nt, mask, d, a, op)
    }
}

/// [`unary`] for any warp width and mask.
#[inline(always)]
fn unary_lanes(regs: &mut [u32], nt: usize, mask: u32, d: u16, a: u16, op: impl Fn(u32) -> u32) {
    let mut out = [0u32; MAX_THREADS];
    for (o, &x) in out.iter_mut().zip(row(regs, a, nt)) {
        *o = op(x);
    }
    store_row(regs, d, nt, mask, &out);
}

#[inline(always)]
fn binary(regs: &mut [u32], nt: usize, mask: u32, d: u16, a: u16, b: u16, op: impl Fn(u32, u32) -> u32) {
    if full_warp(nt, mask) {
        let (x, y) = (row_full(regs, a), row_full(regs, b));
        let dst = row_full_mut(regs, d);
        for l in 0..MAX_THREADS {
            dst[l] = op(x[l], y[l]);
        }
    } else {
        binary_lanes(regs, nt, mask, d, a, b, op)
    }
}

/// [`binary`] for any warp width and mask.
#[inline(always)]
fn binary_lanes(regs: &mut [u32], nt: usize, mask: u32, d: u16, a: u16, b: u16, op: impl Fn(u32, u32) -> u32) {
    let mut out = [0u32; MAX_THREADS];
    for ((o, &x), &y) in out.iter_mut().zip(row(regs, a, nt)).zip(row(regs, b, nt)) {
        *o = op(x, y);
    }
    store_row(regs, d, nt, mask, &out);
}

#[inline(always)]
fn ternary(regs: &mut [u32], nt: usize, mask: u32, d: u16, a: u16, b: u16, c: u16, op: impl Fn(u32, u32, u32) -> u32) {
    if full_warp(nt, mask) {
        let (x, y, z) = (row_full(regs, a), row_full(regs, b), row_full(regs, c));
        let dst = row_full_mut(regs, d);
        for l in 0..MAX_THREADS {
            dst[l] = op(x[l], y[l], z[l]);
        }
    } else {
        ternary_lanes(regs, nt, mask, d, a, b, c, op)
    }
}

/// [`ternary`] for any warp width and mask.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn ternary_lanes(
    regs: &mut [u32],
    nt: usize,
    mask: u32,
    d: u16,
    a: u16,
    b: u16,
    c: u16,
    op: impl Fn(u32, u32, u32) -> u32,
) {
    let mut out = [0u32; MAX_THREADS];
    for (((o, &x), &y), &z) in out.iter_mut().zip(row(regs, a, nt)).zip(row(regs, b, nt)).zip(row(regs, c, nt)) {
        *o = op(x, y, z);
    }
    store_row(regs, d, nt, mask, &out);
}

fn binary64(regs: &mut [u32], nt: usize, mask: u32, i: &Instr, op: impl Fn(u64, u64) -> u64) {
    if full_warp(nt, mask) {
        // Whole rows, read before the pair is written (per lane, as the loop below).
        let (a, b) = (i.a, i.b);
        let (alo, ahi, blo, bhi) = (row_full(regs, a), row_full(regs, a + 1), row_full(regs, b), row_full(regs, b + 1));
        let (mut lo, mut hi) = ([0u32; MAX_THREADS], [0u32; MAX_THREADS]);
        for l in 0..MAX_THREADS {
            let v = op(alo[l] as u64 | (ahi[l] as u64) << 32, blo[l] as u64 | (bhi[l] as u64) << 32);
            (lo[l], hi[l]) = (v as u32, (v >> 32) as u32);
        }
        *row_full_mut(regs, i.dst) = lo;
        *row_full_mut(regs, i.dst + 1) = hi;
        return;
    }
    let (d, a, b) = (i.dst as usize, i.a as usize, i.b as usize);
    lanes!(mask, nt, |l| {
        let v = op(pair(regs, a, nt, l), pair(regs, b, nt, l));
        set_pair(regs, d, nt, l, v);
    });
}

fn illegal(i: &Instr, what: &str) -> Fault {
    Fault::new(FaultKind::IllegalInstruction, format!("{what} in `{}`", crate::abi::isa::disasm(i)))
}

/// The fault for an op that reached a unit whose module does not execute it: the ISA table
/// and the module disagree (`every_op_is_executed_by_its_unit` runs them all).
fn not_executed(i: &Instr) -> Fault {
    illegal(i, &format!("the {:?} unit does not execute this op", i.op.unit()))
}

/// Executes one instruction for the active lanes of `w`'s top entry.
///
/// The ops a ray-query kernel runs most (moves, the common integer and float ALU ops,
/// compares, BRA) are handled here, inlined into the core's issue loop; the rest go to
/// [`execute_rest`], out of line, so the common instruction pays neither a call nor the rare
/// handlers' stack frames.
#[inline(always)]
pub fn execute(i: &Instr, w: &mut Warp, mask: u32, env: &mut ExecEnv) -> Result<Next, Fault> {
    let nt = env.nt;
    let regs = &mut w.regs[..];
    let (d, a, b, c) = (i.dst, i.a, i.b, i.c);
    match i.op {
        Op::Bra => {
            // Every lane's predicate bit, branch-free; inactive lanes are masked off.
            let taken = nonzero_lanes(row(regs, a, nt));
            w.branch(taken & mask, i.imm, i.imm2, i.imm3);
            return Ok(Next::Moved);
        }
        Op::Mov => {
            if full_warp(nt, mask) {
                // A whole row of the widest warp: one fixed-size row copy.
                let src = row_full(regs, a);
                *row_full_mut(regs, d) = src;
            } else {
                unary(regs, nt, mask, d, a, |x| x)
            }
        }
        Op::Movi => {
            if full_warp(nt, mask) {
                row_full_mut(regs, d).fill(i.imm);
            } else {
                let (d, v) = (d as usize * nt, i.imm);
                lanes!(mask, nt, |l| {
                    regs[d + l] = v;
                });
            }
        }
        Op::Sel => ternary(regs, nt, mask, d, a, b, c, |p, x, y| if p != 0 { x } else { y }),
        Op::Iadd => binary(regs, nt, mask, d, a, b, u32::wrapping_add),
        Op::Isub => binary(regs, nt, mask, d, a, b, u32::wrapping_sub),
        Op::Imul => binary(regs, nt, mask, d, a, b, u32::wrapping_mul),
        Op::And => binary(regs, nt, mask, d, a, b, |x, y| x & y),
        Op::Or => binary(regs, nt, mask, d, a, b, |x, y| x | y),
        Op::Xor => binary(regs, nt, mask, d, a, b, |x, y| x ^ y),
        Op::Shl => binary(regs, nt, mask, d, a, b, |x, y| x << (y & 31)),
        Op::Shr => binary(regs, nt, mask, d, a, b, |x, y| x >> (y & 31)),
        Op::Sar => binary(regs, nt, mask, d, a, b, |x, y| ((x as i32) >> (y & 31)) as u32),
        Op::Icmp => {
            let cond = IntCond::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad integer condition"))?;
            // One loop per condition: the condition is not matched again for every lane.
            macro_rules! icmp {
                ($($c:ident),*) => {
                    match cond {
                        $(IntCond::$c => binary(regs, nt, mask, d, a, b, |x, y| int_cond(IntCond::$c, x, y) as u32),)*
                    }
                };
            }
            icmp!(Eq, Ne, Ult, Ule, Ugt, Uge, Slt, Sle, Sgt, Sge)
        }
        Op::Fadd => binary(regs, nt, mask, d, a, b, |x, y| u(f(x) + f(y))),
        Op::Fsub => binary(regs, nt, mask, d, a, b, |x, y| u(f(x) - f(y))),
        Op::Fmul => binary(regs, nt, mask, d, a, b, |x, y| u(f(x) * f(y))),
        Op::Ffma => ternary(regs, nt, mask, d, a, b, c, |x, y, z| u(f(x).mul_add(f(y), f(z)))),
        Op::Fmin => binary(regs, nt, mask, d, a, b, |x, y| u(f(x).min(f(y)))),
        Op::Fmax => binary(regs, nt, mask, d, a, b, |x, y| u(f(x).max(f(y)))),
        Op::Fneg => unary(regs, nt, mask, d, a, |x| x ^ 0x8000_0000),
        Op::Fabs => unary(regs, nt, mask, d, a, |x| x & 0x7FFF_FFFF),
        Op::F2i => unary(regs, nt, mask, d, a, |x| f(x) as i32 as u32),
        Op::I2f => unary(regs, nt, mask, d, a, |x| u(x as i32 as f32)),
        Op::U2f => unary(regs, nt, mask, d, a, |x| u(x as f32)),
        _ => return execute_rest(i, w, mask, env),
    }
    Ok(Next::Step)
}

/// [`execute`] for every op it does not run inline: the module of the op's unit.
#[inline(never)]
fn execute_rest(i: &Instr, w: &mut Warp, mask: u32, env: &mut ExecEnv) -> Result<Next, Fault> {
    let nt = env.nt;
    // Helper lanes run everything but the ops with effects outside the warp.
    let mask = if i.op.skips_helper_lanes() { mask & !w.helper } else { mask };
    match i.op.unit() {
        Unit::Alu => alu::execute(i, &mut w.regs, nt, mask)?,
        Unit::Fpu => fpu::execute(i, &mut w.regs, nt, mask)?,
        Unit::Sfu => sfu::execute(i, &mut w.regs, nt, mask)?,
        Unit::Lsu => lsu::execute(i, w, mask, env)?,
        Unit::Tex => tex::execute(i, &mut w.regs, nt, mask, env.mem, &mut env.units.tex)?,
        Unit::Isect => isect::execute(i, w, mask, env)?,
        Unit::Om => om::execute(i, w, mask, env)?,
        Unit::Warp => warp_ops::execute(i, &mut w.regs, nt, mask)?,
        Unit::Csr => ctrl::csr(i, w, mask, env),
        Unit::Ctrl => return ctrl::execute(i, w, mask),
        Unit::Rtu => return rtu::execute(i, w, mask, env),
    }
    Ok(Next::Step)
}

#[cfg(test)]
mod tests {
    use super::alu::int_cond;
    use super::fpu::float_cond;
    use super::*;
    use crate::abi::isa::FloatCond;

    /// A small deterministic generator (xorshift64*).
    pub(super) struct Rng(pub(super) u64);

    impl Rng {
        pub(super) fn next(&mut self) -> u32 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
        }

        /// Mostly random bits, with the float and integer values that exercise edge cases.
        pub(super) fn word(&mut self) -> u32 {
            const SPECIAL: [u32; 10] =
                [0, 1, 31, 32, u32::MAX, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 0x7fc0_0001, 0x3f80_0000];
            let r = self.next();
            if r.is_multiple_of(4) {
                SPECIAL[(r >> 8) as usize % SPECIAL.len()]
            } else {
                self.next()
            }
        }
    }

    pub(super) const NT: usize = MAX_THREADS;
    pub(super) const REGS: usize = 6;

    pub(super) fn random_regs(rng: &mut Rng) -> Vec<u32> {
        (0..REGS * NT).map(|_| rng.word()).collect()
    }

    /// The full-warp forms of the ALU helpers against the per-lane forms, including a
    /// destination that is also a source.
    #[test]
    fn full_warp_alu_matches_lanes() {
        let mut rng = Rng(0x1234_5678_9abc_def0);
        let un: [fn(u32) -> u32; 4] =
            [|x| x ^ 0x8000_0000, |x| f(x) as i32 as u32, |x| u(x as f32), |x| u(f(x).sqrt())];
        let bin: [fn(u32, u32) -> u32; 6] = [
            u32::wrapping_add,
            |x, y| x << (y & 31),
            |x, y| u(f(x) * f(y)),
            |x, y| u(f(x).min(f(y))),
            |x, y| int_cond(IntCond::Slt, x, y) as u32,
            |x, y| float_cond(FloatCond::Une, f(x), f(y)) as u32,
        ];
        let tern: [fn(u32, u32, u32) -> u32; 2] =
            [|p, x, y| if p != 0 { x } else { y }, |x, y, z| u(f(x).mul_add(f(y), f(z)))];
        for round in 0..50 {
            let regs = random_regs(&mut rng);
            let mut r = || (rng.next() % REGS as u32) as u16;
            let (d, a, b, c) = if round % 5 == 0 { (1, 1, 1, 1) } else { (r(), r(), r(), r()) };
            for op in un {
                let (mut x, mut y) = (regs.clone(), regs.clone());
                unary(&mut x, NT, u32::MAX, d, a, op);
                unary_lanes(&mut y, NT, u32::MAX, d, a, op);
                assert_eq!(x, y);
            }
            for op in bin {
                let (mut x, mut y) = (regs.clone(), regs.clone());
                binary(&mut x, NT, u32::MAX, d, a, b, op);
                binary_lanes(&mut y, NT, u32::MAX, d, a, b, op);
                assert_eq!(x, y);
            }
            for op in tern {
                let (mut x, mut y) = (regs.clone(), regs.clone());
                ternary(&mut x, NT, u32::MAX, d, a, b, c, op);
                ternary_lanes(&mut y, NT, u32::MAX, d, a, b, c, op);
                assert_eq!(x, y);
            }
        }
    }

    /// Every op of the ISA table reaches code that executes it, inline or in its unit's
    /// module: a fault of its own is fine here, "does not execute" is not.
    #[test]
    fn every_op_is_executed_by_its_unit() {
        let mut bench = bench::Bench::empty(256);
        for &op in Op::ALL {
            bench.units.rtu.launch_warp(0, 1);
            let mut w = Warp::new();
            w.launch(0, u32::MAX, 64, NT, 16);
            let i = if op == Op::Bra { Instr::bra(1, 0, 0, 1) } else { Instr::r(op, 0, 1, 20, 30, 45, 50, 0) };
            if let Err(f) = execute(&i, &mut w, u32::MAX, &mut bench.env(NT)) {
                assert!(!f.detail.contains("does not execute"), "{op:?}: {}", f.detail);
            }
        }
    }

    /// DERIV within quads, DEMOTE making helpers, and helper lanes skipping stores while
    /// still running everything else.
    #[test]
    fn quads_and_helper_lanes() {
        use crate::abi::gfx::deriv;
        use crate::abi::isa::{MemSize, REG_NONE as N};
        let space = crate::mem::AddressSpace::new();
        let buf = space.allocate(4 * NT as u64).unwrap();
        let mem = space.snapshot();
        let mut bench = bench::Bench::new(mem.clone(), 256);
        let mut w = Warp::new();
        w.launch(0, u32::MAX, 8, NT, 0);
        // r1 = (lane % 4)^2 * (1 + lane / 4): per quad, pixels hold 0, 1, 4, 9 times q + 1.
        for l in 0..NT {
            w.regs[NT + l] = (((l % 4) * (l % 4) * (1 + l / 4)) as f32).to_bits();
            // r2:r3 = the lane's word of the buffer; r4 = 7.
            let a = buf.base + 4 * l as u64;
            (w.regs[2 * NT + l], w.regs[3 * NT + l], w.regs[4 * NT + l]) = (a as u32, (a >> 32) as u32, 7);
        }
        let mut env = bench.env(NT);
        let mut run = |w: &mut Warp, i: Instr, mask: u32| {
            execute(&i, w, mask, &mut env).unwrap();
        };
        let quad_of = |w: &Warp, r: usize, q: usize| -> [f32; 4] {
            std::array::from_fn(|p| f32::from_bits(w.regs[r * NT + 4 * q + p]))
        };
        for (k, want) in [
            (deriv::COARSE_X, [1.0, 1.0, 1.0, 1.0]),
            (deriv::COARSE_Y, [4.0, 4.0, 4.0, 4.0]),
            (deriv::FINE_X, [1.0, 1.0, 5.0, 5.0]),
            (deriv::FINE_Y, [4.0, 8.0, 4.0, 8.0]),
        ] {
            run(&mut w, Instr::r(Op::Deriv, k, 5, 1, N, N, N, 0), u32::MAX);
            for q in 0..NT / 4 {
                assert_eq!(quad_of(&w, 5, q), want.map(|x| x * (q + 1) as f32), "kind {k} quad {q}");
            }
        }
        // Lanes 1-3 of quad 0 are helpers; lane 4 demotes itself. A store then writes only the
        // others, but the helpers' derivatives still use their values.
        w.helper = 0b1110;
        run(&mut w, Instr::r(Op::Demote, 0, N, N, N, N, N, 0), 1 << 4);
        assert_eq!(w.helper, 0b1_1110);
        run(&mut w, Instr::r(Op::Stg, MemSize::B32 as u8, N, 2, 4, N, N, 0), u32::MAX);
        let words: Vec<u32> = (0..NT).map(|l| mem.read_u32(buf.base + 4 * l as u64).unwrap()).collect();
        for (l, &v) in words.iter().enumerate() {
            assert_eq!(v, if (1..=4).contains(&l) { 0 } else { 7 }, "lane {l}");
        }
        run(&mut w, Instr::r(Op::Deriv, deriv::FINE_Y, 5, 1, N, N, N, 0), 1);
        assert_eq!(f32::from_bits(w.regs[5 * NT]), 4.0, "a helper's value feeds its quad's derivative");
    }

    #[test]
    fn nonzero_lanes_matches_scalar() {
        let mut rng = Rng(42);
        for round in 0..200 {
            let row: [u32; NT] = std::array::from_fn(|_| match round % 3 {
                0 => rng.word(),
                1 => rng.next() % 2,
                _ => rng.next().is_multiple_of(3) as u32 * 0x8000_0000,
            });
            assert_eq!(nonzero_lanes(&row), nonzero_lanes_scalar(&row), "{row:x?}");
            assert_eq!(nonzero_lanes(&row[..7]), nonzero_lanes_scalar(&row[..7]));
        }
        assert_eq!(nonzero_lanes(&[0; NT]), 0);
        assert_eq!(nonzero_lanes(&[1; NT]), u32::MAX);
    }
}
