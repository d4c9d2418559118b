//! Updates of rdna2 structures: the nodes stay where they are; every box is recomputed
//! bottom-up from the current inputs (vertices rewritten into triangle nodes, AABBs,
//! instance transforms and the BLASes they reference). Structures that allow updates are
//! built without shared triangle vertices and with FP32 boxes, so a refit never needs a
//! different node.

use super::super::input::{self, Aabb, AabbReader, BlasHeaders, InstanceReader, TriReader};
use super::super::{device_bytes_mut, BuildError, BuildRequest, BuildStats, Geometry, InputMemory, Level, Phases};
use vortex_model::abi::bvh::{self, header};
use vortex_model::abi::rdna2::{self as r2, ptr, NodeBox};
use vortex_model::abi::{rd_u32, rd_u64, wr_f32, wr_u32, wr_u64};
use vortex_model::config::RtArch;
use vortex_model::mem::MemoryMap;

fn bad(what: impl Into<String>) -> BuildError {
    BuildError::BadRequest(format!("update source: {}", what.into()))
}

struct Ctx<'a> {
    input: &'a dyn InputMemory,
    tris: Vec<TriReader<'a>>,
    aabbs: Vec<AabbReader<'a>>,
    insts: Option<InstanceReader<'a>>,
    headers: BlasHeaders<'a>,
    geom_flags: Vec<u32>,
    /// The node region (`slots` 64-byte slots).
    nodes: &'a mut [u8],
    slots: u32,
    /// Nodes refitted (a bound on the walk, which a cyclic structure would otherwise loop).
    visits: u64,
}

/// Refits `req.dst` from the rdna2 structure at `src` (which may be `req.dst`).
pub fn update(
    input: &dyn InputMemory,
    mem: &MemoryMap,
    req: &BuildRequest,
    src: u64,
) -> Result<BuildStats, BuildError> {
    let mut hb = [0u8; header::BYTES];
    mem.read(src, &mut hb).map_err(|fault| BuildError::Memory { what: "update source header".into(), fault })?;
    let (h, x) = r2::parse_header(&hb).map_err(|e| bad(e.to_string()))?;
    if (h.kind == bvh::KIND_TOP) != (req.level == Level::Top) {
        return Err(bad("its level differs from the update's"));
    }
    let size = h.size;
    if size > req.dst_size {
        return Err(BuildError::DoesNotFit { needed: size, available: req.dst_size });
    }
    let base = x.bvh_offset as u64;
    let nodes_end = base + x.slots as u64 * r2::SLOT_BYTES;
    if !base.is_multiple_of(r2::BASE_ALIGN) || nodes_end > size {
        return Err(bad("its node region lies outside it"));
    }
    if src != req.dst {
        mem.copy(req.dst, src, size).map_err(|fault| BuildError::Memory { what: "update copy".into(), fault })?;
    }
    // SAFETY: the destination range is the update's alone (Vulkan valid usage).
    let mut out = unsafe { device_bytes_mut(mem, req.dst, size) }
        .map_err(|fault| BuildError::Memory { what: "update destination".into(), fault })?;
    let (head, rest) = out.split_at_mut(base as usize);
    let (nodes, tail) = rest.split_at_mut((nodes_end - base) as usize);
    let mut ctx = Ctx {
        input,
        tris: Vec::new(),
        aabbs: Vec::new(),
        insts: None,
        headers: BlasHeaders::new(mem, RtArch::Rdna2),
        geom_flags: req.geometries.iter().map(|g| g.flags).collect(),
        nodes,
        slots: x.slots,
        visits: 0,
    };
    for (gi, g) in req.geometries.iter().enumerate() {
        let gi = gi as u32;
        match g.geometry {
            Geometry::Triangles { .. } => ctx.tris.push(TriReader::new(input, g, gi)?),
            Geometry::Aabbs { .. } => ctx.aabbs.push(AabbReader::new(input, g, gi)?),
            Geometry::Instances { .. } => ctx.insts = Some(InstanceReader::new(input, g, gi)?),
        }
    }
    let bounds = if h.root == ptr::INVALID {
        Aabb { lo: [0.0; 3], hi: [0.0; 3] }
    } else {
        let b = ctx.refit(h.root, 0)?;
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
    if h.kind == bvh::KIND_TOP {
        let mut table = std::mem::take(&mut ctx.headers.table);
        table.sort_unstable();
        table.dedup();
        let slots = tail.len() / 8;
        if table.len() > slots {
            return Err(bad(format!("{} BLASes are referenced but its table holds {slots}", table.len())));
        }
        tail.fill(0);
        for (i, a) in table.iter().enumerate() {
            wr_u64(tail, 8 * i, *a);
        }
        nh.blas_count = table.len() as u32;
    }
    r2::write_header(&nh, &x, &mut head[..header::BYTES]);
    Ok(BuildStats {
        builder: None,
        prims: h.prim_count as u64,
        nodes: h.node_count as u64,
        leaves: h.leaf_count as u64,
        bytes: size,
        sah_cost: 0.0,
        phases: Phases::default(),
    })
}

impl Ctx<'_> {
    /// The bytes of the node `p` names, checked against the region.
    fn node(&mut self, p: u32) -> Result<&mut [u8], BuildError> {
        let (s, n) = (ptr::slot(p), ptr::slots(ptr::ty(p)));
        if s.checked_add(n).is_none_or(|e| e > self.slots) {
            return Err(bad(format!("node pointer {p:#x} is outside its {} slots", self.slots)));
        }
        let at = s as usize * r2::SLOT_BYTES as usize;
        Ok(&mut self.nodes[at..at + n as usize * r2::SLOT_BYTES as usize])
    }

    /// Refits the node `p` names (at `depth` below the root); returns its exact box (empty
    /// for primitives that became inactive).
    fn refit(&mut self, p: u32, depth: u32) -> Result<Aabb, BuildError> {
        self.visits += 1;
        if depth > 1024 || self.visits > 4 * self.slots as u64 + 4 {
            return Err(bad("its nodes do not form a tree"));
        }
        match ptr::ty(p) {
            ptr::BOX16 | ptr::BOX32 => self.box_node(p, depth),
            ptr::TRI0..=ptr::TRI3 => self.triangle(p),
            ptr::AABB => self.aabb(p),
            _ => self.instance(p),
        }
    }

    fn box_node(&mut self, p: u32, depth: u32) -> Result<Aabb, BuildError> {
        let fp16 = ptr::ty(p) == ptr::BOX16;
        let (child, _) = r2::read_box_node(self.node(p)?, fp16);
        let mut boxes = [r2::EMPTY_BOX; 4];
        let mut union = Aabb::EMPTY;
        for i in 0..4 {
            if child[i] == ptr::INVALID {
                continue;
            }
            let b = self.refit(child[i], depth + 1)?;
            if !b.is_empty() {
                boxes[i] = NodeBox { lo: b.lo, hi: b.hi };
                union.grow(&b);
            }
        }
        let n = self.node(p)?;
        if fp16 {
            let h = r2::box16_of(&boxes, &child).ok_or_else(|| bad("an FP16 box node's new boxes have no halves"))?;
            r2::write_box16(n, &child, &h);
        } else {
            r2::write_box32(n, &child, &boxes);
        }
        Ok(union)
    }

    fn triangle(&mut self, p: u32) -> Result<Aabb, BuildError> {
        let k = ptr::ty(p) as usize;
        let n = self.node(ptr::make(ptr::slot(p), ptr::BOX32))?;
        let side = &n[r2::SLOT_BYTES as usize..];
        let (prim, gw, order) = (
            rd_u32(side, r2::tri_side::prim(k)),
            rd_u32(side, r2::tri_side::geom(k)),
            rd_u32(side, r2::tri_side::order(k)),
        );
        let g = (gw & 0x00FF_FFFF) as usize;
        let reader = self.tris.get(g).ok_or_else(|| bad(format!("triangle node {p:#x}: no geometry {g}")))?;
        if prim >= reader.count {
            return Err(bad(format!("triangle {prim} of geometry {g} is past the update's count")));
        }
        let v = reader.tri(prim)?;
        let flags = self.geom_flags[g];
        let n = self.node(ptr::make(ptr::slot(p), ptr::BOX32))?;
        wr_u32(&mut n[r2::SLOT_BYTES as usize..], r2::tri_side::geom(k), r2::geom_word(g as u32, flags));
        let vs = v.unwrap_or([[f32::NAN; 3]; 3]);
        for j in 0..3 {
            let slot = (order >> (4 * j) & 0xF) as usize;
            if slot > 4 {
                return Err(bad(format!("triangle node {p:#x} names vertex {slot}")));
            }
            for a in 0..3 {
                wr_f32(n, r2::tri::vertex(slot) + 4 * a, vs[j][a]);
            }
        }
        Ok(v.map_or(Aabb::EMPTY, |v| input::tri_box(&v)))
    }

    fn aabb(&mut self, p: u32) -> Result<Aabb, BuildError> {
        let n = self.node(p)?;
        let (prim, gw) = (rd_u32(n, r2::aabb::PRIM), rd_u32(n, r2::aabb::GEOM));
        let g = (gw & 0x00FF_FFFF) as usize;
        let reader = self.aabbs.get(g).ok_or_else(|| bad(format!("AABB node {p:#x}: no geometry {g}")))?;
        if prim >= reader.count {
            return Err(bad(format!("AABB {prim} of geometry {g} is past the update's count")));
        }
        let b = reader.aabb(prim).unwrap_or(Aabb::EMPTY);
        let flags = self.geom_flags[g];
        let n = self.node(p)?;
        for a in 0..3 {
            wr_f32(n, r2::aabb::MIN + 4 * a, b.lo[a]);
            wr_f32(n, r2::aabb::MAX + 4 * a, b.hi[a]);
        }
        wr_u32(n, r2::aabb::GEOM, r2::geom_word(g as u32, flags));
        Ok(b)
    }

    fn instance(&mut self, p: u32) -> Result<Aabb, BuildError> {
        if ptr::ty(p) != ptr::INSTANCE {
            return Err(bad(format!("node pointer {p:#x} of type {}", ptr::ty(p))));
        }
        let i = rd_u32(self.node(p)?, r2::inst::INDEX);
        let reader = self.insts.as_ref().ok_or_else(|| bad("an instance node in a bottom-level update"))?;
        if i >= reader.count {
            return Err(bad(format!("instance {i} is past the update's count")));
        }
        let rec = reader.record(i)?;
        let made = input::instance(self.input, &mut self.headers, &rec, i)?;
        let root = made.as_ref().and_then(|(d, _)| self.headers.roots.get(&d.blas).copied());
        let n = self.node(p)?;
        let old_blas = rd_u64(n, r2::inst::BLAS);
        let (leaf, b) = match made {
            Some((d, b)) => (d, b),
            // Inactive now: a zero mask never passes the mask test.
            None => (
                bvh::inst::Leaf {
                    index: i,
                    custom_mask: rec.custom_mask & 0x00ff_ffff,
                    sbt_flags: rec.sbt_flags,
                    w2o: vortex_model::rtu::isect::IDENTITY_3X4,
                    o2w: vortex_model::rtu::isect::IDENTITY_3X4,
                    blas: old_blas,
                },
                Aabb::EMPTY,
            ),
        };
        for k in 0..12 {
            wr_f32(n, r2::inst::W2O + 4 * k, leaf.w2o[k]);
            wr_f32(n, r2::inst::O2W + 4 * k, leaf.o2w[k]);
        }
        wr_u64(n, r2::inst::BLAS, leaf.blas);
        if let Some(r) = root {
            wr_u32(n, r2::inst::BLAS_ROOT, r.root);
            wr_u32(n, r2::inst::BLAS_BVH_OFFSET, r.bvh_offset);
        }
        wr_u32(n, r2::inst::CUSTOM_MASK, leaf.custom_mask);
        wr_u32(n, r2::inst::SBT_FLAGS, leaf.sbt_flags);
        Ok(b)
    }
}
