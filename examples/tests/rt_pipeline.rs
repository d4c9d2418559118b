//! Ray-tracing pipelines through the loader (the `rt_pipeline` program): closest-hit, miss,
//! any-hit and intersection shaders give exactly the hits of the same rays traced with ray
//! queries, on lavapipe and on Vortex in functional and timed mode (also with reformation
//! by SBT key); switched off (`VORTEX_RT_PIPELINE=0`), Vortex does not offer the extension.

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

fn run(icd: &str, env: &[(&str, &str)]) -> (bool, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rt_pipeline"));
    cmd.args(["--icd", icd]).env_remove("VORTEX_CONFIG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("cannot start rt_pipeline");
    let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn passes(icd: &str, env: &[(&str, &str)]) {
    let (ok, text) = run(icd, env);
    assert!(ok, "rt_pipeline on {icd} {env:?} failed:\n{text}");
    assert!(text.contains("4/4 rt-pipeline checks passed"), "{text}");
    assert!(text.contains("identical"), "{text}");
}

#[test]
fn rt_pipeline_on_lavapipe() {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return;
    }
    passes("lavapipe", &[]);
}

#[test]
fn rt_pipeline_on_vortex_functional_and_timed() {
    passes("vortex", &[("VORTEX_RT_PIPELINE", "1"), ("VORTEX_MODE", "functional")]);
    passes("vortex", &[("VORTEX_RT_PIPELINE", "1"), ("VORTEX_MODE", "timed")]);
    // Reformation by SBT key (timing only): the same hits.
    let path = std::env::temp_dir().join(format!("rt_pipeline_reform_{}.toml", std::process::id()));
    std::fs::write(&path, "mode = \"timed\"\nrt_pipeline = true\n[rtu]\nreform_sbt = true\n").expect("a config file");
    passes("vortex", &[("VORTEX_CONFIG", path.to_str().expect("a UTF-8 path"))]);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn vortex_does_not_offer_it_when_switched_off() {
    let (ok, text) = run("vortex", &[("VORTEX_RT_PIPELINE", "0")]);
    assert!(!ok, "{text}");
    assert!(text.contains("does not offer VK_KHR_ray_tracing_pipeline"), "{text}");
}
