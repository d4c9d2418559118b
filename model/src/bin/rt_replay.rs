//! rt_replay: re-traces the rays of a ray log (`VORTEX_RAYLOG=path`, `docs/RAYLOG.md`)
//! through the model's RTU and classifies every result that differs from the recorded one.

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use vortex_model::config::{DeviceConfig, RtuConfig};
use vortex_model::rtu::raylog::RayLog;
use vortex_model::rtu::replay::{self, Engine};

const USAGE: &str = "usage: rt_replay [options] LOG
Re-traces every ray of a VORTEX_RAYLOG log in warp batches of 32, answering candidates with the
recorded decisions, and compares each result with the recorded one bit for bit.
  --engine E      functional | timed | reference | all (repeatable; default: all)
  --config FILE   replay under the RTU knobs of a VORTEX_CONFIG TOML file (stack depth, ...)
  --verbose [N]   print the first N mismatches per engine with their rays (default N = 10)
  --quiet         no progress output
Exit status: 0 every compared ray matches, 1 some mismatch, 2 error (bad arguments, unreadable
or malformed log).";

struct Args {
    log: String,
    engines: Vec<Engine>,
    cfg: RtuConfig,
    config_name: String,
    verbose: usize,
    quiet: bool,
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut log = None;
    let mut engines = Vec::new();
    let mut cfg = RtuConfig::default();
    let mut config_name = "default".to_string();
    let mut verbose = 0;
    let mut quiet = false;
    let mut pending: Option<String> = None;
    while let Some(a) = pending.take().or_else(|| it.next()) {
        match a.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "--engine" => {
                let v = it.next().ok_or("--engine needs a value")?;
                if v == "all" {
                    engines.extend(Engine::ALL);
                } else {
                    engines.push(Engine::parse(&v).ok_or_else(|| format!("unknown engine {v:?}"))?);
                }
            }
            "--config" => {
                let v = it.next().ok_or("--config needs a file")?;
                cfg = DeviceConfig::from_file(&v)?.rtu;
                config_name = v;
            }
            "--verbose" | "-v" => {
                verbose = 10;
                if let Some(n) = it.next() {
                    match n.parse::<usize>() {
                        Ok(n) => verbose = n,
                        Err(_) => pending = Some(n),
                    }
                }
            }
            "--quiet" | "-q" => quiet = true,
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            _ => {
                if log.replace(a).is_some() {
                    return Err("more than one log given".into());
                }
            }
        }
    }
    if engines.is_empty() {
        engines.extend(Engine::ALL);
    }
    engines.dedup();
    Ok(Args { log: log.ok_or("no log given")?, engines, cfg, config_name, verbose, quiet })
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("rt_replay: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let t0 = Instant::now();
    let log = match RayLog::read(std::path::Path::new(&args.log)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("rt_replay: {e}");
            return ExitCode::from(2);
        }
    };
    println!(
        "rt_replay: {} — {} traces, {} lines ({} KB), RTU config: {} (stack_depth {}, restart_cap {}), read in {:.2} s",
        args.log,
        log.traces.len(),
        log.lines.len(),
        log.lines.len() * 64 / 1024,
        args.config_name,
        args.cfg.stack_depth,
        args.cfg.restart_cap,
        t0.elapsed().as_secs_f64()
    );
    let mut reports = Vec::new();
    for &engine in &args.engines {
        let start = Instant::now();
        let mut last = Instant::now();
        let quiet = args.quiet;
        let mut progress = |done: usize, total: usize| {
            if !quiet && last.elapsed() >= Duration::from_secs(2) {
                last = Instant::now();
                eprintln!(
                    "[{}] {done}/{total} rays ({:.0}%)",
                    engine.name(),
                    100.0 * done as f64 / total.max(1) as f64
                );
            }
        };
        match replay::replay(&log, engine, &args.cfg, args.verbose, &mut progress) {
            Ok(r) => {
                if !args.quiet {
                    eprintln!(
                        "[{}] {} rays in {} batches, {:.2} s",
                        engine.name(),
                        r.rays,
                        r.batches,
                        start.elapsed().as_secs_f64()
                    );
                }
                reports.push(r);
            }
            Err(e) => {
                eprintln!("rt_replay: {}: {e}", engine.name());
                return ExitCode::from(2);
            }
        }
    }
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{}", replay::summary(&reports));
    for r in &reports {
        for m in r.mismatches.iter().take(args.verbose) {
            let _ = writeln!(
                out,
                "[{}] trace {}: {}{}",
                r.engine.name(),
                m.index,
                m.class.name(),
                if m.detail.is_empty() { String::new() } else { format!(" ({})", m.detail) }
            );
            let _ = writeln!(out, "    ray      {}", replay::describe_ray(&m.ray));
            let _ = writeln!(out, "    recorded {}", replay::describe(&m.recorded));
            let _ = writeln!(out, "    got      {}", replay::describe(&m.got));
        }
    }
    if reports.iter().any(|r| r.mismatched() > 0) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
