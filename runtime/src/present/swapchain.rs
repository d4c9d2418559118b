//! `VkSwapchainKHR`: the images, who holds each (free in the engine, acquired by the
//! application, or on its way to be shown), acquiring, and the present request the queue
//! plays.

use super::engine::{self, Engine, Frame, Msg};
use super::surface::Surface;
use super::x11::Target;
use crate::device::Device;
use crate::image::Image;
use crate::memory::Memory;
use crate::queue::Submission;
use crate::stream::{Recording, StreamOp};
use crate::sync::{deadline, Semaphore};
use crate::{vk, VkResult};
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use vortex_model::mem::AddressSpace;

/// What a swapchain is made with (checked by the ICD against the surface).
#[derive(Clone, Copy, Debug)]
pub struct SwapchainInfo {
    pub format: vk::Format,
    pub extent: [u32; 2],
    pub usage: vk::ImageUsageFlags,
    pub image_count: u32,
    pub mode: vk::PresentModeKHR,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// The engine's: can be acquired.
    Free,
    /// The application's, from acquire to present.
    Acquired,
    /// Presented: waiting for the queue to reach the present, then for the engine to read it.
    Presenting,
}

struct State {
    slots: Vec<Slot>,
    /// Free images in the order they were given back (acquire takes the oldest).
    free: VecDeque<u32>,
    /// Replaced by a newer swapchain (`oldSwapchain`) or destroyed: nothing more is acquired.
    retired: bool,
    /// The window is gone.
    lost: bool,
    next_seq: u64,
}

/// What the application, the queue and the engine share.
pub struct Shared {
    pub surface: Arc<Surface>,
    pub info: SwapchainInfo,
    pub images: Vec<Arc<Image>>,
    /// The swapchain's number in the process (dump file names).
    pub serial: u64,
    pub(super) space: Arc<AddressSpace>,
    state: Mutex<State>,
    given_back: Condvar,
}

/// The result of an acquire that did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquired {
    Image { index: u32, suboptimal: bool },
    NotReady,
    Timeout,
}

pub struct Swapchain {
    pub shared: Arc<Shared>,
    engine: Mutex<Option<Engine>>,
}

static SERIAL: AtomicU64 = AtomicU64::new(0);

impl Shared {
    /// Gives an image back to the engine's free list.
    pub(super) fn release(&self, index: u32) {
        let mut s = self.state.lock();
        if s.slots[index as usize] != Slot::Free {
            s.slots[index as usize] = Slot::Free;
            s.free.push_back(index);
        }
        self.given_back.notify_all();
    }

    pub(super) fn set_lost(&self) {
        self.state.lock().lost = true;
        self.given_back.notify_all();
    }

    pub(super) fn is_lost(&self) -> bool {
        self.state.lock().lost
    }

    /// The surface against this swapchain now: `Ok(suboptimal)`, or OUT_OF_DATE (the window
    /// has another size) or SURFACE_LOST (it is gone). Asks the X server for the size.
    fn surface_status(&self) -> VkResult<bool> {
        match self.surface.extent() {
            Ok(Some(e)) if e != self.info.extent => Err(vk::Result::ERROR_OUT_OF_DATE_KHR),
            Ok(_) => Ok(false),
            Err(e) => {
                if e == vk::Result::ERROR_SURFACE_LOST_KHR {
                    self.set_lost();
                }
                Err(e)
            }
        }
    }

    /// Why nothing can be acquired or presented any more, if so.
    fn gone(s: &State) -> VkResult<()> {
        if s.lost {
            Err(vk::Result::ERROR_SURFACE_LOST_KHR)
        } else if s.retired {
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR)
        } else {
            Ok(())
        }
    }
}

impl Swapchain {
    /// Makes the images and starts the engine. `old` (the create info's `oldSwapchain`) is
    /// retired whatever happens; the surface must not have another swapchain.
    pub fn new(
        device: &Device,
        surface: Arc<Surface>,
        info: SwapchainInfo,
        old: Option<&Swapchain>,
    ) -> VkResult<Arc<Swapchain>> {
        let owner_ok = {
            let owner = *surface.owner.lock();
            owner.is_none() || owner == old.map(|o| o.shared.serial)
        };
        if let Some(o) = old {
            o.retire();
        }
        if !owner_ok {
            tracing::error!(
                "vkCreateSwapchainKHR: the surface already has a swapchain that is not retired (pass it as oldSwapchain)"
            );
            return Err(vk::Result::ERROR_NATIVE_WINDOW_IN_USE_KHR);
        }
        let images = (0..info.image_count).map(|_| make_image(device, &info)).collect::<VkResult<Vec<_>>>()?;
        let target = match surface.window()? {
            Some(win) => Some(Target::new(win, info.extent)?),
            None => None,
        };
        let n = info.image_count;
        let shared = Arc::new(Shared {
            surface: surface.clone(),
            info,
            images,
            serial: SERIAL.fetch_add(1, Ordering::Relaxed),
            space: device.space.clone(),
            state: Mutex::new(State {
                slots: vec![Slot::Free; n as usize],
                free: (0..n).collect(),
                retired: false,
                lost: false,
                next_seq: 0,
            }),
            given_back: Condvar::new(),
        });
        let engine = engine::start(shared.clone(), target).map_err(|e| {
            tracing::error!("vkCreateSwapchainKHR: cannot start the presentation thread: {e}");
            vk::Result::ERROR_INITIALIZATION_FAILED
        })?;
        *surface.owner.lock() = Some(shared.serial);
        Ok(Arc::new(Swapchain { shared, engine: Mutex::new(Some(engine)) }))
    }

    /// No image can be acquired any more (those acquired can still be presented, and get
    /// OUT_OF_DATE); the surface is free for another swapchain.
    pub fn retire(&self) {
        let sh = &self.shared;
        sh.state.lock().retired = true;
        sh.given_back.notify_all();
        let mut owner = sh.surface.owner.lock();
        if *owner == Some(sh.serial) {
            *owner = None;
        }
    }

    /// `vkDestroySwapchainKHR`: retires it, lets the engine show what the queue has already
    /// handed it and free the window's resources, and waits for that. Images stay alive as
    /// long as command buffers or presents still in the queue hold them; a present reaching
    /// the queue later only gives its image back.
    pub fn destroy(&self) {
        self.retire();
        // Taken out first: a present the queue reaches meanwhile must not wait for the join.
        let engine = self.engine.lock().take();
        if let Some(e) = engine {
            let _ = e.tx.send(Msg::Stop);
            if e.thread.thread().id() != std::thread::current().id() {
                let _ = e.thread.join();
            }
        }
    }

    /// `vkAcquireNextImageKHR` (semaphores and fences are the caller's: the image is free, so
    /// they can be signaled at once).
    pub fn acquire(&self, timeout_ns: u64) -> VkResult<Acquired> {
        let sh = &self.shared;
        Shared::gone(&sh.state.lock())?;
        let suboptimal = sh.surface_status()?;
        let until = deadline(timeout_ns);
        let mut s = sh.state.lock();
        loop {
            Shared::gone(&s)?;
            if let Some(index) = s.free.pop_front() {
                s.slots[index as usize] = Slot::Acquired;
                return Ok(Acquired::Image { index, suboptimal });
            }
            if timeout_ns == 0 {
                return Ok(Acquired::NotReady);
            }
            if !s.slots.contains(&Slot::Presenting) && until.is_none() {
                // Every image is the application's: waiting forever would never end.
                tracing::error!(
                    "vkAcquireNextImageKHR: all {} images are acquired and none is being presented; \
                     an infinite timeout would never end",
                    s.slots.len()
                );
                return Ok(Acquired::Timeout);
            }
            match until {
                Some(t) => {
                    if sh.given_back.wait_until(&mut s, t).timed_out() && s.free.is_empty() {
                        Shared::gone(&s)?;
                        return Ok(Acquired::Timeout);
                    }
                }
                None => sh.given_back.wait(&mut s),
            }
        }
    }

    /// Checks that image `index` is the application's to present.
    pub fn check_presentable(&self, index: u32) -> VkResult<()> {
        let s = self.shared.state.lock();
        match s.slots.get(index as usize) {
            Some(Slot::Acquired) => Ok(()),
            Some(slot) => {
                tracing::error!("vkQueuePresentKHR: image {index} is not acquired (it is {slot:?})");
                Err(vk::Result::ERROR_UNKNOWN)
            }
            None => {
                tracing::error!("vkQueuePresentKHR: image index {index} of a swapchain of {} images", s.slots.len());
                Err(vk::Result::ERROR_UNKNOWN)
            }
        }
    }

    /// `vkQueuePresentKHR` for one swapchain (checked with `check_presentable`): the request
    /// the queue plays, and this swapchain's result. A present that is out of date or lost
    /// still goes through the queue (its waits happen) and gives the image back unshown. A
    /// retired swapchain's acquired images can still be presented (shown if the window still
    /// has their size).
    pub fn present(self: &Arc<Self>, index: u32) -> (Arc<PresentRequest>, vk::Result) {
        let sh = &self.shared;
        let lost = sh.state.lock().lost;
        let status = if lost { Err(vk::Result::ERROR_SURFACE_LOST_KHR) } else { sh.surface_status() };
        let mut s = sh.state.lock();
        s.slots[index as usize] = Slot::Presenting;
        let seq = s.next_seq;
        s.next_seq += 1;
        let result = match status {
            Ok(false) => vk::Result::SUCCESS,
            Ok(true) => vk::Result::SUBOPTIMAL_KHR,
            Err(e) => e,
        };
        let req = PresentRequest {
            swapchain: self.clone(),
            frame: Frame { index, seq },
            show: status.is_ok(),
            reached: AtomicBool::new(false),
        };
        (Arc::new(req), result)
    }
}

impl Drop for Swapchain {
    fn drop(&mut self) {
        self.destroy();
    }
}

/// One image of a swapchain, with its own memory.
fn make_image(device: &Device, info: &SwapchainInfo) -> VkResult<Arc<Image>> {
    let [w, h] = info.extent;
    let img = Image::new(vk::ImageType::TYPE_2D, info.format, [w, h, 1], 1, 1, info.usage)?;
    let memory = Memory::allocate(&device.space, img.size)?;
    img.bind(Arc::new(memory), 0)?;
    Ok(Arc::new(img))
}

/// A present as a queue operation (`StreamOp::Present`): when the command processor reaches
/// it, every earlier submission has run, so the image holds what was rendered into it.
pub struct PresentRequest {
    swapchain: Arc<Swapchain>,
    frame: Frame,
    /// False for a present that was out of date or lost when made.
    show: bool,
    reached: AtomicBool,
}

impl PresentRequest {
    /// The queue has reached the present: hand the frame to the engine (or give the image
    /// back if it is not to be shown, or the swapchain has been destroyed).
    pub fn reached(&self) {
        if self.reached.swap(true, Ordering::AcqRel) {
            return;
        }
        let sc = &self.swapchain;
        let sent = self.show && sc.engine.lock().as_ref().is_some_and(|e| e.tx.send(Msg::Frame(self.frame)).is_ok());
        if !sent {
            sc.shared.release(self.frame.index);
        }
    }
}

impl Drop for PresentRequest {
    /// A present the queue never played (the device was lost first) gives its image back,
    /// so no acquire waits for it forever.
    fn drop(&mut self) {
        if !self.reached.load(Ordering::Acquire) {
            self.swapchain.shared.release(self.frame.index);
        }
    }
}

/// A `vkQueuePresentKHR` as a queue submission: its semaphore waits, then a `PRESENT` for
/// each swapchain, in the queue's order with everything submitted before it.
pub fn submission(waits: Vec<(Arc<Semaphore>, u64)>, requests: Vec<Arc<PresentRequest>>) -> Submission {
    let ops = requests.into_iter().map(StreamOp::Present).collect();
    let rec = Recording { ops, ..Recording::default() };
    Submission { waits, recordings: vec![Arc::new(rec)], signals: vec![], fence: None }
}
