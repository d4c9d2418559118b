//! `VORTEX_PRESENT_DUMP=DIR`: every presented frame (or every Nth, `VORTEX_PRESENT_DUMP_EVERY`)
//! written to `DIR/sc<S>-<N>.png`, S the swapchain's number in the process (from 0, in
//! creation order) and N the present's number on that swapchain (from 0, five digits), so
//! the output of any unmodified program can be looked at.

use super::convert;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct Dump {
    dir: PathBuf,
    every: u64,
}

impl Dump {
    pub fn from_env() -> Option<Dump> {
        let dir = std::env::var_os("VORTEX_PRESENT_DUMP").filter(|d| !d.is_empty())?;
        let every = match std::env::var("VORTEX_PRESENT_DUMP_EVERY") {
            Ok(v) => v.trim().parse::<u64>().ok().filter(|n| *n > 0).unwrap_or_else(|| {
                tracing::error!("VORTEX_PRESENT_DUMP_EVERY={v:?} is not a positive frame count; every frame is dumped");
                1
            }),
            Err(_) => 1,
        };
        Some(Dump { dir: dir.into(), every })
    }

    /// Whether present number `seq` is dumped.
    pub fn wants(&self, seq: u64) -> bool {
        seq.is_multiple_of(self.every)
    }

    pub fn path(&self, swapchain: u64, seq: u64) -> PathBuf {
        self.dir.join(format!("sc{swapchain}-{seq:05}.png"))
    }

    /// Writes one frame (rows of 4-byte texels, `pitch` bytes apart) as an RGB PNG. A
    /// failure is logged once and the frame skipped.
    pub fn write(&self, swapchain: u64, seq: u64, pixels: &[u8], pitch: usize, bgra: bool, extent: [u32; 2]) {
        let path = self.path(swapchain, seq);
        let rgb = convert::to_rgb(pixels, pitch, bgra, extent[0], extent[1]);
        let r = std::fs::create_dir_all(&self.dir).and_then(|_| {
            let file = std::io::BufWriter::new(std::fs::File::create(&path)?);
            let mut enc = png::Encoder::new(file, extent[0], extent[1]);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            enc.write_header()?.write_image_data(&rgb)?;
            Ok(())
        });
        if let Err(e) = r {
            static ONCE: AtomicBool = AtomicBool::new(false);
            if !ONCE.swap(true, Ordering::Relaxed) {
                tracing::error!("VORTEX_PRESENT_DUMP: cannot write {}: {e}", path.display());
            }
        }
    }
}
