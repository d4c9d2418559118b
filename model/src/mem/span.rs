//! Accesses that one region does not hold: a run of adjacent regions covering them without a
//! gap (the pages of a sparse resource, bound to different memory, or to the same memory at
//! offsets that do not follow on). Ordinary allocations are never adjacent (a guard page
//! follows each), so for them this path is only ever the way to the fault.

use super::{MemFault, MemoryMap, Region};
use std::borrow::Cow;

/// Bytes a page-crossing copy moves per step through its host staging buffer.
const COPY_CHUNK: u64 = 1 << 20;

impl MemoryMap {
    /// The first byte of `[addr, addr+len)` that no region maps (`None`: all are). An empty
    /// access needs `addr` to lie in a region or at its end, as [`MemoryMap::region`] does.
    pub(super) fn gap(&self, addr: u64, len: u64) -> Option<u64> {
        let Some(end) = addr.checked_add(len) else { return Some(addr) };
        let Some(mut i) = self.regions.partition_point(|r| r.base <= addr).checked_sub(1) else { return Some(addr) };
        if len == 0 {
            return (addr > self.regions[i].end()).then_some(addr);
        }
        let mut at = addr;
        while at < end {
            match self.regions.get(i) {
                Some(r) if r.base <= at && at < r.end() => at = r.end(),
                _ => return Some(at),
            }
            i += 1;
        }
        None
    }

    /// How many bytes from `addr` on are mapped without a gap (0: `addr` itself is not).
    pub fn mapped_len(&self, addr: u64) -> u64 {
        let Some(mut i) = self.regions.partition_point(|r| r.base <= addr).checked_sub(1) else { return 0 };
        let mut at = addr;
        while let Some(r) = self.regions.get(i).filter(|r| r.base <= at && at < r.end()) {
            at = r.end();
            i += 1;
        }
        at - addr
    }

    /// The regions holding `[addr, addr+len)` in order, each with the part of the access it
    /// holds (`(offset in the access, region, bytes)`), or the fault the access takes.
    fn pieces(&self, addr: u64, len: u64) -> Result<impl Iterator<Item = (usize, &Region, usize)>, MemFault> {
        if self.gap(addr, len).is_some() || len == 0 {
            return Err(self.fault(addr, len));
        }
        let first = self.regions.partition_point(|r| r.base <= addr) - 1;
        let end = addr + len;
        Ok(self.regions[first..].iter().take_while(move |r| r.base < end).map(move |r| {
            let (lo, hi) = (addr.max(r.base), end.min(r.end()));
            ((lo - addr) as usize, r, (hi - lo) as usize)
        }))
    }

    #[cold]
    #[inline(never)]
    pub(super) fn read_span(&self, addr: u64, out: &mut [u8]) -> Result<(), MemFault> {
        for (off, r, n) in self.pieces(addr, out.len() as u64)? {
            let at = addr + off as u64;
            // SAFETY: `[at, at+n)` lies inside the region; `out` is a distinct host buffer.
            unsafe {
                std::ptr::copy_nonoverlapping(r.host_ptr().add((at - r.base) as usize), out[off..].as_mut_ptr(), n)
            };
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    pub(super) fn write_span(&self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        for (off, r, n) in self.pieces(addr, data.len() as u64)? {
            let at = addr + off as u64;
            // SAFETY: as in `read_span`, for the write.
            unsafe { std::ptr::copy_nonoverlapping(data[off..].as_ptr(), r.host_ptr().add((at - r.base) as usize), n) };
        }
        Ok(())
    }

    /// A copy whose source or destination crosses regions: through host memory a chunk at a
    /// time, in the order that keeps an overlapping copy right (as `memmove`).
    #[cold]
    #[inline(never)]
    pub(super) fn copy_span(&self, dst: u64, src: u64, len: u64) -> Result<(), MemFault> {
        for at in [src, dst] {
            if len == 0 || self.gap(at, len).is_some() {
                return Err(self.fault(at, len));
            }
        }
        let mut buf = vec![0u8; len.min(COPY_CHUNK) as usize];
        let (chunks, backwards) = (len.div_ceil(COPY_CHUNK), dst > src && dst < src + len);
        for k in 0..chunks {
            let off = if backwards { chunks - 1 - k } else { k } * COPY_CHUNK;
            let n = (len - off).min(COPY_CHUNK) as usize;
            self.read(src + off, &mut buf[..n])?;
            self.write(dst + off, &buf[..n])?;
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    pub(super) fn fill_span(&self, dst: u64, len: u64, word: u32) -> Result<(), MemFault> {
        let bytes = word.to_le_bytes();
        for (off, r, n) in self.pieces(dst, len)? {
            // SAFETY: the piece lies inside the region.
            let d = unsafe { r.host_ptr().add((dst + off as u64 - r.base) as usize) };
            for i in 0..n {
                // SAFETY: i < n, inside the piece; the pattern keeps its phase from `dst`.
                unsafe { d.add(i).write(bytes[(off + i) % 4]) };
            }
        }
        Ok(())
    }

    /// `[addr, addr+len)` in place, when one region holds it (a read without a copy).
    pub fn view(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let p = self.host_ptr(addr, len).ok()?;
        // SAFETY: `host_ptr` checked that the range lies in a backing this map keeps alive for
        // its own lifetime; every byte value is a valid `u8`. Device memory read this way is
        // not written meanwhile (Vulkan valid usage of the commands that read so).
        Some(unsafe { std::slice::from_raw_parts(p, len as usize) })
    }

    /// `[addr, addr+len)`: in place when one region holds it, else copied out of the regions
    /// that do.
    pub fn bytes(&self, addr: u64, len: u64) -> Result<Cow<'_, [u8]>, MemFault> {
        if let Some(v) = self.view(addr, len) {
            return Ok(Cow::Borrowed(v));
        }
        let mut out = vec![0u8; usize::try_from(len).map_err(|_| self.fault(addr, len))?];
        self.read_span(addr, &mut out)?;
        Ok(Cow::Owned(out))
    }

    /// Mutable device memory `[addr, addr+len)`: in place when one region holds it, else
    /// staged in host memory (read first) and written back when the view is dropped.
    ///
    /// # Safety
    /// Nothing else may access the range while the view lives (for builds: Vulkan's rule that
    /// the destination and scratch of a build overlap nothing else the build touches).
    pub unsafe fn bytes_mut(&self, addr: u64, len: u64) -> Result<DeviceBytesMut<'_>, MemFault> {
        if len == 0 {
            return Ok(DeviceBytesMut::host(&mut []));
        }
        if let Ok(p) = self.host_ptr(addr, len) {
            // SAFETY: mapped and alive as long as `self`; exclusivity per the contract.
            return Ok(DeviceBytesMut::host(unsafe { std::slice::from_raw_parts_mut(p, len as usize) }));
        }
        let mut buf = vec![0u8; usize::try_from(len).map_err(|_| self.fault(addr, len))?];
        self.read_span(addr, &mut buf)?;
        Ok(DeviceBytesMut { store: Store::Staged { map: self, addr, buf } })
    }
}

/// Device bytes to write: a slice of one region, or a host copy of bytes spread over several
/// that goes back to them (page by page) when dropped.
pub struct DeviceBytesMut<'a> {
    store: Store<'a>,
}

enum Store<'a> {
    InPlace(&'a mut [u8]),
    Staged { map: &'a MemoryMap, addr: u64, buf: Vec<u8> },
}

impl<'a> DeviceBytesMut<'a> {
    /// Bytes written where they are (a region's memory, or a host command's host memory).
    pub fn host(bytes: &'a mut [u8]) -> DeviceBytesMut<'a> {
        DeviceBytesMut { store: Store::InPlace(bytes) }
    }

    /// True when the bytes are a staged copy (their memory spans several regions).
    pub fn is_staged(&self) -> bool {
        matches!(self.store, Store::Staged { .. })
    }
}

impl std::ops::Deref for DeviceBytesMut<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.store {
            Store::InPlace(b) => b,
            Store::Staged { buf, .. } => buf,
        }
    }
}

impl std::ops::DerefMut for DeviceBytesMut<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        match &mut self.store {
            Store::InPlace(b) => b,
            Store::Staged { buf, .. } => buf,
        }
    }
}

impl Drop for DeviceBytesMut<'_> {
    fn drop(&mut self) {
        if let Store::Staged { map, addr, buf } = &self.store {
            // The map is immutable and every byte was read through it when the view was made,
            // so the write-back cannot fault.
            let r = map.write_span(*addr, buf);
            debug_assert!(r.is_ok(), "a staged write-back faulted: {r:?}");
        }
    }
}
