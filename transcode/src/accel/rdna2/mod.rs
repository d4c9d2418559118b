//! The rdna2 architecture's acceleration structures (`abi::rdna2`, `docs/RDNA2.md`): the
//! builder's binary tree, collapsed to four-wide as for CW-BVH4, written as seed 003's box
//! nodes (FP32, or FP16 where rounding the boxes outward costs little), triangle nodes
//! (sibling triangles sharing vertices packed four to a node), and the driver-defined
//! instance and AABB nodes the shader's traversal handles, with parent links below the
//! node region for the shader's stack-overflow fallback.
//!
//! The node region is planned in host memory first (so a structure that does not fit is
//! refused before anything is written), then copied to the destination.

pub mod pack;
pub mod refit;

use super::input::Aabb;
use super::tree::{Kind, Tree, LEAF_PRIM};
use super::{device_bytes_mut, layout, BuildError, BuildRequest, BuildStats, Level};
use vortex_model::abi::bvh::{self, header};
use vortex_model::abi::rdna2::{self as r2, ptr, NodeBox};
use vortex_model::abi::{wr_f32, wr_u32, wr_u64};
use vortex_model::config::Box16;
use vortex_model::mem::MemoryMap;

/// A BLAS as an rdna2 instance node needs it: its root and node-region offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlasRoot {
    pub root: u32,
    pub bvh_offset: u32,
}

/// Builder choices that shape the bytes.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    pub box16: Box16,
    /// Pack sibling triangles into shared nodes (off for structures that allow updates: a
    /// refit cannot split a node whose shared vertices moved apart).
    pub share: bool,
}

/// Upper bound of the bytes a build of `n` primitives of `kind` can use: every box node
/// FP32 (at most `n - 1` of them: each has at least two children), every triangle in a node
/// of its own, the parent links, the alignment of the node base, the TLAS table.
pub fn size_bound(level: Level, kind: Kind, n: u64) -> u64 {
    let prim_slots = match kind {
        Kind::Triangles => 2,
        Kind::Aabbs => 1,
        Kind::Instances => 2,
    };
    let slots = 2 * n.saturating_sub(1) + prim_slots * n;
    let table = if level == Level::Top { (8 * n).next_multiple_of(bvh::RECORD_ALIGN as u64) } else { 0 };
    node_base(slots) + slots * r2::SLOT_BYTES + table
}

/// Offset of the node region: the header, then the parent links of `slots` slots, rounded
/// up to the descriptor base's alignment.
pub fn node_base(slots: u64) -> u64 {
    (header::BYTES as u64 + 4 * slots).next_multiple_of(r2::BASE_ALIGN)
}

/// The planned node region.
struct Plan<'a> {
    t: &'a Tree<'a>,
    src: &'a layout::Source<'a>,
    style: Style,
    /// Node bytes, 64 per slot.
    bytes: Vec<u8>,
    /// Parent pointer of each slot (`ptr::INVALID` for the root and second slots).
    parent: Vec<u32>,
    box_nodes: u64,
    prim_nodes: u64,
    tri_nodes: u64,
    box16: bool,
    /// Instance leaves met, in walk order: (parent box pointer or `ptr::INVALID` for the
    /// root, child index, instance).
    insts: Vec<(u32, usize, u32)>,
    sah: f64,
}

/// A child of a box node before it is written.
#[derive(Clone, Copy)]
enum Child {
    /// A primitive at a sorted position.
    Prim(u32),
    /// A wide node (an internal binary node).
    Wide(u32),
    /// A run of primitives (a multi-primitive leaf, or part of one).
    Run(u32, u32),
}

impl Plan<'_> {
    fn alloc(&mut self, slots: u32, parent: u32) -> u32 {
        let s = self.parent.len() as u32;
        self.parent.push(parent);
        for _ in 1..slots {
            self.parent.push(ptr::INVALID);
        }
        self.bytes.resize(self.parent.len() * r2::SLOT_BYTES as usize, 0);
        s
    }

    fn node_mut(&mut self, slot: u32, bytes: usize) -> &mut [u8] {
        let at = slot as usize * r2::SLOT_BYTES as usize;
        &mut self.bytes[at..at + bytes]
    }

    fn child_box(&self, c: Child) -> Aabb {
        match c {
            Child::Prim(p) => self.t.prim_box(p),
            Child::Wide(r) => self.t.nodes.at(r).aabb(),
            Child::Run(first, count) => {
                let mut b = self.t.prim_box(first);
                for p in first + 1..first + count {
                    b.grow(&self.t.prim_box(p));
                }
                b
            }
        }
    }

    /// The children of what `r` (a tree child reference) becomes: a primitive, a wide
    /// node, or a run.
    fn as_child(&self, r: u32) -> Child {
        if Tree::is_prim(r) {
            return Child::Prim(r & !LEAF_PRIM);
        }
        let n = self.t.nodes.at(r);
        if n.is_leaf() {
            Child::Run(n.first, n.prims())
        } else {
            Child::Wide(r)
        }
    }

    /// Writes the node for `c` (whose parent is `parent`); returns its pointer.
    fn node(&mut self, c: Child, parent: u32) -> u32 {
        match c {
            Child::Prim(p) => self.leaf(p, parent, 0),
            Child::Wide(r) => {
                let (kids, len) = self.t.wide.get(r);
                let kids: Vec<Child> = kids[..len].iter().map(|&k| self.as_child(k)).collect();
                self.box_node(&kids, parent)
            }
            Child::Run(first, count) if count <= 4 => {
                let kids: Vec<Child> = (first..first + count).map(Child::Prim).collect();
                self.box_node(&kids, parent)
            }
            Child::Run(first, count) => {
                let half = count / 2;
                self.box_node(&[Child::Run(first, half), Child::Run(first + half, count - half)], parent)
            }
        }
    }

    /// A primitive's own node, the `child`-th of `parent` (triangles under a box node go
    /// through [`Plan::box_node`]'s packing).
    fn leaf(&mut self, p: u32, parent: u32, child: usize) -> u32 {
        let (g, prim) = self.t.prim_id(p);
        self.sah += self.t.prim_box(p).half_area() as f64;
        match self.src.kind {
            Kind::Triangles => {
                let v = self.t.verts[p as usize];
                let tri = [[v[0], v[1], v[2]], [v[3], v[4], v[5]], [v[6], v[7], v[8]]];
                let packed = pack::arrange(&[tri]).expect("one triangle fits");
                self.tri_node(&packed, &[p], parent)[0]
            }
            Kind::Aabbs => {
                let s = self.alloc(1, parent);
                let flags = self.src.geom_flags[g as usize];
                let b = self.t.prim_box(p);
                let n = self.node_mut(s, r2::aabb::BYTES);
                for a in 0..3 {
                    wr_f32(n, r2::aabb::MIN + 4 * a, b.lo[a]);
                    wr_f32(n, r2::aabb::MAX + 4 * a, b.hi[a]);
                }
                wr_u32(n, r2::aabb::PRIM, prim);
                wr_u32(n, r2::aabb::GEOM, r2::geom_word(g, flags));
                self.prim_nodes += 1;
                ptr::make(s, ptr::AABB)
            }
            Kind::Instances => {
                // Instance nodes are written after the walk, contiguous; the parent's
                // child word is patched then.
                self.insts.push((parent, child, prim));
                ptr::INVALID
            }
        }
    }

    /// Writes packed triangle node `p` (triangles at sorted positions `pos`, by input
    /// index) and its side record; returns the child pointer of each placed triangle, in
    /// `pos` order.
    fn tri_node(&mut self, p: &pack::Packed, pos: &[u32], parent: u32) -> Vec<u32> {
        let s = self.alloc(2, parent);
        let remap = p.remap();
        let mut ptrs = vec![ptr::INVALID; pos.len()];
        let ids: Vec<(u32, u32)> = p.placed.iter().map(|pl| self.t.prim_id(pos[pl.input])).collect();
        let flags = &self.src.geom_flags;
        let n = self.node_mut(s, 2 * r2::SLOT_BYTES as usize);
        for k in 0..5 {
            for a in 0..3 {
                wr_f32(n, r2::tri::vertex(k) + 4 * a, p.verts[k][a]);
            }
        }
        wr_u32(n, r2::tri::ID, remap);
        let side = &mut n[r2::SLOT_BYTES as usize..];
        for (pl, &(g, prim)) in p.placed.iter().zip(&ids) {
            let k = pl.slot;
            wr_u32(side, r2::tri_side::prim(k), prim);
            wr_u32(side, r2::tri_side::geom(k), r2::geom_word(g, flags[g as usize]));
            let o = pl.order;
            wr_u32(side, r2::tri_side::order(k), (o[0] | o[1] << 4 | o[2] << 8) as u32);
            ptrs[pl.input] = ptr::make(s, k as u32);
        }
        self.prim_nodes += 1;
        self.tri_nodes += (p.placed.len() > 1) as u64;
        ptrs
    }

    /// A box node over `kids` (2..=4): its triangle children packed into triangle nodes
    /// right after it, then its other children's subtrees in order.
    fn box_node(&mut self, kids: &[Child], parent: u32) -> u32 {
        let boxes: Vec<Aabb> = kids.iter().map(|&c| self.child_box(c)).collect();
        let mut nb = [r2::EMPTY_BOX; 4];
        for (i, b) in boxes.iter().enumerate() {
            nb[i] = NodeBox { lo: b.lo, hi: b.hi };
        }
        // Whether FP16 serves is known from the boxes alone; the pointers come later.
        let halves = self.halves(&nb, kids.len());
        let ty = if halves.is_some() { ptr::BOX16 } else { ptr::BOX32 };
        let s = self.alloc(ptr::slots(ty), parent);
        let me = ptr::make(s, ty);
        self.box_nodes += 1;
        self.box16 |= halves.is_some();
        self.sah += boxes.iter().fold(Aabb::EMPTY, |u, b| u.union(b)).half_area() as f64;
        let mut child = [ptr::INVALID; 4];
        let tris: Vec<usize> = (0..kids.len())
            .filter(|&i| matches!(kids[i], Child::Prim(_)) && self.src.kind == Kind::Triangles)
            .collect();
        if !tris.is_empty() {
            let pos: Vec<u32> = tris.iter().map(|&i| if let Child::Prim(p) = kids[i] { p } else { 0 }).collect();
            let geo: Vec<pack::Tri> = pos
                .iter()
                .map(|&p| {
                    let v = self.t.verts[p as usize];
                    [[v[0], v[1], v[2]], [v[3], v[4], v[5]], [v[6], v[7], v[8]]]
                })
                .collect();
            for p in &pos {
                self.sah += self.t.prim_box(*p).half_area() as f64;
            }
            for packed in pack::pack(&geo, self.style.share) {
                // `tri_node` indexes `pos` by each placed triangle's input index.
                let ptrs = self.tri_node(&packed, &pos, me);
                for pl in &packed.placed {
                    child[tris[pl.input]] = ptrs[pl.input];
                }
            }
        }
        for (i, &c) in kids.iter().enumerate() {
            if child[i] != ptr::INVALID {
                continue;
            }
            child[i] = match c {
                Child::Prim(p) => self.leaf(p, me, i),
                _ => self.node(c, me),
            };
        }
        let n = self.node_mut(s, ptr::slots(ty) as usize * r2::SLOT_BYTES as usize);
        match halves {
            Some(h) => r2::write_box16(n, &child, &h),
            None => r2::write_box32(n, &child, &nb),
        }
        me
    }

    /// The FP16 boxes of a node, when the style allows them here.
    fn halves(&self, nb: &[NodeBox; 4], len: usize) -> Option<[[u16; 6]; 4]> {
        let mut live = [ptr::INVALID; 4];
        live[..len].fill(0);
        let h = match self.style.box16 {
            Box16::Never => return None,
            _ => r2::box16_of(nb, &live)?,
        };
        if self.style.box16 == Box16::Always {
            return Some(h);
        }
        // Auto: no child box grows by more than 1/64 of the node's extent on any axis.
        for a in 0..3 {
            let lo = nb[..len].iter().map(|b| b.lo[a]).fold(f32::INFINITY, f32::min);
            let hi = nb[..len].iter().map(|b| b.hi[a]).fold(f32::NEG_INFINITY, f32::max);
            let slack = (hi as f64 - lo as f64) / 64.0;
            for i in 0..len {
                let grow = (r2::f16_to_f32(h[i][3 + a]) as f64 - r2::f16_to_f32(h[i][a]) as f64)
                    - (nb[i].hi[a] as f64 - nb[i].lo[a] as f64);
                if grow > slack {
                    return None;
                }
            }
        }
        Some(h)
    }
}

/// What the writer needs besides the tree: the BLASes instances reference (TLAS builds).
pub struct Inputs<'a> {
    pub blas: &'a std::collections::HashMap<u64, BlasRoot>,
    pub style: Style,
}

/// Writes the structure for the finished tree `t` (root `root`) into the destination.
pub fn write(
    mem: &MemoryMap,
    req: &BuildRequest,
    t: &Tree,
    src: &layout::Source,
    root: Option<u32>,
    blas_table: &[u64],
    inputs: &Inputs,
) -> Result<BuildStats, BuildError> {
    let active = t.keys.len();
    let mut plan = Plan {
        t,
        src,
        style: inputs.style,
        bytes: Vec::new(),
        parent: Vec::new(),
        box_nodes: 0,
        prim_nodes: 0,
        tri_nodes: 0,
        box16: false,
        insts: Vec::new(),
        sah: 0.0,
    };
    let (root_ptr, bounds) = match root {
        None => (ptr::INVALID, Aabb { lo: [0.0; 3], hi: [0.0; 3] }),
        Some(r) => {
            // The wide children of every wide root (a top-down pass when not eager).
            t.records(r);
            let c = plan.as_child(r);
            (plan.node(c, ptr::INVALID), t.child_box(r))
        }
    };
    let inst_first = plan.parent.len() as u32;
    let root_ptr = place_instances(&mut plan, inputs, root_ptr)?;
    let slots = plan.parent.len() as u64;
    if slots > ptr::MAX_SLOT as u64 {
        return Err(BuildError::BadRequest(format!("{slots} node slots are more than a node pointer can name")));
    }
    let base = node_base(slots);
    let table_off = base + slots * r2::SLOT_BYTES;
    let top = req.level == Level::Top;
    let table_bytes = if top { (8 * active as u64).next_multiple_of(bvh::RECORD_ALIGN as u64) } else { 0 };
    let total = table_off + table_bytes;
    if total > req.dst_size {
        return Err(BuildError::DoesNotFit { needed: total, available: req.dst_size });
    }
    // SAFETY: the destination range is the build's alone (Vulkan valid usage).
    let mut out = unsafe { device_bytes_mut(mem, req.dst, total) }
        .map_err(|fault| BuildError::Memory { what: "acceleration structure destination".into(), fault })?;
    out[header::BYTES..base as usize].fill(0);
    for (s, &p) in plan.parent.iter().enumerate() {
        wr_u32(&mut out, (base - r2::parent_link(s as u32)) as usize, p);
    }
    out[base as usize..table_off as usize].copy_from_slice(&plan.bytes);
    let table = &mut out[table_off as usize..];
    table.fill(0);
    for (i, &a) in blas_table.iter().enumerate() {
        wr_u64(table, 8 * i, a);
    }
    let h = bvh::Header {
        kind: if top { bvh::KIND_TOP } else { bvh::KIND_BOTTOM },
        width: 4,
        root: root_ptr,
        build_flags: req.flags,
        bounds_min: bounds.lo,
        bounds_max: bounds.hi,
        size: total,
        prim_count: active as u32,
        geometry_count: req.geometries.len() as u32,
        node_count: plan.box_nodes as u32,
        leaf_count: plan.prim_nodes as u32,
        blas_count: if top { blas_table.len() as u32 } else { 0 },
        blas_table: if top { (table_off / bvh::RECORD_ALIGN as u64) as u32 } else { 0 },
    };
    let extra = r2::Extra {
        bvh_offset: base as u32,
        slots: slots as u32,
        box_grow: r2::BOX_GROW,
        box_sort: true,
        return_mode: 1,
        box16: plan.box16,
        inst_first: if top { inst_first } else { 0 },
        tri_nodes: plan.tri_nodes as u32,
    };
    r2::write_header(&h, &extra, &mut out[..header::BYTES]);
    let root_area = bounds.half_area() as f64;
    Ok(BuildStats {
        prims: active as u64,
        nodes: plan.box_nodes,
        leaves: plan.prim_nodes,
        bytes: total,
        sah_cost: if root_area > 0.0 { plan.sah / root_area } else { 0.0 },
        ..BuildStats::default()
    })
}

/// Writes the instance nodes met during the walk contiguously after the other nodes and
/// points their parents (or the root) at them. Returns the root pointer.
fn place_instances(plan: &mut Plan, inputs: &Inputs, root_ptr: u32) -> Result<u32, BuildError> {
    let insts = std::mem::take(&mut plan.insts);
    let mut root_ptr = root_ptr;
    for (parent, child, i) in insts {
        let s = plan.alloc(2, parent);
        let me = ptr::make(s, ptr::INSTANCE);
        let leaf = plan.src.insts[i as usize];
        let blas = inputs.blas.get(&leaf.blas).copied().ok_or_else(|| {
            BuildError::BadRequest(format!(
                "instance {} references {:#x}, whose header was not read",
                leaf.index, leaf.blas
            ))
        })?;
        let n = plan.node_mut(s, r2::inst::BYTES);
        for k in 0..12 {
            wr_f32(n, r2::inst::W2O + 4 * k, leaf.w2o[k]);
            wr_f32(n, r2::inst::O2W + 4 * k, leaf.o2w[k]);
        }
        wr_u64(n, r2::inst::BLAS, leaf.blas);
        wr_u32(n, r2::inst::BLAS_ROOT, blas.root);
        wr_u32(n, r2::inst::BLAS_BVH_OFFSET, blas.bvh_offset);
        wr_u32(n, r2::inst::INDEX, leaf.index);
        wr_u32(n, r2::inst::CUSTOM_MASK, leaf.custom_mask);
        wr_u32(n, r2::inst::SBT_FLAGS, leaf.sbt_flags);
        plan.prim_nodes += 1;
        if parent == ptr::INVALID {
            root_ptr = me;
        } else {
            let at = ptr::offset(parent) as usize + 4 * child;
            wr_u32(&mut plan.bytes, at, me);
        }
    }
    Ok(root_ptr)
}
