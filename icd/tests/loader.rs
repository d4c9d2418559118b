//! The ICD through the real Vulkan loader: `vulkaninfo` runs to the end on our manifest (and
//! on lavapipe's, so a broken loader setup is told apart from a broken ICD).

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.json";

/// Runs vulkaninfo on one manifest; returns (exit success, stdout, stderr).
fn vulkaninfo(manifest: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new("vulkaninfo")
        .args(args)
        .env("VK_ICD_FILENAMES", manifest)
        .env("VK_DRIVER_FILES", manifest)
        .output()
        .expect("vulkaninfo is not installed (scripts/setup-debian.sh installs vulkan-tools)");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn vortex_manifest() -> PathBuf {
    let m = repo().join("json/vortex_icd.json");
    let lib = repo().join("target/release/libvortex_icd.so");
    assert!(lib.exists(), "{} is missing: build the ICD first (cargo build --release -p vortex-icd)", lib.display());
    m
}

#[test]
fn vulkaninfo_lists_the_vortex_device_and_its_extensions() {
    let (ok, out, err) = vulkaninfo(&vortex_manifest(), &[]);
    assert!(ok, "vulkaninfo failed on our ICD:\n{err}");
    assert!(out.contains("deviceName") && out.contains("Vortex RT"), "no Vortex device in:\n{out}");
    assert_eq!(out.matches("GPU id :").count().max(out.matches("GPU0").count()), 1, "exactly one physical device");
    for ext in [
        "VK_KHR_acceleration_structure",
        "VK_KHR_ray_query",
        "VK_KHR_deferred_host_operations",
        "VK_KHR_buffer_device_address",
        "VK_KHR_spirv_1_4",
        "VK_KHR_shader_float_controls",
        "VK_EXT_descriptor_indexing",
        "VK_EXT_robustness2",
        "VK_KHR_robustness2",
    ] {
        assert!(out.contains(ext), "{ext} not listed");
    }
    assert!(out.contains("apiVersion") && out.contains("1.3."), "API version 1.3 not reported");
    assert!(out.contains("accelerationStructure") && out.contains("rayQuery"), "AS / ray-query features missing");
    // The limits conformance tests rely on.
    let after = |key: &str| -> Vec<u64> {
        let at = out.find(key).unwrap_or_else(|| panic!("{key} missing"));
        out[at..].lines().skip(1).take(3).map(|l| l.trim().parse().unwrap_or_else(|_| panic!("{key}: {l:?}"))).collect()
    };
    assert!(after("maxComputeWorkGroupCount:")[0] >= 65_536);
    assert_eq!(after("maxComputeWorkGroupSize:")[0], 1024);
    let as_line = out.lines().find(|l| l.contains("maxPerStageDescriptorAccelerationStructures")).expect("AS limits");
    let n: u64 = as_line.rsplit('=').next().unwrap().trim().parse().unwrap();
    assert!(n >= 500, "{as_line}");
    // One queue family: graphics, compute, transfer and sparse binding.
    let families: Vec<&str> = out.lines().filter(|l| l.contains("queueFlags")).collect();
    assert_eq!(families.len(), 1, "one queue family: {families:?}");
    assert!(
        families[0].ends_with("= QUEUE_GRAPHICS | QUEUE_COMPUTE | QUEUE_TRANSFER | QUEUE_SPARSE_BINDING"),
        "{families:?}"
    );
    for ext in ["VK_KHR_dynamic_rendering", "VK_EXT_extended_dynamic_state", "VK_EXT_provoking_vertex"] {
        assert!(out.contains(ext), "{ext} not listed");
    }
    // Sparse binding of buffers, without residency (an unbound page is a fault).
    let flag =
        |key: &str| out.lines().find(|l| l.trim_start().starts_with(key)).map(|l| l.trim_end().ends_with("true"));
    assert_eq!(flag("sparseBinding "), Some(true));
    for key in ["sparseResidencyBuffer ", "sparseResidencyImage2D ", "residencyNonResidentStrict "] {
        assert_eq!(flag(key), Some(false), "{key}");
    }
    // Our ICD logs its own errors with "ERROR"; vulkaninfo's own complaints about the
    // missing display are not ours.
    assert!(!err.contains(" ERROR "), "the ICD logged errors:\n{err}");
    // The run reached the end of the report (the last section vulkaninfo prints).
    assert!(out.trim_end().lines().count() > 300, "vulkaninfo output looks truncated");
}

#[test]
fn vulkaninfo_summary_on_both_icds() {
    let (ok, out, err) = vulkaninfo(&vortex_manifest(), &["--summary"]);
    assert!(ok && out.contains("Vortex RT"), "summary on our ICD failed:\n{out}\n{err}");
    if std::path::Path::new(LAVAPIPE).exists() {
        let (ok, out, err) = vulkaninfo(std::path::Path::new(LAVAPIPE), &["--summary"]);
        assert!(ok && out.contains("llvmpipe"), "summary on lavapipe failed:\n{out}\n{err}");
    } else {
        eprintln!("skipped lavapipe: {LAVAPIPE} is not installed");
    }
}

/// `VK_KHR_ray_tracing_pipeline` is offered by default on the RT-unit architecture, with
/// `maxRayRecursionDepth` 31; `VORTEX_RT_PIPELINE=0` hides it, and an rdna2 device (whose
/// traversal is the shader's own loop) never offers it.
#[test]
fn ray_tracing_pipelines_are_offered_on_the_rt_unit_only() {
    let run = |env: &[(&str, &str)]| {
        let m = vortex_manifest();
        let mut cmd = Command::new("vulkaninfo");
        cmd.env("VK_ICD_FILENAMES", &m).env("VK_DRIVER_FILES", &m).env_remove("VORTEX_RT_PIPELINE");
        cmd.env_remove("VORTEX_RT_ARCH");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("vulkaninfo is not installed");
        assert!(out.status.success(), "vulkaninfo failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let offered = |out: &str| out.contains("VK_KHR_ray_tracing_pipeline");
    let default = run(&[]);
    assert!(offered(&default), "not offered by default");
    let depth = default.lines().find(|l| l.contains("maxRayRecursionDepth")).expect("RT pipeline properties");
    assert!(depth.trim_end().ends_with("= 31"), "{depth}");
    assert!(!offered(&run(&[("VORTEX_RT_PIPELINE", "0")])), "offered with VORTEX_RT_PIPELINE=0");
    assert!(!offered(&run(&[("VORTEX_RT_ARCH", "rdna2")])), "offered on an rdna2 device");
}
