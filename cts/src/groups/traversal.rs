//! `traversal_control.compute_shader.*` (C1): after the first candidate, either commit it
//! (confirm a triangle, generate an AABB hit at t = 0.5) or skip it, proceed again, and
//! store the committed type; and `watertightness.*.comp.*` (C1): 65,536 random triangles
//! (or AABBs) tiling the unit square with shared edges, one ray per pixel of a 256x256
//! grid, which must hit at least once (`nomiss`) or exactly once (`singlehit`).

use super::common::image_dispatch;
use crate::case::{Case, TestResult, ROOT};
use crate::fw::{BlasBuilder, Env, Geometry, Instance, TlasBuilder};
use ash::vk;

pub fn register_traversal_control(cases: &mut Vec<Case>) {
    for stage in super::LONG_STAGES.iter().filter(|s| **s == "compute_shader") {
        for (generate, test) in [(true, "generate_intersection"), (false, "skip_intersection")] {
            for (triangles, g) in [(true, "triangles"), (false, "aabbs")] {
                cases.push(Case::new(format!("{ROOT}.traversal_control.{stage}.{test}.{g}"), move |env| {
                    traversal_control(env, generate, triangles)
                }));
            }
        }
    }
}

fn traversal_control(env: &Env, generate: bool, triangles: bool) -> TestResult {
    env.require_ray_query()?;
    let (w, h) = (8u32, 8u32);
    let (cand, commit, committed) = if triangles {
        ("gl_RayQueryCandidateIntersectionTriangleEXT", "rayQueryConfirmIntersectionEXT(rq);", 1u32)
    } else {
        ("gl_RayQueryCandidateIntersectionAABBEXT", "rayQueryGenerateIntersectionEXT(rq, 0.5);", 2u32)
    };
    let commit = if generate { commit } else { "" };
    let src = format!(
        "#version 460 core
#extension GL_EXT_ray_query : require
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(r32ui, set = 0, binding = 0) uniform uimage3D result;
layout(set = 0, binding = 1) uniform accelerationStructureEXT scene;

void main()
{{
  ivec3 cell = ivec3(gl_GlobalInvocationID);
  vec3 org = vec3(float(cell.x) + 0.5, float(cell.y) + 0.5, 0.5);
  uvec2 r = uvec2(0u);
  rayQueryEXT rq;
  rayQueryInitializeEXT(rq, scene, 0u, 0xFFu, org, 0.0, vec3(0.0, 0.0, -1.0), 1.0);
  if (rayQueryProceedEXT(rq) && rayQueryGetIntersectionTypeEXT(rq, false) == {cand}) {{
    r.y = 1u;
    {commit}
    rayQueryProceedEXT(rq);
    r.x = rayQueryGetIntersectionTypeEXT(rq, true);
  }}
  imageStore(result, ivec3(cell.xy, 0), uvec4(r.x, 0u, 0u, 0u));
  imageStore(result, ivec3(cell.xy, 1), uvec4(r.y, 0u, 0u, 0u));
}}
"
    );
    let code = env.glsl(&src)?;
    let got = image_dispatch(env, &code, vk::Format::R32_UINT, (w, h, 2), 0xFF, &[], |env, cmd| {
        let (lo, hi) = (1.0f32, 7.0f32);
        let g = if triangles {
            Geometry::triangles(vec![
                [lo, hi, 0.0],
                [lo, lo, 0.0],
                [hi, hi, 0.0],
                [hi, hi, 0.0],
                [lo, lo, 0.0],
                [hi, lo, 0.0],
            ])
        } else {
            Geometry::aabbs(vec![[lo, lo, -0.1], [hi, hi, 0.1]])
        };
        let blas = BlasBuilder { geometries: vec![g], ..Default::default() }.record(env, cmd)?;
        let tlas = TlasBuilder { instances: vec![Instance::new(&blas)], ..Default::default() }.record(env, cmd)?;
        Ok((tlas.handle, vec![blas, tlas]))
    })?;
    let mut bad = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let inside = (1..7).contains(&x) && (1..7).contains(&y);
            let want = if inside { (if generate { committed } else { 0 }, 1) } else { (0, 0) };
            let i = (y * w + x) as usize;
            let have = (got[i], got[(w * h) as usize + i]);
            if have != want {
                bad.push(format!("({x},{y}): got {have:?}, expected {want:?}"));
            }
        }
    }
    if !bad.is_empty() {
        crate::fail!("{} cells wrong: {}", bad.len(), bad.iter().take(6).cloned().collect::<Vec<_>>().join("; "));
    }
    Ok(())
}

/// dEQP's xorshift128 generator (deRandom), enough to draw the random tilings.
pub struct Random {
    x: u32,
    y: u32,
    z: u32,
    w: u32,
}

impl Random {
    pub fn new(seed: u32) -> Random {
        Random {
            x: (seed.wrapping_neg()) ^ 123_456_789,
            y: 362_436_069u32.wrapping_mul(seed),
            z: 521_288_629 ^ (seed >> 7),
            w: 88_675_123 ^ (seed << 3),
        }
    }
    pub fn next_u32(&mut self) -> u32 {
        let w = self.w;
        let t = self.x ^ (self.x << 11);
        self.x = self.y;
        self.y = self.z;
        self.z = w;
        self.w = w ^ (w >> 19) ^ (t ^ (t >> 8));
        w
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u32() & 0x0FFF_FFFF) as f32 / (0x0FFF_FFFFu32 as f32 + 1.0)
    }
    pub fn float(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    /// Uniform in [lo, hi].
    pub fn int(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.next_u32() % (hi - lo + 1)
    }
}

const WT_SIZE: u32 = 256;

fn edge(a: [f32; 2], b: [f32; 2]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

fn heron(a: f32, b: f32, c: f32) -> f32 {
    let s = (a + b + c) / 2.0;
    let q = s * (s - a) * (s - b) * (s - c);
    if q <= 0.0 {
        0.0
    } else {
        q.sqrt()
    }
}

/// The watertight triangle tiling: eight triangles fanned around the centre pixel's
/// centre, then triangles split at random interior points until there are `count`.
/// Vertices are shared between neighbours, so every ray must find exactly one triangle.
pub fn watertight_triangles(rng: &mut Random, count: usize) -> Vec<[f32; 3]> {
    let c = 0.5 - 0.5 / WT_SIZE as f32;
    let mut v: Vec<[f32; 2]> =
        vec![[0.0, 0.0], [c, 0.0], [1.0, 0.0], [0.0, c], [c, c], [1.0, c], [0.0, 1.0], [c, 1.0], [1.0, 1.0]];
    let mut tris: Vec<[usize; 3]> =
        vec![[0, 4, 1], [1, 4, 2], [2, 4, 5], [5, 4, 8], [8, 4, 7], [7, 4, 6], [6, 4, 3], [3, 4, 0]];
    let min_len = 1.0 / (10 * WT_SIZE * WT_SIZE) as f32;
    while tris.len() < count {
        let n = loop {
            let n = rng.int(0, tris.len() as u32 - 1) as usize;
            let [a, b, cc] = tris[n].map(|i| v[i]);
            let (ab, bc, ca) = (edge(a, b), edge(b, cc), edge(cc, a));
            if ab >= min_len && bc >= min_len && ca >= min_len && heron(ab, bc, ca) >= min_len {
                break n;
            }
        };
        let [p, q, r] = tris[n];
        let (alpha, beta) = (rng.float(0.2, 0.8), rng.float(0.2, 0.8));
        let mix = |a: [f32; 2], b: [f32; 2], t: f32| [a[0] * t + b[0] * (1.0 - t), a[1] * t + b[1] * (1.0 - t)];
        let d = mix(mix(v[p], v[q], alpha), v[r], beta);
        let new = v.len();
        v.push(d);
        tris.push([q, r, new]);
        tris.push([p, r, new]);
        tris[n] = [p, q, new];
    }
    let z: Vec<f32> = (0..v.len()).map(|_| -rng.float(0.01, 0.99)).collect();
    tris.iter().flat_map(|t| t.map(|i| [v[i][0], v[i][1], z[i]])).collect()
}

/// The watertight AABB tiling: boxes split at random interior points into four.
pub fn watertight_aabbs(rng: &mut Random, count: usize) -> Vec<[f32; 3]> {
    let c = 0.5 - 0.5 / WT_SIZE as f32;
    let mut v: Vec<[f32; 2]> = vec![[0.0, 0.0], [1.0, 1.0], [c, c], [0.0, c], [c, 1.0], [c, 0.0], [1.0, c]];
    let mut boxes: Vec<[usize; 2]> = vec![[0, 2], [2, 1], [3, 4], [5, 6]];
    let min_side = 1e-6f32;
    while boxes.len() < count {
        let n = loop {
            let n = rng.int(0, boxes.len() as u32 - 1) as usize;
            let (a, b) = (v[boxes[n][0]], v[boxes[n][1]]);
            if (a[0] - b[0]).abs() >= min_side && (a[1] - b[1]).abs() >= min_side {
                break n;
            }
        };
        let (a, b) = (v[boxes[n][0]], v[boxes[n][1]]);
        let (alpha, beta) = (rng.float(0.2, 0.8), rng.float(0.2, 0.8));
        let d = [a[0] + (b[0] - a[0]) * alpha, a[1] + (b[1] - a[1]) * beta];
        if d[0] <= a[0] || d[0] >= b[0] || d[1] <= a[1] || d[1] >= b[1] {
            continue;
        }
        let bi = boxes[n][1];
        let di = v.len();
        v.extend([d, [a[0], d[1]], [d[0], b[1]], [d[0], a[1]], [b[0], d[1]]]);
        boxes[n][1] = di;
        boxes.push([di, bi]);
        boxes.push([di + 1, di + 2]);
        boxes.push([di + 3, di + 4]);
    }
    let mut out = Vec::with_capacity(2 * boxes.len());
    for [ai, bi] in boxes {
        let az = -rng.float(0.1, 0.5);
        out.push([v[ai][0], v[ai][1], az]);
        out.push([v[bi][0], v[bi][1], az + 0.01]);
    }
    out
}

pub fn register_watertightness(cases: &mut Vec<Case>) {
    for (single, test) in [(false, "nomiss"), (true, "singlehit")] {
        for (triangles, g) in [(true, "triangles"), (false, "aabbs")] {
            if single && !triangles {
                continue;
            }
            cases.push(Case::new(format!("{ROOT}.watertightness.{test}.comp.{g}"), move |env| {
                watertightness(env, single, triangles)
            }));
        }
    }
}

fn watertightness(env: &Env, single: bool, triangles: bool) -> TestResult {
    env.require_ray_query()?;
    let (cand, commit) = if triangles {
        ("gl_RayQueryCandidateIntersectionTriangleEXT", "rayQueryConfirmIntersectionEXT(q);")
    } else {
        ("gl_RayQueryCandidateIntersectionAABBEXT", "rayQueryGenerateIntersectionEXT(q, 0.5);")
    };
    let flags = if triangles { "gl_RayFlagsNoOpaqueEXT" } else { "0u" };
    let src = format!(
        "#version 460 core
#extension GL_EXT_ray_query : require
layout(set = 0, binding = 0, r32i) uniform iimage3D result;
layout(set = 0, binding = 1) uniform accelerationStructureEXT scene;

void main()
{{
  ivec3 pos = ivec3(gl_WorkGroupID);
  ivec3 size = ivec3(gl_NumWorkGroups);
  vec3 org = vec3((float(pos.x) + 0.5) / float(size.x), (float(pos.y) + 0.5) / float(size.y), 0.0);
  uint hits = 0u;
  rayQueryEXT q;
  rayQueryInitializeEXT(q, scene, {flags}, 0xFFu, org, 0.0, vec3(0.0, 0.0, -1.0), 9.0);
  while (rayQueryProceedEXT(q)) {{
    if (rayQueryGetIntersectionTypeEXT(q, false) == {cand}) {{
      {commit}
      hits++;
    }}
  }}
  imageStore(result, pos, ivec4(int(hits), 0, 0, 0));
}}
"
    );
    let code = env.glsl(&src)?;
    let count = (WT_SIZE * WT_SIZE) as usize;
    let got = image_dispatch(env, &code, vk::Format::R32_SINT, (WT_SIZE, WT_SIZE, 1), 0, &[], |env, cmd| {
        let mut rng = Random::new(0);
        let data = if triangles { watertight_triangles(&mut rng, count) } else { watertight_aabbs(&mut rng, count) };
        let blas =
            BlasBuilder { geometries: vec![Geometry::new(data, triangles)], ..Default::default() }.record(env, cmd)?;
        let tlas = TlasBuilder { instances: vec![Instance::new(&blas)], ..Default::default() }.record(env, cmd)?;
        Ok((tlas.handle, vec![blas, tlas]))
    })?;
    let bad: Vec<(usize, i32)> =
        got.iter().map(|&v| v as i32).enumerate().filter(|&(_, v)| if single { v != 1 } else { v <= 0 }).collect();
    if !bad.is_empty() {
        let list: Vec<String> = bad
            .iter()
            .take(6)
            .map(|(i, v)| format!("({},{}): {v} hits", i % WT_SIZE as usize, i / WT_SIZE as usize))
            .collect();
        crate::fail!("{} of {count} rays wrong: {}", bad.len(), list.join("; "));
    }
    Ok(())
}
