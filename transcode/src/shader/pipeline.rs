//! Ray-tracing pipelines: every shader of the pipeline compiled into the one kernel of a
//! ray generation shader (`docs/RTPIPELINE.md`, `lower/raytracing`).

use super::cfg::Cfg;
use super::error::{invalid, limit, unsupported, Result};
use super::inline;
use super::lower::{self, raytracing};
use super::module::Module;
use super::{CompileOptions, CompiledKernel, DebugInfo, RayQueryLowering, Stage, Target};
use std::collections::BTreeMap;

/// One shader stage of a ray-tracing pipeline.
#[derive(Clone, Debug)]
pub struct RtShader {
    pub words: Vec<u32>,
    pub entry: String,
    pub stage: Stage,
    pub specialization: BTreeMap<u32, Vec<u8>>,
}

/// A shader group: indices into the pipeline's shaders (its handle names group index + 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RtGroup {
    pub general: Option<usize>,
    pub closest_hit: Option<usize>,
    pub any_hit: Option<usize>,
    pub intersection: Option<usize>,
}

/// Compiles the kernel of ray generation shader `raygen`: the other shaders of `groups` run
/// in it where traces and callable calls select them, traces nested up to `max_recursion`
/// deep (`maxPipelineRayRecursionDepth`; 0 is taken as 1). `opts` gives the layout, the
/// ray-query lowering and the switches; its entry point, stage and specialization are each
/// shader's own.
pub fn compile_ray_tracing(
    shaders: &[RtShader],
    groups: &[RtGroup],
    raygen: usize,
    max_recursion: u32,
    opts: &CompileOptions,
) -> Result<CompiledKernel> {
    if opts.target.ray_query != RayQueryLowering::Rtu {
        return Err(unsupported!("ray-tracing pipelines on the {} architecture", opts.target.ray_query.name()));
    }
    let rg = shaders.get(raygen).filter(|s| s.stage == Stage::RayGeneration);
    let rg = rg.ok_or_else(|| invalid!("shader {raygen} is not a ray generation shader"))?;
    let mut index = BTreeMap::new();
    let mut parsed = Vec::new();
    let mut link_groups = Vec::with_capacity(groups.len());
    for g in groups {
        let mut member = |s: Option<usize>| -> Result<Option<usize>> {
            let Some(s) = s else { return Ok(None) };
            let sh = shaders.get(s).ok_or_else(|| invalid!("group member {s} is not a shader of the pipeline"))?;
            if sh.stage == Stage::RayGeneration {
                return Ok(None);
            }
            if let Some(&k) = index.get(&s) {
                return Ok(Some(k));
            }
            parsed.push(parse(sh, opts)?);
            index.insert(s, parsed.len() - 1);
            Ok(Some(parsed.len() - 1))
        };
        link_groups.push(raytracing::Group {
            general: member(g.general)?,
            closest_hit: member(g.closest_hit)?,
            any_hit: member(g.any_hit)?,
            intersection: member(g.intersection)?,
        });
    }
    let top = parse(rg, opts)?;
    let max = raytracing::Depth { traces: max_recursion.max(1), calls: raytracing::MAX_CALLABLE_DEPTH };
    let mut link = raytracing::Link { shaders: parsed, groups: link_groups, slots: 0, max };
    link.slots = expansion(&top, &mut link)?;
    let lowering = lower::Lowering::select(&top.opts.target)?;
    let local_size = lowering.stage.execution_modes(&top.m)?;
    let out = lower::lower_linked(&top.m, &top.flat, &top.cfg, &top.opts, lowering, local_size, Some(&link))?;
    Ok(CompiledKernel {
        code: out.asm.code,
        num_regs: out.num_regs,
        num_queries: out.num_queries,
        private_bytes: out.private_bytes,
        lmem_bytes: out.lmem_bytes,
        local_size,
        entry_name: top.m.entry.name.clone(),
        graphics: out.graphics,
        regions: out.asm.regions,
        debug: DebugInfo { blocks: out.asm.blocks, regs: out.reg_names, virt_dst: out.asm.virt_dst },
    })
}

fn parse(s: &RtShader, opts: &CompileOptions) -> Result<raytracing::Shader> {
    let opts = CompileOptions {
        entry_point: s.entry.clone(),
        target: Target { stage: s.stage, ..opts.target },
        specialization: s.specialization.clone(),
        ..opts.clone()
    };
    if s.stage != Stage::RayGeneration {
        lower::stage_of_callee(s.stage)?;
    }
    let m = Module::parse(&s.words, &opts)?;
    let flat = inline::flatten(&m)?;
    let cfg = Cfg::build(&flat)?;
    raytracing::Shader::new(m, flat, cfg, s.stage, opts)
}

/// Sizes the expansion of the pipeline's calls (`raytracing::expand`): callables as deep as
/// the budget allows (down to two levels), traces to the pipeline's depth; returns the
/// query slots it needs, or why it does not fit.
fn expansion(top: &raytracing::Shader, link: &mut raytracing::Link) -> Result<u32> {
    loop {
        let x = raytracing::expand(top, link)?;
        if x.fits() {
            return Ok(x.slots as u32);
        }
        if link.max.calls <= raytracing::MIN_CALLABLE_DEPTH {
            return Err(limit!(
                "expanding the pipeline's calls to recursion depth {} (callables {} deep) takes {} shader copies, \
                 {} SPIR-V instructions and {} ray query slots (at most {} and {})",
                link.max.traces,
                link.max.calls,
                x.copies,
                x.instructions,
                x.slots,
                raytracing::MAX_EXPANDED_INSTRUCTIONS,
                vortex_model::abi::rtu::MAX_QUERIES
            ));
        }
        link.max.calls -= 1;
    }
}
