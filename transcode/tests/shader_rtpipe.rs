//! Ray-tracing pipelines compiled into one kernel (`docs/RTPIPELINE.md`): recursion is
//! expanded to the pipeline's depth and no further, and a pipeline whose expansion does not
//! fit the budget is refused with a device-limit error that says how large it is.

mod shader_util;
use shader_util::*;
use vortex_model::abi::isa::Op;
use vortex_model::abi::kernel::desc;
use vortex_transcode::shader::{
    compile_ray_tracing, descriptor_type as dt, BindingLayout, CompileError, CompileOptions, CompiledKernel,
    RayQueryLowering, ResourceLayout, RtGroup, RtShader, Stage, Target,
};

const RGEN: &str = r#"#version 460
#extension GL_EXT_ray_tracing : require
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) buffer Out { uint v[]; };
layout(location = 0) rayPayloadEXT uint p;
void main() {
    p = 0u;
    traceRayEXT(tlas, 0u, 0xFF, 0, 0, 0, vec3(0.0), 0.0, vec3(0.0, 0.0, 1.0), 100.0, 0);
    v[gl_LaunchIDEXT.x] = p;
}"#;

/// A closest-hit shader that traces again (a reflection); `k` tells copies apart.
fn rchit(k: u32) -> String {
    format!(
        r#"#version 460
#extension GL_EXT_ray_tracing : require
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(location = 0) rayPayloadInEXT uint p;
layout(location = 1) rayPayloadEXT uint next;
void main() {{
    next = p + {k}u;
    traceRayEXT(tlas, 0u, 0xFF, 0, 0, 0, gl_WorldRayOriginEXT, 0.001, -gl_WorldRayDirectionEXT, 100.0, 1);
    p = next * 3u;
}}"#
    )
}

const RMISS: &str = r#"#version 460
#extension GL_EXT_ray_tracing : require
layout(location = 0) rayPayloadInEXT uint p;
void main() { p = p + 1000u; }"#;

fn shader(src: &str, stage: Stage, ext: &str) -> Option<RtShader> {
    let words = glsl_stage(src, ext, "vulkan1.2")?;
    Some(RtShader { words, entry: "main".into(), stage, specialization: Default::default() })
}

fn options() -> CompileOptions {
    let binding = |binding: u32, descriptor_type: u32| BindingLayout {
        set: 0,
        binding,
        descriptor_type,
        count: 1,
        offset: binding * desc::BYTES as u32,
        dynamic_index: None,
    };
    let bindings = vec![binding(0, dt::ACCELERATION_STRUCTURE), binding(1, dt::STORAGE_BUFFER)];
    CompileOptions {
        target: Target { stage: Stage::RayGeneration, ray_query: RayQueryLowering::Rtu, raylog: false },
        layout: ResourceLayout { bindings, push_constant_bytes: 0 },
        ..CompileOptions::entry("main")
    }
}

/// Ray generation, miss, and `hits` closest-hit groups each tracing again, at `depth`.
fn reflections(hits: u32, depth: u32) -> Option<Result<CompiledKernel, CompileError>> {
    let mut shaders = vec![shader(RGEN, Stage::RayGeneration, "rgen")?, shader(RMISS, Stage::Miss, "rmiss")?];
    let mut groups =
        vec![RtGroup { general: Some(0), ..Default::default() }, RtGroup { general: Some(1), ..Default::default() }];
    for k in 0..hits {
        shaders.push(shader(&rchit(k), Stage::ClosestHit, "rchit")?);
        groups.push(RtGroup { closest_hit: Some(shaders.len() - 1), ..Default::default() });
    }
    Some(compile_ray_tracing(&shaders, &groups, 0, depth, &options()))
}

fn traces(k: &CompiledKernel) -> usize {
    k.code.iter().filter(|i| i.op == Op::Trace).count()
}

#[test]
fn recursion_is_expanded_to_the_pipeline_depth_and_no_further() {
    let Some(one) = reflections(1, 1) else { return };
    let one = one.expect("depth 1");
    let counts: Vec<usize> =
        (1..=4).map(|d| traces(&reflections(1, d).unwrap().unwrap_or_else(|e| panic!("depth {d}: {e}")))).collect();
    // One closest-hit shader that traces: one more trace (its copy one level deeper) per
    // level; at depth 1 its own trace is a no-op and emits nothing.
    assert!(counts[0] >= 1, "{counts:?}");
    for w in counts.windows(2) {
        assert_eq!(w[1] - w[0], counts[1] - counts[0], "linear growth: {counts:?}");
    }
    assert!(counts[1] > counts[0], "{counts:?}");
    assert_eq!(traces(&one), counts[0]);
    // maxPipelineRayRecursionDepth 0 is taken as 1: the ray generation shader still traces.
    assert_eq!(traces(&reflections(1, 0).unwrap().unwrap()), counts[0]);
    // 31 levels of one tracing closest-hit shader fit.
    assert!(reflections(1, 31).unwrap().is_ok());
}

#[test]
fn an_expansion_past_the_budget_is_a_limit_error_naming_its_size() {
    // Three tracing closest-hit shaders: 3^31 copies.
    let Some(r) = reflections(3, 31) else { return };
    let e = match r {
        Ok(_) => panic!("3^31 copies compiled"),
        Err(e) => e,
    };
    assert!(matches!(e, CompileError::Limit(_)), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("recursion depth 31") && text.contains("shader copies"), "{text}");
    // The same pipeline at depth 2 fits.
    assert!(reflections(3, 2).unwrap().is_ok());
}
