//! The soak benchmark in small: 200 submissions on Vortex RT with `VORTEX_STATS`, which must
//! then hold one JSON record per dispatch, one per line (the benchmark itself is run by hand,
//! `docs/EXAMPLES.md`).

use std::process::Command;

#[test]
fn soak_writes_one_stats_record_per_dispatch() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("soak");
    std::fs::create_dir_all(&dir).unwrap();
    let stats = dir.join("stats.jsonl");
    // A stale file must not count: the driver truncates it when the device is created.
    std::fs::write(&stats, "stale\n".repeat(50)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_soak"))
        .args(["--icd", "vortex", "--submits", "200", "--slice", "50"])
        .env("VORTEX_STATS", &stats)
        .output()
        .expect("cannot start soak");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "soak failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // A row per slice of 50: its range, seconds, ms per submission and resident MiB.
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() == 4 && w[0].contains('-') && w[1..].iter().all(|v| v.parse::<f64>().is_ok()))
        .collect();
    assert_eq!(rows.iter().map(|w| w[0]).collect::<Vec<_>>(), ["1-50", "51-100", "101-150", "151-200"], "{stdout}");
    assert!(stdout.contains("counter 12800 (expected 12800)"), "{stdout}");
    let text = std::fs::read_to_string(&stats).unwrap();
    let records: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert_eq!(records.len(), 200);
    for r in &records {
        assert_eq!(r["kernel"], "main");
        assert_eq!(r["grid"], serde_json::json!([1, 1, 1]));
        assert_eq!(r["block"], serde_json::json!([64, 1, 1]));
    }
}

#[test]
fn soak_refuses_bad_arguments() {
    let out = Command::new(env!("CARGO_BIN_EXE_soak")).args(["--submits", "0"]).output().expect("start");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 1"));
}
