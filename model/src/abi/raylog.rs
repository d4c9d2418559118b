//! The ray log's byte layout (`VORTEX_RAYLOG=path`, `docs/RAYLOG.md`): what the device model
//! writes and `rt_replay` reads. Version 1. All integers little-endian, floats as their
//! IEEE-754 bits; records are packed (no padding, no alignment).
//!
//! ```text
//! file   = header record*
//! header = MAGIC[8] VERSION:u32 LINE_BYTES:u32                         (HEADER_BYTES)
//! record = tag:u8 body
//!   TAG_LINE  : addr:u64 bytes[LINE_BYTES]                              (LINE_BODY)
//!   TAG_TRACE : the ray, the final result, the decisions                (TRACE_FIXED + n * DECISION_BYTES)
//! ```
//!
//! A LINE gives the contents of one 64-byte device-memory line a walk read; it precedes
//! every trace that read it. A line is written again only when its contents changed since
//! it was last written (a structure rebuilt in place); a trace sees the lines written
//! before it.

/// First bytes of every ray log.
pub const MAGIC: [u8; 8] = *b"VXRAYLOG";
/// Format version this model writes and reads.
pub const VERSION: u32 = 1;

/// File header: magic, version, line size.
pub mod header {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 8;
    /// Bytes per LINE record's data (always [`crate::abi::LINE_BYTES`]).
    pub const LINE_BYTES: usize = 12;
    pub const BYTES: usize = 16;
}

/// Record tags (the first byte of every record).
pub const TAG_LINE: u8 = 1;
pub const TAG_TRACE: u8 = 2;

/// A LINE record's body: the line's device address (a multiple of 64), then its bytes.
pub mod line {
    pub const ADDR: usize = 0;
    pub const DATA: usize = 8;
    pub const BYTES: usize = DATA + crate::abi::LINE_BYTES;
}

/// Words of a span (committed or candidate) a trace record keeps: `span::T` up to
/// `span::FRONT` — t, u, v, primitive, instance id, geometry, custom index, SBT offset,
/// kind and front face, as the window holds them.
pub const HIT_WORDS: usize = 10;
const _: () = {
    use crate::abi::rtu::span;
    assert!(span::T == 0 && span::U == 1 && span::V == 2 && span::PRIM == 3 && span::INST_ID == 4);
    assert!(span::GEOM == 5 && span::CUSTOM == 6 && span::SBT == 7 && span::KIND == 8 && span::FRONT == 9);
};

/// A TRACE record's body. The ray is the TRACE operand; the result is the window's record
/// when the walk ended (or when the shader left the query open, see [`FLAG_OPEN`]).
pub mod trace {
    /// f32 x3, f32, f32 x3, f32: origin, tmin, direction, tmax.
    pub const ORIGIN: usize = 0;
    pub const TMIN: usize = 12;
    pub const DIR: usize = 16;
    pub const TMAX: usize = 28;
    /// u32 ray flags (`abi::rtu` RAY_FLAG_*), u32 cull mask.
    pub const FLAGS: usize = 32;
    pub const CULL_MASK: usize = 36;
    /// u64 acceleration-structure address (0: no structure).
    pub const ACCEL: usize = 40;
    /// u32 final status (`abi::rtu::STS_*`).
    pub const STATUS: usize = 48;
    /// u32 x [`super::HIT_WORDS`]: the committed span's first words, bit for bit.
    pub const HIT: usize = 52;
    /// u64 committed triangle record address (`abi::rtu::COMMITTED_TRI`).
    pub const TRI: usize = HIT + 4 * super::HIT_WORDS;
    /// u8 [`super::FLAG_OPEN`] | [`super::FLAG_TERMINATED_RUNNING`] | [`super::FLAG_DECISIONS_CUT`]
    /// | [`super::FLAG_SHADER_WALK`].
    pub const TRACE_FLAGS: usize = TRI + 8;
    /// u8 reserved (0).
    pub const RESERVED: usize = TRACE_FLAGS + 1;
    /// u16 number of decision records that follow.
    pub const DECISIONS: usize = RESERVED + 1;
    pub const FIXED: usize = DECISIONS + 2;
}

/// One candidate the walk offered and what the shader decided, in offer order.
pub mod decision {
    /// u32 CONTINUE action (`abi::rtu::ACT_*` bits).
    pub const ACTION: usize = 0;
    /// f32 generated hit distance (procedural ACCEPT), as the shader passed it.
    pub const T_GEN: usize = 4;
    /// The candidate as offered: u32 kind (`CANDIDATE_TRIANGLE`/`AABB`), u32 t bits,
    /// u32 primitive, u32 geometry, u32 instance id.
    pub const KIND: usize = 8;
    pub const T: usize = 12;
    pub const PRIM: usize = 16;
    pub const GEOM: usize = 20;
    pub const INST: usize = 24;
    pub const BYTES: usize = 28;
}

/// The shader left the query with a candidate open (it re-armed the query or its warp
/// ended): the result is the record it last saw (a yield status and the committed span
/// at that point).
pub const FLAG_OPEN: u8 = 1;
/// The shader terminated the walk while the RTU was still traversing (timed mode's PENDING
/// lanes): where it stopped depends on timing, so the trace is not replayable.
pub const FLAG_TERMINATED_RUNNING: u8 = 2;
/// More than `u16::MAX` decisions: the list is cut, the trace is not replayable.
pub const FLAG_DECISIONS_CUT: u8 = 4;
/// Recorded by an rdna2 device's shader walk (`RQLOG`), not by an RT unit: the structure
/// is in the `abi::rdna2` layout; the decisions are the candidates the loop handed to the
/// shader, in order, with action 0 (the shader's answer is not observed); the status is
/// DONE_HIT when something is committed, else DONE_MISS; the triangle address is the
/// committed triangle node's address plus the triangle's index in it.
pub const FLAG_SHADER_WALK: u8 = 8;
/// Every flag a version-1 log may hold.
pub const FLAGS_KNOWN: u8 = FLAG_OPEN | FLAG_TERMINATED_RUNNING | FLAG_DECISIONS_CUT | FLAG_SHADER_WALK;
