//! Trace rays: `vkCmdTraceRaysKHR`, `vkCmdTraceRaysIndirectKHR`,
//! `vkCmdTraceRaysIndirect2KHR` (`docs/RTPIPELINE.md`).
//!
//! A trace is a dispatch of the bound ray-tracing pipeline's kernel over the launch size in
//! CTAs of `kargs::LAUNCH_BLOCK`, with a kernel-argument block of `kargs::RT_BYTES`: the
//! compute block's sets, dynamic offsets and push constants, the launch size, and the four
//! shader binding table regions the kernel's dispatcher reads its records from.

use super::compute::{kargs_block, launch_dcrs};
use super::{CommandBuffer, Inner};
use crate::device::Device;
use crate::pipeline::raytracing::{Kernel, RayTracing};
use crate::pipeline::BindPoint;
use crate::stream::StreamOp;
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::abi::dcr;
use vortex_model::abi::kernel::kargs;

/// A shader binding table region (`VkStridedDeviceAddressRegionKHR`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SbtRegion {
    pub address: u64,
    pub stride: u64,
    pub size: u64,
}

/// The regions of one trace, in `kargs::sbt` order: ray generation, miss, hit, callable.
pub type SbtRegions = [SbtRegion; 4];

/// Where a trace's launch size comes from.
#[derive(Clone, Copy, Debug)]
enum LaunchSize {
    Direct([u32; 3]),
    /// A `VkTraceRaysIndirectCommandKHR` at this address, read when the queue gets there.
    Indirect(u64),
    /// A `VkTraceRaysIndirectCommand2KHR` (regions, then the size) at this address, read
    /// when the queue gets there.
    Indirect2(u64),
}

/// `VkTraceRaysIndirectCommand2KHR`: the ray-generation record (address, size), then the
/// miss, hit and callable regions (address, size, stride: u64 each), then the launch size
/// (u32 x3).
pub mod indirect2 {
    pub const RAYGEN: u64 = 0;
    pub const MISS: u64 = 16;
    pub const HIT: u64 = 40;
    pub const CALLABLE: u64 = 64;
    pub const SIZE: u64 = 88;
}

impl CommandBuffer {
    pub fn trace_rays(&self, sbt: SbtRegions, size: [u32; 3]) {
        self.record("vkCmdTraceRaysKHR", |i, d| launch(i, d, &sbt, LaunchSize::Direct(size)));
    }

    /// `vkCmdTraceRaysIndirectKHR` (`sbt` given) and `vkCmdTraceRaysIndirect2KHR` (`None`:
    /// the regions are read from the command too, when the queue gets there).
    pub fn trace_rays_indirect(&self, sbt: Option<SbtRegions>, address: u64) {
        self.record("vkCmdTraceRaysIndirectKHR", |i, d| match sbt {
            Some(sbt) => launch(i, d, &sbt, LaunchSize::Indirect(address)),
            None => launch(i, d, &[SbtRegion::default(); 4], LaunchSize::Indirect2(address)),
        });
    }
}

/// Records one trace of the bound ray-tracing pipeline.
fn launch(i: &mut Inner, dev: &Device, sbt: &SbtRegions, size: LaunchSize) -> VkResult<()> {
    let state = i.bound.at(BindPoint::RayTracing);
    let Some(p) = state.pipeline.clone() else {
        tracing::error!("trace rays with no ray-tracing pipeline bound");
        return Err(vk::Result::ERROR_UNKNOWN);
    };
    let Some(rt) = p.as_ray_tracing() else {
        tracing::error!("trace rays with pipeline '{}' bound, which is not a ray-tracing pipeline", p.name);
        return Err(vk::Result::ERROR_UNKNOWN);
    };
    let (kernel, select) = raygen(rt, &sbt[kargs::sbt::RAYGEN], size)?;
    let (pc, lmem_bytes) = (kernel.address(), kernel.lmem_bytes);
    let mut block = kargs_block(state, &i.push, &p, [0; 3], [0; 3]);
    let sets: Vec<_> = state.sets.iter().flatten().cloned().collect();
    block.resize(kargs::RT_BYTES, 0);
    for (r, region) in sbt.iter().enumerate() {
        let at = kargs::SBT + r * kargs::SBT_REGION_BYTES;
        block[at + kargs::sbt::ADDRESS..][..8].copy_from_slice(&region.address.to_le_bytes());
        block[at + kargs::sbt::STRIDE..][..8].copy_from_slice(&region.stride.to_le_bytes());
        block[at + kargs::sbt::SIZE..][..8].copy_from_slice(&region.size.to_le_bytes());
    }
    let direct = match size {
        LaunchSize::Direct(s) => Some(s),
        LaunchSize::Indirect(_) | LaunchSize::Indirect2(_) => None,
    };
    let launch_size = direct.unwrap_or([0; 3]);
    for (k, v) in launch_size.iter().enumerate() {
        block[kargs::LAUNCH_SIZE + 4 * k..][..4].copy_from_slice(&v.to_le_bytes());
    }
    let ka = i.stash(dev, &block)?;
    let launch = dcr::Launch {
        pc,
        param: ka,
        grid: grid(launch_size),
        block: kargs::LAUNCH_BLOCK,
        lmem_bytes,
        cluster: [1, 1, 1],
    };
    i.rec.ops.extend(launch_dcrs(dev, &launch, direct.is_none(), true));
    if let Some(select) = select {
        i.rec.ops.push(StreamOp::SelectRaygen(Box::new(select)));
    }
    let name: Arc<str> = p.name.as_str().into();
    i.emit(match size {
        LaunchSize::Direct(_) => StreamOp::Start { kernel: name },
        LaunchSize::Indirect(src) => StreamOp::TraceRaysIndirect { src, kargs: ka, kernel: name, regions: false },
        LaunchSize::Indirect2(src) => StreamOp::TraceRaysIndirect { src, kargs: ka, kernel: name, regions: true },
    });
    i.keep(p.clone());
    for s in sets {
        i.keep(s);
    }
    Ok(())
}

/// The CTAs that cover a launch of `size` rays.
pub fn grid(size: [u32; 3]) -> [u32; 3] {
    std::array::from_fn(|k| size[k].div_ceil(kargs::LAUNCH_BLOCK[k]))
}

/// The ray-generation kernel a trace runs: the pipeline's only one, or, with several, the
/// first as recorded and the choice the command processor makes when the trace executes
/// (the specification reads the shader binding table then).
fn raygen<'p>(
    rt: &'p RayTracing,
    region: &SbtRegion,
    size: LaunchSize,
) -> VkResult<(&'p Kernel, Option<RaygenSelect>)> {
    if let Some(k) = rt.sole_raygen() {
        return Ok((k, None));
    }
    let Some(first) = rt.raygen.iter().flatten().next() else {
        tracing::error!("trace rays: the pipeline has no ray-generation group");
        return Err(vk::Result::ERROR_UNKNOWN);
    };
    let (record, indirect2) = match size {
        LaunchSize::Indirect2(src) => (src + indirect2::RAYGEN, true),
        _ => (region.address, false),
    };
    let kernels = rt.raygen.iter().map(|k| k.as_ref().map(|k| (k.address(), k.lmem_bytes))).collect();
    Ok((first, Some(RaygenSelect { record, indirect2, id: rt.id, kernels })))
}

/// The ray-generation kernel of a trace, picked by the command processor when the trace
/// executes: the handle of the ray-generation record names a group (`group index + 1`,
/// then the pipeline's id: `pipeline::raytracing`), whose kernel's PC and LMEM size go into
/// the launch DCRs.
#[derive(Clone, Debug)]
pub struct RaygenSelect {
    /// The ray-generation record's address, or with `indirect2` where a
    /// `VkTraceRaysIndirectCommand2KHR` holds it.
    pub record: u64,
    pub indirect2: bool,
    /// The pipeline's id in its handles.
    pub id: u32,
    /// (PC, LMEM bytes) of each group's kernel, by group index.
    pub kernels: Vec<Option<(u64, u32)>>,
}

impl RaygenSelect {
    /// The DCR writes that point the launch at the kernel the record names. A record that
    /// names no ray-generation group of the pipeline (undefined behaviour) leaves the launch
    /// as recorded, with a log line.
    pub fn play(&self, m: &vortex_model::mem::MemoryMap) -> Result<Vec<(u32, u32)>, vortex_model::mem::MemFault> {
        let record = match self.indirect2 {
            true => m.read_u32(self.record)? as u64 | (m.read_u32(self.record + 4)? as u64) << 32,
            false => self.record,
        };
        let group = m.read_u32(record + kargs::sbt::HANDLE_GROUP as u64)?;
        let id = m.read_u32(record + kargs::sbt::HANDLE_GROUP as u64 + 4)?;
        let kernel = group.checked_sub(1).and_then(|g| self.kernels.get(g as usize)).copied().flatten();
        match kernel {
            Some((pc, lmem)) if id == self.id => {
                Ok(vec![(dcr::KMU_PC_LO, pc as u32), (dcr::KMU_PC_HI, (pc >> 32) as u32), (dcr::KMU_LMEM_SIZE, lmem)])
            }
            _ => {
                tracing::error!(
                    "trace rays: the ray-generation record at {record:#x} names no ray-generation group of the pipeline; \
                     the first one runs"
                );
                Ok(Vec::new())
            }
        }
    }
}

/// Plays an indirect trace: the launch size (and with `regions`, the SBT regions of a
/// `VkTraceRaysIndirectCommand2KHR`) from `src` into the kernel arguments at `ka`; returns
/// the grid of CTAs.
pub fn play_indirect(
    m: &vortex_model::mem::MemoryMap,
    src: u64,
    ka: u64,
    regions: bool,
) -> Result<[u32; 3], vortex_model::mem::MemFault> {
    let size_at = if regions { src + indirect2::SIZE } else { src };
    let size = [m.read_u32(size_at)?, m.read_u32(size_at + 4)?, m.read_u32(size_at + 8)?];
    for (k, v) in size.iter().enumerate() {
        m.write_u32(ka + (kargs::LAUNCH_SIZE + 4 * k) as u64, *v)?;
    }
    if regions {
        let u64_at = |a: u64| -> Result<u64, vortex_model::mem::MemFault> {
            Ok(m.read_u32(a)? as u64 | (m.read_u32(a + 4)? as u64) << 32)
        };
        // (region, address, size, stride) -- the ray-generation record's stride is its size.
        let raygen = indirect2::RAYGEN;
        let fields = [
            (kargs::sbt::RAYGEN, raygen, raygen + 8, raygen + 8),
            (kargs::sbt::MISS, indirect2::MISS, indirect2::MISS + 8, indirect2::MISS + 16),
            (kargs::sbt::HIT, indirect2::HIT, indirect2::HIT + 8, indirect2::HIT + 16),
            (kargs::sbt::CALLABLE, indirect2::CALLABLE, indirect2::CALLABLE + 8, indirect2::CALLABLE + 16),
        ];
        for (r, addr, size, stride) in fields {
            let at = ka + (kargs::SBT + r * kargs::SBT_REGION_BYTES) as u64;
            for (off, from) in [(kargs::sbt::ADDRESS, addr), (kargs::sbt::SIZE, size), (kargs::sbt::STRIDE, stride)] {
                let v = u64_at(src + from)?;
                m.write_u32(at + off as u64, v as u32)?;
                m.write_u32(at + off as u64 + 4, (v >> 32) as u32)?;
            }
        }
    }
    Ok(grid(size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use vortex_model::mem::AddressSpace;

    fn select(record: u64, indirect2: bool) -> RaygenSelect {
        RaygenSelect {
            record,
            indirect2,
            id: 0x1234,
            kernels: vec![Some((0x10_0000_0040, 64)), None, Some((0x2000, 0))],
        }
    }

    /// A record holding the handle of `group` of pipeline `id`.
    fn handle(m: &vortex_model::mem::MemoryMap, at: u64, group: u32, id: u32) {
        m.write_u32(at + kargs::sbt::HANDLE_GROUP as u64, group + 1).unwrap();
        m.write_u32(at + kargs::sbt::HANDLE_GROUP as u64 + 4, id).unwrap();
    }

    #[test]
    fn the_record_read_at_execution_picks_the_kernel() {
        let space = AddressSpace::new();
        let r = space.allocate(256).unwrap();
        let m = space.snapshot();
        handle(&m, r.base, 2, 0x1234);
        assert_eq!(
            select(r.base, false).play(&m).unwrap(),
            vec![(dcr::KMU_PC_LO, 0x2000), (dcr::KMU_PC_HI, 0), (dcr::KMU_LMEM_SIZE, 0)]
        );
        // Rewritten: the next play reads the new handle.
        handle(&m, r.base, 0, 0x1234);
        assert_eq!(
            select(r.base, false).play(&m).unwrap(),
            vec![(dcr::KMU_PC_LO, 0x40), (dcr::KMU_PC_HI, 0x10), (dcr::KMU_LMEM_SIZE, 64)]
        );
        // Through a VkTraceRaysIndirectCommand2KHR holding the record's address.
        let cmd = r.base + 128;
        m.write_u32(cmd, r.base as u32).unwrap();
        m.write_u32(cmd + 4, (r.base >> 32) as u32).unwrap();
        assert_eq!(select(cmd, true).play(&m).unwrap()[0], (dcr::KMU_PC_LO, 0x40));
    }

    #[test]
    fn a_record_naming_no_raygen_group_of_the_pipeline_leaves_the_launch() {
        let space = AddressSpace::new();
        let r = space.allocate(64).unwrap();
        let m = space.snapshot();
        for (group, id) in [(1, 0x1234), (7, 0x1234), (0, 0x9999)] {
            handle(&m, r.base, group, id);
            assert!(select(r.base, false).play(&m).unwrap().is_empty(), "group {group} of {id:#x}");
        }
        m.write_u32(r.base, 0).unwrap();
        assert!(select(r.base, false).play(&m).unwrap().is_empty(), "a null record");
        assert!(select(1 << 40, false).play(&m).is_err(), "an unmapped record faults");
    }
}
