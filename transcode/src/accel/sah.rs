//! Top-down binned-SAH builder producing a W-wide tree directly.
//!
//! A wide node starts with one child holding all of its primitives and keeps splitting the
//! child with the largest surface area (binned SAH over primitive centroids, 16 bins on
//! each axis) until it has W children or every child is a single primitive. This is the
//! greedy collapse of a binary SAH tree into W-wide nodes, done without materialising the
//! binary tree. Each child range then becomes a wide node of its own (in parallel when
//! large). Coincident centroids are split by count; past a depth bound the split falls
//! back to the object median, which bounds the depth of pathological inputs.

use super::input::Aabb;
use rayon::prelude::*;

const BINS: usize = 16;
/// Ranges at least this large bin and recurse in parallel.
const PAR_MIN: usize = 16 * 1024;
/// Wide levels past which splits use the object median.
const MEDIAN_DEPTH: u32 = 40;

/// A child of a wide node.
pub enum Child {
    /// A single primitive (its builder id).
    Leaf(u32),
    Node(Box<WNode>),
}

pub struct WNode {
    pub count: usize,
    pub boxes: [Aabb; 6],
    pub kids: [Child; 6],
    /// Bytes of this node's subtree laid out (the node and every record below it).
    pub bytes: u64,
    /// Internal nodes in the subtree, this one included.
    pub nodes: u64,
}

pub struct Ctx<'a> {
    pub boxes: &'a [Aabb],
    pub cents: &'a [[f32; 3]],
    pub width: usize,
    pub node_bytes: u64,
    /// Leaf record bytes of a primitive.
    pub leaf_bytes: &'a (dyn Fn(u32) -> u64 + Sync),
}

#[derive(Clone, Copy)]
struct Bin {
    count: u32,
    b: Aabb,
}

impl Default for Bin {
    fn default() -> Self {
        Bin { count: 0, b: Aabb::EMPTY }
    }
}

type Bins = [[Bin; BINS]; 3];

fn bounds_of(ctx: &Ctx, idx: &[u32]) -> Aabb {
    let f = |acc: Aabb, &i: &u32| acc.union(&ctx.boxes[i as usize]);
    if idx.len() >= PAR_MIN {
        idx.par_chunks(4096).map(|c| c.iter().fold(Aabb::EMPTY, f)).reduce(|| Aabb::EMPTY, |a, b| a.union(&b))
    } else {
        idx.iter().fold(Aabb::EMPTY, f)
    }
}

fn centroid_bounds(ctx: &Ctx, idx: &[u32]) -> Aabb {
    let f = |mut acc: Aabb, &i: &u32| {
        let c = &ctx.cents[i as usize];
        for a in 0..3 {
            acc.lo[a] = acc.lo[a].min(c[a]);
            acc.hi[a] = acc.hi[a].max(c[a]);
        }
        acc
    };
    if idx.len() >= PAR_MIN {
        idx.par_chunks(4096).map(|c| c.iter().fold(Aabb::EMPTY, f)).reduce(|| Aabb::EMPTY, |a, b| a.union(&b))
    } else {
        idx.iter().fold(Aabb::EMPTY, f)
    }
}

#[inline]
fn bin_of(c: f32, lo: f32, scale: f32) -> usize {
    (((c - lo) * scale) as usize).min(BINS - 1)
}

fn bin_into(ctx: &Ctx, idx: &[u32], cb: &Aabb, scale: &[f32; 3], bins: &mut Bins) {
    for &i in idx {
        let c = &ctx.cents[i as usize];
        let b = &ctx.boxes[i as usize];
        for a in 0..3 {
            let k = bin_of(c[a], cb.lo[a], scale[a]);
            bins[a][k].count += 1;
            bins[a][k].b.grow(b);
        }
    }
}

fn bin(ctx: &Ctx, idx: &[u32], cb: &Aabb, scale: &[f32; 3]) -> Bins {
    let mut bins = Bins::default();
    if idx.len() >= PAR_MIN {
        let parts: Vec<Bins> = idx
            .par_chunks(8192)
            .map(|c| {
                let mut b = Bins::default();
                bin_into(ctx, c, cb, scale, &mut b);
                b
            })
            .collect();
        for p in &parts {
            for a in 0..3 {
                for k in 0..BINS {
                    bins[a][k].count += p[a][k].count;
                    bins[a][k].b.grow(&p[a][k].b);
                }
            }
        }
    } else {
        bin_into(ctx, idx, cb, scale, &mut bins);
    }
    bins
}

/// In-place partition; returns the number of elements for which `left` holds.
fn partition(idx: &mut [u32], left: impl Fn(u32) -> bool) -> usize {
    let (mut i, mut j) = (0, idx.len());
    loop {
        while i < j && left(idx[i]) {
            i += 1;
        }
        while i < j && !left(idx[j - 1]) {
            j -= 1;
        }
        if i >= j {
            return i;
        }
        idx.swap(i, j - 1);
        i += 1;
        j -= 1;
    }
}

/// Splits `idx` (at least 2 primitives) in two; returns the left count and both bounds.
fn split(ctx: &Ctx, idx: &mut [u32], depth: u32) -> (usize, Aabb, Aabb) {
    let n = idx.len();
    if n == 2 {
        return (1, ctx.boxes[idx[0] as usize], ctx.boxes[idx[1] as usize]);
    }
    let cb = centroid_bounds(ctx, idx);
    let ext = [cb.hi[0] - cb.lo[0], cb.hi[1] - cb.lo[1], cb.hi[2] - cb.lo[2]];
    let axis_max = (0..3).max_by(|&a, &b| ext[a].total_cmp(&ext[b])).unwrap();
    let median = |idx: &mut [u32], axis: Option<usize>| {
        let m = n / 2;
        if let Some(a) = axis {
            idx.select_nth_unstable_by(m, |&x, &y| ctx.cents[x as usize][a].total_cmp(&ctx.cents[y as usize][a]));
        }
        let (l, r) = idx.split_at(m);
        (m, bounds_of(ctx, l), bounds_of(ctx, r))
    };
    if ext[axis_max] <= 0.0 || ext[axis_max].is_nan() {
        return median(idx, None);
    }
    if depth > MEDIAN_DEPTH {
        return median(idx, Some(axis_max));
    }
    let scale: [f32; 3] = std::array::from_fn(|a| if ext[a] > 0.0 { BINS as f32 * (1.0 - 1e-6) / ext[a] } else { 0.0 });
    let bins = bin(ctx, idx, &cb, &scale);
    let mut best = (f32::INFINITY, 0usize, 0usize, Aabb::EMPTY, Aabb::EMPTY);
    for a in 0..3 {
        if ext[a] <= 0.0 || ext[a].is_nan() {
            continue;
        }
        // Right-to-left sweep of areas and counts.
        let mut rb = [Aabb::EMPTY; BINS];
        let mut rc = [0u32; BINS];
        let (mut acc, mut cnt) = (Aabb::EMPTY, 0u32);
        for k in (1..BINS).rev() {
            acc.grow(&bins[a][k].b);
            cnt += bins[a][k].count;
            rb[k] = acc;
            rc[k] = cnt;
        }
        let (mut lacc, mut lcnt) = (Aabb::EMPTY, 0u32);
        for k in 1..BINS {
            lacc.grow(&bins[a][k - 1].b);
            lcnt += bins[a][k - 1].count;
            if lcnt == 0 || rc[k] == 0 {
                continue;
            }
            let cost = lacc.half_area() * lcnt as f32 + rb[k].half_area() * rc[k] as f32;
            if cost < best.0 {
                best = (cost, a, k, lacc, rb[k]);
            }
        }
    }
    if !best.0.is_finite() {
        return median(idx, Some(axis_max));
    }
    let (_, a, k, lb, rb) = best;
    let (lo, sc) = (cb.lo[a], scale[a]);
    let m = partition(idx, |i| bin_of(ctx.cents[i as usize][a], lo, sc) < k);
    if m == 0 || m == n {
        return median(idx, Some(axis_max));
    }
    (m, lb, rb)
}

/// Builds the wide node over `idx` (at least 2 primitives) whose bounds are `bounds`.
pub fn build_node(ctx: &Ctx, idx: &mut [u32], bounds: Aabb, depth: u32) -> WNode {
    // Child ranges: (start, end, bounds), contiguous and in order.
    let mut parts: Vec<(usize, usize, Aabb)> = Vec::with_capacity(ctx.width);
    parts.push((0, idx.len(), bounds));
    while parts.len() < ctx.width {
        let pick = parts
            .iter()
            .enumerate()
            .filter(|(_, p)| p.1 - p.0 > 1)
            .max_by(|x, y| x.1 .2.half_area().total_cmp(&y.1 .2.half_area()))
            .map(|(i, _)| i);
        let Some(i) = pick else { break };
        let (s, e, _) = parts[i];
        let (m, lb, rb) = split(ctx, &mut idx[s..e], depth);
        parts[i] = (s, s + m, lb);
        parts.insert(i + 1, (s + m, e, rb));
    }
    // Disjoint sub-slices, one per child.
    let mut slices: Vec<(&mut [u32], Aabb)> = Vec::with_capacity(parts.len());
    let mut rest = idx;
    let mut at = 0;
    for &(s, e, b) in &parts {
        let (_, tail) = rest.split_at_mut(s - at);
        let (mine, tail) = tail.split_at_mut(e - s);
        slices.push((mine, b));
        rest = tail;
        at = e;
    }
    let make = |(sl, b): (&mut [u32], Aabb)| -> (Child, Aabb, u64, u64) {
        if sl.len() == 1 {
            (Child::Leaf(sl[0]), b, (ctx.leaf_bytes)(sl[0]), 0)
        } else {
            let nd = build_node(ctx, sl, b, depth + 1);
            let (bytes, nodes) = (nd.bytes, nd.nodes);
            (Child::Node(Box::new(nd)), b, bytes, nodes)
        }
    };
    let total: usize = slices.iter().map(|s| s.0.len()).sum();
    let built: Vec<(Child, Aabb, u64, u64)> = if total >= PAR_MIN {
        slices.into_par_iter().map(make).collect()
    } else {
        slices.into_iter().map(make).collect()
    };
    let mut node = WNode {
        count: built.len(),
        boxes: [Aabb::EMPTY; 6],
        kids: std::array::from_fn(|_| Child::Leaf(u32::MAX)),
        bytes: ctx.node_bytes,
        nodes: 1,
    };
    for (c, (kid, b, bytes, nodes)) in built.into_iter().enumerate() {
        node.boxes[c] = b;
        node.kids[c] = kid;
        node.bytes += bytes;
        node.nodes += nodes;
    }
    node
}

/// Builds the whole tree; `None` for no primitives.
pub fn build(ctx: &Ctx) -> Option<(Child, Aabb)> {
    let n = ctx.boxes.len();
    if n == 0 {
        return None;
    }
    let mut idx: Vec<u32> = (0..n as u32).collect();
    let bounds = bounds_of(ctx, &idx);
    if n == 1 {
        return Some((Child::Leaf(0), bounds));
    }
    let root = build_node(ctx, &mut idx, bounds, 0);
    Some((Child::Node(Box::new(root)), bounds))
}
