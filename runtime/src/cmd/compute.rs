//! Dispatches: `vkCmdDispatch`, `vkCmdDispatchBase`, `vkCmdDispatchIndirect`.
//!
//! A dispatch is its kernel-argument block (base group, group counts, descriptor-set
//! addresses, dynamic offsets, push constants; `model::abi::kernel::kargs`), placed in
//! device memory owned by the recording, then the DCR writes of `DCR.md` (KMU launch state,
//! RTU configuration) and the start pulse. An indirect dispatch leaves the grid DCRs and the
//! block's group counts to the command processor, which reads them when it gets there.

use super::bind::BindState;
use super::{CommandBuffer, Inner};
use crate::buffer::Buffer;
use crate::device::Device;
use crate::pipeline::{BindPoint, Pipeline};
use crate::stream::StreamOp;
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::abi::dcr;
use vortex_model::abi::kernel::kargs;

impl CommandBuffer {
    pub fn dispatch(&self, base: [u32; 3], count: [u32; 3]) {
        self.record("vkCmdDispatch", |i, d| launch(i, d, base, Some(count), 0));
    }

    /// Reads the group counts at `offset` in `buffer` when the queue reaches the dispatch.
    pub fn dispatch_indirect(&self, buffer: &Arc<Buffer>, offset: u64) {
        self.record("vkCmdDispatchIndirect", |i, d| {
            launch(i, d, [0; 3], None, buffer.address_at(offset)?)?;
            i.keep(buffer.clone());
            Ok(())
        });
    }
}

/// Records one launch of the bound compute pipeline; `count` None is an indirect dispatch
/// whose group counts are at `indirect`.
fn launch(i: &mut Inner, dev: &Device, base: [u32; 3], count: Option<[u32; 3]>, indirect: u64) -> VkResult<()> {
    let state = i.bound.at(BindPoint::Compute);
    let Some(p) = state.pipeline.clone() else {
        tracing::error!("dispatch with no compute pipeline bound");
        return Err(vk::Result::ERROR_UNKNOWN);
    };
    let Some(c) = p.as_compute() else {
        tracing::error!("dispatch with pipeline '{}' bound, which is not a compute pipeline", p.name);
        return Err(vk::Result::ERROR_UNKNOWN);
    };
    let block = kargs_block(state, &i.push, &p, base, count.unwrap_or([0; 3]));
    let ka = i.stash(dev, &block)?;
    let launch = dcr::Launch {
        pc: c.kernel_address(),
        param: ka,
        grid: count.unwrap_or([0; 3]),
        block: c.local_size,
        lmem_bytes: c.lmem_bytes,
        cluster: [1, 1, 1],
    };
    i.rec.ops.extend(launch_dcrs(dev, &launch, count.is_none(), false));
    let kernel: Arc<str> = p.name.as_str().into();
    i.emit(match count {
        Some(_) => StreamOp::Start { kernel },
        None => StreamOp::DispatchIndirect { src: indirect, kargs: ka, kernel },
    });
    let sets: Vec<_> = i.bound.at(BindPoint::Compute).sets.iter().flatten().cloned().collect();
    i.keep(p);
    for s in sets {
        i.keep(s);
    }
    Ok(())
}

/// The kernel-argument block of a launch of `p` with the bind point's sets and `push` (a
/// draw's has no groups).
pub(super) fn kargs_block(state: &BindState, push: &[u8], p: &Pipeline, base: [u32; 3], count: [u32; 3]) -> Vec<u8> {
    let mut k = vec![0u8; kargs::BYTES];
    for a in 0..3 {
        k[kargs::BASE_GROUP + 4 * a..][..4].copy_from_slice(&base[a].to_le_bytes());
        k[kargs::NUM_GROUPS + 4 * a..][..4].copy_from_slice(&count[a].to_le_bytes());
    }
    for (s, set) in state.sets.iter().enumerate() {
        if let Some(set) = set {
            k[kargs::SET_ADDR + 8 * s..][..8].copy_from_slice(&set.address().to_le_bytes());
            let dbase = p.layout.dynamic_base.get(s).copied().unwrap_or(0) as usize;
            for (j, off) in state.dynamic[s].iter().enumerate() {
                let idx = dbase + j;
                if idx < kargs::MAX_DYNAMIC {
                    k[kargs::DYN_OFFSETS + 4 * idx..][..4].copy_from_slice(&off.to_le_bytes());
                }
            }
        }
    }
    k[kargs::PUSH..kargs::PUSH + kargs::PUSH_BYTES].copy_from_slice(push);
    k
}

/// The DCR writes of one dispatch: the KMU launch state, then the RTU configuration
/// (`sbt_dispatch`: a trace-rays kernel, whose candidates select their shader by SBT record).
/// For an indirect dispatch the grid DCRs are left for the command processor, which writes
/// them when it reads the group counts.
pub fn launch_dcrs(device: &Device, launch: &dcr::Launch, indirect: bool, sbt_dispatch: bool) -> Vec<StreamOp> {
    let grid = [dcr::KMU_GRID_DIM_X, dcr::KMU_GRID_DIM_Y, dcr::KMU_GRID_DIM_Z];
    launch
        .kmu_writes(device.config.num_threads)
        .into_iter()
        .filter(|(a, _)| !(indirect && grid.contains(a)))
        .map(|(addr, value)| StreamOp::Dcr { addr, value })
        .chain(rtu_dcrs(device, sbt_dispatch))
        .collect()
}

/// The RTU configuration of a dispatch or draw (the kernels may trace).
pub(super) fn rtu_dcrs(device: &Device, sbt_dispatch: bool) -> [StreamOp; 2] {
    let rtu = dcr::rtu_config(dcr::RTU_SCENE_CWBVH, device.config.rtu.bvh_width, 0, sbt_dispatch);
    [StreamOp::Dcr { addr: dcr::RTU_CONFIG, value: rtu }, StreamOp::Dcr { addr: dcr::RTU_STATS_RESET, value: 1 }]
}
