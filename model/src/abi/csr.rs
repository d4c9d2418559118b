//! CSR numbers a kernel reads with the `CSR` op. The CTA block (`0xCD0..=0xCE1`) follows
//! seed 002 §7; lane/warp/core ids and the kargs pointer follow Vortex's machine CSRs.
//! All CSRs are read-only to kernels.

/// Lane index within the warp.
pub const LANE_ID: u32 = 0xCC0;
/// Warp slot index within the core.
pub const WARP_ID: u32 = 0xCC1;
/// Core index within the device.
pub const CORE_ID: u32 = 0xCC2;
/// Lanes per warp (the device's NUM_THREADS).
pub const NUM_THREADS: u32 = 0xFC0;
/// Warp slots per core.
pub const NUM_WARPS: u32 = 0xFC1;
/// Cores in the device.
pub const NUM_CORES: u32 = 0xFC2;

/// Local dispatcher slot the CTA landed in (not a global identity).
pub const CTA_ID: u32 = 0xCD0;
/// This warp's index within its CTA.
pub const CTA_RANK: u32 = 0xCD1;
/// Warps in this CTA.
pub const CTA_SIZE: u32 = 0xCD2;
/// Per-lane thread index within the CTA.
pub const CTA_THREAD_ID_X: u32 = 0xCD3;
pub const CTA_THREAD_ID_Y: u32 = 0xCD4;
pub const CTA_THREAD_ID_Z: u32 = 0xCD5;
/// CTA index within the grid.
pub const CTA_BLOCK_ID_X: u32 = 0xCD6;
pub const CTA_BLOCK_ID_Y: u32 = 0xCD7;
pub const CTA_BLOCK_ID_Z: u32 = 0xCD8;
/// CTA dimensions in threads.
pub const CTA_BLOCK_DIM_X: u32 = 0xCD9;
pub const CTA_BLOCK_DIM_Y: u32 = 0xCDA;
pub const CTA_BLOCK_DIM_Z: u32 = 0xCDB;
/// Grid dimensions in CTAs.
pub const CTA_GRID_DIM_X: u32 = 0xCDC;
pub const CTA_GRID_DIM_Y: u32 = 0xCDD;
pub const CTA_GRID_DIM_Z: u32 = 0xCDE;
/// Base of this CTA's LMEM window (byte offset into the core's local memory).
pub const CTA_LMEM_ADDR: u32 = 0xCDF;
/// CTAs per cluster.
pub const CTA_CLUSTER_SIZE: u32 = 0xCE0;
/// Kernel entry (instruction index).
pub const CTA_ENTRY: u32 = 0xCE1;
/// Kernel-argument block address, low/high word (the KMU's PARAM).
pub const PARAM_LO: u32 = 0xCE4;
pub const PARAM_HI: u32 = 0xCE5;

/// The CSRs whose value differs between the lanes of a warp.
pub const PER_LANE: [u32; 4] = [LANE_ID, CTA_THREAD_ID_X, CTA_THREAD_ID_Y, CTA_THREAD_ID_Z];

/// The other CSRs of this block: one value for every lane of a warp. All of them, and the
/// per-lane ones, are fixed for a warp's life (the graphics stages' CSRs, `abi::gfx::csr`,
/// are not among them).
pub const WARP_UNIFORM: [u32; 22] = [
    WARP_ID,
    CORE_ID,
    NUM_THREADS,
    NUM_WARPS,
    NUM_CORES,
    CTA_ID,
    CTA_RANK,
    CTA_SIZE,
    CTA_BLOCK_ID_X,
    CTA_BLOCK_ID_Y,
    CTA_BLOCK_ID_Z,
    CTA_BLOCK_DIM_X,
    CTA_BLOCK_DIM_Y,
    CTA_BLOCK_DIM_Z,
    CTA_GRID_DIM_X,
    CTA_GRID_DIM_Y,
    CTA_GRID_DIM_Z,
    CTA_LMEM_ADDR,
    CTA_CLUSTER_SIZE,
    CTA_ENTRY,
    PARAM_LO,
    PARAM_HI,
];

/// Name for the disassembler.
pub fn name(csr: u32) -> Option<&'static str> {
    Some(match csr {
        LANE_ID => "lane_id",
        WARP_ID => "warp_id",
        CORE_ID => "core_id",
        NUM_THREADS => "num_threads",
        NUM_WARPS => "num_warps",
        NUM_CORES => "num_cores",
        CTA_ID => "cta_id",
        CTA_RANK => "cta_rank",
        CTA_SIZE => "cta_size",
        CTA_THREAD_ID_X => "cta_tid.x",
        CTA_THREAD_ID_Y => "cta_tid.y",
        CTA_THREAD_ID_Z => "cta_tid.z",
        CTA_BLOCK_ID_X => "cta_bid.x",
        CTA_BLOCK_ID_Y => "cta_bid.y",
        CTA_BLOCK_ID_Z => "cta_bid.z",
        CTA_BLOCK_DIM_X => "cta_bdim.x",
        CTA_BLOCK_DIM_Y => "cta_bdim.y",
        CTA_BLOCK_DIM_Z => "cta_bdim.z",
        CTA_GRID_DIM_X => "cta_gdim.x",
        CTA_GRID_DIM_Y => "cta_gdim.y",
        CTA_GRID_DIM_Z => "cta_gdim.z",
        CTA_LMEM_ADDR => "cta_lmem",
        CTA_CLUSTER_SIZE => "cta_cluster_size",
        CTA_ENTRY => "cta_entry",
        PARAM_LO => "param.lo",
        PARAM_HI => "param.hi",
        _ => return super::gfx::csr::name(csr),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every CSR of this block is either per lane or warp-uniform, never both: the lists
    /// are what the interpreter and the JIT read the CSRs by.
    #[test]
    fn every_csr_is_per_lane_or_warp_uniform() {
        let named: Vec<u32> =
            (0..0x1000).filter(|&c| name(c).is_some() && super::super::gfx::csr::name(c).is_none()).collect();
        let mut listed: Vec<u32> = PER_LANE.iter().chain(&WARP_UNIFORM).copied().collect();
        listed.sort_unstable();
        let len = listed.len();
        listed.dedup();
        assert_eq!(listed.len(), len, "a CSR in both lists");
        assert_eq!(listed, named);
    }
}
