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
pub enum LaunchSize {
    Direct([u32; 3]),
    /// A `VkTraceRaysIndirectCommandKHR` at this address, read when the queue gets there.
    Indirect(u64),
}

impl CommandBuffer {
    pub fn trace_rays(&self, sbt: SbtRegions, size: [u32; 3]) {
        self.record("vkCmdTraceRaysKHR", |i, d| launch(i, d, &sbt, LaunchSize::Direct(size)));
    }

    /// `vkCmdTraceRaysIndirectKHR` (regions given) and `vkCmdTraceRaysIndirect2KHR` (the
    /// regions are read from the command too: the caller reads them into `sbt` first).
    pub fn trace_rays_indirect(&self, sbt: SbtRegions, address: u64) {
        self.record("vkCmdTraceRaysIndirectKHR", |i, d| launch(i, d, &sbt, LaunchSize::Indirect(address)));
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
    let kernel = raygen(dev, rt, &sbt[kargs::sbt::RAYGEN])?;
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
        LaunchSize::Indirect(_) => None,
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
    i.rec.ops.extend(launch_dcrs(dev, &launch, direct.is_none()));
    let name: Arc<str> = p.name.as_str().into();
    i.emit(match size {
        LaunchSize::Direct(_) => StreamOp::Start { kernel: name },
        LaunchSize::Indirect(src) => StreamOp::TraceRaysIndirect { src, kargs: ka, kernel: name },
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
fn raygen<'p>(
    dev: &Device,
    rt: &'p crate::pipeline::raytracing::RayTracing,
    region: &SbtRegion,
) -> VkResult<&'p Kernel> {
    if let Some(k) = rt.sole_raygen() {
        return Ok(k);
    }
    let mut handle = [0u8; HANDLE_BYTES];
    if dev.space.snapshot().read(region.address, &mut handle).is_err() {
        tracing::error!("trace rays: the ray-generation record at {:#x} is not in device memory", region.address);
        return Err(vk::Result::ERROR_UNKNOWN);
    }
    rt.raygen_kernel(&handle).ok_or_else(|| {
        tracing::error!("trace rays: the ray-generation record at {:#x} holds no ray-generation group's handle", region.address);
        vk::Result::ERROR_UNKNOWN
    })
}
