//! Ray-query workloads on the device model, shared by the mode-identity tests and the
//! `rtbench` example: scenes built with the project's AS transcoder, GLSL kernels compiled
//! by glslangValidator and the project's SPIR-V front end, one dispatch, and the output.

#![allow(dead_code)]

use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use vortex_model::abi::dcr::Launch;
use vortex_model::abi::kernel::{desc, kargs};
use vortex_model::config::DeviceConfig;
use vortex_model::device::{Device, DispatchReport};
use vortex_model::mem::AddressSpace;
use vortex_transcode::accel::testkit::{InstanceDesc, R32G32B32_SFLOAT};
use vortex_transcode::accel::{
    build, build_sizes, index_type, BuildRange, BuildRequest, Geometry, GeometryInput, GeometryKind, Level,
    Mode as BuildMode,
};
use vortex_transcode::shader::{compile, descriptor_type as dt, BindingLayout, CompileOptions, ResourceLayout};

/// A ray-query kernel over a `width` x `height` grid: the GLSL header every workload here
/// shares (the TLAS at binding 0, the output words at binding 1, push constants `width`,
/// `height`, `flag`, invocation `i`, out-of-grid invocations return) around `body`, the
/// rest of `main`.
#[macro_export]
macro_rules! rq_kernel {
    ($body:literal) => {
        concat!(
            "#version 460\n",
            "#extension GL_EXT_ray_query : require\n",
            "layout(local_size_x = 64) in;\n",
            "layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;\n",
            "layout(std430, set = 0, binding = 1) buffer Out { uint o[]; };\n",
            "layout(push_constant) uniform P { uint width; uint height; uint flag; } pc;\n",
            "void main() {\n",
            "    uint i = gl_GlobalInvocationID.x;\n",
            "    if (i >= pc.width * pc.height) return;\n",
            $body,
            "\n}"
        )
    };
}

/// Several rays per pixel, one after the other (each WAITed before the next TRACE), as a
/// path tracer's loop does: the workload where a WAIT holding the port starves the RTU.
pub const SAMPLES: &str = crate::rq_kernel!(
    r#"    uint acc = 0u, hits = 0u;
    for (uint s = 0u; s < 4u; s++) {
        float x = (float(i % pc.width) + 0.25 + 0.5 * float(s & 1u)) / float(pc.width) * 2.0 - 1.0;
        float y = (float(i / pc.width) + 0.25 + 0.5 * float(s >> 1)) / float(pc.height) * 2.0 - 1.0;
        rayQueryEXT rq;
        rayQueryInitializeEXT(rq, tlas, gl_RayFlagsOpaqueEXT, 0xFF, vec3(0.0, 1.1, -1.6), 0.0,
                              normalize(vec3(x, -0.55 + 0.6 * y, 1.0)), 100.0);
        while (rayQueryProceedEXT(rq)) {}
        if (rayQueryGetIntersectionTypeEXT(rq, true) != gl_RayQueryCommittedIntersectionNoneEXT) {
            hits++;
            acc ^= floatBitsToUint(rayQueryGetIntersectionTEXT(rq, true)) + s;
        }
    }
    o[3u * i] = acc;
    o[3u * i + 1u] = hits;
    o[3u * i + 2u] = 0u;"#
);

pub type Tri = [[f32; 3]; 3];

pub fn height(x: f32, z: f32) -> f32 {
    0.08 * (7.0 * x).sin() * (5.0 * z).cos() + 0.03 * (23.0 * x + 11.0 * z).sin() + 0.015 * (61.0 * z - 37.0 * x).cos()
}

pub fn terrain(n: usize) -> Vec<Tri> {
    let p = |i: usize, j: usize| {
        let (x, z) = (i as f32 / n as f32 * 4.0 - 2.0, j as f32 / n as f32 * 4.0 - 2.0);
        [x, height(x, z), z]
    };
    let mut t = Vec::with_capacity(2 * n * n);
    for j in 0..n {
        for i in 0..n {
            t.push([p(i, j), p(i, j + 1), p(i + 1, j)]);
            t.push([p(i + 1, j), p(i, j + 1), p(i + 1, j + 1)]);
        }
    }
    t
}

/// A subdivided octahedron (8 · 4^3 = 512 triangles), radius 1.
pub fn rock() -> Vec<Tri> {
    let v = [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, -1.0]];
    let mut tris: Vec<Tri> = vec![
        [v[0], v[2], v[4]],
        [v[4], v[2], v[1]],
        [v[1], v[2], v[5]],
        [v[5], v[2], v[0]],
        [v[0], v[4], v[3]],
        [v[4], v[1], v[3]],
        [v[1], v[5], v[3]],
        [v[5], v[0], v[3]],
    ];
    let norm = |a: [f32; 3]| {
        let l = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
        [a[0] / l, a[1] / l, a[2] / l]
    };
    let mid = |a: [f32; 3], b: [f32; 3]| norm([(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0, (a[2] + b[2]) / 2.0]);
    for _ in 0..3 {
        tris = tris
            .iter()
            .flat_map(|&[a, b, c]| {
                let (ab, bc, ca) = (mid(a, b), mid(b, c), mid(c, a));
                [[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]
            })
            .collect();
    }
    tris
}

pub struct Scene {
    pub space: Arc<AddressSpace>,
    pub tlas: u64,
    pub triangles: usize,
}

pub fn build_scene(grid: usize, width: u32) -> Scene {
    build_scene_flags(grid, width, 1)
}

/// The scene with geometry flags `geom_flags` on both BLASes (1 = opaque; 0 makes every
/// triangle an any-hit candidate).
pub fn build_scene_flags(grid: usize, width: u32, geom_flags: u32) -> Scene {
    let space = Arc::new(AddressSpace::new());
    let upload = |bytes: &[u8]| -> u64 {
        let r = space.allocate(bytes.len().max(16) as u64).unwrap();
        space.snapshot().write(r.base, bytes).unwrap();
        r.base
    };
    let make = |level: Level, kind: GeometryKind, g: GeometryInput| -> u64 {
        let sizes = build_sizes(level, &[(kind, g.range.primitive_count)], 0, width);
        let dst = space.allocate(sizes.as_size).unwrap().base;
        let req = BuildRequest {
            level,
            flags: 0,
            mode: BuildMode::Build,
            dst,
            dst_size: sizes.as_size,
            scratch: 0,
            geometries: vec![g],
        };
        build(&space.snapshot(), &req, &vortex_transcode::accel::Options::new(width)).expect("AS build");
        dst
    };
    let blas = |tris: &[Tri]| {
        let bytes: Vec<u8> = tris.iter().flatten().flatten().flat_map(|v| v.to_le_bytes()).collect();
        let g = GeometryInput {
            geometry: Geometry::Triangles {
                vertex_format: R32G32B32_SFLOAT,
                vertex_data: upload(&bytes),
                vertex_stride: 12,
                max_vertex: (3 * tris.len() - 1) as u32,
                index_type: index_type::NONE_KHR,
                index_data: 0,
                transform_data: 0,
            },
            flags: geom_flags,
            range: BuildRange { primitive_count: tris.len() as u32, ..BuildRange::default() },
        };
        make(Level::Bottom, GeometryKind::Triangles, g)
    };
    let (t, r) = (terrain(grid), rock());
    let (bt, br) = (blas(&t), blas(&r));
    let mut insts = vec![InstanceDesc::new(bt, [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0])];
    for k in 0..24 {
        let (x, z) = ((k % 6) as f32 * 0.55 - 1.4, (k / 6) as f32 * 0.6 - 0.6);
        let s = 0.08 + 0.02 * (k % 3) as f32;
        let o2w = [s, 0.0, 0.0, x, 0.0, s * 0.7, 0.0, height(x, z) + 0.05, 0.0, 0.0, s, z];
        // Rocks take SBT offsets 1..=3 (the terrain 0): candidates of one warp carry
        // several SBT keys, which reformation by SBT key splits.
        insts.push(InstanceDesc { sbt: 1 + k % 3, ..InstanceDesc::new(br, o2w) });
    }
    let bytes: Vec<u8> = insts.iter().flat_map(|i| i.bytes()).collect();
    let g = GeometryInput {
        geometry: Geometry::Instances { data: upload(&bytes), array_of_pointers: false },
        flags: 0,
        range: BuildRange { primitive_count: insts.len() as u32, ..BuildRange::default() },
    };
    let tlas = make(Level::Top, GeometryKind::Instances, g);
    Scene { space, tlas, triangles: t.len() + r.len() }
}

pub fn spirv(src: &str) -> Vec<u32> {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir();
    let stem = format!("vx-rq-{}-{n}", std::process::id());
    let (input, output) = (dir.join(format!("{stem}.comp")), dir.join(format!("{stem}.spv")));
    std::fs::write(&input, src).unwrap();
    let out = Command::new("glslangValidator")
        .args(["--target-env", "vulkan1.2", "-V", "-o"])
        .arg(&output)
        .arg(&input)
        .output()
        .expect("glslangValidator (apt-get install glslang-tools)");
    assert!(out.status.success(), "glslang: {}", String::from_utf8_lossy(&out.stdout));
    let bytes = std::fs::read(&output).unwrap();
    let _ = std::fs::remove_file(&input);
    let _ = std::fs::remove_file(&output);
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

pub struct Outcome {
    pub report: DispatchReport,
    pub checksum: u64,
    pub wall: f64,
    /// The output buffer (3 words per invocation).
    pub data: Vec<u8>,
}

pub fn run(scene: &Scene, words: &[u32], cfg: &DeviceConfig, size: u32, shadows: bool) -> Outcome {
    run_with(scene, words, cfg, size, shadows, |_| {})
}

/// [`run`], with `prepare` applied to the device before the dispatch (e.g. a ray log).
pub fn run_with(
    scene: &Scene,
    words: &[u32],
    cfg: &DeviceConfig,
    size: u32,
    shadows: bool,
    prepare: impl FnOnce(&mut Device),
) -> Outcome {
    let mut opts = CompileOptions::entry("main");
    opts.layout = ResourceLayout {
        bindings: vec![
            BindingLayout {
                set: 0,
                binding: 0,
                descriptor_type: dt::ACCELERATION_STRUCTURE,
                count: 1,
                offset: 0,
                dynamic_index: None,
            },
            BindingLayout {
                set: 0,
                binding: 1,
                descriptor_type: dt::STORAGE_BUFFER,
                count: 1,
                offset: desc::BYTES as u32,
                dynamic_index: None,
            },
        ],
        push_constant_bytes: 12,
    };
    let kernel = compile(words, &opts).expect("compile");
    let mut dev = Device::with_memory(cfg.clone(), scene.space.clone()).expect("config");
    prepare(&mut dev);
    let space = &scene.space;
    let alloc = |bytes: &[u8]| -> u64 {
        let r = space.allocate(bytes.len().max(16) as u64).unwrap();
        space.snapshot().write(r.base, bytes).unwrap();
        r.base
    };
    let rays = size * size;
    let out_bytes = 12 * rays as usize;
    let out = alloc(&vec![0u8; out_bytes]);
    let mut set = vec![0u8; 2 * desc::BYTES];
    set[0..8].copy_from_slice(&scene.tlas.to_le_bytes());
    set[desc::BYTES..desc::BYTES + 8].copy_from_slice(&out.to_le_bytes());
    set[desc::BYTES + 8..desc::BYTES + 16].copy_from_slice(&(out_bytes as u64).to_le_bytes());
    let set_addr = alloc(&set);
    let groups = rays.div_ceil(kernel.local_size[0]);
    let mut k = vec![0u8; kargs::BYTES];
    k[kargs::SET_ADDR..kargs::SET_ADDR + 8].copy_from_slice(&set_addr.to_le_bytes());
    k[kargs::NUM_GROUPS..kargs::NUM_GROUPS + 4].copy_from_slice(&groups.to_le_bytes());
    k[kargs::NUM_GROUPS + 4..kargs::NUM_GROUPS + 8].copy_from_slice(&1u32.to_le_bytes());
    k[kargs::NUM_GROUPS + 8..kargs::NUM_GROUPS + 12].copy_from_slice(&1u32.to_le_bytes());
    for (o, v) in [size, size, shadows as u32].iter().enumerate() {
        k[kargs::PUSH + 4 * o..kargs::PUSH + 4 * o + 4].copy_from_slice(&v.to_le_bytes());
    }
    let param = alloc(&k);
    let pc = alloc(&kernel.image(1));
    let launch = Launch {
        pc,
        param,
        grid: [groups, 1, 1],
        block: kernel.local_size,
        lmem_bytes: kernel.lmem_bytes,
        cluster: [1, 1, 1],
    };
    for (a, v) in launch.kmu_writes(cfg.num_threads) {
        dev.dcr_write(a, v).unwrap();
    }
    let t0 = Instant::now();
    let report = dev.start().unwrap_or_else(|f| panic!("dispatch faulted: {f}"));
    let wall = t0.elapsed().as_secs_f64();
    let mut data = vec![0u8; out_bytes];
    space.snapshot().read(out, &mut data).unwrap();
    // FNV-1a over the output.
    let checksum = data.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3));
    Outcome { report, checksum, wall, data }
}
