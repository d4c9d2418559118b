//! Device memory: a 64-bit device address space whose regions are backed by host memory.
//!
//! Every `VkDeviceMemory` is one [`Region`]: a zeroed, 64-byte-aligned host allocation mapped at
//! a device address. `vkMapMemory` hands the application a pointer into the same host
//! allocation, so what the host writes is what the device reads (one coherent, cached memory
//! type). Device addresses are never reused: a stale address into freed memory faults
//! instead of reading someone else's data, and every region is followed by an unmapped
//! guard gap so a run past its end faults too.
//!
//! Every device access goes through [`MemoryMap`], which translates and bounds-checks it; an
//! access outside any region is a [`MemFault`], never a host crash. A dispatch works on an
//! immutable snapshot of the map (`Arc<MemoryMap>`), which also keeps every backing alive
//! until the dispatch ends, even if the application frees the memory meanwhile.

use parking_lot::{Mutex, RwLock};
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::Arc;

/// First device address handed out (keeps small integers and null far from any region).
pub const VA_BASE: u64 = 0x0000_0001_0000_0000;
/// Region alignment and guard gap.
pub const VA_GRANULE: u64 = 64 * 1024;
/// Largest single allocation.
pub const MAX_ALLOCATION: u64 = 1 << 40;

/// What went wrong with a device access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemFaultKind {
    /// No region covers the whole access.
    Unmapped,
    /// An atomic or wide access at an address not aligned to its size.
    Misaligned,
}

/// A faulting device access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemFault {
    pub addr: u64,
    pub size: u64,
    pub kind: MemFaultKind,
}

impl std::fmt::Display for MemFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            MemFaultKind::Unmapped => {
                write!(f, "{}-byte access at unmapped device address {:#x}", self.size, self.addr)
            }
            MemFaultKind::Misaligned => {
                write!(f, "{}-byte access at misaligned device address {:#x}", self.size, self.addr)
            }
        }
    }
}

/// Host memory behind a region.
pub struct Backing {
    /// The first byte, [`HOST_ALIGN`]-aligned, inside the allocation.
    ptr: NonNull<u8>,
    len: usize,
    /// The allocation as made (freed in `Drop`).
    alloc: NonNull<u8>,
    layout: Layout,
}

/// Alignment of a region's host memory: `minMemoryMapAlignment` (64) and a cache line.
pub const HOST_ALIGN: usize = 64;

// SAFETY: a Backing is a plain heap allocation that outlives every reference to it (it is
// only freed in Drop, when the last Arc goes). Concurrent accesses through it are the same
// races real device memory has: the Vulkan application must synchronise host and device
// accesses, and shaders that race on one location get an undefined value, not UB in the
// driver's own data structures (which never live in device memory).
unsafe impl Send for Backing {}
unsafe impl Sync for Backing {}

impl Backing {
    fn new(len: usize) -> Option<Backing> {
        // Allocated with the allocator's natural alignment and aligned here: a zeroed
        // allocation of that alignment is `calloc`, which hands out fresh (already zero)
        // pages for large sizes without writing them, where an over-aligned one is
        // allocated and then cleared byte by byte.
        let layout = Layout::from_size_align(len.max(1) + HOST_ALIGN, 16).ok()?;
        // SAFETY: layout has non-zero size.
        let alloc = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
        let pad = alloc.as_ptr().align_offset(HOST_ALIGN);
        // SAFETY: pad < HOST_ALIGN, so `[pad, pad + len)` lies inside the allocation.
        let ptr = unsafe { NonNull::new_unchecked(alloc.as_ptr().add(pad)) };
        Some(Backing { ptr, len, alloc, layout })
    }

    /// Host pointer to the first byte (what `vkMapMemory` returns, plus the offset).
    pub fn host_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Backing {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this exact layout, freed once.
        unsafe { std::alloc::dealloc(self.alloc.as_ptr(), self.layout) }
    }
}

/// One mapped range of device addresses.
#[derive(Clone)]
pub struct Region {
    pub base: u64,
    pub len: u64,
    pub backing: Arc<Backing>,
}

impl Region {
    #[inline]
    pub fn contains(&self, addr: u64, size: u64) -> bool {
        addr >= self.base && addr.checked_add(size).is_some_and(|end| end <= self.base + self.len)
    }
}

/// An immutable view of the address space.
#[derive(Clone, Default)]
pub struct MemoryMap {
    regions: Vec<Region>,
}

impl MemoryMap {
    /// The region covering `[addr, addr+size)`, if one does.
    #[inline]
    pub fn region(&self, addr: u64, size: u64) -> Option<&Region> {
        let i = self.regions.partition_point(|r| r.base <= addr);
        if i == 0 {
            return None;
        }
        let r = &self.regions[i - 1];
        r.contains(addr, size).then_some(r)
    }

    /// Host pointer for `[addr, addr+size)`, checked.
    #[inline]
    pub fn host_ptr(&self, addr: u64, size: u64) -> Result<*mut u8, MemFault> {
        match self.region(addr, size) {
            // SAFETY: the range lies inside the backing (checked by `region`).
            Some(r) => Ok(unsafe { r.backing.host_ptr().add((addr - r.base) as usize) }),
            None => Err(MemFault { addr, size, kind: MemFaultKind::Unmapped }),
        }
    }

    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemFault> {
        let p = self.host_ptr(addr, out.len() as u64)?;
        // SAFETY: `p` covers out.len() bytes of a live backing; `out` is a distinct host
        // buffer, so the ranges cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        let p = self.host_ptr(addr, data.len() as u64)?;
        // SAFETY: as in `read`; `data` is a host buffer distinct from device memory.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
        Ok(())
    }

    /// Copies within device memory (ranges may overlap).
    pub fn copy(&self, dst: u64, src: u64, len: u64) -> Result<(), MemFault> {
        let s = self.host_ptr(src, len)?;
        let d = self.host_ptr(dst, len)?;
        // SAFETY: both ranges are checked; `copy` tolerates overlap.
        unsafe { std::ptr::copy(s, d, len as usize) };
        Ok(())
    }

    pub fn fill(&self, dst: u64, len: u64, word: u32) -> Result<(), MemFault> {
        let d = self.host_ptr(dst, len)?;
        let bytes = word.to_le_bytes();
        for i in 0..len as usize {
            // SAFETY: i < len, inside the checked range.
            unsafe { d.add(i).write(bytes[i % 4]) };
        }
        Ok(())
    }

    #[inline]
    pub fn read_u32(&self, addr: u64) -> Result<u32, MemFault> {
        let p = self.host_ptr(addr, 4)?;
        // SAFETY: 4 checked bytes; unaligned read is allowed.
        Ok(u32::from_le(unsafe { (p as *const u32).read_unaligned() }))
    }

    #[inline]
    pub fn read_u64(&self, addr: u64) -> Result<u64, MemFault> {
        let p = self.host_ptr(addr, 8)?;
        // SAFETY: 8 checked bytes; unaligned read is allowed.
        Ok(u64::from_le(unsafe { (p as *const u64).read_unaligned() }))
    }

    #[inline]
    pub fn write_u32(&self, addr: u64, v: u32) -> Result<(), MemFault> {
        let p = self.host_ptr(addr, 4)?;
        // SAFETY: 4 checked bytes; unaligned write is allowed.
        unsafe { (p as *mut u32).write_unaligned(v.to_le()) };
        Ok(())
    }

    #[inline]
    pub fn write_u64(&self, addr: u64, v: u64) -> Result<(), MemFault> {
        let p = self.host_ptr(addr, 8)?;
        // SAFETY: 8 checked bytes; unaligned write is allowed.
        unsafe { (p as *mut u64).write_unaligned(v.to_le()) };
        Ok(())
    }

    /// The 32-bit word at `addr` as an atomic (device atomics are real host atomics, so
    /// concurrent cores see each other's updates).
    pub fn atomic_u32(&self, addr: u64) -> Result<&AtomicU32, MemFault> {
        if !addr.is_multiple_of(4) {
            return Err(MemFault { addr, size: 4, kind: MemFaultKind::Misaligned });
        }
        let p = self.host_ptr(addr, 4)?;
        // SAFETY: aligned, in bounds, and the backing lives as long as `self`.
        Ok(unsafe { AtomicU32::from_ptr(p as *mut u32) })
    }

    pub fn atomic_u64(&self, addr: u64) -> Result<&AtomicU64, MemFault> {
        if !addr.is_multiple_of(8) {
            return Err(MemFault { addr, size: 8, kind: MemFaultKind::Misaligned });
        }
        let p = self.host_ptr(addr, 8)?;
        // SAFETY: aligned, in bounds, and the backing lives as long as `self`.
        Ok(unsafe { AtomicU64::from_ptr(p as *mut u64) })
    }

    /// Reads `N` bytes into an array (node lines, headers).
    pub fn read_array<const N: usize>(&self, addr: u64) -> Result<[u8; N], MemFault> {
        let mut b = [0u8; N];
        self.read(addr, &mut b)?;
        Ok(b)
    }

    pub fn regions(&self) -> &[Region] {
        &self.regions
    }
}

/// The device's address space: allocation and the current map.
pub struct AddressSpace {
    map: RwLock<Arc<MemoryMap>>,
    next_va: Mutex<u64>,
}

impl Default for AddressSpace {
    fn default() -> Self {
        Self::new()
    }
}

impl AddressSpace {
    pub fn new() -> AddressSpace {
        AddressSpace { map: RwLock::new(Arc::new(MemoryMap::default())), next_va: Mutex::new(VA_BASE) }
    }

    /// Maps a new zeroed region of `size` bytes. `None` if the host cannot back it.
    pub fn allocate(&self, size: u64) -> Option<Region> {
        if size == 0 || size > MAX_ALLOCATION {
            return None;
        }
        let backing = Arc::new(Backing::new(usize::try_from(size).ok()?)?);
        let base = {
            let mut next = self.next_va.lock();
            let base = *next;
            let span = size.div_ceil(VA_GRANULE) * VA_GRANULE;
            *next = base + span + VA_GRANULE;
            base
        };
        let region = Region { base, len: size, backing };
        let mut map = self.map.write();
        let mut regions = map.regions.clone();
        let at = regions.partition_point(|r| r.base < base);
        regions.insert(at, region.clone());
        *map = Arc::new(MemoryMap { regions });
        Some(region)
    }

    /// Maps a new zeroed region at a chosen device address (a replay restoring recorded
    /// memory where it was: `rt_replay`). Refuses a range that overlaps a mapped region.
    /// Addresses handed out by [`allocate`](Self::allocate) afterwards stay above it.
    pub fn allocate_at(&self, base: u64, size: u64) -> Result<Region, String> {
        let end = base.checked_add(size).filter(|_| size > 0 && size <= MAX_ALLOCATION);
        let Some(end) = end else {
            return Err(format!("cannot map {size} bytes at {base:#x}"));
        };
        let backing = Arc::new(
            usize::try_from(size)
                .ok()
                .and_then(Backing::new)
                .ok_or_else(|| format!("cannot back {size} bytes of host memory"))?,
        );
        let region = Region { base, len: size, backing };
        let mut map = self.map.write();
        if map.regions.iter().any(|r| r.base < end && base < r.base + r.len) {
            return Err(format!("{base:#x}..{end:#x} overlaps a mapped region"));
        }
        let mut regions = map.regions.clone();
        let at = regions.partition_point(|r| r.base < base);
        regions.insert(at, region.clone());
        *map = Arc::new(MemoryMap { regions });
        let mut next = self.next_va.lock();
        *next = (*next).max((end.div_ceil(VA_GRANULE) + 1).saturating_mul(VA_GRANULE));
        Ok(region)
    }

    /// Unmaps the region at `base`. Snapshots taken earlier keep the backing alive.
    pub fn free(&self, base: u64) {
        let mut map = self.map.write();
        let mut regions = map.regions.clone();
        regions.retain(|r| r.base != base);
        *map = Arc::new(MemoryMap { regions });
    }

    /// The current map.
    pub fn snapshot(&self) -> Arc<MemoryMap> {
        self.map.read().clone()
    }

    /// Bytes currently mapped.
    pub fn mapped_bytes(&self) -> u64 {
        self.map.read().regions.iter().map(|r| r.len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn allocate_read_write_and_fault() {
        let space = AddressSpace::new();
        let a = space.allocate(100).unwrap();
        let b = space.allocate(4096).unwrap();
        assert!(b.base >= a.base + VA_GRANULE, "regions are separated by a guard gap");
        let m = space.snapshot();
        m.write_u32(a.base + 96, 0xABCD_1234).unwrap();
        assert_eq!(m.read_u32(a.base + 96).unwrap(), 0xABCD_1234);
        // One byte past the end faults.
        let f = m.read_u32(a.base + 97).unwrap_err();
        assert_eq!(f.kind, MemFaultKind::Unmapped);
        assert!(m.read_u32(0).is_err());
        assert!(m.read_u32(u64::MAX - 1).is_err());
        // Mapped pointer aliases device memory.
        // SAFETY: in-bounds write through the host mapping of a live region.
        unsafe { b.backing.host_ptr().add(8).cast::<u32>().write_unaligned(77) };
        assert_eq!(m.read_u32(b.base + 8).unwrap(), 77);
    }

    #[test]
    fn freed_memory_faults_but_old_snapshots_stay_valid() {
        let space = AddressSpace::new();
        let a = space.allocate(64).unwrap();
        let old = space.snapshot();
        space.free(a.base);
        assert!(space.snapshot().read_u32(a.base).is_err());
        assert!(old.read_u32(a.base).is_ok());
        // Addresses are not reused.
        let c = space.allocate(64).unwrap();
        assert_ne!(c.base, a.base);
    }

    #[test]
    fn atomics_require_alignment() {
        let space = AddressSpace::new();
        let a = space.allocate(64).unwrap();
        let m = space.snapshot();
        assert_eq!(m.atomic_u32(a.base + 2).unwrap_err().kind, MemFaultKind::Misaligned);
        m.atomic_u32(a.base + 4).unwrap().fetch_add(5, Ordering::Relaxed);
        assert_eq!(m.read_u32(a.base + 4).unwrap(), 5);
    }
}
