//! `ray_flags.compute_shader.*` (C1): the ray flags arrive at run time through a uniform
//! buffer (`uvec4`, flags in x) and must be echoed by `rayQueryGetRayFlagsEXT`. The scene
//! has four quadrants of the 8x8 grid: left instances FORCE_OPAQUE, right ones
//! FORCE_NO_OPAQUE; for triangles the upper quadrants are front-facing and the lower ones
//! back-facing (for AABBs the left and right halves are one box each).
//!
//! After one proceed a triangle candidate stores 1 (non-opaque: the query stops at it), a
//! finished traversal with a committed triangle stores 2 (opaque: committed without a
//! stop); an AABB candidate stores 2 when opaque, else 1; both layers of an r32ui 8x8x2
//! image cleared to 0xFF. The expected value of each quadrant follows from the flags.

use super::common::image_dispatch;
use crate::case::{Case, TestResult, ROOT};
use crate::fw::{Binding, BlasBuilder, Buffer, Env, Geometry, Instance, TlasBuilder};
use ash::vk;

const OPAQUE: u32 = 1;
const NO_OPAQUE: u32 = 2;
const TERMINATE_ON_FIRST_HIT: u32 = 4;
const CULL_BACK: u32 = 16;
const CULL_FRONT: u32 = 32;
const CULL_OPAQUE: u32 = 64;
const CULL_NO_OPAQUE: u32 = 128;
const SKIP_TRIANGLES: u32 = 256;
const SKIP_AABBS: u32 = 512;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    Opacity,
    TerminateOnFirstHit,
    FaceCulling,
    SkipGeometry,
}

/// A test group: its kind, name, flags (value and name) and whether it has AABB cases.
type GroupDef = (Group, &'static str, &'static [(u32, &'static str)], bool);

pub fn register(cases: &mut Vec<Case>) {
    let groups: [GroupDef; 4] = [
        (
            Group::Opacity,
            "opacity",
            &[
                (0, "none"),
                (OPAQUE, "opaque"),
                (NO_OPAQUE, "noopaque"),
                (CULL_OPAQUE, "cullopaque"),
                (CULL_NO_OPAQUE, "cullnoopaque"),
            ],
            true,
        ),
        (
            Group::TerminateOnFirstHit,
            "terminate_on_first_hit",
            &[(TERMINATE_ON_FIRST_HIT, "terminateonfirsthit")],
            true,
        ),
        (
            Group::FaceCulling,
            "face_culling",
            &[(CULL_BACK, "cullbackfacingtriangles"), (CULL_FRONT, "cullfrontfacingtriangles")],
            false,
        ),
        (Group::SkipGeometry, "skip_geometry", &[(SKIP_TRIANGLES, "skiptriangles"), (SKIP_AABBS, "skipaabb")], true),
    ];
    for stage in super::LONG_STAGES.iter().filter(|s| **s == "compute_shader") {
        for (group, name, flags, with_aabbs) in groups {
            for (triangles, g) in [(true, "triangles"), (false, "aabbs")] {
                if !triangles && !with_aabbs {
                    continue;
                }
                for &(flag, f) in flags {
                    cases.push(Case::new(format!("{ROOT}.ray_flags.{stage}.{name}.{g}.{f}"), move |env| {
                        run(env, group, flag, triangles)
                    }));
                }
            }
        }
    }
}

/// The value each quadrant (left-up, right-up, left-down, right-down) must show: opaque
/// 2, non-opaque 1, missed 0.
fn expected(group: Group, flags: u32, triangles: bool) -> [u32; 4] {
    let mut q = [2, 1, 2, 1];
    match group {
        Group::Opacity => {
            if flags & OPAQUE != 0 {
                q = [2; 4];
            }
            if flags & NO_OPAQUE != 0 {
                q = [1; 4];
            }
            if flags & CULL_OPAQUE != 0 {
                q = q.map(|v| if v == 2 { 0 } else { v });
            }
            if flags & CULL_NO_OPAQUE != 0 {
                q = q.map(|v| if v == 1 { 0 } else { v });
            }
        }
        // Every quadrant still reports its first intersection.
        Group::TerminateOnFirstHit => {}
        Group::FaceCulling => {
            if triangles && flags & CULL_BACK != 0 {
                q = [2, 1, 0, 0];
            }
            if triangles && flags & CULL_FRONT != 0 {
                q = [0, 0, 2, 1];
            }
        }
        Group::SkipGeometry => {
            if (triangles && flags & SKIP_TRIANGLES != 0) || (!triangles && flags & SKIP_AABBS != 0) {
                q = [0; 4];
            }
        }
    }
    q
}

fn shader(triangles: bool) -> String {
    let body = if triangles {
        "  if (rayQueryProceedEXT(rq)) {
    // stopped at a candidate: only non-opaque triangles stop the query
    if (rayQueryGetRayFlagsEXT(rq) == flags && rayQueryGetIntersectionTypeEXT(rq, false) == gl_RayQueryCandidateIntersectionTriangleEXT)
      value = 1u;
  } else {
    // finished: an opaque triangle was committed on the way
    if (rayQueryGetRayFlagsEXT(rq) == flags && rayQueryGetIntersectionTypeEXT(rq, true) == gl_RayQueryCommittedIntersectionTriangleEXT)
      value = 2u;
  }"
    } else {
        "  if (rayQueryProceedEXT(rq)) {
    if (rayQueryGetRayFlagsEXT(rq) == flags && rayQueryGetIntersectionTypeEXT(rq, false) == gl_RayQueryCandidateIntersectionAABBEXT)
      value = rayQueryGetIntersectionCandidateAABBOpaqueEXT(rq) ? 2u : 1u;
  }"
    };
    format!(
        "#version 460 core
#extension GL_EXT_ray_query : require
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(r32ui, set = 0, binding = 0) uniform uimage3D result;
layout(set = 0, binding = 1) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 2) uniform Params {{ uvec4 rayFlags; }} params;

void main()
{{
  uvec2 cell = gl_GlobalInvocationID.xy;
  uint flags = params.rayFlags.x;
  vec3 org = vec3(float(cell.x) + 0.5, float(cell.y) + 0.5, 0.5);
  uint value = 0u;
  rayQueryEXT rq;
  rayQueryInitializeEXT(rq, scene, flags, 0xFFu, org, 0.0, vec3(0.0, 0.0, -1.0), 1.0);
{body}
  imageStore(result, ivec3(cell, 0), uvec4(value, 0u, 0u, 0u));
  imageStore(result, ivec3(cell, 1), uvec4(value, 0u, 0u, 0u));
}}
"
    )
}

fn run(env: &Env, group: Group, flags: u32, triangles: bool) -> TestResult {
    env.require_ray_query()?;
    let code = env.glsl(&shader(triangles))?;
    let params = Buffer::with_data(env, &[flags, 0, 0, 0], vk::BufferUsageFlags::UNIFORM_BUFFER)?;
    let (w, h) = (8u32, 8u32);
    // The corner grid: x and y at 1, 4 and 7.
    let v = |x: usize, y: usize| [1.0 + 3.0 * x as f32, 1.0 + 3.0 * y as f32, 0.0];
    let got =
        image_dispatch(env, &code, vk::Format::R32_UINT, (w, h, 2), 0xFF, &[(Binding::UBO, &params)], |env, cmd| {
            let mut keep = Vec::new();
            let mut tlas = TlasBuilder::default();
            let opacity = |right: bool| {
                if right {
                    vk::GeometryInstanceFlagsKHR::FORCE_NO_OPAQUE
                } else {
                    vk::GeometryInstanceFlagsKHR::FORCE_OPAQUE
                }
            };
            if triangles {
                for y in 0..2 {
                    for x in 0..2 {
                        // Upper quadrants wound counterclockwise as seen from +z (front-facing
                        // for rays along -z), lower ones clockwise (back-facing).
                        let verts = if y == 0 {
                            vec![v(x, y), v(x + 1, y), v(x, y + 1), v(x, y + 1), v(x + 1, y), v(x + 1, y + 1)]
                        } else {
                            vec![v(x, y), v(x, y + 1), v(x + 1, y), v(x + 1, y), v(x, y + 1), v(x + 1, y + 1)]
                        };
                        let blas = BlasBuilder { geometries: vec![Geometry::triangles(verts)], ..Default::default() }
                            .record(env, cmd)?;
                        tlas.add(Instance::new(&blas).flags(opacity(x == 1)));
                        keep.push(blas);
                    }
                }
            } else {
                for x in 0..2 {
                    let lo = v(x, 0);
                    let hi = v(x + 1, 2);
                    let aabb = Geometry::aabbs(vec![[lo[0], lo[1], -0.1], [hi[0], hi[1], 0.1]]);
                    let blas = BlasBuilder { geometries: vec![aabb], ..Default::default() }.record(env, cmd)?;
                    tlas.add(Instance::new(&blas).flags(opacity(x == 1)));
                    keep.push(blas);
                }
            }
            let tlas = tlas.record(env, cmd)?;
            let handle = tlas.handle;
            keep.push(tlas);
            Ok((handle, keep))
        })?;
    let quadrants = expected(group, flags, triangles);
    let mut bad = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let inside = |c: u32| (1..7).contains(&c);
            let want =
                if inside(x) && inside(y) { quadrants[(usize::from(y >= 4) * 2) + usize::from(x >= 4)] } else { 0 };
            let i = (y * w + x) as usize;
            let have = (got[i], got[(w * h) as usize + i]);
            if have != (want, want) {
                bad.push(format!("({x},{y}): got {have:?}, expected ({want}, {want})"));
            }
        }
    }
    if !bad.is_empty() {
        crate::fail!(
            "flags {flags:#x}: {} cells wrong: {}",
            bad.len(),
            bad.iter().take(6).cloned().collect::<Vec<_>>().join("; ")
        );
    }
    Ok(())
}
