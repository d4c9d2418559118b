//! The texture unit in timed mode: one request per warp `TEX`, taken in order.
//!
//! A request's address stage sends the lines its texels lie in to the texture cache
//! (`banks` lines per cycle); misses go to the cluster's L2 like the L1's. The filter stage
//! takes the request when its last line has arrived and the previous request has left it,
//! and spends one cycle per `texels_per_cycle` texels it filters (border texels included);
//! the result is in the warp's registers `latency` cycles after that (address generation,
//! format conversion and the filter arithmetic). Requests queue in front of a busy stage;
//! the issue port never waits for the unit.

use crate::cache::{Cache, CacheGeom, CacheStats};
use crate::config::TexConfig;
use serde::Serialize;

/// What one core's texture unit did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TexStats {
    /// `TEX` instructions (one request each) and the texels they filtered.
    pub requests: u64,
    pub texels: u64,
    /// Distinct lines the requests read (each request's own set).
    pub lines: u64,
    /// Cycles the filter stage was busy.
    pub filter_cycles: u64,
    /// Cycles requests waited for a busy stage.
    pub queue_cycles: u64,
    pub cache: CacheStats,
}

impl TexStats {
    pub fn add(&mut self, o: &TexStats) {
        self.requests += o.requests;
        self.texels += o.texels;
        self.lines += o.lines;
        self.filter_cycles += o.filter_cycles;
        self.queue_cycles += o.queue_cycles;
        self.cache.add(&o.cache);
    }
}

/// A core's texture unit timing for one dispatch.
pub struct TexTiming {
    cache: Cache,
    ports: u64,
    texels_per_cycle: u64,
    latency: u64,
    /// The cycle each stage takes its next request.
    address_free: u64,
    filter_free: u64,
    pub stats: TexStats,
}

impl TexTiming {
    pub fn new(cfg: &TexConfig) -> TexTiming {
        TexTiming {
            cache: Cache::new(CacheGeom {
                size: cfg.cache_size,
                ways: cfg.cache_ways,
                banks: cfg.cache_banks,
                mshrs: cfg.cache_mshrs,
                latency: cfg.cache_latency,
                merge_depth: None,
            }),
            ports: cfg.cache_banks.max(1) as u64,
            texels_per_cycle: cfg.texels_per_cycle.max(1) as u64,
            latency: cfg.latency as u64,
            address_free: 0,
            filter_free: 0,
            stats: TexStats::default(),
        }
    }

    /// A request issued at `now` that reads `lines` and filters `texels`; `below(line, t)`
    /// answers a miss sent at `t` with the cycle the line arrives. Returns the cycles until
    /// the result is ready.
    pub fn request(&mut self, now: u64, lines: &[u64], texels: u64, mut below: impl FnMut(u64, u64) -> u64) -> u64 {
        let start = now.max(self.address_free);
        let mut arrived = start + 1;
        for (k, &line) in lines.iter().enumerate() {
            let t = start + k as u64 / self.ports;
            arrived = arrived.max(self.cache.read_delayed(line, t, |t2| below(line, t2)).ready);
        }
        self.address_free = start + (lines.len() as u64).div_ceil(self.ports).max(1);
        let filter = texels.div_ceil(self.texels_per_cycle).max(1);
        let filter_start = arrived.max(self.filter_free);
        self.filter_free = filter_start + filter;
        let s = &mut self.stats;
        s.requests += 1;
        s.texels += texels;
        s.lines += lines.len() as u64;
        s.filter_cycles += filter;
        s.queue_cycles += (start - now) + (filter_start - arrived);
        s.cache = self.cache.stats.clone();
        filter_start + filter + self.latency - now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> TexConfig {
        TexConfig {
            cache_size: 1024,
            cache_ways: 2,
            cache_banks: 2,
            cache_mshrs: 4,
            cache_latency: 2,
            texels_per_cycle: 4,
            latency: 10,
        }
    }

    #[test]
    fn misses_hits_and_throughput() {
        let mut t = TexTiming::new(&cfg());
        // Two lines missing to a 50-cycle level below: both arrive at 2 + 50 (+1 for the
        // second line's slot in the same bank pair); 8 texels filter in 2 cycles.
        let lat = t.request(0, &[0, 1], 8, |_, at| at + 50);
        assert_eq!(lat, 52 + 2 + 10);
        assert_eq!((t.stats.cache.misses, t.stats.cache.hits), (2, 0));
        // The same lines again, later: hits; 32 texels take 8 filter cycles.
        let lat = t.request(100, &[0, 1], 32, |_, _| unreachable!("hits"));
        assert_eq!(lat, 2 + 8 + 10);
        assert_eq!(t.stats.cache.hits, 2);
        // A request right behind it waits for the filter stage (busy until 102 + 8).
        let lat = t.request(101, &[0], 4, |_, _| unreachable!("hits"));
        assert_eq!(lat, (110 + 1 + 10) - 101);
        assert_eq!((t.stats.requests, t.stats.texels, t.stats.lines), (3, 44, 5));
        assert!(t.stats.queue_cycles > 0);
    }
}
