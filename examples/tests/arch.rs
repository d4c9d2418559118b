//! The two ray-tracing architectures agree (`docs/RDNA2.md`): every bench scene rendered
//! with ray queries (primary rays, shadows, ambient occlusion: closest hits shaded by their
//! t, primitive and instance) gives the same bytes on an rtu device and on an rdna2 device,
//! where the shader walks the other layout with `ISECT`; and rq_smoke's closest-hit and
//! any-hit passes on rdna2 match its CPU reference ray by ray (t, primitive, instance).

use std::process::Command;

fn render(scene: &str, arch: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let out = dir.join(format!("arch_{scene}_{arch}.png"));
    let o = Command::new(env!("CARGO_BIN_EXE_render"))
        .args(["--icd", "vortex", "--scene", scene, "--width", "48", "--height", "32", "--spp", "1", "--quiet"])
        .arg("--out")
        .arg(&out)
        .env("VORTEX_RT_ARCH", arch)
        .env_remove("VORTEX_CONFIG")
        .output()
        .expect("cannot start render");
    assert!(o.status.success(), "render {scene} ({arch}) failed:\n{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(&out).expect("the rendered image")
}

#[test]
fn every_bench_scene_renders_the_same_bytes_on_both_architectures() {
    for scene in ["bunny", "spheres", "million", "random"] {
        let (a, b) = (render(scene, "rtu"), render(scene, "rdna2"));
        assert!(!a.is_empty());
        assert!(a == b, "{scene}: the rdna2 image differs from the rtu one");
    }
}

#[test]
fn rq_smoke_on_rdna2_matches_the_cpu_reference() {
    let o = Command::new(env!("CARGO_BIN_EXE_rq_smoke"))
        .args(["--icd", "vortex"])
        .env("VORTEX_RT_ARCH", "rdna2")
        .env_remove("VORTEX_CONFIG")
        .output()
        .expect("cannot start rq_smoke");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "rq_smoke (rdna2):\n{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("rdna2 node intersection"), "not an rdna2 device:\n{stdout}");
    assert!(stdout.contains("closest-hit pass: 4096/4096 rays match"), "{stdout}");
    assert!(stdout.contains("any-hit pass: 4096/4096 rays match"), "{stdout}");
}
