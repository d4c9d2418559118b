//! The graphics units: what a draw does between `GFX_START` and its last pixel
//! (`docs/GRAPHICS.md`; the contract is `abi::gfx`).
//!
//! - [`draw`]: the draw sequencer: latches the draw, runs the stages in order;
//! - [`ia`]: the input assembler (indices, the vertex kernel's launch and CSRs);
//! - [`assembly`]: primitive assembly by topology, restart, provoking vertex;
//! - [`raster`]: the raster unit (clip, setup, coverage, early tests, binning);
//! - [`frag`]: the fragment stage (fragment warps, their lanes and CSRs);
//! - [`om`]: the output merger (tests, blending, attachment writes; a port per core);
//! - [`state`]: the draw state record as the units read it.
//!
//! The programmable stages run on the SIMT cores like any kernel; [`Stage`] is what a warp
//! launch and a CSR read need to know about the stage they belong to.

pub mod assembly;
pub mod draw;
pub mod frag;
pub mod ia;
pub mod om;
pub mod raster;
pub mod state;

use frag::FragStage;
use ia::VertexStage;
use serde::Serialize;

/// The graphics stage a kernel runs as (a dispatch has none).
#[derive(Clone, Copy)]
pub enum Stage<'a> {
    Vertex(&'a VertexStage),
    Fragment(&'a FragStage),
}

impl Stage<'_> {
    /// The lanes of the warp launched for CTA `block` that run, and those of them that are
    /// helper lanes.
    pub fn lanes(&self, block: [u32; 3], nt: usize) -> (u32, u32) {
        match self {
            Stage::Vertex(v) => (v.lane_mask(block, nt), 0),
            Stage::Fragment(f) => f.lanes(block),
        }
    }

    /// Graphics CSR `id` of `lane` in the warp for CTA `block` (helper mask `helper`).
    pub fn csr(&self, id: u32, block: [u32; 3], lane: usize, nt: usize, helper: u32) -> u32 {
        match self {
            Stage::Vertex(v) if id < crate::abi::gfx::csr::FRAG_X => v.csr(id, block, lane, nt),
            Stage::Vertex(v) => ia::draw_csr(id, &v.regs),
            Stage::Fragment(f) if id >= crate::abi::gfx::csr::STATE_LO => f.csr(id, block, lane, helper),
            Stage::Fragment(f) => ia::draw_csr(id, &f.regs),
        }
    }
}

/// True for the graphics CSRs every lane of a warp reads the same (read once, broadcast).
pub fn uniform_csr(id: u32) -> bool {
    use crate::abi::gfx::csr;
    matches!(id, csr::VTX_BASE_VERTEX..=csr::VOB_HI)
}

/// What one draw's fixed-function units did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DrawStats {
    /// Vertex kernel invocations.
    pub vertices: u64,
    /// Primitives assembled; cut by clipping; entirely clipped away; culled (facing, zero
    /// area).
    pub primitives: u64,
    pub clipped: u64,
    pub clipped_away: u64,
    pub culled: u64,
    /// Quads and covered pixels the rasterizer produced (before the early tests).
    pub quads: u64,
    pub fragments: u64,
    /// Fragment warps, their helper lanes, and the screen tiles they came from.
    pub fragment_warps: u64,
    pub helper_lanes: u64,
    pub tiles: u64,
    /// The output merger's tests and writes.
    pub om: om::OmStats,
    /// Timed mode: cycles of the vertex stage, the raster unit and the fragment stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycles: Option<draw::StageCycles>,
}
