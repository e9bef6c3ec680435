//! Runs a function's binary the way Lambda starts it, to test what its cold start does
//! with a given environment: a failed start must exit and say why.

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How a started process ended and what it printed.
#[derive(Debug)]
pub struct Exited {
    /// Its exit status.
    pub status: ExitStatus,
    /// Standard output then standard error, as text.
    pub output: String,
}

impl Exited {
    /// The `cold start failed` line a function logs when its start fails.
    ///
    /// # Panics
    /// When the process exited successfully or logged no such line (naming its output).
    pub fn cold_start_failure(&self) -> &str {
        assert!(
            !self.status.success(),
            "the cold start succeeded:\n{}",
            self.output
        );
        self.output
            .lines()
            .find(|l| l.contains("cold start failed"))
            .unwrap_or_else(|| panic!("no cold start line in:\n{}", self.output))
    }
}

/// Starts `exe` with exactly `env` (nothing inherited), waits up to `timeout` for it to
/// exit, and returns how it ended with everything it printed.
///
/// # Panics
/// When the binary cannot be started, or is still running after `timeout` (it is killed
/// first): a function that neither starts serving nor exits hangs its cold start.
pub fn run_to_exit(exe: &Path, env: &[(&str, String)], timeout: Duration) -> Exited {
    let mut child = Command::new(exe)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                // Blocking is fine: the test waits on nothing else meanwhile.
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{} did not exit within {timeout:?}", exe.display());
            }
        }
    };
    // A failed start prints a few lines, far below a pipe's buffer, so reading after the
    // exit cannot have blocked the child.
    let mut output = String::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = out.read_to_string(&mut output);
    }
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut output);
    }
    Exited { status, output }
}
