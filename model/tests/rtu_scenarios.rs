//! The RTU regression scenarios (research/rtu-scenarios.md) that make sense without a
//! shader, driven through the `RtuUnit` API, plus the seed-004 hand fixtures,
//! watertightness, restarts under a tiny stack, and malformed structures.

#![allow(clippy::needless_range_loop)]

use vortex_model::abi::bvh::{self, header, node, tri};
use vortex_model::abi::rtu::{self as rtu_abi, geometry_flags as gf, instance_flags as inf, ray_flags as rf, span};
use vortex_model::abi::{wr_f32, wr_u32, MAX_THREADS};
use vortex_model::config::RtuConfig;
use vortex_model::fault::FaultKind;
use vortex_model::rtu::reference::{Harness, Row};
use vortex_model::rtu::{RtuUnit, TraceRay};
use vortex_transcode::accel::testkit::{translate, Device, InstanceDesc};
use vortex_transcode::accel::Level;

type Tri = [[f32; 3]; 3];
const OPAQUE: u32 = gf::OPAQUE;
const SEED_TRI: Tri = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];

/// The seed triangle translated to z.
fn tri_at(z: f32) -> Tri {
    SEED_TRI.map(|v| [v[0], v[1], z])
}

fn down(accel: u64) -> TraceRay {
    TraceRay {
        origin: [0.25, 0.25, 1.0],
        dir: [0.0, 0.0, -1.0],
        tmin: 0.0,
        tmax: 1000.0,
        flags: 0,
        cull_mask: 0xff,
        accel,
    }
}

fn cfg() -> RtuConfig {
    RtuConfig::default()
}

fn run(dev: &Device, rays: &[TraceRay], decide: impl FnMut(usize, &Row) -> (u32, f32)) -> Vec<Row> {
    Harness::new(&cfg(), 32, 1).run(&dev.mem(), rays, decide).unwrap()
}

fn run1(dev: &Device, ray: TraceRay, action: u32) -> Row {
    run(dev, &[ray], |_, _| (action, 0.0)).remove(0)
}

const IGNORE: u32 = rtu_abi::ACT_IGNORE;
const ACCEPT: u32 = rtu_abi::ACT_ACCEPT;
const TERMINATE: u32 = rtu_abi::ACT_TERMINATE;

#[test]
fn rt_smoke_single_opaque_triangle_all_lanes() {
    let dev = Device::one_per_leaf(4);
    let b = dev.blas(&[(&[SEED_TRI], OPAQUE)]);
    let rows = run(&dev, &[down(b.addr); 32], |_, _| panic!("opaque"));
    for r in rows {
        assert_eq!(r.status(), rtu_abi::STS_DONE_HIT);
        assert_eq!(r.committed(span::KIND), rtu_abi::COMMITTED_TRIANGLE);
        assert_eq!((r.committed_f(span::T), r.committed_f(span::U), r.committed_f(span::V)), (1.0, 0.25, 0.25));
        assert_eq!(r.committed(span::FRONT), 1);
        // BLAS traced directly: identity matrices, object ray = world ray, ids 0.
        assert_eq!(r.committed(span::INST_ID), 0);
        assert_eq!(r.committed_f(span::O2W), 1.0);
        assert_eq!(r.committed_f(span::W2O + 5), 1.0);
        assert_eq!(r.committed_f(span::OBJ_DIR + 2), -1.0);
        // Ray echo.
        assert_eq!(f32::from_bits(r.0[rtu_abi::RAY_DIR as usize + 2]), -1.0);
        assert_eq!(r.0[rtu_abi::RAY_CULL_MASK as usize], 0xff);
    }
    // Seed 004 §10.2: (0.75, 0.75) misses.
    let r = run1(&dev, TraceRay { origin: [0.75, 0.75, 1.0], ..down(b.addr) }, IGNORE);
    assert_eq!(r.status(), rtu_abi::STS_DONE_MISS);
    assert_eq!(r.committed(span::KIND), rtu_abi::COMMITTED_NONE);
    assert_eq!(r.committed_f(span::T), 1000.0, "committed t of a miss is tmax");
}

#[test]
fn null_structure_and_degenerate_rays_miss() {
    let dev = Device::one_per_leaf(4);
    let b = dev.blas(&[(&[SEED_TRI], OPAQUE)]);
    assert_eq!(run1(&dev, down(0), IGNORE).status(), rtu_abi::STS_DONE_MISS);
    let nan = TraceRay { origin: [f32::NAN, 0.25, 1.0], ..down(b.addr) };
    assert_eq!(run1(&dev, nan, IGNORE).status(), rtu_abi::STS_DONE_MISS);
    let zero = TraceRay { dir: [0.0; 3], ..down(b.addr) };
    assert_eq!(run1(&dev, zero, IGNORE).status(), rtu_abi::STS_DONE_MISS);
    // A null structure on a lane whose previous trace hit still misses (the lane's old
    // commit is forgotten; found by `rt_replay`).
    let rows = run(&dev, &[down(b.addr), down(0)], |_, _| (IGNORE, 0.0));
    let mut h = Harness::new(&cfg(), 32, 1);
    let first = h.run(&dev.mem(), &[down(b.addr)], |_, _| (IGNORE, 0.0)).unwrap().remove(0);
    let second = h.run(&dev.mem(), &[down(0)], |_, _| (IGNORE, 0.0)).unwrap().remove(0);
    assert_eq!((rows[0].status(), first.status()), (rtu_abi::STS_DONE_HIT, rtu_abi::STS_DONE_HIT));
    assert_eq!((rows[1].status(), second.status()), (rtu_abi::STS_DONE_MISS, rtu_abi::STS_DONE_MISS));
    assert_eq!(second.committed(span::KIND), rtu_abi::COMMITTED_NONE);
}

#[test]
fn rt_smoke_ahs_accept_and_ignore() {
    let dev = Device::one_per_leaf(4);
    for tris in [vec![SEED_TRI], (0..20).map(|i| tri_at(-(i as f32))).collect::<Vec<_>>()] {
        let b = dev.blas(&[(&tris, 0)]);
        let r = run1(&dev, down(b.addr), IGNORE);
        assert_eq!(r.status(), rtu_abi::STS_DONE_MISS, "IGNORE of every candidate is a miss");
        let mut offers = 0;
        let r = run(&dev, &[down(b.addr)], |_, c| {
            assert_eq!(c.status(), rtu_abi::STS_YIELD_ANYHIT);
            assert_eq!(c.candidate(span::KIND), rtu_abi::CANDIDATE_TRIANGLE);
            offers += 1;
            (ACCEPT, 0.0)
        })
        .remove(0);
        assert_eq!(r.status(), rtu_abi::STS_DONE_HIT);
        assert_eq!((r.committed_f(span::T), r.committed(span::PRIM)), (1.0, 0));
        assert!(offers >= 1);
        // TERMINATE with nothing committed is a miss; ACCEPT|TERMINATE commits and stops.
        assert_eq!(run1(&dev, down(b.addr), TERMINATE).status(), rtu_abi::STS_DONE_MISS);
        let mut n = 0;
        let r = run(&dev, &[down(b.addr)], |_, _| {
            n += 1;
            (ACCEPT | TERMINATE, 0.0)
        })
        .remove(0);
        assert_eq!((r.status(), n), (rtu_abi::STS_DONE_HIT, 1));
    }
}

#[test]
fn rt_smoke_ahs_mixed_opaque_and_non_opaque() {
    let dev = Device::one_per_leaf(4);
    // Non-opaque at t=1 (geometry 0), opaque at t=2 (geometry 1).
    let b = dev.blas(&[(&[tri_at(0.0)], 0), (&[tri_at(-1.0)], OPAQUE)]);
    let r = run1(&dev, down(b.addr), IGNORE);
    assert_eq!((r.status(), r.committed_f(span::T), r.committed(span::GEOM)), (rtu_abi::STS_DONE_HIT, 2.0, 1));
    let r = run1(&dev, down(b.addr), ACCEPT);
    assert_eq!((r.committed_f(span::T), r.committed(span::GEOM)), (1.0, 0));
    // Opaque in front of a non-opaque one: the farther candidate is never offered.
    let b = dev.blas(&[(&[tri_at(-1.0)], 0), (&[tri_at(0.0)], OPAQUE)]);
    let rows = run(&dev, &[down(b.addr)], |_, _| panic!("candidate behind an opaque hit"));
    assert_eq!(rows[0].committed_f(span::T), 1.0);
}

/// Every lane traces the same ray through 8 stacked non-opaque triangles and accepts only
/// its own target; walks diverge, every lane ends on its target, offers come nearest
/// first and never twice.
#[test]
fn rt_smoke_ahs_multi_divergent_lanes() {
    let dev = Device::one_per_leaf(4);
    let tris: Vec<Tri> = (0..8).map(|i| tri_at(-(i as f32))).collect();
    let b = dev.blas(&[(&tris, 0)]);
    let mut offered: Vec<Vec<u32>> = vec![Vec::new(); 32];
    let rows = run(&dev, &[down(b.addr); 32], |lane, c| {
        let prim = c.candidate(span::PRIM);
        offered[lane].push(prim);
        if prim == lane as u32 % 8 {
            (ACCEPT, 0.0)
        } else {
            (IGNORE, 0.0)
        }
    });
    for (lane, r) in rows.iter().enumerate() {
        let target = lane as u32 % 8;
        assert_eq!(r.committed(span::PRIM), target);
        assert_eq!(r.committed_f(span::T), 1.0 + target as f32);
        let o = &offered[lane];
        assert!(o.windows(2).all(|w| w[0] < w[1]), "lane {lane}: offers {o:?} nearest first, each once");
        assert_eq!(*o.last().unwrap(), target, "nothing behind the accepted hit is offered");
    }
}

/// rt_smoke_ahs_custom / rt_smoke_ahs_geom: the any-hit decision reads the *candidate's*
/// instance custom index, instance id and geometry index from the window.
#[test]
fn rt_smoke_ahs_custom_and_geom() {
    let dev = Device::one_per_leaf(4);
    let b = dev.blas(&[(&[tri_at(-5.0)], OPAQUE), (&[tri_at(0.0)], 0)]);
    let near = InstanceDesc { custom: 0xC0DE, ..InstanceDesc::new(b.addr, translate(0.0, 0.0, 0.0)) };
    let far = InstanceDesc { custom: 0xFA4, ..InstanceDesc::new(b.addr, translate(0.0, 0.0, -100.0)) };
    let t = dev.tlas(&[far, near]);
    let mut seen = Vec::new();
    let rows = run(&dev, &[down(t.addr)], |_, c| {
        seen.push((c.candidate(span::CUSTOM), c.candidate(span::INST_ID), c.candidate(span::GEOM)));
        (IGNORE, 0.0)
    });
    assert_eq!(seen, vec![(0xC0DE, 1, 1)], "custom, instance id and geometry of the candidate");
    assert_eq!((rows[0].committed(span::GEOM), rows[0].committed(span::CUSTOM)), (0, 0xC0DE));
    assert_eq!(rows[0].committed_f(span::T), 6.0);
}

/// rt_smoke_reform / reform_mw / reform_sbt, in timed mode: with a reformation threshold of
/// one, a slot writes a candidate batch back as soon as one lane holds a candidate and the
/// others read PENDING; the lanes' results and offer orders are exactly functional mode's.
#[test]
fn reformation_batches_with_pending_lanes_change_nothing() {
    let dev = Device::one_per_leaf(4);
    let tris: Vec<Tri> = (0..8).map(|i| tri_at(-(i as f32))).collect();
    let b = dev.blas(&[(&tris, 0)]);
    // Lanes start at different heights, so their walks reach candidates at different times.
    let rays: Vec<TraceRay> =
        (0..32).map(|l| TraceRay { origin: [0.25, 0.25, 1.0 + 3.0 * (l % 5) as f32], ..down(b.addr) }).collect();
    fn decide(offered: &mut [Vec<u32>]) -> impl FnMut(usize, &Row) -> (u32, f32) + '_ {
        move |lane: usize, c: &Row| {
            let prim = c.candidate(span::PRIM);
            offered[lane].push(prim);
            if prim == (lane as u32 * 3) % 8 {
                (ACCEPT, 0.0)
            } else {
                (IGNORE, 0.0)
            }
        }
    }
    let mut f_off = vec![Vec::new(); 32];
    let f = Harness::functional(&cfg(), 32, 1).run(&dev.mem(), &rays, decide(&mut f_off)).unwrap();
    let reform = RtuConfig { reform_thresh: 1, ..cfg() };
    let mut t_off = vec![Vec::new(); 32];
    let mut h = Harness::timed(&reform, 32, 1);
    let t = h.run(&dev.mem(), &rays, decide(&mut t_off)).unwrap();
    assert_eq!(f, t);
    assert_eq!(f_off, t_off);
    let e = &h.timed_rtu().unwrap().engine.stats;
    assert!(e.pending_lanes > 0 && e.batches > 8, "{e:?}");
}

/// rt_smoke_reform_sbt on the commit engine: lanes of one warp whose candidates belong to
/// four geometries (four SBT keys) get one key per batch with `reform_sbt`, the rest held
/// PENDING for the next batches; without it a batch mixes the four keys. The candidates each
/// lane is offered, in order, and the results are functional mode's either way.
#[test]
fn rt_smoke_reform_sbt_batches_one_sbt_key_at_a_time() {
    let dev = Device::one_per_leaf(4);
    let shift = |t: Tri, dx: f32| t.map(|v| [v[0] + dx, v[1], v[2]]);
    let geoms: Vec<Vec<Tri>> =
        (0..4).map(|g| [0.0, -1.0].iter().map(|&z| shift(tri_at(z), 2.0 * g as f32)).collect()).collect();
    let b = dev.blas(&geoms.iter().map(|t| (&t[..], 0)).collect::<Vec<_>>());
    let rays: Vec<TraceRay> =
        (0..32).map(|l| TraceRay { origin: [0.25 + 2.0 * (l % 4) as f32, 0.25, 1.0], ..down(b.addr) }).collect();
    fn decide(offered: &mut [Vec<(u32, u32)>]) -> impl FnMut(usize, &Row) -> (u32, f32) + '_ {
        move |lane: usize, c: &Row| {
            offered[lane].push((c.candidate(span::GEOM), c.candidate(span::PRIM)));
            (if c.candidate(span::PRIM) == 1 { ACCEPT } else { IGNORE }, 0.0)
        }
    }
    let mut f_off = vec![Vec::new(); 32];
    let f = Harness::functional(&cfg(), 32, 1).run(&dev.mem(), &rays, decide(&mut f_off)).unwrap();
    assert!(f_off.iter().enumerate().all(|(l, o)| o.len() == 2 && o[0].0 == l as u32 % 4), "{f_off:?}");
    for sbt in [false, true] {
        let mut t_off = vec![Vec::new(); 32];
        let mut h = Harness::timed(&RtuConfig { reform_sbt: sbt, ..cfg() }, 32, 1);
        let t = h.run(&dev.mem(), &rays, decide(&mut t_off)).unwrap();
        assert_eq!(f, t, "reform_sbt = {sbt}");
        assert_eq!(f_off, t_off, "reform_sbt = {sbt}");
        let e = &h.timed_rtu().unwrap().engine.stats;
        assert_eq!(e.batch_candidates, 64, "{e:?}");
        if sbt {
            // Two rounds of candidates, four keys each: eight candidate batches of one key.
            assert_eq!(e.batch_sbt_keys, e.candidate_batches, "{e:?}");
            assert!(e.candidate_batches >= 8 && e.deferred_lanes >= 48, "{e:?}");
        } else {
            assert_eq!(e.deferred_lanes, 0, "{e:?}");
            assert!(e.batch_sbt_keys > e.candidate_batches, "a batch mixes keys: {e:?}");
        }
    }
}

#[test]
fn rt_smoke_partial_mask() {
    let dev = Device::one_per_leaf(4);
    let empty = dev.build(Level::Bottom, vec![]).unwrap();
    let scene = dev.blas(&[(&[SEED_TRI], OPAQUE)]);
    let mem = dev.mem();
    let mut u = RtuUnit::new(&cfg(), 2, 32);
    u.launch_warp(1, 1);
    let q = [0u32; MAX_THREADS];
    u.trace(&mem, 1, u32::MAX, &q, &[down(empty.addr); MAX_THREADS]).unwrap();
    let mut rays = [down(0); MAX_THREADS];
    rays[31] = down(scene.addr);
    u.trace(&mem, 1, 1 << 31, &q, &rays).unwrap();
    let mut st = [9u32; MAX_THREADS];
    assert!(u.wait(1, u32::MAX, &q, &mut st).unwrap());
    assert!(st[..31].iter().all(|&s| s == rtu_abi::STS_DONE_MISS));
    assert_eq!(st[31], rtu_abi::STS_DONE_HIT);
    assert_eq!(u.stats().rays, 33);
}

#[test]
fn rt_smoke_multitri_closest() {
    let dev = Device::one_per_leaf(4);
    let tris: Vec<Tri> = [7.0f32, 3.0, 9.0, 2.0, 5.0].iter().map(|&z| tri_at(-z)).collect();
    let b = dev.blas(&[(&tris, OPAQUE)]);
    let r = run1(&dev, down(b.addr), IGNORE);
    assert_eq!((r.committed_f(span::T), r.committed(span::PRIM)), (3.0, 3));
}

#[test]
fn procedural_yield_and_generated_commit() {
    let dev = Device::one_per_leaf(4);
    let b = dev.build(Level::Bottom, vec![dev.aabbs(&[([-1.0, -1.0, -3.0], [1.0, 1.0, -1.0])], OPAQUE)]).unwrap();
    let mut seen = 0;
    let r = run(&dev, &[down(b.addr)], |_, c| {
        assert_eq!(c.status(), rtu_abi::STS_YIELD_PROC);
        assert_eq!(c.candidate(span::KIND), rtu_abi::CANDIDATE_AABB);
        assert_eq!(c.0[rtu_abi::CAND_AABB_OPAQUE as usize], 1);
        assert_eq!(c.candidate_f(span::OBJ_ORIGIN + 2), 1.0);
        seen += 1;
        (ACCEPT, 2.5)
    })
    .remove(0);
    assert_eq!(seen, 1);
    assert_eq!(r.status(), rtu_abi::STS_DONE_HIT);
    assert_eq!(r.committed(span::KIND), rtu_abi::COMMITTED_GENERATED);
    assert_eq!((r.committed_f(span::T), r.committed_f(span::U), r.committed_f(span::V)), (2.5, 0.0, 0.0));
    assert_eq!(run1(&dev, down(b.addr), IGNORE).status(), rtu_abi::STS_DONE_MISS);
    // Origin inside the box with tmin = tmax = 0 still reports it.
    let inside = TraceRay { origin: [0.0, 0.0, -2.0], tmin: 0.0, tmax: 0.0, ..down(b.addr) };
    let mut n = 0;
    run(&dev, &[inside], |_, _| {
        n += 1;
        (IGNORE, 0.0)
    });
    assert_eq!(n, 1);
    // SKIP_AABBS, CULL_OPAQUE skip it; CULL_NO_OPAQUE does not.
    for (flags, offers) in [(rf::SKIP_AABBS, 0), (rf::CULL_OPAQUE, 0), (rf::CULL_NO_OPAQUE, 1), (rf::SKIP_TRIANGLES, 1)]
    {
        let mut n = 0;
        run(&dev, &[TraceRay { flags, ..down(b.addr) }], |_, _| {
            n += 1;
            (IGNORE, 0.0)
        });
        assert_eq!(n, offers, "flags {flags:#x}");
    }
}

/// rt_smoke_proc_inst: two instances (ids 5 and 9, custom 0xa5 / 0xa9) of one procedural BLAS.
#[test]
fn procedural_instances_carry_their_ids() {
    let dev = Device::one_per_leaf(4);
    let b = dev.build(Level::Bottom, vec![dev.aabbs(&[([0.0, 0.0, -0.5], [1.0, 1.0, 0.5])], 0)]).unwrap();
    let mut descs = vec![InstanceDesc::new(0, translate(0.0, 0.0, 0.0)); 10];
    descs[5] = InstanceDesc { custom: 0xa5, sbt: 3, ..InstanceDesc::new(b.addr, translate(0.0, 0.0, -5.0)) };
    descs[9] = InstanceDesc { custom: 0xa9, sbt: 4, ..InstanceDesc::new(b.addr, translate(0.0, 0.0, -10.0)) };
    let t = dev.tlas(&descs);
    let mut seen = Vec::new();
    let r = run(&dev, &[down(t.addr)], |_, c| {
        seen.push((c.candidate(span::INST_ID), c.candidate(span::CUSTOM), c.candidate(span::SBT)));
        // The object ray is in the instance's space.
        let oz = c.candidate_f(span::OBJ_ORIGIN + 2);
        assert_eq!(oz, 1.0 + if c.candidate(span::INST_ID) == 5 { 5.0 } else { 10.0 });
        (ACCEPT, if c.candidate(span::INST_ID) == 5 { 5.5 } else { 10.5 })
    })
    .remove(0);
    assert_eq!(seen[0], (5, 0xa5, 3), "nearer instance first");
    assert!(seen.iter().all(|s| *s == (5, 0xa5, 3) || *s == (9, 0xa9, 4)));
    assert_eq!((r.committed(span::INST_ID), r.committed(span::CUSTOM), r.committed_f(span::T)), (5, 0xa5, 5.5));
    assert_eq!(r.committed_f(span::O2W + 11), -5.0);
    assert_eq!(r.committed_f(span::W2O + 11), 5.0);
}

/// rt_smoke_tlas / tlas_builder: two instances of one BLAS at z=-10 and z=-5; the closer
/// wins; custom index differs from the instance id.
#[test]
fn two_instances_sharing_a_blas() {
    let dev = Device::one_per_leaf(4);
    let b = dev.blas(&[(&[SEED_TRI], OPAQUE), (&[tri_at(0.5)], OPAQUE)]);
    let t = dev.tlas(&[
        InstanceDesc { custom: 0x00C0_DE00, ..InstanceDesc::new(b.addr, translate(0.0, 0.0, -10.0)) },
        InstanceDesc { custom: 0x77, ..InstanceDesc::new(b.addr, translate(0.0, 0.0, -5.0)) },
    ]);
    let r = run1(&dev, down(t.addr), IGNORE);
    assert_eq!(r.status(), rtu_abi::STS_DONE_HIT);
    assert_eq!(r.committed_f(span::T), 5.5);
    assert_eq!((r.committed(span::INST_ID), r.committed(span::CUSTOM), r.committed(span::GEOM)), (1, 0x77, 1));
}

/// Seed 004 §10.3: scaling object z by 2 (object-to-world z scale 0.5) keeps t = 1.
#[test]
fn t_preserved_under_scaled_instance() {
    let dev = Device::one_per_leaf(4);
    let b = dev.blas(&[(&[SEED_TRI], OPAQUE)]);
    let o2w = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0];
    let t = dev.tlas(&[InstanceDesc::new(b.addr, o2w)]);
    let r = run1(&dev, down(t.addr), IGNORE);
    assert_eq!(r.committed_f(span::T), 1.0);
    assert_eq!(r.committed_f(span::OBJ_ORIGIN + 2), 2.0);
    assert_eq!(r.committed_f(span::OBJ_DIR + 2), -2.0);
    assert_eq!(r.committed_f(span::W2O + 10), 2.0);
    // Unnormalised world direction: t scales with 1/|d|.
    let r = run1(&dev, TraceRay { dir: [0.0, 0.0, -4.0], ..down(t.addr) }, IGNORE);
    assert_eq!(r.committed_f(span::T), 0.25);
}

#[test]
fn width_six_root_with_six_leaves_takes_the_nearest() {
    let dev = Device::one_per_leaf(6);
    let zs = [6.0f32, 2.0, 5.0, 3.0, 4.0, 1.5];
    let tris: Vec<Tri> = zs.iter().map(|&z| tri_at(-z)).collect();
    let b = dev.blas(&[(&tris, OPAQUE)]);
    let h = bvh::Header::parse(&dev.mem().read_array::<{ header::BYTES }>(b.addr).unwrap()).unwrap();
    assert_eq!((h.width, h.node_count, h.leaf_count), (6, 1, 6));
    let mut hs = Harness::new(&RtuConfig { bvh_width: 6, ..cfg() }, 32, 1);
    let r = hs.run(&dev.mem(), &[down(b.addr)], |_, _| (IGNORE, 0.0)).unwrap().remove(0);
    assert_eq!((r.committed_f(span::T), r.committed(span::PRIM)), (2.5, 5));
    assert_eq!(hs.unit.stats().box_tests, 6, "all six children tested once");
}

/// rt_smoke_deep_stack: many stacked triangles under a 4-entry stack. The walk restarts,
/// still finds the closest hit, and under IGNORE every non-opaque triangle is offered
/// exactly once despite the restarts.
#[test]
fn deep_tree_overflows_a_small_stack_and_restarts() {
    for width in [4, 6] {
        let dev = Device::new(width);
        // A slanted staircase so that many boxes overlap the ray.
        let tris: Vec<Tri> =
            (0..64).map(|i| tri_at(-5.0 - i as f32 * 0.25).map(|v| [v[0] - 0.01 * i as f32, v[1], v[2]])).collect();
        let small = RtuConfig { bvh_width: width, stack_depth: 4, restart_cap: 1000, ..cfg() };
        for flags in [OPAQUE, 0] {
            let b = dev.blas(&[(&tris, flags)]);
            let mut h = Harness::new(&small, 32, 1);
            let ray = TraceRay { origin: [0.25, 0.25, 1.0], dir: [0.0, 0.0, -1.0], ..down(b.addr) };
            let mut offers = vec![0u32; 64];
            let r = h
                .run(&dev.mem(), &[ray], |_, c| {
                    offers[c.candidate(span::PRIM) as usize] += 1;
                    (IGNORE, 0.0)
                })
                .unwrap()
                .remove(0);
            if flags == OPAQUE {
                assert_eq!((r.committed_f(span::T), r.committed(span::PRIM)), (6.0, 0));
            } else {
                assert_eq!(r.status(), rtu_abi::STS_DONE_MISS);
                // Triangle i covers x = 0.25 while i <= 50 (i = 50 on its edge).
                assert!(offers.iter().all(|&n| n <= 1), "width {width}: offered twice: {offers:?}");
                assert!(offers[..50].iter().all(|&n| n == 1), "width {width}: offers {offers:?}");
            }
            assert!(h.unit.stats().restarts > 0, "width {width}: a 4-deep stack must overflow");
        }
        // A restart cap of 0 turns the first restart into a fault.
        let b = dev.blas(&[(&tris, 0)]);
        let mut h = Harness::new(&RtuConfig { restart_cap: 0, ..small }, 32, 1);
        let e = h.run(&dev.mem(), &[down(b.addr)], |_, _| (IGNORE, 0.0)).unwrap_err();
        assert_eq!(e.fault.kind, FaultKind::BadAccelerationStructure);
        assert!(e.fault.detail.contains("restarts"), "{}", e.fault.detail);
    }
}

/// rt_smoke_deep_tlas: 4 instances of a deep BLAS; the restart budget resets per BLAS entry
/// and the closest (last) instance wins.
#[test]
fn deep_tlas_restart_budget_per_blas() {
    let dev = Device::one_per_leaf(4);
    let tris: Vec<Tri> = (0..24).map(|i| tri_at(-(i as f32) * 0.5)).collect();
    let b = dev.blas(&[(&tris, 0)]);
    let insts: Vec<InstanceDesc> =
        (0..4).map(|i| InstanceDesc::new(b.addr, translate(0.0, 0.0, -40.0 + 10.0 * i as f32))).collect();
    let t = dev.tlas(&insts);
    let small = RtuConfig { stack_depth: 3, restart_cap: 64, ..cfg() };
    let mut h = Harness::new(&small, 32, 1);
    let r = h.run(&dev.mem(), &[down(t.addr)], |_, _| (ACCEPT, 0.0)).unwrap().remove(0);
    assert_eq!((r.committed(span::INST_ID), r.committed(span::PRIM), r.committed_f(span::T)), (3, 0, 11.0));
}

/// A leaf holding 6 triangles, farthest first (hand-packed: the builder makes one per leaf).
#[test]
fn fat_leaf_iterates_every_triangle() {
    let dev = Device::one_per_leaf(4);
    let n = 6;
    let size = header::BYTES + tri::bytes(n);
    let mut img = vec![0u8; size];
    bvh::Header {
        kind: bvh::KIND_BOTTOM,
        width: 4,
        root: bvh::child_word(header::BYTES as u64, true),
        build_flags: 0,
        bounds_min: [0.0, 0.0, -10.0],
        bounds_max: [1.0, 1.0, -4.0],
        size: size as u64,
        prim_count: n as u32,
        geometry_count: 1,
        node_count: 0,
        leaf_count: 1,
        blas_count: 0,
        blas_table: 0,
    }
    .write(&mut img);
    let l = &mut img[header::BYTES..];
    l[tri::KIND] = bvh::LEAF_TRI;
    l[tri::COUNT] = n as u8;
    wr_u32(l, tri::GEOM_FLAGS, OPAQUE);
    for i in 0..n {
        let rec = tri::HEADER + i * tri::RECORD;
        let t = tri_at(-(10.0 - i as f32));
        for (k, off) in [tri::V0, tri::V1, tri::V2].into_iter().enumerate() {
            for a in 0..3 {
                wr_f32(l, rec + off + 4 * a, t[k][a]);
            }
        }
        wr_u32(l, rec + tri::PRIM, 100 + i as u32);
    }
    let addr = dev.upload(&img);
    let r = run1(&dev, down(addr), IGNORE);
    assert_eq!((r.committed(span::PRIM), r.committed_f(span::T)), (105, 6.0));
    // Non-opaque: each of the 6 is offered once, resuming inside the leaf.
    wr_u32(&mut img[header::BYTES..], tri::GEOM_FLAGS, 0);
    let addr = dev.upload(&img);
    let mut offers = Vec::new();
    run(&dev, &[down(addr)], |_, c| {
        offers.push(c.candidate(span::PRIM));
        (IGNORE, 0.0)
    });
    assert_eq!(offers, vec![100, 101, 102, 103, 104, 105]);
}

#[test]
fn shadow_flags_terminate_on_first_hit() {
    let dev = Device::one_per_leaf(4);
    let tris: Vec<Tri> = (0..50).map(|i| tri_at(-(i as f32) * 0.1)).collect();
    let b = dev.blas(&[(&tris, 0)]);
    let mut h = Harness::new(&cfg(), 32, 1);
    let ray = TraceRay { flags: rf::OPAQUE | rf::TERMINATE_ON_FIRST_HIT, ..down(b.addr) };
    let r = h.run(&dev.mem(), &[ray], |_, _| panic!("OPAQUE flag: no candidates")).unwrap().remove(0);
    assert_eq!(r.status(), rtu_abi::STS_DONE_HIT);
    assert!(h.unit.stats().tri_tests < 50 / 2, "stopped early: {:?}", h.unit.stats());
    // ACCEPT of a candidate also ends the walk under TERMINATE_ON_FIRST_HIT.
    let mut n = 0;
    run(&dev, &[TraceRay { flags: rf::TERMINATE_ON_FIRST_HIT, ..down(b.addr) }], |_, _| {
        n += 1;
        (ACCEPT, 0.0)
    });
    assert_eq!(n, 1);
}

#[test]
fn cull_back_and_front_and_instance_facing_flags() {
    let dev = Device::one_per_leaf(4);
    let b = dev.blas(&[(&[SEED_TRI], OPAQUE)]);
    let up = |accel| TraceRay { origin: [0.25, 0.25, -1.0], dir: [0.0, 0.0, 1.0], ..down(accel) };
    let st = |r: TraceRay| run1(&dev, r, IGNORE).status();
    let (hit, miss) = (rtu_abi::STS_DONE_HIT, rtu_abi::STS_DONE_MISS);
    // From +z the seed triangle is front-facing.
    assert_eq!(run1(&dev, down(b.addr), IGNORE).committed(span::FRONT), 1);
    assert_eq!(run1(&dev, up(b.addr), IGNORE).committed(span::FRONT), 0);
    assert_eq!(st(TraceRay { flags: rf::CULL_BACK_FACING, ..down(b.addr) }), hit);
    assert_eq!(st(TraceRay { flags: rf::CULL_BACK_FACING, ..up(b.addr) }), miss);
    assert_eq!(st(TraceRay { flags: rf::CULL_FRONT_FACING, ..down(b.addr) }), miss);
    assert_eq!(st(TraceRay { flags: rf::CULL_FRONT_FACING, ..up(b.addr) }), hit);
    let flip = dev.tlas(&[InstanceDesc {
        flags: inf::TRIANGLE_FLIP_FACING as u8,
        ..InstanceDesc::new(b.addr, translate(0.0, 0.0, 0.0))
    }]);
    assert_eq!(run1(&dev, down(flip.addr), IGNORE).committed(span::FRONT), 0);
    assert_eq!(st(TraceRay { flags: rf::CULL_BACK_FACING, ..down(flip.addr) }), miss);
    let off = dev.tlas(&[InstanceDesc {
        flags: inf::TRIANGLE_FACING_CULL_DISABLE as u8,
        ..InstanceDesc::new(b.addr, translate(0.0, 0.0, 0.0))
    }]);
    assert_eq!(st(TraceRay { flags: rf::CULL_BACK_FACING, ..up(off.addr) }), hit);
    // A mirroring instance transform does not change facing (decided in object space).
    let mirror = dev.tlas(&[InstanceDesc::new(b.addr, [-1.0, 0.0, 0.0, 0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0])]);
    assert_eq!(run1(&dev, down(mirror.addr), IGNORE).committed(span::FRONT), 1);
}

#[test]
fn cull_mask_skips_instances() {
    let dev = Device::one_per_leaf(4);
    let b = dev.blas(&[(&[SEED_TRI], OPAQUE)]);
    let t = dev.tlas(&[
        InstanceDesc { mask: 0x01, ..InstanceDesc::new(b.addr, translate(0.0, 0.0, -1.0)) },
        InstanceDesc { mask: 0x02, ..InstanceDesc::new(b.addr, translate(0.0, 0.0, -2.0)) },
        InstanceDesc { mask: 0x04, ..InstanceDesc::new(b.addr, translate(0.0, 0.0, -3.0)) },
    ]);
    let rays: Vec<TraceRay> =
        [0xffu32, 0x06, 0x04, 0x08].iter().map(|&m| TraceRay { cull_mask: m, ..down(t.addr) }).collect();
    let rows = run(&dev, &rays, |_, _| panic!());
    let got: Vec<Option<u32>> = rows.iter().map(|r| r.hit().map(|h| h.inst)).collect();
    assert_eq!(got, vec![Some(0), Some(1), Some(2), None]);
}

#[test]
fn opacity_overrides() {
    let dev = Device::one_per_leaf(4);
    let opaque = dev.blas(&[(&[SEED_TRI], OPAQUE)]);
    let nonop = dev.blas(&[(&[SEED_TRI], 0)]);
    let inst = |b: u64, f: u32| {
        dev.tlas(&[InstanceDesc { flags: f as u8, ..InstanceDesc::new(b, translate(0.0, 0.0, 0.0)) }]).addr
    };
    let st = |r: TraceRay| run1(&dev, r, IGNORE).status();
    let (hit, miss) = (rtu_abi::STS_DONE_HIT, rtu_abi::STS_DONE_MISS);
    assert_eq!(st(down(inst(opaque.addr, inf::FORCE_NO_OPAQUE))), miss, "FORCE_NO_OPAQUE makes a candidate");
    assert_eq!(st(down(inst(nonop.addr, inf::FORCE_OPAQUE))), hit);
    assert_eq!(st(TraceRay { flags: rf::OPAQUE, ..down(inst(opaque.addr, inf::FORCE_NO_OPAQUE)) }), hit);
    assert_eq!(st(TraceRay { flags: rf::NO_OPAQUE, ..down(opaque.addr) }), miss);
    assert_eq!(st(TraceRay { flags: rf::CULL_OPAQUE, ..down(opaque.addr) }), miss);
    assert_eq!(st(TraceRay { flags: rf::CULL_NO_OPAQUE, ..down(opaque.addr) }), hit);
    assert_eq!(st(TraceRay { flags: rf::SKIP_TRIANGLES, ..down(opaque.addr) }), miss);
    assert_eq!(st(TraceRay { flags: rf::SKIP_AABBS, ..down(opaque.addr) }), hit);
}

/// Several query slots in flight per lane: each has its own window row and walk.
#[test]
fn several_queries_in_flight_per_lane() {
    let dev = Device::one_per_leaf(4);
    let a = dev.blas(&[(&[tri_at(0.0)], 0)]);
    let b = dev.blas(&[(&[tri_at(-2.0)], OPAQUE)]);
    let mem = dev.mem();
    let mut u = RtuUnit::new(&cfg(), 1, 32);
    u.launch_warp(0, 3);
    let mut q = [0u32; MAX_THREADS];
    u.trace(&mem, 0, u32::MAX, &q, &[down(a.addr); MAX_THREADS]).unwrap();
    q = [1; MAX_THREADS];
    u.trace(&mem, 0, u32::MAX, &q, &[down(b.addr); MAX_THREADS]).unwrap();
    // Odd lanes use slot 2 for a third trace against `a`.
    let q2: [u32; MAX_THREADS] = std::array::from_fn(|l| if l % 2 == 1 { 2 } else { 1 });
    u.trace(&mem, 0, 0xAAAA_AAAA, &q2, &[down(a.addr); MAX_THREADS]).unwrap();
    let mut st = [0; MAX_THREADS];
    u.wait(0, u32::MAX, &[0; MAX_THREADS], &mut st).unwrap();
    assert!(st.iter().all(|&s| s == rtu_abi::STS_YIELD_ANYHIT));
    u.wait(0, u32::MAX, &[1; MAX_THREADS], &mut st).unwrap();
    assert!(st.iter().all(|&s| s == rtu_abi::STS_DONE_HIT));
    // Accept in slot 0 on even lanes only, ignore on odd lanes.
    let act: [u32; MAX_THREADS] = std::array::from_fn(|l| if l % 2 == 0 { ACCEPT } else { IGNORE });
    u.cont(&mem, 0, u32::MAX, &[0; MAX_THREADS], &act, &[0.0; MAX_THREADS]).unwrap();
    u.wait(0, u32::MAX, &[0; MAX_THREADS], &mut st).unwrap();
    for l in 0..32 {
        assert_eq!(st[l], if l % 2 == 0 { rtu_abi::STS_DONE_HIT } else { rtu_abi::STS_DONE_MISS });
        let t1 = f32::from_bits(u.read(0, l, 1, rtu_abi::COMMITTED + span::T).unwrap());
        assert_eq!(t1, 3.0, "slot 1 untouched by slot 0's CONTINUE");
    }
    // CONTINUE on a slot with no open candidate is ignored.
    u.cont(&mem, 0, u32::MAX, &[1; MAX_THREADS], &[TERMINATE; MAX_THREADS], &[0.0; MAX_THREADS]).unwrap();
    u.wait(0, u32::MAX, &[1; MAX_THREADS], &mut st).unwrap();
    assert!(st.iter().all(|&s| s == rtu_abi::STS_DONE_HIT));
    u.wait(0, 0xAAAA_AAAA, &[2; MAX_THREADS], &mut st).unwrap();
    assert!((1..32).step_by(2).all(|l| st[l] == rtu_abi::STS_YIELD_ANYHIT));
    // A slot beyond the kernel's declared count is an error.
    assert!(u.trace(&mem, 0, 1, &[3; MAX_THREADS], &[down(a.addr); MAX_THREADS]).is_err());
}

/// Watertightness (dEQP `singlehit`): a 64x64 grid of non-opaque triangle pairs tiling a
/// square; rays through every vertex, edge midpoint and diagonal midpoint hit exactly one
/// triangle (counted as candidates), vertical and slanted.
#[test]
fn watertight_grid_single_hit() {
    let n = 64;
    let cell = 1.0 / n as f32;
    let mut tris = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let p = |a: usize, b: usize| [a as f32 * cell, b as f32 * cell, 0.0];
            // Alternate the diagonal so both orientations of shared edges occur.
            if (i + j) % 2 == 0 {
                tris.push([p(i, j), p(i + 1, j), p(i + 1, j + 1)]);
                tris.push([p(i, j), p(i + 1, j + 1), p(i, j + 1)]);
            } else {
                tris.push([p(i, j), p(i + 1, j), p(i, j + 1)]);
                tris.push([p(i + 1, j), p(i + 1, j + 1), p(i, j + 1)]);
            }
        }
    }
    for width in [4, 6] {
        let dev = Device::new(width);
        let b = dev.blas(&[(&tris, 0)]);
        let mut rays = Vec::new();
        for j in 1..2 * n {
            for i in 1..2 * n {
                // Half-cell lattice: vertices, edge midpoints, diagonal midpoints.
                let (x, y) = (i as f32 * cell * 0.5, j as f32 * cell * 0.5);
                for d in [[0.0, 0.0, -1.0], [0.3, -0.2, -1.0], [-0.01, 0.02, -2.0]] {
                    let o = [x - d[0], y - d[1], -d[2]];
                    rays.push(TraceRay {
                        origin: o,
                        dir: d,
                        tmin: 0.0,
                        tmax: 10.0,
                        flags: 0,
                        cull_mask: 0xff,
                        accel: b.addr,
                    });
                }
            }
        }
        let mut counts = vec![0u32; rays.len()];
        let rows = run(&dev, &rays, |ri, _| {
            counts[ri] += 1;
            (IGNORE, 0.0)
        });
        let mut bad = Vec::new();
        for (i, c) in counts.iter().enumerate() {
            // Slanted rays through the lattice are exact only for the vertical direction;
            // all must hit exactly once anyway (no gaps, no double hits).
            if *c != 1 {
                bad.push((rays[i].origin, rays[i].dir, *c));
            }
        }
        assert!(
            bad.is_empty(),
            "width {width}: {} rays of {} did not hit exactly once: {:?}",
            bad.len(),
            rays.len(),
            &bad[..bad.len().min(10)]
        );
        assert!(rows.iter().all(|r| r.status() == rtu_abi::STS_DONE_MISS));
    }
}

/// Hand-written structures that are broken in each way the walker must report.
#[test]
fn malformed_structures_fault() {
    let dev = Device::one_per_leaf(4);
    let good = dev.blas(&[(&[SEED_TRI, tri_at(-1.0), tri_at(-2.0)], OPAQUE)]);
    let mem = dev.mem();
    let size = mem.read_u64(good.addr + header::SIZE as u64).unwrap() as usize;
    let mut img = vec![0u8; size];
    mem.read(good.addr, &mut img).unwrap();
    let trace = |img: &[u8], max_visits: u64| {
        let a = dev.upload(img);
        let mut h = Harness::new(&RtuConfig { max_visits, ..cfg() }, 1, 1);
        h.run(&dev.mem(), &[down(a)], |_, _| (IGNORE, 0.0)).map(|_| ())
    };
    assert!(trace(&img, 1 << 20).is_ok());
    let kind_of = |r: Result<(), vortex_model::rtu::RtuError>| {
        let e = r.unwrap_err();
        (e.fault.kind.clone(), e.fault.detail)
    };
    // Bad magic.
    let mut m = img.clone();
    m[0] ^= 0xff;
    let (k, d) = kind_of(trace(&m, 1 << 20));
    assert!(k == FaultKind::BadAccelerationStructure && d.contains("magic"), "{d}");
    // Out-of-range child.
    let mut m = img.clone();
    let root = header::BYTES;
    for c in 0..3 {
        wr_u32(&mut m, root + node::CHILD + 4 * c, bvh::child_word(1 << 20, true));
    }
    let (k, d) = kind_of(trace(&m, 1 << 20));
    assert!(k == FaultKind::BadAccelerationStructure && d.contains("outside"), "{d}");
    // A cycle: the root's first child is the root itself.
    let mut m = img.clone();
    for c in 0..3 {
        wr_u32(&mut m, root + node::CHILD + 4 * c, bvh::child_word(root as u64, false));
    }
    let (k, d) = kind_of(trace(&m, 1000));
    assert!(k == FaultKind::BadAccelerationStructure && d.contains("exceeded"), "{d}");
    // A record named as an internal node that is not one.
    let mut m = img.clone();
    m[root + node::KIND] = 0x7f;
    let (k, d) = kind_of(trace(&m, 1 << 20));
    assert!(k == FaultKind::BadAccelerationStructure && d.contains("not an internal node of width 4"), "{d}");
    // A node whose children are null.
    let mut m = img.clone();
    for c in 0..3 {
        wr_u32(&mut m, root + node::CHILD + 4 * c, 0);
    }
    let (k, d) = kind_of(trace(&m, 1 << 20));
    assert!(k == FaultKind::BadAccelerationStructure && d.contains("null child"), "{d}");
    // A leaf of the wrong kind in a BLAS.
    let mut m = img.clone();
    for c in 0..3 {
        let w = u32::from_le_bytes(m[root + node::CHILD + 4 * c..root + node::CHILD + 4 * c + 4].try_into().unwrap());
        m[bvh::child_offset(w) as usize] = bvh::LEAF_INST;
    }
    let (k, _) = kind_of(trace(&m, 1 << 20));
    assert_eq!(k, FaultKind::BadAccelerationStructure);
    // A size field claiming records beyond the allocation: the node fetch faults.
    let mut m = img.clone();
    vortex_model::abi::wr_u64(&mut m, header::SIZE, 1 << 30);
    for c in 0..3 {
        wr_u32(&mut m, root + node::CHILD + 4 * c, bvh::child_word(1 << 28, true));
    }
    let (k, _) = kind_of(trace(&m, 1 << 20));
    assert!(matches!(k, FaultKind::Memory(_)), "{k:?}");
    // A TLAS instance referencing a TLAS.
    let t = dev.tlas(&[InstanceDesc::new(good.addr, translate(0.0, 0.0, 0.0))]);
    let tl = dev.tlas(&[InstanceDesc::new(good.addr, translate(0.0, 0.0, 0.0))]);
    let leaf = t.addr + header::BYTES as u64;
    dev.mem().write_u64(leaf + bvh::inst::BLAS as u64, tl.addr).unwrap();
    let mut h = Harness::new(&cfg(), 1, 1);
    let e = h.run(&dev.mem(), &[down(t.addr)], |_, _| (IGNORE, 0.0)).unwrap_err();
    assert!(e.fault.detail.contains("not a bottom-level"), "{}", e.fault.detail);
}
