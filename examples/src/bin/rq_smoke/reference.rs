//! Brute-force CPU reference: every ray against every triangle of every instance, in f64,
//! no acceleration structure. It reports all intersections; the passes decide which one
//! a ray query commits (see `check.rs`).

use crate::scene::{Ray, Scene};
use ash::vk::{GeometryFlagsKHR, GeometryInstanceFlagsKHR};
use vortex_examples::Mat3x4;

type V3 = [f64; 3];

/// A hit closer to a triangle edge than this (in barycentric units) may be reported on
/// either side of the edge by an f32 implementation.
const EDGE_EPSILON: f64 = 1e-5;
/// Hits whose t differ by less than this, relative, cannot be ordered reliably in f32.
pub const T_TIE: f64 = 1e-5;
/// Below this |cos| between the ray and the triangle's normal (the ray within ~0.6° of
/// the plane), f32 errors in the hit point grow like 1/cos, and so do the tolerances.
const GRAZING_COS: f64 = 1e-2;
/// The shaders' cull mask (rayQueryInitializeEXT's cullMask).
const CULL_MASK: u8 = 0xff;

/// One ray/triangle intersection.
#[derive(Clone, Debug)]
pub struct Hit {
    pub t: f64,
    pub instance: usize,
    pub custom_index: u32,
    pub geometry: usize,
    pub primitive: usize,
    /// (u, v): weights of the second and third vertex.
    pub barycentrics: [f64; 2],
    pub front_face: bool,
    /// After geometry and instance flags: opaque hits commit without asking the shader.
    pub opaque: bool,
    /// Near an edge or a range end: an implementation may or may not report it.
    pub marginal: bool,
    /// How much a grazing angle amplifies f32 error in t and the barycentrics (>= 1).
    pub error_scale: f64,
}

struct RefInstance {
    /// World to object space.
    inverse: [[f64; 4]; 3],
    blas: usize,
    custom_index: u32,
    mask: u8,
    flags: GeometryInstanceFlagsKHR,
}

struct RefGeometry {
    /// Vertices after the geometry transform: the triangles the BLAS holds.
    triangles: Vec<[V3; 3]>,
    opaque: bool,
}

pub struct Reference {
    instances: Vec<RefInstance>,
    blases: Vec<Vec<RefGeometry>>,
}

impl Reference {
    pub fn new(scene: &Scene) -> Self {
        let blases = scene
            .blases
            .iter()
            .map(|geometries| {
                geometries
                    .iter()
                    .map(|g| {
                        let transform = to_f64(&g.transform.unwrap_or(Mat3x4::IDENTITY));
                        let vertex = |i: usize| apply(&transform, g.vertices[i].map(f64::from), 1.0);
                        RefGeometry {
                            triangles: (0..g.triangle_count()).map(|p| g.triangle(p).map(vertex)).collect(),
                            opaque: g.flags.contains(GeometryFlagsKHR::OPAQUE),
                        }
                    })
                    .collect()
            })
            .collect();
        let instances = scene
            .instances
            .iter()
            .map(|inst| RefInstance {
                inverse: invert(&to_f64(&inst.transform)),
                blas: inst.blas,
                custom_index: inst.custom_index,
                mask: inst.mask,
                flags: inst.flags,
            })
            .collect();
        Reference { instances, blases }
    }

    /// Every intersection of `ray` with t in [tmin, tmax], plus marginal ones just outside
    /// (slightly past an edge or a range end).
    pub fn intersect_all(&self, ray: &Ray) -> Vec<Hit> {
        let (tmin, tmax) = (f64::from(ray.tmin), f64::from(ray.tmax));
        let mut hits = Vec::new();
        for (instance, inst) in self.instances.iter().enumerate() {
            if inst.mask & CULL_MASK == 0 {
                continue;
            }
            // Object-space ray. The direction is transformed but not renormalised, so t
            // means the same in both spaces.
            let origin = apply(&inst.inverse, ray.origin.map(f64::from), 1.0);
            let direction = apply(&inst.inverse, ray.direction.map(f64::from), 0.0);
            for (geometry, geom) in self.blases[inst.blas].iter().enumerate() {
                let opaque = if inst.flags.contains(GeometryInstanceFlagsKHR::FORCE_OPAQUE) {
                    true
                } else if inst.flags.contains(GeometryInstanceFlagsKHR::FORCE_NO_OPAQUE) {
                    false
                } else {
                    geom.opaque
                };
                let flip = inst.flags.contains(GeometryInstanceFlagsKHR::TRIANGLE_FLIP_FACING);
                for (primitive, tri) in geom.triangles.iter().enumerate() {
                    let Some(x) = intersect(origin, direction, tri) else { continue };
                    let near_range_end = |end: f64| (x.t - end).abs() <= T_TIE * end.abs().max(1.0);
                    if x.t < tmin && !near_range_end(tmin) || x.t > tmax && !near_range_end(tmax) {
                        continue;
                    }
                    hits.push(Hit {
                        t: x.t,
                        instance,
                        custom_index: inst.custom_index,
                        geometry,
                        primitive,
                        barycentrics: [x.u, x.v],
                        front_face: x.front_face != flip,
                        opaque,
                        marginal: x.marginal || near_range_end(tmin) || near_range_end(tmax),
                        error_scale: x.error_scale,
                    });
                }
            }
        }
        hits
    }
}

struct Intersection {
    t: f64,
    u: f64,
    v: f64,
    /// Front-facing by Vulkan's default rule (before TRIANGLE_FLIP_FACING).
    front_face: bool,
    marginal: bool,
    error_scale: f64,
}

/// Möller–Trumbore, accepting points up to EDGE_EPSILON (scaled for grazing rays) outside
/// the triangle, flagged marginal. Returns None for rays parallel to the triangle's plane.
fn intersect(origin: V3, direction: V3, [v0, v1, v2]: &[V3; 3]) -> Option<Intersection> {
    let (e1, e2) = (sub(*v1, *v0), sub(*v2, *v0));
    let p = cross(direction, e2);
    let det = dot(e1, p);
    let normal = cross(e1, e2);
    // det = e1 . (d x e2) = -d . (e1 x e2)
    let cos = det.abs() / (length(direction) * length(normal));
    if cos == 0.0 || !cos.is_finite() {
        return None;
    }
    let s = sub(origin, *v0);
    let q = cross(s, e1);
    let (u, v, t) = (dot(s, p) / det, dot(direction, q) / det, dot(e2, q) / det);
    let error_scale = (GRAZING_COS / cos).max(1.0);
    let edge_distance = u.min(v).min(1.0 - u - v);
    if edge_distance < -EDGE_EPSILON * error_scale {
        return None;
    }
    Some(Intersection {
        t,
        u,
        v,
        // Vulkan decides facing by the sign of the triangle's area in ray space, where
        // the object-space ray runs along -z: front-facing exactly when
        // dot(direction, (v1 - v0) x (v2 - v0)) < 0, i.e. det > 0. Seen from the ray
        // origin looking along the ray, in a right-handed frame, the vertices then run
        // counterclockwise (the spec's "clockwise" note assumes a left-handed frame).
        // It is decided in object space on the vertices as built (after the geometry
        // transform), so a mirroring instance transform does not change it but a
        // mirroring geometry transform does. lavapipe agrees on every hit of this
        // example, which has both kinds of mirror.
        front_face: det > 0.0,
        marginal: edge_distance < EDGE_EPSILON * error_scale,
        error_scale,
    })
}

fn to_f64(m: &Mat3x4) -> [[f64; 4]; 3] {
    m.0.map(|row| row.map(f64::from))
}

/// `m * (p, w)`: a point for w = 1, a direction for w = 0.
fn apply(m: &[[f64; 4]; 3], p: V3, w: f64) -> V3 {
    std::array::from_fn(|r| m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3] * w)
}

/// Inverse of an affine 3x4 transform: [A | b]^-1 = [A^-1 | -A^-1 b].
fn invert(m: &[[f64; 4]; 3]) -> [[f64; 4]; 3] {
    let col = |c: usize| [m[0][c], m[1][c], m[2][c]];
    let (a, b, c) = (col(0), col(1), col(2));
    let det = dot(a, cross(b, c));
    // Rows of A^-1 are the cross products of A's columns over det.
    let rows = [cross(b, c), cross(c, a), cross(a, b)].map(|r| r.map(|x| x / det));
    let translation = col(3);
    rows.map(|r| [r[0], r[1], r[2], -dot(r, translation)])
}

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn length(a: V3) -> f64 {
    dot(a, a).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRIANGLE: [V3; 3] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];

    #[test]
    fn hand_solvable_hit() {
        // Seed 004's fixture: t = 1, u = v = 0.25.
        let x = intersect([0.25, 0.25, 1.0], [0.0, 0.0, -1.0], &TRIANGLE).unwrap();
        assert_eq!((x.t, x.u, x.v, x.marginal), (1.0, 0.25, 0.25, false));
    }

    #[test]
    fn front_face_is_counterclockwise_seen_along_the_ray() {
        // Seen from +z looking down -z (right-handed) the vertices run counterclockwise.
        let from_above = intersect([0.25, 0.25, 1.0], [0.0, 0.0, -1.0], &TRIANGLE).unwrap();
        let from_below = intersect([0.25, 0.25, -1.0], [0.0, 0.0, 1.0], &TRIANGLE).unwrap();
        assert!(from_above.front_face && !from_below.front_face);
    }

    #[test]
    fn scaled_instance_preserves_t() {
        let m = to_f64(&Mat3x4::compose(&[Mat3x4::scale(2.0, 3.0, 4.0), Mat3x4::translation(1.0, 2.0, 3.0)]));
        let inv = invert(&m);
        let world_origin = apply(&m, [0.25, 0.25, 1.0], 1.0);
        let world_dir = apply(&m, [0.0, 0.0, -1.0], 0.0);
        let x = intersect(apply(&inv, world_origin, 1.0), apply(&inv, world_dir, 0.0), &TRIANGLE).unwrap();
        assert!((x.t - 1.0).abs() < 1e-12 && (x.u - 0.25).abs() < 1e-12);
    }

    #[test]
    fn edge_hits_are_marginal_and_outside_hits_are_none() {
        assert!(intersect([0.5, 0.5, 1.0], [0.0, 0.0, -1.0], &TRIANGLE).unwrap().marginal);
        assert!(intersect([0.6, 0.6, 1.0], [0.0, 0.0, -1.0], &TRIANGLE).is_none());
    }
}
