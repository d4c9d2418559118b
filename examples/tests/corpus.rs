//! The differential shader corpus (corpus/shaders): the committed SPIR-V is exactly what
//! scripts/build-corpus.sh makes from the GLSL (or SPIR-V assembly) next to it, and every shader gives the same
//! results on Vortex as on lavapipe (the `corpus` binary prints the per-shader verdicts).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

const GLSLANG: &str = "glslangValidator";

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/shaders")
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("cannot list the corpus") {
        let p = e.expect("cannot read the corpus").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "comp" || x == "spvasm") {
            out.push(p);
        }
    }
}

#[test]
fn committed_spirv_matches_its_source() {
    let Ok(version) = Command::new(GLSLANG).arg("--version").output() else {
        eprintln!("skipped: {GLSLANG} is not installed (Debian: glslang-tools)");
        return;
    };
    let version = String::from_utf8_lossy(&version.stdout).lines().next().unwrap_or_default().to_string();
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus-spv");
    fs::create_dir_all(&out_dir).expect("cannot create the output directory");
    let mut files = Vec::new();
    sources(&corpus_dir(), &mut files);
    files.sort();
    assert!(files.len() >= 2, "the corpus is empty");
    let mut stale = Vec::new();
    let spirv_as = Command::new("spirv-as").arg("--version").output().is_ok();
    for (n, src) in files.iter().enumerate() {
        if !spirv_as && src.extension().is_some_and(|x| x == "spvasm") {
            eprintln!("skipped {}: spirv-as is not installed (Debian: spirv-tools)", src.display());
            continue;
        }
        let text = fs::read_to_string(src).expect("cannot read a corpus shader");
        let fresh = out_dir.join(format!("{n}.spv"));
        let out = if src.extension().is_some_and(|x| x == "spvasm") {
            Command::new("spirv-as")
                .args(["--target-env", "vulkan1.2", "--preserve-numeric-ids"])
                .arg(src)
                .arg("-o")
                .arg(&fresh)
                .output()
                .expect("cannot run spirv-as")
        } else {
            let flags: Vec<&str> =
                text.lines().filter_map(|l| l.strip_prefix("//! glslang ")).flat_map(str::split_whitespace).collect();
            Command::new(GLSLANG)
                .args(["--target-env", "vulkan1.2", "-V"])
                .args(&flags)
                .arg(src)
                .arg("-o")
                .arg(&fresh)
                .output()
                .expect("cannot run glslangValidator")
        };
        assert!(out.status.success(), "{} does not compile:\n{}", src.display(), String::from_utf8_lossy(&out.stdout));
        if fs::read(src.with_extension("spv")).ok() != fs::read(&fresh).ok() {
            stale.push(src.with_extension("spv"));
        }
    }
    assert!(stale.is_empty(), "out of date (run scripts/build-corpus.sh; checked with {version}): {stale:?}");
}

#[test]
fn vortex_matches_lavapipe_on_every_corpus_shader() {
    if !Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_corpus")).output().expect("cannot start the corpus runner");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The per-shader verdicts, visible with --nocapture (and on failure).
    println!("{stdout}");
    let failures: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(
        out.status.success() && failures.is_empty(),
        "corpus failures ({}):\n{}\n{stderr}",
        out.status,
        failures.join("\n")
    );
}

/// Every file under `dir`, as (path relative to `dir`, contents).
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).expect("cannot list an output directory") {
            let p = e.expect("cannot read an output directory").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = fs::read(&p).expect("cannot read an output file");
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    out
}

/// A dispatch's counters without what measures the host (wall time and rates), with the
/// contents of the files a line names (`work_map`, relative to `dir`) in place of their names.
fn counters(dir: &Path, line: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(line).expect("a stats line is JSON");
    fn strip(dir: &Path, v: &mut serde_json::Value) {
        if let serde_json::Value::Object(m) = v {
            // What the JIT did is the one counter that differs by design (checked apart).
            m.retain(|k, _| !(k.contains("wall") || k.contains("per_s") || k.ends_with("_ms") || k == "jit"));
            if let Some(serde_json::Value::String(f)) = m.get("file") {
                // Named after its stats file, which differs; compare the contents.
                let name = Path::new(f).file_name().expect("a work-map file name");
                let bytes = fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{f}: {e}"));
                m.insert("file".into(), serde_json::Value::from(bytes));
            }
            m.values_mut().for_each(|v| strip(dir, v));
            return;
        }
        if let serde_json::Value::Array(a) = v {
            a.iter_mut().for_each(|v| strip(dir, v));
        }
    }
    strip(dir, &mut v);
    v
}

/// The JIT changes nothing a program can see: every corpus shader's output buffers and
/// every dispatch's counters are the same with it (`VORTEX_JIT=1`) as with the interpreter
/// alone (`VORTEX_JIT=0`). One host thread on each side: with several, cores race for the
/// memory and order-dependent words (an exchange's last value) differ from run to run with
/// or without the JIT.
#[test]
fn jit_and_interpreter_agree_on_every_corpus_shader() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus-jit");
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).expect("cannot create the output directory");
    let side = |jit: &str| {
        let (out, stats) = (tmp.join(format!("jit{jit}")), tmp.join(format!("stats-jit{jit}.jsonl")));
        let status = Command::new(env!("CARGO_BIN_EXE_corpus"))
            .args(["--child", "--icd", "vortex", "--out"])
            .arg(&out)
            .env("VORTEX_JIT", jit)
            // Every kernel compiled at its first dispatch, however short.
            .env("VORTEX_JIT_HOT", "0")
            .env("VORTEX_THREADS", "1")
            .env("VORTEX_STATS", &stats)
            .env_remove("VORTEX_MODE")
            .status()
            .expect("cannot start the corpus runner");
        assert!(status.success(), "the corpus runner failed with VORTEX_JIT={jit}");
        (tree(&out), fs::read_to_string(&stats).unwrap_or_default())
    };
    let ((off, off_stats), (on, on_stats)) = (side("0"), side("1"));
    assert!(off.len() > 10, "the corpus wrote {} files", off.len());
    assert_eq!(off.iter().map(|f| &f.0).collect::<Vec<_>>(), on.iter().map(|f| &f.0).collect::<Vec<_>>());
    for ((name, a), (_, b)) in off.iter().zip(&on) {
        if name.ends_with("status") {
            // `ok <pipeline ms>`: the outcome must agree, not the time.
            let word = |s: &[u8]| String::from_utf8_lossy(s).split_whitespace().next().map(str::to_string);
            assert_eq!(word(a), word(b), "{}", name.display());
        } else {
            assert!(a == b, "{} differs with the JIT", name.display());
        }
    }
    // The stats say what the JIT did: nothing with it off; with it on, compile time and
    // instructions executed by compiled code.
    let jit = |stats: &str, key: &str| -> f64 {
        let lines = stats.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON"));
        lines.filter_map(|v| v["jit"][key].as_f64()).sum()
    };
    assert_eq!(jit(&off_stats, "instructions"), 0.0, "the JIT ran with VORTEX_JIT=0");
    assert!(jit(&on_stats, "instructions") > 0.0, "no dispatch reports instructions run as compiled code");
    assert!(jit(&on_stats, "compile_ms") > 0.0, "no dispatch reports compile time");
    let (off_c, on_c): (Vec<_>, Vec<_>) =
        (off_stats.lines().map(|l| counters(&tmp, l)).collect(), on_stats.lines().map(|l| counters(&tmp, l)).collect());
    assert!(!off_c.is_empty(), "no dispatch counters were written");
    assert_eq!(off_c.len(), on_c.len());
    for (n, (a, b)) in off_c.iter().zip(&on_c).enumerate() {
        assert_eq!(a, b, "dispatch {n}'s counters differ with the JIT");
    }
}
