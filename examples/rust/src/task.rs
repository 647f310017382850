//! `Task`: a command running in the background of a session.
use std::cell::Cell;
use std::ffi::{CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::os::raw::c_void;
use std::panic;
use std::ptr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::callback::{BoxedOutputFn, Slot};
use crate::command::RunHandle;
use crate::conv::wait_millis;
use crate::error::{Error, ErrorKind, Result};
use crate::output::{bytes_at, collect, Output, State, Stream};
use crate::shared::{Guard, Shared};
use crate::signal::Signal;
use crate::sys;

type TaskSlot = Slot<BoxedOutputFn>;

/// A command running in the background of a session
/// ([`Command::start_task`](crate::Command::start_task), or leftovers taken
/// with [`Session::take_task`](crate::Session::take_task)).
///
/// Its output is read whenever the session's loop is pumped: by
/// [`wait`](Task::wait), [`Session::wait`](crate::Session::wait), or any
/// command the session runs meanwhile.
///
/// A `Task` shares its session: it keeps the session alive after the
/// [`Session`](crate::Session) value is dropped, and works as before.
/// Dropping the `Task` frees it, ending the command first if it still runs
/// (SIGTERM, the kill grace, SIGKILL: the drop waits for that).
///
/// `Send`, not `Sync`, like the session: it may be used from another thread
/// than the session's; a lock inside serializes the two, so a long
/// [`Command::exec`](crate::Command::exec) on one thread makes a call on
/// the task wait until it returns.
pub struct Task {
    shared: Arc<Shared>,
    raw: *mut sys::shexec_task,
    run: *mut sys::shexec_run,
    id: String,
    /// The output closure, if any (from Box::into_raw: C holds its address).
    slot: *mut TaskSlot,
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: `raw` and `run` are used only under the session lock (the library
// has no thread affinity); the closure in `slot` is Send; the session is
// shared through an Arc of a Sync type.
unsafe impl Send for Task {}

impl Task {
    /// Start `run` as a task, with its closure registered.
    pub(crate) fn start(
        shared: &Arc<Shared>,
        g: &Guard<'_>,
        run: RunHandle,
        slot: Option<Box<TaskSlot>>,
    ) -> Result<Task> {
        let slot = slot.map_or(ptr::null_mut(), Box::into_raw);
        // on an error the run is freed, then the closure (buried: its Drop
        // is user code, kept out from under the lock)
        let fail = |e: Error, run: RunHandle| {
            drop(run);
            if !slot.is_null() {
                // SAFETY: from into_raw; no run knows it any more
                g.bury(unsafe { Box::from_raw(slot) });
            }
            Err(e)
        };
        if !slot.is_null() {
            // SAFETY: a fresh run; the slot lives until the task is freed
            let rc = unsafe {
                sys::shexec_run_set_output_fn(
                    run.0,
                    Some(TaskSlot::trampoline()),
                    slot as *mut c_void,
                )
            };
            if let Err(e) = g.check(rc) {
                return fail(e, run);
            }
        }
        let mut raw = ptr::null_mut();
        // SAFETY: on success the task owns the run; on failure it is still ours
        let rc = unsafe { sys::shexec_run_start_task(&mut raw, run.0) };
        if let Err(e) = g.check(rc) {
            return fail(e, run);
        }
        let run = run.into_raw();
        let fresh = shared.hold(raw);
        debug_assert!(fresh, "a new task is held by no Task yet");
        Ok(Task::wrap(shared, raw, run, slot))
    }

    /// Take a task of the session by id.
    pub(crate) fn take(shared: &Arc<Shared>, id: &str) -> Result<Task> {
        let cid = CString::new(id)
            .map_err(|_| Error::new(ErrorKind::InvalidArgument, "the task id holds a NUL byte"))?;
        let g = shared.lock();
        let mut raw = ptr::null_mut();
        // SAFETY: out-parameter; the id is copied
        g.check(unsafe { sys::shexec_session_take_task(&mut raw, g.raw(), cid.as_ptr()) })?;
        if !shared.hold(raw) {
            return Err(Error::new(
                ErrorKind::State,
                format!("task \"{}\" is already held by a Task value", id),
            ));
        }
        // SAFETY: a live task of this session
        let run = unsafe { sys::shexec_task_run(raw) };
        Ok(Task::wrap(shared, raw, run, ptr::null_mut()))
    }

    fn wrap(
        shared: &Arc<Shared>,
        raw: *mut sys::shexec_task,
        run: *mut sys::shexec_run,
        slot: *mut TaskSlot,
    ) -> Task {
        // SAFETY: the id is owned by the task, copied now
        let id = unsafe { CStr::from_ptr(sys::shexec_task_id(raw)) }.to_string_lossy().into_owned();
        Task { shared: Arc::clone(shared), raw, run, id, slot, _not_sync: PhantomData }
    }

    /// The task's id: unique in its session.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What `stream` produced since the last read (bounded by the output
    /// limit, with its notice). Only what the loop has read so far: pump it
    /// with [`wait`](Task::wait) first.
    pub fn read(&self, stream: Stream) -> Vec<u8> {
        let _g = self.shared.lock();
        let mut len = 0usize;
        // SAFETY: a live task; the bytes are copied under the lock
        unsafe { bytes_at(sys::shexec_task_read(self.raw, stream.raw(), &mut len), len) }
    }

    /// Queue `data` for the command's stdin (needs
    /// [`Command::stdin`](crate::Command::stdin)); written as the command
    /// reads it, while the loop is pumped. Never blocks. [`ErrorKind::Limit`]
    /// when the input the command has not read yet would pass the session's
    /// bound on queued input: nothing was queued; write it again once it has
    /// read.
    pub fn write(&self, data: &[u8]) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: a live run; the bytes are copied
        g.check(unsafe { sys::shexec_run_write(self.run, data.as_ptr() as *const c_void, data.len()) })
            .map(drop)
    }

    /// Close the command's stdin once the queued bytes are written.
    pub fn close_stdin(&self) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: a live run
        g.check(unsafe { sys::shexec_run_close_stdin(self.run) }).map(drop)
    }

    /// Type `data` as a person at a terminal would (what a model writes): on
    /// a pty as [`write`](Task::write); on pipes each `0x03` byte (^C) is a
    /// SIGINT to the command instead of a byte of its input (also without
    /// [`Command::stdin`](crate::Command::stdin)), the text around it queued
    /// in order. [`ErrorKind::Pipe`] once it ended.
    pub fn type_input(&self, data: &[u8]) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: a live run; the bytes are copied
        g.check(unsafe {
            sys::shexec_run_type_input(self.run, data.as_ptr() as *const c_void, data.len())
        })
        .map(drop)
    }

    /// Send `sig` to the command's processes (its process group, or every
    /// process of its cgroup), and to nothing else: [`Signal::Int`] is a
    /// terminal's Ctrl+C. It changes nothing of the timeout or
    /// [`kill`](Task::kill): a command that dies of it ends
    /// [`State::Signaled`]. [`ErrorKind::State`] once the command ended (no
    /// signal is sent).
    pub fn send_signal(&self, sig: Signal) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: a live run
        g.check(unsafe { sys::shexec_run_send_signal(self.run, sig.number()) }).map(drop)
    }

    /// True once a SIGINT reached the command ([`send_signal`](Task::send_signal)
    /// of [`Signal::Int`], or a ^C typed), however it then ended.
    pub fn interrupted(&self) -> bool {
        let _g = self.shared.lock();
        // SAFETY: a live run
        unsafe { sys::shexec_run_interrupted(self.run) != 0 }
    }

    /// Resize the terminal of a task started with
    /// [`Command::pty`](crate::Command::pty) while it runs, as a window is
    /// resized: its foreground process group gets SIGWINCH.
    /// [`ErrorKind::State`] for a task on pipes or one that has ended,
    /// [`ErrorKind::InvalidArgument`] for 0 or a size above 65535.
    pub fn set_pty_size(&self, cols: u32, rows: u32) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: a live run
        g.check(unsafe { sys::shexec_run_set_pty_size(self.run, cols, rows) }).map(drop)
    }

    /// End the command: SIGTERM to its processes now, SIGKILL after the
    /// kill grace. Returns at once; the task finishes (state `Killed`) as the
    /// loop is pumped: [`wait`](Task::wait) for it. A finished task is left
    /// as it is.
    pub fn kill(&self) -> Result<()> {
        let g = self.shared.lock();
        // SAFETY: a live run
        g.check(unsafe { sys::shexec_run_cancel(self.run) }).map(drop)
    }

    /// Pump the session's loop until the task finishes or `timeout` passes
    /// (None: no limit). Returns whether it finished. Other commands' output
    /// is read meanwhile.
    ///
    /// Panics: resumes a panic of this task's output closure (once; the task
    /// was killed when it panicked).
    pub fn wait(&self, timeout: Option<Duration>) -> Result<bool> {
        let deadline = timeout.and_then(|d| Instant::now().checked_add(d));
        let mut pumped = false;
        loop {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            {
                let g = self.shared.lock();
                // a zero timeout still pumps once: wait(Some(ZERO)) polls
                if self.state_locked(&g).is_finished() || (pumped && left == Some(Duration::ZERO))
                {
                    break;
                }
                // SAFETY: live session; callbacks run inside, under the lock
                let rc = unsafe { sys::shexec_session_wait(g.raw(), wait_millis(left)) };
                g.check(rc)?;
                pumped = true;
            }
            // outside the lock: the panic unwinds through the caller, not C
            self.resume_panic();
        }
        self.resume_panic();
        Ok(self.is_finished())
    }

    /// Follow the task: pump the session's loop until the command has
    /// finished, waits for input, has printed nothing for `quiet` (counted
    /// from the later of its last output and this call; zero: not watched
    /// for), or `max` has passed (None: no limit), whichever comes first,
    /// and say which. A host that follows a build or a server's log ("no
    /// new output for N seconds") calls it, then [`read`](Task::read)s
    /// what came. Other commands' output is read meanwhile.
    ///
    /// Panics: resumes a panic of this task's output closure, as
    /// [`wait`](Task::wait) does.
    pub fn watch(&self, quiet: Duration, max: Option<Duration>) -> Result<Watch> {
        let quiet_ms = millis_u32(quiet);
        loop {
            let why = {
                let g = self.shared.lock();
                // SAFETY: a live task; callbacks run inside, under the lock
                let rc = unsafe {
                    sys::shexec_task_watch(self.raw, quiet_ms, max.map_or(u32::MAX, millis_u32))
                };
                g.check(rc)?
            };
            self.resume_panic();
            let why = Watch::from_raw(why);
            // without a limit, the longest wait the library takes is only a slice
            if why != Watch::Time || max.is_some() {
                return Ok(why);
            }
        }
    }

    /// How long the command has printed nothing: since the output the loop
    /// last read of it, or its start; once it ended, until its end.
    pub fn quiet(&self) -> Duration {
        let _g = self.shared.lock();
        // SAFETY: a live run
        Duration::from_millis(unsafe { sys::shexec_run_quiet_ms(self.run) })
    }

    /// True once the command has ended and all its output was read.
    pub fn is_finished(&self) -> bool {
        self.state().is_finished()
    }

    /// Where the command stands: `Running`, or how it ended.
    pub fn state(&self) -> State {
        self.state_locked(&self.shared.lock())
    }

    /// The pid (and process group id) of the task's shell.
    pub fn pid(&self) -> i64 {
        let _g = self.shared.lock();
        // SAFETY: a live run
        unsafe { sys::shexec_run_pid(self.run) }
    }

    /// Everything so far: all the output (not only what is new), the state,
    /// and once finished the exit code or signal. `cwd` is the session's: a
    /// task never moves it.
    pub fn output(&self) -> Output {
        let g = self.shared.lock();
        collect(&g, self.run)
    }

    fn state_locked(&self, _g: &Guard<'_>) -> State {
        // SAFETY: a live run, under the lock the guard proves
        State::from_raw(unsafe { sys::shexec_run_state(self.run) })
    }

    fn resume_panic(&self) {
        if self.slot.is_null() {
            return;
        }
        // SAFETY: the slot lives as long as self; only its Mutex is touched
        if let Some(payload) = unsafe { &*self.slot }.take_panic() {
            panic::resume_unwind(payload);
        }
    }
}

/// Why [`Task::watch`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    /// The command has finished.
    Ended,
    /// It printed nothing for the quiet time asked for.
    Quiet,
    /// It waits for input (its stdin pipe or terminal).
    Input,
    /// The longest wait asked for passed first.
    Time,
}

impl Watch {
    fn from_raw(v: i32) -> Watch {
        match v {
            sys::SHEXEC_WATCH_ENDED => Watch::Ended,
            sys::SHEXEC_WATCH_QUIET => Watch::Quiet,
            sys::SHEXEC_WATCH_INPUT => Watch::Input,
            _ => Watch::Time,
        }
    }
}

/// Whole milliseconds of `d`, rounded up, at most u32::MAX.
fn millis_u32(d: Duration) -> u32 {
    u32::try_from(d.as_micros().saturating_add(999) / 1000).unwrap_or(u32::MAX)
}

impl Drop for Task {
    fn drop(&mut self) {
        let g = self.shared.lock();
        // Ends a running command and reaps it; from inside a callback the
        // library defers the memory until it ended. Either way our callback
        // is never called again after this returns.
        // SAFETY: our task, freed once, under the lock
        unsafe { sys::shexec_task_free(self.raw) };
        self.shared.release(self.raw);
        if !self.slot.is_null() {
            // SAFETY: from into_raw; C no longer calls it. Buried rather than
            // dropped: this may be a callback of this very closure.
            g.bury(unsafe { Box::from_raw(self.slot) });
        }
        drop(g);
        // the Arc goes after: a last handle frees the session, task first
    }
}

impl fmt::Debug for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Task").field("id", &self.id).finish()
    }
}
