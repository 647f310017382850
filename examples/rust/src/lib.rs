//! Run shell commands for agent hosts: a safe binding of libshexec.
//!
//! A [`Session`] is one persistent terminal: a `cd` in one command is where
//! the next starts. A command runs in its own process group (or cgroup); a
//! timeout ends the whole tree (SIGTERM, then SIGKILL after the kill grace);
//! output is bounded with an exact truncation notice; processes a command
//! leaves running are adopted as a task or killed; a [`Task`] is a command
//! in the background.
//!
//! ```no_run
//! use std::time::Duration;
//! let session = shexec::Session::new()?;
//! let out = session.command("cd /tmp && ls | head -3").timeout(Duration::from_secs(10)).exec()?;
//! println!("exit {:?}: {}", out.exit_code, out.stdout_str());
//! assert_eq!(session.cwd(), std::path::Path::new("/tmp"));
//! # Ok::<(), shexec::Error>(())
//! ```
//!
//! # Threads, lifetimes, panics
//!
//! - [`Session`] and [`Task`] are `Send` and not `Sync`. A task shares its
//!   session (an `Arc` of the C session's owner), so it may outlive the
//!   `Session` value and move to another thread; every call into the library
//!   takes the session's lock, since the library wants one thread at a time
//!   per session.
//! - An output closure of [`Command::exec`] may borrow anything: it is called
//!   only during `exec`, on its thread. A task's closure must be
//!   `Send + 'static`: it is called by whichever thread pumps the session's
//!   loop, for as long as the task lives.
//! - Closures may call the session and its tasks (read, write, kill, cwd...);
//!   what the library refuses from a callback (starting or waiting for a
//!   command) is an [`ErrorKind::State`] error, never a deadlock.
//! - A panic in an output closure never unwinds into C: the command is
//!   cancelled (a task killed) and the panic is resumed after the library
//!   call returns: by [`Command::exec`], or by [`Task::wait`] for a task.
//!
//! The library is found at build time: `SHEXEC_LIB_DIR`, else pkg-config,
//! else the project's own `build/` directory (see README.md).

mod callback;
mod command;
mod conv;
mod error;
mod output;
mod session;
mod shared;
mod signal;
pub mod sys;
mod task;

use std::ffi::CStr;

pub use command::{Command, NoOutput};
pub use error::{strerror, Error, ErrorKind, Result};
pub use output::{Leftovers, Output, State, Stream};
pub use session::{Containment, Keep, LeftoverPolicy, Session, Unit};
pub use signal::Signal;
pub use task::{Task, Watch};

/// The library's version, "MAJOR.MINOR.PATCH" (of the library loaded, not
/// of this crate).
pub fn version() -> &'static str {
    // SAFETY: static storage, never NULL
    unsafe { CStr::from_ptr(sys::shexec_version()) }.to_str().unwrap_or("?")
}
