//! A traversal core's activity over time: its cycles classified (busy, idle with a ray,
//! starved) and its slot occupancy, in a bounded number of equal buckets.
//!
//! The bucket width starts at [`FIRST_WIDTH`] cycles and doubles (neighbouring buckets
//! merge) whenever the dispatch outgrows [`MAX_BUCKETS`], so a timeline costs the same for
//! a thousand cycles as for a billion, and every traversal core of a dispatch ends with the
//! same width: it depends only on the dispatch's length.

use serde::Serialize;

/// Most buckets a timeline keeps.
pub const MAX_BUCKETS: usize = 256;
/// Width of a bucket before the first merge, cycles.
pub const FIRST_WIDTH: u64 = 16;

/// What one bucket saw, in traversal-core cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Bucket {
    pub busy: u64,
    pub idle_with_ray: u64,
    pub idle_starved: u64,
    /// Sum over the bucket's cycles of live slots.
    pub slot_cycles: u64,
    /// Cycles a staged trace waited for a slot.
    pub slot_full: u64,
}

impl Bucket {
    fn add(&mut self, o: &Bucket) {
        self.busy += o.busy;
        self.idle_with_ray += o.idle_with_ray;
        self.idle_starved += o.idle_starved;
        self.slot_cycles += o.slot_cycles;
        self.slot_full += o.slot_full;
    }

    /// Cycles the bucket covers (per traversal core it sums).
    pub fn cycles(&self) -> u64 {
        self.busy + self.idle_with_ray + self.idle_starved
    }
}

/// How a run of cycles is classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    Busy,
    IdleWithRay,
    Starved,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Timeline {
    pub bucket_cycles: u64,
    pub buckets: Vec<Bucket>,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline { bucket_cycles: FIRST_WIDTH, buckets: Vec::new() }
    }
}

impl Timeline {
    /// Records `cycles` cycles from cycle `at` on, all alike.
    pub fn record(&mut self, mut at: u64, mut cycles: u64, what: Activity, live_slots: u64, slot_full: bool) {
        while cycles > 0 {
            let mut b = at / self.bucket_cycles;
            while b >= MAX_BUCKETS as u64 {
                self.widen();
                b = at / self.bucket_cycles;
            }
            let n = cycles.min((b + 1) * self.bucket_cycles - at);
            let b = b as usize;
            if self.buckets.len() <= b {
                self.buckets.resize(b + 1, Bucket::default());
            }
            let k = &mut self.buckets[b];
            match what {
                Activity::Busy => k.busy += n,
                Activity::IdleWithRay => k.idle_with_ray += n,
                Activity::Starved => k.idle_starved += n,
            }
            k.slot_cycles += live_slots * n;
            if slot_full {
                k.slot_full += n;
            }
            at += n;
            cycles -= n;
        }
    }

    /// Doubles the bucket width, merging neighbours.
    fn widen(&mut self) {
        let merged = self
            .buckets
            .chunks(2)
            .map(|p| {
                let mut b = p[0];
                if let Some(q) = p.get(1) {
                    b.add(q);
                }
                b
            })
            .collect();
        self.buckets = merged;
        self.bucket_cycles *= 2;
    }

    /// Adds another traversal core's timeline of the same dispatch (bucket by bucket).
    pub fn add(&mut self, o: &Timeline) {
        let mut o = o.clone();
        while o.bucket_cycles < self.bucket_cycles {
            o.widen();
        }
        while self.bucket_cycles < o.bucket_cycles {
            self.widen();
        }
        if self.buckets.len() < o.buckets.len() {
            self.buckets.resize(o.buckets.len(), Bucket::default());
        }
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            a.add(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_split_at_bucket_edges_and_widen_without_losing_cycles() {
        let mut t = Timeline::default();
        t.record(0, 10, Activity::Starved, 0, false);
        t.record(10, 20, Activity::Busy, 3, true);
        assert_eq!(t.buckets.len(), 2);
        assert_eq!(t.buckets[0], Bucket { busy: 6, idle_with_ray: 0, idle_starved: 10, slot_cycles: 18, slot_full: 6 });
        assert_eq!(t.buckets[1].busy, 14);
        // Far past the last bucket: widens until it fits, keeping every cycle.
        let end = FIRST_WIDTH * MAX_BUCKETS as u64 * 5;
        t.record(30, end - 30, Activity::IdleWithRay, 1, false);
        assert!(t.buckets.len() <= MAX_BUCKETS);
        assert_eq!(t.bucket_cycles, FIRST_WIDTH * 8);
        assert_eq!(t.buckets.iter().map(Bucket::cycles).sum::<u64>(), end);
        assert_eq!(t.buckets.iter().map(|b| b.busy).sum::<u64>(), 20);
        assert_eq!(t.buckets[0].busy + t.buckets[0].idle_starved, 30);
    }

    #[test]
    fn timelines_of_different_widths_add() {
        let mut a = Timeline::default();
        a.record(0, 100, Activity::Busy, 1, false);
        let mut b = Timeline::default();
        b.record(0, FIRST_WIDTH * MAX_BUCKETS as u64 * 2, Activity::Starved, 0, false);
        a.add(&b);
        assert_eq!(a.bucket_cycles, b.bucket_cycles);
        assert_eq!(a.buckets.iter().map(|k| k.busy).sum::<u64>(), 100);
        assert_eq!(a.buckets.iter().map(Bucket::cycles).sum::<u64>(), 100 + FIRST_WIDTH * MAX_BUCKETS as u64 * 2);
    }
}
