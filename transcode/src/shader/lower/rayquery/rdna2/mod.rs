//! Ray queries on the rdna2 architecture (`docs/RDNA2.md`): traversal is the shader's, a
//! loop around the node-intersection op `ISECT` over the `abi::rdna2` layout, whose host
//! form is `model::isect::walk`.
//!
//! Per query slot, private memory holds the query's whole state ([`state`]): the ray, the
//! loop's registers between proceeds, the candidate and committed records and a short
//! stack. `Initialize` builds the descriptor from the structure's header and pushes the
//! root; `Proceed` runs the loop ([`walk`]) until a candidate needs the shader or the walk
//! ends; Confirm / Generate commit the candidate at once (the interval shrinks to it),
//! Terminate ends the walk; the getters read the records (the matrices and the vertices
//! from the instance and triangle nodes they point at).

mod ops;
mod state;
mod walk;

use super::{HitMatrix, HitValue, Intersection, Ray, RayQueryOps, RayValue};
use crate::shader::error::Result;
use crate::shader::lower::Lowerer;
use ops::{block, icmpk, ldg, op, opk};
use state::{self as st, rec};
use vortex_model::abi::isa::{IntCond, Op as Vx};
use vortex_model::abi::rdna2 as r2;

pub(super) struct Rdna2 {
    /// Report each query to the device's ray log (`RQLOG` after `Initialize` and after
    /// every proceed).
    pub raylog: bool,
}

/// Query slots a kernel may hold: their state must fit the compiler's private budget.
const MAX_QUERIES: u32 = 64;
const _: () = assert!(MAX_QUERIES * st::BYTES <= 48 * 1024);

impl RayQueryOps for Rdna2 {
    fn state_bytes(&self) -> u32 {
        st::BYTES
    }

    fn max_queries(&self) -> u32 {
        MAX_QUERIES
    }

    /// The RT unit is not used.
    fn rtu_slots(&self, _queries: u32) -> u32 {
        0
    }

    fn initialize(&self, l: &mut Lowerer<'_>, q: u16, ray: &Ray) -> Result<()> {
        walk::initialize(l, q, ray)?;
        if self.raylog {
            walk::log(l, q, r2::query::LOG_ARM, Some(ray.accel))?;
        }
        Ok(())
    }

    fn proceed(&self, l: &mut Lowerer<'_>, q: u16) -> Result<u16> {
        let res = walk::proceed(l, q)?;
        if self.raylog {
            walk::log(l, q, r2::query::LOG_PROCEED, None)?;
        }
        Ok(res)
    }

    fn confirm(&self, l: &mut Lowerer<'_>, q: u16) -> Result<()> {
        walk::commit(l, q, None)
    }

    fn generate(&self, l: &mut Lowerer<'_>, q: u16, t: u16) -> Result<()> {
        walk::commit(l, q, Some(t))
    }

    fn terminate(&self, l: &mut Lowerer<'_>, q: u16) -> Result<()> {
        walk::terminate(l, q)
    }

    fn ray_value(&self, l: &mut Lowerer<'_>, q: u16, v: RayValue) -> Result<u16> {
        let (at, n) = match v {
            RayValue::TMin => (st::TMIN, 1),
            RayValue::Flags => (st::FLAGS, 1),
            RayValue::WorldOrigin => (st::WORLD_ORG, 3),
            RayValue::WorldDirection => (st::WORLD_DIR, 3),
        };
        let s = st::base(l, q)?;
        st::fetch(l, s, at, n)
    }

    fn hit_value(&self, l: &mut Lowerer<'_>, q: u16, which: Intersection, v: HitValue) -> Result<u16> {
        let (at, n) = match v {
            HitValue::Type => (rec::KIND, 1),
            HitValue::T => (rec::T, 1),
            HitValue::InstanceCustomIndex => (rec::CUSTOM, 1),
            HitValue::InstanceId => (rec::INST_ID, 1),
            HitValue::SbtOffset => (rec::SBT, 1),
            HitValue::GeometryIndex => (rec::GEOM, 1),
            HitValue::PrimitiveIndex => (rec::PRIM, 1),
            HitValue::Barycentrics => (rec::U, 2),
            HitValue::FrontFace => (rec::FRONT, 1),
            HitValue::ObjectRayOrigin => (rec::OBJ_ORG, 3),
            HitValue::ObjectRayDirection => (rec::OBJ_DIR, 3),
        };
        let s = st::base(l, q)?;
        st::fetch(l, s, record(which) + at, n)
    }

    fn candidate_aabb_opaque(&self, l: &mut Lowerer<'_>, q: u16) -> Result<u16> {
        let s = st::base(l, q)?;
        st::fetch(l, s, st::CAND + rec::AABB_OPAQUE, 1)
    }

    /// From the instance node (row-major 3x4) into SPIR-V's mat4x3 (column c, row r =
    /// node[r * 4 + c]); the identity outside an instance.
    fn hit_matrix(&self, l: &mut Lowerer<'_>, q: u16, which: Intersection, m: HitMatrix) -> Result<u16> {
        let off = match m {
            HitMatrix::ObjectToWorld => r2::inst::O2W,
            HitMatrix::WorldToObject => r2::inst::W2O,
        };
        let s = st::base(l, q)?;
        let addr = st::fetch(l, s, record(which) + rec::INST_ADDR, 2)?;
        let out = l.e.alloc(12)?;
        for c in 0..4u16 {
            for r in 0..3u16 {
                l.e.movi(out + c * 3 + r, if c == r { 1.0f32.to_bits() } else { 0 });
            }
        }
        let (load, join) = (block(l, "matrix"), block(l, "matrix.join"));
        let any = op(l, Vx::Or, addr, addr + 1)?;
        let some = icmpk(l, IntCond::Ne, any, 0)?;
        l.e.bra(some, load, join, join);
        l.e.place(load)?;
        let rows = ldg(l, addr, off as u32, 12)?;
        for c in 0..4u16 {
            for r in 0..3u16 {
                l.e.mov(out + c * 3 + r, rows + r * 4 + c);
            }
        }
        l.e.jmp(join);
        l.e.place(join)?;
        Ok(out)
    }

    /// The triangle node's vertices in the application's order (the side record's order
    /// word), as built.
    fn triangle_vertices(&self, l: &mut Lowerer<'_>, q: u16, which: Intersection) -> Result<u16> {
        let s = st::base(l, q)?;
        let tri = st::fetch(l, s, record(which) + rec::TRI_ADDR, 3)?; // address, k
        let (node, k) = (tri, tri + 2);
        let side = opk(l, Vx::Shl, k, 2)?;
        let side = ops::add64(l, node, side)?;
        let order = ldg(l, side, (r2::SLOT_BYTES as usize + r2::tri_side::order(0)) as u32, 1)?;
        let d = l.e.alloc(9)?;
        for v in 0..3u32 {
            let idx = opk(l, Vx::Shr, order, 4 * v)?;
            let idx = opk(l, Vx::And, idx, 0xF)?;
            let off = opk(l, Vx::Imul, idx, 12)?;
            const { assert!(r2::tri::vertex(1) == 12) };
            let at = ops::add64(l, node, off)?;
            ops::ldg_into(l, d + 3 * v as u16, at, r2::tri::vertex(0) as u32, 3);
        }
        Ok(d)
    }
}

/// First state word of the candidate or committed record.
fn record(which: Intersection) -> u32 {
    match which {
        Intersection::Candidate => st::CAND,
        Intersection::Committed => st::COMM,
    }
}
