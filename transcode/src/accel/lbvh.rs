//! Linear BVH (the fast builder): over primitives sorted by Morton code, the binary radix
//! tree is the Cartesian tree of the neighbour differences `key[i] ^ key[i + 1]` (the
//! split between positions i and i+1 is higher in the tree the higher the first bit in
//! which the two keys differ). The top splits are found by binary search for the maximum
//! difference, and the ranges below them are built in parallel, each by one left-to-right
//! pass with a stack. A node is finalised (box, count, leaf decision, wide size) as soon as
//! both of its subtrees are complete.
//!
//! Internal node `i` (0 <= i < n - 1) is the split between sorted positions i and i + 1.

use super::input::Aabb;
use super::tree::{Tree, LEAF_PRIM};

/// A subtree's (box, primitive count, first sorted position), as finalisation needs it.
type Head = (Aabb, u32, u32);

/// Ranges at most this long are built by one sequential pass (at 100k primitives on two
/// threads, 32k left three or four tasks and the threads idle in turn).
const SEQ_MAX: usize = 1 << 12;

/// Builds the tree over the `n = tree.keys.len()` sorted primitives; returns the root's
/// child reference. Uses nodes `0..n - 1`.
pub fn build(tree: &Tree) -> Option<u32> {
    let n = tree.keys.len();
    if n == 0 {
        return None;
    }
    let seq = SEQ_MAX.max(n / (8 * rayon::current_num_threads().max(1)));
    if tree.max_leaf > 1 && n > 1 {
        return Some(Clustered::new(tree).range(0, n, seq));
    }
    Some(range(tree, 0, n, seq))
}

#[inline]
fn delta(keys: &[u64], i: usize) -> u64 {
    keys[i] ^ keys[i + 1]
}

/// The subtree over sorted positions `lo..hi`.
fn range(tree: &Tree, lo: usize, hi: usize, seq: usize) -> u32 {
    if hi - lo == 1 {
        return LEAF_PRIM | lo as u32;
    }
    if hi - lo <= seq {
        return sequential(tree, lo, hi);
    }
    // The root of this range: the largest difference. Keys are distinct (they end in the
    // primitive index), so the range's keys share the bits above the highest bit in which
    // its first and last keys differ, and exactly one neighbour pair differs in it: where
    // that bit turns on, found by binary search.
    let keys = tree.keys;
    let bit = 63 - (keys[lo] ^ keys[hi - 1]).leading_zeros();
    let m = lo + keys[lo + 1..hi].partition_point(|k| k & (1u64 << bit) == 0);
    let (l, r) = rayon::join(|| range(tree, lo, m + 1, seq), || range(tree, m + 1, hi, seq));
    tree.nodes.set_kids(m as u32, [l, r]);
    tree.finalize(m as u32);
    m as u32
}

/// One left-to-right pass with a stack over positions `lo..hi` (at least 2).
fn sequential(tree: &Tree, lo: usize, hi: usize) -> u32 {
    let keys = tree.keys;
    let mut stack: Vec<u32> = Vec::with_capacity(128);
    for i in lo..hi - 1 {
        let d = delta(keys, i);
        let mut left = LEAF_PRIM | i as u32;
        while let Some(&t) = stack.last() {
            if delta(keys, t as usize) >= d {
                break;
            }
            stack.pop();
            tree.finalize(t);
            left = t;
        }
        tree.nodes.set_kids(i as u32, [left, LEAF_PRIM | (i as u32 + 1)]);
        if let Some(&t) = stack.last() {
            tree.nodes.set_right(t, i as u32);
        }
        stack.push(i as u32);
    }
    let mut root = 0;
    while let Some(t) = stack.pop() {
        tree.finalize(t);
        root = t;
    }
    root
}

/// First sorted positions of the maximal subtrees of at most `max` primitives for which
/// `uniform(first, count)` holds (and of the single primitives left over), ascending: the
/// runs the radix tree over `keys` splits into at that size. Which splits lie *between*
/// runs is decided locally, in parallel (see [`between`]).
pub fn run_starts(keys: &[u64], max: usize, uniform: impl Fn(u32, u32) -> bool + Sync) -> Vec<u32> {
    use rayon::prelude::*;
    let n = keys.len();
    let chunk = (n / (16 * rayon::current_num_threads().max(1))).max(4096);
    let parts: Vec<Vec<u32>> = (0..n.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            let (lo, hi) = (c * chunk, ((c + 1) * chunk).min(n));
            // Position p > 0 starts a run when the split before it is between runs.
            let mut v = Vec::with_capacity((hi - lo) / 2);
            if lo == 0 {
                v.push(0);
            }
            for p in lo.max(1)..hi {
                if between(keys, p - 1, max, &uniform) {
                    v.push(p as u32);
                }
            }
            v
        })
        .collect();
    let mut starts = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    for p in parts {
        starts.extend_from_slice(&p);
    }
    starts
}

/// True when split `i` lies between runs: the subtree it heads spans more than `max`
/// positions, or positions that are not `uniform`. The span ends at the nearest split on
/// the left with a difference at least as large (the sequential pass keeps an equal one
/// above) and the nearest on the right with a larger one. (Calling a split inside a leaf
/// "between" would only cost time: finalisation makes the node above it the same leaf
/// again.)
#[inline(always)]
fn between(keys: &[u64], i: usize, max: usize, uniform: &impl Fn(u32, u32) -> bool) -> bool {
    let d = delta(keys, i);
    // The span is `left` splits before `i` and `right` after it (positions
    // `i - left..=i + 1 + right`); stop once it is too long. Neighbour pairs as windows:
    // no bounds check a step.
    let mut left = 0;
    for w in keys[..=i].windows(2).rev() {
        if w[0] ^ w[1] >= d {
            break;
        }
        left += 1;
        if left + 2 > max {
            return true;
        }
    }
    let mut right = 0;
    for w in keys[i + 1..].windows(2) {
        if w[0] ^ w[1] > d {
            break;
        }
        right += 1;
        if left + right + 2 > max {
            return true;
        }
    }
    let (first, count) = (i - left, left + right + 2);
    count > max || !uniform(first as u32, count as u32)
}

/// The linear BVH with multi-primitive leaves, built over its leaves rather than its
/// primitives. Its leaves (the maximal subtrees of at most `max_leaf` primitives of one
/// geometry, and the single primitives left over) are runs of sorted positions, and which
/// splits lie *between* leaves can be told locally: split `i` heads the subtree over the
/// positions up to the nearest larger differences on either side, so it is inside a leaf
/// iff that span is at most `max_leaf` long (and of one geometry). The tree above the
/// leaves is then the same Cartesian tree over the between-leaf splits only, with the same
/// node numbers, so the result is the tree [`range`] would build, for a fraction of the
/// finalisations. A leaf of two or more primitives takes the node numbered like its first
/// position (a split inside it, so no other node uses it).
struct Clustered<'a> {
    tree: &'a Tree<'a>,
    /// First sorted position of every leaf, ascending; `starts[0] == 0`.
    starts: Vec<u32>,
}

impl<'a> Clustered<'a> {
    fn new(tree: &'a Tree<'a>) -> Clustered<'a> {
        let starts = run_starts(tree.keys, tree.max_leaf as usize, |first, count| tree.one_geometry(first, count));
        Clustered { tree, starts }
    }

    /// The reference of leaf `k`, its node made.
    #[inline]
    fn leaf(&self, k: usize) -> u32 {
        self.leaf_head(k).0
    }

    /// The reference of leaf `k`, its node made, and its (box, primitive count, first
    /// sorted position).
    #[inline(always)]
    fn leaf_head(&self, k: usize) -> (u32, Head) {
        let first = self.starts[k];
        let end = self.starts.get(k + 1).copied().unwrap_or(self.tree.keys.len() as u32);
        if end - first == 1 {
            (LEAF_PRIM | first, (self.tree.prim_box(first), 1, first))
        } else {
            (first, self.tree.make_leaf(first, first, end - first))
        }
    }

    /// Index of the leaf holding position `pos`.
    #[inline]
    fn leaf_at(&self, pos: usize) -> usize {
        self.starts.partition_point(|&s| (s as usize) <= pos) - 1
    }

    /// The subtree over sorted positions `lo..hi` (a whole number of leaves), as [`range`].
    fn range(&self, lo: usize, hi: usize, seq: usize) -> u32 {
        let (kl, kh) = (self.leaf_at(lo), self.leaf_at(hi - 1) + 1);
        if kh - kl == 1 {
            return self.leaf(kl);
        }
        if hi - lo <= seq {
            return self.sequential(kl, kh);
        }
        let keys = self.tree.keys;
        let bit = 63 - (keys[lo] ^ keys[hi - 1]).leading_zeros();
        let m = lo + keys[lo + 1..hi].partition_point(|k| k & (1u64 << bit) == 0);
        let (l, r) = rayon::join(|| self.range(lo, m + 1, seq), || self.range(m + 1, hi, seq));
        self.tree.nodes.set_kids(m as u32, [l, r]);
        self.tree.finalize(m as u32);
        m as u32
    }

    /// [`sequential`] over leaves `kl..kh` (at least 2): its splits are the ones before
    /// every leaf but the first. Each node is finalised from its children's heads as the
    /// pass has them (no node is read back): the stack holds every open node's split
    /// difference and left child; the right child of the top is the last leaf, of any
    /// other the node above it.
    fn sequential(&self, kl: usize, kh: usize) -> u32 {
        let keys = self.tree.keys;
        let mut stack: Vec<(u64, u32, u32, Head)> = Vec::with_capacity(128);
        let (mut right, mut right_head) = self.leaf_head(kl);
        for k in kl + 1..kh {
            let i = self.starts[k] as usize - 1;
            let d = delta(keys, i);
            let (mut left, mut left_head) = (right, right_head);
            while let Some(&(td, t, tl, tl_head)) = stack.last() {
                if td >= d {
                    break;
                }
                stack.pop();
                left_head = self.tree.finalize_with(t, [tl, left], [tl_head, left_head]);
                left = t;
            }
            (right, right_head) = self.leaf_head(k);
            stack.push((d, i as u32, left, left_head));
        }
        while let Some((_, t, tl, tl_head)) = stack.pop() {
            right_head = self.tree.finalize_with(t, [tl, right], [tl_head, right_head]);
            right = t;
        }
        right
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accel::tree::{BNode, Kind, Nodes, Wide};

    /// The subtree under `r` as a comparable shape: leaves by their primitives, internal
    /// nodes by box, count, size and children (node numbers of leaves may differ).
    fn shape(t: &Tree, r: u32, out: &mut Vec<(bool, u32, u32, u32, [u32; 6])>) {
        if Tree::is_prim(r) {
            out.push((true, r & !LEAF_PRIM, 1, t.child_size(r), [0; 6]));
            return;
        }
        let n = t.nodes.get(r);
        let b = n.aabb();
        let bits = [b.lo[0], b.lo[1], b.lo[2], b.hi[0], b.hi[1], b.hi[2]].map(f32::to_bits);
        out.push((n.is_leaf(), n.first, n.count, n.size, bits));
        if !n.is_leaf() {
            for k in n.kids {
                shape(t, k, out);
            }
        }
    }

    #[test]
    fn clustered_build_is_the_per_primitive_build() {
        let mut rng = vortex_model::rtu::reference::Rng::new(0x2545);
        let mut next = move || rng.next_u64();
        for round in 0..60 {
            let n = [2usize, 3, 5, 9, 100, 1000, 5000][round % 7];
            // Few distinct codes in some rounds (long runs of equal codes), several
            // geometries in others.
            let codes = if round % 3 == 0 { 16 } else { 1 << 30 };
            let mut keys: Vec<u64> = (0..n as u64).map(|i| (next() % codes) << 32 | i).collect();
            keys.sort_unstable();
            let verts: Vec<[f32; 9]> = (0..n).map(|_| std::array::from_fn(|_| (next() % 1000) as f32)).collect();
            let geoms = if round % 4 == 1 { 3 } else { 1 };
            let ids: Vec<[u32; 2]> = (0..n).map(|i| [((i * 7 / n) % geoms) as u32, i as u32]).collect();
            for max_leaf in [2u32, 3, 4, 8] {
                let run = |clustered: bool| {
                    let mut nodes = vec![BNode::default(); 2 * n];
                    let mut wide = vec![[u32::MAX; 6]; 2 * n];
                    let t = Tree {
                        kind: Kind::Triangles,
                        width: 4,
                        max_leaf,
                        prims: &[],
                        keys: &keys,
                        verts: &verts,
                        ids: &ids,
                        single_geometry: geoms == 1,
                        nodes: Nodes::new(&mut nodes),
                        wide: Wide::new(&mut wide),
                        eager: true,
                    };
                    let seq = if round % 2 == 0 { 2 } else { SEQ_MAX };
                    let r = if clustered { Clustered::new(&t).range(0, n, seq) } else { range(&t, 0, n, seq) };
                    let mut out = Vec::new();
                    shape(&t, r, &mut out);
                    out
                };
                assert_eq!(run(true), run(false), "round {round}, n {n}, max_leaf {max_leaf}");
            }
        }
    }
}
