//! Ray queries on the rdna2 architecture (`docs/RDNA2.md`): traversal is the shader's, a
//! loop around the node-intersection op `ISECT` over the `abi::rdna2` layout, whose host
//! form is `model::isect::walk`.
//!
//! The loop is not emitted yet: a kernel that uses a ray query is refused at compile time,
//! with a message that says so (pipeline creation fails with an error code and a log
//! line), never compiled to code that would trace an rdna2 structure with the RTU's ops.
//! Kernels without ray queries compile as on any device.

use super::{HitMatrix, HitValue, Intersection, Ray, RayQueryOps, RayValue};
use crate::shader::error::{unsupported, CompileError, Result};
use crate::shader::lower::Lowerer;

pub(super) struct Rdna2;

fn refused<T>() -> Result<T> {
    Err(not_lowered())
}

fn not_lowered() -> CompileError {
    unsupported!("ray queries on the rdna2 architecture (VORTEX_RT_ARCH=rdna2): the shader traversal loop is not implemented yet")
}

impl RayQueryOps for Rdna2 {
    fn state_bytes(&self) -> u32 {
        0
    }

    fn max_queries(&self) -> u32 {
        vortex_model::abi::rtu::MAX_QUERIES
    }

    /// The RT unit is not used.
    fn rtu_slots(&self, _queries: u32) -> u32 {
        0
    }

    fn initialize(&self, _l: &mut Lowerer<'_>, _q: u16, _ray: &Ray) -> Result<()> {
        refused()
    }
    fn proceed(&self, _l: &mut Lowerer<'_>, _q: u16) -> Result<u16> {
        refused()
    }
    fn confirm(&self, _l: &mut Lowerer<'_>, _q: u16) -> Result<()> {
        refused()
    }
    fn generate(&self, _l: &mut Lowerer<'_>, _q: u16, _t: u16) -> Result<()> {
        refused()
    }
    fn terminate(&self, _l: &mut Lowerer<'_>, _q: u16) -> Result<()> {
        refused()
    }
    fn ray_value(&self, _l: &mut Lowerer<'_>, _q: u16, _v: RayValue) -> Result<u16> {
        refused()
    }
    fn hit_value(&self, _l: &mut Lowerer<'_>, _q: u16, _which: Intersection, _v: HitValue) -> Result<u16> {
        refused()
    }
    fn candidate_aabb_opaque(&self, _l: &mut Lowerer<'_>, _q: u16) -> Result<u16> {
        refused()
    }
    fn hit_matrix(&self, _l: &mut Lowerer<'_>, _q: u16, _which: Intersection, _m: HitMatrix) -> Result<u16> {
        refused()
    }
    fn triangle_vertices(&self, _l: &mut Lowerer<'_>, _q: u16, _which: Intersection) -> Result<u16> {
        refused()
    }
}
