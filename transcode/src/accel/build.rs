//! The build pipeline behind [`build_from`], phase by phase: the primitives and their
//! centroid bounds (gather), Morton order (sort), the primitives in that order (permute),
//! the binary tree and its wide-node sizes (tree), the records written straight into the
//! destination (write). Every phase streams over arrays carved once from the scratch
//! memory ([`Scratch`]).

use super::input::{self, Aabb, PrimRef};
use super::tree::{self, BNode, Kind, Nodes, Tree};
use super::{arena, device_bytes_mut, layout, lbvh, morton, rdna2, sah, scratch_bytes};
use super::{
    BuildError, BuildRequest, BuildStats, Builder, Geometry, GeometryInput, InputMemory, Level, Mode, Options, Phases,
};
use rayon::prelude::*;
use vortex_model::abi::bvh::{self, header};
use vortex_model::config::RtArch;
use vortex_model::mem::MemoryMap;

/// Builds with inputs read through `input` (host memory for host builds) and `scratch`
/// (used when large enough, else pooled host memory); the structure and referenced BLAS
/// headers are in device memory `mem`.
///
/// The whole build runs on one of the builder's pool threads: a parallel phase started
/// from outside the pool (the queue's thread) hands its work over and sleeps until the
/// pool has finished it, a cross-thread round trip per phase that a build of 10k
/// triangles feels and a loaded machine multiplies; inside the pool a phase starts at
/// once and the other threads join it as they come.
pub fn build_from(
    input: &dyn InputMemory,
    mem: &MemoryMap,
    req: &BuildRequest,
    opts: &Options,
    scratch: Option<&mut [u8]>,
) -> Result<BuildStats, BuildError> {
    in_pool(|| build_here(input, mem, req, opts, scratch))
}

/// Runs `f` on a thread of the pool (at once when this is one).
fn in_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        f()
    } else {
        rayon::scope(|_| f())
    }
}

/// Starts the builder's thread pool if it is not running yet: a structure's creation calls
/// this so that its first build does not pay for the threads. Never panics here: a pool
/// that cannot start is the first build's failure, as it would be without this call.
pub fn warm_up() {
    // An error is also what a running pool answers.
    let _ = rayon::ThreadPoolBuilder::new().build_global();
}

/// [`build_from`] on the current thread.
fn build_here(
    input: &dyn InputMemory,
    mem: &MemoryMap,
    req: &BuildRequest,
    opts: &Options,
    scratch: Option<&mut [u8]>,
) -> Result<BuildStats, BuildError> {
    if let Mode::Update { src } = req.mode {
        return super::update(input, mem, req, src, opts);
    }
    let width = opts.width;
    if !bvh::WIDTHS.contains(&width) || (opts.arch == RtArch::Rdna2 && width != 4) {
        return Err(BuildError::BadRequest(format!("BVH width {width} is not 4 or 6 (4 for rdna2)")));
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
    let sc = Scratch::carve(buf, n, kind == Kind::Triangles)?;
    let clock = Clock(std::time::Instant::now());
    let mut phases = Phases::default();

    // 1. Primitives and their boxes.
    let mut src = layout::Source {
        kind,
        tris: Vec::new(),
        aabbs: Vec::new(),
        insts: Vec::new(),
        geom_flags: req.geometries.iter().map(|g| g.flags).collect(),
    };
    let bases = Bases::new(req);
    let mut blas_roots = std::collections::HashMap::new();
    let (active, blas_table) = match kind {
        Kind::Instances => gather_instances(input, mem, req, opts.arch, &mut src, sc.refs, sc.keys, &mut blas_roots)?,
        // Triangles are read once: their vertices copied in input order into the node
        // array (free until the tree phase), their centroids into the vertex array (free
        // until the permutation): memory the build touches anyway (fresh scratch costs a
        // page fault per 4 KiB on its first build).
        Kind::Triangles => {
            let copy = bytemuck::cast_slice_mut(&mut bytemuck::cast_slice_mut::<_, f32>(&mut *sc.nodes)[..9 * n]);
            (gather_tris(input, req, &bases, &mut src, sc.verts, copy, sc.keys)?, Vec::new())
        }
        _ => (gather_prims(input, req, &bases, &mut src, sc.refs, sc.keys)?, Vec::new()),
    };
    phases.gather = clock.lap();

    // 2. Morton order, and the primitives (with triangles' vertices) in that order.
    let sorted = morton::sort(sc.keys, sc.tmp, active < n);
    let sorted = &sorted[..active];
    phases.sort = clock.lap();
    let (sorted_refs, verts, ids) = (&mut sc.sorted_refs[..active], &mut sc.verts[..], &mut sc.ids[..]);
    match kind {
        Kind::Triangles => {
            let copy = bytemuck::cast_slice(&bytemuck::cast_slice::<_, f32>(&*sc.nodes)[..9 * n]);
            permute_tris(copy, &bases, sorted, &mut ids[..active], &mut verts[..active]);
        }
        Kind::Aabbs => permute_aabbs(&src, &bases, sorted, sorted_refs)?,
        Kind::Instances => {
            for (slot, k) in sorted_refs.iter_mut().zip(sorted) {
                *slot = sc.refs[*k as u32 as usize];
            }
        }
    }
    let (verts, ids) = if kind == Kind::Triangles { (&mut verts[..active], &mut ids[..active]) } else { (verts, ids) };
    phases.permute = clock.lap();

    // 3. The binary tree.
    let all_opaque = req.geometries.iter().all(|g| g.flags & vortex_model::abi::rtu::geometry_flags::OPAQUE != 0);
    let builder = opts.builder_for(req.flags, kind, all_opaque);
    let max_leaf = opts.leaf_for(req.flags, kind, all_opaque);
    let bottom = plan_sah_bottom(opts, builder, sorted, kind, max_leaf, sorted_refs, verts, ids);
    let (verts, ids): (&[[f32; 9]], &[[u32; 2]]) = if kind == Kind::Triangles { (verts, ids) } else { (&[], &[]) };
    let t = Tree {
        kind,
        width: width as usize,
        max_leaf,
        prims: if kind == Kind::Triangles { &[] } else { sorted_refs },
        keys: sorted,
        verts,
        ids,
        single_geometry: req.geometries.len() == 1,
        nodes: Nodes::new(sc.nodes),
        wide: tree::Wide::new(sc.wide),
        // Collapsing every internal node as it is finalised beats a top-down pass over the
        // wide-node roots once leaves hold several primitives (few internal nodes per wide
        // node): 1M triangles, SAH with 4-triangle leaves, 7-9 ms less single-threaded.
        eager: builder == Builder::Fast || max_leaf > 1,
    };
    let root = if active == 0 { None } else { build_tree(&t, builder, opts, bottom.as_ref(), sc.items) };
    phases.tree = clock.lap();

    // 4. Layout, straight into the destination.
    let mut stats = match opts.arch {
        RtArch::Rtu => write(mem, req, &t, &src, root, &blas_table)?,
        RtArch::Rdna2 => {
            // Shared vertices would pin an updatable structure's triangles together.
            // Updatable structures keep FP32 boxes and a node per triangle: a refit writes
            // new boxes and vertices into the same nodes.
            let share = req.flags & super::flags::ALLOW_UPDATE == 0;
            let box16 = if share { opts.box16 } else { vortex_model::config::Box16::Never };
            let inputs = rdna2::Inputs { blas: &blas_roots, style: rdna2::Style { box16, share } };
            rdna2::write(mem, req, &t, &src, root, &blas_table, &inputs)?
        }
    };
    stats.builder = Some(builder);
    phases.write = clock.lap();
    stats.phases = Phases {
        gather: phases.gather,
        sort: phases.sort - phases.gather,
        permute: phases.permute - phases.sort,
        tree: phases.tree - phases.permute,
        write: phases.write - phases.tree,
    };
    Ok(stats)
}

/// Seconds since the build started.
struct Clock(std::time::Instant);

impl Clock {
    fn lap(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}

/// The build's arrays, carved from the scratch memory (see `scratch_arrays` for the sizes).
struct Scratch<'a> {
    /// Primitive refs in input order (triangles and AABBs: their centroids).
    refs: &'a mut [PrimRef],
    /// Morton keys and the radix sort's second buffer.
    keys: &'a mut [u64],
    tmp: &'a mut [u64],
    /// The refs, and triangles' vertices and (geometry, primitive) ids, in sorted order.
    sorted_refs: &'a mut [PrimRef],
    verts: &'a mut [[f32; 9]],
    ids: &'a mut [[u32; 2]],
    /// Binary nodes (the linear BVH's plus the SAH top's) and their wide children.
    nodes: &'a mut [BNode],
    wide: &'a mut [[u32; 6]],
    items: &'a mut [sah::Item],
}

impl<'a> Scratch<'a> {
    fn carve(buf: &'a mut [u8], n: usize, tris: bool) -> Result<Scratch<'a>, BuildError> {
        let mut arena = arena::Arena::new(buf);
        let short = || BuildError::BadRequest("scratch too small".into());
        Ok(Scratch {
            refs: arena.take(n).ok_or_else(short)?,
            keys: arena.take(n).ok_or_else(short)?,
            tmp: arena.take(n).ok_or_else(short)?,
            sorted_refs: arena.take(n).ok_or_else(short)?,
            verts: arena.take(if tris { n } else { 0 }).ok_or_else(short)?,
            ids: arena.take(if tris { n } else { 0 }).ok_or_else(short)?,
            nodes: arena.take(2 * n).ok_or_else(short)?,
            wide: arena.take(2 * n).ok_or_else(short)?,
            items: arena.take(n).ok_or_else(short)?,
        })
    }
}

/// The first global primitive index of each geometry.
struct Bases(Vec<u32>);

impl Bases {
    fn new(req: &BuildRequest) -> Bases {
        Bases(
            req.geometries
                .iter()
                .scan(0u32, |at, g| {
                    let b = *at;
                    *at += g.range.primitive_count;
                    Some(b)
                })
                .collect(),
        )
    }

    /// (geometry, primitive within it) of global primitive `i`.
    #[inline]
    fn locate(&self, i: u32) -> (u32, u32) {
        let g = if self.0.len() == 1 { 0 } else { self.0.partition_point(|&b| b <= i) - 1 };
        (g as u32, i - self.0[g])
    }
}

/// AABBs: opens each geometry's reader into `src`, then one streaming pass over the
/// inputs, geometry by geometry: every primitive's centroid (into `room`, an array free
/// until the permutation, of at least 12 bytes per key) and the centroid bounds; then
/// Morton keys from the centroids alone. Returns the active count.
fn gather_prims<'i, T: bytemuck::Pod>(
    input: &'i dyn InputMemory,
    req: &BuildRequest,
    bases: &Bases,
    src: &mut layout::Source<'i>,
    room: &mut [T],
    keys: &mut [u64],
) -> Result<usize, BuildError> {
    for (gi, g) in req.geometries.iter().enumerate() {
        src.aabbs.push(input::AabbReader::new(input, g, gi as u32)?);
    }
    let n = keys.len();
    let cents: &mut [[f32; 3]] = bytemuck::cast_slice_mut(&mut bytemuck::cast_slice_mut::<_, f32>(room)[..3 * n]);
    let mut acc = (Aabb::EMPTY, 0usize);
    for (g, &base) in bases.0.iter().enumerate() {
        let cs = &mut cents[base as usize..][..req.geometries[g].range.primitive_count as usize];
        let r = &src.aabbs[g];
        let part = scan_centroids(cs, |i| Ok(r.aabb(i)))?;
        acc = (acc.0.union(&part.0), acc.1 + part.1);
    }
    let (cb, active) = acc;
    scan_keys(keys, cents, &morton::Grid::new(cb.lo, cb.hi));
    Ok(active)
}

/// Triangles: opens each geometry's reader into `src`, then the one pass over the inputs
/// that reads them, geometry by geometry: every active triangle's vertices into `copy`
/// (input order; the permutation reads them from there), its centroid into `room` (an
/// array free until the permutation, of at least 12 bytes per key), and the centroid
/// bounds; then Morton keys from the centroids alone. Returns the active count.
fn gather_tris<'i>(
    input: &'i dyn InputMemory,
    req: &BuildRequest,
    bases: &Bases,
    src: &mut layout::Source<'i>,
    room: &mut [[f32; 9]],
    copy: &mut [[f32; 9]],
    keys: &mut [u64],
) -> Result<usize, BuildError> {
    for (gi, g) in req.geometries.iter().enumerate() {
        src.tris.push(input::TriReader::new(input, g, gi as u32)?);
    }
    let n = keys.len();
    let cents: &mut [[f32; 3]] = bytemuck::cast_slice_mut(&mut room.as_flattened_mut()[..3 * n]);
    let mut acc = (Aabb::EMPTY, 0usize);
    for (g, &base) in bases.0.iter().enumerate() {
        let count = req.geometries[g].range.primitive_count as usize;
        let (cs, vs) = (&mut cents[base as usize..][..count], &mut copy[base as usize..][..count]);
        let r = &src.tris[g];
        let part = if cs.len() <= CHUNK {
            scan_tris(r, 0, cs, vs)?
        } else {
            cs.par_chunks_mut(CHUNK)
                .zip(vs.par_chunks_mut(CHUNK))
                .enumerate()
                .map(|(ci, (cc, vc))| scan_tris(r, ci * CHUNK, cc, vc))
                .try_reduce(|| (Aabb::EMPTY, 0), |a, b| Ok((a.0.union(&b.0), a.1 + b.1)))?
        };
        acc = (acc.0.union(&part.0), acc.1 + part.1);
    }
    let (cb, active) = acc;
    scan_keys(keys, cents, &morton::Grid::new(cb.lo, cb.hi));
    Ok(active)
}

/// Triangles `at..` of reader `r`, as many as `cents` holds: each active one's vertices
/// into `copy` and centroid into `cents` (NaN for an inactive one, whose `copy` entry is
/// left as it was); returns their centroid bounds and the active count. A function of its
/// own so that the reader's decode-free paths are inlined into its loops whichever codegen
/// unit the parallel iterator's closures land in.
#[inline(never)]
fn scan_tris(
    r: &input::TriReader,
    at: usize,
    cents: &mut [[f32; 3]],
    copy: &mut [[f32; 9]],
) -> Result<(Aabb, usize), BuildError> {
    let (mut bounds, mut active) = (Centroids::new(), 0usize);
    r.each_tri(at, cents.iter_mut().zip(copy.iter_mut()), |(c, v), t| {
        *c = match t {
            Some(t) => {
                *v = bytemuck::cast(t);
                active += 1;
                bounds.add(&t)
            }
            None => [f32::NAN; 3],
        };
    })?;
    Ok((bounds.bounds(), active))
}

/// Triangle centroids and their bounds, as [`input::tri_box`] and [`grow_centroid`]
/// compute them (plain compares, then `lo * 0.5 + hi * 0.5`).
#[cfg(not(target_arch = "x86_64"))]
struct Centroids(Aabb);

#[cfg(not(target_arch = "x86_64"))]
impl Centroids {
    #[inline(always)]
    fn new() -> Centroids {
        Centroids(Aabb::EMPTY)
    }

    /// Grows the bounds by the centroid of `t`'s box and returns it.
    #[inline(always)]
    fn add(&mut self, t: &[[f32; 3]; 3]) -> [f32; 3] {
        grow_centroid(&mut self.0, &input::tri_box(t))
    }

    fn bounds(&self) -> Aabb {
        self.0
    }
}

/// [`Centroids`] with SSE, the three axes as lanes of one vector: `minps(a, b)` is
/// `if a < b { a } else { b }` and `maxps(a, b)` is `if a > b { a } else { b }`, the plain
/// compares of the portable code, and the multiplies and add are the same operations in
/// the same order, so the same bits.
#[cfg(target_arch = "x86_64")]
struct Centroids {
    lo: std::arch::x86_64::__m128,
    hi: std::arch::x86_64::__m128,
}

#[cfg(target_arch = "x86_64")]
impl Centroids {
    #[inline(always)]
    fn new() -> Centroids {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86_64 baseline; no memory is accessed.
        unsafe { Centroids { lo: _mm_set1_ps(f32::INFINITY), hi: _mm_set1_ps(f32::NEG_INFINITY) } }
    }

    #[inline(always)]
    fn add(&mut self, t: &[[f32; 3]; 3]) -> [f32; 3] {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86_64 baseline; the vectors are built from values
        // and stored into a local array.
        unsafe {
            let v = |p: &[f32; 3]| _mm_setr_ps(p[0], p[1], p[2], 0.0);
            let (a, b, c) = (v(&t[0]), v(&t[1]), v(&t[2]));
            let lo = _mm_min_ps(_mm_min_ps(a, b), c);
            let hi = _mm_max_ps(_mm_max_ps(a, b), c);
            let half = _mm_set1_ps(0.5);
            let m = _mm_add_ps(_mm_mul_ps(lo, half), _mm_mul_ps(hi, half));
            self.lo = _mm_min_ps(m, self.lo);
            self.hi = _mm_max_ps(m, self.hi);
            let mut out = [0.0f32; 4];
            _mm_storeu_ps(out.as_mut_ptr(), m);
            [out[0], out[1], out[2]]
        }
    }

    fn bounds(&self) -> Aabb {
        use std::arch::x86_64::*;
        let (mut lo, mut hi) = ([0.0f32; 4], [0.0f32; 4]);
        // SAFETY: SSE2 is part of the x86_64 baseline; the stores write local arrays.
        unsafe {
            _mm_storeu_ps(lo.as_mut_ptr(), self.lo);
            _mm_storeu_ps(hi.as_mut_ptr(), self.hi);
        }
        Aabb { lo: [lo[0], lo[1], lo[2]], hi: [hi[0], hi[1], hi[2]] }
    }
}

/// Instances: each active instance's world box into `refs` (and its data into `src`), the
/// Morton keys of their centroids. Returns the active count and the table of referenced
/// BLAS addresses.
#[allow(clippy::too_many_arguments)]
fn gather_instances(
    input: &dyn InputMemory,
    mem: &MemoryMap,
    req: &BuildRequest,
    arch: RtArch,
    src: &mut layout::Source,
    refs: &mut [PrimRef],
    keys: &mut [u64],
    roots: &mut std::collections::HashMap<u64, rdna2::BlasRoot>,
) -> Result<(usize, Vec<u64>), BuildError> {
    let mut headers = input::BlasHeaders::new(mem, arch);
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
    let grid = morton::Grid::new(bounds.lo, bounds.hi);
    for (i, (k, r)) in keys.iter_mut().zip(refs.iter()).enumerate() {
        let code = if r.active() {
            grid.code(std::array::from_fn(|a| r.lo[a] * 0.5 + r.hi[a] * 0.5))
        } else {
            morton::INACTIVE
        };
        *k = (code as u64) << 32 | i as u64;
    }
    *roots = std::mem::take(&mut headers.roots);
    Ok((src.insts.len(), headers.table))
}

/// AABBs in sorted order, read again from the input.
fn permute_aabbs(
    src: &layout::Source,
    bases: &Bases,
    sorted: &[u64],
    sorted_refs: &mut [PrimRef],
) -> Result<(), BuildError> {
    sorted_refs.par_chunks_mut(CHUNK).enumerate().try_for_each(|(ci, rc)| -> Result<(), BuildError> {
        for (j, slot) in rc.iter_mut().enumerate() {
            let (g, p) = bases.locate(sorted[ci * CHUNK + j] as u32);
            let b = src.aabbs[g as usize].aabb(p).ok_or_else(|| {
                BuildError::BadRequest(format!("AABB {p} of geometry {g} changed while the build read it"))
            })?;
            *slot = PrimRef { lo: b.lo, hi: b.hi, geom: g, prim: p };
        }
        Ok(())
    })
}

/// The SAH builder's default bottom, every cluster split by SAH sweeps, planned before the
/// tree exists: it reorders primitives within clusters. `None` when another bottom is used.
struct Bottom {
    cluster_starts: Vec<u32>,
    plan: Vec<u8>,
}

#[allow(clippy::too_many_arguments)]
fn plan_sah_bottom(
    opts: &Options,
    builder: Builder,
    sorted: &[u64],
    kind: Kind,
    max_leaf: u32,
    sorted_refs: &mut [PrimRef],
    verts: &mut [[f32; 9]],
    ids: &mut [[u32; 2]],
) -> Option<Bottom> {
    let planned = builder == Builder::Sah
        && !sorted.is_empty()
        && opts.rebuild > 2
        && opts.cluster.max(1) <= opts.rebuild.min(sah::REBUILD_MAX);
    if !planned {
        return None;
    }
    let mut plan = vec![0u8; sorted.len()];
    let data =
        if kind == Kind::Triangles { sah::Payload::Tris { verts, ids } } else { sah::Payload::Prims(sorted_refs) };
    let cluster_starts = sah::plan_bottom(sorted, data, opts.cluster.max(1), max_leaf, &mut plan);
    Some(Bottom { cluster_starts, plan })
}

/// The binary tree over the sorted primitives; its root.
fn build_tree(
    t: &Tree,
    builder: Builder,
    opts: &Options,
    bottom: Option<&Bottom>,
    items: &mut [sah::Item],
) -> Option<u32> {
    let active = t.keys.len();
    match (builder, bottom) {
        (Builder::Fast, _) => lbvh::build(t),
        // Every cluster split by SAH sweeps (the default).
        (Builder::Sah, Some(b)) => {
            let m = sah::realize_bottom(t, &b.cluster_starts, &b.plan, items);
            Some(if m < 2 { items[0].r } else { sah::build(t, &mut items[..m], t.top_base()) })
        }
        (Builder::Sah, None) => lbvh::build(t).map(|r| {
            let m = sah::clusters(t, r, opts.cluster.max(1), items);
            if t.max_leaf == 1 && opts.rebuild > 2 {
                // Their small subtrees rebuilt by full-sweep SAH over their primitives.
                let r = opts.rebuild;
                items[..m].par_iter_mut().with_min_len(256).for_each(|it| sah::rebuild_cluster(t, it, r));
            }
            if m < 2 {
                items[0].r
            } else {
                sah::build(t, &mut items[..m], t.top_base())
            }
        }),
        (Builder::FullSweep, _) => {
            sah::prims(t, &mut items[..active]);
            Some(sah::build_full_sweep(t, &mut items[..active], 0))
        }
    }
}

/// Writes the header, the records in pre-order and (top level) the BLAS table into the
/// destination; the structure's size is known from every node's wide-subtree size, set as
/// it was finalised.
fn write(
    mem: &MemoryMap,
    req: &BuildRequest,
    t: &Tree,
    src: &layout::Source,
    root: Option<u32>,
    blas_table: &[u64],
) -> Result<BuildStats, BuildError> {
    let active = t.keys.len();
    let records = root.map_or(0, |r| t.records(r) * 16);
    let table_off = header::BYTES as u64 + records;
    let top = req.level == Level::Top;
    let table_bytes = if top { (8 * active as u64).next_multiple_of(bvh::RECORD_ALIGN as u64) } else { 0 };
    let total = table_off + table_bytes;
    if total > req.dst_size {
        return Err(BuildError::DoesNotFit { needed: total, available: req.dst_size });
    }
    // SAFETY: the destination range is the build's alone (Vulkan valid usage).
    let mut out = unsafe { device_bytes_mut(mem, req.dst, total) }
        .map_err(|fault| BuildError::Memory { what: "acceleration structure destination".into(), fault })?;
    let (hb, rest) = out.split_at_mut(header::BYTES);
    let (recs, table) = rest.split_at_mut(records as usize);
    let mut stats = BuildStats { prims: active as u64, bytes: total, ..BuildStats::default() };
    let width = t.width as u32;
    let (root_word, bounds) = match root {
        None => (0, Aabb { lo: [0.0; 3], hi: [0.0; 3] }),
        Some(r) => {
            let w = layout::Writer { tree: t, src, width };
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
    let key = |c: &[f32; 3], code: u32, i: usize| {
        let code = if c[0].is_nan() { morton::INACTIVE } else { code };
        (code as u64) << 32 | i as u64
    };
    keys.par_chunks_mut(CHUNK).zip(cents.par_chunks(CHUNK)).enumerate().for_each(|(ci, (kc, cc))| {
        // Four at a time (the codes' vector lanes), then the rest one by one.
        let (mut k4, mut c4) = (kc.chunks_exact_mut(4), cc.chunks_exact(4));
        let mut i = ci * CHUNK;
        for (k, c) in (&mut k4).zip(&mut c4) {
            let c: &[[f32; 3]; 4] = c.try_into().expect("four centroids");
            let codes = grid.codes4(c);
            for j in 0..4 {
                k[j] = key(&c[j], codes[j], i + j);
            }
            i += 4;
        }
        for (k, c) in k4.into_remainder().iter_mut().zip(c4.remainder()) {
            *k = key(c, grid.code(*c), i);
            i += 1;
        }
    });
}

/// How far ahead the permutation prefetches.
const AHEAD: usize = 64;

/// Triangles in sorted order: their vertices from the gather's copy in input order (one
/// random 36-byte read each, prefetched ahead; no index or vertex decoding again) and
/// their (geometry, primitive) ids.
fn permute_tris(copy: &[[f32; 9]], bases: &Bases, sorted: &[u64], ids: &mut [[u32; 2]], verts: &mut [[f32; 9]]) {
    ids.par_chunks_mut(CHUNK)
        .zip(verts.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(ci, (ic, vc))| copy_sorted(copy, bases, sorted, ci * CHUNK, ic, vc));
}

/// [`permute_tris`] of the sorted positions from `at`.
#[inline(never)]
fn copy_sorted(
    copy: &[[f32; 9]],
    bases: &Bases,
    sorted: &[u64],
    at: usize,
    ids: &mut [[u32; 2]],
    verts: &mut [[f32; 9]],
) {
    let base = copy.as_ptr() as *const u8;
    // This chunk's keys, and the keys `AHEAD` further on (fewer near the end): iterated,
    // not indexed, so no bounds check a triangle.
    let keys = &sorted[at..at + ids.len()];
    let ahead = sorted.get(at + AHEAD..).unwrap_or(&[]);
    let mut ahead = ahead[..ahead.len().min(ids.len())].iter();
    for ((id, vs), &k) in ids.iter_mut().zip(verts.iter_mut()).zip(keys) {
        if let Some(&k) = ahead.next() {
            // Both lines the 36 bytes may straddle (a hint: any address is fine).
            let p = base.wrapping_add(36 * (k as u32 as usize));
            input::prefetch(p);
            input::prefetch(p.wrapping_add(35));
        }
        let k = k as u32;
        let (g, p) = bases.locate(k);
        *id = [g, p];
        *vs = copy[k as usize];
    }
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
