//! The worker pool: batches of cases go to worker processes (`jobs` at a time); each case
//! has a timeout. A worker that hangs is killed (its case is a Timeout), one that dies
//! mid-case marks it a Crash; either way the rest of its batch goes to a fresh worker, so
//! one bad case never takes the run down.

use super::{deqp, CaseResult, Status};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use vortex_examples::icd::Icd;

/// What runs the cases.
#[derive(Clone, Debug)]
pub enum Backend {
    /// This executable re-executed as `worker` (the port's own cases).
    Port,
    /// A real dEQP binary (`deqp-vk`) with extra arguments, fed a case-list file per batch.
    Deqp { binary: PathBuf, args: Vec<String> },
}

pub struct PoolConfig {
    pub icd: String,
    pub backend: Backend,
    pub jobs: usize,
    pub timeout: Duration,
    pub batch: usize,
    /// Worker stderr goes here (one file per runner thread).
    pub log_dir: PathBuf,
    pub progress: bool,
}

pub enum Line {
    Start(String),
    /// Status, duration if the worker measured it, reason.
    Result(Status, Option<f64>, String),
}

/// How a worker's output lines are read.
type LineParser = fn(&str) -> Option<Line>;

/// A line of the port's worker protocol (`worker.rs`).
fn parse_line(line: &str) -> Option<Line> {
    if let Some(name) = line.strip_prefix("START ") {
        return Some(Line::Start(name.to_string()));
    }
    let rest = line.strip_prefix("RESULT ")?;
    let mut it = rest.splitn(3, ' ');
    let status = Status::parse(it.next()?)?;
    let ms: f64 = it.next()?.parse().ok()?;
    Some(Line::Result(status, Some(ms / 1000.0), it.next().unwrap_or("").to_string()))
}

/// Starts the process that runs `batch` (its stdout piped) and returns it with the parser of
/// its output lines.
fn spawn(cfg: &PoolConfig, batch: &[String], log: &File, tag: &str) -> std::io::Result<(Child, LineParser)> {
    let stderr = log.try_clone().map(Stdio::from).unwrap_or_else(|_| Stdio::null());
    match &cfg.backend {
        Backend::Port => {
            let exe = std::env::current_exe()?;
            let mut child = Command::new(exe)
                .args(["worker", "--icd", &cfg.icd])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(stderr)
                .spawn()?;
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all((batch.join("\n") + "\n").as_bytes());
            }
            Ok((child, parse_line))
        }
        Backend::Deqp { binary, args } => {
            let manifest = Icd::parse(&cfg.icd).manifest().map_err(std::io::Error::other)?;
            let list = cfg.log_dir.join(format!("{tag}.caselist.txt"));
            std::fs::write(&list, batch.join("\n") + "\n")?;
            let thread = tag.rsplit_once('-').map_or(tag, |(t, _)| t);
            let cache = cfg.log_dir.join(format!("{thread}.shadercache"));
            let child = deqp::command(binary, args, &manifest, &list, &cfg.log_dir.join(format!("{tag}.qpa")), &cache)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(stderr)
                .spawn()?;
            Ok((child, deqp::parse_line))
        }
    }
}

/// Runs one batch in one worker process; returns its results and the names it did not get
/// to (after a crash or a timeout). A dEQP binary runs a case list in its own order, so what
/// is left is the batch minus what reported.
fn run_batch(cfg: &PoolConfig, batch: &[String], log: &mut File, tag: &str) -> (Vec<CaseResult>, Vec<String>) {
    let (mut child, parse) = match spawn(cfg, batch, log, tag) {
        Ok(c) => c,
        Err(e) => {
            let results = batch
                .iter()
                .map(|n| CaseResult {
                    name: n.clone(),
                    status: Status::Crash,
                    seconds: 0.0,
                    reason: format!("cannot start a worker: {e}"),
                })
                .collect();
            return (results, Vec::new());
        }
    };
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(l) = parse(&line) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        }
    });
    let mut results: Vec<CaseResult> = Vec::new();
    let mut current: Option<(String, Instant)> = None;
    // The batch's names that have not reported, in batch order.
    let left = |results: &[CaseResult]| -> Vec<String> {
        let seen: std::collections::HashSet<&str> = results.iter().map(|r| r.name.as_str()).collect();
        batch.iter().filter(|n| !seen.contains(n.as_str())).cloned().collect()
    };
    loop {
        let wait = match &current {
            Some((_, started)) => cfg.timeout.saturating_sub(started.elapsed()),
            None => cfg.timeout,
        };
        match rx.recv_timeout(wait) {
            Ok(Line::Start(name)) => current = Some((name, Instant::now())),
            Ok(Line::Result(status, seconds, reason)) => {
                if let Some((name, started)) = current.take() {
                    let seconds = seconds.unwrap_or_else(|| started.elapsed().as_secs_f64());
                    results.push(CaseResult { name, status, seconds, reason });
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // The current case (or the worker's start-up) hangs: kill the worker.
                let _ = child.kill();
                let _ = child.wait();
                let _ = reader.join();
                let name = match current.take() {
                    Some((n, _)) => n,
                    None => left(&results).into_iter().next().unwrap_or_default(),
                };
                results.push(CaseResult {
                    name,
                    status: Status::Timeout,
                    seconds: cfg.timeout.as_secs_f64(),
                    reason: format!("no result within {} s; worker killed", cfg.timeout.as_secs()),
                });
                let rest = left(&results);
                return (results, rest);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = child.wait();
                let _ = reader.join();
                let how = || match &status {
                    Ok(s) => describe_exit(*s),
                    Err(e) => e.to_string(),
                };
                if let Some((name, started)) = current.take() {
                    results.push(CaseResult {
                        name,
                        status: Status::Crash,
                        seconds: started.elapsed().as_secs_f64(),
                        reason: format!("the worker died during the case ({})", how()),
                    });
                    let rest = left(&results);
                    return (results, rest);
                }
                let rest = left(&results);
                if !rest.is_empty() && status.as_ref().is_ok_and(|s| s.success()) {
                    // Ended normally without running them: names the binary does not know.
                    results.extend(rest.into_iter().map(|name| CaseResult {
                        name,
                        status: Status::Fail,
                        seconds: 0.0,
                        reason: "the worker ended without running the case (not a case of this binary?)".into(),
                    }));
                    return (results, Vec::new());
                }
                if !rest.is_empty() && results.is_empty() {
                    // Died before running anything: blame the first case so the run still
                    // makes progress.
                    results.push(CaseResult {
                        name: rest[0].clone(),
                        status: Status::Crash,
                        seconds: 0.0,
                        reason: format!("the worker died before reporting ({})", how()),
                    });
                    return (results, rest[1..].to_vec());
                }
                // Died (or ended) between cases: the ones that never started are retried.
                return (results, rest);
            }
        }
    }
}

fn describe_exit(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => s.to_string(),
    }
}

/// Splits `names` into batches of at most `size` by striding: with n batches, batch k holds
/// names k, k + n, k + 2n, ... So a run of consecutive slow cases (the three
/// watertightness cases take 30-80 s each on lavapipe) is spread over different batches,
/// which different workers run at the same time, instead of queueing in one worker.
pub fn batches(names: &[String], size: usize) -> Vec<Vec<String>> {
    let n = names.len().div_ceil(size.max(1));
    (0..n).map(|k| names.iter().skip(k).step_by(n).cloned().collect()).collect()
}

/// Runs every name on `cfg.icd`; results come back in no particular order.
pub fn run(cfg: &PoolConfig, names: &[String]) -> Vec<CaseResult> {
    let queue: Arc<Mutex<VecDeque<Vec<String>>>> = Arc::new(Mutex::new(batches(names, cfg.batch).into()));
    let results = Arc::new(Mutex::new(Vec::with_capacity(names.len())));
    let total = names.len();
    let _ = std::fs::create_dir_all(&cfg.log_dir);
    std::thread::scope(|s| {
        for t in 0..cfg.jobs.max(1) {
            let queue = queue.clone();
            let results = results.clone();
            s.spawn(move || {
                let path = cfg.log_dir.join(format!("worker-{t}.log"));
                let mut log = File::create(&path).unwrap_or_else(|_| File::create("/dev/null").expect("/dev/null"));
                let mut n = 0;
                loop {
                    let Some(mut batch) = queue.lock().expect("queue").pop_front() else { break };
                    while !batch.is_empty() {
                        n += 1;
                        let (res, rest) = run_batch(cfg, &batch, &mut log, &format!("worker-{t}-{n}"));
                        let mut all = results.lock().expect("results");
                        for r in &res {
                            if cfg.progress && r.status != Status::Pass && r.status != Status::Skip {
                                eprintln!("  [{}] {} {}: {}", cfg.icd, r.status, r.name, r.reason);
                            }
                        }
                        all.extend(res);
                        if cfg.progress && all.len() % 200 == 0 {
                            eprintln!("  [{}] {}/{} cases done", cfg.icd, all.len(), total);
                        }
                        batch = rest;
                    }
                }
            });
        }
    });
    Arc::try_unwrap(results).map(|m| m.into_inner().expect("results")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::batches;

    #[test]
    fn batches_stride_and_respect_the_size() {
        let names: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        let b = batches(&names, 4);
        let want: Vec<Vec<String>> = [vec![0, 3, 6, 9], vec![1, 4, 7], vec![2, 5, 8]]
            .iter()
            .map(|v| v.iter().map(|i| i.to_string()).collect())
            .collect();
        assert_eq!(b, want);
        assert!(batches(&[], 4).is_empty());
        assert_eq!(batches(&names, 100).len(), 1);
    }
}
