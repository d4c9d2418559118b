//! Top-down SAH construction over *items* — subtrees already built (the LBVH's clusters),
//! or single primitives — for the SAH builder and the full-sweep reference.
//!
//! `build` binned: 16 bins per axis over item centroids, the split of least
//! `area(L) * prims(L) + area(R) * prims(R)`, then an in-place partition that also yields
//! both sides' centroid bounds. Large ranges bin in parallel and both halves recurse in
//! parallel. `build_full_sweep` evaluates every split position of every axis (sorting by
//! each axis in turn): the quality reference the binned builder is measured against.
//!
//! A range of `m` items uses the `m - 1` nodes starting at its index: the node itself,
//! then its left range's nodes, then its right range's — so parallel halves never share
//! a node.

use super::input::{Aabb, PrimRef};
use super::tree::{Tree, LEAF_PRIM};
use rayon::prelude::*;

/// An item: a subtree (or primitive) with its box and primitive count.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Item {
    pub lo: [f32; 3],
    pub hi: [f32; 3],
    /// Child reference ([`LEAF_PRIM`] or a node).
    pub r: u32,
    pub count: u32,
}

impl Item {
    /// Twice the centroid.
    #[inline]
    fn c2(&self, a: usize) -> f32 {
        self.lo[a] + self.hi[a]
    }
    #[inline]
    fn aabb(&self) -> Aabb {
        Aabb { lo: self.lo, hi: self.hi }
    }
}

const BINS: usize = 16;
/// Ranges at least this large recurse in parallel.
const PAR_SPLIT: usize = 2048;
/// Ranges at least this large bin in parallel.
const PAR_BIN: usize = 1 << 15;
/// About how many items a binned split looks at.
const SAMPLE: usize = 4096;

/// Collects the maximal subtrees of at most `max` primitives under `root` into `out`, in
/// left-to-right order; returns how many.
pub fn clusters(tree: &Tree, root: u32, max: u32, out: &mut [Item]) -> usize {
    let mut n = 0;
    let mut stack = vec![root];
    while let Some(r) = stack.pop() {
        let (b, count, ..) = tree.child(r);
        if count <= max || Tree::is_prim(r) || tree.nodes.get(r).is_leaf() {
            out[n] = Item { lo: b.lo, hi: b.hi, r, count };
            n += 1;
        } else {
            let k = tree.nodes.get(r).kids;
            stack.push(k[1]);
            stack.push(k[0]);
        }
    }
    n
}

/// Largest cluster [`rebuild_cluster`] rebuilds.
pub const REBUILD_MAX: u32 = 64;

/// Rebuilds, by full-sweep SAH over their primitives, the maximal subtrees of at most
/// `max` (<= [`REBUILD_MAX`]) primitives of a linear-BVH cluster, each in its own nodes
/// (a linear-BVH subtree covers a contiguous range of sorted positions and uses the nodes
/// numbered like them); updates the item's reference, or the parents' child references.
pub fn rebuild_cluster(tree: &Tree, it: &mut Item, max: u32) {
    it.r = rebuild_below(tree, it.r, it.count, max.min(REBUILD_MAX));
}

/// [`rebuild_cluster`] under child `r` of `count` primitives: its new reference. A node
/// above rebuilt subtrees is finalised again (its children, and so its wide size, changed).
fn rebuild_below(tree: &Tree, r: u32, count: u32, max: u32) -> u32 {
    if count <= max || Tree::is_prim(r) {
        return rebuild_subtree(tree, r, count);
    }
    let kids = tree.nodes.at(r).kids.map(|k| {
        let c = if Tree::is_prim(k) { 1 } else { tree.nodes.at(k).prims() };
        rebuild_below(tree, k, c, max)
    });
    tree.nodes.set_kids(r, kids);
    tree.finalize(r);
    r
}

/// The full-sweep rebuild of linear-BVH subtree `r` of `count` primitives; its new root.
fn rebuild_subtree(tree: &Tree, r: u32, count: u32) -> u32 {
    if !(3..=REBUILD_MAX).contains(&count) || Tree::is_prim(r) {
        return r;
    }
    let first = tree.nodes.at(r).first;
    if first == super::tree::NONCONTIG {
        return r;
    }
    // The range's linear-BVH nodes are `first .. first + count - 1`.
    if count <= 16 {
        rebuild_n::<16>(tree, first, count)
    } else {
        rebuild_n::<64>(tree, first, count)
    }
}

fn rebuild_n<const N: usize>(tree: &Tree, first: u32, count: u32) -> u32 {
    let mut buf = [Item::default(); N];
    let prims = &mut buf[..count as usize];
    for (k, p) in prims.iter_mut().enumerate() {
        let pos = first + k as u32;
        let b = tree.prim_box(pos);
        *p = Item { lo: b.lo, hi: b.hi, r: LEAF_PRIM | pos, count: 1 };
    }
    small_n::<N>(tree, prims, first)
}

/// One item per sorted primitive.
pub fn prims(tree: &Tree, out: &mut [Item]) {
    out.par_iter_mut().enumerate().with_min_len(4096).for_each(|(i, it)| {
        let b = tree.prim_box(i as u32);
        *it = Item { lo: b.lo, hi: b.hi, r: LEAF_PRIM | i as u32, count: 1 };
    });
}

/// Centroid bounds (of doubled centroids).
fn centroid_bounds(items: &[Item]) -> Aabb {
    let f = |mut acc: Aabb, it: &Item| {
        for a in 0..3 {
            let c = it.c2(a);
            acc.lo[a] = acc.lo[a].min(c);
            acc.hi[a] = acc.hi[a].max(c);
        }
        acc
    };
    if items.len() >= PAR_BIN {
        items.par_chunks(8192).map(|c| c.iter().fold(Aabb::EMPTY, f)).reduce(|| Aabb::EMPTY, |a, b| a.union(&b))
    } else {
        items.iter().fold(Aabb::EMPTY, f)
    }
}

/// Builds the SAH tree over `items` (at least one) using nodes from `base`; returns the
/// root's child reference.
pub fn build(tree: &Tree, items: &mut [Item], base: u32) -> u32 {
    let cb = centroid_bounds(items);
    binned(tree, items, base, cb)
}

/// Full-sweep SAH over `items` (the quality reference).
pub fn build_full_sweep(tree: &Tree, items: &mut [Item], base: u32) -> u32 {
    if items.len() == 1 {
        return items[0].r;
    }
    let k = split_sweep(items);
    let (l, r) = items.split_at_mut(k);
    let (lr, rr) = if l.len() + r.len() >= PAR_SPLIT {
        rayon::join(|| build_full_sweep(tree, l, base + 1), || build_full_sweep(tree, r, base + k as u32))
    } else {
        (build_full_sweep(tree, l, base + 1), build_full_sweep(tree, r, base + k as u32))
    };
    tree.nodes.set_kids(base, [lr, rr]);
    tree.finalize(base);
    base
}

/// Ranges this small are built by a full sweep (cheaper than binning them).
const SMALL: usize = 12;

fn binned(tree: &Tree, items: &mut [Item], idx: u32, cb: Aabb) -> u32 {
    let m = items.len();
    if m == 1 {
        return items[0].r;
    }
    if m <= SMALL {
        return small(tree, items, idx);
    }
    let (k, cbl, cbr) = split_binned(items, &cb);
    let (l, r) = items.split_at_mut(k);
    let (lr, rr) = if m >= PAR_SPLIT {
        rayon::join(|| binned(tree, l, idx + 1, cbl), || binned(tree, r, idx + k as u32, cbr))
    } else {
        (binned(tree, l, idx + 1, cbl), binned(tree, r, idx + k as u32, cbr))
    };
    tree.nodes.set_kids(idx, [lr, rr]);
    tree.finalize(idx);
    idx
}

/// Full-sweep SAH for a small range (at most [`REBUILD_MAX`] items): the items are sorted
/// once per axis, and every split keeps the three orders by stable partition, so no level
/// sorts again. Nodes are numbered as in [`build`] (a range's node, then its left range's,
/// then its right range's).
fn small(tree: &Tree, items: &mut [Item], idx: u32) -> u32 {
    if items.len() <= 16 {
        small_n::<16>(tree, items, idx)
    } else {
        small_n::<64>(tree, items, idx)
    }
}

/// Working space of [`small_range`], for at most `N` items.
struct Scratch<const N: usize> {
    right: [f32; N],
    left: [bool; N],
    tmp: [u8; N],
}

/// A box as eight lanes `[-lo, 0, hi, 0]`, so growing one is a lane-wise maximum (two
/// vector instructions) and the sweeps below vectorise.
type Lanes = [f32; 8];

const LANES_EMPTY: Lanes = [f32::NEG_INFINITY; 8];

#[inline]
fn lanes(it: &Item) -> Lanes {
    [-it.lo[0], -it.lo[1], -it.lo[2], 0.0, it.hi[0], it.hi[1], it.hi[2], 0.0]
}

#[inline]
fn lanes_grow(acc: &mut Lanes, b: &Lanes) {
    for k in 0..8 {
        acc[k] = if b[k] > acc[k] { b[k] } else { acc[k] };
    }
}

/// Half the surface area of a non-empty box in lanes (the same value, rounding included,
/// as [`Aabb::half_area`]: `hi + (-lo)` is `hi - lo` exactly).
#[inline]
fn lanes_area(b: &Lanes) -> f32 {
    let d = [b[4] + b[0], b[5] + b[1], b[6] + b[2]];
    d[0] * d[1] + d[1] * d[2] + d[2] * d[0]
}

fn small_n<const N: usize>(tree: &Tree, items: &[Item], idx: u32) -> u32 {
    let m = items.len();
    assert!(m <= N && N <= 256);
    if m == 1 {
        return items[0].r;
    }
    // The finalisations below collapse wide nodes over these items' nodes, which the
    // top-level build reaches in no useful order: ask for them (and, once they are in,
    // for their children) while the sweeps run.
    for it in items {
        if !Tree::is_prim(it.r) {
            tree.nodes.prefetch(it.r);
        }
    }
    let mut lists = axis_lists::<N>(items);
    let mut boxes = [LANES_EMPTY; N];
    let mut weights = [0.0f32; N];
    for (i, it) in items.iter().enumerate() {
        boxes[i] = lanes(it);
        weights[i] = it.count as f32;
    }
    if tree.eager {
        for it in items {
            if tree.openable(it.r) {
                let k = tree.nodes.at(it.r).kids;
                tree.nodes.prefetch(k[0]);
                tree.nodes.prefetch(k[1]);
            }
        }
    }
    let mut sc = Scratch { right: [0.0; N], left: [false; N], tmp: [0; N] };
    let [l0, l1, l2] = &mut lists;
    let set = Set { items, boxes: &boxes, weights: &weights };
    small_range(tree, &set, [&mut l0[..m], &mut l1[..m], &mut l2[..m]], idx, &mut sc).0
}

/// The items' indices sorted on each axis by centroid (then index). (Sorting a few dozen
/// keys measured cheaper than ranking them by all-pairs compares.)
fn axis_lists<const N: usize>(items: &[Item]) -> [[u8; N]; 3] {
    let m = items.len();
    let mut lists = [[0u8; N]; 3];
    #[cfg(target_arch = "x86_64")]
    if m <= 16 {
        for (a, list) in lists.iter_mut().enumerate() {
            let mut keys = [0u32; 16];
            for (k, it) in keys.iter_mut().zip(items) {
                *k = ordered(it.c2(a));
            }
            for (i, r) in ranks16(&keys, m).into_iter().enumerate().take(m) {
                list[r as usize] = i as u8;
            }
        }
        return lists;
    }
    let mut keys = [0u64; N];
    for (a, list) in lists.iter_mut().enumerate() {
        for (i, it) in items.iter().enumerate() {
            keys[i] = (ordered(it.c2(a)) as u64) << 8 | i as u64;
        }
        keys[..m].sort_unstable();
        for (k, key) in keys[..m].iter().enumerate() {
            list[k] = *key as u8;
        }
    }
    lists
}

/// The rank of each of the first `m` (<= 16) keys among them, ties by index: where a
/// stable sort puts it. All pairs compared four at a time with SSE2 (a few hundred
/// vector instructions, no branches; a sort of a dozen keys mispredicts most compares).
#[cfg(target_arch = "x86_64")]
#[inline]
fn ranks16(keys: &[u32; 16], m: usize) -> [u32; 16] {
    // Signed compares: flip the top bit. Lanes from `m` on hold the largest key, so no
    // real key counts them (ties only count lower indices).
    let mut k = [i32::MAX; 16];
    for j in 0..m {
        k[j] = (keys[j] ^ 0x8000_0000) as i32;
    }
    // Only the lanes of real keys are ranked: four at a time, so up to 8 keys need half
    // the compares.
    if m <= 8 {
        ranks_q::<2>(&k, m)
    } else {
        ranks_q::<4>(&k, m)
    }
}

/// [`ranks16`] of the first `m` (<= 4 * `Q`) of the (sign-flipped) keys `k`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ranks_q<const Q: usize>(k: &[i32; 16], m: usize) -> [u32; 16] {
    use std::arch::x86_64::*;
    let mut out = [0u32; 16];
    // SAFETY: SSE2 is part of the x86_64 baseline; loads and stores are of local
    // 16-lane arrays, four lanes at a time (Q <= 4).
    unsafe {
        let kv: [__m128i; Q] = std::array::from_fn(|q| _mm_loadu_si128(k.as_ptr().add(4 * q).cast()));
        let iv: [__m128i; Q] = std::array::from_fn(|q| {
            let q = 4 * q as i32;
            _mm_setr_epi32(q, q + 1, q + 2, q + 3)
        });
        let mut acc = [_mm_setzero_si128(); Q];
        for j in 0..m {
            let (kj, jj) = (_mm_set1_epi32(k[j]), _mm_set1_epi32(j as i32));
            for q in 0..Q {
                // Key j comes before key i: smaller, or equal with a smaller index.
                let less = _mm_cmpgt_epi32(kv[q], kj);
                let tie = _mm_and_si128(_mm_cmpeq_epi32(kv[q], kj), _mm_cmpgt_epi32(iv[q], jj));
                acc[q] = _mm_sub_epi32(acc[q], _mm_or_si128(less, tie));
            }
        }
        for q in 0..Q {
            _mm_storeu_si128(out.as_mut_ptr().add(4 * q).cast(), acc[q]);
        }
    }
    out
}

/// The items of a small full-sweep build, with their boxes as lanes and their weights
/// (arrays of `N`, a power of two: an item index masked to `N` needs no bounds check).
struct Set<'a, const N: usize> {
    items: &'a [Item],
    boxes: &'a [Lanes; N],
    weights: &'a [f32; N],
}

/// The subtree over the items the three lists name (the same set, each sorted on its axis).
/// Returns its reference and its (box, primitive count, first sorted position).
fn small_range<const N: usize>(
    tree: &Tree,
    set: &Set<N>,
    lists: [&mut [u8]; 3],
    idx: u32,
    sc: &mut Scratch<N>,
) -> (u32, (Aabb, u32, u32)) {
    let m = lists[0].len();
    if m == 1 {
        let it = &set.items[lists[0][0] as usize];
        let head = if Tree::is_prim(it.r) { (it.aabb(), 1, it.r & !LEAF_PRIM) } else { tree.child_head(it.r) };
        return (it.r, head);
    }
    let (a, k) = best_split(set, &lists, &mut sc.right);
    let [x, y, z] = partition(lists, a, k, sc);
    let (xl, xr) = x.split_at_mut(k);
    let (yl, yr) = y.split_at_mut(k);
    let (zl, zr) = z.split_at_mut(k);
    let (lr, lh) = small_range(tree, set, [xl, yl, zl], idx + 1, sc);
    let (rr, rh) = small_range(tree, set, [xr, yr, zr], idx + k as u32, sc);
    (idx, tree.finalize_with(idx, [lr, rr], [lh, rh]))
}

/// The best full-sweep split of the items the three lists name (each sorted on its
/// axis, at least 2): (axis, number of items on the left). The first least cost wins,
/// axes in order.
#[inline]
fn best_split<const N: usize>(set: &Set<N>, lists: &[&mut [u8]; 3], right: &mut [f32; N]) -> (usize, usize) {
    let mut best = (f32::INFINITY, 0usize, lists[0].len() / 2);
    for (a, list) in lists.iter().enumerate() {
        let (cost, k) = sweep(set, list, right);
        if cost < best.0 {
            best = (cost, a, k);
        }
    }
    (best.1, best.2)
}

/// The best SAH split of the items `list` names, in its order (at least 2): (its cost
/// `area(L) * weight(L) + area(R) * weight(R)`, the left count; the first least). `right`
/// is working space.
#[inline]
fn sweep<const N: usize>(set: &Set<N>, list: &[u8], right: &mut [f32; N]) -> (f32, usize) {
    #[cfg(target_arch = "x86_64")]
    return sweep_sse(set, list, right);
    #[allow(unreachable_code)]
    sweep_scalar(set, list, right)
}

/// [`sweep_scalar`] with a box's eight lanes as two vectors: growing is `maxps(box, acc)`
/// (the plain compare of [`lanes_grow`]) and the area sums its three products in
/// [`lanes_area`]'s order, so every cost, and so the split, is the same bit for bit.
#[cfg(target_arch = "x86_64")]
fn sweep_sse<const N: usize>(set: &Set<N>, list: &[u8], right: &mut [f32; N]) -> (f32, usize) {
    use std::arch::x86_64::*;
    assert!(N.is_power_of_two());
    let m = list.len();
    let mut best = (f32::INFINITY, m / 2);
    // SAFETY: SSE2 is part of the x86_64 baseline; the loads read the two halves of an
    // eight-lane box of `set.boxes` (index masked to its length).
    unsafe {
        let area = |l: __m128, h: __m128| -> f32 {
            let d = _mm_add_ps(h, l);
            let p = _mm_mul_ps(d, _mm_shuffle_ps::<0b11_00_10_01>(d, d));
            let s = _mm_add_ss(p, _mm_shuffle_ps::<0b01>(p, p));
            _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps::<0b10>(p, p)))
        };
        let box_at = |j: usize| -> (__m128, __m128) {
            let b = &set.boxes[j & (N - 1)];
            (_mm_loadu_ps(b.as_ptr()), _mm_loadu_ps(b.as_ptr().add(4)))
        };
        let (mut l, mut h) = (_mm_set1_ps(f32::NEG_INFINITY), _mm_set1_ps(f32::NEG_INFINITY));
        let mut w = 0.0f32;
        for i in (1..m).rev() {
            let j = list[i] as usize;
            let (bl, bh) = box_at(j);
            (l, h) = (_mm_max_ps(bl, l), _mm_max_ps(bh, h));
            w += set.weights[j & (N - 1)];
            right[i & (N - 1)] = area(l, h) * w;
        }
        let (mut l, mut h) = (_mm_set1_ps(f32::NEG_INFINITY), _mm_set1_ps(f32::NEG_INFINITY));
        let mut lw = 0.0f32;
        for i in 1..m {
            let j = list[i - 1] as usize;
            let (bl, bh) = box_at(j);
            (l, h) = (_mm_max_ps(bl, l), _mm_max_ps(bh, h));
            lw += set.weights[j & (N - 1)];
            let cost = area(l, h) * lw + right[i & (N - 1)];
            if cost < best.0 {
                best = (cost, i);
            }
        }
    }
    best
}

/// The portable form of [`sweep`].
fn sweep_scalar<const N: usize>(set: &Set<N>, list: &[u8], right: &mut [f32; N]) -> (f32, usize) {
    let m = list.len();
    let mut best = (f32::INFINITY, m / 2);
    let mut acc = LANES_EMPTY;
    let mut w = 0.0f32;
    for i in (1..m).rev() {
        let j = list[i] as usize;
        lanes_grow(&mut acc, &set.boxes[j]);
        w += set.weights[j];
        right[i] = lanes_area(&acc) * w;
    }
    let mut acc = LANES_EMPTY;
    let mut lw = 0.0f32;
    for i in 1..m {
        let j = list[i - 1] as usize;
        lanes_grow(&mut acc, &set.boxes[j]);
        lw += set.weights[j];
        let cost = lanes_area(&acc) * lw + right[i];
        if cost < best.0 {
            best = (cost, i);
        }
    }
    best
}

/// Splits the three lists at `k` items of axis `a`'s order: the other two are partitioned
/// stably, so each half stays sorted on every axis.
fn partition<'l, const N: usize>(
    lists: [&'l mut [u8]; 3],
    a: usize,
    k: usize,
    sc: &mut Scratch<N>,
) -> [&'l mut [u8]; 3] {
    let m = lists[0].len();
    for (j, &i) in lists[a].iter().enumerate() {
        sc.left[i as usize] = j < k;
    }
    let mut parts = lists;
    for (b, list) in parts.iter_mut().enumerate() {
        if b == a {
            continue;
        }
        // Branch-free: which side an item goes to is unpredictable.
        let (mut nl, mut nr) = (0usize, k);
        for &i in list.iter() {
            let l = sc.left[i as usize] as usize;
            sc.tmp[l * nl + (1 - l) * nr] = i;
            nl += l;
            nr += 1 - l;
        }
        list.copy_from_slice(&sc.tmp[..m]);
    }
    parts
}

/// A bin: its box as lanes (growing it is two vector instructions), weight and count.
#[derive(Clone, Copy)]
struct Bin {
    b: Lanes,
    w: f32,
    n: u32,
}

impl Default for Bin {
    fn default() -> Bin {
        Bin { b: LANES_EMPTY, w: 0.0, n: 0 }
    }
}

type Bins = [[Bin; BINS]; 3];

#[inline]
fn bin_of(c: f32, lo: f32, scale: f32) -> usize {
    // Plain compares (a NaN comes out 0), then the convert.
    let x = (c - lo) * scale;
    let x = if x > 0.0 { x } else { 0.0 };
    let x = if x < (BINS - 1) as f32 { x } else { (BINS - 1) as f32 };
    x as usize
}

/// Bins every `stride`-th item.
#[inline]
fn bin_into(items: &[Item], stride: usize, cb: &Aabb, scale: &[f32; 3], bins: &mut Bins) {
    #[cfg(target_arch = "x86_64")]
    return bin_into_sse(items, stride, cb, scale, bins);
    #[allow(unreachable_code)]
    bin_into_scalar(items, stride, cb, scale, bins)
}

/// [`bin_into`] with the three axes as the lanes of one vector: the same operations as
/// [`bin_of`] and [`lanes_grow`] (`maxps(x, 0)`, `minps(x, 15)` and `maxps(item, bin)` are
/// their plain compares), so the same bins, bit for bit.
#[cfg(target_arch = "x86_64")]
fn bin_into_sse(items: &[Item], stride: usize, cb: &Aabb, scale: &[f32; 3], bins: &mut Bins) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; the loads and stores are of an item's
    // fields and of a bin's eight lanes (`b[0..4]`, `b[4..8]`), in bounds by their types.
    unsafe {
        let lo = _mm_setr_ps(cb.lo[0], cb.lo[1], cb.lo[2], 0.0);
        let sc = _mm_setr_ps(scale[0], scale[1], scale[2], 0.0);
        let (zero, top) = (_mm_setzero_ps(), _mm_set1_ps((BINS - 1) as f32));
        let sign = _mm_setr_ps(-0.0, -0.0, -0.0, 0.0);
        for it in items.iter().step_by(stride) {
            let l = _mm_setr_ps(it.lo[0], it.lo[1], it.lo[2], 0.0);
            let h = _mm_setr_ps(it.hi[0], it.hi[1], it.hi[2], 0.0);
            let x = _mm_mul_ps(_mm_sub_ps(_mm_add_ps(l, h), lo), sc);
            let mut k = [0i32; 4];
            _mm_storeu_si128(k.as_mut_ptr().cast(), _mm_cvttps_epi32(_mm_min_ps(_mm_max_ps(x, zero), top)));
            let nl = _mm_xor_ps(l, sign);
            let w = it.count as f32;
            for a in 0..3 {
                let bin = &mut bins[a][k[a] as usize];
                let p = bin.b.as_mut_ptr();
                _mm_storeu_ps(p, _mm_max_ps(nl, _mm_loadu_ps(p)));
                _mm_storeu_ps(p.add(4), _mm_max_ps(h, _mm_loadu_ps(p.add(4))));
                bin.w += w;
                bin.n += 1;
            }
        }
    }
}

fn bin_into_scalar(items: &[Item], stride: usize, cb: &Aabb, scale: &[f32; 3], bins: &mut Bins) {
    for it in items.iter().step_by(stride) {
        let b = lanes(it);
        let w = it.count as f32;
        for a in 0..3 {
            let k = bin_of(it.c2(a), cb.lo[a], scale[a]);
            let bin = &mut bins[a][k];
            lanes_grow(&mut bin.b, &b);
            bin.w += w;
            bin.n += 1;
        }
    }
}

/// Splits `items` (at least 2) in place; returns the left count and both sides'
/// centroid bounds.
fn split_binned(items: &mut [Item], cb: &Aabb) -> (usize, Aabb, Aabb) {
    let m = items.len();
    let ext: [f32; 3] = std::array::from_fn(|a| cb.hi[a] - cb.lo[a]);
    let halves = |items: &mut [Item]| {
        let h = items.len() / 2;
        let (l, r) = items.split_at(h);
        (h, centroid_bounds(l), centroid_bounds(r))
    };
    if !ext.iter().any(|&e| e > 0.0) {
        return halves(items);
    }
    let scale: [f32; 3] = std::array::from_fn(|a| if ext[a] > 0.0 { BINS as f32 * (1.0 - 1e-6) / ext[a] } else { 0.0 });
    // Which bin boundary is best is decided as well from a few thousand items as from all
    // of them: large ranges bin an evenly spaced sample (the partition still moves all).
    let stride = (m / SAMPLE).max(1);
    let bins = if m >= PAR_BIN {
        items
            .par_chunks(8192)
            .map(|c| {
                let mut b = [[Bin::default(); BINS]; 3];
                bin_into(c, stride, cb, &scale, &mut b);
                b
            })
            .reduce(
                || [[Bin::default(); BINS]; 3],
                |mut x, y| {
                    for a in 0..3 {
                        for k in 0..BINS {
                            lanes_grow(&mut x[a][k].b, &y[a][k].b);
                            x[a][k].w += y[a][k].w;
                            x[a][k].n += y[a][k].n;
                        }
                    }
                    x
                },
            )
    } else {
        let mut b = [[Bin::default(); BINS]; 3];
        bin_into(items, stride, cb, &scale, &mut b);
        b
    };
    let mut best = (f32::INFINITY, 0usize, 0usize);
    for a in 0..3 {
        if ext[a].is_nan() || ext[a] <= 0.0 {
            continue;
        }
        let mut ra = [0.0f32; BINS];
        let mut rw = [0.0f32; BINS];
        let mut rn = [0u32; BINS];
        // (An empty side's area is never used: its count is 0.)
        let (mut acc, mut w, mut n) = (LANES_EMPTY, 0.0f32, 0u32);
        for k in (1..BINS).rev() {
            lanes_grow(&mut acc, &bins[a][k].b);
            w += bins[a][k].w;
            n += bins[a][k].n;
            ra[k] = lanes_area(&acc);
            rw[k] = w;
            rn[k] = n;
        }
        let (mut lacc, mut lw, mut ln) = (LANES_EMPTY, 0.0f32, 0u32);
        for k in 1..BINS {
            lanes_grow(&mut lacc, &bins[a][k - 1].b);
            lw += bins[a][k - 1].w;
            ln += bins[a][k - 1].n;
            if ln == 0 || rn[k] == 0 {
                continue;
            }
            let cost = lanes_area(&lacc) * lw + ra[k] * rw[k];
            if cost < best.0 {
                best = (cost, a, k);
            }
        }
    }
    if !best.0.is_finite() {
        return halves(items);
    }
    let (_, a, k) = best;
    let (lo, sc) = (cb.lo[a], scale[a]);
    let (i, cl, cr) = partition_binned(items, |it| bin_of(it.c2(a), lo, sc) < k);
    if i == 0 || i == m {
        return halves(items);
    }
    (i, cl, cr)
}

/// Two-pointer partition of `items` by `left`; returns the left count and both sides'
/// (doubled) centroid bounds, grown with plain compares as vectors (items are finite, so
/// these are the bounds [`centroid_bounds`] gives, bit for bit).
#[cfg(target_arch = "x86_64")]
fn partition_binned(items: &mut [Item], left: impl Fn(&Item) -> bool) -> (usize, Aabb, Aabb) {
    use std::arch::x86_64::*;
    let m = items.len();
    // SAFETY: SSE2 is part of the x86_64 baseline; each load reads four floats of one
    // `Item` (`lo[0..3]` and `hi[0]`, or `hi[0..3]` and `r`: in bounds, lane 3 unused).
    unsafe {
        let c2 = |it: &Item| _mm_add_ps(_mm_loadu_ps(it.lo.as_ptr()), _mm_loadu_ps(it.hi.as_ptr()));
        let (mut llo, mut lhi) = (_mm_set1_ps(f32::INFINITY), _mm_set1_ps(f32::NEG_INFINITY));
        let (mut rlo, mut rhi) = (llo, lhi);
        let (mut i, mut j) = (0usize, m);
        loop {
            while i < j && left(&items[i]) {
                let c = c2(&items[i]);
                (llo, lhi) = (_mm_min_ps(c, llo), _mm_max_ps(c, lhi));
                i += 1;
            }
            while i < j && !left(&items[j - 1]) {
                let c = c2(&items[j - 1]);
                (rlo, rhi) = (_mm_min_ps(c, rlo), _mm_max_ps(c, rhi));
                j -= 1;
            }
            if i >= j {
                break;
            }
            items.swap(i, j - 1);
        }
        let get = |lo: __m128, hi: __m128| {
            let (mut l, mut h) = ([0.0f32; 4], [0.0f32; 4]);
            _mm_storeu_ps(l.as_mut_ptr(), lo);
            _mm_storeu_ps(h.as_mut_ptr(), hi);
            Aabb { lo: [l[0], l[1], l[2]], hi: [h[0], h[1], h[2]] }
        };
        (i, get(llo, lhi), get(rlo, rhi))
    }
}

/// The portable form of the partition above.
#[cfg(not(target_arch = "x86_64"))]
fn partition_binned(items: &mut [Item], left: impl Fn(&Item) -> bool) -> (usize, Aabb, Aabb) {
    let m = items.len();
    let (mut cl, mut cr) = (Aabb::EMPTY, Aabb::EMPTY);
    let grow_c = |acc: &mut Aabb, it: &Item| {
        for a in 0..3 {
            let c = it.c2(a);
            acc.lo[a] = acc.lo[a].min(c);
            acc.hi[a] = acc.hi[a].max(c);
        }
    };
    let (mut i, mut j) = (0usize, m);
    loop {
        while i < j && left(&items[i]) {
            grow_c(&mut cl, &items[i]);
            i += 1;
        }
        while i < j && !left(&items[j - 1]) {
            grow_c(&mut cr, &items[j - 1]);
            j -= 1;
        }
        if i >= j {
            break;
        }
        items.swap(i, j - 1);
    }
    (i, cl, cr)
}

/// `x`'s bits mapped so unsigned order is `total_cmp` order.
#[inline]
fn ordered(x: f32) -> u32 {
    let b = x.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// Full-sweep split: the best position over every axis, `items` left sorted on that axis.
/// Sorts (centroid, index) keys rather than the items themselves, and moves the items
/// once, into the winning axis's order.
fn split_sweep(items: &mut [Item]) -> usize {
    let m = items.len();
    if m == 2 {
        return 1;
    }
    const STACK: usize = REBUILD_MAX as usize;
    let mut keys_stack = [[0u64; STACK]; 3];
    let mut right_stack = [0.0f32; STACK];
    let (mut keys_heap, mut right_heap) = (Vec::new(), Vec::new());
    let (keys, right): (&mut [[u64; STACK]], &mut [f32]) = if m <= STACK {
        (&mut keys_stack[..], &mut right_stack[..m])
    } else {
        // Large ranges (the full-sweep reference) sort per axis on the heap.
        keys_heap.resize(3 * m.div_ceil(STACK), [0u64; STACK]);
        right_heap.resize(m, 0.0);
        (&mut keys_heap[..], &mut right_heap[..])
    };
    let mut best = (f32::INFINITY, 0usize, 0usize);
    let chunks = m.div_ceil(STACK);
    for a in 0..3 {
        let k: &mut [u64] = bytemuck::cast_slice_mut::<[u64; STACK], u64>(&mut keys[a * chunks..(a + 1) * chunks]);
        let k = &mut k[..m];
        for (i, it) in items.iter().enumerate() {
            k[i] = (ordered(it.c2(a)) as u64) << 32 | i as u64;
        }
        k.sort_unstable();
        let at = |j: usize| &items[k[j] as u32 as usize];
        let mut acc = Aabb::EMPTY;
        let mut w = 0.0f32;
        for i in (1..m).rev() {
            acc.grow(&at(i).aabb());
            w += at(i).count as f32;
            right[i] = acc.half_area() * w;
        }
        let mut lacc = Aabb::EMPTY;
        let mut lw = 0.0f32;
        for i in 1..m {
            lacc.grow(&at(i - 1).aabb());
            lw += at(i - 1).count as f32;
            let cost = lacc.half_area() * lw + right[i];
            if cost < best.0 {
                best = (cost, a, i);
            }
        }
    }
    if !best.0.is_finite() {
        return m / 2;
    }
    let a = best.1;
    let k: &[u64] = bytemuck::cast_slice::<[u64; STACK], u64>(&keys[a * chunks..(a + 1) * chunks]);
    let sorted: Vec<Item>;
    let mut small = [Item::default(); STACK];
    let src: &[Item] = if m <= STACK {
        for (j, key) in k[..m].iter().enumerate() {
            small[j] = items[*key as u32 as usize];
        }
        &small[..m]
    } else {
        sorted = k[..m].iter().map(|key| items[*key as u32 as usize]).collect();
        &sorted
    };
    items.copy_from_slice(src);
    best.2
}

/// What a build keeps in sorted order, which the SAH bottom reorders within clusters.
pub enum Payload<'a> {
    /// Triangles: vertices and (geometry, primitive index).
    Tris { verts: &'a mut [[f32; 9]], ids: &'a mut [[u32; 2]] },
    /// AABBs and instances: their references.
    Prims(&'a mut [PrimRef]),
}

impl<'a> Payload<'a> {
    fn split_at(self, mid: usize) -> (Payload<'a>, Payload<'a>) {
        match self {
            Payload::Tris { verts, ids } => {
                let (v0, v1) = verts.split_at_mut(mid);
                let (i0, i1) = ids.split_at_mut(mid);
                (Payload::Tris { verts: v0, ids: i0 }, Payload::Tris { verts: v1, ids: i1 })
            }
            Payload::Prims(p) => {
                let (p0, p1) = p.split_at_mut(mid);
                (Payload::Prims(p0), Payload::Prims(p1))
            }
        }
    }

    /// Item `i` as a one-primitive SAH item (its reference is its index here), and its
    /// geometry.
    #[inline]
    fn item(&self, i: usize) -> (Item, u32) {
        let (b, g) = match self {
            Payload::Tris { verts, ids } => (super::input::verts_box(&verts[i]), ids[i][0]),
            Payload::Prims(p) => (p[i].aabb(), p[i].geom),
        };
        (Item { lo: b.lo, hi: b.hi, r: i as u32, count: 1 }, g)
    }

    /// Reorders entries `first..first + order.len()` so the `j`-th is the one that was at
    /// `first + order[j]`.
    fn reorder(&mut self, first: usize, order: &[u8]) {
        fn apply<T: Copy + Default, const N: usize>(s: &mut [T], order: &[u8]) {
            let mut tmp = [T::default(); N];
            tmp[..s.len()].copy_from_slice(s);
            for (d, &o) in s.iter_mut().zip(order) {
                *d = tmp[o as usize];
            }
        }
        let end = first + order.len();
        match self {
            Payload::Tris { verts, ids } => {
                apply::<_, { REBUILD_MAX as usize }>(&mut verts[first..end], order);
                apply::<_, { REBUILD_MAX as usize }>(&mut ids[first..end], order);
            }
            Payload::Prims(p) => apply::<_, { REBUILD_MAX as usize }>(&mut p[first..end], order),
        }
    }
}

/// Positions per parallel task of the bottom (whole clusters).
const BOTTOM_TASK: usize = 4096;

/// The SAH builder's bottom, planned before the tree exists. The sorted primitives are cut
/// into the linear BVH's maximal subtrees of at most `cluster` (<= [`REBUILD_MAX`])
/// primitives (from the keys alone); each is split by SAH sweeps down to leaves of at
/// most `max_leaf` primitives of one geometry, and its primitives are reordered so that
/// every subtree of that split is a run of positions (which multi-primitive leaves need).
/// The split is recorded in `plan` by node number, as [`realize_bottom`] numbers nodes: the
/// number of primitives on the left, or 0 for a leaf. Returns the clusters' first
/// positions.
pub fn plan_bottom(keys: &[u64], data: Payload, cluster: u32, max_leaf: u32, plan: &mut [u8]) -> Vec<u32> {
    assert!((1..=REBUILD_MAX).contains(&cluster));
    let n = keys.len();
    // The linear BVH's maximal subtrees of at most `cluster` primitives: its leaves at
    // that size, found locally and in parallel.
    let starts = super::lbvh::run_starts(keys, cluster as usize, |_, _| true);
    // Tasks of whole clusters, split off one after another.
    let mut tasks = Vec::new();
    let (mut data, mut plan, mut k, mut at) = (data, plan, 0usize, 0usize);
    while k < starts.len() {
        let kend = starts.partition_point(|&s| (s as usize) < at + BOTTOM_TASK).max(k + 1);
        let end = starts.get(kend).map_or(n, |&s| s as usize);
        let (d0, d1) = data.split_at(end - at);
        let (p0, p1) = std::mem::take(&mut plan).split_at_mut(end - at);
        tasks.push((k..kend, at, d0, p0));
        (data, plan, k, at) = (d1, p1, kend, end);
    }
    tasks.into_par_iter().for_each(|(ks, base, mut data, plan)| {
        for k in ks {
            let first = starts[k] as usize - base;
            let end = starts.get(k + 1).map_or(n, |&s| s as usize) - base;
            match end - first {
                1 => {}
                c if c <= 16 => plan_cluster::<16>(&mut data, first, c, max_leaf as usize, plan),
                c if c <= 32 => plan_cluster::<32>(&mut data, first, c, max_leaf as usize, plan),
                c => plan_cluster::<{ REBUILD_MAX as usize }>(&mut data, first, c, max_leaf as usize, plan),
            }
        }
    });
    starts
}

/// Plans one cluster of `c` (2..=N) primitives at `first` (of this task's data and plan).
fn plan_cluster<const N: usize>(data: &mut Payload, first: usize, c: usize, max_leaf: usize, plan: &mut [u8]) {
    let mut items = [Item::default(); N];
    let mut geoms = [0u32; N];
    for i in 0..c {
        (items[i], geoms[i]) = data.item(first + i);
    }
    if c <= max_leaf && geoms[1..c].iter().all(|&g| g == geoms[0]) {
        plan[first] = 0;
        return;
    }
    let items = &items[..c];
    let mut boxes = [LANES_EMPTY; N];
    for (b, it) in boxes.iter_mut().zip(items) {
        *b = lanes(it);
    }
    let mut list = [0u8; N];
    for (i, l) in list.iter_mut().enumerate() {
        *l = i as u8;
    }
    let mut order = [0u8; N];
    let mut placed = 0;
    let mut out =
        Plan { plan: &mut plan[first..first + c], order: &mut order, placed: &mut placed, geoms: &geoms, max_leaf };
    let set = Set { items, boxes: &boxes, weights: &[1.0f32; N] };
    plan_range(&set, &mut list[..c], NO_AXIS, 0, &mut out);
    data.reorder(first, &order[..c]);
}

/// Where [`plan_range`] records a cluster's split.
struct Plan<'a> {
    /// By node number within the cluster.
    plan: &'a mut [u8],
    /// The items in their new order, as placed so far.
    order: &'a mut [u8],
    placed: &'a mut usize,
    geoms: &'a [u32],
    max_leaf: usize,
}

/// No axis: a list in no particular order.
const NO_AXIS: usize = 3;

/// A range's second-longest centroid axis is swept too when its extent is at least this
/// fraction of the longest's (sweeping only the longest: SAH cost +1-3 %).
const SECOND_AXIS: f32 = 0.5;

/// Records the split of the items `list` names, whose node is `idx` (the cluster's
/// numbering: a range's node, then its left range's nodes, then its right range's), and
/// places its items in leaf order. A range is split by SAH sweep on the longest axis of its
/// centroids, and on the second longest when that is not much shorter ([`SECOND_AXIS`]),
/// its items ranked afresh on each (unless the list is already in that order:
/// `sorted_on`). Sweeping all three axes of every range, with the three orders kept through
/// every split, cost ~40 % more plan instructions (14 % of the whole build's) for SAH costs
/// 0.3-1 % lower (docs/PERFORMANCE.md).
fn plan_range<const N: usize>(set: &Set<N>, list: &mut [u8], sorted_on: usize, idx: usize, out: &mut Plan) {
    let m = list.len();
    let g = out.geoms[list[0] as usize];
    if m == 1 || (m <= out.max_leaf && list.iter().all(|&i| out.geoms[i as usize] == g)) {
        if m > 1 {
            out.plan[idx] = 0;
        }
        out.order[*out.placed..*out.placed + m].copy_from_slice(list);
        *out.placed += m;
        return;
    }
    let (a, a2) = longest_axes(set.items, list);
    if a != sorted_on {
        rank_on::<N>(set.items, list, a);
    }
    let mut right = [0.0f32; N];
    let (cost, k) = sweep(set, list, &mut right);
    let (a, k) = match a2 {
        Some(b) => {
            let mut other = [0u8; N];
            let other = &mut other[..m];
            other.copy_from_slice(list);
            if b != sorted_on {
                rank_on::<N>(set.items, other, b);
            }
            let (c2, k2) = sweep(set, other, &mut right);
            if c2 < cost {
                list.copy_from_slice(other);
                (b, k2)
            } else {
                (a, k)
            }
        }
        None => (a, k),
    };
    out.plan[idx] = k as u8;
    let (l, r) = list.split_at_mut(k);
    plan_range(set, l, a, idx + 1, out);
    plan_range(set, r, a, idx + k, out);
}

/// Reorders `list` (at most `N` <= 256 items) by the items' centroids on axis `a`, ties in
/// list order.
fn rank_on<const N: usize>(items: &[Item], list: &mut [u8], a: usize) {
    let m = list.len();
    #[cfg(target_arch = "x86_64")]
    if m <= 16 {
        let mut keys = [0u32; 16];
        for (k, &i) in keys.iter_mut().zip(list.iter()) {
            *k = ordered(items[i as usize].c2(a));
        }
        let mut sorted = [0u8; 16];
        for (j, r) in ranks16(&keys, m).into_iter().enumerate().take(m) {
            sorted[r as usize & 15] = list[j];
        }
        list.copy_from_slice(&sorted[..m]);
        return;
    }
    let mut keys = [0u64; N];
    for (k, (key, &i)) in keys.iter_mut().zip(list.iter()).enumerate() {
        *key = (ordered(items[i as usize].c2(a)) as u64) << 16 | (k as u64) << 8 | i as u64;
    }
    keys[..m].sort_unstable();
    for (l, key) in list.iter_mut().zip(&keys[..m]) {
        *l = *key as u8;
    }
}

/// The axis of largest centroid extent of the items `list` names (the first of equals),
/// and the second-largest when its extent is at least [`SECOND_AXIS`] of that.
#[inline]
fn longest_axes(items: &[Item], list: &[u8]) -> (usize, Option<usize>) {
    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for &i in list {
        let it = &items[i as usize];
        for a in 0..3 {
            let c = it.c2(a);
            lo[a] = if c < lo[a] { c } else { lo[a] };
            hi[a] = if c > hi[a] { c } else { hi[a] };
        }
    }
    let e = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
    let a = if e[0] >= e[1] && e[0] >= e[2] {
        0
    } else if e[1] >= e[2] {
        1
    } else {
        2
    };
    let (x, y) = ((a + 1) % 3, (a + 2) % 3);
    let b = if e[x] >= e[y] { x } else { y };
    (a, if e[b] >= SECOND_AXIS * e[a] { Some(b) } else { None })
}

/// The nodes of the planned clusters (see [`plan_bottom`]), one item per cluster into
/// `out`, left to right; returns how many.
pub fn realize_bottom(tree: &Tree, starts: &[u32], plan: &[u8], out: &mut [Item]) -> usize {
    let n = tree.keys.len() as u32;
    let m = starts.len();
    out[..m].par_iter_mut().enumerate().with_min_len(256).for_each(|(k, it)| {
        let first = starts[k];
        let count = starts.get(k + 1).map_or(n, |&s| s) - first;
        let (r, (b, ..)) = realize(tree, plan, first, first, count);
        *it = Item { lo: b.lo, hi: b.hi, r, count };
    });
    m
}

/// The planned subtree over `count` positions from `first`, whose node is `idx`.
fn realize(tree: &Tree, plan: &[u8], idx: u32, first: u32, count: u32) -> (u32, (Aabb, u32, u32)) {
    if count == 1 {
        return (LEAF_PRIM | first, (tree.prim_box(first), 1, first));
    }
    let k = plan[idx as usize] as u32;
    if k == 0 {
        return (idx, tree.make_leaf(idx, first, count));
    }
    let (lr, lh) = realize(tree, plan, idx + 1, first, k);
    let (rr, rh) = realize(tree, plan, idx + k, first + k, count - k);
    (idx, tree.finalize_with(idx, [lr, rr], [lh, rh]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The axis lists as a sort of (ordered centroid, index) keys defines them.
    fn sorted_lists(items: &[Item]) -> [Vec<u8>; 3] {
        std::array::from_fn(|a| {
            let mut keys: Vec<u64> =
                items.iter().enumerate().map(|(i, it)| (ordered(it.c2(a)) as u64) << 8 | i as u64).collect();
            keys.sort_unstable();
            keys.iter().map(|&k| k as u8).collect()
        })
    }

    #[test]
    fn clusters_are_the_radix_tree_ranges() {
        // The definition: split a range at its keys' highest differing bit until it holds
        // at most `max` keys.
        fn cut(keys: &[u64], lo: usize, hi: usize, max: usize, out: &mut Vec<u32>) {
            if hi - lo <= max {
                out.push(lo as u32);
                return;
            }
            let bit = 63 - (keys[lo] ^ keys[hi - 1]).leading_zeros();
            let j = lo + 1 + keys[lo + 1..hi].partition_point(|k| k & (1u64 << bit) == 0);
            cut(keys, lo, j, max, out);
            cut(keys, j, hi, max, out);
        }
        let mut rng = vortex_model::rtu::reference::Rng::new(0xc1);
        for round in 0..300 {
            let n = 1 + round * 37;
            let codes = if round % 3 == 0 { 64 } else { 1 << 30 };
            let mut keys: Vec<u64> = (0..n as u64).map(|i| (rng.below(codes)) << 32 | i).collect();
            keys.sort_unstable();
            for max in [1usize, 4, 16, 64] {
                let mut want = Vec::new();
                cut(&keys, 0, n, max, &mut want);
                assert_eq!(super::super::lbvh::run_starts(&keys, max, |_, _| true), want, "round {round}, max {max}");
            }
        }
    }

    #[test]
    fn vector_sweep_is_the_scalar_sweep() {
        let mut rng = vortex_model::rtu::reference::Rng::new(0x5e);
        for round in 0..3000 {
            let m = 2 + round % 15;
            let items: Vec<Item> = (0..m)
                .map(|_| {
                    let c: [f32; 3] = std::array::from_fn(|_| rng.range(-5.0, 5.0));
                    let e: [f32; 3] = std::array::from_fn(|_| rng.range(0.0, 2.0));
                    Item {
                        lo: std::array::from_fn(|a| c[a] - e[a]),
                        hi: std::array::from_fn(|a| c[a] + e[a]),
                        r: 0,
                        count: 1,
                    }
                })
                .collect();
            let mut boxes = [LANES_EMPTY; 16];
            let mut weights = [0.0f32; 16];
            for (i, it) in items.iter().enumerate() {
                boxes[i] = lanes(it);
                weights[i] = 1.0 + rng.below(3) as f32;
            }
            let mut lists = axis_lists::<16>(&items);
            let [l0, l1, l2] = &mut lists;
            let lists = [&mut l0[..m], &mut l1[..m], &mut l2[..m]];
            let set = Set { items: &items, boxes: &boxes, weights: &weights };
            let mut right = [0.0f32; 16];
            for list in &lists {
                let got = sweep(&set, list, &mut right);
                assert_eq!(got, sweep_scalar(&set, list, &mut right), "round {round}");
            }
        }
    }

    #[test]
    fn vector_binning_is_the_scalar_binning() {
        let mut rng = vortex_model::rtu::reference::Rng::new(0xb1);
        for round in 0..200 {
            let items: Vec<Item> = (0..1 + round * 7)
                .map(|_| {
                    let c: [f32; 3] = std::array::from_fn(|_| rng.range(-50.0, 50.0));
                    let e: [f32; 3] = std::array::from_fn(|_| rng.range(0.0, 3.0));
                    let lo = std::array::from_fn(|a| c[a] - e[a]);
                    let hi = std::array::from_fn(|a| c[a] + e[a]);
                    Item { lo, hi, r: 0, count: 1 + rng.below(4) as u32 }
                })
                .collect();
            let cb = centroid_bounds(&items);
            let scale: [f32; 3] = std::array::from_fn(|a| {
                let e = cb.hi[a] - cb.lo[a];
                if e > 0.0 {
                    BINS as f32 * (1.0 - 1e-6) / e
                } else {
                    0.0
                }
            });
            let stride = 1 + round % 3;
            let (mut a, mut b) = ([[Bin::default(); BINS]; 3], [[Bin::default(); BINS]; 3]);
            bin_into(&items, stride, &cb, &scale, &mut a);
            bin_into_scalar(&items, stride, &cb, &scale, &mut b);
            for ax in 0..3 {
                for k in 0..BINS {
                    let (x, y) = (&a[ax][k], &b[ax][k]);
                    assert_eq!(x.b.map(f32::to_bits), y.b.map(f32::to_bits), "round {round} axis {ax} bin {k}");
                    assert_eq!((x.w.to_bits(), x.n), (y.w.to_bits(), y.n));
                }
            }
        }
    }

    #[test]
    fn axis_lists_are_the_stable_centroid_orders() {
        let mut rng = vortex_model::rtu::reference::Rng::new(0x5a4);
        for round in 0..20_000 {
            let m = 1 + round % 20;
            // Few distinct values in some rounds (ties), signed zeros and big spreads in others.
            let vals = [0.0f32, -0.0, 1.0, -1.0, 1e30, -1e30, 3.5];
            let items: Vec<Item> = (0..m)
                .map(|_| {
                    let mut pick = || {
                        let r = rng.next_u64();
                        if round % 3 == 0 {
                            vals[(r % vals.len() as u64) as usize]
                        } else {
                            (r % 2001) as f32 - 1000.0
                        }
                    };
                    let (lo, hi): ([f32; 3], [f32; 3]) =
                        (std::array::from_fn(|_| pick()), std::array::from_fn(|_| pick()));
                    Item { lo, hi, r: 0, count: 1 }
                })
                .collect();
            let got = axis_lists::<32>(&items);
            let want = sorted_lists(&items);
            for a in 0..3 {
                assert_eq!(&got[a][..m], &want[a][..], "round {round}, axis {a}: {items:?}");
            }
        }
    }
}
