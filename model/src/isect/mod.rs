//! The rdna2 architecture's node-intersection unit (seed 003's texture-path "TD"): one
//! `ISECT` per lane fetches the node its node pointer names, relative to the BVH descriptor's
//! base, and tests the lane's ray against it: the four boxes of a box node (FP16 or FP32,
//! results sorted near to far when the descriptor says so), or one triangle of a triangle
//! node. Traversal (stack, instances, candidates) stays in the shader.
//!
//! The arithmetic is the RTU's (`rtu::isect`): the same slab test and the same watertight
//! triangle test, so both architectures find bit-identical hits. A triangle is tested with
//! its vertices in the application's order, which the remap bits of return mode 1 give back
//! (the node stores a rotation of it: same facing, same edge functions).
//!
//! Nothing here turns a fault into a miss (seed 004): a pointer past the descriptor's node
//! count, a reserved or driver-defined node type, or an unreadable node is an [`IsectFault`].

pub mod raylog;
pub mod timed;
pub mod unit;
pub mod walk;

use crate::abi::rdna2::{self as r2, ptr, result, Descriptor};
use crate::mem::MemoryMap;
use crate::rtu::isect::{triangle, RayPrep};

/// A lane's ray as the `ISECT` ray operand holds it (seed 003's eleven input words).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IsectRay {
    pub node: u32,
    pub extent: f32,
    pub org: [f32; 3],
    pub dir: [f32; 3],
    pub inv: [f32; 3],
}

impl IsectRay {
    /// From the operand's registers (`abi::rdna2::ray`).
    pub fn from_words(w: &[u32; r2::ray::REGS as usize]) -> IsectRay {
        let f = |i: u32| f32::from_bits(w[i as usize]);
        let v = |i: u32| [f(i), f(i + 1), f(i + 2)];
        IsectRay {
            node: w[r2::ray::NODE as usize],
            extent: f(r2::ray::EXTENT),
            org: v(r2::ray::ORIGIN),
            dir: v(r2::ray::DIR),
            inv: v(r2::ray::INV_DIR),
        }
    }

    pub fn words(&self) -> [u32; r2::ray::REGS as usize] {
        let mut w = [0; r2::ray::REGS as usize];
        w[r2::ray::NODE as usize] = self.node;
        w[r2::ray::EXTENT as usize] = self.extent.to_bits();
        for a in 0..3 {
            w[(r2::ray::ORIGIN + a as u32) as usize] = self.org[a].to_bits();
            w[(r2::ray::DIR + a as u32) as usize] = self.dir[a].to_bits();
            w[(r2::ray::INV_DIR + a as u32) as usize] = self.inv[a].to_bits();
        }
        w
    }

    /// Seed 003: a NaN in the direction, inverse direction, origin or extent, or an infinite
    /// origin, makes the lane inactive (it costs no test and writes misses).
    pub fn inactive(&self) -> bool {
        let any_nan = self.dir.iter().chain(&self.inv).chain(&self.org).any(|v| v.is_nan()) || self.extent.is_nan();
        any_nan || self.org.iter().any(|v| v.is_infinite())
    }
}

/// Why a lane's `ISECT` faulted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IsectFault {
    Descriptor(r2::DescError),
    /// The node (all its slots) lies past the descriptor's node count.
    OutOfBounds {
        node: u32,
        nodes: u64,
    },
    /// Types 6 and 7 are the driver's (the shader handles them), not the unit's.
    NodeType {
        node: u32,
    },
    /// The node's bytes could not be read.
    Memory(crate::mem::MemFault),
}

impl std::fmt::Display for IsectFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IsectFault::Descriptor(e) => write!(f, "ISECT: {e}"),
            IsectFault::OutOfBounds { node, nodes } => {
                write!(f, "ISECT: node pointer {node:#x} is past the descriptor's {nodes} node slots")
            }
            IsectFault::NodeType { node } => {
                write!(f, "ISECT: node pointer {node:#x} names type {}, which the unit does not test", ptr::ty(*node))
            }
            IsectFault::Memory(m) => write!(f, "ISECT: node fetch: {m}"),
        }
    }
}

/// What one lane's test cost: the counters and the timed model read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Node bytes fetched (0 for an inactive lane).
    pub bytes: u32,
    /// Address of the node (valid when `bytes` > 0).
    pub addr: u64,
    pub box_tests: u32,
    pub tri_tests: u32,
}

/// The four result words of a lane whose ray is inactive, or of a box node hitting nothing.
pub const ALL_MISS: [u32; 4] = [result::MISS; 4];

/// Executes one lane's `ISECT`: returns its four result words and what it cost.
pub fn intersect(mem: &MemoryMap, desc: Descriptor, ray: &IsectRay) -> Result<([u32; 4], Work), IsectFault> {
    if ray.inactive() {
        return Ok((ALL_MISS, Work::default()));
    }
    let ty = ptr::ty(ray.node);
    if ty > ptr::BOX32 {
        return Err(IsectFault::NodeType { node: ray.node });
    }
    if ptr::slot(ray.node) as u64 + ptr::slots(ty) as u64 > desc.nodes {
        return Err(IsectFault::OutOfBounds { node: ray.node, nodes: desc.nodes });
    }
    let addr = desc.base + ptr::offset(ray.node);
    let mut b = [0u8; r2::box32::BYTES];
    let bytes = if ty == ptr::BOX32 { r2::box32::BYTES } else { r2::tri::BYTES };
    mem.read(addr, &mut b[..bytes]).map_err(IsectFault::Memory)?;
    let mut work = Work { bytes: bytes as u32, addr, ..Work::default() };
    let words = if ty >= ptr::BOX16 {
        work.box_tests = 4;
        box_node(ray, &b, ty == ptr::BOX16, desc.box_grow, desc.box_sort)
    } else {
        work.tri_tests = 1;
        triangle_node(ray, &b, ty as usize, desc.return_mode)
    };
    Ok((words, work))
}

/// The far-distance widening of `grow` ULPs: `1 + grow * 2^-23`.
pub fn grow_scale(grow: u8) -> f32 {
    1.0 + grow as f32 * f32::EPSILON
}

/// Slab test of one box over `[0, extent]`: the entry distance when the ray touches it.
/// As the RTU's: origin subtracted before the multiply by `1/d`, near and far planes picked
/// by the sign of `1/d`, a NaN distance (a ray lying in a slab plane) adds no bound.
pub fn slab(ray: &IsectRay, lo: [f32; 3], hi: [f32; 3], scale: f32) -> Option<f32> {
    let mut near = 0.0f32;
    let mut far = ray.extent;
    for a in 0..3 {
        let (n, f) = if ray.inv[a] < 0.0 { (hi[a], lo[a]) } else { (lo[a], hi[a]) };
        let tn = (n - ray.org[a]) * ray.inv[a];
        let tf = (f - ray.org[a]) * ray.inv[a];
        if tn > near {
            near = tn;
        }
        if tf < far {
            far = tf;
        }
    }
    (near <= far * scale).then_some(near)
}

/// The four result words of a box node: child pointers of the boxes hit, near to far when
/// `sort` (ties keep child order), in child order otherwise; `MISS` for the others.
pub fn box_node(ray: &IsectRay, b: &[u8], fp16: bool, grow: u8, sort: bool) -> [u32; 4] {
    let (child, boxes) = r2::read_box_node(b, fp16);
    let scale = grow_scale(grow);
    let mut hits: [(f32, u32); 4] = [(f32::INFINITY, result::MISS); 4];
    for i in 0..4 {
        if child[i] == ptr::INVALID {
            continue;
        }
        if let Some(near) = slab(ray, boxes[i].lo, boxes[i].hi, scale) {
            hits[i] = (near, child[i]);
        }
    }
    if sort {
        // Misses (infinite distance) last; a stable sort keeps equal distances in child order.
        hits.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut out = [result::MISS; 4];
        for (o, h) in out.iter_mut().zip(hits.iter().filter(|h| h.1 != result::MISS)) {
            *o = h.1;
        }
        out
    } else {
        hits.map(|h| h.1)
    }
}

/// The three node vertices (0..=4) of triangle `k` in the application's order, from the
/// remap bits (return mode 1): I weighs the application's v1, J its v2, and v0 is the rest.
pub fn app_order(id: u32, k: usize) -> [usize; 3] {
    let hw = r2::tri::VERTS[k];
    let (i, j) = (r2::tri::remap_i(id, k) as usize, r2::tri::remap_j(id, k) as usize);
    if i > 2 || j > 2 || i == j {
        return hw; // not a remap (mode 0 ids, or an unused slot): the hardware order
    }
    [hw[3 - i - j], hw[i], hw[j]]
}

/// The four result words of triangle `k` of a triangle node (`abi::rdna2::result`).
pub fn triangle_node(ray: &IsectRay, b: &[u8], k: usize, mode: u8) -> [u32; 4] {
    let id = crate::abi::rd_u32(b, r2::tri::ID);
    let v = |n: usize| {
        let o = r2::tri::vertex(n);
        let f = |a: usize| crate::abi::rd_f32(b, o + 4 * a);
        [f(0), f(1), f(2)]
    };
    let order = if mode == 1 { app_order(id, k) } else { r2::tri::VERTS[k] };
    let prep = RayPrep::new(ray.org, ray.dir);
    let hit = triangle(&prep, v(order[0]), v(order[1]), v(order[2]), 0.0, ray.extent);
    match (hit, mode) {
        (None, 0) => [result::NO_HIT, 1.0f32.to_bits(), id.wrapping_add(k as u32), 0],
        (None, _) => [result::NO_HIT, 1.0f32.to_bits(), 0, 0],
        (Some(h), m) => {
            // Numerators over a denominator of ±1: the quotients are exactly the test's t and
            // barycentrics, and the sign is the facing.
            let s = if h.det_positive { 1.0f32 } else { -1.0 };
            let (t_num, t_den) = ((h.t * s).to_bits(), s.to_bits());
            if m == 0 {
                [t_num, t_den, id.wrapping_add(k as u32), 1]
            } else {
                [t_num, t_den, (h.u * s).to_bits(), (h.v * s).to_bits()]
            }
        }
    }
}

/// A triangle result's hit: `(t, i, j, front)` when the words say the ray hit within its
/// extent (mode 1 has no hit word: the quotient must be a number no greater than it).
pub fn tri_hit(words: [u32; 4], mode: u8, extent: f32) -> Option<(f32, f32, f32, bool)> {
    let den = f32::from_bits(words[result::T_DENOM as usize]);
    let t = f32::from_bits(words[result::T_NUM as usize]) / den;
    // A NaN t (a miss) is not `<=` anything.
    let reached = t <= extent;
    if mode == 0 && words[result::HIT_OR_J as usize] == 0 || !reached {
        return None;
    }
    let i = f32::from_bits(words[result::ID_OR_I as usize]) / den;
    let j = f32::from_bits(words[result::HIT_OR_J as usize]) / den;
    Some((t, i, j, den > 0.0))
}

#[cfg(test)]
mod tests;
