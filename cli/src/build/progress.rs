//! A progress line on stderr for long builds (`site: 4210/10137 files, 812/s`), redrawn
//! in place; only when stderr is a terminal, so CI logs and pipes stay quiet.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// A build shorter than this shows no progress at all.
const QUIET_FOR: Duration = Duration::from_secs(1);
/// Least time between two redraws.
const EVERY: Duration = Duration::from_millis(200);

/// Progress of one stage over a known number of items.
pub(crate) struct Progress {
    what: &'static str,
    total: usize,
    start: Instant,
    last: Option<Instant>,
    on: bool,
}

impl Progress {
    /// Progress of `what` over `total` items, shown only on a terminal.
    pub(crate) fn new(what: &'static str, total: usize) -> Self {
        Self {
            what,
            total,
            start: Instant::now(),
            last: None,
            on: std::io::stderr().is_terminal(),
        }
    }

    /// `done` of the items are done.
    pub(crate) fn update(&mut self, done: usize) {
        if !self.on {
            return;
        }
        let now = Instant::now();
        let elapsed = now.duration_since(self.start);
        if elapsed < QUIET_FOR || self.last.is_some_and(|l| now.duration_since(l) < EVERY) {
            return;
        }
        self.last = Some(now);
        let rate = done as f64 / elapsed.as_secs_f64();
        let mut err = std::io::stderr().lock();
        // A progress line that cannot be drawn is no reason to stop a build.
        let _ = write!(
            err,
            "\r\x1b[K{}: {done}/{} files, {rate:.0}/s",
            self.what, self.total
        );
        let _ = err.flush();
    }
}

impl Drop for Progress {
    /// Clears the line, so warnings and the summary start on a clean one.
    fn drop(&mut self) {
        if self.last.is_some() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}
