//! CW-BVH byte layout (seed 000 §6): an acceleration structure as it sits in device memory at
//! the address `vkGetAccelerationStructureDeviceAddressKHR` returns.
//!
//! ```text
//! AS base + 0    header (128 B, two lines)
//! AS base + 128  records: internal nodes and leaves, each 16-byte aligned
//! ```
//!
//! A *child word* names a record: bit 31 is the leaf flag, bits 0..31 the record's offset
//! from the AS base in 16-byte units. Word 0 is never a record (the header lives there), so
//! a root word of 0 means an empty structure: every ray misses it.
//!
//! Internal node, width W (4 or 6): 64 bytes for W=4 (one line), 96 bytes for W=6.
//! ```text
//!  0  u8 kind=NODE_INTERNAL | u8 child_count | u16 0
//!  4  f32 origin[3]        common quantisation origin
//! 16  i8 exp[3] | u8 0      per-axis power-of-two scale
//! 20  u32 child[W]          child words, valid ones first
//! 20+4W  u8 qlo[W][3]       quantised child minima
//! 20+7W  u8 qhi[W][3]       quantised child maxima
//! ```
//! A child's box is `origin + q * 2^exp` per axis, evaluated in f32 exactly as
//! [`dequant`] does. Builders round outward so the dequantised box always contains the
//! child's exact box (a quantised box never shrinks).
//!
//! Layout rule (pre-order): a node's record comes first, then the subtree of each child in
//! slot order, each subtree contiguous, so child offsets strictly increase with the slot
//! and child `i`'s subtree spans `[offset(i), offset(i+1))` (the last child's ends where its
//! parent's subtree ends; the root's ends at or before `SIZE`). The walker
//! relies on it to restart after a short-stack overflow without revisiting anything, and
//! reports a structure that breaks it as bad when a restart needs it.
//!
//! Triangle leaf (`LEAF_TRI`): 16-byte header + `count` records of 40 bytes
//! (v0, v1, v2 as f32x3, then the primitive index), all triangles of one geometry.
//! Instance leaf (`LEAF_INST`): 128 bytes, see [`inst`].
//! Procedural leaf (`LEAF_PROC`): 16-byte header + `count` records of 32 bytes
//! (min f32x3, max f32x3, primitive index, 0).

use super::{rd_f32, rd_u32};

pub const MAGIC: u32 = u32::from_le_bytes(*b"VXAS");
pub const VERSION: u16 = 1;

/// `header.kind`.
pub const KIND_BOTTOM: u8 = 1;
pub const KIND_TOP: u8 = 2;

/// Header layout.
pub mod header {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 4;
    pub const KIND: usize = 6;
    pub const WIDTH: usize = 7;
    /// Child word of the root record (0 = empty structure).
    pub const ROOT: usize = 8;
    /// `VkBuildAccelerationStructureFlagsKHR` the structure was built with.
    pub const BUILD_FLAGS: usize = 12;
    /// Bounds of everything in the structure, in its own space.
    pub const BOUNDS_MIN: usize = 16;
    pub const BOUNDS_MAX: usize = 28;
    /// Bytes used, header included (the compacted size).
    pub const SIZE: usize = 40;
    /// Primitives (triangles + AABBs) or instances.
    pub const PRIM_COUNT: usize = 48;
    pub const GEOMETRY_COUNT: usize = 52;
    pub const NODE_COUNT: usize = 56;
    pub const LEAF_COUNT: usize = 60;
    /// Top level: number of BLAS addresses in the table at `BLAS_TABLE`.
    pub const BLAS_COUNT: usize = 64;
    /// Top level: offset (16-byte units) of a `u64[BLAS_COUNT]` table of the distinct BLAS
    /// addresses the instances reference (serialization needs it).
    pub const BLAS_TABLE: usize = 68;
    pub const BYTES: usize = 128;
}

/// Record granule: record offsets are multiples of this.
pub const RECORD_ALIGN: usize = 16;

/// Record kinds (first byte of every record).
pub const NODE_INTERNAL: u8 = 1;
pub const LEAF_TRI: u8 = 2;
pub const LEAF_INST: u8 = 3;
pub const LEAF_PROC: u8 = 4;

/// Child-word leaf flag.
pub const CHILD_LEAF: u32 = 1 << 31;

/// Packs a child word from a byte offset (which must be 16-byte aligned).
pub const fn child_word(offset: u64, leaf: bool) -> u32 {
    ((offset / RECORD_ALIGN as u64) as u32 & !CHILD_LEAF) | if leaf { CHILD_LEAF } else { 0 }
}

/// Byte offset of the record a child word names.
pub const fn child_offset(word: u32) -> u64 {
    (word & !CHILD_LEAF) as u64 * RECORD_ALIGN as u64
}

pub const fn child_is_leaf(word: u32) -> bool {
    word & CHILD_LEAF != 0
}

/// Widths the format supports.
pub const WIDTHS: [u32; 2] = [4, 6];

/// Bytes of an internal node of width `w`.
pub const fn node_bytes(w: u32) -> usize {
    if w <= 4 {
        64
    } else {
        96
    }
}

/// Internal-node field offsets for width `w`.
pub mod node {
    pub const KIND: usize = 0;
    pub const COUNT: usize = 1;
    pub const ORIGIN: usize = 4;
    pub const EXP: usize = 16;
    pub const CHILD: usize = 20;
    pub const fn qlo(w: u32) -> usize {
        CHILD + 4 * w as usize
    }
    pub const fn qhi(w: u32) -> usize {
        CHILD + 7 * w as usize
    }
}

/// Smallest and largest per-axis exponents a node may use.
pub const EXP_MIN: i32 = -126;
pub const EXP_MAX: i32 = 127;

/// Dequantises one coordinate: `origin + q * 2^exp`, in f32, the way the box PE does it.
/// `2^exp` is exact for the whole exponent range and `q * 2^exp` is exact (q has 8 bits),
/// so the only rounding is the final add; builders check the result against the exact box.
#[inline]
pub fn dequant(origin: f32, exp: i8, q: u8) -> f32 {
    origin + (q as f32) * exp2i(exp as i32)
}

/// `2^e` as an f32, exact for `EXP_MIN..=EXP_MAX`.
#[inline]
pub fn exp2i(e: i32) -> f32 {
    f32::from_bits(((e.clamp(EXP_MIN, EXP_MAX) + 127) as u32) << 23)
}

/// Triangle-leaf layout.
pub mod tri {
    /// u8 kind | u8 count | u16 0
    pub const KIND: usize = 0;
    pub const COUNT: usize = 1;
    pub const GEOM_INDEX: usize = 4;
    /// `VkGeometryFlagsKHR` of the geometry.
    pub const GEOM_FLAGS: usize = 8;
    pub const HEADER: usize = 16;
    /// Per-triangle record: v0, v1, v2 (f32x3 each) then the primitive index.
    pub const RECORD: usize = 40;
    pub const V0: usize = 0;
    pub const V1: usize = 12;
    pub const V2: usize = 24;
    pub const PRIM: usize = 36;
    /// Most triangles one leaf may hold.
    pub const MAX_COUNT: usize = 8;
    pub const fn bytes(count: usize) -> usize {
        (HEADER + RECORD * count).div_ceil(super::RECORD_ALIGN) * super::RECORD_ALIGN
    }
}

/// Procedural-leaf layout.
pub mod proc {
    pub const KIND: usize = 0;
    pub const COUNT: usize = 1;
    pub const GEOM_INDEX: usize = 4;
    pub const GEOM_FLAGS: usize = 8;
    pub const HEADER: usize = 16;
    /// Per-box record: min f32x3, max f32x3, primitive index, 0.
    pub const RECORD: usize = 32;
    pub const MIN: usize = 0;
    pub const MAX: usize = 12;
    pub const PRIM: usize = 24;
    pub const MAX_COUNT: usize = 8;
    pub const fn bytes(count: usize) -> usize {
        HEADER + RECORD * count
    }
}

/// Instance-leaf layout (128 bytes, two lines).
pub mod inst {
    pub const KIND: usize = 0;
    pub const COUNT: usize = 1;
    /// Index of the instance in the build's instance array.
    pub const INDEX: usize = 4;
    /// `instanceCustomIndex[23:0] | mask[31:24]`.
    pub const CUSTOM_MASK: usize = 8;
    /// `sbtRecordOffset[23:0] | flags[31:24]`.
    pub const SBT_FLAGS: usize = 12;
    /// World-to-object 3x4, row-major f32.
    pub const W2O: usize = 16;
    /// Object-to-world 3x4, row-major f32 (the application's transform).
    pub const O2W: usize = 64;
    /// Device address of the referenced BLAS.
    pub const BLAS: usize = 112;
    pub const BYTES: usize = 128;

    use crate::abi::{rd_f32, rd_u32, rd_u64, wr_f32, wr_u32, wr_u64};

    /// An instance leaf's fields: what the builder writes and the walker reads.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub struct Leaf {
        pub index: u32,
        pub custom_mask: u32,
        pub sbt_flags: u32,
        pub w2o: [f32; 12],
        pub o2w: [f32; 12],
        pub blas: u64,
    }

    impl Leaf {
        #[inline]
        pub fn decode(b: &[u8]) -> Leaf {
            let mut it = Leaf {
                index: rd_u32(b, INDEX),
                custom_mask: rd_u32(b, CUSTOM_MASK),
                sbt_flags: rd_u32(b, SBT_FLAGS),
                w2o: [0.0; 12],
                o2w: [0.0; 12],
                blas: rd_u64(b, BLAS),
            };
            for i in 0..12 {
                it.w2o[i] = rd_f32(b, W2O + 4 * i);
                it.o2w[i] = rd_f32(b, O2W + 4 * i);
            }
            it
        }

        /// The whole record (`BYTES`), kind and count included.
        pub fn encode(&self, out: &mut [u8]) {
            out[..BYTES].fill(0);
            out[KIND] = super::LEAF_INST;
            out[COUNT] = 1;
            wr_u32(out, INDEX, self.index);
            wr_u32(out, CUSTOM_MASK, self.custom_mask);
            wr_u32(out, SBT_FLAGS, self.sbt_flags);
            for k in 0..12 {
                wr_f32(out, W2O + 4 * k, self.w2o[k]);
                wr_f32(out, O2W + 4 * k, self.o2w[k]);
            }
            wr_u64(out, BLAS, self.blas);
        }
    }
}

/// Reads the root child word and bounds from a header image, checking magic and version.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Header {
    pub kind: u8,
    pub width: u32,
    pub root: u32,
    pub build_flags: u32,
    pub bounds_min: [f32; 3],
    pub bounds_max: [f32; 3],
    pub size: u64,
    pub prim_count: u32,
    pub geometry_count: u32,
    pub node_count: u32,
    pub leaf_count: u32,
    pub blas_count: u32,
    pub blas_table: u32,
}

/// Why an AS header was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderError {
    BadMagic(u32),
    BadVersion(u16),
    BadKind(u8),
    BadWidth(u8),
    /// Fewer than `header::BYTES` bytes.
    TooShort(usize),
}

impl std::fmt::Display for HeaderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderError::BadMagic(m) => write!(f, "bad acceleration-structure magic {m:#010x}"),
            HeaderError::BadVersion(v) => {
                write!(f, "unsupported acceleration-structure version {v}")
            }
            HeaderError::BadKind(k) => write!(f, "bad acceleration-structure kind {k}"),
            HeaderError::BadWidth(w) => write!(f, "unsupported BVH width {w}"),
            HeaderError::TooShort(n) => write!(f, "{n} bytes cannot hold an acceleration-structure header"),
        }
    }
}

impl Header {
    pub fn parse(b: &[u8]) -> Result<Header, HeaderError> {
        Header::parse_as(b, MAGIC, VERSION)
    }

    /// The header of a structure laid out as `magic` says (the rdna2 layout, `abi::rdna2`,
    /// shares these fields under its own magic).
    pub fn parse_as(b: &[u8], want_magic: u32, want_version: u16) -> Result<Header, HeaderError> {
        if b.len() < header::BYTES {
            return Err(HeaderError::TooShort(b.len()));
        }
        let magic = rd_u32(b, header::MAGIC);
        if magic != want_magic {
            return Err(HeaderError::BadMagic(magic));
        }
        let version = super::rd_u16(b, header::VERSION);
        if version != want_version {
            return Err(HeaderError::BadVersion(version));
        }
        let kind = b[header::KIND];
        if kind != KIND_BOTTOM && kind != KIND_TOP {
            return Err(HeaderError::BadKind(kind));
        }
        let width = b[header::WIDTH];
        if !WIDTHS.contains(&(width as u32)) {
            return Err(HeaderError::BadWidth(width));
        }
        let v3 = |o: usize| [rd_f32(b, o), rd_f32(b, o + 4), rd_f32(b, o + 8)];
        Ok(Header {
            kind,
            width: width as u32,
            root: rd_u32(b, header::ROOT),
            build_flags: rd_u32(b, header::BUILD_FLAGS),
            bounds_min: v3(header::BOUNDS_MIN),
            bounds_max: v3(header::BOUNDS_MAX),
            size: super::rd_u64(b, header::SIZE),
            prim_count: rd_u32(b, header::PRIM_COUNT),
            geometry_count: rd_u32(b, header::GEOMETRY_COUNT),
            node_count: rd_u32(b, header::NODE_COUNT),
            leaf_count: rd_u32(b, header::LEAF_COUNT),
            blas_count: rd_u32(b, header::BLAS_COUNT),
            blas_table: rd_u32(b, header::BLAS_TABLE),
        })
    }

    pub fn write(&self, b: &mut [u8]) {
        self.write_as(b, MAGIC, VERSION);
    }

    /// Writes the header with another layout's magic and version (see [`Header::parse_as`]).
    pub fn write_as(&self, b: &mut [u8], magic: u32, version: u16) {
        use super::{wr_f32, wr_u16, wr_u32, wr_u64};
        b[..header::BYTES].fill(0);
        wr_u32(b, header::MAGIC, magic);
        wr_u16(b, header::VERSION, version);
        b[header::KIND] = self.kind;
        b[header::WIDTH] = self.width as u8;
        wr_u32(b, header::ROOT, self.root);
        wr_u32(b, header::BUILD_FLAGS, self.build_flags);
        for i in 0..3 {
            wr_f32(b, header::BOUNDS_MIN + 4 * i, self.bounds_min[i]);
            wr_f32(b, header::BOUNDS_MAX + 4 * i, self.bounds_max[i]);
        }
        wr_u64(b, header::SIZE, self.size);
        wr_u32(b, header::PRIM_COUNT, self.prim_count);
        wr_u32(b, header::GEOMETRY_COUNT, self.geometry_count);
        wr_u32(b, header::NODE_COUNT, self.node_count);
        wr_u32(b, header::LEAF_COUNT, self.leaf_count);
        wr_u32(b, header::BLAS_COUNT, self.blas_count);
        wr_u32(b, header::BLAS_TABLE, self.blas_table);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_fields_fit() {
        for w in WIDTHS {
            assert!(node::qhi(w) + 3 * w as usize <= node_bytes(w), "width {w}");
            assert_eq!(node_bytes(w) % RECORD_ALIGN, 0);
        }
        assert_eq!(node_bytes(4), 64, "a CW-BVH4 node is one line");
        assert_eq!(tri::bytes(1), 64);
        assert_eq!(tri::PRIM + 4, tri::RECORD);
        assert_eq!(inst::BLAS + 8 + 8, inst::BYTES);
        assert_eq!(proc::PRIM + 8, proc::RECORD);
    }

    #[test]
    fn child_words_round_trip() {
        let w = child_word(128 + 64 * 7, true);
        assert!(child_is_leaf(w));
        assert_eq!(child_offset(w), 128 + 64 * 7);
        let w = child_word(4096, false);
        assert!(!child_is_leaf(w));
        assert_eq!(child_offset(w), 4096);
    }

    #[test]
    fn dequant_is_exact_on_powers() {
        assert_eq!(exp2i(0), 1.0);
        assert_eq!(exp2i(-3), 0.125);
        assert_eq!(exp2i(10), 1024.0);
        assert_eq!(dequant(1.0, -1, 3), 2.5);
        assert_eq!(dequant(-4.0, 2, 255), -4.0 + 1020.0);
    }

    #[test]
    fn header_round_trips_and_refuses_garbage() {
        let h = Header {
            kind: KIND_TOP,
            width: 4,
            root: child_word(128, false),
            build_flags: 1,
            bounds_min: [-1.0, -2.0, -3.0],
            bounds_max: [1.0, 2.0, 3.0],
            size: 4096,
            prim_count: 3,
            geometry_count: 1,
            node_count: 1,
            leaf_count: 3,
            blas_count: 2,
            blas_table: 200,
        };
        let mut b = [0u8; header::BYTES];
        h.write(&mut b);
        assert_eq!(Header::parse(&b).unwrap(), h);
        b[0] ^= 1;
        assert!(matches!(Header::parse(&b), Err(HeaderError::BadMagic(_))));
    }
}
