//! The presentation engine of one swapchain: a thread that takes the frames the queue has
//! reached, shows them by present mode at a modelled 60 Hz refresh, and gives their images
//! back for acquiring.
//!
//! - FIFO: every frame is shown, in order, one a refresh.
//! - MAILBOX: one frame waits for the next refresh; a newer one replaces it (the replaced
//!   image is given back unshown).
//! - IMMEDIATE: a frame is shown as soon as it arrives.
//!
//! The first frame after a pause is shown at once (the refresh is modelled, not a vblank).
//! Showing reads the image's memory then; the image is not acquirable again until it has
//! been read, so nothing the application submits later can change it first.

use super::dump::Dump;
use super::swapchain::Shared;
use super::x11::Target;
use crate::vk;
use std::collections::VecDeque;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The modelled display's refresh period (60 Hz).
pub const REFRESH: Duration = Duration::from_nanos(16_666_667);

/// A frame the queue has reached: image `index`, the swapchain's present number `seq`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Frame {
    pub index: u32,
    pub seq: u64,
}

pub(super) enum Msg {
    Frame(Frame),
    /// Show what is queued (FIFO and MAILBOX alike), free the window's resources, end.
    Stop,
}

pub(super) struct Engine {
    pub tx: mpsc::Sender<Msg>,
    pub thread: JoinHandle<()>,
}

pub(super) fn start(shared: Arc<Shared>, target: Option<Target>) -> std::io::Result<Engine> {
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("vortex-present".into())
        .spawn(move || Presenter { shared, target, dump: Dump::from_env(), last: None }.run(rx))?;
    Ok(Engine { tx, thread })
}

struct Presenter {
    shared: Arc<Shared>,
    target: Option<Target>,
    dump: Option<Dump>,
    /// When the last frame was shown.
    last: Option<Instant>,
}

impl Presenter {
    fn run(mut self, rx: mpsc::Receiver<Msg>) {
        let mode = self.shared.info.mode;
        let mut queued: VecDeque<Frame> = VecDeque::new();
        loop {
            let msg = if queued.is_empty() {
                rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
            } else {
                rx.recv_timeout(self.until_refresh(Instant::now()))
            };
            match msg {
                Ok(Msg::Frame(f)) if mode == vk::PresentModeKHR::IMMEDIATE => self.show(f),
                Ok(Msg::Frame(f)) => {
                    if mode == vk::PresentModeKHR::MAILBOX {
                        if let Some(old) = queued.pop_front() {
                            self.shared.release(old.index);
                        }
                    }
                    queued.push_back(f);
                }
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
            if !queued.is_empty() && self.until_refresh(Instant::now()).is_zero() {
                let f = queued.pop_front().expect("not empty");
                self.show(f);
            }
        }
        // Frames still queued are shown before the swapchain goes (a program that presents
        // and then destroys its swapchain gets its last frames).
        while let Some(f) = queued.pop_front() {
            self.show(f);
        }
        if let (Some(t), Ok(Some(win))) = (self.target.take(), self.shared.surface.window()) {
            t.release(win);
        }
    }

    /// How long until the next refresh may show a frame (zero: now).
    fn until_refresh(&self, now: Instant) -> Duration {
        self.last.map_or(Duration::ZERO, |t| (t + REFRESH).saturating_duration_since(now))
    }

    /// Shows one frame (on the window, in the dump) and gives its image back.
    fn show(&mut self, f: Frame) {
        let sh = &self.shared;
        let img = &sh.images[f.index as usize];
        let extent = sh.info.extent;
        let sub = img.subresource(0, 0);
        let dump = self.dump.as_ref().filter(|d| d.wants(f.seq));
        let to_window = self.target.is_some() && !sh.is_lost();
        if to_window || dump.is_some() {
            let map = sh.space.snapshot();
            match img.address().ok().and_then(|a| map.bytes(a + sub.offset, sub.layer_pitch).ok()) {
                Some(pixels) => {
                    let (pitch, bgra) = (sub.row_pitch as usize, img.format.bgra);
                    if let (true, Some(t), Ok(Some(win))) = (to_window, self.target.as_mut(), sh.surface.window()) {
                        if let Err(e) = t.show(win, &pixels, pitch, bgra) {
                            if e == vk::Result::ERROR_SURFACE_LOST_KHR {
                                sh.set_lost();
                            }
                        }
                    }
                    if let Some(d) = dump {
                        d.write(sh.serial, f.seq, &pixels, pitch, bgra, extent);
                    }
                }
                None => tracing::error!("presentation: image {} of swapchain {} is not readable", f.index, sh.serial),
            }
        }
        self.last = Some(Instant::now());
        sh.release(f.index);
    }
}
