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
use serde::Serialize;
use std::time::Instant;

/// Timed mode: the cycles of each stage of a draw (they run one after the other).
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
        let mut stats = DrawStats::default();
        let mut report = DispatchReport { kernel: "draw".into(), ..Default::default() };
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
        stats.vertices = vs.invocations();
        let names = vkernel.name.clone();

        let late = shade && !early_tests(&state);
        let raster = Raster {
            state: &state,
            vs: &vs,
            mem: &mem,
            shade,
            early: !late,
            tile: self.config().gfx.tile_size,
            cores: self.config().num_cores(),
            nt: nt as usize,
        };
        let (out, rstats, om) = raster.run()?;
        let vertices = stats.vertices;
        stats = DrawStats { vertices, om, ..rstats };
        report.kernel = names;
        report.grid = launch.grid_dim;
        report.block = launch.block_dim;
        report.absorb(vrep);
        if shade && !out.binner.warps.is_empty() {
            let fkernel = self.kernel(&mem, regs.fs_pc)?;
            let fs = FragStage::new(regs, state, out, late);
            stats.helper_lanes = fs.helper_lanes();
            let launch = fs.launch(nt);
            self.begin_fragments();
            let frep = self.run(&mem, &launch, &fkernel, Some(Stage::Fragment(&fs)), Source::PerCore(&fs.lists))?;
            stats.om.add(&self.end_fragments()?);
            report.kernel = format!("{} / {}", report.kernel, fkernel.name);
            report.absorb(frep);
        }
        report.draw = Some(stats);
        report.wall = t0.elapsed();
        Ok(report)
    }
}
