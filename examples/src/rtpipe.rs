//! Ray-tracing pipelines (`VK_KHR_ray_tracing_pipeline`) for the examples: a pipeline of
//! SPIR-V stages and shader groups on the descriptor machinery of [`ComputePipeline`], its
//! shader binding table (one region per kind, records of one handle each, laid out by the
//! device's handle size and alignments) and `vkCmdTraceRaysKHR`.

use crate::buffer::Buffer;
use crate::context::Context;
use crate::error::{Error, Result, VkResultExt};
use crate::pipeline::{memory_barrier, read_spirv, Binding, ComputePipeline};
use ash::{khr, vk};
use std::cell::Cell;

/// The stages the layout's bindings and push constants are visible to.
pub const STAGES: vk::ShaderStageFlags = vk::ShaderStageFlags::from_raw(
    vk::ShaderStageFlags::RAYGEN_KHR.as_raw()
        | vk::ShaderStageFlags::MISS_KHR.as_raw()
        | vk::ShaderStageFlags::CLOSEST_HIT_KHR.as_raw()
        | vk::ShaderStageFlags::ANY_HIT_KHR.as_raw()
        | vk::ShaderStageFlags::INTERSECTION_KHR.as_raw()
        | vk::ShaderStageFlags::CALLABLE_KHR.as_raw(),
);

/// A shader group: indices into the pipeline's stages.
#[derive(Clone, Copy, Debug, Default)]
pub struct Group {
    pub general: Option<u32>,
    pub closest_hit: Option<u32>,
    pub any_hit: Option<u32>,
    pub intersection: Option<u32>,
}

impl Group {
    pub fn general(stage: u32) -> Group {
        Group { general: Some(stage), ..Default::default() }
    }

    pub fn triangles(closest_hit: Option<u32>, any_hit: Option<u32>) -> Group {
        Group { closest_hit, any_hit, ..Default::default() }
    }
}

/// Which groups go in which SBT region, in record order.
pub struct Table {
    pub raygen: u32,
    pub miss: Vec<u32>,
    pub hit: Vec<u32>,
}

pub struct RtPipeline {
    pub base: ComputePipeline,
    rt: khr::ray_tracing_pipeline::Device,
    sbt: Buffer,
    regions: [vk::StridedDeviceAddressRegionKHR; 4],
}

impl RtPipeline {
    /// A pipeline of `stages` (stage, SPIR-V with entry point `main`) and `groups`, set 0
    /// holding `bindings`, with its shader binding table laid out as `table` says; no
    /// recursion (`traceRayEXT` from the ray generation shader only).
    pub fn new(
        ctx: &Context,
        stages: &[(vk::ShaderStageFlags, &[u8])],
        groups: &[Group],
        table: &Table,
        bindings: &[Binding],
        push_constant_bytes: u32,
    ) -> Result<RtPipeline> {
        Self::with_recursion(ctx, stages, groups, table, bindings, push_constant_bytes, 1)
    }

    /// [`RtPipeline::new`] with `maxPipelineRayRecursionDepth` = `depth` (2: closest-hit and
    /// miss shaders may trace rays too).
    pub fn with_recursion(
        ctx: &Context,
        stages: &[(vk::ShaderStageFlags, &[u8])],
        groups: &[Group],
        table: &Table,
        bindings: &[Binding],
        push_constant_bytes: u32,
        depth: u32,
    ) -> Result<RtPipeline> {
        let rt = khr::ray_tracing_pipeline::Device::new(ctx.instance(), ctx.device());
        let made = Cell::new(vk::Pipeline::null());
        let base = ComputePipeline::with_stages(
            ctx,
            bindings,
            push_constant_bytes,
            STAGES,
            vk::PipelineBindPoint::RAY_TRACING_KHR,
            |device, layout| {
                let p = create(device, &rt, layout, stages, groups, depth)?;
                made.set(p);
                Ok(p)
            },
        )?;
        let (sbt, regions) = shader_binding_table(ctx, &rt, made.get(), groups.len() as u32, table)?;
        Ok(RtPipeline { base, rt, sbt, regions })
    }

    /// Records a trace of `size` rays, then a barrier making its writes visible to the host.
    pub fn record_trace(&self, ctx: &Context, cmd: vk::CommandBuffer, push_constants: &[u8], size: [u32; 3]) {
        self.base.bind(cmd, push_constants, &[]);
        let [raygen, miss, hit, callable] = &self.regions;
        // SAFETY: cmd is recording; the pipeline is bound and the SBT buffer alive.
        unsafe { self.rt.cmd_trace_rays(cmd, raygen, miss, hit, callable, size[0], size[1], size[2]) };
        memory_barrier(ctx.device(), cmd, vk::PipelineStageFlags::RAY_TRACING_SHADER_KHR, vk::PipelineStageFlags::HOST);
        let _ = &self.sbt;
    }
}

fn create(
    device: &ash::Device,
    rt: &khr::ray_tracing_pipeline::Device,
    layout: vk::PipelineLayout,
    stages: &[(vk::ShaderStageFlags, &[u8])],
    groups: &[Group],
    depth: u32,
) -> Result<vk::Pipeline> {
    let mut modules = Vec::new();
    let destroy = |modules: &[vk::ShaderModule]| {
        for &m in modules {
            // SAFETY: modules of this device, no longer needed once the pipeline exists.
            unsafe { device.destroy_shader_module(m, None) };
        }
    };
    for (_, spirv) in stages {
        let words = read_spirv(spirv)?;
        // SAFETY: valid device and SPIR-V words.
        match unsafe { device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None) } {
            Ok(m) => modules.push(m),
            Err(e) => {
                destroy(&modules);
                return Err(Error::msg(format!("vkCreateShaderModule: {e:?}")));
            }
        }
    }
    let stage_infos: Vec<_> = stages
        .iter()
        .zip(&modules)
        .map(|((stage, _), &m)| vk::PipelineShaderStageCreateInfo::default().stage(*stage).module(m).name(c"main"))
        .collect();
    let unused = |i: Option<u32>| i.unwrap_or(vk::SHADER_UNUSED_KHR);
    let group_infos: Vec<_> = groups
        .iter()
        .map(|g| {
            let ty = if g.general.is_some() {
                vk::RayTracingShaderGroupTypeKHR::GENERAL
            } else if g.intersection.is_some() {
                vk::RayTracingShaderGroupTypeKHR::PROCEDURAL_HIT_GROUP
            } else {
                vk::RayTracingShaderGroupTypeKHR::TRIANGLES_HIT_GROUP
            };
            vk::RayTracingShaderGroupCreateInfoKHR::default()
                .ty(ty)
                .general_shader(unused(g.general))
                .closest_hit_shader(unused(g.closest_hit))
                .any_hit_shader(unused(g.any_hit))
                .intersection_shader(unused(g.intersection))
        })
        .collect();
    let info = vk::RayTracingPipelineCreateInfoKHR::default()
        .stages(&stage_infos)
        .groups(&group_infos)
        .max_pipeline_ray_recursion_depth(depth)
        .layout(layout);
    // SAFETY: valid create info; the modules live until after the call.
    let r = unsafe {
        rt.create_ray_tracing_pipelines(vk::DeferredOperationKHR::null(), vk::PipelineCache::null(), &[info], None)
    };
    destroy(&modules);
    r.map_err(|(_, e)| e).vk("vkCreateRayTracingPipelinesKHR").map(|p| p[0])
}

fn align(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

/// The table's records: each region starts at a multiple of `shaderGroupBaseAlignment`,
/// records are a handle each, `shaderGroupHandleAlignment` apart.
fn shader_binding_table(
    ctx: &Context,
    rt: &khr::ray_tracing_pipeline::Device,
    pipeline: vk::Pipeline,
    groups: u32,
    table: &Table,
) -> Result<(Buffer, [vk::StridedDeviceAddressRegionKHR; 4])> {
    let mut props = vk::PhysicalDeviceRayTracingPipelinePropertiesKHR::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
    // SAFETY: valid physical device; the extension is enabled.
    unsafe { ctx.instance().get_physical_device_properties2(ctx.physical_device(), &mut p2) };
    let size = props.shader_group_handle_size as u64;
    let stride = align(size, props.shader_group_handle_alignment as u64);
    let base = props.shader_group_base_alignment as u64;
    // SAFETY: valid pipeline with `groups` groups.
    let handles =
        unsafe { rt.get_ray_tracing_shader_group_handles(pipeline, 0, groups, (groups as u64 * size) as usize) }
            .vk("vkGetRayTracingShaderGroupHandlesKHR")?;
    let regions: [&[u32]; 3] = [std::slice::from_ref(&table.raygen), &table.miss, &table.hit];
    let mut bytes = Vec::new();
    let mut starts = Vec::new();
    for r in regions {
        let start = align(bytes.len() as u64, base);
        bytes.resize(start as usize, 0);
        starts.push(start);
        for &g in r {
            let at = bytes.len();
            bytes.resize(at + stride as usize, 0);
            let h = &handles[(g as u64 * size) as usize..][..size as usize];
            bytes[at..at + size as usize].copy_from_slice(h);
        }
    }
    bytes.resize(align(bytes.len() as u64, base).max(base) as usize, 0);
    let usage = vk::BufferUsageFlags::SHADER_BINDING_TABLE_KHR | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
    let sbt = Buffer::with_data(ctx, &bytes, usage)?;
    let region = |k: usize, n: usize, stride: u64| vk::StridedDeviceAddressRegionKHR {
        device_address: sbt.address() + starts[k],
        stride,
        size: stride * n as u64,
    };
    let raygen = region(0, 1, stride);
    let regions = [
        vk::StridedDeviceAddressRegionKHR { stride: raygen.size, ..raygen },
        region(1, table.miss.len(), stride),
        region(2, table.hit.len(), stride),
        vk::StridedDeviceAddressRegionKHR::default(),
    ];
    Ok((sbt, regions))
}
