//! Updates: a refit keeps the tree (topology, leaf contents and order) and recomputes every
//! box from the current inputs — vertices, AABBs, instance transforms and the bounds of
//! the BLASes instances reference — requantising every node. With `src != dst` the source
//! is copied first and the copy refitted, so the source is left as it was.
//!
//! Vulkan requires an update's inputs to describe the same primitives (same counts, same
//! active ones); a primitive that became inactive anyway gets an empty box, which no ray
//! enters.

use super::input::{self, Aabb, AabbReader, BlasHeaders, InstanceReader, TriReader};
use super::layout;
use super::{device_bytes_mut, BuildError, BuildRequest, BuildStats, InputMemory, Level};
use parking_lot::Mutex;
use vortex_model::abi::bvh::{self, header, inst, node, proc, tri};
use vortex_model::abi::{rd_u32, wr_f32, wr_u32, wr_u64};
use vortex_model::mem::MemoryMap;

/// Subtrees at least this many bytes are refitted in parallel.
const PAR_BYTES: usize = 1 << 18;

struct Ctx<'a> {
    input: &'a dyn InputMemory,
    width: u32,
    tris: Vec<TriReader<'a>>,
    aabbs: Vec<AabbReader<'a>>,
    insts: Option<InstanceReader<'a>>,
    headers: Mutex<BlasHeaders<'a>>,
    geom_flags: Vec<u32>,
}

fn bad(what: impl Into<String>) -> BuildError {
    BuildError::BadRequest(format!("update source: {}", what.into()))
}

/// Refits `req.dst` from the structure at `src` (which may be `req.dst`).
pub fn update(
    input: &dyn InputMemory,
    mem: &MemoryMap,
    req: &BuildRequest,
    src: u64,
) -> Result<BuildStats, BuildError> {
    let mut hb = [0u8; header::BYTES];
    mem.read(src, &mut hb).map_err(|fault| BuildError::Memory { what: "update source header".into(), fault })?;
    let h = bvh::Header::parse(&hb).map_err(|e| bad(e.to_string()))?;
    if (h.kind == bvh::KIND_TOP) != (req.level == Level::Top) {
        return Err(bad("its level differs from the update's"));
    }
    let size = h.size;
    if size > req.dst_size {
        return Err(BuildError::DoesNotFit { needed: size, available: req.dst_size });
    }
    if src != req.dst {
        mem.copy(req.dst, src, size).map_err(|fault| BuildError::Memory { what: "update copy".into(), fault })?;
    }
    // SAFETY: the destination range is the update's alone (Vulkan valid usage).
    let mut out = unsafe { device_bytes_mut(mem, req.dst, size) }
        .map_err(|fault| BuildError::Memory { what: "update destination".into(), fault })?;
    let mut ctx = Ctx {
        input,
        width: h.width,
        tris: Vec::new(),
        aabbs: Vec::new(),
        insts: None,
        headers: Mutex::new(BlasHeaders::new(mem, vortex_model::config::RtArch::Rtu)),
        geom_flags: req.geometries.iter().map(|g| g.flags).collect(),
    };
    for (gi, g) in req.geometries.iter().enumerate() {
        let gi = gi as u32;
        match g.geometry {
            super::Geometry::Triangles { .. } => ctx.tris.push(TriReader::new(input, g, gi)?),
            super::Geometry::Aabbs { .. } => ctx.aabbs.push(AabbReader::new(input, g, gi)?),
            super::Geometry::Instances { .. } => ctx.insts = Some(InstanceReader::new(input, g, gi)?),
        }
    }
    let top = h.kind == bvh::KIND_TOP;
    let end = if top { h.blas_table as usize * bvh::RECORD_ALIGN } else { size as usize };
    if end > size as usize || end < header::BYTES {
        return Err(bad("its BLAS table lies outside it"));
    }
    let bounds = if h.root == 0 {
        Aabb { lo: [0.0; 3], hi: [0.0; 3] }
    } else {
        let root_off = bvh::child_offset(h.root) as usize;
        if root_off != header::BYTES {
            return Err(bad("its root is not the first record"));
        }
        let b = ctx.refit(h.root, &mut out[root_off..end], root_off)?;
        if b.is_empty() {
            Aabb { lo: [0.0; 3], hi: [0.0; 3] }
        } else {
            b
        }
    };
    let mut nh = h;
    nh.bounds_min = bounds.lo;
    nh.bounds_max = bounds.hi;
    nh.build_flags = req.flags;
    if top {
        let mut table = std::mem::take(&mut ctx.headers.lock().table);
        table.sort_unstable();
        table.dedup();
        let slots = (size as usize - end) / 8;
        if table.len() > slots {
            return Err(bad(format!("{} BLASes are referenced but its table holds {slots}", table.len())));
        }
        out[end..].fill(0);
        for (i, a) in table.iter().enumerate() {
            wr_u64(&mut out, end + 8 * i, *a);
        }
        nh.blas_count = table.len() as u32;
    }
    nh.write(&mut out[..header::BYTES]);
    Ok(BuildStats {
        builder: None,
        prims: h.prim_count as u64,
        nodes: h.node_count as u64,
        leaves: h.leaf_count as u64,
        bytes: size,
        sah_cost: 0.0,
        phases: super::Phases::default(),
    })
}

impl Ctx<'_> {
    /// Refits the subtree of `word`, whose records are exactly `out` at AS offset `off`;
    /// returns its exact box.
    fn refit(&self, word: u32, out: &mut [u8], off: usize) -> Result<Aabb, BuildError> {
        if out.is_empty() {
            return Err(bad(format!("record at {off:#x} is outside it")));
        }
        if bvh::child_is_leaf(word) {
            return self.leaf(out, off);
        }
        let nb = bvh::node_bytes(self.width);
        if out.len() < nb || out[node::KIND] != bvh::NODE_INTERNAL {
            return Err(bad(format!("bad node at {off:#x}")));
        }
        let count = out[node::COUNT] as usize;
        if !(1..=self.width as usize).contains(&count) {
            return Err(bad(format!("node at {off:#x} has {count} children")));
        }
        let (head, rest) = out.split_at_mut(nb);
        let words: Vec<u32> = (0..count).map(|c| rd_u32(head, node::CHILD + 4 * c)).collect();
        // Child i's subtree is [offset(i), offset(i + 1)), the last one's ends with ours.
        let mut parts: Vec<(u32, &mut [u8], usize)> = Vec::with_capacity(count);
        let mut rest = rest;
        let mut at = off + nb;
        for (c, &w) in words.iter().enumerate() {
            let start = bvh::child_offset(w) as usize;
            let stop = if c + 1 < count { bvh::child_offset(words[c + 1]) as usize } else { at + rest.len() };
            if start != at || stop < start || stop - at > rest.len() {
                return Err(bad(format!("node at {off:#x} breaks the pre-order layout")));
            }
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(stop - start);
            rest = tail;
            parts.push((w, mine, start));
            at = stop;
        }
        let boxes: Vec<Aabb> = if out_len(&parts) >= PAR_BYTES && self.insts.is_none() {
            use rayon::prelude::*;
            parts.into_par_iter().map(|(w, o, at)| self.refit(w, o, at)).collect::<Result<_, _>>()?
        } else {
            parts.into_iter().map(|(w, o, at)| self.refit(w, o, at)).collect::<Result<_, _>>()?
        };
        let w = self.width;
        for a in 0..3 {
            let lo: Vec<f32> = boxes.iter().map(|b| b.lo[a]).collect();
            let hi: Vec<f32> = boxes.iter().map(|b| b.hi[a]).collect();
            let (mut ql, mut qh) = ([0u8; 6], [0u8; 6]);
            let (o, e) = layout::quantise_axis(&lo, &hi, &mut ql[..count], &mut qh[..count]);
            wr_f32(head, node::ORIGIN + 4 * a, o);
            head[node::EXP + a] = e as u8;
            for c in 0..count {
                head[node::qlo(w) + 3 * c + a] = ql[c];
                head[node::qhi(w) + 3 * c + a] = qh[c];
            }
        }
        Ok(boxes.iter().fold(Aabb::EMPTY, |acc, b| if b.is_empty() { acc } else { acc.union(b) }))
    }

    fn leaf(&self, out: &mut [u8], off: usize) -> Result<Aabb, BuildError> {
        let mut b = Aabb::EMPTY;
        match out[0] {
            bvh::LEAF_TRI => {
                let count = out[tri::COUNT] as usize;
                let g = rd_u32(out, tri::GEOM_INDEX) as usize;
                let reader = self.tris.get(g).ok_or_else(|| bad(format!("leaf at {off:#x}: no geometry {g}")))?;
                if out.len() < tri::bytes(count) {
                    return Err(bad(format!("leaf at {off:#x} overruns its subtree")));
                }
                wr_u32(out, tri::GEOM_FLAGS, self.geom_flags[g]);
                for k in 0..count {
                    let r = tri::HEADER + tri::RECORD * k;
                    let prim = rd_u32(out, r + tri::PRIM);
                    if prim >= reader.count {
                        return Err(bad(format!("triangle {prim} of geometry {g} is past the update's count")));
                    }
                    match reader.tri(prim)? {
                        Some(v) => {
                            for (j, o) in [tri::V0, tri::V1, tri::V2].into_iter().enumerate() {
                                for a in 0..3 {
                                    wr_f32(out, r + o + 4 * a, v[j][a]);
                                }
                            }
                            b.grow(&input::tri_box(&v));
                        }
                        None => {
                            for o in (tri::V0..tri::V0 + 36).step_by(4) {
                                wr_f32(out, r + o, f32::NAN);
                            }
                        }
                    }
                }
            }
            bvh::LEAF_PROC => {
                let count = out[proc::COUNT] as usize;
                let g = rd_u32(out, proc::GEOM_INDEX) as usize;
                let reader = self.aabbs.get(g).ok_or_else(|| bad(format!("leaf at {off:#x}: no geometry {g}")))?;
                if out.len() < proc::bytes(count) {
                    return Err(bad(format!("leaf at {off:#x} overruns its subtree")));
                }
                wr_u32(out, proc::GEOM_FLAGS, self.geom_flags[g]);
                for k in 0..count {
                    let r = proc::HEADER + proc::RECORD * k;
                    let prim = rd_u32(out, r + proc::PRIM);
                    if prim >= reader.count {
                        return Err(bad(format!("AABB {prim} of geometry {g} is past the update's count")));
                    }
                    let bx = reader.aabb(prim).unwrap_or(Aabb::EMPTY);
                    for a in 0..3 {
                        wr_f32(out, r + proc::MIN + 4 * a, bx.lo[a]);
                        wr_f32(out, r + proc::MAX + 4 * a, bx.hi[a]);
                    }
                    if !bx.is_empty() {
                        b.grow(&bx);
                    }
                }
            }
            bvh::LEAF_INST => {
                let reader = self.insts.as_ref().ok_or_else(|| bad("an instance leaf in a bottom-level update"))?;
                if out.len() < inst::BYTES {
                    return Err(bad(format!("leaf at {off:#x} overruns its subtree")));
                }
                let i = rd_u32(out, inst::INDEX);
                if i >= reader.count {
                    return Err(bad(format!("instance {i} is past the update's count")));
                }
                let rec = reader.record(i)?;
                let made = {
                    let mut headers = self.headers.lock();
                    input::instance(self.input, &mut headers, &rec, i)?
                };
                match made {
                    Some((d, bx)) => {
                        d.encode(out);
                        b = bx;
                    }
                    None => {
                        // Inactive now: a zero mask never passes the mask test.
                        let d = inst::Leaf {
                            index: i,
                            custom_mask: rec.custom_mask & 0x00ff_ffff,
                            sbt_flags: rec.sbt_flags,
                            w2o: [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
                            o2w: [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
                            blas: rd_u64(out, inst::BLAS),
                        };
                        d.encode(out);
                    }
                }
            }
            k => return Err(bad(format!("record kind {k} at {off:#x}"))),
        }
        Ok(b)
    }
}

fn out_len(parts: &[(u32, &mut [u8], usize)]) -> usize {
    parts.iter().map(|p| p.1.len()).sum()
}

fn rd_u64(b: &[u8], o: usize) -> u64 {
    vortex_model::abi::rd_u64(b, o)
}
