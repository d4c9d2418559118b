//! Window-system integration through the real loader: `vulkaninfo` lists the surface and
//! swapchain extensions on our ICD and, in a private Xvfb, the surface's capabilities,
//! formats and present modes.

use std::path::PathBuf;
use std::process::Command;
use vortex_examples::xvfb::Xvfb;

fn vulkaninfo(display: Option<&str>) -> String {
    let out = run_vulkaninfo(display);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "vulkaninfo failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

fn run_vulkaninfo(display: Option<&str>) -> std::process::Output {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let lib = repo.join("target/release/libvortex_icd.so");
    assert!(lib.exists(), "{} is missing: build the ICD first (cargo build --release -p vortex-icd)", lib.display());
    let manifest = repo.join("json/vortex_icd.json");
    let mut cmd = Command::new("vulkaninfo");
    cmd.env("VK_ICD_FILENAMES", &manifest).env("VK_DRIVER_FILES", &manifest);
    match display {
        Some(d) => cmd.env("DISPLAY", d),
        None => cmd.env_remove("DISPLAY"),
    };
    cmd.output().expect("vulkaninfo is not installed (scripts/setup-debian.sh installs vulkan-tools)")
}

/// vulkaninfo on `x`'s display. A client connecting just as Xvfb starts listening can
/// still be refused under load, so a refused connection is retried for a few seconds (any
/// other failure is reported at once).
fn vulkaninfo_on(x: &Xvfb) -> String {
    let mut out = run_vulkaninfo(Some(&x.display));
    for _ in 0..25 {
        if out.status.success() || !String::from_utf8_lossy(&out.stderr).contains("failed to connect") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        out = run_vulkaninfo(Some(&x.display));
    }
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "vulkaninfo failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

#[test]
fn the_wsi_extensions_are_listed() {
    let out = vulkaninfo(None);
    for ext in [
        "VK_KHR_surface",
        "VK_KHR_get_surface_capabilities2",
        "VK_KHR_xcb_surface",
        "VK_KHR_xlib_surface",
        "VK_EXT_headless_surface",
        "VK_KHR_swapchain",
    ] {
        assert!(out.contains(ext), "{ext} not listed:\n{out}");
    }
}

#[test]
fn surface_capabilities_under_xvfb() {
    let Some(xvfb) = Xvfb::start() else { return };
    let out = vulkaninfo_on(&xvfb);
    drop(xvfb);
    let surfaces = &out[out.find("Presentable Surfaces").unwrap_or_else(|| panic!("no surfaces in:\n{out}"))..];
    for want in [
        "VK_KHR_xcb_surface",
        "VK_KHR_xlib_surface",
        "FORMAT_B8G8R8A8_UNORM",
        "FORMAT_R8G8B8A8_SRGB",
        "PRESENT_MODE_FIFO_KHR",
        "PRESENT_MODE_MAILBOX_KHR",
        "PRESENT_MODE_IMMEDIATE_KHR",
        "minImageCount = 2",
        "maxImageCount = 16",
        "IMAGE_USAGE_COLOR_ATTACHMENT_BIT",
        "IMAGE_USAGE_TRANSFER_DST_BIT",
    ] {
        assert!(surfaces.contains(want), "{want} missing from the surface report:\n{surfaces}");
    }
}
