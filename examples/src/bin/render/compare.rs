//! PNG output and the comparison with a render on another driver.

use crate::Options;
use std::path::Path;
use std::process::Command;

pub use vortex_examples::image::write_png;

pub fn read_png(path: &Path) -> Result<(u32, u32, Vec<u8>), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut reader =
        png::Decoder::new(std::io::BufReader::new(file)).read_info().map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).map_err(|e| format!("{}: {e}", path.display()))?;
    if info.color_type != png::ColorType::Rgba || info.bit_depth != png::BitDepth::Eight {
        return Err(format!("{}: not an RGBA8 image", path.display()));
    }
    buf.truncate(info.buffer_size());
    Ok((info.width, info.height, buf))
}

/// How two renders differ: the fraction of pixels whose colour differs by more than
/// `tolerance` in any channel, and the PSNR over RGB (infinite when identical).
pub fn difference(a: &[u8], b: &[u8], tolerance: u8) -> (f64, f64) {
    let mut differing = 0usize;
    let mut se = 0f64;
    let n = a.len() / 4;
    for (p, q) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        if p[..3].iter().zip(&q[..3]).any(|(x, y)| x.abs_diff(*y) > tolerance) {
            differing += 1;
        }
        se += p[..3].iter().zip(&q[..3]).map(|(x, y)| (*x as f64 - *y as f64).powi(2)).sum::<f64>();
    }
    let mse = se / (3 * n) as f64;
    let psnr = if mse == 0.0 { f64::INFINITY } else { 10.0 * (255.0f64 * 255.0 / mse).log10() };
    (differing as f64 / n as f64, psnr)
}

/// Renders the same image on `other` in a child process and prints how it differs.
pub fn against(o: &Options, other: &str) -> Result<(), String> {
    let ref_path = o.out.with_extension(format!("{}.png", other.replace(['/', '.'], "_")));
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    // The reference render must not overwrite this run's statistics.
    cmd.env_remove("VORTEX_STATS");
    cmd.args(["--icd", other, "--width", &o.width.to_string(), "--height", &o.height.to_string()]);
    cmd.args(["--spp", &o.spp.to_string(), "--quiet", "--out"]).arg(&ref_path);
    for (on, flag) in [(o.raster, "--raster"), (o.pipeline, "--pipeline"), (o.cutout, "--cutout")] {
        if on {
            cmd.arg(flag);
        }
    }
    match &o.obj {
        Some(p) => cmd.arg("--obj").arg(p),
        None => cmd.args(["--scene", &o.scene]),
    };
    cmd.args(["--subdivide", &o.shape.subdivide.to_string()]);
    if let Some(n) = o.shape.copies {
        cmd.args(["--copies", &n.to_string()]);
    }
    let t = std::time::Instant::now();
    let status = cmd.status().map_err(|e| format!("cannot start the reference render: {e}"))?;
    if !status.success() {
        return Err(format!("the reference render on {other} failed ({status})"));
    }
    let (_, _, mine) = read_png(&o.out)?;
    let (_, _, theirs) = read_png(&ref_path)?;
    let (frac, psnr) = difference(&mine, &theirs, 2);
    println!(
        "compared with {other} ({} in {:.2} s): {:.4}% of pixels differ by more than 2/255, PSNR {:.2} dB",
        ref_path.display(),
        t.elapsed().as_secs_f64(),
        frac * 100.0,
        psnr
    );
    Ok(())
}
