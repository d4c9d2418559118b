//! Device command streams: what a recorded command buffer becomes, and what the queue's
//! command processor plays into the model.
//!
//! A dispatch is a run of DCR writes (seed 002's KMU launch state, seed 000's RTU config)
//! followed by a start pulse; transfers are DMA operations on device addresses; AS builds and
//! copies are jobs the command processor runs through the transcoder when it reaches them, so
//! they read their inputs at execution time.

use crate::accel::AccelStruct;
use crate::device::Device;
use crate::memory::Memory;
use crate::pipeline::{PipelineLayout, Specialization};
use crate::{vk, VkResult};
use std::any::Any;
use std::sync::Arc;
use vortex_model::abi::dcr;
use vortex_model::abi::kernel::kargs;
use vortex_model::device::{Device as Model, DispatchReport};
use vortex_model::fault::Fault;
use vortex_model::mem::MemoryMap;
use vortex_transcode::shader;

/// One acceleration-structure build, resolved at record time except for addresses that
/// depend on memory binding (the AS's own), which resolve when the job runs.
pub struct AccelBuildJob {
    pub dst: Arc<AccelStruct>,
    pub src: Option<Arc<AccelStruct>>,
    /// The build as recorded; `dst`, `dst_size` and the update source are filled in when
    /// the job runs.
    pub request: vortex_transcode::accel::BuildRequest,
}

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
    BuildAccel(Box<AccelBuildJob>),
    CopyAccel {
        src: Arc<AccelStruct>,
        dst: Arc<AccelStruct>,
    },
    /// vkCmdSetEvent / vkCmdResetEvent: the event changes when the stream reaches it.
    SetEvent {
        event: Arc<crate::sync::Event>,
        value: bool,
    },
}

impl StreamOp {
    pub fn name(&self) -> &'static str {
        match self {
            StreamOp::Dcr { .. } => "DCR",
            StreamOp::Start { .. } => "START",
            StreamOp::DispatchIndirect { .. } => "START_INDIRECT",
            StreamOp::Copy { .. } => "DMA_COPY",
            StreamOp::Fill { .. } => "DMA_FILL",
            StreamOp::Write { .. } => "DMA_WRITE",
            StreamOp::Pattern { .. } => "DMA_PATTERN",
            StreamOp::BuildAccel(_) => "AS_BUILD",
            StreamOp::CopyAccel { .. } => "AS_COPY",
            StreamOp::SetEvent { .. } => "SET_EVENT",
        }
    }
}

/// A finished command buffer: the stream plus everything it must keep alive (pipelines,
/// descriptor sets, structures) and the device memory holding its kernel arguments.
#[derive(Default)]
pub struct Recording {
    pub ops: Vec<StreamOp>,
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

/// Compiles SPIR-V for this device: the pipeline layout becomes the resource layout the
/// kernel reads its descriptors through.
pub fn compile_kernel(
    words: &[u32],
    entry: &str,
    spec: &Specialization,
    layout: &PipelineLayout,
) -> VkResult<shader::CompiledKernel> {
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
    let opts = shader::CompileOptions {
        entry_point: entry.to_string(),
        specialization: spec.iter().cloned().collect(),
        layout: shader::ResourceLayout { bindings, push_constant_bytes: layout.push_bytes },
    };
    shader::compile(words, &opts).map_err(|e| {
        tracing::error!("cannot compile compute shader '{entry}': {e}");
        vk::Result::ERROR_UNKNOWN
    })
}

/// The DCR writes of one dispatch: the KMU launch state, then the RTU configuration.
/// With `grid` = None (indirect dispatch) the grid DCRs are left for the command
/// processor, which writes them when it reads the group counts.
pub fn launch_dcrs(device: &Device, launch: &dcr::Launch, indirect: bool) -> Vec<StreamOp> {
    let rtu = dcr::rtu_config(dcr::RTU_SCENE_CWBVH, device.config.rtu.bvh_width, 0);
    let grid = [dcr::KMU_GRID_DIM_X, dcr::KMU_GRID_DIM_Y, dcr::KMU_GRID_DIM_Z];
    launch
        .kmu_writes(device.config.num_threads)
        .into_iter()
        .filter(|(a, _)| !(indirect && grid.contains(a)))
        .chain([(dcr::RTU_CONFIG, rtu), (dcr::RTU_STATS_RESET, 1)])
        .map(|(addr, value)| StreamOp::Dcr { addr, value })
        .collect()
}

/// The command processor: plays one stream into the model. The first device fault stops
/// the stream and is returned (the queue turns it into DEVICE_LOST).
pub fn play(model: &mut Model, ops: &[StreamOp], reports: &mut Vec<DispatchReport>) -> Result<(), Fault> {
    let print = std::env::var_os("VORTEX_ICD_PRINT_CMDS").is_some();
    for op in ops {
        if print {
            match op {
                StreamOp::Dcr { addr, value } => eprintln!("vortex: DCR {:<18} = {value:#x}", dcr::name(*addr)),
                StreamOp::Start { kernel } => eprintln!("vortex: START '{kernel}'"),
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
            StreamOp::Copy { src, dst, len } => mem().copy(*dst, *src, *len)?,
            StreamOp::Fill { dst, len, word } => mem().fill(*dst, *len, *word)?,
            StreamOp::Write { dst, data } => mem().write(*dst, data)?,
            StreamOp::Pattern { dst, len, pattern } => pattern_fill(&mem(), *dst, *len, pattern)?,
            StreamOp::BuildAccel(job) => run_accel_build(&mem(), job, model.config().rtu.bvh_width)?,
            StreamOp::CopyAccel { src, dst } => copy_accel(&mem(), src, dst)?,
            StreamOp::SetEvent { event, value } => event.set(*value),
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

/// Runs a build job: the transcoder reads the inputs from device memory now and writes the
/// CW-BVH into the structure's own memory.
fn run_accel_build(m: &MemoryMap, job: &AccelBuildJob, width: u32) -> Result<(), Fault> {
    if job.dst.address() == 0 {
        return Err(Fault::new(
            vortex_model::fault::FaultKind::BadAccelerationStructure,
            "build into an acceleration structure whose buffer has no memory",
        ));
    }
    let req = crate::accel::resolve(job.request.clone(), &job.dst, job.src.as_deref());
    let t = std::time::Instant::now();
    match vortex_transcode::accel::build(m, &req, &vortex_transcode::accel::Options::new(width)) {
        Ok(s) => {
            tracing::debug!(
                "AS build at {:#x}: {} primitives, {} nodes, {} leaves, {} bytes, SAH cost {:.2}, {:.3} ms",
                req.dst,
                s.prims,
                s.nodes,
                s.leaves,
                s.bytes,
                s.sah_cost,
                t.elapsed().as_secs_f64() * 1e3
            );
            Ok(())
        }
        Err(e) => Err(Fault::new(
            vortex_model::fault::FaultKind::BadAccelerationStructure,
            format!("acceleration-structure build at {:#x} failed: {e}", req.dst),
        )),
    }
}

/// Clone copy: the CW-BVH is position independent (child words are offsets from the AS
/// base), so a clone is a byte copy of the used bytes.
fn copy_accel(m: &MemoryMap, src: &AccelStruct, dst: &AccelStruct) -> Result<(), Fault> {
    let (s, d) = (src.address(), dst.address());
    let head: [u8; vortex_model::abi::bvh::header::BYTES] = m.read_array(s)?;
    let size = vortex_model::abi::bvh::Header::parse(&head)
        .map_err(|e| Fault::new(vortex_model::fault::FaultKind::BadAccelerationStructure, format!("copy source: {e}")))?
        .size;
    if size > dst.size {
        return Err(Fault::new(
            vortex_model::fault::FaultKind::BadAccelerationStructure,
            format!("copy of a {size}-byte structure into a {}-byte one", dst.size),
        ));
    }
    m.copy(d, s, size)?;
    Ok(())
}
