//! `bench --targets`: issue 18's targets measured in one run and printed as one table
//! (the one in `docs/PERFORMANCE.md`): the rays/s of the tracing scenes, the path tracer's
//! frame, the BLAS builds through the API, and timed mode's simulated cycles per second.
//!
//! Every workload behind a target runs on our driver and on lavapipe, each in its own child
//! process as the other tables do, and is cross-checked the same way (hit pixels, rays and
//! radiance, the builds' hits and hit checksum). A disagreement or a workload that did not
//! run makes its row "NO" (never met) and the exit code 1; a target measured and missed is a
//! result, "no", with exit code 0. The host's load average before and after and the commit
//! are printed with the table, so a reader can judge the run.
//!
//! Timed mode's speed comes from the path tracer's worker in timed mode (each frame's
//! simulated cycles per second, from its `VORTEX_STATS` record; its rays and radiance must
//! equal functional mode's exactly) and from `vortex-model`'s `rtbench speed` example, run
//! as the binary built next to this one (`target/release/examples/rtbench`, or
//! `--rtbench PATH`). rtbench's scene is built with the AS transcoder straight on the device
//! model, which this Vulkan client does not link; running the binary keeps one copy of it.

use crate::{hit_disagreements, measure, pathtrace, run_worker, run_worker_with, wrong_device, Measured, MODES};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use vortex_examples::buildbench;

/// What the run measures: the targets' own sizes, or `--quick`'s shrunk ones for a smoke run.
pub struct Plan {
    quick: bool,
    samples: u32,
    pt: pathtrace::Params,
    build_tris: Vec<usize>,
    build_reps: u32,
    build_rays: usize,
    /// Runs of each driver's build worker a flag, alternated; each time's least counts.
    build_runs: u32,
    /// The path tracer in timed mode.
    timed_pt: pathtrace::Params,
    rtbench_size: u32,
    rtbench_runs: u32,
    /// Runs of each driver on a tracing scene, alternated; each workload's fastest counts.
    rt_runs: u32,
    /// `rtbench`; by default the example built next to this binary.
    rtbench: Option<PathBuf>,
}

impl Plan {
    pub fn new(quick: bool, rtbench: Option<PathBuf>) -> Plan {
        let pt = pathtrace::Params::default();
        if quick {
            return Plan {
                quick,
                samples: 1,
                pt: pathtrace::Params { size: (96, 64), frames: 1, ..pt.clone() },
                build_tris: vec![5_000],
                build_reps: 1,
                build_rays: 1024,
                build_runs: 1,
                timed_pt: pathtrace::Params { size: (48, 32), frames: 1, ..pt },
                rtbench_size: 32,
                rtbench_runs: 1,
                rt_runs: 1,
                rtbench,
            };
        }
        Plan {
            quick,
            samples: 4,
            timed_pt: pathtrace::Params { size: (400, 300), ..pt.clone() },
            pt,
            build_tris: vec![100_000, 1_000_000],
            build_reps: 5,
            build_rays: 4096,
            build_runs: 2,
            rtbench_size: 256,
            rtbench_runs: 3,
            rt_runs: 3,
            rtbench,
        }
    }

    /// Runs a tracing scene gets: `rt_runs`, but one for the random soup, whose lavapipe
    /// run takes minutes and whose margin over the goal is wide.
    fn rt_runs(&self, scene: &str) -> u32 {
        if scene == "random" {
            1
        } else {
            self.rt_runs
        }
    }

    fn rt_size(&self, scene: &str) -> (u32, u32) {
        match (self.quick, scene) {
            // lavapipe traces the unsorted soup a few thousand rays a second.
            (true, "random") => (16, 12),
            (true, _) => (128, 96),
            (false, _) => crate::default_size(scene),
        }
    }
}

/// Why a cell's figure cannot be trusted.
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    /// The drivers (or our two modes) disagree on the result.
    Mismatch(String),
    /// The workload did not run, or ran on the wrong driver.
    Failed(String),
}

/// One measured figure: a ratio (ours / lavapipe, above 1 ours is faster) or a rate.
#[derive(Clone, Debug)]
pub struct Cell {
    pub label: String,
    pub value: f64,
    /// What was measured, as the table shows it.
    pub detail: String,
    /// Whether the target judges this figure (others are shown for context, and their
    /// cross-checks still count).
    pub judged: bool,
    pub problem: Option<Problem>,
}

impl Cell {
    fn failed(label: &str, why: String) -> Cell {
        let detail = format!("{label}: did not run");
        Cell { label: label.into(), value: f64::NAN, detail, judged: true, problem: Some(Problem::Failed(why)) }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unit {
    /// Ours / lavapipe.
    Ratio,
    /// Millions of simulated cycles a second.
    MCycles,
}

/// One row of the table: a target and what was measured against it.
#[derive(Clone, Debug)]
pub struct Target {
    pub name: String,
    pub goal: f64,
    pub unit: Unit,
    pub cells: Vec<Cell>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Met,
    /// The judged cells under the goal.
    NotMet(Vec<String>),
    /// Cells whose results disagree: never met, whatever their figures.
    Mismatch(Vec<String>),
    /// Cells that did not run.
    Failed(Vec<String>),
}

impl Target {
    pub fn verdict(&self) -> Verdict {
        let labels = |keep: &dyn Fn(&Cell) -> bool| -> Vec<String> {
            self.cells.iter().filter(|c| keep(c)).map(|c| c.label.clone()).collect()
        };
        let mismatched = labels(&|c| matches!(c.problem, Some(Problem::Mismatch(_))));
        if !mismatched.is_empty() {
            return Verdict::Mismatch(mismatched);
        }
        let failed = labels(&|c| matches!(c.problem, Some(Problem::Failed(_))));
        if !failed.is_empty() || !self.cells.iter().any(|c| c.judged) {
            return Verdict::Failed(failed);
        }
        // A figure that could not be computed (NaN) meets no goal.
        let missed = labels(&|c| c.judged && (c.value.is_nan() || c.value < self.goal));
        if missed.is_empty() {
            Verdict::Met
        } else {
            Verdict::NotMet(missed)
        }
    }

    fn goal_text(&self) -> String {
        match self.unit {
            Unit::Ratio => format!("≥ {}×", self.goal),
            Unit::MCycles => format!("≥ {} M simulated cycles/s", self.goal),
        }
    }
}

impl Verdict {
    /// The table's "met" column; a cell list only where the row has several cells.
    fn text(&self, cells: usize) -> String {
        let which =
            |v: &[String]| if cells > 1 && !v.is_empty() { format!(" ({})", v.join(", ")) } else { String::new() };
        match self {
            Verdict::Met => "yes".into(),
            Verdict::NotMet(v) => format!("no{}", which(v)),
            Verdict::Mismatch(v) => format!("**NO: results disagree**{}", which(v)),
            Verdict::Failed(v) => format!("**NO: did not run**{}", which(v)),
        }
    }

    pub fn broken(&self) -> bool {
        matches!(self, Verdict::Mismatch(_) | Verdict::Failed(_))
    }
}

/// A figure to three significant digits (whole numbers from 100 up).
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let decimals = (2.0 - x.abs().max(1e-9).log10().floor()).clamp(0.0, 6.0) as usize;
    format!("{x:.decimals$}")
}

/// The table (Markdown, as `docs/PERFORMANCE.md` holds it), then a line for every problem.
pub fn render(targets: &[Target]) -> String {
    let mut out = String::from("| target | measured (ours / lavapipe) | met |\n|---|---|---|\n");
    for t in targets {
        let shown = |judged: bool| -> Vec<&str> {
            t.cells.iter().filter(|c| c.judged == judged).map(|c| c.detail.as_str()).collect()
        };
        let mut measured = shown(true).join("; ");
        let context = shown(false);
        if !context.is_empty() {
            measured.push_str(&format!(" ({})", context.join("; ")));
        }
        let verdict = t.verdict().text(t.cells.iter().filter(|c| c.judged).count());
        out.push_str(&format!("| {} {} | {measured} | {verdict} |\n", t.name, t.goal_text()));
    }
    for t in targets {
        for c in &t.cells {
            match &c.problem {
                Some(Problem::Mismatch(why)) => {
                    out.push_str(&format!("  ! {}, {}: results disagree: {why}\n", t.name, c.label))
                }
                Some(Problem::Failed(why)) => out.push_str(&format!("  ! {}, {}: {why}\n", t.name, c.label)),
                None => {}
            }
        }
    }
    out
}

/// Runs `f`, saying on stderr what it is and how long it took (the whole run takes minutes).
fn step<T>(what: &str, f: impl FnOnce() -> T) -> T {
    eprintln!("bench --targets: {what} ...");
    let t = Instant::now();
    let r = f();
    eprintln!("bench --targets: {what}: {:.1} s", t.elapsed().as_secs_f64());
    r
}

/// Measures every target and prints the table; true if a row is broken (a disagreement or
/// a workload that did not run).
pub fn run(plan: &Plan) -> bool {
    let (load_before, commit) = (load_average(), commit());
    let started = Instant::now();
    let mut targets = rt_targets(plan);
    targets.push(pt_target(plan));
    targets.extend(plan.build_tris.iter().map(|&n| build_target(plan, n)));
    targets.push(timed_target(plan));
    println!(
        "Issue 18's targets, ours (vortex) against lavapipe in one run, bench --targets{}",
        if plan.quick { " --quick (sizes shrunk for a smoke run: the verdicts are not the targets')" } else { "" }
    );
    println!(
        "commit {commit}; load average (1, 5, 15 min) before {load_before}, after {}; {:.0} s",
        load_average(),
        started.elapsed().as_secs_f64()
    );
    if let Some(note) = rtbench_note(&rtbench_path(plan)) {
        println!("{note}");
    }
    println!();
    print!("{}", render(&targets));
    targets.iter().any(|t| t.verdict().broken())
}

/// `/proc/loadavg`'s three averages.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The commit of the source tree this binary was built from, marked when it has changes.
fn commit() -> String {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new(".."));
    let git = |args: &[&str]| {
        let out = Command::new("git").arg("-C").arg(repo).args(args).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    match (git(&["rev-parse", "--short", "HEAD"]), git(&["status", "--porcelain", "--untracked-files=no"])) {
        (Some(head), Some(changes)) if !changes.is_empty() => format!("{head} with uncommitted changes"),
        (Some(head), _) => head,
        _ => "unknown (no git)".into(),
    }
}

/// `ratio` as the table prints it.
fn times(ratio: f64) -> String {
    format!("{}×", num(ratio))
}

/// The tracing targets: the spheres' three workloads, the bunny, the random soup, and
/// any-hit on the 1M sphere, each scene run `Plan::rt_runs` times on each driver.
fn rt_targets(plan: &Plan) -> Vec<Target> {
    let measured = |scene: &str| {
        let size = plan.rt_size(scene);
        let runs = plan.rt_runs(scene);
        let run = |icd: &str, k: u32| {
            step(&format!("{scene} at {}x{} on {icd} (run {k} of {runs})", size.0, size.1), || {
                measure(icd, scene, size, plan.samples)
            })
        };
        // The drivers alternate, so a burst of load from elsewhere hits both alike.
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for k in 1..=runs {
            ours.push(run("vortex", k));
            theirs.push(run("lavapipe", k));
        }
        (fastest(ours), fastest(theirs))
    };
    let all = [0, 1, 2];
    let target = |name: &str, goal: f64, (ours, theirs): &RtRun, judged: &[usize]| Target {
        name: name.into(),
        goal,
        unit: Unit::Ratio,
        cells: rt_cells(ours, theirs, judged),
    };
    vec![
        target("instanced spheres, primary + shadow / AO / any-hit, each", 2.5, &measured("spheres"), &all),
        target("bunny, each workload", 8.0, &measured("bunny"), &all),
        target("random soup, each workload", 500.0, &measured("random"), &all),
        target("any-hit on the 1M sphere", 1.5, &measured("million"), &[2]),
    ]
}

type RtRun = (Result<Measured, String>, Result<Measured, String>);

/// Several runs of one driver on one scene as one: each workload's fastest run (the least
/// disturbed by other work on the host). A failed run fails the whole, and so do runs that
/// traced different rays or hit different pixels.
fn fastest(runs: Vec<Result<Measured, String>>) -> Result<Measured, String> {
    let mut runs = runs.into_iter();
    let mut best = runs.next().ok_or("no run")??;
    for (k, m) in runs.enumerate() {
        let m = m?;
        for (b, r) in best.modes.iter_mut().zip(m.modes) {
            if (b.1, b.2) != (r.1, r.2) {
                return Err(format!(
                    "run {} traced {} rays with {} hits where run 1 traced {} with {}",
                    k + 2,
                    r.1,
                    r.2,
                    b.1,
                    b.2
                ));
            }
            if r.0 < b.0 {
                b.0 = r.0;
            }
        }
        best.build_s = best.build_s.min(m.build_s);
    }
    Ok(best)
}

/// A scene's three workloads as cells, the `judged` ones counting toward the target.
fn rt_cells(ours: &Result<Measured, String>, theirs: &Result<Measured, String>, judged: &[usize]) -> Vec<Cell> {
    let (o, t) = match (ours, theirs) {
        (Ok(o), Ok(t)) => (o, t),
        (Err(e), _) | (_, Err(e)) => return judged.iter().map(|&k| Cell::failed(MODES[k], e.clone())).collect(),
    };
    let disagree = hit_disagreements(o, t);
    let wrong = [("vortex", o), ("lavapipe", t)]
        .into_iter()
        .find(|(icd, m)| wrong_device(icd, &m.device))
        .map(|(icd, m)| format!("the {icd} worker ran on {:?}", m.device));
    let rate = |m: &Measured, k: usize| m.modes[k].1 as f64 / m.modes[k].0 / 1e6;
    (0..3)
        .map(|k| {
            let ratio = rate(o, k) / rate(t, k);
            let problem = match (&wrong, &disagree[k]) {
                (Some(w), _) => Some(Problem::Failed(w.clone())),
                (None, Some(d)) => Some(Problem::Mismatch(d.clone())),
                (None, None) => None,
            };
            Cell {
                label: MODES[k].into(),
                value: ratio,
                detail: format!("{} {} / {} M rays/s {}", MODES[k], num(rate(o, k)), num(rate(t, k)), times(ratio)),
                judged: judged.contains(&k),
                problem,
            }
        })
        .collect()
}

/// The path tracer's best frame on each driver, rays and radiance cross-checked.
fn pt_target(plan: &Plan) -> Target {
    let p = &plan.pt;
    let (w, h) = p.size;
    let run = |icd: &str| {
        step(&format!("path tracer at {w}x{h} on {icd}"), || {
            run_worker(icd, "the path tracer", &p.args())
                .and_then(|out| pathtrace::parse(&out).ok_or_else(|| "the path tracer printed no frame".to_string()))
        })
    };
    let label = "path tracer";
    let cell = match (run("vortex"), run("lavapipe")) {
        (Ok(o), Ok(t)) => Cell {
            label: label.into(),
            value: t.seconds / o.seconds,
            detail: format!(
                "{} against {} ms a frame (best of {}; {} rays/pixel): {}",
                num(o.seconds * 1e3),
                num(t.seconds * 1e3),
                p.frames,
                num(o.rays as f64 / (w as f64 * h as f64)),
                times(t.seconds / o.seconds)
            ),
            judged: true,
            problem: pathtrace::disagreement(&o, &t).map(Problem::Mismatch),
        },
        (Err(e), _) | (_, Err(e)) => Cell::failed(label, e),
    };
    let name = format!("shading-heavy compute (path tracer, {w}×{h}, {} bounces)", p.bounces);
    Target { name, goal: 2.0, unit: Unit::Ratio, cells: vec![cell] }
}

/// `n` triangles as the table names it (100k, 1M).
fn tris_label(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1000 && n % 1000 == 0 => format!("{}k", n / 1000),
        n => n.to_string(),
    }
}

/// BLAS builds of `n` triangles through the API, every flag, judged on the warm wall time
/// (a client's rebuild, as it waits on the fence); CPU time and the cold build shown too.
fn build_target(plan: &Plan, n: usize) -> Target {
    let args = |flag: &str| {
        let mut a = vec!["--build-worker".to_string()];
        a.extend(buildbench::worker_args(n, flag, plan.build_reps, plan.build_rays));
        a
    };
    let run = |icd: &str, flag: &str| {
        run_worker(icd, "the build workload", &args(flag))
            .and_then(|out| buildbench::parse(&out).ok_or_else(|| format!("unreadable worker output: {out}")))
    };
    let cells = buildbench::FLAGS
        .iter()
        .map(|&(flag, _)| {
            let what = format!("{} BLAS build, {flag}, on vortex and lavapipe", tris_label(n));
            // The drivers alternate, as on the tracing scenes.
            let (ours, theirs) = step(&what, || {
                let (mut ours, mut theirs) = (Vec::new(), Vec::new());
                for _ in 0..plan.build_runs {
                    ours.push(run("vortex", flag));
                    theirs.push(run("lavapipe", flag));
                }
                (least(ours), least(theirs))
            });
            match (ours, theirs) {
                (Ok(o), Ok(t)) => build_cell(flag, &o, &t),
                (Err(e), _) | (_, Err(e)) => Cell::failed(flag, e),
            }
        })
        .collect();
    let name = format!("BLAS builds through the API, {} triangles, every flag (warm wall time)", tris_label(n));
    Target { name, goal: 1.0, unit: Unit::Ratio, cells }
}

/// Several runs of one driver's build worker as one: each time's least (cold, warm and their
/// CPU times: the run least disturbed by other work on the host). A failed run fails the
/// whole, and so do runs whose traced hits or checksum differ.
fn least(runs: Vec<Result<buildbench::Measured, String>>) -> Result<buildbench::Measured, String> {
    let mut runs = runs.into_iter();
    let mut best = runs.next().ok_or("no run")??;
    for (k, m) in runs.enumerate() {
        let m = m?;
        if (m.hits, m.checksum) != (best.hits, best.checksum) {
            return Err(format!(
                "run {} hit {} (checksum {}) where run 1 hit {} ({})",
                k + 2,
                m.hits,
                m.checksum,
                best.hits,
                best.checksum
            ));
        }
        best.cold = best.cold.min(m.cold);
        best.warm = best.warm.min(m.warm);
        best.cold_cpu = best.cold_cpu.min(m.cold_cpu);
        best.warm_cpu = best.warm_cpu.min(m.warm_cpu);
    }
    Ok(best)
}

fn build_cell(flag: &str, o: &buildbench::Measured, t: &buildbench::Measured) -> Cell {
    let problem = if let Some((icd, m)) =
        [("vortex", o), ("lavapipe", t)].into_iter().find(|(i, m)| wrong_device(i, &m.device))
    {
        Some(Problem::Failed(format!("the {icd} worker ran on {:?}", m.device)))
    } else if (o.hits, o.checksum) != (t.hits, t.checksum) {
        Some(Problem::Mismatch(format!(
            "hits {} (checksum {}) against lavapipe's {} ({})",
            o.hits, o.checksum, t.hits, t.checksum
        )))
    } else {
        None
    };
    Cell {
        label: flag.into(),
        value: t.warm / o.warm,
        detail: format!(
            "{flag} {} / {} ms {} (CPU {}; cold {}, CPU {})",
            num(o.warm * 1e3),
            num(t.warm * 1e3),
            times(t.warm / o.warm),
            times(t.warm_cpu / o.warm_cpu),
            times(t.cold / o.cold),
            times(t.cold_cpu / o.cold_cpu)
        ),
        judged: true,
        problem,
    }
}

/// Timed mode's simulated cycles per second on rtbench's scene and on the path tracer.
fn timed_target(plan: &Plan) -> Target {
    let cells = vec![rtbench_cell(plan), timed_pt_cell(plan)];
    Target { name: "timed mode".into(), goal: 10.0, unit: Unit::MCycles, cells }
}

fn rtbench_path(plan: &Plan) -> PathBuf {
    plan.rtbench.clone().unwrap_or_else(|| {
        let exe = std::env::current_exe().unwrap_or_default();
        exe.parent().unwrap_or(Path::new(".")).join("examples").join(format!("rtbench{}", std::env::consts::EXE_SUFFIX))
    })
}

/// A warning when rtbench is older than the ICD next to this binary: it may have been built
/// from an older device model than the one being measured.
fn rtbench_note(rtbench: &Path) -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let icd = exe.parent()?.join(format!("{}vortex_icd{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX));
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    (modified(rtbench)? < modified(&icd)?).then(|| {
        format!(
            "note: {} is older than {}: rebuild it (cargo build --release -p vortex-model --example rtbench)",
            rtbench.display(),
            icd.display()
        )
    })
}

/// One `rtbench speed` run: its timed line's cycles and rate, and both modes' checksums.
#[derive(Clone, Debug, PartialEq)]
pub struct RtbenchRun {
    pub cycles: u64,
    pub mcycles_per_second: f64,
    pub functional: String,
    pub timed: String,
}

/// Reads `rtbench speed`'s two mode lines (`Functional ... checksum X`, `Timed ... N cycles
/// R M cycles/s ... checksum X`).
pub fn parse_rtbench(out: &str) -> Option<RtbenchRun> {
    let line = |mode: &str| out.lines().find(|l| l.split_whitespace().next() == Some(mode));
    let after = |words: &[&str], key: &str| {
        words.iter().position(|w| *w == key).and_then(|i| words.get(i + 1)).map(|w| w.to_string())
    };
    let before = |words: &[&str], key: &str, back: usize| {
        words.iter().position(|w| *w == key).and_then(|i| i.checked_sub(back)).map(|i| words[i].to_string())
    };
    let f: Vec<&str> = line("Functional")?.split_whitespace().collect();
    let t: Vec<&str> = line("Timed")?.split_whitespace().collect();
    Some(RtbenchRun {
        cycles: before(&t, "cycles", 1)?.parse().ok()?,
        mcycles_per_second: before(&t, "cycles/s", 2)?.parse().ok()?,
        functional: after(&f, "checksum")?,
        timed: after(&t, "checksum")?,
    })
}

/// rtbench's scene in both modes, `rtbench_runs` times; the best run's rate is judged.
fn rtbench_cell(plan: &Plan) -> Cell {
    let bin = rtbench_path(plan);
    if !bin.is_file() {
        let why = format!(
            "{} is missing: build it with `cargo build --release -p vortex-model --example rtbench`",
            bin.display()
        );
        return Cell::failed("rtbench", why);
    }
    let size = plan.rtbench_size.to_string();
    let mut runs = Vec::new();
    for k in 0..plan.rtbench_runs {
        let what = format!("rtbench speed --size {size} ({} of {})", k + 1, plan.rtbench_runs);
        let out = step(&what, || Command::new(&bin).args(["speed", "--size", &size]).output());
        let out = match out {
            Ok(out) => out,
            Err(e) => return Cell::failed("rtbench", format!("cannot start {}: {e}", bin.display())),
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        match parse_rtbench(&stdout) {
            // A checksum difference also fails rtbench itself: say which, not how it exited.
            Some(r) => runs.push(r),
            None => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let why = stderr.lines().chain(stdout.lines()).rev().find(|l| !l.trim().is_empty()).unwrap_or("");
                return Cell::failed("rtbench", format!("rtbench ({}) printed no speed lines: {why}", out.status));
            }
        }
    }
    rtbench_result(&size, &runs)
}

/// The rtbench cell from its runs.
pub fn rtbench_result(size: &str, runs: &[RtbenchRun]) -> Cell {
    let best = runs.iter().map(|r| r.mcycles_per_second).fold(f64::NAN, f64::max);
    let rates: Vec<String> = runs.iter().map(|r| num(r.mcycles_per_second)).collect();
    let problem = runs
        .iter()
        .find(|r| r.functional != r.timed)
        .map(|r| Problem::Mismatch(format!("functional checksum {} against timed {}", r.functional, r.timed)));
    let cycles = runs.first().map_or(0, |r| r.cycles);
    Cell {
        label: "rtbench".into(),
        value: best,
        detail: format!(
            "rtbench (speed --size {size}) {} M cycles/s (runs {}; {cycles} cycles{})",
            num(best),
            rates.join(", "),
            if problem.is_none() { ", checksums equal in both modes" } else { "" }
        ),
        judged: true,
        problem,
    }
}

/// The path tracer in timed mode: its frames' simulated cycles per second, and its rays and
/// radiance against functional mode's (which must be the same to the bit).
fn timed_pt_cell(plan: &Plan) -> Cell {
    let p = &plan.timed_pt;
    let (w, h) = p.size;
    let label = format!("path tracer {w}×{h}");
    let stats = std::env::temp_dir().join(format!("bench-targets-{}-timed-pt.jsonl", std::process::id()));
    let stats_env = stats.to_string_lossy().into_owned();
    let functional = pathtrace::Params { frames: 1, ..p.clone() };
    let parse = |out: String| pathtrace::parse(&out).ok_or_else(|| "the path tracer printed no frame".to_string());
    let ours = step(&format!("path tracer at {w}x{h} on vortex"), || {
        run_worker("vortex", "the path tracer", &functional.args()).and_then(parse)
    });
    let timed = step(&format!("path tracer at {w}x{h} on vortex-timed"), || {
        run_worker_with("vortex-timed", "the path tracer", &p.args(), &[("VORTEX_STATS", &stats_env)]).and_then(parse)
    });
    let frames = std::fs::read_to_string(&stats).map(|s| frame_speeds(&s)).unwrap_or_default();
    remove_stats(&stats);
    let (o, t) = match (ours, timed) {
        (Ok(o), Ok(t)) => (o, t),
        (Err(e), _) | (_, Err(e)) => return Cell::failed(&label, e),
    };
    let Some(&(cycles, best)) = frames.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
        return Cell::failed(&label, format!("no timed dispatch in {}", stats.display()));
    };
    let problem = ((o.rays, o.radiance.to_bits()) != (t.rays, t.radiance.to_bits())).then(|| {
        Problem::Mismatch(format!(
            "timed mode traced {} rays, radiance {}; functional {} rays, radiance {}",
            t.rays, t.radiance, o.rays, o.radiance
        ))
    });
    Cell {
        label: label.clone(),
        value: best / 1e6,
        detail: format!(
            "{label} {} M cycles/s ({} M cycles, best of {} frame(s){})",
            num(best / 1e6),
            num(cycles as f64 / 1e6),
            frames.len(),
            if problem.is_none() { "; rays and radiance equal functional mode's" } else { "" }
        ),
        judged: true,
        problem,
    }
}

/// (cycles, simulated cycles per second) of each frame's dispatch in a `VORTEX_STATS` log:
/// the timed dispatches with the most cycles (any smaller ones are the scene's setup).
pub fn frame_speeds(jsonl: &str) -> Vec<(u64, f64)> {
    let all: Vec<(u64, f64)> = jsonl
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|j| Some((j.get("cycles")?.as_u64()?, j.get("simulated_cycles_per_second")?.as_f64()?)))
        .collect();
    let most = all.iter().map(|f| f.0).max().unwrap_or(0);
    all.into_iter().filter(|f| f.0 == most).collect()
}

/// Removes a `VORTEX_STATS` log and the work maps written next to it.
fn remove_stats(stats: &Path) {
    let _ = std::fs::remove_file(stats);
    let (Some(dir), Some(name)) = (stats.parent(), stats.file_name()) else { return };
    let prefix = format!("{}.work", name.to_string_lossy());
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(label: &str, value: f64, judged: bool, problem: Option<Problem>) -> Cell {
        Cell { label: label.into(), value, detail: format!("{label} {}", times(value)), judged, problem }
    }

    fn target(goal: f64, cells: Vec<Cell>) -> Target {
        Target { name: "spheres".into(), goal, unit: Unit::Ratio, cells }
    }

    #[test]
    fn several_build_runs_keep_each_least_time_and_must_agree() {
        let run = |t: [f64; 4], hits: u64| buildbench::Measured {
            device: "Vortex".into(),
            triangles: 10,
            cold: t[0],
            warm: t[1],
            cold_cpu: t[2],
            warm_cpu: t[3],
            hits,
            checksum: 5,
        };
        let m = least(vec![Ok(run([3.0, 1.0, 6.0, 2.0], 7)), Ok(run([2.0, 1.5, 7.0, 1.0], 7))]).unwrap();
        assert_eq!([m.cold, m.warm, m.cold_cpu, m.warm_cpu], [2.0, 1.0, 6.0, 1.0]);
        let e = least(vec![Ok(run([1.0; 4], 7)), Ok(run([1.0; 4], 8))]).unwrap_err();
        assert!(e.contains("run 2 hit 8"), "{e}");
        assert_eq!(least(vec![Ok(run([1.0; 4], 7)), Err("crashed".into())]).unwrap_err(), "crashed");
    }

    #[test]
    fn several_runs_keep_each_workloads_fastest_and_must_agree() {
        let run = |secs: [f64; 3], hits: u64| Measured {
            triangles: 10,
            build_s: secs[0],
            modes: secs.map(|s| (s, 100, hits)),
            device: "Vortex".into(),
        };
        let m = fastest(vec![Ok(run([2.0, 1.0, 3.0], 7)), Ok(run([1.5, 1.2, 4.0], 7))]).unwrap();
        assert_eq!(m.modes.map(|x| x.0), [1.5, 1.0, 3.0]);
        assert_eq!(m.build_s, 1.5);
        let e = fastest(vec![Ok(run([1.0; 3], 7)), Ok(run([1.0; 3], 8))]).unwrap_err();
        assert!(e.contains("run 2") && e.contains("8 hits"), "{e}");
        assert_eq!(fastest(vec![Ok(run([1.0; 3], 7)), Err("crashed".into())]).unwrap_err(), "crashed");
    }

    #[test]
    fn a_ratio_under_the_goal_is_not_met_and_names_its_cell() {
        let t = target(2.5, vec![cell("coherent", 2.51, true, None), cell("any-hit", 2.49, true, None)]);
        assert_eq!(t.verdict(), Verdict::NotMet(vec!["any-hit".into()]));
        let row = render(&[t]);
        assert!(row.contains("| no (any-hit) |"), "{row}");
        assert!(!row.contains("yes"), "{row}");
    }

    #[test]
    fn every_judged_cell_at_or_over_the_goal_is_met() {
        let t = target(2.0, vec![cell("frame", 2.0, true, None), cell("context", 0.5, false, None)]);
        assert_eq!(t.verdict(), Verdict::Met);
        assert!(render(&[t]).contains("| yes |"));
    }

    #[test]
    fn a_cell_that_could_not_be_computed_is_not_met() {
        let t = target(1.0, vec![cell("fast-trace", f64::NAN, true, None)]);
        assert_eq!(t.verdict(), Verdict::NotMet(vec!["fast-trace".into()]));
    }

    #[test]
    fn a_mismatched_cross_check_is_never_met_however_fast() {
        let why = Problem::Mismatch("any-hit hit pixels disagree: 10 vs 12".into());
        let t = target(2.5, vec![cell("coherent", 9.0, true, None), cell("any-hit", 9.0, true, Some(why))]);
        assert_eq!(t.verdict(), Verdict::Mismatch(vec!["any-hit".into()]));
        assert!(t.verdict().broken());
        let table = render(&[t]);
        assert!(!table.contains("yes"), "{table}");
        assert!(table.contains("**NO: results disagree** (any-hit)"), "{table}");
        assert!(
            table.contains("  ! spheres, any-hit: results disagree: any-hit hit pixels disagree: 10 vs 12"),
            "{table}"
        );
    }

    #[test]
    fn a_context_cell_s_mismatch_still_fails_the_row() {
        let why = Problem::Mismatch("coherent hit pixels disagree".into());
        let t = target(1.5, vec![cell("coherent", 3.0, false, Some(why)), cell("any-hit", 3.0, true, None)]);
        assert_eq!(t.verdict(), Verdict::Mismatch(vec!["coherent".into()]));
    }

    #[test]
    fn a_workload_that_did_not_run_fails_the_row() {
        let t = target(10.0, vec![Cell::failed("rtbench", "missing".into()), cell("path tracer", 12.0, true, None)]);
        assert_eq!(t.verdict(), Verdict::Failed(vec!["rtbench".into()]));
        let table = render(&[t]);
        assert!(table.contains("**NO: did not run** (rtbench)"), "{table}");
        assert!(table.contains("  ! spheres, rtbench: missing"), "{table}");
        // A row with nothing judged cannot be met either.
        assert!(target(1.0, vec![cell("context", 5.0, false, None)]).verdict().broken());
        assert!(target(1.0, vec![]).verdict().broken());
    }

    #[test]
    fn the_table_shows_goal_figures_and_context() {
        let bunny = target(8.0, vec![cell("coherent", 8.79, true, None), cell("incoherent", 9.47, true, None)]);
        let million = Target {
            name: "any-hit on the 1M sphere".into(),
            goal: 1.5,
            unit: Unit::Ratio,
            cells: vec![cell("coherent", 1.91, false, None), cell("any-hit", 0.87, true, None)],
        };
        let timed = Target {
            name: "timed mode".into(),
            goal: 10.0,
            unit: Unit::MCycles,
            cells: vec![cell("rtbench", 6.39, true, None), cell("path tracer", 11.8, true, None)],
        };
        let table = render(&[bunny, million, timed]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "| target | measured (ours / lavapipe) | met |");
        assert_eq!(lines[2], "| spheres ≥ 8× | coherent 8.79×; incoherent 9.47× | yes |");
        assert_eq!(lines[3], "| any-hit on the 1M sphere ≥ 1.5× | any-hit 0.870× (coherent 1.91×) | no |");
        assert_eq!(
            lines[4],
            "| timed mode ≥ 10 M simulated cycles/s | rtbench 6.39×; path tracer 11.8× | no (rtbench) |"
        );
        assert_eq!(lines.len(), 5, "no problem lines:\n{table}");
    }

    #[test]
    fn figures_keep_three_significant_digits() {
        assert_eq!(num(2.984), "2.98");
        assert_eq!(num(11.84), "11.8");
        assert_eq!(num(1320.4), "1320");
        assert_eq!(num(0.00412), "0.00412");
        assert_eq!(num(f64::NAN), "-");
        assert_eq!(tris_label(100_000), "100k");
        assert_eq!(tris_label(1_000_000), "1M");
        assert_eq!(tris_label(1234), "1234");
    }

    const RTBENCH: &str = "scene: 131584 triangles (256x256 terrain + 24 rock instances), 256x256 pixels, host threads 2
== simulation speed (primary + shadow rays)
Functional wall   0.043 s     2.531 M rays/s     95.12 M warp instr/s  rays 108838  checksum 00c0ffee12345678
Timed      wall   0.529 s     0.206 M rays/s      7.73 M warp instr/s     3384313 cycles     6.40 M cycles/s  IPC 0.123  (host threads 2)  rays 108838  checksum 00c0ffee12345678
";

    #[test]
    fn rtbench_s_speed_lines_are_read() {
        let r = parse_rtbench(RTBENCH).expect("both lines");
        assert_eq!(r.cycles, 3_384_313);
        assert_eq!(r.mcycles_per_second, 6.40);
        assert_eq!((r.functional.as_str(), r.timed.as_str()), ("00c0ffee12345678", "00c0ffee12345678"));
        assert!(parse_rtbench(RTBENCH.lines().take(3).collect::<Vec<_>>().join("\n").as_str()).is_none());
        let c = rtbench_result("256", &[r.clone(), RtbenchRun { mcycles_per_second: 6.1, ..r }]);
        assert_eq!((c.value, c.problem), (6.40, None));
        assert!(c.detail.contains("runs 6.40, 6.10"), "{}", c.detail);
    }

    #[test]
    fn rtbench_s_modes_disagreeing_is_a_mismatch() {
        let r = parse_rtbench(&RTBENCH.replacen("checksum 00c0ffee12345678", "checksum 00c0ffee00000000", 1)).unwrap();
        let t = Target {
            name: "timed mode".into(),
            goal: 1.0,
            unit: Unit::MCycles,
            cells: vec![rtbench_result("256", &[r])],
        };
        assert!(matches!(t.verdict(), Verdict::Mismatch(_)), "{:?}", t.verdict());
    }

    #[test]
    fn the_frames_are_the_largest_timed_dispatches() {
        let log = r#"{"cycles":1000,"simulated_cycles_per_second":5.0e6,"wall_ms":0.2}
{"instructions":5,"wall_ms":0.1}
{"cycles":18700000,"simulated_cycles_per_second":1.18e7,"wall_ms":1580.0}
{"cycles":18700000,"simulated_cycles_per_second":1.21e7,"wall_ms":1545.0}"#;
        assert_eq!(frame_speeds(log), vec![(18_700_000, 1.18e7), (18_700_000, 1.21e7)]);
        assert!(frame_speeds("").is_empty());
    }
}
