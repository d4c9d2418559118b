//! The ray log (`VORTEX_RAYLOG`) and its replayer (`rt_replay`, scenario `rt_replay` of
//! research/rtu-scenarios.md): traces recorded from real walks — through the RTU front end
//! in both modes and through a device dispatch of a compiled ray-query shader — replay with
//! zero mismatches on the functional walker, the timed traversal core and the CPU reference
//! traversal, also under another RTU configuration; a tampered result is reported in the
//! right class; truncated or garbage logs are errors, never panics.

mod common;

use std::path::PathBuf;
use std::process::Command;
use vortex_model::abi::raylog as fmt;
use vortex_model::abi::rtu::{self as rtu_abi, span};
use vortex_model::config::{DeviceConfig, Mode, RtuConfig};
use vortex_model::rtu::raylog::{RayLog, Sink};
use vortex_model::rtu::reference::{Harness, Rng, Row};
use vortex_model::rtu::replay::{self, Class, Engine, Report};
use vortex_model::rtu::TraceRay;
use vortex_transcode::accel::testkit::{translate, Device, InstanceDesc};
use vortex_transcode::accel::Level;

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// A scene with every kind of leaf: an opaque and a non-opaque triangle geometry, a
/// procedural BLAS, and a TLAS of translated, rotated, scaled and flagged instances.
fn scene(dev: &Device) -> u64 {
    let mut rng = Rng::new(7);
    let mut tri = || {
        let c = [rng.range(-2.0, 2.0), rng.range(-2.0, 2.0), rng.range(-2.0, 2.0)];
        let mut v = [[0.0f32; 3]; 3];
        for p in &mut v {
            *p = [c[0] + rng.range(-0.4, 0.4), c[1] + rng.range(-0.4, 0.4), c[2] + rng.range(-0.4, 0.4)];
        }
        v
    };
    let opaque: Vec<_> = (0..120).map(|_| tri()).collect();
    let glass: Vec<_> = (0..60).map(|_| tri()).collect();
    let b = dev.blas(&[(&opaque, rtu_abi::geometry_flags::OPAQUE), (&glass, 0)]);
    let boxes: Vec<_> = (0..12)
        .map(|i| {
            let x = i as f32 * 0.3 - 1.8;
            ([x, -0.2, -0.2], [x + 0.2, 0.2, 0.2])
        })
        .collect();
    let p = dev.build(Level::Bottom, vec![dev.aabbs(&boxes, 0)]).unwrap();
    let (c, s) = (0.6f32.cos(), 0.6f32.sin());
    dev.tlas(&[
        InstanceDesc::new(b.addr, translate(0.0, 0.0, 0.0)),
        InstanceDesc {
            custom: 0x123,
            sbt: 2,
            ..InstanceDesc::new(b.addr, [c, 0.0, s, 3.0, 0.0, 1.0, 0.0, 0.5, -s, 0.0, c, -1.0])
        },
        InstanceDesc {
            flags: 0x8,
            mask: 0x0f,
            ..InstanceDesc::new(b.addr, [0.5, 0.0, 0.0, -3.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.5, 1.0])
        },
        InstanceDesc { custom: 0xabc, ..InstanceDesc::new(p.addr, translate(0.0, 1.5, 0.5)) },
    ])
    .addr
}

fn rays(accel: u64, n: usize, seed: u64) -> Vec<TraceRay> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let flags = match i % 7 {
                0 => rtu_abi::ray_flags::TERMINATE_ON_FIRST_HIT,
                1 => rtu_abi::ray_flags::CULL_BACK_FACING,
                2 => rtu_abi::ray_flags::OPAQUE,
                _ => 0,
            };
            let origin = [rng.range(-5.0, 5.0), rng.range(-5.0, 5.0), rng.range(-5.0, 5.0)];
            // Mostly towards the scene, sometimes anywhere.
            let target = [rng.range(-3.0, 3.0), rng.range(-2.0, 2.0), rng.range(-2.0, 2.0)];
            let dir = if i % 4 == 3 { rng.dir() } else { std::array::from_fn(|a| target[a] - origin[a]) };
            TraceRay {
                origin,
                dir,
                tmin: 0.0,
                tmax: if i % 11 == 0 { 2.0 } else { 100.0 },
                flags,
                cull_mask: if i % 5 == 0 { 0xf0 } else { 0xff },
                accel: if i % 97 == 0 { 0 } else { accel },
            }
        })
        .collect()
}

/// A deterministic any-hit / intersection policy of a shader: confirm some, ignore
/// others, terminate now and then; procedural hits at the box entry plus a little.
fn policy(i: usize, c: &Row) -> (u32, f32) {
    let p = c.candidate(span::PRIM);
    let t = c.candidate_f(span::T);
    match (p as usize + i) % 5 {
        0 => (rtu_abi::ACT_IGNORE, 0.0),
        1 if i.is_multiple_of(3) => (rtu_abi::ACT_ACCEPT | rtu_abi::ACT_TERMINATE, t + 0.125),
        2 if i.is_multiple_of(4) => (rtu_abi::ACT_TERMINATE, 0.0),
        _ => (rtu_abi::ACT_ACCEPT, t + 0.0625),
    }
}

/// Records `rays` traced through a harness of `mode` into `path`; returns the rows.
fn record(dev: &Device, rays: &[TraceRay], timed: bool, path: &std::path::Path) -> Vec<Row> {
    let sink = Sink::create(path.to_str().unwrap()).unwrap();
    let mut h = if timed {
        Harness::timed(&RtuConfig::default(), 32, 1)
    } else {
        Harness::functional(&RtuConfig::default(), 32, 1)
    };
    h.unit.set_raylog(Some(sink));
    let rows = h.run(&dev.mem(), rays, policy).unwrap();
    h.unit.set_raylog(None);
    rows
}

fn replay_all(log: &RayLog, cfg: &RtuConfig) -> Vec<Report> {
    Engine::ALL.iter().map(|&e| replay::replay(log, e, cfg, 16, &mut |_, _| {}).unwrap()).collect()
}

fn assert_clean(reports: &[Report], traces: usize) {
    for r in reports {
        assert_eq!(r.rays, traces as u64);
        assert_eq!(r.skipped, 0, "{}", replay::summary(reports));
        assert_eq!(r.count(Class::Match), traces as u64, "{}\n{:#?}", replay::summary(reports), r.mismatches);
    }
}

#[test]
fn recorded_traces_replay_bit_exactly_on_every_engine() {
    let dev = Device::new(4);
    let tlas = scene(&dev);
    let rays = rays(tlas, 700, 3);
    for timed in [false, true] {
        let path = tmp(&format!("harness_{timed}.vxrl"));
        let rows = record(&dev, &rays, timed, &path);
        let log = RayLog::read(&path).unwrap();
        assert_eq!(log.traces.len(), rays.len(), "one record per trace");
        assert!(!log.lines.is_empty());
        // The log holds the rays and the results as the window had them.
        let hits = rows.iter().filter(|r| r.status() == rtu_abi::STS_DONE_HIT).count();
        assert!(hits > 100 && hits < rays.len(), "a scene with hits and misses ({hits})");
        assert!(log.traces.iter().any(|t| t.decisions.len() > 2), "any-hit decisions were recorded");
        assert!(log.traces.iter().any(|t| t.result.word(span::KIND) == rtu_abi::COMMITTED_GENERATED));
        let mut sorted = log.traces.clone();
        sorted.sort_by(|a, b| a.ray.origin.map(f32::to_bits).cmp(&b.ray.origin.map(f32::to_bits)));
        let mut by_origin: Vec<(TraceRay, &Row)> = rays.iter().copied().zip(rows.iter()).collect();
        by_origin.sort_by(|a, b| a.0.origin.map(f32::to_bits).cmp(&b.0.origin.map(f32::to_bits)));
        for (t, (ray, row)) in sorted.iter().zip(by_origin) {
            assert_eq!(t.ray, ray);
            assert_eq!(t.result.status, row.status());
            assert_eq!(
                t.result.hit[..],
                row.0[rtu_abi::COMMITTED as usize..rtu_abi::COMMITTED as usize + fmt::HIT_WORDS]
            );
        }
        assert_clean(&replay_all(&log, &RtuConfig::default()), rays.len());
        // Under another RTU configuration: a 2-entry short stack restarts all the time, a
        // tight restart cap would fault; the answers must not change.
        let small = RtuConfig { stack_depth: 2, ..RtuConfig::default() };
        assert_clean(&replay_all(&log, &small), rays.len());
    }
}

/// The log's encoder and parser agree, and the file is compact.
#[test]
fn the_format_round_trips() {
    let dev = Device::new(6);
    let tlas = scene(&dev);
    let path = tmp("roundtrip.vxrl");
    let rays = rays(tlas, 200, 11);
    record(&dev, &rays, false, &path);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], b"VXRAYLOG");
    let log = RayLog::parse(&bytes).unwrap();
    assert_eq!(log.to_bytes(), bytes, "parse then encode gives the same file");
    let decisions: usize = log.traces.iter().map(|t| t.decisions.len()).sum();
    let expect = fmt::header::BYTES
        + log.lines.len() * (1 + fmt::line::BYTES)
        + log.traces.len() * (1 + fmt::trace::FIXED)
        + decisions * fmt::decision::BYTES;
    assert_eq!(bytes.len(), expect);
    // Every line is written once (one dispatch-equivalent, unchanged memory).
    let mut addrs: Vec<u64> = log.lines.iter().map(|l| l.0).collect();
    addrs.sort_unstable();
    addrs.dedup();
    assert_eq!(addrs.len(), log.lines.len());
    assert_clean(&replay_all(&log, &RtuConfig::default()), rays.len());
}

fn tampered(log: &RayLog, i: usize, f: impl FnOnce(&mut vortex_model::rtu::raylog::TraceRec)) -> RayLog {
    let mut l = log.clone();
    f(&mut l.traces[i]);
    l
}

/// A tampered recorded result is reported in the class that describes it, on every engine.
#[test]
fn tampered_results_are_classified() {
    let dev = Device::new(4);
    let tlas = scene(&dev);
    let path = tmp("tamper.vxrl");
    let opaque: Vec<TraceRay> =
        rays(tlas, 300, 5).into_iter().map(|r| TraceRay { flags: rtu_abi::ray_flags::OPAQUE, ..r }).collect();
    record(&dev, &opaque, false, &path);
    let log = RayLog::read(&path).unwrap();
    let hit = log.traces.iter().position(|t| t.result.status == rtu_abi::STS_DONE_HIT && t.result.t() > 1.0).unwrap();
    let miss = log.traces.iter().position(|t| t.result.status == rtu_abi::STS_DONE_MISS && t.ray.accel != 0).unwrap();
    let with_cand = |log: &RayLog| log.traces.iter().position(|t| !t.decisions.is_empty());
    let set = |t: &mut vortex_model::rtu::raylog::TraceRec, o: u32, v: u32| t.result.hit[o as usize] = v;
    let cases: Vec<(Class, RayLog)> = vec![
        (
            Class::RefMissGotHit,
            tampered(&log, hit, |t| {
                t.result.status = rtu_abi::STS_DONE_MISS;
                t.result.hit = [0; fmt::HIT_WORDS];
                t.result.hit[span::T as usize] = t.ray.tmax.to_bits();
                t.result.tri = 0;
            }),
        ),
        (
            Class::RefHitGotMiss,
            tampered(&log, miss, |t| {
                t.result.status = rtu_abi::STS_DONE_HIT;
                set(t, span::KIND, rtu_abi::COMMITTED_TRIANGLE);
                set(t, span::T, 1.5f32.to_bits());
            }),
        ),
        (Class::TieExact, tampered(&log, hit, |t| set(t, span::PRIM, t.result.word(span::PRIM) ^ 1))),
        (Class::TieExact, tampered(&log, hit, |t| set(t, span::INST_ID, t.result.word(span::INST_ID) + 7))),
        (
            Class::NearTie,
            tampered(&log, hit, |t| {
                set(t, span::PRIM, t.result.word(span::PRIM) + 1000);
                set(t, span::T, t.result.word(span::T) + 2);
            }),
        ),
        (
            Class::GotNearerHit,
            tampered(&log, hit, |t| {
                set(t, span::PRIM, t.result.word(span::PRIM) + 1000);
                set(t, span::T, (t.result.t() * 2.0).to_bits());
            }),
        ),
        (
            Class::GotFartherHit,
            tampered(&log, hit, |t| {
                set(t, span::PRIM, t.result.word(span::PRIM) + 1000);
                set(t, span::T, (t.result.t() * 0.5).to_bits());
            }),
        ),
        (Class::SamePrimBits, tampered(&log, hit, |t| set(t, span::U, t.result.word(span::U) ^ 1))),
        (Class::SamePrimBits, tampered(&log, hit, |t| set(t, span::T, t.result.word(span::T) + 1))),
        (Class::OtherFields, tampered(&log, hit, |t| set(t, span::FRONT, t.result.word(span::FRONT) ^ 1))),
    ];
    for (want, l) in &cases {
        for e in Engine::ALL {
            let r = replay::replay(l, e, &RtuConfig::default(), 4, &mut |_, _| {}).unwrap();
            assert_eq!(r.mismatched(), 1, "{}: {}", e.name(), replay::summary(std::slice::from_ref(&r)));
            assert_eq!(r.count(*want), 1, "{}: {}", e.name(), replay::summary(std::slice::from_ref(&r)));
            assert_eq!(r.mismatches[0].class, *want);
        }
    }
    // A recorded decision about another candidate: the replay diverged.
    let path = tmp("tamper_ahs.vxrl");
    record(&dev, &rays(tlas, 300, 5), false, &path);
    let log = RayLog::read(&path).unwrap();
    let i = with_cand(&log).unwrap();
    let diverged = [
        tampered(&log, i, |t| t.decisions[0].cand.prim ^= 4),
        tampered(&log, i, |t| {
            let d = t.decisions[0];
            t.decisions.push(d);
            t.result = vortex_model::rtu::raylog::TraceResult { ..t.result };
        }),
    ];
    for l in &diverged {
        for e in Engine::ALL {
            let r = replay::replay(l, e, &RtuConfig::default(), 4, &mut |_, _| {}).unwrap();
            assert_eq!(
                r.count(Class::DecisionsDiverged),
                1,
                "{}: {}",
                e.name(),
                replay::summary(std::slice::from_ref(&r))
            );
            assert_eq!(r.mismatched(), 1);
        }
    }
}

/// Truncated, garbage and wrong-version logs are errors naming the offset, never panics;
/// a corrupt memory line is a fault class or a mismatch, never a panic.
#[test]
fn malformed_logs_are_errors() {
    let dev = Device::new(4);
    let tlas = scene(&dev);
    let path = tmp("malformed.vxrl");
    record(&dev, &rays(tlas, 64, 9), false, &path);
    let bytes = std::fs::read(&path).unwrap();
    assert!(RayLog::parse(&bytes).is_ok());
    // Every truncation of the file is either a valid shorter log (cut at a record
    // boundary) or an error.
    let mut errors = 0;
    for cut in 0..bytes.len() {
        match RayLog::parse(&bytes[..cut]) {
            Ok(l) => assert!(l.traces.len() + l.lines.len() < 64 + bytes.len()),
            Err(e) => {
                errors += 1;
                assert!(e.offset <= cut, "{e}");
            }
        }
    }
    assert!(errors > bytes.len() / 2);
    let e = RayLog::parse(b"garbage, not a log").unwrap_err();
    assert!(e.to_string().contains("bad magic"), "{e}");
    let mut v2 = bytes.clone();
    v2[fmt::header::VERSION] = 2;
    assert!(RayLog::parse(&v2).unwrap_err().to_string().contains("unsupported version 2"));
    let mut tag = bytes.clone();
    tag[fmt::header::BYTES] = 0x7f;
    assert!(RayLog::parse(&tag).unwrap_err().to_string().contains("unknown record tag"));
    // Random byte flips: parse errors or replays that report, never a panic.
    let mut rng = Rng::new(1);
    for _ in 0..40 {
        let mut b = bytes.clone();
        for _ in 0..8 {
            let i = fmt::header::BYTES + rng.below((b.len() - fmt::header::BYTES) as u64) as usize;
            b[i] = rng.next_u64() as u8;
        }
        if let Ok(l) = RayLog::parse(&b) {
            for e in Engine::ALL {
                let cfg = RtuConfig { max_visits: 10_000, ..RtuConfig::default() };
                if let Ok(r) = replay::replay(&l, e, &cfg, 1, &mut |_, _| {}) {
                    assert_eq!(r.counts.iter().sum::<u64>() + r.skipped, r.rays);
                }
            }
        }
    }
}

/// The binary: a summary table and exit 0 on a good log, 1 with the mismatches on a
/// tampered one, 2 with a message on a truncated one or a bad argument.
#[test]
fn rt_replay_binary_reports_and_exits_by_outcome() {
    let dev = Device::new(4);
    let tlas = scene(&dev);
    let path = tmp("binary.vxrl");
    record(&dev, &rays(tlas, 100, 4), false, &path);
    let bin = env!("CARGO_BIN_EXE_rt_replay");
    let out = Command::new(bin).arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for w in ["functional", "timed", "reference", "ref_hit_got_miss", "tie_exact", "near_tie", "decisions_diverged"] {
        assert!(stdout.contains(w), "{w} missing from:\n{stdout}");
    }
    assert!(
        stdout.lines().any(|l| l.starts_with("match") && l.split_whitespace().skip(1).all(|n| n == "100")),
        "{stdout}"
    );
    // A stack-depth change through a VORTEX_CONFIG file changes nothing.
    let toml = tmp("small_stack.toml");
    std::fs::write(&toml, "[rtu]\nstack_depth = 4\n").unwrap();
    let out = Command::new(bin).args(["--engine", "functional", "--config"]).arg(&toml).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("stack_depth 4"));
    // Tampered: exit 1, and --verbose shows the mismatch with its ray.
    let mut log = RayLog::read(&path).unwrap();
    let i = log.traces.iter().position(|t| t.result.status == rtu_abi::STS_DONE_HIT).unwrap();
    log.traces[i].result.hit[span::PRIM as usize] ^= 1;
    let bad = tmp("binary_tampered.vxrl");
    std::fs::write(&bad, log.to_bytes()).unwrap();
    let out = Command::new(bin).args(["--engine", "reference", "--verbose", "3"]).arg(&bad).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(&format!("[reference] trace {i}: tie_exact")), "{stdout}");
    assert!(stdout.contains("    ray      org="), "{stdout}");
    // Truncated and missing files, bad arguments.
    let bytes = std::fs::read(&path).unwrap();
    let cut = tmp("binary_cut.vxrl");
    std::fs::write(&cut, &bytes[..bytes.len() - 5]).unwrap();
    for args in [vec![cut.to_str().unwrap()], vec!["/nonexistent.vxrl"], vec!["--engine", "gpu", "x"], vec![]] {
        let out = Command::new(bin).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("rt_replay:"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A real dispatch: a compiled ray-query shader (primary + shadow rays, and any-hit
/// decisions with terminate) on the device model records through `Device::set_raylog`
/// in both modes, and the logs replay with zero mismatches on every engine.
#[test]
fn device_dispatches_record_and_replay() {
    use common::rq::{build_scene_flags, run_with, spirv};
    if std::process::Command::new("glslangValidator").arg("--version").output().is_err() {
        eprintln!("skipped: glslangValidator not installed");
        return;
    }
    let shader = crate::rq_kernel!(
        r#"    float x = (float(i % pc.width) + 0.5) / float(pc.width) * 2.0 - 1.0;
    float y = (float(i / pc.width) + 0.5) / float(pc.height) * 2.0 - 1.0;
    vec3 org = vec3(0.0, 1.1, -1.6);
    vec3 dir = normalize(vec3(x, -0.55 + 0.6 * y, 1.0));
    rayQueryEXT rq;
    rayQueryInitializeEXT(rq, tlas, gl_RayFlagsNoneEXT, 0xFF, org, 0.0, dir, 100.0);
    uint cands = 0u;
    while (rayQueryProceedEXT(rq)) {
        uint p = uint(rayQueryGetIntersectionPrimitiveIndexEXT(rq, false));
        cands++;
        if (p % 3u != 0u) rayQueryConfirmIntersectionEXT(rq);
        if (cands == 6u) rayQueryTerminateEXT(rq);
    }
    uint lit = 0u;
    if (rayQueryGetIntersectionTypeEXT(rq, true) != gl_RayQueryCommittedIntersectionNoneEXT) {
        vec3 p = org + rayQueryGetIntersectionTEXT(rq, true) * dir;
        rayQueryEXT sq;
        rayQueryInitializeEXT(sq, tlas, gl_RayFlagsOpaqueEXT | gl_RayFlagsTerminateOnFirstHitEXT, 0xFF, p, 1e-3,
                              normalize(vec3(0.4, 1.0, -0.3)), 100.0);
        while (rayQueryProceedEXT(sq)) {}
        lit = rayQueryGetIntersectionTypeEXT(sq, true) == gl_RayQueryCommittedIntersectionNoneEXT ? 1u : 2u;
    }
    o[3u * i] = floatBitsToUint(rayQueryGetIntersectionTEXT(rq, true));
    o[3u * i + 1u] = cands;
    o[3u * i + 2u] = lit;"#
    );
    let words = spirv(shader);
    let scene = build_scene_flags(64, 4, 0);
    let mut logs = Vec::new();
    for mode in [Mode::Functional, Mode::Timed] {
        let path = tmp(&format!("device_{mode:?}.vxrl"));
        let sink = Sink::create(path.to_str().unwrap()).unwrap();
        let cfg = DeviceConfig { mode, ..DeviceConfig::default() };
        let size = 48u32;
        let out = run_with(&scene, &words, &cfg, size, false, |dev| dev.set_raylog(Some(sink.clone())));
        // Recording changes nothing the device does: same output, and in timed mode the
        // same cycles and counters (the walk drives the RTCache exactly as without a log).
        let plain = common::rq::run(&scene, &words, &cfg, size, false);
        assert_eq!(plain.data, out.data);
        assert_eq!(plain.report.totals.rtu, out.report.totals.rtu);
        let cycles = |o: &common::rq::Outcome| o.report.timed.as_ref().map(|t| (t.cycles, t.rtus.clone()));
        assert_eq!(cycles(&plain), cycles(&out), "{mode:?}");
        let lit = out.data.chunks_exact(12).filter(|c| c[8] != 0).count() as u64;
        let log = RayLog::read(&path).unwrap();
        // One primary trace per pixel plus one shadow trace per hit.
        assert_eq!(log.traces.len() as u64, (size * size) as u64 + lit, "{mode:?}");
        assert_eq!(sink.traces(), log.traces.len() as u64);
        assert!(log.traces.iter().any(|t| t.decisions.len() > 1), "any-hit decisions recorded");
        let reports = replay_all(&log, &RtuConfig::default());
        assert_clean(&reports, log.traces.len());
        logs.push(log);
    }
    // Both modes recorded the same traces (in another order: warps interleave differently).
    let key = |l: &RayLog| {
        let mut v: Vec<String> =
            l.traces.iter().map(|t| format!("{:?}{:?}{:?}", t.ray, t.result, t.decisions)).collect();
        v.sort();
        v
    };
    assert_eq!(key(&logs[0]), key(&logs[1]));
}

/// An rdna2 device's traces (`FLAG_SHADER_WALK`) round-trip through the format, go to the
/// rdna2 engine only, and `agreement` pairs two logs ray by ray: identical committed hits
/// match, a changed t bit or primitive is classified, terminate-on-first-hit rays compare
/// hit or miss only, and rays without a twin are counted.
#[test]
fn shader_walk_traces_and_the_agreement_of_two_logs() {
    use vortex_model::rtu::raylog::TraceRec;
    let dev = Device::new(4);
    let tlas = scene(&dev);
    let path = tmp("agreement_rtu.vxrl");
    record(&dev, &rays(tlas, 200, 21), false, &path);
    let a = RayLog::read(&path).unwrap();
    let hit = |t: &TraceRec| t.result.status == rtu_abi::STS_DONE_HIT && t.decisions.is_empty();
    assert!(a.traces.iter().filter(|t| hit(t)).count() > 10);
    let same = replay::agreement(&a, &a, 4);
    let done = a.traces.iter().filter(|t| t.flags & fmt::FLAG_OPEN == 0 && t.replayable()).count() as u64;
    assert_eq!((same.paired, same.unpaired, same.disagreeing()), (done, 0, 0));
    // The other log: one t bit, one primitive changed; one ray with terminate-on-first-hit
    // whose hit is another primitive (compared as hit or miss only); one ray dropped.
    let mut b = a.clone();
    let hits: Vec<usize> = (0..b.traces.len()).filter(|&i| hit(&b.traces[i])).collect();
    b.traces[hits[0]].result.hit[span::T as usize] ^= 1;
    b.traces[hits[1]].result.hit[span::PRIM as usize] ^= 1;
    let mut first = b.traces[hits[2]].clone();
    first.ray.flags |= rtu_abi::ray_flags::TERMINATE_ON_FIRST_HIT;
    let mut other = first.clone();
    other.result.hit[span::PRIM as usize] ^= 1;
    b.traces[hits[2]] = other;
    let mut a2 = a.clone();
    a2.traces[hits[2]] = first;
    b.traces.remove(hits[3]);
    let r = replay::agreement(&a2, &b, 8);
    assert_eq!(r.count(Class::SamePrimBits), 1, "{r:?}");
    assert_eq!(r.count(Class::TieExact), 1, "{r:?}");
    assert_eq!(r.hit_only, same.hit_only + 1, "{r:?}");
    assert_eq!((r.unpaired, r.disagreeing()), (1, 3), "{r:?}");
    // A shader-walk trace round-trips and only the rdna2 engine takes it.
    let mut s = a.clone();
    for t in &mut s.traces {
        t.flags |= fmt::FLAG_SHADER_WALK;
    }
    let back = RayLog::parse(&s.to_bytes()).unwrap();
    assert!(back.traces.iter().all(|t| t.shader_walk()));
    for e in Engine::ALL {
        let r = replay::replay(&back, e, &RtuConfig::default(), 1, &mut |_, _| {}).unwrap();
        assert_eq!(r.skipped, back.traces.len() as u64, "{e:?}");
    }
    assert!(!Engine::Rdna2.takes(&a.traces[0]));
    // An unknown flag is still refused.
    let mut bad = s.to_bytes();
    let mut at = fmt::header::BYTES;
    while bad[at] == fmt::TAG_LINE {
        at += 1 + fmt::line::BYTES;
    }
    bad[at + 1 + fmt::trace::TRACE_FLAGS] |= 0x10;
    assert!(RayLog::parse(&bad).unwrap_err().to_string().contains("unknown trace flags"));
}
