//! The differential shader corpus: every compute shader under `corpus/shaders` (GLSL, and a
//! few in SPIR-V assembly for what GLSL cannot express) runs on
//! Mesa's lavapipe (the reference) and on Vortex RT through the real Vulkan loader, and
//! whatever each was told to check is compared, bit for bit or within the precision the
//! Vulkan specification allows for the operations involved.
//!
//! ```text
//! corpus [--corpus DIR] [--filter TEXT] [--reference lavapipe|PATH] [--keep DIR]
//!     Runs each driver in a child process (so a crash loses one shader, not the run) and
//!     prints PASS/FAIL per shader, then a summary per area. Vortex runs twice: once with
//!     the reference's subgroup size (VORTEX_WARP_SIZE) and compared on every shader, once
//!     with its default 32-lane warps and compared on every shader whose results do not
//!     depend on the subgroup size. Exit 0 when every shader passes.
//! corpus --child --icd vortex|lavapipe|PATH --out DIR [--corpus DIR] [--filter TEXT] [--start N]
//!     One driver's side (see run.rs).
//! corpus --list
//!     The shaders and their areas.
//! ```

mod compare;
mod run;
mod scene;
mod spec;

use spec::Shader;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use vortex_examples::Icd;

/// Options of either mode.
struct Args {
    corpus: PathBuf,
    filter: Vec<String>,
    child: bool,
    list: bool,
    icd: Option<Icd>,
    out: Option<PathBuf>,
    start: usize,
    reference: Icd,
    keep: Option<PathBuf>,
    /// Leave out the shaders whose results depend on the subgroup size.
    skip_warp_dependent: bool,
}

fn parse_args() -> Result<Args, String> {
    let default_corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/shaders");
    let mut a = Args {
        corpus: default_corpus,
        filter: Vec::new(),
        child: false,
        list: false,
        icd: None,
        out: None,
        start: 0,
        reference: Icd::Lavapipe,
        keep: None,
        skip_warp_dependent: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--corpus" => a.corpus = PathBuf::from(value()?),
            "--filter" => a.filter.push(value()?),
            "--child" => a.child = true,
            "--list" => a.list = true,
            "--icd" => a.icd = Some(Icd::parse(&value()?)),
            "--out" => a.out = Some(PathBuf::from(value()?)),
            "--start" => a.start = value()?.parse().map_err(|_| "--start needs a number")?,
            "--reference" => a.reference = Icd::parse(&value()?),
            "--keep" => a.keep = Some(PathBuf::from(value()?)),
            "--skip-warp-dependent" => a.skip_warp_dependent = true,
            "-h" | "--help" => {
                println!("{}", HELP);
                std::process::exit(0);
            }
            _ => return Err(format!("unexpected argument {arg:?} (see --help)")),
        }
    }
    Ok(a)
}

const HELP: &str = "usage: corpus [--corpus DIR] [--filter TEXT]... [--reference lavapipe|PATH] [--keep DIR]\n       \
                    corpus --list\n       \
                    corpus --child --icd vortex|lavapipe|PATH --out DIR [--start N]";

/// Every `.comp` (GLSL) and `.spvasm` (SPIR-V assembly) under `dir`, sorted, as (id, path).
fn sources(dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for e in fs::read_dir(dir)? {
            let p = e?.path();
            if p.is_dir() {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|x| x == "comp" || x == "spvasm") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, &mut files).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    files.sort();
    Ok(files
        .into_iter()
        .map(|p| {
            let id = p.strip_prefix(dir).unwrap_or(&p).with_extension("").to_string_lossy().replace('\\', "/");
            (id, p)
        })
        .collect())
}

fn load(a: &Args) -> Result<Vec<Shader>, String> {
    let mut out = Vec::new();
    for (id, path) in sources(&a.corpus)? {
        if !a.filter.is_empty() && !a.filter.iter().any(|f| id.contains(f.as_str())) {
            continue;
        }
        let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let s = spec::parse(&id, &path, &text).map_err(|e| format!("{id}: {e}"))?;
        if !(a.skip_warp_dependent && s.warp_dependent) {
            out.push(s);
        }
    }
    Ok(out)
}

fn area(id: &str) -> &str {
    id.split('/').next().unwrap_or(id)
}

/// Runs one driver's side until every shader has a status, restarting the child after the
/// shader it died on.
fn run_side(a: &Args, icd: &str, env: &[(&str, String)], wide: bool, out: &Path) -> Result<(), String> {
    let shaders: Vec<Shader> = load(a)?.into_iter().filter(|s| !(wide && s.warp_dependent)).collect();
    let _ = fs::remove_dir_all(out);
    fs::create_dir_all(out).map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut start = 0;
    while start < shaders.len() {
        let mut cmd = Command::new(&exe);
        cmd.args(["--child", "--icd", icd, "--start", &start.to_string()]).arg("--out").arg(out);
        cmd.arg("--corpus").arg(&a.corpus);
        for f in &a.filter {
            cmd.args(["--filter", f]);
        }
        if wide {
            cmd.arg("--skip-warp-dependent");
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let res = cmd.output().map_err(|e| format!("cannot start a child: {e}"))?;
        let done = |s: &Shader| out.join(&s.id).join("status").is_file();
        let next = (start..shaders.len()).find(|&i| !done(&shaders[i]));
        match next {
            None => break,
            Some(i) => {
                // The child died on shader i (or could not start at all).
                let why = format!(
                    "error the {icd} process died ({}): {}",
                    res.status,
                    String::from_utf8_lossy(&res.stderr).lines().rev().take(3).collect::<Vec<_>>().join(" | ")
                );
                if i == start && !res.status.success() && !out.join("device").is_file() {
                    return Err(why);
                }
                fs::create_dir_all(out.join(&shaders[i].id)).map_err(|e| e.to_string())?;
                fs::write(out.join(&shaders[i].id).join("status"), why + "\n").map_err(|e| e.to_string())?;
                start = i + 1;
            }
        }
    }
    Ok(())
}

fn status(out: &Path, s: &Shader) -> String {
    fs::read_to_string(out.join(&s.id).join("status")).unwrap_or_else(|_| "error no result".into()).trim().to_string()
}

fn device_value(out: &Path, key: &str) -> Option<String> {
    let text = fs::read_to_string(out.join("device")).ok()?;
    text.lines().find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
}

/// Compares one Vortex side with the reference for one shader.
fn verdict(s: &Shader, reference: &Path, ours: &Path) -> Result<f64, String> {
    let (rs, os) = (status(reference, s), status(ours, s));
    if let Some(f) = rs.strip_prefix("unsupported ") {
        return Err(format!("the reference lacks {f}"));
    }
    if let Some(e) = rs.strip_prefix("error ") {
        return Err(format!("fails on the reference (a wrong test): {e}"));
    }
    if let Some(f) = os.strip_prefix("unsupported ") {
        return Err(format!("unsupported on Vortex: {f}"));
    }
    if let Some(e) = os.strip_prefix("error ") {
        return Err(e.to_string());
    }
    let ms: f64 = os.strip_prefix("ok ").and_then(|v| v.parse().ok()).unwrap_or(0.0);
    let mut problems = Vec::new();
    for c in &s.checks {
        let name = format!("{}.bin", run::file_key(&c.key));
        let (want, got) = (fs::read(reference.join(&s.id).join(&name)), fs::read(ours.join(&s.id).join(&name)));
        match (want, got) {
            (Ok(w), Ok(g)) => {
                if let Err(e) = compare::compare(c, &w, &g) {
                    problems.push(e);
                }
            }
            _ => problems.push(format!("`{}` was not read back", c.key)),
        }
    }
    if problems.is_empty() {
        Ok(ms)
    } else {
        Err(problems.join("; "))
    }
}

fn parent(a: &Args) -> Result<bool, String> {
    let shaders = load(a)?;
    if shaders.is_empty() {
        return Err("no shaders selected".into());
    }
    let tmp =
        a.keep.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("vortex-corpus-{}", std::process::id())));
    let reference_name = match &a.reference {
        Icd::Lavapipe => "lavapipe".to_string(),
        Icd::Vortex => "vortex".to_string(),
        Icd::Manifest(p) => p.display().to_string(),
    };
    let (r_out, narrow_out, wide_out) = (tmp.join("reference"), tmp.join("vortex-narrow"), tmp.join("vortex-wide"));
    run_side(a, &reference_name, &[], false, &r_out)?;
    let size = device_value(&r_out, "subgroup_size ").unwrap_or_else(|| "32".into());
    println!(
        "reference: {} (subgroup size {size}); Vortex runs at warp size {size} and 32",
        device_value(&r_out, "name ").unwrap_or_default()
    );
    let narrow_env = [("VORTEX_WARP_SIZE", size.clone())];
    let wide_needed = size != "32";
    std::thread::scope(|sc| -> Result<(), String> {
        let narrow = sc.spawn(|| run_side(a, "vortex", &narrow_env, false, &narrow_out));
        if wide_needed {
            run_side(a, "vortex", &[("VORTEX_WARP_SIZE", "32".into())], true, &wide_out)?;
        }
        narrow.join().map_err(|_| "a runner thread panicked".to_string())?
    })?;

    let mut per_area: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut times = Vec::new();
    let mut failed = Vec::new();
    for s in &shaders {
        let mut result = verdict(s, &r_out, &narrow_out);
        if let (Ok(_), true, false) = (&result, wide_needed, s.warp_dependent) {
            if let Err(e) = verdict(s, &r_out, &wide_out) {
                result = Err(format!("with 32-lane warps: {e}"));
            }
        }
        let e = per_area.entry(area(&s.id).to_string()).or_default();
        e.0 += 1;
        match result {
            Ok(ms) => {
                e.1 += 1;
                times.push(ms);
                println!("PASS {}", s.id);
            }
            Err(why) => {
                println!("FAIL {}: {why}", s.id);
                failed.push(s.id.clone());
            }
        }
    }
    println!("\narea                 shaders   pass");
    let (mut total, mut passed) = (0, 0);
    for (area, (n, p)) in &per_area {
        println!("{area:<20} {n:>7} {p:>6}");
        total += n;
        passed += p;
    }
    println!("{:<20} {total:>7} {passed:>6}", "total");
    if !times.is_empty() {
        times.sort_by(|a, b| a.total_cmp(b));
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        println!(
            "Vortex vkCreateComputePipelines: mean {mean:.2} ms, median {:.2} ms, max {:.2} ms over {} shaders",
            times[times.len() / 2],
            times[times.len() - 1],
            times.len()
        );
    }
    println!("{passed}/{total} corpus shaders passed");
    if a.keep.is_none() {
        let _ = fs::remove_dir_all(&tmp);
    }
    Ok(failed.is_empty())
}

fn main() {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("corpus: {e}");
            std::process::exit(2);
        }
    };
    let result = if a.list {
        load(&a).map(|shaders| {
            for s in &shaders {
                println!("{}", s.id);
            }
            true
        })
    } else if a.child {
        match (&a.icd, &a.out) {
            (Some(icd), Some(out)) => {
                load(&a).and_then(|s| run::child(icd, &s[a.start.min(s.len())..], out)).map(|_| true)
            }
            _ => Err("--child needs --icd and --out".into()),
        }
    } else {
        parent(&a)
    };
    match result {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("corpus: {e}");
            std::process::exit(2);
        }
    }
}
