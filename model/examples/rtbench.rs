//! RTU benchmarks and ablations on the device model (docs/TIMING.md has the results).
//!
//! ```text
//! cargo run --release -p vortex-model --example rtbench -- speed        # both modes, 131k-triangle scene
//! cargo run --release -p vortex-model --example rtbench -- wait         # (a) WAIT parked vs holding the port
//! cargo run --release -p vortex-model --example rtbench -- stack        # (b) STACK_DEPTH 4 / 8 / 16
//! cargo run --release -p vortex-model --example rtbench -- width        # (c) CW-BVH4 vs CW-BVH6
//! cargo run --release -p vortex-model --example rtbench -- rtcache      # (d) RTCache size sweep
//! cargo run --release -p vortex-model --example rtbench -- merge        # (e) merge_depth 0 vs > 0
//! cargo run --release -p vortex-model --example rtbench -- all
//! ```
//!
//! Options: `--size N` (rays = N x N, default 256), `--grid N` (terrain cells per side,
//! default 256: 2·N² triangles), `--config file.toml` (the base machine), `--json`.
//!
//! The scene: a 256 x 256 heightfield terrain (131,072 triangles) in one BLAS, a 512-triangle
//! rock BLAS instanced 24 times above it, one TLAS. Every pixel traces a primary ray
//! (closest hit, opaque) and, where it hits, a shadow ray (terminate on first hit). The
//! kernel is GLSL compiled by glslangValidator and the project's SPIR-V front end; every
//! run prints a checksum of the output buffer, which must not depend on the mode or on
//! any timing knob.

use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use vortex_model::abi::dcr::Launch;
use vortex_model::abi::kernel::{desc, kargs};
use vortex_model::config::{DeviceConfig, Mode, WaitMode};
use vortex_model::device::{Device, DispatchReport};
use vortex_model::mem::AddressSpace;
use vortex_transcode::accel::testkit::{InstanceDesc, R32G32B32_SFLOAT};
use vortex_transcode::accel::{
    build, build_sizes, index_type, BuildRange, BuildRequest, Geometry, GeometryInput, GeometryKind, Level,
    Mode as BuildMode,
};
use vortex_transcode::shader::{compile, descriptor_type as dt, BindingLayout, CompileOptions, ResourceLayout};

const SHADER: &str = r#"#version 460
#extension GL_EXT_ray_query : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, set = 0, binding = 1) buffer Out { uint o[]; };
layout(push_constant) uniform P { uint width; uint height; uint shadows; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.width * pc.height) return;
    float x = (float(i % pc.width) + 0.5) / float(pc.width) * 2.0 - 1.0;
    float y = (float(i / pc.width) + 0.5) / float(pc.height) * 2.0 - 1.0;
    vec3 org = vec3(0.0, 1.1, -1.6);
    vec3 dir = normalize(vec3(x, -0.55 + 0.6 * y, 1.0));
    rayQueryEXT rq;
    rayQueryInitializeEXT(rq, tlas, gl_RayFlagsOpaqueEXT, 0xFF, org, 0.0, dir, 100.0);
    while (rayQueryProceedEXT(rq)) {}
    uint t = 0xFFFFFFFFu, id = 0xFFFFFFFFu, lit = 0u;
    if (rayQueryGetIntersectionTypeEXT(rq, true) != gl_RayQueryCommittedIntersectionNoneEXT) {
        float th = rayQueryGetIntersectionTEXT(rq, true);
        t = floatBitsToUint(th);
        id = uint(rayQueryGetIntersectionPrimitiveIndexEXT(rq, true)) | (uint(rayQueryGetIntersectionInstanceIdEXT(rq, true)) << 24);
        if (pc.shadows != 0u) {
            vec3 p = org + th * dir;
            rayQueryEXT sq;
            rayQueryInitializeEXT(sq, tlas, gl_RayFlagsOpaqueEXT | gl_RayFlagsTerminateOnFirstHitEXT, 0xFF, p, 1e-3,
                                  normalize(vec3(0.4, 1.0, -0.3)), 100.0);
            while (rayQueryProceedEXT(sq)) {}
            lit = rayQueryGetIntersectionTypeEXT(sq, true) == gl_RayQueryCommittedIntersectionNoneEXT ? 1u : 2u;
        }
    }
    o[3u * i] = t;
    o[3u * i + 1u] = id;
    o[3u * i + 2u] = lit;
}"#;

type Tri = [[f32; 3]; 3];

fn height(x: f32, z: f32) -> f32 {
    0.08 * (7.0 * x).sin() * (5.0 * z).cos() + 0.03 * (23.0 * x + 11.0 * z).sin() + 0.015 * (61.0 * z - 37.0 * x).cos()
}

fn terrain(n: usize) -> Vec<Tri> {
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
fn rock() -> Vec<Tri> {
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

struct Scene {
    space: Arc<AddressSpace>,
    tlas: u64,
    triangles: usize,
}

fn build_scene(grid: usize, width: u32) -> Scene {
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
        build(&space.snapshot(), &req, width).expect("AS build");
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
            flags: 1, // opaque
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
        insts.push(InstanceDesc::new(br, [s, 0.0, 0.0, x, 0.0, s * 0.7, 0.0, height(x, z) + 0.05, 0.0, 0.0, s, z]));
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

fn spirv(src: &str) -> Vec<u32> {
    let dir = std::env::temp_dir();
    let (input, output) = (
        dir.join(format!("rtbench-{}.comp", std::process::id())),
        dir.join(format!("rtbench-{}.spv", std::process::id())),
    );
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

struct Outcome {
    report: DispatchReport,
    checksum: u64,
    wall: f64,
}

fn run(scene: &Scene, words: &[u32], cfg: &DeviceConfig, size: u32, shadows: bool) -> Outcome {
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
    Outcome { report, checksum, wall }
}

struct Args {
    what: String,
    size: u32,
    grid: usize,
    base: DeviceConfig,
    json: bool,
}

fn args() -> Args {
    let mut a = Args { what: "speed".into(), size: 256, grid: 256, base: DeviceConfig::default(), json: false };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--size" => a.size = it.next().and_then(|v| v.parse().ok()).expect("--size N"),
            "--grid" => a.grid = it.next().and_then(|v| v.parse().ok()).expect("--grid N"),
            "--config" => {
                let p = it.next().expect("--config FILE");
                a.base = DeviceConfig::from_file(&p).unwrap_or_else(|e| panic!("{e}"));
            }
            "--json" => a.json = true,
            w => a.what = w.to_string(),
        }
    }
    a.base.watchdog_ms = 0;
    a
}

fn timed(base: &DeviceConfig) -> DeviceConfig {
    DeviceConfig { mode: Mode::Timed, ..base.clone() }
}

/// One row of an ablation table.
fn row(label: &str, o: &Outcome, rays: u64) {
    let t = o.report.timed.as_ref().expect("timed");
    let (busy, with_ray, starved) = t.rtu_fractions();
    let rc = t.rtcache_totals();
    let e = t.rtu_totals();
    let n = t.rtus.len().max(1) as u64;
    println!(
        "{label:<28} {:>10} cyc  {:>6.1} cyc/ray  RTU busy {:>5.1}% idle-with-ray {:>5.1}% starved {:>5.1}%  slots {:>5.1}%  \
         RTCache hit {:>5.1}% ({} miss, {} MSHR-full, {} merges)  lines {}  restarts {}  box {}  tri {}  IPC {:.3}  \
         checksum {:016x}",
        t.cycles,
        t.cycles as f64 * n as f64 / rays as f64,
        100.0 * busy,
        100.0 * with_ray,
        100.0 * starved,
        100.0 * e.slot_cycles as f64 / (t.cycles * n * t.rtu_slots as u64).max(1) as f64,
        100.0 * rc.hits as f64 / rc.accesses.max(1) as f64,
        rc.misses,
        rc.mshr_full_stalls,
        rc.merges,
        e.line_requests,
        o.report.totals.rtu.restarts,
        o.report.totals.rtu.box_tests,
        o.report.totals.rtu.tri_tests,
        o.report.ipc().unwrap_or(0.0),
        o.checksum
    );
}

fn main() {
    let a = args();
    let words = spirv(SHADER);
    let rays_of = |o: &Outcome| o.report.totals.rtu.rays;
    let all = a.what == "all";
    let scene4 = build_scene(a.grid, 4);
    println!(
        "scene: {} triangles ({}x{} terrain + 24 rock instances), {}x{} pixels, host threads {}",
        scene4.triangles,
        a.grid,
        a.grid,
        a.size,
        a.size,
        a.base.host_threads()
    );
    if all || a.what == "speed" {
        println!("== simulation speed (primary + shadow rays)");
        let mut sums = Vec::new();
        for mode in [Mode::Functional, Mode::Timed] {
            let cfg = DeviceConfig { mode, ..a.base.clone() };
            let o = run(&scene4, &words, &cfg, a.size, true);
            let rays = rays_of(&o);
            let instr = o.report.totals.instructions;
            print!(
                "{:<10} wall {:>7.3} s  {:>8.3} M rays/s  {:>8.2} M warp instr/s",
                format!("{mode:?}"),
                o.wall,
                rays as f64 / o.wall / 1e6,
                instr as f64 / o.wall / 1e6
            );
            if let Some(t) = &o.report.timed {
                print!(
                    "  {:>10} cycles  {:>7.2} M cycles/s  IPC {:.3}  (host threads {})",
                    t.cycles,
                    t.cycles as f64 / o.wall / 1e6,
                    o.report.ipc().unwrap_or(0.0),
                    t.host_threads
                );
            }
            println!("  rays {rays}  checksum {:016x}", o.checksum);
            if a.json {
                println!("{}", o.report.to_json());
            }
            sums.push(o.checksum);
        }
        assert_eq!(sums[0], sums[1], "functional and timed results differ");
    }
    if all || a.what == "wait" {
        println!("== (a) WAIT parked vs WAIT holding the execute port (primary rays)");
        for (label, mode) in [("wait parked", WaitMode::Parked), ("wait holds the port", WaitMode::Hold)] {
            let mut cfg = timed(&a.base);
            cfg.core.wait_mode = mode;
            let o = run(&scene4, &words, &cfg, a.size, false);
            row(label, &o, rays_of(&o));
        }
    }
    if all || a.what == "stack" {
        println!("== (b) short-stack depth (restarts counted)");
        for depth in [4, 8, 16, 64] {
            let mut cfg = timed(&a.base);
            cfg.rtu.stack_depth = depth;
            cfg.rtu.restart_cap = 1 << 20;
            let o = run(&scene4, &words, &cfg, a.size, true);
            row(&format!("stack_depth {depth}"), &o, rays_of(&o));
        }
    }
    if all || a.what == "width" {
        println!("== (c) CW-BVH width");
        let scene6 = build_scene(a.grid, 6);
        for (w, s) in [(4, &scene4), (6, &scene6)] {
            let mut cfg = timed(&a.base);
            cfg.rtu.bvh_width = w;
            let o = run(s, &words, &cfg, a.size, true);
            row(&format!("bvh_width {w}"), &o, rays_of(&o));
        }
    }
    if all || a.what == "rtcache" {
        println!("== (d) RTCache size");
        for kb in [1, 2, 4, 8, 16, 32, 64, 128] {
            let mut cfg = timed(&a.base);
            cfg.rtu.rtcache_size = kb * 1024;
            let o = run(&scene4, &words, &cfg, a.size, true);
            row(&format!("rtcache {kb} KB"), &o, rays_of(&o));
        }
    }
    if all || a.what == "merge" {
        println!("== (e) node-fetch merging (merge_depth)");
        for d in [0, 1, 4, 16] {
            let mut cfg = timed(&a.base);
            cfg.rtu.merge_depth = d;
            let o = run(&scene4, &words, &cfg, a.size, true);
            row(&format!("merge_depth {d}"), &o, rays_of(&o));
        }
    }
}
