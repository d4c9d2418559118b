//! Compute pipelines with one descriptor set, and the descriptor writes the cases use.

use crate::case::{TestResult, VkCheck};
use crate::fw::{Buffer, Env};
use ash::vk;

/// One binding of set 0: its type and array size.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    pub ty: vk::DescriptorType,
    pub count: u32,
}

impl Binding {
    pub const fn one(ty: vk::DescriptorType) -> Binding {
        Binding { ty, count: 1 }
    }
    pub const STORAGE_IMAGE: Binding = Binding::one(vk::DescriptorType::STORAGE_IMAGE);
    pub const AS: Binding = Binding::one(vk::DescriptorType::ACCELERATION_STRUCTURE_KHR);
    pub const SSBO: Binding = Binding::one(vk::DescriptorType::STORAGE_BUFFER);
    pub const UBO: Binding = Binding::one(vk::DescriptorType::UNIFORM_BUFFER);
}

pub struct ComputePipeline {
    device: ash::Device,
    set_layout: vk::DescriptorSetLayout,
    pub layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    pub set: vk::DescriptorSet,
    module: vk::ShaderModule,
}

impl ComputePipeline {
    /// Binding i of set 0 is `bindings[i]`; `push_bytes` of push constants at offset 0;
    /// `spec` are 32-bit specialization constants `(id, value)`.
    pub fn new(
        env: &Env,
        code: &[u32],
        bindings: &[Binding],
        push_bytes: u32,
        spec: &[(u32, u32)],
    ) -> TestResult<Self> {
        let dev = &env.device;
        let mut p = ComputePipeline {
            device: dev.clone(),
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            pool: vk::DescriptorPool::null(),
            set: vk::DescriptorSet::null(),
            module: vk::ShaderModule::null(),
        };
        let layout_bindings: Vec<_> = bindings
            .iter()
            .enumerate()
            .map(|(i, b)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i as u32)
                    .descriptor_type(b.ty)
                    .descriptor_count(b.count)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let mut sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
        for b in bindings {
            match sizes.iter_mut().find(|s| s.ty == b.ty) {
                Some(s) => s.descriptor_count += b.count,
                None => sizes.push(vk::DescriptorPoolSize { ty: b.ty, descriptor_count: b.count }),
            }
        }
        let ranges = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).size(push_bytes)];
        let spec_entries: Vec<_> = spec
            .iter()
            .enumerate()
            .map(|(i, &(id, _))| vk::SpecializationMapEntry { constant_id: id, offset: 4 * i as u32, size: 4 })
            .collect();
        let spec_data: Vec<u8> = spec.iter().flat_map(|&(_, v)| v.to_le_bytes()).collect();
        let spec_info = vk::SpecializationInfo::default().map_entries(&spec_entries).data(&spec_data);
        // SAFETY (this block): valid device; Drop destroys whatever was created.
        unsafe {
            p.set_layout = dev
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings),
                    None,
                )
                .vk("vkCreateDescriptorSetLayout")?;
            let set_layouts = [p.set_layout];
            let mut pl = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
            if push_bytes > 0 {
                pl = pl.push_constant_ranges(&ranges);
            }
            p.layout = dev.create_pipeline_layout(&pl, None).vk("vkCreatePipelineLayout")?;
            if !sizes.is_empty() {
                p.pool = dev
                    .create_descriptor_pool(
                        &vk::DescriptorPoolCreateInfo::default()
                            .flags(vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET)
                            .max_sets(1)
                            .pool_sizes(&sizes),
                        None,
                    )
                    .vk("vkCreateDescriptorPool")?;
                p.set = dev
                    .allocate_descriptor_sets(
                        &vk::DescriptorSetAllocateInfo::default().descriptor_pool(p.pool).set_layouts(&set_layouts),
                    )
                    .vk("vkAllocateDescriptorSets")?[0];
            }
            p.module = dev
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(code), None)
                .vk("vkCreateShaderModule")?;
            let mut stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(p.module)
                .name(c"main");
            if !spec.is_empty() {
                stage = stage.specialization_info(&spec_info);
            }
            let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(p.layout);
            p.pipeline = dev
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| e)
                .vk("vkCreateComputePipelines")?[0];
        }
        Ok(p)
    }

    pub fn write_image(&self, binding: u32, view: vk::ImageView) {
        let info = [vk::DescriptorImageInfo::default().image_view(view).image_layout(vk::ImageLayout::GENERAL)];
        let w = vk::WriteDescriptorSet::default()
            .dst_set(self.set)
            .dst_binding(binding)
            .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
            .image_info(&info);
        // SAFETY: the set and view belong to this device.
        unsafe { self.device.update_descriptor_sets(&[w], &[]) };
    }

    pub fn write_as(&self, binding: u32, handles: &[vk::AccelerationStructureKHR]) {
        let mut as_info = vk::WriteDescriptorSetAccelerationStructureKHR::default().acceleration_structures(handles);
        let mut w = vk::WriteDescriptorSet::default()
            .dst_set(self.set)
            .dst_binding(binding)
            .descriptor_type(vk::DescriptorType::ACCELERATION_STRUCTURE_KHR)
            .push_next(&mut as_info);
        w.descriptor_count = handles.len() as u32;
        // SAFETY: the set and structures belong to this device.
        unsafe { self.device.update_descriptor_sets(&[w], &[]) };
    }

    pub fn write_buffer(&self, binding: u32, ty: vk::DescriptorType, buffer: &Buffer) {
        let info = [vk::DescriptorBufferInfo::default().buffer(buffer.handle).range(vk::WHOLE_SIZE)];
        let w = vk::WriteDescriptorSet::default()
            .dst_set(self.set)
            .dst_binding(binding)
            .descriptor_type(ty)
            .buffer_info(&info);
        // SAFETY: the set and buffer belong to this device.
        unsafe { self.device.update_descriptor_sets(&[w], &[]) };
    }

    /// Binds the pipeline and its set, then dispatches.
    pub fn record_dispatch(&self, cmd: vk::CommandBuffer, x: u32, y: u32, z: u32) {
        let d = &self.device;
        // SAFETY: cmd is recording on this device.
        unsafe {
            if self.set != vk::DescriptorSet::null() {
                d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, self.layout, 0, &[self.set], &[]);
            }
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            d.cmd_dispatch(cmd, x, y, z);
        }
    }

    pub fn record_push(&self, cmd: vk::CommandBuffer, bytes: &[u8]) {
        // SAFETY: cmd is recording; the layout has a range of at least this size.
        unsafe { self.device.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::COMPUTE, 0, bytes) };
    }
}

impl Drop for ComputePipeline {
    fn drop(&mut self) {
        // SAFETY: no submission is pending; null handles are ignored.
        unsafe {
            let d = &self.device;
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_shader_module(self.module, None);
            d.destroy_descriptor_pool(self.pool, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}
