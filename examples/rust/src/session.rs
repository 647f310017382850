//! `Session`: one persistent terminal (cwd, environment, limits, its loop).
use std::cell::Cell;
use std::ffi::{CStr, OsStr, OsString};
use std::fmt;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

use crate::command::Command;
use crate::conv::{cstring, millis_u32, wait_millis};
use crate::error::{Error, ErrorKind, Result};
use crate::output::session_cwd;
use crate::shared::Shared;
use crate::sys;
use crate::task::Task;

/// What the output limit counts (`SHEXEC_UNIT_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// UTF-8 code points (an invalid byte counts as one).
    Chars,
    Bytes,
}

/// What the output limit keeps of a longer stream (`SHEXEC_KEEP_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keep {
    /// The first `limit` units.
    Head,
    /// The first and the last `limit / 2` units.
    HeadTail,
}

/// What happens to processes a command leaves running
/// (`SHEXEC_ON_LEFTOVERS_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeftoverPolicy {
    /// They become a task of the session (the default): their output keeps
    /// being read, and they end with the session.
    Adopt,
    /// They are killed when the command's shell exits.
    Kill,
}

/// How the session holds its commands' processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Containment {
    /// A process group each.
    ProcessGroup,
    /// A cgroup v2 each.
    Cgroup,
}

pub(crate) fn unit_raw(u: Unit) -> c_int {
    match u {
        Unit::Chars => sys::SHEXEC_UNIT_CHARS,
        Unit::Bytes => sys::SHEXEC_UNIT_BYTES,
    }
}

pub(crate) fn keep_raw(k: Keep) -> c_int {
    match k {
        Keep::Head => sys::SHEXEC_KEEP_HEAD,
        Keep::HeadTail => sys::SHEXEC_KEEP_HEAD_TAIL,
    }
}

/// A shell session: its working directory follows the commands (a `cd` in
/// one is where the next starts), and it holds the environment policy, the
/// limits and the loop that runs commands and tasks.
///
/// `Send`, not `Sync`: a session can move to another thread, but it is one
/// terminal, used by one thread at a time, as the library requires. Tasks
/// share it (see [`Task`]), and a lock inside keeps their calls and the
/// session's apart when they are on different threads.
///
/// Dropping the session handle does not end tasks still held as [`Task`]
/// values: the session lives on until the last of them is dropped. Then it
/// is freed, ending whatever still runs (adopted leftovers included):
/// SIGTERM, the kill grace, SIGKILL, before the drop returns.
pub struct Session {
    pub(crate) shared: Arc<Shared>,
    _not_sync: PhantomData<Cell<()>>,
}

impl Session {
    /// A new session: the host's cwd, /bin/bash (else /bin/sh), the host's
    /// environment minus the library's deny list, default limits.
    pub fn new() -> Result<Session> {
        Ok(Session { shared: Arc::new(Shared::new()?), _not_sync: PhantomData })
    }

    /// A command to run in this session (see [`Command`]).
    pub fn command<S: AsRef<[u8]>>(&self, command: S) -> Command<'_> {
        Command::new(self, command.as_ref().to_vec())
    }

    /// The session's working directory.
    pub fn cwd(&self) -> PathBuf {
        session_cwd(&self.shared.lock())
    }

    /// Set the working directory of the next commands (relative to the
    /// current one; it must exist).
    pub fn set_cwd<P: AsRef<Path>>(&mut self, dir: P) -> Result<()> {
        let dir = cstring(dir.as_ref().as_os_str(), "the directory")?;
        let g = self.shared.lock();
        // SAFETY: live session, NUL-terminated argument
        g.check(unsafe { sys::shexec_session_set_cwd(g.raw(), dir.as_ptr()) }).map(drop)
    }

    /// Run commands with this program and its leading arguments instead of
    /// the default shell (`&["/bin/dash"]`); the library appends `-c` and
    /// the command. The program is resolved now, from the host's PATH.
    pub fn set_shell<S: AsRef<OsStr>>(&mut self, argv: &[S]) -> Result<()> {
        let owned = argv
            .iter()
            .map(|a| cstring(a.as_ref(), "a shell argument"))
            .collect::<Result<Vec<_>>>()?;
        if owned.is_empty() {
            return Err(Error::new(ErrorKind::InvalidArgument, "the shell's argv is empty"));
        }
        let mut ptrs: Vec<*const c_char> = owned.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(ptr::null());
        let g = self.shared.lock();
        // SAFETY: a NULL-terminated array of C strings, copied by the library
        g.check(unsafe {
            sys::shexec_session_set_shell(g.raw(), ptrs.as_ptr(), sys::SHEXEC_WRAPPER_LOCAL)
        })
        .map(drop)
    }

    /// Back to the default shell (/bin/bash when executable, else /bin/sh).
    pub fn reset_shell(&mut self) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: NULL restores the default
        g.check(unsafe {
            sys::shexec_session_set_shell(g.raw(), ptr::null(), sys::SHEXEC_WRAPPER_LOCAL)
        })
        .map(drop)
    }

    /// The program set with [`set_shell`](Session::set_shell), or None for
    /// the default shell.
    pub fn shell(&self) -> Option<Vec<OsString>> {
        let g = self.shared.lock();
        // SAFETY: NULL or a NULL-terminated array owned by the session,
        // copied before the guard goes
        unsafe {
            let mut p = sys::shexec_session_shell_argv(g.raw());
            if p.is_null() {
                return None;
            }
            let mut argv = Vec::new();
            while !(*p).is_null() {
                argv.push(OsStr::from_bytes(CStr::from_ptr(*p).to_bytes()).to_os_string());
                p = p.add(1);
            }
            Some(argv)
        }
    }

    /// Set a variable for every later command.
    pub fn set_env<K: AsRef<OsStr>, V: AsRef<OsStr>>(&mut self, name: K, value: V) -> Result<()> {
        let name = cstring(name.as_ref(), "the variable name")?;
        let value = cstring(value.as_ref(), "the variable value")?;
        let g = self.shared.lock();
        // SAFETY: C strings, copied by the library
        g.check(unsafe { sys::shexec_session_setenv(g.raw(), name.as_ptr(), value.as_ptr()) })
            .map(drop)
    }

    /// Remove a variable from every later command (an inherited one too).
    pub fn remove_env<K: AsRef<OsStr>>(&mut self, name: K) -> Result<()> {
        let name = cstring(name.as_ref(), "the variable name")?;
        let g = self.shared.lock();
        // SAFETY: value NULL removes
        g.check(unsafe { sys::shexec_session_setenv(g.raw(), name.as_ptr(), ptr::null()) })
            .map(drop)
    }

    /// The value of `name` in the environment the next command starts with
    /// (None when unset, or when `name` is not a valid name).
    pub fn getenv<K: AsRef<OsStr>>(&self, name: K) -> Option<OsString> {
        let name = cstring(name.as_ref(), "the variable name").ok()?;
        let g = self.shared.lock();
        // SAFETY: the value is owned by the session and copied under the lock
        unsafe {
            let p = sys::shexec_session_getenv(g.raw(), name.as_ptr());
            if p.is_null() {
                None
            } else {
                Some(OsStr::from_bytes(CStr::from_ptr(p).to_bytes()).to_os_string())
            }
        }
    }

    /// Whether commands start from the host's environment (true, the
    /// default) or from an empty one.
    pub fn set_env_inherit(&mut self, inherit: bool) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: live session
        g.check(unsafe { sys::shexec_session_set_env_inherit(g.raw(), inherit as c_int) })
            .map(drop)
    }

    pub fn env_inherit(&self) -> bool {
        let g = self.shared.lock();
        // SAFETY: live session
        unsafe { sys::shexec_session_env_inherit(g.raw()) != 0 }
    }

    /// Remove variables whose names match `glob` (fnmatch) from commands.
    pub fn env_deny(&mut self, glob: &str) -> Result<()> {
        let glob = cstring(OsStr::new(glob), "the glob")?;
        let g = self.shared.lock();
        // SAFETY: C string, copied by the library
        g.check(unsafe { sys::shexec_session_env_deny(g.raw(), glob.as_ptr()) }).map(drop)
    }

    /// Keep variables whose names match `glob` even when denied.
    pub fn env_allow(&mut self, glob: &str) -> Result<()> {
        let glob = cstring(OsStr::new(glob), "the glob")?;
        let g = self.shared.lock();
        // SAFETY: C string, copied by the library
        g.check(unsafe { sys::shexec_session_env_allow(g.raw(), glob.as_ptr()) }).map(drop)
    }

    /// The library's preset for unattended commands (PAGER=cat,
    /// GIT_TERMINAL_PROMPT=0, ...; see `shexec_session_apply_agent_env()`).
    pub fn apply_agent_env(&mut self) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: live session
        g.check(unsafe { sys::shexec_session_apply_agent_env(g.raw()) }).map(drop)
    }

    /// Keep the shell's exported environment (and with bash its variables
    /// and functions) from one command to the next.
    pub fn set_persist_env(&mut self, on: bool) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: live session
        g.check(unsafe { sys::shexec_session_set_persist_env(g.raw(), on as c_int) }).map(drop)
    }

    pub fn persist_env(&self) -> bool {
        let g = self.shared.lock();
        // SAFETY: live session
        unsafe { sys::shexec_session_persist_env(g.raw()) != 0 }
    }

    /// Set the default timeout of a command and the most a command may ask
    /// for (default 120 s and 600 s).
    pub fn set_timeouts(&mut self, default: Duration, max: Duration) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: live session
        g.check(unsafe {
            sys::shexec_session_set_timeouts_ms(g.raw(), millis_u32(default), millis_u32(max))
        })
        .map(drop)
    }

    /// The default and the maximum timeout.
    pub fn timeouts(&self) -> (Duration, Duration) {
        let (mut default, mut max) = (0u32, 0u32);
        let g = self.shared.lock();
        // SAFETY: out-parameters to locals
        unsafe { sys::shexec_session_timeouts_ms(g.raw(), &mut default, &mut max) };
        (Duration::from_millis(default.into()), Duration::from_millis(max.into()))
    }

    /// Set the time between SIGTERM and SIGKILL when a command is ended
    /// (default 5 s; zero sends SIGKILL right after SIGTERM).
    pub fn set_kill_grace(&mut self, grace: Duration) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: live session
        g.check(unsafe { sys::shexec_session_set_kill_grace_ms(g.raw(), millis_u32(grace)) })
            .map(drop)
    }

    pub fn kill_grace(&self) -> Duration {
        let g = self.shared.lock();
        // SAFETY: live session
        Duration::from_millis(unsafe { sys::shexec_session_kill_grace_ms(g.raw()) }.into())
    }

    /// Set how long, after a command's shell exits, what it left running is
    /// read as the command's output: until it ends or prints nothing for
    /// `drain` (default 100 ms, at most 2 s; ten times that in all), then it
    /// is adopted. The lines of `echo word &` or `seq 3 > >(tac)` are then the
    /// command's, and a server's first lines. Zero: the command ends at its
    /// shell's exit. [`ErrorKind::InvalidArgument`](crate::ErrorKind) above 2 s.
    pub fn set_leftovers_drain(&mut self, drain: Duration) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: live session
        g.check(unsafe { sys::shexec_session_set_leftovers_drain_ms(g.raw(), millis_u32(drain)) })
            .map(drop)
    }

    pub fn leftovers_drain(&self) -> Duration {
        let g = self.shared.lock();
        // SAFETY: live session
        Duration::from_millis(unsafe { sys::shexec_session_leftovers_drain_ms(g.raw()) }.into())
    }

    /// Set how much of each stream a command keeps (default 30000
    /// characters, the head); what is cut is replaced by a notice (and,
    /// with `Keep::HeadTail`, a marker between head and tail), on top of
    /// the limit.
    pub fn set_output_limit(&mut self, limit: u64, unit: Unit, keep: Keep) -> Result<()> {
        self.output_limit_raw(limit, unit, keep_raw(keep))
    }

    /// As [`set_output_limit`](Session::set_output_limit), but the limit
    /// holds the notice and the marker too: the kept text is cut to leave
    /// them room, so a cut stream's text is at most `limit` units in all.
    pub fn set_output_limit_within(&mut self, limit: u64, unit: Unit, keep: Keep) -> Result<()> {
        self.output_limit_raw(limit, unit, keep_raw(keep) | sys::SHEXEC_KEEP_WITHIN_LIMIT)
    }

    fn output_limit_raw(&mut self, limit: u64, unit: Unit, keep: c_int) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: live session
        g.check(unsafe { sys::shexec_session_set_output_limit(g.raw(), limit, unit_raw(unit), keep) })
            .map(drop)
    }

    /// Whether the output limit holds the notice
    /// ([`set_output_limit_within`](Session::set_output_limit_within)).
    pub fn output_within_limit(&self) -> bool {
        let mut keep = 0 as c_int;
        let g = self.shared.lock();
        // SAFETY: an out-parameter to a local
        unsafe {
            sys::shexec_session_output_limit(g.raw(), std::ptr::null_mut(), std::ptr::null_mut(), &mut keep)
        };
        keep & sys::SHEXEC_KEEP_WITHIN_LIMIT != 0
    }

    pub fn output_limit(&self) -> (u64, Unit, Keep) {
        let (mut limit, mut unit, mut keep) = (0u64, 0 as c_int, 0 as c_int);
        let g = self.shared.lock();
        // SAFETY: out-parameters to locals
        unsafe { sys::shexec_session_output_limit(g.raw(), &mut limit, &mut unit, &mut keep) };
        let unit = if unit == sys::SHEXEC_UNIT_BYTES { Unit::Bytes } else { Unit::Chars };
        let keep = if keep & !sys::SHEXEC_KEEP_WITHIN_LIMIT == sys::SHEXEC_KEEP_HEAD_TAIL {
            Keep::HeadTail
        } else {
            Keep::Head
        };
        (limit, unit, keep)
    }

    /// Set what happens to processes a command leaves running.
    pub fn set_on_leftovers(&mut self, policy: LeftoverPolicy) -> Result<()> {
        let raw = match policy {
            LeftoverPolicy::Adopt => sys::SHEXEC_ON_LEFTOVERS_ADOPT,
            LeftoverPolicy::Kill => sys::SHEXEC_ON_LEFTOVERS_KILL,
        };
        let g = self.shared.lock();
        // SAFETY: live session
        g.check(unsafe { sys::shexec_session_set_on_leftovers(g.raw(), raw) }).map(drop)
    }

    pub fn on_leftovers(&self) -> LeftoverPolicy {
        let g = self.shared.lock();
        // SAFETY: live session
        match unsafe { sys::shexec_session_on_leftovers(g.raw()) } {
            sys::SHEXEC_ON_LEFTOVERS_KILL => LeftoverPolicy::Kill,
            _ => LeftoverPolicy::Adopt,
        }
    }

    /// Set how many tasks the session holds at once (default 10; running
    /// or finished, until freed).
    pub fn set_max_tasks(&mut self, max: u32) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: live session
        g.check(unsafe { sys::shexec_session_set_max_tasks(g.raw(), max) }).map(drop)
    }

    pub fn max_tasks(&self) -> u32 {
        let g = self.shared.lock();
        // SAFETY: live session
        unsafe { sys::shexec_session_max_tasks(g.raw()) }
    }

    /// Where the session holds each command's processes: `"auto"` (the
    /// default: a cgroup v2 per command below the host's own cgroup, where
    /// one can be made, else process groups), `"off"` (process groups
    /// only), or a cgroup2 directory the host may write (an error where no
    /// cgroup can be made there). Not while commands of the session run.
    pub fn set_containment(&mut self, parent: &str) -> Result<()> {
        let parent = cstring(OsStr::new(parent), "the containment")?;
        let g = self.shared.lock();
        // SAFETY: a C string the library copies
        g.check(unsafe { sys::shexec_session_set_containment(g.raw(), parent.as_ptr()) }).map(drop)
    }

    /// How the session holds its commands' processes, and the cgroup
    /// directory or why there is none.
    pub fn containment(&self) -> (Containment, String) {
        let mut detail: *const c_char = ptr::null();
        let g = self.shared.lock();
        // SAFETY: the detail is owned by the session and copied at once
        unsafe {
            let kind = sys::shexec_session_containment(g.raw(), &mut detail);
            let detail = crate::output::cstr_string(detail);
            if kind == sys::SHEXEC_CONTAIN_CGROUP {
                (Containment::Cgroup, detail)
            } else {
                (Containment::ProcessGroup, detail)
            }
        }
    }

    /// Pump the session's loop (read output, enforce timeouts, reap) until a
    /// command or task finishes, `timeout` passes (None: no limit), or at
    /// once when nothing runs. Returns how many finished.
    ///
    /// A panic in a task's output closure is not resumed here but by that
    /// task's [`Task::wait`].
    pub fn wait(&self, timeout: Option<Duration>) -> Result<usize> {
        let g = self.shared.lock();
        // SAFETY: live session; callbacks run inside, under the lock
        let rc = unsafe { sys::shexec_session_wait(g.raw(), wait_millis(timeout)) };
        g.check(rc).map(|n| n as usize)
    }

    /// Take a task of the session by id (adopted leftovers:
    /// [`Leftovers::Adopted`](crate::Leftovers::Adopted)); it is then the
    /// returned value's, freed (and ended) when that is dropped.
    ///
    /// A task already held by a [`Task`] value is an error
    /// ([`ErrorKind::State`]): two values must not free the same task.
    pub fn take_task(&self, id: &str) -> Result<Task> {
        Task::take(&self.shared, id)
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session").field("cwd", &self.cwd()).finish()
    }
}
