//! The error type: the library's result code and its detail message.

use std::ffi::CStr;
use std::fmt;
use std::os::raw::c_int;

use crate::sys;

/// What went wrong, by the library's result code (`SHEXEC_E*`).
///
/// The codes are append-only in the library; a code this crate does not know
/// yet is kept as `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// SHEXEC_EINVAL: an argument is invalid (empty, a NUL byte, a bad name).
    InvalidArgument,
    /// SHEXEC_ENOMEM: out of memory.
    OutOfMemory,
    /// SHEXEC_ENOCWD: the working directory is missing or not a directory.
    NoCwd,
    /// SHEXEC_ESPAWN: the shell could not be executed.
    Spawn,
    /// SHEXEC_ESYS: a system call failed (descriptors exhausted, fork failed).
    Sys,
    /// SHEXEC_ESTATE: wrong state for the call (for example a command started
    /// from inside an output callback).
    State,
    /// SHEXEC_E2BIG: the command or the environment is too long.
    TooBig,
    /// SHEXEC_ELIMIT: a documented bound is reached (task slots, variables,
    /// input queued for a command that has not read it).
    Limit,
    /// SHEXEC_ENOTASK: no task has that id.
    NoTask,
    /// SHEXEC_EPIPE: input cannot be written (stdin not enabled, closed, or
    /// the process ended).
    Pipe,
    /// SHEXEC_ENOTOOL: no tool of that name.
    NoTool,
    /// A code this version of the crate does not name.
    Other(i32),
}

impl ErrorKind {
    /// The kind of a library result code.
    pub fn from_code(code: i32) -> ErrorKind {
        match code {
            sys::SHEXEC_EINVAL => ErrorKind::InvalidArgument,
            sys::SHEXEC_ENOMEM => ErrorKind::OutOfMemory,
            sys::SHEXEC_ENOCWD => ErrorKind::NoCwd,
            sys::SHEXEC_ESPAWN => ErrorKind::Spawn,
            sys::SHEXEC_ESYS => ErrorKind::Sys,
            sys::SHEXEC_ESTATE => ErrorKind::State,
            sys::SHEXEC_E2BIG => ErrorKind::TooBig,
            sys::SHEXEC_ELIMIT => ErrorKind::Limit,
            sys::SHEXEC_ENOTASK => ErrorKind::NoTask,
            sys::SHEXEC_EPIPE => ErrorKind::Pipe,
            sys::SHEXEC_ENOTOOL => ErrorKind::NoTool,
            other => ErrorKind::Other(other),
        }
    }

    /// The library's result code (`SHEXEC_E*`, negative).
    pub fn code(self) -> i32 {
        match self {
            ErrorKind::InvalidArgument => sys::SHEXEC_EINVAL,
            ErrorKind::OutOfMemory => sys::SHEXEC_ENOMEM,
            ErrorKind::NoCwd => sys::SHEXEC_ENOCWD,
            ErrorKind::Spawn => sys::SHEXEC_ESPAWN,
            ErrorKind::Sys => sys::SHEXEC_ESYS,
            ErrorKind::State => sys::SHEXEC_ESTATE,
            ErrorKind::TooBig => sys::SHEXEC_E2BIG,
            ErrorKind::Limit => sys::SHEXEC_ELIMIT,
            ErrorKind::NoTask => sys::SHEXEC_ENOTASK,
            ErrorKind::Pipe => sys::SHEXEC_EPIPE,
            ErrorKind::NoTool => sys::SHEXEC_ENOTOOL,
            ErrorKind::Other(code) => code,
        }
    }
}

/// A failed library call: its code, and the session's detail message
/// (`shexec_session_errmsg()`), copied when the call failed since the library
/// overwrites it on the session's next call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// `std::result::Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error of `kind` with a detail message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, message: message.into() }
    }

    pub(crate) fn from_code(code: c_int, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::from_code(code), message)
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The library's result code (`SHEXEC_E*`).
    pub fn code(&self) -> i32 {
        self.kind.code()
    }

    /// The detail (may be empty when the library gave none).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = strerror(self.code());
        if self.message.is_empty() {
            f.write_str(name)
        } else {
            write!(f, "{}: {}", name, self.message)
        }
    }
}

impl std::error::Error for Error {}

/// The library's English description of a result code ("unknown error" for
/// a code it does not know).
pub fn strerror(code: i32) -> &'static str {
    // SAFETY: shexec_strerror() never returns NULL and its text is static.
    let text = unsafe { CStr::from_ptr(sys::shexec_strerror(code)) };
    text.to_str().unwrap_or("unknown error")
}
