//! Ray-tracing pipelines: every shader of the pipeline compiled into the one kernel of a
//! ray generation shader (`docs/RTPIPELINE.md`, `lower/raytracing`).

use super::cfg::Cfg;
use super::error::{invalid, unsupported, Result};
use super::inline;
use super::lower::{self, raytracing};
use super::module::{InstExt, Module};
use super::{CompileOptions, CompiledKernel, DebugInfo, RayQueryLowering, Stage, Target};
use spirv::Op;
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
/// in it where traces and callable calls select them. `opts` gives the layout, the
/// ray-query lowering and the switches; its entry point, stage and specialization are each
/// shader's own.
pub fn compile_ray_tracing(
    shaders: &[RtShader],
    groups: &[RtGroup],
    raygen: usize,
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
    let slots = slots(&top, &parsed, &link_groups)?;
    let link = raytracing::Link { shaders: parsed, groups: link_groups, slots };
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
    Ok(raytracing::Shader { m, flat, cfg, stage: s.stage, opts })
}

/// A shader's own query slots, and its trace, callable and report sites.
struct Uses {
    queries: u32,
    traces: u32,
    calls: u32,
    reports: u32,
}

fn uses(s: &raytracing::Shader) -> Result<Uses> {
    let mut u = Uses { queries: 0, traces: 0, calls: 0, reports: 0 };
    for g in s.m.globals.values() {
        u.queries += s.m.types.queries(g.ty)?;
    }
    for inst in s.flat.blocks.iter().flat_map(|b| &b.insts) {
        match inst.class.opcode {
            Op::Variable => u.queries += s.m.types.queries(s.m.types.pointee(inst.rty()?)?.1)?,
            Op::TraceRayKHR => u.traces += 1,
            Op::ExecuteCallableKHR => u.calls += 1,
            Op::ReportIntersectionKHR => u.reports += 1,
            _ => {}
        }
    }
    Ok(u)
}

/// The query slots the kernel may use: the ray generation shader's, and at each of its
/// trace sites one for the trace plus every hit and miss shader's (all are lowered there),
/// at each callable site every callable shader's.
fn slots(top: &raytracing::Shader, shaders: &[raytracing::Shader], groups: &[raytracing::Group]) -> Result<u32> {
    let own = |s: Option<usize>| -> Result<Uses> {
        match s.and_then(|s| shaders.get(s)) {
            Some(s) => uses(s),
            None => Ok(Uses { queries: 0, traces: 0, calls: 0, reports: 0 }),
        }
    };
    let (mut per_trace, mut per_call) = (1u32, 0u32);
    for g in groups {
        let general = own(g.general)?;
        match g.general.and_then(|s| shaders.get(s)).map(|s| s.stage) {
            Some(Stage::Callable) => per_call += general.queries,
            _ => per_trace += general.queries,
        }
        let isect = own(g.intersection)?;
        per_trace += own(g.closest_hit)?.queries + isect.queries + own(g.any_hit)?.queries * (1 + isect.reports);
    }
    let u = uses(top)?;
    Ok(u.queries + u.traces * per_trace + u.calls * per_call)
}
