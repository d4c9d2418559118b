//! The runner's robustness, with the self-test cases of `runner::selftest` (a pass, a
//! failure, a panic, a hang and a worker that aborts): a hang is a Timeout and a dead
//! worker a Crash, neither stops the run, results.csv has deqp-runner's format, the
//! baselines turn expected failures into non-regressions, and the last line counts
//! passes, regressions and skips.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

const PREFIX: &str = "vortex-cts.selftest";

fn run(out_dir: &Path, baselines: &Path) -> (Output, BTreeMap<String, String>) {
    let out = Command::new(env!("CARGO_BIN_EXE_vortex-cts"))
        .env("VORTEX_CTS_SELFTEST", "1")
        // One worker, one batch: the cases after the hang and the crash must be picked up
        // by fresh workers.
        .args(["--icd", "vortex", "--jobs", "1", "--batch", "64", "--timeout", "3", "--quiet"])
        .args(["-t", &format!("{PREFIX}.*"), "--output"])
        .arg(out_dir)
        .arg("--baselines")
        .arg(baselines)
        .output()
        .expect("start vortex-cts");
    let csv = std::fs::read_to_string(out_dir.join("vortex/results.csv")).expect("results.csv");
    let mut statuses = BTreeMap::new();
    for line in csv.lines() {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields.len(), 3, "results.csv line `{line}` is not test,status,duration");
        fields[2].parse::<f64>().expect("the duration is a number of seconds");
        statuses.insert(fields[0].trim_start_matches(&format!("{PREFIX}.")).to_string(), fields[1].to_string());
    }
    (out, statuses)
}

#[test]
fn hangs_and_crashes_are_reported_and_the_run_continues() {
    let dir = std::env::temp_dir().join(format!("vortex-cts-runner-{}", std::process::id()));
    let empty = dir.join("no-baselines");
    std::fs::create_dir_all(&empty).unwrap();

    let (out, statuses) = run(&dir.join("plain"), &empty);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let want: BTreeMap<String, String> = [
        ("pass_0", "Pass"),
        ("pass_1", "Pass"),
        ("pass_2", "Pass"),
        ("fail", "Fail"),
        ("panic", "Fail"),
        ("hang", "Timeout"),
        ("crash", "Crash"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(statuses, want, "{stdout}");
    // Four regressions against no baseline: the run fails, and says so last.
    assert!(!out.status.success());
    assert_eq!(stdout.lines().last(), Some("3 passed, 4 failed, 0 skipped"), "{stdout}");

    // The same failures listed as expected (and the panic as a flake) are no regressions.
    let baselines = dir.join("baselines");
    std::fs::create_dir_all(&baselines).unwrap();
    std::fs::write(
        baselines.join("vortex-fails.txt"),
        format!(
            "# failing on purpose\n{PREFIX}.fail,Fail\n# hangs on purpose\n{PREFIX}.hang,Timeout\n# aborts on purpose\n{PREFIX}.crash,Crash\n"
        ),
    )
    .unwrap();
    std::fs::write(baselines.join("vortex-flakes.txt"), format!("# panics on purpose\n{PREFIX}.pan*\n")).unwrap();
    std::fs::write(baselines.join("vortex-skips.txt"), format!("# not run\n{PREFIX}.pass_2\n")).unwrap();
    let (out, statuses) = run(&dir.join("baselined"), &baselines);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!statuses.contains_key("pass_2"), "a skipped case ran: {statuses:?}");
    assert_eq!(statuses.get("hang").map(String::as_str), Some("Timeout"));
    assert_eq!(statuses.get("crash").map(String::as_str), Some("Crash"));
    assert!(out.status.success(), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("2 passed, 0 failed, 0 skipped"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
