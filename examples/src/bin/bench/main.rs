//! Runs the same scenes on several Vulkan drivers in one run and prints a table: AS build
//! speed and trace throughput for coherent (primary + shadow), incoherent (ambient
//! occlusion) and any-hit rays, with the ratio of the first driver to the others. Each
//! driver runs in its own child process (the loader picks its driver per process); the
//! hit counts of every workload are compared across drivers, so a fast wrong answer shows.
//!
//! The path tracer (`pathtrace.rs`): shading-heavy compute shaped like a client's, several
//! bounces per pixel with a shadow ray at each hit; rays and radiance cross-checked.
//!
//! `--workloads build`: 100k-triangle BLAS builds through the API, every build flag, cold
//! (first build of a process) and warm (best of `--build-reps`) fence to fence, side by side
//! and cross-checked by tracing (`vortex_examples::buildbench`; `as_bench --builds` runs the
//! same at other sizes).
//!
//! `--workloads rtp` (`rtpipe.rs`): the default scene with an alpha-tested card rendered by
//! a ray-tracing pipeline (shading, shadow and AO rays from closest-hit, any-hit alpha
//! test) and by ray queries, side by side on every driver, cross-checked.
//!
//! Then the raster workloads on the same drivers (`raster.rs`): fill rate, draws per
//! second, and a 1280x720 frame drawn through a vertex + fragment pipeline with a shadow ray
//! per fragment; the pixels are checksummed and compared across drivers too.
//!
//! ```text
//! bench [--scenes bunny,spheres,million,random] [--icds vortex,lavapipe] [--samples N]
//!       [--size WxH] [--workloads rt,pt,build,raster] [--raster-size WxH]
//!       [--build-tris N] [--build-reps N]
//!       [--pt-scene S] [--pt-size WxH] [--pt-spp N] [--pt-bounces N] [--pt-frames N]
//!       [--rtp-size WxH] [--rtp-spp N] [--rtp-frames N] [--rtp-depth1]
//! bench --targets [--quick] [--rtbench PATH]
//! ```
//! An ICD name `vortex-timed` runs our driver in timed mode (`VORTEX_MODE=timed`); a name
//! ending in `-sparse` (`vortex-sparse`, `lavapipe-sparse`, `vortex-timed-sparse`) builds
//! every acceleration structure into a sparse buffer whose pages are bound one by one in
//! reverse order (`AsStorage::Sparse`), so `--icds vortex,vortex-sparse` puts the cost of
//! translating sparse pages next to ordinary memory.
//!
//! `--targets` (`targets.rs`) runs every workload behind issue 18's targets on our driver
//! and lavapipe (and timed mode's speed) and prints one table, target by target, met or not;
//! `--targets --quick` shrinks the sizes for a smoke run.
//!
//! `--arch rtu,rdna2` instead compares our ICD's two ray-tracing architectures on the
//! scenes (`arch.rs`, `docs/RDNA2.md`): rays/s, simulated cycles, shader instructions, node
//! fetches and tests per ray, unit utilisation and SIMT efficiency (default size 256x192).

mod arch;
mod pathtrace;
mod raster;
mod rtpipe;
mod targets;

use ash::vk;
use std::process::{Command, ExitCode};
use std::time::Instant;
use vortex_examples::scene::{GpuScene, Scene};
use vortex_examples::{AsStorage, Buffer, ComputePipeline, Context, Icd};

const BENCH: &[u8] = include_bytes!("../../../shaders/bench.spv");
const MODES: [&str; 3] = ["coherent", "incoherent", "any-hit"];

/// What one driver measured on one scene.
#[derive(Clone, Debug, Default)]
struct Measured {
    triangles: u64,
    build_s: f64,
    /// Per mode: (seconds, rays, hit pixels).
    modes: [(f64, u64, u64); 3],
    /// The device the worker ran on.
    device: String,
}

fn default_size(scene: &str) -> (u32, u32) {
    // lavapipe traces the random soup about 200x slower than sorted input: keep its run short.
    if scene == "random" {
        (256, 192)
    } else {
        (1024, 768)
    }
}

/// The child: builds the scene and runs each workload once, printing one line per result.
fn worker(icd: &Icd, scene_name: &str, size: (u32, u32), samples: u32, storage: AsStorage) -> Result<(), String> {
    let scene = Scene::builtin(scene_name).map_err(|e| e.to_string())?;
    let ctx = match storage {
        AsStorage::Memory => Context::new(icd),
        // Sparse buffers need sparseBinding, an optional feature.
        AsStorage::Sparse => Context::with_optional_features(icd),
    }
    .map_err(|e| e.to_string())?;
    let gpu = GpuScene::build_in(&ctx, &scene, storage).map_err(|e| e.to_string())?;
    // Which device really ran: the table shows it, so a worker that ran the wrong driver shows.
    println!("device {}", ctx.info().name);
    println!("build {} {}", gpu.build_seconds, scene.unique_triangle_count());
    let (w, h) = size;
    let n = w as u64 * h as u64;
    let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let counts = Buffer::new(&ctx, 4 * n, storage).map_err(|e| e.to_string())?;
    let depth = Buffer::new(&ctx, 4 * n, storage).map_err(|e| e.to_string())?;
    let bindings = [
        vk::DescriptorType::ACCELERATION_STRUCTURE_KHR,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let pipe = ComputePipeline::new(&ctx, BENCH, &bindings, 96).map_err(|e| e.to_string())?;
    pipe.bind_acceleration_structure(0, &gpu.tlas);
    pipe.bind_storage_buffer(1, &counts);
    pipe.bind_storage_buffer(2, &depth);
    let floats = scene.camera.push_floats(w as f32 / h as f32, scene.light, scene.ao_radius);
    for mode in 0..3u32 {
        let mut push: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
        for v in [w, h, samples, mode] {
            push.extend_from_slice(&v.to_le_bytes());
        }
        let t = Instant::now();
        ctx.submit_once(|cmd| pipe.record_dispatch(cmd, &push, [w.div_ceil(8), h.div_ceil(8), 1]))
            .map_err(|e| e.to_string())?;
        let secs = t.elapsed().as_secs_f64();
        let rays: u64 = counts.read::<u32>().iter().map(|&r| r as u64).sum();
        let hits = depth.read::<f32>().iter().filter(|&&d| d >= 0.0).count();
        println!("mode {mode} {secs} {rays} {hits}");
    }
    Ok(())
}

/// Runs this program as a worker on driver `icd` (a name with `-timed`/`-sparse`
/// suffixes) with `args`; its standard output, or why it failed.
fn run_worker(icd: &str, what: &str, args: &[String]) -> Result<String, String> {
    run_worker_with(icd, what, args, &[])
}

/// [`run_worker`] with extra environment variables for the child.
fn run_worker_with(icd: &str, what: &str, args: &[String], env: &[(&str, &str)]) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let (icd_arg, sparse) = icd.strip_suffix("-sparse").map_or((icd, false), |base| (base, true));
    let (icd_arg, timed) = icd_arg.strip_suffix("-timed").map_or((icd_arg, false), |base| (base, true));
    let mut cmd = Command::new(exe);
    cmd.args(["--icd", icd_arg]).args(args);
    if sparse {
        cmd.arg("--sparse");
    }
    if timed {
        cmd.env("VORTEX_MODE", "timed");
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().map_err(|e| format!("cannot start the {icd} worker: {e}"))?;
    if !out.status.success() {
        // A crash prints nothing on stderr: say how the child ended and how far it got.
        let stdout = String::from_utf8_lossy(&out.stdout);
        let last = stdout.lines().last().map(|l| format!(" (its last line: {l:?})")).unwrap_or_default();
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{icd} on {what} failed, {}{last}: {}", out.status, stderr.trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn measure(icd: &str, scene: &str, size: (u32, u32), samples: u32) -> Result<Measured, String> {
    let args = ["--worker", "--scenes", scene, "--samples", &samples.to_string()].map(String::from);
    let mut args = args.to_vec();
    args.extend(["--size".to_string(), format!("{}x{}", size.0, size.1)]);
    let stdout = run_worker(icd, scene, &args)?;
    let mut m = Measured::default();
    for line in stdout.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let Some(name) = line.strip_prefix("device ") {
            m.device = name.to_string();
        }
        match f.as_slice() {
            ["build", s, t] => {
                m.build_s = s.parse().unwrap_or(f64::NAN);
                m.triangles = t.parse().unwrap_or(0);
            }
            ["mode", k, s, r, h] => {
                let k: usize = k.parse().unwrap_or(0);
                m.modes[k.min(2)] = (s.parse().unwrap_or(f64::NAN), r.parse().unwrap_or(0), h.parse().unwrap_or(0));
            }
            _ => {}
        }
    }
    Ok(m)
}

fn main() -> ExitCode {
    let mut scenes = "bunny,spheres,million,random".to_string();
    let mut icds = "vortex,lavapipe".to_string();
    let mut samples = 4u32;
    let mut size: Option<(u32, u32)> = None;
    let mut worker_icd: Option<Icd> = None;
    let mut rt_worker = false;
    let mut storage = AsStorage::Memory;
    let mut workloads = "rt,pt,build,raster".to_string();
    let mut pt = pathtrace::Params::default();
    let mut pt_worker = false;
    let mut rtp = rtpipe::Params { size: (1024, 768), spp: 1, frames: 2, depth1: false };
    let mut rtp_worker = false;
    let mut raster_size = [1280u32, 720];
    let mut raster_worker = false;
    let mut archs: Option<String> = None;
    let mut issue_targets = false;
    let mut quick = false;
    let mut rtbench: Option<std::path::PathBuf> = None;
    let (mut build_tris, mut build_reps) = (100_000usize, 5u32);
    let mut build_worker: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match a.as_str() {
            "--scenes" => scenes = value(),
            "--icds" => icds = value(),
            "--samples" => samples = value().parse().unwrap_or(4),
            "--size" => {
                let v = value();
                size = v.split_once('x').and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)));
                if size.is_none() {
                    eprintln!("bench: --size wants WxH, got {v:?}");
                    return ExitCode::from(2);
                }
            }
            // The tracing worker; on `--icd`'s driver, ours without one (in either order).
            "--worker" => rt_worker = true,
            "--icd" => worker_icd = Some(Icd::parse(&value())),
            "--sparse" => storage = AsStorage::Sparse,
            "--workloads" => workloads = value(),
            "--arch" => archs = Some(value()),
            "--targets" => issue_targets = true,
            "--quick" => quick = true,
            "--rtbench" => rtbench = Some(value().into()),
            "--raster-worker" => raster_worker = true,
            "--pt-worker" => pt_worker = true,
            "--rtp-worker" => rtp_worker = true,
            "--rtp-depth1" => rtp.depth1 = true,
            "--rtp-spp" => rtp.spp = value().parse().unwrap_or(rtp.spp),
            "--rtp-frames" => rtp.frames = value().parse().unwrap_or(rtp.frames).max(1),
            "--rtp-size" => {
                let v = value();
                match v.split_once('x').and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?))) {
                    Some(s) => rtp.size = s,
                    None => {
                        eprintln!("bench: --rtp-size wants WxH, got {v:?}");
                        return ExitCode::from(2);
                    }
                }
            }
            "--build-worker" => build_worker.push(a.clone()),
            w @ ("--build-flag" | "--build-rays") => build_worker.extend([w.to_string(), value()]),
            "--build-tris" => {
                let v = value();
                build_tris = v.parse().unwrap_or(build_tris);
                build_worker.extend(["--build-tris".to_string(), v]);
            }
            "--build-reps" => {
                let v = value();
                build_reps = v.parse().unwrap_or(build_reps);
                build_worker.extend(["--build-reps".to_string(), v]);
            }
            "--pt-scene" => pt.scene = value(),
            "--pt-spp" => pt.spp = value().parse().unwrap_or(pt.spp),
            "--pt-bounces" => pt.bounces = value().parse().unwrap_or(pt.bounces),
            "--pt-frames" => pt.frames = value().parse().unwrap_or(pt.frames).max(1),
            "--pt-size" => {
                let v = value();
                match v.split_once('x').and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?))) {
                    Some(s) => pt.size = s,
                    None => {
                        eprintln!("bench: --pt-size wants WxH, got {v:?}");
                        return ExitCode::from(2);
                    }
                }
            }
            "--raster-size" => {
                let v = value();
                match v.split_once('x').and_then(|(w, h)| Some([w.parse().ok()?, h.parse().ok()?])) {
                    Some(s) => raster_size = s,
                    None => {
                        eprintln!("bench: --raster-size wants WxH, got {v:?}");
                        return ExitCode::from(2);
                    }
                }
            }
            "-h" | "--help" => {
                println!("usage: bench [--scenes bunny,spheres,million,random] [--icds vortex,lavapipe] [--samples N] [--size WxH]");
                println!("             [--workloads rt,pt,build,raster] [--raster-size WxH (1280x720)]");
                println!("             [--build-tris 100000] [--build-reps 5]");
                println!("             [--pt-scene spheres] [--pt-size 800x600] [--pt-spp 1] [--pt-bounces 3] [--pt-frames 3]");
                println!("             [--rtp-size 1024x768] [--rtp-spp 1] [--rtp-frames 2] [--rtp-depth1]   (--workloads rtp)");
                println!("       bench --arch rtu,rdna2 [--scenes ...] [--size WxH (256x192)] [--samples N]");
                println!("       bench --targets [--quick] [--rtbench target/release/examples/rtbench]");
                return ExitCode::SUCCESS;
            }
            _ => {
                eprintln!("bench: unexpected argument {a:?}");
                return ExitCode::from(2);
            }
        }
    }
    if let (Some(icd), true) = (&worker_icd, raster_worker) {
        return match raster::worker(icd, raster_size) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench raster worker: {e}");
                ExitCode::from(1)
            }
        };
    }
    if let (Some(icd), false) = (&worker_icd, build_worker.is_empty()) {
        return match vortex_examples::buildbench::worker(icd, &build_worker) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench build worker: {e}");
                ExitCode::from(1)
            }
        };
    }
    if let (Some(icd), true) = (&worker_icd, pt_worker) {
        return match pathtrace::worker(icd, &pt) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench path-tracer worker: {e}");
                ExitCode::from(1)
            }
        };
    }
    if let (Some(icd), true) = (&worker_icd, rtp_worker) {
        return match rtpipe::worker(icd, &rtp) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench rt-pipeline worker: {e}");
                ExitCode::from(1)
            }
        };
    }
    if rt_worker || worker_icd.is_some() {
        let icd = worker_icd.unwrap_or(Icd::Vortex);
        let scene = scenes.split(',').next().unwrap_or("bunny").to_string();
        return match worker(&icd, &scene, size.unwrap_or_else(|| default_size(&scene)), samples, storage) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench worker: {e}");
                ExitCode::from(1)
            }
        };
    }
    if issue_targets {
        let plan = targets::Plan::new(quick, rtbench);
        return if targets::run(&plan) { ExitCode::from(1) } else { ExitCode::SUCCESS };
    }
    if let Some(archs) = archs {
        let archs: Vec<&str> = archs.split(',').collect();
        let failed = arch::table(&archs, &scenes, size.unwrap_or((256, 192)), samples);
        return if failed { ExitCode::from(1) } else { ExitCode::SUCCESS };
    }
    let icds: Vec<&str> = icds.split(',').collect();
    let workloads: Vec<&str> = workloads.split(',').collect();
    let mut failed = false;
    if workloads.contains(&"rt") {
        failed |= rt_table(&icds, &scenes, size, samples);
    }
    if workloads.contains(&"pt") {
        failed |= pt_table(&icds, &pt);
    }
    if workloads.contains(&"rtp") {
        failed |= rtpipe::table(&icds, &rtp, |icd, args| run_worker(icd, "the rt-pipeline workload", args));
    }
    if workloads.contains(&"build") {
        failed |= build_table(&icds, build_tris, build_reps);
    }
    if workloads.contains(&"raster") {
        failed |= raster_table(&icds, raster_size);
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The path tracer on every driver: the best of its frames, ratios of the first driver to the
/// others, rays and radiance compared. True if something failed.
fn pt_table(icds: &[&str], p: &pathtrace::Params) -> bool {
    println!();
    println!(
        "{:<44} {:<14} {:>10} {:>10} {:>12}   (path tracer: {} spp, {} bounces, shadow rays; best of {} frames)",
        "path tracer", "driver", "frame ms", "M rays/s", "rays/pixel", p.spp, p.bounces, p.frames
    );
    let (w, h) = p.size;
    let args = p.args();
    let label = format!("{} @{w}x{h}", Scene::builtin(&p.scene).map(|s| s.name).unwrap_or_else(|_| p.scene.clone()));
    let mut first: Option<pathtrace::Measured> = None;
    let mut failed = false;
    for &icd in icds {
        let m = match run_worker(icd, "the path tracer", &args)
            .and_then(|out| pathtrace::parse(&out).ok_or_else(|| "printed no frame".to_string()))
        {
            Ok(m) => m,
            Err(e) => {
                println!("{label:<44} {icd:<14} error: {e}");
                failed = true;
                continue;
            }
        };
        let rate = m.rays as f64 / m.seconds / 1e6;
        let per_pixel = m.rays as f64 / (w as f64 * h as f64);
        println!("{label:<44} {icd:<14} {:>10.1} {rate:>10.3} {per_pixel:>12.2}", m.seconds * 1e3);
        match &first {
            None => first = Some(m),
            Some(f) => {
                println!("{:<44} {:<14} {:>9.2}x", "", format!("{}/{}", icds[0], icd), m.seconds / f.seconds);
                if let Some(why) = pathtrace::disagreement(f, &m) {
                    println!("  ! path tracer: {why}");
                    failed = true;
                }
            }
        }
    }
    failed
}

/// BLAS builds through the API at one size, every build flag, on every driver (see
/// `vortex_examples::buildbench`). True if something failed.
fn build_table(icds: &[&str], tris: usize, reps: u32) -> bool {
    let flags: Vec<&str> = vortex_examples::buildbench::FLAGS.iter().map(|f| f.0).collect();
    let run = |icd: &str, args: &[String]| {
        let mut a = vec!["--build-worker".to_string()];
        a.extend_from_slice(args);
        run_worker(icd, "the build workload", &a)
    };
    vortex_examples::buildbench::table(icds, &[tris], &flags, reps, 4096, 1, run)
}

/// The raster workloads on every driver: one table, ratios of the first driver to the
/// others, and the pixels' checksums compared (the frame's within 0.1%: drivers may
/// differ on a few edge pixels). True if something failed.
fn raster_table(icds: &[&str], size: [u32; 2]) -> bool {
    println!();
    println!(
        "{:<24} {:<14} {:>14} {:>12} {:>12}   (frame: default scene, a shadow ray per fragment)",
        "raster", "driver", "fill Mfrag/s", "draws/s", "frame ms"
    );
    let args = ["--raster-worker", "--raster-size", &format!("{}x{}", size[0], size[1])].map(String::from);
    let mut first: Option<raster::Measured> = None;
    let mut failed = false;
    for &icd in icds {
        let m = match run_worker(icd, "the raster workloads", &args) {
            Ok(out) => raster::parse(&out),
            Err(e) => {
                println!("{:<24} {:<14} error: {e}", "raster", icd);
                failed = true;
                continue;
            }
        };
        let label = format!("@{}x{}", size[0], size[1]);
        println!(
            "{:<24} {:<14} {:>14.2} {:>12.0} {:>12.1}",
            label,
            icd,
            raster::rate(&m, 0),
            raster::rate(&m, 1),
            m[2].0 * 1e3
        );
        match &first {
            None => first = Some(m),
            Some(f) => {
                let r = |k: usize| raster::rate(f, k) / raster::rate(&m, k);
                println!(
                    "{:<24} {:<14} {:>13.3}x {:>11.3}x {:>11.2}x",
                    "",
                    format!("{}/{}", icds[0], icd),
                    r(0),
                    r(1),
                    r(2)
                );
                for (k, (name, _)) in raster::WORKLOADS.iter().enumerate() {
                    let (a, b) = (f[k].2 as f64, m[k].2 as f64);
                    let tolerance = if *name == "frame" { 1e-3 * a.max(b) } else { 0.0 };
                    if (a - b).abs() > tolerance {
                        println!("  ! {name} pixels disagree: checksum {} vs {}", f[k].2, m[k].2);
                        failed = true;
                    }
                }
            }
        }
    }
    failed
}

/// The ray-tracing table (AS builds and the three trace workloads). True if something failed.
fn rt_table(icds: &[&str], scenes: &str, size: Option<(u32, u32)>, samples: u32) -> bool {
    println!(
        "{:<44} {:<14} {:>12} {:>14} {:>14} {:>14}",
        "scene", "driver", "build Mtri/s", "coherent Mr/s", "incoher. Mr/s", "any-hit Mr/s"
    );
    let mut failed = false;
    for scene in scenes.split(',') {
        let sz = size.unwrap_or_else(|| default_size(scene));
        let results: Vec<(&str, Result<Measured, String>)> =
            icds.iter().map(|&i| (i, measure(i, scene, sz, samples))).collect();
        let label = Scene::builtin(scene).map(|s| s.name).unwrap_or_else(|_| scene.to_string());
        let mut first: Option<Measured> = None;
        for (icd, r) in &results {
            match r {
                Ok(m) => {
                    let rate = |k: usize| m.modes[k].1 as f64 / m.modes[k].0 / 1e6;
                    println!(
                        "{:<44} {:<14} {:>12.2} {:>14.3} {:>14.3} {:>14.3}",
                        format!("{label} @{}x{}", sz.0, sz.1),
                        icd,
                        m.triangles as f64 / m.build_s / 1e6,
                        rate(0),
                        rate(1),
                        rate(2)
                    );
                    if let Some(f) = &first {
                        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
                        let fr = |k: usize| f.modes[k].1 as f64 / f.modes[k].0;
                        let mr = |k: usize| m.modes[k].1 as f64 / m.modes[k].0;
                        println!(
                            "{:<44} {:<14} {:>11.2}x {:>13.2}x {:>13.2}x {:>13.2}x",
                            "",
                            format!("{}/{}", icds[0], icd),
                            ratio(m.build_s, f.build_s),
                            ratio(fr(0), mr(0)),
                            ratio(fr(1), mr(1)),
                            ratio(fr(2), mr(2))
                        );
                        for why in hit_disagreements(f, m).into_iter().flatten() {
                            println!("  ! {why}");
                            failed = true;
                        }
                    } else {
                        first = Some(m.clone());
                    }
                }
                Err(e) => {
                    println!("{:<44} {:<14} error: {e}", label, icd);
                    failed = true;
                }
            }
        }
        failed |= check_devices(&results);
    }
    failed
}

/// Per mode, how two drivers' hit pixels disagree (beyond 0.1 %: a different tree may move
/// a ray that grazes an edge), if they do.
fn hit_disagreements(a: &Measured, b: &Measured) -> [Option<String>; 3] {
    std::array::from_fn(|k| {
        let (x, y) = (a.modes[k].2 as f64, b.modes[k].2 as f64);
        ((x - y).abs() > 0.001 * x.max(y).max(1.0))
            .then(|| format!("{} hit pixels disagree: {} vs {}", MODES[k], a.modes[k].2, b.modes[k].2))
    })
}

/// Whether a worker asked for driver `icd` ran on someone else's `device` (ours for
/// another driver's name, or another for ours); a manifest path is taken as given.
fn wrong_device(icd: &str, device: &str) -> bool {
    device.starts_with("Vortex") != icd.starts_with("vortex") && !icd.ends_with(".json")
}

/// Prints which device each driver's worker ran on, and fails when a worker ran on the
/// wrong one (ours for another driver's name, or another for ours): a table comparing a
/// driver with itself must not pass for a comparison.
fn check_devices(results: &[(&str, Result<Measured, String>)]) -> bool {
    let ran: Vec<(&str, &str)> =
        results.iter().filter_map(|(i, r)| Some((*i, r.as_ref().ok()?.device.as_str()))).collect();
    let list: Vec<String> = ran.iter().map(|(i, d)| format!("{i}: {d}")).collect();
    println!("{:<44} devices: {}", "", list.join("; "));
    let mut failed = false;
    for (icd, device) in ran {
        if wrong_device(icd, device) {
            println!("  ! the {icd} worker ran on {device:?}");
            failed = true;
        }
    }
    failed
}
