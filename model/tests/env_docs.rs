//! Keeps the documented environment variables and the code's in sync: every `VORTEX_*`
//! variable the driver crates name is in the configuration table of docs/ARCHITECTURE.md and
//! in the README's list, every variable the table documents is still read somewhere, and the
//! conformance runner's own variables are in cts/README.md.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `"VORTEX_..."` string literals of every `.rs` file under `dirs`.
fn literals(dirs: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack: Vec<PathBuf> = dirs.iter().map(|d| root().join(d)).collect();
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else if p.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            for (i, _) in text.match_indices("\"VORTEX_") {
                let name: String = text[i + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if text[i + 1 + name.len()..].starts_with('"') {
                    out.insert(name);
                }
            }
        }
    }
    out
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The variables of the configuration table: rows starting with "| `VORTEX_".
fn table(doc: &str) -> BTreeSet<String> {
    doc.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter(|l| l.starts_with("VORTEX_"))
        .map(|l| l.chars().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_').collect())
        .collect()
}

#[test]
fn driver_variables_are_documented() {
    let code = literals(&["model/src", "runtime/src", "icd/src", "transcode/src"]);
    assert!(code.contains("VORTEX_MODE"), "the scan found no variables: {code:?}");
    let arch = table(&read("docs/ARCHITECTURE.md"));
    let readme = read("README.md");
    for v in &code {
        assert!(arch.contains(v), "{v} is read by the driver but not in docs/ARCHITECTURE.md's configuration table");
        assert!(readme.contains(&format!("`{v}")), "{v} is read by the driver but not in README.md's list");
    }
    for v in &arch {
        assert!(code.contains(v), "docs/ARCHITECTURE.md documents {v}, which no driver code reads");
    }
}

#[test]
fn runner_variables_are_documented() {
    let code = literals(&["cts/src", "cts/tests"]);
    let doc = read("cts/README.md");
    for v in code.iter().filter(|v| v.starts_with("VORTEX_CTS_")) {
        assert!(doc.contains(v.as_str()), "{v} is read by vortex-cts but not documented in cts/README.md");
    }
}
