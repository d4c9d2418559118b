//! rt_replay: re-traces the rays of a ray log (`VORTEX_RAYLOG=path`, `docs/RAYLOG.md`)
//! through the model's RTU (or, for an rdna2 device's traces, the host form of its shader
//! loop) and classifies every result that differs from the recorded one; `--against` compares
//! two logs of one workload ray by ray.

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use vortex_model::config::{DeviceConfig, RtuConfig};
use vortex_model::rtu::raylog::RayLog;
use vortex_model::rtu::replay::{self, Engine};

const USAGE: &str = "usage: rt_replay [options] LOG
Re-traces every ray of a VORTEX_RAYLOG log in warp batches of 32, answering candidates with the
recorded decisions, and compares each result with the recorded one bit for bit.
  --engine E      functional | timed | reference | rdna2 | all (repeatable; default: the RT unit's
                  three for its traces, rdna2 for an rdna2 device's shader-walk traces)
  --against B     also pair every ray with its twin in log B (the same workload recorded on
                  another architecture) and compare their committed hits bit for bit
  --config FILE   replay under the RTU knobs of a VORTEX_CONFIG TOML file (stack depth, ...)
  --verbose [N]   print the first N mismatches per engine with their rays (default N = 10)
  --quiet         no progress output
Exit status: 0 every compared ray matches, 1 some mismatch, 2 error (bad arguments, unreadable
or malformed log).";

struct Args {
    log: String,
    against: Option<String>,
    engines: Vec<Engine>,
    cfg: RtuConfig,
    config_name: String,
    verbose: usize,
    quiet: bool,
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut log = None;
    let mut against = None;
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
                    engines.push(Engine::Rdna2);
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
            "--against" => against = Some(it.next().ok_or("--against needs a log")?),
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            _ => {
                if log.replace(a).is_some() {
                    return Err("more than one log given".into());
                }
            }
        }
    }
    engines.dedup();
    Ok(Args { log: log.ok_or("no log given")?, against, engines, cfg, config_name, verbose, quiet })
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
    let mut engines = args.engines.clone();
    if engines.is_empty() {
        if log.traces.iter().any(|t| !t.shader_walk()) {
            engines.extend(Engine::ALL);
        }
        if log.traces.iter().any(|t| t.shader_walk()) {
            engines.push(Engine::Rdna2);
        }
    }
    let mut reports = Vec::new();
    for &engine in &engines {
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
    let mut disagree = false;
    if let Some(b) = &args.against {
        let other = match RayLog::read(std::path::Path::new(b)) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("rt_replay: {e}");
                return ExitCode::from(2);
            }
        };
        let a = replay::agreement(&log, &other, args.verbose);
        let _ = writeln!(out, "against {b}: {} traces", other.traces.len());
        let _ = writeln!(out, "{:<20}{:>12}", "paired", a.paired);
        let _ = writeln!(out, "{:<20}{:>12}", "hit_or_miss_only", a.hit_only);
        let _ = writeln!(out, "{:<20}{:>12}", "unpaired", a.unpaired);
        for c in replay::Class::ALL {
            let _ = writeln!(out, "{:<20}{:>12}", c.name(), a.count(c));
        }
        let _ = writeln!(out, "{:<20}{:>12}", "disagreeing", a.disagreeing());
        for m in &a.mismatches {
            let _ = writeln!(out, "[against] trace {}: {}", m.index, m.class.name());
            let _ = writeln!(out, "    ray      {}", replay::describe_ray(&m.ray));
            let _ = writeln!(out, "    this log {}", replay::describe(&m.recorded));
            let _ = writeln!(out, "    other    {}", replay::describe(&m.got));
        }
        disagree = a.disagreeing() > 0;
    }
    if reports.iter().any(|r| r.mismatched() > 0) || disagree {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
