//! The DCR file: the device's configuration registers, written by the host's command
//! processor one register at a time, and latched by the KMU and RTU at start.

use crate::abi::dcr::*;

/// The DCR file.
#[derive(Clone)]
pub struct DcrFile {
    regs: Vec<u32>,
}

impl Default for DcrFile {
    fn default() -> Self {
        let mut regs = vec![0; DCR_COUNT as usize];
        // The KMU resets cluster dims to (1,1,1) so a host that never writes them gets the
        // plain row-major walk.
        for a in [KMU_CLUSTER_DIM_X, KMU_CLUSTER_DIM_Y, KMU_CLUSTER_DIM_Z] {
            regs[a as usize] = 1;
        }
        DcrFile { regs }
    }
}

impl DcrFile {
    /// Writes a DCR. Addresses outside the file are refused.
    pub fn write(&mut self, addr: u32, value: u32) -> Result<(), String> {
        match self.regs.get_mut(addr as usize) {
            Some(r) => {
                *r = value;
                Ok(())
            }
            None => Err(format!("DCR write to {addr:#x} outside the DCR file")),
        }
    }

    pub fn read(&self, addr: u32) -> u32 {
        self.regs.get(addr as usize).copied().unwrap_or(0)
    }

    fn pair(&self, lo: u32, hi: u32) -> u64 {
        self.read(lo) as u64 | (self.read(hi) as u64) << 32
    }

    /// The KMU's view of the launch, latched at start.
    pub fn launch(&self) -> LaunchState {
        LaunchState {
            pc: self.pair(KMU_PC_LO, KMU_PC_HI),
            entry: self.pair(KMU_ENTRY_LO, KMU_ENTRY_HI),
            param: self.pair(KMU_PARAM_LO, KMU_PARAM_HI),
            grid_dim: [self.read(KMU_GRID_DIM_X), self.read(KMU_GRID_DIM_Y), self.read(KMU_GRID_DIM_Z)],
            block_dim: [self.read(KMU_BLOCK_DIM_X), self.read(KMU_BLOCK_DIM_Y), self.read(KMU_BLOCK_DIM_Z)],
            block_size: self.read(KMU_BLOCK_SIZE),
            lmem_size: self.read(KMU_LMEM_SIZE),
            warp_step: [self.read(KMU_WARP_STEP_X), self.read(KMU_WARP_STEP_Y), self.read(KMU_WARP_STEP_Z)],
            cluster_dim: [self.read(KMU_CLUSTER_DIM_X), self.read(KMU_CLUSTER_DIM_Y), self.read(KMU_CLUSTER_DIM_Z)],
        }
    }

    /// The draw the graphics DCRs program, latched at `GFX_START`.
    pub fn draw(&self) -> DrawRegs {
        use crate::abi::gfx::dcr::*;
        DrawRegs {
            vs_pc: self.pair(GFX_VS_PC_LO, GFX_VS_PC_HI),
            fs_pc: self.pair(GFX_FS_PC_LO, GFX_FS_PC_HI),
            param: self.pair(GFX_PARAM_LO, GFX_PARAM_HI),
            state: self.pair(GFX_STATE_LO, GFX_STATE_HI),
            vob: self.pair(GFX_VOB_LO, GFX_VOB_HI),
            vertex_count: self.read(GFX_VERTEX_COUNT),
            instance_count: self.read(GFX_INSTANCE_COUNT),
            vertex_base: self.read(GFX_VERTEX_BASE),
            first_instance: self.read(GFX_FIRST_INSTANCE),
            index: self.pair(GFX_INDEX_LO, GFX_INDEX_HI),
            index_type: self.read(GFX_INDEX_TYPE),
            draw_index: self.read(GFX_DRAW_INDEX),
        }
    }

    /// The RTU's per-dispatch configuration.
    pub fn rtu(&self) -> RtuState {
        let cfg = self.read(RTU_CONFIG);
        RtuState {
            scene_kind: cfg & 0xF,
            bvh_width: (cfg >> 4) & 0xF,
            cull_defaults: (cfg >> 8) & 0xFF,
            sbt_dispatch: cfg & RTU_CONFIG_SBT_DISPATCH != 0,
            tlas_root: self.pair(RTU_TLAS_ROOT_LO, RTU_TLAS_ROOT_HI),
        }
    }
}

/// KMU launch state (seed 002 §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchState {
    pub pc: u64,
    pub entry: u64,
    pub param: u64,
    pub grid_dim: [u32; 3],
    pub block_dim: [u32; 3],
    pub block_size: u32,
    pub lmem_size: u32,
    pub warp_step: [u32; 3],
    pub cluster_dim: [u32; 3],
}

impl LaunchState {
    /// An empty grid launches nothing (and must not walk forever).
    pub fn grid_nonempty(&self) -> bool {
        self.grid_dim.iter().all(|&d| d != 0)
    }

    pub fn cluster_size(&self) -> u32 {
        self.cluster_dim.iter().map(|&d| d.max(1)).product()
    }

    pub fn num_ctas(&self) -> u64 {
        self.grid_dim.iter().map(|&d| d as u64).product()
    }
}

/// A draw as the graphics DCRs program it (`abi::gfx::dcr`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawRegs {
    pub vs_pc: u64,
    /// 0: no fragment kernel.
    pub fs_pc: u64,
    pub param: u64,
    pub state: u64,
    pub vob: u64,
    pub vertex_count: u32,
    pub instance_count: u32,
    pub vertex_base: u32,
    pub first_instance: u32,
    /// 0: not indexed.
    pub index: u64,
    pub index_type: u32,
    pub draw_index: u32,
}

impl DrawRegs {
    /// Vertex-output slots the draw fills (one per vertex position and instance).
    pub fn slots(&self) -> u64 {
        self.vertex_count as u64 * self.instance_count as u64
    }
}

/// RTU per-dispatch configuration (seed 000 §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtuState {
    pub scene_kind: u32,
    pub bvh_width: u32,
    pub cull_defaults: u32,
    /// Candidates select their shader by SBT record (`RTU_CONFIG_SBT_DISPATCH`).
    pub sbt_dispatch: bool,
    pub tlas_root: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_dims_reset_to_one_and_pairs_join() {
        let mut d = DcrFile::default();
        assert_eq!(d.launch().cluster_dim, [1, 1, 1]);
        d.write(KMU_PC_LO, 0x1000).unwrap();
        d.write(KMU_PC_HI, 0x2).unwrap();
        assert_eq!(d.launch().pc, 0x2_0000_1000);
        assert!(d.write(DCR_COUNT, 0).is_err());
        d.write(RTU_CONFIG, rtu_config(RTU_SCENE_CWBVH, 6, 0, false)).unwrap();
        assert_eq!(d.rtu().bvh_width, 6);
        assert!(!d.rtu().sbt_dispatch);
        d.write(RTU_CONFIG, rtu_config(RTU_SCENE_CWBVH, 6, 0, true)).unwrap();
        assert!(d.rtu().sbt_dispatch);
        assert_eq!(d.rtu().bvh_width, 6);
    }
}
