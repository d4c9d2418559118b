//! Scenes for the renderer and the benchmark: meshes, instances of them, a camera and a light.
//! The built-in ones are generated deterministically so every run (and every driver) sees
//! exactly the same triangles.

use crate::accel::{AccelerationStructure, AsStorage, Indices, Instance, TriangleGeometry};
use crate::context::Context;
use crate::math::Mat3x4;
use crate::obj::{parse_obj, Mesh};
use crate::BUNNY_OBJ;
use crate::{Error, Result};
use ash::vk;

/// One placed copy of a mesh.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    pub mesh: usize,
    pub transform: Mat3x4,
    /// Base colour, linear RGB.
    pub albedo: [f32; 3],
}

/// A pinhole camera.
#[derive(Clone, Copy, Debug)]
pub struct Camera {
    pub eye: [f32; 3],
    pub target: [f32; 3],
    pub up: [f32; 3],
    pub fov_y_degrees: f32,
}

#[derive(Clone, Debug)]
pub struct Scene {
    pub name: String,
    pub meshes: Vec<Mesh>,
    pub placements: Vec<Placement>,
    pub camera: Camera,
    /// Direction towards the (directional) light.
    pub light: [f32; 3],
    /// Length of ambient-occlusion rays.
    pub ao_radius: f32,
    /// The alpha-tested mesh, if any ([`Scene::with_cutout`]): its geometry is built not
    /// opaque, so renders run their alpha test (any-hit shader, or the ray query's
    /// candidate loop) on it.
    pub cutout: Option<usize>,
}

impl Scene {
    /// Triangles in the whole scene, counting every instance.
    pub fn triangle_count(&self) -> u64 {
        self.placements.iter().map(|p| self.meshes[p.mesh].triangle_count() as u64).sum()
    }

    /// Triangles the acceleration structures store (each mesh once).
    pub fn unique_triangle_count(&self) -> u64 {
        self.meshes.iter().map(|m| m.triangle_count() as u64).sum()
    }

    /// A built-in scene by name: `bunny` (default), `spheres`, `million`, `random`.
    pub fn builtin(name: &str) -> Result<Scene> {
        Scene::builtin_with(name, &SceneOptions::default())
    }

    /// A built-in scene with its main mesh subdivided and/or a different number of copies.
    pub fn builtin_with(name: &str, o: &SceneOptions) -> Result<Scene> {
        let scene = match name {
            "bunny" => {
                let mesh = o.prepare(parse_obj(BUNNY_OBJ)?)?;
                framed("bunny".into(), mesh, o.copies.unwrap_or(3))
            }
            "spheres" => spheres_of(o.prepare(sphere(100_000))?, o.copies.unwrap_or(64)),
            "million" => {
                let mut s = framed("million".into(), o.prepare(sphere(1_000_000))?, o.copies.unwrap_or(1));
                let n = s.placements.len() - 1;
                s.name =
                    format!("{n} sphere{} x {} triangles", if n == 1 { "" } else { "s" }, s.meshes[0].triangle_count());
                s
            }
            "random" => {
                if o.copies.is_some() {
                    return Err(Error::msg("the random scene is one soup; --copies does not apply"));
                }
                let mut s = random_soup(200_000, 1);
                s.meshes[0] = o.prepare(std::mem::take(&mut s.meshes[0]))?;
                s
            }
            other => return Err(Error::msg(format!("unknown scene {other:?} (bunny, spheres, million, random)"))),
        };
        o.check(&scene)?;
        Ok(scene)
    }

    /// A scene made of one OBJ file on a ground plane.
    pub fn from_obj(path: &std::path::Path) -> Result<Scene> {
        Scene::from_obj_with(path, &SceneOptions::default())
    }

    pub fn from_obj_with(path: &std::path::Path, o: &SceneOptions) -> Result<Scene> {
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::msg(format!("cannot read {}: {e}", path.display())))?;
        let mesh = o.prepare(parse_obj(&text)?)?;
        let scene = framed(path.display().to_string(), mesh, o.copies.unwrap_or(1));
        o.check(&scene)?;
        Ok(scene)
    }
}

impl Scene {
    /// The scene with an alpha-tested card added: a 1.1 x 0.9 quad standing on the ground
    /// between the camera and its target, turned 20 degrees, whose alpha test
    /// (`cutout_opaque` in `shaders/scene_shading.glsl`) punches a 6 x 6 grid of round holes
    /// in it. Rays see through the holes, and light passes them onto what lies behind.
    pub fn with_cutout(mut self) -> Scene {
        let (eye, target) = (self.camera.eye, self.camera.target);
        let at = [target[0] + 0.45, 0.0, target[2] + 0.3 * (eye[2] - target[2])];
        let transform = Mat3x4::compose(&[
            Mat3x4::translation(0.0, 0.5, 0.0),
            Mat3x4::scale(1.1, 0.9, 1.0),
            Mat3x4::rotation_y(-20.0),
            Mat3x4::translation(at[0], at[1], at[2]),
        ]);
        self.cutout = Some(self.meshes.len());
        self.placements.push(Placement { mesh: self.meshes.len(), transform, albedo: [0.85, 0.75, 0.3] });
        self.meshes.push(card());
        self.name = format!("{} + alpha-tested card", self.name);
        self
    }
}

/// A unit square in the xy plane centred on the origin, two triangles.
fn card() -> Mesh {
    Mesh {
        positions: vec![[-0.5, -0.5, 0.0], [0.5, -0.5, 0.0], [0.5, 0.5, 0.0], [-0.5, 0.5, 0.0]],
        indices: vec![0, 1, 2, 0, 2, 3],
    }
}

/// Procedural growth of a scene, for performance work: subdivide its main mesh (x4
/// triangles per level) and place more copies of it (in a grid).
#[derive(Clone, Copy, Debug, Default)]
pub struct SceneOptions {
    pub subdivide: u32,
    pub copies: Option<usize>,
}

/// Most triangles a mesh may have after subdivision, and most copies of it: beyond this the
/// host memory of the scene (and the build) is the limit, not the renderer.
pub const MAX_MESH_TRIANGLES: usize = 64 << 20;
pub const MAX_COPIES: usize = 1 << 16;

impl SceneOptions {
    fn prepare(&self, mut mesh: Mesh) -> Result<Mesh> {
        let after = mesh.triangle_count() as u128 * 4u128.saturating_pow(self.subdivide);
        if after > MAX_MESH_TRIANGLES as u128 {
            return Err(Error::msg(format!(
                "subdividing {} triangles {} times makes {after}, more than {MAX_MESH_TRIANGLES}",
                mesh.triangle_count(),
                self.subdivide
            )));
        }
        for _ in 0..self.subdivide {
            mesh = mesh.subdivided();
        }
        Ok(mesh)
    }

    fn check(&self, scene: &Scene) -> Result<()> {
        match self.copies {
            Some(0) => Err(Error::msg("--copies must be at least 1")),
            Some(n) if n > MAX_COPIES => Err(Error::msg(format!("--copies {n} is more than {MAX_COPIES}"))),
            _ if scene.placements.is_empty() => Err(Error::msg("the scene has nothing in it")),
            _ => Ok(()),
        }
    }
}

/// A scene's acceleration structures on the device: one BLAS per mesh (opaque but for the
/// alpha-tested one, [`Scene::cutout`]) and a TLAS
/// with one instance per placement (instance custom index = mesh index).
pub struct GpuScene {
    pub blases: Vec<AccelerationStructure>,
    pub tlas: AccelerationStructure,
    /// Wall time of all the builds, submission to completion.
    pub build_seconds: f64,
}

impl GpuScene {
    pub fn build(ctx: &Context, scene: &Scene) -> Result<GpuScene> {
        Self::build_in(ctx, scene, AsStorage::Memory)
    }

    /// [`GpuScene::build`] with every structure's storage placed as `placement` says.
    pub fn build_in(ctx: &Context, scene: &Scene, placement: AsStorage) -> Result<GpuScene> {
        let t0 = std::time::Instant::now();
        let blases = scene
            .meshes
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let flags =
                    if scene.cutout == Some(i) { vk::GeometryFlagsKHR::empty() } else { vk::GeometryFlagsKHR::OPAQUE };
                let g = TriangleGeometry {
                    vertices: m.positions.clone(),
                    indices: Indices::U32(m.indices.clone()),
                    transform: None,
                    flags,
                };
                AccelerationStructure::build_bottom_in(ctx, &[g], Default::default(), placement)
            })
            .collect::<Result<Vec<_>>>()?;
        let instances: Vec<Instance> = scene
            .placements
            .iter()
            .map(|p| Instance {
                blas: p.mesh,
                transform: p.transform,
                custom_index: p.mesh as u32,
                mask: 0xFF,
                flags: vk::GeometryInstanceFlagsKHR::empty(),
                sbt_offset: 0,
            })
            .collect();
        let tlas = AccelerationStructure::build_top_in(ctx, &blases, &instances, placement)?;
        Ok(GpuScene { blases, tlas, build_seconds: t0.elapsed().as_secs_f64() })
    }
}

impl Camera {
    /// The 20 floats the ray-generating shaders take as push constants: eye + tan(fov/2),
    /// forward + aspect, right, up, then `light` + `ao_radius`.
    pub fn push_floats(&self, aspect: f32, light: [f32; 3], ao_radius: f32) -> [f32; 20] {
        let forward =
            normalize([self.target[0] - self.eye[0], self.target[1] - self.eye[1], self.target[2] - self.eye[2]]);
        let right = normalize(cross(forward, self.up));
        let up = cross(right, forward);
        let tan_half = (self.fov_y_degrees.to_radians() / 2.0).tan();
        [
            self.eye[0],
            self.eye[1],
            self.eye[2],
            tan_half,
            forward[0],
            forward[1],
            forward[2],
            aspect,
            right[0],
            right[1],
            right[2],
            0.0,
            up[0],
            up[1],
            up[2],
            0.0,
            light[0],
            light[1],
            light[2],
            ao_radius,
        ]
    }
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// Bounds of a mesh.
fn bounds(m: &Mesh) -> ([f32; 3], [f32; 3]) {
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for p in &m.positions {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    (lo, hi)
}

/// A square ground plane of half-size `r` at height `y`, two triangles.
fn ground(r: f32, y: f32) -> Mesh {
    Mesh { positions: vec![[-r, y, -r], [r, y, -r], [r, y, r], [-r, y, r]], indices: vec![0, 2, 1, 0, 3, 2] }
}

/// `copies` copies of `mesh` scaled to unit height, standing on a ground plane (in a row up
/// to four, in a square grid beyond), with a camera that frames them.
fn framed(name: String, mesh: Mesh, copies: usize) -> Scene {
    let copies = copies.max(1);
    let (lo, hi) = bounds(&mesh);
    let size = (0..3).map(|k| hi[k] - lo[k]).fold(0.0f32, f32::max).max(1e-6);
    let s = 1.0 / size;
    let centre = [(lo[0] + hi[0]) / 2.0, lo[1], (lo[2] + hi[2]) / 2.0];
    let cols = if copies <= 4 { copies } else { (copies as f32).sqrt().ceil() as usize };
    let rows = copies.div_ceil(cols);
    let mut placements = Vec::new();
    let colours = [[0.8, 0.55, 0.35], [0.35, 0.6, 0.8], [0.6, 0.8, 0.4], [0.8, 0.4, 0.6]];
    for i in 0..copies {
        let (col, row) = (i % cols, i / cols);
        let x = (col as f32 - (cols - 1) as f32 / 2.0) * 1.2;
        let z = (row as f32 - (rows - 1) as f32 / 2.0) * 1.2;
        let t = Mat3x4::compose(&[
            Mat3x4::translation(-centre[0], -centre[1], -centre[2]),
            Mat3x4::scale(s, s, s),
            Mat3x4::rotation_y(25.0 * i as f32),
            Mat3x4::translation(x, 0.0, z),
        ]);
        placements.push(Placement { mesh: 0, transform: t, albedo: colours[i % colours.len()] });
    }
    let extent = cols.max(rows) as f32 * 0.6 + 0.8;
    placements.push(Placement { mesh: 1, transform: Mat3x4::IDENTITY, albedo: [0.7, 0.7, 0.7] });
    Scene {
        name,
        meshes: vec![mesh, ground(extent * 4.0, 0.0)],
        placements,
        camera: Camera {
            eye: [0.0, 0.42 * extent + 0.4, 1.35 * extent + 0.6],
            target: [0.0, 0.4, 0.0],
            up: [0.0, 1.0, 0.0],
            fov_y_degrees: 40.0,
        },
        light: normalize([0.5, 1.0, 0.6]),
        ao_radius: 0.4,
        cutout: None,
    }
}

fn normalize(v: [f32; 3]) -> [f32; 3] {
    let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    [v[0] / l, v[1] / l, v[2] / l]
}

/// The default scene: three Stanford bunnies on a ground plane.
pub fn bunny() -> Result<Scene> {
    Ok(framed("bunny".into(), parse_obj(BUNNY_OBJ)?, 3))
}

/// A UV sphere of radius 1 with about `triangles` triangles.
pub fn sphere(triangles: usize) -> Mesh {
    // 2 * rings * segments triangles (minus the pole fans' degenerate halves, kept simple).
    let n = ((triangles as f32 / 4.0).sqrt().ceil() as usize).max(3);
    let (rings, segments) = (n, 2 * n);
    let mut positions = Vec::with_capacity((rings + 1) * (segments + 1));
    for r in 0..=rings {
        let theta = std::f32::consts::PI * r as f32 / rings as f32;
        for s in 0..=segments {
            let phi = 2.0 * std::f32::consts::PI * s as f32 / segments as f32;
            positions.push([theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin()]);
        }
    }
    let mut indices = Vec::with_capacity(rings * segments * 6);
    let w = segments as u32 + 1;
    for r in 0..rings as u32 {
        for s in 0..segments as u32 {
            let (a, b, c, d) = (r * w + s, r * w + s + 1, (r + 1) * w + s, (r + 1) * w + s + 1);
            indices.extend_from_slice(&[a, c, b, b, c, d]);
        }
    }
    Mesh { positions, indices }
}

/// A sphere of about `triangles` triangles instanced `instances` times in a grid on a plane.
pub fn spheres(triangles: usize, instances: usize) -> Scene {
    spheres_of(sphere(triangles), instances)
}

/// `mesh` (a unit sphere) instanced `instances` times in a grid on a plane.
fn spheres_of(mesh: Mesh, instances: usize) -> Scene {
    let instances = instances.max(1);
    let side = (instances as f32).sqrt().ceil() as usize;
    let mut placements = Vec::new();
    for i in 0..instances {
        let (gx, gz) = ((i % side) as f32, (i / side) as f32);
        let off = (side - 1) as f32 / 2.0;
        let t = Mat3x4::compose(&[
            Mat3x4::scale(0.4, 0.4, 0.4),
            Mat3x4::translation((gx - off) * 1.0, 0.4, (gz - off) * 1.0),
        ]);
        let c = [0.3 + 0.5 * (gx / side as f32), 0.5, 0.3 + 0.5 * (gz / side as f32)];
        placements.push(Placement { mesh: 0, transform: t, albedo: c });
    }
    let half = side as f32 * 0.5 + 1.0;
    placements.push(Placement { mesh: 1, transform: Mat3x4::IDENTITY, albedo: [0.75, 0.75, 0.75] });
    Scene {
        name: format!("{instances} spheres x {} triangles", mesh.triangle_count()),
        meshes: vec![mesh, ground(half * 3.0, 0.0)],
        placements,
        camera: Camera {
            eye: [0.0, half * 0.9, half * 1.6],
            target: [0.0, 0.0, 0.0],
            up: [0.0, 1.0, 0.0],
            fov_y_degrees: 45.0,
        },
        light: normalize([0.4, 1.0, 0.3]),
        ao_radius: 0.5,
        cutout: None,
    }
}

/// About a million triangles in one BLAS: a finely tessellated sphere, framed like the bunny.
pub fn million() -> Scene {
    Scene::builtin_with("million", &SceneOptions::default()).expect("the million scene is valid")
}

/// `n` random small triangles in the unit cube (a "soup": the worst case for a BVH).
pub fn random_soup(n: usize, seed: u64) -> Scene {
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 40) as f32 / (1u64 << 24) as f32
    };
    let mut positions = Vec::with_capacity(3 * n);
    for _ in 0..n {
        let c = [next(), next(), next()];
        for _ in 0..3 {
            positions.push([c[0] + (next() - 0.5) * 0.02, c[1] + (next() - 0.5) * 0.02, c[2] + (next() - 0.5) * 0.02]);
        }
    }
    let indices = (0..3 * n as u32).collect();
    let soup = Mesh { positions, indices };
    Scene {
        name: format!("{n} random triangles"),
        meshes: vec![soup],
        placements: vec![Placement {
            mesh: 0,
            transform: Mat3x4::translation(-0.5, -0.5, -0.5),
            albedo: [0.7, 0.65, 0.6],
        }],
        camera: Camera { eye: [0.0, 0.4, 1.6], target: [0.0, 0.0, 0.0], up: [0.0, 1.0, 0.0], fov_y_degrees: 45.0 },
        light: normalize([0.3, 1.0, 0.5]),
        ao_radius: 0.05,
        cutout: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_scenes_have_the_advertised_sizes() {
        let s = spheres(100_000, 64);
        assert!((95_000..110_000).contains(&s.meshes[0].triangle_count()), "{}", s.meshes[0].triangle_count());
        assert_eq!(s.placements.len(), 65);
        assert!(million().unique_triangle_count() >= 1_000_000);
        assert_eq!(random_soup(1000, 1).triangle_count(), 1000);
        let b = bunny().unwrap();
        assert!(b.triangle_count() > 10_000);
        assert!(Scene::builtin("nope").is_err());
    }

    #[test]
    fn options_subdivide_and_copy_the_main_mesh() {
        let base = bunny().unwrap();
        let o = SceneOptions { subdivide: 2, copies: Some(300) };
        let s = Scene::builtin_with("bunny", &o).unwrap();
        assert_eq!(s.meshes[0].triangle_count(), 16 * base.meshes[0].triangle_count());
        assert_eq!(s.placements.len(), 301, "300 bunnies and the ground");
        assert!(s.triangle_count() > 1_000_000, "{}", s.triangle_count());
        // The grid stays on the ground and inside the camera's framing.
        let xs: Vec<f32> = s.placements[..300].iter().map(|p| p.transform.0[0][3]).collect();
        assert!(xs.iter().all(|x| x.abs() < 12.0), "{xs:?}");
        let err = |name: &str, o: SceneOptions| Scene::builtin_with(name, &o).unwrap_err().to_string();
        assert!(err("bunny", SceneOptions { subdivide: 0, copies: Some(0) }).contains("at least 1"));
        assert!(err("random", SceneOptions { subdivide: 0, copies: Some(2) }).contains("does not apply"));
        assert!(err("million", SceneOptions { subdivide: 7, copies: None }).contains("more than"));
        // Defaults are the plain built-ins.
        let d = Scene::builtin_with("spheres", &SceneOptions::default()).unwrap();
        assert_eq!(d.placements.len(), 65);
    }

    #[test]
    fn generation_is_deterministic() {
        let a = random_soup(100, 7);
        let b = random_soup(100, 7);
        assert_eq!(a.meshes[0].positions, b.meshes[0].positions);
    }
}
