//! Seed 004's hand-solvable fixtures against the unit, and its rule that an unknown or
//! out-of-range node is reported, never a quiet miss.

use super::*;
use crate::abi::rdna2::{box16_of, write_box16, write_box32, NodeBox, EMPTY_BOX};
use crate::abi::{wr_f32, wr_u32};
use crate::mem::AddressSpace;

fn ray(org: [f32; 3], dir: [f32; 3], extent: f32, node: u32) -> IsectRay {
    IsectRay { node, extent, org, dir, inv: dir.map(|d| 1.0 / d) }
}

const SCALE: f32 = 1.0 + 4.0 * f32::EPSILON;

#[test]
fn slab_with_zero_direction_components() {
    // Straight up +z from inside the unit square: x and y have 1/d = +inf.
    let r = ray([0.5, 0.5, -1.0], [0.0, 0.0, 1.0], 100.0, 0);
    assert_eq!(r.inv[0], f32::INFINITY);
    assert_eq!(slab(&r, [0.0; 3], [1.0; 3], SCALE), Some(1.0), "enters at z = 0, t = 1");
    assert_eq!(slab(&r, [2.0, 0.0, 0.0], [3.0, 1.0, 1.0], SCALE), None, "beside the box in x: never inside");
    // Lying exactly in the box's x = 0 plane: (0 - 0) * inf is NaN, which adds no bound.
    let g = ray([0.0, 0.5, -1.0], [0.0, 0.0, 1.0], 100.0, 0);
    assert_eq!(slab(&g, [0.0; 3], [1.0; 3], SCALE), Some(1.0), "a grazing ray touches the box");
    // Negative zero: 1/-0 = -inf, the planes swap, same answer.
    let n = ray([0.5, 0.5, -1.0], [-0.0, 0.0, 1.0], 100.0, 0);
    assert_eq!(n.inv[0], f32::NEG_INFINITY);
    assert_eq!(slab(&n, [0.0; 3], [1.0; 3], SCALE), Some(1.0));
    // Behind the extent: the box starts at t = 1, the ray stops at 0.5.
    let short = ray([0.5, 0.5, -1.0], [0.0, 0.0, 1.0], 0.5, 0);
    assert_eq!(slab(&short, [0.0; 3], [1.0; 3], SCALE), None);
}

fn tri_bytes(v: [[f32; 3]; 5], id: u32) -> [u8; 64] {
    let mut b = [0u8; 64];
    for (k, p) in v.iter().enumerate() {
        for a in 0..3 {
            wr_f32(&mut b, r2::tri::vertex(k) + 4 * a, p[a]);
        }
    }
    wr_u32(&mut b, r2::tri::ID, id);
    b
}

#[test]
fn a_triangle_solved_by_hand() {
    // v0 = (0,0,0), v1 = (2,0,0), v2 = (0,2,0); the ray crosses z = 0 at (0.5, 1): that point
    // is v0 + 0.25 (v1 - v0) + 0.5 (v2 - v0), so I = 0.25 (weight of v1), J = 0.5 (of v2).
    // The direction has length 2, not 1: t = 3 / 2 = 1.5, not 3.
    let (v0, v1, v2) = ([0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0]);
    let r = ray([0.5, 1.0, -3.0], [0.0, 0.0, 2.0], 10.0, 0);
    let b = tri_bytes([v0, v1, v2, [0.0; 3], [0.0; 3]], 0x40);
    let w0 = triangle_node(&r, &b, 0, 0);
    assert_eq!(f32::from_bits(w0[0]) / f32::from_bits(w0[1]), 1.5);
    assert_eq!((w0[2], w0[3]), (0x40, 1), "mode 0: the id plus the triangle's index, and the hit bit");
    // The normal (v1-v0) x (v2-v0) = +z points along the ray: back face, negative denominator.
    assert!(f32::from_bits(w0[1]) < 0.0);
    // Mode 1, the same triangle stored rotated as hardware triangle 1 = (V1, V3, V2):
    // the application's (v0, v1, v2) sit at V3, V2, V1, so I (v1) is hardware vertex 2 of
    // the triangle and J (v2) is vertex 0.
    let id = r2::tri::remap(1, 2, 0);
    let b1 = tri_bytes([[9.0; 3], v2, v1, v0, [9.0; 3]], id);
    assert_eq!(app_order(id, 1), [3, 2, 1]);
    let w1 = triangle_node(&r, &b1, 1, 1);
    let (t, i, j, front) = tri_hit(w1, 1, 10.0).expect("a hit");
    assert_eq!((t, i, j, front), (1.5, 0.25, 0.5, false));
    // The extent is exclusive of nothing beyond it: at 1.4 the triangle is out of reach.
    let short = ray([0.5, 1.0, -3.0], [0.0, 0.0, 2.0], 1.4, 0);
    let m = triangle_node(&short, &b1, 1, 1);
    assert_eq!(tri_hit(m, 1, 1.4), None);
    assert!(f32::from_bits(m[0]).is_nan(), "a miss's t is NaN, so t <= extent fails");
    // Outside the triangle (x + y > 2).
    let out = ray([1.5, 1.5, -3.0], [0.0, 0.0, 2.0], 10.0, 0);
    assert_eq!(triangle_node(&out, &b, 0, 0)[3], 0);
}

fn node_with_boxes(boxes: [NodeBox; 4], child: [u32; 4]) -> [u8; 128] {
    let mut b = [0u8; 128];
    write_box32(&mut b, &child, &boxes);
    b
}

fn cube(x: f32) -> NodeBox {
    NodeBox { lo: [x, 0.0, 0.0], hi: [x + 1.0, 1.0, 1.0] }
}

#[test]
fn box_results_sorted_and_unsorted() {
    // Along +x through four unit cubes at x = 6, 2, 20 (beyond the extent) and 4.
    let boxes = [cube(6.0), cube(2.0), cube(20.0), cube(4.0)];
    let child = [0x11 << 3 | 5, 0x22 << 3 | 4, 0x33 << 3, 0x44 << 3 | 1];
    let b = node_with_boxes(boxes, child);
    let r = ray([0.0, 0.5, 0.5], [1.0, 0.0, 0.0], 10.0, 0);
    let m = result::MISS;
    assert_eq!(box_node(&r, &b, false, 4, true), [child[1], child[3], child[0], m]);
    assert_eq!(box_node(&r, &b, false, 4, false), [child[0], child[1], m, child[3]]);
    // An empty slot (INVALID pointer, inverted box) is never returned.
    let b =
        node_with_boxes([cube(2.0), EMPTY_BOX, EMPTY_BOX, EMPTY_BOX], [8, ptr::INVALID, ptr::INVALID, ptr::INVALID]);
    assert_eq!(box_node(&r, &b, false, 4, true), [8, m, m, m]);
    // The FP16 form of the same boxes answers the same (the halves are exact here).
    let mut b16 = [0u8; 64];
    let h = box16_of(&boxes, &child).unwrap();
    write_box16(&mut b16, &child, &h);
    assert_eq!(box_node(&r, &b16, true, 4, true), [child[1], child[3], child[0], m]);
}

/// A node region of `slots` slots at a 256-aligned base holding `nodes` at given slots.
fn region(nodes: &[(u32, &[u8])], slots: u64) -> (std::sync::Arc<MemoryMap>, Descriptor) {
    let space = AddressSpace::new();
    let a = space.allocate(slots * 64 + 256).unwrap().base;
    let base = a.next_multiple_of(256);
    let mem = space.snapshot();
    for (s, b) in nodes {
        mem.write(base + *s as u64 * 64, b).unwrap();
    }
    (mem, Descriptor { base, box_grow: 4, box_sort: true, nodes: slots, return_mode: 0 })
}

#[test]
fn intersect_fetches_relative_to_the_base_and_reports_bad_nodes() {
    let tri = tri_bytes([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0; 3], [0.0; 3]], 7);
    let bx = node_with_boxes([cube(2.0), EMPTY_BOX, EMPTY_BOX, EMPTY_BOX], [8, !0, !0, !0]);
    let (mem, desc) = region(&[(1, &tri), (2, &bx)], 4);
    let r = ray([0.5, 1.0, -3.0], [0.0, 0.0, 2.0], 10.0, ptr::make(1, 0));
    let (w, work) = intersect(&mem, desc, &r).unwrap();
    assert_eq!((w[2], w[3]), (7, 1));
    assert_eq!((work.bytes, work.tri_tests, work.box_tests, work.addr), (64, 1, 0, desc.base + 64));
    let rb = ray([0.0, 0.5, 0.5], [1.0, 0.0, 0.0], 10.0, ptr::make(2, ptr::BOX32));
    let (w, work) = intersect(&mem, desc, &rb).unwrap();
    assert_eq!((w[0], work.box_tests, work.bytes), (8, 4, 128));
    // A box32 at slot 3 would need slot 4 too: past the 4 slots.
    let e = intersect(&mem, desc, &ray([0.0; 3], [1.0, 0.0, 0.0], 1.0, ptr::make(3, ptr::BOX32))).unwrap_err();
    assert_eq!(e, IsectFault::OutOfBounds { node: ptr::make(3, 5), nodes: 4 });
    for ty in [ptr::INSTANCE, ptr::AABB] {
        let e = intersect(&mem, desc, &ray([0.0; 3], [1.0, 0.0, 0.0], 1.0, ptr::make(0, ty))).unwrap_err();
        assert_eq!(e, IsectFault::NodeType { node: ptr::make(0, ty) });
        assert!(e.to_string().contains("does not test"), "{e}");
    }
    let bad = r2::Descriptor::decode([0, 0, 0, 0]).unwrap_err();
    assert_eq!(IsectFault::Descriptor(bad.clone()).to_string(), format!("ISECT: {bad}"));
}

#[test]
fn nan_and_infinite_rays_are_inactive() {
    let (mem, desc) = region(&[], 1);
    // Even an out-of-bounds pointer: an inactive lane fetches nothing.
    for r in [
        ray([f32::NAN, 0.0, 0.0], [1.0, 0.0, 0.0], 1.0, ptr::make(9, 5)),
        ray([0.0; 3], [1.0, f32::NAN, 0.0], 1.0, ptr::make(9, 5)),
        ray([0.0; 3], [1.0, 0.0, 0.0], f32::NAN, ptr::make(9, 5)),
        ray([f32::INFINITY, 0.0, 0.0], [1.0, 0.0, 0.0], 1.0, ptr::make(9, 5)),
    ] {
        assert_eq!(intersect(&mem, desc, &r), Ok((ALL_MISS, Work::default())));
    }
    let w = ray([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], 7.0, 42).words();
    assert_eq!(IsectRay::from_words(&w).node, 42);
}

#[test]
fn a_warp_mixes_node_types_in_one_instruction() {
    use super::unit::IsectUnit;
    let tri = tri_bytes([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0; 3], [0.0; 3]], 7);
    let bx = node_with_boxes([cube(2.0), EMPTY_BOX, EMPTY_BOX, EMPTY_BOX], [8, !0, !0, !0]);
    let (mem, desc) = region(&[(1, &tri), (2, &bx)], 4);
    const NT: usize = 4;
    let (dst, dreg, rreg) = (0usize, 4usize, 8usize);
    let mut regs = vec![0u32; 19 * NT];
    let rays = [
        ray([0.5, 1.0, -3.0], [0.0, 0.0, 2.0], 10.0, ptr::make(1, 0)),
        ray([0.0, 0.5, 0.5], [1.0, 0.0, 0.0], 10.0, ptr::make(2, ptr::BOX32)),
        ray([f32::NAN, 0.5, 0.5], [1.0, 0.0, 0.0], 10.0, ptr::make(2, ptr::BOX32)),
        ray([0.0, 0.5, 0.5], [1.0, 0.0, 0.0], 10.0, ptr::make(0, ptr::INSTANCE)),
    ];
    let dw = desc.encode();
    for l in 0..NT {
        for k in 0..4 {
            regs[(dreg + k) * NT + l] = dw[k];
        }
        for (k, w) in rays[l].words().iter().enumerate() {
            regs[(rreg + k) * NT + l] = *w;
        }
    }
    let mut u = IsectUnit::default();
    u.set_timed(true);
    u.track_lane_work(1);
    // Lanes 0..=2: a triangle, a box node and an inactive ray in one instruction.
    u.execute(&mem, &mut regs, NT, 0b0111, 0, (dst, dreg, rreg)).unwrap_or_else(|e| panic!("{}", e.fault));
    let lane = |l: usize| [0, 1, 2, 3].map(|k| regs[(dst + k) * NT + l]);
    assert_eq!(lane(0)[2..], [7, 1]);
    assert_eq!(lane(1), [8, !0, !0, !0]);
    assert_eq!(lane(2), ALL_MISS);
    assert_eq!((u.box_lanes, u.tri_lanes, u.lines.len()), (1, 1, 3), "a triangle line and a box node's two");
    let c = &u.counters;
    assert_eq!(
        (c.lanes, c.inactive_lanes, c.node_fetches, c.node_bytes, c.box_tests, c.tri_tests),
        (3, 1, 2, 192, 4, 1)
    );
    // The heatmap's work per lane: a fetch plus a triangle test, a fetch, nothing.
    assert_eq!(u.take_lane_work(0)[..4], [2, 1, 0, 0]);
    assert_eq!(u.take_lane_work(0)[..4], [0; 4], "taken");
    // Lane 3's instance node is the shader's business: a fault naming the lane.
    let e = u.execute(&mem, &mut regs, NT, 0b1000, 0, (dst, dreg, rreg)).expect_err("a fault");
    assert_eq!((e.lane, e.fault), (3, IsectFault::NodeType { node: ptr::make(0, ptr::INSTANCE) }));
}

/// The shader walk's stack traffic is told apart by its immediate: pushes, pops, bytes.
#[test]
fn stack_traffic_is_counted_by_the_stacks_immediate() {
    use crate::abi::rdna2::query::STACK_IMM;
    let mut c = crate::isect::unit::IsectCounters::default();
    c.private_access(STACK_IMM, true, 32, 4);
    c.private_access(STACK_IMM, false, 5, 4);
    c.private_access(STACK_IMM - 4, true, 32, 4);
    c.private_access(0, false, 32, 16);
    assert_eq!((c.stack_pushes, c.stack_pops, c.stack_bytes), (32, 5, 148));
}
