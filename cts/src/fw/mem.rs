//! Buffers and images with their memory. Buffers live in host-visible, host-coherent
//! memory (the tests' inputs and results are plain memory copies), optionally with a
//! device address, mapped for their whole life.

use crate::case::{TestResult, VkCheck};
use crate::fw::Env;
use ash::vk;

/// The byte dEQP's ray-tracing helpers fill fresh allocations with, so a driver that
/// relies on zeroed memory is caught.
pub const GARBAGE: u8 = 0xAA;

pub struct Buffer {
    device: ash::Device,
    pub handle: vk::Buffer,
    memory: vk::DeviceMemory,
    pub size: u64,
    ptr: *mut u8,
    pub address: vk::DeviceAddress,
}

impl Buffer {
    /// A host-visible buffer of `size` bytes with a device address, bound and mapped,
    /// its contents zero.
    pub fn new(env: &Env, size: u64, usage: vk::BufferUsageFlags) -> TestResult<Buffer> {
        let mut b = Buffer::unbound(env, size, usage)?;
        b.bind(env)?;
        b.fill(0);
        Ok(b)
    }

    /// A buffer holding a copy of `data`.
    pub fn with_data<T: bytemuck::NoUninit>(env: &Env, data: &[T], usage: vk::BufferUsageFlags) -> TestResult<Buffer> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let b = Buffer::new(env, bytes.len() as u64, usage)?;
        b.write(0, bytes);
        Ok(b)
    }

    /// Created but without memory yet (AS tests create an acceleration structure on a
    /// buffer before binding its memory).
    pub fn unbound(env: &Env, size: u64, usage: vk::BufferUsageFlags) -> TestResult<Buffer> {
        let usage = usage | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        let info = vk::BufferCreateInfo::default().size(size.max(4)).usage(usage);
        // SAFETY: valid device and create info.
        let handle = unsafe { env.device.create_buffer(&info, None) }.vk("vkCreateBuffer")?;
        Ok(Buffer {
            device: env.device.clone(),
            handle,
            memory: vk::DeviceMemory::null(),
            size,
            ptr: std::ptr::null_mut(),
            address: 0,
        })
    }

    /// Allocates host-visible, coherent, device-address memory, binds and maps it.
    pub fn bind(&mut self, env: &Env) -> TestResult {
        let dev = &env.device;
        // SAFETY (this function): the buffer is valid and not bound yet.
        let req = unsafe { dev.get_buffer_memory_requirements(self.handle) };
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let Some(ty) = env.memory_type(req.memory_type_bits, host) else {
            crate::fail!("no host-visible, coherent memory type for a buffer");
        };
        let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let info =
            vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty).push_next(&mut flags);
        self.memory = unsafe { dev.allocate_memory(&info, None) }.vk("vkAllocateMemory")?;
        unsafe { dev.bind_buffer_memory(self.handle, self.memory, 0) }.vk("vkBindBufferMemory")?;
        self.ptr = unsafe { dev.map_memory(self.memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
            .vk("vkMapMemory")?
            .cast();
        self.address =
            unsafe { dev.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(self.handle)) };
        Ok(())
    }

    pub fn fill(&self, byte: u8) {
        // SAFETY: the mapping covers `size` bytes.
        unsafe { self.ptr.write_bytes(byte, self.size as usize) };
    }

    pub fn write(&self, offset: u64, bytes: &[u8]) {
        assert!(offset + bytes.len() as u64 <= self.size, "write past the end of a buffer");
        // SAFETY: in bounds (checked); the source is a separate allocation.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(offset as usize), bytes.len()) };
    }

    pub fn write_pod<T: bytemuck::NoUninit>(&self, offset: u64, data: &[T]) {
        self.write(offset, bytemuck::cast_slice(data));
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.size as usize];
        // SAFETY: the mapping covers `size` bytes.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr, out.as_mut_ptr(), out.len()) };
        out
    }

    /// The contents as `T`s (a trailing partial `T` is dropped).
    pub fn read<T: bytemuck::Pod>(&self) -> Vec<T> {
        let bytes = self.bytes();
        let n = bytes.len() / std::mem::size_of::<T>();
        let mut out = vec![T::zeroed(); n];
        bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(&bytes[..n * std::mem::size_of::<T>()]);
        out
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: cases wait for their submissions before dropping resources.
        unsafe {
            self.device.destroy_buffer(self.handle, None);
            if self.memory != vk::DeviceMemory::null() {
                self.device.free_memory(self.memory, None);
            }
        }
    }
}

/// A 3D storage image (optimal tiling, STORAGE | TRANSFER_SRC | TRANSFER_DST) with a 3D
/// view, as the image-output ray_query tests use.
pub struct Image {
    device: ash::Device,
    pub handle: vk::Image,
    pub view: vk::ImageView,
    memory: vk::DeviceMemory,
    pub extent: vk::Extent3D,
    pub format: vk::Format,
}

pub fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange::default().aspect_mask(vk::ImageAspectFlags::COLOR).level_count(1).layer_count(1)
}

impl Image {
    pub fn new_3d(env: &Env, format: vk::Format, width: u32, height: u32, depth: u32) -> TestResult<Image> {
        let dev = &env.device;
        let extent = vk::Extent3D { width, height, depth };
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_3D)
            .format(format)
            .extent(extent)
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let mut img = Image {
            device: dev.clone(),
            handle: vk::Image::null(),
            view: vk::ImageView::null(),
            memory: vk::DeviceMemory::null(),
            extent,
            format,
        };
        // SAFETY (this block): valid device; Drop releases whatever was created.
        unsafe {
            img.handle = dev.create_image(&info, None).vk("vkCreateImage")?;
            let req = dev.get_image_memory_requirements(img.handle);
            let ty = env
                .memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::empty())
                .ok_or_else(|| crate::case::TestError::Fail("no memory type for an image".into()))?;
            let alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(ty);
            img.memory = dev.allocate_memory(&alloc, None).vk("vkAllocateMemory")?;
            dev.bind_image_memory(img.handle, img.memory, 0).vk("vkBindImageMemory")?;
            let view = vk::ImageViewCreateInfo::default()
                .image(img.handle)
                .view_type(vk::ImageViewType::TYPE_3D)
                .format(format)
                .subresource_range(color_range());
            img.view = dev.create_image_view(&view, None).vk("vkCreateImageView")?;
        }
        Ok(img)
    }

    /// UNDEFINED -> TRANSFER_DST, clear to `value` (every channel), then -> GENERAL with
    /// the acceleration-structure build stage as the destination, as dEQP's tests record it.
    pub fn record_clear(&self, cmd: vk::CommandBuffer, value: u32) {
        let pre = vk::ImageMemoryBarrier::default()
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .image(self.handle)
            .subresource_range(color_range());
        let post = vk::ImageMemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(
                vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR | vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR,
            )
            .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .new_layout(vk::ImageLayout::GENERAL)
            .image(self.handle)
            .subresource_range(color_range());
        let d = &self.device;
        // SAFETY: cmd is recording on this device.
        unsafe {
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[pre],
            );
            d.cmd_clear_color_image(
                cmd,
                self.handle,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &vk::ClearColorValue { uint32: [value; 4] },
                &[color_range()],
            );
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[post],
            );
        }
    }

    /// Barrier after the shader writes, copy of the whole image (GENERAL layout) into
    /// `buffer`, barrier to the host.
    pub fn record_readback(&self, cmd: vk::CommandBuffer, buffer: &Buffer) {
        let d = &self.device;
        let region = vk::BufferImageCopy::default()
            .image_subresource(
                vk::ImageSubresourceLayers::default().aspect_mask(vk::ImageAspectFlags::COLOR).layer_count(1),
            )
            .image_extent(self.extent);
        let to_transfer = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(vk::AccessFlags::TRANSFER_READ);
        let to_host = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ);
        // SAFETY: cmd is recording on this device; buffer is large enough (callers size it).
        unsafe {
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[to_transfer],
                &[],
                &[],
            );
            d.cmd_copy_image_to_buffer(cmd, self.handle, vk::ImageLayout::GENERAL, buffer.handle, &[region]);
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[to_host],
                &[],
                &[],
            );
        }
    }

    /// Texel count (all 32-bit formats here).
    pub fn texels(&self) -> u64 {
        u64::from(self.extent.width) * u64::from(self.extent.height) * u64::from(self.extent.depth)
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        // SAFETY: no submission using the image is pending; null handles are ignored.
        unsafe {
            self.device.destroy_image_view(self.view, None);
            self.device.destroy_image(self.handle, None);
            self.device.free_memory(self.memory, None);
        }
    }
}
