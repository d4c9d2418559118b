//! The queue and its command processor: one thread per queue that owns the device model,
//! waits on semaphores, plays each submitted stream into the model in order, and then signals
//! semaphores and the fence. A device fault marks the device lost; the batch's fence and
//! semaphores are still signaled so no waiter hangs, and waiters see DEVICE_LOST.

use crate::device::Device;
use crate::stream::{play, Recording};
use crate::sync::{Fence, Semaphore};
use crate::{vk, VkResult};
use parking_lot::{Condvar, Mutex};
use std::sync::mpsc;
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use vortex_model::config::DeviceConfig;
use vortex_model::device::Device as Model;
use vortex_model::mem::AddressSpace;

pub struct Submission {
    pub waits: Vec<(Arc<Semaphore>, u64)>,
    pub recordings: Vec<Arc<Recording>>,
    pub signals: Vec<(Arc<Semaphore>, u64)>,
    pub fence: Option<Arc<Fence>>,
}

enum Work {
    Submit(Submission),
    Shutdown,
}

pub struct Queue {
    tx: Mutex<Option<mpsc::Sender<Work>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Batches submitted and not yet finished.
    in_flight: Mutex<u64>,
    idle: Condvar,
}

impl Queue {
    pub fn new(device: Weak<Device>, config: DeviceConfig, space: Arc<AddressSpace>) -> std::io::Result<Arc<Queue>> {
        let (tx, rx) = mpsc::channel::<Work>();
        let q = Arc::new(Queue {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(None),
            in_flight: Mutex::new(0),
            idle: Condvar::new(),
        });
        let weak_q = Arc::downgrade(&q);
        let handle = std::thread::Builder::new()
            .name("vortex-queue".into())
            .spawn(move || command_processor(rx, device, weak_q, config, space))?;
        *q.thread.lock() = Some(handle);
        Ok(q)
    }

    /// A queue without a command processor (its thread could not start): every submission
    /// fails with DEVICE_LOST.
    pub fn dead() -> Arc<Queue> {
        Arc::new(Queue {
            tx: Mutex::new(None),
            thread: Mutex::new(None),
            in_flight: Mutex::new(0),
            idle: Condvar::new(),
        })
    }

    pub fn submit(&self, s: Submission) -> VkResult<()> {
        *self.in_flight.lock() += 1;
        let tx = self.tx.lock();
        match tx.as_ref().map(|t| t.send(Work::Submit(s))) {
            Some(Ok(())) => Ok(()),
            _ => {
                self.finish_one();
                Err(vk::Result::ERROR_DEVICE_LOST)
            }
        }
    }

    fn finish_one(&self) {
        let mut n = self.in_flight.lock();
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.idle.notify_all();
        }
    }

    pub fn wait_idle(&self) -> VkResult<()> {
        let mut n = self.in_flight.lock();
        while *n > 0 {
            self.idle.wait(&mut n);
        }
        Ok(())
    }

    /// Stops the thread after the work already queued.
    pub fn shutdown(&self) {
        if let Some(tx) = self.tx.lock().take() {
            let _ = tx.send(Work::Shutdown);
        }
        if let Some(h) = self.thread.lock().take() {
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
    }
}

fn command_processor(
    rx: mpsc::Receiver<Work>,
    device: Weak<Device>,
    queue: Weak<Queue>,
    config: DeviceConfig,
    space: Arc<AddressSpace>,
) {
    let mut model = match Model::with_memory(config, space) {
        Ok(m) => Some(m),
        Err(e) => {
            if let Some(d) = device.upgrade() {
                d.set_lost(&format!("invalid device configuration: {e}"));
            }
            None
        }
    };
    // VORTEX_STATS: every dispatch's counters, a line each, appended after each batch.
    let stats = crate::stats::log();
    let mut scratch = crate::stream::Scratch::default();
    while let Ok(Work::Submit(sub)) = rx.recv() {
        let dev = device.upgrade();
        let lost = dev.as_ref().is_none_or(|d| d.is_lost());
        for (sem, v) in &sub.waits {
            if !lost {
                sem.wait(*v, None);
            }
        }
        if let (false, Some(model), Some(dev)) = (lost, model.as_mut(), dev.as_ref()) {
            let mut reports = Vec::new();
            for rec in &sub.recordings {
                // A panic in the model is a device fault like any other, not a dead thread.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    play(model, &rec.ops, &mut reports, &mut scratch)
                }));
                match r {
                    Ok(Ok(())) => {}
                    Ok(Err(fault)) => {
                        dev.set_lost(&fault.to_string());
                        break;
                    }
                    Err(_) => {
                        dev.set_lost("internal error: the device model panicked while playing a command stream");
                        break;
                    }
                }
            }
            for r in &reports {
                tracing::info!("{}", r.summary());
            }
            if let Some(log) = stats {
                log.append(&reports);
            }
        }
        for (sem, v) in &sub.signals {
            sem.signal(*v);
        }
        if let Some(f) = &sub.fence {
            f.signal();
        }
        drop(sub);
        match queue.upgrade() {
            Some(q) => q.finish_one(),
            None => break,
        }
    }
}
