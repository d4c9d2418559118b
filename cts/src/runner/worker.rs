//! The worker side: runs the cases named on stdin, one after the other, on one device, and
//! reports each on stdout as it goes:
//!
//! ```text
//! START <name>
//! RESULT <Status> <milliseconds, 3 decimals> <reason, one line>
//! ```
//!
//! A case that hangs or kills the process is caught by the runner, which knows from the
//! last START which case it was.

use super::Status;
use crate::case::{all_cases, Case, TestError};
use crate::fw::Env;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;
use vortex_examples::icd::Icd;

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " | ")
}

pub fn main(icd: &Icd) -> i32 {
    let names: Vec<String> =
        std::io::stdin().lock().lines().map_while(Result::ok).filter(|l| !l.trim().is_empty()).collect();
    let cases: HashMap<String, Case> = all_cases().into_iter().map(|c| (c.name.clone(), c)).collect();
    let mut env: Option<Env> = None;
    let stdout = std::io::stdout();
    for name in names {
        {
            let mut out = stdout.lock();
            let _ = writeln!(out, "START {name}");
            let _ = out.flush();
        }
        let start = Instant::now();
        let (status, reason) = match cases.get(&name) {
            None => (Status::Fail, format!("no such case: {name}")),
            Some(case) => {
                if env.is_none() {
                    match Env::new(icd) {
                        Ok(e) => env = Some(e),
                        Err(e) => {
                            let mut out = stdout.lock();
                            let _ = writeln!(out, "RESULT Fail {} default device creation failed: {}", 0, one_line(&e));
                            let _ = out.flush();
                            continue;
                        }
                    }
                }
                let e = env.as_ref().expect("created above");
                match catch_unwind(AssertUnwindSafe(|| (case.run)(e))) {
                    Ok(Ok(())) => (Status::Pass, String::new()),
                    Ok(Err(TestError::NotSupported(r))) => (Status::Skip, format!("NotSupported: {r}")),
                    Ok(Err(TestError::Fail(r))) => (Status::Fail, r),
                    Err(panic) => {
                        let msg = panic
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_else(|| "panic".into());
                        (Status::Fail, format!("the case panicked: {msg}"))
                    }
                }
            }
        };
        // A lost device (or a panic mid-case) poisons the shared state: start afresh.
        if status == Status::Fail && (reason.contains("DEVICE_LOST") || reason.contains("panicked")) {
            env = None;
        } else if let Some(e) = env.as_ref() {
            // SAFETY: the case has dropped everything it created.
            let _ = unsafe { e.device.device_wait_idle() };
        }
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        let mut out = stdout.lock();
        let _ = writeln!(out, "RESULT {status} {ms:.3} {}", one_line(&reason));
        let _ = out.flush();
    }
    0
}
