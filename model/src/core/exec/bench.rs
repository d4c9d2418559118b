//! A test bench for single instructions: a default device's units, an empty memory map, a
//! default launch and CTA, and the [`ExecEnv`] of warp 0 of core 0 over them.

use super::{CoreUnits, ExecEnv};
use crate::config::DeviceConfig;
use crate::core::CtaCtx;
use crate::dcr::LaunchState;
use crate::mem::MemoryMap;
use std::sync::Arc;

pub(crate) struct Bench {
    pub mem: Arc<MemoryMap>,
    pub launch: LaunchState,
    pub cta: CtaCtx,
    pub lmem: Vec<u8>,
    pub units: CoreUnits,
}

impl Bench {
    /// Over `mem` (an address space's snapshot), with `lmem_bytes` of local memory.
    pub fn new(mem: Arc<MemoryMap>, lmem_bytes: usize) -> Bench {
        Bench {
            mem,
            launch: crate::dcr::DcrFile::default().launch(),
            cta: CtaCtx::default(),
            lmem: vec![0; lmem_bytes],
            units: CoreUnits::new(&DeviceConfig::default()),
        }
    }

    /// Over an empty address space.
    pub fn empty(lmem_bytes: usize) -> Bench {
        Bench::new(crate::mem::AddressSpace::new().snapshot(), lmem_bytes)
    }

    /// Warp 0 of core 0, alone on its core, `nt` lanes wide.
    pub fn env(&mut self, nt: usize) -> ExecEnv<'_> {
        ExecEnv {
            mem: &self.mem,
            launch: &self.launch,
            cta: &self.cta,
            lmem: &mut self.lmem,
            units: &mut self.units,
            core_id: 0,
            warp_id: 0,
            num_warps: 1,
            num_cores: 1,
            nt,
            gfx: None,
            hot: [None; 2],
        }
    }
}
