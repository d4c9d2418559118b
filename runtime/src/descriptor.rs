//! Descriptor set layouts, pools and sets. A set is an array of 64-byte descriptor records in
//! device memory (`abi::kernel::desc`); the kernel finds it through the kernel-argument block
//! and reads descriptors when it runs, so updates made after binding are seen (update-after-
//! bind comes for free).

use crate::memory::Memory;
use crate::{vk, VkResult};
use parking_lot::Mutex;
use std::sync::Arc;
use vortex_model::abi::kernel::{desc, ImageDesc};
use vortex_model::abi::{wr_u64, MAX_THREADS};
use vortex_model::mem::AddressSpace;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingLayout {
    pub binding: u32,
    pub ty: vk::DescriptorType,
    pub count: u32,
    /// Byte offset of the binding's first descriptor inside the set.
    pub offset: u32,
    /// Index among the set's dynamic buffers, for the dynamic-buffer types.
    pub dynamic_index: Option<u32>,
}

pub struct SetLayout {
    pub bindings: Vec<BindingLayout>,
    pub size: u32,
    pub dynamic_count: u32,
}

impl SetLayout {
    /// Lays bindings out in binding order, each `count` records long.
    pub fn new(mut raw: Vec<(u32, vk::DescriptorType, u32)>) -> SetLayout {
        raw.sort_by_key(|b| b.0);
        let mut offset = 0u32;
        let mut dynamic = 0u32;
        let bindings = raw
            .into_iter()
            .map(|(binding, ty, count)| {
                let is_dyn = matches!(
                    ty,
                    vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC
                );
                let dynamic_index = is_dyn.then(|| {
                    dynamic += count;
                    dynamic - count
                });
                let b = BindingLayout { binding, ty, count, offset, dynamic_index };
                offset += count * desc::BYTES as u32;
                b
            })
            .collect();
        SetLayout { bindings, size: offset, dynamic_count: dynamic }
    }

    pub fn binding(&self, binding: u32) -> Option<&BindingLayout> {
        self.bindings.iter().find(|b| b.binding == binding)
    }
}

pub struct DescriptorSet {
    pub layout: Arc<SetLayout>,
    memory: Memory,
}

impl DescriptorSet {
    pub fn new(space: &Arc<AddressSpace>, layout: Arc<SetLayout>) -> VkResult<DescriptorSet> {
        let memory = Memory::allocate(space, (layout.size as u64).max(desc::BYTES as u64))?;
        Ok(DescriptorSet { layout, memory })
    }

    pub fn address(&self) -> u64 {
        self.memory.address(0)
    }

    /// Byte offset of the record of `element` of `binding`, walking into following bindings
    /// the way descriptor writes with more descriptors than the binding holds do.
    fn record(&self, binding: u32, element: u32) -> VkResult<usize> {
        let mut idx = self.layout.bindings.iter().position(|b| b.binding == binding).ok_or_else(|| {
            tracing::error!("descriptor write to binding {binding}, which the set layout does not have");
            vk::Result::ERROR_UNKNOWN
        })?;
        let mut el = element;
        while el >= self.layout.bindings[idx].count {
            el -= self.layout.bindings[idx].count;
            idx += 1;
            if idx >= self.layout.bindings.len() {
                tracing::error!("descriptor write past the end of the set (binding {binding}, element {element})");
                return Err(vk::Result::ERROR_UNKNOWN);
            }
        }
        Ok(self.layout.bindings[idx].offset as usize + el as usize * desc::BYTES)
    }

    fn store(&self, off: usize, rec: &[u8; desc::BYTES]) {
        // SAFETY: `off + desc::BYTES <= layout.size <= memory.size` (from `record`); the host
        // writes descriptor memory like any mapped memory, and Vulkan requires the
        // application to synchronise updates with device use.
        unsafe { std::ptr::copy_nonoverlapping(rec.as_ptr(), self.memory.host_ptr(off as u64), desc::BYTES) };
    }

    fn load(&self, off: usize) -> [u8; desc::BYTES] {
        let mut rec = [0u8; desc::BYTES];
        // SAFETY: as in `store`, for a read.
        unsafe { std::ptr::copy_nonoverlapping(self.memory.host_ptr(off as u64), rec.as_mut_ptr(), desc::BYTES) };
        rec
    }

    pub fn write_buffer(&self, binding: u32, element: u32, addr: u64, range: u64) -> VkResult<()> {
        let off = self.record(binding, element)?;
        let mut rec = [0u8; desc::BYTES];
        wr_u64(&mut rec, desc::BUF_ADDR, addr);
        wr_u64(&mut rec, desc::BUF_RANGE, range);
        self.store(off, &rec);
        Ok(())
    }

    pub fn write_image(&self, binding: u32, element: u32, d: &ImageDesc) -> VkResult<()> {
        let off = self.record(binding, element)?;
        let mut rec = [0u8; desc::BYTES];
        d.write(&mut rec);
        self.store(off, &rec);
        Ok(())
    }

    pub fn write_accel(&self, binding: u32, element: u32, addr: u64) -> VkResult<()> {
        let off = self.record(binding, element)?;
        let mut rec = [0u8; desc::BYTES];
        wr_u64(&mut rec, desc::AS_ADDR, addr);
        self.store(off, &rec);
        Ok(())
    }

    /// Copies `count` records (vkUpdateDescriptorSets copies).
    pub fn copy_from(
        &self,
        dst_binding: u32,
        dst_el: u32,
        src: &DescriptorSet,
        src_binding: u32,
        src_el: u32,
        count: u32,
    ) -> VkResult<()> {
        for i in 0..count {
            let rec = src.load(src.record(src_binding, src_el + i)?);
            self.store(self.record(dst_binding, dst_el + i)?, &rec);
        }
        Ok(())
    }
}

/// A descriptor pool owns the sets allocated from it.
#[derive(Default)]
pub struct DescriptorPool {
    pub sets: Mutex<Vec<Arc<DescriptorSet>>>,
    pub max_sets: u32,
}

impl DescriptorPool {
    pub fn new(max_sets: u32) -> DescriptorPool {
        DescriptorPool { sets: Mutex::new(Vec::new()), max_sets }
    }

    pub fn allocate(&self, space: &Arc<AddressSpace>, layout: Arc<SetLayout>) -> VkResult<Arc<DescriptorSet>> {
        let mut sets = self.sets.lock();
        if sets.len() as u32 >= self.max_sets {
            return Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY);
        }
        let s = Arc::new(DescriptorSet::new(space, layout)?);
        sets.push(s.clone());
        Ok(s)
    }

    /// Removes a set; returns false if it is not from this pool.
    pub fn free(&self, set: *const DescriptorSet) -> bool {
        let mut sets = self.sets.lock();
        let before = sets.len();
        sets.retain(|s| !std::ptr::eq(Arc::as_ptr(s), set));
        sets.len() != before
    }

    pub fn reset(&self) {
        self.sets.lock().clear();
    }
}

// Compile-time reminder that lane masks are 32 bits: descriptor arrays indexed per lane never
// need more than one record per lane in flight.
const _: () = assert!(MAX_THREADS <= 32);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_orders_bindings_and_numbers_dynamic_buffers() {
        let l = SetLayout::new(vec![
            (3, vk::DescriptorType::STORAGE_BUFFER_DYNAMIC, 2),
            (0, vk::DescriptorType::ACCELERATION_STRUCTURE_KHR, 1),
            (1, vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC, 1),
        ]);
        assert_eq!(l.bindings[0].binding, 0);
        assert_eq!(l.bindings[1].offset, 64);
        assert_eq!(l.bindings[1].dynamic_index, Some(0));
        assert_eq!(l.bindings[2].dynamic_index, Some(1));
        assert_eq!(l.dynamic_count, 3);
        assert_eq!(l.size, 4 * 64);
    }

    #[test]
    fn writes_land_in_device_memory() {
        let space = Arc::new(AddressSpace::new());
        let l = Arc::new(SetLayout::new(vec![
            (0, vk::DescriptorType::STORAGE_BUFFER, 2),
            (1, vk::DescriptorType::STORAGE_BUFFER, 1),
        ]));
        let s = DescriptorSet::new(&space, l).unwrap();
        s.write_buffer(0, 1, 0x1234, 64).unwrap();
        // Element 2 of binding 0 rolls over into binding 1.
        s.write_buffer(0, 2, 0x5678, 8).unwrap();
        let m = space.snapshot();
        assert_eq!(m.read_u64(s.address() + 64).unwrap(), 0x1234);
        assert_eq!(m.read_u64(s.address() + 128).unwrap(), 0x5678);
        assert!(s.write_buffer(0, 3, 0, 0).is_err());
    }
}
