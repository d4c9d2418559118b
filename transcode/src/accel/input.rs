//! Reading build inputs: vertex formats, index types, geometry transforms, AABBs and
//! instances, exactly as `VkAccelerationStructureBuildRangeInfoKHR` places them. Inputs are
//! read in place where the memory allows it ([`InputMemory::view`]), else copied once.

use super::{BuildError, Geometry, GeometryInput, InputMemory};
use std::collections::HashMap;
use vortex_model::abi::format as fmt;
use vortex_model::abi::{bvh, rdna2};
use vortex_model::config::RtArch;
use vortex_model::mem::{MemFault, MemFaultKind, MemoryMap};

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Aabb {
    pub lo: [f32; 3],
    pub hi: [f32; 3],
}

impl Aabb {
    pub const EMPTY: Aabb = Aabb { lo: [f32::INFINITY; 3], hi: [f32::NEG_INFINITY; 3] };

    /// Grows to contain `o`. Boxes here never hold NaN (inactive primitives are left out
    /// before any box is made), so plain comparisons do.
    #[inline]
    pub fn grow(&mut self, o: &Aabb) {
        for a in 0..3 {
            self.lo[a] = if o.lo[a] < self.lo[a] { o.lo[a] } else { self.lo[a] };
            self.hi[a] = if o.hi[a] > self.hi[a] { o.hi[a] } else { self.hi[a] };
        }
    }

    #[inline]
    pub fn union(mut self, o: &Aabb) -> Aabb {
        self.grow(o);
        self
    }

    #[inline]
    pub fn point(p: [f32; 3]) -> Aabb {
        Aabb { lo: p, hi: p }
    }

    /// Half the surface area (the SAH only needs ratios); 0 for an empty box.
    #[inline]
    pub fn half_area(&self) -> f32 {
        let d = [self.hi[0] - self.lo[0], self.hi[1] - self.lo[1], self.hi[2] - self.lo[2]];
        if d[0].is_nan() || d[0] < 0.0 {
            return 0.0;
        }
        d[0] * d[1] + d[1] * d[2] + d[2] * d[0]
    }

    pub fn is_empty(&self) -> bool {
        self.lo[0].is_nan() || self.hi[0].is_nan() || self.lo[0] > self.hi[0]
    }

    pub fn contains(&self, o: &Aabb) -> bool {
        (0..3).all(|a| self.lo[a] <= o.lo[a] && self.hi[a] >= o.hi[a])
    }
}

/// One primitive as the builder sees it: its exact box and where it came from. For
/// instances `prim` indexes [`Source::insts`]. An inactive primitive has an empty box.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct PrimRef {
    pub lo: [f32; 3],
    pub hi: [f32; 3],
    pub geom: u32,
    pub prim: u32,
}

impl PrimRef {
    pub const INACTIVE: PrimRef =
        PrimRef { lo: [f32::INFINITY; 3], hi: [f32::NEG_INFINITY; 3], geom: u32::MAX, prim: u32::MAX };

    #[inline]
    pub fn aabb(&self) -> Aabb {
        Aabb { lo: self.lo, hi: self.hi }
    }

    #[inline]
    pub fn active(&self) -> bool {
        self.lo[0] <= self.hi[0]
    }
}

/// How a vertex format's components are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Comp {
    F32,
    F16,
    F64,
    Snorm16,
    Unorm16,
    Snorm8,
    Unorm8,
    /// A2B10G10R10 UNORM packed into one word.
    Unorm10Pack,
}

/// A vertex format the builder reads: `comps` of the position's (x, y[, z]) are used,
/// a two-component format has z = 0.
#[derive(Clone, Copy, Debug)]
struct VertexFormat {
    vk: u32,
    comps: usize,
    comp: Comp,
    /// Bytes read per vertex.
    bytes: usize,
}

/// `VkFormat` numbers of vertex formats that are not storage-image formats (so not in
/// `abi::format`); Vulkan constants, host side only.
mod vk {
    pub const R8G8B8_SNORM: u32 = 24;
    pub const R16G16B16_SNORM: u32 = 85;
    pub const R16G16B16_SFLOAT: u32 = 90;
    pub const R32G32B32_SFLOAT: u32 = 106;
    pub const R64G64_SFLOAT: u32 = 115;
    pub const R64G64B64_SFLOAT: u32 = 118;
    pub const R64G64B64A64_SFLOAT: u32 = 121;
    pub const A2B10G10R10_UNORM_PACK32: u32 = 64;
}

const VERTEX_FORMATS: &[VertexFormat] = &[
    VertexFormat { vk: vk::R32G32B32_SFLOAT, comps: 3, comp: Comp::F32, bytes: 12 },
    VertexFormat { vk: fmt::R32G32_SFLOAT, comps: 2, comp: Comp::F32, bytes: 8 },
    VertexFormat { vk: fmt::R32G32B32A32_SFLOAT, comps: 3, comp: Comp::F32, bytes: 12 },
    VertexFormat { vk: fmt::R16G16_SFLOAT, comps: 2, comp: Comp::F16, bytes: 4 },
    VertexFormat { vk: fmt::R16G16B16A16_SFLOAT, comps: 3, comp: Comp::F16, bytes: 6 },
    VertexFormat { vk: vk::R16G16B16_SFLOAT, comps: 3, comp: Comp::F16, bytes: 6 },
    VertexFormat { vk: fmt::R16G16_SNORM, comps: 2, comp: Comp::Snorm16, bytes: 4 },
    VertexFormat { vk: fmt::R16G16B16A16_SNORM, comps: 3, comp: Comp::Snorm16, bytes: 6 },
    VertexFormat { vk: vk::R16G16B16_SNORM, comps: 3, comp: Comp::Snorm16, bytes: 6 },
    VertexFormat { vk: fmt::R16G16_UNORM, comps: 2, comp: Comp::Unorm16, bytes: 4 },
    VertexFormat { vk: fmt::R16G16B16A16_UNORM, comps: 3, comp: Comp::Unorm16, bytes: 6 },
    VertexFormat { vk: fmt::R8G8_SNORM, comps: 2, comp: Comp::Snorm8, bytes: 2 },
    VertexFormat { vk: vk::R8G8B8_SNORM, comps: 3, comp: Comp::Snorm8, bytes: 3 },
    VertexFormat { vk: fmt::R8G8B8A8_SNORM, comps: 3, comp: Comp::Snorm8, bytes: 3 },
    VertexFormat { vk: fmt::R8G8_UNORM, comps: 2, comp: Comp::Unorm8, bytes: 2 },
    VertexFormat { vk: fmt::R8G8B8A8_UNORM, comps: 3, comp: Comp::Unorm8, bytes: 3 },
    VertexFormat { vk: vk::R64G64_SFLOAT, comps: 2, comp: Comp::F64, bytes: 16 },
    VertexFormat { vk: vk::R64G64B64_SFLOAT, comps: 3, comp: Comp::F64, bytes: 24 },
    VertexFormat { vk: vk::R64G64B64A64_SFLOAT, comps: 3, comp: Comp::F64, bytes: 24 },
    VertexFormat { vk: vk::A2B10G10R10_UNORM_PACK32, comps: 3, comp: Comp::Unorm10Pack, bytes: 4 },
];

/// `VkFormat`s the builder accepts as vertex formats (for
/// `VK_FORMAT_FEATURE_ACCELERATION_STRUCTURE_VERTEX_BUFFER_BIT_KHR`).
pub fn vertex_formats() -> impl Iterator<Item = u32> {
    VERTEX_FORMATS.iter().map(|f| f.vk)
}

impl VertexFormat {
    #[inline(always)]
    fn decode(&self, b: &[u8]) -> [f32; 3] {
        let mut p = [0.0f32; 3];
        if self.comp == Comp::F32 {
            for (c, v) in p.iter_mut().enumerate().take(self.comps) {
                *v = f32::from_le_bytes([b[4 * c], b[4 * c + 1], b[4 * c + 2], b[4 * c + 3]]);
            }
            return p;
        }
        if self.comp == Comp::Unorm10Pack {
            let w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            for (c, v) in p.iter_mut().enumerate() {
                *v = ((w >> (10 * c)) & 0x3ff) as f32 / 1023.0;
            }
            return p;
        }
        for (c, v) in p.iter_mut().enumerate().take(self.comps) {
            *v = match self.comp {
                Comp::F16 => half::f16::from_bits(u16::from_le_bytes([b[2 * c], b[2 * c + 1]])).to_f32(),
                Comp::F64 => {
                    let mut w = [0u8; 8];
                    w.copy_from_slice(&b[8 * c..8 * c + 8]);
                    f64::from_le_bytes(w) as f32
                }
                Comp::Snorm16 => (i16::from_le_bytes([b[2 * c], b[2 * c + 1]]) as f32 / 32767.0).max(-1.0),
                Comp::Unorm16 => u16::from_le_bytes([b[2 * c], b[2 * c + 1]]) as f32 / 65535.0,
                Comp::Snorm8 => (b[c] as i8 as f32 / 127.0).max(-1.0),
                Comp::Unorm8 => b[c] as f32 / 255.0,
                Comp::F32 | Comp::Unorm10Pack => unreachable!(),
            };
        }
        p
    }
}

/// `VkIndexType` values.
pub mod index_type {
    pub const UINT16: u32 = 0;
    pub const UINT32: u32 = 1;
    pub const NONE_KHR: u32 = 1_000_165_000;
    pub const UINT8_KHR: u32 = 1_000_265_000;
}

fn mem_err(what: String) -> impl FnOnce(MemFault) -> BuildError {
    move |fault| BuildError::Memory { what, fault }
}

fn unmapped(what: String, addr: u64, size: u64) -> BuildError {
    BuildError::Memory { what, fault: MemFault { addr, size, kind: MemFaultKind::Unmapped } }
}

/// Input bytes: read in place, or copied when the memory cannot lend them.
pub enum Bytes<'a> {
    View(&'a [u8]),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::View(v) => v,
            Bytes::Owned(v) => v,
        }
    }
}

/// `[addr, addr + len)` in one piece: lent by the memory if it can, else copied.
pub fn bytes<'a>(
    input: &'a dyn InputMemory,
    addr: u64,
    len: u64,
    what: impl FnOnce() -> String,
) -> Result<Bytes<'a>, BuildError> {
    if len == 0 {
        return Ok(Bytes::Owned(Vec::new()));
    }
    if let Some(v) = input.view(addr, len) {
        return Ok(Bytes::View(v));
    }
    if addr.checked_add(len).is_none() || len > isize::MAX as u64 || !input.covers(addr, len) {
        return Err(unmapped(what(), addr, len));
    }
    let mut v = vec![0u8; len as usize];
    input.read(addr, &mut v).map_err(mem_err(what()))?;
    Ok(Bytes::Owned(v))
}

fn read_matrix(input: &dyn InputMemory, addr: u64, what: impl FnOnce() -> String) -> Result<[f32; 12], BuildError> {
    let mut b = [0u8; 48];
    input.read(addr, &mut b).map_err(mem_err(what()))?;
    Ok(std::array::from_fn(|i| f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])))
}

/// `m * (p, 1)` in f64.
#[inline]
fn apply_f64(m: &[f64; 12], p: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|r| m[4 * r] * p[0] + m[4 * r + 1] * p[1] + m[4 * r + 2] * p[2] + m[4 * r + 3])
}

#[inline]
fn finite3(p: &[f32; 3]) -> bool {
    p.iter().all(|v| v.is_finite())
}

enum Index<'a> {
    /// Three consecutive vertices per triangle.
    None,
    U8(Bytes<'a>),
    U16(Bytes<'a>),
    U32(Bytes<'a>),
}

/// The triangles of one geometry: corner indices, vertex fetch and decode, transform. A
/// triangle with a NaN or infinite coordinate (after the transform) is inactive.
pub struct TriReader<'a> {
    input: &'a dyn InputMemory,
    fmt: VertexFormat,
    gi: u32,
    pub count: u32,
    index: Index<'a>,
    /// Address of vertex k (k counted after firstVertex) is `vbase + k * stride`.
    vbase: u64,
    stride: u64,
    first: u64,
    /// Vertices `[win_lo, win_lo + win_len)` are in `verts`; others are read one by one.
    verts: Bytes<'a>,
    win_lo: u64,
    win_len: u64,
    xf: Option<[f64; 12]>,
    /// Set when every triangle is three consecutive R32G32B32_SFLOAT vertices in the
    /// window with no transform: the common case, read without decoding.
    plain: bool,
    /// Set when vertices are R32G32B32_SFLOAT with no transform (indexed or not): read
    /// without decoding when they are in the window.
    rgb32: bool,
}

impl<'a> TriReader<'a> {
    pub fn new(input: &'a dyn InputMemory, g: &GeometryInput, gi: u32) -> Result<TriReader<'a>, BuildError> {
        let Geometry::Triangles {
            vertex_format,
            vertex_data,
            vertex_stride,
            max_vertex,
            index_type,
            index_data,
            transform_data,
        } = g.geometry
        else {
            return Err(BuildError::BadRequest(format!("geometry {gi} is not triangles")));
        };
        let r = &g.range;
        let n = r.primitive_count as u64;
        let fmt = *VERTEX_FORMATS
            .iter()
            .find(|f| f.vk == vertex_format)
            .ok_or(BuildError::UnsupportedVertexFormat(vertex_format))?;
        let ibase = index_data.wrapping_add(r.primitive_offset as u64);
        let what = || format!("index buffer of geometry {gi}");
        let index = match index_type {
            _ if n == 0 => Index::None,
            index_type::NONE_KHR => Index::None,
            index_type::UINT8_KHR => Index::U8(bytes(input, ibase, 3 * n, what)?),
            index_type::UINT16 => Index::U16(bytes(input, ibase, 6 * n, what)?),
            index_type::UINT32 => Index::U32(bytes(input, ibase, 12 * n, what)?),
            other => return Err(BuildError::UnsupportedIndexType(other)),
        };
        let vbase = if index_type == index_type::NONE_KHR {
            vertex_data.wrapping_add(r.primitive_offset as u64)
        } else {
            vertex_data
        };
        let xf = if transform_data != 0 && n > 0 {
            let m = read_matrix(input, transform_data.wrapping_add(r.transform_offset as u64), || {
                format!("transform of geometry {gi}")
            })?;
            Some(m.map(|x| x as f64))
        } else {
            None
        };
        let mut t = TriReader {
            input,
            fmt,
            gi,
            count: r.primitive_count,
            index,
            vbase,
            stride: vertex_stride,
            first: r.first_vertex as u64,
            verts: Bytes::Owned(Vec::new()),
            win_lo: 0,
            win_len: 0,
            xf,
            plain: false,
            rgb32: false,
        };
        if n > 0 {
            t.map_vertices(max_vertex)?;
        }
        t.rgb32 = t.fmt.comp == Comp::F32 && t.fmt.comps == 3 && t.xf.is_none();
        t.plain = n > 0 && t.rgb32 && matches!(t.index, Index::None) && t.win_lo == t.first && t.win_len >= 3 * n;
        Ok(t)
    }

    /// Finds a window of vertices to read in one piece: the range `maxVertex` promises,
    /// else the range the indices actually use.
    fn map_vertices(&mut self, max_vertex: u32) -> Result<(), BuildError> {
        let n = self.count as u64;
        let span = |lo: u64, len: u64| -> Option<(u64, u64)> {
            let bytes = (len - 1).checked_mul(self.stride)?.checked_add(self.fmt.bytes as u64)?;
            Some((self.vbase.checked_add(lo.checked_mul(self.stride)?)?, bytes))
        };
        let promised = match self.index {
            Index::None => (self.first, 3 * n),
            _ => (self.first, max_vertex as u64 + 1),
        };
        if let Some((addr, len)) = span(promised.0, promised.1) {
            if let Some(v) = self.input.view(addr, len) {
                (self.verts, self.win_lo, self.win_len) = (Bytes::View(v), promised.0, promised.1);
                return Ok(());
            }
        }
        // The indices' own range (maxVertex may be wrong, or the memory cannot lend it).
        let (mut kmin, mut kmax) = (u64::MAX, 0u64);
        for i in 0..n {
            for c in self.corners(i as u32) {
                kmin = kmin.min(c);
                kmax = kmax.max(c);
            }
        }
        let (lo, len) = (kmin + self.first, kmax - kmin + 1);
        let Some((addr, bytes_len)) = span(lo, len) else { return Ok(()) };
        // Copy the range once when it is not much larger than what is used.
        let used = 3 * n * self.stride.max(self.fmt.bytes as u64);
        if let Some(v) = self.input.view(addr, bytes_len) {
            (self.verts, self.win_lo, self.win_len) = (Bytes::View(v), lo, len);
        } else if bytes_len <= used * 4 + (1 << 20) {
            let gi = self.gi;
            self.verts = bytes(self.input, addr, bytes_len, || format!("vertex buffer of geometry {gi}"))?;
            (self.win_lo, self.win_len) = (lo, len);
        }
        Ok(())
    }

    /// Vertex indices (before firstVertex) of triangle `i`'s corners.
    #[inline]
    fn corners(&self, i: u32) -> [u64; 3] {
        let i = i as usize;
        match &self.index {
            Index::None => {
                let b = 3 * i as u64;
                [b, b + 1, b + 2]
            }
            Index::U8(b) => [b[3 * i] as u64, b[3 * i + 1] as u64, b[3 * i + 2] as u64],
            Index::U16(b) => {
                std::array::from_fn(|k| u16::from_le_bytes([b[6 * i + 2 * k], b[6 * i + 2 * k + 1]]) as u64)
            }
            Index::U32(b) => bytemuck::pod_read_unaligned::<[u32; 3]>(&b[12 * i..12 * i + 12]).map(|k| k as u64),
        }
    }

    #[inline]
    fn vertex(&self, k: u64) -> Result<[f32; 3], BuildError> {
        let rel = k.wrapping_sub(self.win_lo);
        if rel < self.win_len {
            let o = (rel * self.stride) as usize;
            return Ok(self.fmt.decode(&self.verts[o..o + self.fmt.bytes]));
        }
        let mut one = [0u8; 32];
        let addr = self.vbase.wrapping_add(k.wrapping_mul(self.stride));
        self.input
            .read(addr, &mut one[..self.fmt.bytes])
            .map_err(mem_err(format!("vertex {k} of geometry {}", self.gi)))?;
        Ok(self.fmt.decode(&one[..self.fmt.bytes]))
    }

    /// Hints that triangle `i` will be read soon (its vertices, or its indices).
    #[inline]
    pub fn prefetch(&self, i: u32) {
        let at = match &self.index {
            Index::None => {
                let rel = (3 * i as u64 + self.first).wrapping_sub(self.win_lo);
                if rel >= self.win_len {
                    return;
                }
                let p = self.verts[(rel * self.stride) as usize..].as_ptr();
                // Both lines three vertices may straddle (a hint: any address is fine).
                prefetch(p.wrapping_add(2 * self.stride as usize + 11));
                p
            }
            Index::U8(b) => b[3 * i as usize..].as_ptr(),
            Index::U16(b) => b[6 * i as usize..].as_ptr(),
            Index::U32(b) => b[12 * i as usize..].as_ptr(),
        };
        prefetch(at);
    }

    /// Triangles `at..`, one for each item of `items`, handed to `each` with their item in
    /// order (`None` for an inactive one). The reader's path (plain, 32-bit indices in the
    /// window, general) is chosen once for the range rather than once a triangle, and the
    /// decode-free paths are inlined into the caller's loop.
    #[inline(always)]
    pub fn each_tri<I: ExactSizeIterator>(
        &self,
        at: usize,
        items: I,
        mut each: impl FnMut(I::Item, Option<[[f32; 3]; 3]>),
    ) -> Result<(), BuildError> {
        if self.plain && at + items.len() <= self.count as usize {
            for (i, item) in (at as u32..).zip(items) {
                each(item, self.tri_plain(i));
            }
        } else if let (true, Index::U32(ib)) = (self.rgb32, &self.index) {
            for (i, item) in (at as u32..).zip(items) {
                let t = match self.tri_u32(ib, i) {
                    Some(t) => t,
                    None => self.tri_general(i)?,
                };
                each(item, t);
            }
        } else {
            for (i, item) in (at as u32..).zip(items) {
                each(item, self.tri(i)?);
            }
        }
        Ok(())
    }

    /// Triangle `i` of a plain reader (three consecutive R32G32B32_SFLOAT vertices, no
    /// transform), or `None` if it is inactive.
    #[inline(always)]
    fn tri_plain(&self, i: u32) -> Option<[[f32; 3]; 3]> {
        let v: &[u8] = match &self.verts {
            Bytes::View(v) => v,
            Bytes::Owned(v) => v,
        };
        let s = self.stride as usize;
        let o = 3 * i as usize * s;
        // One bounds check for the triangle, then three unaligned 12-byte loads.
        let b = &v[o..o + 2 * s + 12];
        let rd = |o: usize| -> [f32; 3] { bytemuck::pod_read_unaligned(&b[o..o + 12]) };
        let t = [rd(0), rd(s), rd(2 * s)];
        finite9(&t).then_some(t)
    }

    /// Triangle `i` of an `rgb32` reader with 32-bit indices whose corners are all in the
    /// window: three index loads and three unaligned 12-byte vertex loads, with no decode
    /// and no per-vertex dispatch (a client's indexed mesh). `None`: a corner is outside
    /// the window, read the general way.
    #[inline(always)]
    fn tri_u32(&self, ib: &[u8], i: u32) -> Option<Option<[[f32; 3]; 3]>> {
        let v: &[u8] = &self.verts;
        let o = 12 * i as usize;
        let idx: [u32; 3] = bytemuck::pod_read_unaligned(&ib[o..o + 12]);
        let mut t = [[0.0f32; 3]; 3];
        for (k, c) in idx.into_iter().enumerate() {
            let rel = (c as u64 + self.first).wrapping_sub(self.win_lo);
            if rel >= self.win_len {
                return None;
            }
            let o = (rel * self.stride) as usize;
            t[k] = bytemuck::pod_read_unaligned(&v[o..o + 12]);
        }
        Some(finite9(&t).then_some(t))
    }

    /// Triangle `i`, or `None` if it is inactive. The decode-free paths are inlined into
    /// the build's loops; the general reader is a call.
    #[inline(always)]
    pub fn tri(&self, i: u32) -> Result<Option<[[f32; 3]; 3]>, BuildError> {
        if self.plain && i < self.count {
            return Ok(self.tri_plain(i));
        }
        if let (true, Index::U32(ib)) = (self.rgb32, &self.index) {
            if let Some(t) = self.tri_u32(ib, i) {
                return Ok(t);
            }
        }
        self.tri_general(i)
    }

    /// [`TriReader::tri`] through the vertex format's decode, the transform and single
    /// vertex reads outside the window.
    #[inline(never)]
    fn tri_general(&self, i: u32) -> Result<Option<[[f32; 3]; 3]>, BuildError> {
        let c = self.corners(i);
        let mut v = [[0.0f32; 3]; 3];
        for k in 0..3 {
            let vk = c[k].wrapping_add(self.first);
            let rel = vk.wrapping_sub(self.win_lo);
            v[k] = if self.rgb32 && rel < self.win_len {
                // In the window and needing no decode: one unaligned 12-byte load.
                let o = (rel * self.stride) as usize;
                bytemuck::pod_read_unaligned(&self.verts[o..o + 12])
            } else {
                self.vertex(vk)?
            };
        }
        if let Some(m) = &self.xf {
            for vk in v.iter_mut() {
                *vk = apply_f64(m, vk.map(|x| x as f64)).map(|x| x as f32);
            }
        }
        Ok(v.iter().all(finite3).then_some(v))
    }
}

/// True if the triangle's nine coordinates are finite: no exponent is all ones (no branch
/// per coordinate).
/// (On x86_64 only the tests call it, against the SSE version.)
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn finite9_portable(t: &[[f32; 3]; 3]) -> bool {
    let bad = t.as_flattened().iter().fold(0u32, |acc, x| acc | ((x.to_bits() & 0x7f80_0000) == 0x7f80_0000) as u32);
    bad == 0
}

#[cfg(not(target_arch = "x86_64"))]
use finite9_portable as finite9;

/// [`finite9_portable`] with SSE2, a vertex a vector (the fourth lane 0, finite): the same test on
/// the exponent bits, a compare and an or a vertex instead of four scalar steps a
/// coordinate.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn finite9(t: &[[f32; 3]; 3]) -> bool {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; the vectors are built from values.
    unsafe {
        let exp = _mm_set1_epi32(0x7f80_0000);
        let bad = |p: &[f32; 3]| {
            let v = _mm_castps_si128(_mm_setr_ps(p[0], p[1], p[2], 0.0));
            _mm_cmpeq_epi32(_mm_and_si128(v, exp), exp)
        };
        let any = _mm_or_si128(_mm_or_si128(bad(&t[0]), bad(&t[1])), bad(&t[2]));
        _mm_movemask_epi8(any) == 0
    }
}

/// Box of a triangle.
#[inline]
pub fn tri_box(v: &[[f32; 3]; 3]) -> Aabb {
    verts_box(bytemuck::cast_ref(v))
}

/// Box of a triangle stored as nine floats (v0, v1, v2).
#[inline]
pub fn verts_box(v: &[f32; 9]) -> Aabb {
    // Plain compares (one instruction each): the readers only return finite vertices.
    let mn = |a: f32, b: f32| if a < b { a } else { b };
    let mx = |a: f32, b: f32| if a > b { a } else { b };
    Aabb {
        lo: std::array::from_fn(|a| mn(mn(v[a], v[3 + a]), v[6 + a])),
        hi: std::array::from_fn(|a| mx(mx(v[a], v[3 + a]), v[6 + a])),
    }
}

/// Box of a run of triangles (at least one), as [`verts_box`] of the first grown by
/// [`verts_box`] of each next one with [`Aabb::grow`].
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn run_box_portable(vs: &[[f32; 9]]) -> Aabb {
    let mut b = verts_box(&vs[0]);
    for v in &vs[1..] {
        b.grow(&verts_box(v));
    }
    b
}

#[cfg(not(target_arch = "x86_64"))]
pub use run_box_portable as run_box;

/// [`run_box_portable`] with SSE2, a vertex a vector: `minps(a, b)` is
/// `if a < b { a } else { b }` and `maxps(a, b)` `if a > b { a } else { b }`, with the
/// operands in the portable code's order, so the same bits (signed zeros included).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn run_box(vs: &[[f32; 9]]) -> Aabb {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; the vectors are built from values and
    // stored into local arrays.
    unsafe {
        let tri = |v: &[f32; 9]| {
            let p = |k: usize| _mm_setr_ps(v[3 * k], v[3 * k + 1], v[3 * k + 2], 0.0);
            let (a, b, c) = (p(0), p(1), p(2));
            (_mm_min_ps(_mm_min_ps(a, b), c), _mm_max_ps(_mm_max_ps(a, b), c))
        };
        let (mut lo, mut hi) = tri(&vs[0]);
        for v in &vs[1..] {
            let (l, h) = tri(v);
            lo = _mm_min_ps(l, lo);
            hi = _mm_max_ps(h, hi);
        }
        let (mut l, mut h) = ([0.0f32; 4], [0.0f32; 4]);
        _mm_storeu_ps(l.as_mut_ptr(), lo);
        _mm_storeu_ps(h.as_mut_ptr(), hi);
        Aabb { lo: [l[0], l[1], l[2]], hi: [h[0], h[1], h[2]] }
    }
}

/// The AABBs of one geometry (`VkAabbPositionsKHR`). A box with a NaN coordinate or
/// min > max is inactive; infinite coordinates are clamped to the largest finite float.
pub struct AabbReader<'a> {
    data: Bytes<'a>,
    stride: usize,
    pub count: u32,
}

impl<'a> AabbReader<'a> {
    pub fn new(input: &'a dyn InputMemory, g: &GeometryInput, gi: u32) -> Result<AabbReader<'a>, BuildError> {
        let Geometry::Aabbs { data, stride } = g.geometry else {
            return Err(BuildError::BadRequest(format!("geometry {gi} is not AABBs")));
        };
        let n = g.range.primitive_count as u64;
        let base = data.wrapping_add(g.range.primitive_offset as u64);
        let span =
            if n == 0 { 0 } else { (n - 1).checked_mul(stride).and_then(|s| s.checked_add(24)).unwrap_or(u64::MAX) };
        let data = bytes(input, base, span, || format!("AABB buffer of geometry {gi}"))?;
        Ok(AabbReader { data, stride: stride as usize, count: g.range.primitive_count })
    }

    #[inline]
    pub fn aabb(&self, i: u32) -> Option<Aabb> {
        let o = i as usize * self.stride;
        let b = &self.data[o..o + 24];
        let f: [f32; 6] = std::array::from_fn(|k| {
            f32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]]).clamp(f32::MIN, f32::MAX)
        });
        let bx = Aabb { lo: [f[0], f[1], f[2]], hi: [f[3], f[4], f[5]] };
        if f.iter().any(|x| x.is_nan()) || (0..3).any(|a| bx.lo[a] > bx.hi[a]) {
            return None;
        }
        Some(bx)
    }
}

/// Inverse of a 3x4 affine, computed in f64 (`None` if singular or not finite).
pub fn invert_3x4(m: &[f32; 12]) -> Option<[f64; 12]> {
    vortex_model::rtu::reference::invert_3x4_f64(m)
}

/// Rounds an f64 down (`up = false`) or up to an f32 that bounds it.
fn round_out(x: f64, up: bool) -> f32 {
    let f = x as f32;
    if up && (f as f64) < x {
        f.next_up()
    } else if !up && (f as f64) > x {
        f.next_down()
    } else {
        f
    }
}

/// World box of an instance: the 8 corners of the BLAS bounds through `o2w`, in f64,
/// rounded outward and padded by a few ulps so the f32 ray transform cannot miss it.
pub fn instance_box(o2w: &[f32; 12], lo: [f32; 3], hi: [f32; 3]) -> Aabb {
    let m = o2w.map(|x| x as f64);
    let mut wlo = [f64::INFINITY; 3];
    let mut whi = [f64::NEG_INFINITY; 3];
    for c in 0..8 {
        let p = [
            if c & 1 == 0 { lo[0] } else { hi[0] } as f64,
            if c & 2 == 0 { lo[1] } else { hi[1] } as f64,
            if c & 4 == 0 { lo[2] } else { hi[2] } as f64,
        ];
        let w = apply_f64(&m, p);
        for a in 0..3 {
            wlo[a] = wlo[a].min(w[a]);
            whi[a] = whi[a].max(w[a]);
        }
    }
    let mut b = Aabb::EMPTY;
    for a in 0..3 {
        let pad = (whi[a] - wlo[a]).abs().max(wlo[a].abs()).max(whi[a].abs()) * 1e-6;
        b.lo[a] = round_out(wlo[a] - pad, false).clamp(f32::MIN, f32::MAX);
        b.hi[a] = round_out(whi[a] + pad, true).clamp(f32::MIN, f32::MAX);
    }
    b
}

/// Headers of the BLASes instances reference, looked up once per build.
pub struct BlasHeaders<'a> {
    mem: &'a MemoryMap,
    /// The layout a referenced BLAS must have (the device's architecture).
    arch: RtArch,
    /// Header, and whether the address is in `table` yet.
    seen: HashMap<u64, (bvh::Header, bool)>,
    /// rdna2 BLASes: their root pointers and node-region offsets, for instance nodes.
    pub roots: HashMap<u64, super::rdna2::BlasRoot>,
    /// Distinct BLAS addresses referenced by active instances, in first-seen order.
    pub table: Vec<u64>,
}

impl<'a> BlasHeaders<'a> {
    pub fn new(mem: &'a MemoryMap, arch: RtArch) -> BlasHeaders<'a> {
        BlasHeaders { mem, arch, seen: HashMap::new(), roots: HashMap::new(), table: Vec::new() }
    }

    /// The header of the BLAS at `blas` (reached through `reference` by instance `i`). Its
    /// `root` is 0 for an empty structure, whatever the layout.
    pub fn get(&mut self, blas: u64, reference: u64, i: u32) -> Result<bvh::Header, BuildError> {
        if let Some(h) = self.seen.get(&blas) {
            return Ok(h.0);
        }
        let bad = |reason: String| BuildError::BadInstance { instance: i, reference, reason };
        let mut hb = [0u8; bvh::header::BYTES];
        self.mem.read(blas, &mut hb).map_err(|f| bad(format!("cannot read its header: {f}")))?;
        let h = match self.arch {
            RtArch::Rtu => bvh::Header::parse(&hb).map_err(|e| bad(e.to_string()))?,
            RtArch::Rdna2 => {
                let (mut h, x) = rdna2::parse_header(&hb).map_err(|e| bad(format!("{e} (not an rdna2 structure)")))?;
                self.roots.insert(blas, super::rdna2::BlasRoot { root: h.root, bvh_offset: x.bvh_offset });
                h.root = (h.root != rdna2::ptr::INVALID) as u32;
                h
            }
        };
        if h.kind != bvh::KIND_BOTTOM {
            return Err(bad("it is a top-level structure".into()));
        }
        if h.root != 0 && !(finite3(&h.bounds_min) && finite3(&h.bounds_max)) {
            return Err(bad("its bounds are not finite".into()));
        }
        self.seen.insert(blas, (h, false));
        Ok(h)
    }

    /// Lists `blas` (already looked up) in the table: an active instance references it.
    pub fn list(&mut self, blas: u64) {
        if let Some(e) = self.seen.get_mut(&blas) {
            if !e.1 {
                e.1 = true;
                self.table.push(blas);
            }
        }
    }
}

/// One `VkAccelerationStructureInstanceKHR`, decoded.
pub struct InstanceRecord {
    pub o2w: [f32; 12],
    pub custom_mask: u32,
    pub sbt_flags: u32,
    pub reference: u64,
}

impl InstanceRecord {
    pub fn parse(rec: &[u8]) -> InstanceRecord {
        let w32 = |o: usize| u32::from_le_bytes([rec[o], rec[o + 1], rec[o + 2], rec[o + 3]]);
        let mut rw = [0u8; 8];
        rw.copy_from_slice(&rec[56..64]);
        InstanceRecord {
            o2w: std::array::from_fn(|k| f32::from_bits(w32(4 * k))),
            custom_mask: w32(48),
            sbt_flags: w32(52),
            reference: u64::from_le_bytes(rw),
        }
    }
}

/// The instances of one geometry, as records in place or through an array of pointers.
pub struct InstanceReader<'a> {
    input: &'a dyn InputMemory,
    records: Option<Bytes<'a>>,
    pointers: Option<Bytes<'a>>,
    gi: u32,
    pub count: u32,
}

impl<'a> InstanceReader<'a> {
    pub fn new(input: &'a dyn InputMemory, g: &GeometryInput, gi: u32) -> Result<InstanceReader<'a>, BuildError> {
        let Geometry::Instances { data, array_of_pointers } = g.geometry else {
            return Err(BuildError::BadRequest(format!("geometry {gi} is not instances")));
        };
        let n = g.range.primitive_count as u64;
        let base = data.wrapping_add(g.range.primitive_offset as u64);
        let (records, pointers) = if array_of_pointers {
            (None, Some(bytes(input, base, 8 * n, || format!("instance pointer array of geometry {gi}"))?))
        } else {
            (Some(bytes(input, base, 64 * n, || format!("instance array of geometry {gi}"))?), None)
        };
        Ok(InstanceReader { input, records, pointers, gi, count: g.range.primitive_count })
    }

    pub fn record(&self, i: u32) -> Result<InstanceRecord, BuildError> {
        let i = i as usize;
        if let Some(r) = &self.records {
            return Ok(InstanceRecord::parse(&r[64 * i..64 * i + 64]));
        }
        let p = self.pointers.as_ref().expect("records or pointers");
        let mut w = [0u8; 8];
        w.copy_from_slice(&p[8 * i..8 * i + 8]);
        let mut one = [0u8; 64];
        self.input
            .read(u64::from_le_bytes(w), &mut one)
            .map_err(mem_err(format!("instance {i} of geometry {} (through its pointer)", self.gi)))?;
        Ok(InstanceRecord::parse(&one))
    }
}

/// Makes instance `i` of a build: `None` if it is inactive (a null reference, a zero
/// mask, an empty BLAS, a singular or non-finite transform).
pub fn instance(
    input: &dyn InputMemory,
    headers: &mut BlasHeaders,
    rec: &InstanceRecord,
    i: u32,
) -> Result<Option<(bvh::inst::Leaf, Aabb)>, BuildError> {
    if rec.reference == 0 || rec.custom_mask >> 24 == 0 {
        return Ok(None);
    }
    let Some(blas) = input.blas_address(rec.reference) else {
        return Err(BuildError::BadInstance {
            instance: i,
            reference: rec.reference,
            reason: "it names no live acceleration structure".into(),
        });
    };
    let h = headers.get(blas, rec.reference, i)?;
    if h.root == 0 || !rec.o2w.iter().all(|x| x.is_finite()) {
        return Ok(None);
    }
    let Some(inv) = invert_3x4(&rec.o2w) else { return Ok(None) };
    let w2o = inv.map(|x| x as f32);
    if !w2o.iter().all(|x| x.is_finite()) {
        return Ok(None);
    }
    let b = instance_box(&rec.o2w, h.bounds_min, h.bounds_max);
    headers.list(blas);
    let d =
        bvh::inst::Leaf { index: i, custom_mask: rec.custom_mask, sbt_flags: rec.sbt_flags, w2o, o2w: rec.o2w, blas };
    Ok(Some((d, b)))
}

/// Asks the cache for the line at `p` (a hint; no effect where unsupported).
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finite_triangles_as_the_scalar_test() {
        let specials = [0.0f32, -0.0, 1.0, -3.3e38, f32::MAX, f32::MIN_POSITIVE, 1e-45, f32::INFINITY, -f32::INFINITY];
        let mut rng = vortex_model::rtu::reference::Rng::new(9);
        for _ in 0..100_000 {
            let mut t = [[0.0f32; 3]; 3];
            for x in t.as_flattened_mut() {
                let r = rng.next_u64();
                *x = match r % 23 {
                    0 => f32::from_bits(0x7f80_0000 | (r >> 32) as u32 & 0x807f_ffff),
                    1..=4 => specials[(r >> 8) as usize % specials.len()],
                    _ => f32::from_bits((r >> 32) as u32 & 0xbf7f_ffff),
                };
            }
            assert_eq!(finite9(&t), finite9_portable(&t), "{t:?}");
        }
    }

    #[test]
    fn run_boxes_as_the_scalar_union() {
        let specials = [0.0f32, -0.0, 1.0, -1.0, 1e-40, -1e-40];
        let mut rng = vortex_model::rtu::reference::Rng::new(10);
        for round in 0..20_000 {
            let vs: Vec<[f32; 9]> = (0..1 + round % 8)
                .map(|_| {
                    std::array::from_fn(|_| {
                        let r = rng.next_u64();
                        if r.is_multiple_of(3) {
                            specials[(r >> 8) as usize % specials.len()]
                        } else {
                            (r >> 40) as f32 * 1e-3 - 8000.0
                        }
                    })
                })
                .collect();
            let bits = |b: Aabb| (b.lo.map(f32::to_bits), b.hi.map(f32::to_bits));
            assert_eq!(bits(run_box(&vs)), bits(run_box_portable(&vs)), "{vs:?}");
        }
    }
}
