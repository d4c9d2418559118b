//! `misc.*` (C1): arrays of ray queries indexed at run time, in-place updates of empty
//! structures over garbage memory, one ray per invocation at many workgroup sizes, and the
//! TRIANGLE_FLIP_FACING instance flag under back-face culling.

use super::common::{compute_dispatch, Keep};
use super::traversal::Random;
use crate::case::{Case, TestResult, VkCheck, ROOT};
use crate::fw::{Binding, BlasBuilder, Buffer, ComputePipeline, Env, Geometry, Instance, TlasBuilder};
use ash::vk;

pub fn register(cases: &mut Vec<Case>) {
    cases.push(Case::new(format!("{ROOT}.misc.dynamic_indexing"), |env| dynamic_indexing(env, Indexing::Plain)));
    cases.push(Case::new(format!("{ROOT}.misc.dynamic_indexing_use_first"), |env| {
        dynamic_indexing(env, Indexing::UseFirst)
    }));
    cases.push(Case::new(format!("{ROOT}.misc.dynamic_indexing_inbounds"), |env| {
        dynamic_indexing(env, Indexing::InBounds)
    }));
    // reuse_scratch_buffer is a fragment-shader case (excluded from C1).
    cases.push(Case::new(format!("{ROOT}.misc.update_empty_bottom"), |env| update_empty(env, false)));
    cases.push(Case::new(format!("{ROOT}.misc.update_empty_top"), |env| update_empty(env, true)));
    for n in [61u32, 64, 127, 128, 251, 256, 509, 512, 1021, 1024, 0] {
        for (mode, name) in [
            (Single::All, "all"),
            (Single::First, "single_first"),
            (Single::Last, "single_last"),
            (Single::Middle, "single_middle"),
        ] {
            cases.push(Case::new(format!("{ROOT}.misc.ray_per_inv_{n}_{name}"), move |env| {
                ray_per_invocation(env, n, mode)
            }));
        }
    }
    cases.push(Case::new(format!("{ROOT}.misc.preserve_flip_facing"), preserve_flip_facing));
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Indexing {
    Plain,
    /// The use of the query array comes first in the source (inside a two-pass loop).
    UseFirst,
    /// Every access chain into the query array is an OpInBoundsAccessChain.
    InBounds,
}

/// A triangle pair over [-1, 1]^2 at z = 1, hit from the origin along +z.
fn unit_quad(env: &Env, cmd: vk::CommandBuffer) -> TestResult<(vk::AccelerationStructureKHR, Keep)> {
    let v = vec![
        [-1.0, -1.0, 1.0],
        [-1.0, 1.0, 1.0],
        [1.0, -1.0, 1.0],
        [-1.0, 1.0, 1.0],
        [1.0, 1.0, 1.0],
        [1.0, -1.0, 1.0],
    ];
    let g = Geometry::triangles(v).flags(vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION);
    let blas = BlasBuilder { geometries: vec![g], ..Default::default() }.record(env, cmd)?;
    let tlas = TlasBuilder { instances: vec![Instance::new(&blas)], ..Default::default() }.record(env, cmd)?;
    Ok((tlas.handle, vec![blas, tlas]))
}

fn dynamic_indexing(env: &Env, how: Indexing) -> TestResult {
    env.require_ray_query()?;
    let n: u32 = if how == Indexing::UseFirst { 2 } else { 48 };
    let body = if how == Indexing::UseFirst {
        "  for (int pass = 0; pass < 2; pass++) {
    if (pass > 0) {
      while (rayQueryProceedEXT(queries[sel.proceed]))
        outputs.hit[gl_LocalInvocationID.x] = 1u;
    } else {
      for (int i = 0; i < N; i++)
        rayQueryInitializeEXT(queries[i], scene, 0u, 0xFFu, (i == int(sel.good)) ? vec3(0.0) : vec3(5.0, 5.0, 0.0), 0.1, vec3(0.0, 0.0, 1.0), 10.0);
    }
  }"
    } else {
        "  for (int i = 0; i < N; i++)
    rayQueryInitializeEXT(queries[i], scene, 0u, 0xFFu, (i == int(sel.good)) ? vec3(0.0) : vec3(5.0, 5.0, 0.0), 0.1, vec3(0.0, 0.0, 1.0), 10.0);
  while (rayQueryProceedEXT(queries[sel.proceed]))
    outputs.hit[gl_LocalInvocationID.x] = 1u;"
    };
    let src = format!(
        "#version 460
#extension GL_EXT_ray_query : require
layout(local_size_x = {n}, local_size_y = 1, local_size_z = 1) in;
struct Selection {{ uint good; uint proceed; }};
layout(set = 0, binding = 0) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 1, std430) buffer Inputs {{ Selection sel[]; }} inputs;
layout(set = 0, binding = 2, std430) buffer Outputs {{ uint hit[]; }} outputs;
const int N = {n};
rayQueryEXT queries[N];

void main()
{{
  Selection sel = inputs.sel[gl_LocalInvocationID.x];
{body}
}}
"
    );
    let mut code = env.glsl(&src)?;
    if how == Indexing::InBounds {
        // OpAccessChain (65) -> OpInBoundsAccessChain (66): same operands; every index in
        // this module is in bounds.
        let mut i = 5;
        while i < code.len() {
            let (len, op) = ((code[i] >> 16) as usize, code[i] & 0xFFFF);
            if op == 65 {
                code[i] = (code[i] & 0xFFFF_0000) | 66;
            }
            i += len.max(1);
        }
    }
    let mut rng = Random::new(1_604_936_737);
    let sel: Vec<u32> = (0..n)
        .flat_map(|_| {
            let k = rng.int(0, n - 1);
            [k, k]
        })
        .collect();
    let input = Buffer::with_data(env, &sel, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let output = Buffer::new(env, 4 * u64::from(n), vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let bindings = [Binding::AS, Binding::SSBO, Binding::SSBO];
    compute_dispatch(env, &code, &bindings, &[], (1, 1, 1), &[], |env, cmd, pipe| {
        let (tlas, keep) = unit_quad(env, cmd)?;
        pipe.write_as(0, &[tlas]);
        pipe.write_buffer(1, vk::DescriptorType::STORAGE_BUFFER, &input);
        pipe.write_buffer(2, vk::DescriptorType::STORAGE_BUFFER, &output);
        Ok(keep)
    })?;
    let got = output.read::<u32>();
    if let Some(i) = got.iter().position(|&v| v != 1) {
        crate::fail!("output {i} is {} (expected 1: the selected query must hit)", got[i]);
    }
    Ok(())
}

/// Builds an empty structure into storage and scratch full of random bytes, updates it in
/// place (still empty), and checks that a ray through it misses.
fn update_empty(env: &Env, top: bool) -> TestResult {
    env.require_ray_query()?;
    let src = "#version 460
#extension GL_EXT_ray_query : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 1, std430) buffer Out { vec4 color; } result;
void main()
{
  rayQueryEXT q;
  rayQueryInitializeEXT(q, scene, 0u, 0xFFu, vec3(0.0, 0.0, 0.0), 0.0, vec3(0.0, 0.0, 1.0), 10.0);
  bool hit = false;
  while (rayQueryProceedEXT(q)) { hit = true; rayQueryConfirmIntersectionEXT(q); }
  result.color = hit ? vec4(1.0, 0.0, 0.0, 1.0) : vec4(0.0, 0.0, 1.0, 1.0);
}
";
    let code = env.glsl(src)?;
    let out = Buffer::new(env, 16, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let mut rng = Random::new(if top { 0x7070 } else { 0xB0B0 });
    let mut random_fill = |b: &Buffer| {
        let bytes: Vec<u8> = (0..b.size).map(|_| rng.next_u32() as u8).collect();
        b.write(0, &bytes);
    };
    // Storage kept alive until the end.
    let mut keep_buffers: Vec<Buffer> = Vec::new();
    let mut handles: Vec<vk::AccelerationStructureKHR> = Vec::new();
    let result = (|| -> TestResult {
        let input_usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
        let cmd = env.begin()?;
        // The structure that is updated: a BLAS of one (empty) triangle geometry, or a TLAS
        // of one inactive instance.
        let verts = Buffer::with_data(env, &[[0.0f32; 3]; 3], input_usage)?;
        let instances = Buffer::new(env, 64, input_usage)?;
        instances.write(0, &[0u8; 64]);
        let (ty, geometry) = if top {
            let data = vk::AccelerationStructureGeometryInstancesDataKHR::default()
                .data(vk::DeviceOrHostAddressConstKHR { device_address: 0 });
            (
                vk::AccelerationStructureTypeKHR::TOP_LEVEL,
                vk::AccelerationStructureGeometryKHR::default()
                    .geometry_type(vk::GeometryTypeKHR::INSTANCES)
                    .geometry(vk::AccelerationStructureGeometryDataKHR { instances: data }),
            )
        } else {
            let tri = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
                .vertex_format(vk::Format::R32G32B32_SFLOAT)
                .vertex_data(vk::DeviceOrHostAddressConstKHR { device_address: verts.address })
                .vertex_stride(12)
                .max_vertex(2)
                .index_type(vk::IndexType::NONE_KHR);
            (
                vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
                vk::AccelerationStructureGeometryKHR::default()
                    .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
                    .geometry(vk::AccelerationStructureGeometryDataKHR { triangles: tri }),
            )
        };
        let geoms = [geometry];
        let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(ty)
            .flags(vk::BuildAccelerationStructureFlagsKHR::ALLOW_UPDATE)
            .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
            .geometries(&geoms);
        let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
        let max = [if top { 1 } else { 0 }];
        // SAFETY (this closure): plain Vulkan calls; every buffer outlives the submission.
        unsafe {
            env.accel.get_acceleration_structure_build_sizes(
                vk::AccelerationStructureBuildTypeKHR::DEVICE,
                &info,
                &max,
                &mut sizes,
            )
        };
        let storage = Buffer::new(
            env,
            sizes.acceleration_structure_size.max(256),
            vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR,
        )?;
        random_fill(&storage);
        let align = env.min_scratch_alignment;
        let scratch = Buffer::new(
            env,
            sizes.build_scratch_size.max(sizes.update_scratch_size).max(1) + align,
            vk::BufferUsageFlags::STORAGE_BUFFER,
        )?;
        random_fill(&scratch);
        let create = vk::AccelerationStructureCreateInfoKHR::default()
            .buffer(storage.handle)
            .size(sizes.acceleration_structure_size)
            .ty(ty);
        let handle =
            unsafe { env.accel.create_acceleration_structure(&create, None) }.vk("vkCreateAccelerationStructureKHR")?;
        handles.push(handle);
        let scratch_addr = vk::DeviceOrHostAddressKHR { device_address: scratch.address.next_multiple_of(align) };
        let ranges = [vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(0)];
        let build = info.dst_acceleration_structure(handle).scratch_data(scratch_addr);
        let update = info
            .mode(vk::BuildAccelerationStructureModeKHR::UPDATE)
            .src_acceleration_structure(handle)
            .dst_acceleration_structure(handle)
            .scratch_data(scratch_addr);
        let as_rw =
            vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR | vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR;
        let as_stage = vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR;
        unsafe { env.accel.cmd_build_acceleration_structures(cmd, &[build], &[&ranges]) };
        env.barrier(cmd, as_stage, as_rw, as_stage, as_rw);
        unsafe { env.accel.cmd_build_acceleration_structures(cmd, &[update], &[&ranges]) };
        env.barrier(cmd, as_stage, as_rw, vk::PipelineStageFlags::ALL_COMMANDS, as_rw);
        let mut keep: Keep = Vec::new();
        let tlas = if top {
            handle
        } else {
            let addr = unsafe {
                env.accel.get_acceleration_structure_device_address(
                    &vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(handle),
                )
            };
            let mut inst = Instance::new_address(addr);
            inst.mask = 0xFF;
            let t = TlasBuilder { instances: vec![inst], ..Default::default() }.record(env, cmd)?;
            let h = t.handle;
            keep.push(t);
            h
        };
        env.submit_wait(cmd)?;
        keep_buffers.extend([verts, instances, storage, scratch]);
        let bindings = [Binding::AS, Binding::SSBO];
        compute_dispatch(env, &code, &bindings, &[], (1, 1, 1), &[], |_, _, pipe| {
            pipe.write_as(0, &[tlas]);
            pipe.write_buffer(1, vk::DescriptorType::STORAGE_BUFFER, &out);
            Ok(Vec::new())
        })?;
        drop(keep);
        Ok(())
    })();
    for h in handles {
        // SAFETY: every submission has finished (or failed) by now.
        unsafe { env.accel.destroy_acceleration_structure(h, None) };
    }
    drop(keep_buffers);
    result?;
    let got = out.read::<f32>();
    if got != [0.0, 0.0, 1.0, 1.0] {
        crate::fail!("result {got:?}, expected (0, 0, 1, 1): the updated empty structure must miss");
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Single {
    All,
    First,
    Last,
    Middle,
}

/// One ray per invocation of one workgroup of `n` (0: the device maximum) invocations,
/// the workgroup size given by specialization constants; quads at z = 1 in front of a
/// random subset. 2 = ran and hit, 1 = ran and missed, 0 = did not run.
fn ray_per_invocation(env: &Env, n: u32, mode: Single) -> TestResult {
    env.require_ray_query()?;
    let max = env.props.limits.max_compute_work_group_size[0].min(env.props.limits.max_compute_work_group_invocations);
    let n = if n == 0 { max } else { n };
    if n > max {
        crate::not_supported!(
            "workgroup size {n} exceeds maxComputeWorkGroupSize[0] / maxComputeWorkGroupInvocations ({max})"
        );
    }
    let chosen = match mode {
        Single::All => u32::MAX - 1,
        Single::First => 0,
        Single::Last => n - 1,
        Single::Middle => n / 2,
    };
    let cond = if mode == Single::All { "true".to_string() } else { format!("gl_LocalInvocationIndex == {chosen}u") };
    let src = format!(
        "#version 460
#extension GL_EXT_ray_query : require
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 1, std430) buffer Out {{ uint v[]; }} result;
void main()
{{
  uint i = gl_LocalInvocationIndex;
  if ({cond}) {{
    rayQueryEXT q;
    rayQueryInitializeEXT(q, scene, gl_RayFlagsOpaqueEXT, 0xFFu, vec3(float(i) + 0.5, 0.0, 0.0), 0.0, vec3(0.0, 0.0, 1.0), 10.0);
    bool hit = false;
    while (rayQueryProceedEXT(q)) {{}}
    hit = rayQueryGetIntersectionTypeEXT(q, true) != gl_RayQueryCommittedIntersectionNoneEXT;
    result.v[i] = hit ? 2u : 1u;
  }}
}}
"
    );
    let code = env.glsl(&src)?;
    let mut rng = Random::new(0xC0FFEE ^ n);
    let covered: Vec<bool> = (0..n).map(|_| rng.next_u32() & 1 == 1).collect();
    let out = Buffer::new(env, 4 * u64::from(n), vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let bindings = [Binding::AS, Binding::SSBO];
    compute_dispatch(env, &code, &bindings, &[], (1, 1, 1), &[(0, n), (1, 1), (2, 1)], |env, cmd, pipe| {
        let mut v = Vec::new();
        for (i, _) in covered.iter().enumerate().filter(|(_, c)| **c) {
            let (x0, x1) = (i as f32, i as f32 + 1.0);
            v.extend([
                [x0, -0.5, 1.0],
                [x0, 0.5, 1.0],
                [x1, -0.5, 1.0],
                [x0, 0.5, 1.0],
                [x1, 0.5, 1.0],
                [x1, -0.5, 1.0],
            ]);
        }
        if v.is_empty() {
            // Keep the geometry valid: one quad far away.
            v.extend([[-9.0, -9.0, 1.0], [-9.0, -8.0, 1.0], [-8.0, -9.0, 1.0]]);
        }
        let blas = BlasBuilder { geometries: vec![Geometry::triangles(v)], ..Default::default() }.record(env, cmd)?;
        let tlas = TlasBuilder { instances: vec![Instance::new(&blas)], ..Default::default() }.record(env, cmd)?;
        pipe.write_as(0, &[tlas.handle]);
        pipe.write_buffer(1, vk::DescriptorType::STORAGE_BUFFER, &out);
        Ok(vec![blas, tlas])
    })?;
    let got = out.read::<u32>();
    for i in 0..n as usize {
        let runs = mode == Single::All || i as u32 == chosen;
        let want = if !runs {
            0
        } else if covered[i] {
            2
        } else {
            1
        };
        if got[i] != want {
            crate::fail!("invocation {i}: got {}, expected {want}", got[i]);
        }
    }
    Ok(())
}

const FLIP_FACING_SHADER: &str = "#version 460 core
#extension GL_EXT_ray_query : require
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 1, std430) buffer Counter { uint hits; } counter;

void main()
{
  // one ray per instance, 2 apart along x, culling back faces
  for (int i = 0; i < 4; i++) {
    rayQueryEXT rq;
    rayQueryInitializeEXT(rq, scene, gl_RayFlagsCullBackFacingTrianglesEXT, 0xFFu, vec3(2.0 * float(i) + 0.25, 0.25, 1.0), 0.0, vec3(0.0, 0.0, -1.0), 2.0);
    while (rayQueryProceedEXT(rq))
      rayQueryConfirmIntersectionEXT(rq);
    if (rayQueryGetIntersectionTypeEXT(rq, true) == gl_RayQueryCommittedIntersectionTriangleEXT)
      atomicAdd(counter.hits, 1u);
  }
}
";

/// Four instances of two one-triangle BLASes, 2 apart along x, under rays along -z that
/// cull back faces: a front-facing triangle without flags (hit), a back-facing one without
/// flags (culled), the back-facing one with TRIANGLE_FLIP_FACING (now front-facing: hit)
/// and the front-facing one with TRIANGLE_FLIP_FACING (now back-facing: culled). Each hit
/// adds 1 to a counter: 2. (Written from the research notes' description of dEQP's case;
/// its source was not available: see the README.)
fn preserve_flip_facing(env: &Env) -> TestResult {
    env.require_ray_query()?;
    let code = env.glsl(FLIP_FACING_SHADER)?;
    let counter = Buffer::new(env, 4, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let pipeline = ComputePipeline::new(env, &code, &[Binding::AS, Binding::SSBO], 0, &[])?;
    let cmd = env.begin()?;
    // Counterclockwise as seen from +z: front-facing for rays along -z.
    let front = Geometry::triangles(vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
    let back = Geometry::triangles(vec![[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]);
    let front = BlasBuilder { geometries: vec![front], ..Default::default() }.record(env, cmd)?;
    let back = BlasBuilder { geometries: vec![back], ..Default::default() }.record(env, cmd)?;
    let flip = vk::GeometryInstanceFlagsKHR::TRIANGLE_FLIP_FACING;
    let none = vk::GeometryInstanceFlagsKHR::empty();
    let mut tlas = TlasBuilder::default();
    for (i, (blas, flags)) in [(&front, none), (&back, none), (&back, flip), (&front, flip)].into_iter().enumerate() {
        let mut t = crate::fw::IDENTITY;
        t[0][3] = 2.0 * i as f32;
        tlas.add(Instance::new(blas).transform(t).flags(flags));
    }
    let tlas = tlas.record(env, cmd)?;
    pipeline.write_as(0, &[tlas.handle]);
    pipeline.write_buffer(1, vk::DescriptorType::STORAGE_BUFFER, &counter);
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
    drop((tlas, front, back));
    let hits = counter.read::<u32>()[0];
    if hits != 2 {
        crate::fail!("{hits} rays hit, expected 2 (front unflipped and back flipped; the other two culled)");
    }
    Ok(())
}
