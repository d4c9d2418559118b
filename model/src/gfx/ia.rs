//! The input assembler: fetches the draw's indices and launches the vertex kernel through
//! the KMU, one lane per (instance, vertex position), giving each lane its vertex CSRs.
//!
//! The grid is `ceil(vertex_count / NUM_THREADS)` x `instance_count` CTAs of one warp each;
//! lanes past the last position, and the positions of restart indices (which are not
//! vertices), do not run. Each position is shaded once per instance (no post-transform
//! cache), into slot `instance * vertex_count + position` of the vertex output buffer.

use crate::abi::gfx::{csr, index_type};
use crate::dcr::{DrawRegs, LaunchState};
use crate::fault::{Fault, FaultKind};
use crate::mem::MemoryMap;

/// The vertex stage of one draw.
pub struct VertexStage {
    pub regs: DrawRegs,
    /// The index at each position (indexed draws; empty otherwise).
    indices: Vec<u32>,
    /// The index type's restart value, when primitive restart is on for an indexed draw.
    restart: Option<u32>,
}

impl VertexStage {
    /// Latches the draw and fetches its indices (an unmapped index buffer faults like any
    /// access).
    pub fn fetch(mem: &MemoryMap, regs: DrawRegs, restart_enabled: bool) -> Result<VertexStage, Fault> {
        let mut st = VertexStage { regs, indices: Vec::new(), restart: None };
        if regs.index == 0 {
            return Ok(st);
        }
        let (bytes, restart) = index_type::info(regs.index_type).ok_or_else(|| {
            Fault::new(FaultKind::BadLaunch, format!("GFX_INDEX_TYPE {} is not an index type", regs.index_type))
        })?;
        let mut raw = vec![0u8; regs.vertex_count as usize * bytes as usize];
        mem.read(regs.index, &mut raw).map_err(Fault::memory)?;
        st.indices = match bytes {
            1 => raw.iter().map(|&b| b as u32).collect(),
            2 => raw.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]) as u32).collect(),
            _ => raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect(),
        };
        st.restart = restart_enabled.then_some(restart);
        Ok(st)
    }

    /// True when position `pos` holds the restart index (primitive assembly starts over).
    pub fn is_restart(&self, pos: u32) -> bool {
        self.restart.is_some_and(|r| self.indices[pos as usize] == r)
    }

    /// Vertex kernel invocations: every position but the restarts, in every instance.
    pub fn invocations(&self) -> u64 {
        let restarts = match self.restart {
            Some(r) => self.indices.iter().filter(|&&i| i == r).count(),
            None => 0,
        };
        (self.regs.vertex_count as u64 - restarts as u64) * self.regs.instance_count as u64
    }

    /// The KMU launch of the vertex kernel over `nt`-lane warps.
    pub fn launch(&self, nt: u32) -> LaunchState {
        let r = &self.regs;
        LaunchState {
            pc: r.vs_pc,
            entry: 0,
            param: r.param,
            grid_dim: [r.vertex_count.div_ceil(nt), r.instance_count, 1],
            block_dim: [nt, 1, 1],
            block_size: nt,
            lmem_size: 0,
            warp_step: crate::abi::dcr::warp_step(nt, [nt, 1, 1]),
            cluster_dim: [1, 1, 1],
        }
    }

    /// The lanes of the warp for CTA `block` that shade a vertex.
    pub fn lane_mask(&self, block: [u32; 3], nt: usize) -> u32 {
        let mut m = 0u32;
        for l in 0..nt {
            let pos = block[0] as u64 * nt as u64 + l as u64;
            if pos < self.regs.vertex_count as u64 && !self.is_restart(pos as u32) {
                m |= 1 << l;
            }
        }
        m
    }

    /// The vertex CSR `id` of `lane` in the warp for CTA `block`.
    pub fn csr(&self, id: u32, block: [u32; 3], lane: usize, nt: usize) -> u32 {
        let r = &self.regs;
        let pos = block[0].wrapping_mul(nt as u32).wrapping_add(lane as u32);
        let inst = block[1];
        match id {
            csr::VTX_INDEX => {
                let i = if r.index == 0 { pos } else { self.indices.get(pos as usize).copied().unwrap_or(0) };
                i.wrapping_add(r.vertex_base)
            }
            csr::VTX_INSTANCE => inst.wrapping_add(r.first_instance),
            csr::VTX_SLOT => inst.wrapping_mul(r.vertex_count).wrapping_add(pos),
            csr::VTX_BASE_VERTEX => r.vertex_base,
            csr::VTX_BASE_INSTANCE => r.first_instance,
            csr::DRAW_INDEX => r.draw_index,
            _ => draw_csr(id, r),
        }
    }
}

/// The CSRs both stages read: the state record's and the vertex output buffer's addresses.
pub fn draw_csr(id: u32, r: &DrawRegs) -> u32 {
    match id {
        csr::STATE_LO => r.state as u32,
        csr::STATE_HI => (r.state >> 32) as u32,
        csr::VOB_LO => r.vob as u32,
        csr::VOB_HI => (r.vob >> 32) as u32,
        _ => 0,
    }
}
