//! Serialising the wide tree into the CW-BVH byte layout of `abi::bvh`, in pre-order: a
//! node's record is followed by its children's subtrees in slot order, each contiguous (the
//! walker's restart relies on it), and conservative int8 quantisation of child boxes.

use super::input::{Aabb, Prims};
use super::sah::{Child, WNode};
use rayon::prelude::*;
use vortex_model::abi::bvh::{self, inst, node, proc, tri};
use vortex_model::abi::{wr_f32, wr_u32, wr_u64};

/// A node's quantisation frame and its children's quantised corners.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantised {
    pub origin: [f32; 3],
    pub exp: [i8; 3],
    pub qlo: Vec<[u8; 3]>,
    pub qhi: Vec<[u8; 3]>,
}

/// Chooses origin and per-axis exponent so every child box maps into 0..=255 and the
/// dequantised box (evaluated exactly as the box PE does, `abi::bvh::dequant`) contains
/// the exact box. The origin is the node minimum, so `q = 0` dequantises exactly to it;
/// upper corners are rounded up and then checked in f32, stepping up (and, past 255, to a
/// coarser exponent) wherever the final f32 add rounded below the exact bound.
pub fn quantise(boxes: &[Aabb]) -> Quantised {
    let mut q =
        Quantised { origin: [0.0; 3], exp: [0; 3], qlo: vec![[0; 3]; boxes.len()], qhi: vec![[0; 3]; boxes.len()] };
    for a in 0..3 {
        let lo = boxes.iter().map(|b| b.lo[a]).fold(f32::INFINITY, f32::min);
        let hi = boxes.iter().map(|b| b.hi[a]).fold(f32::NEG_INFINITY, f32::max);
        let origin = lo;
        let extent = hi as f64 - origin as f64;
        let mut e = if extent > 0.0 { (extent / 255.0).log2().ceil() as i32 } else { bvh::EXP_MIN };
        e = e.clamp(bvh::EXP_MIN, bvh::EXP_MAX);
        'retry: loop {
            let step = (e as f64).exp2();
            for (c, b) in boxes.iter().enumerate() {
                let mut ql = ((b.lo[a] as f64 - origin as f64) / step).floor().clamp(0.0, 255.0) as u32;
                while ql > 0 && bvh::dequant(origin, e as i8, ql as u8) > b.lo[a] {
                    ql -= 1;
                }
                let mut qh = ((b.hi[a] as f64 - origin as f64) / step).ceil().clamp(0.0, 255.0) as u32;
                while bvh::dequant(origin, e as i8, qh.min(255) as u8) < b.hi[a] {
                    qh += 1;
                    if qh > 255 {
                        assert!(e < bvh::EXP_MAX, "quantisation cannot cover a finite box");
                        e += 1;
                        continue 'retry;
                    }
                }
                q.qlo[c][a] = ql as u8;
                q.qhi[c][a] = qh as u8;
            }
            break;
        }
        q.origin[a] = origin;
        q.exp[a] = e as i8;
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

pub struct Writer<'a> {
    pub prims: &'a Prims,
    pub width: u32,
    /// Area of the root box (SAH normalisation).
    pub root_area: f64,
}

impl Writer<'_> {
    /// Record bytes of primitive `p`.
    pub fn leaf_bytes(prims: &Prims, p: u32) -> u64 {
        let p = p as usize;
        if p < prims.tris.len() {
            tri::bytes(1) as u64
        } else if p < prims.tris.len() + prims.aabbs.len() {
            proc::bytes(1) as u64
        } else {
            inst::BYTES as u64
        }
    }

    fn write_leaf(&self, out: &mut [u8], p: u32) {
        let pr = self.prims;
        let p = p as usize;
        if p < pr.tris.len() {
            let t = &pr.tris[p];
            out[tri::KIND] = bvh::LEAF_TRI;
            out[tri::COUNT] = 1;
            wr_u32(out, tri::GEOM_INDEX, t.geom);
            wr_u32(out, tri::GEOM_FLAGS, pr.geom_flags[t.geom as usize]);
            let r = tri::HEADER;
            for (k, off) in [tri::V0, tri::V1, tri::V2].into_iter().enumerate() {
                for a in 0..3 {
                    wr_f32(out, r + off + 4 * a, t.v[k][a]);
                }
            }
            wr_u32(out, r + tri::PRIM, t.prim);
        } else if p < pr.tris.len() + pr.aabbs.len() {
            let b = &pr.aabbs[p - pr.tris.len()];
            out[proc::KIND] = bvh::LEAF_PROC;
            out[proc::COUNT] = 1;
            wr_u32(out, proc::GEOM_INDEX, b.geom);
            wr_u32(out, proc::GEOM_FLAGS, pr.geom_flags[b.geom as usize]);
            let r = proc::HEADER;
            for a in 0..3 {
                wr_f32(out, r + proc::MIN + 4 * a, b.b.lo[a]);
                wr_f32(out, r + proc::MAX + 4 * a, b.b.hi[a]);
            }
            wr_u32(out, r + proc::PRIM, b.prim);
        } else {
            let i = &pr.insts[p - pr.tris.len() - pr.aabbs.len()];
            out[inst::KIND] = bvh::LEAF_INST;
            out[inst::COUNT] = 1;
            wr_u32(out, inst::INDEX, i.index);
            wr_u32(out, inst::CUSTOM_MASK, i.custom_mask);
            wr_u32(out, inst::SBT_FLAGS, i.sbt_flags);
            for k in 0..12 {
                wr_f32(out, inst::W2O + 4 * k, i.w2o[k]);
                wr_f32(out, inst::O2W + 4 * k, i.o2w[k]);
            }
            wr_u64(out, inst::BLAS, i.blas);
        }
    }

    /// Writes the subtree of `child` into `out` (exactly its bytes), which sits at AS
    /// offset `off`. Returns the subtree's SAH sum (unnormalised areas).
    pub fn write(&self, child: &Child, bx: &Aabb, out: &mut [u8], off: u64) -> f64 {
        match child {
            Child::Leaf(p) => {
                self.write_leaf(out, *p);
                bx.half_area() as f64
            }
            Child::Node(n) => self.write_node(n, bx, out, off),
        }
    }

    fn write_node(&self, n: &WNode, bx: &Aabb, out: &mut [u8], off: u64) -> f64 {
        let w = self.width;
        let nb = bvh::node_bytes(w);
        let q = quantise(&n.boxes[..n.count]);
        let (head, mut rest) = out.split_at_mut(nb);
        head[node::KIND] = bvh::NODE_INTERNAL;
        head[node::COUNT] = n.count as u8;
        for a in 0..3 {
            wr_f32(head, node::ORIGIN + 4 * a, q.origin[a]);
            head[node::EXP + a] = q.exp[a] as u8;
        }
        let mut at = off + nb as u64;
        let mut jobs: Vec<(&Child, &Aabb, &mut [u8], u64)> = Vec::with_capacity(n.count);
        for c in 0..n.count {
            let kid = &n.kids[c];
            let (bytes, leaf) = match kid {
                Child::Leaf(p) => (Self::leaf_bytes(self.prims, *p), true),
                Child::Node(k) => (k.bytes, false),
            };
            wr_u32(head, node::CHILD + 4 * c, bvh::child_word(at, leaf));
            for a in 0..3 {
                head[node::qlo(w) + 3 * c + a] = q.qlo[c][a];
                head[node::qhi(w) + 3 * c + a] = q.qhi[c][a];
            }
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(bytes as usize);
            rest = tail;
            jobs.push((kid, &n.boxes[c], mine, at));
            at += bytes;
        }
        let own = bx.half_area() as f64;
        let sum: f64 = if n.bytes >= 1 << 20 {
            jobs.into_par_iter().map(|(k, b, o, at)| self.write(k, b, o, at)).sum()
        } else {
            jobs.into_iter().map(|(k, b, o, at)| self.write(k, b, o, at)).sum()
        };
        own + sum
    }
}
