//! A CPU reference traversal of a CW-BVH in device memory, independent of the RTU walker's
//! machinery: a plain recursive depth-first walk with an unbounded (host) stack — no short
//! stack, no restarts, no resumable state machine, no `NodeSource`, no timing — decoding
//! records straight from `abi::bvh`. It shares only the PEs' arithmetic (`isect`) and the
//! hit policy (`classifier`) with the walker, so it gives the walker's answer bit for bit
//! when the walker's traversal logic is right: `rt_replay --engine reference` and the tie
//! scenario compare the two.
//!
//! The visiting order is the one `docs/BVH.md` §3 documents — at every node the hit
//! children in increasing (entry distance, slot) order, a deferred child skipped when its
//! entry distance exceeds the best t by the time it comes up, triangles of a leaf in
//! order — and a hit commits only when strictly closer than the current commit. So among
//! hits at exactly the same t the first one visited wins (the tie-break rule), and
//! candidates are offered in the same order as the walker offers them.

use super::classifier::{self as cls, TriAction};
use super::isect::{self, RayPrep};
use super::raylog::{CandKey, TraceResult};
use super::TraceRay;
use crate::abi::bvh::{self, header, inst, node, proc, tri};
use crate::abi::rtu::{self as rtu_abi, span};
use crate::abi::{rd_f32, rd_u32, rd_u64};
use crate::mem::MemoryMap;

/// A candidate handed to the decision callback: the yield status, the candidate, and the
/// record as the shader would see it at that moment (status = the yield, committed span).
#[derive(Clone, Copy, Debug)]
pub struct Offer {
    pub cand: CandKey,
    pub at: TraceResult,
}

#[derive(Clone, Copy)]
struct Lvl {
    base: u64,
    size: u64,
    width: u32,
    kind: u8,
    root: u32,
}

#[derive(Clone, Copy)]
struct InstCtx {
    index: u32,
    custom: u32,
    sbt: u32,
    flags: u32,
}

struct Ref<'a, D: FnMut(&Offer) -> (u32, f32)> {
    mem: &'a MemoryMap,
    decide: D,
    world: RayPrep,
    tmin: f32,
    best_t: f32,
    flags: u32,
    cull_mask: u32,
    committed: bool,
    hit: [u32; crate::abi::raylog::HIT_WORDS],
    tri: u64,
    done: bool,
    visits: u64,
    max_visits: u64,
}

/// Traces `ray` through the structure in `mem`, asking `decide` about every candidate
/// (returns `abi::rtu::ACT_*` and a generated t). `max_visits` bounds the records visited.
/// A malformed structure or a record missing from `mem` is an error.
pub fn trace(
    mem: &MemoryMap,
    ray: &TraceRay,
    max_visits: u64,
    decide: impl FnMut(&Offer) -> (u32, f32),
) -> Result<TraceResult, String> {
    let mut hit = [0u32; crate::abi::raylog::HIT_WORDS];
    hit[span::T as usize] = ray.tmax.to_bits();
    hit[span::KIND as usize] = rtu_abi::COMMITTED_NONE;
    let mut r = Ref {
        mem,
        decide,
        world: RayPrep::new(ray.origin, ray.dir),
        tmin: ray.tmin,
        best_t: ray.tmax,
        flags: ray.flags,
        cull_mask: ray.cull_mask,
        committed: false,
        hit,
        tri: 0,
        done: false,
        visits: 0,
        max_visits,
    };
    let live = ray.accel != 0 && !r.world.is_degenerate() && ray.tmin.partial_cmp(&ray.tmax).is_some_and(|o| o.is_le());
    if live {
        let top = r.level(ray.accel)?;
        if top.root != 0 {
            let world = r.world;
            r.visit(&top, top.root, &world, None)?;
        }
    }
    Ok(r.result(if r.committed { rtu_abi::STS_DONE_HIT } else { rtu_abi::STS_DONE_MISS }))
}

impl<D: FnMut(&Offer) -> (u32, f32)> Ref<'_, D> {
    fn result(&self, status: u32) -> TraceResult {
        TraceResult { status, hit: self.hit, tri: self.tri }
    }

    fn read(&self, addr: u64, len: usize) -> Result<Vec<u8>, String> {
        let mut b = vec![0u8; len];
        self.mem
            .read(addr, &mut b)
            .map_err(|e| format!("record of {len} bytes at {addr:#x} is not in memory ({e})"))?;
        Ok(b)
    }

    fn level(&self, base: u64) -> Result<Lvl, String> {
        let b = self.read(base, header::BYTES)?;
        let h = bvh::Header::parse(&b).map_err(|e| format!("structure at {base:#x}: {e}"))?;
        Ok(Lvl { base, size: h.size, width: h.width, kind: h.kind, root: h.root })
    }

    fn record(&self, lvl: &Lvl, word: u32, len: usize) -> Result<u64, String> {
        let off = bvh::child_offset(word);
        if off < header::BYTES as u64 || off + len as u64 > lvl.size {
            return Err(format!("child word {word:#010x} of the structure at {:#x} is outside its records", lvl.base));
        }
        Ok(lvl.base + off)
    }

    fn visit(&mut self, lvl: &Lvl, word: u32, ray: &RayPrep, inst: Option<InstCtx>) -> Result<(), String> {
        if self.done {
            return Ok(());
        }
        self.visits += 1;
        if self.visits > self.max_visits {
            return Err(format!("more than {} record visits", self.max_visits));
        }
        if bvh::child_is_leaf(word) {
            return self.leaf(lvl, word, ray, inst);
        }
        let w = lvl.width as usize;
        let addr = self.record(lvl, word, bvh::node_bytes(lvl.width))?;
        let b = self.read(addr, bvh::node_bytes(lvl.width))?;
        let count = b[node::COUNT] as usize;
        if b[node::KIND] != bvh::NODE_INTERNAL || count == 0 || count > w {
            return Err(format!("record {word:#010x} at {addr:#x} is not an internal node of width {w}"));
        }
        let origin = [rd_f32(&b, node::ORIGIN), rd_f32(&b, node::ORIGIN + 4), rd_f32(&b, node::ORIGIN + 8)];
        let exp = [b[node::EXP] as i8, b[node::EXP + 1] as i8, b[node::EXP + 2] as i8];
        let mut kids: Vec<(f32, usize, u32)> = Vec::with_capacity(count);
        for c in 0..count {
            let lo: [f32; 3] =
                std::array::from_fn(|a| bvh::dequant(origin[a], exp[a], b[node::qlo(lvl.width) + 3 * c + a]));
            let hi: [f32; 3] =
                std::array::from_fn(|a| bvh::dequant(origin[a], exp[a], b[node::qhi(lvl.width) + 3 * c + a]));
            let (near, hit) = isect::slab_near(ray, lo, hi, self.tmin, self.best_t);
            if hit {
                kids.push((near, c, rd_u32(&b, node::CHILD + 4 * c)));
            }
        }
        // Nearest first; equal entry distances by slot.
        kids.sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap_or(std::cmp::Ordering::Equal).then(x.1.cmp(&y.1)));
        for (k, &(near, _, child)) in kids.iter().enumerate() {
            if self.done {
                break;
            }
            // The nearest child is entered at once; the others come up later and are
            // skipped if the best t has moved in front of them meanwhile.
            if k > 0 && near > self.best_t {
                continue;
            }
            self.visit(lvl, child, ray, inst)?;
        }
        Ok(())
    }

    fn leaf(&mut self, lvl: &Lvl, word: u32, ray: &RayPrep, inst: Option<InstCtx>) -> Result<(), String> {
        let addr = self.record(lvl, word, bvh::RECORD_ALIGN)?;
        let head = self.read(addr, bvh::RECORD_ALIGN)?;
        let (kind, count) = (head[0], head[1] as usize);
        let len = match kind {
            bvh::LEAF_TRI if (1..=tri::MAX_COUNT).contains(&count) => tri::bytes(count),
            bvh::LEAF_PROC if (1..=proc::MAX_COUNT).contains(&count) => proc::bytes(count),
            bvh::LEAF_INST if lvl.kind == bvh::KIND_TOP && inst.is_none() => inst::BYTES,
            _ => return Err(format!("record {word:#010x} at {addr:#x} is not a leaf this structure may hold")),
        };
        if kind != bvh::LEAF_INST && lvl.kind != bvh::KIND_BOTTOM {
            return Err(format!("primitive leaf {word:#010x} in the top-level structure at {:#x}", lvl.base));
        }
        self.record(lvl, word, len)?;
        let b = self.read(addr, len)?;
        if kind == bvh::LEAF_INST {
            return self.instance(&b);
        }
        let geom = rd_u32(&b, tri::GEOM_INDEX);
        let geom_flags = rd_u32(&b, tri::GEOM_FLAGS);
        let ids = inst.unwrap_or(InstCtx { index: 0, custom: 0, sbt: 0, flags: 0 });
        let op = cls::opacity(geom_flags, ids.flags, self.flags);
        let v3 = |o: usize| [rd_f32(&b, o), rd_f32(&b, o + 4), rd_f32(&b, o + 8)];
        if kind == bvh::LEAF_TRI {
            if cls::cull_triangle_leaf(self.flags, op) {
                return Ok(());
            }
            for i in 0..count {
                let r = tri::HEADER + i * tri::RECORD;
                let prim = rd_u32(&b, r + tri::PRIM);
                let Some(h) =
                    isect::triangle(ray, v3(r + tri::V0), v3(r + tri::V1), v3(r + tri::V2), self.tmin, self.best_t)
                else {
                    continue;
                };
                // Strictly closer than the commit, or nothing: a tie goes to the first visited.
                if self.committed && h.t >= self.best_t {
                    continue;
                }
                let front = cls::front_face(isect::geometric_front(&h), ids.flags);
                let words = span_words(h.t, h.u, h.v, prim, geom, &ids, front);
                let tri_addr = addr + r as u64;
                match cls::triangle_action(self.flags, ids.flags, op, front) {
                    TriAction::Cull => {}
                    TriAction::Commit => {
                        self.commit(words, rtu_abi::COMMITTED_TRIANGLE, tri_addr, h.t);
                        if cls::terminate_on_commit(self.flags) {
                            self.done = true;
                            return Ok(());
                        }
                    }
                    TriAction::Candidate => {
                        let cand = CandKey {
                            kind: rtu_abi::CANDIDATE_TRIANGLE,
                            t: h.t.to_bits(),
                            prim,
                            geom,
                            inst: ids.index,
                        };
                        let offer = Offer { cand, at: self.result(rtu_abi::STS_YIELD_ANYHIT) };
                        let (act, _) = (self.decide)(&offer);
                        if self.answer(act, words, rtu_abi::COMMITTED_TRIANGLE, tri_addr, h.t) {
                            return Ok(());
                        }
                    }
                }
            }
        } else {
            if cls::cull_aabb_leaf(self.flags, op) {
                return Ok(());
            }
            for i in 0..count {
                let r = proc::HEADER + i * proc::RECORD;
                let prim = rd_u32(&b, r + proc::PRIM);
                let Some(t) = isect::slab(ray, v3(r + proc::MIN), v3(r + proc::MAX), self.tmin, self.best_t) else {
                    continue;
                };
                let cand = CandKey { kind: rtu_abi::CANDIDATE_AABB, t: t.to_bits(), prim, geom, inst: ids.index };
                let offer = Offer { cand, at: self.result(rtu_abi::STS_YIELD_PROC) };
                let (act, t_gen) = (self.decide)(&offer);
                let words = span_words(t_gen, 0.0, 0.0, prim, geom, &ids, false);
                if self.answer(act, words, rtu_abi::COMMITTED_GENERATED, 0, t_gen) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The shader's answer `act` to an offer: ACCEPT commits `words` (a commit ends the walk
    /// under terminate-on-first-hit), TERMINATE ends it. True when the walk is over.
    fn answer(&mut self, act: u32, words: [u32; crate::abi::raylog::HIT_WORDS], kind: u32, tri: u64, t: f32) -> bool {
        if act & rtu_abi::ACT_ACCEPT != 0 {
            self.commit(words, kind, tri, t);
            if cls::terminate_on_commit(self.flags) {
                self.done = true;
            }
        }
        if act & rtu_abi::ACT_TERMINATE != 0 {
            self.done = true;
        }
        self.done
    }

    fn commit(&mut self, mut words: [u32; crate::abi::raylog::HIT_WORDS], kind: u32, tri: u64, t: f32) {
        words[span::KIND as usize] = kind;
        self.hit = words;
        self.tri = tri;
        self.best_t = t;
        self.committed = true;
    }

    fn instance(&mut self, b: &[u8]) -> Result<(), String> {
        let custom_mask = rd_u32(b, inst::CUSTOM_MASK);
        let blas = rd_u64(b, inst::BLAS);
        if !cls::instance_visible(custom_mask >> 24, self.cull_mask) || blas == 0 {
            return Ok(());
        }
        let lvl = self.level(blas)?;
        if lvl.kind != bvh::KIND_BOTTOM {
            return Err(format!("instance references {blas:#x}, which is not a bottom-level structure"));
        }
        if lvl.root == 0 {
            return Ok(());
        }
        let sbt_flags = rd_u32(b, inst::SBT_FLAGS);
        let ids = InstCtx {
            index: rd_u32(b, inst::INDEX),
            custom: custom_mask & 0xff_ffff,
            sbt: sbt_flags & 0xff_ffff,
            flags: sbt_flags >> 24,
        };
        let w2o: [f32; 12] = std::array::from_fn(|i| rd_f32(b, inst::W2O + 4 * i));
        let obj = RayPrep::new(isect::xform_point(&w2o, self.world.org), isect::xform_vector(&w2o, self.world.dir));
        if obj.is_degenerate() {
            return Ok(());
        }
        self.visit(&lvl, lvl.root, &obj, Some(ids))
    }
}

fn span_words(
    t: f32,
    u: f32,
    v: f32,
    prim: u32,
    geom: u32,
    ids: &InstCtx,
    front: bool,
) -> [u32; crate::abi::raylog::HIT_WORDS] {
    let mut w = [0u32; crate::abi::raylog::HIT_WORDS];
    w[span::T as usize] = t.to_bits();
    w[span::U as usize] = u.to_bits();
    w[span::V as usize] = v.to_bits();
    w[span::PRIM as usize] = prim;
    w[span::INST_ID as usize] = ids.index;
    w[span::GEOM as usize] = geom;
    w[span::CUSTOM as usize] = ids.custom;
    w[span::SBT as usize] = ids.sbt;
    w[span::FRONT as usize] = front as u32;
    w
}
