//! Window-system integration through the real loader: `vulkaninfo` lists the surface and
//! swapchain extensions on our ICD and, in a private Xvfb, the surface's capabilities,
//! formats and present modes.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

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

/// A private Xvfb, stopped with SIGTERM (so it removes its socket) when dropped, also when a
/// check panics.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Option<Xvfb> {
        let spawned = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "640x480x24", "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let mut child = spawned.ok()?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped")).read_line(&mut line).expect("Xvfb's display number");
        Some(Xvfb { child, display: format!(":{}", line.trim()) })
    }

    /// vulkaninfo on this display. Xvfb prints its display number as it starts listening;
    /// a client connecting in that instant can still be refused, so a refused connection
    /// is retried for a few seconds (any other failure is reported at once).
    fn vulkaninfo(&self) -> String {
        let mut out = run_vulkaninfo(Some(&self.display));
        for _ in 0..25 {
            if out.status.success() || !String::from_utf8_lossy(&out.stderr).contains("failed to connect") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
            out = run_vulkaninfo(Some(&self.display));
        }
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "vulkaninfo failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        stdout
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
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
    let Some(xvfb) = Xvfb::start() else {
        eprintln!("skipped: Xvfb is not installed (scripts/setup-debian.sh installs xvfb)");
        return;
    };
    let out = xvfb.vulkaninfo();
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
