//! The two ray-tracing architectures agree (`docs/RDNA2.md`): every bench scene rendered
//! with ray queries (primary rays, shadows, ambient occlusion: closest hits shaded by their
//! t, primitive and instance) gives the same bytes on an rtu device and on an rdna2 device,
//! where the shader walks the other layout with `ISECT`; rq_smoke's closest-hit and
//! any-hit passes on rdna2 match its CPU reference ray by ray (t, primitive, instance); and
//! the ray logs of the bench workloads on both agree ray by ray with each other, with the
//! RTU walker, the CPU reference traversal and the host form of the rdna2 loop.

use std::process::Command;

fn render(scene: &str, arch: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let out = dir.join(format!("arch_{scene}_{arch}.png"));
    let o = Command::new(env!("CARGO_BIN_EXE_render"))
        .args(["--icd", "vortex", "--scene", scene, "--width", "48", "--height", "32", "--spp", "1", "--quiet"])
        .arg("--out")
        .arg(&out)
        .env("VORTEX_RT_ARCH", arch)
        .env_remove("VORTEX_CONFIG")
        .output()
        .expect("cannot start render");
    assert!(o.status.success(), "render {scene} ({arch}) failed:\n{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(&out).expect("the rendered image")
}

#[test]
fn every_bench_scene_renders_the_same_bytes_on_both_architectures() {
    for scene in ["bunny", "spheres", "million", "random"] {
        let (a, b) = (render(scene, "rtu"), render(scene, "rdna2"));
        assert!(!a.is_empty());
        assert!(a == b, "{scene}: the rdna2 image differs from the rtu one");
    }
}

#[test]
fn rq_smoke_on_rdna2_matches_the_cpu_reference() {
    let o = Command::new(env!("CARGO_BIN_EXE_rq_smoke"))
        .args(["--icd", "vortex"])
        .env("VORTEX_RT_ARCH", "rdna2")
        .env_remove("VORTEX_CONFIG")
        .output()
        .expect("cannot start rq_smoke");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "rq_smoke (rdna2):\n{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("rdna2 node intersection"), "not an rdna2 device:\n{stdout}");
    assert!(stdout.contains("closest-hit pass: 4096/4096 rays match"), "{stdout}");
    assert!(stdout.contains("any-hit pass: 4096/4096 rays match"), "{stdout}");
}

/// `rt_replay`, built next to the examples by the workspace build.
fn rt_replay() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_BIN_EXE_bench")).parent().expect("the binaries' directory");
    let bin = dir.join(format!("rt_replay{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.is_file(), "{} is missing: build the workspace first", bin.display());
    bin
}

/// Runs the bench's three trace workloads (primary + shadow, ambient occlusion, any-hit)
/// on `scene` with a ray log; returns the log's path.
fn bench_log(scene: &str, arch: &str) -> std::path::PathBuf {
    let log = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("agree_{scene}_{arch}.vxrl"));
    let _ = std::fs::remove_file(&log);
    let o = Command::new(env!("CARGO_BIN_EXE_bench"))
        .args(["--worker", "--icd", "vortex", "--scenes", scene, "--samples", "1", "--size", "32x24"])
        .env("VORTEX_RT_ARCH", arch)
        .env("VORTEX_RAYLOG", &log)
        .env_remove("VORTEX_CONFIG")
        .output()
        .expect("cannot start bench");
    assert!(o.status.success(), "bench {scene} ({arch}):\n{}", String::from_utf8_lossy(&o.stderr));
    log
}

/// `rt_replay` on `log` (and `--against other`): exit code and stdout.
fn replay(log: &std::path::Path, against: Option<&std::path::Path>) -> (Option<i32>, String) {
    let mut cmd = Command::new(rt_replay());
    cmd.arg("--quiet").arg(log);
    if let Some(b) = against {
        cmd.arg("--against").arg(b);
    }
    let o = cmd.output().expect("cannot start rt_replay");
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The numbers of a row of rt_replay's output (`section`: the replay table, or the lines
/// after "against").
fn row(out: &str, name: &str, against: bool) -> Vec<u64> {
    let start = if against { out.find("\nagainst ").expect("an agreement table") } else { 0 };
    let end = if against { out.len() } else { out.find("\nagainst ").unwrap_or(out.len()) };
    let line = out[start..end].lines().find(|l| l.split_whitespace().next() == Some(name)).expect(name);
    line.split_whitespace().skip(1).map(|n| n.parse().unwrap()).collect()
}

/// The byte offsets of every TRACE record's fixed part in a ray log (`docs/RAYLOG.md`,
/// version 1: a 16-byte header, LINE = tag + 72 bytes, TRACE = tag + 104 + 28 per decision).
fn traces(log: &[u8]) -> Vec<usize> {
    let mut at = 16;
    let mut out = Vec::new();
    while at < log.len() {
        match log[at] {
            1 => at += 1 + 72,
            2 => {
                let n = u16::from_le_bytes([log[at + 1 + 102], log[at + 1 + 103]]) as usize;
                out.push(at + 1);
                at += 1 + 104 + 28 * n;
            }
            t => panic!("unknown record tag {t} at {at}"),
        }
    }
    out
}

fn word(log: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(log[at..at + 4].try_into().unwrap())
}

/// A copy of `log` with word `field` (a TRACE byte offset) of the first closest-hit trace
/// that hit and has no decision (status DONE_HIT, no terminate-on-first-hit) xored with `x`.
fn perturbed(log: &std::path::Path, field: usize, x: u32, name: &str) -> std::path::PathBuf {
    let mut b = std::fs::read(log).unwrap();
    let t = traces(&b)
        .into_iter()
        .find(|&t| word(&b, t + 48) == 0 && word(&b, t + 32) & 4 == 0 && b[t + 102] == 0 && b[t + 103] == 0)
        .expect("a closest hit in the log");
    let v = word(&b, t + field) ^ x;
    b[t + field..t + field + 4].copy_from_slice(&v.to_le_bytes());
    let out = log.with_file_name(name);
    std::fs::write(&out, b).unwrap();
    out
}

/// Issue 17's agreement, ray by ray, on the bench scenes: the rdna2 shader walk's ray log
/// (each query's ray and committed hit, recorded through `RQLOG`) replays with zero
/// mismatches on the host form of its loop; every one of its rays pairs with the same ray
/// of the rtu device's log, whose committed hit (t, barycentrics, primitive, instance,
/// geometry, custom index, SBT offset, kind, facing) is bit-identical; and the rtu log
/// replays with zero mismatches on the RTU walker and the CPU reference traversal. A
/// perturbed t or primitive on either side is reported.
#[test]
fn rdna2_ray_log_agrees_with_the_rtu_log_and_the_cpu_reference() {
    for scene in ["bunny", "spheres", "million", "random"] {
        let (rtu, rdna2) = (bench_log(scene, "rtu"), bench_log(scene, "rdna2"));
        let (code, out) = replay(&rtu, None);
        assert_eq!(code, Some(0), "{scene}: the rtu log against its engines:\n{out}");
        let rays = row(&out, "rays", false);
        assert_eq!(rays.len(), 3, "functional, timed, reference: {out}");
        assert_eq!(row(&out, "match", false), rays, "{scene}:\n{out}");
        let (code, out) = replay(&rdna2, Some(&rtu));
        assert_eq!(code, Some(0), "{scene}: the rdna2 log:\n{out}");
        let (n, skipped, matched) =
            (row(&out, "rays", false)[0], row(&out, "skipped", false)[0], row(&out, "match", false)[0]);
        assert_eq!(n, rays[0], "{scene}: both devices traced the same rays:\n{out}");
        // The any-hit workload's hits hand candidates to the shader: the host loop does not
        // replay those; everything else it does.
        assert!(matched > n / 2 && matched + skipped == n, "{scene}:\n{out}");
        assert_eq!(row(&out, "paired", true), vec![n], "{scene}: every ray has its twin:\n{out}");
        assert_eq!(row(&out, "match", true), vec![n], "{scene}:\n{out}");
        assert!(row(&out, "hit_or_miss_only", true)[0] < n / 2, "{scene}: mostly closest hits:\n{out}");
    }
    // Perturbed: one t bit of the rdna2 log, one primitive of the rtu log.
    let (rtu, rdna2) = (bench_log("bunny", "rtu"), bench_log("bunny", "rdna2"));
    const T: usize = 52;
    const PRIM: usize = 52 + 12;
    let bad = perturbed(&rdna2, T, 1, "agree_bunny_rdna2_bad_t.vxrl");
    let (code, out) = replay(&bad, Some(&rtu));
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(row(&out, "same_prim_bits", false), vec![1], "the host loop sees it:\n{out}");
    assert_eq!(row(&out, "same_prim_bits", true), vec![1], "the rtu log disagrees:\n{out}");
    let bad = perturbed(&rtu, PRIM, 1, "agree_bunny_rtu_bad_prim.vxrl");
    let (code, out) = replay(&rdna2, Some(&bad));
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(row(&out, "tie_exact", true), vec![1], "another primitive at the same t:\n{out}");
    let (code, out) = replay(&bad, None);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(row(&out, "tie_exact", false), vec![1, 1, 1], "every engine of the rtu log sees it:\n{out}");
}
