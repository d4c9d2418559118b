//! Address translation in timed mode: a TLB in front of each SIMT core's LSU and of each
//! traversal core's RTCache port.
//!
//! An ordinary allocation is one contiguous segment: the units translate it with the segment
//! table every region is listed in (base and bounds, no walk), so its accesses cost nothing
//! and are not counted. The pages of a sparse resource are bound one run at a time, and each
//! access into one looks its page up in the unit's TLB: fully associative, least recently
//! used, `mem.tlb_entries` pages. A miss walks the page table, which delays the request by
//! `mem.page_walk_latency` cycles (the walk's read of the page-table entry, one trip to
//! memory). Translation never changes what an access reads, only when it arrives.

use crate::abi::PAGE_BYTES;
use crate::mem::MemoryMap;
use serde::Serialize;

/// A TLB's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TlbStats {
    /// Requests into a sparse resource (each looked its page up).
    pub lookups: u64,
    /// Lookups that walked the page table.
    pub misses: u64,
}

impl TlbStats {
    pub fn add(&mut self, o: &TlbStats) {
        self.lookups += o.lookups;
        self.misses += o.misses;
    }
}

/// One unit's TLB.
pub struct Tlb {
    /// Page numbers held, most recently used first.
    pages: Vec<u64>,
    entries: usize,
    walk: u64,
    pub stats: TlbStats,
}

impl Tlb {
    pub fn new(entries: u32, walk_latency: u32) -> Tlb {
        Tlb {
            pages: Vec::with_capacity(entries as usize),
            entries: entries as usize,
            walk: walk_latency as u64,
            stats: TlbStats::default(),
        }
    }

    /// The cycles translating `addr` adds to its request: none outside sparse resources
    /// (never looked up) and on a hit, the page walk on a miss.
    #[inline]
    pub fn translate(&mut self, mem: &MemoryMap, addr: u64) -> u64 {
        if !mem.has_sparse() || mem.reservation(addr).is_none() {
            return 0;
        }
        self.lookup(addr / PAGE_BYTES)
    }

    fn lookup(&mut self, page: u64) -> u64 {
        self.stats.lookups += 1;
        if let Some(i) = self.pages.iter().position(|&p| p == page) {
            self.pages[..=i].rotate_right(1);
            return 0;
        }
        self.stats.misses += 1;
        if self.pages.len() == self.entries {
            self.pages.pop();
        }
        self.pages.insert(0, page);
        self.walk
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::AddressSpace;

    #[test]
    fn only_sparse_pages_are_looked_up_and_lru_evicts() {
        let space = AddressSpace::new();
        let plain = space.allocate(4 * PAGE_BYTES).unwrap();
        let mut tlb = Tlb::new(2, 100);
        assert_eq!(tlb.translate(&space.snapshot(), plain.base), 0);
        let res = space.reserve(4 * PAGE_BYTES).unwrap();
        let m = space.snapshot();
        assert_eq!(tlb.translate(&m, plain.base + PAGE_BYTES), 0);
        assert_eq!(tlb.stats, TlbStats::default(), "ordinary memory is not counted");
        let page = |k: u64| res.base + k * PAGE_BYTES + 8;
        // Pages 0, 1 miss; 0 hits (and becomes most recent); 2 evicts 1; 1 misses again.
        let costs: Vec<u64> = [0, 1, 0, 2, 0, 1].iter().map(|&k| tlb.translate(&m, page(k))).collect();
        assert_eq!(costs, [100, 100, 0, 100, 0, 100]);
        assert_eq!(tlb.stats, TlbStats { lookups: 6, misses: 4 });
    }
}
