//! Device memory: a 64-bit device address space whose regions are backed by host memory.
//!
//! Every `VkDeviceMemory` is one [`Region`]: a zeroed, 64-byte-aligned host allocation mapped at
//! a device address. `vkMapMemory` hands the application a pointer into the same host
//! allocation, so what the host writes is what the device reads (one coherent, cached memory
//! type). Device addresses are never reused: a stale address into freed memory faults
//! instead of reading someone else's data, and every region is followed by an unmapped
//! guard gap so a run past its end faults too.
//!
//! A sparse resource owns a *reservation* ([`sparse`]): a page-aligned range of addresses
//! with nothing behind it until pages are bound. Binding maps a run of its pages onto a range
//! of some allocation's host memory: one more region, whose host address points into that
//! allocation. So the map stays one sorted list of regions, and an ordinary allocation is
//! found exactly as before; only an access that leaves its region (a page boundary between two
//! bindings) takes the slower path of [`span`], which walks the adjacent regions.
//!
//! Every device access goes through [`MemoryMap`], which translates and bounds-checks it; an
//! access outside any region is a [`MemFault`], never a host crash. A dispatch works on an
//! immutable snapshot of the map (`Arc<MemoryMap>`), which also keeps every backing alive
//! until the dispatch ends, even if the application frees the memory meanwhile.

mod span;
pub mod sparse;

pub use span::DeviceBytesMut;
pub use sparse::Reservation;

use parking_lot::{Mutex, RwLock};
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::Arc;

/// First device address handed out (keeps small integers and null far from any region).
/// Below it lies the null window: with robustness2's null descriptors, what a shader reads
/// there through a null buffer descriptor is zero (see [`MemoryMap::null_descriptor`]).
pub const VA_BASE: u64 = 0x0000_0001_0000_0000;
/// Region alignment and guard gap: one page.
pub const VA_GRANULE: u64 = crate::abi::PAGE_BYTES;
/// Largest single allocation.
pub const MAX_ALLOCATION: u64 = 1 << 40;

/// What went wrong with a device access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemFaultKind {
    /// No region covers the whole access.
    Unmapped,
    /// The access reaches `page`, a page of a sparse resource with no memory bound.
    Unbound { page: u64 },
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
            MemFaultKind::Unbound { page } => write!(
                f,
                "{}-byte access at device address {:#x}: page {page:#x} of a sparse resource has no memory bound",
                self.size, self.addr
            ),
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

/// Bytes of device memory backed in this process: every live [`Backing`] (allocations of
/// every device, kept until the last dispatch that maps them ends). `VK_EXT_memory_budget`
/// reports it as the heap's usage.
static HELD: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Bytes of device memory the process holds now (see [`HELD`]).
pub fn bytes_held() -> u64 {
    HELD.load(std::sync::atomic::Ordering::Relaxed)
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
        HELD.fetch_add(len as u64, std::sync::atomic::Ordering::Relaxed);
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
        HELD.fetch_sub(self.len as u64, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: allocated in `new` with this exact layout, freed once.
        unsafe { std::alloc::dealloc(self.alloc.as_ptr(), self.layout) }
    }
}

/// One mapped range of device addresses: an allocation, or a run of a sparse resource's
/// pages bound to a range of one.
#[derive(Clone)]
pub struct Region {
    pub base: u64,
    pub len: u64,
    /// Host address of `base`: inside `backing` (at the bound offset, for a sparse binding).
    host: NonNull<u8>,
    /// Keeps the host memory alive (and names the allocation a sparse binding came from).
    backing: Arc<Backing>,
}

// SAFETY: `host` points into `backing`, which the region keeps alive and which is itself Send
// and Sync (see `Backing`); the pointer is only a precomputed offset into it.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

impl Region {
    /// A whole allocation.
    fn whole(base: u64, backing: Arc<Backing>) -> Region {
        Region { base, len: backing.len() as u64, host: backing.ptr, backing }
    }

    #[inline]
    pub fn contains(&self, addr: u64, size: u64) -> bool {
        addr >= self.base && addr.checked_add(size).is_some_and(|end| end <= self.base + self.len)
    }

    /// Host address of the region's first byte.
    #[inline]
    pub fn host_ptr(&self) -> *mut u8 {
        self.host.as_ptr()
    }

    pub fn end(&self) -> u64 {
        self.base + self.len
    }

    /// `[from, to)` of this region (`base <= from <= to <= end`), as a region of its own.
    fn part(&self, from: u64, to: u64) -> Region {
        debug_assert!(self.base <= from && from <= to && to <= self.end());
        // SAFETY: `from - base <= len`, so the pointer stays inside the backing (or one past
        // the region's end, for an empty part).
        let host = unsafe { NonNull::new_unchecked(self.host.as_ptr().add((from - self.base) as usize)) };
        Region { base: from, len: to - from, host, backing: self.backing.clone() }
    }
}

/// An immutable view of the address space.
#[derive(Clone, Default)]
pub struct MemoryMap {
    /// Sorted by base, never overlapping.
    regions: Vec<Region>,
    /// Sparse resources' address ranges, sorted by base.
    reservations: Vec<Reservation>,
    /// robustness2's `nullDescriptor` is enabled on the device.
    null_descriptor: bool,
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

    /// Host pointer for `[addr, addr+size)` when one region holds all of it.
    #[inline]
    pub fn host_ptr(&self, addr: u64, size: u64) -> Result<*mut u8, MemFault> {
        match self.region(addr, size) {
            // SAFETY: the range lies inside the region's backing (checked by `region`).
            Some(r) => Ok(unsafe { r.host_ptr().add((addr - r.base) as usize) }),
            None => Err(self.fault(addr, size)),
        }
    }

    /// True if every byte of `[addr, addr+len)` is mapped, in one region or in several
    /// adjacent ones (pages of a sparse resource bound to different memory).
    pub fn covers(&self, addr: u64, len: u64) -> bool {
        self.region(addr, len).is_some() || self.gap(addr, len).is_none()
    }

    /// True if `addr` lies in device memory or in a sparse resource's addresses, bound or
    /// not: an address host commands must treat as a device address, never as a host pointer.
    pub fn is_device(&self, addr: u64) -> bool {
        self.region(addr, 1).is_some() || self.reservation(addr).is_some()
    }

    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemFault> {
        match self.region(addr, out.len() as u64) {
            Some(r) => {
                // SAFETY: `region` checked that `out.len()` bytes at `addr` lie in a live
                // backing; `out` is a distinct host buffer, so the ranges cannot overlap.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        r.host_ptr().add((addr - r.base) as usize),
                        out.as_mut_ptr(),
                        out.len(),
                    )
                };
                Ok(())
            }
            None => self.read_span(addr, out),
        }
    }

    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        match self.region(addr, data.len() as u64) {
            Some(r) => {
                // SAFETY: as in `read`; `data` is a host buffer distinct from device memory.
                unsafe {
                    std::ptr::copy_nonoverlapping(data.as_ptr(), r.host_ptr().add((addr - r.base) as usize), data.len())
                };
                Ok(())
            }
            None => self.write_span(addr, data),
        }
    }

    /// Copies within device memory (ranges may overlap).
    pub fn copy(&self, dst: u64, src: u64, len: u64) -> Result<(), MemFault> {
        match (self.region(src, len), self.region(dst, len)) {
            (Some(s), Some(d)) => {
                // SAFETY: both ranges are checked; `copy` tolerates overlap.
                unsafe {
                    std::ptr::copy(
                        s.host_ptr().add((src - s.base) as usize),
                        d.host_ptr().add((dst - d.base) as usize),
                        len as usize,
                    )
                };
                Ok(())
            }
            _ => self.copy_span(dst, src, len),
        }
    }

    pub fn fill(&self, dst: u64, len: u64, word: u32) -> Result<(), MemFault> {
        let Some(r) = self.region(dst, len) else { return self.fill_span(dst, len, word) };
        // SAFETY: the range is checked.
        let d = unsafe { r.host_ptr().add((dst - r.base) as usize) };
        let bytes = word.to_le_bytes();
        for i in 0..len as usize {
            // SAFETY: i < len, inside the checked range.
            unsafe { d.add(i).write(bytes[i % 4]) };
        }
        Ok(())
    }

    #[inline]
    pub fn read_u32(&self, addr: u64) -> Result<u32, MemFault> {
        match self.region(addr, 4) {
            // SAFETY: 4 checked bytes; unaligned read is allowed.
            Some(r) => {
                Ok(u32::from_le(unsafe { (r.host_ptr().add((addr - r.base) as usize) as *const u32).read_unaligned() }))
            }
            None => self.read_array(addr).map(u32::from_le_bytes),
        }
    }

    #[inline]
    pub fn read_u64(&self, addr: u64) -> Result<u64, MemFault> {
        match self.region(addr, 8) {
            // SAFETY: 8 checked bytes; unaligned read is allowed.
            Some(r) => {
                Ok(u64::from_le(unsafe { (r.host_ptr().add((addr - r.base) as usize) as *const u64).read_unaligned() }))
            }
            None => self.read_array(addr).map(u64::from_le_bytes),
        }
    }

    #[inline]
    pub fn write_u32(&self, addr: u64, v: u32) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }

    #[inline]
    pub fn write_u64(&self, addr: u64, v: u64) -> Result<(), MemFault> {
        self.write(addr, &v.to_le_bytes())
    }

    /// The 32-bit word at `addr` as an atomic (device atomics are real host atomics, so
    /// concurrent cores see each other's updates). An aligned word never crosses a page.
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

    /// Copies whatever of `[addr, addr+out.len())` is mapped into `out`, leaving the bytes of
    /// unmapped addresses as they are (the ray log's lines, which may run past a region).
    pub fn read_mapped(&self, addr: u64, out: &mut [u8]) {
        let end = addr.saturating_add(out.len() as u64);
        let first = self.regions.partition_point(|r| r.end() <= addr);
        for r in self.regions[first..].iter().take_while(|r| r.base < end) {
            let (lo, hi) = (addr.max(r.base), end.min(r.end()));
            let dst = &mut out[(lo - addr) as usize..(hi - addr) as usize];
            // SAFETY: `[lo, hi)` lies inside the region.
            unsafe {
                std::ptr::copy_nonoverlapping(r.host_ptr().add((lo - r.base) as usize), dst.as_mut_ptr(), dst.len())
            };
        }
    }

    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// With robustness2's `nullDescriptor` enabled, a shader's access through a null buffer
    /// descriptor (an address in the null window below [`VA_BASE`]) reads zero and drops its
    /// write, and a null image descriptor reads zero; without it such an access faults.
    #[inline]
    pub fn null_descriptor(&self) -> bool {
        self.null_descriptor
    }

    /// The fault an access of `[addr, addr+size)` takes: where the first missing byte lies
    /// in a sparse resource, the page it needs.
    #[cold]
    #[inline(never)]
    pub fn fault(&self, addr: u64, size: u64) -> MemFault {
        let missing = self.gap(addr, size).unwrap_or(addr);
        let kind = match self.reservation(missing) {
            Some(_) => MemFaultKind::Unbound { page: missing / VA_GRANULE * VA_GRANULE },
            None => MemFaultKind::Unmapped,
        };
        MemFault { addr, size, kind }
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

    /// The next `size` bytes of fresh addresses, page aligned, followed by a guard page.
    fn take_addresses(&self, size: u64) -> u64 {
        let mut next = self.next_va.lock();
        let base = *next;
        *next = base + size.div_ceil(VA_GRANULE) * VA_GRANULE + VA_GRANULE;
        base
    }

    /// Replaces the map with `f` applied to a copy of it (dispatches keep their snapshot).
    fn update<T>(&self, f: impl FnOnce(&mut MemoryMap) -> T) -> T {
        let mut map = self.map.write();
        let mut next = MemoryMap::clone(&map);
        let out = f(&mut next);
        *map = Arc::new(next);
        out
    }

    /// Maps a new zeroed region of `size` bytes. `None` if the host cannot back it.
    pub fn allocate(&self, size: u64) -> Option<Region> {
        if size == 0 || size > MAX_ALLOCATION {
            return None;
        }
        let backing = Arc::new(Backing::new(usize::try_from(size).ok()?)?);
        let region = Region::whole(self.take_addresses(size), backing);
        self.update(|m| m.insert(region.clone()));
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
        let region = Region::whole(base, backing);
        self.update(|m| {
            if m.regions.iter().any(|r| r.base < end && base < r.end()) {
                return Err(format!("{base:#x}..{end:#x} overlaps a mapped region"));
            }
            m.insert(region.clone());
            Ok(())
        })?;
        let mut next = self.next_va.lock();
        *next = (*next).max((end.div_ceil(VA_GRANULE) + 1).saturating_mul(VA_GRANULE));
        Ok(region)
    }

    /// Unmaps the region at `base`, and every sparse page bound to its memory (Vulkan lets
    /// memory be freed while bound to a sparse resource, which must then not be used).
    /// Snapshots taken earlier keep the backing alive.
    pub fn free(&self, base: u64) {
        self.update(|m| {
            let Some(gone) = m.regions.iter().find(|r| r.base == base).map(|r| r.backing.clone()) else { return };
            m.regions.retain(|r| !Arc::ptr_eq(&r.backing, &gone));
        });
    }

    /// Turns robustness2's null descriptors on (see [`MemoryMap::null_descriptor`]).
    pub fn set_null_descriptor(&self, on: bool) {
        self.update(|m| m.null_descriptor = on);
    }

    /// The current map.
    pub fn snapshot(&self) -> Arc<MemoryMap> {
        self.map.read().clone()
    }

    /// Bytes currently mapped (sparse pages count once per binding).
    pub fn mapped_bytes(&self) -> u64 {
        self.map.read().regions.iter().map(|r| r.len).sum()
    }
}

impl MemoryMap {
    /// Adds a region that overlaps none.
    fn insert(&mut self, region: Region) {
        let at = self.regions.partition_point(|r| r.base < region.base);
        self.regions.insert(at, region);
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
        assert_eq!((f.addr, f.size), (a.base + 97, 4));
        assert!(m.read_u32(0).is_err());
        assert!(m.read_u32(u64::MAX - 1).is_err());
        // Mapped pointer aliases device memory.
        // SAFETY: in-bounds write through the host mapping of a live region.
        unsafe { b.host_ptr().add(8).cast::<u32>().write_unaligned(77) };
        assert_eq!(m.read_u32(b.base + 8).unwrap(), 77);
        assert!(!m.covers(a.base + 90, 20) && m.covers(a.base, 100));
        assert!(m.is_device(a.base + 99) && !m.is_device(a.base + 100));
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

    #[test]
    fn read_mapped_keeps_what_is_not_mapped() {
        let space = AddressSpace::new();
        let a = space.allocate(100).unwrap();
        let m = space.snapshot();
        m.fill(a.base, 100, 0x0101_0101).unwrap();
        let mut line = [0xEEu8; 64];
        m.read_mapped(a.base + 64, &mut line);
        assert!(line[..36].iter().all(|&b| b == 1) && line[36..].iter().all(|&b| b == 0xEE));
    }
}
