//! The dispatch watchdog: tells a hang from long work.
//!
//! The idle rule (`watchdog_idle_ms`, default 20 s): a dispatch is lost when it makes no
//! progress for that long — no warp retired, no CTA launched, no ray completed (a TRACE or
//! CONTINUE walk reaching its record). A dispatch that keeps making progress runs as long as
//! it needs; a kernel spinning in one invocation is stopped. The wall-clock rule
//! (`watchdog_ms`, off by default) bounds a dispatch whatever it does.
//!
//! Both modes use it the same way. Units report their progress as running totals ([`Tally`])
//! when they check — a functional core every quantum of instructions, a timed cluster every
//! chunk of cycles — so the issue loop pays nothing per warp. The watchdog adds what is new
//! to shared counters and notes the time whenever a check sees them move; the counters are
//! relaxed atomics because they are only compared, never used to order memory.

use crate::config::DeviceConfig;
use crate::core::warp::WarpState;
use crate::core::Core;
use crate::fault::{Fault, FaultKind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::Instant;

/// Progress events, as totals since the dispatch began (of one unit, or of the dispatch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub warps_retired: u64,
    pub ctas_launched: u64,
    /// Walks that reached their record (terminal or candidate), `RtuStats::records`, and
    /// on rdna2 node tests (`ISECT`s: the walk is the shader's, bounded by its own step limit).
    pub rays_completed: u64,
}

/// What one unit has reported so far: it reports totals, the watchdog adds the difference.
#[derive(Debug, Default)]
pub struct Reporter {
    sent: Tally,
}

impl Reporter {
    /// Adds the events in `now` that this unit has not reported yet.
    pub fn report(&mut self, wd: &Watchdog, now: Tally) {
        let add = |c: &AtomicU64, new: u64, old: u64| {
            if new > old {
                c.fetch_add(new - old, Relaxed);
            }
        };
        add(&wd.warps, now.warps_retired, self.sent.warps_retired);
        add(&wd.ctas, now.ctas_launched, self.sent.ctas_launched);
        add(&wd.rays, now.rays_completed, self.sent.rays_completed);
        self.sent = now;
    }
}

/// Which rule fired, with the numbers it fired on.
#[derive(Clone, Debug)]
struct Expiry {
    kind: FaultKind,
    /// Milliseconds into the dispatch.
    at_ms: u64,
    /// The dispatch's progress when it fired (for the idle rule: its last progress).
    tally: Tally,
}

/// One dispatch's watchdog, shared by every core (functional) or cluster (timed).
pub struct Watchdog {
    t0: Instant,
    idle_ms: u64,
    wall_ms: u64,
    /// Raised by any unit that faults, or when a rule fires: everyone stops.
    stop: AtomicBool,
    warps: AtomicU64,
    ctas: AtomicU64,
    rays: AtomicU64,
    /// The event count the last check that saw it move saw, and when (µs since `t0`).
    seen: AtomicU64,
    moved_us: AtomicU64,
    /// The first rule that fired.
    expiry: OnceLock<Expiry>,
}

impl Watchdog {
    /// The watchdog of a dispatch starting now, with `cfg`'s limits.
    pub fn new(cfg: &DeviceConfig) -> Watchdog {
        Watchdog {
            t0: Instant::now(),
            idle_ms: cfg.watchdog_idle_ms,
            wall_ms: cfg.watchdog_ms,
            stop: AtomicBool::new(false),
            warps: AtomicU64::new(0),
            ctas: AtomicU64::new(0),
            rays: AtomicU64::new(0),
            seen: AtomicU64::new(0),
            moved_us: AtomicU64::new(0),
            expiry: OnceLock::new(),
        }
    }

    /// Tells every unit to stop (a fault somewhere).
    pub fn stop(&self) {
        self.stop.store(true, Relaxed);
    }

    /// The dispatch's progress so far, as reported.
    pub fn tally(&self) -> Tally {
        Tally {
            warps_retired: self.warps.load(Relaxed),
            ctas_launched: self.ctas.load(Relaxed),
            rays_completed: self.rays.load(Relaxed),
        }
    }

    /// A unit's check: reports its progress `now`, then fails if another unit stopped the
    /// dispatch or a rule fired.
    pub fn check(&self, unit: &mut Reporter, now: Tally) -> Result<(), Fault> {
        if self.stop.load(Relaxed) {
            return Err(Fault::new(FaultKind::BadLaunch, "stopped: another core faulted"));
        }
        unit.report(self, now);
        let elapsed_us = self.t0.elapsed().as_micros() as u64;
        if self.wall_ms > 0 && elapsed_us >= self.wall_ms.saturating_mul(1000) {
            return Err(self.expire(FaultKind::WallClock { limit_ms: self.wall_ms }, elapsed_us));
        }
        if self.idle_ms > 0 {
            let t = self.tally();
            let events = t.warps_retired + t.ctas_launched + t.rays_completed;
            if events != self.seen.load(Relaxed) {
                // Checks racing here store nearly the same time; the latest one wins.
                self.seen.store(events, Relaxed);
                self.moved_us.fetch_max(elapsed_us, Relaxed);
            } else if elapsed_us.saturating_sub(self.moved_us.load(Relaxed)) >= self.idle_ms.saturating_mul(1000) {
                return Err(self.expire(FaultKind::NoProgress { limit_ms: self.idle_ms }, elapsed_us));
            }
        }
        Ok(())
    }

    /// A rule fired: everyone stops, and the fault says which rule and its numbers.
    #[cold]
    fn expire(&self, kind: FaultKind, elapsed_us: u64) -> Fault {
        self.stop();
        let e = self.expiry.get_or_init(|| Expiry { kind, at_ms: elapsed_us / 1000, tally: self.tally() });
        Fault::new(e.kind.clone(), e.describe(None))
    }

    /// A watchdog fault's final description, once every unit has stopped: the rule, the
    /// numbers, and the warps of `cores` still running (the cores that ran the dispatch).
    /// Other faults are returned as they are.
    pub fn describe(&self, mut f: Fault, cores: &[Core]) -> Fault {
        if let (true, Some(e)) = (f.is_watchdog(), self.expiry.get()) {
            f.detail = e.describe(Some(&running_warps(cores)));
        }
        f
    }
}

impl Expiry {
    fn describe(&self, running: Option<&str>) -> String {
        let t = &self.tally;
        let counts = format!(
            "{}, {}, {}",
            plural(t.warps_retired, "warp retired", "warps retired"),
            plural(t.ctas_launched, "CTA launched", "CTAs launched"),
            plural(t.rays_completed, "ray completed", "rays completed")
        );
        let running = running.map(|r| format!("; {r}")).unwrap_or_default();
        let at = self.at_ms as f64 / 1000.0;
        match self.kind {
            FaultKind::NoProgress { limit_ms } => {
                format!("no progress for {limit_ms} ms, {at:.1} s into the dispatch (last: {counts}{running})")
            }
            FaultKind::WallClock { limit_ms } => {
                format!("dispatch exceeded the wall-clock limit of {limit_ms} ms (so far: {counts}{running})")
            }
            _ => counts,
        }
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The warps still resident on `cores`, grouped by core, pc and state: "1 warp still running
/// at pc 17 on core 0", "40 warps still running: 32 at pc 17 on core 0, 8 at pc 3 on core 1
/// (at a barrier)".
fn running_warps(cores: &[Core]) -> String {
    let mut groups: Vec<((u32, u32, WarpState), u64)> = Vec::new();
    for core in cores {
        for w in core.warps.iter().filter(|w| w.state != WarpState::Done) {
            let Some(top) = w.stack.last() else { continue };
            let key = (core.id, top.pc, w.state);
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, n)) => *n += 1,
                None => groups.push((key, 1)),
            }
        }
    }
    let total: u64 = groups.iter().map(|(_, n)| n).sum();
    let place = |&(core, pc, state): &(u32, u32, WarpState)| {
        let how = match state {
            WarpState::Barrier => " (at a barrier)",
            WarpState::Parked => " (parked on a WAIT)",
            _ => "",
        };
        format!("at pc {pc} on core {core}{how}")
    };
    match groups.as_slice() {
        [] => "no warp still running".to_string(),
        [(key, n)] => format!("{} still running {}", plural(*n, "warp", "warps"), place(key)),
        _ => {
            const SHOWN: usize = 4;
            let mut list: Vec<String> = groups.iter().take(SHOWN).map(|(k, n)| format!("{n} {}", place(k))).collect();
            if groups.len() > SHOWN {
                list.push("...".into());
            }
            format!("{total} warps still running: {}", list.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(idle_ms: u64, wall_ms: u64) -> DeviceConfig {
        DeviceConfig { watchdog_idle_ms: idle_ms, watchdog_ms: wall_ms, ..Default::default() }
    }

    #[test]
    fn progress_postpones_the_idle_rule_and_silence_fires_it() {
        let wd = Watchdog::new(&cfg(150, 0));
        let mut unit = Reporter::default();
        let mut t = Tally::default();
        let start = Instant::now();
        // Progress every few ms for longer than the limit: never lost.
        while start.elapsed().as_millis() < 400 {
            t.rays_completed += 1;
            wd.check(&mut unit, t).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // Silence: lost after the limit, naming the rule and the last progress.
        let f = loop {
            match wd.check(&mut unit, t) {
                Ok(()) => std::thread::sleep(std::time::Duration::from_millis(5)),
                Err(f) => break f,
            }
        };
        assert_eq!(f.kind, FaultKind::NoProgress { limit_ms: 150 }, "{f}");
        assert!(f.detail.contains("no progress for 150 ms"), "{f}");
        assert!(f.detail.contains(&format!("{} rays completed", t.rays_completed)), "{f}");
        // Everyone else stops.
        let g = wd.check(&mut Reporter::default(), Tally::default()).unwrap_err();
        assert!(g.detail.starts_with("stopped:"), "{g}");
    }

    #[test]
    fn units_report_differences_of_their_totals() {
        let wd = Watchdog::new(&cfg(0, 0));
        let (mut a, mut b) = (Reporter::default(), Reporter::default());
        a.report(&wd, Tally { warps_retired: 3, ctas_launched: 1, rays_completed: 0 });
        b.report(&wd, Tally { warps_retired: 1, ctas_launched: 1, rays_completed: 7 });
        a.report(&wd, Tally { warps_retired: 5, ctas_launched: 2, rays_completed: 0 });
        assert_eq!(wd.tally(), Tally { warps_retired: 6, ctas_launched: 3, rays_completed: 7 });
    }

    #[test]
    fn the_wall_clock_rule_fires_whatever_the_progress() {
        let wd = Watchdog::new(&cfg(0, 20));
        let mut unit = Reporter::default();
        let mut t = Tally::default();
        let f = loop {
            t.warps_retired += 1;
            match wd.check(&mut unit, t) {
                Ok(()) => std::thread::sleep(std::time::Duration::from_millis(2)),
                Err(f) => break f,
            }
        };
        assert_eq!(f.kind, FaultKind::WallClock { limit_ms: 20 }, "{f}");
        assert!(f.to_string().contains("wall-clock limit of 20 ms"), "{f}");
    }

    #[test]
    fn no_limits_never_fire() {
        let wd = Watchdog::new(&cfg(0, 0));
        std::thread::sleep(std::time::Duration::from_millis(5));
        wd.check(&mut Reporter::default(), Tally::default()).unwrap();
    }
}
