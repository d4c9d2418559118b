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

/// One shader binding table record: a group's handle, then the shader record data
/// (`shaderRecordEXT`) its shader reads.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub group: u32,
    pub data: Vec<u8>,
}

impl Record {
    pub fn new(group: u32, data: &[u8]) -> Record {
        Record { group, data: data.to_vec() }
    }
}

/// A whole shader binding table: the ray generation record, the miss, hit and callable
/// regions.
#[derive(Clone, Debug, Default)]
pub struct Records {
    pub raygen: Record,
    pub miss: Vec<Record>,
    pub hit: Vec<Record>,
    pub callable: Vec<Record>,
}

impl From<&Table> for Records {
    fn from(t: &Table) -> Records {
        let records = |gs: &[u32]| gs.iter().map(|&g| Record::new(g, &[])).collect();
        Records {
            raygen: Record::new(t.raygen, &[]),
            miss: records(&t.miss),
            hit: records(&t.hit),
            callable: Vec::new(),
        }
    }
}

pub struct RtPipeline {
    pub base: ComputePipeline,
    rt: khr::ray_tracing_pipeline::Device,
    sbt: Buffer,
    regions: [vk::StridedDeviceAddressRegionKHR; 4],
    handles: Vec<u8>,
    layout: SbtLayout,
    /// The pipeline (owned by `base`).
    pipeline: vk::Pipeline,
}

impl RtPipeline {
    /// A pipeline of `stages` (stage, SPIR-V with entry point `main`) and `groups`, set 0
    /// holding `bindings`, with its shader binding table laid out as `table` says.
    pub fn new(
        ctx: &Context,
        stages: &[(vk::ShaderStageFlags, &[u8])],
        groups: &[Group],
        table: &Table,
        bindings: &[Binding],
        push_constant_bytes: u32,
    ) -> Result<RtPipeline> {
        Self::with_records(ctx, stages, groups, &table.into(), bindings, push_constant_bytes, 1)
    }

    /// [`RtPipeline::new`] with shader record data and callable records, traces nested up to
    /// `max_recursion` deep (`maxPipelineRayRecursionDepth`).
    pub fn with_records(
        ctx: &Context,
        stages: &[(vk::ShaderStageFlags, &[u8])],
        groups: &[Group],
        records: &Records,
        bindings: &[Binding],
        push_constant_bytes: u32,
        max_recursion: u32,
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
                let p = create(device, &rt, layout, stages, groups, max_recursion)?;
                made.set(p);
                Ok(p)
            },
        )?;
        let (size, layout) = SbtLayout::of(ctx, records);
        let count = groups.len() as u32;
        // SAFETY: valid pipeline with `count` groups.
        let handles =
            unsafe { rt.get_ray_tracing_shader_group_handles(made.get(), 0, count, (count as u64 * size) as usize) }
                .vk("vkGetRayTracingShaderGroupHandlesKHR")?;
        let bytes = layout.bytes(&handles, records)?;
        let usage = vk::BufferUsageFlags::SHADER_BINDING_TABLE_KHR | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let sbt = Buffer::with_data(ctx, &bytes, usage)?;
        let regions = layout.regions(sbt.address(), records);
        Ok(RtPipeline { base, rt, sbt, regions, handles, layout, pipeline: made.get() })
    }

    /// Records a trace of `size` rays, then a barrier making its writes visible to the host.
    pub fn record_trace(&self, ctx: &Context, cmd: vk::CommandBuffer, push_constants: &[u8], size: [u32; 3]) {
        self.base.bind(cmd, push_constants, &[]);
        let [raygen, miss, hit, callable] = &self.regions;
        // SAFETY: cmd is recording; the pipeline is bound and the SBT buffer alive.
        unsafe { self.rt.cmd_trace_rays(cmd, raygen, miss, hit, callable, size[0], size[1], size[2]) };
        memory_barrier(ctx.device(), cmd, vk::PipelineStageFlags::RAY_TRACING_SHADER_KHR, vk::PipelineStageFlags::HOST);
    }

    /// Rewrites the shader binding table in place (same region sizes, other groups and
    /// data): a trace recorded before and submitted after reads the new records.
    pub fn rewrite(&self, records: &Records) -> Result<()> {
        let same = |a: &[Record], r: &vk::StridedDeviceAddressRegionKHR| a.len() as u64 * r.stride == r.size;
        let [_, miss, hit, callable] = &self.regions;
        if !(same(&records.miss, miss) && same(&records.hit, hit) && same(&records.callable, callable)) {
            return Err(Error::msg("rewrite: the regions must keep their record counts"));
        }
        self.sbt.write(&self.layout.bytes(&self.handles, records)?);
        Ok(())
    }

    /// `vkGetRayTracingShaderGroupStackSizeKHR` of group `group`'s `which` shader.
    pub fn stack_size(&self, group: u32, which: vk::ShaderGroupShaderKHR) -> u64 {
        // SAFETY: a live ray-tracing pipeline with that group.
        unsafe { self.rt.get_ray_tracing_shader_group_stack_size(self.pipeline, group, which) }
    }
}

/// Where the records go: each region starts at a multiple of `shaderGroupBaseAlignment`,
/// records are `stride` apart (the handle and the largest data of the table, rounded up to
/// `shaderGroupHandleAlignment`).
#[derive(Clone, Copy, Debug)]
struct SbtLayout {
    handle: usize,
    stride: u64,
    base: u64,
}

impl SbtLayout {
    /// The layout for `records` on `ctx`'s device, and the handle size.
    fn of(ctx: &Context, records: &Records) -> (u64, SbtLayout) {
        let mut props = vk::PhysicalDeviceRayTracingPipelinePropertiesKHR::default();
        let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
        // SAFETY: valid physical device; the extension is enabled.
        unsafe { ctx.instance().get_physical_device_properties2(ctx.physical_device(), &mut p2) };
        let size = props.shader_group_handle_size as u64;
        let all = std::iter::once(&records.raygen).chain(&records.miss).chain(&records.hit).chain(&records.callable);
        let data = all.map(|r| r.data.len() as u64).max().unwrap_or(0);
        let stride = align(size + data, props.shader_group_handle_alignment as u64);
        (size, SbtLayout { handle: size as usize, stride, base: props.shader_group_base_alignment as u64 })
    }

    fn regions_of(records: &Records) -> [&[Record]; 4] {
        [std::slice::from_ref(&records.raygen), &records.miss, &records.hit, &records.callable]
    }

    /// Start of each region in the table.
    fn starts(&self, records: &Records) -> [u64; 4] {
        let mut at = 0;
        Self::regions_of(records).map(|r| {
            let start = align(at, self.base);
            at = start + self.stride * r.len() as u64;
            start
        })
    }

    fn bytes(&self, handles: &[u8], records: &Records) -> Result<Vec<u8>> {
        let starts = self.starts(records);
        let mut bytes = Vec::new();
        for (r, start) in Self::regions_of(records).into_iter().zip(starts) {
            bytes.resize(start as usize, 0);
            for rec in r {
                let at = bytes.len();
                bytes.resize(at + self.stride as usize, 0);
                let from = rec.group as usize * self.handle;
                let h = handles
                    .get(from..from + self.handle)
                    .ok_or_else(|| Error::msg(format!("no handle for group {}", rec.group)))?;
                bytes[at..at + self.handle].copy_from_slice(h);
                bytes[at + self.handle..][..rec.data.len()].copy_from_slice(&rec.data);
            }
        }
        bytes.resize(align(bytes.len() as u64, self.base).max(self.base) as usize, 0);
        Ok(bytes)
    }

    fn regions(&self, address: u64, records: &Records) -> [vk::StridedDeviceAddressRegionKHR; 4] {
        let starts = self.starts(records);
        let lens = Self::regions_of(records).map(|r| r.len() as u64);
        std::array::from_fn(|k| match lens[k] {
            0 => vk::StridedDeviceAddressRegionKHR::default(),
            n => vk::StridedDeviceAddressRegionKHR {
                device_address: address + starts[k],
                stride: self.stride,
                size: self.stride * n,
            },
        })
    }
}

fn create(
    device: &ash::Device,
    rt: &khr::ray_tracing_pipeline::Device,
    layout: vk::PipelineLayout,
    stages: &[(vk::ShaderStageFlags, &[u8])],
    groups: &[Group],
    max_recursion: u32,
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
        .max_pipeline_ray_recursion_depth(max_recursion)
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

/// The context of a ray-tracing-pipeline program on `icd`, with the device's name printed;
/// exits with status 2 (the examples' "cannot run here") when the device cannot be opened or
/// does not offer `VK_KHR_ray_tracing_pipeline`.
pub fn context_or_exit(program: &str, icd: &crate::icd::Icd) -> Context {
    let ctx = Context::with_optional_features(icd).unwrap_or_else(|err| {
        eprintln!("{program}: {err}");
        std::process::exit(2);
    });
    println!("device: {}", ctx.info().name);
    if !ctx.info().enabled.contains(&"rayTracingPipeline") {
        eprintln!(
            "{program}: the device does not offer VK_KHR_ray_tracing_pipeline (on Vortex: hidden by \
             VORTEX_RT_PIPELINE=0, and on rdna2 devices)"
        );
        std::process::exit(2);
    }
    ctx
}
