//! Compute pipelines from SPIR-V with descriptor sets and push constants.

use crate::accel::AccelerationStructure;
use crate::buffer::Buffer;
use crate::context::{Context, Shared};
use crate::error::{Error, Result, VkResultExt};
use ash::vk;
use std::rc::Rc;

/// One descriptor binding of a pipeline layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    pub set: u32,
    pub binding: u32,
    pub ty: vk::DescriptorType,
    /// Descriptors in the binding (an array when more than one).
    pub count: u32,
}

/// What a descriptor write points at.
#[derive(Clone, Copy, Debug)]
pub enum Descriptor {
    /// A storage or uniform buffer (dynamic ones too: the dynamic offset is given at dispatch).
    Buffer {
        buffer: vk::Buffer,
        offset: u64,
        range: u64,
    },
    /// A storage or sampled image view, in `GENERAL` layout.
    Image(vk::ImageView),
    Sampler(vk::Sampler),
    /// A combined image sampler.
    Combined(vk::ImageView, vk::Sampler),
    /// A uniform or storage texel buffer view.
    TexelBuffer(vk::BufferView),
    AccelerationStructure(vk::AccelerationStructureKHR),
}

/// A compute pipeline and one descriptor set per set number of its layout (sets
/// `0..=max` exist, empty ones included), plus an optional push-constant block at offset 0.
///
/// Resources bound with `bind_*`/`write` must stay alive while dispatches that use them run.
pub struct ComputePipeline {
    shared: Rc<Shared>,
    set_layouts: Vec<vk::DescriptorSetLayout>,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    sets: Vec<vk::DescriptorSet>,
    bindings: Vec<Binding>,
    /// The stages the layout's bindings and push constants are visible to, and where the
    /// pipeline binds (a graphics pipeline, [`crate::raster::GraphicsPipeline`], is built on
    /// the same layout and descriptor machinery).
    stages: vk::ShaderStageFlags,
    bind_point: vk::PipelineBindPoint,
}

impl ComputePipeline {
    /// `spirv` is a SPIR-V module with entry point `main`; set 0 binding i has type
    /// `bindings[i]`.
    pub fn new(ctx: &Context, spirv: &[u8], bindings: &[vk::DescriptorType], push_constant_bytes: u32) -> Result<Self> {
        Self::with_layout(ctx, &read_spirv(spirv)?, &set0(bindings), push_constant_bytes, &[])
    }

    /// Like [`ComputePipeline::new`], with 32-bit specialization constants `(id, value)`.
    pub fn with_specialization(
        ctx: &Context,
        spirv: &[u8],
        bindings: &[vk::DescriptorType],
        push_constant_bytes: u32,
        constants: &[(u32, u32)],
    ) -> Result<Self> {
        let constants: Vec<(u32, Vec<u8>)> = constants.iter().map(|&(id, v)| (id, v.to_le_bytes().to_vec())).collect();
        Self::with_layout(ctx, &read_spirv(spirv)?, &set0(bindings), push_constant_bytes, &constants)
    }

    /// Like [`ComputePipeline::new`], but hands `code` to the driver as is, without checking
    /// even the magic number (the robustness checks feed drivers garbage on purpose).
    pub fn from_words(
        ctx: &Context,
        code: &[u32],
        bindings: &[vk::DescriptorType],
        push_constant_bytes: u32,
    ) -> Result<Self> {
        Self::with_layout(ctx, code, &set0(bindings), push_constant_bytes, &[])
    }

    /// The general form: any sets, arrays of descriptors, and specialization constants
    /// `(id, little-endian bytes)` of any size.
    pub fn with_layout(
        ctx: &Context,
        code: &[u32],
        bindings: &[Binding],
        push_constant_bytes: u32,
        specialization: &[(u32, Vec<u8>)],
    ) -> Result<Self> {
        let stages = vk::ShaderStageFlags::COMPUTE;
        Self::with_stages(
            ctx,
            bindings,
            push_constant_bytes,
            stages,
            vk::PipelineBindPoint::COMPUTE,
            |device, layout| compute_pipeline(device, layout, code, specialization),
        )
    }

    /// A layout of `bindings` and `push_constant_bytes` visible to `stages`, its descriptor
    /// sets, and the pipeline `make` creates on that layout.
    pub(crate) fn with_stages(
        ctx: &Context,
        bindings: &[Binding],
        push_constant_bytes: u32,
        stages: vk::ShaderStageFlags,
        bind_point: vk::PipelineBindPoint,
        make: impl FnOnce(&ash::Device, vk::PipelineLayout) -> Result<vk::Pipeline>,
    ) -> Result<Self> {
        // Each object is handed to `pipeline` as soon as it exists, so Drop cleans up
        // whatever was created if a later step fails.
        let mut pipeline = ComputePipeline {
            shared: ctx.shared.clone(),
            set_layouts: Vec::new(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            pool: vk::DescriptorPool::null(),
            sets: Vec::new(),
            bindings: bindings.to_vec(),
            stages,
            bind_point,
        };
        let device = &ctx.shared.device;
        let num_sets = bindings.iter().map(|b| b.set + 1).max().unwrap_or(0);
        // SAFETY (this block): valid device; every create info outlives its call.
        unsafe {
            for set in 0..num_sets {
                let layout_bindings: Vec<_> = bindings
                    .iter()
                    .filter(|b| b.set == set)
                    .map(|b| {
                        vk::DescriptorSetLayoutBinding::default()
                            .binding(b.binding)
                            .descriptor_type(b.ty)
                            .descriptor_count(b.count)
                            .stage_flags(stages)
                    })
                    .collect();
                let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings);
                let l = device.create_descriptor_set_layout(&info, None).vk("vkCreateDescriptorSetLayout")?;
                pipeline.set_layouts.push(l);
            }
            let push_ranges =
                [vk::PushConstantRange::default().stage_flags(stages).offset(0).size(push_constant_bytes)];
            let push_ranges = if push_constant_bytes > 0 { &push_ranges[..] } else { &[] };
            let layout_info = vk::PipelineLayoutCreateInfo::default()
                .set_layouts(&pipeline.set_layouts)
                .push_constant_ranges(push_ranges);
            pipeline.layout = device.create_pipeline_layout(&layout_info, None).vk("vkCreatePipelineLayout")?;

            pipeline.pipeline = make(device, pipeline.layout)?;

            if num_sets > 0 {
                let mut pool_sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
                for b in bindings {
                    match pool_sizes.iter_mut().find(|p| p.ty == b.ty) {
                        Some(p) => p.descriptor_count += b.count,
                        None => pool_sizes.push(vk::DescriptorPoolSize { ty: b.ty, descriptor_count: b.count }),
                    }
                }
                if pool_sizes.is_empty() {
                    pool_sizes
                        .push(vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 1 });
                }
                let pool_info = vk::DescriptorPoolCreateInfo::default().max_sets(num_sets).pool_sizes(&pool_sizes);
                pipeline.pool = device.create_descriptor_pool(&pool_info, None).vk("vkCreateDescriptorPool")?;
                let alloc = vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pipeline.pool)
                    .set_layouts(&pipeline.set_layouts);
                pipeline.sets = device.allocate_descriptor_sets(&alloc).vk("vkAllocateDescriptorSets")?;
            }
        }
        Ok(pipeline)
    }

    /// The pipeline layout (for push constants recorded by hand).
    pub fn layout(&self) -> vk::PipelineLayout {
        self.layout
    }

    /// Writes element `element` of `set`/`binding`.
    pub fn write(&self, set: u32, binding: u32, element: u32, descriptor: &Descriptor) -> Result<()> {
        let b = self
            .bindings
            .iter()
            .find(|b| b.set == set && b.binding == binding)
            .ok_or_else(|| Error::msg(format!("the pipeline layout has no set {set} binding {binding}")))?;
        let dst = *self.sets.get(set as usize).ok_or_else(|| Error::msg(format!("no descriptor set {set}")))?;
        let ty = b.ty;
        let mut write = vk::WriteDescriptorSet::default()
            .dst_set(dst)
            .dst_binding(binding)
            .dst_array_element(element)
            .descriptor_type(ty);
        let buffer_info;
        let image_info;
        let texel;
        let handles;
        let mut as_write;
        match *descriptor {
            Descriptor::Buffer { buffer, offset, range } => {
                buffer_info = [vk::DescriptorBufferInfo { buffer, offset, range }];
                write = write.buffer_info(&buffer_info);
            }
            Descriptor::Image(view) => {
                image_info = [vk::DescriptorImageInfo {
                    sampler: vk::Sampler::null(),
                    image_view: view,
                    image_layout: vk::ImageLayout::GENERAL,
                }];
                write = write.image_info(&image_info);
            }
            Descriptor::Sampler(sampler) => {
                image_info = [vk::DescriptorImageInfo {
                    sampler,
                    image_view: vk::ImageView::null(),
                    image_layout: vk::ImageLayout::GENERAL,
                }];
                write = write.image_info(&image_info);
            }
            Descriptor::Combined(view, sampler) => {
                image_info =
                    [vk::DescriptorImageInfo { sampler, image_view: view, image_layout: vk::ImageLayout::GENERAL }];
                write = write.image_info(&image_info);
            }
            Descriptor::TexelBuffer(view) => {
                texel = [view];
                write = write.texel_buffer_view(&texel);
            }
            Descriptor::AccelerationStructure(handle) => {
                handles = [handle];
                as_write = vk::WriteDescriptorSetAccelerationStructureKHR::default().acceleration_structures(&handles);
                write = write.push_next(&mut as_write);
                // The count is not implied by a slice for acceleration structures.
                write.descriptor_count = 1;
            }
        }
        // SAFETY: the set is not in use by a pending submission (submit_once waits).
        unsafe { self.shared.device.update_descriptor_sets(&[write], &[]) };
        Ok(())
    }

    /// Writes set 0 `binding` element 0; the binding exists (the `bind_*` callers
    /// created it).
    fn write0(&self, binding: u32, descriptor: Descriptor) {
        self.write(0, binding, 0, &descriptor).expect("binding declared at creation");
    }

    pub fn bind_acceleration_structure(&self, binding: u32, accel: &AccelerationStructure) {
        self.bind_acceleration_structure_handle(binding, accel.handle());
    }

    pub fn bind_acceleration_structure_handle(&self, binding: u32, handle: vk::AccelerationStructureKHR) {
        self.write0(binding, Descriptor::AccelerationStructure(handle));
    }

    pub fn bind_storage_buffer(&self, binding: u32, buffer: &Buffer) {
        self.write0(binding, Descriptor::Buffer { buffer: buffer.handle(), offset: 0, range: vk::WHOLE_SIZE });
    }

    pub fn bind_uniform_buffer(&self, binding: u32, buffer: &Buffer) {
        self.write0(binding, Descriptor::Buffer { buffer: buffer.handle(), offset: 0, range: vk::WHOLE_SIZE });
    }

    pub fn bind_storage_image(&self, binding: u32, view: vk::ImageView) {
        self.write0(binding, Descriptor::Image(view));
    }

    /// Binds the pipeline, its sets (with `dynamic_offsets`, in layout order) and the push
    /// constants.
    pub(crate) fn bind(&self, cmd: vk::CommandBuffer, push_constants: &[u8], dynamic_offsets: &[u32]) {
        let device = &self.shared.device;
        // SAFETY: cmd is recording; the pipeline, layout and sets belong to this device.
        unsafe {
            device.cmd_bind_pipeline(cmd, self.bind_point, self.pipeline);
            if !self.sets.is_empty() {
                device.cmd_bind_descriptor_sets(cmd, self.bind_point, self.layout, 0, &self.sets, dynamic_offsets);
            }
            if !push_constants.is_empty() {
                device.cmd_push_constants(cmd, self.layout, self.stages, 0, push_constants);
            }
        }
    }

    /// Records an indirect dispatch whose group counts are read from `args` (three u32) when
    /// the device executes it, followed by the same host barrier as [`Self::record_dispatch`].
    pub fn record_dispatch_indirect(&self, cmd: vk::CommandBuffer, push_constants: &[u8], args: &Buffer) {
        let device = &self.shared.device;
        self.bind(cmd, push_constants, &[]);
        // SAFETY: cmd is recording; the buffer belongs to this device.
        unsafe { device.cmd_dispatch_indirect(cmd, args.handle(), 0) };
        memory_barrier(device, cmd, vk::PipelineStageFlags::COMPUTE_SHADER, vk::PipelineStageFlags::HOST);
    }

    /// Records a dispatch of `groups` workgroups, followed by a barrier that makes the
    /// shader's writes visible to the host once the submission has finished.
    pub fn record_dispatch(&self, cmd: vk::CommandBuffer, push_constants: &[u8], groups: [u32; 3]) {
        self.record_dispatch_base(cmd, push_constants, [0; 3], groups, &[]);
    }

    /// The general dispatch: `vkCmdDispatchBase` from `base` with `groups` workgroups,
    /// dynamic offsets in layout order, then the host barrier of [`Self::record_dispatch`].
    pub fn record_dispatch_base(
        &self,
        cmd: vk::CommandBuffer,
        push_constants: &[u8],
        base: [u32; 3],
        groups: [u32; 3],
        dynamic_offsets: &[u32],
    ) {
        let device = &self.shared.device;
        self.bind(cmd, push_constants, dynamic_offsets);
        let to_host = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ | vk::AccessFlags::TRANSFER_READ);
        // SAFETY: cmd is recording.
        unsafe {
            if base == [0; 3] {
                device.cmd_dispatch(cmd, groups[0], groups[1], groups[2]);
            } else {
                device.cmd_dispatch_base(cmd, base[0], base[1], base[2], groups[0], groups[1], groups[2]);
            }
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST | vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[to_host],
                &[],
                &[],
            );
        }
    }
}

/// A compute pipeline of `code`'s `main` on `layout`, with specialization constants.
fn compute_pipeline(
    device: &ash::Device,
    layout: vk::PipelineLayout,
    code: &[u32],
    specialization: &[(u32, Vec<u8>)],
) -> Result<vk::Pipeline> {
    // SAFETY: valid device and layout; every create info outlives its call.
    unsafe {
        let module_info = vk::ShaderModuleCreateInfo::default().code(code);
        let module = device.create_shader_module(&module_info, None).vk("vkCreateShaderModule")?;
        let mut entries = Vec::new();
        let mut data = Vec::new();
        for (id, bytes) in specialization {
            entries.push(vk::SpecializationMapEntry { constant_id: *id, offset: data.len() as u32, size: bytes.len() });
            data.extend_from_slice(bytes);
        }
        let spec = vk::SpecializationInfo::default().map_entries(&entries).data(&data);
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        if !specialization.is_empty() {
            stage = stage.specialization_info(&spec);
        }
        let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout);
        let created = device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None);
        device.destroy_shader_module(module, None);
        Ok(created.map_err(|(_, result)| result).vk("vkCreateComputePipelines")?[0])
    }
}

pub(crate) fn read_spirv(spirv: &[u8]) -> Result<Vec<u32>> {
    ash::util::read_spv(&mut std::io::Cursor::new(spirv)).map_err(|e| Error::msg(format!("invalid SPIR-V module: {e}")))
}

/// Set 0, binding i of type `types[i]`, one descriptor each.
pub fn set0(types: &[vk::DescriptorType]) -> Vec<Binding> {
    types.iter().enumerate().map(|(i, &ty)| Binding { set: 0, binding: i as u32, ty, count: 1 }).collect()
}

impl Drop for ComputePipeline {
    fn drop(&mut self) {
        // SAFETY: no submission is pending (submit_once waits); null handles are ignored.
        unsafe {
            let device = &self.shared.device;
            device.destroy_descriptor_pool(self.pool, None);
            device.destroy_pipeline(self.pipeline, None);
            device.destroy_pipeline_layout(self.layout, None);
            for &l in &self.set_layouts {
                device.destroy_descriptor_set_layout(l, None);
            }
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
