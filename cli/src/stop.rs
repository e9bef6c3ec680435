//! How a command ends: [`Stop`] carries why it stopped, [`exit`] turns a result into the
//! process's exit code (0 success, 1 failure, 2 usage), and [`runtime`] gives commands
//! that make HTTP calls their async runtime.

use std::process::ExitCode;

/// Why a command stops: a usage mistake (exit 2) or a failure (exit 1).
pub(crate) enum Stop {
    Usage(String),
    Failed(String),
}

/// The exit code for a command's result; prints the reason it stopped to stderr.
pub(crate) fn exit(result: Result<(), Stop>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Stop::Usage(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
        Err(Stop::Failed(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
    }
}

/// A single-threaded runtime for a command's HTTP calls.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Stop> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Stop::Failed(format!("cannot start the async runtime: {e}")))
}
