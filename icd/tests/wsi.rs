//! Window-system integration through the real loader: `vulkaninfo` lists the surface and
//! swapchain extensions on our ICD and, in a private Xvfb, the surface's capabilities,
//! formats and present modes.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn vulkaninfo(display: Option<&str>) -> String {
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
    let out = cmd.output().expect("vulkaninfo is not installed (scripts/setup-debian.sh installs vulkan-tools)");
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
    let spawned = Command::new("Xvfb")
        .args(["-displayfd", "1", "-screen", "0", "640x480x24", "-nolisten", "tcp"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut xvfb) = spawned else {
        eprintln!("skipped: Xvfb is not installed (scripts/setup-debian.sh installs xvfb)");
        return;
    };
    let mut line = String::new();
    BufReader::new(xvfb.stdout.take().expect("piped")).read_line(&mut line).expect("Xvfb's display number");
    let out = vulkaninfo(Some(&format!(":{}", line.trim())));
    let _ = xvfb.kill();
    let _ = xvfb.wait();
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
