//! Device command streams: what a recorded command buffer becomes, and what the queue's
//! command processor plays into the model.
//!
//! A dispatch is a run of DCR writes (seed 002's KMU launch state, seed 000's RTU config)
//! followed by a start pulse; transfers are DMA operations on device addresses; AS builds and
//! copies are jobs the command processor runs through the transcoder when it reaches them, so
//! they read their inputs at execution time.

mod draw;

pub use draw::{DrawJob, DrawSource, IndirectDraws, Scratch};

use crate::accel::{AccelError, AccelStruct};
use crate::device::Device;
use crate::memory::Memory;
use crate::pipeline::{PipelineLayout, Specialization};
use crate::query::QueryPool;
use crate::{vk, VkResult};
use std::any::Any;
use std::sync::Arc;
use vortex_model::abi::dcr;
use vortex_model::abi::kernel::kargs;
use vortex_model::device::{Device as Model, DispatchReport};
use vortex_model::fault::{Fault, FaultKind};
use vortex_model::mem::{MemFault, MemFaultKind, MemoryMap};
use vortex_transcode::shader;

/// One acceleration-structure build, resolved at record time except for addresses that
/// depend on memory binding (the AS's own), which resolve when the job runs.
#[derive(Clone)]
pub struct AccelBuildJob {
    pub dst: Arc<AccelStruct>,
    pub src: Option<Arc<AccelStruct>>,
    /// The build as recorded; `dst`, `dst_size` and the update source are filled in when
    /// the job runs.
    pub request: vortex_transcode::accel::BuildRequest,
    /// The device's builder knobs.
    pub options: vortex_transcode::accel::Options,
}

#[derive(Clone)]
pub enum StreamOp {
    Dcr {
        addr: u32,
        value: u32,
    },
    /// The start pulse.
    Start {
        kernel: Arc<str>,
    },
    /// Indirect dispatch: the command processor reads the three group counts at `src`, writes
    /// them into the grid DCRs and the kernel arguments at `kargs`, then pulses start.
    DispatchIndirect {
        src: u64,
        kargs: u64,
        kernel: Arc<str>,
    },
    /// Indirect trace rays (`cmd::trace`): the launch size (width, height, depth rays) at
    /// `src` goes into the kernel arguments, the CTAs covering it into the grid DCRs.
    TraceRaysIndirect {
        src: u64,
        kargs: u64,
        kernel: Arc<str>,
        /// A `VkTraceRaysIndirectCommand2KHR`: the SBT regions come from `src` too.
        regions: bool,
    },
    /// Before the start of a trace whose pipeline has several ray generation groups: the
    /// command processor reads the ray generation record's handle and points the launch at
    /// that group's kernel (`cmd::trace::RaygenSelect`).
    SelectRaygen(Box<crate::cmd::trace::RaygenSelect>),
    Copy {
        src: u64,
        dst: u64,
        len: u64,
    },
    Fill {
        dst: u64,
        len: u64,
        word: u32,
    },
    Write {
        dst: u64,
        data: Vec<u8>,
    },
    /// Repeats `pattern` over `len` bytes (image clears).
    Pattern {
        dst: u64,
        len: u64,
        pattern: Vec<u8>,
    },
    /// `vkQueuePresentKHR`: the frame goes to its swapchain's presentation engine.
    Present(Arc<crate::present::PresentRequest>),
    BuildAccel(Box<AccelBuildJob>),
    /// Clone or compact (the same byte copy here).
    CopyAccel {
        src: Arc<AccelStruct>,
        dst: Arc<AccelStruct>,
    },
    /// `VK_COPY_ACCELERATION_STRUCTURE_MODE_SERIALIZE_KHR` to a device address.
    SerializeAccel {
        src: Arc<AccelStruct>,
        dst: u64,
    },
    /// `VK_COPY_ACCELERATION_STRUCTURE_MODE_DESERIALIZE_KHR` from a device address.
    DeserializeAccel {
        src: u64,
        dst: Arc<AccelStruct>,
    },
    /// `vkCmdWriteAccelerationStructuresPropertiesKHR`: query `first + i` gets structure i's
    /// property.
    WriteAccelProperties {
        pool: Arc<QueryPool>,
        first: u32,
        structures: Vec<Arc<AccelStruct>>,
    },
    ResetQueries {
        pool: Arc<QueryPool>,
        first: u32,
        count: u32,
    },
    /// Opens an occlusion query: the samples of the draws played until its `WriteQuery`.
    BeginQuery {
        pool: Arc<QueryPool>,
        query: u32,
    },
    /// Makes a query available with a value: the time, or the samples that passed every test
    /// in the draws since the occlusion query's `BeginQuery`.
    WriteQuery {
        pool: Arc<QueryPool>,
        query: u32,
        timestamp: bool,
    },
    CopyQueryResults {
        pool: Arc<QueryPool>,
        first: u32,
        count: u32,
        dst: u64,
        stride: u64,
        flags: vk::QueryResultFlags,
    },
    /// vkCmdSetEvent / vkCmdResetEvent: the event changes when the stream reaches it.
    SetEvent {
        event: Arc<crate::sync::Event>,
        value: bool,
    },
    /// The draw pulse, after the draw's DCR writes (`draw`).
    Draw(Box<DrawJob>),
    /// `vkCmdBlitImage` (`crate::blit`).
    Blit(Box<crate::blit::BlitJob>),
    /// A multisample resolve (`crate::resolve`).
    Resolve(Box<crate::resolve::ResolveJob>),
    /// A `vkQueueBindSparse` batch: its pages are bound when the queue reaches it.
    BindSparse(Arc<crate::sparse::BindBatch>),
}

impl StreamOp {
    pub fn name(&self) -> &'static str {
        match self {
            StreamOp::Dcr { .. } => "DCR",
            StreamOp::Start { .. } => "START",
            StreamOp::DispatchIndirect { .. } => "START_INDIRECT",
            StreamOp::TraceRaysIndirect { .. } => "TRACE_RAYS_INDIRECT",
            StreamOp::SelectRaygen(_) => "SELECT_RAYGEN",
            StreamOp::Copy { .. } => "DMA_COPY",
            StreamOp::Fill { .. } => "DMA_FILL",
            StreamOp::Write { .. } => "DMA_WRITE",
            StreamOp::Pattern { .. } => "DMA_PATTERN",
            StreamOp::Present(_) => "PRESENT",
            StreamOp::BuildAccel(_) => "AS_BUILD",
            StreamOp::CopyAccel { .. } => "AS_COPY",
            StreamOp::SerializeAccel { .. } => "AS_SERIALIZE",
            StreamOp::DeserializeAccel { .. } => "AS_DESERIALIZE",
            StreamOp::WriteAccelProperties { .. } => "AS_PROPERTIES",
            StreamOp::ResetQueries { .. } => "QUERY_RESET",
            StreamOp::BeginQuery { .. } => "QUERY_BEGIN",
            StreamOp::WriteQuery { .. } => "QUERY_WRITE",
            StreamOp::CopyQueryResults { .. } => "QUERY_COPY",
            StreamOp::SetEvent { .. } => "SET_EVENT",
            StreamOp::Draw(d) => match d.source {
                DrawSource::Direct { .. } => "DRAW",
                DrawSource::Indirect(_) => "DRAW_INDIRECT",
            },
            StreamOp::Blit(_) => "BLIT",
            StreamOp::Resolve(_) => "RESOLVE",
            StreamOp::BindSparse(_) => "SPARSE_BIND",
        }
    }
}

/// A finished command buffer: the stream plus everything it must keep alive (pipelines,
/// descriptor sets, structures) and the device memory holding its kernel arguments.
#[derive(Default)]
pub struct Recording {
    pub ops: Vec<StreamOp>,
    /// Draws of a secondary buffer recorded inside a render pass it does not know the
    /// attachments of: their state records are made when a primary executes it.
    pub deferred: Vec<crate::cmd::graphics::DeferredState>,
    pub keep: Vec<Arc<dyn Any + Send + Sync>>,
    pub arena: Vec<Memory>,
}

/// Size of one kernel-argument arena chunk.
const ARENA_CHUNK: u64 = 64 * 1024;

impl Recording {
    /// Places `bytes` in device memory owned by this recording; returns the address.
    pub fn stash(&mut self, device: &Device, bytes: &[u8], used: &mut u64) -> VkResult<u64> {
        let len = (bytes.len() as u64).div_ceil(64) * 64;
        if self.arena.is_empty() || *used + len > self.arena.last().map_or(0, |m| m.size) {
            self.arena.push(Memory::allocate(&device.space, ARENA_CHUNK.max(len))?);
            *used = 0;
        }
        let m = self.arena.last().expect("just pushed");
        let addr = m.address(*used);
        device.space.snapshot().write(addr, bytes).map_err(|_| vk::Result::ERROR_UNKNOWN)?;
        *used += len;
        Ok(addr)
    }
}

/// The pipeline layout as the compiler sees it: every binding with its set, offset and
/// first dynamic-offset index.
pub fn resource_layout(layout: &PipelineLayout) -> shader::ResourceLayout {
    let mut bindings = Vec::new();
    for (set, l) in layout.sets.iter().enumerate() {
        let Some(l) = l else { continue };
        for b in &l.bindings {
            bindings.push(shader::BindingLayout {
                set: set as u32,
                binding: b.binding,
                descriptor_type: b.ty.as_raw() as u32,
                count: b.count,
                offset: b.offset,
                dynamic_index: b.dynamic_index.map(|i| i + layout.dynamic_base[set]),
            });
        }
    }
    shader::ResourceLayout { bindings, push_constant_bytes: layout.push_bytes }
}

/// Compiles SPIR-V for this device: the pipeline layout becomes the resource layout the
/// kernel reads its descriptors through.
pub fn compile_kernel(
    device: &crate::device::Device,
    words: &[u32],
    entry: &str,
    spec: &Specialization,
    layout: &PipelineLayout,
    target: shader::Target,
    vertex_input: Vec<shader::VertexAttribute>,
) -> VkResult<shader::CompiledKernel> {
    let opts = shader::CompileOptions {
        entry_point: entry.to_string(),
        target,
        vertex_input,
        specialization: spec.iter().cloned().collect(),
        layout: resource_layout(layout),
        optimize: shader::optimize_from_env(),
        robust_buffer_access: device.robust_buffer_access(),
    };
    shader::compile(words, &opts).map_err(|e| {
        tracing::error!("cannot compile {} shader '{entry}': {e}", target.stage);
        vk::Result::ERROR_UNKNOWN
    })
}

/// The occlusion queries open in a stream: each counts the samples that passed in the draws
/// reported since it began.
#[derive(Default)]
struct Occlusion(Vec<(Arc<QueryPool>, u32, usize)>);

impl Occlusion {
    fn begin(&mut self, pool: &Arc<QueryPool>, query: u32, reports: usize) {
        self.0.push((pool.clone(), query, reports));
    }

    /// The samples since the query began (0 for one that never began in this stream).
    fn end(&mut self, pool: &Arc<QueryPool>, query: u32, reports: &[DispatchReport]) -> u64 {
        let Some(k) = self.0.iter().position(|(p, q, _)| Arc::ptr_eq(p, pool) && *q == query) else {
            return 0;
        };
        let (_, _, from) = self.0.swap_remove(k);
        reports[from..].iter().filter_map(|r| r.draw.as_ref()).map(|d| d.om.passed).sum()
    }
}

/// The command processor: plays one stream into the model, with its scratch for draws. The
/// first device fault stops the stream and is returned (the queue turns it into
/// DEVICE_LOST).
pub fn play(
    model: &mut Model,
    ops: &[StreamOp],
    reports: &mut Vec<DispatchReport>,
    scratch: &mut Scratch,
) -> Result<(), Fault> {
    let print = std::env::var_os("VORTEX_ICD_PRINT_CMDS").is_some();
    let mut occlusion = Occlusion::default();
    for op in ops {
        if print {
            match op {
                StreamOp::Dcr { addr, value } => eprintln!("vortex: DCR {:<18} = {value:#x}", dcr::name(*addr)),
                StreamOp::Start { kernel } => eprintln!("vortex: START '{kernel}'"),
                // A direct draw's line comes with its pulse (`draw`).
                StreamOp::Draw(j) if matches!(j.source, DrawSource::Direct { .. }) => {}
                other => eprintln!("vortex: {}", other.name()),
            }
        }
        let mem = || model.memory().snapshot();
        match op {
            StreamOp::Dcr { addr, value } => model.dcr_write(*addr, *value)?,
            StreamOp::Start { kernel } => {
                let r = model.start()?;
                tracing::debug!(
                    "dispatch '{kernel}': {} CTAs, {} warp instructions",
                    r.totals.ctas,
                    r.totals.instructions
                );
                reports.push(r);
            }
            StreamOp::DispatchIndirect { src, kargs: ka, kernel } => {
                let m = mem();
                let g = [m.read_u32(*src)?, m.read_u32(*src + 4)?, m.read_u32(*src + 8)?];
                for (i, v) in g.iter().enumerate() {
                    m.write_u32(*ka + kargs::NUM_GROUPS as u64 + 4 * i as u64, *v)?;
                }
                for (addr, value) in [dcr::KMU_GRID_DIM_X, dcr::KMU_GRID_DIM_Y, dcr::KMU_GRID_DIM_Z].into_iter().zip(g)
                {
                    model.dcr_write(addr, value)?;
                }
                let r = model.start()?;
                tracing::debug!("indirect dispatch '{kernel}' {g:?}: {} CTAs", r.totals.ctas);
                reports.push(r);
            }
            StreamOp::TraceRaysIndirect { src, kargs: ka, kernel, regions } => {
                let grid = crate::cmd::trace::play_indirect(&mem(), *src, *ka, *regions)?;
                for (addr, value) in
                    [dcr::KMU_GRID_DIM_X, dcr::KMU_GRID_DIM_Y, dcr::KMU_GRID_DIM_Z].into_iter().zip(grid)
                {
                    model.dcr_write(addr, value)?;
                }
                let r = model.start()?;
                tracing::debug!("indirect trace rays '{kernel}' {grid:?}: {} CTAs", r.totals.ctas);
                reports.push(r);
            }
            StreamOp::SelectRaygen(sel) => {
                for (addr, value) in sel.play(&mem())? {
                    model.dcr_write(addr, value)?;
                }
            }
            StreamOp::Copy { src, dst, len } => mem().copy(*dst, *src, *len)?,
            StreamOp::Fill { dst, len, word } => mem().fill(*dst, *len, *word)?,
            StreamOp::Write { dst, data } => mem().write(*dst, data)?,
            StreamOp::Pattern { dst, len, pattern } => pattern_fill(&mem(), *dst, *len, pattern)?,
            StreamOp::Present(req) => req.reached(),
            StreamOp::BuildAccel(job) => run_accel_build(&mem(), job, &job.options)?,
            StreamOp::CopyAccel { src, dst } => crate::accel::copy(&mem(), src, dst)?,
            StreamOp::SerializeAccel { src, dst } => serialize_accel(&mem(), src, *dst)?,
            StreamOp::DeserializeAccel { src, dst } => deserialize_accel(&mem(), *src, dst)?,
            StreamOp::WriteAccelProperties { pool, first, structures } => {
                let m = mem();
                for (i, a) in structures.iter().enumerate() {
                    pool.set(first + i as u32, crate::accel::property(&m, a, pool.ty)?);
                }
            }
            StreamOp::ResetQueries { pool, first, count } => pool.reset(*first, *count),
            StreamOp::BeginQuery { pool, query } => occlusion.begin(pool, *query, reports.len()),
            StreamOp::WriteQuery { pool, query, timestamp } => pool
                .set(*query, if *timestamp { crate::query::timestamp() } else { occlusion.end(pool, *query, reports) }),
            StreamOp::CopyQueryResults { pool, first, count, dst, stride, flags } => {
                copy_query_results(&mem(), pool, *first, *count, *dst, *stride, *flags)?
            }
            StreamOp::SetEvent { event, value } => event.set(*value),
            StreamOp::Draw(job) => draw::play(model, job, scratch, reports, print)?,
            StreamOp::Blit(job) => crate::blit::run(&mem(), job)?,
            StreamOp::Resolve(job) => crate::resolve::run(&mem(), job)?,
            StreamOp::BindSparse(batch) => batch.apply(model.memory())?,
        }
    }
    Ok(())
}

fn pattern_fill(m: &MemoryMap, dst: u64, len: u64, pattern: &[u8]) -> Result<(), Fault> {
    if pattern.is_empty() {
        return Ok(());
    }
    let mut buf = Vec::with_capacity(len as usize);
    while (buf.len() as u64) < len {
        buf.extend_from_slice(pattern);
    }
    buf.truncate(len as usize);
    m.write(dst, &buf)?;
    Ok(())
}

/// A fault for a structure that cannot serve (`BadAccelerationStructure`).
fn structure_fault(detail: String) -> Fault {
    Fault::new(FaultKind::BadAccelerationStructure, detail)
}

/// A fault for `size` bytes at `addr` that are not mapped.
fn unmapped(addr: u64, size: u64, detail: String) -> Fault {
    Fault::new(FaultKind::Memory(MemFault { addr, size, kind: MemFaultKind::Unmapped }), detail)
}

/// `vkCmdCopyQueryPoolResults`: earlier commands have run, so an unavailable query is one
/// that was never written (see `QueryPool::copy_results`). Values past the end of the
/// destination's memory are dropped.
fn copy_query_results(
    m: &MemoryMap,
    pool: &QueryPool,
    first: u32,
    count: u32,
    dst: u64,
    stride: u64,
    flags: vk::QueryResultFlags,
) -> Result<(), Fault> {
    let len = if count == 0 { 0 } else { (count as u64 - 1) * stride + 8 * (pool.values as u64 + 1) };
    let not_mapped = || unmapped(dst, len.max(1), format!("query results destination {dst:#x} is not mapped"));
    let mapped = m.mapped_len(dst);
    if mapped == 0 {
        return Err(not_mapped());
    }
    let len = len.min(mapped);
    // SAFETY: the destination buffer range is the command's alone.
    let mut out = unsafe { vortex_transcode::accel::device_bytes_mut(m, dst, len) }.map_err(|_| not_mapped())?;
    pool.copy_results(first, count, &mut out, stride, flags);
    Ok(())
}

/// Runs a build job: the transcoder reads the inputs from device memory now and writes the
/// CW-BVH into the structure's own memory (or refits it, for an update).
fn run_accel_build(m: &MemoryMap, job: &AccelBuildJob, opts: &vortex_transcode::accel::Options) -> Result<(), Fault> {
    if job.dst.address() == 0 {
        return Err(structure_fault("build into an acceleration structure whose buffer has no memory".into()));
    }
    let req = crate::accel::resolve(job.request.clone(), &job.dst, job.src.as_deref());
    let t = std::time::Instant::now();
    match vortex_transcode::accel::build(m, &req, opts) {
        Ok(s) => {
            tracing::debug!(
                "AS build at {:#x} ({:?}): {} primitives, {} nodes, {} leaves, {} bytes, SAH cost {:.2}, {:.3} ms (gather {:.3}, sort {:.3}, permute {:.3}, tree {:.3}, write {:.3})",
                req.dst,
                s.builder,
                s.prims,
                s.nodes,
                s.leaves,
                s.bytes,
                s.sah_cost,
                t.elapsed().as_secs_f64() * 1e3,
                s.phases.gather * 1e3,
                s.phases.sort * 1e3,
                s.phases.permute * 1e3,
                s.phases.tree * 1e3,
                s.phases.write * 1e3
            );
            Ok(())
        }
        Err(e) => Err(AccelError::build(&format!("acceleration-structure build at {:#x} failed", req.dst), e).into()),
    }
}

fn serialize_accel(m: &MemoryMap, src: &AccelStruct, dst: u64) -> Result<(), Fault> {
    let s = src.bound_address("serialization source").map_err(structure_fault)?;
    let size = vortex_transcode::accel::serial::properties(m, s).map_err(|e| AccelError::build("", e))?.serialized;
    // SAFETY: the destination range is the copy's alone (Vulkan valid usage).
    let mut out = unsafe { vortex_transcode::accel::device_bytes_mut(m, dst, size) }.map_err(|fault| {
        Fault::new(
            FaultKind::Memory(fault),
            format!("serialization destination {dst:#x}+{size} is not mapped: {fault}"),
        )
    })?;
    Ok(crate::accel::serialize(m, src, &mut out)?)
}

fn deserialize_accel(m: &MemoryMap, src: u64, dst: &AccelStruct) -> Result<(), Fault> {
    let head: [u8; vortex_transcode::accel::serial::HEADER_BYTES] = m.read_array(src)?;
    let size = vortex_transcode::accel::serial::checked_blob_size(&head, &crate::device::DRIVER_UUID, dst.size)
        .map_err(|e| AccelError::build(&format!("deserialization from {src:#x}"), e))?;
    let blob = m.bytes(src, size).map_err(|fault| {
        Fault::new(FaultKind::Memory(fault), format!("serialized structure at {src:#x}+{size} is not mapped: {fault}"))
    })?;
    Ok(crate::accel::deserialize(m, &blob, dst)?)
}
