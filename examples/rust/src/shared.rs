//! The one owner of a C session, shared by a `Session` and its `Task`s.
//!
//! Invariants this module keeps:
//!   - The C session is freed exactly once, when the last `Arc<Shared>` goes
//!     (a `Session` handle or a `Task`). A `Task` may outlive the `Session`
//!     value it came from, and its C task is always freed before the session.
//!   - The library allows one thread at a time on a session and everything
//!     made from it; `Session` and `Task` can be on different threads, so
//!     every C call on the session, its runs and tasks goes through
//!     `Shared::lock()`. This is what makes `Shared` Sync.
//!   - Callbacks run inside C calls made under the lock, on the thread that
//!     holds it. A callback may call back into the same session (the library
//!     allows accessors, cancel, input and frees from a callback), so the
//!     lock lets its holder's thread in again ("nested"); the library itself
//!     refuses, with SHEXEC_ESTATE, what a callback may not do (start or wait
//!     for commands), so nesting cannot re-enter the loop.
//!   - A C task a `Task` holds is freed by that `Task` alone: the library
//!     frees a host's task only on shexec_task_free(), the session's free or
//!     through the tool layer, which this crate does not call.
//!   - A closure handed to C stays alive until C can no longer call it, and
//!     is never freed while it may be running: what is dropped while nested
//!     (a `Task` dropped from a callback, maybe its own) waits in the
//!     graveyard until the outermost lock is released.
use std::any::Any;
use std::ffi::CStr;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::Error;
use crate::sys;

pub(crate) struct Shared {
    raw: *mut sys::shexec_session,
    lock: Mutex<()>,
    /// The token of the thread holding `lock` (0: none). Written only by that
    /// thread, under the lock, so a thread reading its own token here is
    /// certain to hold the lock.
    owner: AtomicUsize,
    /// Closures to drop once the outermost lock is released.
    graveyard: Mutex<Vec<Box<dyn Any + Send>>>,
    /// The C tasks a `Task` value holds: the library hands out the same
    /// pointer again for a task taken twice, and two owners would free it
    /// twice.
    held: Mutex<Vec<usize>>,
}

// SAFETY: `raw` is used only through `lock()` (one thread at a time, as the
// library requires; the library has no thread affinity), and the other
// fields are thread-safe types.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    /// A new C session.
    pub(crate) fn new() -> Result<Shared, Error> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: out-parameter to a local.
        let rc = unsafe { sys::shexec_session_new(&mut raw) };
        if rc != sys::SHEXEC_OK || raw.is_null() {
            // no session, so no errmsg to read: the code says it
            return Err(Error::from_code(rc, "shexec_session_new failed"));
        }
        Ok(Shared {
            raw,
            lock: Mutex::new(()),
            owner: AtomicUsize::new(0),
            graveyard: Mutex::new(Vec::new()),
            held: Mutex::new(Vec::new()),
        })
    }

    /// Exclusive use of the C session for this thread, until the guard drops.
    pub(crate) fn lock(&self) -> Guard<'_> {
        let me = thread_token();
        if self.owner.load(Ordering::Relaxed) == me {
            // This thread holds the lock already: we are inside a callback
            // of a C call it made (no other code runs while it holds it).
            return Guard { shared: self, outer: None };
        }
        let outer = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.owner.store(me, Ordering::Relaxed);
        Guard { shared: self, outer: Some(outer) }
    }

    /// Record that a `Task` value now owns C task `t`; false when one does
    /// already.
    pub(crate) fn hold(&self, t: *mut sys::shexec_task) -> bool {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if held.contains(&(t as usize)) {
            return false;
        }
        held.push(t as usize);
        true
    }

    pub(crate) fn release(&self, t: *mut sys::shexec_task) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.retain(|&p| p != t as usize);
    }

    fn drain_graveyard(&self) {
        let dead = std::mem::take(&mut *self.graveyard.lock().unwrap_or_else(PoisonError::into_inner));
        // dropped here, with no lock held: a closure's captures may use the
        // session in their Drop
        drop(dead);
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The last handle is gone: no Task holds a C task any more, and no
        // callback of ours is registered (exec frees its run before it
        // returns, a Task frees its task), so freeing the session calls none
        // of our closures. Leftovers the session adopted are ended here.
        // SAFETY: raw came from shexec_session_new and is freed once.
        unsafe { sys::shexec_session_free(self.raw) };
        self.drain_graveyard();
    }
}

/// Proof of exclusive use of the session by this thread.
pub(crate) struct Guard<'a> {
    shared: &'a Shared,
    /// None when nested inside the holder's own callback.
    outer: Option<MutexGuard<'a, ()>>,
}

impl<'a> Guard<'a> {
    pub(crate) fn raw(&self) -> *mut sys::shexec_session {
        self.shared.raw
    }

    /// Drop `what` once no callback can be running it: when the outermost
    /// guard is released. (Nested, a callback runs right now, maybe the one
    /// `what` holds; not nested, none does, but its captures' Drop is user
    /// code, which must not run under the lock either.)
    pub(crate) fn bury(&self, what: Box<dyn Any + Send>) {
        self.shared.graveyard.lock().unwrap_or_else(PoisonError::into_inner).push(what);
    }

    /// The error for a failed call: its code and the session's message,
    /// copied now (the next call on the session replaces it).
    pub(crate) fn error(&self, code: c_int) -> Error {
        // SAFETY: errmsg never returns NULL; the text is valid until the next
        // call on the session, and we copy it under the lock.
        let msg = unsafe { CStr::from_ptr(sys::shexec_session_errmsg(self.shared.raw)) };
        Error::from_code(code, msg.to_string_lossy().into_owned())
    }

    /// Ok for SHEXEC_OK (and any non-negative count), else the error.
    pub(crate) fn check(&self, rc: c_int) -> Result<c_int, Error> {
        if rc < 0 {
            Err(self.error(rc))
        } else {
            Ok(rc)
        }
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        if let Some(outer) = self.outer.take() {
            self.shared.owner.store(0, Ordering::Relaxed);
            drop(outer);
            self.shared.drain_graveyard();
        }
    }
}

/// A number unique to each live thread, never 0: the address of a
/// thread-local. (std's ThreadId is not reachable in every thread-local
/// destructor; a u8 without Drop always is. Should it not be, a fresh number
/// that no holder has: such a thread can never pass as the holder, at worst
/// it waits for the lock.)
fn thread_token() -> usize {
    static FRESH: AtomicUsize = AtomicUsize::new(usize::MAX);
    thread_local!(static TOKEN: u8 = const { 0 });
    TOKEN
        .try_with(|t| t as *const u8 as usize)
        .unwrap_or_else(|_| FRESH.fetch_sub(1, Ordering::Relaxed))
}
