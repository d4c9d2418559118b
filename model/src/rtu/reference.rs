//! CPU reference for the RTU and the BVH builder's tests (both crates use it; it is not part
//! of the device): a brute-force f64 oracle over explicit geometry, independent of the BVH
//! and of the RTU's f32 arithmetic, the acceptance rule that compares an RTU result with it,
//! a harness that drives [`RtuUnit`] one ray per lane through the proceed loop, and a small
//! deterministic random generator.

use super::engine::{Below, Fronts, Links, Reform, RtuCore};
use super::{RtuError, RtuUnit, TraceRay};
use crate::abi::rtu::{self as rtu_abi, span};
use crate::abi::MAX_THREADS;
use crate::cache::{Cache, CacheGeom, Dram};
use crate::config::RtuConfig;
use crate::mem::MemoryMap;

/// A triangle in object space with its ids.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefTri {
    pub v: [[f32; 3]; 3],
    pub geom: u32,
    pub prim: u32,
}

/// An instance of a bottom-level triangle list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefInstance {
    /// Object-to-world 3x4, row-major (as `VkTransformMatrixKHR`).
    pub o2w: [f32; 12],
    pub blas: usize,
    pub mask: u8,
    pub custom: u32,
    /// Index in the instance array (`gl_InstanceID`-style).
    pub index: u32,
}

/// A world-space ray.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefRay {
    pub org: [f32; 3],
    pub dir: [f32; 3],
    pub tmin: f32,
    pub tmax: f32,
    pub cull_mask: u32,
}

/// One ray/triangle intersection in f64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefHit {
    pub t: f64,
    pub u: f64,
    pub v: f64,
    pub prim: u32,
    pub geom: u32,
    pub inst: u32,
    /// Smallest barycentric weight: how far inside the triangle the ray passes (negative:
    /// outside). Near-zero values are grazes that rounding may decide either way.
    pub margin: f64,
}

/// Two-sided Möller–Trumbore in f64. Returns (t, u, v) for the supporting plane even when
/// the point is outside the triangle (the caller reads the margin), `None` when parallel.
pub fn plane_hit_f64(o: [f64; 3], d: [f64; 3], v: &[[f32; 3]; 3]) -> Option<(f64, f64, f64)> {
    let p = |i: usize| [v[i][0] as f64, v[i][1] as f64, v[i][2] as f64];
    let (a, b, c) = (p(0), p(1), p(2));
    let e1 = sub(b, a);
    let e2 = sub(c, a);
    let pv = cross(d, e2);
    let det = dot(e1, pv);
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let inv = 1.0 / det;
    let tv = sub(o, a);
    let u = dot(tv, pv) * inv;
    let qv = cross(tv, e1);
    let w = dot(d, qv) * inv;
    let t = dot(e2, qv) * inv;
    Some((t, u, w))
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// Inverse of a 3x4 affine in f64 (`None` if singular).
pub fn invert_3x4_f64(m: &[f32; 12]) -> Option<[f64; 12]> {
    let a: [f64; 12] = std::array::from_fn(|i| m[i] as f64);
    let det =
        a[0] * (a[5] * a[10] - a[6] * a[9]) - a[1] * (a[4] * a[10] - a[6] * a[8]) + a[2] * (a[4] * a[9] - a[5] * a[8]);
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let id = 1.0 / det;
    let r = [
        (a[5] * a[10] - a[6] * a[9]) * id,
        (a[2] * a[9] - a[1] * a[10]) * id,
        (a[1] * a[6] - a[2] * a[5]) * id,
        (a[6] * a[8] - a[4] * a[10]) * id,
        (a[0] * a[10] - a[2] * a[8]) * id,
        (a[2] * a[4] - a[0] * a[6]) * id,
        (a[4] * a[9] - a[5] * a[8]) * id,
        (a[1] * a[8] - a[0] * a[9]) * id,
        (a[0] * a[5] - a[1] * a[4]) * id,
    ];
    let t = [a[3], a[7], a[11]];
    let mut out = [0.0; 12];
    for row in 0..3 {
        out[4 * row] = r[3 * row];
        out[4 * row + 1] = r[3 * row + 1];
        out[4 * row + 2] = r[3 * row + 2];
        out[4 * row + 3] = -(r[3 * row] * t[0] + r[3 * row + 1] * t[1] + r[3 * row + 2] * t[2]);
    }
    Some(out)
}

fn world_to_object(inst: Option<&RefInstance>, ray: &RefRay) -> Option<([f64; 3], [f64; 3])> {
    let o = ray.org.map(|x| x as f64);
    let d = ray.dir.map(|x| x as f64);
    match inst {
        None => Some((o, d)),
        Some(i) => {
            let m = invert_3x4_f64(&i.o2w)?;
            let row = |r: usize, v: [f64; 3], w: f64| {
                m[4 * r] * v[0] + m[4 * r + 1] * v[1] + m[4 * r + 2] * v[2] + m[4 * r + 3] * w
            };
            Some(([row(0, o, 1.0), row(1, o, 1.0), row(2, o, 1.0)], [row(0, d, 0.0), row(1, d, 0.0), row(2, d, 0.0)]))
        }
    }
}

/// Every triangle's plane intersection along the ray (inside or not; read `margin`), for a
/// BLAS traced directly (`instances` empty) or a TLAS over `blases`.
pub fn all_plane_hits(blases: &[Vec<RefTri>], instances: &[RefInstance], ray: &RefRay) -> Vec<RefHit> {
    let mut out = Vec::new();
    let mut one = |tris: &[RefTri], inst: Option<&RefInstance>| {
        let Some((o, d)) = world_to_object(inst, ray) else { return };
        for tri in tris {
            if let Some((t, u, v)) = plane_hit_f64(o, d, &tri.v) {
                out.push(RefHit {
                    t,
                    u,
                    v,
                    prim: tri.prim,
                    geom: tri.geom,
                    inst: inst.map_or(0, |i| i.index),
                    margin: u.min(v).min(1.0 - u - v),
                });
            }
        }
    };
    if instances.is_empty() {
        for b in blases {
            one(b, None);
        }
    } else {
        for i in instances {
            if (i.mask as u32) & ray.cull_mask & 0xff != 0 {
                one(&blases[i.blas], Some(i));
            }
        }
    }
    out
}

/// The closest robust hit (margin above `edge_eps`), for tests that want a plain answer.
pub fn closest(blases: &[Vec<RefTri>], instances: &[RefInstance], ray: &RefRay, edge_eps: f64) -> Option<RefHit> {
    all_plane_hits(blases, instances, ray)
        .into_iter()
        .filter(|h| h.margin > edge_eps && h.t >= ray.tmin as f64 && h.t <= ray.tmax as f64)
        .min_by(|a, b| a.t.total_cmp(&b.t))
}

/// What the RTU reported for one ray.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GotHit {
    pub t: f32,
    pub prim: u32,
    pub geom: u32,
    pub inst: u32,
}

/// Tolerances of [`check_closest`].
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// Relative tolerance on t, in units of the distances involved: a hit point may move by
    /// `rel_t * (|origin| + |t * dir|)`.
    pub rel_t: f64,
    /// Barycentric margin under which a hit is a graze either answer may take.
    pub edge: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance { rel_t: 1e-5, edge: 1e-4 }
    }
}

/// Accepts the RTU's closest-hit answer `got` iff (1) the triangle it names really lies on
/// the ray at that t (or is grazed), and (2) no triangle is hit robustly (clearly inside,
/// clearly within the interval) clearly closer than it — or at all, for a miss.
pub fn check_closest(
    blases: &[Vec<RefTri>],
    instances: &[RefInstance],
    ray: &RefRay,
    got: Option<GotHit>,
    tol: Tolerance,
) -> Result<(), String> {
    let hits = all_plane_hits(blases, instances, ray);
    // Tolerance on t: `rel_t` of the distances involved (origin and hit point from the
    // world origin, over |dir|), since f32 instance transforms round positions, not t.
    let dl = ray.dir.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
    let ol = ray.org.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
    let tolt = |t: f64| tol.rel_t * (ol + t.abs() * dl + f64::MIN_POSITIVE) / dl;
    let inside =
        |h: &RefHit| h.margin > tol.edge && h.t > ray.tmin as f64 + tolt(h.t) && h.t < ray.tmax as f64 - tolt(h.t);
    let limit = match got {
        None => f64::INFINITY,
        Some(g) => {
            let h = hits
                .iter()
                .find(|h| h.prim == g.prim && h.geom == g.geom && h.inst == g.inst)
                .ok_or_else(|| format!("RTU reports {g:?}, which is not a triangle of the scene on this ray"))?;
            if h.margin < -tol.edge || (h.t - g.t as f64).abs() > tolt(h.t) {
                return Err(format!("RTU reports {g:?}, but that triangle is at t={} margin={}", h.t, h.margin));
            }
            g.t as f64 - tolt(g.t as f64)
        }
    };
    if let Some(h) = hits.iter().filter(|h| inside(h) && h.t < limit).min_by(|a, b| a.t.total_cmp(&b.t)) {
        return Err(format!("RTU reports {got:?}, but {h:?} is hit closer"));
    }
    Ok(())
}

/// One window row, as the kernel would read it after the walk.
#[derive(Clone, Debug, PartialEq)]
pub struct Row(pub Vec<u32>);

impl Row {
    pub fn status(&self) -> u32 {
        self.0[rtu_abi::STATUS as usize]
    }
    pub fn committed(&self, off: u32) -> u32 {
        self.0[(rtu_abi::COMMITTED + off) as usize]
    }
    pub fn committed_f(&self, off: u32) -> f32 {
        f32::from_bits(self.committed(off))
    }
    pub fn candidate(&self, off: u32) -> u32 {
        self.0[(rtu_abi::CANDIDATE + off) as usize]
    }
    pub fn candidate_f(&self, off: u32) -> f32 {
        f32::from_bits(self.candidate(off))
    }
    /// The committed hit, if the status says there is one.
    pub fn hit(&self) -> Option<GotHit> {
        (self.status() == rtu_abi::STS_DONE_HIT).then(|| GotHit {
            t: self.committed_f(span::T),
            prim: self.committed(span::PRIM),
            geom: self.committed(span::GEOM),
            inst: self.committed(span::INST_ID),
        })
    }
}

/// Drives an [`RtuUnit`] the way a lowered ray-query loop does: TRACE a batch of lanes,
/// WAIT, then CONTINUE with the decision of `decide` for every lane holding a candidate,
/// until every lane is terminal.
///
/// In timed mode (`VORTEX_MODE=timed`, or [`Harness::timed`]) the unit's TRACE and
/// CONTINUE go to a traversal core ([`RtuCore`]) with its RTCache, L2 and DRAM, which is
/// ticked cycle by cycle until the WAIT completes: the same scenarios then exercise the
/// staging, slot, walker-pipeline and write-back machinery.
pub struct Harness {
    pub unit: RtuUnit,
    pub lanes: usize,
    timed: Option<Box<TimedRtu>>,
}

/// A traversal core and the memory behind it, for the harness.
pub struct TimedRtu {
    pub engine: RtuCore,
    rtcache: Cache,
    l2: Cache,
    dram: Dram,
    pub now: u64,
    /// Cycles without a record after which the harness calls it a deadlock: every lane's
    /// walk faults after `max_visits` record visits, each a few lines from DRAM at worst.
    guard_cycles: u64,
}

struct One<'a> {
    unit: &'a mut RtuUnit,
}

impl Fronts for One<'_> {
    fn unit(&mut self, _core: usize) -> &mut RtuUnit {
        self.unit
    }
    fn unit_ref(&self, _core: usize) -> &RtuUnit {
        self.unit
    }
    fn wake(&mut self, _core: usize, _warp: u32) {}
}

struct Mem<'a> {
    l2: &'a mut Cache,
    dram: &'a mut Dram,
}

impl Below for Mem<'_> {
    fn read(&mut self, line: u64, t: u64) -> u64 {
        let dram = &mut *self.dram;
        self.l2.read_delayed(line, t, |t2| dram.read(t2)).ready
    }
}

impl Harness {
    /// One warp of `lanes` lanes with `queries` query slots, in the mode `VORTEX_MODE` asks
    /// for.
    pub fn new(cfg: &RtuConfig, lanes: usize, queries: u32) -> Harness {
        match crate::config::Mode::from_env() {
            crate::config::Mode::Functional => Harness::functional(cfg, lanes, queries),
            crate::config::Mode::Timed => Harness::timed(cfg, lanes, queries),
        }
    }

    pub fn functional(cfg: &RtuConfig, lanes: usize, queries: u32) -> Harness {
        let mut unit = RtuUnit::new(cfg, 1, lanes);
        unit.launch_warp(0, queries);
        Harness { unit, lanes, timed: None }
    }

    /// Timed mode: a traversal core of the default machine's geometry and latencies.
    pub fn timed(cfg: &RtuConfig, lanes: usize, queries: u32) -> Harness {
        let mut h = Harness::functional(cfg, lanes, queries);
        h.unit.set_timed(true);
        let dc = crate::config::DeviceConfig {
            num_threads: lanes.next_power_of_two() as u32,
            rtu: cfg.clone(),
            ..Default::default()
        };
        let r = &dc.rtu;
        let m = &dc.mem;
        h.timed = Some(Box::new(TimedRtu {
            // No DCRs here: the knob alone decides, as if every trace dispatched by SBT.
            engine: RtuCore::new(&dc, 0, Reform { thresh: r.reform_thresh, sbt: r.reform_sbt }),
            rtcache: Cache::new(CacheGeom {
                size: r.rtcache_size,
                ways: r.rtcache_ways,
                banks: r.rtcache_banks,
                mshrs: r.rtcache_mshrs,
                latency: r.rtcache_latency,
                merge_depth: Some(r.merge_depth),
            }),
            l2: Cache::new(CacheGeom {
                size: m.l2_size,
                ways: m.l2_ways,
                banks: m.l2_banks,
                mshrs: m.l2_mshrs,
                latency: m.l2_latency,
                merge_depth: None,
            }),
            dram: Dram::new(m.dram_latency, m.dram_bytes_per_cycle),
            now: 0,
            guard_cycles: {
                let per_visit = 16 * u64::from(m.dram_latency + m.l2_latency + r.rtcache_latency + 64);
                (lanes as u64).saturating_mul(r.max_visits).saturating_mul(per_visit).max(50_000_000)
            },
        }));
        h
    }

    /// The timed machinery, when the harness runs timed.
    pub fn timed_rtu(&self) -> Option<&TimedRtu> {
        self.timed.as_deref()
    }

    /// Hands the unit's posted messages to the traversal core and runs it until `done`.
    fn settle(&mut self, mem: &MemoryMap, done: impl Fn(&RtuUnit) -> Result<bool, RtuError>) -> Result<(), RtuError> {
        let Some(t) = self.timed.as_deref_mut() else { return Ok(()) };
        for m in self.unit.outbox.drain(..) {
            t.engine.post(t.now + 1, 0, m);
        }
        let limit = t.now + t.guard_cycles;
        let mut src = super::walker::MemSource::new(mem);
        while !done(&self.unit)? {
            if t.now > limit {
                panic!("timed RTU harness: no record after {} cycles (deadlock)", t.guard_cycles);
            }
            let now = t.now;
            let mut fronts = One { unit: &mut self.unit };
            let mut below = Mem { l2: &mut t.l2, dram: &mut t.dram };
            t.engine
                .tick(
                    now,
                    &mut Links { fronts: &mut fronts, rtcache: &mut t.rtcache, below: &mut below, mem: &mut src },
                )
                .map_err(|f| RtuError { lane: f.lane.unwrap_or(0), fault: f })?;
            t.now = t.engine.next_event(now).min(now + 1_000_000);
        }
        Ok(())
    }

    fn row(&self, lane: usize, q: u32) -> Result<Row, RtuError> {
        (0..rtu_abi::SLOT_COUNT).map(|s| self.unit.read(0, lane, q, s)).collect::<Result<Vec<_>, _>>().map(Row)
    }

    /// Traces `rays` in batches of `lanes`, resolving candidates with `decide(ray index,
    /// candidate row) -> (action, t)`. Returns the terminal row of every ray.
    pub fn run(
        &mut self,
        mem: &MemoryMap,
        rays: &[TraceRay],
        mut decide: impl FnMut(usize, &Row) -> (u32, f32),
    ) -> Result<Vec<Row>, RtuError> {
        let q = [0u32; MAX_THREADS];
        let mut out = Vec::with_capacity(rays.len());
        for (bi, batch) in rays.chunks(self.lanes).enumerate() {
            let mut lane_rays = [TraceRay::default(); MAX_THREADS];
            lane_rays[..batch.len()].copy_from_slice(batch);
            let mask = if batch.len() == 32 { u32::MAX } else { (1u32 << batch.len()) - 1 };
            self.unit.trace(mem, 0, mask, &q, &lane_rays)?;
            loop {
                let mut st = [0u32; MAX_THREADS];
                self.settle(mem, |u| u.landed(0, mask, &q))?;
                let landed = self.unit.wait(0, mask, &q, &mut st)?;
                assert!(landed, "the record has landed");
                let mut ymask = 0u32;
                let mut act = [0u32; MAX_THREADS];
                let mut tt = [0f32; MAX_THREADS];
                if st[..batch.len()].contains(&rtu_abi::STS_PENDING) {
                    // A partial batch (timed mode, reformation threshold): the pending lanes
                    // wait again, as the lowered proceed loop does.
                    continue;
                }
                for lane in 0..batch.len() {
                    if rtu_abi::status_is_yield(st[lane]) {
                        ymask |= 1 << lane;
                        (act[lane], tt[lane]) = decide(bi * self.lanes + lane, &self.row(lane, 0)?);
                    }
                }
                if ymask == 0 {
                    break;
                }
                self.unit.cont(mem, 0, ymask, &q, &act, &tt)?;
            }
            for lane in 0..batch.len() {
                out.push(self.row(lane, 0)?);
            }
        }
        Ok(out)
    }
}

/// xorshift64*: small, deterministic, good enough for test inputs.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f32()
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// A random direction with some components exactly zero now and then.
    pub fn dir(&mut self) -> [f32; 3] {
        loop {
            let mut d = [self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0)];
            match self.below(8) {
                0 => {
                    let a = self.below(3) as usize;
                    d = [0.0; 3];
                    d[a] = if self.below(2) == 0 { 1.0 } else { -1.0 };
                }
                1 => d[self.below(3) as usize] = 0.0,
                _ => {}
            }
            if d.iter().any(|&x| x != 0.0) {
                return d;
            }
        }
    }
}
