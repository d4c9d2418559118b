//! The command processor's part of a draw: the vertex output buffer, the counts of indirect
//! draws, and the pulse.
//!
//! The vertex output buffer is device scratch the command processor owns and grows to the
//! largest draw it has played (`vertex_count * instance_count` slots of the pipeline's
//! stride). An indirect draw reads each `VkDraw(Indexed)IndirectCommand` when the stream
//! reaches it (and the draw count, for the `Count` forms), writes the count DCRs and draws
//! once per command, `GFX_DRAW_INDEX` numbering them.

use crate::memory::Memory;
use std::sync::Arc;
use vortex_model::abi::gfx::dcr;
use vortex_model::device::{Device as Model, DispatchReport};
use vortex_model::fault::{Fault, FaultKind};

/// One draw (or indirect batch of draws) of a pipeline.
#[derive(Clone)]
pub struct DrawJob {
    pub pipeline: Arc<str>,
    /// Bytes per vertex-output slot.
    pub vout_stride: u32,
    pub source: DrawSource,
}

#[derive(Clone)]
pub enum DrawSource {
    /// The count DCRs are in the stream already.
    Direct {
        vertices: u32,
        instances: u32,
    },
    Indirect(IndirectDraws),
}

/// Indirect draw commands: `max` of them `stride` bytes apart from `addr`, or as many as the
/// u32 at `count_addr` says (at most `max`).
#[derive(Clone, Copy, Debug)]
pub struct IndirectDraws {
    pub addr: u64,
    pub stride: u64,
    pub max: u32,
    pub count_addr: Option<u64>,
    /// Indexed draws: the index buffer's address and bytes per index.
    pub index: Option<(u64, u32)>,
}

/// The command processor's device scratch for draws.
#[derive(Default)]
pub struct Scratch {
    vob: Option<Memory>,
}

impl Scratch {
    /// The vertex output buffer, at least `bytes` long.
    fn vob(&mut self, model: &Model, bytes: u64) -> Result<u64, Fault> {
        if self.vob.as_ref().is_none_or(|m| m.size < bytes) {
            // Drop the old buffer first: its draws have finished.
            self.vob = None;
            let size = bytes.max(64 * 1024).next_power_of_two();
            let m = Memory::allocate(model.memory(), size).map_err(|_| {
                Fault::new(FaultKind::BadLaunch, format!("cannot allocate {bytes} bytes of vertex output"))
            })?;
            self.vob = Some(m);
        }
        Ok(self.vob.as_ref().expect("allocated above").address(0))
    }
}

fn write(model: &mut Model, print: bool, addr: u32, value: u32) -> Result<(), Fault> {
    if print {
        eprintln!("vortex: DCR {:<18} = {value:#x}", vortex_model::abi::dcr::name(addr));
    }
    model.dcr_write(addr, value)
}

/// Plays a draw job: one pulse, or one per indirect command; each draw's report joins
/// `reports`.
pub(super) fn play(
    model: &mut Model,
    job: &DrawJob,
    scratch: &mut Scratch,
    reports: &mut Vec<DispatchReport>,
    print: bool,
) -> Result<(), Fault> {
    let d = match &job.source {
        DrawSource::Direct { vertices, instances } => {
            return pulse(model, job, [*vertices, *instances], scratch, reports, print)
        }
        DrawSource::Indirect(d) => *d,
    };
    let m = model.memory().snapshot();
    let n = match d.count_addr {
        Some(a) => m.read_u32(a)?.min(d.max),
        None => d.max,
    };
    for k in 0..n {
        let at = d.addr + k as u64 * d.stride;
        let word = |w: u64| m.read_u32(at + 4 * w);
        let (count, instances) = (word(0)?, word(1)?);
        // VkDrawIndirectCommand: first vertex, first instance; the indexed command has the
        // first index, the (signed) vertex offset, then the first instance.
        let (index_addr, base, first_instance) = match d.index {
            Some((addr, bytes)) => (addr + word(2)? as u64 * bytes as u64, word(3)?, word(4)?),
            None => (0, word(2)?, word(3)?),
        };
        let counts = [
            (dcr::GFX_VERTEX_COUNT, count),
            (dcr::GFX_INSTANCE_COUNT, instances),
            (dcr::GFX_VERTEX_BASE, base),
            (dcr::GFX_FIRST_INSTANCE, first_instance),
            (dcr::GFX_INDEX_LO, index_addr as u32),
            (dcr::GFX_INDEX_HI, (index_addr >> 32) as u32),
            (dcr::GFX_DRAW_INDEX, k),
        ];
        for (addr, value) in counts {
            write(model, print, addr, value)?;
        }
        if count > 0 && instances > 0 {
            pulse(model, job, [count, instances], scratch, reports, print)?;
        }
    }
    Ok(())
}

/// Gives the draw its vertex output buffer and starts it.
fn pulse(
    model: &mut Model,
    job: &DrawJob,
    [vertices, instances]: [u32; 2],
    scratch: &mut Scratch,
    reports: &mut Vec<DispatchReport>,
    print: bool,
) -> Result<(), Fault> {
    let bytes = vertices as u64 * instances as u64 * job.vout_stride as u64;
    let vob = scratch.vob(model, bytes)?;
    write(model, print, dcr::GFX_VOB_LO, vob as u32)?;
    write(model, print, dcr::GFX_VOB_HI, (vob >> 32) as u32)?;
    if print {
        eprintln!("vortex: DRAW '{}' {vertices} x {instances}", job.pipeline);
    }
    let mut r = model.draw()?;
    r.kernel = job.pipeline.to_string();
    tracing::debug!("draw '{}' {vertices} x {instances}: {} warp instructions", job.pipeline, r.totals.instructions);
    reports.push(r);
    Ok(())
}
