//! The command line: `vortex-cts [options]` runs cases, `vortex-cts worker --icd X` is the
//! worker side (internal).
//!
//! Two sources of cases: the port's own (stages C0-C4, run by this executable's workers), or
//! a real dEQP binary (`--deqp PATH` with `--caselist FILE`s), which the same pool drives one
//! case-list batch at a time.

use super::baseline::{judge, Baseline, Verdict};
use super::pool::{self, Backend, PoolConfig};
use super::{CaseResult, Status};
use crate::case::{all_cases, Stage};
use crate::glob;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vortex_examples::icd::Icd;

pub const USAGE: &str = "\
vortex-cts: the compute-stage core of dEQP-VK.ray_query (C0-C2, and C4: host builds) with a deqp-runner-style runner,
which also drives a real deqp-vk binary

usage: vortex-cts [options] [-- deqp-args...]

  --icd LIST          ICDs to run on, comma-separated: vortex, lavapipe or a manifest path
                      (default: vortex)
  --stage LIST        stages of the port to run: C0, C1, C2, C4 (default: all)
  --deqp PATH         run a real dEQP binary instead of the port (with --caselist)
  --caselist FILE     a dEQP case list (one name a line); repeatable, one group each
  --results CSV       judge a finished run instead of running (deqp-runner's results.csv):
                      its cases against the baseline and --oracle, one group
  --oracle CSV        another driver's results (deqp-runner results.csv, e.g. lavapipe's):
                      a case it passes that is NotSupported here is a regression unless the
                      baseline's <icd>-missing.txt lists it with its reason
  -t, --case GLOB     run only cases matching GLOB (`*` crosses dots, as in --deqp-case);
                      repeatable
  -e, --exclude GLOB  do not run cases matching GLOB; repeatable
  --fraction N        run 1 case out of every N of each group (after filtering), as
  --fraction-start K  deqp-runner does: starting with the Kth (default 1), to shard a run
                      across machines (--every N is --fraction N)
  --jobs N            parallel worker processes (default: available cores)
  --timeout SECS      per-case timeout (default: 300)
  --batch N           cases per worker process before it is replaced (default: 32; 500 with --deqp)
  --output DIR        where results go (default: cts-results); DIR/<icd>/results.csv
  --baselines DIR     baseline directory (default: the crate's baselines/, or deqp/baselines/ with --deqp)
  --list              print the selected case names and exit
  -q, --quiet         no per-case progress on stderr
";

pub struct Options {
    pub icds: Vec<String>,
    pub stages: Vec<Stage>,
    pub deqp: Option<PathBuf>,
    pub caselists: Vec<PathBuf>,
    pub deqp_args: Vec<String>,
    pub oracle: Option<PathBuf>,
    pub results: Option<PathBuf>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub fraction: usize,
    pub fraction_start: usize,
    pub jobs: usize,
    pub timeout: Duration,
    pub batch: Option<usize>,
    pub output: PathBuf,
    pub baselines: Option<PathBuf>,
    pub list: bool,
    pub quiet: bool,
}

pub fn default_baselines() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("baselines")
}

/// The baselines of runs of the real deqp-vk (`cts/deqp/baselines`).
pub fn deqp_baselines() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deqp").join("baselines")
}

fn number(v: String, what: &str) -> Result<usize, String> {
    v.parse().map_err(|_| format!("{what} needs a number"))
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        icds: vec!["vortex".into()],
        stages: Stage::ALL.to_vec(),
        deqp: None,
        caselists: Vec::new(),
        deqp_args: Vec::new(),
        oracle: None,
        results: None,
        include: Vec::new(),
        exclude: Vec::new(),
        fraction: 1,
        fraction_start: 1,
        jobs: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        timeout: Duration::from_secs(300),
        batch: None,
        output: PathBuf::from("cts-results"),
        baselines: None,
        list: false,
        quiet: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            o.deqp_args = it.by_ref().cloned().collect();
            break;
        }
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
                    .map(|s| Stage::parse(s).ok_or(format!("unknown stage {s} (C0, C1, C2 or C4)")))
                    .collect::<Result<_, _>>()?
            }
            "--deqp" => o.deqp = Some(PathBuf::from(value()?)),
            "--caselist" => o.caselists.push(PathBuf::from(value()?)),
            "--oracle" => o.oracle = Some(PathBuf::from(value()?)),
            "--results" => o.results = Some(PathBuf::from(value()?)),
            "-t" | "--case" => o.include.push(value()?),
            "-e" | "--exclude" => o.exclude.push(value()?),
            "--every" | "--fraction" => o.fraction = number(value()?, &key)?,
            "--fraction-start" => o.fraction_start = number(value()?, &key)?,
            "--jobs" | "-j" => o.jobs = number(value()?, &key)?,
            "--timeout" => o.timeout = Duration::from_secs(value()?.parse().map_err(|_| "--timeout needs seconds")?),
            "--batch" => o.batch = Some(number(value()?, &key)?),
            "--output" => o.output = PathBuf::from(value()?),
            "--baselines" => o.baselines = Some(PathBuf::from(value()?)),
            "--list" => o.list = true,
            "-q" | "--quiet" => o.quiet = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    if o.fraction == 0 || o.fraction_start == 0 {
        return Err("--fraction and --fraction-start need positive numbers".into());
    }
    if o.results.is_some() {
        o.caselists = o.results.iter().cloned().collect();
    } else if o.deqp.is_some() == o.caselists.is_empty() {
        return Err("--deqp and --caselist go together".into());
    }
    Ok(o)
}

/// Filters `names` by the globs and the fraction, keeping their order.
fn filter(names: impl Iterator<Item = String>, o: &Options) -> Vec<String> {
    names
        .filter(|n| o.include.is_empty() || o.include.iter().any(|g| glob::matches(g, n)))
        .filter(|n| !o.exclude.iter().any(|g| glob::matches(g, n)))
        .skip(o.fraction_start - 1)
        .step_by(o.fraction)
        .collect()
}

/// The selected case names of one stage of the port, in dEQP's registration order.
pub fn select(all: &[String], stage: Stage, o: &Options) -> Vec<String> {
    filter(all.iter().filter(|n| Stage::of(n) == stage).cloned(), o)
}

/// The groups of cases to run, each with its label: the port's stages, or one group per
/// case list.
fn groups(o: &Options) -> Result<Vec<(String, Vec<String>)>, String> {
    if !deqp_mode(o) {
        let all: Vec<String> = all_cases().into_iter().map(|c| c.name).collect();
        return Ok(o.stages.iter().map(|s| (s.name().to_string(), select(&all, *s, o))).collect());
    }
    o.caselists
        .iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("cannot read case list {}: {e}", path.display()))?;
            // A results file names its case first, before the status.
            let names = text
                .lines()
                .map(|l| l.split(',').next().unwrap_or("").trim())
                .filter(|l| !l.is_empty() && !l.starts_with('#'));
            let label = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or("cases".into());
            Ok((label, filter(names.map(str::to_string), o)))
        })
        .collect()
}

/// Cases of a real dEQP binary (run now, or judged from a finished run), not the port's.
fn deqp_mode(o: &Options) -> bool {
    o.deqp.is_some() || o.results.is_some()
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
        ["Pass", "Warn", "Fail", "Skip", "Crash", "Timeout"]
            .iter()
            .filter(|s| **s != "Warn" || self.raw.contains_key(*s))
            .map(|s| format!("{s} {}", self.raw.get(s).copied().unwrap_or(0)))
            .collect::<Vec<_>>()
            .join(", ")
    }
    fn regressions(&self) -> usize {
        self.counts.iter().filter(|(v, _)| v.is_regression()).map(|(_, n)| n).sum()
    }
    fn verdict_line(&self) -> String {
        use Verdict::*;
        [Pass, Warn, Fail, Skip, ExpectedFail, Flake, Crash, Timeout, UnexpectedPass, Missing, ExpectedMissing]
            .iter()
            .filter(|v| !matches!(v, Warn | Missing | ExpectedMissing) || self.get(**v) > 0)
            .map(|v| format!("{}: {}", v.name(), self.get(*v)))
            .collect::<Vec<_>>()
            .join(", ")
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

/// A status in a deqp-runner results file, which holds its verdicts against its baseline:
/// back to what the case did.
fn runner_status(s: &str) -> Option<Status> {
    Some(match s {
        "ExpectedFail" | "Flake" | "KnownFlake" => Status::Fail,
        "UnexpectedPass" | "UnexpectedImprovement(Pass)" => Status::Pass,
        "Missing" => Status::Crash,
        _ if s.starts_with("UnexpectedImprovement") => Status::Pass,
        _ => Status::parse(s)?,
    })
}

/// A finished run's results (deqp-runner's `results.csv`: `test,Status,seconds`).
fn read_results(path: &Path) -> Result<Vec<CaseResult>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            let status = f.get(1).and_then(|s| runner_status(s.trim()));
            match (f.first(), status) {
                (Some(name), Some(status)) => Ok(CaseResult {
                    name: name.trim().to_string(),
                    status,
                    seconds: f.get(2).and_then(|s| s.trim().parse().ok()).unwrap_or(0.0),
                    reason: String::new(),
                }),
                _ => Err(format!("{}: `{line}` is not test,Status,seconds", path.display())),
            }
        })
        .collect()
}

/// Everything one ICD's run produced.
struct IcdRun {
    label: String,
    tally: Tally,
    judged: Vec<(CaseResult, Verdict)>,
    /// (group, wall seconds, raw counts)
    groups: Vec<(String, f64, String)>,
}

fn load_baseline(o: &Options, label: &str) -> Result<Baseline, String> {
    let dir = o.baselines.clone().unwrap_or_else(|| if deqp_mode(o) { deqp_baselines() } else { default_baselines() });
    let mut b = Baseline::load(&dir, label)?;
    if let Some(oracle) = &o.oracle {
        b.load_oracle(oracle)?;
    }
    Ok(b)
}

/// Runs every group on one ICD and judges the results against its baseline.
fn run_icd(o: &Options, icd: &str, groups: &[(String, Vec<String>)]) -> Result<IcdRun, String> {
    let label = icd_label(icd);
    Icd::parse(icd).manifest().map_err(|e| e.to_string())?;
    let baseline = load_baseline(o, &label)?;
    let backend = match &o.deqp {
        Some(binary) => Backend::Deqp { binary: binary.clone(), args: o.deqp_args.clone() },
        None => Backend::Port,
    };
    let batch = o.batch.unwrap_or(if deqp_mode(o) { 500 } else { 32 });
    let mut run = IcdRun { label: label.clone(), tally: Tally::default(), judged: Vec::new(), groups: Vec::new() };
    for (group, names) in groups {
        let names: Vec<String> = names.iter().filter(|n| !baseline.skipped(n)).cloned().collect();
        if names.is_empty() {
            continue;
        }
        if !o.quiet {
            eprintln!("[{label}] {group}: {} cases, {} jobs", names.len(), o.jobs);
        }
        let cfg = PoolConfig {
            icd: icd.to_string(),
            backend: backend.clone(),
            jobs: o.jobs,
            timeout: o.timeout,
            batch,
            log_dir: o.output.join(&label).join("logs"),
            progress: !o.quiet,
        };
        let start = Instant::now();
        let mut results = match &o.results {
            Some(path) => {
                let wanted: std::collections::HashSet<&String> = names.iter().collect();
                read_results(path)?.into_iter().filter(|r| wanted.contains(&r.name)).collect()
            }
            None => pool::run(&cfg, &names),
        };
        let wall = start.elapsed().as_secs_f64();
        let order: BTreeMap<&String, usize> = names.iter().enumerate().map(|(i, n)| (n, i)).collect();
        results.sort_by_key(|r| order.get(&r.name).copied().unwrap_or(usize::MAX));
        let mut st = Tally::default();
        for r in results {
            let v = judge(&baseline, &r);
            st.add(&r, v);
            run.tally.add(&r, v);
            run.judged.push((r, v));
        }
        run.groups.push((group.clone(), wall, st.raw_line()));
    }
    if let Err(e) = write_results(&o.output.join(&label), &run.judged) {
        eprintln!("error: cannot write results under {}: {e}", o.output.display());
    }
    Ok(run)
}

/// The regressions, then the verdict counts of one ICD.
fn report_icd(o: &Options, run: &IcdRun) {
    let label = &run.label;
    println!();
    for (r, v) in run.judged.iter().filter(|(_, v)| v.is_regression()) {
        println!("[{label}] {}: {} ({})", v.name(), r.name, r.reason);
    }
    println!(
        "[{label}] {}  (results in {})",
        run.tally.verdict_line(),
        o.output.join(label).join("results.csv").display()
    );
}

/// Per-group counts, the wall-time table (groups x ICDs) and the last line.
fn report_all(runs: &[IcdRun]) -> i32 {
    println!();
    for run in runs {
        for (g, wall, raw) in &run.groups {
            println!("[{}] {g}: {raw} ({})", run.label, fmt_secs(*wall));
        }
        println!("[{}] all: {}", run.label, run.tally.raw_line());
    }
    let mut names: Vec<&str> = Vec::new();
    for run in runs {
        for (g, _, _) in &run.groups {
            if !names.contains(&g.as_str()) {
                names.push(g);
            }
        }
    }
    let width = names.iter().map(|n| n.len()).max().unwrap_or(5).max(9);
    print!("{:<width$}", "wall time");
    for run in runs {
        print!("  {:>10}", run.label);
    }
    println!();
    for g in &names {
        print!("{g:<width$}");
        for run in runs {
            let t = run.groups.iter().find(|(x, _, _)| x == g).map(|(_, s, _)| fmt_secs(*s));
            print!("  {:>10}", t.unwrap_or("-".into()));
        }
        println!();
    }
    print!("{:<width$}", "total");
    for run in runs {
        print!("  {:>10}", fmt_secs(run.groups.iter().map(|(_, s, _)| s).sum()));
    }
    println!();
    let sum = |f: &dyn Fn(&IcdRun) -> usize| runs.iter().map(f).sum::<usize>();
    let pass = sum(&|r| r.tally.get(Verdict::Pass) + r.tally.get(Verdict::Warn));
    let skip = sum(&|r| r.tally.get(Verdict::Skip) + r.tally.get(Verdict::ExpectedMissing));
    let regress = sum(&|r| r.tally.regressions());
    println!("{pass} passed, {regress} failed, {skip} skipped");
    i32::from(regress > 0)
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
    let groups = match groups(&o) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    if o.list {
        groups.iter().flat_map(|(_, names)| names).for_each(|n| println!("{n}"));
        return 0;
    }
    if !deqp_mode(&o) {
        if let Err(e) = crate::fw::shader::check_tools() {
            eprintln!("error: {e}");
            return 2;
        }
    }
    let mut runs = Vec::new();
    for icd in &o.icds {
        match run_icd(&o, icd, &groups) {
            Ok(run) => {
                report_icd(&o, &run);
                runs.push(run);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return 2;
            }
        }
    }
    report_all(&runs)
}
