//! Instruction semantics: what one VX instruction does to a warp's lanes.
//!
//! Each handler loops over the active lanes of one contiguous register row per operand
//! (`regs[r * NT + lane]`); decode-time validation guarantees every row is in range.

use super::warp::{Warp, WarpState};
use super::CtaCtx;
use crate::abi::csr;
use crate::abi::format;
use crate::abi::isa::{
    self, AtomicOp, FloatCond, Instr, IntCond, MemSize, Op, RedOp, Round, SfuFunc, ShflMode, TrapCode, VoteOp, REG_NONE,
};
use crate::abi::kernel::{desc, ImageDesc};
use crate::abi::rtu as rtu_abi;
use crate::abi::{rd_u16, MAX_THREADS};
use crate::dcr::LaunchState;
use crate::fault::{Fault, FaultKind};
use crate::mem::{MemFault, MemFaultKind, MemoryMap, Region};
use crate::rtu::{RtuError, RtuUnit, TraceRay};
use std::sync::atomic::{AtomicI32, AtomicI64, Ordering};

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

/// What the warp does after an instruction.
pub enum Next {
    /// Advance to pc + 1.
    Step,
    /// The instruction set the pc itself (branches) or retired lanes.
    Moved,
    /// The warp blocks (barrier, parked WAIT) with pc already advanced or kept.
    Block,
}

/// Everything an instruction may touch besides the warp itself.
pub struct ExecEnv<'a> {
    pub mem: &'a MemoryMap,
    pub launch: &'a LaunchState,
    pub cta: &'a CtaCtx,
    pub lmem: &'a mut [u8],
    pub rtu: &'a mut RtuUnit,
    pub core_id: u32,
    pub warp_id: u32,
    pub num_warps: u32,
    pub num_cores: u32,
    pub nt: usize,
}

fn lane_fault(f: Fault, lane: usize) -> Fault {
    Fault { lane: Some(lane as u32), ..f }
}

fn mem_fault(m: MemFault, lane: usize) -> Fault {
    lane_fault(Fault::memory(m), lane)
}

fn rtu_fault(e: RtuError) -> Fault {
    Fault { lane: Some(e.lane), ..e.fault }
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
    let (d, a, b) = (i.dst as usize, i.a as usize, i.b as usize);
    lanes!(mask, nt, |l| {
        let v = op(pair(regs, a, nt, l), pair(regs, b, nt, l));
        set_pair(regs, d, nt, l, v);
    });
}

/// Integer comparisons for one word width.
macro_rules! int_cond {
    ($name:ident, $u:ty, $s:ty) => {
        #[inline(always)]
        fn $name(c: IntCond, a: $u, b: $u) -> bool {
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

#[inline]
fn fd(x: u64) -> f64 {
    f64::from_bits(x)
}

/// Float comparisons for one width.
macro_rules! float_cond {
    ($name:ident, $f:ty) => {
        fn $name(c: FloatCond, a: $f, b: $f) -> bool {
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

fn msb_u(x: u32) -> u32 {
    if x == 0 {
        u32::MAX
    } else {
        31 - x.leading_zeros()
    }
}

fn illegal(i: &Instr, what: &str) -> Fault {
    Fault::new(FaultKind::IllegalInstruction, format!("{what} in `{}`", crate::abi::isa::disasm(i)))
}

/// True for the CSRs whose value differs between the lanes of a warp.
fn csr_per_lane(id: u32) -> bool {
    matches!(id, csr::LANE_ID | csr::CTA_THREAD_ID_X | csr::CTA_THREAD_ID_Y | csr::CTA_THREAD_ID_Z)
}

/// Reads the CSR `id` for `lane`.
fn csr_value(id: u32, lane: usize, w: &Warp, env: &ExecEnv) -> u32 {
    let ls = env.launch;
    let tid = |k: usize| super::thread_index(w.rank, lane, env.nt, ls.block_dim)[k];
    match id {
        csr::LANE_ID => lane as u32,
        csr::WARP_ID => env.warp_id,
        csr::CORE_ID => env.core_id,
        csr::NUM_THREADS => env.nt as u32,
        csr::NUM_WARPS => env.num_warps,
        csr::NUM_CORES => env.num_cores,
        csr::CTA_ID => w.cta_slot,
        csr::CTA_RANK => w.rank,
        csr::CTA_SIZE => env.cta.num_warps,
        csr::CTA_THREAD_ID_X => tid(0),
        csr::CTA_THREAD_ID_Y => tid(1),
        csr::CTA_THREAD_ID_Z => tid(2),
        csr::CTA_BLOCK_ID_X => env.cta.block_idx[0],
        csr::CTA_BLOCK_ID_Y => env.cta.block_idx[1],
        csr::CTA_BLOCK_ID_Z => env.cta.block_idx[2],
        csr::CTA_BLOCK_DIM_X => ls.block_dim[0],
        csr::CTA_BLOCK_DIM_Y => ls.block_dim[1],
        csr::CTA_BLOCK_DIM_Z => ls.block_dim[2],
        csr::CTA_GRID_DIM_X => ls.grid_dim[0],
        csr::CTA_GRID_DIM_Y => ls.grid_dim[1],
        csr::CTA_GRID_DIM_Z => ls.grid_dim[2],
        csr::CTA_LMEM_ADDR => env.cta.lmem_base,
        csr::CTA_CLUSTER_SIZE => ls.cluster_size(),
        csr::CTA_ENTRY => ls.entry as u32,
        csr::PARAM_LO => ls.param as u32,
        csr::PARAM_HI => (ls.param >> 32) as u32,
        _ => 0,
    }
}

#[inline(always)]
fn load_bytes(buf: &[u8], off: usize, size: MemSize, out: &mut [u32; 4]) {
    match size {
        MemSize::U8 => out[0] = buf[off] as u32,
        MemSize::S8 => out[0] = buf[off] as i8 as i32 as u32,
        MemSize::U16 => out[0] = rd_u16(buf, off) as u32,
        MemSize::S16 => out[0] = rd_u16(buf, off) as i16 as i32 as u32,
        // One word: a fixed-size read (the general arm's run-time length is a `memcpy` call).
        MemSize::B32 => out[0] = u32::from_le_bytes(buf[off..off + 4].try_into().expect("a word")),
        _ => {
            let words = &buf[off..off + size.bytes()];
            for (o, w) in out.iter_mut().zip(words.chunks_exact(4)) {
                *o = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            }
        }
    }
}

#[inline(always)]
fn store_bytes(buf: &mut [u8], off: usize, size: MemSize, v: &[u32; 4]) {
    match size {
        MemSize::U8 | MemSize::S8 => buf[off] = v[0] as u8,
        MemSize::U16 | MemSize::S16 => buf[off..off + 2].copy_from_slice(&(v[0] as u16).to_le_bytes()),
        MemSize::B32 => buf[off..off + 4].copy_from_slice(&v[0].to_le_bytes()),
        _ => {
            let words = &mut buf[off..off + size.bytes()];
            for (w, x) in words.chunks_exact_mut(4).zip(v) {
                w.copy_from_slice(&x.to_le_bytes());
            }
        }
    }
}

/// Writes a global load's value into lane `l`'s destination registers, or (a uniform load,
/// `per_lane` false) into every active lane's.
#[inline(always)]
fn put_loaded(
    regs: &mut [u32],
    nt: usize,
    mask: u32,
    per_lane: bool,
    vv: usize,
    l: usize,
    size: MemSize,
    v: &[u32; 4],
) {
    if per_lane {
        for k in 0..size.regs() {
            regs[(vv + k) * nt + l] = v[k];
        }
        return;
    }
    for k in 0..size.regs() {
        let dst = &mut regs[(vv + k) * nt..][..nt];
        if mask == crate::cta_dispatch::full_mask(nt as u32) {
            dst.fill(v[k]);
        } else {
            lanes!(mask, nt, |m| {
                dst[m] = v[k];
            });
        }
    }
}

/// A global load or store no single region holds: one that crosses a page between two
/// bindings of a sparse resource (read or written piece by piece), one through a null buffer
/// descriptor when robustness2's null descriptors are on (reads zero, the write is dropped),
/// or one that faults.
#[cold]
#[inline(never)]
fn global_access_slow(mem: &MemoryMap, addr: u64, size: MemSize, load: bool, v: &mut [u32; 4]) -> Result<(), MemFault> {
    let n = size.bytes();
    if null_window(mem, addr, n as u64) {
        *v = [0; 4];
        return Ok(());
    }
    let mut b = [0u8; 16];
    if load {
        mem.read(addr, &mut b[..n])?;
        load_bytes(&b, 0, size, v);
    } else {
        store_bytes(&mut b, 0, size, v);
        mem.write(addr, &b[..n])?;
    }
    Ok(())
}

/// True when robustness2's null descriptors are on and `[addr, addr+n)` lies in the null
/// window below every mapping, where a null buffer descriptor's accesses land.
#[cold]
fn null_window(mem: &MemoryMap, addr: u64, n: u64) -> bool {
    mem.null_descriptor() && addr.checked_add(n).is_some_and(|end| end <= crate::mem::VA_BASE)
}

/// The atomics, for one word width: a plain read-modify-write (LMEM: the core executes its
/// warps one at a time, so a plain update is atomic there) and a device atomic on global
/// memory (real host atomics, so cores on other host threads see each update). Both return
/// the old value; `b` is the operand, `c` the compare-exchange comparator.
macro_rules! atomics {
    ($rmw:ident, $global:ident, $u:ty, $s:ty, $f:ty, $atomic_s:ident, $map:ident) => {
        fn $rmw(op: AtomicOp, old: $u, b: $u, c: $u) -> $u {
            match op {
                AtomicOp::Add => old.wrapping_add(b),
                AtomicOp::Smin => (old as $s).min(b as $s) as $u,
                AtomicOp::Umin => old.min(b),
                AtomicOp::Smax => (old as $s).max(b as $s) as $u,
                AtomicOp::Umax => old.max(b),
                AtomicOp::And => old & b,
                AtomicOp::Or => old | b,
                AtomicOp::Xor => old ^ b,
                AtomicOp::Xchg | AtomicOp::Store => b,
                AtomicOp::CmpXchg => {
                    if old == c {
                        b
                    } else {
                        old
                    }
                }
                AtomicOp::Fadd => (<$f>::from_bits(old) + <$f>::from_bits(b)).to_bits(),
                AtomicOp::Load => old,
            }
        }

        fn $global(mem: &MemoryMap, addr: u64, op: AtomicOp, b: $u, c: $u) -> Result<$u, MemFault> {
            let a = match mem.$map(addr) {
                Ok(a) => a,
                // A null buffer descriptor's atomic is dropped and reads zero.
                Err(_) if null_window(mem, addr, std::mem::size_of::<$u>() as u64) => return Ok(0),
                Err(f) => return Err(f),
            };
            let o = Ordering::AcqRel;
            Ok(match op {
                AtomicOp::Add => a.fetch_add(b, o),
                AtomicOp::And => a.fetch_and(b, o),
                AtomicOp::Or => a.fetch_or(b, o),
                AtomicOp::Xor => a.fetch_xor(b, o),
                AtomicOp::Umin => a.fetch_min(b, o),
                AtomicOp::Umax => a.fetch_max(b, o),
                AtomicOp::Smin | AtomicOp::Smax => {
                    // SAFETY: the same aligned, live word viewed as signed; the signed and
                    // unsigned atomics have the same layout.
                    let s = unsafe { $atomic_s::from_ptr(a.as_ptr() as *mut $s) };
                    (if op == AtomicOp::Smin { s.fetch_min(b as $s, o) } else { s.fetch_max(b as $s, o) }) as $u
                }
                AtomicOp::Xchg => a.swap(b, o),
                AtomicOp::Store => {
                    a.store(b, Ordering::Release);
                    0
                }
                AtomicOp::Load => a.load(Ordering::Acquire),
                AtomicOp::CmpXchg => match a.compare_exchange(c, b, o, Ordering::Acquire) {
                    Ok(v) | Err(v) => v,
                },
                AtomicOp::Fadd => match a.fetch_update(o, Ordering::Acquire, |x| Some($rmw(AtomicOp::Fadd, x, b, 0))) {
                    Ok(v) | Err(v) => v,
                },
            })
        }
    };
}

atomics!(rmw32, global_atomic32, u32, i32, f32, AtomicI32, atomic_u32);
atomics!(rmw64, global_atomic64, u64, i64, f64, AtomicI64, atomic_u64);

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

/// One LDL/STL/LDP/STP: which space, which way, the offset register `a`, the value
/// registers from `v`, the immediate offset.
struct LocalAccess {
    size: MemSize,
    private: bool,
    load: bool,
    a: u16,
    v: usize,
    imm: u32,
}

/// LDL/STL/LDP/STP for the lanes in `mask`. `buf` is the warp's private memory (`pb` bytes
/// per lane) or the core's LMEM.
///
/// Word accesses whose active lanes are all in bounds (checked first) take one straight lane
/// loop without per-lane fault checks or size dispatch ([`local_words`]); anything else goes
/// lane by lane ([`local_lanes`]), which faults at the first lane out of bounds.
#[inline(always)]
fn local_access(
    regs: &mut [u32],
    nt: usize,
    mask: u32,
    buf: &mut [u8],
    pb: usize,
    acc: &LocalAccess,
) -> Result<(), Fault> {
    let words = match acc.size {
        MemSize::B32 => 1,
        MemSize::B64 => 2,
        MemSize::B128 => 4,
        _ => 0,
    };
    if words != 0 {
        let (stride, limit) = if acc.private { (pb, pb) } else { (0, buf.len()) };
        let offs = if nt == MAX_THREADS {
            row_full(regs, acc.a)
        } else {
            let mut o = [0u32; MAX_THREADS];
            o[..nt].copy_from_slice(row(regs, acc.a, nt));
            o
        };
        if local_in_bounds(&offs, nt, mask, acc.imm, acc.size.bytes(), limit) {
            match words {
                1 => local_words::<1>(regs, nt, mask, buf, stride, &offs, acc),
                2 => local_words::<2>(regs, nt, mask, buf, stride, &offs, acc),
                _ => local_words::<4>(regs, nt, mask, buf, stride, &offs, acc),
            }
            return Ok(());
        }
    }
    local_lanes(regs, nt, mask, buf, pb, acc)
}

/// True when every active lane's offset (`offs[l] + imm`, as [`local_lanes`] computes it)
/// leaves room for `bytes` below `limit`.
#[inline(always)]
fn local_in_bounds(offs: &[u32; MAX_THREADS], nt: usize, mask: u32, imm: u32, bytes: usize, limit: usize) -> bool {
    let Some(last) = limit.checked_sub(bytes) else { return false };
    let mut bad = 0u32;
    if full_warp(nt, mask) {
        // Branch-free over the whole row (vectorises).
        for &o in offs {
            bad |= (o.wrapping_add(imm) as usize > last) as u32;
        }
    } else {
        lanes!(mask, nt, |l| {
            bad |= (offs[l].wrapping_add(imm) as usize > last) as u32;
        });
    }
    bad == 0
}

/// [`local_lanes`] for `W`-word accesses whose lanes are all in bounds
/// ([`local_in_bounds`]): lane `l` reads or writes `buf[l * stride + offs[l] + imm..]`
/// (`offs` is register `a`'s row).
#[inline(always)]
fn local_words<const W: usize>(
    regs: &mut [u32],
    nt: usize,
    mask: u32,
    buf: &mut [u8],
    stride: usize,
    offs: &[u32; MAX_THREADS],
    acc: &LocalAccess,
) {
    let v = acc.v;
    if W == 1 && full_warp(nt, mask) {
        // One register row of the widest warp: lanes in a straight loop over a fixed-size row.
        if acc.load {
            let mut out = [0u32; MAX_THREADS];
            for (l, o) in out.iter_mut().enumerate() {
                let at = l * stride + offs[l].wrapping_add(acc.imm) as usize;
                *o = u32::from_le_bytes(buf[at..at + 4].try_into().expect("a word"));
            }
            *row_full_mut(regs, v as u16) = out;
        } else {
            let vals = row_full(regs, v as u16);
            for (l, x) in vals.iter().enumerate() {
                let at = l * stride + offs[l].wrapping_add(acc.imm) as usize;
                buf[at..at + 4].copy_from_slice(&x.to_le_bytes());
            }
        }
        return;
    }
    lanes!(mask, nt, |l| {
        let at = l * stride + offs[l].wrapping_add(acc.imm) as usize;
        let bytes = &mut buf[at..at + 4 * W];
        for k in 0..W {
            let word: &mut [u8; 4] = (&mut bytes[4 * k..4 * k + 4]).try_into().expect("a word");
            if acc.load {
                regs[(v + k) * nt + l] = u32::from_le_bytes(*word);
            } else {
                *word = regs[(v + k) * nt + l].to_le_bytes();
            }
        }
    });
}

/// LDL/STL/LDP/STP lane by lane, in lane order: a lane out of bounds faults (the lanes before
/// it have done their access).
#[inline(never)]
fn local_lanes(
    regs: &mut [u32],
    nt: usize,
    mask: u32,
    buf: &mut [u8],
    pb: usize,
    acc: &LocalAccess,
) -> Result<(), Fault> {
    let (size, private, load) = (acc.size, acc.private, acc.load);
    let bytes = size.bytes();
    let (aa, vv) = (acc.a as usize * nt, acc.v);
    let mut todo = mask;
    while todo != 0 {
        let l = todo.trailing_zeros() as usize;
        todo &= todo - 1;
        let off = regs[aa + l].wrapping_add(acc.imm) as usize;
        let (base, limit) = if private { (l * pb, pb) } else { (0, buf.len()) };
        if off.checked_add(bytes).is_none_or(|end| end > limit) {
            let space = if private { "private memory" } else { "LMEM" };
            return Err(lane_fault(
                Fault::new(
                    FaultKind::Memory(MemFault { addr: off as u64, size: bytes as u64, kind: MemFaultKind::Unmapped }),
                    format!("{bytes}-byte {space} access at offset {off:#x} outside {limit} bytes"),
                ),
                l,
            ));
        }
        let mut v = [0u32; 4];
        if load {
            load_bytes(buf, base + off, size, &mut v);
            for k in 0..size.regs() {
                regs[(vv + k) * nt + l] = v[k];
            }
        } else {
            for k in 0..size.regs() {
                v[k] = regs[(vv + k) * nt + l];
            }
            store_bytes(buf, base + off, size, &v);
        }
    }
    Ok(())
}

/// Reads the image descriptor at `addr`, checking its format.
fn image_desc(mem: &MemoryMap, addr: u64, i: &Instr) -> Result<(ImageDesc, &'static format::Format), Fault> {
    let raw: [u8; desc::BYTES] = mem.read_array(addr)?;
    let d = ImageDesc::parse(&raw);
    let fmt = match format::lookup(d.format) {
        Some(f) => f,
        // A null descriptor (robustness2): a view of no texels, so every access misses it
        // (loads read zero, stores and atomics are dropped); R32_UINT lets atomics through.
        None if d == ImageDesc::default() && mem.null_descriptor() => {
            format::lookup(format::R32_UINT).expect("R32_UINT is a storage format")
        }
        None => {
            return Err(illegal(
                i,
                &format!("image descriptor at {addr:#x} has format {} which is not a storage format", d.format),
            ))
        }
    };
    Ok((d, fmt))
}

/// Executes one instruction for the active lanes of `w`'s top entry.
///
/// The ops a ray-query kernel runs most (moves, the common integer and float ALU ops,
/// compares, BRA) are handled here, inlined into the core's issue loop; the rest go to
/// [`execute_rest`], out of line, so the common instruction pays neither a call nor the rare
/// handlers' stack frame.
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

/// [`execute`] for every op it does not handle inline.
#[inline(never)]
fn execute_rest(i: &Instr, w: &mut Warp, mask: u32, env: &mut ExecEnv) -> Result<Next, Fault> {
    let nt = env.nt;
    let regs = &mut w.regs[..];
    let (d, a, b, c) = (i.dst, i.a, i.b, i.c);
    match i.op {
        Op::Mov
        | Op::Movi
        | Op::Sel
        | Op::Iadd
        | Op::Isub
        | Op::Imul
        | Op::And
        | Op::Or
        | Op::Xor
        | Op::Shl
        | Op::Shr
        | Op::Sar
        | Op::Icmp
        | Op::Fadd
        | Op::Fsub
        | Op::Fmul
        | Op::Ffma
        | Op::Fmin
        | Op::Fmax
        | Op::Fneg
        | Op::Fabs
        | Op::U2f
        | Op::I2f
        | Op::F2i
        | Op::Bra => unreachable!("handled inline by `execute`"),
        Op::Nop | Op::Fence => {}
        Op::Exit => {
            w.exit_lanes(mask);
            return Ok(Next::Moved);
        }
        Op::Jmp => {
            w.stack.last_mut().expect("executing warp has a stack").pc = i.imm;
            return Ok(Next::Moved);
        }
        Op::Bar => {
            w.state = WarpState::Barrier;
            w.stack.last_mut().expect("executing warp has a stack").pc += 1;
            return Ok(Next::Block);
        }
        Op::Trap => {
            let what = match i.imm {
                x if x == TrapCode::Unreachable as u32 => "OpUnreachable reached",
                x if x == TrapCode::BadQuery as u32 => "ray-query slot out of range",
                x if x == TrapCode::Kill as u32 => "invocation killed",
                _ => "trap",
            };
            let lane = mask.trailing_zeros() as usize;
            return Err(lane_fault(Fault::new(FaultKind::Trap { code: i.imm }, what), lane));
        }

        Op::Csr => {
            let dd = d as usize * nt;
            if csr_per_lane(i.imm) {
                lanes!(mask, nt, |l| {
                    let v = csr_value(i.imm, l, w, env);
                    w.regs[dd + l] = v;
                });
            } else {
                // The same value in every lane: read once, broadcast.
                let v = csr_value(i.imm, 0, w, env);
                lanes!(mask, nt, |l| {
                    w.regs[dd + l] = v;
                });
            }
        }

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
        Op::Fsfu => {
            let func = SfuFunc::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad SFU function"))?;
            if b == REG_NONE {
                unary(regs, nt, mask, d, a, |x| u(sfu(func, f(x), 0.0)))
            } else {
                binary(regs, nt, mask, d, a, b, |x, y| u(sfu(func, f(x), f(y))))
            }
        }
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
        Op::Red => {
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
        }

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

        Op::Ldg | Op::Stg => {
            let size = MemSize::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad memory size"))?;
            let bytes = size.bytes();
            let off = i.imm as i32 as i64 as u64;
            let (aa, vv) = (a as usize, if i.op == Op::Ldg { d as usize } else { b as usize });
            // A load every active lane makes from one address (push constants, kernel
            // arguments, uniforms) reads memory once and broadcasts: the same bytes as 32
            // reads, and a fault is still the first active lane's.
            let mut uniform = mask;
            if i.op == Op::Ldg && mask != 0 {
                let (base_hi, base_lo) = (row(regs, a + 1, nt), row(regs, a, nt));
                let first = mask.trailing_zeros() as usize;
                let (h0, l0) = (base_hi[first], base_lo[first]);
                let same = if mask == crate::cta_dispatch::full_mask(nt as u32) {
                    // A branch-free OR over the rows (vectorises).
                    base_hi.iter().zip(base_lo).fold(0, |acc, (&h, &l)| acc | (h ^ h0) | (l ^ l0)) == 0
                } else {
                    let mut diff = 0;
                    lanes!(mask, nt, |l| {
                        diff |= (base_hi[l] ^ h0) | (base_lo[l] ^ l0);
                    });
                    diff == 0
                };
                uniform = if same { 1 << first } else { 0 };
            }
            let lanes = if uniform != 0 && i.op == Op::Ldg { uniform } else { mask };
            let mut hot: Option<&Region> = None;
            let mut todo = lanes;
            while todo != 0 {
                let l = todo.trailing_zeros() as usize;
                todo &= todo - 1;
                let addr = pair(regs, aa, nt, l).wrapping_add(off);
                // Lanes mostly touch one buffer: look the region up again only when a lane
                // leaves the last one.
                let r = match hot {
                    Some(r) if r.contains(addr, bytes as u64) => r,
                    _ => match env.mem.region(addr, bytes as u64) {
                        Some(r) => {
                            hot = Some(r);
                            r
                        }
                        None => {
                            let mut v = [0u32; 4];
                            if i.op == Op::Stg {
                                for k in 0..size.regs() {
                                    v[k] = regs[(vv + k) * nt + l];
                                }
                            }
                            global_access_slow(env.mem, addr, size, i.op == Op::Ldg, &mut v)
                                .map_err(|m| mem_fault(m, l))?;
                            if i.op == Op::Ldg {
                                put_loaded(regs, nt, mask, lanes == mask, vv, l, size, &v);
                            }
                            continue;
                        }
                    },
                };
                // SAFETY: `[addr, addr+bytes)` lies inside the region's live backing (checked
                // by `contains`/`region`), so the pointer and the `bytes`-long slice stay in
                // bounds; every byte value is a valid `u8`. Lanes (and other cores) touching
                // the same bytes without atomics is a race the Vulkan program must not have.
                let p = unsafe { r.host_ptr().add((addr - r.base) as usize) };
                let mut v = [0u32; 4];
                if i.op == Op::Ldg {
                    load_bytes(unsafe { std::slice::from_raw_parts(p, bytes) }, 0, size, &mut v);
                    put_loaded(regs, nt, mask, lanes == mask, vv, l, size, &v);
                } else {
                    for k in 0..size.regs() {
                        v[k] = regs[(vv + k) * nt + l];
                    }
                    // SAFETY: as above, for the store.
                    store_bytes(unsafe { std::slice::from_raw_parts_mut(p, bytes) }, 0, size, &v);
                }
            }
        }
        Op::Ldl | Op::Stl | Op::Ldp | Op::Stp => {
            let size = MemSize::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad memory size"))?;
            let pb = w.private_bytes;
            let acc = LocalAccess {
                size,
                private: matches!(i.op, Op::Ldp | Op::Stp),
                load: matches!(i.op, Op::Ldl | Op::Ldp),
                a,
                v: if matches!(i.op, Op::Ldl | Op::Ldp) { d as usize } else { b as usize },
                imm: i.imm,
            };
            let buf = if acc.private { &mut w.private[..] } else { &mut env.lmem[..] };
            local_access(regs, nt, mask, buf, pb, &acc)?;
        }
        Op::Atomg | Op::Atoml => {
            let op = AtomicOp::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad atomic op"))?;
            let wide = i.imm & 1 != 0;
            let get = |regs: &[u32], r: u16, l: usize| -> u64 {
                if r == REG_NONE {
                    0
                } else if wide {
                    pair(regs, r as usize, nt, l)
                } else {
                    regs[r as usize * nt + l] as u64
                }
            };
            let mut todo = mask;
            while todo != 0 {
                let l = todo.trailing_zeros() as usize;
                todo &= todo - 1;
                let (bv, cv) = (get(regs, b, l), get(regs, c, l));
                let old = if i.op == Op::Atomg {
                    let addr = pair(regs, a as usize, nt, l);
                    if wide {
                        global_atomic64(env.mem, addr, op, bv, cv).map_err(|m| mem_fault(m, l))?
                    } else {
                        global_atomic32(env.mem, addr, op, bv as u32, cv as u32).map_err(|m| mem_fault(m, l))? as u64
                    }
                } else {
                    let off = regs[a as usize * nt + l] as usize;
                    let n = if wide { 8 } else { 4 };
                    if !off.is_multiple_of(n) || off + n > env.lmem.len() {
                        return Err(lane_fault(
                            Fault::new(
                                FaultKind::Memory(MemFault {
                                    addr: off as u64,
                                    size: n as u64,
                                    kind: MemFaultKind::Unmapped,
                                }),
                                format!(
                                    "{n}-byte LMEM atomic at offset {off:#x} misaligned or outside {} bytes",
                                    env.lmem.len()
                                ),
                            ),
                            l,
                        ));
                    }
                    let slot = &mut env.lmem[off..off + n];
                    if wide {
                        let old = u64::from_le_bytes(slot.try_into().expect("8 bytes"));
                        slot.copy_from_slice(&rmw64(op, old, bv, cv).to_le_bytes());
                        old
                    } else {
                        let old = u32::from_le_bytes(slot.try_into().expect("4 bytes"));
                        slot.copy_from_slice(&rmw32(op, old, bv as u32, cv as u32).to_le_bytes());
                        old as u64
                    }
                };
                if d != REG_NONE {
                    if wide {
                        set_pair(regs, d as usize, nt, l, old);
                    } else {
                        regs[d as usize * nt + l] = old as u32;
                    }
                }
            }
        }

        Op::Ild | Op::Ist | Op::Iatom => {
            let mut cached: Option<(u64, ImageDesc, &'static format::Format)> = None;
            let mut todo = mask;
            while todo != 0 {
                let l = todo.trailing_zeros() as usize;
                todo &= todo - 1;
                let daddr = pair(regs, a as usize, nt, l);
                let (desc, fmt) = match cached {
                    Some((addr, dsc, fm)) if addr == daddr => (dsc, fm),
                    _ => {
                        let (dsc, fm) = image_desc(env.mem, daddr, i).map_err(|e| lane_fault(e, l))?;
                        cached = Some((daddr, dsc, fm));
                        (dsc, fm)
                    }
                };
                let coord = |k: usize| regs[(b as usize + k) * nt + l] as i32;
                let off = desc.texel_offset(coord(0), coord(1), coord(2));
                let tb = fmt.texel_bytes() as usize;
                match i.op {
                    Op::Ild => {
                        let v = match off {
                            Some(o) => {
                                let mut t = [0u8; 16];
                                env.mem.read(desc.addr + o, &mut t[..tb]).map_err(|m| mem_fault(m, l))?;
                                format::decode_texel(fmt, &t[..tb])
                            }
                            // Out-of-view reads return zero, like robust image access.
                            None => [0; 4],
                        };
                        for k in 0..4 {
                            regs[(d as usize + k) * nt + l] = v[k];
                        }
                    }
                    Op::Ist => {
                        if let Some(o) = off {
                            let v = [0, 1, 2, 3].map(|k| regs[(c as usize + k) * nt + l]);
                            let mut t = [0u8; 16];
                            format::encode_texel(fmt, v, &mut t[..tb]);
                            env.mem.write(desc.addr + o, &t[..tb]).map_err(|m| mem_fault(m, l))?;
                        }
                    }
                    _ => {
                        if tb != 4 || !fmt.is_integer() {
                            return Err(lane_fault(illegal(i, "image atomics need an R32 integer format"), l));
                        }
                        let op = AtomicOp::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad atomic op"))?;
                        let old = match off {
                            Some(o) => {
                                let cv = if i.d == REG_NONE { 0 } else { regs[i.d as usize * nt + l] };
                                global_atomic32(env.mem, desc.addr + o, op, regs[c as usize * nt + l], cv)
                                    .map_err(|m| mem_fault(m, l))?
                            }
                            None => 0,
                        };
                        if d != REG_NONE {
                            regs[d as usize * nt + l] = old;
                        }
                    }
                }
            }
        }

        Op::Trace => {
            let mut q = [0u32; MAX_THREADS];
            lanes!(mask, nt, |l| {
                q[l] = regs[a as usize * nt + l];
            });
            // Each lane's ray is read from its operand registers as the RTU arms the lane.
            const N: usize = rtu_abi::ray::REGS as usize;
            let warp = env.warp_id as usize;
            if nt == MAX_THREADS {
                // Full-width rows: one lane bound check per ray instead of one per register.
                const NO_ROW: &[u32; MAX_THREADS] = &[0; MAX_THREADS];
                let mut rows = [NO_ROW; N];
                for (k, r) in rows.iter_mut().enumerate() {
                    *r = regs[(b as usize + k) * MAX_THREADS..][..MAX_THREADS].try_into().expect("a full row");
                }
                let ray = |l: usize| TraceRay::from_regs(&rows.map(|r| r[l]));
                env.rtu.trace_with(env.mem, warp, mask, &q, ray).map_err(rtu_fault)?;
            } else {
                let rows = &regs[b as usize * nt..(b as usize + N) * nt];
                let ray = |l: usize| {
                    let mut r = [0u32; N];
                    for (k, x) in r.iter_mut().enumerate() {
                        *x = rows[k * nt + l];
                    }
                    TraceRay::from_regs(&r)
                };
                env.rtu.trace_with(env.mem, warp, mask, &q, ray).map_err(rtu_fault)?;
            }
            if d != REG_NONE {
                lanes!(mask, nt, |l| {
                    regs[d as usize * nt + l] = q[l];
                });
            }
        }
        Op::Wait => {
            let mut q = [0u32; MAX_THREADS];
            lanes!(mask, nt, |l| {
                q[l] = regs[a as usize * nt + l];
            });
            let mut status = [0u32; MAX_THREADS];
            if !env.rtu.wait(env.warp_id as usize, mask, &q, &mut status).map_err(rtu_fault)? {
                w.state = WarpState::Parked;
                return Ok(Next::Block);
            }
            lanes!(mask, nt, |l| {
                regs[d as usize * nt + l] = status[l];
            });
        }
        Op::Cont => {
            let mut q = [0u32; MAX_THREADS];
            let mut act = [0u32; MAX_THREADS];
            let mut t = [0f32; MAX_THREADS];
            lanes!(mask, nt, |l| {
                q[l] = regs[a as usize * nt + l];
                act[l] = regs[b as usize * nt + l];
                t[l] = f(regs[c as usize * nt + l]);
            });
            env.rtu.cont(env.mem, env.warp_id as usize, mask, &q, &act, &t).map_err(rtu_fault)?;
        }
        Op::Getw | Op::Getwf => {
            let count = i.modifier.max(1) as u32;
            let dd = d as usize;
            let q = if nt == MAX_THREADS {
                row_full(regs, a)
            } else {
                let mut q = [0u32; MAX_THREADS];
                q[..nt].copy_from_slice(row(regs, a, nt));
                q
            };
            env.rtu
                .read_lanes(env.warp_id as usize, mask, &q, i.imm, count, |k, l, v| regs[(dd + k) * nt + l] = v)
                .map_err(rtu_fault)?;
        }
    }
    Ok(Next::Step)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
        }

        /// Mostly random bits, with the float and integer values that exercise edge cases.
        fn word(&mut self) -> u32 {
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

    const NT: usize = MAX_THREADS;
    const REGS: usize = 6;

    fn random_regs(rng: &mut Rng) -> Vec<u32> {
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

    /// The in-bounds word path of LDL/STL/LDP/STP against the lane-by-lane path, for every
    /// word size, both spaces, both directions, full and partial masks, and offsets that
    /// are not multiples of the access size (the registers may hold any offset).
    #[test]
    fn local_words_match_lanes() {
        let mut rng = Rng(0x0bad_cafe_f00d_beef);
        for round in 0..200 {
            let size = [MemSize::B32, MemSize::B64, MemSize::B128][round % 3];
            let (private, load) = (round / 3 % 2 == 0, round / 6 % 2 == 0);
            let pb = 20 + 4 * (rng.next() as usize % 4);
            let len = if private { pb * NT } else { 256 };
            let limit = if private { pb } else { len };
            let mask = if round % 7 < 3 { u32::MAX } else { rng.next() | 1 };
            let imm = rng.next() % 4;
            let mut regs = random_regs(&mut rng);
            for l in 0..NT {
                let room = (limit - size.bytes() - imm as usize) as u32;
                regs[l] = rng.next() % (room + 1);
            }
            let buf: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let acc = LocalAccess { size, private, load, a: 0, v: 1 + round % 2, imm };
            let (mut r1, mut b1) = (regs.clone(), buf.clone());
            let (mut r2, mut b2) = (regs.clone(), buf.clone());
            let offs: [u32; NT] = std::array::from_fn(|l| regs[l]);
            assert!(local_in_bounds(&offs, NT, mask, imm, size.bytes(), limit));
            local_access(&mut r1, NT, mask, &mut b1, pb, &acc).unwrap();
            local_lanes(&mut r2, NT, mask, &mut b2, pb, &acc).unwrap();
            assert_eq!((r1, b1), (r2, b2), "round {round}");
            // One lane out of bounds: the fast path is not taken and the fault is the
            // lane-by-lane path's.
            let bad = 31 - (rng.next() % 32) as usize;
            regs[bad] = limit as u32;
            let offs: [u32; NT] = std::array::from_fn(|l| regs[l]);
            let (mut r1, mut b1) = (regs.clone(), buf.clone());
            let (mut r2, mut b2) = (regs.clone(), buf.clone());
            assert_eq!(local_in_bounds(&offs, NT, mask, imm, size.bytes(), limit), mask >> bad & 1 == 0);
            let e1 = local_access(&mut r1, NT, mask, &mut b1, pb, &acc).err().map(|f| f.to_string());
            let e2 = local_lanes(&mut r2, NT, mask, &mut b2, pb, &acc).err().map(|f| f.to_string());
            assert_eq!(e1, e2);
            assert_eq!((r1, b1), (r2, b2), "round {round}");
        }
    }
}
