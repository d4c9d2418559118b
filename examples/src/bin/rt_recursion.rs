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
//! - Callables and shader records: two ray generation groups read their record (scalar
//!   layout), the miss and closest-hit shaders theirs (std430), and a chain of callables
//!   (callable calling callable, three deep, and a callable from the closest-hit shader)
//!   whose records say what to compute and which callable comes next. The expected values
//!   come from the host and the hits of a ray-query pass.
//! - The same pipeline with its shader binding table rewritten after the trace is recorded
//!   and before it is submitted: another ray generation group, other record data, another
//!   callable chain. The trace must run what the table holds when it executes.
//!
//! Results must be identical: on one device both paths walk the same structure with the
//! same rays.
//!
//! Vortex offers the extension on the RT-unit architecture (docs/RTPIPELINE.md).

use ash::vk;
use vortex_examples::checks;
use vortex_examples::rtpipe::{Group, Record, Records, RtPipeline};
use vortex_examples::scene::{GpuScene, Scene};
use vortex_examples::{AccelerationStructure, Buffer, ComputePipeline, Context, Instance};

const RGEN: &[u8] = include_bytes!("../../shaders/rt_recursion.rgen.spv");
const RCHIT: &[u8] = include_bytes!("../../shaders/rt_recursion.rchit.spv");
const RMISS: &[u8] = include_bytes!("../../shaders/rt_recursion.rmiss.spv");
const RMISS_SHADOW: &[u8] = include_bytes!("../../shaders/rt_recursion_shadow.rmiss.spv");
const REFERENCE: &[u8] = include_bytes!("../../shaders/rt_recursion_reference.spv");
const REC_RGEN: &[u8] = include_bytes!("../../shaders/rt_records.rgen.spv");
const REC_RGEN_ALT: &[u8] = include_bytes!("../../shaders/rt_records_alt.rgen.spv");
const REC_RMISS: &[u8] = include_bytes!("../../shaders/rt_records.rmiss.spv");
const REC_RCHIT: &[u8] = include_bytes!("../../shaders/rt_records.rchit.spv");
const REC_RCALL_A: &[u8] = include_bytes!("../../shaders/rt_records_a.rcall.spv");
const REC_RCALL_B: &[u8] = include_bytes!("../../shaders/rt_records_b.rcall.spv");
/// The hits of plain rays (rt_pipeline's reference: t, primitive, custom index, kind).
const HITS_REFERENCE: &[u8] = include_bytes!("../../shaders/rt_pipeline_reference.spv");

const WIDTH: u32 = 96;
const HEIGHT: u32 = 64;
/// Traces nested in the reflection check (the ray generation shader's is level 1).
const REFLECT_DEPTH: u32 = 4;

/// Both checks' set: the scene's structure at binding 0, two storage buffers after it.
const SCENE_TYPES: [vk::DescriptorType; 3] = [
    vk::DescriptorType::ACCELERATION_STRUCTURE_KHR,
    vk::DescriptorType::STORAGE_BUFFER,
    vk::DescriptorType::STORAGE_BUFFER,
];

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
    let ctx = vortex_examples::rtpipe::context_or_exit("rt_recursion", &icd);
    let list: &[checks::Check<String>] = &[
        ("shadow rays traced from the closest-hit shader (depth 2) against ray queries", &|c| trails(c, 0, 2)),
        ("reflections traced from the closest-hit shader, depth 4, against ray queries", &|c| {
            trails(c, 1, REFLECT_DEPTH)
        }),
        ("callables calling callables; shader records in raygen, miss, hit and callable", &|c| records(c, false)),
        ("shader binding table rewritten between recording and submit", &|c| records(c, true)),
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
    let types = SCENE_TYPES;
    let bindings = vortex_examples::pipeline::set0(&types);

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

/// `Out` of rt_records_common.glsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct Out {
    raygen: u32,
    raygen_v: f32,
    hit: u32,
    call: u32,
}

/// `Hit` of rt_pipeline_common.glsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct Hit {
    t: f32,
    primitive: i32,
    custom_index: i32,
    kind: u32,
}

const NO_CALL: u32 = u32::MAX;

/// What one version of the shader binding table holds, and what it makes of launch index
/// `i` (the callable chain) and of a hit (the hit records' values, then callable 2).
#[derive(Clone, Copy)]
struct Content {
    /// Ray generation group (0: TAG 1, 1: TAG 2), its record's tag and v.y.
    raygen: (u32, u32, f32),
    miss_value: u32,
    hit_values: [u32; 2],
    /// Callable records: shader (0: a, 1: b), mul, add, next.
    calls: [(u32, u32, u32, u32); 3],
}

impl Content {
    fn records(&self) -> Records {
        let words = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|v| v.to_le_bytes()).collect() };
        let (group, tag, v) = self.raygen;
        // Scalar layout: tag at 0, v at 4 (x), 8 (y), 12 (z).
        let raygen = words(&[tag, 0.25f32.to_bits(), v.to_bits(), 0.75f32.to_bits()]);
        Records {
            raygen: Record::new(group, &raygen),
            miss: vec![Record::new(2, &words(&[self.miss_value]))],
            hit: self.hit_values.iter().map(|&h| Record::new(3, &words(&[0xDEAD, 0xBEEF, h]))).collect(),
            callable: self.calls.iter().map(|&(s, m, a, n)| Record::new(4 + s, &words(&[m, a, n]))).collect(),
        }
    }

    /// Callable `k` and the chain its records make, applied to `x`.
    fn call(&self, k: u32, x: u32) -> u32 {
        let (shader, mul, add, next) = self.calls[k as usize];
        let x = match shader {
            0 => x.wrapping_mul(mul).wrapping_add(add),
            _ => (x ^ add).wrapping_add(mul),
        };
        if next == NO_CALL {
            x
        } else {
            self.call(next, x)
        }
    }

    fn expect(&self, i: u32, hit: &Hit) -> Out {
        let (group, tag, v) = self.raygen;
        let hit = match hit.kind {
            0 => self.miss_value,
            _ => self.call(2, self.hit_values[hit.custom_index as usize].wrapping_add(hit.primitive as u32)),
        };
        Out { raygen: tag * 16 + group + 1, raygen_v: v, hit, call: self.call(0, i) }
    }
}

const FIRST: Content = Content {
    raygen: (0, 5, 1.5),
    miss_value: 77_777,
    hit_values: [1000, 2000],
    calls: [(0, 3, 11, 1), (1, 5, 0x5A5A, 2), (0, 7, 13, NO_CALL)],
};

const REWRITTEN: Content = Content {
    raygen: (1, 6, 2.5),
    miss_value: 88_888,
    hit_values: [3000, 4000],
    calls: [(1, 9, 0x0F0F, 2), (0, 2, 1, NO_CALL), (0, 5, 3, 1)],
};

/// The bunny scene with instance `k`'s SBT record offset and custom index `k % 2`, its
/// camera rays through the records pipeline (`rewrite`: recorded with [`FIRST`], submitted
/// with [`REWRITTEN`]), against the host's expectations from the hits of a ray-query pass.
fn records(ctx: &Context, rewrite: bool) -> Result<String, String> {
    let e = err;
    let scene = Scene::builtin("bunny").map_err(e)?;
    let gpu = GpuScene::build(ctx, &scene).map_err(e)?;
    let instances: Vec<Instance> = scene
        .placements
        .iter()
        .enumerate()
        .map(|(k, p)| Instance {
            blas: p.mesh,
            transform: p.transform,
            custom_index: k as u32 % 2,
            mask: 0xFF,
            flags: vk::GeometryInstanceFlagsKHR::empty(),
            sbt_offset: k as u32 % 2,
        })
        .collect();
    let tlas = AccelerationStructure::build_top(ctx, &gpu.blases, &instances).map_err(e)?;
    let rays = camera_rays(&scene);
    let count = rays.len() as u32;
    let ray_buf = Buffer::with_data(ctx, &rays, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let got = Buffer::new(ctx, 16 * count as u64, usage).map_err(e)?;
    let hits = Buffer::new(ctx, 16 * count as u64, usage).map_err(e)?;
    let types = SCENE_TYPES;
    let bindings = vortex_examples::pipeline::set0(&types);
    let stages = [
        (vk::ShaderStageFlags::RAYGEN_KHR, REC_RGEN),
        (vk::ShaderStageFlags::RAYGEN_KHR, REC_RGEN_ALT),
        (vk::ShaderStageFlags::MISS_KHR, REC_RMISS),
        (vk::ShaderStageFlags::CLOSEST_HIT_KHR, REC_RCHIT),
        (vk::ShaderStageFlags::CALLABLE_KHR, REC_RCALL_A),
        (vk::ShaderStageFlags::CALLABLE_KHR, REC_RCALL_B),
    ];
    let groups = [
        Group::general(0),
        Group::general(1),
        Group::general(2),
        Group::triangles(Some(3), None),
        Group::general(4),
        Group::general(5),
    ];
    let rt = RtPipeline::with_records(ctx, &stages, &groups, &FIRST.records(), &bindings, 4, 1).map_err(e)?;
    rt.base.bind_acceleration_structure(0, &tlas);
    rt.base.bind_storage_buffer(1, &ray_buf);
    rt.base.bind_storage_buffer(2, &got);
    let push = count.to_le_bytes();
    let cmd = ctx.begin_commands().map_err(e)?;
    rt.record_trace(ctx, cmd, &push, [WIDTH, HEIGHT, 1]);
    let content = if rewrite { REWRITTEN } else { FIRST };
    if rewrite {
        rt.rewrite(&content.records()).map_err(e)?;
    }
    ctx.submit_and_wait(cmd).map_err(e)?;

    let reference = ComputePipeline::new(ctx, HITS_REFERENCE, &types, 16).map_err(e)?;
    reference.bind_acceleration_structure(0, &tlas);
    reference.bind_storage_buffer(1, &ray_buf);
    reference.bind_storage_buffer(2, &hits);
    let params: Vec<u8> = [count, 1, 0, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
    ctx.submit_once(|cmd| reference.record_dispatch(cmd, &params, [count.div_ceil(32), 1, 1])).map_err(e)?;

    let (got, hits): (Vec<Out>, Vec<Hit>) = (got.read(), hits.read());
    let bad: Vec<String> = (0..count)
        .map(|i| (i, got[i as usize], content.expect(i, &hits[i as usize])))
        .filter(|(_, g, w)| g != w)
        .map(|(i, g, w)| format!("ray {i}: got {g:?}, expected {w:?}"))
        .collect();
    if !bad.is_empty() {
        return Err(format!("{} of {count} rays differ; first: {}", bad.len(), bad[..bad.len().min(3)].join("; ")));
    }
    let n_hits = hits.iter().filter(|h| h.kind != 0).count();
    let odd = hits.iter().filter(|h| h.kind != 0 && h.custom_index == 1).count();
    if n_hits == 0 || n_hits == hits.len() || odd == 0 || odd == n_hits {
        return Err(format!("{n_hits} hits ({odd} on odd instances): the check needs misses and both hit records"));
    }
    Ok(format!("{count} rays, {n_hits} hits ({odd} through hit record 1), every value as expected"))
}
