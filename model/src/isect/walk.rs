//! The rdna2 traversal loop on the host: what the shader's lowered ray query does, one
//! `ISECT` at a time (a stack of node pointers, sorted box results pushed far to near,
//! instance nodes transforming the ray into object space without renormalising it, so a
//! hit's t is the same in both spaces). Tests and the ray-log check use it as the reference
//! for the rdna2 walk; it finds the closest triangle hit (or, with terminate-on-first-hit, the
//! first one in the loop's order), every triangle taken as opaque and no face culled.
//!
//! Bounded (seed 004): a walk that takes more than `max_steps` node visits reports
//! [`WalkError::StepLimit`] instead of looping or turning into a miss.

use super::{intersect, tri_hit, IsectFault, IsectRay};
use crate::abi::rdna2::{self as r2, ptr, Descriptor};
use crate::abi::{bvh, rd_f32, rd_u32, rd_u64};
use crate::mem::MemoryMap;
use crate::rtu::isect::{xform_point, xform_vector};

/// A world-space ray.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WalkRay {
    pub org: [f32; 3],
    pub dir: [f32; 3],
    pub tmin: f32,
    pub tmax: f32,
    pub cull_mask: u32,
}

/// The closest hit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WalkHit {
    pub t: f32,
    pub u: f32,
    pub v: f32,
    pub front: bool,
    pub prim: u32,
    pub geom: u32,
    /// Index of the instance in the TLAS build's array (0 for a BLAS walked alone).
    pub inst: u32,
    /// The instance's custom index and SBT offset (0 outside an instance).
    pub custom: u32,
    pub sbt: u32,
    /// The triangle node's address with the triangle's index in its low bits (what the
    /// ray log keeps as the committed triangle).
    pub tri: u64,
}

/// What a walk did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkStats {
    /// `ISECT`s issued.
    pub isects: u64,
    pub box_tests: u64,
    pub tri_tests: u64,
    pub node_bytes: u64,
    /// Instance nodes entered.
    pub instances: u64,
    /// Deepest the stack got.
    pub stack_max: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WalkError {
    Fault(IsectFault),
    /// More node visits than the bound.
    StepLimit(u64),
    /// A header or instance node that is not an rdna2 structure's.
    Structure(String),
}

impl std::fmt::Display for WalkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WalkError::Fault(e) => write!(f, "{e}"),
            WalkError::StepLimit(n) => write!(f, "rdna2 walk: gave up after {n} node visits"),
            WalkError::Structure(s) => write!(f, "rdna2 walk: {s}"),
        }
    }
}

impl From<IsectFault> for WalkError {
    fn from(e: IsectFault) -> Self {
        WalkError::Fault(e)
    }
}

/// The descriptor and root of the structure at `addr`, and whether it is a top level.
pub fn open(mem: &MemoryMap, addr: u64) -> Result<(Descriptor, u32, bool), WalkError> {
    let mut hb = [0u8; bvh::header::BYTES];
    mem.read(addr, &mut hb).map_err(|f| WalkError::Structure(format!("header at {addr:#x}: {f}")))?;
    let (h, x) = r2::parse_header(&hb).map_err(|e| WalkError::Structure(format!("{e} (not an rdna2 structure)")))?;
    Ok((x.descriptor(addr), h.root, h.kind == bvh::KIND_TOP))
}

/// The instance a subtree belongs to: index, custom index, SBT offset, flip facing.
#[derive(Clone, Copy, Default)]
struct InstanceOf {
    index: u32,
    custom: u32,
    sbt: u32,
    flip: bool,
}

struct Walk<'a> {
    mem: &'a MemoryMap,
    ray: WalkRay,
    best: Option<WalkHit>,
    stats: WalkStats,
    steps: u64,
    max_steps: u64,
    /// Terminate on the first hit.
    first_hit: bool,
    /// Every read's (address, bytes), when asked (the ray log keeps those lines).
    reads: Option<&'a mut Vec<(u64, usize)>>,
}

/// The closest opaque triangle hit of `ray` in the structure at `addr`.
pub fn closest(
    mem: &MemoryMap,
    addr: u64,
    ray: &WalkRay,
    max_steps: u64,
) -> Result<(Option<WalkHit>, WalkStats), WalkError> {
    walk(mem, addr, ray, false, max_steps, None)
}

/// [`closest`], or with `first_hit` the first hit in the shader loop's order (ray flag
/// terminate-on-first-hit); `reads` collects the (address, length) of every read.
pub fn walk<'a>(
    mem: &'a MemoryMap,
    addr: u64,
    ray: &WalkRay,
    first_hit: bool,
    max_steps: u64,
    mut reads: Option<&'a mut Vec<(u64, usize)>>,
) -> Result<(Option<WalkHit>, WalkStats), WalkError> {
    if let Some(r) = reads.as_deref_mut() {
        r.push((addr, bvh::header::BYTES));
    }
    let (desc, root, _) = open(mem, addr)?;
    // The RTU's rule, which `Initialize` follows: such a ray never starts.
    let nan = ray.org.iter().chain(&ray.dir).any(|v| v.is_nan()) || ray.tmin.is_nan() || ray.tmax.is_nan();
    if nan || ray.dir == [0.0; 3] || ray.tmin > ray.tmax {
        return Ok((None, WalkStats::default()));
    }
    let mut w = Walk { mem, ray: *ray, best: None, stats: WalkStats::default(), steps: 0, max_steps, first_hit, reads };
    if root != ptr::INVALID {
        w.subtree(desc, root, ray.org, ray.dir, InstanceOf::default())?;
    }
    Ok((w.best, w.stats))
}

impl Walk<'_> {
    fn extent(&self) -> f32 {
        self.best.map_or(self.ray.tmax, |h| h.t)
    }

    /// Walks the tree under `root` with the ray `(org, dir)` of its space.
    fn subtree(
        &mut self,
        desc: Descriptor,
        root: u32,
        org: [f32; 3],
        dir: [f32; 3],
        inst: InstanceOf,
    ) -> Result<(), WalkError> {
        let inv = dir.map(|d| 1.0 / d);
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if self.first_hit && self.best.is_some() {
                break;
            }
            self.steps += 1;
            if self.steps > self.max_steps {
                return Err(WalkError::StepLimit(self.max_steps));
            }
            match ptr::ty(node) {
                ptr::INSTANCE => self.instance(desc, node)?,
                ptr::AABB => {} // procedural: the shader's candidate, not an opaque triangle
                ty => {
                    let r = IsectRay { node, extent: self.extent(), org, dir, inv };
                    let (words, work) = intersect(self.mem, desc, &r)?;
                    self.note(work.addr, work.bytes as usize);
                    self.stats.isects += 1;
                    self.stats.box_tests += work.box_tests as u64;
                    self.stats.tri_tests += work.tri_tests as u64;
                    self.stats.node_bytes += work.bytes as u64;
                    if ty >= ptr::BOX16 {
                        // Near to far: push far first.
                        stack.extend(words.iter().rev().filter(|&&c| c != r2::result::MISS));
                        self.stats.stack_max = self.stats.stack_max.max(stack.len() as u32);
                    } else {
                        self.triangle(desc, node, words, inst)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn note(&mut self, addr: u64, len: usize) {
        if let Some(r) = self.reads.as_deref_mut() {
            if len > 0 {
                r.push((addr, len));
            }
        }
    }

    fn triangle(&mut self, desc: Descriptor, node: u32, words: [u32; 4], inst: InstanceOf) -> Result<(), WalkError> {
        let Some((t, u, v, front)) = tri_hit(words, desc.return_mode, self.extent()) else { return Ok(()) };
        if t < self.ray.tmin {
            return Ok(());
        }
        let side = desc.base + ptr::offset(node) + r2::SLOT_BYTES;
        self.note(side, r2::tri_side::BYTES);
        let mut b = [0u8; r2::tri_side::BYTES];
        self.mem.read(side, &mut b).map_err(|f| WalkError::Structure(format!("triangle ids at {side:#x}: {f}")))?;
        let k = ptr::ty(node) as usize;
        let prim = rd_u32(&b, r2::tri_side::prim(k));
        let geom = rd_u32(&b, r2::tri_side::geom(k)) & 0x00FF_FFFF;
        let tri = desc.base + ptr::offset(node) + k as u64;
        let front = front != inst.flip;
        let InstanceOf { index, custom, sbt, .. } = inst;
        self.best = Some(WalkHit { t, u, v, front, prim, geom, inst: index, custom, sbt, tri });
        Ok(())
    }

    fn instance(&mut self, desc: Descriptor, node: u32) -> Result<(), WalkError> {
        let at = desc.base + ptr::offset(node);
        self.note(at, r2::inst::BYTES);
        let mut b = [0u8; r2::inst::BYTES];
        self.mem.read(at, &mut b).map_err(|f| WalkError::Structure(format!("instance node at {at:#x}: {f}")))?;
        self.stats.node_bytes += r2::inst::BYTES as u64;
        let mask = rd_u32(&b, r2::inst::CUSTOM_MASK) >> 24;
        if mask & self.ray.cull_mask & 0xFF == 0 {
            return Ok(());
        }
        self.stats.instances += 1;
        let w2o: [f32; 12] = std::array::from_fn(|k| rd_f32(&b, r2::inst::W2O + 4 * k));
        let blas = rd_u64(&b, r2::inst::BLAS);
        let root = rd_u32(&b, r2::inst::BLAS_ROOT);
        if root == ptr::INVALID {
            return Ok(());
        }
        self.note(blas, bvh::header::BYTES);
        let (bdesc, _, top) = open(self.mem, blas)?;
        if top {
            return Err(WalkError::Structure(format!("instance node at {at:#x} references a top level")));
        }
        let sbt_flags = rd_u32(&b, r2::inst::SBT_FLAGS);
        let of = InstanceOf {
            index: rd_u32(&b, r2::inst::INDEX),
            custom: rd_u32(&b, r2::inst::CUSTOM_MASK) & 0x00FF_FFFF,
            sbt: sbt_flags & 0x00FF_FFFF,
            flip: (sbt_flags >> 24) & crate::abi::rtu::instance_flags::TRIANGLE_FLIP_FACING != 0,
        };
        let org = xform_point(&w2o, self.ray.org);
        let dir = xform_vector(&w2o, self.ray.dir);
        self.subtree(bdesc, root, org, dir, of)
    }
}
