//! Standard output for the commands' results, where a reader that has gone away ends the
//! command quietly: `rag search … | head` closes the pipe early, and `println!` would panic
//! on the broken pipe.

use std::io::{ErrorKind, Write};

/// Writes one line to stdout. On a broken pipe the output is no longer wanted: the process
/// exits with status 0 and says nothing. Any other write error exits with status 1 and a
/// message.
pub(crate) fn line(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_fmt(args)
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush());
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            eprintln!("error: writing output: {e}");
            std::process::exit(1)
        }
    }
}

/// `println!` through [`line()`]: quiet on a closed pipe.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}
pub(crate) use outln;
