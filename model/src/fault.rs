//! Device faults. A fault stops the dispatch; the queue reports `VK_ERROR_DEVICE_LOST` and
//! logs the fault's one-line description, which names the kernel, PC, lane and address where
//! those are known.

use crate::mem::MemFault;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// A load, store or atomic outside every mapped region (or misaligned).
    Memory(MemFault),
    /// The watchdog's idle rule: the dispatch made no progress (no warp retired, no CTA
    /// launched, no ray completed) for `limit_ms` (`watchdog.rs`).
    NoProgress { limit_ms: u64 },
    /// The watchdog's optional wall-clock rule: the dispatch ran longer than `limit_ms`.
    WallClock { limit_ms: u64 },
    /// A `TRAP` instruction (OpUnreachable and friends).
    Trap { code: u32 },
    /// The kernel image at `KMU_PC` could not be decoded.
    BadKernel,
    /// The RTU met a structure it cannot walk (bad header, corrupt or cyclic BVH).
    BadAccelerationStructure,
    /// An instruction the core cannot execute as encoded (bad operand, register out of range).
    IllegalInstruction,
    /// The launch itself is invalid (block too large for a core, zero-sized cluster, ...).
    BadLaunch,
}

/// A device fault with where it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    /// Human-readable detail (what exactly was wrong).
    pub detail: String,
    pub kernel: Option<String>,
    pub pc: Option<u32>,
    pub core: Option<u32>,
    pub warp: Option<u32>,
    pub lane: Option<u32>,
}

impl Fault {
    pub fn new(kind: FaultKind, detail: impl Into<String>) -> Fault {
        Fault { kind, detail: detail.into(), kernel: None, pc: None, core: None, warp: None, lane: None }
    }

    pub fn memory(f: MemFault) -> Fault {
        Fault::new(FaultKind::Memory(f), f.to_string())
    }

    pub fn at(mut self, kernel: &str, pc: u32, core: u32, warp: u32, lane: Option<u32>) -> Fault {
        self.kernel.get_or_insert_with(|| kernel.to_string());
        self.pc.get_or_insert(pc);
        self.core.get_or_insert(core);
        self.warp.get_or_insert(warp);
        if self.lane.is_none() {
            self.lane = lane;
        }
        self
    }

    /// True for the watchdog's faults (a hang or an over-long dispatch, not a bad program).
    pub fn is_watchdog(&self) -> bool {
        matches!(self.kind, FaultKind::NoProgress { .. } | FaultKind::WallClock { .. })
    }

    /// The faulting address, for memory faults.
    pub fn address(&self) -> Option<u64> {
        match self.kind {
            FaultKind::Memory(m) => Some(m.addr),
            _ => None,
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match &self.kind {
            FaultKind::Memory(_) => "memory fault",
            FaultKind::NoProgress { .. } => "watchdog, idle limit",
            FaultKind::WallClock { .. } => "watchdog, wall-clock limit",
            FaultKind::Trap { .. } => "trap",
            FaultKind::BadKernel => "bad kernel image",
            FaultKind::BadAccelerationStructure => "bad acceleration structure",
            FaultKind::IllegalInstruction => "illegal instruction",
            FaultKind::BadLaunch => "bad launch",
        };
        write!(f, "device fault ({what}): {}", self.detail)?;
        if let Some(k) = &self.kernel {
            write!(f, " in kernel '{k}'")?;
        }
        if let Some(pc) = self.pc {
            write!(f, " at pc {pc}")?;
        }
        if let Some(c) = self.core {
            write!(f, ", core {c}")?;
        }
        if let Some(w) = self.warp {
            write!(f, ", warp {w}")?;
        }
        if let Some(l) = self.lane {
            write!(f, ", lane {l}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Fault {}

impl From<MemFault> for Fault {
    fn from(m: MemFault) -> Fault {
        Fault::memory(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::MemFaultKind;

    #[test]
    fn display_names_kernel_pc_lane_and_address() {
        let f = Fault::memory(MemFault { addr: 0xdead_0000, size: 4, kind: MemFaultKind::Unmapped }).at(
            "main",
            17,
            2,
            3,
            Some(5),
        );
        let s = f.to_string();
        assert!(s.contains("0xdead0000"), "{s}");
        assert!(s.contains("kernel 'main'") && s.contains("pc 17") && s.contains("lane 5"), "{s}");
        assert_eq!(f.address(), Some(0xdead_0000));
    }
}
