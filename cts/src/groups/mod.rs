//! The cases, one module per dEQP group. Each module's `register` runs the same loops as
//! dEQP's `create*Tests` for the compute stage, so the names come out exactly as dEQP
//! prints them; `tests/lists.rs` checks them against the real lists.

pub mod accel;
pub mod builtin;
pub mod common;
pub mod direction;
pub mod host;
pub mod misc;
pub mod query;
pub mod rayflags;
pub mod traversal;

use crate::case::Case;

pub const LONG_STAGES: [&str; 12] = [
    "vertex_shader",
    "tess_control_shader",
    "tess_evaluation_shader",
    "geometry_shader",
    "fragment_shader",
    "compute_shader",
    "rgen_shader",
    "isect_shader",
    "ahit_shader",
    "chit_shader",
    "miss_shader",
    "call_shader",
];

/// Every case of C0-C2 in dEQP's registration order, then C4 (host builds).
pub fn register(cases: &mut Vec<Case>) {
    builtin::register(cases);
    traversal::register_traversal_control(cases);
    register_acceleration_structures(cases);
    query::register_procedural(cases);
    builtin::register_advanced(cases);
    traversal::register_watertightness(cases);
    rayflags::register(cases);
    misc::register(cases);
    direction::register(cases);
    direction::register_inside_aabbs(cases);
    query::register_barycentric(cases);
    query::register_non_uniform_args(cases);
    query::register_multiple_and_stress(cases);
    host::register(cases);
}

fn register_acceleration_structures(cases: &mut Vec<Case>) {
    accel::register_flags(cases);
    accel::register_format(cases);
    accel::register_rest(cases);
}
