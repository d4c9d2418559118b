//! `bench --arch rtu,rdna2`: the two ray-tracing architectures of our ICD side by side on
//! the bench scenes (`docs/RDNA2.md`). Per scene, architecture and trace workload: rays/s
//! in functional mode, and from a timed run's `VORTEX_STATS` records the simulated cycles,
//! shader instructions, node fetches and box/triangle tests per ray, the traversal stack's
//! private-memory traffic per ray (rdna2's shader stack; the RTU keeps its short stack in
//! the unit: 0), the RT unit's (rtu) or the intersection units' (rdna2) utilisation, and
//! SIMT efficiency (active lanes per issued warp instruction). The hit pixels of every workload must agree across the
//! architectures.

use serde_json::Value;
use std::process::Command;

/// One dispatch's counters, per ray where it says so.
#[derive(Clone, Debug, Default)]
struct Timed {
    cycles: f64,
    instrs: f64,
    fetches: f64,
    boxes: f64,
    tris: f64,
    /// Traversal-stack bytes to and from private memory.
    stack: f64,
    /// Busy fraction of the unit that tests nodes.
    util: f64,
    simt: f64,
}

fn worker(arch: &str, timed: bool, scene: &str, size: (u32, u32), samples: u32, stats: &str) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.args(["--worker", "--icd", "vortex", "--scenes", scene, "--samples", &samples.to_string()]);
    cmd.args(["--size", &format!("{}x{}", size.0, size.1)]);
    cmd.env("VORTEX_RT_ARCH", arch).env("VORTEX_MODE", if timed { "timed" } else { "functional" });
    cmd.env_remove("VORTEX_CONFIG");
    if timed {
        let _ = std::fs::remove_file(stats);
        cmd.env("VORTEX_STATS", stats);
    } else {
        cmd.env_remove("VORTEX_STATS");
    }
    let out = cmd.output().map_err(|e| format!("cannot start the {arch} worker: {e}"))?;
    if !out.status.success() {
        return Err(format!("{arch} on {scene} failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One workload's (seconds, rays, hit pixels).
type Mode = (f64, u64, u64);

/// Per workload (in order), from a worker's output.
fn modes(out: &str) -> Vec<Mode> {
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                ["mode", _, s, r, h] => Some((s.parse().ok()?, r.parse().ok()?, h.parse().ok()?)),
                _ => None,
            }
        })
        .collect()
}

fn num(v: &Value, path: &[&str]) -> f64 {
    path.iter().fold(v, |v, k| &v[*k]).as_f64().unwrap_or(0.0)
}

/// The trace dispatches' records (the last three of the file: the workloads, in order).
fn timed_records(stats: &str, arch: &str, rays: &[Mode]) -> Result<Vec<Timed>, String> {
    let text = std::fs::read_to_string(stats).map_err(|e| format!("{stats}: {e}"))?;
    let recs: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    if recs.len() < rays.len() {
        return Err(format!("{stats}: {} records for {} workloads", recs.len(), rays.len()));
    }
    let recs = &recs[recs.len() - rays.len()..];
    let nt = 32.0;
    Ok(recs
        .iter()
        .zip(rays)
        .map(|(r, &(_, n, _))| {
            let n = n.max(1) as f64;
            let cycles = num(r, &["cycles"]);
            let stack = if arch == "rdna2" { num(r, &["isect", "stack_bytes"]) } else { 0.0 };
            let (fetches, boxes, tris, util) = if arch == "rdna2" {
                let cores = r["cores"].as_array().map_or(&[][..], |v| v.as_slice());
                let test: f64 = cores.iter().map(|c| num(c, &["isect", "test_cycles"])).sum();
                let util = test / (cycles * cores.len().max(1) as f64);
                (
                    num(r, &["isect", "node_fetches"]),
                    num(r, &["isect", "box_tests"]),
                    num(r, &["isect", "tri_tests"]),
                    util,
                )
            } else {
                let f = num(r, &["rtu", "node_fetches"]);
                (f, num(r, &["rtu", "box_tests"]), num(r, &["rtu", "tri_tests"]), num(r, &["rtu", "timed", "busy"]))
            };
            let warp_instrs = num(r, &["instructions"]).max(1.0);
            Timed {
                cycles: cycles / n,
                instrs: num(r, &["thread_instructions"]) / n,
                fetches: fetches / n,
                boxes: boxes / n,
                tris: tris / n,
                stack: stack / n,
                util,
                simt: num(r, &["thread_instructions"]) / (warp_instrs * nt),
            }
        })
        .collect())
}

/// Prints the table; true if something failed or the architectures disagree.
pub fn table(archs: &[&str], scenes: &str, size: (u32, u32), samples: u32) -> bool {
    println!(
        "{:<28} {:<6} {:<10} {:>8} {:>10} {:>10} {:>9} {:>8} {:>8} {:>11} {:>7} {:>6} {:>7}",
        "scene",
        "arch",
        "workload",
        "Mrays/s",
        "cycles/ray",
        "instr/ray",
        "nodes/ray",
        "box/ray",
        "tri/ray",
        "stack B/ray",
        "unit%",
        "SIMT%",
        "hits"
    );
    let stats = std::env::temp_dir().join(format!("vortex-bench-arch-{}.jsonl", std::process::id()));
    let stats = stats.to_string_lossy().into_owned();
    let mut failed = false;
    for scene in scenes.split(',') {
        let mut first_hits: Option<Vec<u64>> = None;
        for &arch in archs {
            let run = || -> Result<(Vec<Mode>, Vec<Timed>), String> {
                let f = modes(&worker(arch, false, scene, size, samples, &stats)?);
                let t = modes(&worker(arch, true, scene, size, samples, &stats)?);
                let rec = timed_records(&stats, arch, &t)?;
                Ok((f, rec))
            };
            let (f, rec) = match run() {
                Ok(r) => r,
                Err(e) => {
                    println!("{scene:<28} {arch:<6} error: {e}");
                    failed = true;
                    continue;
                }
            };
            for (k, ((secs, rays, hits), t)) in f.iter().zip(&rec).enumerate() {
                println!(
                    "{:<28} {:<6} {:<10} {:>8.3} {:>10.1} {:>10.1} {:>9.2} {:>8.2} {:>8.2} {:>11.1} {:>7.1} {:>6.1} {:>7}",
                    format!("{scene} @{}x{}", size.0, size.1),
                    arch,
                    super::MODES[k.min(2)],
                    *rays as f64 / secs / 1e6,
                    t.cycles,
                    t.instrs,
                    t.fetches,
                    t.boxes,
                    t.tris,
                    t.stack,
                    100.0 * t.util,
                    100.0 * t.simt,
                    hits
                );
            }
            let hits: Vec<u64> = f.iter().map(|m| m.2).collect();
            match &first_hits {
                None => first_hits = Some(hits),
                Some(h) if *h != hits => {
                    println!("  ! {scene}: hit pixels disagree between {} ({h:?}) and {arch} ({hits:?})", archs[0]);
                    failed = true;
                }
                Some(_) => {}
            }
        }
    }
    let _ = std::fs::remove_file(&stats);
    failed
}
