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
use crate::pipeline::raytracing::{Kernel, HANDLE_BYTES};
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
    let raygen_record = match size {
        LaunchSize::Indirect2(src) => indirect2_raygen(dev, src),
        _ => sbt[kargs::sbt::RAYGEN].address,
    };
    let kernel = raygen(dev, rt, raygen_record)?;
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

/// The ray-generation kernel a trace runs: the pipeline's only one, or the one whose handle
/// the ray-generation record holds (read when the trace is recorded).
fn raygen<'p>(dev: &Device, rt: &'p crate::pipeline::raytracing::RayTracing, record: u64) -> VkResult<&'p Kernel> {
    if let Some(k) = rt.sole_raygen() {
        return Ok(k);
    }
    let mut handle = [0u8; HANDLE_BYTES];
    if dev.space.snapshot().read(record, &mut handle).is_err() {
        tracing::error!("trace rays: the ray-generation record at {record:#x} is not in device memory");
        return Err(vk::Result::ERROR_UNKNOWN);
    }
    rt.raygen_kernel(&handle).ok_or_else(|| {
        tracing::error!("trace rays: the ray-generation record at {record:#x} holds no ray-generation group's handle");
        vk::Result::ERROR_UNKNOWN
    })
}

/// The ray-generation record address of an indirect command 2 (0 if it cannot be read now).
fn indirect2_raygen(dev: &Device, src: u64) -> u64 {
    let mut b = [0u8; 8];
    match dev.space.snapshot().read(src + indirect2::RAYGEN, &mut b) {
        Ok(()) => u64::from_le_bytes(b),
        Err(_) => 0,
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
