//! Compute pipelines from SPIR-V with one descriptor set and push constants.

use crate::accel::AccelerationStructure;
use crate::buffer::Buffer;
use crate::context::{Context, Shared};
use crate::error::{Error, Result, VkResultExt};
use ash::vk;
use std::rc::Rc;

/// A compute pipeline whose set 0 has one descriptor per entry of `bindings` (binding i
/// has type `bindings[i]`), plus an optional push-constant block at offset 0.
///
/// Resources bound with `bind_*` must stay alive while dispatches that use them run.
pub struct ComputePipeline {
    shared: Rc<Shared>,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
}

impl ComputePipeline {
    /// `spirv` is a SPIR-V module with entry point `main`.
    pub fn new(ctx: &Context, spirv: &[u8], bindings: &[vk::DescriptorType], push_constant_bytes: u32) -> Result<Self> {
        let code = ash::util::read_spv(&mut std::io::Cursor::new(spirv))
            .map_err(|e| Error::msg(format!("invalid SPIR-V module: {e}")))?;
        Self::build(ctx, &code, bindings, push_constant_bytes, &[])
    }

    /// Like [`ComputePipeline::new`], with 32-bit specialization constants `(id, value)`.
    pub fn with_specialization(
        ctx: &Context,
        spirv: &[u8],
        bindings: &[vk::DescriptorType],
        push_constant_bytes: u32,
        constants: &[(u32, u32)],
    ) -> Result<Self> {
        let code = ash::util::read_spv(&mut std::io::Cursor::new(spirv))
            .map_err(|e| Error::msg(format!("invalid SPIR-V module: {e}")))?;
        Self::build(ctx, &code, bindings, push_constant_bytes, constants)
    }

    /// Like [`ComputePipeline::new`], but hands `code` to the driver as is, without checking
    /// even the magic number (the robustness checks feed drivers garbage on purpose).
    pub fn from_words(
        ctx: &Context,
        code: &[u32],
        bindings: &[vk::DescriptorType],
        push_constant_bytes: u32,
    ) -> Result<Self> {
        Self::build(ctx, code, bindings, push_constant_bytes, &[])
    }

    fn build(
        ctx: &Context,
        code: &[u32],
        bindings: &[vk::DescriptorType],
        push_constant_bytes: u32,
        constants: &[(u32, u32)],
    ) -> Result<Self> {
        // Each object is handed to `pipeline` as soon as it exists, so Drop cleans up
        // whatever was created if a later step fails.
        let mut pipeline = ComputePipeline {
            shared: ctx.shared.clone(),
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            pool: vk::DescriptorPool::null(),
            set: vk::DescriptorSet::null(),
        };
        let device = &ctx.shared.device;
        let layout_bindings: Vec<_> = bindings
            .iter()
            .enumerate()
            .map(|(i, &ty)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i as u32)
                    .descriptor_type(ty)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let set_layout_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings);
        // SAFETY (this block): valid device; every create info outlives its call.
        unsafe {
            pipeline.set_layout =
                device.create_descriptor_set_layout(&set_layout_info, None).vk("vkCreateDescriptorSetLayout")?;
            let set_layouts = [pipeline.set_layout];
            let push_ranges = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .offset(0)
                .size(push_constant_bytes)];
            let push_ranges = if push_constant_bytes > 0 { &push_ranges[..] } else { &[] };
            let layout_info =
                vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts).push_constant_ranges(push_ranges);
            pipeline.layout = device.create_pipeline_layout(&layout_info, None).vk("vkCreatePipelineLayout")?;

            let module_info = vk::ShaderModuleCreateInfo::default().code(code);
            let module = device.create_shader_module(&module_info, None).vk("vkCreateShaderModule")?;
            let entries: Vec<_> = (0..constants.len())
                .map(|i| vk::SpecializationMapEntry { constant_id: constants[i].0, offset: 4 * i as u32, size: 4 })
                .collect();
            let data: Vec<u8> = constants.iter().flat_map(|c| c.1.to_le_bytes()).collect();
            let spec = vk::SpecializationInfo::default().map_entries(&entries).data(&data);
            let mut stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main");
            if !constants.is_empty() {
                stage = stage.specialization_info(&spec);
            }
            let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(pipeline.layout);
            let created = device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None);
            device.destroy_shader_module(module, None);
            pipeline.pipeline = created.map_err(|(_, result)| result).vk("vkCreateComputePipelines")?[0];

            let pool_sizes: Vec<_> =
                bindings.iter().map(|&ty| vk::DescriptorPoolSize { ty, descriptor_count: 1 }).collect();
            let pool_info = vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&pool_sizes);
            pipeline.pool = device.create_descriptor_pool(&pool_info, None).vk("vkCreateDescriptorPool")?;
            let alloc =
                vk::DescriptorSetAllocateInfo::default().descriptor_pool(pipeline.pool).set_layouts(&set_layouts);
            pipeline.set = device.allocate_descriptor_sets(&alloc).vk("vkAllocateDescriptorSets")?[0];
        }
        Ok(pipeline)
    }

    pub fn bind_acceleration_structure(&self, binding: u32, accel: &AccelerationStructure) {
        self.bind_acceleration_structure_handle(binding, accel.handle());
    }

    pub fn bind_acceleration_structure_handle(&self, binding: u32, handle: vk::AccelerationStructureKHR) {
        let handles = [handle];
        let mut as_write = vk::WriteDescriptorSetAccelerationStructureKHR::default().acceleration_structures(&handles);
        let mut write = vk::WriteDescriptorSet::default()
            .dst_set(self.set)
            .dst_binding(binding)
            .descriptor_type(vk::DescriptorType::ACCELERATION_STRUCTURE_KHR)
            .push_next(&mut as_write);
        // The count is not implied by a slice for acceleration structures.
        write.descriptor_count = 1;
        // SAFETY: the set is not in use by a pending submission (submit_once waits).
        unsafe { self.shared.device.update_descriptor_sets(&[write], &[]) };
    }

    pub fn bind_storage_buffer(&self, binding: u32, buffer: &Buffer) {
        self.bind_buffer(binding, buffer, vk::DescriptorType::STORAGE_BUFFER);
    }

    pub fn bind_uniform_buffer(&self, binding: u32, buffer: &Buffer) {
        self.bind_buffer(binding, buffer, vk::DescriptorType::UNIFORM_BUFFER);
    }

    fn bind_buffer(&self, binding: u32, buffer: &Buffer, ty: vk::DescriptorType) {
        let infos = [vk::DescriptorBufferInfo { buffer: buffer.handle(), offset: 0, range: vk::WHOLE_SIZE }];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(self.set)
            .dst_binding(binding)
            .descriptor_type(ty)
            .buffer_info(&infos);
        // SAFETY: as in bind_acceleration_structure.
        unsafe { self.shared.device.update_descriptor_sets(&[write], &[]) };
    }

    pub fn bind_storage_image(&self, binding: u32, view: vk::ImageView) {
        let infos = [vk::DescriptorImageInfo {
            sampler: vk::Sampler::null(),
            image_view: view,
            image_layout: vk::ImageLayout::GENERAL,
        }];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(self.set)
            .dst_binding(binding)
            .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
            .image_info(&infos);
        // SAFETY: as in bind_acceleration_structure.
        unsafe { self.shared.device.update_descriptor_sets(&[write], &[]) };
    }

    /// Records an indirect dispatch whose group counts are read from `args` (three u32) when
    /// the device executes it, followed by the same host barrier as [`Self::record_dispatch`].
    pub fn record_dispatch_indirect(&self, cmd: vk::CommandBuffer, push_constants: &[u8], args: &Buffer) {
        let device = &self.shared.device;
        // SAFETY: cmd is recording; the pipeline, layout, set and buffer belong to this device.
        unsafe {
            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            device.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, self.layout, 0, &[self.set], &[]);
            if !push_constants.is_empty() {
                device.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::COMPUTE, 0, push_constants);
            }
            device.cmd_dispatch_indirect(cmd, args.handle(), 0);
        }
        memory_barrier(device, cmd, vk::PipelineStageFlags::COMPUTE_SHADER, vk::PipelineStageFlags::HOST);
    }

    /// Records a dispatch of `groups` workgroups, followed by a barrier that makes the
    /// shader's writes visible to the host once the submission has finished.
    pub fn record_dispatch(&self, cmd: vk::CommandBuffer, push_constants: &[u8], groups: [u32; 3]) {
        let device = &self.shared.device;
        let to_host = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ);
        // SAFETY: cmd is recording; the pipeline, layout and set belong to this device.
        unsafe {
            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            device.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, self.layout, 0, &[self.set], &[]);
            if !push_constants.is_empty() {
                device.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::COMPUTE, 0, push_constants);
            }
            device.cmd_dispatch(cmd, groups[0], groups[1], groups[2]);
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[to_host],
                &[],
                &[],
            );
        }
    }
}

impl Drop for ComputePipeline {
    fn drop(&mut self) {
        // SAFETY: no submission is pending (submit_once waits); null handles are ignored.
        unsafe {
            let device = &self.shared.device;
            device.destroy_descriptor_pool(self.pool, None);
            device.destroy_pipeline(self.pipeline, None);
            device.destroy_pipeline_layout(self.layout, None);
            device.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// A global memory barrier between two stages (writes of the first visible to the second).
pub fn memory_barrier(
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    src: vk::PipelineStageFlags,
    dst: vk::PipelineStageFlags,
) {
    let b = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
        .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE);
    // SAFETY: cmd is recording on `device`.
    unsafe { device.cmd_pipeline_barrier(cmd, src, dst, vk::DependencyFlags::empty(), &[b], &[], &[]) };
}
