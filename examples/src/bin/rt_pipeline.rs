//! rt_pipeline: the ray-tracing pipeline (`VK_KHR_ray_tracing_pipeline`) against ray
//! queries, through the loader, on any ICD that offers both.
//!
//! The checks are the seed's RTU scenarios (`rt_smoke_*`) as a pipeline runs them. Camera
//! rays over the bunny scene are traced twice: by a ray generation shader whose
//! closest-hit and miss shaders write the payload (hit t, primitive, instance custom index,
//! hit or not), and by a compute shader with a ray query that commits the same hits. Pass 1
//! is opaque; pass 2 forces every triangle non-opaque and picks the hit group whose any-hit
//! shader ignores odd primitives (SBT record offset 1), the reference confirming only even
//! ones. Pass 3 traces a grid of parallel rays at procedural spheres in the boxes of an
//! AABB geometry: the hit group's intersection shader reports them (kind and an attribute
//! the closest-hit shader passes on), the reference generates the same intersections.
//! Pass 4 gives the bunny scene's instances alternating SBT record offsets (0, 1), so
//! the lanes of a warp dispatch to different hit groups (the seed's reformation by SBT
//! index), the any-hit group's instances with holes.
//! Hits must agree exactly (hit or miss, primitive, instance, kind) and in t to 1e-5
//! relative: on one device both paths walk the same structure.
//!
//! Vortex offers the extension on the RT-unit architecture (docs/RTPIPELINE.md).

use ash::vk;
use vortex_examples::checks;
use vortex_examples::rtpipe::{Group, RtPipeline, Table};
use vortex_examples::scene::{GpuScene, Scene};
use vortex_examples::{AabbGeometry, AccelerationStructure, Buffer, ComputePipeline, Context, Instance, Mat3x4};

const RGEN: &[u8] = include_bytes!("../../shaders/rt_pipeline.rgen.spv");
const RMISS: &[u8] = include_bytes!("../../shaders/rt_pipeline.rmiss.spv");
const RCHIT: &[u8] = include_bytes!("../../shaders/rt_pipeline.rchit.spv");
const RAHIT: &[u8] = include_bytes!("../../shaders/rt_pipeline.rahit.spv");
const RINT: &[u8] = include_bytes!("../../shaders/rt_pipeline.rint.spv");
const RCHIT_SPHERE: &[u8] = include_bytes!("../../shaders/rt_pipeline_sphere.rchit.spv");
const REFERENCE: &[u8] = include_bytes!("../../shaders/rt_pipeline_reference.spv");

const WIDTH: u32 = 96;
const HEIGHT: u32 = 64;
/// `gl_RayFlagsNoOpaqueEXT`.
const NO_OPAQUE: u32 = 2;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct Hit {
    t: f32,
    primitive: i32,
    custom_index: i32,
    kind: u32,
}

fn main() {
    let icd = checks::icd_from_args("rt_pipeline");
    let ctx = vortex_examples::rtpipe::context_or_exit("rt_pipeline", &icd);
    let list: &[checks::Check<String>] = &[
        ("rt_smoke_chs/miss: closest-hit and miss against ray queries", &|c| bunny(c, 0, 0, 0, false)),
        ("rt_smoke_sbt: any-hit alpha test in SBT record 1 (no-opaque rays)", &|c| bunny(c, NO_OPAQUE, 1, 1, false)),
        ("rt_smoke_is/proc: intersection shader (procedural spheres)", &spheres),
        ("rt_smoke_reform_sbt: instances alternate hit groups within warps", &|c| bunny(c, NO_OPAQUE, 0, 3, true)),
    ];
    checks::run_checks_and_exit(&ctx, "rt-pipeline", list, || 0);
}

fn err(e: vortex_examples::Error) -> String {
    e.to_string()
}

/// The bunny scene; with `alternate`, instance `i` has SBT record offset `i % 2`, so rays
/// of one warp that hit different instances run different hit groups.
fn bunny(ctx: &Context, flags: u32, sbt_offset: u32, mode: u32, alternate: bool) -> Result<String, String> {
    let scene = Scene::builtin("bunny").map_err(err)?;
    let gpu = GpuScene::build(ctx, &scene).map_err(err)?;
    let rays = camera_rays(&scene);
    if !alternate {
        return compare(ctx, &gpu.tlas, &rays, [flags, sbt_offset, mode]);
    }
    let instances: Vec<Instance> = scene
        .placements
        .iter()
        .enumerate()
        .map(|(i, p)| Instance {
            blas: p.mesh,
            transform: p.transform,
            custom_index: p.mesh as u32,
            mask: 0xFF,
            flags: vk::GeometryInstanceFlagsKHR::empty(),
            sbt_offset: i as u32 % 2,
        })
        .collect();
    let tlas = AccelerationStructure::build_top(ctx, &gpu.blases, &instances).map_err(err)?;
    compare(ctx, &tlas, &rays, [flags, sbt_offset, mode])
}

/// 16 spheres in a 4x4 grid (rt_pipeline_common.glsl), each in its box, one instance;
/// parallel rays down the z axis over them.
fn spheres(ctx: &Context) -> Result<String, String> {
    let boxes = (0..16)
        .map(|p| {
            let (x, y) = ((p % 4) as f32 * 2.0 - 3.0, (p / 4) as f32 * 2.0 - 3.0);
            [x - 0.8, y - 0.8, -0.8, x + 0.8, y + 0.8, 0.8]
        })
        .collect();
    let geometry = AabbGeometry { boxes, flags: vk::GeometryFlagsKHR::OPAQUE };
    let blas = AccelerationStructure::build_bottom_aabbs(ctx, &[geometry]).map_err(err)?;
    let instance = Instance {
        blas: 0,
        transform: Mat3x4::IDENTITY,
        custom_index: 7,
        mask: 0xFF,
        flags: vk::GeometryInstanceFlagsKHR::empty(),
        sbt_offset: 2,
    };
    let blases = [blas];
    let tlas = AccelerationStructure::build_top(ctx, &blases, &[instance]).map_err(err)?;
    let mut rays = Vec::new();
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            let (u, v) = ((x as f32 + 0.5) / WIDTH as f32 * 9.0 - 4.5, (y as f32 + 0.5) / HEIGHT as f32 * 9.0 - 4.5);
            rays.push([u, v, 10.0, 0.0, 0.0, 0.0, -1.0, 1.0e4]);
        }
    }
    compare(ctx, &tlas, &rays, [0, 0, 2])
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

/// Traces `rays` ((origin, tmin), (direction, tmax)) with the pipeline and with the
/// reference; `params` are the ray flags, the SBT record offset and the reference's mode.
fn compare(ctx: &Context, tlas: &AccelerationStructure, rays: &[[f32; 8]], params: [u32; 3]) -> Result<String, String> {
    let e = err;
    let count = rays.len() as u32;
    let ray_buf = Buffer::with_data(ctx, rays, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let bytes = 16 * count as u64;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let (got, want) = (Buffer::new(ctx, bytes, usage).map_err(e)?, Buffer::new(ctx, bytes, usage).map_err(e)?);
    let push: Vec<u8> = [count, params[0], params[1], params[2]].iter().flat_map(|v| v.to_le_bytes()).collect();
    let types = [
        vk::DescriptorType::ACCELERATION_STRUCTURE_KHR,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let bindings = vortex_examples::pipeline::set0(&types);

    let stages = [
        (vk::ShaderStageFlags::RAYGEN_KHR, RGEN),
        (vk::ShaderStageFlags::MISS_KHR, RMISS),
        (vk::ShaderStageFlags::CLOSEST_HIT_KHR, RCHIT),
        (vk::ShaderStageFlags::ANY_HIT_KHR, RAHIT),
        (vk::ShaderStageFlags::INTERSECTION_KHR, RINT),
        (vk::ShaderStageFlags::CLOSEST_HIT_KHR, RCHIT_SPHERE),
    ];
    let sphere_group = Group { closest_hit: Some(5), intersection: Some(4), ..Default::default() };
    let groups = [
        Group::general(0),
        Group::general(1),
        Group::triangles(Some(2), None),
        Group::triangles(Some(2), Some(3)),
        sphere_group,
    ];
    let table = Table { raygen: 0, miss: vec![1], hit: vec![2, 3, 4] };
    let rt = RtPipeline::new(ctx, &stages, &groups, &table, &bindings, 16).map_err(e)?;
    rt.base.bind_acceleration_structure(0, tlas);
    rt.base.bind_storage_buffer(1, &ray_buf);
    rt.base.bind_storage_buffer(2, &got);
    ctx.submit_once(|cmd| rt.record_trace(ctx, cmd, &push, [WIDTH, HEIGHT, 1])).map_err(e)?;

    let reference = ComputePipeline::new(ctx, REFERENCE, &types, 16).map_err(e)?;
    reference.bind_acceleration_structure(0, tlas);
    reference.bind_storage_buffer(1, &ray_buf);
    reference.bind_storage_buffer(2, &want);
    ctx.submit_once(|cmd| reference.record_dispatch(cmd, &push, [count.div_ceil(32), 1, 1])).map_err(e)?;

    let (got, want): (Vec<Hit>, Vec<Hit>) = (got.read(), want.read());
    let mut bad = Vec::new();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let ids = (g.kind, g.primitive, g.custom_index) == (w.kind, w.primitive, w.custom_index);
        let t_ok = (g.t - w.t).abs() <= 1e-5 * w.t.abs().max(1.0);
        if !ids || !t_ok {
            bad.push(format!("ray {i}: pipeline {g:?}, ray query {w:?}"));
        }
    }
    let hits = want.iter().filter(|h| h.kind != 0).count();
    if hits == 0 || hits == want.len() {
        return Err(format!("{hits} of {} rays hit: the test needs both hits and misses", want.len()));
    }
    if !bad.is_empty() {
        return Err(format!("{} of {count} rays differ; first: {}", bad.len(), bad[..bad.len().min(3)].join("; ")));
    }
    Ok(format!("{count} rays, {hits} hits, identical"))
}
