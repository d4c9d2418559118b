//! Sparse resources: address ranges whose pages are bound to memory one run at a time.
//!
//! A reservation is the device-address range of one sparse resource, page aligned and
//! followed by a guard page like any allocation; until something is bound nothing backs it,
//! and an access there is a fault that names the page ([`MemFaultKind::Unbound`]). Binding
//! `[offset, offset+size)` of it to memory at `memory_offset` first unbinds whatever was bound
//! there (splitting a binding it cuts through), then maps that range as one region whose host
//! address is the memory's, `memory_offset` on; a binding that follows on from its neighbour
//! in both the reservation and the memory is merged into it, so a resource bound in one go
//! (or page by page, in order) is one region. Unbinding (no memory) only does the first step.
//! The page table the hardware walks is this list of runs; the TLBs that cache it are modelled
//! in timed mode (`crate::tlb`).
//!
//! [`MemFaultKind::Unbound`]: super::MemFaultKind::Unbound

use super::{AddressSpace, MemoryMap, Region, MAX_ALLOCATION, VA_GRANULE};
use std::sync::Arc;

/// One sparse resource's addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reservation {
    pub base: u64,
    /// Bytes, a whole number of pages.
    pub len: u64,
}

impl Reservation {
    pub fn end(&self) -> u64 {
        self.base + self.len
    }
}

impl MemoryMap {
    /// The reservation holding `addr`, if any.
    pub fn reservation(&self, addr: u64) -> Option<&Reservation> {
        let i = self.reservations.partition_point(|r| r.base <= addr);
        self.reservations.get(i.checked_sub(1)?).filter(|r| addr < r.end())
    }

    /// True when a sparse resource exists: the timed model's TLBs look addresses up only then.
    #[inline]
    pub fn has_sparse(&self) -> bool {
        !self.reservations.is_empty()
    }

    /// Removes every binding of `[from, to)` (inside one reservation), cutting the bindings
    /// that straddle its ends.
    fn unbind(&mut self, from: u64, to: u64) {
        let first = self.regions.partition_point(|r| r.end() <= from);
        let last = self.regions.partition_point(|r| r.base < to);
        if first >= last {
            return;
        }
        let mut kept = Vec::with_capacity(2);
        let (head, tail) = (&self.regions[first], &self.regions[last - 1]);
        if head.base < from {
            kept.push(head.part(head.base, from));
        }
        if tail.end() > to {
            kept.push(tail.part(to, tail.end()));
        }
        self.regions.splice(first..last, kept);
    }

    /// Maps `run` (a binding inside a reservation), merged with a neighbour it follows on
    /// from or leads into.
    fn bind_run(&mut self, run: Region) {
        let at = self.regions.partition_point(|r| r.base < run.base);
        let joins = |a: &Region, b: &Region| {
            a.end() == b.base
                && Arc::ptr_eq(&a.backing, &b.backing)
                && a.host_ptr().wrapping_add(a.len as usize) == b.host_ptr()
        };
        let left = at.checked_sub(1).filter(|&i| joins(&self.regions[i], &run));
        let right = (at < self.regions.len() && joins(&run, &self.regions[at])).then_some(at);
        match (left, right) {
            (Some(l), Some(r)) => {
                let end = self.regions[r].end();
                self.regions[l].len = end - self.regions[l].base;
                self.regions.remove(r);
            }
            (Some(l), None) => self.regions[l].len += run.len,
            (None, Some(r)) => {
                let end = self.regions[r].end();
                self.regions[r] = Region { len: end - run.base, ..run };
            }
            (None, None) => self.regions.insert(at, run),
        }
    }
}

impl AddressSpace {
    /// Reserves addresses for a sparse resource of `size` bytes (rounded up to whole pages),
    /// with nothing bound. `None` for a size no allocation could have.
    pub fn reserve(&self, size: u64) -> Option<Reservation> {
        if size == 0 || size > MAX_ALLOCATION {
            return None;
        }
        let len = size.div_ceil(VA_GRANULE) * VA_GRANULE;
        let res = Reservation { base: self.take_addresses(len), len };
        self.update(|m| {
            let at = m.reservations.partition_point(|r| r.base < res.base);
            m.reservations.insert(at, res);
        });
        Some(res)
    }

    /// Binds `[offset, offset+size)` of the reservation at `base` to `memory`, from byte
    /// `memory_offset` of it, or unbinds that range (`None`). Both offsets are whole pages (a
    /// size that is not only maps the bytes it names).
    pub fn bind(&self, base: u64, offset: u64, size: u64, memory: Option<(&Region, u64)>) -> Result<(), String> {
        self.update(|m| {
            let res = *m
                .reservations
                .iter()
                .find(|r| r.base == base)
                .ok_or_else(|| format!("no sparse resource at {base:#x}"))?;
            let end = offset.checked_add(size).filter(|&e| e <= res.len).ok_or_else(|| {
                format!("{size} bytes at offset {offset:#x} overrun the sparse resource's {} bytes", res.len)
            })?;
            if !offset.is_multiple_of(VA_GRANULE) {
                return Err(format!("offset {offset:#x} is not a whole number of {VA_GRANULE}-byte pages"));
            }
            if size == 0 {
                return Ok(());
            }
            let run = match memory {
                None => None,
                Some((mem, mem_offset)) => {
                    if !mem_offset.is_multiple_of(VA_GRANULE) {
                        return Err(format!("memory offset {mem_offset:#x} is not a whole page"));
                    }
                    if mem_offset.checked_add(size).is_none_or(|e| e > mem.len) {
                        return Err(format!(
                            "{size} bytes at memory offset {mem_offset:#x} overrun the {}-byte allocation",
                            mem.len
                        ));
                    }
                    let part = mem.part(mem.base + mem_offset, mem.base + mem_offset + size);
                    Some(Region { base: base + offset, ..part })
                }
            };
            m.unbind(base + offset, base + end);
            if let Some(run) = run {
                m.bind_run(run);
            }
            Ok(())
        })
    }

    /// Drops the reservation at `base` and every binding in it.
    pub fn release(&self, base: u64) {
        self.update(|m| {
            let Some(i) = m.reservations.iter().position(|r| r.base == base) else { return };
            let res = m.reservations.remove(i);
            m.unbind(res.base, res.end());
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::MemFaultKind;
    use super::*;

    const P: u64 = VA_GRANULE;

    /// A 4-page reservation and two 2-page allocations filled with their own byte values.
    fn setup() -> (AddressSpace, Reservation, Region, Region) {
        let space = AddressSpace::new();
        let res = space.reserve(3 * P + 100).unwrap();
        assert_eq!(res.len, 4 * P, "whole pages");
        let (a, b) = (space.allocate(2 * P).unwrap(), space.allocate(2 * P).unwrap());
        let m = space.snapshot();
        m.fill(a.base, 2 * P, 0xAAAA_AAAA).unwrap();
        m.fill(b.base, 2 * P, 0xBBBB_BBBB).unwrap();
        (space, res, a, b)
    }

    #[test]
    fn unbound_pages_fault_with_the_page() {
        let (space, res, a, _) = setup();
        let m = space.snapshot();
        let f = m.read_u32(res.base + P + 8).unwrap_err();
        assert_eq!(f.kind, MemFaultKind::Unbound { page: res.base + P });
        assert!(f.to_string().contains("sparse"), "{f}");
        space.bind(res.base, 0, P, Some((&a, 0))).unwrap();
        let m = space.snapshot();
        assert_eq!(m.read_u32(res.base + 8).unwrap(), 0xAAAA_AAAA);
        // A read running off the bound page into the unbound one names the unbound page.
        let f = m.read_u64(res.base + P - 4).unwrap_err();
        assert_eq!((f.addr, f.kind), (res.base + P - 4, MemFaultKind::Unbound { page: res.base + P }));
        // Past the reservation is the guard page: unmapped, not unbound.
        assert_eq!(m.read_u32(res.end()).unwrap_err().kind, MemFaultKind::Unmapped);
        assert!(m.is_device(res.base + 3 * P) && m.has_sparse());
    }

    #[test]
    fn scattered_bindings_and_page_crossing_accesses() {
        let (space, res, a, b) = setup();
        // Pages 0 and 2 from `b` (second page, first page), page 1 from `a`'s second page.
        space.bind(res.base, 0, P, Some((&b, P))).unwrap();
        space.bind(res.base, P, P, Some((&a, P))).unwrap();
        space.bind(res.base, 2 * P, P, Some((&b, 0))).unwrap();
        let m = space.snapshot();
        assert_eq!(m.regions().len(), 5, "two allocations and three runs");
        // A write across the page 0 / page 1 boundary lands in b's second page and a's second.
        m.write_u64(res.base + P - 4, 0x1122_3344_5566_7788).unwrap();
        assert_eq!(m.read_u32(b.base + 2 * P - 4).unwrap(), 0x5566_7788);
        assert_eq!(m.read_u32(a.base + P).unwrap(), 0x1122_3344);
        assert_eq!(m.read_u64(res.base + P - 4).unwrap(), 0x1122_3344_5566_7788);
        // Copies and fills across all three pages.
        m.fill(res.base + P - 2, P + 4, 0x0403_0201).unwrap();
        assert_eq!(m.read_array::<2>(b.base + 2 * P - 2).unwrap(), [1, 2]);
        assert_eq!(m.read_array::<4>(a.base + P).unwrap(), [3, 4, 1, 2]);
        assert_eq!(m.read_array::<4>(b.base).unwrap(), [3, 4, 0xBB, 0xBB], "the pattern keeps its phase");
        m.copy(a.base, res.base + P - 2, 4).unwrap();
        assert_eq!(m.read_array::<4>(a.base).unwrap(), [1, 2, 3, 4]);
        let whole = m.bytes(res.base, 3 * P).unwrap();
        assert_eq!(whole.len(), 3 * P as usize);
        assert!(matches!(whole, std::borrow::Cow::Owned(_)), "three regions: copied");
        // SAFETY: nothing else touches these bytes.
        let mut out = unsafe { m.bytes_mut(res.base + P - 1, 2) }.unwrap();
        assert!(out.is_staged());
        out.copy_from_slice(&[9, 8]);
        drop(out);
        assert_eq!(
            (m.read_array::<1>(b.base + 2 * P - 1).unwrap(), m.read_array::<1>(a.base + P).unwrap()),
            ([9], [8])
        );
        // Page 3 is not bound: a copy reaching it faults before it writes anything.
        assert!(m.copy(res.base, res.base + 2 * P + 8, P).is_err());
        assert_eq!(m.read_u32(res.base).unwrap(), 0xBBBB_BBBB);
    }

    #[test]
    fn rebinding_splits_and_merges_runs() {
        let (space, res, a, b) = setup();
        // Two pages of `a` in one binding, then page by page the same way: one run each time.
        space.bind(res.base, 0, 2 * P, Some((&a, 0))).unwrap();
        assert_eq!(space.snapshot().regions().len(), 3);
        space.bind(res.base, 2 * P, P, Some((&b, 0))).unwrap();
        space.bind(res.base, 3 * P, P, Some((&b, P))).unwrap();
        assert_eq!(space.snapshot().regions().len(), 4, "b's two pages merged");
        // Rebinding the middle of b's run to a splits it; binding it back merges again.
        space.bind(res.base, 2 * P, P, Some((&a, 0))).unwrap();
        let m = space.snapshot();
        assert_eq!(m.read_u32(res.base + 2 * P).unwrap(), 0xAAAA_AAAA);
        assert_eq!(m.read_u32(res.base + 3 * P).unwrap(), 0xBBBB_BBBB);
        space.bind(res.base, 2 * P, P, Some((&b, 0))).unwrap();
        assert_eq!(space.snapshot().regions().len(), 4);
        // Unbinding one page in the middle of a's run leaves a hole.
        space.bind(res.base, P, P, None).unwrap();
        let m = space.snapshot();
        assert_eq!(m.read_u32(res.base + P - 4).unwrap(), 0xAAAA_AAAA);
        assert!(matches!(m.read_u32(res.base + P).unwrap_err().kind, MemFaultKind::Unbound { .. }));
        // Offsets must be whole pages; ranges must fit both sides.
        assert!(space.bind(res.base, 100, P, Some((&a, 0))).is_err());
        assert!(space.bind(res.base, 0, P, Some((&a, 100))).is_err());
        assert!(space.bind(res.base, 3 * P, 2 * P, Some((&a, 0))).is_err());
        assert!(space.bind(res.base, 0, P, Some((&a, 2 * P))).is_err());
        assert!(space.bind(res.base + P, 0, P, None).is_err(), "not a reservation's base");
        // A size short of a page maps just those bytes.
        space.bind(res.base, 3 * P, P, None).unwrap();
        space.bind(res.base, 3 * P, 100, Some((&a, 0))).unwrap();
        let m = space.snapshot();
        assert!(m.read_array::<4>(res.base + 3 * P + 96).is_ok() && m.read_array::<4>(res.base + 3 * P + 97).is_err());
    }

    #[test]
    fn freeing_bound_memory_and_releasing_the_reservation() {
        let (space, res, a, b) = setup();
        space.bind(res.base, 0, P, Some((&a, 0))).unwrap();
        space.bind(res.base, P, P, Some((&b, 0))).unwrap();
        let before = space.snapshot();
        space.free(a.base);
        let m = space.snapshot();
        assert!(m.read_u32(a.base).is_err() && m.read_u32(res.base).is_err(), "a's pages went with it");
        assert_eq!(m.read_u32(res.base + P).unwrap(), 0xBBBB_BBBB);
        assert_eq!(before.read_u32(res.base).unwrap(), 0xAAAA_AAAA, "old snapshots keep the backing");
        space.release(res.base);
        let m = space.snapshot();
        assert!(!m.has_sparse() && m.read_u32(res.base + P).is_err());
        assert_eq!(m.read_u32(b.base).unwrap(), 0xBBBB_BBBB, "the memory itself stays");
    }
}
