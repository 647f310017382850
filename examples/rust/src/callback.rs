//! Output callbacks: a Rust closure behind the library's `shexec_output_fn`.
//!
//! The closure lives in a heap `Slot` whose address is the callback's `user`
//! pointer. A panic must not unwind into C (undefined behaviour, and the
//! library's loop would be left half-way): the trampoline catches it, keeps
//! the payload, cancels the command (a task is killed) and never calls the
//! closure again. The owner of the slot resumes the panic after the C call
//! that pumped the loop has returned (see `Command::exec`, `Task::wait`).
use std::any::Any;
use std::cell::UnsafeCell;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};

use crate::output::Stream;
use crate::sys;

pub(crate) type Payload = Box<dyn Any + Send>;

/// A task's closure, boxed: a `Task` does not carry its closure's type.
pub(crate) type BoxedOutputFn = Box<dyn FnMut(Stream, &[u8]) + Send>;

pub(crate) struct Slot<F> {
    /// Touched only by the trampoline: the library calls callbacks one at a
    /// time, never from inside another callback of the session, and only
    /// under the session lock, so this access is unique.
    f: UnsafeCell<F>,
    /// The first panic of `f`. Locked only briefly, never while `f` runs:
    /// `f` may call into the session and reach the owner's check of it.
    panic: Mutex<Option<Payload>>,
    /// The run to cancel when `f` panics (the run outlives the slot's
    /// registration: the owner unregisters or frees the run first).
    run: *mut sys::shexec_run,
}

// SAFETY: `f` is Send (required where the slot may move), `panic` is a
// Mutex, and `run` is only used inside callbacks, under the session lock.
unsafe impl<F: Send> Send for Slot<F> {}

impl<F: FnMut(Stream, &[u8])> Slot<F> {
    pub(crate) fn new(f: F, run: *mut sys::shexec_run) -> Box<Slot<F>> {
        Box::new(Slot { f: UnsafeCell::new(f), panic: Mutex::new(None), run })
    }

    /// The C function to register with `user` = a pointer to this slot.
    pub(crate) fn trampoline() -> sys::shexec_output_fn {
        on_output::<F>
    }

    /// The panic the closure raised, if any (taken: resumed once).
    pub(crate) fn take_panic(&self) -> Option<Payload> {
        self.panic.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    fn panicked(&self) -> bool {
        self.panic.lock().unwrap_or_else(PoisonError::into_inner).is_some()
    }
}

unsafe extern "C" fn on_output<F: FnMut(Stream, &[u8])>(
    user: *mut c_void,
    stream: c_int,
    data: *const c_char,
    len: usize,
) {
    // SAFETY: `user` is the Slot<F> registered with this very instance of
    // the trampoline, alive while it is registered (see Slot::run).
    let slot = &*(user as *const Slot<F>);
    let stream = match stream {
        sys::SHEXEC_STDOUT => Stream::Stdout,
        sys::SHEXEC_STDERR => Stream::Stderr,
        _ => return,
    };
    if slot.panicked() {
        return; // the command is being cancelled; the closure is done
    }
    let bytes: &[u8] = if data.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the library passes `len` bytes at `data`, valid during the call
        std::slice::from_raw_parts(data as *const u8, len)
    };
    // SAFETY: unique access, see Slot::f
    let f = &mut *slot.f.get();
    // AssertUnwindSafe: whatever the closure broke is not looked at again,
    // the closure is never called after it panicked and the panic itself is
    // resumed by the owner.
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| f(stream, bytes))) {
        *slot.panic.lock().unwrap_or_else(PoisonError::into_inner) = Some(payload);
        // allowed from a callback; a task's run ends KILLED, a run CANCELLED
        sys::shexec_run_cancel(slot.run);
    }
}
