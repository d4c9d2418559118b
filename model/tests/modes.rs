//! Functional and timed mode are one model: every ray-query workload gives bit-identical
//! output in both, whatever the timing knobs (a tiny RTCache, a 4-entry short stack, PENDING
//! batches, a WAIT holding the port, node-fetch merging, one slot per core, one cluster or
//! two, one host thread or two), and the walker's counters agree too. Timed runs are
//! deterministic: the same configuration gives the same cycle count on any number of host
//! threads.
//!
//! The workloads cover the RTU gate's scenarios that need several traces in flight per warp:
//! several traces issued before any wait (`rt_smoke_async_batch`) and a trace nested inside
//! another's proceed loop (`rt_smoke_recursive`, here as a ray query issued from the
//! any-hit decision of another).

mod common;

use common::rq::{build_scene, build_scene_flags, run, run_with, spirv, Outcome, Scene};
use vortex_model::abi::dcr;
use vortex_model::config::{DeviceConfig, Mode, WaitMode};

const PRIMARY_SHADOW: &str = crate::rq_kernel!(
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
        vec3 p = org + th * dir;
        rayQueryEXT sq;
        rayQueryInitializeEXT(sq, tlas, gl_RayFlagsOpaqueEXT | gl_RayFlagsTerminateOnFirstHitEXT, 0xFF, p, 1e-3,
                              normalize(vec3(0.4, 1.0, -0.3)), 100.0);
        while (rayQueryProceedEXT(sq)) {}
        lit = rayQueryGetIntersectionTypeEXT(sq, true) == gl_RayQueryCommittedIntersectionNoneEXT ? 1u : 2u;
    }
    o[3u * i] = t;
    o[3u * i + 1u] = id;
    o[3u * i + 2u] = lit;"#
);

/// The confirm-all loop (`while (proceed) confirm`) on a non-opaque scene, a primary ray and
/// a shadow ray (TerminateOnFirstHit when `flag`): the compiler marks both TRACEs
/// `TRACE_CONFIRM_ALL`, so functional mode accepts the candidates in the RTU while timed mode
/// hands each to the shader; the commits, the output and the walker's counters are the same.
const CONFIRM_ALL: &str = crate::rq_kernel!(
    r#"    float x = (float(i % pc.width) + 0.5) / float(pc.width) * 2.0 - 1.0;
    float y = (float(i / pc.width) + 0.5) / float(pc.height) * 2.0 - 1.0;
    vec3 org = vec3(0.0, 1.1, -1.6);
    vec3 dir = normalize(vec3(x, -0.55 + 0.6 * y, 1.0));
    rayQueryEXT rq;
    rayQueryInitializeEXT(rq, tlas, gl_RayFlagsNoOpaqueEXT, 0xFF, org, 0.0, dir, 100.0);
    while (rayQueryProceedEXT(rq)) {
        rayQueryConfirmIntersectionEXT(rq);
    }
    uint t = 0xFFFFFFFFu, id = 0xFFFFFFFFu, lit = 0u;
    if (rayQueryGetIntersectionTypeEXT(rq, true) != gl_RayQueryCommittedIntersectionNoneEXT) {
        float th = rayQueryGetIntersectionTEXT(rq, true);
        t = floatBitsToUint(th);
        id = uint(rayQueryGetIntersectionPrimitiveIndexEXT(rq, true)) | (uint(rayQueryGetIntersectionInstanceIdEXT(rq, true)) << 24);
        vec3 p = org + th * dir;
        rayQueryEXT sq;
        uint sflags = pc.flag != 0u ? gl_RayFlagsTerminateOnFirstHitEXT : gl_RayFlagsNoneEXT;
        rayQueryInitializeEXT(sq, tlas, sflags, 0xFF, p, 1e-3, normalize(vec3(0.4, 1.0, -0.3)), 100.0);
        while (rayQueryProceedEXT(sq)) {
            rayQueryConfirmIntersectionEXT(sq);
        }
        lit = rayQueryGetIntersectionTypeEXT(sq, true) == gl_RayQueryCommittedIntersectionNoneEXT ? 1u : 2u;
        lit |= floatBitsToUint(rayQueryGetIntersectionTEXT(sq, true)) & 0xFFFFFF00u;
    }
    o[3u * i] = t;
    o[3u * i + 1u] = id;
    o[3u * i + 2u] = lit;"#
);

/// Any-hit decisions on a non-opaque scene: confirm only candidates whose primitive index
/// is not a multiple of 3, count the candidates offered; a hash of the offer order per lane.
const ANY_HIT: &str = crate::rq_kernel!(
    r#"    float x = (float(i % pc.width) + 0.5) / float(pc.width) * 2.0 - 1.0;
    float y = (float(i / pc.width) + 0.5) / float(pc.height) * 2.0 - 1.0;
    rayQueryEXT rq;
    rayQueryInitializeEXT(rq, tlas, gl_RayFlagsNoneEXT, 0xFF, vec3(0.0, 1.1, -1.6), 0.0,
                          normalize(vec3(x, -0.55 + 0.6 * y, 1.0)), 100.0);
    uint cands = 0u, h = 2166136261u;
    while (rayQueryProceedEXT(rq)) {
        uint p = uint(rayQueryGetIntersectionPrimitiveIndexEXT(rq, false));
        cands++;
        h = (h ^ p) * 16777619u;
        if (p % 3u != 0u) rayQueryConfirmIntersectionEXT(rq);
        if (pc.flag != 0u && cands == 5u) rayQueryTerminateEXT(rq);
    }
    o[3u * i] = floatBitsToUint(rayQueryGetIntersectionTEXT(rq, true));
    o[3u * i + 1u] = cands;
    o[3u * i + 2u] = h;"#
);

/// Four traces issued back to back before any proceed (rt_smoke_async_batch), then each
/// proceeded to completion in reverse order.
const ASYNC_BATCH: &str = crate::rq_kernel!(
    r#"    float x = (float(i % pc.width) + 0.5) / float(pc.width) * 2.0 - 1.0;
    float y = (float(i / pc.width) + 0.5) / float(pc.height) * 2.0 - 1.0;
    rayQueryEXT q[4];
    for (int k = 0; k < 4; k++) {
        vec3 org = vec3(0.3 * float(k) - 0.45, 1.1, -1.6);
        rayQueryInitializeEXT(q[k], tlas, gl_RayFlagsOpaqueEXT, 0xFF, org, 0.0,
                              normalize(vec3(x, -0.55 + 0.6 * y, 1.0)), 100.0);
    }
    uint acc = 0u, prims = 0u;
    for (int k = 3; k >= 0; k--) {
        while (rayQueryProceedEXT(q[k])) {}
        if (rayQueryGetIntersectionTypeEXT(q[k], true) != gl_RayQueryCommittedIntersectionNoneEXT) {
            acc ^= floatBitsToUint(rayQueryGetIntersectionTEXT(q[k], true)) * uint(k + 1);
            prims = prims * 31u + uint(rayQueryGetIntersectionPrimitiveIndexEXT(q[k], true));
        }
    }
    o[3u * i] = acc;
    o[3u * i + 1u] = prims;
    o[3u * i + 2u] = 7u;"#
);

/// A trace nested in another's proceed loop (rt_smoke_recursive as a ray query): each
/// candidate of the outer query is accepted only if a ray from it towards the light is
/// unoccluded, decided by an inner query run to completion before the outer CONTINUE.
const NESTED: &str = crate::rq_kernel!(
    r#"    float x = (float(i % pc.width) + 0.5) / float(pc.width) * 2.0 - 1.0;
    float y = (float(i / pc.width) + 0.5) / float(pc.height) * 2.0 - 1.0;
    vec3 org = vec3(0.0, 1.1, -1.6);
    vec3 dir = normalize(vec3(x, -0.55 + 0.6 * y, 1.0));
    rayQueryEXT outer;
    rayQueryInitializeEXT(outer, tlas, gl_RayFlagsNoneEXT, 0xFF, org, 0.0, dir, 100.0);
    uint inner_rays = 0u;
    while (rayQueryProceedEXT(outer)) {
        vec3 p = org + rayQueryGetIntersectionTEXT(outer, false) * dir;
        rayQueryEXT inner;
        rayQueryInitializeEXT(inner, tlas, gl_RayFlagsOpaqueEXT | gl_RayFlagsTerminateOnFirstHitEXT, 0xFF, p, 1e-3,
                              normalize(vec3(0.4, 1.0, -0.3)), 100.0);
        while (rayQueryProceedEXT(inner)) {}
        inner_rays++;
        if (rayQueryGetIntersectionTypeEXT(inner, true) == gl_RayQueryCommittedIntersectionNoneEXT) {
            rayQueryConfirmIntersectionEXT(outer);
        }
    }
    o[3u * i] = floatBitsToUint(rayQueryGetIntersectionTEXT(outer, true));
    o[3u * i + 1u] = uint(rayQueryGetIntersectionPrimitiveIndexEXT(outer, true));
    o[3u * i + 2u] = inner_rays;"#
);

fn have_glslang() -> bool {
    std::process::Command::new("glslangValidator").arg("--version").output().is_ok()
}

fn base() -> DeviceConfig {
    DeviceConfig { mode: Mode::Functional, watchdog_ms: 60_000, ..Default::default() }
}

/// Timed configurations that must not change a single output bit.
fn variants() -> Vec<(&'static str, DeviceConfig, bool)> {
    let t = DeviceConfig { mode: Mode::Timed, ..base() };
    let mut v = vec![("timed default", t.clone(), true)];
    let mut c = t.clone();
    c.rtu.rtcache_size = 1024;
    c.rtu.rtcache_mshrs = 2;
    c.rtu.merge_depth = 4;
    c.rtu.reform_thresh = 1;
    v.push(("tiny RTCache, merging, PENDING batches", c, true));
    let mut c = t.clone();
    c.core.wait_mode = WaitMode::Hold;
    c.rtu.slots_per_core = 1;
    c.num_clusters = 1;
    c.cores_per_cluster = 4;
    c.socket_size = 4;
    c.host_threads = 1;
    v.push(("one cluster, WAIT holds the port", c, true));
    // Two sockets in a cluster: two traversal cores tick in the cluster's loop (the path a
    // cluster with one core leaves to the core's own stretch), each ringing its own doorbells.
    let mut c = t.clone();
    c.num_clusters = 1;
    c.cores_per_cluster = 4;
    c.socket_size = 2;
    v.push(("one cluster of two sockets", c, true));
    let mut c = t.clone();
    c.rtu.stack_depth = 4;
    c.rtu.restart_cap = 1 << 20;
    c.rtu.slots_per_core = 4;
    c.num_threads = 8;
    v.push(("stack 4, 8 lanes, 4 slots per core", c, false));
    let mut c = t.clone();
    c.rtu.reform_sbt = true;
    v.push(("reformation by SBT key (the dispatch marked SBT-dispatched)", c, true));
    v
}

/// Runs the workload; a configuration with `reform_sbt` gets its dispatch marked as a
/// trace-rays one (`RTU_CONFIG`'s SBT bit), so the commit engine groups its candidates.
fn run_cfg(scene: &Scene, words: &[u32], cfg: &DeviceConfig, size: u32, flag: bool) -> Outcome {
    run_with(scene, words, cfg, size, flag, |d| {
        if cfg.rtu.reform_sbt {
            let v = dcr::rtu_config(dcr::RTU_SCENE_CWBVH, cfg.rtu.bvh_width, 0, true);
            d.dcr_write(dcr::RTU_CONFIG, v).expect("RTU_CONFIG");
        }
    })
}

/// Checks every timed variant against functional mode; returns the candidates the SBT
/// grouping held back in the `reform_sbt` variant.
fn check(what: &str, scene: &Scene, src: &str, size: u32, flag: bool) -> u64 {
    let words = spirv(src);
    let mut deferred = 0;
    let f = run(scene, &words, &base(), size, flag);
    assert!(f.report.timed.is_none());
    let fnt = run(scene, &words, &DeviceConfig { num_threads: 8, ..base() }, size, flag);
    assert_eq!(f.data, fnt.data, "{what}: functional output depends on the warp width");
    for (label, cfg, same_counters) in variants() {
        let t: Outcome = run_cfg(scene, &words, &cfg, size, flag);
        let rep = t.report.timed.as_ref().expect("timed report");
        assert!(rep.cycles > 0);
        assert_eq!(f.data, t.data, "{what}: {label}: output differs from functional mode");
        if cfg.rtu.reform_sbt {
            deferred += rep.rtu_totals().deferred_lanes;
        }
        if same_counters {
            let (a, b) = (&f.report.totals.rtu, &t.report.totals.rtu);
            assert_eq!(
                (a.rays, a.box_tests, a.tri_tests, a.instance_transforms, a.node_fetches, a.candidates, a.records),
                (b.rays, b.box_tests, b.tri_tests, b.instance_transforms, b.node_fetches, b.candidates, b.records),
                "{what}: {label}: walker counters differ"
            );
        }
    }
    deferred
}

#[test]
fn primary_and_shadow_rays_are_identical_in_every_mode() {
    if !have_glslang() {
        return;
    }
    check("primary+shadow", &build_scene(48, 4), PRIMARY_SHADOW, 24, true);
}

#[test]
fn any_hit_decisions_and_terminate_are_identical_in_every_mode() {
    if !have_glslang() {
        return;
    }
    let s = build_scene_flags(24, 4, 0);
    let deferred = check("any-hit", &s, ANY_HIT, 16, false);
    assert!(deferred > 0, "the rocks' SBT offsets split some candidate batch");
    check("any-hit with terminate", &s, ANY_HIT, 16, true);
}

#[test]
fn confirm_all_loops_are_identical_in_every_mode() {
    if !have_glslang() {
        return;
    }
    let s = build_scene_flags(24, 4, 0);
    check("confirm-all", &s, CONFIRM_ALL, 16, false);
    check("confirm-all, shadow terminating on its first hit", &s, CONFIRM_ALL, 16, true);
}

#[test]
fn several_traces_before_any_wait_are_identical_in_every_mode() {
    if !have_glslang() {
        return;
    }
    check("async batch", &build_scene(32, 4), ASYNC_BATCH, 16, false);
}

#[test]
fn a_trace_nested_in_a_proceed_loop_is_identical_in_every_mode() {
    if !have_glslang() {
        return;
    }
    check("nested", &build_scene_flags(24, 4, 0), NESTED, 16, false);
}

#[test]
fn width_six_is_identical_in_both_modes() {
    if !have_glslang() {
        return;
    }
    let s = build_scene(32, 6);
    let words = spirv(PRIMARY_SHADOW);
    let mut cfg = base();
    cfg.rtu.bvh_width = 6;
    let f = run(&s, &words, &cfg, 16, true);
    let t = run(&s, &words, &DeviceConfig { mode: Mode::Timed, ..cfg }, 16, true);
    assert_eq!(f.data, t.data);
}

#[test]
fn timed_runs_are_deterministic_on_any_number_of_host_threads() {
    if !have_glslang() {
        return;
    }
    // A fresh scene per run: cycle counts depend on where buffers sit (cache sets).
    let words = spirv(PRIMARY_SHADOW);
    let t = DeviceConfig { mode: Mode::Timed, ..base() };
    let one = run(&build_scene(32, 4), &words, &DeviceConfig { host_threads: 1, ..t.clone() }, 16, true);
    let two = run(&build_scene(32, 4), &words, &DeviceConfig { host_threads: 2, ..t }, 16, true);
    let (a, b) = (one.report.timed.unwrap(), two.report.timed.unwrap());
    assert_eq!(a.cycles, b.cycles);
    assert_eq!(a.cores, b.cores);
    assert_eq!(a.rtus, b.rtus);
    assert_eq!(a.rtcaches, b.rtcaches);
    assert_eq!(one.data, two.data);
}

/// `detailed_stats` attributes every record fetched and primitive tested to the invocation
/// that traced (the same attribution in both modes), and timed mode's timeline accounts for
/// every traversal-core cycle exactly as the totals do. The switch changes no output and no
/// cycle count.
#[test]
fn detailed_stats_attribute_work_to_invocations_and_cycles_to_the_timeline() {
    if !have_glslang() {
        return;
    }
    let words = spirv(PRIMARY_SHADOW);
    let size = 16;
    let mut per_mode = Vec::new();
    for mode in [Mode::Functional, Mode::Timed] {
        let cfg = DeviceConfig { mode, detailed_stats: true, ..base() };
        let d = run(&build_scene(32, 4), &words, &cfg, size, true);
        let plain = run(&build_scene(32, 4), &words, &DeviceConfig { detailed_stats: false, ..cfg }, size, true);
        assert_eq!(d.data, plain.data);
        assert!(plain.report.work.is_empty());
        let r = &d.report.totals.rtu;
        let total: u64 = d.report.work.iter().map(|&(_, w)| w as u64).sum();
        assert_eq!(total, r.node_fetches + r.tri_tests + r.aabb_tests, "{mode:?}");
        // Every pixel traced a primary ray; each id once, inside the grid.
        let mut ids: Vec<[u32; 3]> = d.report.work.iter().map(|&(id, _)| id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), d.report.work.len());
        assert!(ids.iter().all(|id| id[0] < size * size && id[1] == 0 && id[2] == 0));
        assert!(d.report.work.iter().filter(|&&(_, w)| w > 0).count() >= (size * size) as usize / 2);
        if let Some(t) = &d.report.timed {
            let tl = t.rtu_timeline.as_ref().expect("timeline");
            let tot = t.rtu_totals();
            let sum = |f: fn(&vortex_model::rtu::timeline::Bucket) -> u64| tl.buckets.iter().map(f).sum::<u64>();
            assert_eq!(sum(|b| b.busy), tot.busy_cycles);
            assert_eq!(sum(|b| b.idle_with_ray), tot.idle_with_ray);
            assert_eq!(sum(|b| b.idle_starved), tot.idle_starved);
            assert_eq!(sum(|b| b.slot_cycles), tot.slot_cycles);
            for r in &t.rtus {
                assert_eq!(r.cycles, t.cycles, "a traversal core's cycles are the dispatch's");
            }
            assert_eq!(sum(|b| b.cycles()), t.cycles * t.rtus.len() as u64);
            assert!(tl.buckets.len() <= vortex_model::rtu::timeline::MAX_BUCKETS);
            assert_eq!(plain.report.timed.as_ref().unwrap().cycles, t.cycles);
        }
        let mut work = d.report.work.clone();
        work.sort();
        per_mode.push(work);
    }
    assert_eq!(per_mode[0], per_mode[1], "functional and timed attribute work differently");
}
