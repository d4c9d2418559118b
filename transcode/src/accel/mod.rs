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
mod build;
pub mod input;
pub mod layout;
pub mod lbvh;
pub mod morton;
pub mod rdna2;
pub mod refit;
pub mod sah;
pub mod serial;
pub mod testkit;
pub mod tree;

use input::PrimRef;
use tree::{BNode, Kind};
use vortex_model::abi::bvh::{self, header};
use vortex_model::config::{Box16, RtArch};
use vortex_model::mem::{DeviceBytesMut, MemFault, MemoryMap};

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
        MemoryMap::covers(self, addr, len)
    }
    fn view(&self, addr: u64, len: u64) -> Option<&[u8]> {
        // In place when one region holds the range (a sparse resource's pages bound apart
        // are read by copy instead). Device memory the build reads is not written during the
        // build (Vulkan valid usage: inputs, scratch and destination do not overlap).
        MemoryMap::view(self, addr, len)
    }
}

/// Mutable device memory `[addr, addr+len)` (or the fault its access takes): in place, or (a sparse resource's
/// pages bound apart) staged and written back when dropped. (Device memory is shared: the
/// map hands out host pointers; exclusivity is the caller's obligation.)
///
/// # Safety
/// Nothing else may access the range while the bytes live (for builds: Vulkan's rule that
/// the destination and scratch of a build overlap nothing else the build touches).
pub unsafe fn device_bytes_mut(mem: &MemoryMap, addr: u64, len: u64) -> Result<DeviceBytesMut<'_>, MemFault> {
    // SAFETY: forwarded contract.
    unsafe { mem.bytes_mut(addr, len) }
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
    /// primitives (`PREFER_FAST_TRACE`; candidates and instances without a preference).
    Sah,
    /// Linear BVH over Morton-sorted primitives (`PREFER_FAST_BUILD`; opaque triangles
    /// without a preference).
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
    /// The layout to write: CW-BVH for the RTU, or the rdna2 node formats (`rdna2`).
    pub arch: RtArch,
    /// rdna2 builds: where box nodes are FP16.
    pub box16: Box16,
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
        Options {
            width,
            max_leaf: None,
            cluster: 16,
            rebuild: 16,
            builder: None,
            arch: RtArch::Rtu,
            box16: Box16::Auto,
        }
    }

    /// The options of a device of architecture `arch` (rdna2 box nodes are four-wide).
    pub fn for_arch(arch: RtArch, width: u32, box16: Box16) -> Options {
        Options { arch, box16, ..Options::new(if arch == RtArch::Rdna2 { 4 } else { width }) }
    }

    /// The builder for `VkBuildAccelerationStructureFlagsKHR` `f` and primitives of `kind`,
    /// when every geometry is opaque (`all_opaque`) or not: the fast one for
    /// `PREFER_FAST_BUILD`, and for opaque triangles that ask for `ALLOW_UPDATE` or
    /// `LOW_MEMORY` without a trace preference or `ALLOW_COMPACTION` (geometry rebuilt or
    /// refitted as it moves, where the build's cost recurs): on meshes its trees visit
    /// within 4 % of the SAH trees' nodes per ray for half the build instructions, on a
    /// height field they cost ~1.9x (docs/PERFORMANCE.md). Else the SAH one: no flag at all
    /// (the default every table of the project was measured with), `ALLOW_COMPACTION` (a
    /// static structure, built once and traced long), `PREFER_FAST_TRACE`; candidates
    /// (non-opaque triangles, procedural boxes) keep its single-primitive leaves, offered
    /// nearest first, and top-level trees, small and traced by every ray, keep its quality.
    pub fn builder_for(&self, f: u32, kind: Kind, all_opaque: bool) -> Builder {
        let dynamic = f & (flags::ALLOW_UPDATE | flags::LOW_MEMORY) != 0
            && f & (flags::PREFER_FAST_TRACE | flags::ALLOW_COMPACTION) == 0;
        let fast = f & flags::PREFER_FAST_BUILD != 0 || (dynamic && kind == Kind::Triangles && all_opaque);
        self.builder.unwrap_or(if fast { Builder::Fast } else { Builder::Sah })
    }

    /// The leaf size for `flags` and primitives of `kind`, when every geometry is opaque
    /// (`all_opaque`) or not.
    fn leaf_for(&self, f: u32, kind: Kind, all_opaque: bool) -> u32 {
        let l = self.max_leaf.unwrap_or(match self.builder_for(f, kind, all_opaque) {
            // rdna2 box nodes test every child box, so a primitive per child is the tree it
            // traverses best (a multi-primitive leaf becomes a box node of its own).
            _ if self.arch == RtArch::Rdna2 => 1,
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

/// [`build_sizes`] for the layout `opts` writes.
pub fn build_sizes_for(level: Level, geometries: &[(GeometryKind, u32)], flags: u32, opts: &Options) -> Sizes {
    let cw = build_sizes(level, geometries, flags, opts.width);
    if opts.arch != RtArch::Rdna2 {
        return cw;
    }
    let n: u64 = geometries.iter().map(|g| g.1 as u64).sum();
    let kind = match geometries.first().map(|g| g.0) {
        Some(GeometryKind::Aabbs) => Kind::Aabbs,
        Some(GeometryKind::Instances) => Kind::Instances,
        _ if level == Level::Top => Kind::Instances,
        _ => Kind::Triangles,
    };
    Sizes { as_size: rdna2::size_bound(level, kind, n), ..cw }
}

/// Builds (or refits, for an update) a device-built structure: inputs, scratch and
/// destination in device memory.
pub fn build(mem: &MemoryMap, req: &BuildRequest, opts: &Options) -> Result<BuildStats, BuildError> {
    if let Mode::Update { src } = req.mode {
        return update(mem, mem, req, src, opts);
    }
    let n: u64 = req.geometries.iter().map(|g| g.range.primitive_count as u64).sum();
    let need = scratch_bytes(n);
    // SAFETY: the application's scratch range is the build's alone (Vulkan valid usage).
    let mut scratch = if req.scratch != 0 { unsafe { device_bytes_mut(mem, req.scratch, need) }.ok() } else { None };
    build_from(mem, mem, req, opts, scratch.as_deref_mut())
}

pub use build::{build_from, warm_up};

/// An update of the structure at `src`, in the layout of `opts`.
pub(crate) fn update(
    input: &dyn InputMemory,
    mem: &MemoryMap,
    req: &BuildRequest,
    src: u64,
    opts: &Options,
) -> Result<BuildStats, BuildError> {
    match opts.arch {
        RtArch::Rtu => refit::update(input, mem, req, src),
        RtArch::Rdna2 => rdna2::refit::update(input, mem, req, src),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builder_follows_the_flags_and_the_geometry() {
        use flags::*;
        let o = Options::new(4);
        let tri = |f, opaque| o.builder_for(f, Kind::Triangles, opaque);
        // A trace preference gets the SAH builder, a build preference the fast one (both
        // set: the build preference wins, as before).
        assert_eq!(tri(PREFER_FAST_TRACE, true), Builder::Sah);
        assert_eq!(tri(PREFER_FAST_TRACE | ALLOW_COMPACTION, true), Builder::Sah);
        assert_eq!(tri(PREFER_FAST_BUILD, false), Builder::Fast);
        assert_eq!(tri(PREFER_FAST_BUILD | PREFER_FAST_TRACE, true), Builder::Fast);
        // No flag, or a static structure: SAH.
        for f in [0, ALLOW_COMPACTION, ALLOW_UPDATE | ALLOW_COMPACTION] {
            assert_eq!(tri(f, true), Builder::Sah, "flags {f:#x}");
        }
        // Updatable or low-memory without a trace preference: opaque triangles fast,
        // candidates and instances SAH.
        for f in [ALLOW_UPDATE, LOW_MEMORY, ALLOW_UPDATE | LOW_MEMORY] {
            assert_eq!(tri(f, true), Builder::Fast, "flags {f:#x}");
            assert_eq!(tri(f, false), Builder::Sah, "flags {f:#x}");
            assert_eq!(o.builder_for(f, Kind::Aabbs, true), Builder::Sah, "flags {f:#x}");
            assert_eq!(o.builder_for(f, Kind::Instances, true), Builder::Sah, "flags {f:#x}");
        }
        // A forced builder overrides every flag.
        let forced = Options { builder: Some(Builder::Sah), ..o };
        assert_eq!(forced.builder_for(PREFER_FAST_BUILD, Kind::Triangles, true), Builder::Sah);
        // Leaves follow the builder: four for fast opaque triangles.
        assert_eq!(o.leaf_for(ALLOW_UPDATE, Kind::Triangles, true), FAST_LEAF);
        assert_eq!(o.leaf_for(ALLOW_UPDATE, Kind::Triangles, false), 1);
    }
}
