//! Builder tests: structure invariants of built CW-BVHs, every input path, degenerate
//! builds, and the brute-force oracle through the model's RTU (random rays against BLASes
//! and TLASes), which covers the builder and the walker together.

#![allow(clippy::needless_range_loop, clippy::type_complexity)]

use std::collections::HashMap;
use vortex_model::abi::bvh::{self, header, inst, node, proc, tri};
use vortex_model::abi::{rd_f32, rd_u32, rd_u64};
use vortex_model::config::RtuConfig;
use vortex_model::mem::MemoryMap;
use vortex_model::rtu::isect::{self, RayPrep};
use vortex_model::rtu::reference::{check_closest, GotHit, Harness, RefInstance, RefRay, RefTri, Rng, Tolerance};
use vortex_model::rtu::TraceRay;
use vortex_transcode::accel::input::Aabb;
use vortex_transcode::accel::testkit::{
    random_instances, random_tris, translate, Device, InstanceDesc, R32G32B32_SFLOAT,
};
use vortex_transcode::accel::{
    build, build_sizes, index_type, BuildError, BuildRange, BuildRequest, Geometry, GeometryInput, GeometryKind, Level,
    Mode, Options,
};

type Tri = [[f32; 3]; 3];

/// What a structure holds, read back from memory by a walk that checks every invariant:
/// pre-order contiguous layout, child boxes (dequantised) containing their subtrees,
/// header consistency. Returns (geom, prim) -> exact box for triangle/AABB leaves and
/// instance index -> box for instance leaves.
struct Contents {
    prims: HashMap<(u32, u32), Aabb>,
    nodes: u32,
    leaves: u32,
}

fn read(mem: &MemoryMap, a: u64, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    mem.read(a, &mut b).unwrap();
    b
}

fn check_structure(mem: &MemoryMap, base: u64) -> (bvh::Header, Contents) {
    let h = bvh::Header::parse(&read(mem, base, header::BYTES)).unwrap();
    let mut c = Contents { prims: HashMap::new(), nodes: 0, leaves: 0 };
    if h.root != 0 {
        let end = if h.kind == bvh::KIND_TOP { h.blas_table as u64 * 16 } else { h.size };
        let (bx, stop) = visit(mem, base, &h, h.root, end, &mut c);
        assert_eq!(stop, end, "records fill the space up to the table / end exactly");
        for a in 0..3 {
            assert_eq!(bx.lo[a], h.bounds_min[a]);
            assert_eq!(bx.hi[a], h.bounds_max[a]);
        }
    }
    assert_eq!(h.node_count, c.nodes);
    assert_eq!(h.leaf_count, c.leaves);
    assert_eq!(h.prim_count as usize, c.prims.len());
    (h, c)
}

/// Visits the subtree of `word`; returns its exact bounds and the offset where it ends.
fn visit(mem: &MemoryMap, base: u64, h: &bvh::Header, word: u32, hi: u64, c: &mut Contents) -> (Aabb, u64) {
    let off = bvh::child_offset(word);
    assert!(off >= header::BYTES as u64 && off < hi);
    let mut bx = Aabb::EMPTY;
    if bvh::child_is_leaf(word) {
        c.leaves += 1;
        let head = read(mem, base + off, 16);
        match head[0] {
            bvh::LEAF_TRI => {
                let n = head[1] as usize;
                let b = read(mem, base + off, tri::bytes(n));
                for i in 0..n {
                    let r = tri::HEADER + i * tri::RECORD;
                    let mut tb = Aabb::EMPTY;
                    for v in [tri::V0, tri::V1, tri::V2] {
                        let p = [rd_f32(&b, r + v), rd_f32(&b, r + v + 4), rd_f32(&b, r + v + 8)];
                        tb.grow(&Aabb { lo: p, hi: p });
                    }
                    let key = (rd_u32(&b, tri::GEOM_INDEX), rd_u32(&b, r + tri::PRIM));
                    assert!(c.prims.insert(key, tb).is_none(), "primitive {key:?} appears twice");
                    bx.grow(&tb);
                }
                (bx, off + tri::bytes(n) as u64)
            }
            bvh::LEAF_PROC => {
                let n = head[1] as usize;
                let b = read(mem, base + off, proc::bytes(n));
                for i in 0..n {
                    let r = proc::HEADER + i * proc::RECORD;
                    let lo = [rd_f32(&b, r + proc::MIN), rd_f32(&b, r + proc::MIN + 4), rd_f32(&b, r + proc::MIN + 8)];
                    let hi = [rd_f32(&b, r + proc::MAX), rd_f32(&b, r + proc::MAX + 4), rd_f32(&b, r + proc::MAX + 8)];
                    let key = (rd_u32(&b, proc::GEOM_INDEX), rd_u32(&b, r + proc::PRIM));
                    assert!(c.prims.insert(key, Aabb { lo, hi }).is_none());
                    bx.grow(&Aabb { lo, hi });
                }
                (bx, off + proc::bytes(n) as u64)
            }
            bvh::LEAF_INST => {
                let b = read(mem, base + off, inst::BYTES);
                let idx = rd_u32(&b, inst::INDEX);
                let blas = rd_u64(&b, inst::BLAS);
                let bh = bvh::Header::parse(&read(mem, blas, header::BYTES)).unwrap();
                let o2w: [f32; 12] = std::array::from_fn(|i| rd_f32(&b, inst::O2W + 4 * i));
                let w2o: [f32; 12] = std::array::from_fn(|i| rd_f32(&b, inst::W2O + 4 * i));
                // w2o * o2w ~ identity.
                let p = isect::xform_point(&w2o, isect::xform_point(&o2w, [0.3, -0.7, 1.1]));
                for (a, e) in p.iter().zip([0.3f32, -0.7, 1.1]) {
                    assert!((a - e).abs() < 1e-3 * (1.0 + e.abs()), "w2o inverts o2w");
                }
                let wb = vortex_transcode::accel::input::instance_box(&o2w, bh.bounds_min, bh.bounds_max);
                assert!(c.prims.insert((u32::MAX, idx), wb).is_none());
                (wb, off + inst::BYTES as u64)
            }
            k => panic!("bad leaf kind {k}"),
        }
    } else {
        c.nodes += 1;
        let w = h.width;
        let b = read(mem, base + off, bvh::node_bytes(w));
        assert_eq!(b[node::KIND], bvh::NODE_INTERNAL);
        let n = b[node::COUNT] as usize;
        assert!(n >= 2 && n <= w as usize, "{n} children");
        let origin = [rd_f32(&b, node::ORIGIN), rd_f32(&b, node::ORIGIN + 4), rd_f32(&b, node::ORIGIN + 8)];
        let exp = [b[node::EXP] as i8, b[node::EXP + 1] as i8, b[node::EXP + 2] as i8];
        let mut at = off + bvh::node_bytes(w) as u64;
        for k in 0..n {
            let cw = rd_u32(&b, node::CHILD + 4 * k);
            assert_eq!(bvh::child_offset(cw), at, "pre-order: child {k} follows its left sibling's subtree");
            let (cb, end) = visit(mem, base, h, cw, hi, c);
            let q = Aabb {
                lo: std::array::from_fn(|a| bvh::dequant(origin[a], exp[a], b[node::qlo(w) + 3 * k + a])),
                hi: std::array::from_fn(|a| bvh::dequant(origin[a], exp[a], b[node::qhi(w) + 3 * k + a])),
            };
            assert!(q.contains(&cb), "quantised child box {q:?} must contain its subtree {cb:?}");
            bx.grow(&cb);
            at = end;
        }
        (bx, at)
    }
}

fn ref_tris(tris: &[Tri], geom: u32) -> Vec<RefTri> {
    tris.iter().enumerate().map(|(i, t)| RefTri { v: *t, geom, prim: i as u32 }).collect()
}

fn random_rays(rng: &mut Rng, n: usize, scale: f32, accel: u64, cull: bool) -> Vec<TraceRay> {
    (0..n)
        .map(|i| {
            let r = if i % 3 == 0 { scale * 0.8 } else { scale * 2.5 };
            let origin = [rng.range(-r, r), rng.range(-r, r), rng.range(-r, r)];
            let mut dir = rng.dir();
            if i % 2 == 0 {
                // Aim at the scene so most rays hit something.
                let tgt = [rng.range(-scale, scale), rng.range(-scale, scale), rng.range(-scale, scale)];
                dir = std::array::from_fn(|a| tgt[a] - origin[a]);
                if i % 10 == 0 {
                    dir[rng.below(3) as usize] = 0.0;
                }
            }
            let s = [1.0, 1e-3, 1e3][i % 3];
            let tmax = if i % 5 == 0 { rng.range(0.0, 2.0 * scale) / s } else { f32::INFINITY };
            TraceRay {
                origin,
                dir: dir.map(|d| d * s),
                tmin: 0.0,
                tmax,
                flags: 0,
                cull_mask: if cull { (rng.next_u64() & 0xff) as u32 | 1 } else { 0xff },
                accel,
            }
        })
        .collect()
}

fn ref_ray(r: &TraceRay) -> RefRay {
    RefRay { org: r.origin, dir: r.dir, tmin: r.tmin, tmax: r.tmax, cull_mask: r.cull_mask }
}

/// Exact brute force with the RTU's own f32 triangle test: the BVH must neither lose nor
/// invent a hit, so t is bit-identical.
fn brute_exact(tris: &[Tri], r: &TraceRay) -> Option<(f32, u32)> {
    let p = RayPrep::new(r.origin, r.dir);
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

#[test]
fn blas_matches_brute_force_at_every_scale_and_width() {
    for (seed, scale, width) in [(1u64, 1.0f32, 4u32), (2, 1e-3, 6), (3, 1e4, 4), (4, 50.0, 6)] {
        let mut rng = Rng::new(seed);
        let dev = Device::new(width);
        let tris = random_tris(&mut rng, 3000, scale, scale * 0.08);
        let b = dev.blas(&[(&tris, 1)]);
        let (h, c) = check_structure(&dev.mem(), b.addr);
        assert_eq!(c.prims.len(), tris.len());
        assert_eq!(h.width, width);
        let rays = random_rays(&mut rng, 3000, scale, b.addr, false);
        let mut harness = Harness::new(&RtuConfig { bvh_width: width, ..RtuConfig::default() }, 32, 1);
        let rows = harness.run(&dev.mem(), &rays, |_, _| panic!("opaque scene yields nothing")).unwrap();
        let refs = vec![ref_tris(&tris, 0)];
        let mut hits = 0;
        for (r, row) in rays.iter().zip(&rows) {
            let got = row.hit();
            let exact = brute_exact(&tris, r);
            match (got, exact) {
                (None, None) => {}
                (Some(g), Some((t, p))) => {
                    assert_eq!(g.t.to_bits(), t.to_bits(), "ray {r:?}");
                    if g.prim != p {
                        let q = RayPrep::new(r.origin, r.dir);
                        let tt = &tris[g.prim as usize];
                        assert_eq!(isect::triangle(&q, tt[0], tt[1], tt[2], r.tmin, r.tmax).unwrap().t, t);
                    }
                    hits += 1;
                }
                (g, e) => panic!("ray {r:?}: RTU {g:?} vs brute force {e:?}"),
            }
            check_closest(&refs, &[], &ref_ray(r), got, Tolerance::default()).unwrap_or_else(|e| panic!("{e}"));
        }
        assert!(hits > 1000, "scale {scale}: only {hits} hits");
    }
}

#[test]
fn tlas_with_transformed_instances_matches_oracle() {
    for (seed, width) in [(11u64, 4u32), (12, 6)] {
        let mut rng = Rng::new(seed);
        let dev = Device::new(width);
        let meshes: Vec<Vec<Tri>> = (0..3).map(|_| random_tris(&mut rng, 300, 1.0, 0.15)).collect();
        let blases: Vec<u64> = meshes.iter().map(|m| dev.blas(&[(m, 1)]).addr).collect();
        let (mut descs, refs) = random_instances(&mut rng, &blases, 40);
        // A null instance and a zero-mask instance are inactive but keep their indices.
        descs.push(InstanceDesc::new(0, translate(0.0, 0.0, 0.0)));
        descs.push(InstanceDesc { mask: 0, ..InstanceDesc::new(blases[0], translate(0.0, 0.0, 0.0)) });
        let tl = dev.tlas(&descs);
        let (h, c) = check_structure(&dev.mem(), tl.addr);
        assert_eq!(c.prims.len(), 40);
        assert_eq!(h.blas_count, 3);
        let mut table: Vec<u64> =
            (0..3).map(|i| dev.mem().read_u64(tl.addr + h.blas_table as u64 * 16 + 8 * i).unwrap()).collect();
        table.sort();
        assert_eq!(table, blases, "BLAS table lists each distinct reference once");
        let ref_meshes: Vec<Vec<RefTri>> = meshes.iter().map(|m| ref_tris(m, 0)).collect();
        let rays = random_rays(&mut rng, 4000, 9.0, tl.addr, true);
        let mut harness = Harness::new(&RtuConfig { bvh_width: width, ..RtuConfig::default() }, 32, 1);
        let rows = harness.run(&dev.mem(), &rays, |_, _| panic!("opaque")).unwrap();
        let mut hits = 0;
        for (r, row) in rays.iter().zip(&rows) {
            let got = row.hit();
            if let Some(g) = got {
                hits += 1;
                use vortex_model::abi::rtu::span;
                let i = g.inst as usize;
                assert_eq!(row.committed(span::CUSTOM), 1000 + g.inst);
                assert_eq!(row.committed(span::SBT), g.inst);
                assert_ne!(refs[i].mask as u32 & r.cull_mask, 0, "masked instance hit");
                for k in 0..12 {
                    assert_eq!(row.committed_f(span::O2W + k as u32), refs[i].o2w[k]);
                }
            }
            check_closest(&ref_meshes, &refs, &ref_ray(r), got, Tolerance::default())
                .unwrap_or_else(|e| panic!("ray {r:?}: {e}"));
        }
        assert!(hits > 300, "{hits} hits");
    }
}

#[test]
fn quantised_boxes_contain_exact_boxes_property() {
    use vortex_transcode::accel::layout::{dequantised, quantise};
    let mut rng = Rng::new(99);
    for it in 0..4000 {
        let n = 2 + rng.below(5) as usize;
        let scale = 10f32.powi(rng.below(13) as i32 - 6);
        let centre = rng.range(-1.0, 1.0) * scale * [1.0, 1e3, 1e6][it % 3];
        let boxes: Vec<Aabb> = (0..n)
            .map(|_| {
                let lo: [f32; 3] = std::array::from_fn(|_| centre + rng.range(-scale, scale));
                let hi: [f32; 3] = std::array::from_fn(|a| {
                    if rng.below(4) == 0 {
                        lo[a]
                    } else {
                        lo[a] + rng.range(0.0, scale) * [1.0, 1e-6][rng.below(2) as usize]
                    }
                });
                Aabb { lo, hi }
            })
            .collect();
        let q = quantise(&boxes);
        for (c, b) in boxes.iter().enumerate() {
            let d = dequantised(&q, c);
            assert!(d.contains(b), "{d:?} does not contain {b:?} (frame {q:?})");
        }
    }
    // Extremes: huge and denormal-scale extents.
    for boxes in [
        vec![Aabb { lo: [f32::MIN; 3], hi: [0.0; 3] }, Aabb { lo: [0.0; 3], hi: [f32::MAX; 3] }],
        vec![Aabb { lo: [1e-40; 3], hi: [2e-40; 3] }, Aabb { lo: [0.0; 3], hi: [1e-44; 3] }],
        vec![Aabb { lo: [5.0; 3], hi: [5.0; 3] }, Aabb { lo: [5.0; 3], hi: [5.0; 3] }],
    ] {
        let q = quantise(&boxes);
        for (c, b) in boxes.iter().enumerate() {
            assert!(dequantised(&q, c).contains(b));
        }
    }
}

fn trace_one(dev: &Device, accel: u64, o: [f32; 3], d: [f32; 3]) -> Option<GotHit> {
    let mut h = Harness::new(&RtuConfig::default(), 1, 1);
    let r = TraceRay { origin: o, dir: d, tmin: 0.0, tmax: f32::INFINITY, flags: 0, cull_mask: 0xff, accel };
    h.run(&dev.mem(), &[r], |_, _| (vortex_model::abi::rtu::ACT_ACCEPT, 0.0)).unwrap()[0].hit()
}

#[test]
fn degenerate_builds_are_valid_and_miss() {
    let dev = Device::new(4);
    let nan = f32::NAN;
    let cases: Vec<(Level, Vec<GeometryInput>)> = vec![
        (Level::Bottom, vec![]),
        (Level::Bottom, vec![dev.triangles(&[], 1)]),
        (Level::Bottom, vec![dev.triangles(&[[[nan, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], 1)]),
        (Level::Bottom, vec![dev.triangles(&[[[0.0, 0.0, 0.0], [1.0, nan, 0.0], [0.0, 1.0, 0.0]]], 1)]),
        (Level::Bottom, vec![dev.aabbs(&[([nan, 0.0, 0.0], [1.0, 1.0, 1.0])], 1)]),
        (Level::Top, vec![]),
        (Level::Top, vec![dev.instances(&[InstanceDesc::new(0, translate(0.0, 0.0, 0.0))])]),
    ];
    for (lvl, g) in cases {
        let b = dev.build(lvl, g).unwrap();
        let (h, _) = check_structure(&dev.mem(), b.addr);
        assert_eq!(h.root, 0);
        assert_eq!(h.size, header::BYTES as u64);
        assert!(trace_one(&dev, b.addr, [0.25, 0.25, 1.0], [0.0, 0.0, -1.0]).is_none());
    }
    // An instance of an empty BLAS is left out too.
    let empty = dev.build(Level::Bottom, vec![]).unwrap();
    let t = dev.tlas(&[InstanceDesc::new(empty.addr, translate(0.0, 0.0, 0.0))]);
    assert_eq!(check_structure(&dev.mem(), t.addr).0.root, 0);
    // One primitive: the root is a leaf word.
    let one = dev.blas(&[(&[[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], 1)]);
    let (h, _) = check_structure(&dev.mem(), one.addr);
    assert!(bvh::child_is_leaf(h.root));
    assert_eq!(trace_one(&dev, one.addr, [0.25, 0.25, 1.0], [0.0, 0.0, -1.0]).unwrap().t, 1.0);
    let inst = dev.tlas(&[InstanceDesc::new(one.addr, translate(0.0, 0.0, -5.0))]);
    let (h, _) = check_structure(&dev.mem(), inst.addr);
    assert!(bvh::child_is_leaf(h.root));
    assert_eq!(trace_one(&dev, inst.addr, [0.25, 0.25, 1.0], [0.0, 0.0, -1.0]).unwrap().t, 6.0);
}

#[test]
fn coincident_primitives_split_by_count() {
    let dev = Device::new(4);
    let t: Tri = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let tris = vec![t; 500];
    let b = dev.blas(&[(&tris, 1)]);
    let (_, c) = check_structure(&dev.mem(), b.addr);
    assert_eq!(c.prims.len(), 500);
    let g = trace_one(&dev, b.addr, [0.25, 0.25, 1.0], [0.0, 0.0, -1.0]).unwrap();
    assert_eq!(g.t, 1.0);
}

/// Index types, firstVertex, primitiveOffset, a geometry transform and the 2-component and
/// half/snorm vertex formats all land the same triangle in the same place.
#[test]
fn input_paths_agree() {
    let dev = Device::new(4);
    // The triangle (0,0)-(1,0)-(0,1) at z = 0; the transform moves it to z = -1.
    let verts: [[f32; 2]; 3] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];
    let xf = translate(0.0, 0.0, -1.0);
    let xf_addr =
        dev.upload(&[[0u8; 16].as_slice(), &xf.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()].concat());
    // Vertex buffers in each format: 2 junk vertices first (reached through firstVertex).
    let enc: Vec<(u32, usize, Box<dyn Fn(f32) -> Vec<u8>>, usize)> = vec![
        (R32G32B32_SFLOAT, 3, Box::new(|v: f32| v.to_le_bytes().to_vec()), 4),
        (103, 2, Box::new(|v: f32| v.to_le_bytes().to_vec()), 4),
        (83, 2, Box::new(|v: f32| half::f16::from_f32(v).to_bits().to_le_bytes().to_vec()), 2),
        (97, 4, Box::new(|v: f32| half::f16::from_f32(v).to_bits().to_le_bytes().to_vec()), 2),
        (78, 2, Box::new(|v: f32| ((v * 32767.0) as i16).to_le_bytes().to_vec()), 2),
        (92, 4, Box::new(|v: f32| ((v * 32767.0) as i16).to_le_bytes().to_vec()), 2),
    ];
    for (fmt, comps, f, csize) in &enc {
        for itype in [index_type::NONE_KHR, index_type::UINT16, index_type::UINT32] {
            let stride = (comps * csize + 4) as u64; // padded
            let mut vb = Vec::new();
            let all: Vec<[f32; 2]> = [[9.0, 9.0], [9.0, 9.0]].into_iter().chain(verts).collect();
            for v in &all {
                let mut rec = Vec::new();
                for c in 0..*comps {
                    rec.extend(f(if c < 2 { v[c] } else { 0.0 }));
                }
                rec.resize(stride as usize, 0xAA);
                vb.extend(rec);
            }
            let vaddr = dev.upload(&vb);
            let (index_data, primitive_offset, first_vertex) = match itype {
                index_type::NONE_KHR => (0, 2 * stride as u32, 0),
                index_type::UINT16 => (dev.upload(&[0, 0, 0, 0, 0, 0, 1, 0, 2, 0]), 4, 2),
                _ => (dev.upload(&[[0u8; 8].as_slice(), &[0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]].concat()), 8, 2),
            };
            let g = GeometryInput {
                geometry: Geometry::Triangles {
                    vertex_format: *fmt,
                    vertex_data: vaddr,
                    vertex_stride: stride,
                    max_vertex: 4,
                    index_type: itype,
                    index_data,
                    transform_data: xf_addr,
                },
                flags: 1,
                range: BuildRange { primitive_count: 1, primitive_offset, first_vertex, transform_offset: 16 },
            };
            let b = dev.build(Level::Bottom, vec![g]).unwrap();
            let hit = trace_one(&dev, b.addr, [0.25, 0.25, 1.0], [0.0, 0.0, -1.0])
                .unwrap_or_else(|| panic!("format {fmt} index type {itype}: miss"));
            assert!((hit.t - 2.0).abs() < 1e-3, "format {fmt} index type {itype}: t = {}", hit.t);
        }
    }
}

#[test]
fn aabbs_and_instance_pointers() {
    let dev = Device::new(6);
    let boxes: Vec<([f32; 3], [f32; 3])> =
        (0..20).map(|i| ([i as f32 * 2.0, 0.0, 0.0], [i as f32 * 2.0 + 1.0, 1.0, 1.0])).collect();
    let b = dev.build(Level::Bottom, vec![dev.aabbs(&boxes, 0)]).unwrap();
    let (_, c) = check_structure(&dev.mem(), b.addr);
    assert_eq!(c.prims.len(), 20);
    // Instances through an array of pointers.
    let recs: Vec<u64> = (0..3)
        .map(|i| {
            dev.upload(
                &InstanceDesc { custom: 7 + i, ..InstanceDesc::new(b.addr, translate(0.0, 5.0 * i as f32, 0.0)) }
                    .bytes(),
            )
        })
        .collect();
    let parr = dev.upload(&recs.iter().flat_map(|a| a.to_le_bytes()).collect::<Vec<_>>());
    let g = GeometryInput {
        geometry: Geometry::Instances { data: parr, array_of_pointers: true },
        flags: 0,
        range: BuildRange { primitive_count: 3, ..BuildRange::default() },
    };
    let t = dev.build(Level::Top, vec![g]).unwrap();
    let (h, c) = check_structure(&dev.mem(), t.addr);
    assert_eq!((c.prims.len(), h.blas_count), (3, 1));
}

#[test]
fn errors_are_reported_not_panicked() {
    let dev = Device::new(4);
    // A reference to something that is not an AS.
    let junk = dev.upload(&[7u8; 256]);
    let g = dev.instances(&[InstanceDesc::new(junk, translate(0.0, 0.0, 0.0))]);
    match dev.build(Level::Top, vec![g]) {
        Err(BuildError::BadInstance { instance: 0, reference, reason }) => {
            assert_eq!(reference, junk);
            assert!(reason.contains("magic"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // Unmapped reference.
    let g = dev.instances(&[InstanceDesc::new(0xdead_0000, translate(0.0, 0.0, 0.0))]);
    assert!(matches!(dev.build(Level::Top, vec![g]), Err(BuildError::BadInstance { .. })));
    // Unreadable vertices.
    let mut g = dev.triangles(&[[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], 1);
    if let Geometry::Triangles { vertex_data, .. } = &mut g.geometry {
        *vertex_data = 0x1234;
    }
    assert!(matches!(dev.build(Level::Bottom, vec![g]), Err(BuildError::Memory { .. })));
    // Unsupported format.
    let mut g = dev.triangles(&[[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], 1);
    if let Geometry::Triangles { vertex_format, .. } = &mut g.geometry {
        *vertex_format = 37 + 1000;
    }
    assert_eq!(dev.build(Level::Bottom, vec![g]).unwrap_err(), BuildError::UnsupportedVertexFormat(1037));
    // Does not fit.
    let g = dev.triangles(&[[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]; 10], 1);
    let dst = dev.alloc(4096);
    let req = BuildRequest {
        level: Level::Bottom,
        flags: 0,
        mode: Mode::Build,
        dst,
        dst_size: 200,
        scratch: 0,
        geometries: vec![g],
    };
    assert!(matches!(build(&dev.mem(), &req, &Options::new(4)), Err(BuildError::DoesNotFit { available: 200, .. })));
    assert_eq!(dev.mem().read_u32(dst).unwrap(), 0, "nothing written when it does not fit");
    // Geometry kind vs level.
    let g = dev.triangles(&[[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], 1);
    assert!(matches!(dev.build(Level::Top, vec![g]), Err(BuildError::BadRequest(_))));
}

#[test]
fn size_query_is_an_upper_bound() {
    let mut rng = Rng::new(5);
    for width in [4, 6] {
        let dev = Device::new(width);
        for n in [0usize, 1, 2, 3, 5, 17, 100, 1000] {
            let tris = random_tris(&mut rng, n, 1.0, 0.1);
            let b = dev.blas(&[(&tris, 1)]);
            let s = build_sizes(Level::Bottom, &[(GeometryKind::Triangles, n as u32)], 0, width);
            assert!(b.stats.bytes <= s.as_size && s.build_scratch > 0);
            let t = dev.tlas(&vec![InstanceDesc::new(b.addr, translate(0.0, 0.0, 0.0)); n.max(1)]);
            let s = build_sizes(Level::Top, &[(GeometryKind::Instances, n.max(1) as u32)], 0, width);
            assert!(t.stats.bytes <= s.as_size);
        }
    }
}

/// Update mode rebuilds from the current inputs (here: in place).
#[test]
fn update_rebuilds_in_place() {
    let dev = Device::new(4);
    let g = dev.triangles(&[[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], 1);
    let b = dev.build(Level::Bottom, vec![g]).unwrap();
    // Move the vertices down by 1 and update.
    let Geometry::Triangles { vertex_data, .. } = g.geometry else { unreachable!() };
    for k in 0..3 {
        dev.mem().write(vertex_data + 12 * k + 8, &(-1.0f32).to_le_bytes()).unwrap();
    }
    let s = build_sizes(Level::Bottom, &[(GeometryKind::Triangles, 1)], 0, 4);
    let req = BuildRequest {
        level: Level::Bottom,
        flags: 0,
        mode: Mode::Update { src: b.addr },
        dst: b.addr,
        dst_size: s.as_size,
        scratch: 0,
        geometries: vec![g],
    };
    build(&dev.mem(), &req, &Options::new(4)).unwrap();
    assert_eq!(trace_one(&dev, b.addr, [0.25, 0.25, 1.0], [0.0, 0.0, -1.0]).unwrap().t, 2.0);
}

/// Build and trace throughput (run with `--release --ignored --nocapture`).
#[test]
#[ignore]
fn throughput() {
    let mut rng = Rng::new(1234);
    let n = 1_000_000;
    let mut opts = Options::new(4);
    if let Some(l) = std::env::var("LEAF").ok().and_then(|v| v.parse().ok()) {
        opts.max_leaf = Some(l);
    }
    if std::env::var("FAST").is_ok() {
        opts.builder = Some(vortex_transcode::accel::Builder::Fast);
    }
    let dev = Device::with_options(opts);
    let tris = random_tris(&mut rng, n, 100.0, 0.5);
    let g = dev.triangles(&tris, 1);
    let t0 = std::time::Instant::now();
    let b = dev.build(Level::Bottom, vec![g]).unwrap();
    let dt = t0.elapsed().as_secs_f64();
    eprintln!("build: {n} triangles in {dt:.3} s = {:.2} M tris/s; {:?}", n as f64 / dt / 1e6, b.stats);
    let rays = random_rays(&mut rng, 200_000, 100.0, b.addr, false);
    let mut h = Harness::new(&RtuConfig::default(), 32, 1);
    let mem = dev.mem();
    let t0 = std::time::Instant::now();
    let q = [0u32; 32];
    let mut lane_rays = [TraceRay::default(); 32];
    for chunk in rays.chunks(32) {
        lane_rays[..chunk.len()].copy_from_slice(chunk);
        h.unit.trace(&mem, 0, u32::MAX, &q, &lane_rays).unwrap();
    }
    let dt = t0.elapsed().as_secs_f64();
    eprintln!(
        "trace: {} rays in {dt:.3} s = {:.2} M rays/s; {:?}",
        rays.len(),
        rays.len() as f64 / dt / 1e6,
        h.unit.stats()
    );

    // A 1M-triangle height field seen by a camera: coherent rays, the usual workload.
    let m = 707;
    let hgt = |i: usize, j: usize| ((i as f32 * 0.05).sin() * (j as f32 * 0.07).cos()) * 20.0;
    let p = |i: usize, j: usize| [i as f32, hgt(i, j), j as f32];
    let mut terrain = Vec::with_capacity(2 * m * m);
    for j in 0..m {
        for i in 0..m {
            terrain.push([p(i, j), p(i + 1, j), p(i + 1, j + 1)]);
            terrain.push([p(i, j), p(i + 1, j + 1), p(i, j + 1)]);
        }
    }
    let g = dev.triangles(&terrain, 1);
    let t0 = std::time::Instant::now();
    let b = dev.build(Level::Bottom, vec![g]).unwrap();
    let dt = t0.elapsed().as_secs_f64();
    eprintln!(
        "build (terrain): {} triangles in {dt:.3} s = {:.2} M tris/s",
        terrain.len(),
        terrain.len() as f64 / dt / 1e6
    );
    let (w, hh) = (512usize, 512usize);
    let eye = [m as f32 * 0.5, 120.0, -50.0];
    let cam: Vec<TraceRay> = (0..w * hh)
        .map(|k| {
            let (x, y) = ((k % w) as f32 / w as f32 - 0.5, (k / w) as f32 / hh as f32 - 0.5);
            TraceRay {
                origin: eye,
                dir: [x, -0.4 - y * 0.8, 1.0],
                tmin: 0.0,
                tmax: f32::INFINITY,
                flags: 0,
                cull_mask: 0xff,
                accel: b.addr,
            }
        })
        .collect();
    let mut h = Harness::new(&RtuConfig::default(), 32, 1);
    let mem = dev.mem();
    let t0 = std::time::Instant::now();
    for chunk in cam.chunks(32) {
        lane_rays[..chunk.len()].copy_from_slice(chunk);
        h.unit.trace(&mem, 0, u32::MAX, &q, &lane_rays).unwrap();
    }
    let dt = t0.elapsed().as_secs_f64();
    eprintln!(
        "trace (terrain, camera rays): {} rays in {dt:.3} s = {:.2} M rays/s; {:?}",
        cam.len(),
        cam.len() as f64 / dt / 1e6,
        h.unit.stats()
    );
}

/// Build speed and quality of each builder on 1M triangles (run with `--release --ignored
/// --nocapture`): warm builds into the same destination and scratch, phase times, SAH cost
/// against the full-sweep reference.
#[test]
#[ignore]
fn builders() {
    use vortex_transcode::accel::{build_sizes, Builder, GeometryKind};
    let n: usize = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let mut rng = Rng::new(77);
    let tris = match std::env::var("SCENE").as_deref() {
        // Dense blobs of small triangles at many scales, over a coarse ground of large ones:
        // far from uniform, which is where SAH and Morton splits differ.
        Ok("blobs") => {
            let mut t = Vec::with_capacity(n);
            let blobs: Vec<([f32; 3], f32)> = (0..64)
                .map(|_| {
                    let c = [rng.range(-100.0, 100.0), rng.range(0.0, 20.0), rng.range(-100.0, 100.0)];
                    (c, 10f32.powf(rng.range(-1.0, 1.2)))
                })
                .collect();
            while t.len() < n * 9 / 10 {
                let (c, r) = blobs[rng.below(64) as usize];
                let p: [f32; 3] = std::array::from_fn(|a| c[a] + rng.range(-r, r) * rng.range(0.0, 1.0));
                let e = r * 0.02;
                t.push(std::array::from_fn(|_| std::array::from_fn(|a| p[a] + rng.range(-e, e))));
            }
            while t.len() < n {
                let p = [rng.range(-100.0, 100.0), 0.0, rng.range(-100.0, 100.0)];
                t.push([p, [p[0] + rng.range(0.5, 8.0), 0.0, p[2]], [p[0], 0.0, p[2] + rng.range(0.5, 8.0)]]);
            }
            t
        }
        // A height field in grid order (as_bench's terrain): spatially sorted input.
        Ok("terrain") => {
            let side = ((n / 2) as f64).sqrt().ceil() as usize;
            let h = |x: usize, z: usize| {
                let (x, z) = (x as f32 * 0.05, z as f32 * 0.05);
                3.0 * (x.sin() * z.cos()) + (2.3 * x + 0.7).sin() * (1.9 * z).cos()
            };
            let p = |x: usize, z: usize| [x as f32, h(x, z), z as f32];
            (0..side * side)
                .flat_map(|c| {
                    let (x, z) = (c % side, c / side);
                    [[p(x, z), p(x + 1, z), p(x + 1, z + 1)], [p(x, z), p(x + 1, z + 1), p(x, z + 1)]]
                })
                .take(n)
                .collect()
        }
        _ => random_tris(&mut rng, n, 100.0, 0.5),
    };
    let mut opts = Options::new(4);
    if let Some(l) = std::env::var("LEAF").ok().and_then(|v| v.parse().ok()) {
        opts.max_leaf = Some(l);
    }
    if let Some(c) = std::env::var("CLUSTER").ok().and_then(|v| v.parse().ok()) {
        opts.cluster = c;
    }
    if let Some(r) = std::env::var("REBUILD").ok().and_then(|v| v.parse().ok()) {
        opts.rebuild = r;
    }
    let dev = Device::new(4);
    let g = dev.triangles(&tris, 1);
    let s = build_sizes(Level::Bottom, &[(GeometryKind::Triangles, n as u32)], 0, 4);
    let dst = dev.alloc(s.as_size);
    let scratch = dev.alloc(s.build_scratch);
    let mut reference = None;
    let list: &[Builder] = match std::env::var("ONLY").as_deref() {
        Ok("fast") => &[Builder::Fast],
        Ok("sah") => &[Builder::Sah],
        _ if std::env::var("SWEEP").is_ok() => &[Builder::FullSweep, Builder::Sah, Builder::Fast],
        _ => &[Builder::Sah, Builder::Fast],
    };
    for &b in list {
        opts.builder = Some(b);
        for rep in 0..std::env::var("REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(3) {
            let req = BuildRequest {
                level: Level::Bottom,
                flags: 0,
                mode: Mode::Build,
                dst,
                dst_size: s.as_size,
                scratch,
                geometries: vec![g],
            };
            let t0 = std::time::Instant::now();
            let c0 = cpu_seconds();
            let st = build(&dev.mem(), &req, &opts).unwrap();
            let dt = t0.elapsed().as_secs_f64();
            let cpu = cpu_seconds() - c0;
            if b == Builder::FullSweep {
                reference = Some(st.sah_cost);
            }
            let ratio = reference.map_or(f64::NAN, |r| st.sah_cost / r);
            eprintln!(
                "{b:?} rep {rep}: {:.1} ms (cpu {:.1} ms) = {:.2} M tris/s; sah {:.2} (x{ratio:.3} of full sweep); {:.1} B/tri; phases ms {:.2} {:.2} {:.2} {:.2} {:.2}",
                dt * 1e3,
                cpu * 1e3,
                n as f64 / dt / 1e6,
                st.sah_cost,
                st.bytes as f64 / n as f64,
                st.phases.gather * 1e3,
                st.phases.sort * 1e3,
                st.phases.permute * 1e3,
                st.phases.tree * 1e3,
                st.phases.write * 1e3
            );
            if b == Builder::FullSweep {
                break;
            }
        }
    }
}

#[test]
#[ignore]
fn tri_reader_speed() {
    use vortex_transcode::accel::input::TriReader;
    let n = 1_000_000;
    let mut rng = Rng::new(77);
    let tris = random_tris(&mut rng, n, 100.0, 0.5);
    let dev = Device::new(4);
    let g = dev.triangles(&tris, 1);
    let mem = dev.mem();
    let r = TriReader::new(&*mem, &g, 0).unwrap();
    for _ in 0..5 {
        let t0 = std::time::Instant::now();
        let mut acc = 0.0f32;
        for i in 0..n as u32 {
            let v = r.tri(i).unwrap().unwrap();
            acc += v[0][0] + v[2][2];
        }
        eprintln!("{:.1} ms ({acc})", t0.elapsed().as_secs_f64() * 1e3);
    }
}

/// CPU time of the whole process (all threads), in seconds.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Checks every ray against the RTU's own triangle test by brute force (bit-identical t)
/// and the independent f64 oracle; returns the number of hits. `geoms` are the triangle
/// lists of the BLAS's geometries, in order.
fn check_blas_rays(dev: &Device, addr: u64, geoms: &[Vec<Tri>], rays: &[TraceRay]) -> usize {
    assert!(rays.iter().all(|r| r.accel == addr));
    let mut harness = Harness::new(&RtuConfig { bvh_width: dev.width, ..RtuConfig::default() }, 32, 1);
    let rows = harness.run(&dev.mem(), rays, |_, _| panic!("opaque scene yields nothing")).unwrap();
    let refs: Vec<Vec<RefTri>> = geoms.iter().enumerate().map(|(g, t)| ref_tris(t, g as u32)).collect();
    let all: Vec<RefTri> = refs.iter().flatten().copied().collect();
    let mut hits = 0;
    for (r, row) in rays.iter().zip(&rows) {
        let got = row.hit();
        let p = RayPrep::new(r.origin, r.dir);
        let mut best: Option<f32> = None;
        for t in &all {
            let lim = best.unwrap_or(r.tmax);
            if let Some(h) = isect::triangle(&p, t.v[0], t.v[1], t.v[2], r.tmin, lim) {
                if best.is_none_or(|b| h.t < b) {
                    best = Some(h.t);
                }
            }
        }
        match (got, best) {
            (None, None) => {}
            (Some(g), Some(t)) => {
                assert_eq!(g.t.to_bits(), t.to_bits(), "ray {r:?}");
                let tt = &geoms[g.geom as usize][g.prim as usize];
                assert_eq!(isect::triangle(&p, tt[0], tt[1], tt[2], r.tmin, r.tmax).unwrap().t, t, "ray {r:?}");
                hits += 1;
            }
            (g, e) => panic!("ray {r:?}: RTU {g:?} vs brute force {e:?}"),
        }
        check_closest(std::slice::from_ref(&all), &[], &ref_ray(r), got, Tolerance::default())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    hits
}

/// Geometry flags by geometry index, read from every triangle leaf (which must agree).
fn leaf_flags(mem: &MemoryMap, base: u64) -> Vec<u32> {
    let h = bvh::Header::parse(&read(mem, base, header::BYTES)).unwrap();
    let mut flags: HashMap<u32, u32> = HashMap::new();
    let mut stack = vec![h.root];
    while let Some(w) = stack.pop() {
        let off = bvh::child_offset(w);
        if bvh::child_is_leaf(w) {
            let b = read(mem, base + off, 16);
            let (g, f) = (rd_u32(&b, tri::GEOM_INDEX), rd_u32(&b, tri::GEOM_FLAGS));
            assert_eq!(*flags.entry(g).or_insert(f), f);
        } else {
            let b = read(mem, base + off, bvh::node_bytes(h.width));
            for k in 0..b[node::COUNT] as usize {
                stack.push(rd_u32(&b, node::CHILD + 4 * k));
            }
        }
    }
    let mut v: Vec<(u32, u32)> = flags.into_iter().collect();
    v.sort();
    v.into_iter().map(|p| p.1).collect()
}

/// Every builder, both widths, single and multi-triangle leaves, several geometries with
/// their own flags: structure invariants and the brute-force oracle.
#[test]
fn every_builder_width_and_leaf_size_matches_brute_force() {
    use vortex_transcode::accel::Builder;
    let mut seed = 300;
    for builder in [Builder::Sah, Builder::Fast, Builder::FullSweep] {
        for width in [4u32, 6] {
            for leaf in [1u32, 3, 8] {
                seed += 1;
                let mut rng = Rng::new(seed);
                let dev = Device::with_options(Options {
                    max_leaf: Some(leaf),
                    builder: Some(builder),
                    ..Options::new(width)
                });
                let geoms: Vec<Vec<Tri>> = (0..3).map(|g| random_tris(&mut rng, 500 + 300 * g, 1.0, 0.1)).collect();
                // All opaque; the middle one also NO_DUPLICATE_ANY_HIT.
                let inputs =
                    geoms.iter().enumerate().map(|(g, t)| dev.triangles(t, 1 | if g == 1 { 2 } else { 0 })).collect();
                let b = dev.build(Level::Bottom, inputs).unwrap();
                assert_eq!(b.stats.builder, Some(builder));
                let (h, c) = check_structure(&dev.mem(), b.addr);
                assert_eq!(c.prims.len(), geoms.iter().map(Vec::len).sum::<usize>());
                assert_eq!(h.width, width);
                if leaf > 1 {
                    assert!(c.leaves < h.prim_count, "{builder:?} leaf {leaf}: {} leaves", c.leaves);
                } else {
                    assert_eq!(c.leaves, h.prim_count);
                }
                for (g, _) in c.prims.keys() {
                    assert!(*g < 3);
                }
                assert_eq!(leaf_flags(&dev.mem(), b.addr), vec![1, 3, 1], "each leaf keeps its geometry's flags");
                let rays = random_rays(&mut rng, 600, 1.0, b.addr, false);
                let hits = check_blas_rays(&dev, b.addr, &geoms, &rays);
                assert!(hits > 150, "{builder:?} w{width} leaf {leaf}: {hits} hits");
            }
        }
    }
}

/// The SAH builder's knobs: clusters found from the keys and all rebuilt (the default and
/// `cluster <= rebuild`), clusters over the linear BVH partly rebuilt or not at all.
#[test]
fn sah_cluster_knobs_match_brute_force() {
    use vortex_transcode::accel::Builder;
    let mut rng = Rng::new(404);
    let geoms: Vec<Vec<Tri>> = (0..2).map(|g| random_tris(&mut rng, 1500 + 700 * g, 1.0, 0.1)).collect();
    let mut costs = Vec::new();
    for (cluster, rebuild) in [(16, 16), (1, 16), (2, 64), (64, 64), (32, 8), (16, 0), (8, 3)] {
        let dev = Device::with_options(Options {
            max_leaf: Some(1),
            builder: Some(Builder::Sah),
            cluster,
            rebuild,
            ..Options::new(4)
        });
        let inputs = geoms.iter().map(|t| dev.triangles(t, 1)).collect();
        let b = dev.build(Level::Bottom, inputs).unwrap();
        let (h, c) = check_structure(&dev.mem(), b.addr);
        assert_eq!(c.prims.len(), geoms.iter().map(Vec::len).sum::<usize>());
        assert_eq!(c.leaves, h.prim_count);
        let rays = random_rays(&mut rng, 400, 1.0, b.addr, false);
        let hits = check_blas_rays(&dev, b.addr, &geoms, &rays);
        assert!(hits > 100, "cluster {cluster} rebuild {rebuild}: {hits} hits");
        costs.push(b.stats.sah_cost);
    }
    // Rebuilding every cluster of 16 beats not rebuilding them.
    assert!(costs[0] < costs[5], "{costs:?}");
}

/// Multi-primitive procedural leaves, and the SAH builder's quality against the full sweep.
#[test]
fn aabb_leaves_and_sah_quality() {
    use vortex_transcode::accel::Builder;
    let mut rng = Rng::new(55);
    let boxes: Vec<([f32; 3], [f32; 3])> = (0..3000)
        .map(|_| {
            let c = [rng.range(-10.0, 10.0), rng.range(-10.0, 10.0), rng.range(-10.0, 10.0)];
            (c, [c[0] + rng.range(0.0, 0.3), c[1] + rng.range(0.0, 0.3), c[2] + rng.range(0.0, 0.3)])
        })
        .collect();
    let dev = Device::with_options(Options { max_leaf: Some(4), ..Options::new(6) });
    let b = dev.build(Level::Bottom, vec![dev.aabbs(&boxes, 0)]).unwrap();
    let (h, c) = check_structure(&dev.mem(), b.addr);
    assert_eq!(c.prims.len(), 3000);
    assert!(c.leaves < 1500 && h.leaf_count == c.leaves);

    let tris = random_tris(&mut rng, 20_000, 10.0, 0.2);
    let mut costs = Vec::new();
    // The trees compared on one-triangle leaves (the fast builder's default leaf is larger).
    for builder in [Builder::FullSweep, Builder::Sah, Builder::Fast] {
        let dev = Device::with_options(Options { builder: Some(builder), max_leaf: Some(1), ..Options::new(4) });
        costs.push(dev.build(Level::Bottom, vec![dev.triangles(&tris, 1)]).unwrap().stats.sah_cost);
    }
    // PREFER_FAST_BUILD picks the fast builder and its multi-triangle leaves.
    let mut dev = Device::new(4);
    dev.flags = vortex_transcode::accel::flags::PREFER_FAST_BUILD;
    let b = dev.build(Level::Bottom, vec![dev.triangles(&tris, 1)]).unwrap();
    assert_eq!(b.stats.builder, Some(Builder::Fast));
    assert!(b.stats.leaves * 2 < tris.len() as u64, "{} leaves for {} triangles", b.stats.leaves, tris.len());
    assert!(costs[1] <= costs[0] * 1.08, "SAH builder {} vs full sweep {}", costs[1], costs[0]);
    assert!(costs[2] <= costs[0] * 1.3, "fast builder {} vs full sweep {}", costs[2], costs[0]);
}

/// The application's scratch memory is what the build works in.
#[test]
fn scratch_is_used() {
    let dev = Device::new(4);
    let mut rng = Rng::new(9);
    let tris = random_tris(&mut rng, 1000, 1.0, 0.1);
    let g = dev.triangles(&tris, 1);
    let s = build_sizes(Level::Bottom, &[(GeometryKind::Triangles, 1000)], 0, 4);
    let dst = dev.alloc(s.as_size);
    let scratch = dev.upload(&vec![0xA5u8; s.build_scratch as usize]);
    let req = BuildRequest {
        level: Level::Bottom,
        flags: 0,
        mode: Mode::Build,
        dst,
        dst_size: s.as_size,
        scratch,
        geometries: vec![g],
    };
    build(&dev.mem(), &req, &Options::new(4)).unwrap();
    let mut sb = vec![0u8; s.build_scratch as usize];
    dev.mem().read(scratch, &mut sb).unwrap();
    let touched = sb.iter().filter(|&&b| b != 0xA5).count();
    assert!(touched > sb.len() / 4, "only {touched} of {} scratch bytes written", sb.len());
    check_structure(&dev.mem(), dst);
}

/// Updates refit in place (src == dst) and into another structure (src != dst, the source
/// untouched); the result is a valid structure over the new positions.
#[test]
fn updates_refit_bottom_levels() {
    for (width, leaf, in_place) in [(4u32, 1u32, true), (6, 4, false), (4, 3, false), (6, 1, true)] {
        let mut rng = Rng::new(70 + width as u64 + leaf as u64);
        let dev = Device::with_options(Options { max_leaf: Some(leaf), ..Options::new(width) });
        let tris = random_tris(&mut rng, 2000, 1.0, 0.1);
        let g = dev.triangles(&tris, 1);
        let b = dev.build(Level::Bottom, vec![g]).unwrap();
        let before = read(&dev.mem(), b.addr, b.stats.bytes as usize);
        // New positions: every triangle moves and deforms.
        let moved: Vec<Tri> =
            tris.iter().map(|t| t.map(|v| v.map(|x| x * 1.5 + rng.range(-0.05, 0.05) + 0.3))).collect();
        let Geometry::Triangles { vertex_data, .. } = g.geometry else { unreachable!() };
        let bytes: Vec<u8> = moved.iter().flatten().flatten().flat_map(|v| v.to_le_bytes()).collect();
        dev.mem().write(vertex_data, &bytes).unwrap();
        let s = build_sizes(Level::Bottom, &[(GeometryKind::Triangles, 2000)], 1, width);
        let dst = if in_place { b.addr } else { dev.alloc(s.as_size) };
        let req = BuildRequest {
            level: Level::Bottom,
            flags: 1,
            mode: Mode::Update { src: b.addr },
            dst,
            dst_size: s.as_size,
            scratch: 0,
            geometries: vec![g],
        };
        let st = build(&dev.mem(), &req, &dev.opts).unwrap();
        assert_eq!(st.builder, None);
        let (h, c) = check_structure(&dev.mem(), dst);
        assert_eq!(c.prims.len(), 2000);
        assert_eq!(h.size, b.stats.bytes, "a refit keeps the size");
        if !in_place {
            assert_eq!(read(&dev.mem(), b.addr, before.len()), before, "the source is untouched");
        }
        let rays = random_rays(&mut rng, 800, 2.0, dst, false);
        let hits = check_blas_rays(&dev, dst, &[moved], &rays);
        assert!(hits > 200, "{hits}");
    }
}

/// A top-level update follows moved instances and a changed BLAS reference.
#[test]
fn updates_refit_top_levels() {
    let mut rng = Rng::new(91);
    let dev = Device::new(4);
    let meshes: Vec<Vec<Tri>> = (0..2).map(|_| random_tris(&mut rng, 1500, 1.0, 0.2)).collect();
    let blases: Vec<u64> = meshes.iter().map(|m| dev.blas(&[(m, 1)]).addr).collect();
    let descs: Vec<InstanceDesc> = (0..20)
        .map(|i| InstanceDesc { custom: i, ..InstanceDesc::new(blases[0], translate(3.0 * i as f32, 0.0, 0.0)) })
        .collect();
    let g = dev.instances(&descs);
    let t = dev.build(Level::Top, vec![g]).unwrap();
    // Move every instance up by 10 and point the odd ones at the second BLAS.
    let moved: Vec<InstanceDesc> = descs
        .iter()
        .enumerate()
        .map(|(i, d)| InstanceDesc { blas: blases[i % 2], o2w: translate(3.0 * i as f32, 10.0, 0.0), ..*d })
        .collect();
    let Geometry::Instances { data, .. } = g.geometry else { unreachable!() };
    dev.mem().write(data, &moved.iter().flat_map(|d| d.bytes()).collect::<Vec<_>>()).unwrap();
    let req = BuildRequest {
        level: Level::Top,
        flags: 1,
        mode: Mode::Update { src: t.addr },
        dst: t.addr,
        dst_size: t.stats.bytes,
        scratch: 0,
        geometries: vec![g],
    };
    build(&dev.mem(), &req, &dev.opts).unwrap();
    let (h, c) = check_structure(&dev.mem(), t.addr);
    assert_eq!((c.prims.len(), h.blas_count), (20, 2));
    let refs: Vec<RefInstance> = moved
        .iter()
        .enumerate()
        .map(|(i, d)| RefInstance { o2w: d.o2w, blas: i % 2, mask: 0xff, custom: d.custom, index: i as u32 })
        .collect();
    let ref_meshes: Vec<Vec<RefTri>> = meshes.iter().map(|m| ref_tris(m, 0)).collect();
    let rays: Vec<TraceRay> = (0..400)
        .map(|i| TraceRay {
            origin: [rng.range(-1.0, 60.0), rng.range(9.0, 11.0), 5.0],
            dir: [rng.range(-0.1, 0.1), rng.range(-0.1, 0.1), -1.0],
            tmin: 0.0,
            tmax: if i % 7 == 0 { 4.5 } else { f32::INFINITY },
            flags: 0,
            cull_mask: 0xff,
            accel: t.addr,
        })
        .collect();
    let mut harness = Harness::new(&RtuConfig::default(), 32, 1);
    let rows = harness.run(&dev.mem(), &rays, |_, _| panic!("opaque")).unwrap();
    let mut hits = 0;
    for (r, row) in rays.iter().zip(&rows) {
        hits += row.hit().is_some() as usize;
        check_closest(&ref_meshes, &refs, &ref_ray(r), row.hit(), Tolerance::default())
            .unwrap_or_else(|e| panic!("ray {r:?}: {e}"));
    }
    assert!(hits > 100, "{hits}");
}

/// Serialize, deserialize (relocating the BLAS references through the handle list), and
/// the post-build properties.
#[test]
fn serialization_round_trips() {
    use vortex_transcode::accel::serial;
    let uuid = *b"0123456789abcdef";
    let mut rng = Rng::new(33);
    let dev = Device::new(6);
    let mesh = random_tris(&mut rng, 300, 1.0, 0.15);
    let blas = dev.blas(&[(&mesh, 1)]);
    let p = serial::properties(&dev.mem(), blas.addr).unwrap();
    assert_eq!(p.compacted, blas.stats.bytes);
    assert_eq!((p.blas_pointers, p.size), (0, blas.stats.bytes));
    assert_eq!(p.serialized, 56 + blas.stats.bytes);
    let tlas = dev.tlas(&[
        InstanceDesc::new(blas.addr, translate(0.0, 0.0, 0.0)),
        InstanceDesc::new(blas.addr, translate(5.0, 0.0, 0.0)),
    ]);
    let p = serial::properties(&dev.mem(), tlas.addr).unwrap();
    assert_eq!(p.blas_pointers, 1);
    assert_eq!(p.serialized, 56 + 8 + tlas.stats.bytes);
    let mut blob = vec![0u8; p.serialized as usize];
    assert_eq!(serial::serialize(&dev.mem(), tlas.addr, &mut blob, &uuid).unwrap(), p.serialized);
    assert_eq!(&blob[..16], &uuid);
    assert_eq!(&blob[16..32], &serial::COMPAT_UUID);
    assert_eq!(rd_u64(&blob, 32), p.serialized);
    assert_eq!(rd_u64(&blob, 40), tlas.stats.bytes, "the host reads the deserialized size here");
    assert_eq!((rd_u64(&blob, 48), rd_u64(&blob, 56)), (1, blas.addr));
    assert!(serial::compatible(&blob, &uuid) && !serial::compatible(&blob, b"another driver!!"));

    // Deserialize as is: the copy references the original BLAS.
    let dst = dev.alloc(tlas.stats.bytes);
    serial::deserialize(&blob, &dev.mem(), dst, tlas.stats.bytes, &uuid).unwrap();
    let probe = |addr: u64| -> Vec<Option<f32>> {
        (0..200)
            .map(|i| {
                let (x, y) = ((i % 20) as f32 * 0.35 - 1.0, (i / 20) as f32 * 0.2 - 1.0);
                trace_one(&dev, addr, [x + 5.0 * (i % 2) as f32, y, 3.0], [0.0, 0.0, -1.0]).map(|h| h.t)
            })
            .collect()
    };
    let want = probe(tlas.addr);
    assert!(want.iter().filter(|h| h.is_some()).count() > 20);
    assert_eq!(probe(dst), want);
    // Relocated: the BLAS cloned elsewhere, the handle list rewritten, the original wiped.
    let bytes = read(&dev.mem(), blas.addr, blas.stats.bytes as usize);
    let moved = dev.upload(&bytes);
    blob[56..64].copy_from_slice(&moved.to_le_bytes());
    let dst2 = dev.alloc(tlas.stats.bytes);
    serial::deserialize(&blob, &dev.mem(), dst2, tlas.stats.bytes, &uuid).unwrap();
    dev.mem().write(blas.addr, &vec![0u8; bytes.len()]).unwrap();
    let (h, _) = check_structure(&dev.mem(), dst2);
    assert_eq!(dev.mem().read_u64(dst2 + h.blas_table as u64 * 16).unwrap(), moved);
    assert_eq!(probe(dst2), want, "the relocated TLAS finds the moved BLAS");
    // Refused: another driver, too small a destination.
    assert!(serial::deserialize(&blob, &dev.mem(), dst2, tlas.stats.bytes, b"another driver!!").is_err());
    assert!(matches!(serial::deserialize(&blob, &dev.mem(), dst2, 100, &uuid), Err(BuildError::DoesNotFit { .. })));
}

/// The deserializer's fuzz target: serialized BLASes (both widths, single and multi-triangle
/// leaves, AABBs) and a TLAS, mutated (bit flips, interesting words, header fields, splices,
/// truncation; half the time with the header's sizes made consistent again so the body is
/// reached), deserialized and, when accepted, traced by the model's RTU. Every outcome must be
/// an error or a result, never a panic: a refused blob is a `BuildError`, an accepted one
/// that is malformed inside is a walker fault. `VX_FUZZ_SECS` sets the time (default 10 s;
/// CI runs it in both modes, like the shader front end's fuzz target), `VX_FUZZ_ITERS` caps
/// the iterations instead, `VX_FUZZ_SEED` varies the campaign.
#[test]
fn deserializer_fuzz_never_panics() {
    use vortex_transcode::accel::serial;
    let uuid = *b"0123456789abcdef";
    let mut rng = Rng::new(std::env::var("VX_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(4242));
    let d4 = Device::new(4);
    let mut o6 = Options::new(6);
    o6.max_leaf = Some(4);
    let d6 = Device::with_options(o6);
    let mesh = random_tris(&mut rng, 200, 1.0, 0.2);
    let b4 = d4.blas(&[(&mesh, 1), (&mesh[..50], 0)]);
    let b6 = d6.blas(&[(&mesh, 1)]);
    let boxes: Vec<([f32; 3], [f32; 3])> = (0..40)
        .map(|_| {
            let c = [rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)];
            (c, [c[0] + 0.1, c[1] + 0.1, c[2] + 0.1])
        })
        .collect();
    let g = d4.aabbs(&boxes, 0);
    let ab = d4.build(Level::Bottom, vec![g]).unwrap();
    let tl = d4.tlas(&[
        InstanceDesc::new(b4.addr, translate(0.0, 0.0, 0.0)),
        InstanceDesc::new(ab.addr, translate(2.0, 0.0, 0.0)),
        InstanceDesc::new(b4.addr, translate(-2.0, 0.0, 0.0)),
    ]);
    // (device, serialized blob, destination, its size)
    let mut seeds = Vec::new();
    for (dev, addr) in [(&d4, b4.addr), (&d6, b6.addr), (&d4, ab.addr), (&d4, tl.addr)] {
        let p = serial::properties(&dev.mem(), addr).unwrap();
        let mut blob = vec![0u8; p.serialized as usize];
        serial::serialize(&dev.mem(), addr, &mut blob, &uuid).unwrap();
        let dst_size = p.size + 512;
        seeds.push((dev, blob, dev.alloc(dst_size), dst_size));
    }
    let secs: f64 = std::env::var("VX_FUZZ_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(10.0);
    let max_iters: usize = std::env::var("VX_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
    const INTERESTING: [u32; 9] = [0, 1, 2, 3, 0x7f, 0xff, 0x8000_0000, 0x7fff_ffff, u32::MAX];
    // refused, accepted and traced, accepted and faulted
    let mut outcomes = [0usize; 3];
    let mut it = 0;
    while it < max_iters && std::time::Instant::now() < deadline {
        let (dev, orig, dst, dst_size) = &seeds[rng.below(seeds.len() as u64) as usize];
        let mut blob = orig.clone();
        let edits = 1 + rng.below(4);
        for _ in 0..edits {
            let n = blob.len();
            if n < 64 {
                break;
            }
            match rng.below(6) {
                0 => {
                    let at = rng.below(n as u64 * 8);
                    blob[(at / 8) as usize] ^= 1 << (at % 8);
                }
                1 => {
                    let at = rng.below((n / 4) as u64) as usize * 4;
                    let v = INTERESTING[rng.below(INTERESTING.len() as u64) as usize];
                    blob[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
                2 => {
                    let at = rng.below((n / 4) as u64) as usize * 4;
                    let v = rng.next_u64() as u32;
                    blob[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
                3 => {
                    // A header field: sizes, handle count, a handle.
                    let f = [32usize, 40, 48, 56][rng.below(4) as usize].min(n - 8);
                    let v = match rng.below(3) {
                        0 => rng.next_u64(),
                        1 => rd_u64(&blob, f).wrapping_add(rng.below(64)).wrapping_sub(32),
                        _ => u64::MAX - rng.below(4),
                    };
                    blob[f..f + 8].copy_from_slice(&v.to_le_bytes());
                }
                4 => {
                    // Splice: one 16-byte block over another (records are 16-byte aligned).
                    let (a, b) = (rng.below((n / 16) as u64) as usize * 16, rng.below((n / 16) as u64) as usize * 16);
                    let chunk: Vec<u8> = blob[a..(a + 16).min(n)].to_vec();
                    let m = chunk.len().min(n - b);
                    blob[b..b + m].copy_from_slice(&chunk[..m]);
                }
                _ => blob.truncate(rng.below(n as u64 + 1) as usize),
            }
        }
        if rng.below(2) == 0 && blob.len() >= serial::HEADER_BYTES {
            // Consistent sizes again, so that the body's validation is what is exercised.
            let count = rd_u64(&blob, 48).min(64);
            let body = serial::HEADER_BYTES as u64 + 8 * count;
            let size = (blob.len() as u64).saturating_sub(body);
            blob[48..56].copy_from_slice(&count.to_le_bytes());
            blob[40..48].copy_from_slice(&size.to_le_bytes());
            blob[32..40].copy_from_slice(&(body + size).to_le_bytes());
        }
        let mem = dev.mem();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if serial::deserialize(&blob, &mem, *dst, *dst_size, &uuid).is_err() {
                return 0;
            }
            let rays: Vec<TraceRay> = (0..8)
                .map(|_| TraceRay {
                    origin: [rng.range(-3.0, 3.0), rng.range(-1.5, 1.5), 3.0],
                    dir: [rng.range(-0.2, 0.2), rng.range(-0.2, 0.2), -1.0],
                    tmin: 0.0,
                    tmax: f32::INFINITY,
                    flags: 0,
                    cull_mask: 0xff,
                    accel: *dst,
                })
                .collect();
            // A corrupt structure may hold a cycle: the walk must fault at the visit bound,
            // kept small here so that timed mode reaches it quickly too.
            let cfg = RtuConfig { max_visits: 1 << 14, ..RtuConfig::default() };
            let mut h = Harness::new(&cfg, 8, 1);
            match h.run(&mem, &rays, |_, _| (vortex_model::abi::rtu::ACT_ACCEPT, 0.0)) {
                Ok(_) => 1,
                Err(_) => 2,
            }
        }));
        match r {
            Ok(k) => outcomes[k] += 1,
            Err(_) => {
                let path = std::env::temp_dir().join(format!("vx-as-fuzz-crash-{it}.bin"));
                std::fs::write(&path, &blob).unwrap();
                panic!("deserialize or trace panicked on mutation {it}; blob saved to {}", path.display());
            }
        }
        it += 1;
    }
    eprintln!(
        "AS deserializer fuzz: {it} blobs in {secs} s: {} refused, {} accepted and traced, {} accepted and faulted in the walk",
        outcomes[0], outcomes[1], outcomes[2]
    );
    assert!(outcomes[0] > 0 && outcomes[1] + outcomes[2] > 0, "{outcomes:?}");
}

/// A build's bytes do not depend on the thread count: the same structure from pools of 1,
/// 2 and 3 threads, for both builders, over triangles (multi-primitive leaves) and AABBs,
/// large enough that every phase splits its work.
/// Each triangle's bounding box, as procedural AABBs to build over.
fn tri_boxes(tris: &[Tri]) -> Vec<([f32; 3], [f32; 3])> {
    tris.iter()
        .map(|t| {
            let lo: [f32; 3] = std::array::from_fn(|a| t[0][a].min(t[1][a]).min(t[2][a]));
            let hi: [f32; 3] = std::array::from_fn(|a| t[0][a].max(t[1][a]).max(t[2][a]));
            (lo, hi)
        })
        .collect()
}

#[test]
fn builds_are_the_same_whatever_the_thread_count() {
    use vortex_transcode::accel::Builder;
    let mut rng = Rng::new(1812);
    let tris = random_tris(&mut rng, 60_000, 100.0, 0.5);
    let boxes = tri_boxes(&tris);
    for builder in [Builder::Fast, Builder::Sah] {
        for aabbs in [false, true] {
            let mut first: Option<Vec<u8>> = None;
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let dev = Device::with_options(Options { builder: Some(builder), ..Options::new(4) });
                let input = if aabbs { dev.aabbs(&boxes, 1) } else { dev.triangles(&tris, 1) };
                let b = pool.install(|| dev.build(Level::Bottom, vec![input])).unwrap();
                let bytes = read(&dev.mem(), b.addr, b.stats.bytes as usize);
                match &first {
                    None => first = Some(bytes),
                    Some(f) => {
                        assert!(*f == bytes, "{builder:?} (AABBs: {aabbs}) on {threads} threads differs from 1 thread")
                    }
                }
            }
        }
    }
}

/// Indexed R32G32B32 triangles (32-bit indices, a padded stride, firstVertex, a vertex
/// with a NaN, a maxVertex too small for some indices) build the same bytes as the same
/// triangles given one after another: the indexed reader's fast path and its fallback
/// agree with the plain reader.
#[test]
fn indexed_u32_triangles_build_like_unindexed_ones() {
    use vortex_transcode::accel::Builder;
    let mut rng = Rng::new(77);
    let mut tris = random_tris(&mut rng, 5000, 10.0, 0.5);
    tris[123][1][2] = f32::NAN;
    let n = tris.len();
    // Vertex k of the mesh is corner k % 3 of triangle perm(k / 3): indices undo it.
    let perm = |t: usize| (t * 7919) % n;
    let (first, stride) = (3usize, 16usize);
    let mut vb = vec![0xAAu8; (first + 3 * n) * stride];
    let mut idx = vec![0u32; 3 * n];
    for k in 0..3 * n {
        let (t, c) = (perm(k / 3), k % 3);
        for a in 0..3 {
            let at = (first + k) * stride + 4 * a;
            vb[at..at + 4].copy_from_slice(&tris[t][c][a].to_le_bytes());
        }
        idx[3 * t + c] = k as u32;
    }
    for builder in [Builder::Fast, Builder::Sah] {
        let dev = Device::with_options(Options { builder: Some(builder), ..Options::new(4) });
        let plain = dev.build(Level::Bottom, vec![dev.triangles(&tris, 1)]).unwrap();
        let want = read(&dev.mem(), plain.addr, plain.stats.bytes as usize);
        let vaddr = dev.upload(&vb);
        let iaddr = dev.upload(&idx.iter().flat_map(|i| i.to_le_bytes()).collect::<Vec<_>>());
        for max_vertex in [3 * n as u32 - 1, n as u32] {
            let g = GeometryInput {
                geometry: Geometry::Triangles {
                    vertex_format: R32G32B32_SFLOAT,
                    vertex_data: vaddr,
                    vertex_stride: stride as u64,
                    max_vertex,
                    index_type: index_type::UINT32,
                    index_data: iaddr,
                    transform_data: 0,
                },
                flags: 1,
                range: BuildRange { primitive_count: n as u32, first_vertex: first as u32, ..BuildRange::default() },
            };
            let b = dev.build(Level::Bottom, vec![g]).unwrap();
            assert_eq!(b.stats.prims, n as u64 - 1, "the NaN triangle is inactive");
            let got = read(&dev.mem(), b.addr, b.stats.bytes as usize);
            assert!(got == want, "{builder:?}, maxVertex {max_vertex}: the indexed build differs");
        }
    }
}

/// FNV-1a over a structure's bytes.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The bytes every builder writes for a few scenes, pinned by hash: a change to the shared
/// phases (gather, sort, permutation, writer) that is meant to be a pure speed-up must keep
/// them. Scenes: a random soup (widths 4 and 6), a height field, three geometries, a
/// non-opaque soup (single-primitive leaves), AABBs, a TLAS, and the rdna2 layout. A change
/// that is meant to change the trees updates the pins (the test prints them all).
#[test]
fn built_bytes_are_pinned() {
    use vortex_transcode::accel::Builder;
    let mut rng = Rng::new(2024);
    let soup = random_tris(&mut rng, 20_000, 50.0, 0.8);
    let side = 100usize;
    let height = |x: usize, z: usize| ((x * 7 + z * 13) % 17) as f32 * 0.05 + (x as f32 * 0.1).sin();
    let mut field = Vec::new();
    for z in 0..side - 1 {
        for x in 0..side - 1 {
            let p = |x: usize, z: usize| [x as f32, height(x, z), z as f32];
            field.push([p(x, z), p(x + 1, z), p(x, z + 1)]);
            field.push([p(x + 1, z), p(x + 1, z + 1), p(x, z + 1)]);
        }
    }
    // x negated: -0.0 and 0.0 corners side by side.
    let mirrored: Vec<Tri> = field.iter().map(|t| t.map(|v| [-v[0], v[1], v[2]])).collect();
    let boxes = tri_boxes(&soup[..8000]);
    let mut got = Vec::new();
    for builder in [Builder::Fast, Builder::Sah] {
        for width in [4u32, 6] {
            let dev = Device::with_options(Options { builder: Some(builder), ..Options::new(width) });
            let mut hash = |name: &str, b: vortex_transcode::accel::testkit::Built| {
                got.push((
                    format!("{builder:?} w{width} {name}"),
                    fnv(&read(&dev.mem(), b.addr, b.stats.bytes as usize)),
                ));
            };
            hash("soup", dev.blas(&[(&soup, 1)]));
            hash("field", dev.blas(&[(&field, 1)]));
            hash("mirrored", dev.blas(&[(&mirrored, 1)]));
            hash("geoms", dev.blas(&[(&soup[..5000], 1), (&field[..3000], 1), (&soup[5000..9000], 1)]));
            hash("non-opaque", dev.blas(&[(&soup[..10_000], 0)]));
            hash("aabbs", dev.build(Level::Bottom, vec![dev.aabbs(&boxes, 1)]).unwrap());
            let blas = dev.blas(&[(&soup[..2000], 1)]);
            let (descs, _) = random_instances(&mut Rng::new(5), &[blas.addr], 500);
            hash("tlas", dev.tlas(&descs));
        }
    }
    for box16 in [vortex_model::config::Box16::Never, vortex_model::config::Box16::Always] {
        let dev = Device::rdna2(box16);
        let b = dev.blas(&[(&soup, 1)]);
        got.push((format!("rdna2 {box16:?} soup"), fnv(&read(&dev.mem(), b.addr, b.stats.bytes as usize))));
    }
    for (name, h) in &got {
        eprintln!("(\"{name}\", {h:#018x}),");
    }
    let want: &[(&str, u64)] = &[
        ("Fast w4 soup", 0x542aa4d40d882462),
        ("Fast w4 field", 0x3958cd95a0554a96),
        ("Fast w4 mirrored", 0x09f42a9acf7c5463),
        ("Fast w4 geoms", 0x594a064929011ca5),
        ("Fast w4 non-opaque", 0x611531b53c8c8a36),
        ("Fast w4 aabbs", 0xf206bc2da93142bd),
        ("Fast w4 tlas", 0xc3f0d6044eaedecf),
        ("Fast w6 soup", 0x3b217e8d0ff9c77f),
        ("Fast w6 field", 0x14d475ced3a58880),
        ("Fast w6 mirrored", 0x62785c66835bdf75),
        ("Fast w6 geoms", 0xe3b8af2b34f7fdbc),
        ("Fast w6 non-opaque", 0x801c3952e8bed652),
        ("Fast w6 aabbs", 0x9441c67a3e5cb382),
        ("Fast w6 tlas", 0x5e808110126122bd),
        ("Sah w4 soup", 0x8a3d44e6026ff2d9),
        ("Sah w4 field", 0x3c3b624364a100d8),
        ("Sah w4 mirrored", 0xf3bc80eb62592946),
        ("Sah w4 geoms", 0xa74c8ff9d4c8f9cd),
        ("Sah w4 non-opaque", 0xf087c5e88a723de5),
        ("Sah w4 aabbs", 0x60ccdbf96b7c79c8),
        ("Sah w4 tlas", 0x1d3437183bec1327),
        ("Sah w6 soup", 0xde2b62a042e7cd0d),
        ("Sah w6 field", 0x4fa6ff061b63194a),
        ("Sah w6 mirrored", 0xf644339b0f35e6c9),
        ("Sah w6 geoms", 0x0ed94f65f0f4b4c4),
        ("Sah w6 non-opaque", 0x8fae5af6745f1db1),
        ("Sah w6 aabbs", 0xad24e31f086bc6dd),
        ("Sah w6 tlas", 0xa28fc94345d39130),
        ("rdna2 Never soup", 0x1d26a434bdce5313),
        ("rdna2 Always soup", 0xd59fad1858ee71f6),
    ];
    for ((name, h), (wn, wh)) in got.iter().zip(want) {
        assert_eq!((name.as_str(), *h), (*wn, *wh), "{name}: the built bytes changed");
    }
    assert_eq!(got.len(), want.len(), "pins");
}
