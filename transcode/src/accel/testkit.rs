//! Test support shared by this crate's and the model's tests: a device address space to
//! upload geometry into and build structures from, the way the Vulkan layer will.

use super::{
    build, build_sizes_for, BuildError, BuildRange, BuildRequest, BuildStats, Geometry, GeometryInput, GeometryKind,
    Level, Mode, Options,
};
use std::sync::Arc;
use vortex_model::mem::{AddressSpace, MemoryMap};
use vortex_model::rtu::reference::{RefInstance, Rng};

/// `VK_FORMAT_R32G32B32_SFLOAT`.
pub const R32G32B32_SFLOAT: u32 = 106;

/// A built structure.
#[derive(Clone, Debug)]
pub struct Built {
    pub addr: u64,
    pub stats: BuildStats,
}

/// One instance for [`Device::tlas`].
#[derive(Clone, Copy, Debug)]
pub struct InstanceDesc {
    pub o2w: [f32; 12],
    pub custom: u32,
    pub mask: u8,
    pub sbt: u32,
    /// `VkGeometryInstanceFlagsKHR`.
    pub flags: u8,
    /// BLAS device address (0 = inactive instance).
    pub blas: u64,
}

impl InstanceDesc {
    pub fn new(blas: u64, o2w: [f32; 12]) -> InstanceDesc {
        InstanceDesc { o2w, custom: 0, mask: 0xff, sbt: 0, flags: 0, blas }
    }

    /// The 64-byte `VkAccelerationStructureInstanceKHR`.
    pub fn bytes(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        for (i, v) in self.o2w.iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        b[48..52].copy_from_slice(&((self.custom & 0xff_ffff) | (self.mask as u32) << 24).to_le_bytes());
        b[52..56].copy_from_slice(&((self.sbt & 0xff_ffff) | (self.flags as u32) << 24).to_le_bytes());
        b[56..64].copy_from_slice(&self.blas.to_le_bytes());
        b
    }
}

/// Translation as a 3x4.
pub fn translate(x: f32, y: f32, z: f32) -> [f32; 12] {
    [1.0, 0.0, 0.0, x, 0.0, 1.0, 0.0, y, 0.0, 0.0, 1.0, z]
}

/// An address space with helpers.
pub struct Device {
    pub space: AddressSpace,
    pub width: u32,
    /// Builder knobs every build of this device uses.
    pub opts: Options,
    /// `VkBuildAccelerationStructureFlagsKHR` of every build.
    pub flags: u32,
}

impl Device {
    pub fn new(width: u32) -> Device {
        Device { space: AddressSpace::new(), width, opts: Options::new(width), flags: 0 }
    }

    /// A device whose builds store one primitive per leaf (seed 000's format, which the RTU
    /// scenarios are written against), whatever the builder.
    pub fn one_per_leaf(width: u32) -> Device {
        Device::with_options(Options { max_leaf: Some(1), ..Options::new(width) })
    }

    /// A device in the rdna2 architecture: its builds write `abi::rdna2` structures.
    pub fn rdna2(box16: vortex_model::config::Box16) -> Device {
        Device::with_options(Options::for_arch(vortex_model::config::RtArch::Rdna2, 4, box16))
    }

    /// A device whose builds use `opts` (and its width).
    pub fn with_options(opts: Options) -> Device {
        Device { space: AddressSpace::new(), width: opts.width, opts, flags: 0 }
    }

    pub fn mem(&self) -> Arc<MemoryMap> {
        self.space.snapshot()
    }

    /// Allocates `size` zeroed bytes.
    pub fn alloc(&self, size: u64) -> u64 {
        self.space.allocate(size.max(1)).expect("host memory for the test device").base
    }

    /// Allocates and fills.
    pub fn upload(&self, bytes: &[u8]) -> u64 {
        let a = self.alloc(bytes.len() as u64);
        self.mem().write(a, bytes).unwrap();
        a
    }

    /// Builds `geometries` into a fresh allocation of the size `build_sizes` asks for.
    pub fn build(&self, level: Level, geometries: Vec<GeometryInput>) -> Result<Built, BuildError> {
        let kinds: Vec<(GeometryKind, u32)> = geometries
            .iter()
            .map(|g| {
                let k = match g.geometry {
                    Geometry::Triangles { .. } => GeometryKind::Triangles,
                    Geometry::Aabbs { .. } => GeometryKind::Aabbs,
                    Geometry::Instances { .. } => GeometryKind::Instances,
                };
                (k, g.range.primitive_count)
            })
            .collect();
        let sizes = build_sizes_for(level, &kinds, self.flags, &self.opts);
        let dst = self.alloc(sizes.as_size);
        let scratch = self.alloc(sizes.build_scratch);
        let req = BuildRequest {
            level,
            flags: self.flags,
            mode: Mode::Build,
            dst,
            dst_size: sizes.as_size,
            scratch,
            geometries,
        };
        let stats = build(&self.mem(), &req, &self.opts)?;
        Ok(Built { addr: dst, stats })
    }

    /// A triangle geometry (non-indexed R32G32B32_SFLOAT) as a build input.
    pub fn triangles(&self, tris: &[[[f32; 3]; 3]], flags: u32) -> GeometryInput {
        let bytes: Vec<u8> = tris.iter().flatten().flatten().flat_map(|v| v.to_le_bytes()).collect();
        let data = self.upload(&bytes);
        GeometryInput {
            geometry: Geometry::Triangles {
                vertex_format: R32G32B32_SFLOAT,
                vertex_data: data,
                vertex_stride: 12,
                max_vertex: (3 * tris.len()).saturating_sub(1) as u32,
                index_type: super::index_type::NONE_KHR,
                index_data: 0,
                transform_data: 0,
            },
            flags,
            range: BuildRange { primitive_count: tris.len() as u32, ..BuildRange::default() },
        }
    }

    /// An AABB geometry as a build input.
    pub fn aabbs(&self, boxes: &[([f32; 3], [f32; 3])], flags: u32) -> GeometryInput {
        let bytes: Vec<u8> =
            boxes.iter().flat_map(|(lo, hi)| lo.iter().chain(hi.iter()).flat_map(|v| v.to_le_bytes())).collect();
        let data = self.upload(&bytes);
        GeometryInput {
            geometry: Geometry::Aabbs { data, stride: 24 },
            flags,
            range: BuildRange { primitive_count: boxes.len() as u32, ..BuildRange::default() },
        }
    }

    /// An instance geometry as a build input.
    pub fn instances(&self, insts: &[InstanceDesc]) -> GeometryInput {
        let bytes: Vec<u8> = insts.iter().flat_map(|i| i.bytes()).collect();
        let data = self.upload(&bytes);
        GeometryInput {
            geometry: Geometry::Instances { data, array_of_pointers: false },
            flags: 0,
            range: BuildRange { primitive_count: insts.len() as u32, ..BuildRange::default() },
        }
    }

    /// A BLAS over triangle geometries `(triangles, geometry flags)`.
    pub fn blas(&self, geoms: &[(&[[[f32; 3]; 3]], u32)]) -> Built {
        let g = geoms.iter().map(|(t, f)| self.triangles(t, *f)).collect();
        self.build(Level::Bottom, g).expect("BLAS build")
    }

    /// A TLAS over `insts`.
    pub fn tlas(&self, insts: &[InstanceDesc]) -> Built {
        let g = vec![self.instances(insts)];
        self.build(Level::Top, g).expect("TLAS build")
    }
}

/// The rotation by `ang` radians about `axis` (need not be unit), row-major 3x3.
pub fn rot(axis: [f32; 3], ang: f32) -> [f32; 9] {
    let l = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    let (x, y, z) = (axis[0] / l, axis[1] / l, axis[2] / l);
    let (s, c) = ang.sin_cos();
    let t = 1.0 - c;
    [
        t * x * x + c,
        t * x * y - s * z,
        t * x * z + s * y,
        t * x * y + s * z,
        t * y * y + c,
        t * y * z - s * x,
        t * x * z - s * y,
        t * y * z + s * x,
        t * z * z + c,
    ]
}

/// `n` triangles with centres in `[-scale, scale]^3`, vertices within `size` of them.
pub fn random_tris(rng: &mut Rng, n: usize, scale: f32, size: f32) -> Vec<[[f32; 3]; 3]> {
    (0..n)
        .map(|_| {
            let c = [rng.range(-scale, scale), rng.range(-scale, scale), rng.range(-scale, scale)];
            std::array::from_fn(|_| std::array::from_fn(|a| c[a] + rng.range(-size, size)))
        })
        .collect()
}

/// `n` instances of randomly chosen `blases` (rotated, scaled 0.3-2 per axis, translated
/// within 8, masks cycling through 0xff, 0x01, 0x02, 0x80, custom index 1000 + i, SBT
/// offset i), and the CPU reference's view of them.
pub fn random_instances(rng: &mut Rng, blases: &[u64], n: u32) -> (Vec<InstanceDesc>, Vec<RefInstance>) {
    let mut descs = Vec::new();
    let mut refs = Vec::new();
    for i in 0..n {
        let bi = rng.below(blases.len() as u64) as usize;
        let r = rot(rng.dir(), rng.range(0.0, std::f32::consts::TAU));
        let s = [rng.range(0.3, 2.0), rng.range(0.3, 2.0), rng.range(0.3, 2.0)];
        let t = [rng.range(-8.0, 8.0), rng.range(-8.0, 8.0), rng.range(-8.0, 8.0)];
        let mut o2w = [0.0f32; 12];
        for row in 0..3 {
            for col in 0..3 {
                o2w[4 * row + col] = r[3 * row + col] * s[col];
            }
            o2w[4 * row + 3] = t[row];
        }
        let mask = [0xffu8, 0x01, 0x02, 0x80][i as usize % 4];
        descs.push(InstanceDesc { o2w, custom: 1000 + i, mask, sbt: i, flags: 0, blas: blases[bi] });
        refs.push(RefInstance { o2w, blas: bi, mask, custom: 1000 + i, index: i });
    }
    (descs, refs)
}
