//! The per-core CTA dispatcher (seed 002 §4–§5): admits CTAs into slots under the
//! fixed-stride LMEM allocator, expands each into warps, and retires slots when their last
//! warp exits.
//!
//! Within one kernel every CTA has the same LMEM footprint, so LMEM is cut into equal slots
//! of `stride` bytes; slot `i` owns `[i*stride, (i+1)*stride)` for the whole kernel. A core
//! holds at most one CTA per warp slot, and at most `usable_slots` CTAs at once.

use crate::fault::{Fault, FaultKind};
use crate::kmu::CtaDesc;

/// A CTA the dispatcher accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admitted {
    /// Dispatcher slot (the CTA_ID CSR).
    pub slot: u32,
    /// Byte offset of the CTA's LMEM window.
    pub lmem_base: u32,
    /// Warp slots assigned, in CTA rank order.
    pub warps: Vec<u32>,
    /// Lane mask of the last warp (partial when the block size is not a multiple of the
    /// warp width).
    pub last_mask: u32,
}

pub struct CtaDispatcher {
    num_warps: u32,
    num_threads: u32,
    stride: u32,
    usable_slots: u32,
    slot_valid: u64,
    /// Warps still running per slot.
    slot_warps: Vec<u32>,
    tail: u32,
    busy_warps: u64,
    warps_per_cta: u32,
    last_mask: u32,
    /// Resident warps the kernel's register and private-memory footprint allows (the
    /// occupancy bound; `num_warps` without one).
    max_warps: u32,
    /// The last refusal was the occupancy bound's alone (warp slots and LMEM were free).
    occupancy_refused: bool,
}

impl CtaDispatcher {
    /// Prepares for a kernel whose CTAs need `lmem_per_cta` bytes (already rounded to the
    /// LMEM block) and have `block_size` threads.
    pub fn new(
        num_warps: u32,
        num_threads: u32,
        lmem_bytes: u32,
        lmem_per_cta: u32,
        block_size: u32,
    ) -> Result<Self, Fault> {
        if lmem_per_cta > lmem_bytes {
            return Err(Fault::new(
                FaultKind::BadLaunch,
                format!("CTA needs {lmem_per_cta} bytes of LMEM but a core has {lmem_bytes}"),
            ));
        }
        let warps_per_cta = block_size.div_ceil(num_threads);
        if warps_per_cta > num_warps || block_size == 0 {
            return Err(Fault::new(
                FaultKind::BadLaunch,
                format!("CTA of {block_size} threads does not fit a core of {num_warps} warps x {num_threads} lanes"),
            ));
        }
        // Occupancy bound: the largest m in [1, NUM_WARPS] with m*stride <= LMEM.
        let usable_slots = lmem_bytes.checked_div(lmem_per_cta).map_or(num_warps, |m| m.clamp(1, num_warps));
        let rem = block_size % num_threads;
        let last_mask = if rem == 0 { full_mask(num_threads) } else { (1u32 << rem) - 1 };
        Ok(CtaDispatcher {
            num_warps,
            num_threads,
            stride: lmem_per_cta,
            usable_slots,
            slot_valid: 0,
            slot_warps: vec![0; num_warps as usize],
            tail: 0,
            busy_warps: 0,
            warps_per_cta,
            last_mask,
            max_warps: num_warps,
            occupancy_refused: false,
        })
    }

    /// Bounds the resident warps to `limit` (never below one CTA's warps: a CTA that alone
    /// exceeds the budget still runs, one at a time).
    pub fn with_warp_limit(mut self, limit: u32) -> Self {
        self.max_warps = limit.clamp(self.warps_per_cta, self.num_warps);
        self
    }

    /// Resident warps the occupancy bound allows.
    pub fn max_warps(&self) -> u32 {
        self.max_warps
    }

    /// True (once) when the last refused admission was refused by the occupancy bound only.
    pub fn take_occupancy_refusal(&mut self) -> bool {
        std::mem::take(&mut self.occupancy_refused)
    }

    pub fn usable_slots(&self) -> u32 {
        self.usable_slots
    }

    pub fn warps_per_cta(&self) -> u32 {
        self.warps_per_cta
    }

    /// True if no CTA is resident.
    pub fn idle(&self) -> bool {
        self.slot_valid == 0
    }

    /// Tries to admit `cta`; `None` means back-pressure (try again after a retirement).
    pub fn try_admit(&mut self, cta: &CtaDesc, cluster_size: u32) -> Option<Admitted> {
        let base_tail = self.tail;
        let slot = if cta.first_of_cluster {
            // Reserve the whole cluster window up front so followers never stall mid-cluster;
            // K is clamped, never rejected (an oversized cluster degenerates, not deadlocks).
            let k = cluster_size.clamp(1, self.usable_slots);
            let base = if base_tail + k > self.usable_slots { 0 } else { base_tail };
            let window = ((1u64 << k) - 1) << base;
            if self.slot_valid & window != 0 {
                return None;
            }
            base
        } else {
            if self.slot_valid >> base_tail & 1 != 0 {
                return None;
            }
            base_tail
        };
        let free = !self.busy_warps & full_mask64(self.num_warps);
        if free.count_ones() < self.warps_per_cta {
            return None;
        }
        if self.busy_warps.count_ones() + self.warps_per_cta > self.max_warps {
            self.occupancy_refused = true;
            return None;
        }
        let mut warps = Vec::with_capacity(self.warps_per_cta as usize);
        let mut f = free;
        for _ in 0..self.warps_per_cta {
            let w = f.trailing_zeros();
            f &= !(1u64 << w);
            warps.push(w);
            self.busy_warps |= 1u64 << w;
        }
        self.slot_valid |= 1u64 << slot;
        self.slot_warps[slot as usize] = self.warps_per_cta;
        self.tail = (slot + 1) % self.usable_slots;
        Some(Admitted { slot, lmem_base: slot * self.stride, warps, last_mask: self.last_mask })
    }

    /// A warp of the CTA in `slot` exited; returns true when that retired the CTA.
    pub fn retire_warp(&mut self, slot: u32, warp: u32) -> bool {
        self.busy_warps &= !(1u64 << warp);
        let left = &mut self.slot_warps[slot as usize];
        *left = left.saturating_sub(1);
        if *left == 0 {
            self.slot_valid &= !(1u64 << slot);
            true
        } else {
            false
        }
    }

    pub fn num_threads(&self) -> u32 {
        self.num_threads
    }
}

pub fn full_mask(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

fn full_mask64(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cta(first: bool) -> CtaDesc {
        CtaDesc { block_idx: [0; 3], first_of_cluster: first, eop: true }
    }

    #[test]
    fn occupancy_is_bounded_by_lmem_and_slots_are_reused() {
        // 4 warps, 1 KB LMEM, 300 B per CTA (rounded by the caller to 320): 3 usable slots.
        let mut d = CtaDispatcher::new(4, 4, 1024, 320, 4).unwrap();
        assert_eq!(d.usable_slots(), 3);
        let a = d.try_admit(&cta(true), 1).unwrap();
        let b = d.try_admit(&cta(true), 1).unwrap();
        let c = d.try_admit(&cta(true), 1).unwrap();
        assert_eq!((a.slot, b.slot, c.slot), (0, 1, 2));
        assert_eq!(c.lmem_base, 640);
        assert!(d.try_admit(&cta(true), 1).is_none(), "LMEM full");
        assert!(d.retire_warp(b.slot, b.warps[0]));
        // Tail is at 0 (wrapped), slot 0 busy: back-pressure until slot 0 frees.
        assert!(d.try_admit(&cta(true), 1).is_none());
        assert!(d.retire_warp(a.slot, a.warps[0]));
        assert_eq!(d.try_admit(&cta(true), 1).unwrap().slot, 0);
    }

    #[test]
    fn warp_expansion_has_partial_last_mask() {
        let d = CtaDispatcher::new(8, 4, 1024, 0, 10).unwrap();
        assert_eq!(d.warps_per_cta(), 3);
        let mut d = d;
        let a = d.try_admit(&cta(true), 1).unwrap();
        assert_eq!(a.warps, vec![0, 1, 2]);
        assert_eq!(a.last_mask, 0b11);
        assert!(!d.retire_warp(a.slot, 0));
        assert!(!d.retire_warp(a.slot, 1));
        assert!(d.retire_warp(a.slot, 2));
        assert!(d.idle());
    }

    #[test]
    fn cluster_window_prewraps_and_needs_all_slots_free() {
        let mut d = CtaDispatcher::new(4, 1, 4096, 1024, 1).unwrap();
        assert_eq!(d.usable_slots(), 4);
        let a = d.try_admit(&cta(true), 1).unwrap(); // slot 0, tail -> 1
        assert_eq!(a.slot, 0);
        // A 4-CTA cluster does not fit at tail 1: it pre-wraps to 0, which is busy.
        assert!(d.try_admit(&cta(true), 4).is_none());
        d.retire_warp(a.slot, a.warps[0]);
        let first = d.try_admit(&cta(true), 4).unwrap();
        assert_eq!(first.slot, 0);
        for r in 1..4 {
            let m = d.try_admit(&cta(false), 4).unwrap();
            assert_eq!(m.lmem_base, r * 1024, "member r lands at base + r*stride");
        }
    }

    #[test]
    fn the_occupancy_bound_limits_resident_warps_and_says_so() {
        // 8 warps, CTAs of 2 warps, bound to 5 resident warps: two CTAs, not four.
        let mut d = CtaDispatcher::new(8, 4, 1024, 0, 8).unwrap().with_warp_limit(5);
        assert_eq!(d.max_warps(), 5);
        let a = d.try_admit(&cta(true), 1).unwrap();
        d.try_admit(&cta(true), 1).unwrap();
        assert!(!d.take_occupancy_refusal());
        assert!(d.try_admit(&cta(true), 1).is_none(), "a third CTA would make 6 resident warps");
        assert!(d.take_occupancy_refusal());
        assert!(!d.take_occupancy_refusal(), "reported once");
        d.retire_warp(a.slot, a.warps[0]);
        d.retire_warp(a.slot, a.warps[1]);
        assert!(d.try_admit(&cta(true), 1).is_some());
        // A bound below one CTA still admits one CTA at a time.
        let d = CtaDispatcher::new(8, 4, 1024, 0, 12).unwrap().with_warp_limit(1);
        assert_eq!(d.max_warps(), 3);
    }

    #[test]
    fn oversized_ctas_are_refused() {
        assert!(CtaDispatcher::new(4, 4, 1024, 2048, 4).is_err());
        assert!(CtaDispatcher::new(4, 4, 1024, 0, 17).is_err());
    }
}
