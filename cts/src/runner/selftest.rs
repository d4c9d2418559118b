//! Cases that exercise the runner itself, registered only when `VORTEX_CTS_SELFTEST` is
//! set (never part of a conformance run): one passes, one fails, one panics, one hangs
//! and one aborts its worker process. `tests/runner.rs` checks that they come out as Pass,
//! Fail, Fail, Timeout and Crash and that the cases after a hang or a crash still run.

use crate::case::{Case, TestError};

/// The environment variable that adds these cases.
pub const ENV: &str = "VORTEX_CTS_SELFTEST";

/// The name prefix of these cases.
pub const PREFIX: &str = "vortex-cts.selftest";

pub fn register(cases: &mut Vec<Case>) {
    for i in 0..3 {
        cases.push(Case::new(format!("{PREFIX}.pass_{i}"), |_| Ok(())));
    }
    cases.push(Case::new(format!("{PREFIX}.fail"), |_| Err(TestError::Fail("failed on purpose".into()))));
    cases.push(Case::new(format!("{PREFIX}.panic"), |_| panic!("panicked on purpose")));
    cases.push(Case::new(format!("{PREFIX}.hang"), |_| loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }));
    cases.push(Case::new(format!("{PREFIX}.crash"), |_| std::process::abort()));
}
