//! The buffer-output C1 groups: `non_uniform_args.*` (every ray-query argument read from a
//! storage buffer, each miss cause in turn), `barycentric_coordinates.compute` (20 rays at
//! known barycentrics of one triangle), `procedural_geometry.*` (AABBs whose shader-made
//! ellipsoid lies behind or beyond the boxes: the picture must equal the one of a single
//! box around it), `multiple_ray_queries.compute_shader` (three queries stepped in
//! lock-step in one invocation) and `stress.compute_shader.*` (one BLAS of 60,000
//! primitives stacked along z, 65,536 rays).

use super::common::{compute_dispatch, Keep};
use super::traversal::Random;
use crate::case::{Case, TestResult, ROOT};
use crate::fw::{Binding, BlasBuilder, Buffer, ComputePipeline, Env, Geometry, Instance, TlasBuilder};
use ash::vk;

pub fn register_procedural(cases: &mut Vec<Case>) {
    for (behind, t) in [(true, "object_behind_bounding_boxes"), (false, "triangle_in_between")] {
        cases.push(Case::new(format!("{ROOT}.procedural_geometry.{t}"), move |env| procedural(env, behind)));
    }
}

pub fn register_barycentric(cases: &mut Vec<Case>) {
    cases.push(Case::new(format!("{ROOT}.barycentric_coordinates.compute"), barycentric));
}

pub fn register_non_uniform_args(cases: &mut Vec<Case>) {
    cases.push(Case::new(format!("{ROOT}.non_uniform_args.no_miss"), |env| non_uniform_args(env, None)));
    for (i, cause) in [
        MissCause::Flags,
        MissCause::CullMask,
        MissCause::Origin,
        MissCause::Tmin,
        MissCause::Direction,
        MissCause::Tmax,
    ]
    .into_iter()
    .enumerate()
    {
        cases.push(Case::new(format!("{ROOT}.non_uniform_args.miss_cause_{}", i + 1), move |env| {
            non_uniform_args(env, Some(cause))
        }));
    }
}

pub fn register_multiple_and_stress(cases: &mut Vec<Case>) {
    for stage in super::LONG_STAGES.iter().filter(|s| **s == "compute_shader") {
        cases.push(Case::new(format!("{ROOT}.multiple_ray_queries.{stage}"), multiple_ray_queries));
    }
    for stage in super::LONG_STAGES.iter().filter(|s| **s == "compute_shader") {
        for (triangles, g) in [(true, "triangles"), (false, "aabbs")] {
            cases.push(Case::new(format!("{ROOT}.stress.{stage}.{g}"), move |env| stress(env, triangles)));
        }
    }
}

/// dEQP checks only the extension names for these groups.
fn require_extensions(env: &Env) -> TestResult {
    if !env.has_extension(ash::khr::acceleration_structure::NAME) || !env.has_extension(ash::khr::ray_query::NAME) {
        crate::not_supported!("VK_KHR_acceleration_structure and VK_KHR_ray_query are required");
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MissCause {
    Flags,
    CullMask,
    Origin,
    Tmin,
    Direction,
    Tmax,
}

const NON_UNIFORM_SHADER: &str = "#version 460 core
#extension GL_EXT_ray_query : require
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 1, std430) buffer Args {
  vec4 origin;
  vec4 direction;
  float tmin;
  float tmax;
  uint flags;
  uint cullMask;
} args;
layout(set = 0, binding = 2, std430) buffer Result { uint found; } result;

void main()
{
  uint found = 0u;
  rayQueryEXT rq;
  rayQueryInitializeEXT(rq, scene, args.flags, args.cullMask, args.origin.xyz, args.tmin, args.direction.xyz, args.tmax);
  while (rayQueryProceedEXT(rq)) {
    uint kind = rayQueryGetIntersectionTypeEXT(rq, false);
    if (kind == gl_RayQueryCandidateIntersectionTriangleEXT) {
      found = 1u;
    } else {
      found = (kind == gl_RayQueryCandidateIntersectionAABBEXT) ? 2u : 3u;
      break;
    }
  }
  result.found = found;
}
";

/// Two triangle geometries (one behind the origin, then one at z = 5 around (0, 2)) in one
/// BLAS, one instance with mask 0x0F and culling disabled. The good arguments hit the second
/// triangle: origin (0, 2, 0), direction +z, t in [4, 6], flags 0, cull mask 0x0F; each
/// miss cause replaces one of them (SkipTriangles, mask 0xF0, origin (0, 8, 0), tmin 5.5,
/// direction +x, tmax 4.5). The result starts as 0x2A2A2A2A.
fn non_uniform_args(env: &Env, cause: Option<MissCause>) -> TestResult {
    require_extensions(env)?;
    let code = env.glsl(NON_UNIFORM_SHADER)?;
    let is = |c: MissCause| cause == Some(c);
    let origin = if is(MissCause::Origin) { [0.0f32, 8.0, 0.0, 0.0] } else { [0.0, 2.0, 0.0, 0.0] };
    let direction = if is(MissCause::Direction) { [1.0f32, 0.0, 0.0, 0.0] } else { [0.0, 0.0, 1.0, 0.0] };
    let tmin = if is(MissCause::Tmin) { 5.5f32 } else { 4.0 };
    let tmax = if is(MissCause::Tmax) { 4.5f32 } else { 6.0 };
    let flags: u32 = if is(MissCause::Flags) { 256 } else { 0 };
    let mask: u32 = if is(MissCause::CullMask) { 0xF0 } else { 0x0F };
    let mut args: Vec<u8> = Vec::new();
    for f in origin.iter().chain(&direction).chain([&tmin, &tmax]) {
        args.extend(f.to_le_bytes());
    }
    args.extend(flags.to_le_bytes());
    args.extend(mask.to_le_bytes());
    let args = Buffer::with_data(env, &args, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let out = Buffer::new(env, 4, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    out.fill(42);
    let bindings = [Binding::AS, Binding::SSBO, Binding::SSBO];
    let pipeline = ComputePipeline::new(env, &code, &bindings, 0, &[])?;
    let cmd = env.begin()?;
    let offscreen = Geometry::triangles(vec![[0.0, 2.5, -5.0], [-0.5, 1.5, -5.0], [0.5, 1.5, -5.0]]);
    let onscreen = Geometry::triangles(vec![[0.0, 2.5, 5.0], [-0.5, 1.5, 5.0], [0.5, 1.5, 5.0]]);
    let blas = BlasBuilder { geometries: vec![offscreen, onscreen], ..Default::default() }.record(env, cmd)?;
    let instance = Instance::new(&blas).mask(0x0F).flags(vk::GeometryInstanceFlagsKHR::TRIANGLE_FACING_CULL_DISABLE);
    let tlas = TlasBuilder { instances: vec![instance], ..Default::default() }.record(env, cmd)?;
    pipeline.write_as(0, &[tlas.handle]);
    pipeline.write_buffer(1, vk::DescriptorType::STORAGE_BUFFER, &args);
    pipeline.write_buffer(2, vk::DescriptorType::STORAGE_BUFFER, &out);
    pipeline.record_dispatch(cmd, 1, 1, 1);
    // As dEQP records it: the ray-tracing shader stage as the source of a compute write.
    env.barrier(
        cmd,
        vk::PipelineStageFlags::RAY_TRACING_SHADER_KHR,
        vk::AccessFlags::SHADER_WRITE,
        vk::PipelineStageFlags::HOST,
        vk::AccessFlags::HOST_READ,
    );
    env.submit_wait(cmd)?;
    drop((tlas, blas));
    let got = out.read::<u32>()[0];
    let want = u32::from(cause.is_none());
    if got != want {
        crate::fail!("result {got} (expected {want}: {})", if want == 1 { "a triangle hit" } else { "a miss" });
    }
    Ok(())
}

const BARYCENTRIC_SHADER: &str = "#version 460 core
#extension GL_EXT_ray_query : require
layout(local_size_x = 20, local_size_y = 1, local_size_z = 1) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 1) uniform Directions { vec4 d[20]; } directions;
layout(set = 0, binding = 2, std430) buffer Barycentrics { vec4 b[20]; } barycentrics;

void main()
{
  uint i = gl_LocalInvocationID.x;
  vec4 value = vec4(-1.0);
  rayQueryEXT rq;
  // T is 1 at the triangle (the direction points at the hit point): require it to 1e-3
  rayQueryInitializeEXT(rq, scene, gl_RayFlagsNoneEXT, 0xFFu, vec3(0.0), 0.999, directions.d[i].xyz, 1.001);
  while (rayQueryProceedEXT(rq)) {
    if (rayQueryGetIntersectionTypeEXT(rq, false) == gl_RayQueryCandidateIntersectionTriangleEXT)
      value = vec4(rayQueryGetIntersectionBarycentricsEXT(rq, false), 0.0, 0.0);
  }
  barycentrics.b[i] = value;
}
";

/// 20 rays from the origin to points of the triangle (0,-1,5), (-1,1,5), (1,1,5) with known
/// barycentrics (b, c): three near the corners and 17 random; the reported barycentrics
/// must be (b, c, 0, 0) within 1e-3.
fn barycentric(env: &Env) -> TestResult {
    require_extensions(env)?;
    let code = env.glsl(BARYCENTRIC_SHADER)?;
    let tri = [[0.0f32, -1.0, 5.0], [-1.0, 1.0, 5.0], [1.0, 1.0, 5.0]];
    let point = |b: f32, c: f32| {
        let a = 1.0 - b - c;
        [0, 1, 2].map(|k| tri[0][k] * a + tri[1][k] * b + tri[2][k] * c)
    };
    let (near, far) = (0.999f32, 0.0005f32);
    let mut expected = vec![(near, far), (far, near), (far, far)];
    let mut rng = Random::new(1_634_231_311);
    while expected.len() < 20 {
        let b = loop {
            let b = rng.unit();
            if b != 0.0 {
                break b;
            }
        };
        let c = loop {
            let c = rng.float(0.0, 1.0 - b);
            if c != 0.0 {
                break c;
            }
        };
        expected.push((b, c));
    }
    let dirs: Vec<f32> = expected
        .iter()
        .flat_map(|&(b, c)| {
            let p = point(b, c);
            [p[0], p[1], p[2], 0.0]
        })
        .collect();
    let directions = Buffer::with_data(env, &dirs, vk::BufferUsageFlags::UNIFORM_BUFFER)?;
    let out = Buffer::new(env, 16 * 20, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let bindings = [Binding::AS, Binding::UBO, Binding::SSBO];
    compute_dispatch(env, &code, &bindings, &[], (1, 1, 1), &[], |env, cmd, pipe| -> TestResult<Keep> {
        let g = Geometry::triangles(tri.to_vec()).flags(vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION);
        let blas = BlasBuilder { geometries: vec![g], ..Default::default() }.record(env, cmd)?;
        let inst = Instance::new(&blas).flags(vk::GeometryInstanceFlagsKHR::TRIANGLE_FACING_CULL_DISABLE);
        let tlas = TlasBuilder { instances: vec![inst], ..Default::default() }.record(env, cmd)?;
        pipe.write_as(0, &[tlas.handle]);
        pipe.write_buffer(1, vk::DescriptorType::UNIFORM_BUFFER, &directions);
        pipe.write_buffer(2, vk::DescriptorType::STORAGE_BUFFER, &out);
        Ok(vec![blas, tlas])
    })?;
    let got = out.read::<[f32; 4]>();
    for (i, (&(b, c), g)) in expected.iter().zip(&got).enumerate() {
        if g[2] != 0.0 || g[3] != 0.0 || (g[0] - b).abs() > 1e-3 || (g[1] - c).abs() > 1e-3 {
            crate::fail!("ray {i}: barycentrics {g:?}, expected ({b}, {c}, 0, 0) within 0.001");
        }
    }
    Ok(())
}

const PROCEDURAL_SHADER: &str = "#version 460 core
#extension GL_EXT_ray_query : require
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 1, std430) writeonly buffer Result { int value[]; } result;

void main()
{
  vec3 org = vec3(float(gl_GlobalInvocationID.x) + 0.5, float(gl_GlobalInvocationID.y) + 0.5, 2.0);
  vec3 dir = vec3(0.0, 0.0, -1.0);
  uint index = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x;
  int shade = 30;
  // the procedural object: an ellipsoid around (32, 32, -30) with radii (30, 15, 5)
  vec3 centre = vec3(32.0, 32.0, -30.0);
  vec3 radii = vec3(30.0, 15.0, 5.0);
  rayQueryEXT rq;
  rayQueryInitializeEXT(rq, scene, gl_RayFlagsCullBackFacingTrianglesEXT, 0xFFu, org, 0.0, dir, 50.0);
  while (rayQueryProceedEXT(rq)) {
    uint kind = rayQueryGetIntersectionTypeEXT(rq, false);
    if (kind == gl_RayQueryCandidateIntersectionAABBEXT) {
      // ray against the unit sphere in the ellipsoid's scaled space
      vec3 o = (org - centre) / radii;
      vec3 d = dir / radii;
      float a = dot(d, d);
      float b = dot(o, d);
      float c = dot(o, o);
      float disc = b * b - a * (c - 1.0);
      if (disc >= 0.0)
        rayQueryGenerateIntersectionEXT(rq, (-b - sqrt(disc)) / a);
    } else if (kind == gl_RayQueryCandidateIntersectionTriangleEXT) {
      shade = 250;
      rayQueryConfirmIntersectionEXT(rq);
    }
  }
  if (rayQueryGetIntersectionTypeEXT(rq, true) != gl_RayQueryCommittedIntersectionNoneEXT &&
      rayQueryGetIntersectionInstanceIdEXT(rq, true) > -1) {
    float t = rayQueryGetIntersectionTEXT(rq, true);
    vec3 normal = normalize((org + t * dir - centre) / radii);
    shade = 50 + int(200.0 * clamp(dot(normal, vec3(0.0, 0.0, 1.0)), 0.0, 1.0));
  }
  result.value[index] = shade + int(0xFF000000u);
}
";

/// Renders 64x64 rays twice in one command buffer: once against a reference TLAS (one box
/// around the whole ellipsoid, plus the opaque triangle for triangle_in_between) and once
/// against the result TLAS (a wall of boxes in front of the ellipsoid: four quarters at
/// z = 0..1, or three strips with the triangle between them and the ellipsoid). The two
/// pictures must be identical.
fn procedural(env: &Env, behind: bool) -> TestResult {
    env.require_ray_query()?;
    let code = env.glsl(PROCEDURAL_SHADER)?;
    let size = 64u32;
    let bytes = 4 * u64::from(size * size);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC;
    let reference = Buffer::new(env, bytes, usage)?;
    let result = Buffer::new(env, bytes, usage)?;
    reference.fill(1);
    result.fill(1);
    let bindings = [Binding::AS, Binding::SSBO];
    let ref_pipe = ComputePipeline::new(env, &code, &bindings, 0, &[])?;
    let res_pipe = ComputePipeline::new(env, &code, &bindings, 0, &[])?;
    let cmd = env.begin()?;
    let boxes = |b: &[([f32; 3], [f32; 3])]| Geometry::aabbs(b.iter().flat_map(|&(lo, hi)| [lo, hi]).collect());
    let whole = boxes(&[([0.0, 0.0, -64.0], [64.0, 64.0, -16.0])]);
    let record = |g: Geometry| BlasBuilder { geometries: vec![g], ..Default::default() }.record(env, cmd);
    let mut keep = Vec::new();
    let (ref_tlas, res_tlas) = if behind {
        let whole = record(whole)?;
        let wall = record(boxes(&[
            ([0.0, 0.0, 0.0], [32.0, 32.0, 1.0]),
            ([32.0, 0.0, 0.0], [64.0, 32.0, 1.0]),
            ([0.0, 32.0, 0.0], [32.0, 64.0, 1.0]),
            ([32.0, 32.0, 0.0], [64.0, 64.0, 1.0]),
        ]))?;
        let r = TlasBuilder { instances: vec![Instance::new(&whole)], ..Default::default() }.record(env, cmd)?;
        let w = TlasBuilder { instances: vec![Instance::new(&wall)], ..Default::default() }.record(env, cmd)?;
        keep.extend([whole, wall]);
        (r, w)
    } else {
        let triangle = record(
            Geometry::triangles(vec![[16.0, 16.0, -8.0], [56.0, 32.0, -8.0], [32.0, 48.0, -8.0]])
                .flags(vk::GeometryFlagsKHR::OPAQUE),
        )?;
        let whole = record(whole)?;
        let wall = record(boxes(&[
            ([0.0, 0.0, 0.0], [20.0, 64.0, 1.0]),
            ([20.0, 0.0, 0.0], [44.0, 64.0, 1.0]),
            ([44.0, 0.0, 0.0], [64.0, 64.0, 1.0]),
        ]))?;
        let r = TlasBuilder { instances: vec![Instance::new(&whole), Instance::new(&triangle)], ..Default::default() }
            .record(env, cmd)?;
        let w = TlasBuilder { instances: vec![Instance::new(&wall), Instance::new(&triangle)], ..Default::default() }
            .record(env, cmd)?;
        keep.extend([triangle, whole, wall]);
        (r, w)
    };
    ref_pipe.write_as(0, &[ref_tlas.handle]);
    ref_pipe.write_buffer(1, vk::DescriptorType::STORAGE_BUFFER, &reference);
    res_pipe.write_as(0, &[res_tlas.handle]);
    res_pipe.write_buffer(1, vk::DescriptorType::STORAGE_BUFFER, &result);
    env.barrier(
        cmd,
        vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
        vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR,
        vk::PipelineStageFlags::COMPUTE_SHADER,
        vk::AccessFlags::SHADER_READ,
    );
    ref_pipe.record_dispatch(cmd, size, size, 1);
    res_pipe.record_dispatch(cmd, size, size, 1);
    env.barrier(
        cmd,
        vk::PipelineStageFlags::COMPUTE_SHADER,
        vk::AccessFlags::SHADER_WRITE,
        vk::PipelineStageFlags::HOST,
        vk::AccessFlags::HOST_READ,
    );
    env.submit_wait(cmd)?;
    drop((ref_tlas, res_tlas, keep));
    let want = reference.read::<u32>();
    let got = result.read::<u32>();
    let miss = 30 + 0xFF00_0000u32;
    if want.iter().all(|&v| v == miss) {
        crate::fail!("the reference picture shows nothing: the ellipsoid was never generated");
    }
    if let Some(msg) = super::common::report_mismatches(&got, &want, size as usize) {
        crate::fail!("the picture through the box wall differs from the reference: {msg}");
    }
    Ok(())
}

/// dEQP's ray layout: origin, tmin, direction, tmax (32 bytes, std430).
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Ray {
    pos: [f32; 3],
    tmin: f32,
    dir: [f32; 3],
    tmax: f32,
}

const MAX_T: f32 = 10_000_000.0;

/// The shader shape of multiple_ray_queries and stress: `rays[index]` in, a vec4 of floats
/// per ray out, one invocation per workgroup.
fn ray_buffer_shader(body: &str) -> String {
    format!(
        "#version 460 core
#extension GL_EXT_ray_query : require
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
struct Ray {{ vec3 pos; float tmin; vec3 dir; float tmax; }};
layout(set = 0, binding = 0, std430) buffer Results {{ vec4 results[]; }};
layout(set = 0, binding = 1) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 2, std430) buffer Rays {{ Ray rays[]; }};

void main()
{{
  uint index = gl_NumWorkGroups.x * gl_GlobalInvocationID.y + gl_GlobalInvocationID.x;
  float x = 0.0;
  float y = 0.0;
  float z = 0.0;
  float w = 0.0;
{body}
  results[index] = vec4(x, y, z, w);
}}
"
    )
}

/// dEQP pads the rays to the next even power of two, at least 64, and dispatches one
/// workgroup per ray along x.
fn padded_count(rays: usize) -> usize {
    let mut power = (rays as f64).log2().ceil() as u32;
    if power % 2 == 1 {
        power += 1;
    }
    (1usize << power).max(64)
}

/// Builds one TLAS whose instance i holds `triangles[i]` (when non-empty) or else
/// `aabbs[i]`, dispatches one workgroup per (padded) ray and returns the vec4 results.
fn run_rays(
    env: &Env,
    code: &[u32],
    rays: &[Ray],
    triangles: &[Vec<[f32; 3]>],
    aabbs: &[Vec<[f32; 3]>],
) -> TestResult<Vec<[f32; 4]>> {
    let count = padded_count(rays.len());
    let limit = env.props.limits.max_compute_work_group_count[0];
    if count as u64 > u64::from(limit) {
        crate::not_supported!("{count} workgroups along x exceed maxComputeWorkGroupCount[0] ({limit})");
    }
    let mut all = rays.to_vec();
    all.resize(count, Ray::default());
    let ray_buffer = Buffer::with_data(env, &all, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let out = Buffer::new(env, 16 * count as u64, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let bindings = [Binding::SSBO, Binding::AS, Binding::SSBO];
    compute_dispatch(env, code, &bindings, &[], (count as u32, 1, 1), &[], |env, cmd, pipe| -> TestResult<Keep> {
        let mut keep = Vec::new();
        let mut tlas = TlasBuilder::default();
        for (tri, boxes) in triangles.iter().zip(aabbs) {
            let g = if tri.is_empty() { Geometry::aabbs(boxes.clone()) } else { Geometry::triangles(tri.clone()) };
            let blas = BlasBuilder { geometries: vec![g], ..Default::default() }.record(env, cmd)?;
            tlas.add(Instance::new(&blas));
            keep.push(blas);
        }
        let tlas = tlas.record(env, cmd)?;
        pipe.write_buffer(0, vk::DescriptorType::STORAGE_BUFFER, &out);
        pipe.write_as(1, &[tlas.handle]);
        pipe.write_buffer(2, vk::DescriptorType::STORAGE_BUFFER, &ray_buffer);
        keep.push(tlas);
        Ok(keep)
    })?;
    Ok(out.read::<[f32; 4]>())
}

const MULTIPLE_BODY: &str = "  Ray ray[3];
  ray[0] = rays[index];
  ray[1] = rays[index];
  ray[2] = rays[index];
  ray[1].pos.x += 3.0;
  ray[2].pos.x += 6.0;
  float found[3] = float[3](0.0, 0.0, 0.0);
  rayQueryEXT rqs[3];
  bool going[3] = bool[3](true, true, true);
  for (int i = 0; i < 3; i++)
    rayQueryInitializeEXT(rqs[i], scene, 0u, 0xFFu, ray[i].pos, ray[i].tmin, ray[i].dir, ray[i].tmax);
  // step the three queries in lock-step until all are done
  bool any = true;
  while (any) {
    any = false;
    for (int i = 0; i < 3; i++) {
      going[i] = going[i] && rayQueryProceedEXT(rqs[i]);
      if (going[i]) {
        uint kind = rayQueryGetIntersectionTypeEXT(rqs[i], false);
        if (kind == gl_RayQueryCandidateIntersectionTriangleEXT) {
          rayQueryConfirmIntersectionEXT(rqs[i]);
        } else if (kind == gl_RayQueryCandidateIntersectionAABBEXT) {
          uint prim = rayQueryGetIntersectionPrimitiveIndexEXT(rqs[i], false);
          rayQueryGenerateIntersectionEXT(rqs[i], 100.0 + float(prim) * 10.0 - float(index / 3u) * 95.0);
        }
      }
      any = any || going[i];
    }
  }
  for (int i = 0; i < 3; i++) {
    uint kind = rayQueryGetIntersectionTypeEXT(rqs[i], true);
    if (kind == gl_RayQueryCommittedIntersectionTriangleEXT || kind == gl_RayQueryCommittedIntersectionGeneratedEXT)
      found[i] = float(rayQueryGetIntersectionInstanceIdEXT(rqs[i], true)) * 10.0 + float(rayQueryGetIntersectionPrimitiveIndexEXT(rqs[i], true));
    rayQueryTerminateEXT(rqs[i]);
  }
  x = found[0];
  y = found[1];
  z = found[2];";

/// Instance 0: nine triangles in three groups (x in -3..-1, 0..2, 3..5) at z = 10..90;
/// instance 1: nine flat AABBs in a row (x in -3..6) at z = 100..180, hit by generating T =
/// their depth. Six rays, each cast three times 3 apart in x, stepped together; every
/// query reports instance * 10 + primitive.
fn multiple_ray_queries(env: &Env) -> TestResult {
    env.require_ray_query()?;
    let code = env.glsl(&ray_buffer_shader(MULTIPLE_BODY))?;
    let ray = |x: f32, y: f32, z: f32, tmin: f32| Ray { pos: [x, y, z], tmin, dir: [0.0, 0.0, 1.0], tmax: MAX_T };
    let rays = [
        ray(-2.5, 0.5, 0.0, 0.0),
        ray(-2.5, -0.5, 0.0, 1.0),
        ray(-1.5, 0.5, 0.0, 2.0),
        ray(-2.5, 0.0, 95.0, 3.0),
        ray(-1.5, 0.0, 95.0, 4.0),
        ray(-0.5, 0.0, 95.0, 5.0),
    ];
    // Triangle pairs of the three groups: A/B/C, D/E/F, G/H/I (z grows by 10 per triangle).
    let mut tris = Vec::new();
    for (group, x0) in [-3.0f32, 0.0, 3.0].into_iter().enumerate() {
        let z = |k: usize| 10.0 * (3 * group + k + 1) as f32;
        tris.extend([[x0, 1.0, z(0)], [x0 + 1.0, 1.0, z(0)], [x0, -1.0, z(0)]]);
        tris.extend([[x0, -1.0, z(1)], [x0 + 1.0, 1.0, z(1)], [x0 + 1.0, -1.0, z(1)]]);
        tris.extend([[x0 + 1.0, 1.0, z(2)], [x0 + 2.0, 1.0, z(2)], [x0 + 1.0, -1.0, z(2)]]);
    }
    let boxes: Vec<[f32; 3]> = (0..9)
        .flat_map(|k| {
            let (x, z) = (-3.0 + k as f32, 100.0 + 10.0 * k as f32);
            [[x, -1.0, z], [x + 1.0, 1.0, z]]
        })
        .collect();
    let got = run_rays(env, &code, &rays, &[tris, Vec::new()], &[Vec::new(), boxes])?;
    let want = [
        [0.0, 3.0, 6.0, 0.0],
        [1.0, 4.0, 7.0, 0.0],
        [2.0, 5.0, 8.0, 0.0],
        [10.0, 13.0, 16.0, 0.0],
        [11.0, 14.0, 17.0, 0.0],
        [12.0, 15.0, 18.0, 0.0],
    ];
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if g.iter().zip(w).any(|(a, b)| (a - b).abs() >= 1e-6) {
            crate::fail!("ray {i}: got {g:?}, expected {w:?}");
        }
    }
    Ok(())
}

const STRESS_BODY: &str = "  Ray ray = rays[index];
  x = 20000000.0;
  y = 20000000.0;
  z = float(index);
  w = ray.pos.z;
  rayQueryEXT rq;
  rayQueryInitializeEXT(rq, scene, 0u, 0xFFu, ray.pos, ray.tmin, ray.dir, ray.tmax);
  while (rayQueryProceedEXT(rq)) {
    uint kind = rayQueryGetIntersectionTypeEXT(rq, false);
    if (kind == gl_RayQueryCandidateIntersectionTriangleEXT) {
      rayQueryConfirmIntersectionEXT(rq);
    } else if (kind == gl_RayQueryCandidateIntersectionAABBEXT) {
      // a box answers at T = its index - the ray's index + 0.5
      float t = float(rayQueryGetIntersectionPrimitiveIndexEXT(rq, false)) - float(index) + 0.5;
      if (t > 0.0 && t < rayQueryGetIntersectionTEXT(rq, true))
        rayQueryGenerateIntersectionEXT(rq, t);
    }
  }
  uint kind = rayQueryGetIntersectionTypeEXT(rq, true);
  if (kind == gl_RayQueryCommittedIntersectionTriangleEXT || kind == gl_RayQueryCommittedIntersectionGeneratedEXT) {
    x = float(rayQueryGetIntersectionPrimitiveIndexEXT(rq, true));
    y = rayQueryGetIntersectionTEXT(rq, true);
  }
  rayQueryTerminateEXT(rq);";

/// 60,000 primitives, primitive i at z = i, rotating by 120 degrees from one to the next
/// (a triangle fanned from the z axis, or the box under it), so the ray shot along +z from
/// 0.1 below primitive i's centre crosses every third primitive above it too. The
/// committed primitive must be i, with T = 0.1 (triangles, to 1e-6 of the exact value for
/// the ray's float origin) or 0.5 (boxes, generated).
fn stress(env: &Env, triangles: bool) -> TestResult {
    env.require_ray_query()?;
    let code = env.glsl(&ray_buffer_shader(STRESS_BODY))?;
    let count = 60_000usize;
    let alpha = 2.0 * std::f32::consts::PI / 3.0;
    let (cos, sin) = (alpha.cos(), alpha.sin());
    let half = (alpha / 2.0).tan().abs();
    let (mut p1, mut p2) = ([half, 1.0f32], [-half, 1.0f32]);
    let rot = |p: [f32; 2]| [p[0] * cos - p[1] * sin, p[0] * sin + p[1] * cos];
    let epsilon = 0.1f32;
    let mut data = Vec::with_capacity(count * 3);
    let mut rays = Vec::with_capacity(count);
    let mut expected_t = Vec::with_capacity(count);
    for i in 0..count {
        let z = i as f32;
        p1 = rot(p1);
        p2 = rot(p2);
        let centre = if triangles {
            data.extend([[0.0, 0.0, z], [p1[0], p1[1], z], [p2[0], p2[1], z]]);
            [(p1[0] + p2[0]) / 3.0, (p1[1] + p2[1]) / 3.0]
        } else {
            let mut lo = [p1[0].min(p2[0]), p1[1].min(p2[1])];
            let mut hi = [p1[0].max(p2[0]), p1[1].max(p2[1])];
            if p1[1] > 0.0 && p2[1] > 0.0 {
                lo[1] = hi[1].min(0.0);
            } else {
                hi[1] = hi[1].min(0.0);
            }
            data.extend([[lo[0], lo[1], z], [hi[0], hi[1], z]]);
            [(lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0]
        };
        let origin_z = z - epsilon;
        rays.push(Ray { pos: [centre[0], centre[1], origin_z], tmin: 0.0, dir: [0.0, 0.0, 1.0], tmax: MAX_T });
        expected_t.push(if triangles { z - origin_z } else { 0.5 });
    }
    let (tris, boxes) = if triangles { (vec![data], vec![Vec::new()]) } else { (vec![Vec::new()], vec![data]) };
    let got = run_rays(env, &code, &rays, &tris, &boxes)?;
    let mut bad = Vec::new();
    for i in 0..count {
        let g = got[i];
        if g[0] != i as f32 || (g[1] - expected_t[i]).abs() > 1e-6 {
            bad.push(format!("ray {i}: primitive {} at T {}, expected {i} at {}", g[0], g[1], expected_t[i]));
        }
    }
    if !bad.is_empty() {
        crate::fail!(
            "{} of {count} rays wrong: {}",
            bad.len(),
            bad.iter().take(5).cloned().collect::<Vec<_>>().join("; ")
        );
    }
    Ok(())
}
