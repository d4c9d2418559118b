//! The cases, one module per dEQP group. Each module's `register` runs the same loops as
//! dEQP's `create*Tests` for the compute stage, so the names come out exactly as dEQP
//! prints them; `tests/lists.rs` checks them against the real lists.

pub mod accel;
pub mod builtin;
pub mod common;
pub mod direction;
pub mod misc;
pub mod traversal;

use crate::case::{Case, TestError, ROOT};

/// A case whose port is not written yet: reported as Skip with this reason, never as Pass.
pub fn not_ported(name: String) -> Case {
    Case::new(name, |_| Err(TestError::NotSupported("not ported yet (vortex-cts)".into())))
}

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

/// Every case of C0-C2 in dEQP's registration order.
pub fn register(cases: &mut Vec<Case>) {
    builtin::register(cases);
    traversal::register_traversal_control(cases);
    register_acceleration_structures(cases);
    for t in ["object_behind_bounding_boxes", "triangle_in_between"] {
        cases.push(not_ported(format!("{ROOT}.procedural_geometry.{t}")));
    }
    builtin::register_advanced(cases);
    traversal::register_watertightness(cases);
    register_ray_flags(cases);
    misc::register(cases);
    direction::register(cases);
    direction::register_inside_aabbs(cases);
    cases.push(not_ported(format!("{ROOT}.barycentric_coordinates.compute")));
    cases.push(not_ported(format!("{ROOT}.non_uniform_args.no_miss")));
    for i in 1..=6 {
        cases.push(not_ported(format!("{ROOT}.non_uniform_args.miss_cause_{i}")));
    }
    cases.push(not_ported(format!("{ROOT}.multiple_ray_queries.compute_shader")));
    for g in ["triangles", "aabbs"] {
        cases.push(not_ported(format!("{ROOT}.stress.compute_shader.{g}")));
    }
}

fn register_ray_flags(cases: &mut Vec<Case>) {
    let groups: [(&str, &[&str], bool); 4] = [
        ("opacity", &["none", "opaque", "noopaque", "cullopaque", "cullnoopaque"], true),
        ("terminate_on_first_hit", &["terminateonfirsthit"], true),
        ("face_culling", &["cullbackfacingtriangles", "cullfrontfacingtriangles"], false),
        ("skip_geometry", &["skiptriangles", "skipaabb"], true),
    ];
    for (group, flags, with_aabbs) in groups {
        for g in ["triangles", "aabbs"] {
            if g == "aabbs" && !with_aabbs {
                continue;
            }
            for f in flags {
                cases.push(not_ported(format!("{ROOT}.ray_flags.compute_shader.{group}.{g}.{f}")));
            }
        }
    }
}

fn register_acceleration_structures(cases: &mut Vec<Case>) {
    let a = format!("{ROOT}.acceleration_structures");
    let res = "traditional_structures";
    let stage = "compute_shader";
    let built = "gpu_built";
    accel::register_flags(cases);
    accel::register_format(cases);
    // operations
    for op in ["copy", "compaction", "serialization"] {
        for target in ["top_acceleration_structure", "bottom_acceleration_structure"] {
            for g in ["triangles", "aabbs"] {
                cases.push(not_ported(format!("{a}.operations.{res}.{stage}.{op}.{built}.{target}.{g}")));
            }
        }
    }
    cases.push(not_ported(format!("{a}.function_argument.{res}.{built}")));
    for idx in ["index_none", "index_uint16", "index_uint32"] {
        for tr in ["transformed", "notransform"] {
            for f in ["noflags", "ccw", "nocull", "ccw_nocull"] {
                cases.push(not_ported(format!("{a}.instance_triangle_culling.{res}.{stage}.{built}.{idx}.{tr}_{f}")));
            }
        }
    }
    for u in ["update", "update_in_place"] {
        cases.push(not_ported(format!("{a}.instance_update.{res}.{built}.{u}")));
    }
    cases.push(not_ported(format!("{a}.dynamic_indexing.{res}.dynamic_indexing")));
    for idx in ["index_none", "index_uint16", "index_uint32"] {
        for e in [
            "inactive_triangles",
            "inactive_instances",
            "no_geometries_bottom",
            "no_primitives_top",
            "no_primitives_bottom",
        ] {
            cases.push(not_ported(format!("{a}.empty.{res}.{stage}.{built}.{idx}.{e}")));
        }
    }
}
