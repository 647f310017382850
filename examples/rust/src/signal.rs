//! `Signal`: the signals a command may be sent
//! ([`Task::send_signal`](crate::Task::send_signal)).
use std::ffi::CString;
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind};
use crate::sys;

/// A signal the library sends to a running command (`shexec_run_send_signal`):
/// the ones a person or a supervisor sends. Their numbers are the
/// platform's, asked of the library, so this crate needs no libc.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Signal {
    /// SIGHUP: the terminal hung up (many daemons reload on it).
    Hup,
    /// SIGINT: a terminal's Ctrl+C.
    Int,
    /// SIGQUIT: a terminal's Ctrl+\.
    Quit,
    /// SIGKILL: at once, no cleanup (not the library's kill grace).
    Kill,
    /// SIGUSR1: the program's own meaning.
    Usr1,
    /// SIGUSR2: the program's own meaning.
    Usr2,
    /// SIGTERM: a request to end (without the library's grace and SIGKILL).
    Term,
    /// SIGCONT: resume what SIGSTOP paused.
    Cont,
    /// SIGSTOP: pause the command.
    Stop,
}

const ALL: [Signal; 9] = [
    Signal::Hup,
    Signal::Int,
    Signal::Quit,
    Signal::Kill,
    Signal::Usr1,
    Signal::Usr2,
    Signal::Term,
    Signal::Cont,
    Signal::Stop,
];

impl Signal {
    /// Its name: "SIGINT", ...
    pub fn name(self) -> &'static str {
        match self {
            Signal::Hup => "SIGHUP",
            Signal::Int => "SIGINT",
            Signal::Quit => "SIGQUIT",
            Signal::Kill => "SIGKILL",
            Signal::Usr1 => "SIGUSR1",
            Signal::Usr2 => "SIGUSR2",
            Signal::Term => "SIGTERM",
            Signal::Cont => "SIGCONT",
            Signal::Stop => "SIGSTOP",
        }
    }

    /// Its number on this platform (SIGINT is 2 on Linux).
    pub fn number(self) -> i32 {
        // the names are the library's own, without NUL
        let name = CString::new(self.name()).unwrap_or_default();
        // SAFETY: a NUL-terminated string, only read
        unsafe { sys::shexec_signal_from_name(name.as_ptr()) }
    }

    /// The signal of a number, if it is one of these.
    pub fn from_number(number: i32) -> Option<Signal> {
        ALL.iter().copied().find(|s| s.number() == number)
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A signal by name as a model or a user writes it: "SIGINT", "INT" or
/// "int" (`shexec_signal_from_name`); [`ErrorKind::InvalidArgument`] for
/// any other.
impl FromStr for Signal {
    type Err = Error;

    fn from_str(name: &str) -> Result<Signal, Error> {
        let unknown = || {
            Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "unknown signal {:?}: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGKILL, SIGUSR1, \
                     SIGUSR2, SIGSTOP or SIGCONT",
                    name
                ),
            )
        };
        let cname = CString::new(name).map_err(|_| unknown())?;
        // SAFETY: a NUL-terminated string, only read
        let number = unsafe { sys::shexec_signal_from_name(cname.as_ptr()) };
        Signal::from_number(number).filter(|_| number > 0).ok_or_else(unknown)
    }
}
