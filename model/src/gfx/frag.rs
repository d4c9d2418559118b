//! The fragment stage: the raster unit's fragment warps, launched into the cores' warp
//! slots as one-warp CTAs from per-core lists (`block_idx.x` is the warp's index), and the
//! fragment CSRs their lanes read.
//!
//! Lane `4q + i` is pixel `i` of quad `q`; a quad's pixels that its primitive does not cover
//! (or that failed the early tests) are helper lanes. A lane's interpolated values are
//! computed from its rasterized primitive when the kernel reads them.

use super::ia::draw_csr;
use super::raster::bin::FragWarp;
use super::raster::setup::{RasterPrim, Sample};
use super::raster::{Quad, Rasterized};
use super::state::DrawState;
use crate::abi::gfx::csr;
use crate::dcr::{DrawRegs, LaunchState};
use crate::kmu::CtaDesc;

/// The fragment stage of one draw.
pub struct FragStage {
    pub regs: DrawRegs,
    pub state: DrawState,
    pub prims: Vec<RasterPrim>,
    pub quads: Vec<Quad>,
    pub warps: Vec<FragWarp>,
    /// Per core, its warps in merge order, and the cycle each is ready to launch.
    pub lists: Vec<Vec<CtaDesc>>,
    pub ready: Vec<Vec<u64>>,
    /// Depth and stencil are tested when fragments merge, not before they run.
    pub late: bool,
}

impl FragStage {
    pub fn new(regs: DrawRegs, state: DrawState, r: Rasterized, late: bool) -> FragStage {
        FragStage {
            regs,
            state,
            prims: r.prims,
            quads: r.quads,
            warps: r.binner.warps,
            lists: r.binner.lists,
            ready: r.binner.ready,
            late,
        }
    }

    /// The launch of the fragment kernel: one CTA of one warp per fragment warp.
    pub fn launch(&self, nt: u32) -> LaunchState {
        LaunchState {
            pc: self.regs.fs_pc,
            entry: 0,
            param: self.regs.param,
            grid_dim: [self.warps.len() as u32, 1, 1],
            block_dim: [nt, 1, 1],
            block_size: nt,
            lmem_size: 0,
            warp_step: crate::abi::dcr::warp_step(nt, [nt, 1, 1]),
            cluster_dim: [1, 1, 1],
        }
    }

    /// The live lanes and the helper lanes of the warp for CTA `block`.
    pub fn lanes(&self, block: [u32; 3]) -> (u32, u32) {
        let w = &self.warps[block[0] as usize];
        let (mut live, mut helper) = (0u32, 0u32);
        for (k, &q) in w.quads[..w.n as usize].iter().enumerate() {
            live |= 0xF << (4 * k);
            helper |= (!self.quads[q as usize].cover as u32 & 0xF) << (4 * k);
        }
        (live, helper)
    }

    /// Helper lanes the stage's warps start with.
    pub fn helper_lanes(&self) -> u64 {
        self.quads.iter().map(|q| 4 - q.cover.count_ones() as u64).sum()
    }

    /// The interpolated values of `lane` in the warp for CTA `block` (zero for a lane
    /// without a quad).
    pub fn sample(&self, block: [u32; 3], lane: usize) -> Sample {
        let w = &self.warps[block[0] as usize];
        if lane / 4 >= w.n as usize {
            return Sample::default();
        }
        let quad = &self.quads[w.quads[lane / 4] as usize];
        let p = lane as u32 & 3;
        self.prims[quad.prim as usize].at(quad.x + (p & 1), quad.y + (p >> 1))
    }

    /// The fragment CSR `id` of `lane` in the warp for CTA `block`, whose helper mask is
    /// `helper` now (the interpolated ones: [`Self::sample`]).
    pub fn csr(&self, id: u32, block: [u32; 3], lane: usize, helper: u32) -> u32 {
        let w = &self.warps[block[0] as usize];
        if lane / 4 >= w.n as usize {
            return draw_csr(id, &self.regs);
        }
        let quad = &self.quads[w.quads[lane / 4] as usize];
        let p = lane as u32 & 3;
        let (x, y) = (quad.x + (p & 1), quad.y + (p >> 1));
        let prim = &self.prims[quad.prim as usize];
        match id {
            csr::FRAG_X => x,
            csr::FRAG_Y => y,
            csr::FRAG_FRONT => prim.front as u32,
            csr::FRAG_PRIMITIVE => prim.id,
            csr::FRAG_COVERAGE => (quad.cover >> p) as u32 & 1,
            csr::FRAG_HELPER => helper >> lane & 1,
            csr::FRAG_VTX0 => prim.slots[0],
            csr::FRAG_VTX1 => prim.slots[1],
            csr::FRAG_VTX2 => prim.slots[2],
            _ if interpolated(id) => prim.at(x, y).csr(id),
            _ => draw_csr(id, &self.regs),
        }
    }
}

/// True for the CSRs of a fragment's interpolated values ([`Sample`]).
pub fn interpolated(id: u32) -> bool {
    matches!(id, csr::FRAG_Z..=csr::FRAG_W | csr::FRAG_BARY_I..=csr::FRAG_POINT_V)
}

impl Sample {
    /// The value of interpolated CSR `id`. One sample a pixel: the centroid is the centre.
    pub fn csr(&self, id: u32) -> u32 {
        let v = match id {
            csr::FRAG_Z => self.z,
            csr::FRAG_W => self.w,
            csr::FRAG_BARY_I | csr::FRAG_BARY_CENTROID_I => self.bary[0],
            csr::FRAG_BARY_J | csr::FRAG_BARY_CENTROID_J => self.bary[1],
            csr::FRAG_BARY_LINEAR_I | csr::FRAG_BARY_LINEAR_CENTROID_I => self.linear[0],
            csr::FRAG_BARY_LINEAR_J | csr::FRAG_BARY_LINEAR_CENTROID_J => self.linear[1],
            csr::FRAG_POINT_U => self.point[0],
            csr::FRAG_POINT_V => self.point[1],
            _ => 0.0,
        };
        v.to_bits()
    }
}

/// Per warp slot, the lanes' interpolated values once computed (a simulation cache: the
/// values are the raster unit's; computing them once per lane is what makes reading
/// several of them cheap).
#[derive(Default)]
pub struct SampleCache {
    slots: Vec<(u32, [Sample; crate::abi::MAX_THREADS])>,
}

impl SampleCache {
    /// A fragment warp launched into slot `wid`: nothing computed yet.
    pub fn reset(&mut self, wid: usize) {
        if self.slots.len() <= wid {
            self.slots.resize(wid + 1, (0, [Sample::default(); crate::abi::MAX_THREADS]));
        }
        self.slots[wid].0 = 0;
    }

    /// Lane `lane`'s values in slot `wid`, computed by `f` on first use.
    pub fn get(&mut self, wid: usize, lane: usize, f: impl FnOnce() -> Sample) -> Sample {
        let (valid, s) = &mut self.slots[wid];
        if *valid >> lane & 1 == 0 {
            s[lane] = f();
            *valid |= 1 << lane;
        }
        s[lane]
    }
}
