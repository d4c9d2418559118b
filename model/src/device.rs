//! The whole device as the host sees it: a DCR file, a start pulse, and memory.
//!
//! `start` latches the launch, decodes the kernel (once per kernel id), and lets the KMU hand
//! clusters to the cores until the grid is done. In functional mode the cores run on host
//! threads; a core pulls its next cluster when its dispatcher can take it, as the launch
//! fabric's round-robin over ready cores does.

use crate::config::DeviceConfig;
use crate::core::decode::DecodedKernel;
use crate::core::{Core, CoreStats, DispatchCtx};
use crate::dcr::{DcrFile, LaunchState};
use crate::fault::{Fault, FaultKind};
use crate::kmu::Kmu;
use crate::mem::AddressSpace;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one dispatch did.
#[derive(Clone, Debug, Default)]
pub struct DispatchReport {
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub totals: CoreStats,
    pub per_core: Vec<CoreStats>,
    pub wall: Duration,
}

pub struct Device {
    cfg: DeviceConfig,
    space: Arc<AddressSpace>,
    dcrs: DcrFile,
    kernels: HashMap<(u64, u64), Arc<DecodedKernel>>,
    cores: Vec<Core>,
}

impl Device {
    /// A device with its own address space.
    pub fn new(cfg: DeviceConfig) -> Result<Device, String> {
        Device::with_memory(cfg, Arc::new(AddressSpace::new()))
    }

    /// A device over an existing address space (the runtime owns allocation).
    pub fn with_memory(cfg: DeviceConfig, space: Arc<AddressSpace>) -> Result<Device, String> {
        cfg.validate()?;
        let cores = (0..cfg.num_cores()).map(|i| Core::new(i, &cfg)).collect();
        Ok(Device { cfg, space, dcrs: DcrFile::default(), kernels: HashMap::new(), cores })
    }

    pub fn config(&self) -> &DeviceConfig {
        &self.cfg
    }

    pub fn memory(&self) -> &Arc<AddressSpace> {
        &self.space
    }

    pub fn dcr_write(&mut self, addr: u32, value: u32) -> Result<(), Fault> {
        self.dcrs.write(addr, value).map_err(|e| Fault::new(FaultKind::BadLaunch, e))
    }

    pub fn dcrs(&self) -> &DcrFile {
        &self.dcrs
    }

    fn kernel(&mut self, mem: &crate::mem::MemoryMap, pc: u64) -> Result<Arc<DecodedKernel>, Fault> {
        let head: [u8; crate::abi::kernel::image::HEADER_BYTES] = mem
            .read_array(pc)
            .map_err(|m| Fault::new(FaultKind::BadKernel, format!("kernel image at {pc:#x}: {m}")))?;
        let id = crate::abi::kernel::KernelHeader::parse(&head)
            .map_err(|e| Fault::new(FaultKind::BadKernel, format!("kernel image at {pc:#x}: {e}")))?
            .kernel_id;
        if let Some(k) = self.kernels.get(&(pc, id)) {
            return Ok(k.clone());
        }
        let k = Arc::new(DecodedKernel::load(mem, pc)?);
        if self.kernels.len() > 4096 {
            self.kernels.clear();
        }
        self.kernels.insert((pc, id), k.clone());
        Ok(k)
    }

    /// The start pulse: runs the launch programmed in the DCRs to completion.
    pub fn start(&mut self) -> Result<DispatchReport, Fault> {
        let t0 = Instant::now();
        let launch: LaunchState = self.dcrs.launch();
        let mut report = DispatchReport { grid: launch.grid_dim, block: launch.block_dim, ..Default::default() };
        // An empty grid is not an error and walks nothing.
        if !launch.grid_nonempty() {
            return Ok(report);
        }
        let mem = self.space.snapshot();
        let kernel = self.kernel(&mem, launch.pc)?;
        report.kernel = kernel.name.clone();
        let kmu = Kmu::new(&launch)?;
        let stop = AtomicBool::new(false);
        let deadline = (self.cfg.watchdog_ms > 0).then(|| t0 + Duration::from_millis(self.cfg.watchdog_ms));
        let ctx = DispatchCtx {
            mem: &mem,
            kernel: &kernel,
            launch: &launch,
            num_cores: self.cfg.num_cores(),
            stop: &stop,
            deadline,
            watchdog_ms: self.cfg.watchdog_ms,
        };
        let next = AtomicU64::new(0);
        let total = kmu.num_clusters();
        let pull = || {
            let i = next.fetch_add(1, Ordering::Relaxed);
            (i < total).then(|| kmu.cluster(i).collect::<Vec<_>>())
        };
        let threads = self.cfg.host_threads().min(self.cores.len()).min(total as usize).max(1);
        let results: Vec<Result<CoreStats, Fault>> = if threads == 1 {
            let mut pull = pull;
            vec![self.cores[0].run(&ctx, &mut pull)]
        } else {
            let ctx = &ctx;
            let pull = &pull;
            std::thread::scope(|s| {
                let handles: Vec<_> = self.cores[..threads]
                    .iter_mut()
                    .map(|core| {
                        s.spawn(move || {
                            let mut p = || pull();
                            let r = core.run(ctx, &mut p);
                            if r.is_err() {
                                ctx.stop.store(true, Ordering::Relaxed);
                            }
                            r
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| Err(Fault::new(FaultKind::BadLaunch, "a core thread panicked")))
                    })
                    .collect()
            })
        };
        let mut first_fault: Option<Fault> = None;
        for r in results {
            match r {
                Ok(s) => {
                    report.totals.add(&s);
                    report.per_core.push(s);
                }
                Err(f) => {
                    // Prefer the fault that caused the stop over the cores that merely stopped.
                    let secondary = f.detail.starts_with("stopped:");
                    if first_fault.as_ref().is_none_or(|g| g.detail.starts_with("stopped:") && !secondary) {
                        first_fault = Some(f);
                    }
                }
            }
        }
        if let Some(f) = first_fault {
            return Err(f);
        }
        report.wall = t0.elapsed();
        Ok(report)
    }
}
