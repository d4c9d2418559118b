//! The shape the check programs share (`accel_check`, `compute_check`, `as_ops`,
//! `host_ops`, `robustness`): an `--icd` argument, named checks printed `PASS`/`FAIL` one
//! per line, a count last, and exit status 0 (all passed), 1 (a check failed) or 2 (could
//! not run).

use crate::{Context, Icd};
use std::time::Instant;

/// The ICD the program's arguments name. `--help` prints the usage and exits 0; a bad
/// argument is reported and exits 2.
pub fn icd_from_args(program: &str) -> Icd {
    match Icd::from_args(std::env::args().skip(1)) {
        Ok(Some(i)) => i,
        Ok(None) => {
            println!("usage: {program} [--icd vortex|lavapipe|PATH_TO_ICD_JSON]");
            std::process::exit(0);
        }
        Err(e) => {
            eprintln!("{program}: {e}");
            std::process::exit(2);
        }
    }
}

/// A device on `icd`, or the error reported and exit 2.
pub fn context_or_exit(program: &str, icd: &Icd) -> Context {
    Context::new(icd).unwrap_or_else(|e| {
        eprintln!("{program}: {e}");
        std::process::exit(2);
    })
}

/// What a passing check says besides `PASS name`.
pub trait Passed {
    fn note(self) -> Option<String>;
}

impl Passed for () {
    fn note(self) -> Option<String> {
        None
    }
}

impl Passed for Option<String> {
    fn note(self) -> Option<String> {
        self
    }
}

impl Passed for String {
    fn note(self) -> Option<String> {
        Some(self)
    }
}

/// A named check: what it is called and the function that runs it on a device.
pub type Check<'a, P> = (&'a str, &'a dyn Fn(&Context) -> Result<P, String>);

/// Runs `checks` in order on `ctx`, printing `PASS name[: note] (time)` or `FAIL name:
/// error`, then `passed/total {what} checks passed`, and exits 0 if every check passed and
/// 1 otherwise. `extra_failures` counts failures found outside the checks (printed by the
/// caller).
pub fn run_checks_and_exit<P: Passed>(
    ctx: &Context,
    what: &str,
    checks: &[Check<'_, P>],
    extra: impl FnOnce() -> usize,
) -> ! {
    let mut failed = 0;
    for (name, check) in checks {
        let t = Instant::now();
        match check(ctx) {
            Ok(p) => {
                let ms = t.elapsed().as_secs_f64() * 1e3;
                match p.note() {
                    Some(note) => println!("PASS {name}: {note} ({ms:.1} ms)"),
                    None => println!("PASS {name} ({ms:.1} ms)"),
                }
            }
            Err(e) => {
                println!("FAIL {name}: {e}");
                failed += 1;
            }
        }
    }
    failed += extra();
    println!("{}/{} {what} checks passed", checks.len().saturating_sub(failed), checks.len());
    std::process::exit(if failed == 0 { 0 } else { 1 });
}
