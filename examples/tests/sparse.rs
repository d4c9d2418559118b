//! Sparse binding through the loader (the `sparse` program) on both ICDs: scattered
//! bindings, rebinding between submissions, acceleration structures in sparse memory, and
//! (ours only: lavapipe has no fault model for unbound pages) a read of an unbound page.
//! On ours also in timed mode, where the TLBs count the translations of sparse pages.

use std::process::{Command, Output};
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn run(icd: &str, envs: &[(&str, &str)]) -> (Output, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sparse"))
        .args(["--icd", icd])
        .envs(envs.iter().copied())
        .output()
        .expect("cannot start sparse");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "sparse on {icd} failed ({}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("4/4 sparse-binding checks passed"), "{stdout}");
    (out, stdout, stderr)
}

#[test]
fn sparse_binding_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    let (_, stdout, _) = run("lavapipe", &[]);
    assert!(stdout.contains("not run: only our device"), "{stdout}");
}

#[test]
fn sparse_binding_on_vortex() {
    let (_, stdout, stderr) = run("vortex", &[]);
    assert!(stdout.contains("PASS a read of an unbound page loses the device: VK_ERROR_DEVICE_LOST"), "{stdout}");
    // The fault is logged once, with the address and the page that is not bound.
    let lost: Vec<&str> = stderr.lines().filter(|l| l.contains("VK_ERROR_DEVICE_LOST")).collect();
    assert_eq!(lost.len(), 1, "{stderr}");
    assert!(
        lost[0].contains("memory fault") && lost[0].contains("of a sparse resource has no memory bound"),
        "{}",
        lost[0]
    );
    assert!(lost[0].contains("device address 0x") && lost[0].contains("page 0x"), "{}", lost[0]);
}

#[test]
fn sparse_binding_in_timed_mode_counts_translations() {
    let stats = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("sparse-stats.jsonl");
    let _ = std::fs::remove_file(&stats);
    let path = stats.to_str().expect("a UTF-8 path");
    run("vortex", &[("VORTEX_MODE", "timed"), ("VORTEX_STATS", path)]);
    let text = std::fs::read_to_string(&stats).expect("the stats file");
    let records: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    let sum = |unit: &str, field: &str| -> u64 {
        records.iter().map(|r| r["memory"][unit][field].as_u64().expect("a TLB counter")).sum()
    };
    let (lsu, lsu_miss, rtu, rtu_miss) =
        (sum("lsu_tlb", "lookups"), sum("lsu_tlb", "misses"), sum("rtu_tlb", "lookups"), sum("rtu_tlb", "misses"));
    // The shaders read and write sparse buffers; the trace walks a sparse TLAS and BLAS.
    assert!(lsu > 0 && lsu_miss > 0 && lsu_miss < lsu, "LSU TLB {lsu} lookups, {lsu_miss} misses");
    assert!(rtu > 0 && rtu_miss > 0 && rtu_miss < rtu, "RTU TLB {rtu} lookups, {rtu_miss} misses");
    // The dispatch that traces the ordinary scene translates nothing.
    assert!(records.iter().any(|r| r["memory"]["rtu_tlb"]["lookups"] == 0 && r["rtu"]["rays"].as_u64() > Some(0)));
}
