//! The second ray-tracing architecture (seed 003): the node formats an RDNA2-style
//! intersection unit reads, the node pointer, the BVH descriptor, the `ISECT` instruction's
//! operands and result words, and the acceleration-structure layout the builder writes for
//! them. Traversal itself runs in the shader (`docs/RDNA2.md`).
//!
//! ```text
//! AS base + 0           header (128 B): the CW-BVH header's layout (`bvh::header`) with
//!                       magic "VXR2" and the fields below at 72..
//! AS base + 128         parent links: u32 per 64-byte node slot, growing down from the
//!                       node base (the parent of slot s is at base - 4 (s + 1))
//! base = AS + BVH_OFFSET (256-byte aligned): the node region, 64-byte slots
//!                       box nodes (FP32: 2 slots, FP16: 1), triangle nodes (1 slot, then
//!                       a 1-slot side record of ids), AABB nodes (1), instance nodes (2,
//!                       contiguous from INST_FIRST)
//! AS base + 16*BLAS_TABLE   TLAS: u64 table of the referenced BLAS addresses
//! ```
//!
//! Hardware node types are 0..=5 (triangles 0..=3, boxes 4 and 5); types 6 (instance) and 7
//! (procedural AABB) are driver-defined: the shader's traversal loop handles them itself,
//! and the intersection unit refuses them (a fault, never a quiet miss).

use super::{rd_f32, rd_u32, wr_f32, wr_u32};

/// Header magic ("VXR2"), in the CW-BVH header's magic field.
pub const MAGIC: u32 = u32::from_le_bytes(*b"VXR2");
pub const VERSION: u16 = 1;

/// Bytes of one node slot: node pointers address 64-byte units from the descriptor base.
pub const SLOT_BYTES: u64 = 64;
/// The descriptor's base address is in units of this.
pub const BASE_ALIGN: u64 = 256;

/// Header fields beyond the CW-BVH header's (whose offsets, `bvh::header`, are shared:
/// kind, build flags, bounds, size, counts, BLAS table).
pub mod header {
    /// Byte offset of the node region from the AS base (a multiple of `BASE_ALIGN`).
    pub const BVH_OFFSET: usize = 72;
    /// Node slots in the region (the descriptor's node count).
    pub const SLOTS: usize = 76;
    /// Box-growing ULPs (u8), box sorting (u8), triangle return mode (u8), FP16 boxes used (u8).
    pub const BOX_GROW: usize = 80;
    pub const BOX_SORT: usize = 81;
    pub const RETURN_MODE: usize = 82;
    pub const BOX16: usize = 83;
    /// Top level: first slot of the instance nodes (contiguous, 2 slots each).
    pub const INST_FIRST: usize = 84;
    /// Triangle nodes whose four slots share vertices (packing statistics).
    pub const TRI_NODES: usize = 88;
}

/// Node pointers: type in bits 2:0, slot (64-byte units from the base) in bits 31:3.
pub mod ptr {
    pub const INVALID: u32 = 0xFFFF_FFFF;
    pub const TYPE_MASK: u32 = 7;
    /// Triangle `k` of a triangle node is type `k`.
    pub const TRI0: u32 = 0;
    pub const TRI3: u32 = 3;
    pub const BOX16: u32 = 4;
    pub const BOX32: u32 = 5;
    /// Driver-defined: an instance node (TLAS leaf).
    pub const INSTANCE: u32 = 6;
    /// Driver-defined: a procedural AABB leaf.
    pub const AABB: u32 = 7;
    /// Largest slot a pointer can name (29 bits: 32 GiB of nodes).
    pub const MAX_SLOT: u32 = (1 << 29) - 1;

    pub const fn make(slot: u32, ty: u32) -> u32 {
        slot << 3 | ty
    }
    pub const fn ty(p: u32) -> u32 {
        p & TYPE_MASK
    }
    pub const fn slot(p: u32) -> u32 {
        p >> 3
    }
    /// Byte offset from the base.
    pub const fn offset(p: u32) -> u64 {
        (p >> 3) as u64 * super::SLOT_BYTES
    }
    /// Slots the node occupies (the descriptor's bounds check covers all of them).
    pub const fn slots(ty: u32) -> u32 {
        if ty == BOX32 || ty == INSTANCE {
            2
        } else {
            1
        }
    }
}

/// Byte offset, below the node base, of the parent link of slot `s` (a u32 node pointer,
/// `ptr::INVALID` for the root).
pub const fn parent_link(slot: u32) -> u64 {
    4 * (slot as u64 + 1)
}

/// FP32 box node (type 5, 128 bytes).
pub mod box32 {
    pub const CHILD: usize = 0;
    /// Box `i`: min xyz then max xyz (f32).
    pub const fn boxes(i: usize) -> usize {
        16 + 24 * i
    }
    pub const BYTES: usize = 128;
}

/// FP16 box node (type 4, 64 bytes).
pub mod box16 {
    pub const CHILD: usize = 0;
    /// Box `i`: min xyz then max xyz (f16).
    pub const fn boxes(i: usize) -> usize {
        16 + 12 * i
    }
    pub const BYTES: usize = 64;
}

/// Triangle node (types 0..=3, 64 bytes): five vertices, then the id word.
pub mod tri {
    /// Vertex `k` (f32x3).
    pub const fn vertex(k: usize) -> usize {
        12 * k
    }
    /// Triangle id (return mode 0) or barycentric remap bits (mode 1).
    pub const ID: usize = 60;
    pub const BYTES: usize = 64;
    /// The implicit connectivity: triangle `k` is vertices `VERTS[k]`, a fan around V2.
    pub const VERTS: [[usize; 3]; 4] = [[0, 1, 2], [1, 3, 2], [2, 3, 4], [2, 4, 0]];
    /// Remap bits of triangle `k`: which of its three vertices (0..=2, in `VERTS` order)
    /// the I and J barycentrics are the weights of.
    pub const fn remap(k: usize, i_vertex: u32, j_vertex: u32) -> u32 {
        (i_vertex | j_vertex << 2) << (8 * k)
    }
    pub const fn remap_i(id: u32, k: usize) -> u32 {
        id >> (8 * k) & 3
    }
    pub const fn remap_j(id: u32, k: usize) -> u32 {
        id >> (8 * k + 2) & 3
    }
}

/// The side record the builder writes in the slot after each triangle node (driver data:
/// the hardware never reads it; the shader reads it for a hit).
pub mod tri_side {
    /// Primitive index of triangle `k`.
    pub const fn prim(k: usize) -> usize {
        4 * k
    }
    /// Geometry index (bits 23:0) and geometry flags (bits 31:24) of triangle `k`.
    pub const fn geom(k: usize) -> usize {
        16 + 4 * k
    }
    /// Node vertices of triangle `k` in the order the application gave them
    /// (`a | b << 4 | c << 8`): position fetch reads them.
    pub const fn order(k: usize) -> usize {
        32 + 4 * k
    }
    pub const BYTES: usize = 64;
}

/// Procedural AABB node (type 7, 64 bytes).
pub mod aabb {
    pub const MIN: usize = 0;
    pub const MAX: usize = 12;
    pub const PRIM: usize = 24;
    /// Geometry index (bits 23:0) and flags (bits 31:24).
    pub const GEOM: usize = 28;
    pub const BYTES: usize = 64;
}

/// Instance node (type 6, 128 bytes).
pub mod inst {
    /// World-to-object 3x4, row-major f32.
    pub const W2O: usize = 0;
    /// Object-to-world 3x4, row-major f32 (the application's transform).
    pub const O2W: usize = 48;
    /// Device address of the BLAS (u64).
    pub const BLAS: usize = 96;
    /// The BLAS's root node pointer and node-region offset (its descriptor base is
    /// `BLAS + BLAS_BVH_OFFSET`).
    pub const BLAS_ROOT: usize = 104;
    pub const BLAS_BVH_OFFSET: usize = 108;
    /// Index of the instance in the build's instance array.
    pub const INDEX: usize = 112;
    /// `instanceCustomIndex[23:0] | mask[31:24]`.
    pub const CUSTOM_MASK: usize = 116;
    /// `sbtRecordOffset[23:0] | flags[31:24]`.
    pub const SBT_FLAGS: usize = 120;
    pub const BYTES: usize = 128;
}

/// Geometry index and flags packed in one word (triangle side records, AABB nodes).
pub const fn geom_word(index: u32, flags: u32) -> u32 {
    (index & 0x00FF_FFFF) | flags << 24
}

/// The 128-bit BVH descriptor (seed 003): base (256-byte units) bits 39:0, box-growing ULPs
/// 62:55, box sorting 63, node count - 1 bits 105:64, triangle return mode 120, large pages
/// 123 (always 1), type 127:124 = 8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// Byte address of the node region (a multiple of `BASE_ALIGN`).
    pub base: u64,
    pub box_grow: u8,
    pub box_sort: bool,
    /// Node slots (pointers beyond them are out of bounds).
    pub nodes: u64,
    /// Triangle return mode: 0 (t, id, hit) or 1 (t, barycentric numerators).
    pub return_mode: u8,
}

/// Registers of the descriptor operand.
pub const DESC_REGS: u32 = 4;
/// `type` field value of a BVH descriptor.
pub const DESC_TYPE: u32 = 8;

/// Why a descriptor was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DescError {
    Type(u32),
    Reserved,
    NoLargePages,
}

impl std::fmt::Display for DescError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DescError::Type(t) => write!(f, "BVH descriptor of type {t} (a BVH descriptor is type {DESC_TYPE})"),
            DescError::Reserved => write!(f, "BVH descriptor with reserved bits set"),
            DescError::NoLargePages => write!(f, "BVH descriptor without the large-pages bit"),
        }
    }
}

impl Descriptor {
    pub fn encode(&self) -> [u32; 4] {
        let base = (self.base / BASE_ALIGN) & ((1 << 40) - 1);
        let w01 = base | (self.box_grow as u64) << 55 | (self.box_sort as u64) << 63;
        let size = self.nodes.saturating_sub(1) & ((1 << 42) - 1);
        let w23 = size | (self.return_mode as u64 & 1) << 56 | 1 << 59 | (DESC_TYPE as u64) << 60;
        [w01 as u32, (w01 >> 32) as u32, w23 as u32, (w23 >> 32) as u32]
    }

    pub fn decode(w: [u32; 4]) -> Result<Descriptor, DescError> {
        let w01 = w[0] as u64 | (w[1] as u64) << 32;
        let w23 = w[2] as u64 | (w[3] as u64) << 32;
        let ty = (w23 >> 60) as u32;
        if ty != DESC_TYPE {
            return Err(DescError::Type(ty));
        }
        if w01 >> 40 & 0x7FFF != 0 || w23 >> 42 & 0x3FFF != 0 || w23 >> 57 & 3 != 0 {
            return Err(DescError::Reserved);
        }
        if w23 >> 59 & 1 == 0 {
            return Err(DescError::NoLargePages);
        }
        Ok(Descriptor {
            base: (w01 & ((1 << 40) - 1)) * BASE_ALIGN,
            box_grow: (w01 >> 55) as u8,
            box_sort: w01 >> 63 != 0,
            nodes: (w23 & ((1 << 42) - 1)) + 1,
            return_mode: (w23 >> 56 & 1) as u8,
        })
    }
}

/// The `ISECT` ray operand: 11 consecutive registers (seed 003's input VGPRs).
pub mod ray {
    pub const NODE: u32 = 0;
    /// The largest t a hit may have.
    pub const EXTENT: u32 = 1;
    pub const ORIGIN: u32 = 2;
    pub const DIR: u32 = 5;
    /// `1/dir` per axis (infinities for zero components).
    pub const INV_DIR: u32 = 8;
    pub const REGS: u32 = 11;
}

/// The four result words.
pub mod result {
    pub const REGS: u32 = 4;
    /// A missed child slot, or no hit.
    pub const MISS: u32 = 0xFFFF_FFFF;
    /// Triangle results: the hit distance is `T_NUM / T_DENOM`; the sign of `T_DENOM` is the
    /// facing (positive: front face, the normal `(v1-v0) x (v2-v0)` against the ray). A miss
    /// has a NaN `T_NUM` (so `t <= extent` fails) and `T_DENOM` = 1.
    pub const T_NUM: u32 = 0;
    pub const T_DENOM: u32 = 1;
    /// Mode 0: the node's id word plus the triangle's index; mode 1: the numerator of the
    /// I barycentric (divide by `T_DENOM`).
    pub const ID_OR_I: u32 = 2;
    /// Mode 0: 1 for a hit, 0 for a miss; mode 1: the numerator of J.
    pub const HIT_OR_J: u32 = 3;
    /// `T_NUM` of a miss.
    pub const NO_HIT: u32 = 0x7FC0_0000;
}

/// A ray query's private state on rdna2 (what `lower/rayquery/rdna2/` keeps per query slot,
/// `BYTES` of private memory at `slot * BYTES`): the ray as `Initialize` gave it, the walk's
/// loop registers between two proceeds, the candidate and committed records, and the short
/// stack of node pointers. Offsets are in words from the slot's base. The model reads it
/// for the ray log (`RQLOG`) and tells stack accesses by their immediate ([`STACK_IMM`]).
pub mod query {
    /// Ray flags, cull mask, tmin (as `Initialize` gave them), world origin and direction.
    pub const FLAGS: u32 = 0;
    pub const CULL: u32 = 1;
    pub const TMIN: u32 = 2;
    pub const WORLD_ORG: u32 = 3;
    pub const WORLD_DIR: u32 = 6;
    /// The top level's descriptor (4 words) and node base (a pair), `TOP_DESC .. +6`.
    pub const TOP_DESC: u32 = 9;

    // The loop registers: saved when proceed returns, loaded when it starts.
    /// The current level's descriptor and node base (6 words).
    pub const DESC: u32 = 15;
    /// The `ISECT` ray operand of the current level ([`super::ray`], 11 words): node,
    /// extent (the committed t, or tmax), origin, direction, inverse direction.
    pub const RAY: u32 = 21;
    /// The instance being walked (zero outside one): node address (pair), index, custom
    /// index, SBT offset and flags word (`inst::SBT_FLAGS`).
    pub const INST: u32 = 32;
    pub const INST_WORDS: u32 = 5;
    /// Stack depth, stack depth where the instance's BLAS began (`NO_LEVEL` in the top
    /// level), node visits so far, done (no more candidates).
    pub const CTL: u32 = 37;
    pub const CTL_WORDS: u32 = 4;
    pub const SP: u32 = 0;
    pub const LEVEL: u32 = 1;
    pub const STEPS: u32 = 2;
    pub const DONE: u32 = 3;
    pub const NO_LEVEL: u32 = u32::MAX;

    /// An intersection record (candidate or committed), word offsets within it.
    pub mod rec {
        pub const T: u32 = 0;
        /// Barycentrics: U then V.
        pub const U: u32 = 1;
        /// `abi::rtu` candidate / committed kind.
        pub const KIND: u32 = 3;
        pub const FRONT: u32 = 4;
        pub const PRIM: u32 = 5;
        pub const GEOM: u32 = 6;
        /// Instance index, custom index, SBT offset (the order of the loop's `INST` + 2).
        pub const INST_ID: u32 = 7;
        pub const CUSTOM: u32 = 8;
        pub const SBT: u32 = 9;
        pub const AABB_OPAQUE: u32 = 10;
        pub const OBJ_ORG: u32 = 11;
        pub const OBJ_DIR: u32 = 14;
        /// The instance node's address (pair; 0 outside an instance): the matrices.
        pub const INST_ADDR: u32 = 17;
        /// The triangle node's address (pair) and the triangle's index in it: position fetch.
        pub const TRI_ADDR: u32 = 19;
        pub const TRI_K: u32 = 21;
        pub const WORDS: u32 = 22;
    }
    pub const CAND: u32 = 41;
    pub const COMM: u32 = CAND + rec::WORDS;
    /// The short stack: node pointers, `STACK_DEPTH` of them.
    pub const STACK: u32 = COMM + rec::WORDS;
    /// Enough for the deepest walk the bench scenes need (17, `docs/RDNA2.md`) plus a BLAS
    /// under a TLAS; a push past it is a fault (`TrapCode::RayQueryStack`), never a lost node.
    pub const STACK_DEPTH: u32 = 64;
    pub const BYTES: u32 = 4 * (STACK + STACK_DEPTH);
    /// The immediate of every stack access (`LDP`/`STP` at `slot base + 4 * depth + imm`);
    /// no other access to a query's state has it (they all lie below the stack), so the
    /// model counts the stack's traffic by it.
    pub const STACK_IMM: u32 = 4 * STACK;

    /// Node visits one query may make before it faults (`TrapCode::RayQuerySteps`): far more
    /// than any finite structure needs (each node is visited at most once per proceed chain).
    pub const STEP_LIMIT: u32 = 1 << 24;

    /// `RQLOG`'s `imm`: `Initialize` armed the query (`b` holds the structure's address).
    pub const LOG_ARM: u32 = 0;
    /// `RQLOG`'s `imm`: a proceed returned (the walk is over when the state's `DONE` is set;
    /// otherwise the candidate record went to the shader).
    pub const LOG_PROCEED: u32 = 1;
}

/// f16 bits of the largest half not above `x` (for a box minimum); `None` when `x` is not
/// representable that way (NaN, or below the smallest finite half).
pub fn f16_down(x: f32) -> Option<u16> {
    let h = half::f16::from_f32(x);
    let h = if h.to_f32() > x { step_half(h, false) } else { h };
    (h.is_finite() && h.to_f32() <= x).then_some(h.to_bits())
}

/// f16 bits of the smallest half not below `x` (for a box maximum).
pub fn f16_up(x: f32) -> Option<u16> {
    let h = half::f16::from_f32(x);
    let h = if h.to_f32() < x { step_half(h, true) } else { h };
    (h.is_finite() && h.to_f32() >= x).then_some(h.to_bits())
}

/// The next half towards +inf (`up`) or -inf.
fn step_half(h: half::f16, up: bool) -> half::f16 {
    let b = h.to_bits();
    let neg = b & 0x8000 != 0;
    let mag = b & 0x7FFF;
    let bits = match (up, neg) {
        // Away from zero on the positive side, towards zero on the negative side.
        (true, false) => b + 1,
        (true, true) if mag == 0 => 0x0001,
        (true, true) => b - 1,
        (false, false) if mag == 0 => 0x8001,
        (false, false) => b - 1,
        (false, true) => b + 1,
    };
    half::f16::from_bits(bits)
}

/// f32 value of f16 bits.
#[inline]
pub fn f16_to_f32(bits: u16) -> f32 {
    half::f16::from_bits(bits).to_f32()
}

/// A box's corners from a node, per axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeBox {
    pub lo: [f32; 3],
    pub hi: [f32; 3],
}

/// The children and boxes of a box node's bytes (`b` holds at least the node).
pub fn read_box_node(b: &[u8], fp16: bool) -> ([u32; 4], [NodeBox; 4]) {
    let child = std::array::from_fn(|i| rd_u32(b, 4 * i));
    let boxes = std::array::from_fn(|i| {
        if fp16 {
            let o = box16::boxes(i);
            let h = |k: usize| f16_to_f32(super::rd_u16(b, o + 2 * k));
            NodeBox { lo: [h(0), h(1), h(2)], hi: [h(3), h(4), h(5)] }
        } else {
            let o = box32::boxes(i);
            let f = |k: usize| rd_f32(b, o + 4 * k);
            NodeBox { lo: [f(0), f(1), f(2)], hi: [f(3), f(4), f(5)] }
        }
    });
    (child, boxes)
}

/// Writes an FP32 box node.
pub fn write_box32(out: &mut [u8], child: &[u32; 4], boxes: &[NodeBox; 4]) {
    out[..box32::BYTES].fill(0);
    for i in 0..4 {
        wr_u32(out, box32::CHILD + 4 * i, child[i]);
        let o = box32::boxes(i);
        for a in 0..3 {
            wr_f32(out, o + 4 * a, boxes[i].lo[a]);
            wr_f32(out, o + 12 + 4 * a, boxes[i].hi[a]);
        }
    }
}

/// The FP16 form of four boxes, rounded outward, if every corner has one.
pub fn box16_of(boxes: &[NodeBox; 4], child: &[u32; 4]) -> Option<[[u16; 6]; 4]> {
    let mut out = [[0u16; 6]; 4];
    for i in 0..4 {
        if child[i] == ptr::INVALID {
            // An empty slot: an inverted box (min +max half, max -max half) no ray enters.
            out[i] = [0x7BFF, 0x7BFF, 0x7BFF, 0xFBFF, 0xFBFF, 0xFBFF];
            continue;
        }
        for a in 0..3 {
            out[i][a] = f16_down(boxes[i].lo[a])?;
            out[i][3 + a] = f16_up(boxes[i].hi[a])?;
        }
    }
    Some(out)
}

/// Writes an FP16 box node.
pub fn write_box16(out: &mut [u8], child: &[u32; 4], halves: &[[u16; 6]; 4]) {
    out[..box16::BYTES].fill(0);
    for i in 0..4 {
        wr_u32(out, box16::CHILD + 4 * i, child[i]);
        for k in 0..6 {
            super::wr_u16(out, box16::boxes(i) + 2 * k, halves[i][k]);
        }
    }
}

/// The inverted box an empty FP32 slot holds: no ray enters it.
pub const EMPTY_BOX: NodeBox = NodeBox { lo: [f32::MAX; 3], hi: [f32::MIN; 3] };

/// The rdna2 fields of a header image (after the shared ones are parsed by
/// [`super::bvh::Header`] rules, with this magic).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Extra {
    pub bvh_offset: u32,
    pub slots: u32,
    pub box_grow: u8,
    pub box_sort: bool,
    pub return_mode: u8,
    pub box16: bool,
    pub inst_first: u32,
    pub tri_nodes: u32,
}

impl Extra {
    pub fn read(b: &[u8]) -> Extra {
        Extra {
            bvh_offset: rd_u32(b, header::BVH_OFFSET),
            slots: rd_u32(b, header::SLOTS),
            box_grow: b[header::BOX_GROW],
            box_sort: b[header::BOX_SORT] != 0,
            return_mode: b[header::RETURN_MODE],
            box16: b[header::BOX16] != 0,
            inst_first: rd_u32(b, header::INST_FIRST),
            tri_nodes: rd_u32(b, header::TRI_NODES),
        }
    }

    pub fn write(&self, b: &mut [u8]) {
        wr_u32(b, header::BVH_OFFSET, self.bvh_offset);
        wr_u32(b, header::SLOTS, self.slots);
        b[header::BOX_GROW] = self.box_grow;
        b[header::BOX_SORT] = self.box_sort as u8;
        b[header::RETURN_MODE] = self.return_mode;
        b[header::BOX16] = self.box16 as u8;
        wr_u32(b, header::INST_FIRST, self.inst_first);
        wr_u32(b, header::TRI_NODES, self.tri_nodes);
    }

    /// The descriptor of a structure at `as_addr` with these fields.
    pub fn descriptor(&self, as_addr: u64) -> Descriptor {
        Descriptor {
            base: as_addr + self.bvh_offset as u64,
            box_grow: self.box_grow,
            box_sort: self.box_sort,
            nodes: self.slots as u64,
            return_mode: self.return_mode,
        }
    }
}

/// Parses an rdna2 structure's header: the shared fields (`bvh::Header`, under this
/// layout's magic) and the rdna2 ones.
pub fn parse_header(b: &[u8]) -> Result<(super::bvh::Header, Extra), super::bvh::HeaderError> {
    let h = super::bvh::Header::parse_as(b, MAGIC, VERSION)?;
    if h.width != 4 {
        return Err(super::bvh::HeaderError::BadWidth(h.width as u8));
    }
    Ok((h, Extra::read(b)))
}

/// Writes an rdna2 structure's header.
pub fn write_header(h: &super::bvh::Header, x: &Extra, b: &mut [u8]) {
    h.write_as(b, MAGIC, VERSION);
    x.write(b);
}

/// Box-growing ULPs the builder puts in every descriptor: the far distance is widened by
/// `1 + grow * 2^-23`, the CW-BVH walker's `FAR_SCALE` (Ize's `1 + 2 gamma(3)` rounded up).
pub const BOX_GROW: u8 = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_round_trips_and_refuses_garbage() {
        let d = Descriptor { base: 0x1234_5600, box_grow: 4, box_sort: true, nodes: 1000, return_mode: 1 };
        let w = d.encode();
        assert_eq!(Descriptor::decode(w), Ok(d));
        // Type 8 in bits 127:124, large pages at 123, return mode at 120, sort at 63.
        assert_eq!(w[3] >> 28, 8);
        assert_eq!(w[3] >> 27 & 1, 1);
        assert_eq!(w[3] >> 24 & 1, 1);
        assert_eq!(w[1] >> 31, 1);
        assert_eq!(w[1] >> 23 & 0xFF, 4);
        assert_eq!(w[2], 999);
        let mut bad = w;
        bad[3] &= 0x0FFF_FFFF;
        assert_eq!(Descriptor::decode(bad), Err(DescError::Type(0)));
        let mut bad = w;
        bad[1] |= 1 << 10;
        assert_eq!(Descriptor::decode(bad), Err(DescError::Reserved));
    }

    #[test]
    fn pointers_and_links() {
        let p = ptr::make(37, ptr::BOX32);
        assert_eq!((ptr::slot(p), ptr::ty(p), ptr::offset(p)), (37, 5, 37 * 64));
        assert_eq!(ptr::make(1, ptr::TRI0), 8, "seed 003: 1 = 0x40 in bits 31:3");
        assert_eq!(parent_link(0), 4);
        assert_eq!(ptr::slots(ptr::BOX32), 2);
        assert_eq!(ptr::slots(ptr::TRI3), 1);
    }

    #[test]
    fn layouts_fit() {
        assert_eq!(box32::boxes(3) + 24, 112, "seed 003: 16 free bytes at 127:112");
        assert_eq!(box16::boxes(3) + 12, box16::BYTES);
        assert_eq!(tri::vertex(4) + 12, tri::ID);
        assert!(tri_side::order(3) + 4 <= tri_side::BYTES);
        const { assert!(inst::SBT_FLAGS + 4 <= inst::BYTES) };
        const { assert!(aabb::GEOM + 4 <= aabb::BYTES) };
        const { assert!(header::TRI_NODES + 4 <= super::super::bvh::header::BYTES) };
        const { assert!(header::BVH_OFFSET >= super::super::bvh::header::BLAS_TABLE + 4) };
        // Every triangle of the fan shares V2, and neighbours share an edge.
        for k in 0..4 {
            assert!(tri::VERTS[k].contains(&2));
        }
        let r = tri::remap(2, 1, 2);
        assert_eq!((tri::remap_i(r, 2), tri::remap_j(r, 2), tri::remap_i(r, 0)), (1, 2, 0));
    }

    #[test]
    fn halves_round_outward() {
        for &x in &[0.0f32, -0.0, 1.0, 0.1, -0.1, 3.140625, 2.71, -65504.0, 65504.0, 1e-6, -1e-6, 1e-9] {
            let (lo, hi) = (f16_down(x).unwrap(), f16_up(x).unwrap());
            assert!(f16_to_f32(lo) <= x && f16_to_f32(hi) >= x, "{x}");
            assert!(f16_to_f32(hi) - f16_to_f32(lo) <= x.abs() * 2e-3 + 1e-7, "{x}: tight");
        }
        assert_eq!(f16_down(70000.0), Some(0x7BFF), "clamped to the largest half below");
        assert_eq!(f16_up(70000.0), None, "no half above");
        assert_eq!(f16_down(f32::NAN), None);
    }
}
