//! Baselines in deqp-runner's layout (`<icd>-fails.txt`, `<icd>-skips.txt`,
//! `<icd>-flakes.txt`), and the comparison of a run against them.
//!
//! - fails: `test-name,Status` lines (Fail, Crash or Timeout): the result expected today;
//! - skips: glob patterns of cases not run at all;
//! - flakes: glob patterns of cases whose failures are tolerated;
//! - missing: glob patterns of cases an oracle driver passes (`--oracle`, e.g. lavapipe's
//!   results) that are NotSupported here today, each with the gap that makes them so.
//!
//! Every entry must carry its reason: a `# ...` comment line directly above it (one comment
//! may cover a block of consecutive entries). The loader refuses entries without one.

use super::{CaseResult, Status};
use crate::glob;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Default, Debug)]
pub struct Baseline {
    /// name -> (expected status, reason)
    pub fails: BTreeMap<String, (Status, String)>,
    pub skips: Vec<(String, String)>,
    pub flakes: Vec<(String, String)>,
    pub missing: Vec<(String, String)>,
    /// The oracle's status of every case it ran (empty without `--oracle`).
    pub oracle: BTreeMap<String, Status>,
}

/// The entries of one file with the comment that covers each.
fn entries(path: &Path) -> Result<Vec<(String, String)>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut out = Vec::new();
    let mut reason: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            reason = None;
        } else if let Some(c) = line.strip_prefix('#') {
            let c = c.trim().to_string();
            reason = Some(match reason.take() {
                Some(prev) => format!("{prev} {c}"),
                None => c,
            });
        } else {
            let Some(r) = reason.clone().filter(|r| !r.is_empty()) else {
                return Err(format!(
                    "{}:{}: entry without a reason (put a `# reason` line above it)",
                    path.display(),
                    i + 1
                ));
            };
            out.push((line.to_string(), r));
        }
    }
    Ok(out)
}

impl Baseline {
    pub fn load(dir: &Path, icd: &str) -> Result<Baseline, String> {
        let mut b = Baseline::default();
        let fails = dir.join(format!("{icd}-fails.txt"));
        for (line, reason) in entries(&fails)? {
            let (name, status) =
                line.rsplit_once(',').ok_or_else(|| format!("{}: `{line}` is not `test,Status`", fails.display()))?;
            let status = Status::parse(status.trim())
                .filter(|s| s.is_failure())
                .ok_or_else(|| format!("{}: `{line}`: the status must be Fail, Crash or Timeout", fails.display()))?;
            b.fails.insert(name.trim().to_string(), (status, reason));
        }
        b.skips = entries(&dir.join(format!("{icd}-skips.txt")))?;
        b.flakes = entries(&dir.join(format!("{icd}-flakes.txt")))?;
        b.missing = entries(&dir.join(format!("{icd}-missing.txt")))?;
        Ok(b)
    }

    /// Reads an oracle's results (deqp-runner's `results.csv`: `test,Status[,seconds]`).
    pub fn load_oracle(&mut self, path: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#')) {
            let mut f = line.split(',');
            let (Some(name), Some(st)) = (f.next(), f.next()) else {
                return Err(format!("{}:{}: `{line}` is not test,status", path.display(), i + 1));
            };
            // deqp-runner's own verdicts (Flake, ExpectedFail, ...) count as failures.
            let st = Status::parse(st.trim()).unwrap_or(Status::Fail);
            self.oracle.insert(name.trim().to_string(), st);
        }
        Ok(())
    }

    /// The reason a case the oracle passes may be NotSupported here, if it is listed.
    pub fn known_missing(&self, name: &str) -> Option<&str> {
        self.missing.iter().find(|(p, _)| glob::matches(p, name)).map(|(_, r)| r.as_str())
    }

    pub fn skipped(&self, name: &str) -> bool {
        self.skips.iter().any(|(p, _)| glob::matches(p, name))
    }

    pub fn flaky(&self, name: &str) -> bool {
        self.flakes.iter().any(|(p, _)| glob::matches(p, name))
    }
}

/// A result judged against the baseline, with deqp-runner's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    Pass,
    Warn,
    Skip,
    /// NotSupported here, passed by the oracle, listed in the missing file with its gap.
    ExpectedMissing,
    /// NotSupported here although the oracle passes it, and not listed: a regression.
    Missing,
    /// Failed as the baseline says.
    ExpectedFail,
    /// A tolerated failure of a case listed in the flakes file.
    Flake,
    /// Failed, not in the baseline (or with another status): a regression.
    Fail,
    Crash,
    Timeout,
    /// Passed although the baseline lists it: a regression too (update the baseline).
    UnexpectedPass,
}

impl Verdict {
    pub fn is_regression(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::Crash | Verdict::Timeout | Verdict::UnexpectedPass | Verdict::Missing)
    }

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "Pass",
            Verdict::Warn => "Warn",
            Verdict::Skip => "Skip",
            Verdict::ExpectedMissing => "ExpectedMissing",
            Verdict::Missing => "Missing",
            Verdict::ExpectedFail => "ExpectedFail",
            Verdict::Flake => "Flake",
            Verdict::Fail => "Fail",
            Verdict::Crash => "Crash",
            Verdict::Timeout => "Timeout",
            Verdict::UnexpectedPass => "UnexpectedPass",
        }
    }
}

pub fn judge(b: &Baseline, r: &CaseResult) -> Verdict {
    let expected = b.fails.get(&r.name).map(|(s, _)| *s);
    match r.status {
        Status::Pass if expected.is_some() => Verdict::UnexpectedPass,
        Status::Pass => Verdict::Pass,
        Status::Warn => Verdict::Warn,
        Status::Skip if b.oracle.get(&r.name) != Some(&Status::Pass) => Verdict::Skip,
        Status::Skip if b.known_missing(&r.name).is_some() => Verdict::ExpectedMissing,
        Status::Skip => Verdict::Missing,
        s if expected == Some(s) => Verdict::ExpectedFail,
        _ if b.flaky(&r.name) => Verdict::Flake,
        Status::Fail => Verdict::Fail,
        Status::Crash => Verdict::Crash,
        _ => Verdict::Timeout,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, status: Status) -> CaseResult {
        CaseResult { name: name.into(), status, seconds: 0.0, reason: String::new() }
    }

    #[test]
    fn judges_like_deqp_runner() {
        let mut b = Baseline::default();
        b.fails.insert("a".into(), (Status::Fail, "gap".into()));
        b.flakes.push(("f*".into(), "racy".into()));
        assert_eq!(judge(&b, &result("a", Status::Fail)), Verdict::ExpectedFail);
        assert_eq!(judge(&b, &result("a", Status::Pass)), Verdict::UnexpectedPass);
        assert_eq!(judge(&b, &result("a", Status::Crash)), Verdict::Crash);
        assert_eq!(judge(&b, &result("b", Status::Fail)), Verdict::Fail);
        assert_eq!(judge(&b, &result("fx", Status::Timeout)), Verdict::Flake);
        assert_eq!(judge(&b, &result("b", Status::Skip)), Verdict::Skip);
        assert!(judge(&b, &result("b", Status::Fail)).is_regression());
        assert!(!judge(&b, &result("a", Status::Fail)).is_regression());
        assert_eq!(judge(&b, &result("b", Status::Warn)), Verdict::Warn);
    }

    #[test]
    fn oracle_passes_must_pass_here() {
        let mut b = Baseline::default();
        for (n, s) in [("p", Status::Pass), ("s", Status::Skip), ("sparse.x", Status::Pass)] {
            b.oracle.insert(n.into(), s);
        }
        b.missing.push(("sparse.*".into(), "no sparse binding".into()));
        assert_eq!(judge(&b, &result("p", Status::Skip)), Verdict::Missing);
        assert!(judge(&b, &result("p", Status::Skip)).is_regression());
        assert_eq!(judge(&b, &result("s", Status::Skip)), Verdict::Skip);
        assert_eq!(judge(&b, &result("unknown", Status::Skip)), Verdict::Skip);
        assert_eq!(judge(&b, &result("sparse.x", Status::Skip)), Verdict::ExpectedMissing);
        assert!(!Verdict::ExpectedMissing.is_regression());
        assert_eq!(judge(&b, &result("p", Status::Pass)), Verdict::Pass);
    }

    #[test]
    fn entries_need_reasons() {
        let dir = std::env::temp_dir().join(format!("vortex-cts-baseline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("x-fails.txt"), "# no query pools yet\na,Fail\nb,Crash\n\nc,Fail\n").unwrap();
        let err = Baseline::load(&dir, "x").unwrap_err();
        assert!(err.contains(":5: entry without a reason"), "{err}");
        std::fs::write(dir.join("x-fails.txt"), "# no query pools yet\na,Fail\nb,Crash\n").unwrap();
        let b = Baseline::load(&dir, "x").unwrap();
        assert_eq!(b.fails["b"], (Status::Crash, "no query pools yet".into()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
