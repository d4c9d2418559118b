//! `VORTEX_STATS=FILE`: every dispatch's counters as JSON Lines, one object per line
//! (`docs/TIMING.md` §4), appended when the batch that ran the dispatch finishes and before
//! its fence is signalled, so each dispatch costs the same however many ran before it.
//!
//! The file is one per process: it is truncated when the first device is created and every
//! device appends to it. Dispatch `N` of the process (line `N`, from 0) writes the RTU work
//! of each of its invocations to `FILE.workN.bin` when any of them traced.

use parking_lot::Mutex;
use std::fs::File;
use std::io::Write;
use std::sync::OnceLock;
use vortex_model::device::DispatchReport;

pub struct StatsLog {
    path: String,
    out: Mutex<Out>,
}

struct Out {
    file: File,
    /// Dispatches written so far: the next one's line number.
    lines: usize,
}

/// The process's log (created on the first call), or `None` without `VORTEX_STATS` or if the
/// file cannot be created (logged).
pub fn log() -> Option<&'static StatsLog> {
    static LOG: OnceLock<Option<StatsLog>> = OnceLock::new();
    LOG.get_or_init(|| {
        let path = std::env::var("VORTEX_STATS").ok().filter(|p| !p.trim().is_empty())?;
        match File::create(&path) {
            Ok(file) => Some(StatsLog { path, out: Mutex::new(Out { file, lines: 0 }) }),
            Err(e) => {
                tracing::warn!("VORTEX_STATS={path}: {e}; no counters are written");
                None
            }
        }
    })
    .as_ref()
}

impl StatsLog {
    /// Appends one line per dispatch of a finished batch, in one write.
    pub fn append(&self, reports: &[DispatchReport]) {
        if reports.is_empty() {
            return;
        }
        let mut out = self.out.lock();
        let mut text = String::new();
        for r in reports {
            let mut j = r.to_json();
            if let Some(map) = write_work_map(&self.path, out.lines, r) {
                j["work_map"] = map;
            }
            out.lines += 1;
            text.push_str(&j.to_string());
            text.push('\n');
        }
        if let Err(e) = out.file.write_all(text.as_bytes()) {
            tracing::warn!("VORTEX_STATS={}: {e}", self.path);
        }
    }
}

/// Writes the per-invocation RTU work of dispatch `index` next to the stats file, as a
/// little-endian `u32` array over the dispatch's invocations (x fastest, then y, then z),
/// and returns its JSON description `{"file", "extent"}`.
fn write_work_map(stats_path: &str, index: usize, r: &DispatchReport) -> Option<serde_json::Value> {
    if r.work.is_empty() {
        return None;
    }
    let extent: [u64; 3] = [0, 1, 2].map(|i| r.grid[i] as u64 * r.block[i].max(1) as u64);
    let n = extent.iter().product::<u64>();
    if n == 0 || n > 1 << 28 {
        tracing::warn!("VORTEX_STATS: dispatch {index} has {n} invocations; no work map written");
        return None;
    }
    let mut map = vec![0u32; n as usize];
    for (id, work) in &r.work {
        let i = id[0] as u64 + extent[0] * (id[1] as u64 + extent[1] * id[2] as u64);
        if let Some(cell) = map.get_mut(i as usize) {
            *cell = cell.saturating_add(*work);
        }
    }
    let file = format!("{stats_path}.work{index}.bin");
    let bytes: Vec<u8> = map.iter().flat_map(|v| v.to_le_bytes()).collect();
    if let Err(e) = std::fs::write(&file, bytes) {
        tracing::warn!("VORTEX_STATS: cannot write {file}: {e}");
        return None;
    }
    let name = std::path::Path::new(&file).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or(file);
    Some(serde_json::json!({ "file": name, "extent": extent }))
}
