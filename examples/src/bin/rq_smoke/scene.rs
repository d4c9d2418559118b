//! The rq_smoke scene: two BLASes (the bunny; a ground quad plus a see-through panel),
//! four instances of them, and a camera that sees most of it.

use ash::vk;
use vortex_examples::{parse_obj, Indices, Instance, Mat3x4, Result, TriangleGeometry, BUNNY_OBJ};

pub struct Scene {
    /// BLAS i holds `blases[i]`; geometry index j is `blases[i][j]`.
    pub blases: Vec<Vec<TriangleGeometry>>,
    /// Instance id i is `instances[i]`.
    pub instances: Vec<Instance>,
    pub camera: Camera,
}

const BUNNY: usize = 0;
const GROUND: usize = 1;

impl Scene {
    pub fn new() -> Result<Self> {
        // NO_DUPLICATE_ANY_HIT makes each candidate appear at most once, which bounds the
        // candidate count the shaders report.
        let no_dup = vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION;
        let opaque = vk::GeometryFlagsKHR::OPAQUE | no_dup;

        let bunny = parse_obj(BUNNY_OBJ)?;
        let bunny = TriangleGeometry {
            vertices: bunny.positions,
            indices: Indices::U32(bunny.indices),
            transform: None,
            flags: opaque,
        };
        // A 2x2 quad in the XZ plane, its two triangles wound the same way.
        let ground = TriangleGeometry {
            vertices: vec![[-1.0, 0.0, -1.0], [1.0, 0.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 0.0, 1.0]],
            indices: Indices::U16(vec![0, 2, 1, 0, 3, 2]),
            transform: None,
            flags: opaque,
        };
        // A non-opaque upright panel standing on the ground, unindexed, placed by a
        // geometry transform. The transform mirrors it, which reverses its facing: facing
        // is decided on the vertices as built, after the geometry transform.
        let panel = TriangleGeometry {
            vertices: vec![
                [-1.0, -1.0, 0.0],
                [1.0, -1.0, 0.0],
                [1.0, 1.0, 0.0],
                [-1.0, -1.0, 0.0],
                [1.0, 1.0, 0.0],
                [-1.0, 1.0, 0.0],
            ],
            indices: Indices::None,
            transform: Some(Mat3x4::compose(&[
                Mat3x4::scale(-0.12, 2.0, 1.0),
                Mat3x4::rotation_y(30.0),
                Mat3x4::translation(0.05, 2.0, 0.25),
            ])),
            flags: no_dup,
        };

        let instance = |blas, steps: &[Mat3x4], custom_index, flags| Instance {
            blas,
            transform: Mat3x4::compose(steps),
            custom_index,
            mask: 0xff,
            flags,
            sbt_offset: 0,
        };
        let none = vk::GeometryInstanceFlagsKHR::empty();
        let instances = vec![
            // Opaque bunny on the left, uniformly scaled.
            instance(
                BUNNY,
                &[Mat3x4::scale(0.8, 0.8, 0.8), Mat3x4::rotation_y(35.0), Mat3x4::translation(-6.0, 0.0, 0.0)],
                11,
                none,
            ),
            // Bunny on the right forced non-opaque, so its triangles become candidates.
            instance(
                BUNNY,
                &[Mat3x4::scale(0.9, 0.7, 1.1), Mat3x4::rotation_y(-50.0), Mat3x4::translation(6.0, 0.0, -3.0)],
                22,
                vk::GeometryInstanceFlagsKHR::FORCE_NO_OPAQUE,
            ),
            // The ground, stretched unevenly and turned.
            instance(GROUND, &[Mat3x4::scale(26.0, 1.0, 20.0), Mat3x4::rotation_y(15.0)], 33, none),
            // A small, mirrored, tilted bunny in front, with its facing flipped. Facing is
            // decided in object space, so the mirror leaves it alone; FLIP_FACING does not.
            instance(
                BUNNY,
                &[
                    Mat3x4::scale(-0.35, 0.35, 0.35),
                    Mat3x4::rotation_z(25.0),
                    Mat3x4::rotation_x(-20.0),
                    Mat3x4::translation(1.0, 1.5, 9.0),
                ],
                44,
                vk::GeometryInstanceFlagsKHR::TRIANGLE_FLIP_FACING,
            ),
        ];

        Ok(Scene {
            blases: vec![vec![bunny], vec![ground, panel]],
            instances,
            camera: Camera::look_at([0.0, 14.0, 20.0], [0.0, 2.0, -1.0], 45.0, 0.01, 22.0),
        })
    }
}

/// The shaders' push constants: a pinhole camera (layout matches `Camera` in
/// shaders/rq_smoke_common.glsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Camera {
    origin: [f32; 3],
    tmin: f32,
    /// Deliberately not unit length, so t is not a distance.
    forward: [f32; 3],
    tmax: f32,
    right: [f32; 4],
    up: [f32; 4],
}

/// A ray as the shaders build it, in f32.
#[derive(Clone, Copy, Debug)]
pub struct Ray {
    pub origin: [f32; 3],
    pub direction: [f32; 3],
    pub tmin: f32,
    pub tmax: f32,
}

impl Camera {
    fn look_at(eye: [f32; 3], target: [f32; 3], fov_y_degrees: f32, tmin: f32, tmax: f32) -> Self {
        let forward = normalize(sub(target, eye));
        let right = normalize(cross(forward, [0.0, 1.0, 0.0]));
        let up = cross(right, forward);
        let half = (fov_y_degrees.to_radians() / 2.0).tan();
        let scale = |v: [f32; 3], s: f32| [v[0] * s, v[1] * s, v[2] * s];
        const DIRECTION_LENGTH: f32 = 2.0;
        let (right, up) = (scale(right, half * DIRECTION_LENGTH), scale(up, half * DIRECTION_LENGTH));
        Camera {
            origin: eye,
            tmin,
            forward: scale(forward, DIRECTION_LENGTH),
            tmax,
            right: [right[0], right[1], right[2], 0.0],
            up: [up[0], up[1], up[2], 0.0],
        }
    }

    /// The ray of pixel (x, y) in a `width` x `height` grid, computed as the shader does.
    pub fn ray(&self, x: u32, y: u32, width: u32, height: u32) -> Ray {
        let ndc_x = (x as f32 + 0.5) / width as f32 * 2.0 - 1.0;
        let ndc_y = (y as f32 + 0.5) / height as f32 * 2.0 - 1.0;
        let direction = std::array::from_fn(|i| self.forward[i] + ndc_x * self.right[i] - ndc_y * self.up[i]);
        Ray { origin: self.origin, direction, tmin: self.tmin, tmax: self.tmax }
    }
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn normalize(v: [f32; 3]) -> [f32; 3] {
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    [v[0] / len, v[1] / len, v[2] / len]
}
