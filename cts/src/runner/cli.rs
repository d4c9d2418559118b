//! The command line: `vortex-cts [options]` runs cases, `vortex-cts worker --icd X` is the
//! worker side (internal).

use super::baseline::{judge, Baseline, Verdict};
use super::pool::{self, PoolConfig};
use super::{CaseResult, Status};
use crate::case::{all_cases, Stage};
use crate::glob;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vortex_examples::icd::Icd;

pub const USAGE: &str = "\
vortex-cts: the compute-stage core of dEQP-VK.ray_query (C0-C2) with a deqp-runner-style runner

usage: vortex-cts [options]

  --icd LIST          ICDs to run on, comma-separated: vortex, lavapipe or a manifest path
                      (default: vortex)
  --stage LIST        stages to run: C0, C1, C2 (default: C0,C1,C2)
  -t, --case GLOB     run only cases matching GLOB (`*` crosses dots, as in --deqp-case);
                      repeatable
  -e, --exclude GLOB  do not run cases matching GLOB; repeatable
  --every N           run every Nth case of each stage (after filtering): a fixed sample
  --jobs N            parallel worker processes (default: available cores)
  --timeout SECS      per-case timeout (default: 300)
  --batch N           cases per worker process before it is replaced (default: 32)
  --output DIR        where results go (default: cts-results); DIR/<icd>/results.csv
  --baselines DIR     baseline directory (default: the crate's baselines/)
  --list              print the selected case names and exit
  -q, --quiet         no per-case progress on stderr
";

pub struct Options {
    pub icds: Vec<String>,
    pub stages: Vec<Stage>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub every: usize,
    pub jobs: usize,
    pub timeout: Duration,
    pub batch: usize,
    pub output: PathBuf,
    pub baselines: PathBuf,
    pub list: bool,
    pub quiet: bool,
}

pub fn default_baselines() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("baselines")
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        icds: vec!["vortex".into()],
        stages: Stage::ALL.to_vec(),
        include: Vec::new(),
        exclude: Vec::new(),
        every: 1,
        jobs: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        timeout: Duration::from_secs(300),
        batch: 32,
        output: PathBuf::from("cts-results"),
        baselines: default_baselines(),
        list: false,
        quiet: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| it.next().cloned()).ok_or(format!("{key} needs a value"));
        match key.as_str() {
            "--icd" => o.icds = value()?.split(',').map(str::to_string).collect(),
            "--stage" => {
                o.stages = value()?
                    .split(',')
                    .map(|s| Stage::parse(s).ok_or(format!("unknown stage {s} (C0, C1 or C2)")))
                    .collect::<Result<_, _>>()?
            }
            "-t" | "--case" => o.include.push(value()?),
            "-e" | "--exclude" => o.exclude.push(value()?),
            "--every" => o.every = value()?.parse().map_err(|_| "--every needs a positive number")?,
            "--jobs" | "-j" => o.jobs = value()?.parse().map_err(|_| "--jobs needs a number")?,
            "--timeout" => o.timeout = Duration::from_secs(value()?.parse().map_err(|_| "--timeout needs seconds")?),
            "--batch" => o.batch = value()?.parse().map_err(|_| "--batch needs a number")?,
            "--output" => o.output = PathBuf::from(value()?),
            "--baselines" => o.baselines = PathBuf::from(value()?),
            "--list" => o.list = true,
            "-q" | "--quiet" => o.quiet = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    if o.every == 0 {
        return Err("--every needs a positive number".into());
    }
    Ok(o)
}

/// The selected case names of one stage, in dEQP's registration order.
pub fn select(all: &[String], stage: Stage, o: &Options) -> Vec<String> {
    all.iter()
        .filter(|n| Stage::of(n) == stage)
        .filter(|n| o.include.is_empty() || o.include.iter().any(|g| glob::matches(g, n)))
        .filter(|n| !o.exclude.iter().any(|g| glob::matches(g, n)))
        .enumerate()
        .filter(|(i, _)| i % o.every == 0)
        .map(|(_, n)| n.clone())
        .collect()
}

fn icd_label(icd: &str) -> String {
    match icd {
        "vortex" | "lavapipe" => icd.to_string(),
        path => Path::new(path).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "icd".into()),
    }
}

#[derive(Default)]
struct Tally {
    counts: BTreeMap<Verdict, usize>,
    raw: BTreeMap<&'static str, usize>,
}

impl Tally {
    fn add(&mut self, r: &CaseResult, v: Verdict) {
        *self.counts.entry(v).or_default() += 1;
        *self.raw.entry(r.status.name()).or_default() += 1;
    }
    fn get(&self, v: Verdict) -> usize {
        self.counts.get(&v).copied().unwrap_or(0)
    }
    fn raw_line(&self) -> String {
        ["Pass", "Fail", "Skip", "Crash", "Timeout"]
            .iter()
            .map(|s| format!("{s} {}", self.raw.get(s).copied().unwrap_or(0)))
            .collect::<Vec<_>>()
            .join(", ")
    }
    fn regressions(&self) -> usize {
        self.counts.iter().filter(|(v, _)| v.is_regression()).map(|(_, n)| n).sum()
    }
}

fn write_results(dir: &Path, results: &[(CaseResult, Verdict)]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut csv = std::fs::File::create(dir.join("results.csv"))?;
    let mut failures = std::fs::File::create(dir.join("failures.csv"))?;
    let mut details = std::fs::File::create(dir.join("details.csv"))?;
    for (r, v) in results {
        writeln!(csv, "{},{},{:.3}", r.name, r.status, r.seconds)?;
        if v.is_regression() {
            writeln!(failures, "{},{}", r.name, v.name())?;
        }
        if r.status != Status::Pass || *v != Verdict::Pass {
            writeln!(details, "{},{},{},\"{}\"", r.name, r.status, v.name(), r.reason.replace('"', "'"))?;
        }
    }
    Ok(())
}

fn fmt_secs(s: f64) -> String {
    if s >= 60.0 {
        format!("{}m{:04.1}s", (s / 60.0) as u64, s % 60.0)
    } else {
        format!("{s:.2}s")
    }
}

/// Runs the command line; returns the process exit code.
pub fn main(args: Vec<String>) -> i32 {
    if args.first().map(String::as_str) == Some("worker") {
        let icd =
            args.iter().position(|a| a == "--icd").and_then(|i| args.get(i + 1)).cloned().unwrap_or("vortex".into());
        return super::worker::main(&Icd::parse(&icd));
    }
    let o = match parse(&args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            print!("{USAGE}");
            return 0;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return 2;
        }
    };
    let all: Vec<String> = all_cases().into_iter().map(|c| c.name).collect();
    if o.list {
        for st in &o.stages {
            for n in select(&all, *st, &o) {
                println!("{n}");
            }
        }
        return 0;
    }
    if let Err(e) = crate::fw::shader::check_tools() {
        eprintln!("error: {e}");
        return 2;
    }
    let mut total_pass = 0;
    let mut total_regress = 0;
    let mut total_skip = 0;
    let mut walls: BTreeMap<(Stage, String), f64> = BTreeMap::new();
    let mut summaries = Vec::new();
    for icd in &o.icds {
        let label = icd_label(icd);
        if let Err(e) = Icd::parse(icd).manifest() {
            eprintln!("error: {e}");
            return 2;
        }
        let baseline = match Baseline::load(&o.baselines, &label) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("error: {e}");
                return 2;
            }
        };
        let mut judged = Vec::new();
        let mut tally = Tally::default();
        for &stage in &o.stages {
            let names: Vec<String> = select(&all, stage, &o).into_iter().filter(|n| !baseline.skipped(n)).collect();
            if names.is_empty() {
                continue;
            }
            if !o.quiet {
                eprintln!("[{label}] {}: {} cases, {} jobs", stage.name(), names.len(), o.jobs);
            }
            let cfg = PoolConfig {
                icd: icd.clone(),
                jobs: o.jobs,
                timeout: o.timeout,
                batch: o.batch,
                log_dir: o.output.join(&label).join("logs"),
                progress: !o.quiet,
            };
            let start = Instant::now();
            let mut results = pool::run(&cfg, &names);
            walls.insert((stage, label.clone()), start.elapsed().as_secs_f64());
            let order: BTreeMap<&String, usize> = names.iter().enumerate().map(|(i, n)| (n, i)).collect();
            results.sort_by_key(|r| order.get(&r.name).copied().unwrap_or(usize::MAX));
            let mut st = Tally::default();
            for r in results {
                let v = judge(&baseline, &r);
                st.add(&r, v);
                tally.add(&r, v);
                judged.push((r, v));
            }
            summaries.push(format!(
                "[{label}] {}: {} ({})",
                stage.name(),
                st.raw_line(),
                fmt_secs(walls[&(stage, label.clone())])
            ));
        }
        if let Err(e) = write_results(&o.output.join(&label), &judged) {
            eprintln!("error: cannot write results under {}: {e}", o.output.display());
        }
        let regressions: Vec<&(CaseResult, Verdict)> = judged.iter().filter(|(_, v)| v.is_regression()).collect();
        println!();
        for (r, v) in &regressions {
            println!("[{label}] {}: {} ({})", v.name(), r.name, r.reason);
        }
        println!(
            "[{label}] Pass: {}, Fail: {}, Skip: {}, ExpectedFail: {}, Flake: {}, Crash: {}, Timeout: {}, UnexpectedPass: {}  (results in {})",
            tally.get(Verdict::Pass),
            tally.get(Verdict::Fail),
            tally.get(Verdict::Skip),
            tally.get(Verdict::ExpectedFail),
            tally.get(Verdict::Flake),
            tally.get(Verdict::Crash),
            tally.get(Verdict::Timeout),
            tally.get(Verdict::UnexpectedPass),
            o.output.join(&label).join("results.csv").display()
        );
        total_pass += tally.get(Verdict::Pass);
        total_skip += tally.get(Verdict::Skip);
        total_regress += tally.regressions();
        summaries.push(format!("[{label}] all: {}", tally.raw_line()));
    }
    println!();
    for s in &summaries {
        println!("{s}");
    }
    // Wall time per stage, ICDs side by side.
    let labels: Vec<String> = o.icds.iter().map(|i| icd_label(i)).collect();
    print!("wall time");
    for l in &labels {
        print!("  {l:>10}");
    }
    println!();
    for &stage in &o.stages {
        if !labels.iter().any(|l| walls.contains_key(&(stage, l.clone()))) {
            continue;
        }
        print!("{:<9}", stage.name());
        for l in &labels {
            print!("  {:>10}", walls.get(&(stage, l.clone())).map(|s| fmt_secs(*s)).unwrap_or("-".into()));
        }
        println!();
    }
    print!("{:<9}", "total");
    for l in &labels {
        let t: f64 = walls.iter().filter(|((_, x), _)| x == l).map(|(_, s)| s).sum();
        print!("  {:>10}", fmt_secs(t));
    }
    println!();
    println!("{total_pass} passed, {total_regress} failed, {total_skip} skipped");
    if total_regress > 0 {
        1
    } else {
        0
    }
}
