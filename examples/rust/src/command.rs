//! `Command`: one command's settings, run in the foreground or as a task.
use std::ffi::{CString, OsStr};
use std::os::raw::{c_char, c_int, c_void};
use std::panic;
use std::path::Path;
use std::ptr;
use std::time::Duration;

use crate::callback::{BoxedOutputFn, Slot};
use crate::conv::{cstring, millis_u32};
use crate::error::Result;
use crate::output::{collect, Output, Stream};
use crate::session::{keep_raw, unit_raw, Keep, Session, Unit};
use crate::shared::Guard;
use crate::sys;
use crate::task::Task;

/// The type of a command without an output closure.
pub type NoOutput = fn(Stream, &[u8]);

/// A command to run in a session, made by [`Session::command`].
///
/// Settings are checked by the library when the command starts, so a bad one
/// (a NUL byte in a path, a zero timeout) is the error of
/// [`exec`](Command::exec) or [`start_task`](Command::start_task).
///
/// The closure type `F` is part of the builder so that `exec` can take any
/// closure, borrowing what it likes (it is called only during `exec`, on the
/// calling thread), while `start_task` requires `Send + 'static`: a task's
/// closure is called whenever the session's loop is pumped, by whichever
/// thread pumps it, for as long as the task lives.
#[must_use = "a command does nothing until exec() or start_task()"]
pub struct Command<'s, F = NoOutput> {
    session: &'s Session,
    command: Vec<u8>,
    settings: Vec<Setting>,
    on_output: Option<F>,
}

enum Setting {
    Timeout(Duration),
    Cwd(CStringOr),
    Env(CStringOr, Option<CStringOr>),
    Pty(bool),
    Stdin(bool),
    AnsiStrip(bool),
    OutputLimit(u64, Unit, Keep, bool),
}

/// A C string, or the error that making it gave (reported at the start).
type CStringOr = Result<CString>;

impl<'s> Command<'s> {
    pub(crate) fn new(session: &'s Session, command: Vec<u8>) -> Command<'s> {
        Command { session, command, settings: Vec::new(), on_output: None }
    }
}

impl<'s, F> Command<'s, F> {
    /// End the command after `timeout` (SIGTERM to its processes, SIGKILL
    /// after the kill grace). A foreground command has the session's
    /// default otherwise (clamped to its maximum); a task has none.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.settings.push(Setting::Timeout(timeout));
        self
    }

    /// Run in `dir` (relative to the session cwd) instead of the session
    /// cwd; such a command does not move the session cwd.
    pub fn cwd<P: AsRef<Path>>(mut self, dir: P) -> Self {
        self.settings.push(Setting::Cwd(cstring(dir.as_ref().as_os_str(), "the directory")));
        self
    }

    /// Set a variable for this command only.
    pub fn env<K: AsRef<OsStr>, V: AsRef<OsStr>>(mut self, name: K, value: V) -> Self {
        self.settings.push(Setting::Env(
            cstring(name.as_ref(), "the variable name"),
            Some(cstring(value.as_ref(), "the variable value")),
        ));
        self
    }

    /// Remove a variable for this command only.
    pub fn env_remove<K: AsRef<OsStr>>(mut self, name: K) -> Self {
        self.settings.push(Setting::Env(cstring(name.as_ref(), "the variable name"), None));
        self
    }

    /// Run on a pseudo-terminal (stdout and stderr then merge into stdout).
    pub fn pty(mut self, on: bool) -> Self {
        self.settings.push(Setting::Pty(on));
        self
    }

    /// Give the command a stdin pipe ([`Task::write`]) instead of /dev/null.
    pub fn stdin(mut self, on: bool) -> Self {
        self.settings.push(Setting::Stdin(on));
        self
    }

    /// Remove ANSI escapes and resolve `\r` overwrites in the output.
    pub fn ansi_strip(mut self, on: bool) -> Self {
        self.settings.push(Setting::AnsiStrip(on));
        self
    }

    /// This command's output limit, in place of the session's.
    pub fn output_limit(mut self, limit: u64, unit: Unit, keep: Keep) -> Self {
        self.settings.push(Setting::OutputLimit(limit, unit, keep, false));
        self
    }

    /// This command's output limit, holding the truncation notice too
    /// ([`Session::set_output_limit_within`](crate::Session::set_output_limit_within)).
    pub fn output_limit_within(mut self, limit: u64, unit: Unit, keep: Keep) -> Self {
        self.settings.push(Setting::OutputLimit(limit, unit, keep, true));
        self
    }

    /// Call `f` with each chunk of output as the command produces it, in
    /// order per stream (a stream's chunks together are its whole output,
    /// before truncation).
    ///
    /// A panic in `f` does not cross into the library: the command is
    /// cancelled (a task killed), `f` is not called again, and the panic is
    /// resumed by [`exec`](Command::exec) once the command has ended, or, for
    /// a task, by its next [`Task::wait`].
    pub fn on_output<G: FnMut(Stream, &[u8])>(self, f: G) -> Command<'s, G> {
        Command {
            session: self.session,
            command: self.command,
            settings: self.settings,
            on_output: Some(f),
        }
    }

    /// A new C run with every setting applied, or the first error (the run
    /// is then freed). Never started, so nothing of it has run.
    fn make_run(&self, g: &Guard<'_>) -> Result<RunHandle> {
        let mut raw = ptr::null_mut();
        // SAFETY: out-parameter; the library copies the command
        let rc = unsafe {
            sys::shexec_run_new_bytes(
                &mut raw,
                g.raw(),
                self.command.as_ptr() as *const c_char,
                self.command.len(),
            )
        };
        g.check(rc)?;
        let run = RunHandle(raw);
        for setting in &self.settings {
            // SAFETY: a run of this session, not started; strings copied
            let rc = unsafe {
                match setting {
                    Setting::Timeout(d) => sys::shexec_run_set_timeout_ms(raw, millis_u32(*d)),
                    Setting::Cwd(dir) => sys::shexec_run_set_cwd(raw, owned(dir)?.as_ptr()),
                    Setting::Env(name, value) => {
                        let value = match value {
                            Some(v) => owned(v)?.as_ptr(),
                            None => ptr::null(),
                        };
                        sys::shexec_run_setenv(raw, owned(name)?.as_ptr(), value)
                    }
                    Setting::Pty(on) => sys::shexec_run_set_pty(
                        raw,
                        if *on { sys::SHEXEC_PTY_ON } else { sys::SHEXEC_PTY_OFF },
                    ),
                    Setting::Stdin(on) => sys::shexec_run_set_stdin(raw, *on as c_int),
                    Setting::AnsiStrip(on) => sys::shexec_run_set_ansi(
                        raw,
                        if *on { sys::SHEXEC_ANSI_STRIP } else { sys::SHEXEC_ANSI_KEEP },
                    ),
                    Setting::OutputLimit(limit, unit, keep, within) => sys::shexec_run_set_output_limit(
                        raw,
                        *limit,
                        unit_raw(*unit),
                        keep_raw(*keep) | if *within { sys::SHEXEC_KEEP_WITHIN_LIMIT } else { 0 },
                    ),
                }
            };
            g.check(rc)?;
        }
        Ok(run)
    }
}

impl<'s, F: FnMut(Stream, &[u8])> Command<'s, F> {
    /// Run the command and wait until it ends.
    ///
    /// A non-zero exit, a timeout or a signal is an `Ok` [`Output`]; an
    /// `Err` means nothing ran (no shell, no such directory, a bad setting,
    /// called from inside an output closure of the session).
    ///
    /// Panics: resumes a panic of the output closure, after the command has
    /// been cancelled and freed; the session is unaffected.
    pub fn exec(self) -> Result<Output> {
        let shared = &self.session.shared;
        let g = shared.lock();
        let run = self.make_run(&g)?;
        // The slot must outlive the run's registration, so it is a raw
        // pointer, freed by hand once the run is.
        let slot = match self.on_output {
            Some(f) => {
                let slot = Box::into_raw(Slot::new(f, run.0));
                // SAFETY: a fresh run; slot stays valid until after run_free
                let rc = unsafe {
                    sys::shexec_run_set_output_fn(
                        run.0,
                        Some(Slot::<F>::trampoline()),
                        slot as *mut c_void,
                    )
                };
                if let Err(e) = g.check(rc) {
                    drop(run);
                    drop(g); // the closure's Drop is user code: not under the lock
                    // SAFETY: from into_raw above; the run that knew it is gone
                    drop(unsafe { Box::from_raw(slot) });
                    return Err(e);
                }
                slot
            }
            None => ptr::null_mut(),
        };
        // SAFETY: the run is ours and of this session; callbacks run inside,
        // on this thread, under the lock
        let rc = unsafe { sys::shexec_run_exec(run.0) };
        let result = g.check(rc).map(|_| collect(&g, run.0));
        // A command still running here was moved to the background by the
        // library: the run handle's callback must not outlive the closure.
        // SAFETY: the run is alive until `drop(run)`
        unsafe {
            if sys::shexec_run_state(run.0) == sys::SHEXEC_STATE_RUNNING {
                sys::shexec_run_set_output_fn(run.0, None, ptr::null_mut());
            }
        }
        drop(run);
        drop(g);
        if !slot.is_null() {
            // SAFETY: from into_raw; the run is freed, so C no longer has it
            let slot = unsafe { Box::from_raw(slot) };
            if let Some(payload) = slot.take_panic() {
                drop(slot);
                panic::resume_unwind(payload);
            }
        }
        result
    }
}

impl<'s, F: FnMut(Stream, &[u8]) + Send + 'static> Command<'s, F> {
    /// Start the command in the background, as a [`Task`], and return at
    /// once. It has no timeout unless one is set, does not move the session
    /// cwd, and holds one of the session's task slots until the `Task` is
    /// dropped.
    pub fn start_task(self) -> Result<Task> {
        let shared = &self.session.shared;
        let g = shared.lock();
        let run = self.make_run(&g)?;
        let slot = self.on_output.map(|f| {
            let f: BoxedOutputFn = Box::new(f);
            Slot::new(f, run.0)
        });
        Task::start(shared, &g, run, slot)
    }
}

/// A C run not started yet (or finished), freed on drop.
pub(crate) struct RunHandle(pub(crate) *mut sys::shexec_run);

impl RunHandle {
    /// Hand the run over (to a task, which then frees it).
    pub(crate) fn into_raw(self) -> *mut sys::shexec_run {
        let raw = self.0;
        std::mem::forget(self);
        raw
    }
}

impl Drop for RunHandle {
    fn drop(&mut self) {
        // SAFETY: a run of a live session, freed once; the caller holds the
        // session lock (RunHandles live only within a guarded scope)
        unsafe { sys::shexec_run_free(self.0) };
    }
}

fn owned(c: &CStringOr) -> Result<&CString> {
    c.as_ref().map_err(|e| e.clone())
}
