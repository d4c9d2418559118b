//! The device contract: everything the host side (runtime, transcode) and the device model
//! must agree on, byte for byte. Nothing outside this module restates one of these numbers.
//!
//! | module     | what it fixes                                                        |
//! |------------|----------------------------------------------------------------------|
//! | [`dcr`]    | DCR address map: KMU launch state and RTU per-dispatch config         |
//! | [`csr`]    | CSR numbers a kernel reads (CTA geometry, lane/warp ids, kargs)       |
//! | [`isa`]    | the VX kernel ISA: opcodes, operand formats, 16-byte encoding         |
//! | [`kernel`] | kernel image header, kernel-argument block, descriptor records        |
//! | [`format`] | storage-image texel formats and their register conversion             |
//! | [`gfx`]    | the graphics path: draw DCRs and state record, vertex outputs, fragment CSRs, export, texture and sampler records |
//! | [`rtu`]    | RTU ops' data: hit-window slot map, status codes, ray flags, actions  |
//! | [`bvh`]    | CW-BVH byte layout: AS header, internal nodes, leaves                 |
//! | [`rdna2`]  | the rdna2 architecture: node formats, node pointer, BVH descriptor, `ISECT` operands and results |
//! | [`raylog`] | the ray log's file format (`VORTEX_RAYLOG`, `rt_replay`)              |
//!
//! `docs/ISA.md`, `docs/DCR.md` and `docs/BVH.md` describe the same contract in prose; a
//! change here changes them in the same commit.

pub mod bvh;
pub mod csr;
pub mod dcr;
pub mod format;
pub mod gfx;
pub mod isa;
pub mod kernel;
pub mod raylog;
pub mod rdna2;
pub mod rtu;

/// Bytes in one device memory line (RTCache line, BVH node granule for width 4).
pub const LINE_BYTES: usize = 64;

/// Bytes in one page of the device address space: the granule regions are placed on, the
/// unit a sparse resource is bound in (the `VkMemoryRequirements::alignment` and sparse block
/// size of a sparse buffer) and the unit the TLBs translate.
pub const PAGE_BYTES: u64 = 64 * 1024;

/// Largest warp the model supports: lane masks are `u32`.
pub const MAX_THREADS: usize = 32;

/// Reads a little-endian `u32` at `off`. Panics only on a slice too short, which callers rule
/// out by bounds-checking the record first.
#[inline(always)]
pub fn rd_u32(b: &[u8], off: usize) -> u32 {
    // One bounds check and one load (indexing byte by byte checks each byte).
    u32::from_le_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

#[inline]
pub fn rd_u16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(b[off..off + 2].try_into().expect("2 bytes"))
}

#[inline]
pub fn rd_u64(b: &[u8], off: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(w)
}

#[inline(always)]
pub fn rd_f32(b: &[u8], off: usize) -> f32 {
    f32::from_bits(rd_u32(b, off))
}

#[inline]
pub fn wr_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

#[inline]
pub fn wr_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_le_bytes());
}

#[inline]
pub fn wr_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

#[inline]
pub fn wr_f32(b: &mut [u8], off: usize, v: f32) {
    wr_u32(b, off, v.to_bits());
}
