//! The node-intersection unit in timed mode: one request per warp `ISECT`, taken in order,
//! like the texture unit's (seed 003 puts the unit in the texture path).
//!
//! The fetch stage sends the request's node lines to the node cache (`cache_banks` lines per
//! cycle); misses go to the cluster's L2. The test stage takes the request when its last
//! line has arrived and the previous request has left it, and tests one lane per cycle:
//! a box node's four ray/box tests, or one ray/triangle test (seed 003's rates). The result
//! words are in the warp's registers `box_latency` (or `tri_latency`, if any lane tested a
//! triangle) cycles after the last lane's test. Inactive lanes cost nothing.

use crate::cache::{Cache, CacheGeom, CacheStats};
use crate::config::IsectConfig;
use serde::Serialize;

/// What one core's intersection unit did in timed mode.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IsectStats {
    pub requests: u64,
    /// Distinct node lines the requests read (each request's own set).
    pub lines: u64,
    /// Cycles the test stage was busy (one per tested lane).
    pub test_cycles: u64,
    /// Cycles requests waited for a busy stage.
    pub queue_cycles: u64,
    pub cache: CacheStats,
}

impl IsectStats {
    pub fn add(&mut self, o: &IsectStats) {
        self.requests += o.requests;
        self.lines += o.lines;
        self.test_cycles += o.test_cycles;
        self.queue_cycles += o.queue_cycles;
        self.cache.add(&o.cache);
    }
}

/// A core's intersection-unit timing for one dispatch.
pub struct IsectTiming {
    cache: Cache,
    ports: u64,
    box_latency: u64,
    tri_latency: u64,
    fetch_free: u64,
    test_free: u64,
    pub stats: IsectStats,
}

impl IsectTiming {
    pub fn new(cfg: &IsectConfig) -> IsectTiming {
        IsectTiming {
            cache: Cache::new(CacheGeom {
                size: cfg.cache_size,
                ways: cfg.cache_ways,
                banks: cfg.cache_banks,
                mshrs: cfg.cache_mshrs,
                latency: cfg.cache_latency,
                merge_depth: None,
            }),
            ports: cfg.cache_banks.max(1) as u64,
            box_latency: cfg.box_latency as u64,
            tri_latency: cfg.tri_latency as u64,
            fetch_free: 0,
            test_free: 0,
            stats: IsectStats::default(),
        }
    }

    /// A request issued at `now` reading `lines` and testing `box_lanes` box nodes and
    /// `tri_lanes` triangles; `below(line, t)` answers a miss sent at `t` with the cycle the
    /// line arrives. Returns the cycles until the result is ready.
    pub fn request(
        &mut self,
        now: u64,
        lines: &[u64],
        box_lanes: u32,
        tri_lanes: u32,
        mut below: impl FnMut(u64, u64) -> u64,
    ) -> u64 {
        let start = now.max(self.fetch_free);
        let mut arrived = start + 1;
        for (k, &line) in lines.iter().enumerate() {
            let t = start + k as u64 / self.ports;
            arrived = arrived.max(self.cache.read_delayed(line, t, |t2| below(line, t2)).ready);
        }
        self.fetch_free = start + (lines.len() as u64).div_ceil(self.ports).max(1);
        let tests = (box_lanes + tri_lanes) as u64;
        let test_start = arrived.max(self.test_free);
        self.test_free = test_start + tests.max(1);
        let latency = if tri_lanes > 0 { self.tri_latency.max(self.box_latency) } else { self.box_latency };
        let s = &mut self.stats;
        s.requests += 1;
        s.lines += lines.len() as u64;
        s.test_cycles += tests;
        s.queue_cycles += (start - now) + (test_start - arrived);
        s.cache = self.cache.stats.clone();
        test_start + tests.max(1) + latency - now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_serialise_in_the_test_stage_and_lines_hit_the_second_time() {
        let cfg = IsectConfig { box_latency: 10, tri_latency: 20, cache_latency: 2, ..IsectConfig::default() };
        let mut t = IsectTiming::new(&cfg);
        // Two missing lines (50 cycles below), then 32 box lanes at one per cycle.
        let lat = t.request(0, &[0, 1], 32, 0, |_, at| at + 50);
        assert_eq!(lat, 52 + 32 + 10);
        assert_eq!(t.stats.cache.misses, 2);
        // Later, the same lines hit; one triangle lane: 1 test cycle, triangle latency.
        let lat = t.request(1000, &[0, 1], 0, 1, |_, _| panic!("a hit"));
        assert_eq!(lat, 2 + 1 + 20);
        assert_eq!((t.stats.requests, t.stats.test_cycles), (2, 33));
    }
}
