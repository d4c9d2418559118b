//! `VkQueryPool`: slots that become available when the device (or, for acceleration-
//! structure properties, the host) writes them. Acceleration-structure property queries
//! (compacted size, serialization size, size, bottom-level pointer count), occlusion
//! queries (always 0: this device draws nothing) and timestamps (nanoseconds since the
//! device was created, taken when the queue reaches the command).

use crate::{vk, VkResult};
use parking_lot::{Condvar, Mutex};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Nanoseconds on the device's timestamp clock (`timestampPeriod` 1).
pub fn timestamp() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64 + 1
}

/// True for the acceleration-structure property query types.
pub fn is_accel_property(ty: vk::QueryType) -> bool {
    matches!(
        ty,
        vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR
            | vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_SIZE_KHR
            | vk::QueryType::ACCELERATION_STRUCTURE_SIZE_KHR
            | vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_BOTTOM_LEVEL_POINTERS_KHR
    )
}

pub struct QueryPool {
    pub ty: vk::QueryType,
    pub count: u32,
    /// Values each query has (pipeline statistics: one per requested counter).
    pub values: u32,
    slots: Mutex<Vec<Option<u64>>>,
    cv: Condvar,
}

impl QueryPool {
    pub fn new(ty: vk::QueryType, count: u32, stats: vk::QueryPipelineStatisticFlags) -> QueryPool {
        let values = if ty == vk::QueryType::PIPELINE_STATISTICS { stats.as_raw().count_ones().max(1) } else { 1 };
        QueryPool { ty, count, values, slots: Mutex::new(vec![None; count as usize]), cv: Condvar::new() }
    }

    /// True if `[first, first + count)` lies in the pool.
    pub fn covers(&self, first: u32, count: u32) -> bool {
        first.checked_add(count).is_some_and(|end| end <= self.count)
    }

    /// Makes queries unavailable.
    pub fn reset(&self, first: u32, count: u32) {
        let mut s = self.slots.lock();
        let end = (first as usize + count as usize).min(s.len());
        for q in &mut s[first.min(end as u32) as usize..end] {
            *q = None;
        }
    }

    /// Writes a query's value and makes it available.
    pub fn set(&self, query: u32, value: u64) {
        if let Some(q) = self.slots.lock().get_mut(query as usize) {
            *q = Some(value);
        }
        self.cv.notify_all();
    }

    pub fn get(&self, query: u32) -> Option<u64> {
        self.slots.lock().get(query as usize).copied().flatten()
    }

    /// Writes the results of `[first, first + count)` into `out` with `stride`, as
    /// `vkGetQueryPoolResults` / `vkCmdCopyQueryPoolResults` define them. With `WAIT`,
    /// waits for each query (giving up with `DEVICE_LOST` if `lost` says so); returns
    /// `NOT_READY` if some query was unavailable without `WAIT`.
    pub fn results(
        &self,
        first: u32,
        count: u32,
        out: &mut [u8],
        stride: u64,
        flags: vk::QueryResultFlags,
        lost: &dyn Fn() -> bool,
    ) -> VkResult<vk::Result> {
        let mut ready = true;
        for i in 0..count {
            let q = first + i;
            let mut value = self.get(q);
            if value.is_none() && flags.contains(vk::QueryResultFlags::WAIT) {
                value = self.wait(q, lost)?;
            }
            ready &= self.put(i, value, out, stride, flags);
        }
        Ok(if ready { vk::Result::SUCCESS } else { vk::Result::NOT_READY })
    }

    /// `results` without waiting, for the device timeline (`WAIT` is ignored): every earlier
    /// command has run, so an unavailable query is one that was never written, and its
    /// value is left (or zeroed, with `PARTIAL`) as Vulkan says. Returns whether every
    /// query was available.
    pub fn copy_results(
        &self,
        first: u32,
        count: u32,
        out: &mut [u8],
        stride: u64,
        flags: vk::QueryResultFlags,
    ) -> bool {
        let mut ready = true;
        for i in 0..count {
            ready &= self.put(i, self.get(first + i), out, stride, flags);
        }
        ready
    }

    /// Writes result `i` (query value `value`) at `i * stride`; returns whether it was
    /// available.
    fn put(&self, i: u32, value: Option<u64>, out: &mut [u8], stride: u64, flags: vk::QueryResultFlags) -> bool {
        let wide = flags.contains(vk::QueryResultFlags::TYPE_64);
        let word = if wide { 8 } else { 4 };
        let at = (i as u64 * stride) as usize;
        let mut put = |k: usize, v: u64| {
            let o = at + k * word;
            if o + word <= out.len() {
                if wide {
                    out[o..o + 8].copy_from_slice(&v.to_le_bytes());
                } else {
                    out[o..o + 4].copy_from_slice(&(v as u32).to_le_bytes());
                }
            }
        };
        let n = self.values as usize;
        match value {
            Some(v) => {
                put(0, v);
                for k in 1..n {
                    put(k, 0);
                }
            }
            None if flags.contains(vk::QueryResultFlags::PARTIAL) => {
                for k in 0..n {
                    put(k, 0);
                }
            }
            None => {}
        }
        if flags.contains(vk::QueryResultFlags::WITH_AVAILABILITY) {
            put(n, value.is_some() as u64);
        }
        value.is_some()
    }

    fn wait(&self, q: u32, lost: &dyn Fn() -> bool) -> VkResult<Option<u64>> {
        let mut s = self.slots.lock();
        loop {
            match s.get(q as usize) {
                Some(Some(v)) => return Ok(Some(*v)),
                Some(None) => {}
                None => return Ok(None),
            }
            if lost() {
                return Err(vk::Result::ERROR_DEVICE_LOST);
            }
            self.cv.wait_until(&mut s, Instant::now() + Duration::from_millis(50));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_follow_the_flags() {
        let p = QueryPool::new(vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR, 3, Default::default());
        p.set(0, 0x1_0000_0005);
        let mut out = [0xffu8; 48];
        let f64a = vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY;
        assert_eq!(p.results(0, 2, &mut out, 16, f64a, &|| false), Ok(vk::Result::NOT_READY));
        assert_eq!(u64::from_le_bytes(out[0..8].try_into().unwrap()), 0x1_0000_0005);
        assert_eq!(u64::from_le_bytes(out[8..16].try_into().unwrap()), 1);
        assert_eq!(&out[16..24], &[0xff; 8], "no partial value without PARTIAL");
        assert_eq!(u64::from_le_bytes(out[24..32].try_into().unwrap()), 0);
        let mut out = [0u8; 8];
        assert_eq!(p.results(0, 1, &mut out, 4, Default::default(), &|| false), Ok(vk::Result::SUCCESS));
        assert_eq!(u32::from_le_bytes(out[0..4].try_into().unwrap()), 5, "32-bit results wrap");
        p.reset(0, 3);
        assert_eq!(p.get(0), None);
        assert_eq!(
            p.results(0, 1, &mut out, 4, vk::QueryResultFlags::WAIT, &|| true),
            Err(vk::Result::ERROR_DEVICE_LOST)
        );
    }
}
