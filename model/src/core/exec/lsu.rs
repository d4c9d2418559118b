//! The LSU: global, LMEM and private loads and stores, and the global and LMEM atomics.

use super::{full_warp, illegal, lane_fault, mem_fault, not_executed, pair, row, row_full, row_full_mut, set_pair};
use super::{ExecEnv, Warp};
use crate::abi::isa::{AtomicOp, Instr, MemSize, Op, REG_NONE};
use crate::abi::{rd_u16, MAX_THREADS};
use crate::fault::{Fault, FaultKind};
use crate::mem::{MemFault, MemFaultKind, MemoryMap, Region};
use std::sync::atomic::{AtomicI32, AtomicI64, Ordering};

/// Executes memory op `i` for the lanes in `mask`.
pub(super) fn execute(i: &Instr, w: &mut Warp, mask: u32, env: &mut ExecEnv) -> Result<(), Fault> {
    let nt = env.nt;
    let regs = &mut w.regs[..];
    let (d, a, b) = (i.dst, i.a, i.b);
    match i.op {
        Op::Ldg | Op::Stg => global(i, regs, nt, mask, env.mem, &mut env.hot),
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
            if acc.private {
                // The rdna2 shader walk's stack traffic is counted apart (`IsectCounters`).
                env.units.isect.counters.private_access(i.imm, !acc.load, mask.count_ones(), size.bytes());
            }
            Ok(())
        }
        Op::Atomg | Op::Atoml => atomic(i, regs, nt, mask, env),
        _ => Err(not_executed(i)),
    }
}

/// `LDG`/`STG`: lane by lane through the memory map, a uniform load once for the warp.
/// `hot` holds the regions the warp's last global accesses used, most recent first.
fn global<'m>(
    i: &Instr,
    regs: &mut [u32],
    nt: usize,
    mask: u32,
    mem: &'m MemoryMap,
    hot: &mut [Option<&'m Region>; 2],
) -> Result<(), Fault> {
    let (d, a, b) = (i.dst, i.a, i.b);
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
        let same = if let (Ok(hi), Ok(lo)) =
            (<&[u32; MAX_THREADS]>::try_from(base_hi), <&[u32; MAX_THREADS]>::try_from(base_lo))
        {
            // The widest warp's rows at a fixed size (one unrolled vector loop); under a
            // partial mask, rows that differ are checked again on the active lanes only.
            let mut diff = 0;
            for l in 0..MAX_THREADS {
                diff |= (hi[l] ^ h0) | (lo[l] ^ l0);
            }
            diff == 0 || (mask != u32::MAX && masked_same(base_hi, base_lo, mask, nt, h0, l0))
        } else if mask == crate::cta_dispatch::full_mask(nt as u32) {
            // A branch-free OR over the rows (vectorises).
            base_hi.iter().zip(base_lo).fold(0, |acc, (&h, &l)| acc | (h ^ h0) | (l ^ l0)) == 0
        } else {
            masked_same(base_hi, base_lo, mask, nt, h0, l0)
        };
        uniform = if same { 1 << first } else { 0 };
    }
    let lanes = if uniform != 0 && i.op == Op::Ldg { uniform } else { mask };
    let load = i.op == Op::Ldg;
    if lanes & (lanes - 1) == 0 && lanes != 0 {
        // One access (a uniform load, or a single lane): its region is most often a hot one.
        let l = lanes.trailing_zeros() as usize;
        let addr = pair(regs, aa, nt, l).wrapping_add(off);
        if let Some(r) = hot_region(mem, hot, addr, bytes as u64) {
            let mut v = [0u32; 4];
            spread_access(regs, nt, r, addr, l, vv, size, load, &mut v);
            if load {
                put_loaded(regs, nt, mask, lanes == mask, vv, l, size, &v);
            }
            return Ok(());
        }
    } else if let Some(r) = lanes_region(regs, aa, nt, lanes, off, bytes as u64, mem, hot) {
        match size {
            MemSize::B32 => spread_words::<1>(regs, nt, lanes, r, aa, off, vv, load),
            MemSize::B64 => spread_words::<2>(regs, nt, lanes, r, aa, off, vv, load),
            MemSize::B128 => spread_words::<4>(regs, nt, lanes, r, aa, off, vv, load),
            _ => lanes!(lanes, nt, |l| {
                let addr = pair(regs, aa, nt, l).wrapping_add(off);
                let mut v = [0u32; 4];
                spread_access(regs, nt, r, addr, l, vv, size, load, &mut v);
                if load {
                    put_loaded(regs, nt, mask, true, vv, l, size, &v);
                }
            }),
        }
        return Ok(());
    }
    // Lane by lane, each through its own region, in lane order: the first lane that no
    // region holds takes the slow path (a sparse page boundary, a null descriptor) or faults.
    let mut todo = lanes;
    while todo != 0 {
        let l = todo.trailing_zeros() as usize;
        todo &= todo - 1;
        let addr = pair(regs, aa, nt, l).wrapping_add(off);
        let mut v = [0u32; 4];
        match hot_region(mem, hot, addr, bytes as u64) {
            Some(r) => spread_access(regs, nt, r, addr, l, vv, size, load, &mut v),
            None => {
                if !load {
                    for k in 0..size.regs() {
                        v[k] = regs[(vv + k) * nt + l];
                    }
                }
                global_access_slow(mem, addr, size, load, &mut v).map_err(|m| mem_fault(m, l))?;
            }
        }
        if load {
            put_loaded(regs, nt, mask, lanes == mask, vv, l, size, &v);
        }
    }
    Ok(())
}

/// The region that holds `[addr, addr + span)`: one of the last two the warp used (`hot`,
/// most recent first) or, looked up in the map, the new most recent one.
#[inline(always)]
fn hot_region<'m>(mem: &'m MemoryMap, hot: &mut [Option<&'m Region>; 2], addr: u64, span: u64) -> Option<&'m Region> {
    match *hot {
        [Some(r), _] if r.contains(addr, span) => Some(r),
        [last, Some(r)] if r.contains(addr, span) => {
            *hot = [Some(r), last];
            Some(r)
        }
        _ => {
            let r = mem.region(addr, span)?;
            *hot = [Some(r), hot[0]];
            Some(r)
        }
    }
}

/// The region that holds every access of the lanes in `lanes` (at least two), when one
/// does: a warp's lanes mostly touch one buffer (each its pixel's word), so the region is
/// checked once for the span from the lowest to the highest address instead of lane by lane.
/// None when the span leaves the last two regions used and no single region holds it (the
/// lane-by-lane loop then finds each lane's region, or its fault, in lane order).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn lanes_region<'m>(
    regs: &[u32],
    aa: usize,
    nt: usize,
    lanes: u32,
    off: u64,
    bytes: u64,
    mem: &'m MemoryMap,
    hot: &mut [Option<&'m Region>; 2],
) -> Option<&'m Region> {
    let (lo, hi) = (row(regs, aa as u16, nt), row(regs, aa as u16 + 1, nt));
    let (mut min, mut max) = (u64::MAX, 0u64);
    lanes!(lanes, nt, |l| {
        let addr = (lo[l] as u64 | (hi[l] as u64) << 32).wrapping_add(off);
        min = min.min(addr);
        max = max.max(addr);
    });
    let span = (max - min).checked_add(bytes)?;
    hot_region(mem, hot, min, span)
}

/// The LDG or STG of `W` words of every lane in `lanes`, whose accesses all lie in region
/// `r` (checked by [`lanes_region`]), in lane order.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn spread_words<const W: usize>(
    regs: &mut [u32],
    nt: usize,
    lanes: u32,
    r: &Region,
    aa: usize,
    off: u64,
    vv: usize,
    load: bool,
) {
    let (host, base) = (r.host_ptr(), r.base);
    if W == 1 && full_warp(nt, lanes) {
        // One word a lane over whole rows: the addresses and values as fixed-size arrays (no
        // per-lane bounds checks). (Wider accesses stay lane by lane: two lanes' accesses
        // may overlap, and the later lane's words must land last.)
        let (lo, hi) = (row_full(regs, aa as u16), row_full(regs, aa as u16 + 1));
        let vals = row_full_mut(regs, vv as u16);
        for l in 0..MAX_THREADS {
            let at = ((lo[l] as u64 | (hi[l] as u64) << 32).wrapping_add(off) - base) as usize;
            // SAFETY: as below, for lane `l`'s word.
            let w = unsafe { std::slice::from_raw_parts_mut(host.add(at), 4) };
            if load {
                vals[l] = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            } else {
                w.copy_from_slice(&vals[l].to_le_bytes());
            }
        }
        return;
    }
    lanes!(lanes, nt, |l| {
        let at = (pair(regs, aa, nt, l).wrapping_add(off) - base) as usize;
        // SAFETY: `[at, at + 4W)` lies inside the region's live backing (every lane's access
        // is inside the span `lanes_region` checked), so the slice stays in bounds; every byte
        // value is a valid `u8`. As in the lane-by-lane loop, lanes (and other cores) touching
        // the same bytes without atomics is a race the Vulkan program must not have.
        let b = unsafe { std::slice::from_raw_parts_mut(host.add(at), 4 * W) };
        for (k, w) in b.chunks_exact_mut(4).enumerate() {
            let reg = &mut regs[(vv + k) * nt + l];
            if load {
                *reg = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            } else {
                w.copy_from_slice(&reg.to_le_bytes());
            }
        }
    });
}

/// Lane `l`'s LDG (into `v`) or STG (of its registers from `vv`) at `addr`, which lies in
/// region `r`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn spread_access(
    regs: &[u32],
    nt: usize,
    r: &Region,
    addr: u64,
    l: usize,
    vv: usize,
    size: MemSize,
    load: bool,
    v: &mut [u32; 4],
) {
    // SAFETY: `[addr, addr + bytes)` lies inside the region's live backing (checked by
    // `contains`/`region` for this access or for a span holding it), so the slice stays in
    // bounds; every byte value is a valid `u8`. Lanes (and other cores) touching the same
    // bytes without atomics is a race the Vulkan program must not have.
    let b = unsafe { std::slice::from_raw_parts_mut(r.host_ptr().add((addr - r.base) as usize), size.bytes()) };
    if load {
        load_bytes(b, 0, size, v);
    } else {
        for k in 0..size.regs() {
            v[k] = regs[(vv + k) * nt + l];
        }
        store_bytes(b, 0, size, v);
    }
}

/// True when every lane in `mask` holds the address `h0:l0` in rows `base_hi:base_lo`.
#[inline(always)]
fn masked_same(base_hi: &[u32], base_lo: &[u32], mask: u32, nt: usize, h0: u32, l0: u32) -> bool {
    let mut diff = 0;
    lanes!(mask, nt, |l| {
        diff |= (base_hi[l] ^ h0) | (base_lo[l] ^ l0);
    });
    diff == 0
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

/// `ATOMG`/`ATOML`, lane by lane in lane order.
fn atomic(i: &Instr, regs: &mut [u32], nt: usize, mask: u32, env: &mut ExecEnv) -> Result<(), Fault> {
    let (d, a, b, c) = (i.dst, i.a, i.b, i.c);
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
                        FaultKind::Memory(MemFault { addr: off as u64, size: n as u64, kind: MemFaultKind::Unmapped }),
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
    Ok(())
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

        pub(super) fn $global(mem: &MemoryMap, addr: u64, op: AtomicOp, b: $u, c: $u) -> Result<$u, MemFault> {
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
        let at = offs[0].wrapping_add(acc.imm) as usize;
        if stride >= at + 4 && buf.len() >= MAX_THREADS * stride && offs.iter().all(|&o| o == offs[0]) {
            // Private memory at one offset in every lane (a query's state word): lane `l`'s
            // word is at `at` in its own `stride`-byte slice, in bounds once `at + 4 <= stride`.
            if acc.load {
                let mut out = [0u32; MAX_THREADS];
                for (o, lane) in out.iter_mut().zip(buf.chunks_exact(stride)) {
                    *o = u32::from_le_bytes(lane[at..at + 4].try_into().expect("a word"));
                }
                *row_full_mut(regs, v as u16) = out;
            } else {
                let vals = row_full(regs, v as u16);
                for (x, lane) in vals.iter().zip(buf.chunks_exact_mut(stride)) {
                    lane[at..at + 4].copy_from_slice(&x.to_le_bytes());
                }
            }
            return;
        }
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

#[cfg(test)]
mod tests {
    use super::super::tests::{random_regs, Rng, NT};
    use super::*;
    use crate::mem::AddressSpace;

    /// LDG/STG lane by lane through the memory map, in lane order: the reference the fast
    /// paths of [`global`] (a uniform load, lanes that share a region) must match.
    fn global_reference(i: &Instr, regs: &mut [u32], mask: u32, mem: &MemoryMap) -> Result<(), Fault> {
        let size = MemSize::from_u8(i.modifier).unwrap();
        let (load, vv) = (i.op == Op::Ldg, if i.op == Op::Ldg { i.dst } else { i.b } as usize);
        for l in (0..NT).filter(|l| mask >> l & 1 != 0) {
            let addr = pair(regs, i.a as usize, NT, l).wrapping_add(i.imm as i32 as i64 as u64);
            let mut v = [0u32; 4];
            if !load {
                for k in 0..size.regs() {
                    v[k] = regs[(vv + k) * NT + l];
                }
            }
            global_access_slow(mem, addr, size, load, &mut v).map_err(|m| mem_fault(m, l))?;
            if load {
                for k in 0..size.regs() {
                    regs[(vv + k) * NT + l] = v[k];
                }
            }
        }
        Ok(())
    }

    /// Global loads and stores against [`global_reference`]: every size, full and partial
    /// masks, lanes in one region (overlapping accesses included: the later lane's bytes must
    /// land last), one lane in another region, one lane unmapped (the same fault, the lanes
    /// before it done), and one address in every lane.
    #[test]
    fn global_paths_match_lane_by_lane() {
        const LEN: usize = 512;
        let mut rng = Rng(0x5eed_0f61_0ba1);
        let sizes = [MemSize::U8, MemSize::S16, MemSize::B32, MemSize::B64, MemSize::B128];
        for round in 0..400 {
            let size = sizes[round % sizes.len()];
            let load = (round / sizes.len()).is_multiple_of(2);
            let case = round / (2 * sizes.len()) % 4;
            let mask = if round.is_multiple_of(3) { u32::MAX } else { rng.next() | 1 << (rng.next() % 32) };
            let spaces = [AddressSpace::new(), AddressSpace::new()];
            let regions: Vec<[Region; 2]> =
                spaces.iter().map(|s| [s.allocate(LEN as u64).unwrap(), s.allocate(LEN as u64).unwrap()]).collect();
            let init: Vec<u8> = (0..2 * LEN).map(|_| rng.next() as u8).collect();
            for (s, r) in spaces.iter().zip(&regions) {
                s.snapshot().write(r[0].base, &init[..LEN]).unwrap();
                s.snapshot().write(r[1].base, &init[LEN..]).unwrap();
            }
            let [a, b] = [regions[0][0].base, regions[0][1].base];
            let imm = rng.next() % 8;
            // Offsets from a short range, so lanes' accesses overlap.
            let room = 96 - size.bytes() as u32;
            let mut addrs: Vec<u64> = (0..NT).map(|_| a + (rng.next() % room) as u64).collect();
            let odd = rng.next() as usize % NT;
            match case {
                1 => addrs[odd] = b + 8,
                2 => addrs[odd] = b + LEN as u64 + 64,
                3 => {
                    let first = addrs[0];
                    addrs.fill(first);
                }
                _ => {}
            }
            let mut regs = random_regs(&mut Rng(round as u64 + 1));
            for (l, &x) in addrs.iter().enumerate() {
                set_pair(&mut regs, 0, NT, l, x - imm as u64);
            }
            let op = if load { Op::Ldg } else { Op::Stg };
            let i = Instr::r(op, size as u8, 2, 0, 2, REG_NONE, REG_NONE, imm);
            let (mut r1, mut r2) = (regs.clone(), regs);
            let (m1, m2) = (spaces[0].snapshot(), spaces[1].snapshot());
            let e1 = global(&i, &mut r1, NT, mask, &m1, &mut [None, None]).err().map(|f| f.to_string());
            let e2 = global_reference(&i, &mut r2, mask, &m2).err().map(|f| f.to_string());
            assert_eq!(e1, e2, "round {round}");
            assert_eq!(r1, r2, "round {round}");
            let bytes = |m: &MemoryMap| {
                let mut out = vec![0u8; 2 * LEN];
                m.read(a, &mut out[..LEN]).unwrap();
                m.read(b, &mut out[LEN..]).unwrap();
                out
            };
            assert_eq!(bytes(&m1), bytes(&m2), "round {round}");
        }
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
            if round % 5 == 2 {
                // One offset in every lane (a query's state word).
                let o = regs[0];
                regs[..NT].fill(o);
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
