//! Stage C4: the `cpu_built` cases of `acceleration_structures` (traditional structures,
//! compute): everything built on the host (`accelerationStructureHostCommands`) at
//! recording time, instances naming their BLASes by handle value — the flags and format
//! matrices of C2 built this way, the copy / compaction / serialization operations done by
//! host commands, and `host_threading`, where copies and serializations are deferred
//! operations joined by 1, 2, 3, 4, 8 or "max" threads (run once without and once with
//! workers, as dEQP does). Drivers without host commands report every case NotSupported.

use super::accel::{
    base_scene, register_flags_matrix, register_format_matrix, require_host_commands, run_checkerboard, Cull, Empty,
    Scene, Shader,
};
use super::common::image_dispatch;
use crate::case::{Case, TestResult, ROOT};
use crate::fw::accel::{host_copy, host_deserialize, host_property, host_serialize, BuildOptions, HostOp};
use crate::fw::{BlasBuilder, Env, Geometry, Instance, TlasBuilder, IDENTITY};
use ash::vk;

const A: &str = "acceleration_structures";
const RES: &str = "traditional_structures";
const STAGE: &str = "compute_shader";
const BUILT: &str = "cpu_built";
const N: u32 = 8;
const INDEX_TYPES: [(vk::IndexType, &str); 3] = [
    (vk::IndexType::NONE_KHR, "index_none"),
    (vk::IndexType::UINT16, "index_uint16"),
    (vk::IndexType::UINT32, "index_uint32"),
];

/// Every C4 case, in dEQP's group order.
pub fn register(cases: &mut Vec<Case>) {
    register_flags(cases);
    register_format(cases);
    for (op, name) in [(Op::Copy, "copy"), (Op::Compact, "compaction"), (Op::Serialize, "serialization")] {
        for (target, t) in
            [(Target::Top, "top_acceleration_structure"), (Target::Bottom, "bottom_acceleration_structure")]
        {
            for (triangles, g) in [(true, "triangles"), (false, "aabbs")] {
                cases.push(Case::new(
                    format!("{ROOT}.{A}.operations.{RES}.{STAGE}.{name}.{BUILT}.{t}.{g}"),
                    move |env| operation(env, op, target, triangles, 0),
                ));
            }
        }
    }
    for (threads, tn) in [(1u32, "1"), (2, "2"), (3, "3"), (4, "4"), (8, "8"), (u32::MAX, "max")] {
        for (op, name) in [(Op::Copy, "copy"), (Op::Serialize, "serialization")] {
            for (target, t) in
                [(Target::Top, "top_acceleration_structure"), (Target::Bottom, "bottom_acceleration_structure")]
            {
                for (triangles, g) in [(true, "triangles"), (false, "aabbs")] {
                    cases.push(Case::new(
                        format!("{ROOT}.{A}.host_threading.{tn}.{RES}.{STAGE}.{name}.{BUILT}.{t}.{g}"),
                        move |env| operation(env, op, target, triangles, threads),
                    ));
                }
            }
        }
    }
    // The rest of dEQP's order, as C2 runs them, built on the host.
    let a = format!("{ROOT}.{A}");
    let s = Scene { shader: Shader::FunctionArgument, host: true, ..base_scene() };
    cases.push(Case::new(format!("{a}.function_argument.{RES}.{BUILT}"), move |env| run_checkerboard(env, &s)));
    for (index_type, idx) in INDEX_TYPES {
        for (identical, tr) in [(false, "transformed"), (true, "notransform")] {
            for (cull, f) in [
                (Cull::None, "noflags"),
                (Cull::CounterClockwise, "ccw"),
                (Cull::Disable, "nocull"),
                (Cull::Both, "ccw_nocull"),
            ] {
                let s = Scene { index_type, identical_instances: identical, cull, host: true, ..base_scene() };
                cases.push(Case::new(
                    format!("{a}.instance_triangle_culling.{RES}.{STAGE}.{BUILT}.{idx}.{tr}_{f}"),
                    move |env| run_checkerboard(env, &s),
                ));
            }
        }
    }
    for (in_place, u) in [(false, "update"), (true, "update_in_place")] {
        let s = Scene { shader: Shader::FunctionArgument, instance_update: Some(in_place), host: true, ..base_scene() };
        cases.push(Case::new(format!("{a}.instance_update.{RES}.{BUILT}.{u}"), move |env| run_checkerboard(env, &s)));
    }
    for (index_type, idx) in INDEX_TYPES {
        for (empty, e) in [
            (Empty::InactiveTriangles, "inactive_triangles"),
            (Empty::InactiveInstances, "inactive_instances"),
            (Empty::NoGeometriesBottom, "no_geometries_bottom"),
            (Empty::NoPrimitivesTop, "no_primitives_top"),
            (Empty::NoPrimitivesBottom, "no_primitives_bottom"),
        ] {
            let s = Scene { index_type, empty, host: true, ..base_scene() };
            cases.push(Case::new(format!("{a}.empty.{RES}.{STAGE}.{BUILT}.{idx}.{e}"), move |env| {
                run_checkerboard(env, &s)
            }));
        }
    }
}

/// `flags.*.cpu_built.*`: the C2 checkerboard matrix, built on the host.
fn register_flags(cases: &mut Vec<Case>) {
    const PREFIX: &str = "traditional_structures.compute_shader.cpu_built";
    register_flags_matrix(cases, PREFIX, true);
}

/// `format.*.cpu_built.*`: every AS vertex format and index type, built on the host.
fn register_format(cases: &mut Vec<Case>) {
    const PREFIX: &str = "traditional_structures.compute_shader.cpu_built";
    register_format_matrix(cases, PREFIX, true);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Copy,
    Compact,
    Serialize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Top,
    Bottom,
}

/// `operations.*` and `host_threading.*`: the checkerboard through a copy, compaction or
/// serialization of its bottom structures (one BLAS per checkerboard cell) or its top
/// structure (one BLAS instanced per cell). With `threads` (host_threading) it runs twice,
/// without and with deferred operations joined by that many threads (`u32::MAX`: as many
/// as the driver reports), and the threaded run may take at most ten times as long.
fn operation(env: &Env, op: Op, target: Target, triangles: bool, threads: u32) -> TestResult {
    env.require_ray_query()?;
    require_host_commands(env)?;
    if threads == 0 {
        return operation_once(env, op, target, triangles, HostOp::Now);
    }
    let t0 = std::time::Instant::now();
    operation_once(env, op, target, triangles, HostOp::Now)?;
    let single = t0.elapsed();
    let t1 = std::time::Instant::now();
    let n = if threads == u32::MAX { 0 } else { threads };
    operation_once(env, op, target, triangles, HostOp::Deferred(n))?;
    let multi = t1.elapsed();
    if multi > 10 * single {
        crate::fail!(
            "Time of multithreaded test execution {multi:?} is longer than expected execution time {:?}",
            10 * single
        );
    }
    Ok(())
}

/// The geometry of checkerboard cell (x, y) (a unit square at z = 0).
fn cell(triangles: bool, x: f32, y: f32) -> Geometry {
    let (x1, y1) = (x + 1.0, y + 1.0);
    if triangles {
        let v = |x: f32, y: f32| [x, y, 0.0];
        Geometry::triangles(vec![v(x, y1), v(x, y), v(x1, y1), v(x1, y1), v(x, y), v(x1, y)])
    } else {
        Geometry::aabbs(vec![[x, y, -0.1], [x1, y1, 0.1]])
    }
}

fn operation_once(env: &Env, op: Op, target: Target, triangles: bool, hop: HostOp) -> TestResult {
    let cand = if triangles {
        "gl_RayQueryCandidateIntersectionTriangleEXT"
    } else {
        "gl_RayQueryCandidateIntersectionAABBEXT"
    };
    let src = format!(
        "#version 460 core
#extension GL_EXT_ray_query : require
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(r32ui, set = 0, binding = 0) uniform uimage3D result;
layout(set = 0, binding = 1) uniform accelerationStructureEXT rqTopLevelAS;
void main()
{{
  vec3  origin   = vec3(float(gl_GlobalInvocationID.x) + 0.5, float(gl_GlobalInvocationID.y) + 0.5, 0.5);
  uvec4 hitValue = uvec4(0,0,0,0);
  rayQueryEXT rq;
  rayQueryInitializeEXT(rq, rqTopLevelAS, 0, 0xFF, origin, 0.0, vec3(0.0, 0.0, -1.0), 1.0);
  if (rayQueryProceedEXT(rq) && rayQueryGetIntersectionTypeEXT(rq, false) == {cand})
  {{
    hitValue.y = 1;
    hitValue.x = 1;
  }}
  imageStore(result, ivec3(gl_GlobalInvocationID.xy, 0), uvec4(hitValue.x, 0, 0, 0));
  imageStore(result, ivec3(gl_GlobalInvocationID.xy, 1), uvec4(hitValue.y, 0, 0, 0));
}}
"
    );
    let code = env.glsl(&src)?;
    let got = image_dispatch(env, &code, vk::Format::R32_UINT, (N, N, 2), 0xFF, &[], |env, _cmd| {
        use vk::AccelerationStructureTypeKHR as Ty;
        let compact = |t| op == Op::Compact && target == t;
        let flags = |t| {
            if compact(t) {
                vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION
            } else {
                vk::BuildAccelerationStructureFlagsKHR::empty()
            }
        };
        let bottom_opts = BuildOptions { build_flags: flags(Target::Bottom), ..BuildOptions::default() };
        let cells: Vec<(u32, u32)> = (0..N * N).map(|i| (i % N, i / N)).filter(|(x, y)| (x + y) % 2 == 1).collect();
        // Bottom-target operations use one BLAS per cell, top-target ones one BLAS per scene.
        let mut blases = Vec::new();
        if target == Target::Bottom {
            for &(x, y) in &cells {
                let b = BlasBuilder {
                    geometries: vec![cell(triangles, x as f32, y as f32)],
                    opts: bottom_opts.clone(),
                    ..Default::default()
                };
                blases.push(b.build_host(env)?);
            }
        } else {
            let b =
                BlasBuilder { geometries: vec![cell(triangles, 0.0, 0.0)], opts: bottom_opts, ..Default::default() };
            blases.push(b.build_host(env)?);
        }
        let apply = |a: &crate::fw::accel::Built, ty: Ty, env: &Env| -> TestResult<crate::fw::accel::Built> {
            match op {
                Op::Copy => host_copy(env, a, ty, a.size, vk::CopyAccelerationStructureModeKHR::CLONE, hop),
                Op::Compact => {
                    let size = host_property(env, a, vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR)?;
                    if size == 0 || size > a.size {
                        crate::fail!("compacted size {size} of a {}-byte structure", a.size);
                    }
                    host_copy(env, a, ty, size, vk::CopyAccelerationStructureModeKHR::COMPACT, HostOp::Now)
                }
                Op::Serialize => {
                    let blob = host_serialize(env, a, hop)?;
                    host_deserialize(env, &blob, ty, hop)
                }
            }
        };
        let mut keep = Vec::new();
        if target == Target::Bottom {
            let copies: Vec<_> = blases.iter().map(|b| apply(b, Ty::BOTTOM_LEVEL, env)).collect::<TestResult<_>>()?;
            keep.extend(blases);
            blases = copies;
        }
        let mut tlas = TlasBuilder {
            opts: BuildOptions { build_flags: flags(Target::Top), ..BuildOptions::default() },
            ..Default::default()
        };
        if target == Target::Bottom {
            for b in &blases {
                tlas.add(Instance::new(b).transform(IDENTITY));
            }
        } else {
            for &(x, y) in &cells {
                let mut t = IDENTITY;
                t[0][3] = x as f32;
                t[1][3] = y as f32;
                tlas.add(Instance::new(&blases[0]).transform(t));
            }
        }
        let t = tlas.build_host(env, &blases.iter().collect::<Vec<_>>())?;
        let t = if target == Target::Top {
            let c = apply(&t, Ty::TOP_LEVEL, env)?;
            keep.push(t);
            c
        } else {
            t
        };
        let h = t.handle;
        keep.extend(blases);
        keep.push(t);
        Ok((h, keep))
    })?;
    let mut bad = Vec::new();
    for y in 0..N {
        for x in 0..N {
            let want = (x + y) % 2;
            let i = (y * N + x) as usize;
            let have = (got[i], got[(N * N) as usize + i]);
            if have != (want, want) {
                bad.push(format!("({x},{y}): got {have:?}, expected ({want}, {want})"));
            }
        }
    }
    if !bad.is_empty() {
        crate::fail!("{} cells wrong: {}", bad.len(), bad.iter().take(6).cloned().collect::<Vec<_>>().join("; "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn c4_has_the_research_notes_count() {
        let mut cases = Vec::new();
        super::register(&mut cases);
        assert_eq!(cases.len(), 3264);
    }
}
