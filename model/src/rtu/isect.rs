//! The geometry PEs' arithmetic: ray/box slab test, watertight ray/triangle test, the
//! world-to-object ray transform. Everything is f32 like the hardware, except the exact
//! fallback of an edge function that rounds to zero.
//!
//! - Box test: slabs with the ray origin subtracted *before* the multiply by `1/d`, planes
//!   picked by the ray's octant, NaN-ignoring `max`/`min` so `0 * inf` (a ray lying in a
//!   slab plane, parallel to it) never poisons the interval, and the far distance widened by
//!   a few ulps ([`FAR_SCALE`]) so rounding never loses a box the ray grazes.
//! - Triangle test: shear/scale into a ray-aligned frame (Woop, Benthin and Wald 2013,
//!   `kz` = dominant axis), three edge functions whose signs are a function of the edge
//!   alone (the neighbouring triangle computes exactly the negated value), an exact f64
//!   recomputation when one rounds to zero, and a tie rule for edges that are exactly hit
//!   (the ray passes through the edge or a vertex): the owner is decided by a fixed
//!   symbolic perturbation of the ray origin, so a closed mesh reports exactly one hit.

/// A ray prepared for one space (world for a TLAS, object for a BLAS): the slab test's
/// reciprocals and the triangle test's shear.
#[derive(Clone, Copy, Debug, Default)]
pub struct RayPrep {
    pub org: [f32; 3],
    pub dir: [f32; 3],
    /// `1/dir` per axis; `±inf` for a zero component.
    pub inv: [f32; 3],
    /// Per axis: true when the ray runs towards -axis (the near plane is the box max).
    pub neg: [bool; 3],
    /// Shear frame: `kz` is the dominant axis, `(kx, ky, kz)` keeps the winding.
    pub kx: u8,
    pub ky: u8,
    pub kz: u8,
    pub sx: f32,
    pub sy: f32,
    pub sz: f32,
}

/// Widening of a box's far distance: `1 + 2*gamma(3)` (Ize, "Robust BVH Ray Traversal")
/// rounded up, so a box the exact ray touches is never culled by rounding.
pub const FAR_SCALE: f32 = 1.0 + 4.0 * f32::EPSILON;

impl RayPrep {
    #[inline(always)]
    pub fn new(org: [f32; 3], dir: [f32; 3]) -> RayPrep {
        RayPrep::for_boxes(org, dir).sheared()
    }

    /// The ray as the box tests take it (`inv`, `neg`), without the shear frame the triangle
    /// test needs: a TLAS's world ray meets only boxes and instances, so the frame is
    /// computed ([`Self::sheared`]) only for a walk whose top structure holds primitives.
    #[inline(always)]
    pub fn for_boxes(org: [f32; 3], dir: [f32; 3]) -> RayPrep {
        let [dx, dy, dz] = dir;
        let inv = [1.0 / dx, 1.0 / dy, 1.0 / dz];
        let neg = [inv[0] < 0.0, inv[1] < 0.0, inv[2] < 0.0];
        // No shear frame until `sheared` (NaN scales): only box tests may take this ray.
        RayPrep { org, dir, inv, neg, kx: 1, ky: 2, kz: 0, sx: f32::NAN, sy: f32::NAN, sz: f32::NAN }
    }

    /// The ray with its shear frame: `kz` the dominant axis, `(kx, ky, kz)` keeping the winding.
    #[inline(always)]
    pub fn sheared(self) -> RayPrep {
        // Components by name and picked by select, never indexed at run time: indexing would
        // put `dir` in memory, and reading it back at other widths stalls store forwarding.
        let [dx, dy, dz] = self.dir;
        let (ax, ay, az) = (dx.abs(), dy.abs(), dz.abs());
        let kz = if ax >= ay && ax >= az {
            0
        } else if ay >= az {
            1
        } else {
            2
        };
        let pick = |k: usize| match k {
            0 => dx,
            1 => dy,
            _ => dz,
        };
        let mut kx = (kz + 1) % 3;
        let mut ky = (kx + 1) % 3;
        if pick(kz) < 0.0 {
            std::mem::swap(&mut kx, &mut ky);
        }
        let sz = 1.0 / pick(kz);
        RayPrep { kx: kx as u8, ky: ky as u8, kz: kz as u8, sx: pick(kx) * sz, sy: pick(ky) * sz, sz, ..self }
    }

    /// True if the ray has a NaN component or a zero direction: such a ray hits nothing.
    #[inline(always)]
    pub fn is_degenerate(&self) -> bool {
        self.org.iter().chain(self.dir.iter()).any(|v| v.is_nan()) || self.dir.iter().all(|&d| d == 0.0)
    }
}

/// Slab test of one box against `[tmin, tmax]`. Returns the entry distance (clamped to
/// `tmin`) when the ray touches the box, conservatively.
#[inline(always)]
pub fn slab(r: &RayPrep, lo: [f32; 3], hi: [f32; 3], tmin: f32, tmax: f32) -> Option<f32> {
    let (near, hit) = slab_near(r, lo, hi, tmin, tmax);
    hit.then_some(near)
}

/// The slab test's entry distance (clamped to `tmin`; it does not depend on `tmax`, so the
/// walk order of a node's children is the same whatever the current best t) and whether
/// the ray touches the box within `[tmin, tmax]`.
#[inline(always)]
pub fn slab_near(r: &RayPrep, lo: [f32; 3], hi: [f32; 3], tmin: f32, tmax: f32) -> (f32, bool) {
    let mut near = tmin;
    let mut far = tmax;
    for a in 0..3 {
        let (n, f) = if r.neg[a] { (hi[a], lo[a]) } else { (lo[a], hi[a]) };
        // (plane - o) * inv: NaN only when the ray lies in the plane (0 * inf); `widen_near`
        // and `narrow_far` ignore a NaN distance, so such an axis adds no bound, which is
        // the grazing answer.
        let tn = (n - r.org[a]) * r.inv[a];
        let tf = (f - r.org[a]) * r.inv[a];
        near = widen_near(near, tn);
        far = narrow_far(far, tf);
    }
    (near, near <= far * FAR_SCALE)
}

/// `max(near, t)` where a NaN `t` leaves `near` as it is: one compare-and-select (a single
/// vector max), where `f32::max` also has to handle a NaN `near`, which cannot occur here
/// (the interval starts from the ray's tmin, and a walk with a NaN tmin never starts).
#[inline(always)]
fn widen_near(near: f32, t: f32) -> f32 {
    if t > near {
        t
    } else {
        near
    }
}

/// `min(far, t)` where a NaN `t` leaves `far` as it is (see [`widen_near`]).
#[inline(always)]
fn narrow_far(far: f32, t: f32) -> f32 {
    if t < far {
        t
    } else {
        far
    }
}

/// [`slab_near`] for `L` boxes at once (a node's children, axis-major): per lane the same
/// operations in the same order, so the same bits, in a form the compiler turns into vector
/// instructions.
#[inline(always)]
pub fn slab_near_lanes<const L: usize>(
    r: &RayPrep,
    lo: &[[f32; L]; 3],
    hi: &[[f32; L]; 3],
    tmin: f32,
    tmax: f32,
) -> ([f32; L], [bool; L]) {
    let mut near = [tmin; L];
    let mut far = [tmax; L];
    for a in 0..3 {
        let (n, f) = if r.neg[a] { (&hi[a], &lo[a]) } else { (&lo[a], &hi[a]) };
        let (o, inv) = (r.org[a], r.inv[a]);
        for c in 0..L {
            near[c] = widen_near(near[c], (n[c] - o) * inv);
            far[c] = narrow_far(far[c], (f[c] - o) * inv);
        }
    }
    let mut hit = [false; L];
    for c in 0..L {
        hit[c] = near[c] <= far[c] * FAR_SCALE;
    }
    (near, hit)
}

/// A ray as the vector node box test ([`slab_node`]) consumes it: origin and reciprocal
/// splatted per axis, and which of a node's quantised corner bytes (`x0 y0 z0 x1 ... z3`)
/// hold the near plane's coordinate (the box max on an axis the ray runs down).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(16))]
pub struct BoxRay {
    org: [[f32; 4]; 3],
    inv: [[f32; 4]; 3],
    /// Byte `k` (little-endian) is 0xff for the corner bytes whose near plane is the box max
    /// (`RayPrep::neg` of the byte's axis, `k % 3`), 0 elsewhere and from byte 12 on.
    flip: [u32; 4],
}

/// [`BoxRay::flip`] for each octant (`neg[0] | neg[1] << 1 | neg[2] << 2`).
const FLIPS: [[u32; 4]; 8] = {
    let mut t = [[0u32; 4]; 8];
    let mut o = 0;
    while o < 8 {
        let mut k = 0;
        while k < 12 {
            if o >> (k % 3) & 1 != 0 {
                t[o][k / 4] |= 0xff << (8 * (k % 4));
            }
            k += 1;
        }
        o += 1;
    }
    t
};

impl BoxRay {
    #[inline(always)]
    pub fn new(r: &RayPrep) -> BoxRay {
        let [ox, oy, oz] = r.org;
        let [ix, iy, iz] = r.inv;
        BoxRay {
            org: [[ox; 4], [oy; 4], [oz; 4]],
            inv: [[ix; 4], [iy; 4], [iz; 4]],
            flip: FLIPS[r.neg[0] as usize | (r.neg[1] as usize) << 1 | (r.neg[2] as usize) << 2],
        }
    }
}

/// The box PE on an internal node of width `W` (4 or 6) straight from its bytes: exactly
/// `Node::<W>::decode` followed by [`slab_near_lanes`] (the same f32 operations in the same
/// order per child, so the same bits), with the hits as a mask (bit `c` for child `c`,
/// children from `count` on clear). The caller has checked the node's kind and count.
///
/// Children go four at a time (a 6-wide node is a group of four and a group of two whose
/// spare lanes are masked off). In a group the near and far planes are picked per axis on
/// the quantised bytes (a byte blend with [`BoxRay::flip`]) and both are dequantised from
/// one transposition; `widen_near` and `narrow_far` are exactly `maxps(t, near)` and
/// `minps(t, far)` (both return their second operand when either is NaN or both are zeros).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn slab_node<const W: usize>(b: &[u8], r: &BoxRay, count: usize, tmin: f32, tmax: f32) -> ([f32; W], u32) {
    use crate::abi::bvh::{self, node};
    use std::arch::x86_64::*;
    const { assert!(W == 4 || W == 6) };
    // Group g's corner bytes are 12 bytes at `qlo(W) + 12 g` and `qhi(W) + 12 g`; each is
    // read as 16 bytes, so the last read must end inside the record.
    const { assert!(node::qhi(W as u32) + 12 * (W.div_ceil(4) - 1) + 16 <= bvh::node_bytes(W as u32)) };
    const { assert!(node::ORIGIN + 16 <= node::CHILD && node::EXP + 4 <= node::CHILD) };
    const _: () = assert!(bvh::EXP_MIN == -126 && bvh::EXP_MAX == 127);
    let b = &b[..bvh::node_bytes(W as u32)];
    let exps = u32::from_le_bytes([b[node::EXP], b[node::EXP + 1], b[node::EXP + 2], 0]);
    let mut near = [0.0f32; 8];
    let mut mask = 0u32;
    // SAFETY: SSE2 is part of the x86_64 baseline. The unaligned loads read 16 bytes at
    // `qlo(W) + 12 g`, `qhi(W) + 12 g` and `ORIGIN`, all inside the `node_bytes(W)` bytes
    // of `b` (checked above); the aligned loads read `BoxRay` rows (16-byte aligned by
    // `repr(align(16))`, each row 16 bytes at a multiple of 16); the stores write 4 floats
    // at `4 g` of the 8-float local `near`, g < 2.
    unsafe {
        // `bvh::exp2i` of the three exponents: sign-extend to 16 bits, clamp below at
        // EXP_MIN (an i8 never exceeds EXP_MAX), widen, then the float bits of 2^e.
        let e = _mm_cvtsi32_si128(exps as i32);
        let e = _mm_max_epi16(_mm_srai_epi16::<8>(_mm_unpacklo_epi8(e, e)), _mm_set1_epi16(bvh::EXP_MIN as i16));
        let e = _mm_srai_epi32::<16>(_mm_unpacklo_epi16(e, e));
        let scale = _mm_castsi128_ps(_mm_slli_epi32::<23>(_mm_add_epi32(e, _mm_set1_epi32(127))));
        let origin = _mm_loadu_ps(b.as_ptr().add(node::ORIGIN).cast());
        let lo8 = _mm_set1_epi32(0xff);
        let flip = _mm_load_si128(r.flip.as_ptr().cast());
        for g in 0..W.div_ceil(4) {
            let (ql, qh) = (
                _mm_loadu_si128(b.as_ptr().add(node::qlo(W as u32) + 12 * g).cast()),
                _mm_loadu_si128(b.as_ptr().add(node::qhi(W as u32) + 12 * g).cast()),
            );
            let d = _mm_xor_si128(ql, qh);
            let qn = _mm_xor_si128(ql, _mm_and_si128(d, flip));
            let qf = _mm_xor_si128(qn, d);
            // One transposition for both planes: 32-bit lanes `near | far << 8` per corner.
            let z = _mm_setzero_si128();
            let (w0, w1) = (_mm_unpacklo_epi8(qn, qf), _mm_unpackhi_epi8(qn, qf));
            let [x, y, zz] = super::records::corners_by_axis(
                _mm_castsi128_ps(_mm_unpacklo_epi16(w0, z)),
                _mm_castsi128_ps(_mm_unpackhi_epi16(w0, z)),
                _mm_castsi128_ps(_mm_unpacklo_epi16(w1, z)),
            );
            let mut tn = _mm_set1_ps(tmin);
            let mut tf = _mm_set1_ps(tmax);
            macro_rules! axis {
                ($q:expr, $imm:literal, $a:literal) => {{
                    let q = _mm_castps_si128($q);
                    let (o, s) = (_mm_shuffle_ps::<$imm>(origin, origin), _mm_shuffle_ps::<$imm>(scale, scale));
                    let pn = _mm_add_ps(o, _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(q, lo8)), s));
                    let pf = _mm_add_ps(o, _mm_mul_ps(_mm_cvtepi32_ps(_mm_srli_epi32::<8>(q)), s));
                    let (ro, ri) = (_mm_load_ps(r.org[$a].as_ptr()), _mm_load_ps(r.inv[$a].as_ptr()));
                    tn = _mm_max_ps(_mm_mul_ps(_mm_sub_ps(pn, ro), ri), tn);
                    tf = _mm_min_ps(_mm_mul_ps(_mm_sub_ps(pf, ro), ri), tf);
                }};
            }
            axis!(x, 0b00_00_00_00, 0);
            axis!(y, 0b01_01_01_01, 1);
            axis!(zz, 0b10_10_10_10, 2);
            let hit = _mm_cmple_ps(tn, _mm_mul_ps(tf, _mm_set1_ps(FAR_SCALE)));
            _mm_storeu_ps(near.as_mut_ptr().add(4 * g), tn);
            mask |= (_mm_movemask_ps(hit) as u32) << (4 * g);
        }
    }
    (std::array::from_fn(|c| near[c]), mask & ((1u32 << count) - 1))
}

/// Result of a ray/triangle test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriHit {
    pub t: f32,
    /// Barycentric weight of v1.
    pub u: f32,
    /// Barycentric weight of v2.
    pub v: f32,
    /// Sign of the sheared determinant: positive when the triangle's geometric normal
    /// `(v1-v0) x (v2-v0)` points against the ray direction.
    pub det_positive: bool,
}

/// Whether a hit is front-facing before instance flags: Vulkan's rule is that a triangle is
/// front-facing when its vertices appear clockwise seen from the ray origin, in object
/// space (the DXR wording adds "in a left-handed coordinate system"), which is the case
/// when the normal `(v1-v0) x (v2-v0)` points back at the origin (`dot(dir, n) < 0`).
/// lavapipe agrees: `rq_smoke` compares the front-face bit of every ray on both drivers.
#[inline(always)]
pub fn geometric_front(h: &TriHit) -> bool {
    h.det_positive
}

/// Owner of an edge the ray passes exactly through. `d` is the edge's direction in the
/// sheared plane times the triangle's orientation sign. Equivalent to moving the origin by
/// `(eps, -eps^2)`: of two triangles sharing the edge exactly one owns it, and of a fan
/// around a vertex exactly one owns the vertex.
#[inline]
fn owns_edge(dx: f32, dy: f32) -> bool {
    dy > 0.0 || (dy == 0.0 && dx > 0.0)
}

/// Watertight ray/triangle test against `[tmin, tmax]` (both inclusive).
#[inline(always)]
pub fn triangle(r: &RayPrep, v0: [f32; 3], v1: [f32; 3], v2: [f32; 3], tmin: f32, tmax: f32) -> Option<TriHit> {
    // The ray's axis permutation as constants (one well-predicted branch per test), so the
    // shear below reads fixed components instead of indexing a spilled array.
    match (r.kx, r.ky, r.kz) {
        (1, 2, 0) => triangle_k::<1, 2, 0>(r, v0, v1, v2, tmin, tmax),
        (2, 1, 0) => triangle_k::<2, 1, 0>(r, v0, v1, v2, tmin, tmax),
        (2, 0, 1) => triangle_k::<2, 0, 1>(r, v0, v1, v2, tmin, tmax),
        (0, 2, 1) => triangle_k::<0, 2, 1>(r, v0, v1, v2, tmin, tmax),
        (0, 1, 2) => triangle_k::<0, 1, 2>(r, v0, v1, v2, tmin, tmax),
        _ => triangle_k::<1, 0, 2>(r, v0, v1, v2, tmin, tmax),
    }
}

/// [`triangle`] for the permutation `(KX, KY, KZ)` (the ray's `kx, ky, kz`).
#[inline(always)]
fn triangle_k<const KX: usize, const KY: usize, const KZ: usize>(
    r: &RayPrep,
    v0: [f32; 3],
    v1: [f32; 3],
    v2: [f32; 3],
    tmin: f32,
    tmax: f32,
) -> Option<TriHit> {
    debug_assert_eq!((r.kx as usize, r.ky as usize, r.kz as usize), (KX, KY, KZ));
    let (kx, ky, kz) = (KX, KY, KZ);
    let a = [v0[0] - r.org[0], v0[1] - r.org[1], v0[2] - r.org[2]];
    let b = [v1[0] - r.org[0], v1[1] - r.org[1], v1[2] - r.org[2]];
    let c = [v2[0] - r.org[0], v2[1] - r.org[1], v2[2] - r.org[2]];
    let ax = a[kx] - r.sx * a[kz];
    let ay = a[ky] - r.sy * a[kz];
    let bx = b[kx] - r.sx * b[kz];
    let by = b[ky] - r.sy * b[kz];
    let cx = c[kx] - r.sx * c[kz];
    let cy = c[ky] - r.sy * c[kz];
    // Edge functions: U for v1->v2, V for v2->v0, W for v0->v1. Each is `q x p` of its two
    // endpoints, so the neighbour sharing the edge computes exactly the negated value.
    let mut u = cx * by - cy * bx;
    let mut v = ax * cy - ay * cx;
    let mut w = bx * ay - by * ax;
    // Non-short-circuit `|` and `&`: one (unpredictable) branch, not up to six.
    if ((u < 0.0) | (v < 0.0) | (w < 0.0)) & ((u > 0.0) | (v > 0.0) | (w > 0.0)) {
        return None;
    }
    if u == 0.0 || v == 0.0 || w == 0.0 {
        // Exact signs for edges that rounded to zero; then the tie rule for exact zeros.
        let exact = |px: f32, py: f32, qx: f32, qy: f32| qx as f64 * py as f64 - qy as f64 * px as f64;
        let mut e = [u as f64, v as f64, w as f64];
        if u == 0.0 {
            e[0] = exact(bx, by, cx, cy);
        }
        if v == 0.0 {
            e[1] = exact(cx, cy, ax, ay);
        }
        if w == 0.0 {
            e[2] = exact(ax, ay, bx, by);
        }
        let pos = e.iter().any(|&x| x > 0.0);
        let negs = e.iter().any(|&x| x < 0.0);
        if pos == negs {
            return None; // mixed signs, or all zero (degenerate)
        }
        let s = if pos { 1.0f32 } else { -1.0 };
        let edges = [(bx, by, cx, cy), (cx, cy, ax, ay), (ax, ay, bx, by)];
        for (i, &(px, py, qx, qy)) in edges.iter().enumerate() {
            if e[i] == 0.0 && !owns_edge(s * (qx - px), s * (qy - py)) {
                return None;
            }
        }
        u = e[0] as f32;
        v = e[1] as f32;
        w = e[2] as f32;
    }
    let det = u + v + w;
    if det == 0.0 {
        return None;
    }
    let az = r.sz * a[kz];
    let bz = r.sz * b[kz];
    let cz = r.sz * c[kz];
    let tt = u * az + v * bz + w * cz;
    let rcp = 1.0 / det;
    let t = tt * rcp;
    if !(t >= tmin && t <= tmax) {
        return None;
    }
    Some(TriHit { t, u: v * rcp, v: w * rcp, det_positive: det > 0.0 })
}

/// The lane-parallel part of [`triangle`] for up to four triangles of a leaf (lane `j` is
/// the leaf's triangle `i + j`): per lane exactly the scalar test's f32 operations in its
/// order, up to the hit distance and barycentrics. What stays per triangle, in stored order,
/// is the comparison with the current best t (which shrinks as opaque hits commit) and the
/// exact fallback of an edge function that rounded to zero.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tri4 {
    pub t: [f32; 4],
    pub u: [f32; 4],
    pub v: [f32; 4],
    pub det: [f32; 4],
    /// Lanes the scalar test finds a hit in `[tmin, tmax]` on (the `tmax` given), with `t`,
    /// `u`, `v` and `det > 0` the hit's fields; no edge function rounded to zero.
    pub hit: u32,
    /// Lanes the scalar test takes its exact fallback on (no mixed signs, an edge function
    /// is zero): the caller asks [`triangle`].
    pub exact: u32,
}

impl Tri4 {
    /// Lane `j` as the scalar test's hit (meaningful for the lanes of `hit`).
    #[inline(always)]
    pub fn lane(&self, j: usize) -> TriHit {
        TriHit { t: self.t[j], u: self.u[j], v: self.v[j], det_positive: self.det[j] > 0.0 }
    }
}

/// [`Tri4`] of the triangles `first..first + n` (`1 <= n <= 4`) of the triangle leaf `leaf`
/// (its bytes, `abi::bvh::tri`) against `[tmin, tmax]`. `bx` is `r` as [`BoxRay::new`]
/// makes it. Lanes from `n` on repeat triangle `first + n - 1` and are not reported.
#[inline(always)]
pub fn triangle4(r: &RayPrep, bx: &BoxRay, leaf: &[u8], first: usize, n: usize, tmin: f32, tmax: f32) -> Tri4 {
    use crate::rtu::records::triangle_record;
    debug_assert!((1..=4).contains(&n));
    // One bounds check for the four records: the last lane's is the farthest.
    let offs: [usize; 4] = std::array::from_fn(|j| triangle_record(first + j.min(n - 1)));
    let recs: &[u8] = &leaf[..offs[3] + 40];
    #[cfg(target_arch = "x86_64")]
    {
        let m = match (r.kx, r.ky, r.kz) {
            (1, 2, 0) => triangle4_k::<1, 2, 0>(r, bx, recs, offs, tmin, tmax),
            (2, 1, 0) => triangle4_k::<2, 1, 0>(r, bx, recs, offs, tmin, tmax),
            (2, 0, 1) => triangle4_k::<2, 0, 1>(r, bx, recs, offs, tmin, tmax),
            (0, 2, 1) => triangle4_k::<0, 2, 1>(r, bx, recs, offs, tmin, tmax),
            (0, 1, 2) => triangle4_k::<0, 1, 2>(r, bx, recs, offs, tmin, tmax),
            _ => triangle4_k::<1, 0, 2>(r, bx, recs, offs, tmin, tmax),
        };
        let keep = (1u32 << n) - 1;
        Tri4 { hit: m.hit & keep, exact: m.exact & keep, ..m }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = bx;
        triangle4_scalar(r, recs, offs, n, tmin, tmax)
    }
}

/// [`triangle4`] from [`triangle`] lane by lane (no lane left to the exact fallback).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn triangle4_scalar(r: &RayPrep, recs: &[u8], offs: [usize; 4], n: usize, tmin: f32, tmax: f32) -> Tri4 {
    let mut out = Tri4::default();
    for (j, &o) in offs.iter().enumerate().take(n) {
        let f = |k: usize| {
            f32::from_le_bytes([recs[o + 4 * k], recs[o + 4 * k + 1], recs[o + 4 * k + 2], recs[o + 4 * k + 3]])
        };
        let (v0, v1, v2) = ([f(0), f(1), f(2)], [f(3), f(4), f(5)], [f(6), f(7), f(8)]);
        if let Some(h) = triangle(r, v0, v1, v2, tmin, tmax) {
            (out.t[j], out.u[j], out.v[j]) = (h.t, h.u, h.v);
            out.det[j] = if h.det_positive { 1.0 } else { -1.0 };
            out.hit |= 1 << j;
        }
    }
    out
}

/// [`triangle4`] for the permutation `(KX, KY, KZ)`, all four lanes.
///
/// The records (at `offs` in `recs`, increasing, the last one's 40 bytes inside `recs`) are
/// transposed into one vector per vertex and axis (each record read as three 16-byte loads
/// at `v0`, `v1`, `v2`, all inside its 40 bytes); then the
/// scalar test's operations, one vector operation each, in its order and with its operand
/// order (no fused multiply-add, nothing reassociated). `divps` rounds like `divss`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn triangle4_k<const KX: usize, const KY: usize, const KZ: usize>(
    r: &RayPrep,
    bx: &BoxRay,
    recs: &[u8],
    offs: [usize; 4],
    tmin: f32,
    tmax: f32,
) -> Tri4 {
    use std::arch::x86_64::*;
    debug_assert!(offs[0] <= offs[1] && offs[1] <= offs[2] && offs[2] <= offs[3] && offs[3] + 40 <= recs.len());
    debug_assert_eq!((r.kx as usize, r.ky as usize, r.kz as usize), (KX, KY, KZ));
    let mut out = Tri4::default();
    // SAFETY: SSE2 is part of the x86_64 baseline. Each unaligned load reads 16 bytes at
    // offset 0, 12 or 24 of a 40-byte record at `offs[j] <= offs[3]`, and `recs` holds
    // `offs[3] + 40` bytes (the caller slices it so), so inside `recs`; the aligned loads read
    // `BoxRay::org` rows (16-byte aligned, see `BoxRay`); the stores write 4-float fields
    // of the local `out`.
    unsafe {
        // Vertex at `off` of the four records, one vector per axis, minus the origin (a
        // macro: as a closure it was not inlined).
        macro_rules! vertex {
            ($off:literal) => {{
                let ld = |j: usize| _mm_loadu_ps(recs.as_ptr().add(offs[j] + $off).cast());
                let (r0, r1, r2, r3) = (ld(0), ld(1), ld(2), ld(3));
                let (t0, t1) = (_mm_unpacklo_ps(r0, r1), _mm_unpacklo_ps(r2, r3)); // x0 x1 y0 y1 | x2 x3 y2 y3
                let (t2, t3) = (_mm_unpackhi_ps(r0, r1), _mm_unpackhi_ps(r2, r3)); // z0 z1 .. | z2 z3 ..
                [
                    _mm_sub_ps(_mm_movelh_ps(t0, t1), _mm_load_ps(bx.org[0].as_ptr())),
                    _mm_sub_ps(_mm_movehl_ps(t1, t0), _mm_load_ps(bx.org[1].as_ptr())),
                    _mm_sub_ps(_mm_movelh_ps(t2, t3), _mm_load_ps(bx.org[2].as_ptr())),
                ]
            }};
        }
        let (a, b, c) = (vertex!(0), vertex!(12), vertex!(24));
        let (sx, sy, sz) = (_mm_set1_ps(r.sx), _mm_set1_ps(r.sy), _mm_set1_ps(r.sz));
        let ax = _mm_sub_ps(a[KX], _mm_mul_ps(sx, a[KZ]));
        let ay = _mm_sub_ps(a[KY], _mm_mul_ps(sy, a[KZ]));
        let bx_ = _mm_sub_ps(b[KX], _mm_mul_ps(sx, b[KZ]));
        let by = _mm_sub_ps(b[KY], _mm_mul_ps(sy, b[KZ]));
        let cx = _mm_sub_ps(c[KX], _mm_mul_ps(sx, c[KZ]));
        let cy = _mm_sub_ps(c[KY], _mm_mul_ps(sy, c[KZ]));
        let u = _mm_sub_ps(_mm_mul_ps(cx, by), _mm_mul_ps(cy, bx_));
        let v = _mm_sub_ps(_mm_mul_ps(ax, cy), _mm_mul_ps(ay, cx));
        let w = _mm_sub_ps(_mm_mul_ps(bx_, ay), _mm_mul_ps(by, ax));
        let z = _mm_setzero_ps();
        let neg = _mm_or_ps(_mm_or_ps(_mm_cmplt_ps(u, z), _mm_cmplt_ps(v, z)), _mm_cmplt_ps(w, z));
        let pos = _mm_or_ps(_mm_or_ps(_mm_cmpgt_ps(u, z), _mm_cmpgt_ps(v, z)), _mm_cmpgt_ps(w, z));
        let mixed = _mm_and_ps(neg, pos);
        let zero = _mm_or_ps(_mm_or_ps(_mm_cmpeq_ps(u, z), _mm_cmpeq_ps(v, z)), _mm_cmpeq_ps(w, z));
        let det = _mm_add_ps(_mm_add_ps(u, v), w);
        let az = _mm_mul_ps(sz, a[KZ]);
        let bz = _mm_mul_ps(sz, b[KZ]);
        let cz = _mm_mul_ps(sz, c[KZ]);
        let tt = _mm_add_ps(_mm_add_ps(_mm_mul_ps(u, az), _mm_mul_ps(v, bz)), _mm_mul_ps(w, cz));
        let rcp = _mm_div_ps(_mm_set1_ps(1.0), det);
        let t = _mm_mul_ps(tt, rcp);
        // `det == 0` and `!(t >= tmin && t <= tmax)` refuse; a NaN det makes t NaN.
        let inside = _mm_and_ps(_mm_cmpge_ps(t, _mm_set1_ps(tmin)), _mm_cmple_ps(t, _mm_set1_ps(tmax)));
        let ok = _mm_and_ps(_mm_cmpneq_ps(det, z), inside);
        out.hit = _mm_movemask_ps(_mm_andnot_ps(_mm_or_ps(mixed, zero), ok)) as u32;
        out.exact = _mm_movemask_ps(_mm_andnot_ps(mixed, zero)) as u32;
        _mm_storeu_ps(out.t.as_mut_ptr(), t);
        _mm_storeu_ps(out.u.as_mut_ptr(), _mm_mul_ps(v, rcp));
        _mm_storeu_ps(out.v.as_mut_ptr(), _mm_mul_ps(w, rcp));
        _mm_storeu_ps(out.det.as_mut_ptr(), det);
    }
    out
}

/// Applies a 3x4 row-major affine to a point.
#[inline(always)]
pub fn xform_point(m: &[f32; 12], p: [f32; 3]) -> [f32; 3] {
    [
        m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + m[3],
        m[4] * p[0] + m[5] * p[1] + m[6] * p[2] + m[7],
        m[8] * p[0] + m[9] * p[1] + m[10] * p[2] + m[11],
    ]
}

/// Applies the linear part of a 3x4 row-major affine to a vector (no renormalisation, so a
/// hit distance is the same in both spaces).
#[inline(always)]
pub fn xform_vector(m: &[f32; 12], d: [f32; 3]) -> [f32; 3] {
    [
        m[0] * d[0] + m[1] * d[1] + m[2] * d[2],
        m[4] * d[0] + m[5] * d[1] + m[6] * d[2],
        m[8] * d[0] + m[9] * d[1] + m[10] * d[2],
    ]
}

/// The 3x4 identity.
pub const IDENTITY_3X4: [f32; 12] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane-parallel slab test gives exactly the scalar test's bits, including rays in a
    /// slab plane (0 * inf), zero and negative directions, empty and infinite boxes.
    #[test]
    fn slab_lanes_are_bit_identical_to_the_scalar_test() {
        let mut seed = 0x9e37_79b9_u32;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        let specials = [0.0f32, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, 0.5, 2.0];
        let val = |rnd: &mut dyn FnMut() -> u32| {
            let k = rnd();
            if k.is_multiple_of(4) {
                specials[(k >> 8) as usize % specials.len()]
            } else {
                (k >> 8) as f32 / (1 << 23) as f32 * 4.0 - 2.0
            }
        };
        for _ in 0..20_000 {
            let org = [val(&mut rnd), val(&mut rnd), val(&mut rnd)];
            let dir = [val(&mut rnd), val(&mut rnd), val(&mut rnd)];
            let r = RayPrep::new(org, dir);
            let mut lo = [[0.0f32; 8]; 3];
            let mut hi = [[0.0f32; 8]; 3];
            for a in 0..3 {
                for c in 0..8 {
                    let (x, y) = (val(&mut rnd), val(&mut rnd));
                    lo[a][c] = x.min(y);
                    hi[a][c] = if c == 7 { f32::NEG_INFINITY } else { x.max(y) };
                }
            }
            let (tmin, tmax) = (val(&mut rnd).abs() * 0.1, val(&mut rnd).abs() * 10.0);
            let (near, hit) = slab_near_lanes(&r, &lo, &hi, tmin, tmax);
            for c in 0..8 {
                let (n1, h1) =
                    slab_near(&r, std::array::from_fn(|a| lo[a][c]), std::array::from_fn(|a| hi[a][c]), tmin, tmax);
                assert_eq!((near[c].to_bits(), hit[c]), (n1.to_bits(), h1), "org {org:?} dir {dir:?} lane {c}");
            }
        }
    }

    /// The vector node test of both widths gives exactly the bits of the scalar definition
    /// (`Node::<W>::decode` then `slab_near_lanes`) on random nodes and rays, including rays
    /// lying in a slab plane (0 * inf), ±0 and ±inf directions, infinite and NaN intervals
    /// and extreme exponents.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn node_test_is_bit_identical_to_the_scalar_definition() {
        node_test_matches::<4>(0x5eed_4b0c);
        node_test_matches::<6>(0x5eed_6b0c);
    }

    #[cfg(target_arch = "x86_64")]
    fn node_test_matches<const W: usize>(seed: u64) {
        use crate::abi::bvh::{self, node};
        use crate::rtu::records::Node;
        let mut rng = crate::rtu::reference::Rng::new(seed);
        let mut next = move || rng.next_u64();
        let specials = [0.0f32, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, 0.5, f32::MIN_POSITIVE, 1e-40];
        // A ray in a box's plane that still hits it (the NaN distance is ignored).
        let hit_lane = |r: &RayPrep, n: &Node<W>, _a: usize, c: usize, tmin: f32, tmax: f32| {
            slab(r, std::array::from_fn(|a| n.lo[a][c]), std::array::from_fn(|a| n.hi[a][c]), tmin, tmax).is_some()
        };
        let (mut hits, mut in_plane) = (0, 0);
        for round in 0..200_000 {
            let mut b = vec![0u8; bvh::node_bytes(W as u32)];
            for x in b.iter_mut() {
                *x = next() as u8;
            }
            if round % 4 != 0 {
                // Mostly proper boxes (lo <= hi per axis); now and then inverted ones.
                for k in 0..3 * W {
                    let (l, h) = (b[node::qlo(W as u32) + k], b[node::qhi(W as u32) + k]);
                    b[node::qlo(W as u32) + k] = l.min(h);
                    b[node::qhi(W as u32) + k] = l.max(h);
                }
            }
            b[node::KIND] = bvh::NODE_INTERNAL;
            let count = 1 + round % W;
            b[node::COUNT] = count as u8;
            let origin: [f32; 3] = std::array::from_fn(|_| ((next() % 2001) as f32 - 1000.0) * 0.25);
            for a in 0..3 {
                b[node::ORIGIN + 4 * a..node::ORIGIN + 4 * a + 4].copy_from_slice(&origin[a].to_le_bytes());
                b[node::EXP + a] = match next() % 8 {
                    0 => [-128i8, -127, -126, 127, 126, 100][(next() % 6) as usize] as u8,
                    _ => ((next() % 12) as i32 - 6) as i8 as u8,
                };
            }
            let Ok(n) = Node::<W>::decode(&b) else { panic!("valid node refused") };
            // Origins on a box plane now and then (the ray lies in it when its direction
            // has a zero there).
            let mut val = |a: usize, dir: bool| {
                let k = next();
                match k % 8 {
                    0 => specials[(k >> 8) as usize % specials.len()],
                    1 if !dir => {
                        let c = (k >> 8) as usize % W;
                        if k >> 16 & 1 == 0 {
                            n.lo[a][c]
                        } else {
                            n.hi[a][c]
                        }
                    }
                    _ => ((k >> 8) % 100_001) as f32 * 0.01 - 500.0,
                }
            };
            let org = [val(0, false), val(1, false), val(2, false)];
            let mut dir = [val(0, true), val(1, true), val(2, true)];
            if round % 2 == 0 {
                // Aimed at a child's box centre, some axes kept as drawn (zeros, infinities).
                let c = round / 2 % count;
                for a in 0..3 {
                    if next() % 4 != 0 {
                        dir[a] = (n.lo[a][c] + n.hi[a][c]) * 0.5 - org[a];
                    }
                }
            }
            let r = RayPrep::new(org, dir);
            let (tmin, tmax) = match next() % 6 {
                0 => (0.0, f32::INFINITY),
                1 => (-0.0, 0.0),
                2 => (0.0, f32::NAN),
                3 => ((next() % 100) as f32 * 0.01, (next() % 300) as f32 * 0.01),
                _ => ((next() % 100) as f32 * 0.01, (next() % 100_000) as f32 * 0.1),
            };
            let grazing = (0..3).any(|a| {
                dir[a] == 0.0 && (0..count).any(|c| hit_lane(&r, &n, a, c, tmin, tmax) && org[a] == n.lo[a][c])
            });
            in_plane += grazing as u32;
            let (near, hit) = slab_near_lanes(&r, &n.lo, &n.hi, tmin, tmax);
            let (vnear, mask) = slab_node::<W>(&b, &BoxRay::new(&r), count, tmin, tmax);
            for c in 0..W {
                let want = c < count && hit[c];
                assert_eq!(mask >> c & 1 != 0, want, "width {W} round {round} lane {c} org {org:?} dir {dir:?}");
                if c < count {
                    assert_eq!(
                        vnear[c].to_bits(),
                        near[c].to_bits(),
                        "width {W} round {round} lane {c} org {org:?} dir {dir:?}"
                    );
                }
                hits += want as u32;
            }
        }
        assert!(hits > 20_000 && in_plane > 100, "width {W}: {hits} hits, {in_plane} grazing");
    }

    /// The 4-lane triangle test reports exactly what the scalar test does, bit for bit, on
    /// random triangles and rays and on the special cases: ±0, ±inf and NaN coordinates,
    /// rays in a triangle's plane, hits exactly on edges and vertices (a grid mesh hit by
    /// axis-parallel and diagonal rays through grid points), degenerate triangles. Lanes the
    /// scalar test sends to its exact fallback are exactly the `exact` lanes.
    #[test]
    fn triangle4_is_bit_identical_to_the_scalar_test() {
        let mut rng = crate::rtu::reference::Rng::new(0x7a1_4e57);
        let mut next = move || rng.next_u64();
        let specials = [0.0f32, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 0.5, 1e-30, 3.0];
        let record = |v: [[f32; 3]; 3], prim: u32| {
            let mut rec = [0u8; 40];
            for (k, x) in v.iter().flatten().enumerate() {
                rec[4 * k..4 * k + 4].copy_from_slice(&x.to_le_bytes());
            }
            rec[36..].copy_from_slice(&prim.to_le_bytes());
            rec
        };
        // The scalar test's edge functions (its exact fallback runs when one is zero and
        // the signs are not mixed).
        let edges = |r: &RayPrep, v: &[[f32; 3]; 3]| {
            let (kx, ky, kz) = (r.kx as usize, r.ky as usize, r.kz as usize);
            let p: Vec<[f32; 2]> = v
                .iter()
                .map(|q| {
                    let d = [q[0] - r.org[0], q[1] - r.org[1], q[2] - r.org[2]];
                    [d[kx] - r.sx * d[kz], d[ky] - r.sy * d[kz]]
                })
                .collect();
            let cross = |p: [f32; 2], q: [f32; 2]| q[0] * p[1] - q[1] * p[0];
            [cross(p[1], p[2]), cross(p[2], p[0]), cross(p[0], p[1])]
        };
        let (mut hits, mut exact, mut on_edges) = (0, 0, 0);
        for round in 0..200_000u32 {
            let mode = round % 4;
            let val = |k: u64, grid: bool| {
                if grid {
                    ((k >> 8) % 5) as f32 - 2.0
                } else if k.is_multiple_of(16) {
                    specials[(k >> 8) as usize % specials.len()]
                } else {
                    ((k >> 8) % 200_001) as f32 * 0.0001 - 10.0
                }
            };
            let grid = mode == 0;
            let mut tris = [[[0.0f32; 3]; 3]; 4];
            for t in tris.iter_mut() {
                for p in t.iter_mut() {
                    for x in p.iter_mut() {
                        *x = val(next(), grid);
                    }
                }
                if grid {
                    // A grid mesh's triangles in the plane z = const (shared edges and vertices).
                    let z = t[0][2];
                    for p in t.iter_mut() {
                        p[2] = z;
                    }
                }
                if next() % 16 == 0 {
                    t[2] = t[(next() % 2) as usize]; // degenerate
                }
            }
            let (org, dir) = match mode {
                // Through a grid point (a vertex or an edge of grid triangles).
                0 => {
                    let tgt = [val(next(), true) * 0.5, val(next(), true) * 0.5, val(next(), true)];
                    let dir = match next() % 3 {
                        0 => [0.0, 0.0, if next() % 2 == 0 { 1.0 } else { -1.0 }],
                        1 => [1.0, -1.0, 2.0],
                        _ => [-0.0, 0.5, -3.0],
                    };
                    ([tgt[0] - 2.0 * dir[0], tgt[1] - 2.0 * dir[1], tgt[2] - 2.0 * dir[2]], dir)
                }
                // In the plane of triangle 0.
                1 => {
                    let t = tris[0];
                    let dir = [t[1][0] - t[0][0], t[1][1] - t[0][1], t[1][2] - t[0][2]];
                    (t[2], dir)
                }
                // Aimed at a random point of a random triangle.
                2 => {
                    let t = tris[(next() % 4) as usize];
                    let (a, b) = ((next() % 1001) as f32 * 0.001, (next() % 1001) as f32 * 0.001);
                    let (a, b) = if a + b > 1.0 { (1.0 - a, 1.0 - b) } else { (a, b) };
                    let p: [f32; 3] =
                        std::array::from_fn(|k| t[0][k] + a * (t[1][k] - t[0][k]) + b * (t[2][k] - t[0][k]));
                    let org = [val(next(), false), val(next(), false), val(next(), false)];
                    (org, [p[0] - org[0], p[1] - org[1], p[2] - org[2]])
                }
                _ => (
                    [val(next(), false), val(next(), false), val(next(), false)],
                    [val(next(), false), val(next(), false), val(next(), false)],
                ),
            };
            let r = RayPrep::new(org, dir);
            let bxr = BoxRay::new(&r);
            let (tmin, tmax) = match next() % 4 {
                0 => (0.0, f32::INFINITY),
                1 => (-0.0, 0.0),
                2 => ((next() % 100) as f32 * 0.01, (next() % 1000) as f32 * 0.01),
                _ => (0.0, 2.0),
            };
            // A leaf: its header, a triangle before the four (so they start at index 1), the
            // four and its padding.
            let mut leaf = vec![0u8; crate::abi::bvh::tri::bytes(5)];
            for (j, &t) in tris.iter().enumerate() {
                let o = crate::rtu::records::triangle_record(j + 1);
                leaf[o..o + 40].copy_from_slice(&record(t, j as u32));
            }
            let n = 1 + (next() % 4) as usize;
            let m = triangle4(&r, &bxr, &leaf, 1, n, tmin, tmax);
            assert_eq!((m.hit | m.exact) >> n, 0);
            for (j, t) in tris.iter().enumerate().take(n) {
                let want = triangle(&r, t[0], t[1], t[2], tmin, tmax);
                let e = edges(&r, t);
                let mixed = e.iter().any(|&x| x < 0.0) && e.iter().any(|&x| x > 0.0);
                let fallback = !mixed && e.contains(&0.0);
                assert_eq!(m.exact >> j & 1 != 0, fallback, "round {round} lane {j} {t:?} org {org:?} dir {dir:?}");
                on_edges += fallback as u32;
                if fallback {
                    exact += want.is_some() as u32;
                    assert_eq!(m.hit >> j & 1, 0);
                    continue;
                }
                let got = (m.hit >> j & 1 != 0).then(|| m.lane(j));
                let bits = |h: Option<TriHit>| h.map(|h| (h.t.to_bits(), h.u.to_bits(), h.v.to_bits(), h.det_positive));
                assert_eq!(bits(got), bits(want), "round {round} lane {j} {t:?} org {org:?} dir {dir:?}");
                hits += want.is_some() as u32;
            }
        }
        assert!(
            hits > 20_000 && on_edges > 1000 && exact > 100,
            "{hits} hits, {on_edges} exact lanes, {exact} exact hits"
        );
    }

    /// Seed 004 §10.1: O = 0, D = (0,0,2), box (-1,-1,2)..(1,1,4), interval [0,10] -> [1,2].
    #[test]
    fn slab_fixture_unnormalised_direction() {
        let r = RayPrep::new([0.0; 3], [0.0, 0.0, 2.0]);
        let near = slab(&r, [-1.0, -1.0, 2.0], [1.0, 1.0, 4.0], 0.0, 10.0).unwrap();
        assert_eq!(near, 1.0);
        // Far end is 2: a tmax below 1 misses, one at exactly 1 touches.
        assert!(slab(&r, [-1.0, -1.0, 2.0], [1.0, 1.0, 4.0], 0.0, 0.99).is_none());
        assert_eq!(slab(&r, [-1.0, -1.0, 2.0], [1.0, 1.0, 4.0], 0.0, 1.0), Some(1.0));
        assert!(slab(&r, [-1.0, -1.0, 2.0], [1.0, 1.0, 4.0], 2.001, 10.0).is_none());
    }

    #[test]
    fn slab_zero_direction_components() {
        // O.x = 2 with D.x = 0 misses the x slab.
        let r = RayPrep::new([2.0, 0.0, 0.0], [0.0, 0.0, 2.0]);
        assert!(slab(&r, [-1.0, -1.0, 2.0], [1.0, 1.0, 4.0], 0.0, 10.0).is_none());
        // Origin exactly on the x = 1 plane, parallel to it: grazing counts (no NaN).
        let r = RayPrep::new([1.0, 0.0, 0.0], [0.0, 0.0, 2.0]);
        assert_eq!(slab(&r, [-1.0, -1.0, 2.0], [1.0, 1.0, 4.0], 0.0, 10.0), Some(1.0));
        let r = RayPrep::new([-1.0, -1.0, 0.0], [0.0, -0.0, 1.0]);
        assert_eq!(slab(&r, [-1.0, -1.0, 2.0], [1.0, 1.0, 4.0], 0.0, 10.0), Some(2.0));
        // Flat box (zero thickness in x) with the ray in its plane.
        let r = RayPrep::new([0.5, 0.0, 0.0], [0.0, 0.0, 1.0]);
        assert!(slab(&r, [0.5, -1.0, 2.0], [0.5, 1.0, 4.0], 0.0, 10.0).is_some());
        // Axis-aligned ray along -y.
        let r = RayPrep::new([0.0, 10.0, 3.0], [0.0, -1.0, 0.0]);
        assert_eq!(slab(&r, [-1.0, -1.0, 2.0], [1.0, 1.0, 4.0], 0.0, 100.0), Some(9.0));
    }

    #[test]
    fn slab_origin_inside_with_zero_interval() {
        let r = RayPrep::new([0.0, 0.0, 3.0], [0.0, 0.0, 1.0]);
        assert_eq!(slab(&r, [-1.0, -1.0, 2.0], [1.0, 1.0, 4.0], 0.0, 0.0), Some(0.0));
        // Clipped to the ray interval: entry is behind, so near = tmin.
        assert_eq!(slab(&r, [-1.0, -1.0, 2.0], [1.0, 1.0, 4.0], 0.5, 10.0), Some(0.5));
    }

    /// Seed 004 §10.2: A=(0,0,0) B=(1,0,0) C=(0,1,0), O=(.25,.25,1), D=(0,0,-1).
    #[test]
    fn triangle_fixture_by_hand() {
        let (a, b, c) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        let r = RayPrep::new([0.25, 0.25, 1.0], [0.0, 0.0, -1.0]);
        let h = triangle(&r, a, b, c, 0.0, f32::INFINITY).unwrap();
        assert_eq!((h.t, h.u, h.v), (1.0, 0.25, 0.25));
        // Normal +z points back at the origin.
        assert!(geometric_front(&h));
        let r = RayPrep::new([0.75, 0.75, 1.0], [0.0, 0.0, -1.0]);
        assert!(triangle(&r, a, b, c, 0.0, f32::INFINITY).is_none(), "u + v > 1 misses");
        // From below, the other face.
        let r = RayPrep::new([0.25, 0.25, -1.0], [0.0, 0.0, 1.0]);
        let h = triangle(&r, a, b, c, 0.0, f32::INFINITY).unwrap();
        assert_eq!((h.t, h.u, h.v), (1.0, 0.25, 0.25));
        assert!(!geometric_front(&h));
        // Non-unit direction: t scales.
        let r = RayPrep::new([0.25, 0.25, 1.0], [0.0, 0.0, -4.0]);
        assert_eq!(triangle(&r, a, b, c, 0.0, f32::INFINITY).unwrap().t, 0.25);
        // Interval ends are inclusive.
        let r = RayPrep::new([0.25, 0.25, 1.0], [0.0, 0.0, -1.0]);
        assert!(triangle(&r, a, b, c, 1.0, 1.0).is_some());
        assert!(triangle(&r, a, b, c, 0.0, 0.999).is_none());
    }

    /// Seed 004 §10.3: doubling object z gives O.z = 2, D.z = -2; t stays 1.
    #[test]
    fn t_preserved_under_scale() {
        let w2o = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0];
        let o = xform_point(&w2o, [0.25, 0.25, 1.0]);
        let d = xform_vector(&w2o, [0.0, 0.0, -1.0]);
        assert_eq!((o[2], d[2]), (2.0, -2.0));
        let r = RayPrep::new(o, d);
        let h = triangle(&r, [0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], 0.0, f32::INFINITY).unwrap();
        assert_eq!(h.t, 1.0);
    }

    /// The sheared determinant's sign agrees with the geometric normal for every direction.
    #[test]
    fn det_sign_matches_geometric_normal() {
        let mut s = 0x9e3779b97f4a7c15u64;
        let mut rnd = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        };
        let mut checked = 0;
        for _ in 0..20000 {
            let v0 = [rnd(), rnd(), rnd()];
            let v1 = [rnd(), rnd(), rnd()];
            let v2 = [rnd(), rnd(), rnd()];
            let p = {
                let (a, b) = (rnd().abs(), rnd().abs());
                let (a, b) = if a + b > 1.0 { (1.0 - a, 1.0 - b) } else { (a, b) };
                [0, 1, 2].map(|k| v0[k] + a * (v1[k] - v0[k]) + b * (v2[k] - v0[k]))
            };
            let d = [rnd(), rnd(), rnd()];
            let o = [p[0] - 3.0 * d[0], p[1] - 3.0 * d[1], p[2] - 3.0 * d[2]];
            let e1 = [v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]];
            let e2 = [v2[0] - v0[0], v2[1] - v0[1], v2[2] - v0[2]];
            let n = [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]];
            let nd = n[0] * d[0] + n[1] * d[1] + n[2] * d[2];
            if nd.abs() < 1e-3 {
                continue;
            }
            if let Some(h) = triangle(&RayPrep::new(o, d), v0, v1, v2, 0.0, f32::INFINITY) {
                assert_eq!(h.det_positive, nd < 0.0);
                checked += 1;
            }
        }
        assert!(checked > 10000, "{checked}");
    }

    /// Rays through shared edges and vertices of a fan hit exactly one triangle.
    #[test]
    fn shared_vertex_and_edges_single_hit() {
        // Eight triangles around the origin, consistently wound, plus mixed winding.
        let ring: Vec<[f32; 3]> = (0..8)
            .map(|i| {
                let a = i as f32 * std::f32::consts::FRAC_PI_4;
                [a.cos(), a.sin(), 0.0]
            })
            .collect();
        for flip_odd in [false, true] {
            let tris: Vec<[[f32; 3]; 3]> = (0..8)
                .map(|i| {
                    let (p, q) = (ring[i], ring[(i + 1) % 8]);
                    if flip_odd && i % 2 == 1 {
                        [[0.0; 3], q, p]
                    } else {
                        [[0.0; 3], p, q]
                    }
                })
                .collect();
            let mut targets = vec![[0.0f32, 0.0]];
            for p in &ring {
                targets.push([p[0] * 0.5, p[1] * 0.5]);
            }
            for dz in [-1.0f32, 1.0] {
                for tgt in &targets {
                    for d in [[0.0, 0.0, dz], [0.3, -0.2, dz], [-0.1, 0.7, dz]] {
                        let o = [tgt[0] - d[0] * 2.0, tgt[1] - d[1] * 2.0, -2.0 * dz];
                        let r = RayPrep::new(o, d);
                        let hits = tris
                            .iter()
                            .filter(|t| triangle(&r, t[0], t[1], t[2], 0.0, f32::INFINITY).is_some())
                            .count();
                        assert_eq!(hits, 1, "target {tgt:?} dir {d:?} flip {flip_odd}");
                    }
                }
            }
        }
    }
}
