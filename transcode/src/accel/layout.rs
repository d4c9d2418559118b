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

/// [`quantise_axis`] over a fixed number of lanes (4 for 4-wide nodes, 8 for 6-wide ones;
/// unused lanes hold the empty interval `lo = +inf, hi = -inf` and come out as (255, 0)),
/// computed lane-parallel without branches. When a lane would need the outward stepping
/// (the f32 add in `dequant` rounded inward, or the top past 255) the whole axis is redone
/// by [`quantise_axis`], so the result is always exactly its result.
#[inline]
pub fn quantise_lanes<const N: usize>(lo: &[f32; N], hi: &[f32; N]) -> (f32, i8, [u8; N], [u8; N]) {
    let mut origin = f32::INFINITY;
    let mut top = f32::NEG_INFINITY;
    let mut live = [false; N];
    for c in 0..N {
        live[c] = lo[c] <= hi[c];
        origin = origin.min(if live[c] { lo[c] } else { f32::INFINITY });
        top = top.max(if live[c] { hi[c] } else { f32::NEG_INFINITY });
    }
    let slow = || {
        let (mut ql, mut qh) = ([0u8; N], [0u8; N]);
        let (o, e) = quantise_axis(lo, hi, &mut ql, &mut qh);
        (o, e, ql, qh)
    };
    if origin > top || !origin.is_finite() || !top.is_finite() {
        return slow();
    }
    let extent = top as f64 - origin as f64;
    let mut e = if extent > 0.0 { ceil_log2(extent / 255.0) } else { bvh::EXP_MIN };
    if 255.0 * exp2_f64(e) < extent {
        e += 1;
    }
    e = e.clamp(bvh::EXP_MIN, bvh::EXP_MAX);
    let inv = exp2_f64(-e) as f32;
    let step = bvh::exp2i(e);
    let (mut ql, mut qh) = ([0u8; N], [0u8; N]);
    #[cfg(target_arch = "x86_64")]
    if N.is_multiple_of(4) {
        let mut bad = false;
        for k in (0..N).step_by(4) {
            let at = |v: &[f32; N]| -> [f32; 4] { [v[k], v[k + 1], v[k + 2], v[k + 3]] };
            let (l4, h4, b) = lanes4(at(lo), at(hi), origin, inv, step);
            ql[k..k + 4].copy_from_slice(&l4);
            qh[k..k + 4].copy_from_slice(&h4);
            bad |= b;
        }
        if bad {
            return slow();
        }
        return (origin, e as i8, ql, qh);
    }
    let mut bad = false;
    for c in 0..N {
        let (l, h) = (lo[c], hi[c]);
        // Plain compares (one instruction each); a NaN lane comes out 0, never NaN.
        let unit = |x: f32| {
            let x = if x > 0.0 { x } else { 0.0 };
            if x < 255.0 {
                x
            } else {
                255.0
            }
        };
        let (a, b) = (unit((l - origin) * inv), unit((h - origin) * inv));
        let (lq, t) = (a as u32, b as u32);
        let hq = t + ((t as f32) < b) as u32;
        bad |= live[c] & ((origin + lq as f32 * step > l) | (origin + hq as f32 * step < h));
        ql[c] = if live[c] { lq as u8 } else { 255 };
        qh[c] = if live[c] { hq as u8 } else { 0 };
    }
    if bad {
        return slow();
    }
    (origin, e as i8, ql, qh)
}

/// The lane loop of [`quantise_lanes`] on four lanes with SSE2, the same operations in
/// the same order (one multiply then one add, never fused), so the same bits: `maxps(x, 0)`
/// and `minps(x, 255)` are the plain compares (a NaN lane comes out 0), truncation of a
/// value in `0..=255` is the same through `i32` as through `u32`. Returns the quantised
/// corners and whether a live lane needs the outward stepping.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lanes4(lo: [f32; 4], hi: [f32; 4], origin: f32, inv: f32, step: f32) -> ([u8; 4], [u8; 4], bool) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; every load and store is of a local
    // four-lane array.
    unsafe {
        let (l, h) = (_mm_loadu_ps(lo.as_ptr()), _mm_loadu_ps(hi.as_ptr()));
        let (o, s, f) = (_mm_set1_ps(origin), _mm_set1_ps(inv), _mm_set1_ps(step));
        let live = _mm_castps_si128(_mm_cmple_ps(l, h));
        let unit = |x: __m128| _mm_min_ps(_mm_max_ps(x, _mm_setzero_ps()), _mm_set1_ps(255.0));
        let a = unit(_mm_mul_ps(_mm_sub_ps(l, o), s));
        let b = unit(_mm_mul_ps(_mm_sub_ps(h, o), s));
        let lq = _mm_cvttps_epi32(a);
        let t = _mm_cvttps_epi32(b);
        // `t + (t < b)`: the compare mask is -1 where the ceiling is one more.
        let hq = _mm_sub_epi32(t, _mm_castps_si128(_mm_cmplt_ps(_mm_cvtepi32_ps(t), b)));
        let low = _mm_cmpgt_ps(_mm_add_ps(o, _mm_mul_ps(_mm_cvtepi32_ps(lq), f)), l);
        let high = _mm_cmplt_ps(_mm_add_ps(o, _mm_mul_ps(_mm_cvtepi32_ps(hq), f)), h);
        let bad = _mm_and_si128(live, _mm_castps_si128(_mm_or_ps(low, high)));
        // Dead lanes: (255, 0).
        let ql = _mm_or_si128(_mm_and_si128(live, lq), _mm_andnot_si128(live, _mm_set1_epi32(255)));
        let qh = _mm_and_si128(live, hq);
        let (mut wl, mut wh) = ([0u32; 4], [0u32; 4]);
        _mm_storeu_si128(wl.as_mut_ptr().cast(), ql);
        _mm_storeu_si128(wh.as_mut_ptr().cast(), qh);
        (wl.map(|x| x as u8), wh.map(|x| x as u8), _mm_movemask_ps(_mm_castsi128_ps(bad)) != 0)
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
                pad.fill(0);
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
        let t = self.tree;
        let w = self.width;
        let nb = bvh::node_bytes(w);
        let (kids, len) = t.wide.get(p);
        let top = p >= t.top_base();
        let (rec, mut rest) = out.split_at_mut(nb);
        rec.fill(0);
        rec[node::KIND] = bvh::NODE_INTERNAL;
        rec[node::COUNT] = len as u8;
        // Unused lanes hold the empty interval (see `quantise_lanes`).
        let mut lo = [[f32::INFINITY; 8]; 3];
        let mut hi = [[f32::NEG_INFINITY; 8]; 3];
        let mut boxes = [Aabb::EMPTY; 6];
        let mut sizes = [0usize; 6];
        // A leaf child's (first position, primitive count), written from here directly.
        let mut leaves = [None; 6];
        let mut big = 0;
        let mut at = off + nb as u64;
        for (c, &r) in kids[..len].iter().enumerate() {
            let (b, count, first, size, leaf) = t.child(r);
            if top && count <= RUN_AHEAD && first != NONCONTIG {
                // A cluster below the top-level build, written soon: the top's walk is not
                // in position order, so the lookahead by position in `write_leaf` misses it.
                t.prefetch_run(first as usize, count as usize);
            }
            for a in 0..3 {
                lo[a][c] = b.lo[a];
                hi[a][c] = b.hi[a];
            }
            if leaf {
                leaves[c] = Some((first, count));
            } else {
                // Its wide children, read when its own record is written.
                t.wide.prefetch(r);
            }
            wr_u32(rec, node::CHILD + 4 * c, bvh::child_word(at, leaf));
            (boxes[c], sizes[c]) = (b, size as usize * 16);
            big += (count >= PAR_WRITE) as usize;
            at += sizes[c] as u64;
        }
        for a in 0..3 {
            let (o, e, ql, qh) = if w <= 4 {
                let (o, e, l4, h4) =
                    quantise_lanes::<4>(&lo[a][..4].try_into().unwrap(), &hi[a][..4].try_into().unwrap());
                (o, e, [l4[0], l4[1], l4[2], l4[3], 0, 0, 0, 0], [h4[0], h4[1], h4[2], h4[3], 0, 0, 0, 0])
            } else {
                quantise_lanes::<8>(&lo[a], &hi[a])
            };
            wr_f32(rec, node::ORIGIN + 4 * a, o);
            rec[node::EXP + a] = e as u8;
            for c in 0..len {
                rec[node::qlo(w) + 3 * c + a] = ql[c];
                rec[node::qhi(w) + 3 * c + a] = qh[c];
            }
        }
        let own = Written { sah: t.nodes.at(p).aabb().half_area() as f64, nodes: 1, leaves: 0 };
        // Each child's records are the next `sizes[c]` bytes.
        let mut at = off + nb as u64;
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
                None => self.write_node(kids[c], mine, at),
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
    fn lanes_match_the_general_quantiser() {
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
            let (mut lo, mut hi) = ([f32::INFINITY; 8], [f32::NEG_INFINITY; 8]);
            let scale = f32::from_bits(((next() % 60) as u32 + 100) << 23);
            let base = (next() % 2001) as f32 - 1000.0;
            for c in 0..len {
                let pick = |r: u64| -> f32 {
                    if round % 7 == 0 && r.is_multiple_of(11) {
                        specials[(r >> 8) as usize % specials.len()]
                    } else {
                        base * scale + ((r >> 16) % 100_000) as f32 * scale * 1e-3
                    }
                };
                let (a, b) = (pick(next()), pick(next()));
                (lo[c], hi[c]) = if round % 13 == 0 || a <= b { (a, b) } else { (b, a) };
            }
            let (mut ql, mut qh) = ([0u8; 8], [0u8; 8]);
            let want = quantise_axis(&lo[..len], &hi[..len], &mut ql[..len], &mut qh[..len]);
            let got = quantise_lanes::<8>(&lo, &hi);
            assert_eq!((got.0, got.1), (want.0, want.1), "{lo:?} {hi:?}");
            assert_eq!((&got.2[..len], &got.3[..len]), (&ql[..len], &qh[..len]), "{lo:?} {hi:?}");
            if len <= 4 {
                let got4 = quantise_lanes::<4>(&lo[..4].try_into().unwrap(), &hi[..4].try_into().unwrap());
                assert_eq!((got4.0, got4.1, &got4.2[..len], &got4.3[..len]), (want.0, want.1, &ql[..len], &qh[..len]));
            }
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
