//! The real conformance binary as a worker: `deqp-vk` runs a batch's case-list file and
//! prints, per case,
//!
//! ```text
//! Test case 'dEQP-VK.ray_query.builtin.flow.comp.triangles'..
//!   Pass (Pass)
//! ```
//!
//! which maps onto the runner's START / RESULT protocol: the runner times each case itself,
//! kills a case that outlives the timeout and blames a crash on the last case announced, as
//! with its own workers.

use super::pool::Line;
use super::Status;
use std::path::Path;
use std::process::Command;

/// The deqp-vk command for one batch: its case list, its own log file (not flushed after
/// every case: that costs more than the cases), a shader cache kept across the batches of
/// one runner thread (`cache`), the chosen ICD only. deqp-vk runs in its own directory, so
/// every path it is given is made absolute first (a relative `--output` would otherwise name
/// files that do not exist there).
pub fn command(binary: &Path, args: &[String], manifest: &Path, caselist: &Path, log: &Path, cache: &Path) -> Command {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (manifest, caselist, log, cache) = (abs(manifest), abs(caselist), abs(log), abs(cache));
    let mut c = Command::new(abs(binary));
    c.arg(format!("--deqp-caselist-file={}", caselist.display()))
        .arg(format!("--deqp-log-filename={}", log.display()))
        .arg("--deqp-log-flush=disable")
        .arg(format!("--deqp-shadercache-filename={}", cache.display()))
        .arg("--deqp-shadercache-truncate=disable")
        .args(args)
        .env("VK_ICD_FILENAMES", &manifest)
        .env_remove("VK_DRIVER_FILES");
    // dEQP looks for its data next to the binary; run it from there.
    if let Some(dir) = binary.parent().filter(|d| !d.as_os_str().is_empty()) {
        c.current_dir(dir);
    }
    c
}

/// dEQP's result codes as deqp-runner reads them.
fn status(code: &str) -> Option<Status> {
    Some(match code {
        "Pass" => Status::Pass,
        "QualityWarning" | "CompatibilityWarning" => Status::Warn,
        "NotSupported" | "Waiver" => Status::Skip,
        "Fail" | "InternalError" | "ResourceError" => Status::Fail,
        "Crash" => Status::Crash,
        "Timeout" => Status::Timeout,
        _ => return None,
    })
}

/// One line of deqp-vk's standard output.
pub fn parse_line(line: &str) -> Option<Line> {
    if let Some(rest) = line.strip_prefix("Test case '") {
        return rest.strip_suffix("'..").map(|n| Line::Start(n.to_string()));
    }
    let rest = line.strip_prefix("  ")?;
    let (code, reason) = match rest.split_once(" (") {
        Some((c, r)) => (c, r.strip_suffix(')').unwrap_or(r)),
        None => (rest.trim(), ""),
    };
    let st = status(code)?;
    let reason = if st == Status::Pass { String::new() } else { format!("{code}: {reason}") };
    Some(Line::Result(st, None, reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(line: &str) -> Option<(Status, String)> {
        match parse_line(line)? {
            Line::Result(s, None, r) => Some((s, r)),
            _ => None,
        }
    }

    #[test]
    fn paths_given_to_deqp_are_absolute() {
        // deqp-vk runs in its own directory: a relative output directory must not reach it.
        let rel = Path::new("target/out/worker-0-1.caselist.txt");
        let c = command(Path::new("/opt/deqp/deqp-vk"), &[], Path::new("json/icd.json"), rel, rel, rel);
        assert_eq!(c.get_current_dir(), Some(Path::new("/opt/deqp")));
        for a in c.get_args() {
            let a = a.to_string_lossy();
            if let Some((_, path)) = a.split_once("-filename=").or_else(|| a.split_once("-file=")) {
                assert!(Path::new(path).is_absolute(), "{a}");
            }
        }
        let icd = c.get_envs().find(|(k, _)| *k == "VK_ICD_FILENAMES").and_then(|(_, v)| v).unwrap();
        assert!(Path::new(icd).is_absolute());
    }

    #[test]
    fn reads_deqp_output() {
        match parse_line("Test case 'dEQP-VK.info.device'..") {
            Some(Line::Start(n)) => assert_eq!(n, "dEQP-VK.info.device"),
            _ => panic!("not a start line"),
        }
        assert_eq!(result("  Pass (Pass)"), Some((Status::Pass, String::new())));
        assert_eq!(
            result("  NotSupported (sparseBinding feature is not supported at x.cpp:3014)"),
            Some((Status::Skip, "NotSupported: sparseBinding feature is not supported at x.cpp:3014".into()))
        );
        assert_eq!(
            result("  Fail (robustBufferAccess is not supported)"),
            Some((Status::Fail, "Fail: robustBufferAccess is not supported".into()))
        );
        assert_eq!(result("  QualityWarning (slow)").map(|r| r.0), Some(Status::Warn));
        assert_eq!(result("  InternalError (bad)").map(|r| r.0), Some(Status::Fail));
        // Log chatter is not a result.
        assert!(parse_line("  target implementation = 'Vulkan Headless'").is_none());
        assert!(parse_line("Test run totals:").is_none());
        assert!(parse_line("  Passed:        1/3 (33.3%)").is_none());
    }
}
