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

#[path = "../tests/common/rq.rs"]
mod rq;

use rq::{build_scene, run, spirv, Outcome, SAMPLES};
use vortex_model::config::{DeviceConfig, Mode, WaitMode};

const SHADER: &str = crate::rq_kernel!(
    r#"    float x = (float(i % pc.width) + 0.5) / float(pc.width) * 2.0 - 1.0;
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
        if (pc.flag != 0u) {
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
    o[3u * i + 2u] = lit;"#
);

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
        println!("== (a) WAIT parked vs WAIT holding the execute port (4 rays per pixel, one after the other)");
        let samples = spirv(SAMPLES);
        for (slots, warps) in [(1, 32), (16, 32), (16, 4)] {
            for (label, mode) in [("parked", WaitMode::Parked), ("holds the port", WaitMode::Hold)] {
                let mut cfg = timed(&a.base);
                cfg.core.wait_mode = mode;
                cfg.rtu.slots_per_core = slots;
                cfg.num_warps = warps;
                let o = run(&scene4, &samples, &cfg, a.size / 2, false);
                row(&format!("wait {label}, {slots} slot/core, {warps} warps"), &o, rays_of(&o));
            }
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
