//! Sparse binding (`VK_BUFFER_CREATE_SPARSE_BINDING_BIT`, `vkQueueBindSparse`).
//!
//! A sparse buffer owns a reservation of device addresses from its creation (so its address
//! is known before anything is bound) and gives it back when destroyed. `vkQueueBindSparse`
//! becomes a submission whose stream is one `SPARSE_BIND` operation per batch: the command
//! processor binds (or unbinds) the pages when it reaches it, after everything submitted
//! earlier and before anything submitted later, between the batch's semaphore waits and its
//! signals, like any other queue operation. The binds are checked when the application makes
//! the call, so playing them cannot fail.

use crate::buffer::Buffer;
use crate::memory::Memory;
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::abi::PAGE_BYTES;
use vortex_model::fault::{Fault, FaultKind};
use vortex_model::mem::{AddressSpace, MemFault, MemFaultKind, Reservation};

/// A sparse buffer's addresses, released with it.
pub struct Reserved {
    pub res: Reservation,
    space: Arc<AddressSpace>,
}

impl Reserved {
    pub fn new(space: &Arc<AddressSpace>, size: u64) -> VkResult<Reserved> {
        let res = space.reserve(size).ok_or_else(|| {
            tracing::warn!("vkCreateBuffer: cannot reserve {size} bytes of device addresses for a sparse buffer");
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY
        })?;
        Ok(Reserved { res, space: space.clone() })
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        // Streams still using the buffer hold it (and so this), so nothing in flight loses
        // its pages.
        self.space.release(self.res.base);
    }
}

/// One `VkSparseMemoryBind`: `size` bytes of the resource from `resource_offset`, bound to
/// `memory` from its offset, or unbound (`None`).
pub struct MemoryBind {
    pub resource_offset: u64,
    pub size: u64,
    pub memory: Option<(Arc<Memory>, u64)>,
}

/// The binds of one buffer (`VkSparseBufferMemoryBindInfo`), checked.
pub struct BufferBinds {
    buffer: Arc<Buffer>,
    binds: Vec<MemoryBind>,
}

impl BufferBinds {
    /// Checks every bind against the buffer's reservation and the memory it names: offsets
    /// whole pages (the buffer's reported alignment), ranges inside both.
    pub fn new(buffer: Arc<Buffer>, binds: Vec<MemoryBind>) -> VkResult<BufferBinds> {
        let bad = |what: String| {
            tracing::error!("vkQueueBindSparse: {what}");
            Err(vk::Result::ERROR_UNKNOWN)
        };
        let Some(res) = buffer.reservation() else {
            return bad("the buffer was not created with VK_BUFFER_CREATE_SPARSE_BINDING_BIT".into());
        };
        for b in &binds {
            if !b.resource_offset.is_multiple_of(PAGE_BYTES)
                || b.resource_offset.checked_add(b.size).is_none_or(|end| end > res.len)
            {
                return bad(format!(
                    "{} bytes at resource offset {:#x} of a {}-byte sparse buffer (offsets are multiples of {PAGE_BYTES})",
                    b.size, b.resource_offset, res.len
                ));
            }
            if let Some((m, off)) = &b.memory {
                if !off.is_multiple_of(PAGE_BYTES) || off.checked_add(b.size).is_none_or(|end| end > m.size) {
                    return bad(format!(
                        "{} bytes at memory offset {off:#x} of a {}-byte allocation (offsets are multiples of {PAGE_BYTES})",
                        b.size, m.size
                    ));
                }
            }
        }
        Ok(BufferBinds { buffer, binds })
    }

    /// Binds the pages (the command processor, in queue order).
    pub fn apply(&self, space: &AddressSpace) -> Result<(), Fault> {
        let res = self.buffer.reservation().expect("checked to be sparse");
        for b in &self.binds {
            let memory = b.memory.as_ref().map(|(m, off)| (&m.region, *off));
            let at = res.base + b.resource_offset;
            space.bind(res.base, b.resource_offset, b.size, memory).map_err(|e| {
                let fault = MemFault { addr: at, size: b.size, kind: MemFaultKind::Unmapped };
                Fault::new(FaultKind::Memory(fault), format!("sparse bind at {at:#x}: {e}"))
            })?;
        }
        Ok(())
    }
}

/// A `vkQueueBindSparse` batch's buffer binds, in order.
pub struct BindBatch(pub Vec<BufferBinds>);

impl BindBatch {
    pub fn apply(&self, space: &AddressSpace) -> Result<(), Fault> {
        self.0.iter().try_for_each(|b| b.apply(space))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Binds are checked when made (offsets whole pages, ranges inside both sides, a sparse
    /// buffer); applied, they map and unmap the pages; the buffer's end releases its addresses.
    #[test]
    fn binds_are_checked_then_applied() {
        let space = Arc::new(AddressSpace::new());
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let buf = Arc::new(Buffer::new_sparse(&space, 2 * PAGE_BYTES - 100, usage).unwrap());
        let mem = Arc::new(Memory::allocate(&space, 2 * PAGE_BYTES).unwrap());
        let bind = |offset, size, memory: Option<u64>| MemoryBind {
            resource_offset: offset,
            size,
            memory: memory.map(|o| (mem.clone(), o)),
        };
        let refused = |b: MemoryBind| BufferBinds::new(buf.clone(), vec![b]).is_err();
        assert!(refused(bind(100, PAGE_BYTES, Some(0))), "resource offset inside a page");
        assert!(refused(bind(0, PAGE_BYTES, Some(100))), "memory offset inside a page");
        assert!(refused(bind(PAGE_BYTES, 2 * PAGE_BYTES, Some(0))), "past the buffer's pages");
        assert!(refused(bind(0, PAGE_BYTES, Some(2 * PAGE_BYTES))), "past the memory");
        let plain = Arc::new(Buffer::new(64, usage));
        assert!(BufferBinds::new(plain, vec![bind(0, PAGE_BYTES, Some(0))]).is_err(), "not a sparse buffer");

        let base = buf.address();
        let both = vec![bind(0, PAGE_BYTES, Some(PAGE_BYTES)), bind(PAGE_BYTES, PAGE_BYTES, Some(0))];
        BindBatch(vec![BufferBinds::new(buf.clone(), both).unwrap()]).apply(&space).unwrap();
        let m = space.snapshot();
        m.write_u32(base, 5).unwrap();
        assert_eq!(m.read_u32(mem.address(PAGE_BYTES)).unwrap(), 5, "page 0 is the memory's page 1");
        BindBatch(vec![BufferBinds::new(buf.clone(), vec![bind(0, PAGE_BYTES, None)]).unwrap()]).apply(&space).unwrap();
        assert!(space.snapshot().read_u32(base).is_err(), "unbound again");
        assert!(space.snapshot().read_u32(base + PAGE_BYTES).is_ok());
        drop(buf);
        assert!(space.snapshot().read_u32(base + PAGE_BYTES).is_err(), "released with the buffer");
    }
}
