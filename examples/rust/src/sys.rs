//! Raw declarations of the part of `include/shexec.h` this crate uses.
//!
//! Written by hand, one to one with the header (tests/header.rs compares
//! every signature and constant here with the header's). Everything is
//! `unsafe`: the rules of ownership, lifetimes and threads are the header's,
//! and the safe types of this crate are what keep them.
#![allow(non_camel_case_types)]

use std::marker::{PhantomData, PhantomPinned};
use std::os::raw::{c_char, c_int, c_void};

/// A shell session (opaque; only ever behind a pointer).
#[repr(C)]
pub struct shexec_session {
    _private: [u8; 0],
    // neither Send, Sync nor Unpin: what may move or be shared is decided by
    // the safe wrappers, not by the C type
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// One command and its result (opaque).
#[repr(C)]
pub struct shexec_run {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// One background command (opaque).
#[repr(C)]
pub struct shexec_task {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// The output callback: `data` is valid during the call only.
pub type shexec_output_fn =
    unsafe extern "C" fn(user: *mut c_void, stream: c_int, data: *const c_char, len: usize);

// Result codes.
pub const SHEXEC_OK: c_int = 0;
pub const SHEXEC_EINVAL: c_int = -1;
pub const SHEXEC_ENOMEM: c_int = -2;
pub const SHEXEC_ENOCWD: c_int = -3;
pub const SHEXEC_ESPAWN: c_int = -4;
pub const SHEXEC_ESYS: c_int = -5;
pub const SHEXEC_ESTATE: c_int = -6;
pub const SHEXEC_E2BIG: c_int = -7;
pub const SHEXEC_ELIMIT: c_int = -8;
pub const SHEXEC_ENOTASK: c_int = -9;
pub const SHEXEC_EPIPE: c_int = -10;
pub const SHEXEC_ENOTOOL: c_int = -11;

// Output streams.
pub const SHEXEC_STDOUT: c_int = 1;
pub const SHEXEC_STDERR: c_int = 2;

// Run states.
pub const SHEXEC_STATE_NEW: c_int = 0;
pub const SHEXEC_STATE_RUNNING: c_int = 1;
pub const SHEXEC_STATE_EXITED: c_int = 2;
pub const SHEXEC_STATE_SIGNALED: c_int = 3;
pub const SHEXEC_STATE_TIMED_OUT: c_int = 4;
pub const SHEXEC_STATE_CANCELLED: c_int = 5;
pub const SHEXEC_STATE_KILLED: c_int = 6;

// Defaults.
pub const SHEXEC_DEFAULT_TIMEOUT_MS: u32 = 120000;
pub const SHEXEC_DEFAULT_MAX_TIMEOUT_MS: u32 = 600000;
pub const SHEXEC_DEFAULT_KILL_GRACE_MS: u32 = 5000;
pub const SHEXEC_DEFAULT_OUTPUT_LIMIT: u32 = 30000;
pub const SHEXEC_DEFAULT_MAX_TASKS: u32 = 10;

// Output limit units and what to keep.
pub const SHEXEC_UNIT_CHARS: c_int = 0;
pub const SHEXEC_UNIT_BYTES: c_int = 1;
pub const SHEXEC_KEEP_HEAD: c_int = 0;
pub const SHEXEC_KEEP_HEAD_TAIL: c_int = 1;
// or'ed into keep (0x100)
pub const SHEXEC_KEEP_WITHIN_LIMIT: c_int = 256;

// Wrapper kinds (only LOCAL is used: a plain shell).
pub const SHEXEC_WRAPPER_LOCAL: c_int = 0;

// Leftovers: the policy, and what became of them.
pub const SHEXEC_ON_LEFTOVERS_ADOPT: c_int = 0;
pub const SHEXEC_ON_LEFTOVERS_KILL: c_int = 1;
pub const SHEXEC_LEFTOVERS_NONE: c_int = 0;
pub const SHEXEC_LEFTOVERS_ADOPTED: c_int = 1;
pub const SHEXEC_LEFTOVERS_KILLED: c_int = 2;

// Containment.
pub const SHEXEC_CONTAIN_GROUP: c_int = 0;
pub const SHEXEC_CONTAIN_CGROUP: c_int = 1;

// Why shexec_task_watch() returned.
pub const SHEXEC_WATCH_ENDED: c_int = 1;
pub const SHEXEC_WATCH_QUIET: c_int = 2;
pub const SHEXEC_WATCH_INPUT: c_int = 3;
pub const SHEXEC_WATCH_TIME: c_int = 4;

// Terminal and ANSI modes.
pub const SHEXEC_PTY_OFF: c_int = 0;
pub const SHEXEC_PTY_ON: c_int = 1;
pub const SHEXEC_ANSI_KEEP: c_int = 0;
pub const SHEXEC_ANSI_STRIP: c_int = 1;

extern "C" {
    pub fn shexec_version() -> *const c_char;
    pub fn shexec_strerror(code: c_int) -> *const c_char;

    pub fn shexec_session_new(out: *mut *mut shexec_session) -> c_int;
    pub fn shexec_session_free(s: *mut shexec_session);
    pub fn shexec_session_errmsg(s: *const shexec_session) -> *const c_char;
    pub fn shexec_session_cwd(s: *const shexec_session) -> *const c_char;
    pub fn shexec_session_set_cwd(s: *mut shexec_session, dir: *const c_char) -> c_int;
    pub fn shexec_session_set_timeouts_ms(
        s: *mut shexec_session,
        default_ms: u32,
        max_ms: u32,
    ) -> c_int;
    pub fn shexec_session_timeouts_ms(
        s: *const shexec_session,
        default_ms: *mut u32,
        max_ms: *mut u32,
    ) -> c_int;
    pub fn shexec_session_set_kill_grace_ms(s: *mut shexec_session, ms: u32) -> c_int;
    pub fn shexec_session_kill_grace_ms(s: *const shexec_session) -> u32;
    pub fn shexec_session_set_leftovers_drain_ms(s: *mut shexec_session, ms: u32) -> c_int;
    pub fn shexec_session_leftovers_drain_ms(s: *const shexec_session) -> u32;
    pub fn shexec_session_set_output_limit(
        s: *mut shexec_session,
        limit: u64,
        unit: c_int,
        keep: c_int,
    ) -> c_int;
    pub fn shexec_session_output_limit(
        s: *const shexec_session,
        limit: *mut u64,
        unit: *mut c_int,
        keep: *mut c_int,
    ) -> c_int;
    pub fn shexec_session_set_env_inherit(s: *mut shexec_session, inherit: c_int) -> c_int;
    pub fn shexec_session_env_inherit(s: *const shexec_session) -> c_int;
    pub fn shexec_session_setenv(
        s: *mut shexec_session,
        name: *const c_char,
        value: *const c_char,
    ) -> c_int;
    pub fn shexec_session_env_deny(s: *mut shexec_session, glob: *const c_char) -> c_int;
    pub fn shexec_session_env_allow(s: *mut shexec_session, glob: *const c_char) -> c_int;
    pub fn shexec_session_getenv(s: *mut shexec_session, name: *const c_char) -> *const c_char;
    pub fn shexec_session_set_shell(
        s: *mut shexec_session,
        argv: *const *const c_char,
        wrapper_kind: c_int,
    ) -> c_int;
    pub fn shexec_session_shell_argv(s: *const shexec_session) -> *const *const c_char;
    pub fn shexec_session_set_persist_env(s: *mut shexec_session, on: c_int) -> c_int;
    pub fn shexec_session_persist_env(s: *const shexec_session) -> c_int;
    pub fn shexec_session_set_max_tasks(s: *mut shexec_session, max: u32) -> c_int;
    pub fn shexec_session_max_tasks(s: *const shexec_session) -> u32;
    pub fn shexec_session_set_on_leftovers(s: *mut shexec_session, policy: c_int) -> c_int;
    pub fn shexec_session_on_leftovers(s: *const shexec_session) -> c_int;
    pub fn shexec_session_set_containment(s: *mut shexec_session, parent: *const c_char) -> c_int;
    pub fn shexec_session_containment(
        s: *const shexec_session,
        detail: *mut *const c_char,
    ) -> c_int;
    pub fn shexec_session_apply_agent_env(s: *mut shexec_session) -> c_int;
    pub fn shexec_session_wait(s: *mut shexec_session, timeout_ms: i32) -> c_int;

    pub fn shexec_run_new_bytes(
        out: *mut *mut shexec_run,
        s: *mut shexec_session,
        command: *const c_char,
        len: usize,
    ) -> c_int;
    pub fn shexec_run_exec(run: *mut shexec_run) -> c_int;
    pub fn shexec_run_free(run: *mut shexec_run);
    pub fn shexec_run_set_timeout_ms(run: *mut shexec_run, ms: u32) -> c_int;
    pub fn shexec_run_set_cwd(run: *mut shexec_run, dir: *const c_char) -> c_int;
    pub fn shexec_run_setenv(
        run: *mut shexec_run,
        name: *const c_char,
        value: *const c_char,
    ) -> c_int;
    pub fn shexec_run_set_output_limit(
        run: *mut shexec_run,
        limit: u64,
        unit: c_int,
        keep: c_int,
    ) -> c_int;
    pub fn shexec_run_set_output_fn(
        run: *mut shexec_run,
        fn_: Option<shexec_output_fn>,
        user: *mut c_void,
    ) -> c_int;
    pub fn shexec_run_set_stdin(run: *mut shexec_run, enable: c_int) -> c_int;
    pub fn shexec_run_write(run: *mut shexec_run, data: *const c_void, len: usize) -> c_int;
    pub fn shexec_run_close_stdin(run: *mut shexec_run) -> c_int;
    pub fn shexec_run_set_pty(run: *mut shexec_run, mode: c_int) -> c_int;
    pub fn shexec_run_set_pty_size(run: *mut shexec_run, cols: u32, rows: u32) -> c_int;
    pub fn shexec_run_set_ansi(run: *mut shexec_run, mode: c_int) -> c_int;
    pub fn shexec_run_cancel(run: *mut shexec_run) -> c_int;
    pub fn shexec_run_send_signal(run: *mut shexec_run, sig: c_int) -> c_int;
    pub fn shexec_run_type_input(run: *mut shexec_run, data: *const c_void, len: usize) -> c_int;
    pub fn shexec_run_interrupted(run: *const shexec_run) -> c_int;
    pub fn shexec_signal_from_name(name: *const c_char) -> c_int;

    pub fn shexec_run_state(run: *const shexec_run) -> c_int;
    pub fn shexec_run_exit_code(run: *const shexec_run) -> c_int;
    pub fn shexec_run_signal(run: *const shexec_run) -> c_int;
    pub fn shexec_run_output(run: *mut shexec_run, stream: c_int, len: *mut usize)
        -> *const c_char;
    pub fn shexec_run_output_total(run: *const shexec_run, stream: c_int) -> u64;
    pub fn shexec_run_truncated(run: *const shexec_run, stream: c_int) -> c_int;
    pub fn shexec_run_output_lines(run: *const shexec_run, stream: c_int) -> u64;
    pub fn shexec_run_duration_ms(run: *const shexec_run) -> u64;
    pub fn shexec_run_pid(run: *const shexec_run) -> i64;
    pub fn shexec_run_leftovers(run: *const shexec_run, task_id: *mut *const c_char) -> c_int;
    pub fn shexec_run_notice(run: *const shexec_run) -> *const c_char;

    pub fn shexec_run_start_task(out: *mut *mut shexec_task, run: *mut shexec_run) -> c_int;
    pub fn shexec_session_take_task(
        out: *mut *mut shexec_task,
        s: *mut shexec_session,
        id: *const c_char,
    ) -> c_int;
    pub fn shexec_task_id(t: *const shexec_task) -> *const c_char;
    pub fn shexec_task_run(t: *const shexec_task) -> *mut shexec_run;
    pub fn shexec_task_read(t: *mut shexec_task, stream: c_int, len: *mut usize) -> *const c_char;
    pub fn shexec_task_watch(t: *mut shexec_task, quiet_ms: u32, max_ms: u32) -> c_int;
    pub fn shexec_run_quiet_ms(run: *const shexec_run) -> u64;
    pub fn shexec_task_free(t: *mut shexec_task);
}
