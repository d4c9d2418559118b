//! The deqp-runner-style runner: filters cases by glob, runs them in parallel worker
//! processes (this executable re-executed with `worker`) with a per-case timeout, writes
//! deqp-runner's `results.csv`, compares against the committed baselines, and prints a
//! summary whose last line is `N passed, N failed, N skipped`.

pub mod baseline;
pub mod cli;
pub mod deqp;
pub mod pool;
pub mod selftest;
pub mod worker;

use std::fmt;

/// A case's raw result, as dEQP reports it (NotSupported is deqp-runner's `Skip`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    Pass,
    /// dEQP's QualityWarning / CompatibilityWarning: not a failure (deqp-runner's `Warn`).
    Warn,
    Fail,
    Skip,
    Crash,
    Timeout,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "Pass",
            Status::Warn => "Warn",
            Status::Fail => "Fail",
            Status::Skip => "Skip",
            Status::Crash => "Crash",
            Status::Timeout => "Timeout",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        [Status::Pass, Status::Warn, Status::Fail, Status::Skip, Status::Crash, Status::Timeout]
            .into_iter()
            .find(|st| st.name() == s)
    }

    pub fn is_failure(self) -> bool {
        matches!(self, Status::Fail | Status::Crash | Status::Timeout)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One case's result.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub name: String,
    pub status: Status,
    pub seconds: f64,
    pub reason: String,
}
