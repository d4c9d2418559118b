//! Fences, semaphores (binary and timeline) and events.

use crate::{vk, VkResult};
use parking_lot::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Converts a Vulkan timeout in nanoseconds to a deadline (`None` = forever).
pub fn deadline(timeout_ns: u64) -> Option<Instant> {
    if timeout_ns == u64::MAX {
        None
    } else {
        Instant::now().checked_add(Duration::from_nanos(timeout_ns))
    }
}

pub struct Fence {
    signaled: Mutex<bool>,
    cv: Condvar,
}

impl Fence {
    pub fn new(signaled: bool) -> Fence {
        Fence { signaled: Mutex::new(signaled), cv: Condvar::new() }
    }

    pub fn signal(&self) {
        *self.signaled.lock() = true;
        self.cv.notify_all();
    }

    pub fn reset(&self) {
        *self.signaled.lock() = false;
    }

    pub fn is_signaled(&self) -> bool {
        *self.signaled.lock()
    }

    /// Waits until signaled or the deadline passes; returns whether it is signaled.
    pub fn wait(&self, until: Option<Instant>) -> bool {
        let mut s = self.signaled.lock();
        while !*s {
            match until {
                None => self.cv.wait(&mut s),
                Some(t) => {
                    if self.cv.wait_until(&mut s, t).timed_out() {
                        return *s;
                    }
                }
            }
        }
        true
    }
}

/// A semaphore. Timeline semaphores count up to the values signaled; binary semaphores are
/// modelled as a timeline where each signal adds one and each wait consumes one.
pub struct Semaphore {
    pub timeline: bool,
    state: Mutex<SemState>,
    cv: Condvar,
}

struct SemState {
    value: u64,
    consumed: u64,
}

impl Semaphore {
    pub fn new(timeline: bool, initial: u64) -> Semaphore {
        Semaphore { timeline, state: Mutex::new(SemState { value: initial, consumed: 0 }), cv: Condvar::new() }
    }

    pub fn value(&self) -> u64 {
        self.state.lock().value
    }

    /// Signals: timeline semaphores move to `value`, binary ones add one.
    pub fn signal(&self, value: u64) {
        let mut s = self.state.lock();
        if self.timeline {
            s.value = s.value.max(value);
        } else {
            s.value += 1;
        }
        self.cv.notify_all();
    }

    /// Waits for `value` (timeline) or for one unconsumed signal (binary). Returns false on
    /// timeout.
    pub fn wait(&self, value: u64, until: Option<Instant>) -> bool {
        let mut s = self.state.lock();
        loop {
            let ready = if self.timeline { s.value >= value } else { s.value > s.consumed };
            if ready {
                if !self.timeline {
                    s.consumed += 1;
                }
                return true;
            }
            match until {
                None => self.cv.wait(&mut s),
                Some(t) => {
                    if self.cv.wait_until(&mut s, t).timed_out() {
                        return false;
                    }
                }
            }
        }
    }
}

pub struct Event {
    set: Mutex<bool>,
}

impl Event {
    pub fn new() -> Event {
        Event { set: Mutex::new(false) }
    }
    pub fn set(&self, v: bool) {
        *self.set.lock() = v;
    }
    pub fn status(&self) -> vk::Result {
        if *self.set.lock() {
            vk::Result::EVENT_SET
        } else {
            vk::Result::EVENT_RESET
        }
    }
}

impl Default for Event {
    fn default() -> Self {
        Self::new()
    }
}

/// Waits on several fences (all or any).
pub fn wait_fences(fences: &[&Fence], all: bool, until: Option<Instant>) -> VkResult<bool> {
    if all {
        for f in fences {
            if !f.wait(until) {
                return Ok(false);
            }
        }
        Ok(true)
    } else {
        loop {
            if fences.iter().any(|f| f.is_signaled()) {
                return Ok(true);
            }
            if until.is_some_and(|t| Instant::now() >= t) {
                return Ok(false);
            }
            // Any-of waits poll: the queue signals fences one batch at a time.
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fence_wait_times_out_and_wakes() {
        let f = Arc::new(Fence::new(false));
        assert!(!f.wait(deadline(1_000_000)));
        let g = f.clone();
        let t = std::thread::spawn(move || g.signal());
        assert!(f.wait(None));
        t.join().unwrap();
    }

    #[test]
    fn binary_semaphore_consumes_signals() {
        let s = Semaphore::new(false, 0);
        s.signal(0);
        assert!(s.wait(0, deadline(0)));
        assert!(!s.wait(0, deadline(1_000_000)));
        let t = Semaphore::new(true, 3);
        assert!(t.wait(2, deadline(0)));
        assert!(!t.wait(5, deadline(1_000_000)));
        t.signal(5);
        assert!(t.wait(5, None));
    }
}
