//! The RTU ops' data contract: the TRACE ray operand, the hit-window slot map, status codes,
//! callback actions, ray/instance/geometry flags.
//!
//! The hit window is a per-(warp, query slot, lane) file of 32-bit slots. The RTU is its sole
//! writer; kernels read it with `GETW` (integer slots) and `GETWF` (float slots). A record
//! always ends with the write of [`STATUS`]: a parked `WAIT` completes on that write, so every
//! other word of the record is in place first.
//!
//! Departures from seed 000 §3, and why:
//! - the window carries a *committed* span and a *candidate* span side by side, because a ray
//!   query may read either at any time (`rayQueryGet*EXT(q, committed)`);
//! - it echoes the world ray (origin, direction, tmin, flags, cull mask) because ray queries
//!   read them back, and a dynamically indexed query array cannot keep them in registers;
//! - it carries the object<->world matrices of the committed and candidate instances, and
//!   the addresses of the committed and candidate triangles' records (position fetch);
//! - a warp may hold up to [`MAX_QUERIES`] traces at once (the seed's open gap): the window,
//!   the staging entry and the trace handle are per query slot, not per warp.

/// Ray query slots a kernel may declare (per lane). Arrays of up to 48 queries must fit.
pub const MAX_QUERIES: u32 = 64;

/// Window slots per record.
pub const SLOT_COUNT: u32 = 96;

/// The TRACE ray operand: 12 consecutive registers starting at the `b` operand.
pub mod ray {
    pub const ORIGIN: u32 = 0;
    pub const TMIN: u32 = 3;
    pub const DIR: u32 = 4;
    pub const TMAX: u32 = 7;
    pub const FLAGS: u32 = 8;
    pub const CULL_MASK: u32 = 9;
    /// Acceleration-structure device address (low, high word). 0 means "no structure":
    /// the query completes as a miss.
    pub const AS_LO: u32 = 10;
    pub const AS_HI: u32 = 11;
    pub const REGS: u32 = 12;
}

/// Ray echo: written at arm, identical to the TRACE operand's first 10 words.
pub const RAY_ORIGIN: u32 = 0;
pub const RAY_TMIN: u32 = 3;
pub const RAY_DIR: u32 = 4;
pub const RAY_TMAX: u32 = 7;
pub const RAY_FLAGS: u32 = 8;
pub const RAY_CULL_MASK: u32 = 9;

/// Base of the committed-hit span.
pub const COMMITTED: u32 = 10;
/// Base of the candidate span.
pub const CANDIDATE: u32 = 50;

/// Offsets inside a span (committed or candidate).
pub mod span {
    /// Hit distance (float).
    pub const T: u32 = 0;
    /// Barycentrics of v1 and v2 (float).
    pub const U: u32 = 1;
    pub const V: u32 = 2;
    /// Primitive index within its geometry.
    pub const PRIM: u32 = 3;
    /// Index of the instance in the TLAS's instance array (`gl_InstanceID`-style).
    pub const INST_ID: u32 = 4;
    pub const GEOM: u32 = 5;
    /// Instance custom index (24 bits).
    pub const CUSTOM: u32 = 6;
    /// Instance SBT record offset (24 bits).
    pub const SBT: u32 = 7;
    /// Committed: [`super::COMMITTED_NONE`]/`TRIANGLE`/`GENERATED`; candidate:
    /// [`super::CANDIDATE_TRIANGLE`]/`AABB`.
    pub const KIND: u32 = 8;
    /// 1 when the triangle is front-facing.
    pub const FRONT: u32 = 9;
    /// Object-space ray (float).
    pub const OBJ_ORIGIN: u32 = 10;
    pub const OBJ_DIR: u32 = 13;
    /// Object-to-world 3x4 matrix, row-major like `VkTransformMatrixKHR` (float).
    pub const O2W: u32 = 16;
    /// World-to-object 3x4 matrix, row-major (float).
    pub const W2O: u32 = 28;
    pub const LEN: u32 = 40;
}

/// 1 when the candidate AABB's geometry is opaque (after instance flags).
pub const CAND_AABB_OPAQUE: u32 = 90;
/// Status of the record; written last.
pub const STATUS: u32 = 91;
/// Device address (low, high word) of the committed triangle's record in its BLAS leaf
/// (`bvh::tri`: v0, v1, v2 as f32x3, as built), 0 when the commit is not a triangle. Ray
/// queries read vertex positions through it (`GL_EXT_ray_tracing_position_fetch`).
pub const COMMITTED_TRI: u32 = 92;
/// The same for the candidate triangle.
pub const CANDIDATE_TRI: u32 = 94;

/// Terminal: traversal ended with a committed hit.
pub const STS_DONE_HIT: u32 = 0;
/// Terminal: traversal ended with nothing committed.
pub const STS_DONE_MISS: u32 = 1;
/// A non-opaque triangle candidate awaits the shader's decision.
pub const STS_YIELD_ANYHIT: u32 = 2;
/// A procedural (AABB) candidate awaits the shader's decision.
pub const STS_YIELD_PROC: u32 = 3;
/// This lane is still traversing; nothing to decide this round.
pub const STS_PENDING: u32 = 4;

/// True for statuses after which `rayQueryProceedEXT` returns false.
pub const fn status_is_terminal(s: u32) -> bool {
    s == STS_DONE_HIT || s == STS_DONE_MISS
}

/// True for statuses that hand a candidate to the shader.
pub const fn status_is_yield(s: u32) -> bool {
    s == STS_YIELD_ANYHIT || s == STS_YIELD_PROC
}

/// TRACE `imm` bit: the kernel confirms every candidate this trace yields (its proceed loop
/// is `while (proceed) confirm`, proved by the compiler, `docs/SHADER.md`). A functional RTU
/// may then accept each triangle candidate itself, counting it as handed over and
/// confirmed, instead of a WAIT/CONTINUE round trip; the results and counters are the same.
/// Timed mode ignores it: the modelled hardware makes every round trip.
pub const TRACE_CONFIRM_ALL: u32 = 1;

/// CONTINUE actions; a bit set, so ACCEPT|TERMINATE commits then stops.
pub const ACT_IGNORE: u32 = 0;
pub const ACT_ACCEPT: u32 = 1;
pub const ACT_TERMINATE: u32 = 2;

/// Committed intersection kinds (SPIR-V `RayQueryCommittedIntersectionType`).
pub const COMMITTED_NONE: u32 = 0;
pub const COMMITTED_TRIANGLE: u32 = 1;
pub const COMMITTED_GENERATED: u32 = 2;

/// Candidate intersection kinds (SPIR-V `RayQueryCandidateIntersectionType`).
pub const CANDIDATE_TRIANGLE: u32 = 0;
pub const CANDIDATE_AABB: u32 = 1;

/// Ray flags (SPIR-V `RayFlags`), given at run time.
pub mod ray_flags {
    pub const OPAQUE: u32 = 0x1;
    pub const NO_OPAQUE: u32 = 0x2;
    pub const TERMINATE_ON_FIRST_HIT: u32 = 0x4;
    pub const SKIP_CLOSEST_HIT: u32 = 0x8;
    pub const CULL_BACK_FACING: u32 = 0x10;
    pub const CULL_FRONT_FACING: u32 = 0x20;
    pub const CULL_OPAQUE: u32 = 0x40;
    pub const CULL_NO_OPAQUE: u32 = 0x80;
    pub const SKIP_TRIANGLES: u32 = 0x100;
    pub const SKIP_AABBS: u32 = 0x200;
    pub const FORCE_OPACITY_MICROMAP_2_STATE: u32 = 0x400;
}

/// Instance flags (`VkGeometryInstanceFlagBitsKHR`), stored in instance leaves.
pub mod instance_flags {
    pub const TRIANGLE_FACING_CULL_DISABLE: u32 = 0x1;
    pub const TRIANGLE_FLIP_FACING: u32 = 0x2;
    pub const FORCE_OPAQUE: u32 = 0x4;
    pub const FORCE_NO_OPAQUE: u32 = 0x8;
}

/// Geometry flags (`VkGeometryFlagBitsKHR`), stored in leaves.
pub mod geometry_flags {
    pub const OPAQUE: u32 = 0x1;
    pub const NO_DUPLICATE_ANY_HIT_INVOCATION: u32 = 0x2;
}

/// True if `slot` holds a float (read with `GETWF`); false for integer slots (`GETW`).
pub const fn slot_is_float(slot: u32) -> bool {
    match slot {
        RAY_ORIGIN..=RAY_TMAX => true,
        RAY_FLAGS | RAY_CULL_MASK => false,
        CAND_AABB_OPAQUE | STATUS => false,
        s if s >= COMMITTED && s < CANDIDATE + span::LEN => {
            let o = if s >= CANDIDATE { s - CANDIDATE } else { s - COMMITTED };
            o <= span::V || o >= span::OBJ_ORIGIN
        }
        _ => false,
    }
}

/// Slot name for the disassembler and logs.
pub fn slot_name(slot: u32) -> String {
    let span_name = |o: u32| -> String {
        match o {
            span::T => "t".into(),
            span::U => "u".into(),
            span::V => "v".into(),
            span::PRIM => "prim".into(),
            span::INST_ID => "inst".into(),
            span::GEOM => "geom".into(),
            span::CUSTOM => "custom".into(),
            span::SBT => "sbt".into(),
            span::KIND => "kind".into(),
            span::FRONT => "front".into(),
            o if (span::OBJ_ORIGIN..span::OBJ_ORIGIN + 3).contains(&o) => {
                format!("obj_origin[{}]", o - span::OBJ_ORIGIN)
            }
            o if (span::OBJ_DIR..span::OBJ_DIR + 3).contains(&o) => {
                format!("obj_dir[{}]", o - span::OBJ_DIR)
            }
            o if (span::O2W..span::O2W + 12).contains(&o) => format!("o2w[{}]", o - span::O2W),
            o if (span::W2O..span::W2O + 12).contains(&o) => format!("w2o[{}]", o - span::W2O),
            o => format!("+{o}"),
        }
    };
    match slot {
        s if s < RAY_TMIN => format!("ray.origin[{s}]"),
        RAY_TMIN => "ray.tmin".into(),
        s if (RAY_DIR..RAY_TMAX).contains(&s) => format!("ray.dir[{}]", s - RAY_DIR),
        RAY_TMAX => "ray.tmax".into(),
        RAY_FLAGS => "ray.flags".into(),
        RAY_CULL_MASK => "ray.cull_mask".into(),
        s if (COMMITTED..COMMITTED + span::LEN).contains(&s) => {
            format!("committed.{}", span_name(s - COMMITTED))
        }
        s if (CANDIDATE..CANDIDATE + span::LEN).contains(&s) => {
            format!("candidate.{}", span_name(s - CANDIDATE))
        }
        CAND_AABB_OPAQUE => "candidate.aabb_opaque".into(),
        STATUS => "status".into(),
        COMMITTED_TRI => "committed.tri".into(),
        CANDIDATE_TRI => "candidate.tri".into(),
        s => format!("slot{s}"),
    }
}

#[cfg(test)]
#[allow(clippy::assertions_on_constants)] // layout invariants read best as plain asserts
mod tests {
    use super::*;

    #[test]
    fn spans_do_not_overlap_and_status_is_last() {
        assert!(COMMITTED > RAY_CULL_MASK);
        assert!(COMMITTED + span::LEN <= CANDIDATE);
        assert!(CANDIDATE + span::LEN <= CAND_AABB_OPAQUE);
        assert!(CAND_AABB_OPAQUE < STATUS);
        assert!(STATUS < SLOT_COUNT);
        // The triangle addresses (two words each) sit after STATUS, inside the record.
        assert!(STATUS < COMMITTED_TRI && COMMITTED_TRI + 2 <= CANDIDATE_TRI);
        assert!(CANDIDATE_TRI + 2 <= SLOT_COUNT);
        assert_eq!(span::W2O + 12, span::LEN);
        // The ray echo mirrors the TRACE operand word for word.
        assert_eq!(RAY_TMIN, ray::TMIN);
        assert_eq!(RAY_DIR, ray::DIR);
        assert_eq!(RAY_TMAX, ray::TMAX);
        assert_eq!(RAY_FLAGS, ray::FLAGS);
        assert_eq!(RAY_CULL_MASK, ray::CULL_MASK);
    }

    #[test]
    fn slot_kinds() {
        assert!(slot_is_float(COMMITTED + span::T));
        assert!(slot_is_float(CANDIDATE + span::V));
        assert!(!slot_is_float(COMMITTED + span::PRIM));
        assert!(!slot_is_float(CANDIDATE + span::FRONT));
        assert!(slot_is_float(CANDIDATE + span::W2O + 11));
        assert!(!slot_is_float(STATUS));
        assert!(!slot_is_float(RAY_FLAGS));
        assert!(slot_is_float(RAY_TMAX));
        assert_eq!(slot_name(STATUS), "status");
        assert_eq!(slot_name(COMMITTED + span::T), "committed.t");
    }

    #[test]
    fn status_classes() {
        assert!(status_is_terminal(STS_DONE_HIT) && status_is_terminal(STS_DONE_MISS));
        assert!(status_is_yield(STS_YIELD_ANYHIT) && status_is_yield(STS_YIELD_PROC));
        assert!(!status_is_terminal(STS_PENDING) && !status_is_yield(STS_PENDING));
    }
}
