//! Acceleration-structure transcoder (vp_transcode_as): Vulkan AS build inputs -> a resident
//! CW-BVH (`vortex_model::abi::bvh`) written at the structure's device address.
//!
//! The Vulkan layer resolves handles to device addresses and calls [`build`] when the queue
//! executes the build, so every input (vertices, indices, transforms, AABBs, instances,
//! the headers of referenced BLASes) is read from device memory at that moment. Host
//! builds, whose inputs live in host memory, use [`build_from`] with their own
//! [`InputMemory`].
//!
//! Pipeline: read the active primitives and their boxes ([`input`]), sort them by Morton
//! code ([`morton`]), build a binary tree — a linear BVH ([`lbvh`]) for the fast builder,
//! topped by a binned-SAH tree over its small subtrees ([`sah`]) for the default one —
//! finalise it bottom-up into wide-node sizes ([`tree`]), and write it in pre-order with
//! conservatively quantised child boxes straight into `[dst, dst + dst_size)`
//! ([`layout`]). Updates refit in place ([`refit`]); [`serial`] is the serialized form
//! and the post-build properties. See `docs/BVH.md`.

// Per-axis loops index several parallel arrays at once.
#![allow(clippy::needless_range_loop)]

pub mod arena;
pub mod input;
pub mod layout;
pub mod lbvh;
pub mod morton;
pub mod refit;
pub mod sah;
pub mod serial;
pub mod testkit;
pub mod tree;

use input::{Aabb, PrimRef};
use rayon::prelude::*;
use tree::{BNode, Kind, Nodes, Tree};
use vortex_model::abi::bvh::{self, header};
use vortex_model::mem::{MemFault, MemoryMap};

pub use input::{index_type, vertex_formats};

/// Which level a build produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Top,
    Bottom,
}

/// `VkBuildAccelerationStructureModeKHR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Build,
    /// Update (refit) of the structure at `src` into `dst` (which may be `src`): the tree
    /// is kept and every box recomputed from the current inputs.
    Update {
        src: u64,
    },
}

/// `VkAccelerationStructureBuildRangeInfoKHR`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildRange {
    pub primitive_count: u32,
    pub primitive_offset: u32,
    pub first_vertex: u32,
    pub transform_offset: u32,
}

/// One geometry's data, with device (or host, for [`build_from`]) addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Geometry {
    Triangles {
        /// `VkFormat` number; see [`vertex_formats`].
        vertex_format: u32,
        vertex_data: u64,
        vertex_stride: u64,
        max_vertex: u32,
        /// `VkIndexType` number ([`index_type`]).
        index_type: u32,
        index_data: u64,
        /// 0 = no transform; else a `VkTransformMatrixKHR` (3x4 row-major f32).
        transform_data: u64,
    },
    /// `VkAabbPositionsKHR` records.
    Aabbs { data: u64, stride: u64 },
    /// `VkAccelerationStructureInstanceKHR` records (64 bytes), or an array of `u64`
    /// addresses of them.
    Instances { data: u64, array_of_pointers: bool },
}

/// A geometry with its `VkGeometryFlagsKHR` and range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeometryInput {
    pub geometry: Geometry,
    pub flags: u32,
    pub range: BuildRange,
}

/// One `VkAccelerationStructureBuildGeometryInfoKHR`, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildRequest {
    pub level: Level,
    /// `VkBuildAccelerationStructureFlagsKHR`.
    pub flags: u32,
    pub mode: Mode,
    /// Device address of the structure (where the header goes).
    pub dst: u64,
    /// Bytes available at `dst`.
    pub dst_size: u64,
    /// Scratch device address (0: none; the builder then uses host memory of its own).
    pub scratch: u64,
    pub geometries: Vec<GeometryInput>,
}

/// What a build produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BuildStats {
    /// The builder that ran (`None` for an update).
    pub builder: Option<Builder>,
    /// Active primitives (triangles, AABBs or instances) in the structure.
    pub prims: u64,
    pub nodes: u64,
    pub leaves: u64,
    /// Bytes used, header included (the header's size field, the compacted size).
    pub bytes: u64,
    /// SAH cost: the sum of internal-node box areas plus leaf box areas times their
    /// primitive counts, over the root's area (a traversal costs 1 per node visited and 1
    /// per primitive tested).
    pub sah_cost: f64,
    /// Wall time of the build's phases.
    pub phases: Phases,
}

/// Where a build's time went (seconds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Reading inputs into primitive boxes.
    pub gather: f64,
    /// The radix sort of the Morton keys.
    pub sort: f64,
    /// Primitives (and vertices) gathered into sorted order.
    pub permute: f64,
    /// The binary tree, its finalisation and the SAH top.
    pub tree: f64,
    /// Writing the records.
    pub write: f64,
}

/// Why a build failed. The message names the geometry, instance or address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// An input could not be read.
    Memory {
        what: String,
        fault: MemFault,
    },
    UnsupportedVertexFormat(u32),
    UnsupportedIndexType(u32),
    /// An instance references something that is not a usable bottom-level structure.
    BadInstance {
        instance: u32,
        reference: u64,
        reason: String,
    },
    /// The structure needs more than `dst_size` bytes.
    DoesNotFit {
        needed: u64,
        available: u64,
    },
    /// The request itself is inconsistent (width, geometry kind vs level).
    BadRequest(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Memory { what, fault } => write!(f, "cannot read the {what}: {fault}"),
            BuildError::UnsupportedVertexFormat(v) => write!(f, "vertex format {v} is not supported"),
            BuildError::UnsupportedIndexType(v) => write!(f, "index type {v} is not supported"),
            BuildError::BadInstance { instance, reference, reason } => {
                write!(f, "instance {instance} references {reference:#x}, which is not a usable BLAS: {reason}")
            }
            BuildError::DoesNotFit { needed, available } => {
                write!(f, "the structure needs {needed} bytes but only {available} are available")
            }
            BuildError::BadRequest(s) => write!(f, "bad build request: {s}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// Where build inputs are read from: device memory for device builds, host memory for host
/// builds (where instance references are also handles to resolve).
pub trait InputMemory: Sync {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemFault>;
    /// True if `[addr, addr+len)` can be read (checked before a large read is allocated).
    fn covers(&self, addr: u64, len: u64) -> bool;
    /// `[addr, addr+len)` in place, if the memory can lend it (read without a copy).
    fn view(&self, _addr: u64, _len: u64) -> Option<&[u8]> {
        None
    }
    /// Device address of the BLAS an instance's `accelerationStructureReference` names
    /// (`None`: it names nothing usable).
    fn blas_address(&self, reference: u64) -> Option<u64> {
        Some(reference)
    }
}

impl InputMemory for MemoryMap {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemFault> {
        MemoryMap::read(self, addr, out)
    }
    fn covers(&self, addr: u64, len: u64) -> bool {
        self.region(addr, len).is_some()
    }
    fn view(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let p = self.host_ptr(addr, len).ok()?;
        // SAFETY: `host_ptr` checked that the range lies in a backing this map keeps alive
        // for its own lifetime. Device memory the build reads is not written during the
        // build (Vulkan valid usage: inputs, scratch and destination do not overlap).
        Some(unsafe { std::slice::from_raw_parts(p, len as usize) })
    }
}

/// Mutable device memory `[addr, addr+len)`, if mapped. (Device memory is shared: the
/// map hands out host pointers; exclusivity is the caller's obligation.)
///
/// # Safety
/// Nothing else may access the range while the slice lives (for builds: Vulkan's rule that
/// the destination and scratch of a build overlap nothing else the build touches).
#[allow(clippy::mut_from_ref)]
pub unsafe fn device_bytes_mut(mem: &MemoryMap, addr: u64, len: u64) -> Option<&mut [u8]> {
    if len == 0 {
        return Some(&mut []);
    }
    let p = mem.host_ptr(addr, len).ok()?;
    // SAFETY: mapped and alive as long as `mem`; exclusivity per the contract.
    Some(unsafe { std::slice::from_raw_parts_mut(p, len as usize) })
}

/// `VkBuildAccelerationStructureFlagBitsKHR`.
pub mod flags {
    pub const ALLOW_UPDATE: u32 = 0x1;
    pub const ALLOW_COMPACTION: u32 = 0x2;
    pub const PREFER_FAST_TRACE: u32 = 0x4;
    pub const PREFER_FAST_BUILD: u32 = 0x8;
    pub const LOW_MEMORY: u32 = 0x10;
}

/// The tree builders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builder {
    /// Binned SAH over the linear BVH's subtrees of at most [`Options::cluster`]
    /// primitives (the default; `PREFER_FAST_TRACE`).
    Sah,
    /// Linear BVH over Morton-sorted primitives (`PREFER_FAST_BUILD`).
    Fast,
    /// Full-sweep SAH over single primitives: the quality reference (tests, benchmarks).
    FullSweep,
}

/// Builder knobs (the device's configuration, not the application's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// CW-BVH width, 4 or 6.
    pub width: u32,
    /// Largest multi-primitive leaf (1..=8; 1 = one primitive per leaf, seed 000's format);
    /// `None`: the builder's default ([`FAST_LEAF`]; [`SAH_LEAF`] when every geometry is
    /// opaque triangles, else 1; 1 for the full sweep).
    /// `LOW_MEMORY` builds use at least [`LOW_MEMORY_LEAF`].
    pub max_leaf: Option<u32>,
    /// Largest linear-BVH subtree the SAH builder treats as one item.
    pub cluster: u32,
    /// Largest linear-BVH subtree the SAH builder rebuilds by full-sweep SAH (at most
    /// [`sah::REBUILD_MAX`]; below 3: none).
    pub rebuild: u32,
    /// Forces a builder regardless of the build flags.
    pub builder: Option<Builder>,
}

/// Leaf size of `LOW_MEMORY` builds.
pub const LOW_MEMORY_LEAF: u32 = 4;
/// Default leaf size of the fast builder (`PREFER_FAST_BUILD`): multi-triangle leaves make
/// the build faster and the structure smaller.
pub const FAST_LEAF: u32 = 4;
/// Default leaf size of the SAH builder for opaque triangles (else 1): its leaves are cut
/// by full sweep, and at this size
/// the structure is smaller, faster to build and (by the SAH cost of the stored boxes,
/// box and triangle tests alike) no worse than with single-primitive leaves.
pub const SAH_LEAF: u32 = 4;

impl Options {
    pub fn new(width: u32) -> Options {
        Options { width, max_leaf: None, cluster: 16, rebuild: 16, builder: None }
    }

    /// The builder for `VkBuildAccelerationStructureFlagsKHR` `flags`.
    pub fn builder_for(&self, f: u32) -> Builder {
        self.builder.unwrap_or(if f & flags::PREFER_FAST_BUILD != 0 { Builder::Fast } else { Builder::Sah })
    }

    /// The leaf size for `flags` and primitives of `kind`, when every geometry is opaque
    /// (`all_opaque`) or not.
    fn leaf_for(&self, f: u32, kind: Kind, all_opaque: bool) -> u32 {
        let l = self.max_leaf.unwrap_or(match self.builder_for(f) {
            Builder::Fast => FAST_LEAF,
            // Candidates (non-opaque triangles, procedural boxes) go back to the shader one
            // by one, and the walker offers a leaf's in stored order: with single-primitive
            // leaves it offers them nearest first, which is what applications (and
            // lavapipe) see, and the fewest any-hit calls.
            Builder::Sah if kind == Kind::Triangles && all_opaque => SAH_LEAF,
            Builder::Sah => 1,
            Builder::FullSweep => 1,
        });
        let l = if f & flags::LOW_MEMORY != 0 { l.max(LOW_MEMORY_LEAF) } else { l };
        l.clamp(1, kind.max_leaf())
    }
}

/// Kind of a geometry, for size queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeometryKind {
    Triangles,
    Aabbs,
    Instances,
}

/// `VkAccelerationStructureBuildSizesInfoKHR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    pub as_size: u64,
    pub build_scratch: u64,
    pub update_scratch: u64,
}

/// Scratch an update asks for: a refit works in place. (Zero would make applications
/// create zero-sized buffers, which Vulkan forbids.)
const UPDATE_SCRATCH: u64 = 256;

/// Scratch arrays of a build over `n` primitives: primitive refs in input order, two key
/// buffers for the radix sort, the refs and (triangles) vertices in sorted order, up to
/// `2n` nodes (the linear BVH's plus the SAH top's) and their wide children, SAH items.
fn scratch_arrays(n: usize) -> [(usize, usize); 9] {
    [
        (std::mem::size_of::<PrimRef>(), n),
        (8, n),
        (8, n),
        (std::mem::size_of::<PrimRef>(), n),
        (36, n),
        (8, n),
        (std::mem::size_of::<BNode>(), 2 * n),
        (24, 2 * n),
        (std::mem::size_of::<sah::Item>(), n),
    ]
}

/// Scratch bytes a build over `n` primitives uses.
pub fn scratch_bytes(n: u64) -> u64 {
    arena::bytes_for(&scratch_arrays(n as usize))
}

/// Upper bound of the bytes a build of these geometries (kind, maximum primitive count)
/// can use: header, one leaf per primitive, at most `n - 1` internal nodes (every node has
/// at least two children), and for a TLAS the BLAS table (one slot per instance).
pub fn build_sizes(level: Level, geometries: &[(GeometryKind, u32)], _flags: u32, width: u32) -> Sizes {
    let n: u64 = geometries.iter().map(|g| g.1 as u64).sum();
    let leaves: u64 = geometries
        .iter()
        .map(|g| {
            let k = match g.0 {
                GeometryKind::Triangles => Kind::Triangles,
                GeometryKind::Aabbs => Kind::Aabbs,
                GeometryKind::Instances => Kind::Instances,
            };
            g.1 as u64 * k.leaf_bytes(1)
        })
        .sum();
    let nodes = n.saturating_sub(1) * bvh::node_bytes(width) as u64;
    let table = if level == Level::Top { (8 * n).next_multiple_of(bvh::RECORD_ALIGN as u64) } else { 0 };
    Sizes {
        as_size: header::BYTES as u64 + leaves + nodes + table,
        build_scratch: scratch_bytes(n).max(UPDATE_SCRATCH),
        update_scratch: UPDATE_SCRATCH,
    }
}

/// Builds (or refits, for an update) a device-built structure: inputs, scratch and
/// destination in device memory.
pub fn build(mem: &MemoryMap, req: &BuildRequest, opts: &Options) -> Result<BuildStats, BuildError> {
    if let Mode::Update { src } = req.mode {
        return refit::update(mem, mem, req, src);
    }
    let n: u64 = req.geometries.iter().map(|g| g.range.primitive_count as u64).sum();
    let need = scratch_bytes(n);
    // SAFETY: the application's scratch range is the build's alone (Vulkan valid usage).
    let scratch = if req.scratch != 0 { unsafe { device_bytes_mut(mem, req.scratch, need) } } else { None };
    build_from(mem, mem, req, opts, scratch)
}

/// Builds with inputs read through `input` (host memory for host builds) and `scratch`
/// (used when large enough, else pooled host memory); the structure and referenced BLAS
/// headers are in device memory `mem`.
pub fn build_from(
    input: &dyn InputMemory,
    mem: &MemoryMap,
    req: &BuildRequest,
    opts: &Options,
    scratch: Option<&mut [u8]>,
) -> Result<BuildStats, BuildError> {
    if let Mode::Update { src } = req.mode {
        return refit::update(input, mem, req, src);
    }
    let width = opts.width;
    if !bvh::WIDTHS.contains(&width) {
        return Err(BuildError::BadRequest(format!("BVH width {width} is not 4 or 6")));
    }
    let kind = request_kind(req)?;
    let n = req.geometries.iter().map(|g| g.range.primitive_count as usize).sum::<usize>();
    if n >= tree::LEAF_PRIM as usize {
        return Err(BuildError::BadRequest(format!("{n} primitives are more than one build can hold")));
    }
    let need = scratch_bytes(n as u64) as usize;
    let mut pooled = None;
    let buf: &mut [u8] = match scratch {
        Some(s) if s.len() >= need => s,
        _ => pooled.insert(arena::Pooled::get(need)).bytes(),
    };
    let mut arena = arena::Arena::new(buf);
    let short = || BuildError::BadRequest("scratch too small".into());
    let refs: &mut [PrimRef] = arena.take(n).ok_or_else(short)?;
    let keys: &mut [u64] = arena.take(n).ok_or_else(short)?;
    let tmp: &mut [u64] = arena.take(n).ok_or_else(short)?;
    let sorted_refs: &mut [PrimRef] = arena.take(n).ok_or_else(short)?;
    let tris = kind == Kind::Triangles;
    let verts: &mut [[f32; 9]] = arena.take(if tris { n } else { 0 }).ok_or_else(short)?;
    let ids: &mut [[u32; 2]] = arena.take(if tris { n } else { 0 }).ok_or_else(short)?;
    let nodes: &mut [BNode] = arena.take(2 * n).ok_or_else(short)?;
    let wide: &mut [[u32; 6]] = arena.take(2 * n).ok_or_else(short)?;
    let items: &mut [sah::Item] = arena.take(n).ok_or_else(short)?;

    // 1. Primitives and their boxes.
    let clock = std::time::Instant::now();
    let mut phases = Phases::default();
    let lap = |slot: &mut f64| *slot = clock.elapsed().as_secs_f64();
    let mut src = layout::Source {
        kind,
        tris: Vec::new(),
        aabbs: Vec::new(),
        insts: Vec::new(),
        geom_flags: req.geometries.iter().map(|g| g.flags).collect(),
    };
    let mut blas_table = Vec::new();
    // First index of each geometry's primitives.
    let bases: Vec<u32> = req
        .geometries
        .iter()
        .scan(0u32, |at, g| {
            let b = *at;
            *at += g.range.primitive_count;
            Some(b)
        })
        .collect();
    let geom_of = |i: u32| -> (u32, u32) {
        let g = if bases.len() == 1 { 0 } else { bases.partition_point(|&b| b <= i) - 1 };
        (g as u32, i - bases[g])
    };
    for (gi, g) in req.geometries.iter().enumerate() {
        match kind {
            Kind::Triangles => src.tris.push(input::TriReader::new(input, g, gi as u32)?),
            Kind::Aabbs => src.aabbs.push(input::AabbReader::new(input, g, gi as u32)?),
            Kind::Instances => {}
        }
    }
    let cb;
    let active;
    let grid;
    match kind {
        Kind::Triangles | Kind::Aabbs => {
            // One streaming pass over the inputs, geometry by geometry, each loop specialised
            // for its reader: every primitive's centroid (into the refs array, which only
            // instance builds use) and the centroid bounds; then Morton keys from the
            // centroids alone.
            let cents: &mut [[f32; 3]] =
                bytemuck::cast_slice_mut(&mut bytemuck::cast_slice_mut::<_, f32>(refs)[..3 * n]);
            let mut acc = (Aabb::EMPTY, 0usize);
            for (g, &base) in bases.iter().enumerate() {
                let cs = &mut cents[base as usize..][..req.geometries[g].range.primitive_count as usize];
                let part = match kind {
                    Kind::Triangles if src.tris[g].plain() => {
                        let r = &src.tris[g];
                        scan_centroids(cs, |i| Ok(r.tri_plain(i).map(|v| input::tri_box(&v))))?
                    }
                    Kind::Triangles => {
                        let r = &src.tris[g];
                        scan_centroids(cs, |i| Ok(r.tri(i)?.map(|v| input::tri_box(&v))))?
                    }
                    _ => {
                        let r = &src.aabbs[g];
                        scan_centroids(cs, |i| Ok(r.aabb(i)))?
                    }
                };
                acc = (acc.0.union(&part.0), acc.1 + part.1);
            }
            (cb, active) = acc;
            lap(&mut phases.gather);
            grid = morton::Grid::new(cb.lo, cb.hi);
            scan_keys(&mut keys[..n], cents, &grid);
        }
        Kind::Instances => {
            let mut headers = input::BlasHeaders::new(mem);
            let mut bounds = Aabb::EMPTY;
            let mut at = 0;
            for (gi, g) in req.geometries.iter().enumerate() {
                let reader = input::InstanceReader::new(input, g, gi as u32)?;
                for i in 0..reader.count {
                    let rec = reader.record(i)?;
                    refs[at] = match input::instance(input, &mut headers, &rec, i)? {
                        Some((d, b)) => {
                            grow_centroid(&mut bounds, &b);
                            src.insts.push(d);
                            PrimRef { lo: b.lo, hi: b.hi, geom: gi as u32, prim: src.insts.len() as u32 - 1 }
                        }
                        None => PrimRef::INACTIVE,
                    };
                    at += 1;
                }
            }
            blas_table = headers.table;
            (cb, active) = (bounds, src.insts.len());
            lap(&mut phases.gather);
            grid = morton::Grid::new(cb.lo, cb.hi);
            for (i, (k, r)) in keys.iter_mut().zip(refs.iter()).enumerate() {
                let code = if r.active() {
                    grid.code(std::array::from_fn(|a| r.lo[a] * 0.5 + r.hi[a] * 0.5))
                } else {
                    morton::INACTIVE
                };
                *k = (code as u64) << 32 | i as u64;
            }
        }
    }

    // 2. Morton order.
    let sorted = morton::sort(keys, tmp);
    let sorted = &sorted[..active];
    lap(&mut phases.sort);
    // Primitives (and triangles' vertices) in sorted order: one gather with many loads in
    // flight (and prefetched ahead), after which everything reads them sequentially.
    let sorted_refs = &mut sorted_refs[..active];
    match kind {
        Kind::Triangles => {
            let verts = &mut verts[..active];
            let ids = &mut ids[..active];
            if bases.len() == 1 && src.tris[0].plain() {
                let r = &src.tris[0];
                permute_tris(sorted, ids, verts, |k| (0, k), |k| r.prefetch(k), |_, p| Ok(r.tri_plain(p)))?;
            } else {
                permute_tris(
                    sorted,
                    ids,
                    verts,
                    geom_of,
                    |k| {
                        let (g, p) = geom_of(k);
                        src.tris[g as usize].prefetch(p)
                    },
                    |g, p| src.tris[g as usize].tri(p),
                )?;
            }
        }
        Kind::Aabbs => {
            sorted_refs.par_chunks_mut(CHUNK).enumerate().try_for_each(|(ci, rc)| -> Result<(), BuildError> {
                for (j, slot) in rc.iter_mut().enumerate() {
                    let (g, p) = geom_of(sorted[ci * CHUNK + j] as u32);
                    let b = src.aabbs[g as usize].aabb(p).ok_or_else(|| {
                        BuildError::BadRequest(format!("AABB {p} of geometry {g} changed while the build read it"))
                    })?;
                    *slot = PrimRef { lo: b.lo, hi: b.hi, geom: g, prim: p };
                }
                Ok(())
            })?;
        }
        Kind::Instances => {
            for (slot, k) in sorted_refs.iter_mut().zip(sorted) {
                *slot = refs[*k as u32 as usize];
            }
        }
    }
    lap(&mut phases.permute);

    // 3. The binary tree.
    let builder = opts.builder_for(req.flags);
    let all_opaque = req.geometries.iter().all(|g| g.flags & vortex_model::abi::rtu::geometry_flags::OPAQUE != 0);
    let max_leaf = opts.leaf_for(req.flags, kind, all_opaque);
    // The SAH builder's default bottom (every cluster split by full sweep) is planned
    // first: it reorders primitives within clusters.
    let planned_bottom = builder == Builder::Sah
        && active > 0
        && opts.rebuild > 2
        && opts.cluster.max(1) <= opts.rebuild.min(sah::REBUILD_MAX);
    let mut plan = Vec::new();
    let cluster_starts = if planned_bottom {
        plan.resize(active, 0u8);
        let data = if tris {
            sah::Payload::Tris { verts: &mut verts[..active], ids: &mut ids[..active] }
        } else {
            sah::Payload::Prims(&mut *sorted_refs)
        };
        sah::plan_bottom(sorted, data, opts.cluster.max(1), max_leaf, &mut plan)
    } else {
        Vec::new()
    };
    let (verts, ids): (&[[f32; 9]], &[[u32; 2]]) = if tris { (&verts[..active], &ids[..active]) } else { (&[], &[]) };
    let prims: &[PrimRef] = if tris { &[] } else { sorted_refs };
    let t = Tree {
        kind,
        width: width as usize,
        max_leaf,
        prims,
        keys: sorted,
        verts,
        ids,
        single_geometry: req.geometries.len() == 1,
        nodes: Nodes::new(nodes),
        wide: tree::Wide::new(wide),
        // Collapsing every internal node as it is finalised beats a top-down pass over the
        // wide-node roots once leaves hold several primitives (few internal nodes per wide
        // node): 1M triangles, SAH with 4-triangle leaves, 7-9 ms less single-threaded.
        eager: builder == Builder::Fast || max_leaf > 1,
    };
    let root = if active == 0 {
        None
    } else {
        match builder {
            Builder::Fast => lbvh::build(&t),
            // Every cluster split by full sweep (the default).
            Builder::Sah if planned_bottom => {
                let m = sah::realize_bottom(&t, &cluster_starts, &plan, items);
                Some(if m < 2 { items[0].r } else { sah::build(&t, &mut items[..m], t.top_base()) })
            }
            Builder::Sah => lbvh::build(&t).map(|r| {
                let m = sah::clusters(&t, r, opts.cluster.max(1), items);
                if t.max_leaf == 1 && opts.rebuild > 2 {
                    // Their small subtrees rebuilt by full-sweep SAH over their primitives.
                    let r = opts.rebuild;
                    items[..m].par_iter_mut().with_min_len(256).for_each(|it| sah::rebuild_cluster(&t, it, r));
                }
                if m < 2 {
                    items[0].r
                } else {
                    sah::build(&t, &mut items[..m], t.top_base())
                }
            }),
            Builder::FullSweep => {
                sah::prims(&t, &mut items[..active]);
                Some(sah::build_full_sweep(&t, &mut items[..active], 0))
            }
        }
    };

    // The structure's size (every node's wide-subtree size was set as it was finalised).
    let records = root.map_or(0, |r| t.records(r) * 16);
    lap(&mut phases.tree);
    // 4. Layout, straight into the destination.
    let table_off = header::BYTES as u64 + records;
    let top = req.level == Level::Top;
    let table_bytes = if top { (8 * active as u64).next_multiple_of(bvh::RECORD_ALIGN as u64) } else { 0 };
    let total = table_off + table_bytes;
    if total > req.dst_size {
        return Err(BuildError::DoesNotFit { needed: total, available: req.dst_size });
    }
    // SAFETY: the destination range is the build's alone (Vulkan valid usage).
    let out = unsafe { device_bytes_mut(mem, req.dst, total) }.ok_or_else(|| BuildError::Memory {
        what: "acceleration structure destination".into(),
        fault: MemFault { addr: req.dst, size: total, kind: vortex_model::mem::MemFaultKind::Unmapped },
    })?;
    let (hb, rest) = out.split_at_mut(header::BYTES);
    let (recs, table) = rest.split_at_mut(records as usize);
    let mut stats = BuildStats { builder: Some(builder), prims: active as u64, bytes: total, ..BuildStats::default() };
    let (root_word, bounds) = match root {
        None => (0, Aabb { lo: [0.0; 3], hi: [0.0; 3] }),
        Some(r) => {
            let w = layout::Writer { tree: &t, src: &src, width };
            let b = t.child_box(r);
            let written = w.write(r, &b, recs, header::BYTES as u64);
            let root_area = b.half_area() as f64;
            stats.sah_cost = if root_area > 0.0 { written.sah / root_area } else { 0.0 };
            stats.nodes = written.nodes;
            stats.leaves = written.leaves;
            let leaf = tree::Tree::is_prim(r) || t.nodes.get(r).is_leaf();
            (bvh::child_word(header::BYTES as u64, leaf), b)
        }
    };
    table.fill(0);
    if top {
        for (i, &a) in blas_table.iter().enumerate() {
            vortex_model::abi::wr_u64(table, 8 * i, a);
        }
    }
    bvh::Header {
        kind: if top { bvh::KIND_TOP } else { bvh::KIND_BOTTOM },
        width,
        root: root_word,
        build_flags: req.flags,
        bounds_min: bounds.lo,
        bounds_max: bounds.hi,
        size: total,
        prim_count: active as u32,
        geometry_count: req.geometries.len() as u32,
        node_count: stats.nodes as u32,
        leaf_count: stats.leaves as u32,
        blas_count: if top { blas_table.len() as u32 } else { 0 },
        blas_table: if top { (table_off / bvh::RECORD_ALIGN as u64) as u32 } else { 0 },
    }
    .write(hb);
    lap(&mut phases.write);
    stats.phases = Phases {
        gather: phases.gather,
        sort: phases.sort - phases.gather,
        permute: phases.permute - phases.sort,
        tree: phases.tree - phases.permute,
        write: phases.write - phases.tree,
    };
    Ok(stats)
}

/// Grows `cb` by the centroid of `b` and returns the centroid.
#[inline]
fn grow_centroid(cb: &mut Aabb, b: &Aabb) -> [f32; 3] {
    let c: [f32; 3] = std::array::from_fn(|a| b.lo[a] * 0.5 + b.hi[a] * 0.5);
    for a in 0..3 {
        // Plain compares: boxes here are finite.
        cb.lo[a] = if c[a] < cb.lo[a] { c[a] } else { cb.lo[a] };
        cb.hi[a] = if c[a] > cb.hi[a] { c[a] } else { cb.hi[a] };
    }
    c
}

/// The centroid of each primitive `i` whose box `get` gives (NaN for an inactive one) into
/// `cents[i]`; returns the centroid bounds and the active count.
fn scan_centroids(
    cents: &mut [[f32; 3]],
    get: impl Fn(u32) -> Result<Option<Aabb>, BuildError> + Sync,
) -> Result<(Aabb, usize), BuildError> {
    let scan = |ci: usize, cc: &mut [[f32; 3]]| -> Result<(Aabb, usize), BuildError> {
        let mut acc = (Aabb::EMPTY, 0usize);
        for (j, c) in cc.iter_mut().enumerate() {
            *c = match get((ci * CHUNK + j) as u32)? {
                Some(b) => {
                    acc.1 += 1;
                    grow_centroid(&mut acc.0, &b)
                }
                None => [f32::NAN; 3],
            };
        }
        Ok(acc)
    };
    if cents.len() <= CHUNK {
        return scan(0, cents);
    }
    cents
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(ci, cc)| scan(ci, cc))
        .try_reduce(|| (Aabb::EMPTY, 0), |a, b| Ok((a.0.union(&b.0), a.1 + b.1)))
}

/// Morton keys `code << 32 | index` of the centroids (INACTIVE for a NaN one).
fn scan_keys(keys: &mut [u64], cents: &[[f32; 3]], grid: &morton::Grid) {
    keys.par_chunks_mut(CHUNK).zip(cents.par_chunks(CHUNK)).enumerate().for_each(|(ci, (kc, cc))| {
        for (j, (k, c)) in kc.iter_mut().zip(cc).enumerate() {
            let code = if c[0].is_nan() { morton::INACTIVE } else { grid.code(*c) };
            *k = (code as u64) << 32 | (ci * CHUNK + j) as u64;
        }
    });
}

/// How far ahead the permutation prefetches.
const AHEAD: usize = 64;

/// Triangles in sorted order: for each sorted key, (geometry, primitive) from `locate`,
/// vertices from `get`; `prefetch` is told the key index `AHEAD` positions on.
fn permute_tris(
    sorted: &[u64],
    ids: &mut [[u32; 2]],
    verts: &mut [[f32; 9]],
    locate: impl Fn(u32) -> (u32, u32) + Sync,
    prefetch: impl Fn(u32) + Sync,
    get: impl Fn(u32, u32) -> Result<Option<[[f32; 3]; 3]>, BuildError> + Sync,
) -> Result<(), BuildError> {
    ids.par_chunks_mut(CHUNK).zip(verts.par_chunks_mut(CHUNK)).enumerate().try_for_each(|(ci, (ic, vc))| {
        for j in 0..ic.len() {
            let pos = ci * CHUNK + j;
            if let Some(&k) = sorted.get(pos + AHEAD) {
                prefetch(k as u32);
            }
            let k = sorted[pos] as u32;
            let (g, p) = locate(k);
            let v = get(g, p)?.ok_or_else(|| {
                BuildError::BadRequest(format!("triangle {p} of geometry {g} changed while the build read it"))
            })?;
            ic[j] = [g, p];
            vc[j] = [v[0][0], v[0][1], v[0][2], v[1][0], v[1][1], v[1][2], v[2][0], v[2][1], v[2][2]];
        }
        Ok(())
    })
}

/// Items per parallel task in the build's streaming passes.
const CHUNK: usize = 4096;

/// What the request's geometries are (all of one type, as Vulkan requires), checked
/// against the level.
fn request_kind(req: &BuildRequest) -> Result<Kind, BuildError> {
    let kind_of = |g: &GeometryInput| match g.geometry {
        Geometry::Triangles { .. } => Kind::Triangles,
        Geometry::Aabbs { .. } => Kind::Aabbs,
        Geometry::Instances { .. } => Kind::Instances,
    };
    let kind = req.geometries.first().map(kind_of).unwrap_or(match req.level {
        Level::Top => Kind::Instances,
        Level::Bottom => Kind::Triangles,
    });
    for (gi, g) in req.geometries.iter().enumerate() {
        let k = kind_of(g);
        let top = k == Kind::Instances;
        if top != (req.level == Level::Top) {
            return Err(BuildError::BadRequest(format!(
                "geometry {gi} is {} but the structure is {}-level",
                if top { "instances" } else { "triangles/AABBs" },
                if req.level == Level::Top { "top" } else { "bottom" }
            )));
        }
        if k != kind {
            return Err(BuildError::BadRequest(format!("geometry {gi} is {k:?} but geometry 0 is {kind:?}")));
        }
    }
    if kind == Kind::Instances && req.geometries.len() > 1 {
        return Err(BuildError::BadRequest("a top-level structure has exactly one instance geometry".into()));
    }
    Ok(kind)
}
