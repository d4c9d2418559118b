//! Linear BVH (the fast builder): over primitives sorted by Morton code, the binary radix
//! tree is the Cartesian tree of the neighbour differences `key[i] ^ key[i + 1]` (the
//! split between positions i and i+1 is higher in the tree the higher the first bit in
//! which the two keys differ). The top splits are found by binary search for the maximum
//! difference, and the ranges below them are built in parallel, each by one left-to-right
//! pass with a stack. A node is finalised (box, count, leaf decision, wide size) as soon as
//! both of its subtrees are complete.
//!
//! Internal node `i` (0 <= i < n - 1) is the split between sorted positions i and i + 1.

use super::tree::{Tree, LEAF_PRIM};

/// Ranges at most this long are built by one sequential pass.
const SEQ_MAX: usize = 1 << 15;

/// Builds the tree over the `n = tree.keys.len()` sorted primitives; returns the root's
/// child reference. Uses nodes `0..n - 1`.
pub fn build(tree: &Tree) -> Option<u32> {
    let n = tree.keys.len();
    if n == 0 {
        return None;
    }
    let seq = SEQ_MAX.max(n / (8 * rayon::current_num_threads().max(1)));
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
