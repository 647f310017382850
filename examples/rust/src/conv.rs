//! Rust values to the library's C arguments.
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::time::Duration;

use crate::error::{Error, ErrorKind};

/// A C string of `s`; a NUL inside could not reach the library intact, so it
/// is the error the library gives for an invalid argument.
pub(crate) fn cstring(s: &OsStr, what: &str) -> Result<CString, Error> {
    CString::new(s.as_bytes()).map_err(|_| {
        Error::new(ErrorKind::InvalidArgument, format!("{} holds a NUL byte", what))
    })
}

/// Milliseconds for a library timeout: rounded up (a nonzero duration never
/// becomes 0, which the library reads as "invalid" or "none"), saturating at
/// u32::MAX (the library clamps to its own maximum anyway).
pub(crate) fn millis_u32(d: Duration) -> u32 {
    let ms = d.as_micros().saturating_add(999) / 1000;
    if ms > u128::from(u32::MAX) {
        u32::MAX
    } else {
        ms as u32
    }
}

/// Milliseconds for shexec_session_wait(): None waits without a limit (-1).
pub(crate) fn wait_millis(d: Option<Duration>) -> i32 {
    match d {
        None => -1,
        Some(d) => {
            let ms = d.as_micros().saturating_add(999) / 1000;
            if ms > i32::MAX as u128 {
                i32::MAX
            } else {
                ms as i32
            }
        }
    }
}
