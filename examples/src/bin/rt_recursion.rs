//! rt_recursion: ray-tracing pipelines whose shaders trace and call (`traceRayEXT` from
//! closest-hit shaders, callables calling callables), shader record data, and a shader
//! binding table rewritten after the trace is recorded, through the loader, on any ICD that
//! offers VK_KHR_ray_tracing_pipeline.
//!
//! - Shadow rays: camera rays over the bunny scene; the closest-hit shader traces a shadow
//!   ray towards the light (recursion depth 2, its own miss shader and payload). The
//!   reference is a compute shader tracing the same two rays with ray queries.
//! - Reflections: the closest-hit shader traces the bounced ray (the direction mirrored in
//!   an axis plane, exact in floats) one level deeper, up to depth 4; every hit is hashed
//!   into the payload level by level. The reference loops over the bounces with ray
//!   queries.
//!
//! Results must be identical: on one device both paths walk the same structure with the
//! same rays.
//!
//! On Vortex the extension is offered with `VORTEX_RT_PIPELINE=1` (docs/RTPIPELINE.md).

use ash::vk;
use vortex_examples::checks;
use vortex_examples::pipeline::Binding;
use vortex_examples::rtpipe::{Group, Record, Records, RtPipeline};
use vortex_examples::scene::{GpuScene, Scene};
use vortex_examples::{Buffer, ComputePipeline, Context};

const RGEN: &[u8] = include_bytes!("../../shaders/rt_recursion.rgen.spv");
const RCHIT: &[u8] = include_bytes!("../../shaders/rt_recursion.rchit.spv");
const RMISS: &[u8] = include_bytes!("../../shaders/rt_recursion.rmiss.spv");
const RMISS_SHADOW: &[u8] = include_bytes!("../../shaders/rt_recursion_shadow.rmiss.spv");
const REFERENCE: &[u8] = include_bytes!("../../shaders/rt_recursion_reference.spv");

const WIDTH: u32 = 96;
const HEIGHT: u32 = 64;
/// Traces nested in the reflection check (the ray generation shader's is level 1).
const REFLECT_DEPTH: u32 = 4;

/// `Trail` of rt_recursion_common.glsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct Trail {
    hash: u32,
    bounces: u32,
    t: f32,
    shadowed: u32,
}

fn main() {
    let icd = checks::icd_from_args("rt_recursion");
    let ctx = Context::with_optional_features(&icd).unwrap_or_else(|err| {
        eprintln!("rt_recursion: {err}");
        std::process::exit(2);
    });
    println!("device: {}", ctx.info().name);
    if !ctx.info().enabled.contains(&"rayTracingPipeline") {
        eprintln!(
            "rt_recursion: the device does not offer VK_KHR_ray_tracing_pipeline (on Vortex: VORTEX_RT_PIPELINE=1)"
        );
        std::process::exit(2);
    }
    let list: &[checks::Check<String>] = &[
        ("shadow rays traced from the closest-hit shader (depth 2) against ray queries", &|c| trails(c, 0, 2)),
        ("reflections traced from the closest-hit shader, depth 4, against ray queries", &|c| {
            trails(c, 1, REFLECT_DEPTH)
        }),
    ];
    checks::run_checks_and_exit(&ctx, "rt-recursion", list, || 0);
}

fn err(e: vortex_examples::Error) -> String {
    e.to_string()
}

/// Camera rays of the scene, one per pixel: (origin, tmin) and (direction, tmax).
fn camera_rays(scene: &Scene) -> Vec<[f32; 8]> {
    let p = scene.camera.push_floats(WIDTH as f32 / HEIGHT as f32, scene.light, scene.ao_radius);
    let (eye, tan_half, aspect) = ([p[0], p[1], p[2]], p[3], p[7]);
    let (fwd, right, up) = ([p[4], p[5], p[6]], [p[8], p[9], p[10]], [p[12], p[13], p[14]]);
    let mut rays = Vec::new();
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            let u = ((x as f32 + 0.5) / WIDTH as f32 * 2.0 - 1.0) * tan_half * aspect;
            let v = (1.0 - (y as f32 + 0.5) / HEIGHT as f32 * 2.0) * tan_half;
            let d: Vec<f32> = (0..3).map(|k| fwd[k] + u * right[k] + v * up[k]).collect();
            rays.push([eye[0], eye[1], eye[2], 0.0, d[0], d[1], d[2], 1.0e4]);
        }
    }
    rays
}

/// The bunny scene's camera rays traced by the pipeline (`mode` 0: shadow rays, 1:
/// reflections up to `depth` traces deep) and by the ray-query reference.
fn trails(ctx: &Context, mode: u32, depth: u32) -> Result<String, String> {
    let e = err;
    let scene = Scene::builtin("bunny").map_err(e)?;
    let gpu = GpuScene::build(ctx, &scene).map_err(e)?;
    let rays = camera_rays(&scene);
    let count = rays.len() as u32;
    let ray_buf = Buffer::with_data(ctx, &rays, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let bytes = (std::mem::size_of::<Trail>() as u32 * count) as u64;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let (got, want) = (Buffer::new(ctx, bytes, usage).map_err(e)?, Buffer::new(ctx, bytes, usage).map_err(e)?);
    let mut push: Vec<u8> = [count, mode, depth, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
    push.extend([scene.light[0], scene.light[1], scene.light[2], 0.0].iter().flat_map(|v| v.to_le_bytes()));
    let types = [
        vk::DescriptorType::ACCELERATION_STRUCTURE_KHR,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let bindings: Vec<Binding> =
        types.iter().enumerate().map(|(i, &ty)| Binding { set: 0, binding: i as u32, ty, count: 1 }).collect();

    let stages = [
        (vk::ShaderStageFlags::RAYGEN_KHR, RGEN),
        (vk::ShaderStageFlags::MISS_KHR, RMISS),
        (vk::ShaderStageFlags::MISS_KHR, RMISS_SHADOW),
        (vk::ShaderStageFlags::CLOSEST_HIT_KHR, RCHIT),
    ];
    let groups = [Group::general(0), Group::general(1), Group::general(2), Group::triangles(Some(3), None)];
    let records = Records {
        raygen: Record::new(0, &[]),
        miss: vec![Record::new(1, &[]), Record::new(2, &[])],
        hit: vec![Record::new(3, &[])],
        callable: Vec::new(),
    };
    let rt = RtPipeline::with_records(ctx, &stages, &groups, &records, &bindings, 32, depth).map_err(e)?;
    rt.base.bind_acceleration_structure(0, &gpu.tlas);
    rt.base.bind_storage_buffer(1, &ray_buf);
    rt.base.bind_storage_buffer(2, &got);
    ctx.submit_once(|cmd| rt.record_trace(ctx, cmd, &push, [WIDTH, HEIGHT, 1])).map_err(e)?;
    let stack = rt.stack_size(0, vk::ShaderGroupShaderKHR::GENERAL);

    let reference = ComputePipeline::new(ctx, REFERENCE, &types, 32).map_err(e)?;
    reference.bind_acceleration_structure(0, &gpu.tlas);
    reference.bind_storage_buffer(1, &ray_buf);
    reference.bind_storage_buffer(2, &want);
    ctx.submit_once(|cmd| reference.record_dispatch(cmd, &push, [count.div_ceil(32), 1, 1])).map_err(e)?;

    let (got, want): (Vec<Trail>, Vec<Trail>) = (got.read(), want.read());
    let bad: Vec<String> = got
        .iter()
        .zip(&want)
        .enumerate()
        .filter(|(_, (g, w))| g != w)
        .map(|(i, (g, w))| format!("ray {i}: pipeline {g:?}, ray queries {w:?}"))
        .collect();
    if !bad.is_empty() {
        return Err(format!("{} of {count} rays differ; first: {}", bad.len(), bad[..bad.len().min(3)].join("; ")));
    }
    let hits = want.iter().filter(|t| t.bounces > 0).count();
    let deepest = want.iter().map(|t| t.bounces).max().unwrap_or(0);
    let shadowed = want.iter().filter(|t| t.shadowed != 0).count();
    // The checks must exercise what they claim: hits and misses, shadowed and lit hits, or
    // bounces to the deepest level.
    if hits == 0 || hits == want.len() {
        return Err(format!("{hits} of {} rays hit: the check needs both hits and misses", want.len()));
    }
    if mode == 0 && (shadowed == 0 || shadowed == hits) {
        return Err(format!("{shadowed} of {hits} hits in shadow: the check needs both"));
    }
    if mode == 1 && deepest != depth {
        return Err(format!("the deepest ray bounced {deepest} times, not {depth}"));
    }
    Ok(format!(
        "{count} rays, {hits} hits, {shadowed} in shadow, up to {deepest} hits deep, identical (ray generation stack {stack} bytes)"
    ))
}
