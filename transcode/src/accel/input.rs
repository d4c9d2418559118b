//! Reading build inputs from memory: vertex formats, index types, geometry transforms,
//! AABBs and instances, exactly as `VkAccelerationStructureBuildRangeInfoKHR` places them.

use super::{BuildError, Geometry, GeometryInput, InputMemory};
use std::collections::HashMap;
use vortex_model::abi::bvh;
use vortex_model::abi::format as fmt;
use vortex_model::mem::MemoryMap;

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    pub lo: [f32; 3],
    pub hi: [f32; 3],
}

impl Aabb {
    pub const EMPTY: Aabb = Aabb { lo: [f32::INFINITY; 3], hi: [f32::NEG_INFINITY; 3] };

    #[inline]
    pub fn grow(&mut self, o: &Aabb) {
        for a in 0..3 {
            self.lo[a] = self.lo[a].min(o.lo[a]);
            self.hi[a] = self.hi[a].max(o.hi[a]);
        }
    }

    #[inline]
    pub fn union(mut self, o: &Aabb) -> Aabb {
        self.grow(o);
        self
    }

    /// Half the surface area (the SAH only needs ratios); 0 for an empty box.
    #[inline]
    pub fn half_area(&self) -> f32 {
        let d = [self.hi[0] - self.lo[0], self.hi[1] - self.lo[1], self.hi[2] - self.lo[2]];
        if d[0] < 0.0 {
            return 0.0;
        }
        d[0] * d[1] + d[1] * d[2] + d[2] * d[0]
    }

    pub fn contains(&self, o: &Aabb) -> bool {
        (0..3).all(|a| self.lo[a] <= o.lo[a] && self.hi[a] >= o.hi[a])
    }
}

/// A triangle as its leaf stores it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriData {
    pub v: [[f32; 3]; 3],
    pub geom: u32,
    pub prim: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AabbData {
    pub b: Aabb,
    pub geom: u32,
    pub prim: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InstData {
    pub index: u32,
    pub custom_mask: u32,
    pub sbt_flags: u32,
    pub w2o: [f32; 12],
    pub o2w: [f32; 12],
    pub blas: u64,
}

/// Every active primitive of a build, by kind. A primitive's id in the builder is its index
/// in `tris ++ aabbs ++ insts`.
#[derive(Default)]
pub struct Prims {
    pub tris: Vec<TriData>,
    pub aabbs: Vec<AabbData>,
    pub insts: Vec<InstData>,
    /// Distinct BLAS addresses referenced by active instances, in first-seen order.
    pub blas_table: Vec<u64>,
    /// Geometry flags by geometry index.
    pub geom_flags: Vec<u32>,
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
    #[inline]
    fn decode(&self, b: &[u8]) -> [f32; 3] {
        let mut p = [0.0f32; 3];
        if self.comp == Comp::Unorm10Pack {
            let w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            for (c, v) in p.iter_mut().enumerate() {
                *v = ((w >> (10 * c)) & 0x3ff) as f32 / 1023.0;
            }
            return p;
        }
        for (c, v) in p.iter_mut().enumerate().take(self.comps) {
            *v = match self.comp {
                Comp::F32 => f32::from_le_bytes([b[4 * c], b[4 * c + 1], b[4 * c + 2], b[4 * c + 3]]),
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
                Comp::Unorm10Pack => unreachable!(),
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

fn mem_err(what: String) -> impl FnOnce(vortex_model::mem::MemFault) -> BuildError {
    move |fault| BuildError::Memory { what, fault }
}

/// Reads `[addr, addr + len)` in one piece.
fn read_vec(
    input: &dyn InputMemory,
    addr: u64,
    len: u64,
    what: impl FnOnce() -> String,
) -> Result<Vec<u8>, BuildError> {
    let end = addr.checked_add(len);
    if end.is_none() || len > usize::MAX as u64 || !input.covers(addr, len) {
        return Err(BuildError::Memory {
            what: what(),
            fault: vortex_model::mem::MemFault { addr, size: len, kind: vortex_model::mem::MemFaultKind::Unmapped },
        });
    }
    let mut v = vec![0u8; len as usize];
    input.read(addr, &mut v).map_err(mem_err(what()))?;
    Ok(v)
}

fn read_matrix(input: &dyn InputMemory, addr: u64, what: impl FnOnce() -> String) -> Result<[f32; 12], BuildError> {
    let mut b = [0u8; 48];
    input.read(addr, &mut b).map_err(mem_err(what()))?;
    Ok(std::array::from_fn(|i| f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])))
}

/// `m * (p, 1)` in f64.
fn apply_f64(m: &[f64; 12], p: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|r| m[4 * r] * p[0] + m[4 * r + 1] * p[1] + m[4 * r + 2] * p[2] + m[4 * r + 3])
}

fn finite3(p: &[f32; 3]) -> bool {
    p.iter().all(|v| v.is_finite())
}

/// Reads the triangles of geometry `gi` into `out`. Inactive triangles (a NaN or infinite
/// coordinate) are left out.
pub fn read_triangles(
    input: &dyn InputMemory,
    g: &GeometryInput,
    gi: u32,
    out: &mut Vec<TriData>,
) -> Result<(), BuildError> {
    let Geometry::Triangles {
        vertex_format, vertex_data, vertex_stride, index_type, index_data, transform_data, ..
    } = g.geometry
    else {
        unreachable!()
    };
    let r = &g.range;
    let n = r.primitive_count as u64;
    if n == 0 {
        return Ok(());
    }
    let vf = *VERTEX_FORMATS
        .iter()
        .find(|f| f.vk == vertex_format)
        .ok_or(BuildError::UnsupportedVertexFormat(vertex_format))?;
    // Vertex indices (before firstVertex) of every corner.
    let idx: Vec<u64> = match index_type {
        index_type::NONE_KHR => (0..3 * n).collect(),
        index_type::UINT16 | index_type::UINT32 | index_type::UINT8_KHR => {
            let isz = match index_type {
                index_type::UINT16 => 2,
                index_type::UINT32 => 4,
                _ => 1,
            };
            let base = index_data.wrapping_add(r.primitive_offset as u64);
            let b = read_vec(input, base, 3 * n * isz, || format!("index buffer of geometry {gi}"))?;
            match isz {
                1 => b.iter().map(|&x| x as u64).collect(),
                2 => b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]) as u64).collect(),
                _ => b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64).collect(),
            }
        }
        other => return Err(BuildError::UnsupportedIndexType(other)),
    };
    // Address of vertex `k` (after firstVertex) is vbase + k * stride.
    let vbase = if index_type == index_type::NONE_KHR {
        vertex_data.wrapping_add(r.primitive_offset as u64)
    } else {
        vertex_data
    };
    let first = r.first_vertex as u64;
    let (kmin, kmax) = idx.iter().fold((u64::MAX, 0), |(a, b), &i| (a.min(i + first), b.max(i + first)));
    let stride = vertex_stride;
    let span = (kmax - kmin).checked_mul(stride).and_then(|s| s.checked_add(vf.bytes as u64));
    let what = || format!("vertex buffer of geometry {gi}");
    // One read of the vertex range when it is not much larger than what is used.
    let dense = span.filter(|&s| s <= 3 * n * stride.max(vf.bytes as u64) * 4 + (1 << 20));
    let lo_addr = vbase.wrapping_add(kmin.wrapping_mul(stride));
    let verts: Option<Vec<u8>> = match dense {
        Some(s) => Some(read_vec(input, lo_addr, s, what)?),
        None => None,
    };
    let mut one = [0u8; 24];
    let mut fetch = |k: u64| -> Result<[f32; 3], BuildError> {
        match &verts {
            Some(v) => {
                let o = ((k - kmin) * stride) as usize;
                Ok(vf.decode(&v[o..o + vf.bytes]))
            }
            None => {
                let addr = vbase.wrapping_add(k.wrapping_mul(stride));
                input.read(addr, &mut one[..vf.bytes]).map_err(mem_err(format!("vertex {k} of geometry {gi}")))?;
                Ok(vf.decode(&one[..vf.bytes]))
            }
        }
    };
    let xf = if transform_data != 0 {
        let m = read_matrix(input, transform_data.wrapping_add(r.transform_offset as u64), || {
            format!("transform of geometry {gi}")
        })?;
        Some(m.map(|x| x as f64))
    } else {
        None
    };
    out.reserve(n as usize);
    for i in 0..n as usize {
        let mut v = [[0.0f32; 3]; 3];
        for (k, vk) in v.iter_mut().enumerate() {
            *vk = fetch(idx[3 * i + k] + first)?;
        }
        if let Some(m) = &xf {
            for vk in v.iter_mut() {
                *vk = apply_f64(m, vk.map(|x| x as f64)).map(|x| x as f32);
            }
        }
        if v.iter().all(finite3) {
            out.push(TriData { v, geom: gi, prim: i as u32 });
        }
    }
    Ok(())
}

/// Reads the AABBs of geometry `gi` (`VkAabbPositionsKHR`). A box with a NaN coordinate or
/// min > max is inactive; infinite coordinates are clamped to the largest finite float.
pub fn read_aabbs(
    input: &dyn InputMemory,
    g: &GeometryInput,
    gi: u32,
    out: &mut Vec<AabbData>,
) -> Result<(), BuildError> {
    let Geometry::Aabbs { data, stride } = g.geometry else { unreachable!() };
    let n = g.range.primitive_count as u64;
    if n == 0 {
        return Ok(());
    }
    let base = data.wrapping_add(g.range.primitive_offset as u64);
    let span = (n - 1).checked_mul(stride).and_then(|s| s.checked_add(24)).unwrap_or(u64::MAX);
    let b = read_vec(input, base, span, || format!("AABB buffer of geometry {gi}"))?;
    out.reserve(n as usize);
    for i in 0..n as usize {
        let o = i * stride as usize;
        let f: [f32; 6] = std::array::from_fn(|k| {
            let p = o + 4 * k;
            f32::from_le_bytes([b[p], b[p + 1], b[p + 2], b[p + 3]]).clamp(f32::MIN, f32::MAX)
        });
        let bx = Aabb { lo: [f[0], f[1], f[2]], hi: [f[3], f[4], f[5]] };
        if f.iter().any(|x| x.is_nan()) || (0..3).any(|a| bx.lo[a] > bx.hi[a]) {
            continue;
        }
        out.push(AabbData { b: bx, geom: gi, prim: i as u32 });
    }
    Ok(())
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

/// Reads the instances of geometry `gi`. Instances with a null reference, a zero mask or a
/// singular transform are inactive; those referencing an empty BLAS are left out too.
#[allow(clippy::too_many_arguments)]
pub fn read_instances(
    input: &dyn InputMemory,
    mem: &MemoryMap,
    g: &GeometryInput,
    gi: u32,
    out: &mut Vec<InstData>,
    boxes: &mut Vec<Aabb>,
    blas_table: &mut Vec<u64>,
    headers: &mut HashMap<u64, Option<bvh::Header>>,
) -> Result<(), BuildError> {
    let Geometry::Instances { data, array_of_pointers } = g.geometry else { unreachable!() };
    let n = g.range.primitive_count as u64;
    if n == 0 {
        return Ok(());
    }
    let base = data.wrapping_add(g.range.primitive_offset as u64);
    let (records, ptrs) = if array_of_pointers {
        (None, Some(read_vec(input, base, 8 * n, || format!("instance pointer array of geometry {gi}"))?))
    } else {
        (Some(read_vec(input, base, 64 * n, || format!("instance array of geometry {gi}"))?), None)
    };
    let mut one = [0u8; 64];
    for i in 0..n as usize {
        let rec: &[u8] = match (&records, &ptrs) {
            (Some(r), _) => &r[64 * i..64 * i + 64],
            (_, Some(p)) => {
                let mut w = [0u8; 8];
                w.copy_from_slice(&p[8 * i..8 * i + 8]);
                let addr = u64::from_le_bytes(w);
                input
                    .read(addr, &mut one)
                    .map_err(mem_err(format!("instance {i} of geometry {gi} (through its pointer)")))?;
                &one
            }
            _ => unreachable!(),
        };
        let w32 = |o: usize| u32::from_le_bytes([rec[o], rec[o + 1], rec[o + 2], rec[o + 3]]);
        let o2w: [f32; 12] = std::array::from_fn(|k| f32::from_bits(w32(4 * k)));
        let custom_mask = w32(48);
        let sbt_flags = w32(52);
        let mut rw = [0u8; 8];
        rw.copy_from_slice(&rec[56..64]);
        let reference = u64::from_le_bytes(rw);
        if reference == 0 || custom_mask >> 24 == 0 {
            continue;
        }
        let blas = input.blas_address(reference);
        let h = match headers.get(&blas) {
            Some(h) => *h,
            None => {
                let mut hb = [0u8; bvh::header::BYTES];
                mem.read(blas, &mut hb).map_err(|fault| BuildError::BadInstance {
                    instance: i as u32,
                    reference,
                    reason: format!("cannot read its header: {fault}"),
                })?;
                let h = bvh::Header::parse(&hb).map_err(|e| BuildError::BadInstance {
                    instance: i as u32,
                    reference,
                    reason: e.to_string(),
                })?;
                if h.kind != bvh::KIND_BOTTOM {
                    return Err(BuildError::BadInstance {
                        instance: i as u32,
                        reference,
                        reason: "it is a top-level structure".into(),
                    });
                }
                let finite = finite3(&h.bounds_min) && finite3(&h.bounds_max);
                if h.root != 0 && !finite {
                    return Err(BuildError::BadInstance {
                        instance: i as u32,
                        reference,
                        reason: "its bounds are not finite".into(),
                    });
                }
                blas_table.push(blas);
                let h = Some(h);
                headers.insert(blas, h);
                h
            }
        };
        let Some(h) = h else { continue };
        if h.root == 0 {
            continue;
        }
        let Some(inv) = invert_3x4(&o2w) else { continue };
        if !o2w.iter().all(|x| x.is_finite()) {
            continue;
        }
        let w2o = inv.map(|x| x as f32);
        if !w2o.iter().all(|x| x.is_finite()) {
            continue;
        }
        boxes.push(instance_box(&o2w, h.bounds_min, h.bounds_max));
        out.push(InstData { index: i as u32, custom_mask, sbt_flags, w2o, o2w, blas });
    }
    Ok(())
}
