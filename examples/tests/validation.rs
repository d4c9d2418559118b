//! The examples are valid Vulkan: each check program runs on lavapipe under the Khronos
//! validation layer, which must report no error. A check that passes only because a driver
//! tolerates invalid use would test nothing about the other (ours included).

use std::process::Command;
use vortex_examples::icd::LAVAPIPE_MANIFEST;

const LAYER_MANIFEST: &str = "/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json";

/// Messages of a layer older than the structures the examples chain: Debian 12's layer
/// (1.3.239) does not know `VkPhysicalDeviceRayTracingPositionFetchFeaturesKHR`
/// (1000481000), which the examples enable when a device offers it.
fn known_to_be_the_layers(line: &str) -> bool {
    line.contains("VUID-VkDeviceCreateInfo-pNext-pNext") && line.contains("(1000481000)")
}

fn validate(program: &str, path: &str, args: &[&str]) {
    if !std::path::Path::new(LAVAPIPE_MANIFEST).is_file() || !std::path::Path::new(LAYER_MANIFEST).is_file() {
        eprintln!("skipped: needs lavapipe ({LAVAPIPE_MANIFEST}) and the validation layer ({LAYER_MANIFEST})");
        return;
    }
    let out = Command::new(path)
        .args(["--icd", "lavapipe"])
        .args(args)
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation")
        .output()
        .expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{program} on lavapipe failed ({}):\n{stdout}\n{stderr}", out.status);
    let errors: Vec<&str> = stdout
        .lines()
        .chain(stderr.lines())
        .filter(|l| l.contains("Validation Error") && !known_to_be_the_layers(l))
        .collect();
    assert!(errors.is_empty(), "{program}: {} validation errors:\n{}", errors.len(), errors.join("\n"));
}

macro_rules! valid {
    ($($name:ident: $bin:literal $(, $arg:literal)*;)*) => {$(
        #[test]
        fn $name() {
            validate($bin, env!(concat!("CARGO_BIN_EXE_", $bin)), &[$($arg),*]);
        }
    )*};
}

valid! {
    accel_check_is_valid: "accel_check";
    as_ops_is_valid: "as_ops";
    compute_check_is_valid: "compute_check";
    draw_check_is_valid: "draw_check";
    msaa_check_is_valid: "msaa_check";
    multiview_check_is_valid: "multiview_check";
    null_descriptor_is_valid: "null_descriptor";
    raster_check_is_valid: "raster_check";
    renderpass_check_is_valid: "renderpass_check";
    robust_access_is_valid: "robust_access";
    rq_smoke_is_valid: "rq_smoke";
    sparse_is_valid: "sparse";
    vk13_check_is_valid: "vk13_check";
    render_is_valid: "render", "--width", "64", "--height", "48", "--out", "/dev/null";
    render_raster_is_valid: "render", "--raster", "--width", "64", "--height", "48", "--out", "/dev/null";
    render_pipeline_is_valid: "render", "--pipeline", "--cutout", "--width", "64", "--height", "48", "--out", "/dev/null";
    rt_scene_is_valid: "rt_scene", "--width", "64", "--height", "48", "--out", "/tmp/vortex-validation-rt_scene.png";
    rt_scene_depth1_is_valid: "rt_scene", "--depth1", "--width", "48", "--height", "32", "--out", "/tmp/vortex-validation-rt_scene1.png";
}
