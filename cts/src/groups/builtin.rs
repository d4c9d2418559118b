//! `builtin.*.comp.*` (C0): every `rayQueryGet*` built-in and the proceed / confirm /
//! generate / terminate flow, on triangles and AABBs, in a compute shader; and
//! `advanced.using_wrapper_function.comp.*` (C1), which shares the machinery.
//!
//! Each case traces one ray per pixel of an 8x8 grid of squares at z <= 0 (rays from the
//! pixel centre towards -z unless said otherwise) and stores the queried value, floats as
//! `int(v * 2^20)`, into an r32i 3D image: one layer for scalars, 4 for vectors (3 checked),
//! 16 for 3x4 matrices (12 checked). Scenes, expected values and tolerances are dEQP's.

use super::common::{fixed_point_eps, image_dispatch, Keep, FIXED_POINT_DIVISOR};
use crate::case::{Case, TestResult, ROOT};
use crate::fw::{BlasBuilder, Env, Geometry, Instance, TlasBuilder, Transform, IDENTITY};
use ash::vk;

const W: u32 = 8;
const H: u32 = 8;
const K: i32 = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    Flow,
    PrimitiveId,
    InstanceId,
    InstanceCustomIndex,
    IntersectionT,
    ObjectRayOrigin,
    ObjectRayDirection,
    ObjectToWorld,
    WorldToObject,
    GetRayTMin,
    GetWorldRayOrigin,
    GetWorldRayDirection,
    CandidateAabbOpaque,
    FrontFaceCandidate,
    FrontFaceCommitted,
    GeometryIndexCandidate,
    GeometryIndexCommitted,
    BarycentricsCandidate,
    BarycentricsCommitted,
    SbtOffsetCandidate,
    SbtOffsetCommitted,
    Terminate,
    TypeCandidate,
    TypeCommitted,
    UsingWrapperFunction,
}

use Test::*;

/// dEQP's order and names of the builtin test types.
pub const TYPES: [(Test, &str); 24] = [
    (Flow, "flow"),
    (PrimitiveId, "primitiveid"),
    (InstanceId, "instanceid"),
    (InstanceCustomIndex, "instancecustomindex"),
    (IntersectionT, "intersectiont"),
    (ObjectRayOrigin, "objectrayorigin"),
    (ObjectRayDirection, "objectraydirection"),
    (ObjectToWorld, "objecttoworld"),
    (WorldToObject, "worldtoobject"),
    (GetRayTMin, "getraytmin"),
    (GetWorldRayOrigin, "getworldrayorigin"),
    (GetWorldRayDirection, "getworldraydirection"),
    (CandidateAabbOpaque, "getintersectioncandidateaabbopaque"),
    (FrontFaceCandidate, "getintersectionfrontfaceCandidate"),
    (FrontFaceCommitted, "getintersectionfrontfaceCommitted"),
    (GeometryIndexCandidate, "getintersectiongeometryindexCandidate"),
    (GeometryIndexCommitted, "getintersectiongeometryindexCommitted"),
    (BarycentricsCandidate, "getintersectionbarycentricsCandidate"),
    (BarycentricsCommitted, "getintersectionbarycentricsCommitted"),
    (SbtOffsetCandidate, "getintersectioninstanceshaderbindingtablerecordoffsetCandidate"),
    (SbtOffsetCommitted, "getintersectioninstanceshaderbindingtablerecordoffsetCommitted"),
    (Terminate, "rayqueryterminate"),
    (TypeCandidate, "getintersectiontypeCandidate"),
    (TypeCommitted, "getintersectiontypeCommitted"),
];

/// dEQP's short-form stage tokens; only `comp` is ported.
const STAGES: [&str; 12] =
    ["vert", "tesc", "tese", "geom", "frag", "comp", "rgen", "ahit", "chit", "miss", "sect", "call"];

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub test: Test,
    pub triangles: bool,
    pub instances: u32,
    pub geometries: u32,
    pub squares: u32,
    pub depth: u32,
}

fn single(t: Test) -> bool {
    !matches!(
        t,
        PrimitiveId
            | InstanceId
            | InstanceCustomIndex
            | IntersectionT
            | SbtOffsetCandidate
            | SbtOffsetCommitted
            | TypeCandidate
            | TypeCommitted
    )
}

fn depth(t: Test) -> u32 {
    match t {
        ObjectToWorld | WorldToObject => 16,
        ObjectRayOrigin
        | ObjectRayDirection
        | GetWorldRayOrigin
        | GetWorldRayDirection
        | BarycentricsCandidate
        | BarycentricsCommitted
        | SbtOffsetCandidate
        | SbtOffsetCommitted => 4,
        _ => 1,
    }
}

pub fn register(cases: &mut Vec<Case>) {
    for (test, name) in TYPES {
        let (instances, geometries) = if single(test) { (1, 1) } else { (2, 8) };
        for stage in STAGES {
            if stage != "comp" {
                continue;
            }
            for (triangles, geom) in [(true, "triangles"), (false, "aabbs")] {
                if !triangles
                    && matches!(
                        test,
                        FrontFaceCandidate | FrontFaceCommitted | BarycentricsCandidate | BarycentricsCommitted
                    )
                {
                    continue;
                }
                if triangles && test == CandidateAabbOpaque {
                    continue;
                }
                let p = Params {
                    test,
                    triangles,
                    instances,
                    geometries,
                    squares: W * H / instances / geometries,
                    depth: depth(test),
                };
                cases.push(Case::new(format!("{ROOT}.builtin.{name}.{stage}.{geom}"), move |env| run(env, &p)));
            }
        }
    }
}

/// `advanced.using_wrapper_function.comp.{triangles,aabbs}` (C1); `null_as` needs
/// robustness2's null descriptors and belongs to stage C3.
pub fn register_advanced(cases: &mut Vec<Case>) {
    for (triangles, geom) in [(true, "triangles"), (false, "aabbs")] {
        let p = Params { test: UsingWrapperFunction, triangles, instances: 1, geometries: 1, squares: 64, depth: 1 };
        cases.push(Case::new(format!("{ROOT}.advanced.using_wrapper_function.comp.{geom}"), move |env| run(env, &p)));
    }
}

fn square(sx: u32, sy: u32) -> (f32, f32, f32, f32) {
    (sx as f32 / W as f32, sy as f32 / H as f32, (sx + 1) as f32 / W as f32, (sy + 1) as f32 / H as f32)
}

/// Two triangles covering a square at depth z, wound one way or the other.
fn quad(sx: u32, sy: u32, z: f32, reversed: bool) -> Vec<[f32; 3]> {
    let (x0, y0, x1, y1) = square(sx, sy);
    if reversed {
        vec![[x1, y1, z], [x0, y1, z], [x0, y0, z], [x0, y0, z], [x1, y0, z], [x1, y1, z]]
    } else {
        vec![[x0, y0, z], [x0, y1, z], [x1, y1, z], [x1, y1, z], [x1, y0, z], [x0, y0, z]]
    }
}

fn square_geometry(sx: u32, sy: u32, z: f32, triangles: bool, reversed: bool) -> Vec<[f32; 3]> {
    if triangles {
        quad(sx, sy, z, reversed)
    } else {
        let (x0, y0, x1, y1) = square(sx, sy);
        vec![[x0, y0, z], [x1, y1, z]]
    }
}

/// What a scene produces: the TLAS and the expected values (layer-major, i32).
struct Scene {
    tlas: vk::AccelerationStructureKHR,
    keep: Keep,
}

fn finish(env: &Env, cmd: vk::CommandBuffer, blases: Keep, tlas: TlasBuilder) -> TestResult<Scene> {
    let t = tlas.record(env, cmd)?;
    let mut keep = blases;
    let handle = t.handle;
    keep.push(t);
    Ok(Scene { tlas: handle, keep })
}

/// The "walking squares" scene: per instance a BLAS of `geometries` geometries of
/// `squares` squares each, the squares visited by stepping the cell index (by 1 for flow,
/// by 11 modulo 64 otherwise). Triangles are thin slivers (corner, top middle, right middle),
/// AABBs flat-ish boxes from z to 0.9z.
fn walking_scene(env: &Env, cmd: vk::CommandBuffer, p: &Params, expected: &mut [i32]) -> TestResult<Scene> {
    let step = if p.test == Flow { 1 } else { 11 };
    let mut pos = (0u32, 0u32);
    let mut blases = Vec::new();
    let mut tlas = TlasBuilder::new();
    let translate = match p.test {
        ObjectToWorld => Some(((1.0 / 8.0) / W as f32, (1.0 / 16.0) / H as f32)),
        WorldToObject => Some(((1.0 / 8.0) / W as f32, (1.0 / 16.0) / H as f32)),
        _ => None,
    };
    for inst in 0..p.instances {
        let mut blas = BlasBuilder::new();
        for _ in 0..p.geometries {
            let mut data = Vec::new();
            for sq in 0..p.squares {
                let n = W * pos.1 + pos.0;
                let (x0, y0, x1, y1) = square(pos.0, pos.1);
                let z = if p.test == IntersectionT {
                    let eps = 1.0 / FIXED_POINT_DIVISOR;
                    -(eps + pos.0 as f32 * pos.1 as f32 / (W * H) as f32).abs()
                } else {
                    -1.0
                };
                let value = match p.test {
                    Flow => Some(1),
                    PrimitiveId => Some(sq as i32),
                    InstanceId => Some(inst as i32),
                    InstanceCustomIndex => Some(inst as i32 + 1),
                    IntersectionT => Some(-((z * FIXED_POINT_DIVISOR) as i32)),
                    _ => None,
                };
                if let Some(v) = value {
                    expected[n as usize] = v;
                }
                if p.triangles {
                    let (xm, ym) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
                    data.extend([[x0, y0, z], [xm, y1, z], [x1, ym, z]]);
                } else {
                    data.extend([[x0, y0, z], [x1, y1, z * 0.9]]);
                }
                let m = if step == 1 { n + 1 } else { (n + step) % (W * H) };
                pos = (m % W, m / W);
            }
            blas.add(Geometry::new(data, p.triangles));
        }
        let b = blas.record(env, cmd)?;
        let mut t: Transform = IDENTITY;
        if let Some((tx, ty)) = translate {
            t[0][3] = tx;
            t[1][3] = ty;
        }
        let mut i = Instance::new(&b).transform(t);
        if matches!(p.test, PrimitiveId | InstanceId | InstanceCustomIndex) {
            i = i.custom_index(inst + 1);
        }
        tlas.add(i);
        blases.push(b);
    }
    finish(env, cmd, blases, tlas)
}

/// One BLAS holding one geometry per square (squares in raster order).
fn grid_scene(env: &Env, cmd: vk::CommandBuffer, p: &Params) -> TestResult<Scene> {
    let mut blas = BlasBuilder::new();
    for sq in 0..W * H {
        let (sx, sy) = (sq % W, sq / W);
        let (z, reversed, flags) = match p.test {
            GetWorldRayOrigin => (-0.2, false, vk::GeometryFlagsKHR::empty()),
            FrontFaceCandidate | FrontFaceCommitted | GeometryIndexCandidate | GeometryIndexCommitted => {
                (0.0, sq % 2 == 1, vk::GeometryFlagsKHR::empty())
            }
            CandidateAabbOpaque => {
                (0.0, false, if sq % 2 == 0 { vk::GeometryFlagsKHR::OPAQUE } else { vk::GeometryFlagsKHR::empty() })
            }
            _ => (0.0, false, vk::GeometryFlagsKHR::empty()),
        };
        let data = if matches!(p.test, BarycentricsCandidate | BarycentricsCommitted) {
            let (x0, y0, x1, y1) = square(sx, sy);
            let x05 = x0 + (x1 - x0) * 0.5;
            vec![[x05, y0, 0.0], [x0, y1, 0.0], [x1, y1, 0.0]]
        } else {
            square_geometry(sx, sy, z, p.triangles, reversed)
        };
        blas.add(Geometry::new(data, p.triangles).flags(flags));
    }
    let b = blas.record(env, cmd)?;
    let mut tlas = TlasBuilder::new();
    tlas.add(Instance::new(&b).custom_index(1));
    finish(env, cmd, vec![b], tlas)
}

/// One BLAS and one instance per square (SBT offset, terminate and intersection-type tests).
fn per_square_scene(env: &Env, cmd: vk::CommandBuffer, p: &Params) -> TestResult<Scene> {
    let mut blases = Vec::new();
    let mut tlas = TlasBuilder::new();
    let sbt_step = ((1u32 << 24) - 1) / (W * H);
    for sq in 0..W * H {
        let (sx, sy) = (sq % W, sq / W);
        let mut blas = BlasBuilder::new();
        let sbt = match p.test {
            SbtOffsetCandidate | SbtOffsetCommitted => {
                blas.add(Geometry::triangles(quad(sx, sy, 0.0, sq % 2 == 1)));
                sbt_step * sq
            }
            Terminate => {
                let mut data = Vec::new();
                for z in [-2.0f32, -1.0, 0.0] {
                    data.extend(square_geometry(sx, sy, z, p.triangles, sq % 2 == 1));
                }
                blas.add(Geometry::new(data, p.triangles).flags(vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION));
                255
            }
            _ => {
                // Intersection type: only even squares hold geometry.
                if sq % 2 == 1 {
                    continue;
                }
                blas.add(Geometry::new(square_geometry(sx, sy, 0.0, p.triangles, false), p.triangles));
                0
            }
        };
        let b = blas.record(env, cmd)?;
        let mut i = Instance::new(&b).sbt_offset(sbt);
        if p.test != TypeCandidate && p.test != TypeCommitted {
            i = i.custom_index(1);
        }
        tlas.add(i);
        blases.push(b);
    }
    finish(env, cmd, blases, tlas)
}

fn expected_values(p: &Params) -> Vec<i32> {
    let n = (W * H) as usize;
    let mut e = vec![0i32; n * p.depth as usize];
    let k = K as f32;
    for sq in 0..n {
        let (x, y) = ((sq as u32 % W) as f32, (sq as u32 / W) as f32);
        match p.test {
            ObjectRayOrigin => {
                e[sq] = (k * (0.5 + x) / W as f32) as i32;
                e[n + sq] = (k * (0.5 + y) / H as f32) as i32;
            }
            ObjectRayDirection => e[2 * n + sq] = -K,
            ObjectToWorld | WorldToObject => {
                let s = if p.test == ObjectToWorld { 1.0 } else { -1.0 };
                let t = [s * (1.0 / 8.0) / W as f32, s * (1.0 / 16.0) / H as f32, 0.0];
                for row in 0..3 {
                    for col in 0..4 {
                        let v = if col == 3 {
                            t[row]
                        } else if col == row {
                            1.0
                        } else {
                            0.0
                        };
                        e[(row * 4 + col) * n + sq] = (k * v) as i32;
                    }
                }
            }
            GetRayTMin => e[sq] = ((1.0 + sq as f32 / n as f32) * k) as i32,
            GetWorldRayOrigin => {
                e[sq] = ((x + 0.5) / W as f32 * k) as i32;
                e[n + sq] = ((y + 0.5) / H as f32 * k) as i32;
                e[2 * n + sq] = ((x + y) / (W + H) as f32 * k) as i32;
            }
            GetWorldRayDirection => {
                let d = [(x + 0.5) / W as f32 - 0.5, (y + 0.5) / H as f32 - 0.5, 1.0];
                let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                for c in 0..3 {
                    e[c * n + sq] = (d[c] / len * k) as i32;
                }
            }
            CandidateAabbOpaque => e[sq] = (sq % 2 == 0) as i32,
            FrontFaceCandidate | FrontFaceCommitted => e[sq] = (sq % 2 != 0) as i32,
            GeometryIndexCandidate | GeometryIndexCommitted => e[sq] = sq as i32,
            BarycentricsCandidate | BarycentricsCommitted => {
                let (x0, y0) = (x / W as f32, y / H as f32);
                let (x1, y1) = ((x + 1.0) / W as f32, (y + 1.0) / H as f32);
                let x05 = x0 + (x1 - x0) * 0.5;
                let y05 = y0 + (y1 - y0) * 0.5;
                let t = sq as f32 / (n - 1) as f32;
                let hx = x0 + 0.125 / W as f32 + (x1 - x05) * t;
                let hy = y1 - 0.125 / H as f32 - (y1 - y05) * t;
                let denom = (x1 - x0) * (y0 - y1);
                let bx = ((x1 - x0) * (hy - y1)) / denom;
                let by = ((y1 - y0) * (hx - x1) + (x05 - x1) * (hy - y1)) / denom;
                e[sq] = (k * by) as i32;
                e[n + sq] = (k * bx) as i32;
                e[2 * n + sq] = (k * (1.0 - bx - by)) as i32;
            }
            SbtOffsetCandidate | SbtOffsetCommitted => e[sq] = (((1u32 << 24) - 1) / n as u32 * sq as u32) as i32,
            Terminate => e[sq] = 255,
            TypeCandidate => {
                e[sq] = if sq % 2 == 0 {
                    if p.triangles {
                        0
                    } else {
                        1
                    }
                } else {
                    123
                }
            }
            TypeCommitted => {
                e[sq] = if sq % 2 == 0 {
                    if p.triangles {
                        1
                    } else {
                        2
                    }
                } else {
                    0
                }
            }
            UsingWrapperFunction => e[sq] = 1,
            _ => {}
        }
    }
    e
}

/// The shader's ray setup for the tests whose rays start above the scene at z = 0.2 and
/// accept everything (tmin 1e-4).
const ABOVE: &str = "
  vec3 org = vec3((float(pos.x) + 0.5) / float(size.x), (float(pos.y) + 0.5) / float(size.y), 0.2);
  vec3 dir = vec3(0.0, 0.0, -1.0);
  rayQueryInitializeEXT(q, topLevelAS, 0u, 0xFFu, org, 0.0001, dir, 9.0);";

const SCALAR_STORE: &str = "  imageStore(result, pos, ivec4(int(v), 0, 0, 0));";
const VEC_STORE: &str = "  for (int c = 0; c < 3; c++) imageStore(result, ivec3(pos.xy, c), ivec4(v[c], 0, 0, 0));";
const MAT_STORE: &str = "  for (int r = 0; r < 3; r++)\n    for (int c = 0; c < 4; c++)\n      imageStore(result, ivec3(pos.xy, r * 4 + c), ivec4(int(m[c][r]), 0, 0, 0));";
/// A committed t that varies over the grid.
const GRID_T: &str = "abs(float(pos.x * pos.y) / float(size.x * size.y))";

/// The "probe" flow: the first proceed must give a candidate of the geometry's kind; it is
/// committed (confirm for triangles, generate at `t` for AABBs), the next proceed ends
/// traversal and the committed kind must match. `on_commit` runs then.
fn probe(p: &Params, init: &str, t: &str, dec: &str, on_commit: &str, store: &str) -> String {
    let (flags, cand, commit, committed) = if p.triangles {
        (
            "gl_RayFlagsNoOpaqueEXT",
            "gl_RayQueryCandidateIntersectionTriangleEXT",
            "rayQueryConfirmIntersectionEXT(q);".to_string(),
            "gl_RayQueryCommittedIntersectionTriangleEXT",
        )
    } else {
        (
            "0u",
            "gl_RayQueryCandidateIntersectionAABBEXT",
            format!("rayQueryGenerateIntersectionEXT(q, {t});"),
            "gl_RayQueryCommittedIntersectionGeneratedEXT",
        )
    };
    format!(
        "  {init}
  vec3 org = vec3((float(pos.x) + 0.5) / float(size.x), (float(pos.y) + 0.5) / float(size.y), 0.0);
  rayQueryInitializeEXT(q, topLevelAS, {flags}, 0xFFu, org, 0.0, vec3(0.0, 0.0, -1.0), 9.0);
  if (rayQueryProceedEXT(q)) {{
    {dec}
    if (rayQueryGetIntersectionTypeEXT(q, false) == {cand}) {{
      {dec}
      {commit}
      rayQueryProceedEXT(q);
      if (rayQueryGetIntersectionTypeEXT(q, true) == {committed}) {{
        {on_commit}
      }}
    }}
  }}
{store}"
    )
}

/// The tests of one committed value read through the probe flow.
fn probe_test(p: &Params) -> String {
    let k = K;
    match p.test {
        Flow => probe(p, "uint v = 4u;", "0.5", "v--;", "v--;", SCALAR_STORE),
        PrimitiveId => probe(
            p,
            "uint v = 0xFFFFFFFFu;",
            "0.5",
            "v--;",
            "v = rayQueryGetIntersectionPrimitiveIndexEXT(q, true);",
            SCALAR_STORE,
        ),
        InstanceId => probe(
            p,
            "uint v = 0xFFFFFFFFu;",
            "0.5",
            "v--;",
            "v = rayQueryGetIntersectionInstanceIdEXT(q, true);",
            SCALAR_STORE,
        ),
        InstanceCustomIndex => probe(
            p,
            "uint v = 0xFFFFFFFFu;",
            "0.5",
            "v--;",
            "v = rayQueryGetIntersectionInstanceCustomIndexEXT(q, true);",
            SCALAR_STORE,
        ),
        IntersectionT => probe(
            p,
            &format!("int v = -{k};"),
            GRID_T,
            &format!("v -= {k};"),
            &format!("v = int({k} * rayQueryGetIntersectionTEXT(q, true));"),
            SCALAR_STORE,
        ),
        ObjectRayOrigin | ObjectRayDirection => {
            let f = if p.test == ObjectRayOrigin { "Origin" } else { "Direction" };
            probe(
                p,
                &format!("ivec3 v = ivec3(-{k});"),
                GRID_T,
                &format!("v -= ivec3({k});"),
                &format!("v = ivec3({k} * rayQueryGetIntersectionObjectRay{f}EXT(q, true));"),
                VEC_STORE,
            )
        }
        ObjectToWorld | WorldToObject => {
            let f = if p.test == ObjectToWorld { "ObjectToWorld" } else { "WorldToObject" };
            probe(
                p,
                &format!("mat4x3 m = mat4x3(-{k});"),
                GRID_T,
                &format!("m -= mat4x3({k});"),
                &format!("m = mat4x3({k} * rayQueryGetIntersection{f}EXT(q, true));"),
                MAT_STORE,
            )
        }
        _ => unreachable!("not a probe test"),
    }
}

/// The tests that read the world ray, candidate properties, barycentrics or the
/// intersection type, each with its own loop.
fn loop_test(p: &Params) -> String {
    let k = K;
    match p.test {
        GetRayTMin => format!(
            "  float tmin = 1.0 + float(pos.y * size.x + pos.x) / float(size.x * size.y);
  rayQueryInitializeEXT(q, topLevelAS, 0u, 0xFFu, vec3(0.0, 0.0, -1.0), tmin, vec3(0.0, 0.0, 1.0), 9.0);
  while (rayQueryProceedEXT(q))
    if (rayQueryGetIntersectionTypeEXT(q, false) == gl_RayQueryCandidateIntersectionAABBEXT)
      rayQueryConfirmIntersectionEXT(q);
  imageStore(result, pos, ivec4(int(rayQueryGetRayTMinEXT(q) * {k}), 0, 0, 0));"
        ),
        GetWorldRayOrigin | GetWorldRayDirection => {
            let (setup, f) = if p.test == GetWorldRayOrigin {
                (
                    "vec3 org = vec3((float(pos.x) + 0.5) / float(size.x), (float(pos.y) + 0.5) / float(size.y), float(pos.x + pos.y) / float(size.x + size.y));
  vec3 dir = vec3(0.0, 0.0, -1.0);",
                    "Origin",
                )
            } else {
                (
                    "vec3 org = vec3(0.5, 0.5, -1.0);
  vec3 dir = normalize(vec3((float(pos.x) + 0.5) / float(size.x), (float(pos.y) + 0.5) / float(size.y), 0.0) - org);",
                    "Direction",
                )
            };
            format!(
                "  {setup}
  rayQueryInitializeEXT(q, topLevelAS, 0u, 0xFFu, org, 0.00001, dir, 9.0);
  bool found = false;
  while (rayQueryProceedEXT(q)) {{ found = true; rayQueryConfirmIntersectionEXT(q); }}
  vec3 r = found ? rayQueryGetWorldRay{f}EXT(q) : vec3(1234.0, 5678.0, 9.0);
  for (int c = 0; c < 3; c++) imageStore(result, ivec3(pos.xy, c), ivec4(int(r[c] * {k}), 0, 0, 0));"
            )
        }
        CandidateAabbOpaque => format!(
            "{ABOVE}
  int v = 0;
  while (rayQueryProceedEXT(q)) {{
    if (rayQueryGetIntersectionTypeEXT(q, false) == gl_RayQueryCandidateIntersectionAABBEXT) {{
      if (rayQueryGetIntersectionCandidateAABBOpaqueEXT(q)) v |= 1;
      rayQueryConfirmIntersectionEXT(q);
    }}
  }}
  imageStore(result, pos, ivec4(v, 0, 0, 0));"
        ),
        FrontFaceCandidate | GeometryIndexCandidate | SbtOffsetCandidate => {
            let (init, get) = match p.test {
                FrontFaceCandidate => ("2", "rayQueryGetIntersectionFrontFaceEXT(q, false) ? 1 : 0"),
                GeometryIndexCandidate => ("123456", "rayQueryGetIntersectionGeometryIndexEXT(q, false)"),
                _ => ("2", "int(rayQueryGetIntersectionInstanceShaderBindingTableRecordOffsetEXT(q, false))"),
            };
            format!(
                "{ABOVE}
  int v = {init};
  while (rayQueryProceedEXT(q)) {{ v = {get}; rayQueryConfirmIntersectionEXT(q); }}
  imageStore(result, pos, ivec4(v, 0, 0, 0));"
            )
        }
        FrontFaceCommitted | GeometryIndexCommitted | SbtOffsetCommitted => {
            let get = match p.test {
                FrontFaceCommitted => "(rayQueryGetIntersectionFrontFaceEXT(q, true) ? 1 : 0)",
                GeometryIndexCommitted => "rayQueryGetIntersectionGeometryIndexEXT(q, true)",
                _ => "int(rayQueryGetIntersectionInstanceShaderBindingTableRecordOffsetEXT(q, true))",
            };
            format!(
                "{ABOVE}
  bool found = false;
  while (rayQueryProceedEXT(q)) {{ found = true; rayQueryConfirmIntersectionEXT(q); }}
  int v = found ? {get} : 2;
  imageStore(result, pos, ivec4(v, 0, 0, 0));"
            )
        }
        BarycentricsCandidate | BarycentricsCommitted => {
            let loop_body = if p.test == BarycentricsCandidate {
                "b = rayQueryGetIntersectionBarycentricsEXT(q, false); rayQueryConfirmIntersectionEXT(q);"
            } else {
                "found = true; rayQueryConfirmIntersectionEXT(q);"
            };
            let after = if p.test == BarycentricsCommitted {
                "if (found) b = rayQueryGetIntersectionBarycentricsEXT(q, true);"
            } else {
                ""
            };
            format!(
                "  vec3 org = vec3((float(pos.x) + 0.5) / float(size.x), (float(pos.y) + 0.5) / float(size.y), 0.2);
  float t = float(pos.y * size.x + pos.x) / float(size.x * size.y - 1);
  float x0 = float(pos.x) / float(size.x), x1 = float(pos.x + 1) / float(size.x);
  float y0 = float(pos.y) / float(size.y), y1 = float(pos.y + 1) / float(size.y);
  float xh = mix(x0, x1, 0.5), yh = mix(y0, y1, 0.5);
  vec3 target = vec3(x0 + 0.125 / float(size.x) + (x1 - xh) * t, y1 - 0.125 / float(size.y) - (y1 - yh) * t, 0.0);
  rayQueryInitializeEXT(q, topLevelAS, 0u, 0xFFu, org, 0.0001, normalize(target - org), 9.0);
  bool found = false;
  vec2 b = vec2(1234.0, 5678.0);
  while (rayQueryProceedEXT(q)) {{ {loop_body} }}
  {after}
  imageStore(result, ivec3(pos.xy, 0), ivec4(int(b.x * {k}), 0, 0, 0));
  imageStore(result, ivec3(pos.xy, 1), ivec4(int(b.y * {k}), 0, 0, 0));
  imageStore(result, ivec3(pos.xy, 2), ivec4(int((1.0 - b.x - b.y) * {k}), 0, 0, 0));"
            )
        }
        TypeCandidate => {
            let commit = if p.triangles {
                "rayQueryConfirmIntersectionEXT(q);"
            } else {
                "rayQueryGenerateIntersectionEXT(q, 0.5);"
            };
            format!(
                "{ABOVE}
  int v = 123;
  while (rayQueryProceedEXT(q)) {{ v = int(rayQueryGetIntersectionTypeEXT(q, false)); {commit} }}
  imageStore(result, pos, ivec4(v, 0, 0, 0));"
            )
        }
        TypeCommitted => {
            let commit = if p.triangles {
                "rayQueryConfirmIntersectionEXT(q);"
            } else {
                "rayQueryGenerateIntersectionEXT(q, 0.5);"
            };
            format!(
                "{ABOVE}
  while (rayQueryProceedEXT(q)) {{ {commit} }}
  uint v = rayQueryGetIntersectionTypeEXT(q, true);
  imageStore(result, pos, ivec4(int(v), 0, 0, 0));"
            )
        }
        _ => unreachable!("not a loop test"),
    }
}

/// `rayQueryTerminateEXT`: eight queries stepped in lock-step, all but one terminated
/// after their first candidate.
const TERMINATE: &str = "  const int N = 8;
  const int KEEP = N / 2;
  rayQueryEXT qs[N];
  int hits[N];
  for (int i = N - 1; i >= 0; i--) {
    vec3 org = vec3((float(pos.x) + 0.4) / float(size.x), (float(pos.y) + 0.5) / float(size.y), 0.2);
    rayQueryInitializeEXT(qs[i], topLevelAS, 0u, 0xFFu, org, 0.0001, vec3(0.0, 0.0, -1.0), 9.0);
    hits[i] = 0;
  }
  for (;;) {
    int progressed = 0;
    for (int i = 0; i < N; i++) {
      if (rayQueryProceedEXT(qs[i])) {
        hits[i]++;
        progressed++;
        if (i != KEEP) rayQueryTerminateEXT(qs[i]);
      }
    }
    if (progressed == 0) break;
  }
  int v = 0;
  for (int i = 0; i < N; i++)
    if (hits[i] == (i == KEEP ? 3 : 1)) v |= 1 << i;
  imageStore(result, pos, ivec4(v, 0, 0, 0));";

/// The body of main() for one test (everything after `pos`/`size` are set).
fn body(p: &Params) -> String {
    let b = match p.test {
        Flow | PrimitiveId | InstanceId | InstanceCustomIndex | IntersectionT | ObjectRayOrigin
        | ObjectRayDirection | ObjectToWorld | WorldToObject => probe_test(p),
        Terminate => TERMINATE.to_string(),
        UsingWrapperFunction => unreachable!("SPIR-V"),
        _ => loop_test(p),
    };
    let decl = if p.test == Terminate { "" } else { "  rayQueryEXT q;\n" };
    format!(
        "#version 460 core
#extension GL_EXT_ray_query : require
layout(set = 0, binding = 0, r32i) uniform iimage3D result;
layout(set = 0, binding = 1) uniform accelerationStructureEXT topLevelAS;

void main()
{{
  ivec3 pos = ivec3(gl_WorkGroupID);
  ivec3 size = ivec3(gl_NumWorkGroups);
{decl}{b}
}}
"
    )
}

/// The wrapper-function test needs what GLSL cannot say: a function taking one ray query
/// by pointer and the same query again as a bare `OpTypeRayQueryKHR` value, which it stores
/// into a local query variable and confirms through. Written by hand in SPIR-V assembly.
const WRAPPER_SPIRV: &str = r#"
               OpCapability Shader
               OpCapability RayQueryKHR
               OpExtension "SPV_KHR_ray_query"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %wg_id %wg_count %tlas %image
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %wg_id BuiltIn WorkgroupId
               OpDecorate %wg_count BuiltIn NumWorkgroups
               OpDecorate %image DescriptorSet 0
               OpDecorate %image Binding 0
               OpDecorate %tlas DescriptorSet 0
               OpDecorate %tlas Binding 1
       %void = OpTypeVoid
    %fn_void = OpTypeFunction %void
       %bool = OpTypeBool
        %int = OpTypeInt 32 1
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
      %v3int = OpTypeVector %int 3
     %v3uint = OpTypeVector %uint 3
    %v3float = OpTypeVector %float 3
      %v4int = OpTypeVector %int 4
         %rq = OpTypeRayQueryKHR
      %rq_fp = OpTypePointer Function %rq
     %int_fp = OpTypePointer Function %int
         %as = OpTypeAccelerationStructureKHR
      %as_uc = OpTypePointer UniformConstant %as
        %img = OpTypeImage %int 3D 0 0 0 2 R32i
     %img_uc = OpTypePointer UniformConstant %img
   %v3uint_in = OpTypePointer Input %v3uint
 %fn_wrapper = OpTypeFunction %int %rq_fp %int %rq
      %wg_id = OpVariable %v3uint_in Input
   %wg_count = OpVariable %v3uint_in Input
       %tlas = OpVariable %as_uc UniformConstant
      %image = OpVariable %img_uc UniformConstant
      %int_0 = OpConstant %int 0
      %int_1 = OpConstant %int 1
     %uint_0 = OpConstant %uint 0
   %uint_255 = OpConstant %uint 255
   %float_half = OpConstant %float 0.5
   %float_z = OpConstant %float 0.2
   %float_tmin = OpConstant %float 0.0001
   %float_tmax = OpConstant %float 9
    %float_0 = OpConstant %float 0
   %float_m1 = OpConstant %float -1
    %down = OpConstantComposite %v3float %float_0 %float_0 %float_m1

       %main = OpFunction %void None %fn_void
      %entry = OpLabel
      %query = OpVariable %rq_fp Function
         %id = OpLoad %v3uint %wg_id
      %count = OpLoad %v3uint %wg_count
        %pos = OpBitcast %v3int %id
       %idx = OpCompositeExtract %uint %id 0
       %idy = OpCompositeExtract %uint %id 1
        %nx = OpCompositeExtract %uint %count 0
        %ny = OpCompositeExtract %uint %count 1
       %fx = OpConvertUToF %float %idx
       %fy = OpConvertUToF %float %idy
      %fnx = OpConvertUToF %float %nx
      %fny = OpConvertUToF %float %ny
      %cx0 = OpFAdd %float %fx %float_half
      %cy0 = OpFAdd %float %fy %float_half
       %cx = OpFDiv %float %cx0 %fnx
       %cy = OpFDiv %float %cy0 %fny
      %org = OpCompositeConstruct %v3float %cx %cy %float_z
     %accel = OpLoad %as %tlas
               OpRayQueryInitializeKHR %query %accel %uint_0 %uint_255 %org %float_tmin %down %float_tmax
       %bare = OpLoad %rq %query
     %result = OpFunctionCall %int %wrapper %query %int_0 %bare
      %texel = OpCompositeConstruct %v4int %result %int_0 %int_0 %int_0
        %dst = OpLoad %img %image
               OpImageWrite %dst %pos %texel SignExtend
               OpReturn
               OpFunctionEnd

    %wrapper = OpFunction %int None %fn_wrapper
     %by_ptr = OpFunctionParameter %rq_fp
    %initial = OpFunctionParameter %int
    %by_val = OpFunctionParameter %rq
      %start = OpLabel
      %local = OpVariable %rq_fp Function
       %acc = OpVariable %int_fp Function
               OpStore %acc %initial
               OpBranch %head
       %head = OpLabel
               OpLoopMerge %done %latch None
               OpBranch %test
       %test = OpLabel
       %more = OpRayQueryProceedKHR %bool %by_ptr
               OpBranchConditional %more %body %done
       %body = OpLabel
               OpStore %acc %int_1
               OpStore %local %by_val
               OpRayQueryConfirmIntersectionKHR %local
               OpBranch %latch
      %latch = OpLabel
               OpBranch %head
       %done = OpLabel
      %final = OpLoad %int %acc
               OpReturnValue %final
               OpFunctionEnd
"#;

fn run(env: &Env, p: &Params) -> TestResult {
    env.require_ray_query()?;
    let code = if p.test == UsingWrapperFunction { env.spirv_asm(WRAPPER_SPIRV)? } else { env.glsl(&body(p))? };
    let mut expected = expected_values(p);
    let walking = matches!(
        p.test,
        Flow | PrimitiveId
            | InstanceId
            | InstanceCustomIndex
            | IntersectionT
            | ObjectRayOrigin
            | ObjectRayDirection
            | ObjectToWorld
            | WorldToObject
    );
    let per_square =
        matches!(p.test, SbtOffsetCandidate | SbtOffsetCommitted | Terminate | TypeCandidate | TypeCommitted);
    let got = image_dispatch(env, &code, vk::Format::R32_SINT, (W, H, p.depth), 0, &[], |env, cmd| {
        let s = if walking {
            walking_scene(env, cmd, p, &mut expected)?
        } else if per_square {
            per_square_scene(env, cmd, p)?
        } else {
            grid_scene(env, cmd, p)?
        };
        Ok((s.tlas, s.keep))
    })?;
    let got: Vec<i32> = got.into_iter().map(|v| v as i32).collect();
    verify(p, &got, &expected)
}

fn verify(p: &Params, got: &[i32], want: &[i32]) -> TestResult {
    let n = (W * H) as usize;
    let eps = fixed_point_eps();
    let close = |a: i32, b: i32| ((a as f32 / FIXED_POINT_DIVISOR) - (b as f32 / FIXED_POINT_DIVISOR)).abs() <= eps;
    let mut bad = Vec::new();
    match p.test {
        // Fixed-point scalar, vector and matrix outputs compare within 1e-3.
        IntersectionT => (0..n).filter(|&i| !close(got[i], want[i])).for_each(|i| bad.push(i)),
        ObjectRayOrigin | ObjectRayDirection | GetWorldRayOrigin | GetWorldRayDirection => {
            (0..3 * n).filter(|&i| !close(got[i], want[i])).for_each(|i| bad.push(i))
        }
        ObjectToWorld | WorldToObject => (0..12 * n).filter(|&i| !close(got[i], want[i])).for_each(|i| bad.push(i)),
        // Barycentrics may come back in any order of the three components.
        BarycentricsCandidate | BarycentricsCommitted => {
            for sq in 0..n {
                let mut used = [false; 3];
                for c in 0..3 {
                    if let Some(e) = (0..3).find(|&e| !used[e] && close(got[c * n + sq], want[e * n + sq])) {
                        used[e] = true;
                    }
                }
                if used.iter().any(|u| !u) {
                    bad.push(sq);
                }
            }
        }
        _ => (0..n).filter(|&i| got[i] != want[i]).for_each(|i| bad.push(i)),
    }
    if bad.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = bad
        .iter()
        .take(6)
        .map(|&i| {
            let (layer, sq) = (i / n, i % n);
            format!("pixel ({},{}) layer {layer}: got {}, expected {}", sq % 8, sq / 8, got[i], want[i])
        })
        .collect();
    crate::fail!("{} mismatches: {}", bad.len(), list.join("; "))
}
