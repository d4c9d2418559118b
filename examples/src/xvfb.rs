//! A private X server for the window tests: Xvfb on a display it picks itself, stopped with
//! SIGTERM (so it removes its socket) when dropped, also when a check panics.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Xvfb {
    child: Child,
    /// The display, `:N`.
    pub display: String,
}

impl Xvfb {
    /// Starts Xvfb (it writes the display number it picked to `-displayfd`) and waits until
    /// its socket accepts connections; `None`, with a line saying why, when Xvfb is not
    /// installed.
    pub fn start() -> Option<Xvfb> {
        let spawned = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "640x480x24", "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                eprintln!("skipped: cannot start Xvfb ({e}); scripts/setup-debian.sh installs xvfb");
                return None;
            }
        };
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped")).read_line(&mut line).expect("Xvfb's display number");
        let n: u32 = line.trim().parse().unwrap_or_else(|_| panic!("Xvfb wrote {line:?} for its display"));
        let x = Xvfb { child, display: format!(":{n}") };
        x.wait_listening(n);
        Some(x)
    }

    /// Xvfb names its display as it starts listening; under load a client connecting in
    /// that instant was refused, so wait (up to 5 s) until the socket accepts.
    fn wait_listening(&self, n: u32) {
        let socket = format!("/tmp/.X11-unix/X{n}");
        let start = Instant::now();
        while std::os::unix::net::UnixStream::connect(&socket).is_err() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
}
