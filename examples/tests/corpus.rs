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
