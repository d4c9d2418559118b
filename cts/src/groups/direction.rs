//! `direction_length.*` and `inside_aabbs.*` (C1): one ray through a rotated instance.
//!
//! direction_length: a triangle (or AABB) around (0, 0, 5) in object space, a ray from
//! (0, 0, 1) along (0, 0, s) for a scaling factor s, everything rotated by the instance
//! transform; the reported T must be the distance in units of the unnormalised direction,
//! 4 / s (within 1e-3; AABB candidates report tmin, which is set just below it).
//! inside_aabbs: the ray starts inside an AABB spanning z = 0..5 and ends at t = 0, inside,
//! at the edge or outside; the AABB candidate must be reported, with tmin = 0.

use super::common::{compute_dispatch, Keep};
use super::traversal::Random;
use crate::case::{Case, TestResult, ROOT};
use crate::fw::{Binding, BlasBuilder, Buffer, Env, Geometry, Instance, TlasBuilder, Transform};
use ash::vk;

#[derive(Clone, Copy, Debug, PartialEq)]
enum RayEnd {
    Cross,
    Zero,
    Inside,
    Edge,
    Outside,
}

#[derive(Clone, Copy, Debug)]
struct Params {
    triangles: bool,
    scale: f32,
    rotation: (f32, f32),
    arrays_of_pointers: bool,
    end: RayEnd,
}

/// The scaling factors (1 and five random ones in [0.5, 10]) and rotations (none and four
/// random pairs of angles about X and Y) of a group, from the group's fixed seed.
fn factors(seed: u32) -> (Vec<f32>, Vec<(f32, f32)>) {
    let mut rnd = Random::new(seed);
    let mut scales = vec![1.0f32];
    for _ in 0..5 {
        scales.push(rnd.unit() * (10.0 - 0.5) + 0.5);
    }
    let tau = std::f32::consts::PI * 2.0;
    let mut rotations = vec![(0.0f32, 0.0f32)];
    for _ in 0..4 {
        rotations.push((rnd.unit() * tau, rnd.unit() * tau));
    }
    (scales, rotations)
}

pub fn register(cases: &mut Vec<Case>) {
    let (scales, rotations) = factors(1_614_686_501);
    let mut counter = 0u32;
    for (triangles, g) in [(true, "triangles"), (false, "aabbs")] {
        for (si, &scale) in scales.iter().enumerate() {
            for (ri, &rotation) in rotations.iter().enumerate() {
                let p = Params {
                    triangles,
                    scale,
                    rotation,
                    arrays_of_pointers: counter.is_multiple_of(2),
                    end: RayEnd::Cross,
                };
                counter += 1;
                cases.push(Case::new(
                    format!("{ROOT}.direction_length.{g}.scaling_factor_{si}.rotation_{ri}"),
                    move |env| run(env, &p),
                ));
            }
        }
    }
}

pub fn register_inside_aabbs(cases: &mut Vec<Case>) {
    let (scales, rotations) = factors(1_621_948_244);
    for (end, name) in
        [(RayEnd::Zero, "tmax_zero"), (RayEnd::Inside, "inside"), (RayEnd::Edge, "edge"), (RayEnd::Outside, "outside")]
    {
        for (si, &scale) in scales.iter().enumerate() {
            for (ri, &rotation) in rotations.iter().enumerate() {
                let p = Params { triangles: false, scale, rotation, arrays_of_pointers: false, end };
                cases.push(Case::new(
                    format!("{ROOT}.inside_aabbs.ray_end_{name}.scaling_factor_{si}.rotation_{ri}"),
                    move |env| run(env, &p),
                ));
            }
        }
    }
}

/// Row-major 3x3 product.
fn mul(a: [[f32; 3]; 3], b: [[f32; 3]; 3]) -> [[f32; 3]; 3] {
    let mut o = [[0.0; 3]; 3];
    for (r, row) in o.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[r][k] * b[k][c]).sum();
        }
    }
    o
}

fn apply(m: &[[f32; 3]; 3], v: [f32; 3]) -> [f32; 3] {
    [0, 1, 2].map(|r| m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2])
}

const SHADER: &str = "#version 460 core
#extension GL_EXT_ray_query : require
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 1, std430) buffer Result { float t; } result;
layout(push_constant, std430) uniform Ray {
  vec4 origin;
  vec4 direction;
  float tmin;
  float tmax;
} ray;

void main()
{
  float t = -10000.0;
  rayQueryEXT q;
  rayQueryInitializeEXT(q, scene, gl_RayFlagsNoneEXT, 0xFFu, ray.origin.xyz, ray.tmin, ray.direction.xyz, ray.tmax);
  while (rayQueryProceedEXT(q)) {
    uint kind = rayQueryGetIntersectionTypeEXT(q, false);
    if (kind == gl_RayQueryCandidateIntersectionTriangleEXT)
      t = rayQueryGetIntersectionTEXT(q, false);
    else if (kind == gl_RayQueryCandidateIntersectionAABBEXT)
      t = ray.tmin;
  }
  result.t = t;
}
";

fn run(env: &Env, p: &Params) -> TestResult {
    if !env.has_extension(ash::khr::acceleration_structure::NAME) || !env.has_extension(ash::khr::ray_query::NAME) {
        crate::not_supported!("VK_KHR_acceleration_structure and VK_KHR_ray_query are required");
    }
    let code = env.glsl(SHADER)?;
    let (ax, ay) = p.rotation;
    let rx = [[1.0, 0.0, 0.0], [0.0, ax.cos(), -ax.sin()], [0.0, ax.sin(), ax.cos()]];
    let ry = [[ay.cos(), 0.0, -ay.sin()], [0.0, 1.0, 0.0], [ay.sin(), 0.0, ay.cos()]];
    let m = mul(rx, ry);
    // The instance transform is the transpose of m; world = transform * object.
    let t: [[f32; 3]; 3] = [0, 1, 2].map(|r| [m[0][r], m[1][r], m[2][r]]);
    let transform: Transform = [0, 1, 2].map(|r| [t[r][0], t[r][1], t[r][2], 0.0]);
    let origin = apply(&t, [0.0, 0.0, 1.0]);
    let direction = apply(&t, [0.0, 0.0, p.scale]);
    let distance = 4.0 / p.scale;
    let (tmin, tmax) = match p.end {
        RayEnd::Cross => ((distance - 0.0005).max(0.0), distance + 0.0005),
        RayEnd::Zero => (0.0, 0.0),
        RayEnd::Inside => (0.0, distance / 2.0),
        RayEnd::Edge => (0.0, distance),
        RayEnd::Outside => (0.0, distance + 1.0),
    };
    let mut push = Vec::with_capacity(40);
    for f in [origin[0], origin[1], origin[2], 0.0, direction[0], direction[1], direction[2], 0.0, tmin, tmax] {
        push.extend(f32::to_le_bytes(f));
    }
    let out = Buffer::new(env, 4, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    let geometry = if p.triangles {
        Geometry::triangles(vec![[0.0, 0.5, 5.0], [-0.5, -0.5, 5.0], [0.5, -0.5, 5.0]])
    } else {
        let back = if p.end == RayEnd::Cross { 5.0 } else { 0.0 };
        Geometry::aabbs(vec![[-0.5, -0.5, back], [0.5, 0.5, 5.0]])
    };
    let bindings = [Binding::AS, Binding::SSBO];
    compute_dispatch(env, &code, &bindings, &push, (1, 1, 1), &[], |env, cmd, pipe| -> TestResult<Keep> {
        let blas = BlasBuilder {
            geometries: vec![geometry.flags(vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION)],
            ..Default::default()
        }
        .record(env, cmd)?;
        let flags = if p.triangles {
            vk::GeometryInstanceFlagsKHR::TRIANGLE_FACING_CULL_DISABLE
        } else {
            vk::GeometryInstanceFlagsKHR::empty()
        };
        let mut tlas = TlasBuilder {
            instances: vec![Instance::new(&blas).transform(transform).flags(flags)],
            ..Default::default()
        };
        tlas.opts.array_of_pointers = p.arrays_of_pointers;
        tlas.pp_geometries = p.arrays_of_pointers;
        let tlas = tlas.record(env, cmd)?;
        pipe.write_as(0, &[tlas.handle]);
        pipe.write_buffer(1, vk::DescriptorType::STORAGE_BUFFER, &out);
        Ok(vec![blas, tlas])
    })?;
    let got = out.read::<f32>()[0];
    if p.end == RayEnd::Cross {
        if (got - distance).abs() > 0.001 {
            crate::fail!("reported distance {got} differs from the expected {distance} (tolerance 0.001)");
        }
    } else if got != 0.0 {
        crate::fail!("reported distance {got} is not zero (the ray starts inside the AABB, tmin = 0)");
    }
    Ok(())
}
