//! DCR address map. The host programs a launch by writing these registers in order and then
//! pulsing [`START`]; the KMU latches them at start and never reads them back.
//!
//! KMU launch state occupies `0x010..=0x023` (seed 002 §2.1); RTU per-dispatch configuration
//! occupies `0x0A0..=0x0A6` (seed 000 §3.1). The grid base offset of `vkCmdDispatchBase` is
//! not a DCR: it rides in the kernel-argument block (see [`super::kernel::kargs`]), because
//! the KMU's walk always starts at block 0.

/// Program image address (the kernel header), low/high word.
pub const KMU_PC_LO: u32 = 0x010;
pub const KMU_PC_HI: u32 = 0x011;
/// Kernel entry: instruction index inside the image.
pub const KMU_ENTRY_LO: u32 = 0x012;
pub const KMU_ENTRY_HI: u32 = 0x013;
/// Kernel-argument block address (`CSR_PARAM_*` in the kernel).
pub const KMU_PARAM_LO: u32 = 0x014;
pub const KMU_PARAM_HI: u32 = 0x015;
/// Grid dimensions in CTAs.
pub const KMU_GRID_DIM_X: u32 = 0x016;
pub const KMU_GRID_DIM_Y: u32 = 0x017;
pub const KMU_GRID_DIM_Z: u32 = 0x018;
/// CTA (workgroup) dimensions in threads.
pub const KMU_BLOCK_DIM_X: u32 = 0x019;
pub const KMU_BLOCK_DIM_Y: u32 = 0x01A;
pub const KMU_BLOCK_DIM_Z: u32 = 0x01B;
/// Threads per CTA: the product of the block dimensions, computed by the host.
pub const KMU_BLOCK_SIZE: u32 = 0x01C;
/// LMEM bytes per CTA (unrounded; the KMU rounds to [`LMEM_BLOCK`]).
pub const KMU_LMEM_SIZE: u32 = 0x01D;
/// Per-warp thread-index step (host-computed, seed 002 §2.1).
pub const KMU_WARP_STEP_X: u32 = 0x01E;
pub const KMU_WARP_STEP_Y: u32 = 0x01F;
pub const KMU_WARP_STEP_Z: u32 = 0x020;
/// Cluster dimensions in CTAs; a cluster's CTAs are consecutive and land on one core.
pub const KMU_CLUSTER_DIM_X: u32 = 0x021;
pub const KMU_CLUSTER_DIM_Y: u32 = 0x022;
pub const KMU_CLUSTER_DIM_Z: u32 = 0x023;

pub const KMU_STATE_BEGIN: u32 = 0x010;
pub const KMU_STATE_END: u32 = 0x023;

/// RTU configuration: `scene_kind[3:0] | bvh_width[7:4] | cull_defaults[15:8] |
/// sbt_dispatch[16]`.
pub const RTU_CONFIG: u32 = 0x0A0;
/// Resident TLAS root (informational: each TRACE carries its own AS address).
pub const RTU_TLAS_ROOT_LO: u32 = 0x0A1;
pub const RTU_TLAS_ROOT_HI: u32 = 0x0A2;
/// Callback-dispatcher entry (trap-path builds only; unused by the ray-query path).
pub const RTU_CB_ENTRY_LO: u32 = 0x0A3;
pub const RTU_CB_ENTRY_HI: u32 = 0x0A4;
/// Reformation batching threshold.
pub const RTU_REFORM_THRESH: u32 = 0x0A5;
/// Writing any value resets the RTU performance counters.
pub const RTU_STATS_RESET: u32 = 0x0A6;

pub const RTU_STATE_BEGIN: u32 = 0x0A0;
pub const RTU_STATE_END: u32 = 0x0A7;

/// Scene kinds for `RTU_CONFIG[3:0]`.
pub const RTU_SCENE_FLAT: u32 = 0;
pub const RTU_SCENE_CWBVH: u32 = 1;

/// `RTU_CONFIG[16]`: the dispatch's candidates select their shader by SBT record (a
/// `vkCmdTraceRays*` kernel's dispatcher), so the commit engine may group a candidate batch by
/// SBT key when the machine has `rtu.reform_sbt` (ray-query kernels have no SBT dispatch and
/// never set it).
pub const RTU_CONFIG_SBT_DISPATCH: u32 = 1 << 16;

/// Packs `RTU_CONFIG`.
pub const fn rtu_config(scene_kind: u32, bvh_width: u32, cull_defaults: u32, sbt_dispatch: bool) -> u32 {
    let sbt = if sbt_dispatch { RTU_CONFIG_SBT_DISPATCH } else { 0 };
    (scene_kind & 0xF) | ((bvh_width & 0xF) << 4) | ((cull_defaults & 0xFF) << 8) | sbt
}

/// Size of the DCR file (addresses `0..DCR_COUNT`).
pub const DCR_COUNT: u32 = 0x100;

/// LMEM allocation granule: per-CTA LMEM sizes are rounded up to this.
pub const LMEM_BLOCK: u32 = 64;

/// Rounds a per-CTA LMEM size to the allocator's stride.
pub const fn aligned_lmem_size(bytes: u32) -> u32 {
    bytes.div_ceil(LMEM_BLOCK) * LMEM_BLOCK
}

/// Host-side WARP_STEP computation (seed 002 §2.1): the per-warp thread-index delta, so the
/// dispatcher advances thread indices with adds instead of a divider.
pub fn warp_step(num_threads: u32, block: [u32; 3]) -> [u32; 3] {
    let bx = block[0].max(1);
    let by = block[1].max(1);
    let bz = block[2].max(1);
    [num_threads % bx, (num_threads / bx) % by, (num_threads / (bx * by)) % bz]
}

/// What the host programs for one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Kernel image address.
    pub pc: u64,
    /// Kernel-argument block address.
    pub param: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// LMEM bytes per CTA.
    pub lmem_bytes: u32,
    pub cluster: [u32; 3],
}

impl Launch {
    /// The KMU DCR writes of this launch, in address order (the start pulse follows them),
    /// with the host-computed fields (block size, warp step) filled in for a device of
    /// `num_threads` lanes per warp.
    pub fn kmu_writes(&self, num_threads: u32) -> [(u32, u32); 20] {
        let step = warp_step(num_threads, self.block);
        [
            (KMU_PC_LO, self.pc as u32),
            (KMU_PC_HI, (self.pc >> 32) as u32),
            (KMU_ENTRY_LO, 0),
            (KMU_ENTRY_HI, 0),
            (KMU_PARAM_LO, self.param as u32),
            (KMU_PARAM_HI, (self.param >> 32) as u32),
            (KMU_GRID_DIM_X, self.grid[0]),
            (KMU_GRID_DIM_Y, self.grid[1]),
            (KMU_GRID_DIM_Z, self.grid[2]),
            (KMU_BLOCK_DIM_X, self.block[0]),
            (KMU_BLOCK_DIM_Y, self.block[1]),
            (KMU_BLOCK_DIM_Z, self.block[2]),
            (KMU_BLOCK_SIZE, self.block.iter().product()),
            (KMU_LMEM_SIZE, self.lmem_bytes),
            (KMU_WARP_STEP_X, step[0]),
            (KMU_WARP_STEP_Y, step[1]),
            (KMU_WARP_STEP_Z, step[2]),
            (KMU_CLUSTER_DIM_X, self.cluster[0]),
            (KMU_CLUSTER_DIM_Y, self.cluster[1]),
            (KMU_CLUSTER_DIM_Z, self.cluster[2]),
        ]
    }
}

/// Human-readable DCR name for logs and stream dumps.
pub fn name(addr: u32) -> &'static str {
    match addr {
        KMU_PC_LO => "KMU_PC_LO",
        KMU_PC_HI => "KMU_PC_HI",
        KMU_ENTRY_LO => "KMU_ENTRY_LO",
        KMU_ENTRY_HI => "KMU_ENTRY_HI",
        KMU_PARAM_LO => "KMU_PARAM_LO",
        KMU_PARAM_HI => "KMU_PARAM_HI",
        KMU_GRID_DIM_X => "KMU_GRID_DIM_X",
        KMU_GRID_DIM_Y => "KMU_GRID_DIM_Y",
        KMU_GRID_DIM_Z => "KMU_GRID_DIM_Z",
        KMU_BLOCK_DIM_X => "KMU_BLOCK_DIM_X",
        KMU_BLOCK_DIM_Y => "KMU_BLOCK_DIM_Y",
        KMU_BLOCK_DIM_Z => "KMU_BLOCK_DIM_Z",
        KMU_BLOCK_SIZE => "KMU_BLOCK_SIZE",
        KMU_LMEM_SIZE => "KMU_LMEM_SIZE",
        KMU_WARP_STEP_X => "KMU_WARP_STEP_X",
        KMU_WARP_STEP_Y => "KMU_WARP_STEP_Y",
        KMU_WARP_STEP_Z => "KMU_WARP_STEP_Z",
        KMU_CLUSTER_DIM_X => "KMU_CLUSTER_DIM_X",
        KMU_CLUSTER_DIM_Y => "KMU_CLUSTER_DIM_Y",
        KMU_CLUSTER_DIM_Z => "KMU_CLUSTER_DIM_Z",
        RTU_CONFIG => "RTU_CONFIG",
        RTU_TLAS_ROOT_LO => "RTU_TLAS_ROOT_LO",
        RTU_TLAS_ROOT_HI => "RTU_TLAS_ROOT_HI",
        RTU_CB_ENTRY_LO => "RTU_CB_ENTRY_LO",
        RTU_CB_ENTRY_HI => "RTU_CB_ENTRY_HI",
        RTU_REFORM_THRESH => "RTU_REFORM_THRESH",
        RTU_STATS_RESET => "RTU_STATS_RESET",
        _ => super::gfx::dcr::name(addr).unwrap_or("DCR_UNKNOWN"),
    }
}

#[cfg(test)]
#[allow(clippy::assertions_on_constants)] // layout invariants read best as plain asserts
mod tests {
    use super::*;

    #[test]
    fn kmu_block_is_contiguous_and_named() {
        for a in KMU_STATE_BEGIN..=KMU_STATE_END {
            assert_ne!(name(a), "DCR_UNKNOWN", "KMU DCR {a:#x} has no name");
        }
        for a in RTU_STATE_BEGIN..RTU_STATE_END {
            assert_ne!(name(a), "DCR_UNKNOWN", "RTU DCR {a:#x} has no name");
        }
        assert!(RTU_STATE_END < DCR_COUNT);
    }

    #[test]
    fn warp_step_matches_seed_formula() {
        // 32 lanes over an 8x8 block: a warp covers 4 rows.
        assert_eq!(warp_step(32, [8, 8, 1]), [0, 4, 0]);
        // 32 lanes over a 64-wide row: x advances by 32.
        assert_eq!(warp_step(32, [64, 1, 1]), [32, 0, 0]);
        assert_eq!(warp_step(4, [1, 1, 1]), [0, 0, 0]);
    }

    #[test]
    fn launch_writes_cover_the_kmu_block_in_order() {
        let l = Launch {
            pc: 0x1_0000_0040,
            param: 0x2_0000_0000,
            grid: [3, 2, 1],
            block: [8, 8, 1],
            lmem_bytes: 256,
            cluster: [1, 1, 1],
        };
        let w = l.kmu_writes(32);
        let addrs: Vec<u32> = w.iter().map(|x| x.0).collect();
        assert_eq!(addrs, (KMU_STATE_BEGIN..=KMU_STATE_END).collect::<Vec<_>>());
        assert_eq!(w[0], (KMU_PC_LO, 0x40));
        assert_eq!(w[1], (KMU_PC_HI, 1));
        assert_eq!(w[12], (KMU_BLOCK_SIZE, 64));
        assert_eq!([w[14].1, w[15].1, w[16].1], warp_step(32, [8, 8, 1]));
    }

    #[test]
    fn rtu_config_packs_fields() {
        let v = rtu_config(RTU_SCENE_CWBVH, 4, 0x30, false);
        assert_eq!(v & 0xF, 1);
        assert_eq!((v >> 4) & 0xF, 4);
        assert_eq!((v >> 8) & 0xFF, 0x30);
        assert_eq!(v & RTU_CONFIG_SBT_DISPATCH, 0);
        let t = rtu_config(RTU_SCENE_CWBVH, 4, 0x30, true);
        assert_eq!(t, v | RTU_CONFIG_SBT_DISPATCH, "the SBT bit leaves the other fields alone");
        assert_eq!(RTU_CONFIG_SBT_DISPATCH & 0xFFFF, 0, "above cull_defaults");
        assert_eq!(aligned_lmem_size(1), 64);
        assert_eq!(aligned_lmem_size(0), 0);
        assert_eq!(aligned_lmem_size(128), 128);
    }
}
