//! The rdna2 layout (`abi::rdna2`) as the builder writes it, checked by walking it with the
//! model's intersection unit (`isect::walk`, the shader loop's reference): closest hits
//! bit-identical to a brute force with the same watertight test, transformed instances
//! against the f64 oracle, t preserved across an instance transform, updates, FP16 boxes,
//! packed triangle nodes, bounded walks and refused structures.

use vortex_model::abi::rdna2::{self as r2, ptr};
use vortex_model::abi::{bvh, rd_u32};
use vortex_model::config::{Box16, RtArch};
use vortex_model::isect::walk::{closest, open, WalkError, WalkHit, WalkRay};
use vortex_model::mem::MemoryMap;
use vortex_model::rtu::isect::{self, RayPrep};
use vortex_model::rtu::reference::{check_closest, GotHit, RefRay, RefTri, Rng, Tolerance};
use vortex_transcode::accel::testkit::{random_instances, random_tris, translate, Device, InstanceDesc};
use vortex_transcode::accel::{
    build, build_sizes_for, flags, BuildError, BuildRequest, Geometry, GeometryKind, Level, Mode, Options,
};

type Tri = [[f32; 3]; 3];
const STEPS: u64 = 1 << 20;

/// A `n` x `n` grid of quads (two triangles each) in the z = 0 plane over [0, n]^2, with
/// bumps: sibling triangles share vertices, so the builder packs them.
fn grid(n: usize) -> Vec<Tri> {
    let h = |x: usize, y: usize| [x as f32, y as f32, ((x * 7 + y * 3) % 5) as f32 * 0.1];
    let mut out = Vec::new();
    for y in 0..n {
        for x in 0..n {
            out.push([h(x, y), h(x + 1, y), h(x + 1, y + 1)]);
            out.push([h(x, y), h(x + 1, y + 1), h(x, y + 1)]);
        }
    }
    out
}

fn random_rays(rng: &mut Rng, n: usize, lo: [f32; 3], hi: [f32; 3]) -> Vec<WalkRay> {
    (0..n)
        .map(|i| {
            let p = |rng: &mut Rng, k: usize, s: f32| {
                let c = (lo[k] + hi[k]) * 0.5;
                c + (hi[k] - lo[k]) * s * (rng.f32() - 0.5)
            };
            let org = [p(rng, 0, 2.5), p(rng, 1, 2.5), p(rng, 2, 2.5)];
            let mut dir = rng.dir();
            if i % 2 == 0 {
                let tgt = [p(rng, 0, 1.0), p(rng, 1, 1.0), p(rng, 2, 1.0)];
                dir = std::array::from_fn(|a| tgt[a] - org[a]);
                if i % 10 == 0 {
                    dir[rng.below(3) as usize] = 0.0;
                }
            }
            let s = [1.0, 1e-3, 1e3][i % 3];
            let tmax = if i % 5 == 0 { rng.range(0.0, 2.0) / s } else { f32::INFINITY };
            WalkRay { org, dir: dir.map(|d| d * s), tmin: 0.0, tmax, cull_mask: 0xFF }
        })
        .collect()
}

/// The closest hit with the RTU's own f32 test, triangle by triangle.
fn brute_exact(tris: &[Tri], r: &WalkRay) -> Option<(f32, u32)> {
    let p = RayPrep::new(r.org, r.dir);
    let mut best: Option<(f32, u32)> = None;
    for (i, t) in tris.iter().enumerate() {
        let lim = best.map_or(r.tmax, |b| b.0);
        if let Some(h) = isect::triangle(&p, t[0], t[1], t[2], r.tmin, lim) {
            if best.is_none_or(|b| h.t < b.0) {
                best = Some((h.t, i as u32));
            }
        }
    }
    best
}

fn ref_ray(r: &WalkRay) -> RefRay {
    RefRay { org: r.org, dir: r.dir, tmin: r.tmin, tmax: r.tmax, cull_mask: r.cull_mask }
}

fn got(h: Option<WalkHit>) -> Option<GotHit> {
    h.map(|h| GotHit { t: h.t, prim: h.prim, geom: h.geom, inst: h.inst })
}

fn check_blas(mem: &MemoryMap, addr: u64, tris: &[Tri], rays: &[WalkRay]) -> usize {
    let refs = vec![tris.iter().enumerate().map(|(i, t)| RefTri { v: *t, geom: 0, prim: i as u32 }).collect()];
    let mut hits = 0;
    for r in rays {
        let (h, _) = closest(mem, addr, r, STEPS).unwrap_or_else(|e| panic!("ray {r:?}: {e}"));
        match (h, brute_exact(tris, r)) {
            (None, None) => {}
            (Some(g), Some((t, p))) => {
                assert_eq!(g.t.to_bits(), t.to_bits(), "ray {r:?}: the same test finds the same t");
                if g.prim != p {
                    let q = RayPrep::new(r.org, r.dir);
                    let tt = &tris[g.prim as usize];
                    assert_eq!(isect::triangle(&q, tt[0], tt[1], tt[2], r.tmin, r.tmax).unwrap().t, t, "a tie");
                }
                hits += 1;
            }
            (g, e) => panic!("ray {r:?}: rdna2 walk {g:?} vs brute force {e:?}"),
        }
        check_closest(&refs, &[], &ref_ray(r), got(h), Tolerance::default()).unwrap_or_else(|e| panic!("{e}"));
    }
    hits
}

#[test]
fn blas_walk_matches_brute_force_with_every_box_format() {
    for (seed, scale, box16) in
        [(1u64, 1.0f32, Box16::Auto), (2, 1e-3, Box16::Never), (3, 1e4, Box16::Always), (4, 50.0, Box16::Auto)]
    {
        let mut rng = Rng::new(seed);
        let dev = Device::rdna2(box16);
        let tris = random_tris(&mut rng, 2000, scale, scale * 0.08);
        let b = dev.blas(&[(&tris, 1)]);
        let (desc, root, top) = open(&dev.mem(), b.addr).unwrap();
        assert!(!top && root != ptr::INVALID);
        assert_eq!(desc.base % r2::BASE_ALIGN, 0);
        assert!(matches!(ptr::ty(root), ptr::BOX16 | ptr::BOX32));
        let rays = random_rays(&mut rng, 2000, [-scale; 3], [scale; 3]);
        let hits = check_blas(&dev.mem(), b.addr, &tris, &rays);
        assert!(hits > 500, "scale {scale}: only {hits} hits");
        let mut hb = [0u8; bvh::header::BYTES];
        dev.mem().read(b.addr, &mut hb).unwrap();
        let (_, x) = r2::parse_header(&hb).unwrap();
        match box16 {
            Box16::Never => assert!(!x.box16),
            // 1e4 fits halves (max 65504); the 1e-3 scene is the one Auto might refuse.
            Box16::Always => assert!(x.box16),
            Box16::Auto => {}
        }
    }
}

#[test]
fn packed_triangle_nodes_on_a_shared_mesh() {
    let dev = Device::rdna2(Box16::Auto);
    let tris = grid(24);
    let b = dev.blas(&[(&tris, 1)]);
    let mut hb = [0u8; bvh::header::BYTES];
    dev.mem().read(b.addr, &mut hb).unwrap();
    let (h, x) = r2::parse_header(&hb).unwrap();
    assert_eq!(h.prim_count as usize, tris.len());
    assert!(x.tri_nodes > 0, "siblings sharing vertices share nodes");
    let mut rng = Rng::new(9);
    let rays = random_rays(&mut rng, 3000, [0.0, 0.0, -1.0], [24.0, 24.0, 1.0]);
    let n = check_blas(&dev.mem(), b.addr, &tris, &rays);
    assert!(n > 600, "{n} hits");
    // Straight down through vertices and edges of the grid: exactly the brute force's hits.
    let edges: Vec<WalkRay> = (0..200)
        .map(|i| WalkRay {
            org: [(i % 22) as f32 + 1.0 + [0.0, 0.5][i % 2], 1.0 + (i / 8) as f32 * 0.5, 5.0],
            dir: [0.0, 0.0, -1.0],
            tmin: 0.0,
            tmax: f32::INFINITY,
            cull_mask: 0xFF,
        })
        .collect();
    assert_eq!(check_blas(&dev.mem(), b.addr, &tris, &edges), 200, "a closed mesh has no cracks");
}

#[test]
fn tlas_with_transformed_instances_matches_oracle() {
    let mut rng = Rng::new(11);
    let dev = Device::rdna2(Box16::Auto);
    let meshes: Vec<Vec<Tri>> = (0..3).map(|_| random_tris(&mut rng, 300, 1.0, 0.15)).collect();
    let blases: Vec<u64> = meshes.iter().map(|m| dev.blas(&[(m, 1)]).addr).collect();
    let (mut descs, refs) = random_instances(&mut rng, &blases, 40);
    descs.push(InstanceDesc::new(0, translate(0.0, 0.0, 0.0)));
    descs.push(InstanceDesc { mask: 0, ..InstanceDesc::new(blases[0], translate(0.0, 0.0, 0.0)) });
    let tl = dev.tlas(&descs);
    let (_, root, top) = open(&dev.mem(), tl.addr).unwrap();
    assert!(top && root != ptr::INVALID);
    let ref_meshes: Vec<Vec<RefTri>> = meshes
        .iter()
        .map(|m| m.iter().enumerate().map(|(i, t)| RefTri { v: *t, geom: 0, prim: i as u32 }).collect())
        .collect();
    let mut hits = 0;
    for mut r in random_rays(&mut rng, 3000, [-9.0; 3], [9.0; 3]) {
        r.cull_mask = (rng.next_u64() & 0xff) as u32 | 1;
        let (h, stats) = closest(&dev.mem(), tl.addr, &r, STEPS).unwrap_or_else(|e| panic!("{e}"));
        if let Some(g) = h {
            hits += 1;
            assert_ne!(refs[g.inst as usize].mask as u32 & r.cull_mask, 0, "masked instance hit");
            assert!(stats.instances > 0);
        }
        check_closest(&ref_meshes, &refs, &ref_ray(&r), got(h), Tolerance::default())
            .unwrap_or_else(|e| panic!("ray {r:?}: {e}"));
    }
    assert!(hits > 200, "{hits} hits");
}

/// Seed 004: t is preserved across an instance transform, with no renormalisation of the
/// object-space direction.
#[test]
fn t_is_preserved_across_an_instance_transform() {
    let dev = Device::rdna2(Box16::Auto);
    let blas = dev.blas(&[(&[[[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]]], 1)]);
    // Scale by 2, then lift by 4: the triangle lies at world z = 4.
    let o2w = [2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 4.0];
    let tl = dev.tlas(&[InstanceDesc::new(blas.addr, o2w)]);
    // From z = 10 with a direction of length 0.5: world t = 6 / 0.5 = 12. In object space
    // the origin is at z = 3 and the direction has length 0.25: t = 12 again.
    let r = WalkRay { org: [0.1, 0.2, 10.0], dir: [0.0, 0.0, -0.5], tmin: 0.0, tmax: 100.0, cull_mask: 0xFF };
    let (h, stats) = closest(&dev.mem(), tl.addr, &r, STEPS).unwrap();
    let h = h.expect("a hit");
    assert_eq!((h.t, h.prim, h.inst, stats.instances), (12.0, 0, 0, 1));
    // Front face: (v1-v0) x (v2-v0) = +z, against the -z ray.
    assert!(h.front);
    // The same ray stopping short of it misses.
    let short = WalkRay { tmax: 11.5, ..r };
    assert_eq!(closest(&dev.mem(), tl.addr, &short, STEPS).unwrap().0, None);
}

#[test]
fn updates_refit_in_place() {
    let mut dev = Device::rdna2(Box16::Auto);
    dev.flags = flags::ALLOW_UPDATE;
    let mut rng = Rng::new(21);
    let mut tris = random_tris(&mut rng, 500, 1.0, 0.1);
    let g = dev.triangles(&tris, 1);
    let b = dev.build(Level::Bottom, vec![g]).unwrap();
    // Move every vertex and update.
    let Geometry::Triangles { vertex_data, .. } = g.geometry else { unreachable!() };
    for t in tris.iter_mut() {
        for v in t.iter_mut() {
            v[0] += 0.3;
            v[2] = -v[2] * 1.5;
        }
    }
    let bytes: Vec<u8> = tris.iter().flatten().flatten().flat_map(|v| v.to_le_bytes()).collect();
    dev.mem().write(vertex_data, &bytes).unwrap();
    let s = build_sizes_for(Level::Bottom, &[(GeometryKind::Triangles, 500)], dev.flags, &dev.opts);
    let req = BuildRequest {
        level: Level::Bottom,
        flags: dev.flags,
        mode: Mode::Update { src: b.addr },
        dst: b.addr,
        dst_size: s.as_size,
        scratch: 0,
        geometries: vec![g],
    };
    build(&dev.mem(), &req, &dev.opts).unwrap();
    let rays = random_rays(&mut rng, 1500, [-1.0; 3], [1.6; 3]);
    let n = check_blas(&dev.mem(), b.addr, &tris, &rays);
    assert!(n > 120, "{n} hits");
}

#[test]
fn procedural_nodes_are_the_shaders_and_walks_are_bounded() {
    let dev = Device::rdna2(Box16::Auto);
    let g = dev.aabbs(&[([0.0; 3], [1.0; 3]), ([2.0, 0.0, 0.0], [3.0, 1.0, 1.0])], 0);
    let b = dev.build(Level::Bottom, vec![g]).unwrap();
    let r = WalkRay { org: [-1.0, 0.5, 0.5], dir: [1.0, 0.0, 0.0], tmin: 0.0, tmax: 10.0, cull_mask: 0xFF };
    let (h, stats) = closest(&dev.mem(), b.addr, &r, STEPS).unwrap();
    assert_eq!(h, None, "procedural candidates are not opaque triangles");
    assert_eq!(stats.box_tests, 4, "one box node over the two AABB nodes");
    let mut rng = Rng::new(3);
    let tris = random_tris(&mut rng, 1000, 1.0, 0.3);
    let b = dev.blas(&[(&tris, 1)]);
    let r = WalkRay { org: [-3.0, 0.0, 0.0], dir: [1.0, 0.01, 0.02], tmin: 0.0, tmax: 10.0, cull_mask: 0xFF };
    assert_eq!(closest(&dev.mem(), b.addr, &r, 3), Err(WalkError::StepLimit(3)), "reported, not a miss");
}

#[test]
fn layouts_of_the_other_architecture_are_refused() {
    let mut dev = Device::rdna2(Box16::Auto);
    let tri: &[Tri] = &[[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]];
    // A CW-BVH BLAS in the same memory: an rdna2 TLAS refuses to reference it...
    dev.opts = Options::new(4);
    let cw = dev.blas(&[(tri, 1)]);
    dev.opts = Options::for_arch(RtArch::Rdna2, 4, Box16::Auto);
    let e = dev.build(Level::Top, vec![dev.instances(&[InstanceDesc::new(cw.addr, translate(0.0, 0.0, 0.0))])]);
    assert!(matches!(&e, Err(BuildError::BadInstance { reason, .. }) if reason.contains("rdna2")), "{e:?}");
    // ...and the walk refuses to open it.
    let r = WalkRay { org: [0.2, 0.2, 1.0], dir: [0.0, 0.0, -1.0], tmin: 0.0, tmax: 10.0, cull_mask: 0xFF };
    assert!(matches!(closest(&dev.mem(), cw.addr, &r, STEPS), Err(WalkError::Structure(_))));
    // An rdna2 BLAS referenced by a CW-BVH TLAS build is refused the same way.
    let r2b = dev.blas(&[(tri, 1)]);
    assert_eq!(
        rd_u32(
            &{
                let mut hb = [0u8; 4];
                dev.mem().read(r2b.addr, &mut hb).unwrap();
                hb
            },
            0
        ),
        r2::MAGIC
    );
    dev.opts = Options::new(4);
    let e = dev.build(Level::Top, vec![dev.instances(&[InstanceDesc::new(r2b.addr, translate(0.0, 0.0, 0.0))])]);
    assert!(matches!(e, Err(BuildError::BadInstance { .. })), "{e:?}");
}

/// Seed 004: an input the builder cannot read is reported by name, never built into a
/// structure that misses — on the rdna2 layout as on the CW-BVH.
#[test]
fn unsupported_formats_are_reported_on_rdna2() {
    let dev = Device::rdna2(Box16::Auto);
    let tri: &[Tri] = &[[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]];
    let mut g = dev.triangles(tri, 1);
    if let Geometry::Triangles { vertex_format, .. } = &mut g.geometry {
        *vertex_format = 1037; // not a vertex format the builder reads
    }
    assert_eq!(dev.build(Level::Bottom, vec![g]).unwrap_err(), BuildError::UnsupportedVertexFormat(1037));
    let mut g = dev.triangles(tri, 1);
    if let Geometry::Triangles { index_type, .. } = &mut g.geometry {
        *index_type = 77;
    }
    assert_eq!(dev.build(Level::Bottom, vec![g]).unwrap_err(), BuildError::UnsupportedIndexType(77));
    assert_eq!(BuildError::UnsupportedVertexFormat(1037).to_string(), "vertex format 1037 is not supported");
    // The same input with a supported format builds.
    assert!(dev.build(Level::Bottom, vec![dev.triangles(tri, 1)]).is_ok());
}

/// Work per ray of the rdna2 walk on two scenes, per box format (run with `--release
/// --ignored --nocapture`; docs/RDNA2.md quotes it).
#[test]
#[ignore]
fn work_per_ray() {
    let mut rng = Rng::new(5);
    let soup = random_tris(&mut rng, 20_000, 10.0, 0.6);
    let mesh = grid(100);
    for (name, tris, lo, hi) in
        [("soup 20k", &soup, [-10.0f32; 3], [10.0f32; 3]), ("grid 20k", &mesh, [0.0, 0.0, -1.0], [100.0, 100.0, 1.0])]
    {
        let rays = random_rays(&mut Rng::new(6), 20_000, lo, hi);
        for box16 in [Box16::Never, Box16::Auto] {
            let dev = Device::rdna2(box16);
            let b = dev.blas(&[(tris, 1)]);
            let (mut n, mut isects, mut boxes, mut tri, mut bytes, mut stack, mut hits) = (0u64, 0, 0, 0, 0, 0u32, 0);
            for r in &rays {
                let (h, s) = closest(&dev.mem(), b.addr, r, STEPS).unwrap();
                n += 1;
                hits += h.is_some() as u64;
                isects += s.isects;
                boxes += s.box_tests;
                tri += s.tri_tests;
                bytes += s.node_bytes;
                stack = stack.max(s.stack_max);
            }
            let f = |x: u64| x as f64 / n as f64;
            println!(
                "{name:9} box16={box16:?}: {} B structure, {:.1}% hit, per ray: {:.1} ISECTs, {:.1} box tests, \
                 {:.1} triangle tests, {:.0} node bytes; deepest stack {stack}",
                b.stats.bytes,
                100.0 * f(hits),
                f(isects),
                f(boxes),
                f(tri),
                f(bytes)
            );
        }
    }
}
