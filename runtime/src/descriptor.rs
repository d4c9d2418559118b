//! Descriptor set layouts, pools and sets. A set is an array of 64-byte descriptor records in
//! device memory (`abi::kernel::desc`); the kernel finds it through the kernel-argument block
//! and reads descriptors when it runs, so updates made after binding are seen (update-after-
//! bind comes for free).
//!
//! A descriptor is one record, except a combined image sampler: its image record, then its
//! sampler record (`desc::records`). Sampled images and input attachments are image records
//! with the mip fields of `abi::gfx::image`; samplers are `abi::gfx::sampler` records. A
//! binding's immutable samplers are written into every set allocated with the layout, and
//! descriptor writes leave them in place.

use crate::memory::Memory;
use crate::sampler::Sampler;
use crate::{vk, VkResult};
use parking_lot::Mutex;
use std::sync::Arc;
use vortex_model::abi::kernel::{desc, ImageDesc};
use vortex_model::abi::{wr_u64, MAX_THREADS};
use vortex_model::mem::AddressSpace;

/// Records one descriptor of type `ty` occupies (`abi::kernel::desc::records`).
pub fn records(ty: vk::DescriptorType) -> u32 {
    desc::records(ty.as_raw() as u32)
}

/// Whether descriptors of type `ty` hold a sampler record (after the image record for a
/// combined image sampler).
fn has_sampler(ty: vk::DescriptorType) -> bool {
    matches!(ty, vk::DescriptorType::SAMPLER | vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
}

/// One binding of `VkDescriptorSetLayoutCreateInfo`.
#[derive(Clone)]
pub struct LayoutBinding {
    pub binding: u32,
    pub ty: vk::DescriptorType,
    pub count: u32,
    /// `pImmutableSamplers` (empty, or `count` samplers).
    pub immutable: Vec<Arc<Sampler>>,
}

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
    /// Immutable sampler records, at their byte offsets in the set.
    immutable: Vec<(usize, [u8; desc::BYTES])>,
}

impl SetLayout {
    /// Lays bindings out in binding order, each `count` descriptors long.
    pub fn new(raw: Vec<(u32, vk::DescriptorType, u32)>) -> SetLayout {
        SetLayout::with_bindings(
            raw.into_iter()
                .map(|(binding, ty, count)| LayoutBinding { binding, ty, count, immutable: vec![] })
                .collect(),
        )
    }

    /// Lays bindings out in binding order, each `count * records(ty)` records long.
    pub fn with_bindings(mut raw: Vec<LayoutBinding>) -> SetLayout {
        raw.sort_by_key(|b| b.binding);
        let mut offset = 0u32;
        let mut dynamic = 0u32;
        let mut immutable = Vec::new();
        let mut bindings = Vec::with_capacity(raw.len());
        for b in raw {
            let is_dyn =
                matches!(b.ty, vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC);
            let dynamic_index = is_dyn.then(|| {
                dynamic += b.count;
                dynamic - b.count
            });
            let stride = records(b.ty) as usize * desc::BYTES;
            if has_sampler(b.ty) {
                // The sampler record is the descriptor's last.
                let at = offset as usize + stride - desc::BYTES;
                immutable.extend(
                    b.immutable.iter().take(b.count as usize).enumerate().map(|(i, s)| (at + i * stride, s.record)),
                );
            }
            bindings.push(BindingLayout { binding: b.binding, ty: b.ty, count: b.count, offset, dynamic_index });
            offset += b.count * stride as u32;
        }
        SetLayout { bindings, size: offset, dynamic_count: dynamic, immutable }
    }

    /// Whether the sampler records of `binding` are immutable.
    fn immutable_samplers(&self, b: &BindingLayout) -> bool {
        let end = b.offset as usize + b.count as usize * records(b.ty) as usize * desc::BYTES;
        self.immutable.iter().any(|(at, _)| (b.offset as usize..end).contains(at))
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
        let set = DescriptorSet { layout, memory };
        for (at, rec) in &set.layout.immutable {
            set.store(*at, rec);
        }
        Ok(set)
    }

    pub fn address(&self) -> u64 {
        self.memory.address(0)
    }

    /// The binding `element` of `binding` falls in, walking into following bindings the way
    /// descriptor writes with more descriptors than the binding holds do, and the byte offset
    /// of the descriptor's first record.
    fn locate(&self, binding: u32, element: u32) -> VkResult<(&BindingLayout, usize)> {
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
        let b = &self.layout.bindings[idx];
        Ok((b, b.offset as usize + el as usize * records(b.ty) as usize * desc::BYTES))
    }

    fn record(&self, binding: u32, element: u32) -> VkResult<usize> {
        Ok(self.locate(binding, element)?.1)
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

    /// A sampled image or input attachment: the view's image record with its mip fields
    /// (`ImageView::sampled_record`). For a combined image sampler this is the image half.
    pub fn write_sampled_image(&self, binding: u32, element: u32, rec: &[u8; desc::BYTES]) -> VkResult<()> {
        let off = self.record(binding, element)?;
        self.store(off, rec);
        Ok(())
    }

    /// Whether the descriptor at `element` of `binding` has an immutable sampler (whose
    /// writes ignore the sampler handle, which need not be valid).
    pub fn sampler_is_immutable(&self, binding: u32, element: u32) -> VkResult<bool> {
        let (b, _) = self.locate(binding, element)?;
        Ok(has_sampler(b.ty) && self.layout.immutable_samplers(b))
    }

    /// The sampler half of a sampler or combined-image-sampler descriptor; a binding with
    /// immutable samplers keeps its own.
    pub fn write_sampler(&self, binding: u32, element: u32, s: &Sampler) -> VkResult<()> {
        let (b, off) = self.locate(binding, element)?;
        if !has_sampler(b.ty) {
            tracing::error!("sampler written to binding {} of type {:?}", b.binding, b.ty);
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        if !self.layout.immutable_samplers(b) {
            self.store(off + (records(b.ty) as usize - 1) * desc::BYTES, &s.record);
        }
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
            let (sb, s_off) = src.locate(src_binding, src_el + i)?;
            let (db, d_off) = self.locate(dst_binding, dst_el + i)?;
            let n = records(sb.ty).min(records(db.ty)) as usize;
            // A destination with immutable samplers keeps them.
            let keep = has_sampler(db.ty) && self.layout.immutable_samplers(db);
            for r in 0..n {
                if keep && r == records(db.ty) as usize - 1 {
                    continue;
                }
                let rec = src.load(s_off + r * desc::BYTES);
                self.store(d_off + r * desc::BYTES, &rec);
            }
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
    fn combined_image_samplers_take_two_records_and_keep_immutable_samplers() {
        use crate::sampler::SamplerDesc;
        assert_eq!(vk::DescriptorType::COMBINED_IMAGE_SAMPLER.as_raw() as u32, desc::COMBINED_IMAGE_SAMPLER);
        let fixed =
            Arc::new(Sampler::new(SamplerDesc { mag_filter: vk::Filter::LINEAR, ..Default::default() }).unwrap());
        let other = Sampler::new(SamplerDesc::default()).unwrap();
        let l = Arc::new(SetLayout::with_bindings(vec![
            LayoutBinding { binding: 0, ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER, count: 2, immutable: vec![] },
            LayoutBinding {
                binding: 1,
                ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
                count: 1,
                immutable: vec![fixed.clone()],
            },
            LayoutBinding { binding: 2, ty: vk::DescriptorType::SAMPLER, count: 1, immutable: vec![fixed.clone()] },
            LayoutBinding { binding: 3, ty: vk::DescriptorType::SAMPLED_IMAGE, count: 1, immutable: vec![] },
        ]));
        assert_eq!(l.bindings.iter().map(|b| b.offset).collect::<Vec<_>>(), [0, 256, 384, 448]);
        assert_eq!(l.size, 512);
        let space = Arc::new(AddressSpace::new());
        let s = DescriptorSet::new(&space, l).unwrap();
        let m = space.snapshot();
        let rd = |off: u64| m.read_array::<{ desc::BYTES }>(s.address() + off).unwrap();
        // Immutable samplers are there from allocation, in the sampler half.
        assert_eq!(rd(256 + 64), fixed.record);
        assert_eq!(rd(384), fixed.record);
        // Element 1 of binding 0: image at 128, sampler at 192.
        let mut img = [0u8; desc::BYTES];
        img[0] = 0xAB;
        s.write_sampled_image(0, 1, &img).unwrap();
        s.write_sampler(0, 1, &other).unwrap();
        assert_eq!(rd(128)[0], 0xAB);
        assert_eq!(rd(192), other.record);
        // Writes leave immutable samplers alone.
        s.write_sampler(1, 0, &other).unwrap();
        s.write_sampler(2, 0, &other).unwrap();
        assert_eq!(rd(256 + 64), fixed.record);
        assert_eq!(rd(384), fixed.record);
        assert!(s.write_sampler(3, 0, &other).is_err(), "a sampled image has no sampler half");
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
