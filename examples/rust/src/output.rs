//! What a command produced and how it ended, copied out of the C run.
//!
//! Results are copied rather than borrowed: the library's buffers are valid
//! only until the run is freed or pumped again, and a copy is what lets an
//! `Output` outlive the run, the session and any thread.
use std::borrow::Cow;
use std::ffi::{CStr, OsStr};
use std::os::raw::{c_char, c_int};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Duration;

use crate::shared::Guard;
use crate::sys;

/// An output stream of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    pub(crate) fn raw(self) -> c_int {
        match self {
            Stream::Stdout => sys::SHEXEC_STDOUT,
            Stream::Stderr => sys::SHEXEC_STDERR,
        }
    }
}

/// How a command stands or ended (`SHEXEC_STATE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Created, not started.
    New,
    /// Started, not finished.
    Running,
    /// The shell exited by itself; see [`Output::exit_code`].
    Exited,
    /// The shell was killed by a signal: from elsewhere, or one sent with
    /// [`Task::send_signal`](crate::Task::send_signal), not the library's
    /// ending of it (the states below).
    Signaled,
    /// The timeout expired and the command's processes were ended.
    TimedOut,
    /// A foreground command was cancelled (for example by a panicking
    /// output closure).
    Cancelled,
    /// A task was killed ([`Task::kill`](crate::Task::kill), or dropped).
    Killed,
    /// A state this version of the crate does not name.
    Other(i32),
}

impl State {
    pub(crate) fn from_raw(raw: c_int) -> State {
        match raw {
            sys::SHEXEC_STATE_NEW => State::New,
            sys::SHEXEC_STATE_RUNNING => State::Running,
            sys::SHEXEC_STATE_EXITED => State::Exited,
            sys::SHEXEC_STATE_SIGNALED => State::Signaled,
            sys::SHEXEC_STATE_TIMED_OUT => State::TimedOut,
            sys::SHEXEC_STATE_CANCELLED => State::Cancelled,
            sys::SHEXEC_STATE_KILLED => State::Killed,
            other => State::Other(other),
        }
    }

    /// True once the command has ended (every state after `Running`): its
    /// results no longer change.
    pub fn is_finished(self) -> bool {
        !matches!(self, State::New | State::Running)
    }
}

/// What became of processes a command left running (`server &`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Leftovers {
    /// None were left.
    None,
    /// They became a task of the session, by this id
    /// ([`Session::take_task`](crate::Session::take_task) takes it).
    Adopted(String),
    /// They were killed (the session's policy, or no task slot was free).
    Killed,
}

/// The result of a command: its output, how it ended, and what it left.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Output {
    /// Captured stdout, bounded by the output limit (then ending with the
    /// library's truncation notice).
    pub stdout: Vec<u8>,
    /// Captured stderr, bounded the same way.
    pub stderr: Vec<u8>,
    /// How the command ended.
    pub state: State,
    /// The shell's exit status (0-255) when `state` is `Exited`.
    pub exit_code: Option<i32>,
    /// The signal that ended the shell: after a timeout 15 (SIGTERM) when it
    /// died of it, 9 when it outlived the grace, `None` when it handled
    /// SIGTERM and exited by itself (`state` says `TimedOut` all the same).
    pub signal: Option<i32>,
    /// A SIGINT reached the command ([`Signal::Int`](crate::Signal::Int)
    /// sent, or a ^C typed), however it then ended: `state`, `exit_code`
    /// and `signal` say how.
    pub interrupted: bool,
    /// Whether the output limit cut stdout.
    pub stdout_truncated: bool,
    /// Whether the output limit cut stderr.
    pub stderr_truncated: bool,
    /// How many bytes stdout and stderr carried in all, truncated or not.
    pub total_bytes: (u64, u64),
    /// How many lines stdout and stderr carried in all: their newlines, and
    /// one more for a last line without one.
    pub total_lines: (u64, u64),
    /// The session's working directory once the command ended: where the
    /// command `cd`ed to, when the library took its report.
    pub cwd: PathBuf,
    /// What the library declined to do for this command (a cwd report not
    /// taken, ...), in English; empty when nothing.
    pub notice: String,
    /// What became of processes the command left running.
    pub leftovers: Leftovers,
    /// Wall time from start to end (or until now, for a running task).
    pub duration: Duration,
    /// The pid (and process group id) the shell had.
    pub pid: i64,
}

impl Output {
    /// Stdout as text (invalid UTF-8 replaced).
    pub fn stdout_str(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.stdout)
    }

    /// Stderr as text (invalid UTF-8 replaced).
    pub fn stderr_str(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.stderr)
    }

    /// True when the shell exited with status 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// True when the timeout ended the command.
    pub fn timed_out(&self) -> bool {
        self.state == State::TimedOut
    }

    /// True when the output limit cut either stream.
    pub fn truncated(&self) -> bool {
        self.stdout_truncated || self.stderr_truncated
    }
}

/// Copy the results of `run` (of the guarded session).
pub(crate) fn collect(g: &Guard<'_>, run: *mut sys::shexec_run) -> Output {
    // SAFETY (every call below): `run` belongs to the session `g` guards and
    // is alive; strings are copied before any other call on the session.
    unsafe {
        let state = sys::shexec_run_state(run);
        let code = sys::shexec_run_exit_code(run);
        let signal = sys::shexec_run_signal(run);
        let mut task_id: *const c_char = std::ptr::null();
        let leftovers = match sys::shexec_run_leftovers(run, &mut task_id) {
            sys::SHEXEC_LEFTOVERS_ADOPTED if !task_id.is_null() => {
                Leftovers::Adopted(cstr_string(task_id))
            }
            sys::SHEXEC_LEFTOVERS_KILLED => Leftovers::Killed,
            _ => Leftovers::None,
        };
        Output {
            stdout: run_output(run, sys::SHEXEC_STDOUT),
            stderr: run_output(run, sys::SHEXEC_STDERR),
            state: State::from_raw(state),
            exit_code: if code >= 0 { Some(code) } else { None },
            signal: if signal > 0 { Some(signal) } else { None },
            interrupted: sys::shexec_run_interrupted(run) != 0,
            stdout_truncated: sys::shexec_run_truncated(run, sys::SHEXEC_STDOUT) != 0,
            stderr_truncated: sys::shexec_run_truncated(run, sys::SHEXEC_STDERR) != 0,
            total_bytes: (
                sys::shexec_run_output_total(run, sys::SHEXEC_STDOUT),
                sys::shexec_run_output_total(run, sys::SHEXEC_STDERR),
            ),
            total_lines: (
                sys::shexec_run_output_lines(run, sys::SHEXEC_STDOUT),
                sys::shexec_run_output_lines(run, sys::SHEXEC_STDERR),
            ),
            cwd: session_cwd(g),
            notice: cstr_string(sys::shexec_run_notice(run)),
            leftovers,
            duration: Duration::from_millis(sys::shexec_run_duration_ms(run)),
            pid: sys::shexec_run_pid(run),
        }
    }
}

/// The session's cwd, copied.
pub(crate) fn session_cwd(g: &Guard<'_>) -> PathBuf {
    // SAFETY: the session is alive; the text is copied at once
    let p = unsafe { sys::shexec_session_cwd(g.raw()) };
    if p.is_null() {
        return PathBuf::new();
    }
    // SAFETY: non-NULL, NUL-terminated, owned by the session
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
    PathBuf::from(OsStr::from_bytes(bytes))
}

/// Bytes of a library buffer with a length (may hold NULs), copied.
pub(crate) unsafe fn bytes_at(p: *const c_char, len: usize) -> Vec<u8> {
    if p.is_null() || len == 0 {
        Vec::new()
    } else {
        std::slice::from_raw_parts(p as *const u8, len).to_vec()
    }
}

unsafe fn run_output(run: *mut sys::shexec_run, stream: c_int) -> Vec<u8> {
    let mut len = 0usize;
    let p = sys::shexec_run_output(run, stream, &mut len);
    bytes_at(p, len)
}

/// A NUL-terminated library string, copied (lossy; "" for NULL).
pub(crate) unsafe fn cstr_string(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}
