//! The committed SPIR-V under examples/shaders must be exactly what
//! scripts/build-shaders.sh makes from the GLSL sources next to it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const GLSLANG: &str = "glslangValidator";

#[test]
fn committed_spirv_matches_its_source() {
    let Ok(version) = Command::new(GLSLANG).arg("--version").output() else {
        eprintln!("skipped: {GLSLANG} is not installed (Debian: glslang-tools)");
        return;
    };
    let version = String::from_utf8_lossy(&version.stdout).lines().next().unwrap_or_default().to_string();
    let shaders = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shaders");
    fs::create_dir_all(&out_dir).expect("cannot create the output directory");

    let files_with = |ext: &str| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = fs::read_dir(&shaders)
            .expect("cannot list examples/shaders")
            .map(|entry| entry.expect("cannot read examples/shaders").path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect();
        files.sort();
        files
    };
    let sources: Vec<PathBuf> = ["comp", "vert", "frag", "rgen", "rchit", "rmiss", "rahit", "rint", "rcall"]
        .into_iter()
        .flat_map(files_with)
        .collect();
    assert!(!sources.is_empty(), "no shader sources in {}", shaders.display());

    let mut stale = Vec::new();
    let mut expected = Vec::new();
    for source in &sources {
        for (spv, flags) in outputs(source) {
            let fresh = out_dir.join(spv.file_name().expect("file name"));
            let out = Command::new(GLSLANG)
                .args(["--target-env", "vulkan1.2", "-V"])
                .args(&flags)
                .arg(source)
                .arg("-o")
                .arg(&fresh)
                .output()
                .expect("cannot run glslangValidator");
            assert!(
                out.status.success(),
                "{} {flags:?} does not compile:\n{}",
                source.display(),
                String::from_utf8_lossy(&out.stdout)
            );
            if fs::read(&spv).ok() != fs::read(&fresh).ok() {
                stale.push(spv.clone());
            }
            expected.push(spv);
        }
    }
    assert!(stale.is_empty(), "out of date (run scripts/build-shaders.sh; checked with {version}): {stale:?}");

    let orphans: Vec<_> = files_with("spv").into_iter().filter(|spv| !expected.contains(spv)).collect();
    assert!(orphans.is_empty(), "SPIR-V without a source: {orphans:?}");
}

/// The SPIR-V files a source compiles to, with their glslang flags: NAME.spv for a compute
/// shader NAME.comp, NAME.STAGE.spv for the other stages (NAME.vert, NAME.rgen, ...), or one file per entry of a
/// `// variants: OUT=-DFLAG,...` second line (the convention of scripts/build-shaders.sh).
fn outputs(source: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let text = fs::read_to_string(source).expect("cannot read a shader source");
    let variants = text.lines().nth(1).and_then(|l| l.strip_prefix("// variants: "));
    match variants {
        None if source.extension().is_some_and(|e| e == "comp") => vec![(source.with_extension("spv"), Vec::new())],
        None => {
            let name = source.file_name().expect("file name").to_string_lossy();
            vec![(source.with_file_name(format!("{name}.spv")), Vec::new())]
        }
        Some(list) => list
            .split_whitespace()
            .map(|v| {
                let (out, flags) = v.split_once('=').expect("variant OUT=FLAGS");
                (source.with_file_name(format!("{out}.spv")), flags.split(',').map(str::to_string).collect())
            })
            .collect(),
    }
}
