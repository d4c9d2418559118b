//! Acceleration-structure transcoder (vp_transcode_as): Vulkan AS build inputs -> a resident
//! CW-BVH (`vortex_model::abi::bvh`) written at the structure's device address.
//!
//! The Vulkan layer resolves handles to device addresses and calls [`build`] when the queue
//! executes the build, so every input (vertices, indices, transforms, AABBs, instances,
//! the headers of referenced BLASes) is read from device memory at that moment. Host
//! builds, whose inputs live in host memory, use [`build_from`] with their own
//! [`InputMemory`].
//!
//! Pipeline: read the active primitives and their boxes ([`input`]), build a W-wide tree by
//! binned SAH ([`sah`]), lay it out in pre-order with conservatively quantised child boxes
//! ([`layout`]), write header + records into `[dst, dst + dst_size)` in one piece. See
//! `docs/BVH.md`.

// Per-axis loops index several parallel arrays at once.
#![allow(clippy::needless_range_loop)]

pub mod input;
pub mod layout;
pub mod sah;
pub mod testkit;

use input::{Aabb, Prims};
use std::collections::HashMap;
use vortex_model::abi::bvh::{self, header, inst, proc, tri};
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
    /// Update (refit) of the structure at `src`; implemented as a rebuild from the current
    /// inputs into `dst`, which the Vulkan rules allow.
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
    /// Scratch address (may be 0; the builder works in host memory).
    pub scratch: u64,
    pub geometries: Vec<GeometryInput>,
}

/// What a build produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BuildStats {
    /// Active primitives (triangles, AABBs or instances) in the structure.
    pub prims: u64,
    pub nodes: u64,
    pub leaves: u64,
    /// Bytes used, header included (the header's size field, the compacted size).
    pub bytes: u64,
    /// SAH cost: sum over nodes and leaves of their box area, over the root's area (a
    /// traversal costs 1 per node and 1 per primitive).
    pub sah_cost: f64,
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
    /// Device address of the BLAS an instance's `accelerationStructureReference` names.
    fn blas_address(&self, reference: u64) -> u64 {
        reference
    }
}

impl InputMemory for MemoryMap {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemFault> {
        MemoryMap::read(self, addr, out)
    }
    fn covers(&self, addr: u64, len: u64) -> bool {
        self.region(addr, len).is_some()
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

/// Scratch the builder asks for: it builds in host memory, but a zero size would make
/// applications create zero-sized buffers, which Vulkan forbids.
const SCRATCH_BYTES: u64 = 256;

fn leaf_bytes(kind: GeometryKind) -> u64 {
    match kind {
        GeometryKind::Triangles => tri::bytes(1) as u64,
        GeometryKind::Aabbs => proc::bytes(1) as u64,
        GeometryKind::Instances => inst::BYTES as u64,
    }
}

/// Upper bound of the bytes a build of these geometries (kind, maximum primitive count)
/// can use: header, one leaf per primitive, at most `n - 1` internal nodes (every node has
/// at least two children), and for a TLAS the BLAS table.
pub fn build_sizes(level: Level, geometries: &[(GeometryKind, u32)], _flags: u32, width: u32) -> Sizes {
    let n: u64 = geometries.iter().map(|g| g.1 as u64).sum();
    let leaves: u64 = geometries.iter().map(|g| g.1 as u64 * leaf_bytes(g.0)).sum();
    let nodes = n.saturating_sub(1) * bvh::node_bytes(width) as u64;
    let table = if level == Level::Top { (8 * n).next_multiple_of(bvh::RECORD_ALIGN as u64) } else { 0 };
    Sizes {
        as_size: header::BYTES as u64 + leaves + nodes + table,
        build_scratch: SCRATCH_BYTES,
        update_scratch: SCRATCH_BYTES,
    }
}

/// Builds (or rebuilds, for an update) a device-built structure; inputs in device memory.
pub fn build(mem: &MemoryMap, req: &BuildRequest, width: u32) -> Result<BuildStats, BuildError> {
    build_from(mem, mem, req, width)
}

/// Builds with inputs read through `input` (host memory for host builds); the structure
/// and referenced BLAS headers are in device memory `mem`.
pub fn build_from(
    input: &dyn InputMemory,
    mem: &MemoryMap,
    req: &BuildRequest,
    width: u32,
) -> Result<BuildStats, BuildError> {
    if !bvh::WIDTHS.contains(&width) {
        return Err(BuildError::BadRequest(format!("BVH width {width} is not 4 or 6")));
    }
    let Gathered { prims, inst_boxes } = gather(input, mem, req)?;
    let ntri = prims.tris.len();
    let nbox = prims.aabbs.len();
    // Boxes and centroids by builder id.
    let mut boxes: Vec<Aabb> = Vec::with_capacity(ntri + nbox + prims.insts.len());
    boxes.extend(prims.tris.iter().map(|t| {
        let mut b = Aabb { lo: t.v[0], hi: t.v[0] };
        for v in &t.v[1..] {
            b.grow(&Aabb { lo: *v, hi: *v });
        }
        b
    }));
    boxes.extend(prims.aabbs.iter().map(|a| a.b));
    boxes.extend(inst_boxes.iter().copied());
    let cents: Vec<[f32; 3]> = boxes.iter().map(|b| std::array::from_fn(|a| b.lo[a] * 0.5 + b.hi[a] * 0.5)).collect();
    let lb = |p: u32| layout::Writer::leaf_bytes(&prims, p);
    let ctx = sah::Ctx {
        boxes: &boxes,
        cents: &cents,
        width: width as usize,
        node_bytes: bvh::node_bytes(width) as u64,
        leaf_bytes: &lb,
    };
    let tree = sah::build(&ctx);
    let p = &prims;
    let records = match &tree {
        None => 0,
        Some((sah::Child::Leaf(i), _)) => layout::Writer::leaf_bytes(p, *i),
        Some((sah::Child::Node(n), _)) => n.bytes,
    };
    let table_off = header::BYTES as u64 + records;
    let table_bytes = (8 * p.blas_table.len() as u64).next_multiple_of(bvh::RECORD_ALIGN as u64);
    let total = table_off + if req.level == Level::Top { table_bytes } else { 0 };
    if total > req.dst_size {
        return Err(BuildError::DoesNotFit { needed: total, available: req.dst_size });
    }
    let mut out = vec![0u8; total as usize];
    let (hb, rest) = out.split_at_mut(header::BYTES);
    let mut stats = BuildStats { prims: boxes.len() as u64, bytes: total, ..BuildStats::default() };
    let (root, bounds) = match &tree {
        None => (0, Aabb { lo: [0.0; 3], hi: [0.0; 3] }),
        Some((child, b)) => {
            let w = layout::Writer { prims: p, width, root_area: b.half_area() as f64 };
            let sum = w.write(child, b, &mut rest[..records as usize], header::BYTES as u64);
            stats.sah_cost = if w.root_area > 0.0 { sum / w.root_area } else { 0.0 };
            stats.leaves = boxes.len() as u64;
            stats.nodes = match child {
                sah::Child::Node(n) => n.nodes,
                sah::Child::Leaf(_) => 0,
            };
            (bvh::child_word(header::BYTES as u64, matches!(child, sah::Child::Leaf(_))), *b)
        }
    };
    if req.level == Level::Top {
        for (i, &a) in p.blas_table.iter().enumerate() {
            vortex_model::abi::wr_u64(rest, records as usize + 8 * i, a);
        }
    }
    bvh::Header {
        kind: if req.level == Level::Top { bvh::KIND_TOP } else { bvh::KIND_BOTTOM },
        width,
        root,
        build_flags: req.flags,
        bounds_min: bounds.lo,
        bounds_max: bounds.hi,
        size: total,
        prim_count: boxes.len() as u32,
        geometry_count: req.geometries.len() as u32,
        node_count: stats.nodes as u32,
        leaf_count: stats.leaves as u32,
        blas_count: if req.level == Level::Top { p.blas_table.len() as u32 } else { 0 },
        blas_table: if req.level == Level::Top { (table_off / bvh::RECORD_ALIGN as u64) as u32 } else { 0 },
    }
    .write(hb);
    mem.write(req.dst, &out)
        .map_err(|fault| BuildError::Memory { what: "acceleration structure destination".into(), fault })?;
    Ok(stats)
}

struct Gathered {
    prims: Prims,
    inst_boxes: Vec<Aabb>,
}

fn gather(input: &dyn InputMemory, mem: &MemoryMap, req: &BuildRequest) -> Result<Gathered, BuildError> {
    let mut prims = Prims { geom_flags: req.geometries.iter().map(|g| g.flags).collect(), ..Prims::default() };
    let mut inst_boxes = Vec::new();
    let mut headers = HashMap::new();
    for (gi, g) in req.geometries.iter().enumerate() {
        let gi = gi as u32;
        let top = matches!(g.geometry, Geometry::Instances { .. });
        if top != (req.level == Level::Top) {
            return Err(BuildError::BadRequest(format!(
                "geometry {gi} is {} but the structure is {}-level",
                if top { "instances" } else { "triangles/AABBs" },
                if req.level == Level::Top { "top" } else { "bottom" }
            )));
        }
        match g.geometry {
            Geometry::Triangles { .. } => input::read_triangles(input, g, gi, &mut prims.tris)?,
            Geometry::Aabbs { .. } => input::read_aabbs(input, g, gi, &mut prims.aabbs)?,
            Geometry::Instances { .. } => input::read_instances(
                input,
                mem,
                g,
                gi,
                &mut prims.insts,
                &mut inst_boxes,
                &mut prims.blas_table,
                &mut headers,
            )?,
        }
    }
    Ok(Gathered { prims, inst_boxes })
}
