//! The output merger: a fragment's depth-bounds, stencil and depth tests and writes, then
//! per colour attachment blending, the write mask and the conversion into the attachment's
//! format (`abi::format`).
//!
//! Tests run early, in the raster unit before any fragment warp launches, when the draw
//! allows it (the fragment kernel declares early tests, or cannot write depth, discard or
//! have side effects), and late otherwise, here. Every core has an output-merger port
//! ([`Port`]): `EXP` collects each lane's exports, and when a fragment warp retires its
//! fragments wait until every warp before it in its core's list has merged. Tiles are
//! per core and warps are listed in primitive order per tile, so a pixel's fragments merge
//! in API order whatever order the core's warps finish in.

use super::frag::FragStage;
use super::state::{Attachment, DrawState, Stencil};
use crate::abi::format::{self, Kind};
use crate::abi::gfx::{export, state::flags};
use crate::fault::Fault;
use crate::mem::MemoryMap;
use serde::Serialize;
use std::collections::BTreeMap;

/// What the output merger did in one draw.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OmStats {
    pub early_depth_kills: u64,
    pub early_stencil_kills: u64,
    pub late_depth_kills: u64,
    pub late_stencil_kills: u64,
    pub depth_bounds_kills: u64,
    pub sample_mask_kills: u64,
    /// Fragments whose lane ended without a `DONE` export (discarded or demoted).
    pub discarded: u64,
    /// Fragments that reached the colour attachments, and the pixels written blended.
    pub merged: u64,
    pub blended: u64,
    /// Samples that passed every test: the merged fragments, or without a fragment kernel
    /// those the early tests kept (what an occlusion query counts).
    pub passed: u64,
}

impl OmStats {
    pub fn add(&mut self, o: &OmStats) {
        self.early_depth_kills += o.early_depth_kills;
        self.early_stencil_kills += o.early_stencil_kills;
        self.late_depth_kills += o.late_depth_kills;
        self.late_stencil_kills += o.late_stencil_kills;
        self.depth_bounds_kills += o.depth_bounds_kills;
        self.sample_mask_kills += o.sample_mask_kills;
        self.discarded += o.discarded;
        self.merged += o.merged;
        self.blended += o.blended;
        self.passed += o.passed;
    }
}

/// Where a test runs (which counters it feeds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Early,
    Late,
}

/// `VkCompareOp` on `a` (the fragment's) against `b` (the stored value).
fn compare<T: PartialOrd>(op: u32, a: T, b: T) -> bool {
    match op {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => a != b,
        6 => a >= b,
        _ => true,
    }
}

/// `VkStencilOp` on stored value `s` with reference `r`.
fn stencil_op(op: u32, s: u8, r: u8) -> u8 {
    match op {
        1 => 0,
        2 => r,
        3 => s.saturating_add(1),
        4 => s.saturating_sub(1),
        5 => !s,
        6 => s.wrapping_add(1),
        7 => s.wrapping_sub(1),
        _ => s,
    }
}

/// Depth clamp (`DEPTH_CLAMP`): the viewport's depth range.
pub fn clamp_depth(st: &DrawState, z: f32) -> f32 {
    if !st.has(flags::DEPTH_CLAMP) {
        return z;
    }
    let (a, b) = (st.viewport[4], st.viewport[5]);
    z.clamp(a.min(b), a.max(b))
}

/// The stencil plane's byte for pixel (`x`, `y`) (`S8_UINT` alone may give its plane as the
/// attachment's address).
fn stencil_addr(d: &Attachment, x: u32, y: u32) -> u64 {
    let (base, pitch) = if d.stencil_addr != 0 { (d.stencil_addr, d.stencil_pitch) } else { (d.addr, d.row_pitch) };
    texel_addr(base, pitch, x, y, 1)
}

/// Address of texel (`x`, `y`) of a plane at `base` with `pitch`-byte rows.
fn texel_addr(base: u64, pitch: u64, x: u32, y: u32, bytes: u64) -> u64 {
    base.wrapping_add(y as u64 * pitch).wrapping_add(x as u64 * bytes)
}

/// A little-endian value of `N` bytes at `addr`.
fn read_bytes<const N: usize>(mem: &MemoryMap, addr: u64) -> Result<u32, Fault> {
    let b: [u8; N] = mem.read_array(addr).map_err(Fault::memory)?;
    Ok(b.iter().rev().fold(0, |v, &x| v << 8 | x as u32))
}

/// Depth bounds, stencil and depth tests of a fragment at (`x`, `y`) with depth `z` (already
/// clamped), and their writes. False when the fragment dies.
pub fn depth_stencil(
    st: &DrawState,
    mem: &MemoryMap,
    x: u32,
    y: u32,
    z: f32,
    front: bool,
    when: When,
    stats: &mut OmStats,
) -> Result<bool, Fault> {
    let Some(d) = &st.depth else { return Ok(true) };
    let depth = d.format.depth().map(|fmt| {
        let bytes = d.format.plane_texel_bytes(format::Aspect::Depth).unwrap_or(4) as u64;
        (fmt, texel_addr(d.addr, d.row_pitch, x, y, bytes), bytes)
    });
    let stored = match depth {
        Some((_, addr, 2)) => Some(read_bytes::<2>(mem, addr)?),
        Some((_, addr, _)) => Some(read_bytes::<4>(mem, addr)?),
        None => None,
    };
    if let (Some((fmt, ..)), Some(raw), true) = (depth, stored, st.has(flags::DEPTH_BOUNDS)) {
        let v = format::decode_depth(fmt, raw);
        if !(v >= st.depth_bounds[0] && v <= st.depth_bounds[1]) {
            stats.depth_bounds_kills += 1;
            return Ok(false);
        }
    }
    let face: &Stencil = &st.stencil[!front as usize];
    let stencil = (d.format.has_stencil() && st.has(flags::STENCIL_TEST)).then(|| stencil_addr(d, x, y));
    let s = match stencil {
        Some(a) => read_bytes::<1>(mem, a)? as u8,
        None => 0,
    };
    let reference = face.reference as u8;
    let write_stencil = |op: u32| -> Result<(), Fault> {
        if let Some(a) = stencil {
            let w = face.write_mask as u8;
            let v = (s & !w) | (stencil_op(op, s, reference) & w);
            mem.write(a, &[v]).map_err(Fault::memory)?;
        }
        Ok(())
    };
    if stencil.is_some() {
        let m = face.compare_mask as u8;
        if !compare(face.compare, reference & m, s & m) {
            write_stencil(face.fail_op)?;
            match when {
                When::Early => stats.early_stencil_kills += 1,
                When::Late => stats.late_stencil_kills += 1,
            }
            return Ok(false);
        }
    }
    if let (Some((fmt, addr, bytes)), Some(raw), true) = (depth, stored, st.has(flags::DEPTH_TEST)) {
        let q = format::encode_depth(fmt, z);
        let pass = match fmt {
            format::Depth::D32F => compare(st.depth_compare, z, f32::from_bits(raw)),
            format::Depth::D24 => compare(st.depth_compare, q, raw & 0xFF_FFFF),
            format::Depth::D16 => compare(st.depth_compare, q, raw),
        };
        if !pass {
            write_stencil(face.depth_fail_op)?;
            match when {
                When::Early => stats.early_depth_kills += 1,
                When::Late => stats.late_depth_kills += 1,
            }
            return Ok(false);
        }
        if st.has(flags::DEPTH_WRITE) {
            let v = if fmt == format::Depth::D24 { (raw & 0xFF00_0000) | q } else { q };
            mem.write(addr, &v.to_le_bytes()[..bytes as usize]).map_err(Fault::memory)?;
        }
    }
    write_stencil(face.pass_op)?;
    Ok(true)
}

/// The range a format's fixed-point components hold (blend inputs are clamped to it).
fn clamp_for(kind: Kind, v: f32) -> f32 {
    match kind {
        Kind::Unorm | Kind::Srgb => v.clamp(0.0, 1.0),
        Kind::Snorm => v.clamp(-1.0, 1.0),
        _ => v,
    }
}

/// `VkBlendFactor` `f` for component `c` (3 is alpha).
fn factor(f: u32, c: usize, s: &[f32; 4], d: &[f32; 4], k: &[f32; 4]) -> f32 {
    match f {
        1 => 1.0,
        2 => s[c],
        3 => 1.0 - s[c],
        4 => d[c],
        5 => 1.0 - d[c],
        6 => s[3],
        7 => 1.0 - s[3],
        8 => d[3],
        9 => 1.0 - d[3],
        10 => k[c],
        11 => 1.0 - k[c],
        12 => k[3],
        13 => 1.0 - k[3],
        14 if c < 3 => s[3].min(1.0 - d[3]),
        14 => 1.0,
        // ZERO, and the dual-source factors the device does not offer.
        _ => 0.0,
    }
}

/// `VkBlendOp` `op` of source term `s` (times its factor `sf`) and destination `d` (`df`).
fn blend_op(op: u32, s: f32, sf: f32, d: f32, df: f32) -> f32 {
    match op {
        1 => s * sf - d * df,
        2 => d * df - s * sf,
        3 => s.min(d),
        4 => s.max(d),
        _ => s * sf + d * df,
    }
}

/// The blended colour of source `s` over destination `d` (both in the attachment's
/// domain: normalised formats clamped, sRGB linear), with constants `k`.
pub fn blend(b: &super::state::Blend, s: [f32; 4], d: [f32; 4], k: [f32; 4]) -> [f32; 4] {
    std::array::from_fn(|c| {
        let (sf, df, op) =
            if c < 3 { (b.src_color, b.dst_color, b.color_op) } else { (b.src_alpha, b.dst_alpha, b.alpha_op) };
        blend_op(op, s[c], factor(sf, c, &s, &d, &k), d[c], factor(df, c, &s, &d, &k))
    })
}

/// Writes colour `src` (register values) into attachment `att` at (`x`, `y`): blended when
/// the attachment blends (never for integer formats), through its write mask.
pub fn color(
    st: &DrawState,
    att: &Attachment,
    mem: &MemoryMap,
    x: u32,
    y: u32,
    src: [u32; 4],
    stats: &mut OmStats,
) -> Result<(), Fault> {
    let f = att.format;
    let mask = att.blend.write_mask & 0xF;
    if mask == 0 {
        return Ok(());
    }
    let tb = f.texel_bytes() as usize;
    let addr = texel_addr(att.addr, att.row_pitch, x, y, tb as u64);
    let blends = att.blend.enable && !f.is_integer();
    let all = (1 << f.comps) - 1;
    if !blends && mask & all == all {
        // Every component replaced: nothing of the old texel survives.
        let mut new = [0u8; 16];
        format::encode_texel(f, src, &mut new[..tb]);
        return mem.write(addr, &new[..tb]).map_err(Fault::memory);
    }
    let mut old = [0u8; 16];
    mem.read(addr, &mut old[..tb]).map_err(Fault::memory)?;
    let value = if blends {
        stats.blended += 1;
        let fl = |v: [u32; 4]| v.map(f32::from_bits);
        let s = fl(src).map(|v| clamp_for(f.kind, v));
        let d = fl(format::decode_texel(f, &old[..tb]));
        let k = st.blend_constants.map(|v| clamp_for(f.kind, v));
        blend(&att.blend, s, d, k).map(f32::to_bits)
    } else {
        src
    };
    let mut new = [0u8; 16];
    format::encode_texel(f, value, &mut new[..tb]);
    format::merge_components(f, mask, &new[..tb], &mut old[..tb]);
    mem.write(addr, &old[..tb]).map_err(Fault::memory)
}

/// One lane's exports.
#[derive(Clone, Copy, Debug)]
pub struct FragOut {
    pub color: [[u32; 4]; 8],
    /// Colour locations exported (bit L).
    pub written: u8,
    pub depth: Option<f32>,
    pub sample_mask: u32,
    /// The lane made its `DONE` export: the fragment goes on to the tests and attachments.
    pub done: bool,
}

impl Default for FragOut {
    fn default() -> Self {
        FragOut { color: [[0; 4]; 8], written: 0, depth: None, sample_mask: !0, done: false }
    }
}

/// A core's output-merger port.
#[derive(Default)]
pub struct Port {
    /// The exports of the fragment warp in each warp slot, one per lane.
    slots: Vec<Vec<FragOut>>,
    /// Warps retired before their turn, by their place in the core's list, with the cycle
    /// they retired at (timed mode).
    waiting: BTreeMap<u32, (u32, Vec<FragOut>, u64)>,
    /// The place of the next warp to merge.
    next: u32,
    pub stats: OmStats,
    /// Timed mode: (quads merged per cycle, latency); the cycle the merger is free from;
    /// the cycle its last merge finished.
    timing: Option<(u64, u64)>,
    free: u64,
    pub end: u64,
}

impl Port {
    /// A fragment stage begins on this core (`timed`: timed mode's knobs).
    pub fn begin(&mut self, warps: usize, timed: Option<&crate::config::GfxConfig>) {
        self.slots.resize_with(warps, Vec::new);
        self.waiting.clear();
        self.next = 0;
        self.stats = OmStats::default();
        self.timing = timed.map(|c| (c.om_quads_per_cycle as u64, c.om_latency as u64));
        (self.free, self.end) = (0, 0);
    }

    /// A fragment warp launches into slot `wid`.
    pub fn launch(&mut self, wid: usize, nt: usize) {
        let s = &mut self.slots[wid];
        s.clear();
        s.resize(nt, FragOut::default());
    }

    /// `EXP` of target `m` from `lane` of the warp in slot `wid`.
    pub fn export(&mut self, wid: usize, lane: usize, m: u8, data: [u32; 4], done: bool) {
        let o = &mut self.slots[wid][lane];
        if o.done {
            return;
        }
        match m {
            export::DEPTH => o.depth = Some(f32::from_bits(data[0])),
            export::SAMPLE_MASK => o.sample_mask = data[0],
            _ => {
                o.color[m as usize] = data;
                o.written |= 1 << m;
            }
        }
        o.done = done;
    }

    /// The fragment warp `warp` in slot `wid` retired (at cycle `now`, timed mode): it
    /// merges once every warp listed before it on this core has. In timed mode a merge
    /// takes its quads' share of the merger's throughput, in list order.
    pub fn retire(&mut self, wid: usize, warp: u32, fs: &FragStage, mem: &MemoryMap, now: u64) -> Result<(), Fault> {
        let outs = std::mem::take(&mut self.slots[wid]);
        self.waiting.insert(fs.warps[warp as usize].seq, (warp, outs, now));
        while let Some((w, outs, t)) = self.waiting.remove(&self.next) {
            merge(fs, w, &outs, mem, &mut self.stats)?;
            if let Some((rate, latency)) = self.timing {
                let start = (t + latency).max(self.free);
                self.free = start + (fs.warps[w as usize].n as u64).div_ceil(rate);
                self.end = self.end.max(self.free);
            }
            self.slots[wid] = outs;
            self.next += 1;
        }
        Ok(())
    }

    /// True when every retired warp has merged.
    pub fn drained(&self) -> bool {
        self.waiting.is_empty()
    }
}

/// Merges fragment warp `w`'s lanes into the attachments.
fn merge(fs: &FragStage, w: u32, outs: &[FragOut], mem: &MemoryMap, stats: &mut OmStats) -> Result<(), Fault> {
    let st = &fs.state;
    let warp = &fs.warps[w as usize];
    for (qi, &q) in warp.quads[..warp.n as usize].iter().enumerate() {
        let quad = fs.quads[q as usize];
        let prim = &fs.prims[quad.prim as usize];
        for p in 0..4 {
            if quad.cover >> p & 1 == 0 {
                continue;
            }
            let o = &outs[4 * qi + p];
            let (x, y) = (quad.x + (p as u32 & 1), quad.y + (p as u32 >> 1));
            if !o.done {
                stats.discarded += 1;
                continue;
            }
            if o.sample_mask & 1 == 0 {
                stats.sample_mask_kills += 1;
                continue;
            }
            if fs.late {
                let z = clamp_depth(st, o.depth.unwrap_or_else(|| prim.at(x, y).z));
                if !depth_stencil(st, mem, x, y, z, prim.front, When::Late, stats)? {
                    continue;
                }
            }
            stats.merged += 1;
            stats.passed += 1;
            for (loc, att) in st.color.iter().enumerate() {
                if let Some(att) = att.as_ref().filter(|_| o.written >> loc & 1 != 0) {
                    color(st, att, mem, x, y, o.color[loc], stats)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_and_stencil_ops() {
        let ops: Vec<bool> = (0..8).map(|op| compare(op, 1, 2)).collect();
        assert_eq!(ops, [false, true, false, true, false, true, false, true]);
        assert_eq!((0..8).map(|op| stencil_op(op, 255, 7)).collect::<Vec<_>>(), [255, 0, 7, 255, 254, 0, 0, 254]);
        assert_eq!(stencil_op(7, 0, 7), 255);
        assert_eq!(stencil_op(4, 0, 7), 0);
    }
}
