//! The binary tree every builder produces, and what turns it into the wide tree: the
//! bottom-up finalisation of a node (box, primitive count, the multi-primitive leaf
//! decision), and the greedy collapse that picks each wide node's children and the byte
//! size of every wide subtree: for every internal node as it is finalised (`eager`, the
//! fast builder), or top-down from the root for the wide-node roots only.
//!
//! Nodes live in one array shared by the builder's threads ([`Nodes`]): every node is
//! written by exactly one task, and read only after that task finished (a child is
//! finalised before its parent; rayon's `join` orders the two).

use super::input::{Aabb, PrimRef};
use vortex_model::abi::bvh::{self, inst, proc, tri};

/// A child reference with this bit names a single primitive by its sorted position;
/// without it, a node of the [`Nodes`] array.
pub const LEAF_PRIM: u32 = 1 << 31;
/// `BNode::count` bit: the node is a multi-primitive leaf.
pub const LEAF_NODE: u32 = 1 << 31;
/// `BNode::first` of a node whose primitives are not contiguous in sorted order.
pub const NONCONTIG: u32 = u32::MAX;
/// Subtrees of at least this many primitives get their wide sizes in parallel.
const PAR_SIZES: u32 = 8192;

/// A binary node.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BNode {
    pub lo: [f32; 3],
    pub hi: [f32; 3],
    pub kids: [u32; 2],
    /// First sorted position of its primitives (they are contiguous), or [`NONCONTIG`].
    pub first: u32,
    /// Primitives below it; [`LEAF_NODE`] set when it is a multi-primitive leaf.
    pub count: u32,
    /// Bytes (16-byte units) of the records it becomes as a wide node's child: the leaf
    /// record, or the wide node rooted here and everything below it (set when the node
    /// is finalised if the tree is `eager`, else by `Tree::wide_sizes` for the nodes that
    /// become wide-node roots).
    pub size: u32,
}

impl BNode {
    #[inline]
    pub fn aabb(&self) -> Aabb {
        Aabb { lo: self.lo, hi: self.hi }
    }
    #[inline]
    pub fn prims(&self) -> u32 {
        self.count & !LEAF_NODE
    }
    #[inline]
    pub fn is_leaf(&self) -> bool {
        self.count & LEAF_NODE != 0
    }
}

/// The node array, shared by the builder's threads.
#[derive(Clone, Copy)]
pub struct Nodes {
    ptr: *mut BNode,
    len: usize,
}

// SAFETY: see the module comment: disjoint writers, reads after the write completed.
unsafe impl Send for Nodes {}
unsafe impl Sync for Nodes {}

impl Nodes {
    pub fn new(nodes: &mut [BNode]) -> Nodes {
        Nodes { ptr: nodes.as_mut_ptr(), len: nodes.len() }
    }

    #[inline]
    pub fn get(&self, i: u32) -> BNode {
        assert!((i as usize) < self.len, "node {i} out of {}", self.len);
        // SAFETY: in bounds; per the module's discipline no one writes node i now.
        unsafe { *self.ptr.add(i as usize) }
    }

    /// Node `i` in place (it must be complete and not being written).
    #[inline]
    pub fn at(&self, i: u32) -> &BNode {
        assert!((i as usize) < self.len, "node {i} out of {}", self.len);
        // SAFETY: in bounds; per the module's discipline no one writes node i now.
        unsafe { &*self.ptr.add(i as usize) }
    }

    /// Hints that node `i` will be read soon (both lines it may straddle).
    #[inline]
    pub fn prefetch(&self, i: u32) {
        if (i as usize) < self.len {
            let p = self.ptr.wrapping_add(i as usize) as *const u8;
            super::input::prefetch(p);
            super::input::prefetch(p.wrapping_add(std::mem::size_of::<BNode>() - 1));
        }
    }

    /// Hints that nodes `lo..hi` (clamped to the array) will be read soon.
    #[inline]
    pub fn prefetch_range(&self, lo: usize, hi: usize) {
        prefetch_lines(self.ptr as *const u8, std::mem::size_of::<BNode>(), lo, hi.min(self.len));
    }

    #[inline]
    pub fn set(&self, i: u32, n: BNode) {
        assert!((i as usize) < self.len, "node {i} out of {}", self.len);
        // SAFETY: in bounds; the caller is node i's only writer.
        unsafe { *self.ptr.add(i as usize) = n }
    }

    #[inline]
    pub fn set_size(&self, i: u32, size: u32) {
        assert!((i as usize) < self.len);
        // SAFETY: as for `set`.
        unsafe { (*self.ptr.add(i as usize)).size = size }
    }

    #[inline]
    pub fn set_kids(&self, i: u32, kids: [u32; 2]) {
        assert!((i as usize) < self.len);
        // SAFETY: as for `set`.
        unsafe { (*self.ptr.add(i as usize)).kids = kids }
    }

    #[inline]
    pub fn set_right(&self, i: u32, r: u32) {
        assert!((i as usize) < self.len);
        // SAFETY: as for `set`.
        unsafe { (*self.ptr.add(i as usize)).kids[1] = r }
    }
}

/// Prefetches every cache line of elements `lo..hi` of `size` bytes each from `base`.
#[inline]
pub(super) fn prefetch_lines(base: *const u8, size: usize, lo: usize, hi: usize) {
    if lo >= hi {
        return;
    }
    // A plain loop: an inclusive stepped range costs more than the prefetches.
    let (mut at, end) = ((lo * size) & !63, hi * size);
    while at < end {
        super::input::prefetch(base.wrapping_add(at));
        at += 64;
    }
}

/// What a build's primitives are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Triangles,
    Aabbs,
    Instances,
}

impl Kind {
    /// Leaf record bytes for `count` primitives.
    pub fn leaf_bytes(self, count: u32) -> u64 {
        (match self {
            Kind::Triangles => tri::bytes(count as usize),
            Kind::Aabbs => proc::bytes(count as usize),
            Kind::Instances => inst::BYTES * count as usize,
        }) as u64
    }

    /// Most primitives one leaf may hold.
    pub fn max_leaf(self) -> u32 {
        match self {
            Kind::Triangles => tri::MAX_COUNT as u32,
            Kind::Aabbs => proc::MAX_COUNT as u32,
            Kind::Instances => 1,
        }
    }
}

/// Everything finalisation and the collapse read.
pub struct Tree<'a> {
    pub kind: Kind,
    pub width: usize,
    /// Largest multi-primitive leaf (1: every leaf holds one primitive).
    pub max_leaf: u32,
    /// The active primitives in sorted order (AABB and instance builds; empty for
    /// triangles, whose boxes come from their vertices).
    pub prims: &'a [PrimRef],
    /// Their Morton keys (the linear BVH splits on them).
    pub keys: &'a [u64],
    /// Triangle builds: each sorted primitive's vertices, and (geometry, primitive index).
    pub verts: &'a [[f32; 9]],
    pub ids: &'a [[u32; 2]],
    /// Every primitive is of geometry 0 (no leaf need check its geometries).
    pub single_geometry: bool,
    pub nodes: Nodes,
    /// The wide children of each internal node that becomes a wide node's root (of every
    /// internal node, when `eager`), so the writer need not collapse again; unused slots
    /// hold `u32::MAX`.
    pub wide: Wide,
    /// Collapse every internal node and set its size as it is finalised (bottom-up, while
    /// its children are in cache), instead of collapsing only the wide-node roots in a
    /// top-down pass ([`Tree::wide_sizes`]) afterwards. Cheaper when the binary tree has
    /// few internal nodes per wide node (multi-primitive leaves: the fast builder).
    pub eager: bool,
}

/// The wide-children array, shared like [`Nodes`].
#[derive(Clone, Copy)]
pub struct Wide {
    ptr: *mut [u32; 6],
    len: usize,
}

// SAFETY: as for `Nodes`: entry p is written by whoever finalises node p, and read after
// that.
unsafe impl Send for Wide {}
unsafe impl Sync for Wide {}

impl Wide {
    pub fn new(w: &mut [[u32; 6]]) -> Wide {
        Wide { ptr: w.as_mut_ptr(), len: w.len() }
    }

    #[inline]
    pub fn get(&self, i: u32) -> ([u32; 6], usize) {
        assert!((i as usize) < self.len);
        // SAFETY: in bounds; written before (see above).
        let c = unsafe { *self.ptr.add(i as usize) };
        (c, c.iter().position(|&r| r == u32::MAX).unwrap_or(6))
    }

    /// Hints that entry `i` will be read soon.
    #[inline]
    pub fn prefetch(&self, i: u32) {
        if (i as usize) < self.len {
            super::input::prefetch(self.ptr.wrapping_add(i as usize) as *const u8);
        }
    }

    /// Hints that entries `lo..hi` (clamped to the array) will be read soon.
    #[inline]
    pub fn prefetch_range(&self, lo: usize, hi: usize) {
        prefetch_lines(self.ptr as *const u8, std::mem::size_of::<[u32; 6]>(), lo, hi.min(self.len));
    }

    #[inline]
    fn set(&self, i: u32, c: [u32; 6]) {
        assert!((i as usize) < self.len);
        // SAFETY: in bounds; node i's finaliser is its only writer.
        unsafe { *self.ptr.add(i as usize) = c }
    }
}

impl Tree<'_> {
    /// First node number of a top-level build over clusters (the SAH builder's): nodes
    /// below it are numbered like the sorted positions in their subtree, the top-level
    /// ones from here on in the top build's own order.
    #[inline]
    pub fn top_base(&self) -> u32 {
        self.keys.len().saturating_sub(1) as u32
    }

    /// Hints that the `count` primitives from sorted position `first` are about to be
    /// written out: their vertices or boxes, their ids, and the nodes numbered like them.
    #[inline]
    pub fn prefetch_run(&self, first: usize, count: usize) {
        let end = first + count;
        if self.verts.is_empty() {
            prefetch_lines(
                self.prims.as_ptr().cast(),
                std::mem::size_of::<PrimRef>(),
                first,
                end.min(self.prims.len()),
            );
        } else {
            prefetch_lines(
                self.verts.as_ptr().cast(),
                std::mem::size_of::<[f32; 9]>(),
                first,
                end.min(self.verts.len()),
            );
            prefetch_lines(self.ids.as_ptr().cast(), std::mem::size_of::<[u32; 2]>(), first, end.min(self.ids.len()));
        }
        self.nodes.prefetch_range(first, end);
        self.wide.prefetch_range(first, end);
    }

    /// Box of the primitive at sorted position `pos`.
    #[inline(always)]
    pub fn prim_box(&self, pos: u32) -> Aabb {
        if self.verts.is_empty() {
            self.prims[pos as usize].aabb()
        } else {
            super::input::verts_box(&self.verts[pos as usize])
        }
    }

    /// (geometry, primitive index) of the primitive at sorted position `pos`.
    #[inline]
    pub fn prim_id(&self, pos: u32) -> (u32, u32) {
        if self.verts.is_empty() {
            let p = &self.prims[pos as usize];
            (p.geom, p.prim)
        } else {
            let i = self.ids[pos as usize];
            (i[0], i[1])
        }
    }

    #[inline]
    pub fn is_prim(r: u32) -> bool {
        r & LEAF_PRIM != 0
    }

    #[inline]
    pub fn child_box(&self, r: u32) -> Aabb {
        if Self::is_prim(r) {
            self.prim_box(r & !LEAF_PRIM)
        } else {
            self.nodes.at(r).aabb()
        }
    }

    /// (box, primitive count, first sorted position, size in 16-byte units, whether it is
    /// a leaf) of a child, from one read of its node.
    #[inline(always)]
    pub fn child(&self, r: u32) -> (Aabb, u32, u32, u32, bool) {
        if Self::is_prim(r) {
            let pos = r & !LEAF_PRIM;
            (self.prim_box(pos), 1, pos, (self.kind.leaf_bytes(1) / 16) as u32, true)
        } else {
            let n = self.nodes.at(r);
            (n.aabb(), n.prims(), n.first, n.size, n.is_leaf())
        }
    }

    /// Size in 16-byte units of a child's records (as [`Tree::child`], without the box).
    #[inline]
    pub fn child_size(&self, r: u32) -> u32 {
        if Self::is_prim(r) {
            (self.kind.leaf_bytes(1) / 16) as u32
        } else {
            self.nodes.at(r).size
        }
    }

    /// True for a child that a wide node may open (an internal node, not a leaf).
    #[inline]
    pub fn openable(&self, r: u32) -> bool {
        !Self::is_prim(r) && !self.nodes.at(r).is_leaf()
    }

    /// Children of the wide node rooted at internal node `p`: start from its two children
    /// and keep replacing the child of largest area by its own two children until there
    /// are `width` or none can be opened.
    pub fn collapse(&self, p: u32) -> ([u32; 6], usize) {
        self.collapse_kids(self.nodes.at(p).kids)
    }

    /// [`Tree::collapse`] of a node whose two children are `kids`.
    #[inline]
    pub fn collapse_kids(&self, kids: [u32; 2]) -> ([u32; 6], usize) {
        // A loop bound fixed at compile time: unrolled, and no bounds checks on the slots.
        if self.width <= 4 {
            self.collapse_to::<4>(kids)
        } else {
            self.collapse_to::<6>(kids)
        }
    }

    /// [`Tree::collapse_kids`] for width `W` (at most 6).
    #[inline(always)]
    fn collapse_to<const W: usize>(&self, kids: [u32; 2]) -> ([u32; 6], usize) {
        let mut c = [u32::MAX; 6];
        // Area of each child if it can be opened, else -1.
        let mut area = [-1.0f32; 6];
        let open_area = |r: u32| -> f32 {
            if Self::is_prim(r) {
                return -1.0;
            }
            let k = self.nodes.at(r);
            if k.is_leaf() {
                -1.0
            } else {
                k.aabb().half_area()
            }
        };
        c[0] = kids[0];
        c[1] = kids[1];
        area[0] = open_area(c[0]);
        area[1] = open_area(c[1]);
        let mut len = 2;
        while len < W {
            let mut best = 0;
            for i in 1..len {
                if area[i] > area[best] {
                    best = i;
                }
            }
            if area[best] < 0.0 {
                break;
            }
            let k = self.nodes.at(c[best]).kids;
            // Shifted one by one: `copy_within` is a `memmove` call here.
            for i in (best + 1..len).rev() {
                c[i + 1] = c[i];
                area[i + 1] = area[i];
            }
            c[best] = k[0];
            c[best + 1] = k[1];
            area[best] = open_area(k[0]);
            area[best + 1] = open_area(k[1]);
            len += 1;
        }
        (c, len)
    }

    /// True if the `count` primitives from sorted position `first` share one geometry.
    #[inline(always)]
    pub(super) fn one_geometry(&self, first: u32, count: u32) -> bool {
        self.single_geometry || self.same_geometry(first, count)
    }

    /// [`Tree::one_geometry`] by reading their ids (out of line: most builds have one
    /// geometry and never call it).
    #[inline(never)]
    fn same_geometry(&self, first: u32, count: u32) -> bool {
        let g = self.prim_id(first).0;
        (first + 1..first + count).all(|p| self.prim_id(p).0 == g)
    }

    /// Makes node `p` the multi-primitive leaf over the `count` (at least 2) primitives
    /// from sorted position `first`: the node [`Tree::finalize`] would make of the subtree
    /// over them, box included (a union of the same boxes in another order is the same
    /// box). Returns its (box, primitive count, first sorted position).
    pub(super) fn make_leaf(&self, p: u32, first: u32, count: u32) -> (Aabb, u32, u32) {
        let b = if self.verts.is_empty() {
            let mut b = self.prim_box(first);
            for p in first + 1..first + count {
                b.grow(&self.prim_box(p));
            }
            b
        } else {
            super::input::run_box(&self.verts[first as usize..(first + count) as usize])
        };
        let size = (self.kind.leaf_bytes(count) / 16) as u32;
        let kids = [LEAF_PRIM | first, LEAF_PRIM | (first + 1)];
        self.nodes.set(p, BNode { lo: b.lo, hi: b.hi, kids, first, count: count | LEAF_NODE, size });
        (b, count, first)
    }

    /// Completes node `p` whose `kids` are set and finalised: box, count, first and the
    /// leaf decision and the size.
    pub fn finalize(&self, p: u32) {
        let kids = self.nodes.at(p).kids;
        self.finalize_with(p, kids, [self.child_head(kids[0]), self.child_head(kids[1])]);
    }

    /// [`Tree::finalize`] of node `p` with children `kids` whose (box, primitive count,
    /// first sorted position) the caller already has; returns the same for `p`.
    #[inline]
    pub fn finalize_with(&self, p: u32, kids: [u32; 2], heads: [(Aabb, u32, u32); 2]) -> (Aabb, u32, u32) {
        let [(bl, cl, fl), (br, cr, fr)] = heads;
        let b = bl.union(&br);
        let count = cl + cr;
        let first = if fl != NONCONTIG && fr != NONCONTIG && fl + cl == fr { fl } else { NONCONTIG };
        // Multi-primitive leaves: every subtree of at most `max_leaf` primitives of one
        // geometry becomes one leaf (the size is a knob, so the rule is plain).
        let leaf = self.max_leaf > 1 && count <= self.max_leaf && first != NONCONTIG && self.one_geometry(first, count);
        let size = match (leaf, self.eager) {
            (true, _) => (self.kind.leaf_bytes(count) / 16) as u32,
            (false, true) => self.wide_size(p, kids),
            (false, false) => 0,
        };
        self.nodes
            .set(p, BNode { lo: b.lo, hi: b.hi, kids, first, count: count | if leaf { LEAF_NODE } else { 0 }, size });
        (b, count, first)
    }

    /// (box, primitive count, first sorted position) of a child.
    #[inline(always)]
    pub fn child_head(&self, r: u32) -> (Aabb, u32, u32) {
        if Self::is_prim(r) {
            let pos = r & !LEAF_PRIM;
            (self.prim_box(pos), 1, pos)
        } else {
            let n = self.nodes.at(r);
            (n.aabb(), n.prims(), n.first)
        }
    }

    /// Picks the wide children of node `p` over children `kids` (whose sizes are set) and
    /// returns the size (16-byte units) of that wide node and everything below it: its
    /// record plus its wide children's. Computed as each node
    /// is finalised, bottom-up while the children are still in cache, for every internal
    /// node (any may become a wide node's root).
    #[inline]
    fn wide_size(&self, p: u32, kids: [u32; 2]) -> u32 {
        let (c, len) = self.collapse_kids(kids);
        self.wide.set(p, c);
        let below: u64 = c[..len].iter().map(|&r| self.child_size(r) as u64).sum();
        let size = bvh::node_bytes(self.width as u32) as u64 / 16 + below;
        u32::try_from(size).expect("acceleration structure larger than 64 GiB")
    }

    /// Size (16-byte units) of the records of child `r` (the whole structure for the root),
    /// after the top-down pass if the tree is not `eager`.
    pub fn records(&self, r: u32) -> u64 {
        if self.eager {
            self.child(r).3 as u64
        } else {
            self.wide_sizes(r)
        }
    }

    /// Picks the wide children of every wide node under child `r` (top-down: only the
    /// internal nodes that become wide-node roots are collapsed), records each one's size,
    /// and returns the size (16-byte units) of `r`'s records. Large subtrees in parallel.
    fn wide_sizes(&self, r: u32) -> u64 {
        if Self::is_prim(r) {
            return self.kind.leaf_bytes(1) / 16;
        }
        let n = self.nodes.at(r);
        if n.is_leaf() {
            return n.size as u64;
        }
        let (c, len) = self.collapse(r);
        self.wide.set(r, c);
        let kids = &c[..len];
        // The nodes the children's collapses start from, fetched while the first child's
        // subtree is walked.
        for &k in kids {
            if self.openable(k) {
                let g = self.nodes.at(k).kids;
                self.nodes.prefetch(g[0]);
                self.nodes.prefetch(g[1]);
            }
        }
        let big = kids.iter().filter(|&&k| !Self::is_prim(k) && self.nodes.at(k).prims() >= PAR_SIZES).count();
        let below: u64 = if big >= 2 {
            use rayon::prelude::*;
            kids.par_iter().map(|&k| self.wide_sizes(k)).sum()
        } else {
            kids.iter().map(|&k| self.wide_sizes(k)).sum()
        };
        let size = bvh::node_bytes(self.width as u32) as u64 / 16 + below;
        self.nodes.set_size(r, u32::try_from(size).expect("acceleration structure larger than 64 GiB"));
        size
    }
}
