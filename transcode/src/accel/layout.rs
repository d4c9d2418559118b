//! Writing the wide tree into the CW-BVH byte layout of `abi::bvh`, in pre-order: a node's
//! record is followed by its children's subtrees in slot order, each contiguous (the
//! walker's restart relies on it), with conservative int8 quantisation of child boxes.
//! Subtree sizes are known from finalisation, so large subtrees are written in parallel
//! into disjoint parts of the destination.

use super::input::{Aabb, AabbReader, PrimRef, TriReader};
use super::tree::{Kind, Tree, LEAF_PRIM, NONCONTIG};
use vortex_model::abi::bvh::{self, inst, node, proc, tri};
use vortex_model::abi::{wr_f32, wr_u32};

/// A node's quantisation frame and its children's quantised corners.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantised {
    pub origin: [f32; 3],
    pub exp: [i8; 3],
    pub qlo: Vec<[u8; 3]>,
    pub qhi: Vec<[u8; 3]>,
}

/// `2^e` as an f64 (exact for the f32 exponent range and beyond).
#[inline]
fn exp2_f64(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// Smallest `e` with `2^e >= x` (x > 0, finite).
#[inline]
fn ceil_log2(x: f64) -> i32 {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        return x.log2().ceil() as i32;
    }
    let e = biased - 1023;
    if bits & ((1u64 << 52) - 1) == 0 {
        e
    } else {
        e + 1
    }
}

/// One axis of a node: the origin (the minimum, so `q = 0` dequantises exactly to it),
/// the exponent, and each child's quantised corners, rounded outward and checked in f32
/// with `abi::bvh::dequant` so the dequantised interval contains the exact one. At most 8
/// children.
#[inline]
pub fn quantise_axis(lo: &[f32], hi: &[f32], qlo: &mut [u8], qhi: &mut [u8]) -> (f32, i8) {
    let n = lo.len();
    assert!(n <= 8 && hi.len() == n && qlo.len() == n && qhi.len() == n);
    // An empty child (lo > hi: a refit whose primitives all became inactive; or NaN) gets
    // the inverted box (255, 0), which no ray enters.
    let (mut origin, mut top) = (f32::INFINITY, f32::NEG_INFINITY);
    for c in 0..n {
        if lo[c] <= hi[c] {
            origin = origin.min(lo[c]);
            top = top.max(hi[c]);
        }
    }
    if origin.is_nan() || top.is_nan() || origin > top {
        qlo.fill(255);
        qhi.fill(0);
        return (0.0, bvh::EXP_MIN as i8);
    }
    let extent = top as f64 - origin as f64;
    let mut e = if extent > 0.0 { ceil_log2(extent / 255.0) } else { bvh::EXP_MIN };
    // The division may have rounded down across a power of two: one step fixes it.
    if 255.0 * exp2_f64(e) < extent {
        e += 1;
    }
    e = e.clamp(bvh::EXP_MIN, bvh::EXP_MAX);
    'retry: loop {
        // Powers of two are exact in f32 for these exponents, so the scaling is exact;
        // the subtraction and the dequantising add may round, which the checks correct.
        let inv = exp2_f64(-e) as f32;
        let step = bvh::exp2i(e);
        for c in 0..n {
            let (l, h) = (lo[c], hi[c]);
            let live = l <= h;
            if !live {
                (qlo[c], qhi[c]) = (255, 0);
                continue;
            }
            let a = ((l - origin) * inv).clamp(0.0, 255.0);
            let b = ((h - origin) * inv).clamp(0.0, 255.0);
            // Truncation is floor for these non-negative values; ceil without libm.
            let mut ql = a as u32;
            let t = b as u32;
            let mut qh = t + ((t as f32) < b) as u32;
            if origin + ql as f32 * step > l {
                ql = step_down(origin, e, ql, l);
            }
            if origin + qh as f32 * step < h {
                match step_up(origin, e, qh, h) {
                    Some(q) => qh = q,
                    None => {
                        assert!(e < bvh::EXP_MAX, "quantisation cannot cover a finite box");
                        e += 1;
                        continue 'retry;
                    }
                }
            }
            (qlo[c], qhi[c]) = (ql as u8, qh as u8);
        }
        return (origin, e as i8);
    }
}

/// The frame (origin, exponent) of one axis over a fixed number of lanes (children;
/// unused lanes hold the empty interval `lo = +inf, hi = -inf`), or `None` where the axis
/// is left to [`quantise_axis`]: no live lane, or an infinite bound.
#[inline(always)]
fn lane_frame<const N: usize>(lo: &[f32; N], hi: &[f32; N]) -> Option<(f32, i32)> {
    let mut origin = f32::INFINITY;
    let mut top = f32::NEG_INFINITY;
    for c in 0..N {
        let live = lo[c] <= hi[c];
        origin = origin.min(if live { lo[c] } else { f32::INFINITY });
        top = top.max(if live { hi[c] } else { f32::NEG_INFINITY });
    }
    if origin > top || !origin.is_finite() || !top.is_finite() {
        return None;
    }
    let extent = top as f64 - origin as f64;
    let mut e = if extent > 0.0 { ceil_log2(extent / 255.0) } else { bvh::EXP_MIN };
    if 255.0 * exp2_f64(e) < extent {
        e += 1;
    }
    Some((origin, e.clamp(bvh::EXP_MIN, bvh::EXP_MAX)))
}

/// A node's `N` child boxes (unused ones [`Aabb::EMPTY`]) quantised on all three axes:
/// each axis's frame from [`lane_frame`], then every child's three axes as the lanes of
/// one vector, without branches. An axis where a lane would need the outward stepping
/// (the f32 add in `dequant` rounded inward, or the top past 255), or whose frame is left
/// to it, is redone by [`quantise_axis`], so the result is always exactly [`quantise`]'s.
/// Returns the origin, the exponents and each child's quantised (lo, hi) corners.
#[allow(clippy::type_complexity)]
#[inline]
pub fn quantise_node<const N: usize>(boxes: &[Aabb; N]) -> ([f32; 3], [i8; 3], [[u8; 3]; N], [[u8; 3]; N]) {
    let axis = |a: usize| -> ([f32; N], [f32; N]) {
        (std::array::from_fn(|c| boxes[c].lo[a]), std::array::from_fn(|c| boxes[c].hi[a]))
    };
    let (mut origin, mut exp) = ([0.0f32; 3], [0i8; 3]);
    let (mut inv, mut step) = ([0.0f32; 3], [0.0f32; 3]);
    // Bit `a`: axis `a` goes to `quantise_axis`.
    let mut redo = 0u32;
    for a in 0..3 {
        let (l, h) = axis(a);
        match lane_frame(&l, &h) {
            Some((o, e)) => {
                (origin[a], exp[a]) = (o, e as i8);
                (inv[a], step[a]) = (exp2_f64(-e) as f32, bvh::exp2i(e));
            }
            None => redo |= 1 << a,
        }
    }
    let (mut ql, mut qh) = ([[0u8; 3]; N], [[0u8; 3]; N]);
    redo |= child_lanes(boxes, &origin, &inv, &step, &mut ql, &mut qh);
    for a in 0..3 {
        if redo & (1 << a) != 0 {
            let (l, h) = axis(a);
            let (mut lq, mut hq) = ([0u8; N], [0u8; N]);
            let (o, e) = quantise_axis(&l, &h, &mut lq, &mut hq);
            (origin[a], exp[a]) = (o, e);
            for c in 0..N {
                (ql[c][a], qh[c][a]) = (lq[c], hq[c]);
            }
        }
    }
    (origin, exp, ql, qh)
}

#[cfg(not(target_arch = "x86_64"))]
use child_lanes_portable as child_lanes;

/// The lane step of [`quantise_node`], portable: every child's corners on every axis
/// from the axes' frames (an axis left to `quantise_axis` gives garbage, replaced there).
/// Returns the axes (bit `a`) where a live lane needs the outward stepping. (On x86_64
/// only the tests call it, against the SSE version.)
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn child_lanes_portable<const N: usize>(
    boxes: &[Aabb; N],
    origin: &[f32; 3],
    inv: &[f32; 3],
    step: &[f32; 3],
    ql: &mut [[u8; 3]; N],
    qh: &mut [[u8; 3]; N],
) -> u32 {
    let mut bad = 0u32;
    for c in 0..N {
        for a in 0..3 {
            let (l, h) = (boxes[c].lo[a], boxes[c].hi[a]);
            let live = l <= h;
            // Plain compares (one instruction each); a NaN lane comes out 0, never NaN.
            let unit = |x: f32| {
                let x = if x > 0.0 { x } else { 0.0 };
                if x < 255.0 {
                    x
                } else {
                    255.0
                }
            };
            let (x, y) = (unit((l - origin[a]) * inv[a]), unit((h - origin[a]) * inv[a]));
            let (lq, t) = (x as u32, y as u32);
            let hq = t + ((t as f32) < y) as u32;
            let out = (origin[a] + lq as f32 * step[a] > l) | (origin[a] + hq as f32 * step[a] < h);
            bad |= ((live & out) as u32) << a;
            ql[c][a] = if live { lq as u8 } else { 255 };
            qh[c][a] = if live { hq as u8 } else { 0 };
        }
    }
    bad
}

/// The lane step of [`quantise_node`] with SSE2, a child's three axes in one vector: the
/// same operations in the same order as the portable loop (one multiply then one add,
/// never fused), so the same bits: `maxps(x, 0)` and `minps(x, 255)` are the plain
/// compares (a NaN lane comes out 0), truncation of a value in `0..=255` is the same
/// through `i32` as through `u32`. The fourth lane is an empty interval (never bad).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn child_lanes<const N: usize>(
    boxes: &[Aabb; N],
    origin: &[f32; 3],
    inv: &[f32; 3],
    step: &[f32; 3],
    ql: &mut [[u8; 3]; N],
    qh: &mut [[u8; 3]; N],
) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; no memory is accessed through
    // pointers (the vectors are built from and stored into values).
    unsafe {
        let o = _mm_setr_ps(origin[0], origin[1], origin[2], 0.0);
        let s = _mm_setr_ps(inv[0], inv[1], inv[2], 0.0);
        let f = _mm_setr_ps(step[0], step[1], step[2], 0.0);
        let (zero, max) = (_mm_setzero_ps(), _mm_set1_ps(255.0));
        let mut bad = _mm_setzero_si128();
        for c in 0..N {
            let b = &boxes[c];
            let l = _mm_setr_ps(b.lo[0], b.lo[1], b.lo[2], f32::INFINITY);
            let h = _mm_setr_ps(b.hi[0], b.hi[1], b.hi[2], f32::NEG_INFINITY);
            let live = _mm_castps_si128(_mm_cmple_ps(l, h));
            let x = _mm_min_ps(_mm_max_ps(_mm_mul_ps(_mm_sub_ps(l, o), s), zero), max);
            let y = _mm_min_ps(_mm_max_ps(_mm_mul_ps(_mm_sub_ps(h, o), s), zero), max);
            let lq = _mm_cvttps_epi32(x);
            let t = _mm_cvttps_epi32(y);
            // `t + (t < y)`: the compare mask is -1 where the ceiling is one more.
            let hq = _mm_sub_epi32(t, _mm_castps_si128(_mm_cmplt_ps(_mm_cvtepi32_ps(t), y)));
            let low = _mm_cmpgt_ps(_mm_add_ps(o, _mm_mul_ps(_mm_cvtepi32_ps(lq), f)), l);
            let high = _mm_cmplt_ps(_mm_add_ps(o, _mm_mul_ps(_mm_cvtepi32_ps(hq), f)), h);
            bad = _mm_or_si128(bad, _mm_and_si128(live, _mm_castps_si128(_mm_or_ps(low, high))));
            // Dead lanes: (255, 0). Both corners' four lanes packed into eight bytes.
            let lq = _mm_or_si128(_mm_and_si128(live, lq), _mm_andnot_si128(live, _mm_set1_epi32(255)));
            let hq = _mm_and_si128(live, hq);
            let packed = _mm_packus_epi16(_mm_packs_epi32(lq, hq), _mm_setzero_si128());
            let bytes = (_mm_cvtsi128_si64(packed) as u64).to_le_bytes();
            ql[c] = [bytes[0], bytes[1], bytes[2]];
            qh[c] = [bytes[4], bytes[5], bytes[6]];
        }
        _mm_movemask_ps(_mm_castsi128_ps(bad)) as u32 & 7
    }
}

/// The largest `q < ql` whose dequantised value is at most `x` (0 at worst). Rare: only
/// when the f32 add in `dequant` rounded up.
#[cold]
fn step_down(origin: f32, e: i32, mut ql: u32, x: f32) -> u32 {
    while ql > 0 && bvh::dequant(origin, e as i8, ql as u8) > x {
        ql -= 1;
    }
    ql
}

/// The smallest `q > qh` whose dequantised value is at least `x`, if one is <= 255.
#[cold]
fn step_up(origin: f32, e: i32, mut qh: u32, x: f32) -> Option<u32> {
    while bvh::dequant(origin, e as i8, qh as u8) < x {
        qh += 1;
        if qh > 255 {
            return None;
        }
    }
    Some(qh)
}

/// Chooses origin and per-axis exponent so every child box maps into 0..=255 and the
/// dequantised box (evaluated exactly as the box PE does) contains the exact box.
pub fn quantise(boxes: &[Aabb]) -> Quantised {
    let n = boxes.len();
    let mut q = Quantised { origin: [0.0; 3], exp: [0; 3], qlo: vec![[0; 3]; n], qhi: vec![[0; 3]; n] };
    let (mut l, mut h, mut ql, mut qh) = (vec![0.0; n], vec![0.0; n], vec![0u8; n], vec![0u8; n]);
    for a in 0..3 {
        for (c, b) in boxes.iter().enumerate() {
            l[c] = b.lo[a];
            h[c] = b.hi[a];
        }
        let (o, e) = quantise_axis(&l, &h, &mut ql, &mut qh);
        q.origin[a] = o;
        q.exp[a] = e;
        for c in 0..n {
            q.qlo[c][a] = ql[c];
            q.qhi[c][a] = qh[c];
        }
    }
    q
}

/// Dequantised box of child `c`.
pub fn dequantised(q: &Quantised, c: usize) -> Aabb {
    Aabb {
        lo: std::array::from_fn(|a| bvh::dequant(q.origin[a], q.exp[a], q.qlo[c][a])),
        hi: std::array::from_fn(|a| bvh::dequant(q.origin[a], q.exp[a], q.qhi[c][a])),
    }
}

/// Where leaf contents come from.
pub struct Source<'a> {
    pub kind: Kind,
    pub tris: Vec<TriReader<'a>>,
    pub aabbs: Vec<AabbReader<'a>>,
    pub insts: Vec<inst::Leaf>,
    /// Geometry flags by geometry index.
    pub geom_flags: Vec<u32>,
}

/// Counts gathered while writing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Written {
    /// Sum of internal-node areas plus leaf area times primitives.
    pub sah: f64,
    pub nodes: u64,
    pub leaves: u64,
}

impl std::ops::Add for Written {
    type Output = Written;
    fn add(self, o: Written) -> Written {
        Written { sah: self.sah + o.sah, nodes: self.nodes + o.nodes, leaves: self.leaves + o.leaves }
    }
}

/// How many sorted positions ahead of the leaf being written the writer prefetches nodes.
const AHEAD: usize = 256;

/// Subtrees at most this large (primitives) are prefetched when their parent is written.
const RUN_AHEAD: u32 = 32;

/// Subtrees at least this large (primitives) are written in parallel (small enough that a
/// 100k build splits into more tasks than threads).
const PAR_WRITE: u32 = 2048;

pub struct Writer<'a> {
    pub tree: &'a Tree<'a>,
    pub src: &'a Source<'a>,
    pub width: u32,
}

impl Writer<'_> {
    /// Writes the record(s) of child `r`, whose box is `b`, into `out` (exactly its
    /// bytes), which sits at AS offset `off`.
    pub fn write(&self, r: u32, b: &Aabb, out: &mut [u8], off: u64) -> Written {
        if Tree::is_prim(r) {
            return self.write_leaf(r & !LEAF_PRIM, 1, b, out);
        }
        let n = self.tree.nodes.at(r);
        if n.is_leaf() {
            return self.write_leaf(n.first, n.prims(), b, out);
        }
        self.write_node(r, out, off)
    }

    #[inline(always)]
    fn write_leaf(&self, first: u32, count: u32, b: &Aabb, out: &mut [u8]) -> Written {
        let t = self.tree;
        // Leaves are written in sorted order, and every node is numbered like a sorted
        // position inside its subtree: the nodes the walk reads next are just ahead.
        let (lo, hi) = (first as usize + AHEAD, (first + count) as usize + AHEAD);
        t.nodes.prefetch_range(lo, hi);
        t.wide.prefetch_range(lo, hi);
        let (g0, p0) = t.prim_id(first);
        match self.src.kind {
            Kind::Triangles => {
                // Stored straight into the destination: the header, one fixed-size record
                // per triangle (its nine floats as they are, then its index), zeros up to
                // the record alignment.
                let mut h = [0u32; tri::HEADER / 4];
                h[tri::KIND / 4] = bvh::LEAF_TRI as u32 | (count << 8);
                h[tri::GEOM_INDEX / 4] = g0;
                h[tri::GEOM_FLAGS / 4] = self.src.geom_flags[g0 as usize];
                let (head, recs) = out.split_at_mut(tri::HEADER);
                head.copy_from_slice(bytemuck::cast_slice(&h));
                let (first, n) = (first as usize, count as usize);
                let (body, pad) = recs.split_at_mut(tri::RECORD * n);
                let tris = t.verts[first..first + n].iter().zip(&t.ids[first..first + n]);
                for (rec, (v, id)) in body.chunks_exact_mut(tri::RECORD).zip(tris) {
                    rec[..tri::PRIM].copy_from_slice(bytemuck::bytes_of(v));
                    rec[tri::PRIM..].copy_from_slice(&id[1].to_ne_bytes());
                }
                // 0 or 8 bytes (records of 40 after a 16-byte header); a fixed-size store
                // rather than a `memset` call.
                if let Ok(p) = <&mut [u8; 8]>::try_from(&mut *pad) {
                    *p = [0; 8];
                } else if !pad.is_empty() {
                    pad.fill(0);
                }
            }
            Kind::Aabbs => {
                out.fill(0);
                out[proc::KIND] = bvh::LEAF_PROC;
                out[proc::COUNT] = count as u8;
                wr_u32(out, proc::GEOM_INDEX, g0);
                wr_u32(out, proc::GEOM_FLAGS, self.src.geom_flags[g0 as usize]);
                for k in 0..count {
                    let p: &PrimRef = &t.prims[(first + k) as usize];
                    let r = proc::HEADER + proc::RECORD * k as usize;
                    for a in 0..3 {
                        wr_f32(out, r + proc::MIN + 4 * a, p.lo[a]);
                        wr_f32(out, r + proc::MAX + 4 * a, p.hi[a]);
                    }
                    wr_u32(out, r + proc::PRIM, p.prim);
                }
            }
            Kind::Instances => {
                let i = &self.src.insts[p0 as usize];
                i.encode(out);
            }
        }
        Written { sah: b.half_area() as f64 * count as f64, nodes: 0, leaves: 1 }
    }

    fn write_node(&self, p: u32, out: &mut [u8], off: u64) -> Written {
        if self.width <= 4 {
            self.write_wide::<4, 64>(p, out, off)
        } else {
            self.write_wide::<6, 96>(p, out, off)
        }
    }

    /// [`Writer::write_node`] for width `W`, whose records are `NB` bytes: fixed sizes, so
    /// the record is put together in a local array and stored once.
    fn write_wide<const W: usize, const NB: usize>(&self, p: u32, out: &mut [u8], off: u64) -> Written {
        let t = self.tree;
        let (kids, len) = t.wide.get(p);
        let len = len.min(W);
        let top = p >= t.top_base();
        let mut rec = [0u8; NB];
        rec[node::KIND] = bvh::NODE_INTERNAL;
        rec[node::COUNT] = len as u8;
        // Unused children keep the empty box (see `quantise_node`).
        let mut boxes = [Aabb::EMPTY; W];
        let mut sizes = [0usize; W];
        // A leaf child's (first position, primitive count), written from here directly.
        let mut leaves = [None; W];
        let mut big = 0;
        let mut at = off + NB as u64;
        for c in 0..len {
            let r = kids[c];
            let (b, count, first, size, leaf) = t.child(r);
            if top && count <= RUN_AHEAD && first != NONCONTIG {
                // A cluster below the top-level build, written soon: the top's walk is not
                // in position order, so the lookahead by position in `write_leaf` misses it.
                t.prefetch_run(first as usize, count as usize);
            }
            if leaf {
                leaves[c] = Some((first, count));
            } else {
                // Its wide children, read when its own record is written.
                t.wide.prefetch(r);
            }
            let word = bvh::child_word(at, leaf).to_le_bytes();
            rec[node::CHILD + 4 * c..][..4].copy_from_slice(&word);
            (boxes[c], sizes[c]) = (b, size as usize * 16);
            big += (count >= PAR_WRITE) as usize;
            at += sizes[c] as u64;
        }
        let (qlo, qhi) = (node::qlo(W as u32), node::qhi(W as u32));
        let (origin, exp, ql, qh) = quantise_node::<W>(&boxes);
        for a in 0..3 {
            rec[node::ORIGIN + 4 * a..][..4].copy_from_slice(&origin[a].to_le_bytes());
            rec[node::EXP + a] = exp[a] as u8;
        }
        for c in 0..len {
            rec[qlo + 3 * c..][..3].copy_from_slice(&ql[c]);
            rec[qhi + 3 * c..][..3].copy_from_slice(&qh[c]);
        }
        let (head, mut rest) = out.split_at_mut(NB);
        head.copy_from_slice(&rec);
        let own = Written { sah: t.nodes.at(p).aabb().half_area() as f64, nodes: 1, leaves: 0 };
        // Each child's records are the next `sizes[c]` bytes.
        let mut at = off + NB as u64;
        if big >= 2 {
            use rayon::prelude::*;
            let mut jobs = Vec::with_capacity(len);
            for c in 0..len {
                let (mine, tail) = std::mem::take(&mut rest).split_at_mut(sizes[c]);
                jobs.push((c, mine, at));
                (rest, at) = (tail, at + sizes[c] as u64);
            }
            let sum = jobs
                .into_par_iter()
                .map(|(c, o, at)| self.write(kids[c], &boxes[c], o, at))
                .reduce(Written::default, |a, b| a + b);
            return own + sum;
        }
        let mut s = own;
        for c in 0..len {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(sizes[c]);
            s = s + match leaves[c] {
                Some((first, count)) => self.write_leaf(first, count, &boxes[c], mine),
                None => self.write_wide::<W, NB>(kids[c], mine, at),
            };
            (rest, at) = (tail, at + sizes[c] as u64);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_match_the_general_quantiser() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let specials = [0.0f32, -0.0, 1e-30, -1e-30, 1e30, f32::MAX, f32::MIN_POSITIVE, 3.0e-39, f32::NAN];
        for round in 0..200_000 {
            let len = 2 + (next() % 5) as usize;
            let mut boxes = [Aabb::EMPTY; 6];
            for a in 0..3 {
                let scale = f32::from_bits(((next() % 60) as u32 + 100) << 23);
                let base = (next() % 2001) as f32 - 1000.0;
                for b in &mut boxes[..len] {
                    let mut pick = || -> f32 {
                        let r = next();
                        if round % 7 == 0 && r.is_multiple_of(11) {
                            specials[(r >> 8) as usize % specials.len()]
                        } else {
                            base * scale + ((r >> 16) % 100_000) as f32 * scale * 1e-3
                        }
                    };
                    let (x, y) = (pick(), pick());
                    (b.lo[a], b.hi[a]) = if round % 13 == 0 || x <= y { (x, y) } else { (y, x) };
                }
            }
            let want = quantise(&boxes[..len]);
            let bits = |o: [f32; 3]| o.map(f32::to_bits);
            let got = quantise_node::<6>(&boxes);
            assert_eq!((bits(got.0), got.1), (bits(want.origin), want.exp), "{boxes:?}");
            assert_eq!((&got.2[..len], &got.3[..len]), (&want.qlo[..], &want.qhi[..]), "{boxes:?}");
            if len <= 4 {
                let got = quantise_node::<4>(&[boxes[0], boxes[1], boxes[2], boxes[3]]);
                assert_eq!((bits(got.0), got.1), (bits(want.origin), want.exp), "{boxes:?}");
                assert_eq!((&got.2[..len], &got.3[..len]), (&want.qlo[..], &want.qhi[..]), "{boxes:?}");
            }
        }
    }

    #[test]
    fn lane_steps_agree() {
        let mut rng = vortex_model::rtu::reference::Rng::new(5);
        let specials = [0.0f32, -0.0, 1e-30, f32::MAX, f32::INFINITY, f32::NAN];
        for round in 0..100_000 {
            let mut boxes = [Aabb::EMPTY; 6];
            for b in &mut boxes[..2 + round % 5] {
                for a in 0..3 {
                    let mut pick = || {
                        let r = rng.next_u64();
                        if r.is_multiple_of(13) {
                            specials[(r >> 8) as usize % specials.len()]
                        } else {
                            (r >> 40) as f32 * 1e-3 - 5000.0
                        }
                    };
                    (b.lo[a], b.hi[a]) = (pick(), pick());
                }
            }
            let mut frame = ([0.0f32; 3], [0.0f32; 3], [0.0f32; 3]);
            for a in 0..3 {
                let l: [f32; 6] = std::array::from_fn(|c| boxes[c].lo[a]);
                let h: [f32; 6] = std::array::from_fn(|c| boxes[c].hi[a]);
                if let Some((o, e)) = lane_frame(&l, &h) {
                    (frame.0[a], frame.1[a], frame.2[a]) = (o, exp2_f64(-e) as f32, bvh::exp2i(e));
                }
            }
            let (mut l1, mut h1, mut l2, mut h2) = ([[0u8; 3]; 6], [[0u8; 3]; 6], [[0u8; 3]; 6], [[0u8; 3]; 6]);
            let b1 = child_lanes(&boxes, &frame.0, &frame.1, &frame.2, &mut l1, &mut h1);
            let b2 = child_lanes_portable(&boxes, &frame.0, &frame.1, &frame.2, &mut l2, &mut h2);
            assert_eq!((b1, l1, h1), (b2, l2, h2), "{boxes:?}");
        }
    }

    #[test]
    fn ceil_log2_matches_the_definition() {
        for x in [1e-300, 1e-40, 0.3, 0.5, 1.0, 1.5, 2.0, 3.0, 1024.0, 1025.0, 3e38] {
            let e = ceil_log2(x);
            assert!(exp2_f64(e) >= x && exp2_f64(e - 1) < x, "{x}: {e}");
        }
    }
}
