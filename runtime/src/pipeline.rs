//! Shader modules, pipeline layouts, bind points and pipelines. Creating a pipeline compiles
//! its SPIR-V to VX kernels and places the kernel images in device memory, where the KMU's PC
//! (a dispatch) or the draw's stage DCRs (`graphics`) point.

pub mod graphics;
pub mod raytracing;

use crate::descriptor::SetLayout;
use crate::device::Device;
use crate::memory::Memory;
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::abi::kernel::kargs;
use vortex_transcode::shader;

pub struct ShaderModule {
    pub words: Vec<u32>,
}

pub struct PipelineLayout {
    pub sets: Vec<Option<Arc<SetLayout>>>,
    pub push_bytes: u32,
    /// First dynamic-offset index of each set (pipeline-layout order).
    pub dynamic_base: Vec<u32>,
    pub dynamic_count: u32,
}

impl PipelineLayout {
    pub fn new(sets: Vec<Option<Arc<SetLayout>>>, push_bytes: u32) -> VkResult<PipelineLayout> {
        if sets.len() > kargs::MAX_SETS {
            tracing::error!("pipeline layout with {} sets (at most {})", sets.len(), kargs::MAX_SETS);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        let mut dynamic_base = Vec::with_capacity(sets.len());
        let mut n = 0;
        for s in &sets {
            dynamic_base.push(n);
            n += s.as_ref().map_or(0, |s| s.dynamic_count);
        }
        if n as usize > kargs::MAX_DYNAMIC {
            tracing::error!("pipeline layout with {n} dynamic buffers (at most {})", kargs::MAX_DYNAMIC);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        Ok(PipelineLayout { sets, push_bytes, dynamic_base, dynamic_count: n })
    }
}

/// `VkPipelineBindPoint`: each keeps its own pipeline and descriptor sets in a command
/// buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindPoint {
    Compute,
    Graphics,
    RayTracing,
}

impl BindPoint {
    pub const ALL: [BindPoint; 3] = [BindPoint::Compute, BindPoint::Graphics, BindPoint::RayTracing];

    pub fn index(self) -> usize {
        self as usize
    }
}

/// Specialization constants: (constant id, bytes).
pub type Specialization = Vec<(u32, Vec<u8>)>;

/// A pipeline: its layout and what it runs. Every kind binds at its own bind point.
pub struct Pipeline {
    pub layout: Arc<PipelineLayout>,
    /// The entry point's name (the vertex stage's, for graphics), for logs.
    pub name: String,
    pub kind: Kind,
}

pub enum Kind {
    Compute(Compute),
    Graphics(Box<graphics::GraphicsPipeline>),
    RayTracing(Box<raytracing::RayTracing>),
}

/// A compute kernel resident in device memory, with its launch shape.
pub struct Compute {
    pub kernel: Memory,
    pub local_size: [u32; 3],
    pub lmem_bytes: u32,
}

impl Pipeline {
    pub fn compute(
        device: &Device,
        module: &ShaderModule,
        entry: &str,
        spec: &Specialization,
        layout: Arc<PipelineLayout>,
    ) -> VkResult<Pipeline> {
        let target = shader::Target {
            ray_query: shader::RayQueryLowering::for_arch(device.config.rt_arch),
            raylog: vortex_model::rtu::raylog::enabled(),
            ..shader::Target::COMPUTE
        };
        let k = crate::stream::compile_kernel(device, &module.words, entry, spec, &layout, target, Vec::new())?;
        let max = device.config.max_block_threads();
        let threads: u32 = k.local_size.iter().product();
        if threads == 0 || threads > max {
            tracing::error!(
                "compute pipeline '{entry}': workgroup of {threads} invocations (this device runs 1..={max})"
            );
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        if k.lmem_bytes > device.config.lmem_bytes {
            tracing::error!(
                "compute pipeline '{entry}': {} bytes of workgroup memory (a core has {})",
                k.lmem_bytes,
                device.config.lmem_bytes
            );
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        let kernel = load_kernel(device, &k)?;
        let compute = Compute { kernel, local_size: k.local_size, lmem_bytes: k.lmem_bytes };
        Ok(Pipeline { layout, name: k.entry_name, kind: Kind::Compute(compute) })
    }

    /// The bind point this pipeline binds to.
    pub fn bind_point(&self) -> BindPoint {
        match self.kind {
            Kind::Compute(_) => BindPoint::Compute,
            Kind::Graphics(_) => BindPoint::Graphics,
            Kind::RayTracing(_) => BindPoint::RayTracing,
        }
    }

    pub fn as_compute(&self) -> Option<&Compute> {
        match &self.kind {
            Kind::Compute(c) => Some(c),
            _ => None,
        }
    }

    pub fn as_ray_tracing(&self) -> Option<&raytracing::RayTracing> {
        match &self.kind {
            Kind::RayTracing(r) => Some(r),
            _ => None,
        }
    }

    pub fn as_graphics(&self) -> Option<&graphics::GraphicsPipeline> {
        match &self.kind {
            Kind::Graphics(g) => Some(g),
            _ => None,
        }
    }
}

impl Compute {
    pub fn kernel_address(&self) -> u64 {
        self.kernel.address(0)
    }
}

/// Places a compiled kernel's image in device memory (and, with `VORTEX_DUMP=kernels`, its
/// listing in a file).
pub fn load_kernel(device: &Device, k: &shader::CompiledKernel) -> VkResult<Memory> {
    let image = k.image(device.kernel_id());
    let kernel = Memory::allocate(&device.space, image.len() as u64)?;
    device.space.snapshot().write(kernel.address(0), &image).map_err(|_| vk::Result::ERROR_UNKNOWN)?;
    if std::env::var("VORTEX_DUMP").is_ok_and(|v| v.split(',').any(|x| x.trim() == "kernels")) {
        let path = format!("vortex-kernel-{}-{:x}.vxs", sanitize(&k.entry_name), kernel.address(0));
        match std::fs::write(&path, k.disassemble()) {
            Ok(()) => tracing::info!("VORTEX_DUMP: wrote {path}"),
            Err(e) => tracing::warn!("VORTEX_DUMP: cannot write {path}: {e}"),
        }
    }
    tracing::debug!(
        "compiled '{}': {} instructions, {} registers, {} ray queries",
        k.entry_name,
        k.code.len(),
        k.num_regs,
        k.num_queries
    );
    Ok(kernel)
}

fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}
