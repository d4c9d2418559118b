//! The draw sequencer: `GFX_START` runs the draw the graphics DCRs program, stage after
//! stage: the input assembler and the vertex kernel over every vertex position and instance,
//! the raster unit over every primitive, then the fragment kernel over the fragment warps,
//! their results merged into the attachments. The report is a dispatch report whose
//! counters are both kernels' and whose `draw` field holds the fixed-function units'.

use super::frag::FragStage;
use super::ia::VertexStage;
use super::raster::Raster;
use super::state::DrawState;
use super::{DrawStats, Stage};
use crate::abi::gfx::state::flags;
use crate::device::{Device, DispatchReport, Source};
use crate::fault::{Fault, FaultKind};
use crate::kmu::Kmu;
use crate::mem::MemoryMap;
use serde::Serialize;
use std::time::Instant;

/// Timed mode: the cycles of each stage of a draw. The vertex stage runs first; the raster
/// unit then starts, and fragment warps launch as it closes them, so the fragment stage
/// (which ends when its last warp has merged) overlaps the raster unit's cycles.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StageCycles {
    pub vertex: u64,
    pub raster: u64,
    pub fragment: u64,
}

/// Whether depth and stencil may be tested before the fragment kernel runs: it asks for it,
/// or nothing it does could tell the difference.
pub fn early_tests(st: &DrawState) -> bool {
    st.has(flags::EARLY_TESTS) || !st.has(flags::FS_WRITES_DEPTH | flags::FS_DISCARDS | flags::FS_SIDE_EFFECTS)
}

impl Device {
    /// The `GFX_START` pulse: runs the draw programmed in the graphics DCRs to completion.
    pub fn draw(&mut self) -> Result<DispatchReport, Fault> {
        let t0 = Instant::now();
        let regs = self.dcrs().draw();
        let mem = self.memory().snapshot();
        let state = DrawState::read(&mem, regs.state)?;
        let mut report = DispatchReport { kernel: "draw".into(), ..Default::default() };
        let mut stats = DrawStats::default();
        if regs.slots() == 0 {
            report.draw = Some(stats);
            return Ok(report);
        }
        let nt = self.config().num_threads;
        let shade = regs.fs_pc != 0;
        if shade && nt < 4 {
            return Err(Fault::new(
                FaultKind::BadLaunch,
                format!("fragment warps need 4 lanes a quad; warps have {nt}"),
            ));
        }
        let vs = VertexStage::fetch(&mem, regs, state.has(flags::PRIMITIVE_RESTART))?;
        let vkernel = self.kernel(&mem, regs.vs_pc)?;
        let launch = vs.launch(nt);
        let kmu = Kmu::new(&launch)?;
        let vrep = self.run(&mem, &launch, &vkernel, Some(Stage::Vertex(&vs)), Source::Kmu(&kmu))?;
        let mut cycles = StageCycles { vertex: vrep.timed.as_ref().map_or(0, |t| t.cycles), ..Default::default() };
        report.kernel = vkernel.name.clone();
        report.grid = launch.grid_dim;
        report.block = launch.block_dim;
        report.absorb(vrep);

        let late = shade && !early_tests(&state);
        let gcfg = self.config().gfx.clone();
        let raster = Raster {
            state: &state,
            vs: &vs,
            mem: &mem,
            shade,
            early: !late,
            cfg: &gcfg,
            cores: self.config().num_cores(),
            nt: nt as usize,
        };
        let (out, rstats, om) = raster.run()?;
        stats = DrawStats { vertices: vs.invocations(), om, ..rstats };
        cycles.raster = out.cycles;
        cycles.fragment = out.cycles;
        if shade && !out.binner.warps.is_empty() {
            let fs = FragStage::new(regs, state, out, late);
            self.fragments(&mem, &fs, &mut report, &mut stats, &mut cycles)?;
        }
        if let Some(t) = report.timed.as_mut() {
            t.cycles = cycles.vertex + cycles.fragment;
            stats.cycles = Some(cycles);
        }
        report.draw = Some(stats);
        report.wall = t0.elapsed();
        Ok(report)
    }

    /// The fragment stage: the warps of `fs` on their cores, merged by each core's output
    /// merger.
    fn fragments(
        &mut self,
        mem: &MemoryMap,
        fs: &FragStage,
        report: &mut DispatchReport,
        stats: &mut DrawStats,
        cycles: &mut StageCycles,
    ) -> Result<(), Fault> {
        let fkernel = self.kernel(mem, fs.regs.fs_pc)?;
        stats.helper_lanes = fs.helper_lanes();
        let launch = fs.launch(self.config().num_threads);
        self.begin_fragments();
        let frep =
            self.run(mem, &launch, &fkernel, Some(Stage::Fragment(fs)), Source::PerCore(&fs.lists, &fs.ready))?;
        let (om, om_end) = self.end_fragments()?;
        stats.om.add(&om);
        if let Some(t) = &frep.timed {
            cycles.fragment = t.cycles.max(om_end).max(cycles.raster);
        }
        report.kernel = format!("{} / {}", report.kernel, fkernel.name);
        report.absorb(frep);
        Ok(())
    }
}
