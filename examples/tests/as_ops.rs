//! Every device-timeline way of building, updating, copying, compacting, serializing and
//! querying an acceleration structure, on both ICDs.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn run(icd: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_as_ops")).args(["--icd", icd]).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "as_ops on {icd} failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("7/7 acceleration-structure operation checks passed"), "{stdout}");
    stdout.into_owned()
}

#[test]
fn structure_operations_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    run("lavapipe");
}

#[test]
fn structure_operations_on_vortex() {
    let out = run("vortex");
    // Every vertex format of the conformance matrix, the optional ones lavapipe lacks
    // (R8G8B8_SNORM, R16G16B16_SNORM, the 64-bit ones) included, is offered and traced.
    assert!(out.contains("15 formats x 3 index types (0 not offered)"), "{out}");
}

/// The CW-BVH6 knob and the multi-triangle leaf option through the loader: every check
/// again on 6-wide nodes with up to 4 triangles per leaf.
#[test]
fn structure_operations_on_vortex_cw_bvh6_multi_triangle_leaves() {
    let out = Command::new(env!("CARGO_BIN_EXE_as_ops"))
        .args(["--icd", "vortex"])
        .env("VORTEX_BVH_WIDTH", "6")
        .env("VORTEX_BVH_LEAF", "4")
        .output()
        .expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("CW-BVH6") && stdout.contains("7/7 acceleration-structure operation checks passed"));
    // A width the model does not build is refused, not replaced.
    let out = Command::new(env!("CARGO_BIN_EXE_as_ops"))
        .args(["--icd", "vortex"])
        .env("VORTEX_BVH_WIDTH", "5")
        .output()
        .expect("start");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("VORTEX_BVH_WIDTH"));
}
