//! Device shape and unit knobs. Derived values are computed here, never configured.

/// Simulation mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Results only, as fast as possible.
    #[default]
    Functional,
    /// Cycle-level cores and RTU with counters.
    Timed,
}

/// RTU knobs (seed 000 §9).
#[derive(Clone, Debug, PartialEq)]
pub struct RtuConfig {
    /// CW-BVH width the transcoder builds and the walker expects (4 or 6).
    pub bvh_width: u32,
    /// Short-stack entries per traversal context. On overflow the walker drops the farthest
    /// entry and restarts from the root when the stack runs dry (seed 000 §4.3). The seed's
    /// RTL default is 16; ours is deeper because our scenes are megabytes, not 16 KB.
    pub stack_depth: u32,
    /// Restarts allowed per BLAS entry before the walk is declared broken.
    pub restart_cap: u32,
    /// Node and leaf visits allowed for one ray before the walk is declared broken (a
    /// cyclic or corrupt BVH is caught by this bound, never walked forever).
    pub max_visits: u64,
}

impl Default for RtuConfig {
    fn default() -> Self {
        RtuConfig { bvh_width: 4, stack_depth: 64, restart_cap: 8, max_visits: 1 << 24 }
    }
}

/// Device shape and global knobs.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceConfig {
    pub mode: Mode,
    pub num_clusters: u32,
    /// Cores per cluster.
    pub cores_per_cluster: u32,
    /// Cores per socket (cores sharing one RTU socket).
    pub socket_size: u32,
    /// Warp slots per core.
    pub num_warps: u32,
    /// Lanes per warp (at most 32).
    pub num_threads: u32,
    /// Local memory per core, bytes.
    pub lmem_bytes: u32,
    pub rtu: RtuConfig,
    /// Wall-clock limit for one dispatch, milliseconds (0 = none).
    pub watchdog_ms: u64,
    /// Host threads that run cores in parallel (0 = all host cores).
    pub host_threads: u32,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            mode: Mode::Functional,
            num_clusters: 1,
            cores_per_cluster: 4,
            socket_size: 4,
            num_warps: 32,
            num_threads: 32,
            lmem_bytes: 64 * 1024,
            rtu: RtuConfig::default(),
            watchdog_ms: 60_000,
            host_threads: 0,
        }
    }
}

impl DeviceConfig {
    pub fn num_cores(&self) -> u32 {
        self.num_clusters * self.cores_per_cluster
    }

    /// Largest CTA a core can hold (all its warps).
    pub fn max_block_threads(&self) -> u32 {
        self.num_warps * self.num_threads
    }

    /// Checks the rules that tie knobs together; the error names the rule.
    pub fn validate(&self) -> Result<(), String> {
        if self.num_threads == 0
            || self.num_threads > crate::abi::MAX_THREADS as u32
            || !self.num_threads.is_power_of_two()
        {
            return Err(format!(
                "num_threads = {} must be a power of two in 1..={}",
                self.num_threads,
                crate::abi::MAX_THREADS
            ));
        }
        if self.num_warps == 0 || self.num_warps > 64 {
            return Err(format!("num_warps = {} must be in 1..=64", self.num_warps));
        }
        if self.num_clusters == 0 || self.cores_per_cluster == 0 {
            return Err("the device needs at least one cluster with at least one core".into());
        }
        if self.socket_size == 0 || !self.cores_per_cluster.is_multiple_of(self.socket_size) {
            return Err(format!(
                "cores_per_cluster = {} must be a multiple of socket_size = {}",
                self.cores_per_cluster, self.socket_size
            ));
        }
        if !crate::abi::bvh::WIDTHS.contains(&self.rtu.bvh_width) {
            return Err(format!("rtu.bvh_width = {} must be 4 or 6", self.rtu.bvh_width));
        }
        if self.rtu.stack_depth < 2 {
            return Err(format!("rtu.stack_depth = {} must be at least 2", self.rtu.stack_depth));
        }
        if !self.lmem_bytes.is_multiple_of(crate::abi::dcr::LMEM_BLOCK) {
            return Err(format!(
                "lmem_bytes = {} must be a multiple of the LMEM block ({})",
                self.lmem_bytes,
                crate::abi::dcr::LMEM_BLOCK
            ));
        }
        Ok(())
    }

    /// Host threads to use for cores.
    pub fn host_threads(&self) -> usize {
        if self.host_threads > 0 {
            self.host_threads as usize
        } else {
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_holds_a_1024_thread_cta() {
        let c = DeviceConfig::default();
        c.validate().unwrap();
        assert!(c.max_block_threads() >= 1024);
    }

    #[test]
    fn invalid_combinations_name_the_rule() {
        let c = DeviceConfig { num_threads: 24, ..Default::default() };
        assert!(c.validate().unwrap_err().contains("power of two"));
        let c = DeviceConfig { socket_size: 3, ..Default::default() };
        assert!(c.validate().unwrap_err().contains("socket_size"));
        let mut c = DeviceConfig::default();
        c.rtu.bvh_width = 5;
        assert!(c.validate().unwrap_err().contains("bvh_width"));
    }
}
