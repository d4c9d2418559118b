//! Buffers in host-visible, host-coherent memory with a device address. Everything the
//! examples share with the device (geometry, instances, scratch, results) lives in such a
//! buffer, mapped for its whole life, so uploads and readbacks are plain memory copies.

use crate::context::{Context, Shared};
use crate::error::{Error, Result, VkResultExt};
use ash::vk;
use std::rc::Rc;

pub struct Buffer {
    shared: Rc<Shared>,
    handle: vk::Buffer,
    memory: vk::DeviceMemory,
    size: u64,
    mapped: *mut u8,
    address: vk::DeviceAddress,
}

impl Buffer {
    /// A zero-filled buffer of `size` bytes. SHADER_DEVICE_ADDRESS is always added to `usage`.
    pub fn new(ctx: &Context, size: u64, usage: vk::BufferUsageFlags) -> Result<Self> {
        Self::create(ctx, size, usage, true)
    }

    /// A buffer whose contents are whatever the driver's new memory holds: for memory the
    /// device writes before anything reads it (acceleration-structure storage, build
    /// scratch), where clearing would only cost time.
    pub fn for_device_writes(ctx: &Context, size: u64, usage: vk::BufferUsageFlags) -> Result<Self> {
        Self::create(ctx, size, usage, false)
    }

    fn create(ctx: &Context, size: u64, usage: vk::BufferUsageFlags, zero: bool) -> Result<Self> {
        let shared = ctx.shared.clone();
        let device = &shared.device;
        let info = vk::BufferCreateInfo::default()
            .size(size.max(1))
            .usage(usage | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        let handle = unsafe { device.create_buffer(&info, None) }.vk("vkCreateBuffer")?;
        let destroy_buffer = || unsafe { device.destroy_buffer(handle, None) };
        let memory = match allocate_and_bind(&shared, handle) {
            Ok(memory) => memory,
            Err(e) => {
                destroy_buffer();
                return Err(e);
            }
        };
        // SAFETY: the memory is host-visible, bound, and not mapped yet.
        let mapped = match unsafe { device.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) } {
            Ok(ptr) => ptr.cast::<u8>(),
            Err(result) => {
                destroy_buffer();
                unsafe { device.free_memory(memory, None) };
                return Err(Error::Vulkan { call: "vkMapMemory", result });
            }
        };
        if zero {
            // SAFETY: the mapping covers at least `size` bytes.
            unsafe { mapped.write_bytes(0, size as usize) };
        }
        let address_info = vk::BufferDeviceAddressInfo::default().buffer(handle);
        // SAFETY: the buffer has SHADER_DEVICE_ADDRESS usage and its memory the matching flag.
        let address = unsafe { device.get_buffer_device_address(&address_info) };
        Ok(Buffer { shared, handle, memory, size, mapped, address })
    }

    /// A buffer holding a copy of `data`.
    pub fn with_data<T: bytemuck::NoUninit>(ctx: &Context, data: &[T], usage: vk::BufferUsageFlags) -> Result<Self> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let buffer = Self::new(ctx, bytes.len() as u64, usage)?;
        // SAFETY: the mapping holds `size` = bytes.len() bytes and does not alias `data`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer.mapped, bytes.len()) };
        Ok(buffer)
    }

    /// The whole buffer read back as `T`s (a trailing partial `T` is ignored).
    ///
    /// Only meaningful once the device writes are finished and made visible to the host.
    pub fn read<T: bytemuck::Pod>(&self) -> Vec<T> {
        let count = self.size as usize / std::mem::size_of::<T>();
        let mut out = vec![T::zeroed(); count];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
        // SAFETY: the mapping holds `size` >= bytes.len() bytes; `out` is a separate allocation.
        unsafe { std::ptr::copy_nonoverlapping(self.mapped, bytes.as_mut_ptr(), bytes.len()) };
        out
    }

    /// Overwrites the start of the buffer with `data` (through the host mapping).
    pub fn write<T: bytemuck::NoUninit>(&self, data: &[T]) {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        assert!(bytes.len() as u64 <= self.size, "write of {} bytes into a {}-byte buffer", bytes.len(), self.size);
        // SAFETY: the mapping holds `size` >= bytes.len() bytes and does not alias `data`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.mapped, bytes.len()) };
    }

    pub fn handle(&self) -> vk::Buffer {
        self.handle
    }

    pub fn address(&self) -> vk::DeviceAddress {
        self.address
    }

    pub fn size(&self) -> u64 {
        self.size
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the owner no longer uses the buffer; submissions are waited for before
        // `submit_once` returns.
        unsafe {
            self.shared.device.destroy_buffer(self.handle, None);
            self.shared.device.free_memory(self.memory, None);
        }
    }
}

/// Allocates device-address-capable, host-visible, coherent memory for `buffer` and binds it.
fn allocate_and_bind(shared: &Shared, buffer: vk::Buffer) -> Result<vk::DeviceMemory> {
    let device = &shared.device;
    // SAFETY: valid buffer.
    let req = unsafe { device.get_buffer_memory_requirements(buffer) };
    let type_index = host_visible_memory_type(&shared.memory_properties, req.memory_type_bits)
        .ok_or_else(|| Error::msg("the device has no host-visible, host-coherent memory type for a buffer"))?;
    let mut flags = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
    let info =
        vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(type_index).push_next(&mut flags);
    // SAFETY: valid device and allocate info.
    let memory = unsafe { device.allocate_memory(&info, None) }.vk("vkAllocateMemory")?;
    // SAFETY: fresh memory of the required size and type, offset 0 satisfies any alignment.
    if let Err(result) = unsafe { device.bind_buffer_memory(buffer, memory, 0) } {
        unsafe { device.free_memory(memory, None) };
        return Err(Error::Vulkan { call: "vkBindBufferMemory", result });
    }
    Ok(memory)
}

/// Prefers memory that is also device-local (fast for a discrete GPU, the only kind on
/// unified-memory drivers such as lavapipe or ours).
fn host_visible_memory_type(props: &vk::PhysicalDeviceMemoryProperties, allowed: u32) -> Option<u32> {
    let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    let types = &props.memory_types[..props.memory_type_count as usize];
    let find = |wanted: vk::MemoryPropertyFlags| {
        (0..types.len() as u32).find(|&i| allowed & (1 << i) != 0 && types[i as usize].property_flags.contains(wanted))
    };
    find(host | vk::MemoryPropertyFlags::DEVICE_LOCAL).or_else(|| find(host))
}
