//! The BVH records as the walker's PEs consume them, decoded straight from the bytes in
//! device memory: an internal node's child boxes dequantised into per-axis lanes (so one
//! slab test covers every child), a leaf's kind and length, an instance, a header.
//!
//! Nodes and leaves are decoded on every visit: the compressed records are what keeps a
//! structure cache-resident (a decoded node is three times the size of a CW-BVH4 node, and
//! caching decoded nodes measured slower). Headers are decoded once per dispatch
//! ([`HeaderCache`]): every trace starts with one, and every instance entry reads its BLAS's.

use crate::abi::bvh::{self, header, inst, node, proc, tri};
use crate::abi::{rd_f32, rd_u32};
use rustc_hash::FxHashMap;

/// An internal node of width `W`: child `c`'s box is `lo[axis][c]..hi[axis][c]`. Lanes from
/// `count` on hold whatever the unused slots decode to and must be ignored.
#[derive(Clone, Copy, Debug)]
pub struct Node<const W: usize> {
    pub count: usize,
    pub lo: [[f32; W]; 3],
    pub hi: [[f32; W]; 3],
    pub child: [u32; W],
}

/// Why a record is not the node it should be: its kind byte and child count.
pub struct NotANode {
    pub kind: u8,
    pub count: usize,
}

/// The child count of an internal node of width `W`, or why the record is not one.
#[inline(always)]
pub fn node_count<const W: usize>(b: &[u8]) -> Result<usize, NotANode> {
    let (kind, n) = (b[node::KIND], b[node::COUNT] as usize);
    if kind != bvh::NODE_INTERNAL || n == 0 || n > W {
        return Err(NotANode { kind, count: n });
    }
    Ok(n)
}

impl<const W: usize> Node<W> {
    /// Decodes a node from its `node_bytes(W)` bytes (`bvh::dequant` per coordinate).
    #[inline(always)]
    pub fn decode(b: &[u8]) -> Result<Node<W>, NotANode> {
        let w = W as u32;
        let b = &b[..bvh::node_bytes(w)];
        let n = node_count::<W>(b)?;
        let origin = [rd_f32(b, node::ORIGIN), rd_f32(b, node::ORIGIN + 4), rd_f32(b, node::ORIGIN + 8)];
        let scale = [
            bvh::exp2i(b[node::EXP] as i8 as i32),
            bvh::exp2i(b[node::EXP + 1] as i8 as i32),
            bvh::exp2i(b[node::EXP + 2] as i8 as i32),
        ];
        let (ql, qh) = (&b[node::qlo(w)..node::qlo(w) + 3 * W], &b[node::qhi(w)..node::qhi(w) + 3 * W]);
        let mut out = Node { count: n, lo: [[0.0; W]; 3], hi: [[0.0; W]; 3], child: [0; W] };
        #[cfg(target_arch = "x86_64")]
        if W == 4 {
            let (lo, hi) = (dequant4(ql, origin, scale), dequant4(qh, origin, scale));
            for a in 0..3 {
                out.lo[a][..4].copy_from_slice(&lo[a]);
                out.hi[a][..4].copy_from_slice(&hi[a]);
            }
            let ch = &b[node::CHILD..node::CHILD + 4 * W];
            for c in 0..W {
                out.child[c] = u32::from_le_bytes([ch[4 * c], ch[4 * c + 1], ch[4 * c + 2], ch[4 * c + 3]]);
            }
            return Ok(out);
        }
        // Plain loops (not `array::from_fn`): this is the hottest decode in the model.
        for a in 0..3 {
            for c in 0..W {
                // `bvh::dequant`, with its power of two hoisted out of the loop.
                out.lo[a][c] = origin[a] + ql[3 * c + a] as f32 * scale[a];
                out.hi[a][c] = origin[a] + qh[3 * c + a] as f32 * scale[a];
            }
        }
        let ch = &b[node::CHILD..node::CHILD + 4 * W];
        for c in 0..W {
            out.child[c] = u32::from_le_bytes([ch[4 * c], ch[4 * c + 1], ch[4 * c + 2], ch[4 * c + 3]]);
        }
        Ok(out)
    }
}

/// The twelve quantised corners of a 4-wide node's children (`x0 y0 z0 x1 ... z3`, bytes)
/// dequantised per axis, four children to a vector: the same `origin + q * 2^exp` in f32
/// as [`bvh::dequant`] (one multiply, one add, no fused rounding), so the same bits. The
/// strided scalar loop does not vectorise; this measured 4 % less CPU time on the spheres.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn dequant4(q: &[u8], origin: [f32; 3], scale: [f32; 3]) -> [[f32; 4]; 3] {
    use std::arch::x86_64::*;
    let mut bytes = [0u8; 16];
    bytes[..12].copy_from_slice(&q[..12]);
    let mut out = [[0.0f32; 4]; 3];
    // SAFETY: SSE2 is part of the x86_64 baseline; the load reads the 16-byte local array
    // and each store writes one 4-float row of `out`.
    unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().cast());
        let z = _mm_setzero_si128();
        let (w0, w1) = (_mm_unpacklo_epi8(v, z), _mm_unpackhi_epi8(v, z));
        let f0 = _mm_cvtepi32_ps(_mm_unpacklo_epi16(w0, z));
        let f1 = _mm_cvtepi32_ps(_mm_unpackhi_epi16(w0, z));
        let f2 = _mm_cvtepi32_ps(_mm_unpacklo_epi16(w1, z));
        for (a, qa) in corners_by_axis(f0, f1, f2).into_iter().enumerate() {
            let r = _mm_add_ps(_mm_set1_ps(origin[a]), _mm_mul_ps(qa, _mm_set1_ps(scale[a])));
            _mm_storeu_ps(out[a].as_mut_ptr(), r);
        }
    }
    out
}

/// The twelve 32-bit corner lanes of a 4-wide node's children in record order
/// (`x0 y0 z0 x1 | y1 z1 x2 y2 | z2 x3 y3 z3`) regrouped per axis: `[x0 x1 x2 x3]`,
/// `[y0 ..]`, `[z0 ..]`. Lane moves only, so it serves integer lanes (cast) as well.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn corners_by_axis(
    f0: std::arch::x86_64::__m128,
    f1: std::arch::x86_64::__m128,
    f2: std::arch::x86_64::__m128,
) -> [std::arch::x86_64::__m128; 3] {
    use std::arch::x86_64::*;
    // SAFETY: SSE is part of the x86_64 baseline; shuffles only move lanes of registers.
    unsafe {
        // `_mm_shuffle_ps(a, b, imm)` = [a[imm&3], a[imm>>2&3], b[imm>>4&3], b[imm>>6]].
        let xa = _mm_shuffle_ps::<0b11_10_11_00>(f0, f1); // x0 x1 x2 y2
        let xb = _mm_shuffle_ps::<0b01_01_10_10>(xa, f2); // x2 x2 x3 x3
        let ya = _mm_shuffle_ps::<0b00_00_01_01>(f0, f1); // y0 y0 y1 y1
        let yb = _mm_shuffle_ps::<0b10_10_11_11>(f1, f2); // y2 y2 y3 y3
        let za = _mm_shuffle_ps::<0b01_01_10_10>(f0, f1); // z0 z0 z1 z1
        let zb = _mm_shuffle_ps::<0b11_11_00_00>(f2, f2); // z2 z2 z3 z3
        [
            _mm_shuffle_ps::<0b10_00_01_00>(xa, xb), // x0 x1 x2 x3
            _mm_shuffle_ps::<0b10_00_10_00>(ya, yb), // y0 y1 y2 y3
            _mm_shuffle_ps::<0b10_00_10_00>(za, zb), // z0 z1 z2 z3
        ]
    }
}

#[inline(always)]
fn v3(b: &[u8], off: usize) -> [f32; 3] {
    [rd_f32(b, off), rd_f32(b, off + 4), rd_f32(b, off + 8)]
}

/// Triangle `i` of a triangle leaf's bytes: its vertices and primitive index.
#[inline(always)]
pub fn triangle(b: &[u8], i: usize) -> ([[f32; 3]; 3], u32) {
    const _: () = assert!(tri::V1 == tri::V0 + 12 && tri::V2 == tri::V1 + 12 && tri::PRIM == tri::V2 + 12);
    // The record as one fixed-size piece: a single bounds check, then plain loads.
    let r = triangle_record(i) + tri::V0;
    let rec: &[u8; 40] = b[r..r + 40].try_into().expect("a triangle record");
    let w: [u32; 10] =
        std::array::from_fn(|k| u32::from_le_bytes([rec[4 * k], rec[4 * k + 1], rec[4 * k + 2], rec[4 * k + 3]]));
    let f = |k: usize| [f32::from_bits(w[k]), f32::from_bits(w[k + 1]), f32::from_bits(w[k + 2])];
    ([f(0), f(3), f(6)], w[9])
}

/// Byte offset of triangle `i`'s record in a triangle leaf (the address position fetch
/// reads the vertices from, `rtu_abi::COMMITTED_TRI`/`CANDIDATE_TRI`).
#[inline(always)]
pub fn triangle_record(i: usize) -> usize {
    tri::HEADER + i * tri::RECORD
}

/// Box `i` of a procedural leaf's bytes: min, max and primitive index.
#[inline(always)]
pub fn aabb(b: &[u8], i: usize) -> ([f32; 3], [f32; 3], u32) {
    let r = proc::HEADER + i * proc::RECORD;
    (v3(b, r + proc::MIN), v3(b, r + proc::MAX), rd_u32(b, r + proc::PRIM))
}

const _: () = assert!(tri::GEOM_INDEX == proc::GEOM_INDEX && tri::GEOM_FLAGS == proc::GEOM_FLAGS);

/// A leaf's geometry index and flags (the same place in triangle and procedural leaves).
#[inline(always)]
pub fn leaf_geometry(b: &[u8]) -> (u32, u32) {
    (rd_u32(b, tri::GEOM_INDEX), rd_u32(b, tri::GEOM_FLAGS))
}

/// Why a record is not a leaf: its kind byte and count.
pub struct NotALeaf {
    pub kind: u8,
    pub count: usize,
}

/// A leaf's length from its first `RECORD_ALIGN` bytes.
#[inline(always)]
pub fn leaf_len(head: &[u8]) -> Result<usize, NotALeaf> {
    let (kind, count) = (head[0], head[1] as usize);
    match kind {
        bvh::LEAF_TRI if (1..=tri::MAX_COUNT).contains(&count) => Ok(tri::bytes(count)),
        bvh::LEAF_PROC if (1..=proc::MAX_COUNT).contains(&count) => Ok(proc::bytes(count)),
        bvh::LEAF_INST => Ok(inst::BYTES),
        _ => Err(NotALeaf { kind, count }),
    }
}

/// A structure's header as the walker needs it. Every field a whole word: a copy is whole
/// words too (a `u8` tail was copied as overlapping words, and the walker stalled reading
/// such a copy back).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Level {
    pub base: u64,
    pub size: u64,
    pub root: u32,
    pub width: u32,
    pub kind: u32,
}

/// Why a header is refused (the message names the structure).
pub struct BadHeader(pub String);

impl Level {
    pub fn decode(base: u64, b: &[u8]) -> Result<Level, BadHeader> {
        let h = bvh::Header::parse(&b[..header::BYTES]).map_err(|e| BadHeader(e.to_string()))?;
        if h.root != 0 && (h.size < header::BYTES as u64 + bvh::RECORD_ALIGN as u64 || h.size > u32::MAX as u64 * 16) {
            return Err(BadHeader(format!("implausible size {}", h.size)));
        }
        Ok(Level { base, size: h.size, root: h.root, width: h.width, kind: h.kind as u32 })
    }

    /// A top-level structure (`bvh::KIND_TOP`).
    #[inline]
    pub fn is_top(&self) -> bool {
        self.kind == bvh::KIND_TOP as u32
    }

    /// A bottom-level structure (`bvh::KIND_BOTTOM`).
    #[inline]
    pub fn is_bottom(&self) -> bool {
        self.kind == bvh::KIND_BOTTOM as u32
    }
}

/// Headers decoded during a dispatch, by structure address. Cleared with every dispatch:
/// a structure may be rebuilt in place between dispatches.
#[derive(Default)]
pub struct HeaderCache {
    levels: FxHashMap<u64, Level>,
    /// Headers found in `levels`, by a hash of their address.
    recent: [Option<Level>; RECENT],
}

const RECENT: usize = 16;
const _: () = assert!(RECENT.is_power_of_two() && RECENT > 1);

impl HeaderCache {
    pub fn clear(&mut self) {
        self.levels.clear();
        self.recent = [None; RECENT];
    }

    #[inline]
    pub fn get(&mut self, base: u64) -> Option<Level> {
        // A few structures answer most look-ups (a trace's TLAS, the BLASes its instances
        // name): a small direct-mapped table of headers found in `levels` goes first.
        let slot = &mut self.recent[Self::slot(base)];
        if let Some(l) = slot.filter(|l| l.base == base) {
            return Some(l);
        }
        let l = self.levels.get(&base).copied()?;
        *slot = Some(l);
        Some(l)
    }

    #[inline]
    fn slot(base: u64) -> usize {
        (base.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - RECENT.trailing_zeros())) as usize
    }

    pub fn insert(&mut self, l: Level) {
        // A dispatch touches few structures; a corrupt TLAS naming endless "BLASes" must
        // not grow this without bound.
        if self.levels.len() >= 1 << 16 {
            self.clear();
        }
        self.levels.insert(l.base, l);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_decode_matches_dequant() {
        let w = 4;
        let mut b = vec![0u8; bvh::node_bytes(w)];
        b[node::KIND] = bvh::NODE_INTERNAL;
        b[node::COUNT] = 3;
        b[node::ORIGIN..node::ORIGIN + 4].copy_from_slice(&1.5f32.to_le_bytes());
        b[node::EXP] = (-3i8) as u8;
        for c in 0..3 {
            b[node::CHILD + 4 * c..node::CHILD + 4 * c + 4].copy_from_slice(&(0x100 + c as u32).to_le_bytes());
            b[node::qlo(w) + 3 * c] = 10 * c as u8;
            b[node::qhi(w) + 3 * c] = 10 * c as u8 + 7;
        }
        let Ok(n) = Node::<4>::decode(&b) else { panic!("a valid node is refused") };
        assert_eq!(n.count, 3);
        for c in 0..3 {
            assert_eq!(n.lo[0][c], bvh::dequant(1.5, -3, 10 * c as u8));
            assert_eq!(n.hi[0][c], bvh::dequant(1.5, -3, 10 * c as u8 + 7));
            assert_eq!(n.child[c], 0x100 + c as u32);
        }
        b[node::COUNT] = 5;
        assert!(Node::<4>::decode(&b).is_err(), "more children than the width");
        b[node::COUNT] = 2;
        b[node::KIND] = bvh::LEAF_TRI;
        assert!(Node::<4>::decode(&b).is_err(), "a leaf is not a node");
    }

    /// Every child, axis and corner of random nodes of both widths decodes to exactly
    /// `bvh::dequant` of its byte (the 4-wide decode is vectorised).
    #[test]
    fn every_corner_decodes_like_dequant() {
        let mut rng = crate::rtu::reference::Rng::new(0x1234);
        let mut next = move || rng.next_u64();
        for round in 0..2000 {
            for w in [4u32, 6] {
                let mut b: Vec<u8> = (0..bvh::node_bytes(w)).map(|_| next() as u8).collect();
                b[node::KIND] = bvh::NODE_INTERNAL;
                b[node::COUNT] = 1 + (round % w as usize) as u8;
                let origin: [f32; 3] = std::array::from_fn(|_| (next() % 20001) as f32 * 0.37 - 3700.0);
                for a in 0..3 {
                    b[node::ORIGIN + 4 * a..node::ORIGIN + 4 * a + 4].copy_from_slice(&origin[a].to_le_bytes());
                    b[node::EXP + a] = ((next() % 60) as i32 - 30) as i8 as u8;
                }
                let check = |lo: &[[f32; 8]; 3], hi: &[[f32; 8]; 3]| {
                    for c in 0..w as usize {
                        for a in 0..3 {
                            let e = b[node::EXP + a] as i8;
                            let want_lo = bvh::dequant(origin[a], e, b[node::qlo(w) + 3 * c + a]);
                            let want_hi = bvh::dequant(origin[a], e, b[node::qhi(w) + 3 * c + a]);
                            assert_eq!(lo[a][c].to_bits(), want_lo.to_bits(), "w{w} child {c} axis {a}");
                            assert_eq!(hi[a][c].to_bits(), want_hi.to_bits(), "w{w} child {c} axis {a}");
                        }
                    }
                };
                let widen = |x: &[f32]| -> [f32; 8] { std::array::from_fn(|c| x.get(c).copied().unwrap_or(0.0)) };
                if w == 4 {
                    let Ok(n) = Node::<4>::decode(&b) else { panic!("valid node refused") };
                    check(&n.lo.map(|r| widen(&r)), &n.hi.map(|r| widen(&r)));
                } else {
                    let Ok(n) = Node::<6>::decode(&b) else { panic!("valid node refused") };
                    check(&n.lo.map(|r| widen(&r)), &n.hi.map(|r| widen(&r)));
                }
            }
        }
    }
}
