//! The physical device (what the model is configured as) and the logical device (the address
//! space, the queue, and the one device-lost path).

use crate::queue::Queue;
use crate::{vk, VkResult};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use vortex_model::config::DeviceConfig;
use vortex_model::mem::AddressSpace;
use vortex_transcode::accel;

/// Fixed UUIDs: the driver UUID also versions serialized acceleration structures (with
/// `vortex_transcode::accel::serial::COMPAT_UUID`).
pub const DRIVER_UUID: [u8; 16] = *b"VortexRT-drv-001";
pub const DEVICE_UUID: [u8; 16] = *b"VortexRT-dev-001";

/// The modelled GPU as the instance enumerates it.
pub struct Gpu {
    pub config: DeviceConfig,
    /// Acceleration-structure builder knobs (the BVH width is `config.rtu.bvh_width`).
    pub accel: accel::Options,
}

impl Gpu {
    /// The device configuration: defaults, then `VORTEX_CONFIG` (a TOML file, see
    /// `docs/TIMING.md`; an invalid one is refused), then the
    /// environment (`VORTEX_MODE`, `VORTEX_WATCHDOG_IDLE_MS`, `VORTEX_WATCHDOG_MS`,
    /// `VORTEX_THREADS`, `VORTEX_WARP_SIZE`, `VORTEX_BVH_WIDTH`, `VORTEX_BVH_LEAF`,
    /// `VORTEX_BVH_BUILDER`, `VORTEX_RT_ARCH`, `VORTEX_RT_PIPELINE`). A malformed value is
    /// reported and ignored, except those that shape the machine (the warp size, the BVH
    /// width, the ray-tracing architecture): like the configuration, they are refused.
    pub fn from_env() -> Result<Gpu, String> {
        // A configuration that cannot be used is refused, not replaced by the defaults: a
        // measurement taken on a machine other than the one asked for is worse than none.
        let mut config = match std::env::var("VORTEX_CONFIG") {
            Ok(path) if !path.trim().is_empty() => DeviceConfig::from_file(path.trim())?,
            _ => DeviceConfig::default(),
        };
        if std::env::var_os("VORTEX_MODE").is_some() {
            config.mode = vortex_model::config::Mode::from_env();
        }
        for (name, knob) in
            [("VORTEX_WATCHDOG_IDLE_MS", &mut config.watchdog_idle_ms), ("VORTEX_WATCHDOG_MS", &mut config.watchdog_ms)]
        {
            if let Ok(v) = std::env::var(name) {
                match v.trim().parse::<u64>() {
                    Ok(ms) => *knob = ms,
                    Err(_) => tracing::error!("{name}={v:?} is not a number of milliseconds; ignored"),
                }
            }
        }
        if let Ok(v) = std::env::var("VORTEX_THREADS") {
            match v.trim().parse::<u32>() {
                Ok(n) => config.host_threads = n,
                Err(_) => tracing::error!("VORTEX_THREADS={v:?} is not a thread count; ignored"),
            }
        }
        if let Ok(v) = std::env::var("VORTEX_WARP_SIZE") {
            config.num_threads =
                v.trim().parse::<u32>().map_err(|_| format!("VORTEX_WARP_SIZE={v:?} is not a lane count"))?;
        }
        // VORTEX_STATS also asks for the per-invocation RTU work (the heatmap's data).
        config.detailed_stats = std::env::var_os("VORTEX_STATS").is_some();
        if let Ok(v) = std::env::var("VORTEX_BVH_WIDTH") {
            match v.trim().parse::<u32>() {
                Ok(w) if vortex_model::abi::bvh::WIDTHS.contains(&w) => config.rtu.bvh_width = w,
                _ => return Err(format!("VORTEX_BVH_WIDTH={v:?} is not 4 or 6")),
            }
        }
        if let Ok(v) = std::env::var("VORTEX_RT_ARCH") {
            config.rt_arch = vortex_model::config::RtArch::parse(&v)?;
        }
        if let Ok(v) = std::env::var("VORTEX_RT_PIPELINE") {
            match v.trim() {
                "1" | "true" | "on" => config.rt_pipeline = true,
                "0" | "false" | "off" | "" => config.rt_pipeline = false,
                _ => tracing::error!("VORTEX_RT_PIPELINE={v:?} is not 0 or 1; ignored"),
            }
        }
        config.validate()?;
        // The architecture decides the layout every build on the device writes.
        let mut accel = accel::Options::for_arch(config.rt_arch, config.rtu.bvh_width, config.isect.box16);
        if let Ok(v) = std::env::var("VORTEX_BVH_LEAF") {
            match v.trim().parse::<u32>() {
                Ok(l @ 1..=8) => accel.max_leaf = Some(l),
                _ => tracing::error!("VORTEX_BVH_LEAF={v:?} is not a leaf size from 1 to 8; ignored"),
            }
        }
        if let Ok(v) = std::env::var("VORTEX_BVH_BUILDER") {
            accel.builder = match v.trim() {
                "sah" => Some(accel::Builder::Sah),
                "fast" => Some(accel::Builder::Fast),
                "sweep" => Some(accel::Builder::FullSweep),
                _ => {
                    tracing::error!("VORTEX_BVH_BUILDER={v:?} is not sah, fast or sweep; ignored");
                    None
                }
            };
        }
        Ok(Gpu { config, accel })
    }

    pub fn name(&self) -> String {
        let c = &self.config;
        if c.rt_arch == vortex_model::config::RtArch::Rdna2 {
            return format!(
                "Vortex RT (modelled, {} cores x {} warps x {} threads, rdna2 node intersection)",
                c.num_cores(),
                c.num_warps,
                c.num_threads
            );
        }
        format!(
            "Vortex RT (modelled, {} cores x {} warps x {} threads, CW-BVH{})",
            c.num_cores(),
            c.num_warps,
            c.num_threads,
            c.rtu.bvh_width
        )
    }
}

/// A logical device.
pub struct Device {
    pub config: DeviceConfig,
    /// Builder knobs every build on this device uses.
    pub accel: accel::Options,
    /// Live acceleration structures by handle value (host builds name BLASes by handle).
    pub accels: crate::accel::Registry,
    pub space: Arc<AddressSpace>,
    pub queue: Arc<Queue>,
    lost: AtomicBool,
    /// `robustBufferAccess` was enabled at creation: kernels are compiled with bounds checks.
    robust_buffer_access: AtomicBool,
    lost_reason: Mutex<Option<String>>,
    next_kernel_id: AtomicU64,
}

impl Device {
    pub fn new(gpu: &Gpu) -> VkResult<Arc<Device>> {
        let space = Arc::new(AddressSpace::new());
        let config = gpu.config.clone();
        let mut spawn_error = None;
        let device = Arc::new_cyclic(|weak| {
            let queue = Queue::new(weak.clone(), config.clone(), space.clone()).unwrap_or_else(|e| {
                spawn_error = Some(e);
                Queue::dead()
            });
            Device {
                queue,
                config,
                accel: gpu.accel,
                accels: crate::accel::Registry::default(),
                space,
                lost: AtomicBool::new(false),
                robust_buffer_access: AtomicBool::new(false),
                lost_reason: Mutex::new(None),
                next_kernel_id: AtomicU64::new(1),
            }
        });
        match spawn_error {
            None => Ok(device),
            Some(e) => {
                tracing::error!("vkCreateDevice: cannot start the queue thread: {e}");
                Err(vk::Result::ERROR_INITIALIZATION_FAILED)
            }
        }
    }

    /// Turns robust buffer access on (at device creation, before any pipeline): kernels
    /// compiled from then on check every buffer access against its descriptor's range and
    /// send one outside it to the null window, which then reads zero and drops writes.
    pub fn set_robust_buffer_access(&self, on: bool) {
        self.robust_buffer_access.store(on, Ordering::Relaxed);
        if on {
            self.space.set_null_descriptor(true);
        }
    }

    pub fn robust_buffer_access(&self) -> bool {
        self.robust_buffer_access.load(Ordering::Relaxed)
    }

    /// Marks the device lost; the first reason is logged and kept. Returns whether this
    /// call lost it (false: it was lost already).
    pub fn set_lost(&self, reason: &str) -> bool {
        let mut r = self.lost_reason.lock();
        let first = r.is_none();
        if first {
            tracing::error!("VK_ERROR_DEVICE_LOST: {reason}");
            *r = Some(reason.to_string());
        }
        self.lost.store(true, Ordering::Release);
        first
    }

    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    pub fn lost_reason(&self) -> Option<String> {
        self.lost_reason.lock().clone()
    }

    /// `Err(DEVICE_LOST)` once the device is lost.
    pub fn check(&self) -> VkResult<()> {
        if self.is_lost() {
            Err(vk::Result::ERROR_DEVICE_LOST)
        } else {
            Ok(())
        }
    }

    /// A fresh kernel id for the decode cache.
    pub fn kernel_id(&self) -> u64 {
        self.next_kernel_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Waits until every submitted batch has finished.
    pub fn wait_idle(&self) -> VkResult<()> {
        self.queue.wait_idle()?;
        self.check()
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        self.queue.shutdown();
    }
}
