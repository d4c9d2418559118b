//! `rt_smoke_tie` (research/rtu-scenarios.md): coincident and near-coincident geometry —
//! twin (identical) triangles, a triangle offset by 2^-22, instances rotated, shifted or
//! lifted by 2^-20 — traced with thousands of rays, the results compared bit for bit
//! between functional mode, timed mode and the CPU reference traversal
//! (`model::rtu::reftrace`), and against hand-derived expectations of which primitive wins
//! a tie.
//!
//! The tie-break rule (`docs/BVH.md` §3): a hit commits only when strictly closer than the
//! current commit, so among hits at exactly the same t the first one the walk reaches wins;
//! the walk reaches a node's children in increasing (entry distance, slot) order and a
//! leaf's triangles in order; a short-stack restart resumes exactly where the dropped entry
//! was, so the order — and every answer — is the same for any stack depth.
//!
//! The original test ran the scene with and without the RTL's visit-order tables and
//! required some rays to differ, proving the tables were consulted. This RTU has no
//! visit-order tables (the order is computed from the entry distances), so there is no
//! counterpart; instead the tests check that the answer does not depend on the BVH width
//! (4 vs 6) where the closest hit is unique, that it never depends on the stack depth or
//! the mode, and that ties resolve the same way on every run and by the rule above. There
//! is no SimX golden output either: the reference traversal and a brute force with the
//! RTU's own triangle test are the oracles.

#![allow(clippy::needless_range_loop)]

use vortex_model::abi::bvh::{self, header, inst, node, tri};
use vortex_model::abi::rtu::{self as rtu_abi, geometry_flags as gf, span};
use vortex_model::abi::{rd_f32, rd_u32, rd_u64, wr_f32, wr_u32, MAX_THREADS};
use vortex_model::config::RtuConfig;
use vortex_model::mem::MemoryMap;
use vortex_model::rtu::isect::{self, RayPrep};
use vortex_model::rtu::raylog::{RayLog, Sink, TraceResult};
use vortex_model::rtu::reference::Harness;
use vortex_model::rtu::replay::{self, Class, Engine};
use vortex_model::rtu::{reftrace, TraceRay};
use vortex_transcode::accel::testkit::{translate, Device, InstanceDesc};

type Tri = [[f32; 3]; 3];

const E22: f32 = 1.0 / (1u32 << 22) as f32;
const E20: f32 = 1.0 / (1u32 << 20) as f32;

fn down(x: f32, y: f32, accel: u64) -> TraceRay {
    TraceRay { origin: [x, y, 1.0], dir: [0.0, 0.0, -1.0], tmin: 0.0, tmax: 100.0, flags: 0, cull_mask: 0xff, accel }
}

/// The unit quad at height z as two triangles (the diagonal from (1,0) to (0,1)).
fn quad(z: f32) -> [Tri; 2] {
    [[[0.0, 0.0, z], [1.0, 0.0, z], [0.0, 1.0, z]], [[1.0, 0.0, z], [1.0, 1.0, z], [0.0, 1.0, z]]]
}

// ---------------------------------------------------------------------------------------
// Hand-packed structures: the tie-break rule, case by case.
// ---------------------------------------------------------------------------------------

fn write_tri(l: &mut [u8], i: usize, t: &Tri, prim: u32) {
    let rec = tri::HEADER + i * tri::RECORD;
    for (k, off) in [tri::V0, tri::V1, tri::V2].into_iter().enumerate() {
        for a in 0..3 {
            wr_f32(l, rec + off + 4 * a, t[k][a]);
        }
    }
    wr_u32(l, rec + tri::PRIM, prim);
}

fn header(img: &mut [u8], root: u32, nodes: u32, leaves: u32) {
    bvh::Header {
        kind: bvh::KIND_BOTTOM,
        width: 4,
        root,
        build_flags: 0,
        bounds_min: [0.0, 0.0, -2.0],
        bounds_max: [1.0, 1.0, 2.0],
        size: img.len() as u64,
        prim_count: 2,
        geometry_count: 1,
        node_count: nodes,
        leaf_count: leaves,
        blas_count: 0,
        blas_table: 0,
    }
    .write(img);
}

/// One leaf holding `tris` (prim ids `prims`), as a BLAS image.
fn one_leaf(tris: &[(Tri, u32)], flags: u32) -> Vec<u8> {
    let mut img = vec![0u8; header::BYTES + tri::bytes(tris.len())];
    header(&mut img, bvh::child_word(header::BYTES as u64, true), 0, 1);
    let l = &mut img[header::BYTES..];
    l[tri::KIND] = bvh::LEAF_TRI;
    l[tri::COUNT] = tris.len() as u8;
    wr_u32(l, tri::GEOM_FLAGS, flags);
    for (i, (t, p)) in tris.iter().enumerate() {
        write_tri(l, i, t, *p);
    }
    img
}

/// A width-4 root with two one-triangle leaves; child `c`'s box is `[0,1]^2 x
/// [-2, zhi[c]]` (quantised with origin (0,0,-2) and step 1/64: exact).
fn two_leaves(children: [(Tri, u32, f32); 2], flags: u32) -> Vec<u8> {
    let leaf = tri::bytes(1);
    let nb = bvh::node_bytes(4);
    let root = header::BYTES;
    let first = root + nb;
    let mut img = vec![0u8; first + 2 * leaf];
    header(&mut img, bvh::child_word(root as u64, false), 1, 2);
    let n = &mut img[root..root + nb];
    n[node::KIND] = bvh::NODE_INTERNAL;
    n[node::COUNT] = 2;
    for (a, o) in [0.0f32, 0.0, -2.0].into_iter().enumerate() {
        wr_f32(n, node::ORIGIN + 4 * a, o);
        n[node::EXP + a] = (-6i8) as u8;
    }
    for (c, &(_, _, zhi)) in children.iter().enumerate() {
        wr_u32(n, node::CHILD + 4 * c, bvh::child_word((first + c * leaf) as u64, true));
        let q = ((zhi + 2.0) * 64.0) as u8;
        n[node::qhi(4) + 3 * c..node::qhi(4) + 3 * c + 3].copy_from_slice(&[64, 64, q]);
    }
    for (c, (t, p, _)) in children.iter().enumerate() {
        let l = &mut img[first + c * leaf..first + (c + 1) * leaf];
        l[tri::KIND] = bvh::LEAF_TRI;
        l[tri::COUNT] = 1;
        wr_u32(l, tri::GEOM_FLAGS, flags);
        write_tri(l, 0, t, *p);
    }
    img
}

/// Every ray strictly inside the triangle (of a 17x17 grid over the quad) must report
/// `want` at t = 2 in every engine and at every stack depth; with the geometry non-opaque
/// the twins are offered in walk order and, once the first is accepted, the second (not
/// strictly closer) is not offered at all.
fn check_winner(dev: &Device, img: &[u8], want: u32, order: [u32; 2]) {
    let addr = dev.upload(img);
    let rays: Vec<TraceRay> = (0..=16)
        .flat_map(|j| (0..=16).map(move |i| (i as f32 / 16.0, j as f32 / 16.0)))
        .map(|(x, y)| down(x, y, addr))
        .collect();
    // Strictly inside: on the boundary the watertight edge rule decides ownership.
    let inside = |r: &TraceRay| r.origin[0] > 0.0 && r.origin[1] > 0.0 && r.origin[0] + r.origin[1] < 1.0;
    for res in all_engines(&dev.mem(), &rays, &[1, 2, 16]) {
        for (r, got) in rays.iter().zip(&res) {
            if inside(r) {
                assert_eq!(got.status, rtu_abi::STS_DONE_HIT, "{r:?}");
                assert_eq!((got.word(span::PRIM), got.t()), (want, 2.0), "{r:?}");
            }
        }
    }
    // Non-opaque twins: offered in walk order; the second is not offered after an ACCEPT.
    let mut img = img.to_vec();
    let flags_at = |img: &[u8]| {
        let mut at = Vec::new();
        let mut o = header::BYTES;
        while o < img.len() {
            if img[o] == bvh::LEAF_TRI {
                at.push(o + tri::GEOM_FLAGS);
                o += tri::bytes(img[o + 1] as usize);
            } else {
                o += bvh::node_bytes(4);
            }
        }
        at
    };
    for at in flags_at(&img) {
        wr_u32(&mut img, at, 0);
    }
    let addr = dev.upload(&img);
    let ray = down(0.25, 0.25, addr);
    let mut offers = Vec::new();
    Harness::new(&RtuConfig::default(), 32, 1)
        .run(&dev.mem(), &[ray], |_, c| {
            offers.push(c.candidate(span::PRIM));
            (rtu_abi::ACT_IGNORE, 0.0)
        })
        .unwrap();
    assert_eq!(offers, order.to_vec(), "IGNORE: both twins offered, in walk order");
    let mut offers = Vec::new();
    let r = Harness::new(&RtuConfig::default(), 32, 1)
        .run(&dev.mem(), &[ray], |_, c| {
            offers.push(c.candidate(span::PRIM));
            (rtu_abi::ACT_ACCEPT, 0.0)
        })
        .unwrap()
        .remove(0);
    assert_eq!(offers, vec![order[0]], "ACCEPT of the first twin: the second is not closer");
    assert_eq!(r.committed(span::PRIM), order[0]);
    let mut seen = Vec::new();
    let got = reftrace::trace(&dev.mem(), &ray, 1 << 20, |o| {
        seen.push(o.cand.prim);
        (rtu_abi::ACT_ACCEPT, 0.0)
    })
    .unwrap();
    assert_eq!((seen, got.word(span::PRIM)), (vec![order[0]], order[0]));
}

/// Hand-derived tie-breaks: twins in one leaf (leaf order, not the primitive id), twins in
/// sibling leaves with equal boxes (slot order), twins in sibling leaves whose boxes are
/// entered at different distances (entry order beats slot order).
#[test]
fn rt_smoke_tie_break_follows_the_walk_order() {
    let dev = Device::new(4);
    let t = quad(-1.0)[0];
    // One leaf, twins stored as prim 9 then prim 4: the first in the leaf wins.
    check_winner(&dev, &one_leaf(&[(t, 9), (t, 4)], gf::OPAQUE), 9, [9, 4]);
    check_winner(&dev, &one_leaf(&[(t, 4), (t, 9)], gf::OPAQUE), 4, [4, 9]);
    // Sibling leaves with identical boxes (entry t = 1 for both): slot 0 wins.
    check_winner(&dev, &two_leaves([(t, 5, 0.0), (t, 2, 0.0)], gf::OPAQUE), 5, [5, 2]);
    // Slot 1's box reaches up to z = 0.5 (entered at t = 0.5, before slot 0's at t = 1):
    // slot 1 is visited first and its twin wins.
    check_winner(&dev, &two_leaves([(t, 5, 0.0), (t, 2, 0.5)], gf::OPAQUE), 2, [2, 5]);
}

// ---------------------------------------------------------------------------------------
// Engines.
// ---------------------------------------------------------------------------------------

/// The results of `rays` from the functional walker and the timed traversal core at each
/// stack depth, and from the reference traversal: all must be bit-identical; returns one
/// result list per run.
fn all_engines(mem: &MemoryMap, rays: &[TraceRay], depths: &[u32]) -> Vec<Vec<TraceResult>> {
    let mut runs = Vec::new();
    for &d in depths {
        let cfg = RtuConfig { stack_depth: d, ..RtuConfig::default() };
        for mut h in [Harness::functional(&cfg, MAX_THREADS, 1), Harness::timed(&cfg, MAX_THREADS, 1)] {
            let rows = h.run(mem, rays, |_, _| (rtu_abi::ACT_IGNORE, 0.0)).unwrap();
            runs.push(rows.iter().map(|r| TraceResult::of_row(&r.0)).collect::<Vec<_>>());
        }
    }
    runs.push(rays.iter().map(|r| reftrace::trace(mem, r, 1 << 20, |_| (rtu_abi::ACT_IGNORE, 0.0)).unwrap()).collect());
    for (k, run) in runs.iter().enumerate().skip(1) {
        for (i, (a, b)) in runs[0].iter().zip(run).enumerate() {
            assert_eq!(a, b, "run {k} differs on ray {i} {:?}", rays[i]);
        }
    }
    runs
}

// ---------------------------------------------------------------------------------------
// The built scene: many rays.
// ---------------------------------------------------------------------------------------

/// BLAS: the quad at z = 0 (prims 0, 1), its twin (2, 3), the first triangle lifted by
/// 2^-22 (4) and sunk by 2^-22 (5). TLAS: the BLAS as is (instance 0), shifted by 2^-20 in
/// x (1), rotated a quarter turn about the quad's centre (2), lifted by 2^-20 (3, mask 2,
/// so rays with cull mask 1 see only the coincident ones).
fn tie_scene(width: u32) -> (Device, u64, u64) {
    let dev = Device::new(width);
    let [a, b] = quad(0.0);
    let lift = |t: Tri, dz: f32| t.map(|v| [v[0], v[1], v[2] + dz]);
    let tris = vec![a, b, a, b, lift(a, E22), lift(a, -E22)];
    let blas = dev.blas(&[(&tris, gf::OPAQUE)]);
    let rot = [0.0, -1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    let tlas = dev.tlas(&[
        InstanceDesc { mask: 1, ..InstanceDesc::new(blas.addr, translate(0.0, 0.0, 0.0)) },
        InstanceDesc { mask: 1, custom: 11, ..InstanceDesc::new(blas.addr, translate(E20, 0.0, 0.0)) },
        InstanceDesc { mask: 1, custom: 22, ..InstanceDesc::new(blas.addr, rot) },
        InstanceDesc { mask: 2, custom: 33, ..InstanceDesc::new(blas.addr, translate(0.0, 0.0, E20)) },
    ]);
    (dev, blas.addr, tlas.addr)
}

/// Rays down, up and oblique over the quad, on a grid that includes its edges and
/// diagonal, with cull masks 0xff and 1.
fn tie_rays(accel: u64) -> Vec<TraceRay> {
    let mut out = Vec::new();
    let n = 24;
    for j in 0..=n {
        for i in 0..=n {
            let (x, y) = (i as f32 / n as f32 * 1.25 - 0.125, j as f32 / n as f32 * 1.25 - 0.125);
            for (k, (org, dir)) in [
                ([x, y, 1.0], [0.0, 0.0, -1.0]),
                ([x, y, -1.0], [0.0, 0.0, 1.0]),
                ([x - 0.25, y + 0.125, 1.0], [0.25, -0.125, -1.0]),
                ([x, y, 3.0], [0.001, 0.002, -3.0]),
            ]
            .into_iter()
            .enumerate()
            {
                let cull_mask = if (i + j + k) % 2 == 0 { 0xff } else { 1 };
                out.push(TraceRay { origin: org, dir, tmin: 0.0, tmax: 100.0, flags: 0, cull_mask, accel });
            }
        }
    }
    out
}

/// Every (instance, primitive) hit of `ray` by brute force over the structure's instance
/// and triangle leaves, with the RTU's own triangle test and the stored world-to-object
/// matrices: the closest t and every (instance, prim) at exactly that t.
fn brute_force(mem: &MemoryMap, tlas: u64, ray: &TraceRay) -> Option<(u32, Vec<(u32, u32)>)> {
    fn leaves(mem: &MemoryMap, base: u64, word: u32, out: &mut Vec<u64>) {
        let addr = base + bvh::child_offset(word);
        if bvh::child_is_leaf(word) {
            out.push(addr);
            return;
        }
        let w = mem.read_array::<1>(base + header::WIDTH as u64).unwrap()[0] as u32;
        let nb = bvh::node_bytes(w);
        let mut b = vec![0u8; nb];
        mem.read(addr, &mut b).unwrap();
        for c in 0..b[node::COUNT] as usize {
            leaves(mem, base, rd_u32(&b, node::CHILD + 4 * c), out);
        }
    }
    let root = |base: u64| mem.read_u32(base + header::ROOT as u64).unwrap();
    let mut insts = Vec::new();
    leaves(mem, tlas, root(tlas), &mut insts);
    let mut hits: Vec<(f32, u32, u32)> = Vec::new();
    let world = RayPrep::new(ray.origin, ray.dir);
    for ia in insts {
        let b = mem.read_array::<{ inst::BYTES }>(ia).unwrap();
        if (rd_u32(&b, inst::CUSTOM_MASK) >> 24) & ray.cull_mask == 0 {
            continue;
        }
        let w2o: [f32; 12] = std::array::from_fn(|i| rd_f32(&b, inst::W2O + 4 * i));
        let blas = rd_u64(&b, inst::BLAS);
        let obj = RayPrep::new(isect::xform_point(&w2o, world.org), isect::xform_vector(&w2o, world.dir));
        let mut tris = Vec::new();
        leaves(mem, blas, root(blas), &mut tris);
        for la in tris {
            let head = mem.read_array::<16>(la).unwrap();
            let mut l = vec![0u8; tri::bytes(head[tri::COUNT] as usize)];
            mem.read(la, &mut l).unwrap();
            for i in 0..head[tri::COUNT] as usize {
                let r = tri::HEADER + i * tri::RECORD;
                let v = |o: usize| [rd_f32(&l, r + o), rd_f32(&l, r + o + 4), rd_f32(&l, r + o + 8)];
                if let Some(h) = isect::triangle(&obj, v(tri::V0), v(tri::V1), v(tri::V2), ray.tmin, ray.tmax) {
                    hits.push((h.t, rd_u32(&b, inst::INDEX), rd_u32(&l, r + tri::PRIM)));
                }
            }
        }
    }
    let t = hits.iter().map(|h| h.0).min_by(f32::total_cmp)?;
    Some((t.to_bits(), hits.iter().filter(|h| h.0 == t).map(|h| (h.1, h.2)).collect()))
}

/// The scene at widths 4 and 6: every engine and stack depth agrees bit for bit; every
/// answer is the brute force's closest t and one of the hits at that t; where that hit is
/// unique the two widths agree; ties really occur, resolve the same on every run, and the
/// near-coincident copies (2^-22, 2^-20) are told apart.
#[test]
fn rt_smoke_tie_scene_is_bit_exact_in_every_engine() {
    let mut per_width = Vec::new();
    for width in [4, 6] {
        let (dev, _, tlas) = tie_scene(width);
        let mem = dev.mem();
        let rays = tie_rays(tlas);
        let mut runs = all_engines(&mem, &rays, &[1, 3, 16]);
        let again = all_engines(&mem, &rays, &[2]);
        assert_eq!(runs[0], again[0], "ties resolve the same on every run");
        let (mut ties, mut unique, mut lifted) = (0, 0, 0);
        for (ray, got) in rays.iter().zip(&runs[0]) {
            match brute_force(&mem, tlas, ray) {
                None => assert_eq!(got.status, rtu_abi::STS_DONE_MISS, "{ray:?}"),
                Some((t, set)) => {
                    assert_eq!(got.status, rtu_abi::STS_DONE_HIT, "{ray:?}");
                    assert_eq!(got.word(span::T), t, "closest t, bit for bit: {ray:?}");
                    let id = (got.word(span::INST_ID), got.word(span::PRIM));
                    assert!(set.contains(&id), "{id:?} is not among the hits at t: {set:?} ({ray:?})");
                    if set.len() > 1 {
                        ties += 1;
                    } else {
                        unique += 1;
                    }
                    if ray.cull_mask == 0xff && ray.dir[2] == -1.0 && id.0 == 3 {
                        lifted += 1;
                    }
                    // The 2^-22 lift wins over its twins wherever it is hit from above.
                    if ray.dir[2] == -1.0 && set.iter().any(|s| s.1 == 4) {
                        assert_eq!(set.len(), set.iter().filter(|s| s.1 == 4).count(), "{set:?}");
                    }
                }
            }
        }
        assert!(ties > 500 && unique > 500, "ties {ties}, unique {unique}");
        assert!(lifted > 100, "the instance lifted by 2^-20 wins from above ({lifted})");
        per_width.push((rays, runs.swap_remove(0), dev));
    }
    // Where the closest hit is unique, the width does not matter (the triangle record's
    // address, a layout detail, is not compared).
    let (_, w4, _) = &per_width[0];
    let (rays6, w6, dev6) = &per_width[1];
    let mut compared = 0;
    for (i, (a, b)) in w4.iter().zip(w6).enumerate() {
        let set = brute_force(&dev6.mem(), rays6[i].accel, &rays6[i]);
        if set.as_ref().is_some_and(|(_, s)| s.len() == 1) {
            assert_eq!(a.hit, b.hit, "width 4 vs 6 on ray {i}");
            compared += 1;
        } else if set.is_none() {
            assert_eq!(a.status, b.status);
        }
    }
    assert!(compared > 500);
}

/// The tie scene through the ray log: recorded in timed mode, replayed with zero
/// mismatches on every engine (ties included: the replay reproduces the tie-break).
#[test]
fn rt_smoke_tie_scene_replays_from_a_ray_log() {
    let (dev, _, tlas) = tie_scene(4);
    let rays = tie_rays(tlas);
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tie.vxrl");
    let mut h = Harness::timed(&RtuConfig::default(), MAX_THREADS, 1);
    h.unit.set_raylog(Some(Sink::create(path.to_str().unwrap()).unwrap()));
    h.run(&dev.mem(), &rays, |_, _| (rtu_abi::ACT_IGNORE, 0.0)).unwrap();
    h.unit.set_raylog(None);
    let log = RayLog::read(&path).unwrap();
    assert_eq!(log.traces.len(), rays.len());
    for e in Engine::ALL {
        let small = RtuConfig { stack_depth: 1, ..RtuConfig::default() };
        let r = replay::replay(&log, e, &small, 4, &mut |_, _| {}).unwrap();
        assert_eq!(r.count(Class::Match), rays.len() as u64, "{}", replay::summary(&[r]));
    }
}
