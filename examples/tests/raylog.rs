//! The ray log through the Vulkan loader: rq_smoke (BLAS builds, transformed instances, a
//! closest-hit and an any-hit pass) runs on our ICD with `VORTEX_RAYLOG` set, in both modes,
//! and `rt_replay` (the model crate's tool, built next to rq_smoke by the workspace build)
//! replays every recorded ray with zero mismatches on the functional walker, the timed
//! traversal core and the CPU reference traversal.

use std::path::{Path, PathBuf};
use std::process::Command;

fn rt_replay() -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_rq_smoke")).parent().expect("the binaries' directory");
    let bin = dir.join(format!("rt_replay{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: build the workspace first (cargo build --release --workspace)",
        bin.display()
    );
    bin
}

#[test]
fn rq_smoke_logs_replay_with_zero_mismatches() {
    let replay = rt_replay();
    for mode in ["functional", "timed"] {
        let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rq_smoke_{mode}.vxrl"));
        let _ = std::fs::remove_file(&log);
        let out = Command::new(env!("CARGO_BIN_EXE_rq_smoke"))
            .args(["--icd", "vortex"])
            .env("VORTEX_MODE", mode)
            .env("VORTEX_RAYLOG", &log)
            .env_remove("VORTEX_CONFIG")
            .output()
            .expect("cannot start rq_smoke");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "rq_smoke ({mode}):\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("closest-hit pass: 4096/4096 rays match"), "{stdout}");
        let out = Command::new(&replay).arg("--quiet").arg(&log).output().expect("cannot start rt_replay");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "rt_replay ({mode}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Two passes of 64x64 rays: at least 8192 traces, every one a match on all three.
        let row = |name: &str| -> Vec<u64> {
            let line = stdout.lines().find(|l| l.split_whitespace().next() == Some(name)).expect(name);
            line.split_whitespace().skip(1).map(|n| n.parse().unwrap()).collect()
        };
        let rays = row("rays");
        assert_eq!(rays.len(), 3, "{stdout}");
        assert!(rays[0] >= 8192, "{stdout}");
        assert_eq!(row("match"), rays, "{stdout}");
        assert_eq!(row("mismatched"), vec![0, 0, 0], "{stdout}");
    }
}
