//! Ray-tracing pipelines (`docs/RTPIPELINE.md`): the stages and shader groups of
//! `vkCreateRayTracingPipelinesKHR`, compiled into one kernel whose entry is the ray
//! generation shader, and the 32-byte shader group handles the application copies into its
//! shader binding tables.
//!
//! A handle is `group index + 1` (0 never names a group, so a zeroed record is a null one)
//! and the low word of the pipeline's kernel address (device addresses are never reused, so
//! a record from another pipeline is told apart). Capture/replay handles are the same bytes.

use super::{load_kernel, Kind, Pipeline, PipelineLayout, ShaderModule, Specialization};
use crate::device::Device;
use crate::memory::Memory;
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::abi::kernel::kargs;
use vortex_transcode::shader::{self, Stage};

/// `shaderGroupHandleSize`, `shaderGroupHandleCaptureReplaySize`.
pub const HANDLE_BYTES: usize = kargs::sbt::HANDLE_BYTES;
/// `shaderGroupHandleAlignment`.
pub const HANDLE_ALIGNMENT: u32 = 32;
/// `shaderGroupBaseAlignment`.
pub const BASE_ALIGNMENT: u32 = 64;
/// `maxShaderGroupStride`.
pub const MAX_GROUP_STRIDE: u32 = 4096;
/// `maxRayRecursionDepth`: what other drivers report. Recursion is expanded at compile time
/// (`docs/RTPIPELINE.md`), so a pipeline's depth is bounded by its code size too: a
/// pipeline whose expansion does not fit fails creation, saying how large it is.
pub const MAX_RECURSION: u32 = 31;
/// `maxRayHitAttributeSize`.
pub const MAX_HIT_ATTRIBUTE_BYTES: u32 = 32;
/// `maxRayDispatchInvocationCount`: the launch grid's CTAs are counted in 32 bits.
pub const MAX_INVOCATIONS: u32 = 1 << 30;

/// One shader stage of the pipeline.
pub struct RtStage {
    pub stage: Stage,
    pub module: Arc<ShaderModule>,
    pub entry: String,
    pub spec: Specialization,
}

/// A shader group: general (ray generation, miss, callable: `general`), or a hit group of
/// triangles or procedural geometry. Members are indices into the pipeline's stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    pub kind: GroupKind,
    pub general: Option<u32>,
    pub closest_hit: Option<u32>,
    pub any_hit: Option<u32>,
    pub intersection: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupKind {
    General,
    Triangles,
    Procedural,
}

/// A compiled ray-tracing pipeline.
pub struct RayTracing {
    pub stages: Vec<RtStage>,
    pub groups: Vec<Group>,
    /// The kernel of each ray-generation group (by group index; `None` for other groups).
    pub raygen: Vec<Option<Kernel>>,
    /// The pipeline's identity in its handles.
    pub id: u32,
    pub max_recursion: u32,
}

/// One compiled entry kernel.
pub struct Kernel {
    pub kernel: Memory,
    pub lmem_bytes: u32,
    /// Private memory per lane (the stack size the queries report).
    pub private_bytes: u32,
}

impl Pipeline {
    /// Compiles a ray-tracing pipeline: one kernel per ray-generation group, entered at its
    /// shader (`docs/RTPIPELINE.md`).
    pub fn ray_tracing(
        device: &Device,
        stages: Vec<RtStage>,
        groups: Vec<Group>,
        max_recursion: u32,
        layout: Arc<PipelineLayout>,
    ) -> VkResult<Pipeline> {
        check_groups(&stages, &groups)?;
        let mut raygen = Vec::with_capacity(groups.len());
        let mut name = None;
        for g in &groups {
            let k = match (g.kind, g.general) {
                (GroupKind::General, Some(r)) if stages[r as usize].stage == Stage::RayGeneration => {
                    name.get_or_insert_with(|| stages[r as usize].entry.clone());
                    let depth = max_recursion.min(MAX_RECURSION);
                    Some(compile_raygen(device, &stages, &groups, r as usize, depth, &layout)?)
                }
                _ => None,
            };
            raygen.push(k);
        }
        let id = raygen.iter().flatten().next().map_or(0, |k| k.kernel.address(0) as u32);
        let rt = RayTracing { stages, groups, raygen, id, max_recursion };
        let name = name.unwrap_or_else(|| "ray-tracing pipeline".into());
        Ok(Pipeline { layout, name, kind: Kind::RayTracing(Box::new(rt)) })
    }
}

/// Group members must name stages of the right kinds.
fn check_groups(stages: &[RtStage], groups: &[Group]) -> VkResult<()> {
    let kind = |i: Option<u32>| i.and_then(|i| stages.get(i as usize)).map(|s| s.stage);
    for (n, g) in groups.iter().enumerate() {
        let ok = match g.kind {
            GroupKind::General => {
                matches!(kind(g.general), Some(Stage::RayGeneration | Stage::Miss | Stage::Callable))
                    && g.closest_hit.is_none()
                    && g.any_hit.is_none()
                    && g.intersection.is_none()
            }
            GroupKind::Triangles | GroupKind::Procedural => {
                g.general.is_none()
                    && g.closest_hit.is_none_or(|_| kind(g.closest_hit) == Some(Stage::ClosestHit))
                    && g.any_hit.is_none_or(|_| kind(g.any_hit) == Some(Stage::AnyHit))
                    && (g.kind == GroupKind::Procedural) == g.intersection.is_some()
                    && g.intersection.is_none_or(|_| kind(g.intersection) == Some(Stage::Intersection))
            }
        };
        if !ok {
            tracing::error!("ray-tracing pipeline: shader group {n} ({g:?}) names stages of the wrong kind");
            return Err(vk::Result::ERROR_UNKNOWN);
        }
    }
    Ok(())
}

fn compile_raygen(
    device: &Device,
    stages: &[RtStage],
    groups: &[Group],
    raygen: usize,
    max_recursion: u32,
    layout: &PipelineLayout,
) -> VkResult<Kernel> {
    let target = shader::Target {
        stage: Stage::RayGeneration,
        ray_query: shader::RayQueryLowering::for_arch(device.config.rt_arch),
        raylog: vortex_model::rtu::raylog::enabled(),
    };
    let opts = shader::CompileOptions {
        target,
        layout: crate::stream::resource_layout(layout),
        optimize: shader::optimize_from_env(),
        robust_buffer_access: device.robust_buffer_access(),
        ..Default::default()
    };
    let shaders: Vec<shader::RtShader> = stages
        .iter()
        .map(|s| shader::RtShader {
            words: s.module.words.clone(),
            entry: s.entry.clone(),
            stage: s.stage,
            specialization: s.spec.iter().cloned().collect(),
        })
        .collect();
    let idx = |i: Option<u32>| i.map(|i| i as usize);
    let groups: Vec<shader::RtGroup> = groups
        .iter()
        .map(|g| shader::RtGroup {
            general: idx(g.general),
            closest_hit: idx(g.closest_hit),
            any_hit: idx(g.any_hit),
            intersection: idx(g.intersection),
        })
        .collect();
    let s = &stages[raygen];
    let k = shader::compile_ray_tracing(&shaders, &groups, raygen, max_recursion, &opts).map_err(|e| {
        tracing::error!("cannot compile ray-tracing pipeline '{}': {e}", s.entry);
        // Too large for the device (recursion expanded past the code budget, too many
        // query slots, registers or private memory) is a memory failure; the rest unknown.
        match e {
            shader::CompileError::Limit(_) => vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
            _ => vk::Result::ERROR_UNKNOWN,
        }
    })?;
    let kernel = load_kernel(device, &k)?;
    Ok(Kernel { kernel, lmem_bytes: k.lmem_bytes, private_bytes: k.private_bytes })
}

impl RayTracing {
    /// The handle of group `g`.
    pub fn handle(&self, g: usize) -> [u8; HANDLE_BYTES] {
        let mut h = [0u8; HANDLE_BYTES];
        h[kargs::sbt::HANDLE_GROUP..][..4].copy_from_slice(&(g as u32 + 1).to_le_bytes());
        h[4..8].copy_from_slice(&self.id.to_le_bytes());
        h
    }

    /// `handles` of groups `first .. first + count` into `out`.
    pub fn handles(&self, first: u32, count: u32, out: &mut [u8]) -> VkResult<()> {
        let end = first as usize + count as usize;
        if end > self.groups.len() || out.len() < count as usize * HANDLE_BYTES {
            tracing::error!(
                "shader group handles {first}..{end} of {} groups into {} bytes",
                self.groups.len(),
                out.len()
            );
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        for (k, g) in (first as usize..end).enumerate() {
            out[k * HANDLE_BYTES..][..HANDLE_BYTES].copy_from_slice(&self.handle(g));
        }
        Ok(())
    }

    /// The stack bytes per lane of shader `which` of group `g`
    /// (`vkGetRayTracingShaderGroupStackSizeKHR`): a ray-generation shader's private memory;
    /// the other stages are code inside its kernel, whose storage it already counts.
    pub fn stack_size(&self, g: usize, which: Member) -> u64 {
        match which {
            Member::General => self.raygen.get(g).and_then(|k| k.as_ref()).map_or(0, |k| k.private_bytes as u64),
            _ => 0,
        }
    }

    /// The only ray-generation kernel, when the pipeline has exactly one.
    pub fn sole_raygen(&self) -> Option<&Kernel> {
        let mut it = self.raygen.iter().flatten();
        let k = it.next()?;
        it.next().is_none().then_some(k)
    }
}

/// `VkShaderGroupShaderKHR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Member {
    General,
    ClosestHit,
    AnyHit,
    Intersection,
}

impl Kernel {
    pub fn address(&self) -> u64 {
        self.kernel.address(0)
    }
}
