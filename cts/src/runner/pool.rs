//! The worker pool: batches of cases go to worker processes (`jobs` at a time); each case
//! has a timeout. A worker that hangs is killed (its case is a Timeout), one that dies
//! mid-case marks it a Crash; either way the rest of its batch goes to a fresh worker, so
//! one bad case never takes the run down.

use super::{CaseResult, Status};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct PoolConfig {
    pub icd: String,
    pub jobs: usize,
    pub timeout: Duration,
    pub batch: usize,
    /// Worker stderr goes here (one file per runner thread).
    pub log_dir: PathBuf,
    pub progress: bool,
}

enum Line {
    Start(String),
    Result(Status, f64, String),
}

fn parse_line(line: &str) -> Option<Line> {
    if let Some(name) = line.strip_prefix("START ") {
        return Some(Line::Start(name.to_string()));
    }
    let rest = line.strip_prefix("RESULT ")?;
    let mut it = rest.splitn(3, ' ');
    let status = Status::parse(it.next()?)?;
    let ms: f64 = it.next()?.parse().ok()?;
    Some(Line::Result(status, ms / 1000.0, it.next().unwrap_or("").to_string()))
}

/// Runs one batch in one worker process; returns its results and the names it did not get
/// to (after a crash or a timeout).
fn run_batch(cfg: &PoolConfig, batch: &[String], log: &mut File) -> (Vec<CaseResult>, Vec<String>) {
    let exe = std::env::current_exe().expect("own executable");
    let stderr = log.try_clone().map(Stdio::from).unwrap_or_else(|_| Stdio::null());
    let mut child = match Command::new(exe)
        .args(["worker", "--icd", &cfg.icd])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
    {
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
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all((batch.join("\n") + "\n").as_bytes());
    }
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(l) = parse_line(&line) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        }
    });
    let mut results = Vec::new();
    let mut current: Option<(String, Instant)> = None;
    let mut done = 0usize;
    loop {
        let wait = match &current {
            Some((_, started)) => cfg.timeout.saturating_sub(started.elapsed()),
            None => cfg.timeout,
        };
        match rx.recv_timeout(wait) {
            Ok(Line::Start(name)) => current = Some((name, Instant::now())),
            Ok(Line::Result(status, seconds, reason)) => {
                if let Some((name, _)) = current.take() {
                    results.push(CaseResult { name, status, seconds, reason });
                    done += 1;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // The current case (or the worker's start-up) hangs: kill the worker.
                let _ = child.kill();
                let _ = child.wait();
                let _ = reader.join();
                let (name, idx) = match current.take() {
                    Some((n, _)) => (n, done),
                    None => (batch[done].clone(), done),
                };
                results.push(CaseResult {
                    name,
                    status: Status::Timeout,
                    seconds: cfg.timeout.as_secs_f64(),
                    reason: format!("no result within {} s; worker killed", cfg.timeout.as_secs()),
                });
                return (results, batch[idx + 1..].to_vec());
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = child.wait();
                let _ = reader.join();
                if let Some((name, started)) = current.take() {
                    let how = match status {
                        Ok(s) => describe_exit(s),
                        Err(e) => e.to_string(),
                    };
                    results.push(CaseResult {
                        name,
                        status: Status::Crash,
                        seconds: started.elapsed().as_secs_f64(),
                        reason: format!("the worker died during the case ({how})"),
                    });
                    done += 1;
                    return (results, batch[done..].to_vec());
                }
                if done < batch.len() {
                    if results.is_empty() {
                        // Died before running anything: blame the first case so the run
                        // still makes progress.
                        let how = status.map(describe_exit).unwrap_or_else(|e| e.to_string());
                        results.push(CaseResult {
                            name: batch[done].clone(),
                            status: Status::Crash,
                            seconds: 0.0,
                            reason: format!("the worker died before reporting ({how})"),
                        });
                        done += 1;
                    }
                    // Died between cases: the next one never started; retry the rest.
                    return (results, batch[done..].to_vec());
                }
                return (results, Vec::new());
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
                loop {
                    let Some(mut batch) = queue.lock().expect("queue").pop_front() else { break };
                    while !batch.is_empty() {
                        let (res, rest) = run_batch(cfg, &batch, &mut log);
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
