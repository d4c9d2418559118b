//! A real, unmodified third-party client: Sascha Willems' "ray queries for ray traced
//! shadows" sample (a glTF scene rasterised, one shadow ray query per fragment), run by its
//! package's own `run.sh` on both drivers — in an X11 window of a private Xvfb (the frame
//! grabbed from the screen) and on a headless surface. Our frame must match lavapipe's
//! reference picture but for a few shadow-edge fragments whose ray grazes an edge.
//!
//! The package lives outside this repository (`../shared/samples/sascha-rayquery`, or
//! `SASCHA_RAYQUERY=dir`); without it the tests say so and check nothing.

use std::path::{Path, PathBuf};
use std::process::Command;
use vortex_examples::icd::{Icd, LAVAPIPE_MANIFEST};

/// Fragments allowed to differ from the reference by more than `LOOSE` in a channel: a
/// shadow ray that grazes an occluder's edge may land on either side of it on two drivers
/// (lavapipe against itself gives 0).
const MAX_FAR_OFF: usize = 40;
/// A channel difference that rounding and interpolation alone can make.
const LOOSE: u8 = 8;
const SIZE: (u32, u32) = (320, 180);

fn package() -> Option<PathBuf> {
    let dir = std::env::var_os("SASCHA_RAYQUERY")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/samples/sascha-rayquery"));
    if dir.join("run.sh").is_file() {
        Some(dir)
    } else {
        eprintln!("skipped: the sample package is not at {} (set SASCHA_RAYQUERY=dir)", dir.display());
        None
    }
}

fn manifest(icd: &Icd) -> Option<PathBuf> {
    if matches!(icd, Icd::Lavapipe) && !Path::new(LAVAPIPE_MANIFEST).is_file() {
        eprintln!("skipped: lavapipe's manifest {LAVAPIPE_MANIFEST} is absent");
        return None;
    }
    Some(icd.manifest().expect("the driver's manifest"))
}

/// Runs the package's `run.sh` with `args` on `manifest`; returns its output, having
/// checked that the sample exited 0 and presented.
fn run(pkg: &Path, manifest: &Path, args: &[&str]) -> String {
    let out = Command::new(pkg.join("run.sh"))
        .arg("--icd")
        .arg(manifest)
        .args(["--size", &format!("{}x{}", SIZE.0, SIZE.1), "--frames", "2", "--timeout", "900"])
        .args(args)
        .output()
        .expect("start run.sh");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "run.sh {args:?} on {} failed ({}):\n{text}", manifest.display(), out.status);
    assert!(text.contains("sample exit     : 0 (success)"), "{text}");
    text
}

/// The picture as RGB rows.
fn load_rgb(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut dec = png::Decoder::new(std::io::BufReader::new(file));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{}: {:?} is not a colour picture", path.display(), info.color_type);
    let px = buf[..info.buffer_size()].chunks(channels).map(|c| [c[0], c[1], c[2]]).collect();
    (info.width, info.height, px)
}

/// (fragments that differ at all, fragments off by more than `LOOSE`, distinct colours).
fn compare(got: &Path, reference: &Path) -> (usize, usize, usize) {
    let (w, h, a) = load_rgb(got);
    let (rw, rh, b) = load_rgb(reference);
    assert_eq!((w, h), (rw, rh), "{} is {w}x{h}, the reference {rw}x{rh}", got.display());
    let diff = |p: &[u8; 3], q: &[u8; 3]| (0..3).map(|i| p[i].abs_diff(q[i])).max().unwrap_or(0);
    let differ = a.iter().zip(&b).filter(|(p, q)| diff(p, q) > 0).count();
    let far = a.iter().zip(&b).filter(|(p, q)| diff(p, q) > LOOSE).count();
    let colours = a.iter().collect::<std::collections::HashSet<_>>().len();
    (differ, far, colours)
}

fn window_run_matches_reference(icd: Icd, name: &str) {
    let Some(pkg) = package() else { return };
    let Some(manifest) = manifest(&icd) else { return };
    let png = std::env::temp_dir().join(format!("vortex-sascha-{name}-{}.png", std::process::id()));
    let text = run(&pkg, &manifest, &["--out", png.to_str().unwrap()]);
    let (differ, far, colours) = compare(&png, &pkg.join("reference-lavapipe-320x180.png"));
    eprintln!(
        "sascha rayquery on {name}: {differ} fragments differ from lavapipe's picture, {far} by more than {LOOSE}; \
         {colours} colours"
    );
    // A blank or unlit frame would have a handful of colours; the scene has over a hundred.
    assert!(colours > 50, "{colours} colours: not the scene\n{text}");
    assert!(far <= MAX_FAR_OFF, "{far} fragments off by more than {LOOSE} (at most {MAX_FAR_OFF})\n{text}");
    let _ = std::fs::remove_file(&png);
}

#[test]
fn window_on_vortex_matches_lavapipes_picture() {
    window_run_matches_reference(Icd::Vortex, "vortex");
}

#[test]
fn window_on_lavapipe_matches_its_reference() {
    window_run_matches_reference(Icd::Lavapipe, "lavapipe");
}

#[test]
fn headless_on_vortex_presents() {
    let Some(pkg) = package() else { return };
    let Some(manifest) = manifest(&Icd::Vortex) else { return };
    let text = run(&pkg, &manifest, &["--headless"]);
    assert!(text.contains("timed frames    : 2 in"), "{text}");
}
