//! The runner driving a dEQP binary (`--deqp`), against a stand-in that speaks deqp-vk's
//! output and misbehaves on request: a case that fails, one NotSupported, one that kills
//! the process, one that hangs, and a list in an order of its own (dEQP runs a case list in
//! its tree order). Every case gets its result, the run goes on past the crash and the
//! hang, and the oracle turns a NotSupported case it passes into a regression unless the
//! baseline's missing list names it.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// A fake deqp-vk: runs the names of `--deqp-caselist-file` in reverse order.
const FAKE_DEQP: &str = r#"#!/bin/sh
for a in "$@"; do case "$a" in --deqp-caselist-file=*) list="${a#*=}" ;; esac; done
echo "dEQP Core fake starting.."
reversed=$(tac "$list")
while read -r name; do
  echo "Test case '$name'.."
  case "$name" in
    *.fail) echo "  Fail (wrong value at 3)" ;;
    *.unsupported*) echo "  NotSupported (sparseBinding feature is not supported)" ;;
    *.warn) echo "  QualityWarning (slow path)" ;;
    *.crash) kill -SEGV $$ ;;
    *.hang) exec sleep 30 ;;
    *) echo "  Pass (Pass)" ;;
  esac
  echo
done <<END
$reversed
END
echo "DONE!"
"#;

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[test]
fn drives_a_deqp_binary() {
    let dir = std::env::temp_dir().join(format!("vortex-cts-deqp-{}", std::process::id()));
    let base = dir.join("baselines");
    std::fs::create_dir_all(&base).unwrap();
    let fake = dir.join("deqp-vk");
    write(&fake, FAKE_DEQP);
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let names = ["a.pass0", "a.fail", "a.unsupported_known", "a.unsupported_new", "a.warn", "a.crash", "a.hang"];
    let names: Vec<String> = names
        .iter()
        .map(|n| format!("dEQP-VK.fake.{n}"))
        .chain((1..6).map(|i| format!("dEQP-VK.fake.b.pass{i}")))
        .collect();
    write(&dir.join("list.txt"), &(names.join("\n") + "\n"));
    write(
        &dir.join("oracle.csv"),
        "dEQP-VK.fake.a.unsupported_known,Pass,0.1\ndEQP-VK.fake.a.unsupported_new,Pass,0.1\n",
    );
    write(&base.join("vortex-fails.txt"), "# a known bug\ndEQP-VK.fake.a.fail,Fail\n");
    write(&base.join("vortex-missing.txt"), "# not offered yet\n*.unsupported_known\n");
    let out = Command::new(env!("CARGO_BIN_EXE_vortex-cts"))
        .args(["--icd", "vortex", "--jobs", "1", "--batch", "100", "--timeout", "2", "--quiet", "--deqp"])
        .arg(&fake)
        .arg("--caselist")
        .arg(dir.join("list.txt"))
        .arg("--oracle")
        .arg(dir.join("oracle.csv"))
        .arg("--baselines")
        .arg(&base)
        .arg("--output")
        .arg(dir.join("out"))
        .output()
        .expect("start vortex-cts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let csv = std::fs::read_to_string(dir.join("out/vortex/results.csv")).expect("results.csv");
    let got: BTreeMap<String, String> = csv
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].trim_start_matches("dEQP-VK.fake.").to_string(), f[1].to_string())
        })
        .collect();
    let mut want: BTreeMap<String, String> = [
        ("a.pass0", "Pass"),
        ("a.fail", "Fail"),
        ("a.unsupported_known", "Skip"),
        ("a.unsupported_new", "Skip"),
        ("a.warn", "Warn"),
        ("a.crash", "Crash"),
        ("a.hang", "Timeout"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    want.extend((1..6).map(|i| (format!("b.pass{i}"), "Pass".to_string())));
    assert_eq!(got, want, "{stdout}");
    // Regressions: the crash, the hang and the unsupported case the oracle passes; the
    // known failure and the listed missing case are not.
    assert!(stdout.contains("Missing: dEQP-VK.fake.a.unsupported_new"), "{stdout}");
    assert!(!stdout.contains("Missing: dEQP-VK.fake.a.unsupported_known"), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("7 passed, 3 failed, 1 skipped"), "{stdout}");
    assert!(!out.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}
