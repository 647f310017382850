"""shexec - Python binding (ctypes, stdlib only) for libshexec.

libshexec runs shell commands for agent hosts: a Session is one persistent
terminal (the cwd carries over between commands), each command runs in its
own process group with bounded time and output, and background tasks keep
running while the host does other things. include/shexec.h is the manual;
this module follows it closely.

    from shexec import Session, ShexecError, YIELD_NONE
    with Session() as sh:
        r = sh.run("cd /tmp && ls | head -3; false", timeout_ms=10000)
        print(r.state, r.exit_code, r.text)        # exited 1 <listing>
        print(sh.cwd)                              # /tmp: `cd` persists
        sh.run("make", on_output=lambda stream, data: print(stream, data))
        t = sh.start_task("python3 -m http.server 8000")
        t.wait(500)                                # pump the session for 0.5 s
        print(t.id, t.read())                      # t3f9a0c17be42 b'...' (new only)
        print(t.run.pid, t.run.state)              # a task is a run in the background
        t.send_signal("SIGINT"); t.wait()          # Ctrl+C: the server shuts down itself
        print(t.interrupted, t.exit_code)          # True 0
        r = sh.run("make test", yield_ms=10000)    # back after 10 s at most
        if r.yielded != YIELD_NONE:                # still running, as a task
            t = sh.take_task(r.task_id)            # go on with it: write, wait, read

The shared library is found through $SHEXEC_LIB (the library's file, or a
directory holding libshexec.so.1, such as the source tree's build/), else,
when this package is the one in the source tree (examples/python/shexec),
that tree's build/libshexec.so.1, else the system's libshexec
(ctypes.util.find_library, then libshexec.so.1). Installed with pip
(docs/python.md), the package is the same module: it finds the library
through $SHEXEC_LIB or the system's, never through a tree's build/.

Ownership and lifetime (mirrors the C rules, made safe for Python):

- Session owns the C session. close() (or leaving the `with` block, or
  garbage collection, or interpreter exit) terminates and reaps every
  command and task it still runs. It cannot be closed from inside one of
  its own output callbacks (StateError).
- Every command is a Run (one C shexec_run): configured, then started to
  completion, live, or in the background as a task. Session.run() returns
  a finished Run: its results are copied into the Python object and the C
  run is freed at once, so it never keeps the session alive.
  Session.start_run() returns a live Run handle (non-blocking use); it
  keeps its Session alive until the run finishes, at which point the
  results are copied the same way. Dropping a live Run cancels it.
  Session.tool_prepare() returns a Run not started yet (state 'new') for
  Run.start() / exec() / start_task(); dropping it frees it.
- Tasks belong to their session, as in C: dropping a Task object does NOT
  stop the task (find it again with Session.take_task(id)); Task.free() /
  close() / the `with` block frees it (terminating it if still running).
  A task's results are those of its run, Task.run (Task.state, .exit_code,
  .output()... are shortcuts to it); that Run is the task's and dies with
  it. Once the session is closed every Task object of it (and its run) is
  dead: its methods raise ClosedError (a StateError) instead of touching
  freed memory.
  A task holds one of the session's task slots (set_max_tasks) from its
  start until it is freed, finished or not: free() the ones you are done
  with. Tasks you never took as objects (started by call_tool, leftovers
  you never looked up) are the session's: finished ones are released to
  make room, and take_task() then raises NoTaskError ("... finished and
  was released unread (retention limit)").
- Output callbacks run inside the calls that pump the session's loop
  (Session.run, Run.wait, Task.wait, Session.wait, Session.process, ...),
  one at a time and never re-entered, each stream's data in order. A
  callback may read output (Task.output()/read(), Run.stdout; also with
  ansi_strip, where a read pushes out a pending prompt line that the
  callback then receives right after it returns), kill or cancel, and
  write input; it cannot start or wait for commands (StateError).
  An exception raised by a callback is caught, the run is cancelled (the
  task killed), and the exception is re-raised after it ends: by
  Session.run()/Run.wait() for runs, by Task.wait()/Session.wait() for
  tasks. Objects collected while a callback runs are freed after the pump
  returns, never from inside the loop.
- Long-running and interactive commands (shexec.h, LONG-RUNNING AND
  INTERACTIVE COMMANDS): a run with a yield time (yield_ms), an idle
  timeout set to IDLE_YIELD, or background_on_timeout may come back from
  Session.run() / Run.exec() still running: Run.yielded says why
  (YIELD_TIME, YIELD_TIMEOUT, YIELD_IDLE, YIELD_INPUT), Run.task_id names
  the task the command goes on as. The Run stays a live handle (read its
  output, write(), wait() for the end); Session.take_task(run.task_id)
  gives the Task (read() then returns what came after the yield). Closing
  or dropping a yielded Run only lets go of the handle: the command goes on
  as its task. A command found waiting for input calls on_input(run) and
  shows in Run.input_wait (INPUT_WAITING), Run.prompt and Run.echo_off.
- Output for models (shexec.h, OUTPUT FOR MODELS): a stream cut by the
  output limit carries a notice saying what was kept and what was left out
  (set_notice_position: first or last), and Run.stdout_counts gives the
  same counts as numbers; with set_spill_dir its whole text is kept in a
  file the notice names (Run.stdout_spill), removed with the session
  unless keep_files; redact_value, redact_env and redact_shapes hide
  secrets as "[REDACTED:NAME]" before output reaches anyone (callbacks,
  captured output, spill files, tool results), per run too (redact_values).
- A session and its objects are meant for one thread at a time (as in C);
  calls are serialized by a per-session lock so misuse cannot corrupt it.
"""

# Annotations stay unevaluated strings, so `Run` can be named before its class
# and the hints cost nothing at import, from Python 3.7 on.
from __future__ import annotations

import atexit
import ctypes
import json
import ctypes.util
import os
import sys
import threading
import time
import weakref
from typing import (Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple,
                    Union)

__all__ = [
    "Session", "Run", "Task", "version", "strerror", "error_name", "signal_number",
    "ShexecError", "InvalidArgumentError", "OutOfMemoryError", "NoCwdError",
    "SpawnError", "SysError", "StateError", "ClosedError", "TooBigError",
    "LimitError", "NoTaskError", "PipeError",
    "OK", "EINVAL", "ENOMEM", "ENOCWD", "ESPAWN", "ESYS", "ESTATE", "E2BIG",
    "ELIMIT", "ENOTASK", "EPIPE", "ENOTOOL", "ToolNotAvailableError", "STDOUT", "STDERR",
    "YIELD_NONE", "YIELD_TIME", "YIELD_TIMEOUT", "YIELD_IDLE", "YIELD_INPUT",
    "IDLE_END", "IDLE_YIELD", "DEADLINE_NONE", "DEADLINE_TIMEOUT", "DEADLINE_IDLE",
    "INPUT_NO", "INPUT_WAITING", "INPUT_UNKNOWN", "DEFAULT_INPUT_LOOK_MS",
    "WATCH_ENDED", "WATCH_QUIET", "WATCH_INPUT", "WATCH_TIME",
    "NOTICE_LAST", "NOTICE_FIRST", "SPILL_NONE", "SPILL_WRITING", "SPILL_WHOLE",
    "SPILL_CAPPED", "SPILL_FAILED", "SPILL_REMOVED", "DEFAULT_SPILL_FILE_MAX",
    "DEFAULT_SPILL_TOTAL_MAX",
]

# --------------------------------------------------------------------------
# Types of the annotations (PEP 561: the package ships py.typed). They are
# values evaluated at import, so they use typing's generics, which Python 3.7
# has, rather than list[str] or X | None.
# --------------------------------------------------------------------------

#: a path or a name: str (encoded with the file system's encoding), bytes or
#: an os.PathLike; a NUL byte inside is refused (InvalidArgumentError)
PathArg = Union[str, bytes, os.PathLike]
#: a command, input or a secret: str (sent as UTF-8) or bytes
Data = Union[str, bytes]
#: a stream: 'stdout' or 'stderr' (or STDOUT, STDERR)
Stream = Union[str, int]
#: variables for a command: {name: value, or None to remove it}
Env = Mapping[str, Optional[str]]
#: on_output(stream, data): 'stdout' or 'stderr', and the bytes that came
OutputCallback = Callable[[str, bytes], Any]
#: on_input(run): the Run of a command found waiting for input
InputCallback = Callable[["Run"], Any]
#: characters kept of a stream, or (limit, unit, keep[, within_limit]) as
#: set_output_limit() takes them
OutputLimit = Union[int, Tuple[int, str], Tuple[int, str, str], Tuple[int, str, str, bool]]
#: {limit name: value} as set_limit() takes them, or such pairs
Limits = Union[Mapping[str, int], Iterable[Tuple[str, int]]]
#: {name: secret} as redact_value() takes them, or such pairs
RedactValues = Union[Mapping[str, Data], Iterable[Tuple[str, Data]]]

# --------------------------------------------------------------------------
# Constants (values from shexec.h; append-only there)
# --------------------------------------------------------------------------

OK = 0
EINVAL = -1
ENOMEM = -2
ENOCWD = -3
ESPAWN = -4
ESYS = -5
ESTATE = -6
E2BIG = -7
ELIMIT = -8
ENOTASK = -9
EPIPE = -10
ENOTOOL = -11

_ERROR_NAMES = {
    OK: "SHEXEC_OK", EINVAL: "SHEXEC_EINVAL", ENOMEM: "SHEXEC_ENOMEM",
    ENOCWD: "SHEXEC_ENOCWD", ESPAWN: "SHEXEC_ESPAWN", ESYS: "SHEXEC_ESYS",
    ESTATE: "SHEXEC_ESTATE", E2BIG: "SHEXEC_E2BIG", ELIMIT: "SHEXEC_ELIMIT",
    ENOTASK: "SHEXEC_ENOTASK", EPIPE: "SHEXEC_EPIPE", ENOTOOL: "SHEXEC_ENOTOOL",
}
# Used when the library's shexec_strerror() has no text of its own for a code.
_FALLBACK_TEXT = {
    ELIMIT: "a limit was reached (tasks held, environment variables, input queued)",
    ENOTASK: "no task has that id",
    EPIPE: "input cannot be written",
    ENOTOOL: "tool not available",
}

STDOUT = 1
STDERR = 2
_STREAM_NAMES = {STDOUT: "stdout", STDERR: "stderr"}
_STREAMS = {"stdout": STDOUT, "stderr": STDERR, STDOUT: STDOUT, STDERR: STDERR}

_STATE_NAMES = {0: "new", 1: "running", 2: "exited", 3: "signaled",
                4: "timed_out", 5: "cancelled", 6: "killed"}
_LEFTOVER_NAMES = {0: "none", 1: "adopted", 2: "killed"}
_ON_LEFTOVERS = {"adopt": 0, "kill": 1}
_CONTAIN_NAMES = {0: "group", 1: "cgroup"}
_COST_SOURCES = {0: "none", 1: "cgroup", 2: "rusage"}
# SHEXEC_LIMIT_*: memory and swap in bytes, pids a count, cpu in thousandths
# of one CPU. The order is the enum's, so a name's index is its bit too.
_LIMITS = {"memory": 0, "swap": 1, "pids": 2, "cpu": 3}
_WRAPPER_KINDS = {"local": 0, "remote": 1, "remote_shell": 2}
_WRAPPER_KIND_NAMES = {v: k for k, v in _WRAPPER_KINDS.items()}
_UNITS = {"chars": 0, "characters": 0, "bytes": 1}
_KEEPS = {"head": 0, "head_tail": 1}
_KEEP_WITHIN_LIMIT = 0x100   # SHEXEC_KEEP_WITHIN_LIMIT, or'ed into keep
_PTY_MODES = {False: 0, None: 0, True: 1, "off": 0, "on": 1, "echo": 2}
_STATE_RUNNING = 1  # every state after it is final

# Long-running and interactive commands. The values are the names results
# are given by (as for states), each for the C enum value in the table.
YIELD_NONE = "none"         # it was not moved to the background
YIELD_TIME = "time"         # its yield time passed (yield_ms)
YIELD_TIMEOUT = "timeout"   # its timeout passed, with background_on_timeout set
YIELD_IDLE = "idle"         # its idle timeout passed, with IDLE_YIELD
YIELD_INPUT = "input"       # it waits for input, with a yield time set
_YIELD_NAMES = {0: YIELD_NONE, 1: YIELD_TIME, 2: YIELD_TIMEOUT, 3: YIELD_IDLE, 4: YIELD_INPUT}
IDLE_END = "end"            # an idle timeout ends the command (SIGTERM, grace, SIGKILL)
IDLE_YIELD = "yield"        # an idle timeout moves it to the background
_IDLE_ACTIONS = {IDLE_END: 0, IDLE_YIELD: 1}
_IDLE_ACTION_NAMES = {v: k for k, v in _IDLE_ACTIONS.items()}
DEADLINE_NONE = "none"      # no deadline ended it
DEADLINE_TIMEOUT = "timeout"  # its timeout (or, moved to the background, its cap)
DEADLINE_IDLE = "idle"      # its idle timeout
_DEADLINE_NAMES = {0: DEADLINE_NONE, 1: DEADLINE_TIMEOUT, 2: DEADLINE_IDLE}
WATCH_ENDED = "ended"       # Task.watch(): the task has finished
WATCH_QUIET = "quiet"       # it printed nothing for quiet_ms
WATCH_INPUT = "input"       # it waits for input
WATCH_TIME = "time"         # max_ms passed first
_WATCH_NAMES = {1: WATCH_ENDED, 2: WATCH_QUIET, 3: WATCH_INPUT, 4: WATCH_TIME}
INPUT_NO = "no"             # not found waiting for input (or not looked at yet)
INPUT_WAITING = "waiting"   # one of its processes is blocked reading the host's input
INPUT_UNKNOWN = "unknown"   # this system cannot tell (no /proc)
_INPUT_NAMES = {0: INPUT_NO, 1: INPUT_WAITING, 2: INPUT_UNKNOWN}
DEFAULT_INPUT_LOOK_MS = 2000

# Output for models (shexec.h, OUTPUT FOR MODELS): names for the C values,
# as for the states above.
NOTICE_LAST = "last"        # the truncation notice after the kept text (the default)
NOTICE_FIRST = "first"      # before it: a model reading the start sees it
_NOTICE_POSITIONS = {NOTICE_LAST: 0, NOTICE_FIRST: 1}
_NOTICE_POSITION_NAMES = {v: k for k, v in _NOTICE_POSITIONS.items()}
SPILL_NONE = "none"         # no spill file: off, or the stream stayed within its limit
SPILL_WRITING = "writing"   # the command runs: the file is being written
SPILL_WHOLE = "whole"       # the file holds the whole stream
SPILL_CAPPED = "capped"     # the file holds the stream's first `bytes` bytes (a cap)
SPILL_FAILED = "failed"     # making or writing it failed (`error`, an errno); it is removed
SPILL_REMOVED = "removed"   # removed since (the session's budget, or its end)
_SPILL_NAMES = {0: SPILL_NONE, 1: SPILL_WRITING, 2: SPILL_WHOLE, 3: SPILL_CAPPED,
                4: SPILL_FAILED, 5: SPILL_REMOVED}
_SPILL_KEEP_FILES = 1       # SHEXEC_SPILL_KEEP_FILES
DEFAULT_SPILL_FILE_MAX = 64 << 20    # a stream's file, when file_max is 0
DEFAULT_SPILL_TOTAL_MAX = 1 << 30    # a session's files together, when total_max is 0
_REDACT_KEY_SHAPES = 1      # SHEXEC_REDACT_KEY_SHAPES
_REDACT_PRIVATE_KEYS = 2    # SHEXEC_REDACT_PRIVATE_KEYS


def _finished(lib, ptr):
    """True once the run has finished: its state is past RUNNING."""
    return lib.shexec_run_state(ptr) > _STATE_RUNNING


# How long one slice of pumping lasts, so Ctrl-C and deadlines are noticed.
_SLICE_MS = 200
# ... while a run is waited for until it ends or is moved to the background.
_YIELD_SLICE_MS = 50

_U32_MAX = 0xFFFFFFFF
_U64_MAX = 0xFFFFFFFFFFFFFFFF
_I32_MAX = 0x7FFFFFFF

# --------------------------------------------------------------------------
# Loading the library and declaring every prototype used
# --------------------------------------------------------------------------

OUTPUT_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                             ctypes.c_size_t)
INPUT_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


class _PollFd(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_int), ("events", ctypes.c_short),
                ("revents", ctypes.c_short)]


def _candidates():
    env = os.environ.get("SHEXEC_LIB")
    if env:
        # a directory (the tree's build/, PREFIX/lib) holds the library by
        # its soname: what a user who built it is likely to name
        if os.path.isdir(env):
            return [os.path.join(env, "libshexec.so.1")]
        return [env]
    out = []
    # the source tree's build, when it exists, and only for the source tree's
    # package (examples/python/shexec, beside include/shexec.h): an installed
    # copy must not load whatever build/ lies three levels above it
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", "..", ".."))
    tree = os.path.join(root, "build", "libshexec.so.1")
    if os.path.exists(os.path.join(root, "include", "shexec.h")) and os.path.exists(tree):
        out.append(tree)
    found = ctypes.util.find_library("shexec")
    if found:
        out.append(found)
    out.append("libshexec.so.1")
    return out


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append("%s: %s" % (path, e))
            if os.environ.get("SHEXEC_LIB"):
                break
    raise ImportError("libshexec not found (set SHEXEC_LIB to libshexec.so.1 or the directory "
                      "holding it, e.g. the source tree's build/ after make): " + "; ".join(errors))


_lib, LIBRARY_PATH = _load()

_vp = ctypes.c_void_p
_pvp = ctypes.POINTER(ctypes.c_void_p)
_int = ctypes.c_int
_u32 = ctypes.c_uint32
_u64 = ctypes.c_uint64
_i32 = ctypes.c_int32
_i64 = ctypes.c_int64
_sz = ctypes.c_size_t
_psz = ctypes.POINTER(ctypes.c_size_t)
_str = ctypes.c_char_p

_PROTOTYPES = {
    # library
    "shexec_version": (_str, []),
    "shexec_strerror": (_str, [_int]),
    # session
    "shexec_session_new": (_int, [_pvp]),
    "shexec_session_free": (None, [_vp]),
    "shexec_session_errmsg": (_str, [_vp]),
    "shexec_session_set_cwd": (_int, [_vp, _str]),
    "shexec_session_cwd": (_str, [_vp]),
    "shexec_session_set_shell": (_int, [_vp, ctypes.POINTER(_str), _int]),
    "shexec_session_shell_argv": (ctypes.POINTER(_str), [_vp]),
    "shexec_session_wrapper_kind": (_int, [_vp]),
    "shexec_session_set_persist_env": (_int, [_vp, _int]),
    "shexec_session_persist_env": (_int, [_vp]),
    "shexec_session_getenv": (_str, [_vp, _str]),
    "shexec_session_environ": (_int, [ctypes.POINTER(ctypes.POINTER(_str)), _vp]),
    "shexec_session_set_timeouts_ms": (_int, [_vp, _u32, _u32]),
    "shexec_session_timeouts_ms": (_int, [_vp, ctypes.POINTER(_u32), ctypes.POINTER(_u32)]),
    "shexec_session_set_kill_grace_ms": (_int, [_vp, _u32]),
    "shexec_session_kill_grace_ms": (_u32, [_vp]),
    "shexec_session_set_leftovers_drain_ms": (_int, [_vp, _u32]),
    "shexec_session_leftovers_drain_ms": (_u32, [_vp]),
    "shexec_session_output_limit": (_int, [_vp, ctypes.POINTER(_u64), ctypes.POINTER(_int),
                                           ctypes.POINTER(_int)]),
    "shexec_session_env_inherit": (_int, [_vp]),
    "shexec_session_max_tasks": (_u32, [_vp]),
    "shexec_session_on_leftovers": (_int, [_vp]),
    "shexec_session_watchdog": (_int, [_vp]),
    "shexec_session_containment": (_int, [_vp, ctypes.POINTER(_str)]),
    "shexec_session_set_output_limit": (_int, [_vp, _u64, _int, _int]),
    "shexec_session_set_env_inherit": (_int, [_vp, _int]),
    "shexec_session_setenv": (_int, [_vp, _str, _str]),
    "shexec_session_env_deny": (_int, [_vp, _str]),
    "shexec_session_env_allow": (_int, [_vp, _str]),
    "shexec_session_wait": (_int, [_vp, _i32]),
    "shexec_session_pollfds": (_int, [ctypes.POINTER(_PollFd), _u32, ctypes.POINTER(_i32),
                                      _vp]),
    "shexec_session_process": (_int, [_vp, ctypes.POINTER(_PollFd), _u32]),
    "shexec_session_set_max_tasks": (_int, [_vp, _u32]),
    "shexec_session_set_on_leftovers": (_int, [_vp, _int]),
    "shexec_session_set_watchdog": (_int, [_vp, _int]),
    "shexec_session_set_containment": (_int, [_vp, _str]),
    "shexec_session_set_limit": (_int, [_vp, _int, _u64]),
    "shexec_session_limit": (_u64, [_vp, _int]),
    "shexec_session_take_task": (_int, [_pvp, _vp, _str]),
    "shexec_session_set_idle_timeout_ms": (_int, [_vp, _u32, _int]),
    "shexec_session_idle_timeout_ms": (_u32, [_vp, ctypes.POINTER(_int)]),
    "shexec_session_set_background_on_timeout": (_int, [_vp, _u32]),
    "shexec_session_background_on_timeout": (_u32, [_vp]),
    "shexec_session_set_input_look_ms": (_int, [_vp, _u32]),
    "shexec_session_input_look_ms": (_u32, [_vp]),
    "shexec_session_apply_agent_env": (_int, [_vp]),
    "shexec_session_set_notice_position": (_int, [_vp, _int]),
    "shexec_session_notice_position": (_int, [_vp]),
    "shexec_session_set_spill_dir": (_int, [_vp, _str, _u64, _u64, ctypes.c_uint]),
    "shexec_session_spill_dir": (_str, [_vp]),
    "shexec_session_redact_value": (_int, [_vp, _str, _vp, _sz]),
    "shexec_session_redact_env": (_int, [_vp, ctypes.POINTER(_str), _sz]),
    "shexec_session_redact_shapes": (_int, [_vp, ctypes.c_uint]),
    "shexec_session_redact_clear": (_int, [_vp]),
    # run: settings, start (foreground or as a task), results
    "shexec_run_new_bytes": (_int, [_pvp, _vp, _vp, _sz]),
    "shexec_run_set_timeout_ms": (_int, [_vp, _u32]),
    "shexec_run_set_limit": (_int, [_vp, _int, _u64]),
    "shexec_run_set_cwd": (_int, [_vp, _str]),
    "shexec_run_setenv": (_int, [_vp, _str, _str]),
    "shexec_run_set_output_limit": (_int, [_vp, _u64, _int, _int]),
    "shexec_run_set_output_fn": (_int, [_vp, OUTPUT_FN, _vp]),
    "shexec_run_set_stdin": (_int, [_vp, _int]),
    "shexec_run_write": (_int, [_vp, _vp, _sz]),
    "shexec_run_close_stdin": (_int, [_vp]),
    "shexec_run_set_pty": (_int, [_vp, _int]),
    "shexec_run_set_pty_size": (_int, [_vp, _u32, _u32]),
    "shexec_run_set_ansi": (_int, [_vp, _int]),
    "shexec_run_set_yield_ms": (_int, [_vp, _u32]),
    "shexec_run_set_idle_timeout_ms": (_int, [_vp, _u32, _int]),
    "shexec_run_set_background_on_timeout": (_int, [_vp, _u32]),
    "shexec_run_set_input_fn": (_int, [_vp, INPUT_FN, _vp]),
    "shexec_run_start": (_int, [_vp]),
    "shexec_run_start_task": (_int, [_pvp, _vp]),
    "shexec_run_cancel": (_int, [_vp]),
    "shexec_run_send_signal": (_int, [_vp, _int]),
    "shexec_run_type_input": (_int, [_vp, _vp, _sz]),
    "shexec_run_interrupted": (_int, [_vp]),
    "shexec_signal_from_name": (_int, [_str]),
    "shexec_run_state": (_int, [_vp]),
    "shexec_run_exit_code": (_int, [_vp]),
    "shexec_run_signal": (_int, [_vp]),
    "shexec_run_output": (_vp, [_vp, _int, _psz]),
    "shexec_run_output_total": (_u64, [_vp, _int]),
    "shexec_run_truncated": (_int, [_vp, _int]),
    "shexec_run_output_counts": (_int, [_vp, _int, ctypes.POINTER(_u64), ctypes.POINTER(_u64),
                                        ctypes.POINTER(_u64), ctypes.POINTER(_u64)]),
    "shexec_run_output_lines": (_u64, [_vp, _int]),
    "shexec_run_duration_ms": (_u64, [_vp]),
    "shexec_run_pid": (_i64, [_vp]),
    "shexec_run_timeout_ms": (_u32, [_vp]),
    "shexec_run_leftovers": (_int, [_vp, ctypes.POINTER(_str)]),
    "shexec_run_cost": (_int, [_vp, ctypes.POINTER(_u64), ctypes.POINTER(_u64),
                               ctypes.POINTER(_u64)]),
    "shexec_run_limit_hit": (_int, [_vp]),
    "shexec_run_notice": (_str, [_vp]),
    "shexec_run_yielded": (_int, [_vp, ctypes.POINTER(_str)]),
    "shexec_run_deadline": (_int, [_vp]),
    "shexec_run_input_wait": (_int, [_vp, _pvp, _psz, ctypes.POINTER(_int)]),
    "shexec_run_read_new": (_vp, [_vp, _int, _psz]),
    "shexec_run_quiet_ms": (_u64, [_vp]),
    "shexec_run_redact_value": (_int, [_vp, _str, _vp, _sz]),
    "shexec_run_redact_own_env": (_int, [_vp, _int]),
    "shexec_run_redactions": (_u64, [_vp, _int]),
    "shexec_run_spill": (_int, [_vp, _int, ctypes.POINTER(_str), ctypes.POINTER(_u64),
                                ctypes.POINTER(_int)]),
    "shexec_run_free": (None, [_vp]),
    # task: what only a background command has; the rest is its run's
    "shexec_task_id": (_str, [_vp]),
    "shexec_task_run": (_vp, [_vp]),
    "shexec_task_read": (_vp, [_vp, _int, _psz]),
    "shexec_task_read_counts": (_int, [_vp, _int, ctypes.POINTER(_u64), ctypes.POINTER(_u64),
                                       ctypes.POINTER(_u64), ctypes.POINTER(_u64)]),
    "shexec_task_watch": (_int, [_vp, _u32, _u32]),
    "shexec_task_free": (None, [_vp]),
    # tools
    "shexec_tool_is_enabled": (_int, [_vp, _str]),
    "shexec_tool_set_enabled": (_int, [_vp, _str, _int]),
    "shexec_tool_rename": (_int, [_vp, _str, _str]),
    "shexec_tool_list": (_int, [_pvp, _vp]),
    "shexec_tool_call": (_int, [_pvp, _vp, _str, _str]),
    "shexec_tool_prepare": (_int, [_pvp, ctypes.POINTER(_int), _vp, _str, _str]),
    "shexec_tool_result": (_int, [_pvp, _vp]),
    "shexec_tool_task_result": (_int, [_pvp, _vp, _str, _vp, _sz, _vp, _sz]),
    "shexec_free": (None, [_vp]),
}

for _name, (_res, _args) in _PROTOTYPES.items():
    _fn = getattr(_lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args
del _name, _res, _args, _fn


def version() -> str:
    """The library's version string, "MAJOR.MINOR.PATCH"."""
    return _lib.shexec_version().decode("ascii", "replace")


def error_name(code: int) -> str:
    """The symbolic name of a result code, e.g. "SHEXEC_ENOCWD"."""
    return _ERROR_NAMES.get(code, "SHEXEC_E%d" % code if code < 0 else str(code))


def strerror(code: int) -> str:
    """A short description of a result code."""
    text = _lib.shexec_strerror(int(code)).decode("utf-8", "replace")
    if text == "unknown error" and code in _FALLBACK_TEXT:
        return _FALLBACK_TEXT[code]
    return text


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------

def signal_number(sig: Union[str, int]) -> int:
    """The number of a signal Run.send_signal() takes: a name ("SIGINT",
    "INT", "int"; shexec_signal_from_name()) or a number (signal.SIGINT)
    of the allowed ones: SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGUSR1,
    SIGUSR2, SIGTERM, SIGCONT, SIGSTOP. InvalidArgumentError for any other
    (checked for a number when it is sent)."""
    if isinstance(sig, bool) or not isinstance(sig, (int, str)):
        raise InvalidArgumentError(EINVAL, "a signal is a name or a number, not %r" % (sig,))
    if isinstance(sig, int):
        return int(sig)
    n = _lib.shexec_signal_from_name(_cstr(sig, "signal"))
    if n < 0:
        raise InvalidArgumentError(EINVAL, "unknown signal %r: SIGINT, SIGTERM, SIGHUP, SIGQUIT, "
                                   "SIGKILL, SIGUSR1, SIGUSR2, SIGSTOP or SIGCONT" % (sig,))
    return n


class ShexecError(Exception):
    """A libshexec call failed. .code is the SHEXEC_E* value (negative int),
    .name its symbolic name, .message the detail (shexec_session_errmsg(),
    or the generic description when the library gave none)."""

    def __init__(self, code: int, message: Optional[str] = None) -> None:
        self.code = code
        self.name = error_name(code)
        self.message = message or strerror(code)
        super().__init__(code, self.message)

    def __str__(self) -> str:
        return "%s (%s)" % (self.message, self.name)


class InvalidArgumentError(ShexecError, ValueError):
    """SHEXEC_EINVAL: an argument is invalid (empty, NUL byte, bad name...)."""


class OutOfMemoryError(ShexecError):
    """SHEXEC_ENOMEM."""


class NoCwdError(ShexecError):
    """SHEXEC_ENOCWD: the working directory is missing or not a directory."""


class SpawnError(ShexecError):
    """SHEXEC_ESPAWN: the shell could not be executed."""


class SysError(ShexecError):
    """SHEXEC_ESYS: a system call failed (descriptors exhausted, fork...)."""


class StateError(ShexecError):
    """SHEXEC_ESTATE: the handle is in the wrong state for this call."""


class ClosedError(StateError):
    """The Python object's C handle is gone (session closed, task freed)."""


class TooBigError(ShexecError):
    """SHEXEC_E2BIG: the command or environment is too long for exec."""


class LimitError(ShexecError):
    """SHEXEC_ELIMIT: a documented bound was reached: the session holds its
    maximum of tasks (set_max_tasks), too many environment variables
    (4096 per session and per run or task), or write() input past the bound
    on what a command has not read yet (1 MiB by default: nothing of it was
    queued; write it again once the command has read)."""


class NoTaskError(ShexecError, LookupError):
    """SHEXEC_ENOTASK: no task has that id."""


class PipeError(ShexecError):
    """SHEXEC_EPIPE: stdin not enabled, already closed, or the process ended."""


class ToolNotAvailableError(ShexecError):
    """SHEXEC_ENOTOOL: no tool of that name, or it is not enabled."""



_ERROR_CLASSES = {
    EINVAL: InvalidArgumentError, ENOMEM: OutOfMemoryError, ENOCWD: NoCwdError,
    ESPAWN: SpawnError, ESYS: SysError, ESTATE: StateError, E2BIG: TooBigError,
    ELIMIT: LimitError, ENOTASK: NoTaskError, EPIPE: PipeError,
    ENOTOOL: ToolNotAvailableError,
}


def _take_json(ptr):
    """Decode and free a JSON string the library handed out."""
    if not ptr:
        return None
    try:
        return json.loads(ctypes.string_at(ptr).decode("utf-8"))
    finally:
        _lib.shexec_free(ptr)


def _error(code, message=None):
    return _ERROR_CLASSES.get(code, ShexecError)(code, message)


def _check(rc, sptr):
    """Raise for a negative result; the detail comes from the live session
    `sptr` (None when the session is gone: the generic text is used)."""
    if rc >= 0:
        return rc
    msg = None
    if sptr:
        raw = _lib.shexec_session_errmsg(sptr)
        if raw:
            msg = raw.decode("utf-8", "replace")
    raise _error(rc, msg)


# --------------------------------------------------------------------------
# Argument conversion
# --------------------------------------------------------------------------

def _configure_run(rp, sp, timeout_ms, cwd, env, output_limit, pty, pty_size, ansi_strip,
                   stdin, limits=None, yield_ms=None, idle_timeout_ms=None, idle_action=None,
                   background_on_timeout=None, redact_values=None, redact_own_env=False):
    """Apply the settings of a new C run `rp` (foreground or, once started
    so, a task). Returns the bytes to feed to its stdin once started (None
    when there are none)."""
    lib = _lib
    for name, value in _redact_items(redact_values):
        _check(lib.shexec_run_redact_value(rp, name, value, len(value)), sp)
    if redact_own_env:
        _check(lib.shexec_run_redact_own_env(rp, 1), sp)
    if timeout_ms is not None:
        _check(lib.shexec_run_set_timeout_ms(rp, _uint(timeout_ms, "timeout_ms", _U32_MAX)), sp)
    if yield_ms is not None:
        _check(lib.shexec_run_set_yield_ms(rp, _uint(yield_ms, "yield_ms", _U32_MAX)), sp)
    if idle_timeout_ms is not None:
        _check(lib.shexec_run_set_idle_timeout_ms(
            rp, _uint(idle_timeout_ms, "idle_timeout_ms", _U32_MAX),
            _idle_action(IDLE_END if idle_action is None else idle_action)), sp)
    elif idle_action is not None:
        raise TypeError("idle_action needs idle_timeout_ms (0: none for this run)")
    if background_on_timeout is not None:
        _check(lib.shexec_run_set_background_on_timeout(
            rp, _uint(background_on_timeout, "background_on_timeout", _U32_MAX)), sp)
    if cwd is not None:
        _check(lib.shexec_run_set_cwd(rp, _cstr(cwd, "working directory")), sp)
    for k, v in (env or {}).items():
        _check(lib.shexec_run_setenv(rp, _cstr(k, "variable name"),
                                     None if v is None else _cstr(v, "variable value")), sp)
    if output_limit is not None:
        _check(lib.shexec_run_set_output_limit(rp, *_limit_args(output_limit)), sp)
    for name, value in _limit_items(limits):
        _check(lib.shexec_run_set_limit(rp, _lookup(_LIMITS, name, "limit"),
                                        _uint(value, "%s limit" % name, _U64_MAX)), sp)
    mode = _pty_mode(pty)
    if mode:
        _check(lib.shexec_run_set_pty(rp, mode), sp)
    if pty_size is not None:
        _check(lib.shexec_run_set_pty_size(rp, _uint(pty_size[0], "columns", _U32_MAX),
                                           _uint(pty_size[1], "rows", _U32_MAX)), sp)
    if ansi_strip:
        _check(lib.shexec_run_set_ansi(rp, 1), sp)
    feed = None
    if stdin is not None and stdin is not False:
        if stdin is not True:
            feed = _to_bytes(stdin, "stdin")
        _check(lib.shexec_run_set_stdin(rp, 1), sp)
    return feed


def _to_bytes(value, what):
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, os.PathLike):
        return os.fsencode(value)
    raise TypeError("%s must be str or bytes, not %s" % (what, type(value).__name__))


def _cstr(value, what):
    """A NUL-terminated C string argument: a NUL inside would silently cut
    the string short, so it is refused as SHEXEC_EINVAL."""
    b = _to_bytes(value, what)
    if b"\0" in b:
        raise InvalidArgumentError(EINVAL, "%s contains a NUL byte" % what)
    return b


def _uint(value, what, maximum, minimum=0):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int" % what)
    if value < minimum or value > maximum:
        raise InvalidArgumentError(EINVAL, "%s %d out of range %d-%d"
                                   % (what, value, minimum, maximum))
    return value


def _wait_ms(timeout_ms):
    if timeout_ms is None:
        return -1
    if isinstance(timeout_ms, float):
        timeout_ms = int(timeout_ms)
    return _uint(timeout_ms, "timeout_ms", _I32_MAX)


def _lookup(table, value, what):
    try:
        return table[value]
    except (KeyError, TypeError):
        raise InvalidArgumentError(EINVAL, "unknown %s %r (one of %s)"
                                   % (what, value, ", ".join(
                                       repr(k) for k in table if isinstance(k, str))))


def _stream(stream):
    return _lookup(_STREAMS, stream, "stream")


def _limit_args(limit, unit="chars", keep="head", within_limit=False):
    if isinstance(limit, tuple):
        return _limit_args(*limit)
    keep = _lookup(_KEEPS, keep, "keep") if isinstance(keep, str) else int(keep)
    return (_uint(limit, "output limit", _U64_MAX),
            _lookup(_UNITS, unit, "unit") if isinstance(unit, str) else int(unit),
            keep | (_KEEP_WITHIN_LIMIT if within_limit else 0))


def _limit_items(limits):
    """The (name, value) pairs of a run's `limits` argument: a dict, or
    pairs as dict() takes them; None for none."""
    if limits is None:
        return []
    try:
        return list(dict(limits).items())
    except (TypeError, ValueError):
        raise TypeError("limits must be a dict such as {'memory': 1 << 30, 'pids': 200}, "
                        "not %s" % type(limits).__name__)


def _redact_items(values):
    """The (name, value) byte pairs of a `redact_values` argument: a dict
    {name: value} or pairs as dict() takes them, each value str or bytes;
    None for none. Names and lengths are the library's to check."""
    if values is None:
        return []
    try:
        items = list(dict(values).items())
    except (TypeError, ValueError):
        raise TypeError("redact_values must be a dict such as {'API_KEY': secret}, not %s"
                        % type(values).__name__)
    return [(_cstr(name, "redaction name"), _to_bytes(value, "redacted value"))
            for name, value in items]


def _idle_action(action):
    """IDLE_END or IDLE_YIELD as the C value; an int is the C value itself,
    passed on for the library to check."""
    if isinstance(action, int) and not isinstance(action, bool):
        return action
    return _lookup(_IDLE_ACTIONS, action, "idle timeout action")


def _pty_mode(pty):
    if isinstance(pty, int) and not isinstance(pty, bool) and pty in (0, 1, 2):
        return pty
    return _lookup(_PTY_MODES, pty, "pty mode")


def _read_out(fn, handle, stream):
    n = ctypes.c_size_t(0)
    p = fn(handle, stream, ctypes.byref(n))
    return ctypes.string_at(p, n.value) if p and n.value else b""


def _make_output_fn(state):
    """The C callback of a run: calls state.fn(stream_name, bytes). An
    exception is kept in state.error and the command stopped with
    shexec_run_cancel(state.ptr) (for a task's run, that kills the task);
    the exception is re-raised by the binding once the command ended.
    Everything it needs is bound here, so it works even while the
    interpreter shuts down."""
    stop = _lib.shexec_run_cancel
    string_at = ctypes.string_at
    names = _STREAM_NAMES

    def trampoline(user, stream, data, length):
        fn = state.fn
        if fn is None or state.error is not None:
            return
        try:
            chunk = string_at(data, length) if length else b""
            fn(names.get(stream, stream), chunk)
        except BaseException as e:  # noqa: B902 - must never escape into C
            state.error = e
            ptr = state.ptr
            if ptr:
                try:
                    stop(ptr)
                except BaseException:
                    pass

    return OUTPUT_FN(trampoline)


def _make_input_fn(state):
    """The C input callback of a run: calls state.input_fn(run) with the
    Run object (state.run_of() finds it) when the command is found waiting
    for input. An exception is handled as in an output callback: kept in
    state.error, the command cancelled, re-raised once it ended."""
    stop = _lib.shexec_run_cancel

    def trampoline(user, run_ptr):
        fn = state.input_fn
        if fn is None or state.error is not None:
            return
        try:
            find = state.run_of
            run = find() if find is not None else None
            if run is not None:
                fn(run)
        except BaseException as e:  # noqa: B902 - must never escape into C
            state.error = e
            ptr = state.ptr
            if ptr:
                try:
                    stop(ptr)
                except BaseException:
                    pass

    return INPUT_FN(trampoline)


class _CallbackState(object):
    """What a run's callbacks share: the output function, the input
    function, how to find the Run object the input function is given
    (run_of), the first exception either raised, and the C run to cancel
    then."""
    __slots__ = ("fn", "error", "ptr", "input_fn", "run_of")

    def __init__(self, fn, ptr=None):
        self.fn = fn
        self.error = None
        self.ptr = ptr
        self.input_fn = None
        self.run_of = None


# --------------------------------------------------------------------------
# Session
# --------------------------------------------------------------------------

class _Guard(object):
    """Holds the session lock; on leaving the outermost level (and not
    inside a pump) frees what was collected while the loop was running."""
    __slots__ = ("s",)

    def __init__(self, s):
        self.s = s

    def __enter__(self):
        s = self.s
        s._mutex.acquire()
        s._depth += 1
        return s

    def __exit__(self, *exc):
        s = self.s
        try:
            if s._depth == 1 and s._pumping == 0 and s._deferred:
                s._drain_deferred()
        finally:
            s._depth -= 1
            s._mutex.release()
        return False


_live_sessions: weakref.WeakSet[Session] = weakref.WeakSet()


class Session(object):
    """A persistent shell session (one C shexec_session): cwd tracking,
    environment policy, limits, and the loop that drives its commands."""

    # bound here so __del__ works while module globals are torn down
    _lib = _lib
    _GuardType = _Guard
    _getpid = staticmethod(os.getpid)
    # NULL: no callback (typeshed lists no call without an argument)
    _NO_OUTPUT_FN = OUTPUT_FN()   # type: ignore[call-overload]
    _NO_INPUT_FN = INPUT_FN()     # type: ignore[call-overload]

    def __init__(self, cwd: Optional[PathArg] = None,
                 shell: Optional[Union[PathArg, Sequence[PathArg]]] = None,
                 env: Optional[Env] = None, inherit_env: bool = True,
                 agent_env: bool = False) -> None:
        """A new session: cwd (default the host's), shell (see set_shell),
        env {name: value or None} set for every command (setenv),
        inherit_env False to start commands from an empty environment,
        agent_env True to apply the agent environment preset first
        (apply_agent_env; the variables of env then override it)."""
        self._ptr = None
        self._pid = os.getpid()
        self._mutex = threading.RLock()
        self._depth = 0
        self._pumping = 0
        # (kind, ptr, keepalive) freed after a pump
        self._deferred: List[Tuple[str, int, Any]] = []
        # task pointer -> _TaskCore (tasks we know)
        self._task_cores: Dict[int, _TaskCore] = {}
        self._task_wrappers: weakref.WeakValueDictionary[int, Task] = \
            weakref.WeakValueDictionary()
        out = ctypes.c_void_p()
        _check(_lib.shexec_session_new(ctypes.byref(out)), None)
        self._ptr = out.value
        _live_sessions.add(self)
        try:
            if not inherit_env:
                self.env_inherit(False)
            if shell is not None:
                self.set_shell(shell)
            if cwd is not None:
                self.set_cwd(cwd)
            if agent_env:
                self.apply_agent_env()
            for k, v in (env or {}).items():
                self.setenv(k, v)
        except BaseException:
            self.close()
            raise

    # -- plumbing ----------------------------------------------------------

    def _guard(self):
        return self._GuardType(self)

    def _live(self):
        p = self._ptr
        if not p:
            raise ClosedError(ESTATE, "the session is closed")
        if self._forked():
            raise ClosedError(ESTATE, "the session belongs to the parent process (fork)")
        return p

    def _forked(self):
        """True in a child made by fork(): the C session (and its processes)
        belong to the parent. The child must neither use nor free it: freeing
        would signal the parent's process groups."""
        return self._getpid() != self._pid

    def _pump_call(self, fn, *args):
        """Call a C function that may run callbacks (pump the loop)."""
        self._pumping += 1
        try:
            return fn(*args)
        finally:
            self._pumping -= 1

    def _drain_deferred(self):
        if self._forked():    # entries inherited from the parent are its own
            self._deferred = []
            return
        while self._deferred:
            kind, ptr, keep = self._deferred.pop()
            if kind == "run":
                self._run_free(ptr)
            del keep

    def _run_free(self, ptr):
        """shexec_run_free(). A yielded run that still runs is only let go of
        (the command goes on as its task, and the C run calls its callbacks
        until it ends): its callbacks are unset first, since their Python
        objects go with the handle."""
        lib = self._lib
        if lib.shexec_run_yielded(ptr, None) and lib.shexec_run_state(ptr) == 1:  # running
            lib.shexec_run_set_output_fn(ptr, self._NO_OUTPUT_FN, None)
            lib.shexec_run_set_input_fn(ptr, self._NO_INPUT_FN, None)
        self._pump_call(lib.shexec_run_free, ptr)

    def _free_run_ptr(self, ptr, keepalive):
        """Free a C run now, or, if the loop of this session is running (we
        are inside a callback, or another thread holds the session), after
        it returns. keepalive (its callback) lives until the free."""
        if self._forked():
            return        # the parent's: leak the copy, never signal its group
        if self._mutex.acquire(False):
            try:
                if self._pumping == 0:
                    self._run_free(ptr)
                    return
            finally:
                self._mutex.release()
        self._deferred.append(("run", ptr, keepalive))

    # -- lifetime ----------------------------------------------------------

    def close(self) -> None:
        """Terminate and reap everything the session still runs, free its
        tasks and the session. Idempotent. Live Run objects stay readable."""
        if not getattr(self, "_ptr", None):
            return
        if self._forked():
            # a fork()ed child: forget the parent's session without freeing it
            for core in list(self._task_cores.values()):
                core.mark_dead("its session belongs to the parent process")
            self._task_cores.clear()
            self._deferred = []
            self._ptr = None
            return
        with self._guard():
            ptr = self._ptr
            if not ptr:
                return
            if self._pumping:
                raise StateError(ESTATE, "a session cannot be closed from inside one of "
                                         "its callbacks")
            cores = list(self._task_cores.values())
            for core in cores:        # Task objects die before the C tasks
                core.mark_dead("its session was closed")
            self._ptr = None
            try:
                self._pump_call(self._lib.shexec_session_free, ptr)
            finally:
                self._task_cores.clear()
                for core in cores:    # callbacks may no longer be called
                    core.release()
                self._drain_deferred()
        try:
            _live_sessions.discard(self)
        except Exception:
            pass

    @property
    def closed(self) -> bool:
        return not self._ptr

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        # None, as for Run and Task: the exception goes on, and a type checker
        # knows the block does not swallow it
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        try:
            return "<shexec.Session cwd=%r>" % (self.cwd,)
        except ShexecError:
            return "<shexec.Session closed>"

    # -- settings ----------------------------------------------------------

    @property
    def cwd(self) -> Optional[str]:
        """The session's current working directory (absolute)."""
        with self._guard():
            raw = _lib.shexec_session_cwd(self._live())
            return os.fsdecode(raw) if raw is not None else None

    @cwd.setter
    def cwd(self, value: PathArg) -> None:
        self.set_cwd(value)

    def set_cwd(self, path: PathArg) -> None:
        """Set the directory for the next commands (relative: to the current
        cwd). NoCwdError when it does not exist or is not a directory."""
        b = _cstr(path, "working directory")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_cwd(p, b), p)

    def set_shell(self, shell: Optional[Union[PathArg, Sequence[PathArg]]],
                  wrapper_kind: str = "local") -> None:
        """The shell: a path or a name looked up in the host's PATH now
        (SpawnError when not found), a list (program and leading arguments,
        e.g. ["docker", "exec", "-i", "ctr", "bash"]), or None for the
        default (/bin/bash when executable, else /bin/sh); and what a
        wrapper program carries: 'local' (the default: it passes
        descriptors, as bwrap, unshare, nsenter do), 'remote' (only
        stdin/stdout/stderr, arguments as they are: docker exec -i, kubectl
        exec -i) or 'remote_shell' (the same, and its arguments are joined
        for a remote shell to parse again: ssh). With a remote kind the cwd
        names a directory on the other side, "" until the first command
        reports one; back to 'local' it is the host's current directory
        again. On any error nothing changes."""
        v = _lookup(_WRAPPER_KINDS, wrapper_kind, "wrapper kind")
        argv = None
        if shell is not None:
            if isinstance(shell, (str, bytes, os.PathLike)):
                shell = [shell]
            items = [_cstr(a, "shell argument") for a in shell]
            argv = (ctypes.c_char_p * (len(items) + 1))(*items)
            argv[len(items)] = None
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_shell(p, argv, v), p)

    @property
    def shell(self) -> Optional[List[str]]:
        """The program argv given to set_shell (a list of str), or None for
        the default shell."""
        with self._guard():
            argv = _lib.shexec_session_shell_argv(self._live())
            if not argv:
                return None
            out: List[str] = []
            while argv[len(out)] is not None:
                out.append(os.fsdecode(argv[len(out)]))
            return out

    @property
    def wrapper_kind(self) -> str:
        """'local', 'remote' or 'remote_shell' (see set_shell)."""
        with self._guard():
            return _WRAPPER_KIND_NAMES[_lib.shexec_session_wrapper_kind(self._live())]

    def set_persist_env(self, on: bool = True) -> None:
        """Keep the shell's state from one command to the next: the exported
        environment a command leaves (and, with bash, its shell variables and
        functions) is where the next one starts, so `export`, `unset` and
        `source .venv/bin/activate` last. The deny list, PWD, SHLVL and the
        shell's own variables never persist; timed-out runs and tasks change
        nothing. Off (the default) forgets what was kept. StateError with a
        remote wrapper kind; ShexecError (ESYS) from a library built without
        it (PERSIST=0)."""
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_persist_env(p, 1 if on else 0), p)

    @property
    def persist_env(self) -> bool:
        """True when the session keeps the shell's state (set_persist_env)."""
        with self._guard():
            return bool(_lib.shexec_session_persist_env(self._live()))

    def getenv(self, name: PathArg) -> Optional[str]:
        """The value of `name` in the environment the next command starts
        with (str, invalid UTF-8 kept as surrogate escapes, as os.environ
        does), or None when it has none."""
        n = _cstr(name, "variable name")
        with self._guard():
            p = self._live()
            raw = _lib.shexec_session_getenv(p, n)
            if raw is None:
                msg = _lib.shexec_session_errmsg(p)
                if msg:  # not unset: a bad name, or out of memory
                    _check(ENOMEM if b"memory" in msg else EINVAL, p)
                return None
            return os.fsdecode(raw)

    def environ(self) -> Dict[str, str]:
        """That whole environment, as a dict in the order commands get it."""
        out = ctypes.POINTER(_str)()
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_environ(ctypes.byref(out), p), p)
            env = {}
            i = 0
            while out[i] is not None:
                name, _, value = out[i].partition(b"=")
                env[os.fsdecode(name)] = os.fsdecode(value)
                i += 1
            return env

    def set_timeouts_ms(self, default_ms: int, max_ms: int) -> None:
        """Default run timeout and the maximum any run may ask for, in ms."""
        d = _uint(default_ms, "default_ms", _U32_MAX)
        m = _uint(max_ms, "max_ms", _U32_MAX)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_timeouts_ms(p, d, m), p)

    @property
    def timeouts_ms(self) -> Tuple[int, int]:
        """(default_ms, max_ms): the session's run timeouts."""
        d, m = _u32(), _u32()
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_timeouts_ms(p, ctypes.byref(d), ctypes.byref(m)), p)
        return (d.value, m.value)

    @property
    def kill_grace_ms(self) -> int:
        """The time between SIGTERM and SIGKILL, in ms."""
        with self._guard():
            return _lib.shexec_session_kill_grace_ms(self._live())

    @property
    def leftovers_drain_ms(self) -> int:
        """How long the output of processes a command left running is read
        as the command's own after its shell exits (set_leftovers_drain_ms)."""
        with self._guard():
            return _lib.shexec_session_leftovers_drain_ms(self._live())

    def _output_limit(self):
        limit, unit, keep = _u64(), _int(), _int()
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_output_limit(p, ctypes.byref(limit), ctypes.byref(unit),
                                                    ctypes.byref(keep)), p)
        return limit.value, unit.value, keep.value

    @property
    def output_limit(self) -> Tuple[int, str, str]:
        """(limit, unit, keep): unit 'chars' or 'bytes', keep 'head' or
        'head_tail' (whether the limit holds the notice: output_within_limit)."""
        limit, unit, keep = self._output_limit()
        units = {0: "chars", 1: "bytes"}
        keeps = {v: k for k, v in _KEEPS.items()}
        return (limit, units[unit], keeps[keep & ~_KEEP_WITHIN_LIMIT])

    @property
    def output_within_limit(self) -> bool:
        """True when the output limit holds the truncation notice too
        (set_output_limit(..., within_limit=True))."""
        return bool(self._output_limit()[2] & _KEEP_WITHIN_LIMIT)

    @property
    def inherits_env(self) -> bool:
        """True when commands start from the host's environment."""
        with self._guard():
            return bool(_lib.shexec_session_env_inherit(self._live()))

    @property
    def max_tasks(self) -> int:
        """How many tasks the session holds at once."""
        with self._guard():
            return _lib.shexec_session_max_tasks(self._live())

    @property
    def on_leftovers(self) -> str:
        """'adopt' or 'kill' (see set_on_leftovers)."""
        with self._guard():
            v = _lib.shexec_session_on_leftovers(self._live())
        return {k: n for n, k in _ON_LEFTOVERS.items()}[v]

    @property
    def watchdog(self) -> bool:
        """True while the session's watchdog is in place (set_watchdog)."""
        with self._guard():
            return bool(_lib.shexec_session_watchdog(self._live()))

    @property
    def containment(self) -> Tuple[str, str]:
        """How the session holds its commands' processes: ('cgroup', the
        session's cgroup directory), or ('group', why not: 'turned off',
        'no cgroup2 mount', ...). See set_containment."""
        detail = _str()
        with self._guard():
            kind = _lib.shexec_session_containment(self._live(), ctypes.byref(detail))
            # the detail is the session's and changes with the setting: copy it now
            text = os.fsdecode(detail.value) if detail.value is not None else ""
        return (_CONTAIN_NAMES.get(kind, "group"), text)

    def set_kill_grace_ms(self, ms: int) -> None:
        """Time between SIGTERM and SIGKILL when a command is terminated."""
        v = _uint(ms, "kill grace", _U32_MAX)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_kill_grace_ms(p, v), p)

    def set_leftovers_drain_ms(self, ms: int) -> None:
        """After a command's shell exits, what it left running is read as
        the command's output until it ends or prints nothing for `ms`
        (default 100, at most 2000; 10 * ms in all), then adopted as a task
        (`echo word &`, `seq 3 > >(tac)`: their lines are the command's; a
        server's first lines too). 0: the command ends at its shell's exit.
        InvalidArgumentError above 2000."""
        v = _uint(ms, "leftovers drain", _U32_MAX)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_leftovers_drain_ms(p, v), p)

    def set_output_limit(self, limit: int, unit: Union[str, int] = "chars",
                         keep: Union[str, int] = "head", within_limit: bool = False) -> None:
        """How much of each stream a run keeps: `limit` in unit 'chars' or
        'bytes'; keep 'head' or 'head_tail'. The notice a cut stream carries
        (and the marker between head and tail) come on top of the limit;
        within_limit=True makes the limit hold them too: the kept text is
        cut to leave them room, and the whole text of a cut stream is at
        most `limit` units."""
        args = _limit_args(limit, unit, keep, within_limit)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_output_limit(p, *args), p)

    def env_inherit(self, inherit: bool = True) -> None:
        """Start commands from the host's environment (True) or empty."""
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_env_inherit(p, 1 if inherit else 0), p)

    def setenv(self, name: PathArg, value: Optional[PathArg]) -> None:
        """Set a variable for every later command; value None removes it."""
        n = _cstr(name, "variable name")
        v = None if value is None else _cstr(value, "variable value")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_setenv(p, n, v), p)

    def unsetenv(self, name: PathArg) -> None:
        """Remove a variable (also an inherited one) for later commands."""
        self.setenv(name, None)

    def env_deny(self, glob: PathArg) -> None:
        """Remove variables whose names match this fnmatch glob."""
        g = _cstr(glob, "glob")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_env_deny(p, g), p)

    def env_allow(self, glob: PathArg) -> None:
        """Keep variables matching this glob even when denied."""
        g = _cstr(glob, "glob")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_env_allow(p, g), p)

    def set_max_tasks(self, n: int) -> None:
        """How many tasks the session holds at once: running, or finished
        and not yet freed (adopted leftovers count). Finished tasks nobody
        took as an object are released to make room."""
        v = _uint(n, "max tasks", _U32_MAX)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_max_tasks(p, v), p)

    def set_on_leftovers(self, policy: str) -> None:
        """What to do with processes a foreground command leaves running:
        'adopt' (default: they become a task, see Run.leftover_task) or
        'kill'. What happened is the run's outcome, Run.leftovers."""
        v = _lookup(_ON_LEFTOVERS, policy, "leftovers policy")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_on_leftovers(p, v), p)

    def set_watchdog(self, on: bool = True) -> None:
        """If this process dies without closing the session (killed, a
        crash, os._exit), end every process of its commands (True), as a
        timeout would, through a watchdog process forked now; or let them
        run on (False, the default). See shexec_session_set_watchdog()."""
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_watchdog(p, 1 if on else 0), p)

    def set_containment(self, parent: Optional[PathArg]) -> None:
        """Hold each command's processes in a cgroup v2 of its own, so that
        those which leave its process group (setsid, double forks, daemons)
        are still signalled, counted as leftovers and costed: parent 'auto'
        (a child of the cgroup this process runs in), the absolute path of a
        cgroup2 directory this process may write, or None / 'off' (process
        groups only). A new session is 'auto'. With 'auto' where no cgroup can be made
        the session keeps process groups and `containment` says why: not an
        error. StateError while commands run (runs, tasks, adopted
        leftovers) or from a callback; SysError when the named directory
        cannot hold them (the message says why; nothing changes). See
        shexec_session_set_containment()."""
        b = None if parent is None else _cstr(parent, "containment")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_containment(p, b), p)

    def set_limit(self, name: str, value: int) -> None:
        """Bound every later command: name 'memory' (bytes of its processes
        together), 'swap' (bytes of swap besides), 'pids' (processes and
        threads at once: a fork bomb's end) or 'cpu' (thousandths of one
        CPU: 500 is half a CPU), value an int, 0 for none (the default). A
        run's `limits` argument takes the place of the session's. Limits are
        the command's cgroup's: StateError without containment by cgroup
        (set_containment), SysError when the controller is not available
        here (the message says why; nothing is set, never silently ignored),
        InvalidArgumentError for an unknown name or a value too small (a CPU
        limit below 10, a memory limit below 1 MiB). On cgroup v1, 'swap'
        needs 'memory' too. What a command ran into: Run.limits_hit."""
        limit = _lookup(_LIMITS, name, "limit")
        v = _uint(value, "%s limit" % name, _U64_MAX)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_limit(p, limit, v), p)

    def limit(self, name: str) -> int:
        """The session's limit `name` ('memory', 'swap', 'pids', 'cpu'; see
        set_limit) as an int, 0 for none."""
        limit = _lookup(_LIMITS, name, "limit")
        with self._guard():
            return _lib.shexec_session_limit(self._live(), limit)

    # -- long-running and interactive commands ---------------------------------

    def set_idle_timeout_ms(self, ms: int, action: Union[str, int] = IDLE_END) -> None:
        """An idle timeout for every run and task that sets none: a command
        silent on both streams for `ms` is ended (IDLE_END: SIGTERM, grace,
        SIGKILL; its state 'timed_out', Run.deadline DEADLINE_IDLE) or moved
        to the background (IDLE_YIELD: a foreground run then comes back
        still running, see Run.yielded; a task is left running). 0: none
        (the default). InvalidArgumentError for an unknown action (an int
        is passed on as the C value, for the library to check)."""
        v = _uint(ms, "idle timeout", _U32_MAX)
        a = _idle_action(action)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_idle_timeout_ms(p, v, a), p)

    @property
    def idle_timeout_ms(self) -> Tuple[int, str]:
        """(ms, action): the session's idle timeout (0: none) and IDLE_END
        or IDLE_YIELD (see set_idle_timeout_ms)."""
        action = _int()
        with self._guard():
            ms = _lib.shexec_session_idle_timeout_ms(self._live(), ctypes.byref(action))
        return (ms, _IDLE_ACTION_NAMES.get(action.value, IDLE_END))

    def set_background_on_timeout(self, cap_ms: int) -> None:
        """Background on timeout for every run that sets none: at its
        timeout a foreground command is moved to the background (it comes
        back from run() still running, Run.yielded YIELD_TIMEOUT) instead of
        being ended, and ended ('timed_out') only cap_ms after its start.
        0 (the default): ended at the timeout. A cap not beyond the timeout
        ends it at the timeout."""
        v = _uint(cap_ms, "background on timeout cap", _U32_MAX)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_background_on_timeout(p, v), p)

    @property
    def background_on_timeout(self) -> int:
        """The session's background-on-timeout cap in ms (0: off)."""
        with self._guard():
            return _lib.shexec_session_background_on_timeout(self._live())

    def set_input_look_ms(self, ms: int) -> None:
        """How long a command must be silent before the library first looks
        whether it waits for input (then once a second while it stays
        silent); 0: never look. Default DEFAULT_INPUT_LOOK_MS (2000). For
        runs started after. What is found: Run.input_wait, on_input."""
        v = _uint(ms, "input look", _U32_MAX)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_input_look_ms(p, v), p)

    @property
    def input_look_ms(self) -> int:
        """The silence in ms before a look for a wait for input (0: none)."""
        with self._guard():
            return _lib.shexec_session_input_look_ms(self._live())

    def apply_agent_env(self) -> None:
        """The agent environment preset, so commands do not stop for a
        person or a pager: sets PAGER, GIT_PAGER, GH_PAGER, MANPAGER,
        SYSTEMD_PAGER=cat, GIT_TERMINAL_PROMPT=0, GIT_EDITOR and
        EDITOR=false, DEBIAN_FRONTEND=noninteractive, PIP_NO_INPUT=1, and
        LANG=C.UTF-8 when neither LANG nor LC_ALL is set, as session
        variables (setenv() after this overrides each, as does a run's env);
        and gives pipe runs (not pty runs) NO_COLOR=1 and TERM=dumb unless
        the session's or the run's variables name them (getenv() does not
        show these two)."""
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_apply_agent_env(p), p)

    # -- output for models: the notice, spill files, redaction -----------------

    def set_notice_position(self, where: str) -> None:
        """Where the truncation notice goes in a truncated stream, for runs
        started from now on: NOTICE_LAST ('last', the default: after the
        kept text) or NOTICE_FIRST ('first': before it, so a model reading
        the start sees what was left out)."""
        v = _lookup(_NOTICE_POSITIONS, where, "notice position")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_notice_position(p, v), p)

    @property
    def notice_position(self) -> str:
        """NOTICE_LAST or NOTICE_FIRST (see set_notice_position)."""
        with self._guard():
            v = _lib.shexec_session_notice_position(self._live())
        return _NOTICE_POSITION_NAMES.get(v, NOTICE_LAST)

    def set_spill_dir(self, dir: Optional[PathArg], file_max: int = 0, total_max: int = 0,
                      keep_files: bool = False) -> None:
        """Keep the whole text of every stream that outgrows its output
        limit in a file of `dir` (an absolute path to an existing
        directory), named shexec-<pid>-<run number>-<stdout|stderr>.txt
        (-1 to -15 before .txt when that name is taken), mode 0600; the
        notice then says where (Run.stdout_spill says it too). A file holds at most file_max bytes (0: DEFAULT_SPILL_FILE_MAX),
        the session's files together total_max (0: DEFAULT_SPILL_TOTAL_MAX;
        the oldest are removed to make room). The files are removed when the
        session is closed, or the spill turned off (dir None), unless
        keep_files. A write error (a full disk) never changes a command's
        result: its notice says the spill failed. For runs started from now
        on. InvalidArgumentError for a relative path or one that is not a
        directory, or file_max above total_max; nothing changes then."""
        d = None if dir is None else _cstr(dir, "spill directory")
        fmax = _uint(file_max, "file_max", _U64_MAX)
        tmax = _uint(total_max, "total_max", _U64_MAX)
        flags = _SPILL_KEEP_FILES if keep_files else 0
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_set_spill_dir(p, d, fmax, tmax, flags), p)

    @property
    def spill_dir(self) -> Optional[str]:
        """The spill directory (set_spill_dir), or None when off."""
        with self._guard():
            raw = _lib.shexec_session_spill_dir(self._live())
            return os.fsdecode(raw) if raw is not None else None

    def redact_value(self, name: str, value: Data) -> None:
        """Hide `value` (str or bytes, 4 to 65536 bytes) from the output of
        runs started from now on: every occurrence becomes
        "[REDACTED:NAME]" (name: 1 to 64 letters, digits or '_'), in the
        output callback, the captured output, spill files and tool results,
        also where the command's writes split it. A safety net, not a
        boundary: a command that encodes the secret passes it.
        InvalidArgumentError for a bad name or length; LimitError past
        100000 values."""
        n = _cstr(name, "redaction name")
        v = _to_bytes(value, "redacted value")
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_redact_value(p, n, v, len(v)), p)

    def redact_env(self, globs: Optional[Union[PathArg, Sequence[PathArg]]] = None) -> None:
        """Also hide the values (of at least 8 bytes) of the environment's
        variables whose names match one of `globs` ('*' and '?', case
        ignored), each as "[REDACTED:ITS_NAME]": the host's environment
        (when inherited) and the session's variables, read as each run
        starts. globs: a list (a str is one glob); None: the library's
        defaults (*KEY* *SECRET* *TOKEN* *PASSWORD* *CREDENTIAL*); an empty
        list: off, as a new session has. InvalidArgumentError for an empty
        glob."""
        if globs is None:
            arr, n = None, 0
        else:
            if isinstance(globs, (str, bytes, os.PathLike)):
                globs = [globs]
            items = [_cstr(g, "glob") for g in globs]
            # never a NULL array: n 0 with an array turns it off, NULL means the defaults
            arr = (ctypes.c_char_p * (len(items) + 1))(*items)
            n = len(items)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_redact_env(p, arr, n), p)

    def redact_shapes(self, keys: bool = True, private_keys: bool = True) -> None:
        """Hide secrets found by their shape, for runs started from now on:
        keys, a word that starts with a known key prefix and is long enough
        to be a key (ghp_ and github_pat_ as GITHUB_TOKEN, sk-ant- as
        ANTHROPIC_API_KEY, sk- as OPENAI_API_KEY, AKIA as AWS_ACCESS_KEY_ID,
        xoxb- and the like as SLACK_TOKEN); private_keys, a PEM private-key
        block as PRIVATE_KEY. Both False: none, as a new session has."""
        which = (_REDACT_KEY_SHAPES if keys else 0) | (_REDACT_PRIVATE_KEYS if private_keys else 0)
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_redact_shapes(p, which), p)

    def redact_clear(self) -> None:
        """Forget every redaction the session was given: values, globs and
        shapes."""
        with self._guard():
            p = self._live()
            _check(_lib.shexec_session_redact_clear(p), p)

    # -- runs and tasks: configure a run, then start it ------------------------

    def _new_run(self, command, timeout_ms, cwd, env, on_output, pty, ansi_strip, stdin,
                 output_limit, pty_size, limits, yield_ms=None, idle_timeout_ms=None,
                 idle_action=None, background_on_timeout=None, on_input=None,
                 redact_values=None, redact_own_env=False):
        """A configured Run, not started (state 'new')."""
        cmd = _to_bytes(command, "command")
        with self._guard():
            sp = self._live()
            out = ctypes.c_void_p()
            _check(_lib.shexec_run_new_bytes(ctypes.byref(out), sp, cmd, len(cmd)), sp)
            run = Run._new(self, out.value, command)
            try:
                run._feed = _configure_run(out.value, sp, timeout_ms, cwd, env, output_limit,
                                           pty, pty_size, ansi_strip, stdin, limits,
                                           yield_ms, idle_timeout_ms, idle_action,
                                           background_on_timeout, redact_values,
                                           redact_own_env)
                if on_output is not None:
                    run._set_callback(on_output)
                if on_input is not None:
                    run._set_input_callback(on_input)
            except BaseException:
                run.close()
                raise
        return run

    def run(self, command: Data, timeout_ms: Optional[int] = None,
            cwd: Optional[PathArg] = None, env: Optional[Env] = None,
            on_output: Optional[OutputCallback] = None, pty: Union[bool, str, int] = False,
            ansi_strip: bool = False, stdin: Optional[Union[bool, Data]] = None,
            output_limit: Optional[OutputLimit] = None,
            pty_size: Optional[Tuple[int, int]] = None, limits: Optional[Limits] = None,
            yield_ms: Optional[int] = None, idle_timeout_ms: Optional[int] = None,
            idle_action: Optional[Union[str, int]] = None,
            background_on_timeout: Optional[int] = None,
            on_input: Optional[InputCallback] = None,
            redact_values: Optional[RedactValues] = None,
            redact_own_env: bool = False) -> Run:
        """Run `command` (str or bytes) to completion and return the finished
        Run. A non-zero exit, a timeout or a signal is data (see .state);
        ShexecError is raised only when nothing could be run. A command
        moved to the background (yield_ms, an idle timeout with IDLE_YIELD,
        background_on_timeout) comes back still running: Run.yielded says
        why, Run.task_id is the task it goes on as (Session.take_task()),
        and the Run stays a live handle (wait(), write(), its output so far).

        timeout_ms: this run's timeout (clamped to the session maximum).
        cwd: run there instead of the session cwd (which then does not move).
        env: {name: value or None} for this run only.
        on_output(stream, data): called with 'stdout'/'stderr' and bytes as
          output arrives; an exception in it cancels the run and is re-raised
          here once the run ended.
        pty: False, True or 'echo' (a pseudo-terminal; output merged to stdout).
        ansi_strip: remove escape sequences, resolve \\r overwrites.
        stdin: bytes/str fed to the command, then EOF (default /dev/null);
          True: a pipe left open, for on_input or a yielded Run to write to.
        output_limit: int (characters, head) or (limit, unit, keep) or
          (limit, unit, keep, within_limit), as set_output_limit().
        limits: {name: value} for this run only, in place of the session's
          (set_limit: 'memory', 'swap', 'pids', 'cpu'; 0 for none), e.g.
          {'memory': 512 << 20, 'pids': 100}. Checked when it starts.
        yield_ms: come back after this many ms with the command still
          running, moved to the background (YIELD_TIME), or as soon as it
          is found waiting for input (YIELD_INPUT). None/0: to its end.
        idle_timeout_ms, idle_action: this run's idle timeout (0: none,
          None: the session's, see set_idle_timeout_ms) and what it does,
          IDLE_END (the default: 'timed_out', Run.deadline DEADLINE_IDLE)
          or IDLE_YIELD (YIELD_IDLE).
        background_on_timeout: at its timeout move the command to the
          background (YIELD_TIMEOUT) and end it only this many ms after its
          start (0: end it at the timeout; None: the session's setting).
        on_input(run): called with the Run when the command is found
          waiting for input (Session.set_input_look_ms); run.prompt and
          run.echo_off tell what it asks, run.write() answers. An exception
          in it is handled as in on_output.
        redact_values: {name: value} hidden from this run's output too, as
          Session.redact_value() hides them from every run's.
        redact_own_env: True to hide the values of this run's own `env`
          variables whose names match the session's redact_env() globs (the
          default globs when the session has none).
        """
        return self.start_run(command, timeout_ms, cwd, env, on_output, pty, ansi_strip,
                              stdin, output_limit, pty_size, limits, yield_ms,
                              idle_timeout_ms, idle_action, background_on_timeout,
                              on_input, redact_values, redact_own_env)._finish()

    def start_run(self, command: Data, timeout_ms: Optional[int] = None,
                  cwd: Optional[PathArg] = None, env: Optional[Env] = None,
                  on_output: Optional[OutputCallback] = None,
                  pty: Union[bool, str, int] = False, ansi_strip: bool = False,
                  stdin: Optional[Union[bool, Data]] = None,
                  output_limit: Optional[OutputLimit] = None,
                  pty_size: Optional[Tuple[int, int]] = None, limits: Optional[Limits] = None,
                  yield_ms: Optional[int] = None, idle_timeout_ms: Optional[int] = None,
                  idle_action: Optional[Union[str, int]] = None,
                  background_on_timeout: Optional[int] = None,
                  on_input: Optional[InputCallback] = None,
                  redact_values: Optional[RedactValues] = None,
                  redact_own_env: bool = False) -> Run:
        """Start `command` and return a live Run at once; drive it with
        Run.wait() (or Session.wait()). Arguments as for run(), except that
        stdin=True gives a pipe to feed with Run.write()/Run.close_stdin().
        A yield moves the command to the background while the loop is
        pumped (Run.yielded, Run.task_id); Run.wait() still waits for its
        end."""
        r = self._new_run(command, timeout_ms, cwd, env, on_output, pty, ansi_strip, stdin,
                          output_limit, pty_size, limits, yield_ms, idle_timeout_ms,
                          idle_action, background_on_timeout, on_input, redact_values,
                          redact_own_env)
        try:
            return r.start()
        except BaseException:
            r.close()     # never started: freed now, not when collected
            raise

    def start_task(self, command: Data, timeout_ms: Optional[int] = None,
                   cwd: Optional[PathArg] = None, env: Optional[Env] = None,
                   on_output: Optional[OutputCallback] = None,
                   pty: Union[bool, str, int] = False, ansi_strip: bool = False,
                   stdin: Union[bool, Data] = False,
                   output_limit: Optional[OutputLimit] = None,
                   pty_size: Optional[Tuple[int, int]] = None, limits: Optional[Limits] = None,
                   idle_timeout_ms: Optional[int] = None,
                   idle_action: Optional[Union[str, int]] = None,
                   on_input: Optional[InputCallback] = None,
                   redact_values: Optional[RedactValues] = None,
                   redact_own_env: bool = False) -> Task:
        """Start a background task and return its Task at once. stdin=True
        gives it a pipe (Task.write); bytes/str are also written to it (the
        pipe stays open). timeout_ms None/0: no timeout (the default); a
        task's timeout is not clamped to the session maximum.
        idle_timeout_ms with IDLE_END ends a silent task (a task is in the
        background already: IDLE_YIELD does nothing to it); on_input(run)
        as for run(), with the task's Run; redact_values and
        redact_own_env as for run().
        LimitError when the session already holds its maximum of tasks
        (a finished Task keeps its slot until freed)."""
        if timeout_ms == 0 and not isinstance(timeout_ms, bool):
            timeout_ms = None   # a task without a timeout: leave it unset
        r = self._new_run(command, timeout_ms, cwd, env, on_output, pty, ansi_strip, stdin,
                          output_limit, pty_size, limits, None, idle_timeout_ms, idle_action,
                          None, on_input, redact_values, redact_own_env)
        try:
            return r.start_task()
        except BaseException:
            r.close()     # not started (a task's run is not closed by this)
            raise

    def _task_object(self, tp, core=None):
        """The Task object of the C task `tp` (the same one while it exists)."""
        task = self._task_wrappers.get(tp)
        if task is not None:
            return task
        if core is None:
            core = self._task_cores.get(tp)
        if core is None:   # e.g. adopted leftovers: created by the library
            core = _TaskCore(tp, _lib.shexec_task_run(tp), None)
            core.id = _lib.shexec_task_id(tp).decode("ascii", "replace")
            self._task_cores[tp] = core
        task = Task(self, core)
        self._task_wrappers[tp] = task
        return task

    def take_task(self, task_id: str) -> Task:
        """The Task with this id (the same object while one exists). The
        task is then yours: it is never released to make room.
        NoTaskError when the session has no such task."""
        b = _cstr(task_id, "task id")
        with self._guard():
            sp = self._live()
            out = ctypes.c_void_p()
            _check(_lib.shexec_session_take_task(ctypes.byref(out), sp, b), sp)
            return self._task_object(out.value)

    # -- tools: the shell as tools handed to a model -------------------------

    def has_tool(self, name: str) -> bool:
        """True when the registry has a tool exposed under `name`."""
        n = _cstr(name, "tool name")
        with self._guard():
            sp = self._live()
            # setting a tool to the state it has changes nothing, and an
            # unknown name answers ENOTOOL: the library's way to ask
            rc = _lib.shexec_tool_set_enabled(sp, n, _lib.shexec_tool_is_enabled(sp, n))
            if rc == ENOTOOL:
                return False
            _check(rc, sp)
            return True

    def tool_enabled(self, name: str) -> bool:
        """True when that tool is enabled (tools are registered disabled)."""
        with self._guard():
            return bool(_lib.shexec_tool_is_enabled(self._live(), _cstr(name, "tool name")))

    def enable_tool(self, name: str, enabled: bool = True) -> None:
        """Enable (or disable) a tool by its exposed name. ToolNotAvailableError
        for an unknown name."""
        n = _cstr(name, "tool name")
        with self._guard():
            sp = self._live()
            _check(_lib.shexec_tool_set_enabled(sp, n, 1 if enabled else 0), sp)

    def rename_tool(self, name: str, new_name: str) -> None:
        """Expose a tool under another name (e.g. "bash" as "run_bash")."""
        with self._guard():
            sp = self._live()
            _check(_lib.shexec_tool_rename(sp, _cstr(name, "tool name"),
                                           _cstr(new_name, "tool name")), sp)

    def tools(self) -> List[Dict[str, Any]]:
        """The enabled tools: [{"name", "description", "inputSchema"}, ...]."""
        with self._guard():
            sp = self._live()
            out = ctypes.c_void_p()
            _check(_lib.shexec_tool_list(ctypes.byref(out), sp), sp)
            return _take_json(out.value)

    @staticmethod
    def _tool_args(arguments):
        if arguments is None:
            text = "{}"
        elif isinstance(arguments, (str, bytes)):
            text = arguments
        else:
            text = json.dumps(arguments)
        return _cstr(text, "arguments")

    def call_tool(self, name: str,
                  arguments: Optional[Union[Mapping[str, Any], str, bytes]] = None
                  ) -> Dict[str, Any]:
        """Call a tool with JSON arguments (a dict, or a JSON string as a model
        wrote it). Returns the result dict; errors the model should read come
        back as {"error": ...} rather than as exceptions. A task the tool
        layer reads to completion or kills is gone for the model: a Task
        object you hold for one (take_task()) is dead afterwards
        (ClosedError), and the task is freed.
        Finished tool tasks nobody read are released when a new task needs
        room (unless taken with take_task())."""
        n = _cstr(name, "tool name")
        args = self._tool_args(arguments)
        with self._guard():
            sp = self._live()
            out = ctypes.c_void_p()
            rc = self._pump_call(_lib.shexec_tool_call, ctypes.byref(out), sp, n, args)
            try:
                result = _take_json(out.value)
                if result is None:
                    _check(rc, sp)
            finally:
                self._forget_tasks_freed_by_tools(sp)
            return result

    def _forget_tasks_freed_by_tools(self, sp):
        """A task the tool layer reads to completion or kills is withdrawn:
        no longer found by id. One we hold a Task for is ours to free (the
        library never frees a task the host holds), so its object dies and
        the task is freed here, giving back its slot."""
        for tp, core in list(self._task_cores.items()):
            out = ctypes.c_void_p()
            rc = _lib.shexec_session_take_task(ctypes.byref(out), sp, core.id.encode("ascii"))
            if rc != OK or out.value != tp:
                self._forget_task(core)
                core.mark_dead("the tool layer read it to completion or killed it")
                try:
                    self._pump_call(_lib.shexec_task_free, tp)
                finally:
                    core.release()

    def tool_prepare(self, name: str,
                     arguments: Optional[Union[Mapping[str, Any], str, bytes]] = None
                     ) -> Tuple[Run, bool]:
        """The bash tool without waiting, for hosts that drive commands
        themselves (streaming output, answering other requests meanwhile):
        `arguments` are checked as call_tool() checks them. Returns
        (run, background): a Run configured from them and not started
        (state 'new'), and whether run_in_background was asked for. Start
        it with run.exec() / run.start() (then run.tool_result() is the
        tool's JSON result) or, in the background, run.start_task() (the
        Task is yours). Raises what call_tool() answers as {"error": ...}:
        ToolNotAvailableError, InvalidArgumentError, LimitError... with the
        message for the model. Dropping or closing a run never started
        frees it."""
        n = _cstr(name, "tool name")
        args = self._tool_args(arguments)
        with self._guard():
            sp = self._live()
            out = ctypes.c_void_p()
            bg = ctypes.c_int(0)
            _check(_lib.shexec_tool_prepare(ctypes.byref(out), ctypes.byref(bg), sp, n, args),
                   sp)
            run = Run._new(self, out.value, None)
            run._tool = True
            return run, bool(bg.value)

    def _forget_task(self, core):
        tp = core.ptr
        self._task_cores.pop(tp, None)
        self._task_wrappers.pop(tp, None)

    # -- the loop ------------------------------------------------------------

    def wait(self, timeout_ms: Optional[float] = None) -> int:
        """Pump the loop: read output, run callbacks, enforce timeouts, reap.
        Returns how many runs and tasks finished during the call, as soon as
        at least one did, or 0 when timeout_ms passed (None: no limit) or
        at once when nothing is running. Raises the first pending exception
        of a task's output callback."""
        t = _wait_ms(timeout_ms)
        with self._guard():
            sp = self._live()
            n = _check(self._pump_call(_lib.shexec_session_wait, sp, t), sp)
        self._raise_task_callback_errors()
        return n

    def pollfds(self) -> Tuple[List[Tuple[int, int]], int]:
        """For a host's own event loop: ([(fd, events), ...], timeout_ms)
        to poll (timeout -1: none; 0: a deadline has passed). This only
        lists; call process() with what poll() reported, also when the
        timeout expires: it is process() that enforces deadlines."""
        with self._guard():
            sp = self._live()
            cap = 16
            while True:
                fds = (_PollFd * cap)()
                tmo = ctypes.c_int32(-1)
                n = _check(_lib.shexec_session_pollfds(fds, cap, ctypes.byref(tmo), sp), sp)
                if n <= cap:
                    return [(fds[i].fd, fds[i].events) for i in range(n)], tmo.value
                cap = n

    def process(self, ready: Iterable[Sequence[int]] = ()) -> int:
        """Hand poll() results to the session: ready is [(fd, revents), ...]
        (or (fd, events, revents) triples; empty when poll() timed out).
        Reads output, runs callbacks, enforces deadlines, reaps. Returns how
        many runs and tasks finished in it."""
        items = list(ready)
        arr = (_PollFd * max(1, len(items)))()
        for i, item in enumerate(items):
            arr[i].fd = item[0]
            arr[i].events = item[1] if len(item) > 2 else 0
            arr[i].revents = item[-1]
        with self._guard():
            sp = self._live()
            n = _check(self._pump_call(_lib.shexec_session_process, sp, arr, len(items)), sp)
        self._raise_task_callback_errors()
        return n

    def _raise_task_callback_errors(self):
        for core in list(self._task_cores.values()):
            cb = core.cb
            if cb is not None and cb.error is not None:
                err, cb.error = cb.error, None
                raise err


def _close_all_sessions():
    """At interpreter exit: stop and reap what sessions still run, so no
    task outlives the host by accident."""
    for s in list(_live_sessions):
        try:
            s.close()
        except Exception:
            pass


atexit.register(_close_all_sessions)


# --------------------------------------------------------------------------
# Run
# --------------------------------------------------------------------------

def _run_cost(p):
    user, system, peak = _u64(), _u64(), _u64()
    source = _lib.shexec_run_cost(p, ctypes.byref(user), ctypes.byref(system),
                                  ctypes.byref(peak))
    return {"source": _COST_SOURCES.get(source, "none"), "user_usec": user.value,
            "system_usec": system.value, "peak_bytes": peak.value}


def _limits_hit(p):
    bits = _lib.shexec_run_limit_hit(p)
    return [name for name, bit in sorted(_LIMITS.items(), key=lambda kv: kv[1])
            if bits & (1 << bit)]


def _leftover_task_id(p):
    lt = _str()
    _lib.shexec_run_leftovers(p, ctypes.byref(lt))
    return lt.value.decode("ascii", "replace") if lt.value else None


def _yield_task_id(p):
    tid = _str()
    _lib.shexec_run_yielded(p, ctypes.byref(tid))
    return tid.value.decode("ascii", "replace") if tid.value else None


def _input_wait(p):
    """(INPUT_*, the prompt as bytes or None, echo_off): the prompt, the
    run's until the next loop round, is copied at once."""
    prompt, n, echo_off = ctypes.c_void_p(), _sz(0), _int(0)
    state = _lib.shexec_run_input_wait(p, ctypes.byref(prompt), ctypes.byref(n),
                                       ctypes.byref(echo_off))
    name = _INPUT_NAMES.get(state, INPUT_UNKNOWN)
    if name != INPUT_WAITING:
        return (name, None, False)
    text = ctypes.string_at(prompt.value, n.value) if prompt.value and n.value else b""
    return (name, text, bool(echo_off.value))


def _spill(p, stream):
    """What became of a stream's spill file: {"state": SPILL_*, "path"
    (None for SPILL_NONE and SPILL_FAILED), "bytes" (in the file), "error"
    (an errno value for SPILL_FAILED, else 0)}; the path, the run's, is
    copied at once."""
    path, n, err = _str(), _u64(), _int()
    state = _lib.shexec_run_spill(p, stream, ctypes.byref(path), ctypes.byref(n),
                                  ctypes.byref(err))
    return {"state": _SPILL_NAMES.get(state, SPILL_NONE),
            "path": os.fsdecode(path.value) if path.value is not None else None,
            "bytes": n.value, "error": err.value}


def _output_counts(p, stream):
    """What the output limit kept of a stream and what it carried:
    {"kept_chars", "kept_bytes", "total_chars", "total_bytes",
    "total_lines"}, characters counted as the notice counts them (a UTF-8
    sequence, or an invalid byte), lines as its newlines and one more when
    it does not end with one. All 0 before the start, as the library
    reports them then."""
    kc, kb, tc, tb = _u64(), _u64(), _u64(), _u64()
    _lib.shexec_run_output_counts(p, stream, ctypes.byref(kc), ctypes.byref(kb),
                                  ctypes.byref(tc), ctypes.byref(tb))
    return {"kept_chars": kc.value, "kept_bytes": kb.value,
            "total_chars": tc.value, "total_bytes": tb.value,
            "total_lines": _lib.shexec_run_output_lines(p, stream)}


# What a Run reports, each read from a C run by one function: live while the
# command runs (and for a task's run), copied once a foreground run finished.
_RESULTS = {
    "state": lambda p: _STATE_NAMES.get(_lib.shexec_run_state(p), "unknown"),
    "exit_code": lambda p: _lib.shexec_run_exit_code(p),
    "signal": lambda p: _lib.shexec_run_signal(p),
    "stdout": lambda p: _read_out(_lib.shexec_run_output, p, STDOUT),
    "stderr": lambda p: _read_out(_lib.shexec_run_output, p, STDERR),
    "stdout_truncated": lambda p: bool(_lib.shexec_run_truncated(p, STDOUT)),
    "stderr_truncated": lambda p: bool(_lib.shexec_run_truncated(p, STDERR)),
    "stdout_total": lambda p: _lib.shexec_run_output_total(p, STDOUT),
    "stderr_total": lambda p: _lib.shexec_run_output_total(p, STDERR),
    "stdout_counts": lambda p: _output_counts(p, STDOUT),
    "stderr_counts": lambda p: _output_counts(p, STDERR),
    "stdout_spill": lambda p: _spill(p, STDOUT),
    "stderr_spill": lambda p: _spill(p, STDERR),
    "stdout_redactions": lambda p: _lib.shexec_run_redactions(p, STDOUT),
    "stderr_redactions": lambda p: _lib.shexec_run_redactions(p, STDERR),
    "duration_ms": lambda p: _lib.shexec_run_duration_ms(p),
    "pid": lambda p: _lib.shexec_run_pid(p),
    "timeout_ms": lambda p: _lib.shexec_run_timeout_ms(p),
    "leftovers": lambda p: _LEFTOVER_NAMES.get(_lib.shexec_run_leftovers(p, None), "unknown"),
    "leftover_task": _leftover_task_id,
    "notice": lambda p: _lib.shexec_run_notice(p).decode("utf-8", "replace"),
    "cost": _run_cost,
    "limits_hit": _limits_hit,
    "yielded": lambda p: _YIELD_NAMES.get(_lib.shexec_run_yielded(p, None), YIELD_NONE),
    "yield_task": _yield_task_id,
    "deadline": lambda p: _DEADLINE_NAMES.get(_lib.shexec_run_deadline(p), DEADLINE_NONE),
    "input": _input_wait,
    "interrupted": lambda p: bool(_lib.shexec_run_interrupted(p)),
    "quiet_ms": lambda p: _lib.shexec_run_quiet_ms(p),
}


def _task_run_ptr(session, core):
    """The C run of a live task (call with the session lock held)."""
    if not core.ptr:
        raise ClosedError(ESTATE, "task %s is no longer usable: %s"
                          % (core.id or "?", core.dead))
    if session._forked():
        raise ClosedError(ESTATE, "task %s belongs to the parent process (fork)" % core.id)
    return core.run


class Run(object):
    """One command of a session and its results, one C shexec_run.

    A Run is configured, then started in one of three ways: to completion
    (Session.run(), Run.exec()), live (Session.start_run(), Run.start():
    drive it with wait()), or in the background as a task
    (Session.start_task(), Run.start_task()). A run not started yet (state
    'new') comes from Session.tool_prepare().

    A foreground run's results are copied into the object once it finished
    and the C run is freed at once, so a finished Run never keeps the
    session alive and stays readable after the session closed. Dropping a
    live Run cancels it. A task's run (Task.run) is the task's: it is read
    live, close() does nothing, and once the task is freed (or its session
    closed) reading it raises ClosedError, as for the Task.

    A foreground run moved to the background (yielded: see Session.run())
    stays a live Run until it ends: its output so far, write(), cancel()
    (the task is then 'killed'), wait() for the end; the command goes on
    as the task Run.task_id names, which Session.take_task() gives (its
    Task.run is another Run reading the same command). Closing or dropping
    a yielded Run only lets go of the handle: the command goes on as its
    task, without this Run's callbacks.

    Results: command, state ('new', 'running', 'exited', 'signaled',
    'timed_out', 'cancelled'; 'killed' for a task), exit_code (-1 unless
    exited), signal, stdout and stderr (bytes; so far, while running),
    text/stderr_text (decoded, errors='replace'), stdout_truncated,
    stderr_truncated, stdout_total, stderr_total (bytes produced),
    stdout_counts/stderr_counts (what the output limit kept and what the
    stream carried, in characters and bytes),
    duration_ms, pid (the shell's pid, which is also the command's process
    group id; 0 before the start), timeout_ms (the timeout in force, 0:
    none), leftovers ('none', 'adopted', 'killed'), leftover_task (the id
    of the task that adopted them, or None), cost (CPU time and peak
    memory once finished), limits_hit (the names of the limits that
    stopped it, e.g. ['memory']), notice (what the library declined to
    do, e.g. adopt a working directory that does not exist, or which limit
    ended the command; "" when nothing), yielded (YIELD_NONE, YIELD_TIME,
    YIELD_TIMEOUT, YIELD_IDLE, YIELD_INPUT), task_id (the task it goes on
    as, or was started as), deadline (DEADLINE_NONE, DEADLINE_TIMEOUT,
    DEADLINE_IDLE: which one ended a 'timed_out' run), input_wait
    (INPUT_NO, INPUT_WAITING, INPUT_UNKNOWN), prompt/prompt_text (what it
    asks while it waits for input), echo_off (a password prompt),
    stdout_spill/stderr_spill (where the whole text of a truncated stream
    is: {"state", "path", "bytes", "error"}) and
    stdout_redactions/stderr_redactions (how many secrets were hidden)."""

    _lib = _lib
    command: Optional[Data]     # as given (None for a run from tool_prepare())
    # set in _new(), where a type checker cannot tell these two from their first values
    _feed: Optional[bytes]
    _tool: bool

    def __init__(self) -> None:
        raise TypeError("Run objects come from Session.run() / start_run() / start_task() / "
                        "tool_prepare()")

    @classmethod
    def _new(cls, session, ptr, command):
        """A Run owning the new C run `ptr`."""
        self = object.__new__(cls)
        self._session = session   # None once the C run is freed
        self._ptr = ptr           # the C run while this object owns it
        self._core = None         # the _TaskCore once it was started as a task
        self._started = False
        self._feed = None         # stdin bytes to write once started
        self._cb = None           # the _CallbackState of its callbacks, if any
        self._cfunc = None        # the C output callback while this object owns the run
        self._icfunc = None       # the C input callback, likewise
        self._yield_id = None     # the id of the task a yield made, once seen
        self._tool = False        # from tool_prepare: keep the tool result
        self._tool_result = None
        self._results = None      # the copy taken when the C run is freed
        self.command = command
        return self

    @classmethod
    def _of_task(cls, session, core):
        """A Run reading the run of an existing task (found by id)."""
        self = cls._new(session, None, core.command)
        self._attach(core)
        return self

    def _attach(self, core):
        self._core = core
        self._started = True
        self._cb = core.cb
        core.view = weakref.ref(self)

    def _callback_state(self):
        """The state the run's output and input callbacks share."""
        if self._cb is None:
            self._cb = _CallbackState(None, self._ptr)
            self._cb.run_of = weakref.ref(self)
        return self._cb

    def _set_callback(self, fn):
        cb = self._callback_state()
        cb.fn = fn
        if self._cfunc is None:
            self._cfunc = _make_output_fn(cb)
        s = self._session
        _check(_lib.shexec_run_set_output_fn(self._ptr, self._cfunc, None), s._ptr)

    def _set_input_callback(self, fn):
        cb = self._callback_state()
        cb.input_fn = fn
        if self._icfunc is None:
            self._icfunc = _make_input_fn(cb)
        s = self._session
        _check(_lib.shexec_run_set_input_fn(self._ptr, self._icfunc, None), s._ptr)

    # -- starting -------------------------------------------------------------

    def _new_ptr(self):
        """The C run of a Run not started yet (call with the lock held)."""
        if self._started or self._core is not None:
            raise StateError(ESTATE, "the run has already been started")
        if not self._ptr:
            raise ClosedError(ESTATE, "the run was closed")
        return self._ptr

    def _session_of_new(self):
        s = self._session
        if s is None or self._started:
            raise StateError(ESTATE, "the run has already been started" if self._started
                             else "the run was closed")
        return s

    def redact_value(self, name: str, value: Data) -> None:
        """Hide `value` (str or bytes) from this run's output too, as
        Session.redact_value() does for every run: for a run not started yet
        (state 'new', from Session.tool_prepare()); Session.run() and the
        like take redact_values. StateError once started."""
        n = _cstr(name, "redaction name")
        v = _to_bytes(value, "redacted value")
        s = self._session_of_new()
        with s._guard():
            sp = s._live()
            _check(_lib.shexec_run_redact_value(self._new_ptr(), n, v, len(v)), sp)

    def redact_own_env(self, on: bool = True) -> None:
        """Hide the values of this run's own variables whose names match the
        session's redact_env() globs (the default globs when it has none),
        for a run not started yet; StateError once started."""
        s = self._session_of_new()
        with s._guard():
            sp = s._live()
            _check(_lib.shexec_run_redact_own_env(self._new_ptr(), 1 if on else 0), sp)

    def start(self, on_output: Optional[OutputCallback] = None,
              on_input: Optional[InputCallback] = None) -> Run:
        """Start this run (state 'new') in the foreground and return it at
        once; drive it with wait(). on_output(stream, data), on_input(run):
        as for Session.run(). StateError when already started."""
        s = self._session_of_new()
        with s._guard():
            sp = s._live()
            rp = self._new_ptr()
            if on_output is not None:
                self._set_callback(on_output)
            if on_input is not None:
                self._set_input_callback(on_input)
            _check(_lib.shexec_run_start(rp), sp)
            self._started = True
            feed, self._feed = self._feed, None
            try:
                if feed is not None:
                    if feed:
                        rc = _lib.shexec_run_write(rp, feed, len(feed))
                        if rc != EPIPE:   # EPIPE: the command no longer reads
                            _check(rc, sp)
                    rc = _lib.shexec_run_close_stdin(rp)
                    if rc != EPIPE:
                        _check(rc, sp)
            except BaseException:
                self.close()
                raise
        return self

    def exec(self, on_output: Optional[OutputCallback] = None,
             on_input: Optional[InputCallback] = None) -> Run:
        """Start this run (state 'new') and wait until it finished, or was
        moved to the background (see Session.run(): it then comes back
        still running, Run.yielded says why); returns it. An exception of
        its callbacks cancels it and is re-raised here once it ended. A run
        that cannot be started stays 'new'."""
        return self.start(on_output, on_input)._finish()

    def _finish(self):
        """Pump until this started run finished or was moved to the
        background; stop it on the way out of an interruption. Returns
        self."""
        try:
            self._pump_until_done(stop_at_yield=True)
            cb = self._cb
            if cb is not None and cb.error is not None:
                self._pump_until_done()   # a callback raised: cancelled, to its end
        except BaseException:
            # interrupted (Ctrl-C between pumps) or the loop failed: stop it
            self._stop()
            raise
        self._raise_callback_error()
        return self

    def _stop(self):
        """End the command on the way out of an interruption: close() ends a
        run still its own, but only lets go of one moved to the background
        meanwhile, which is cancelled and waited for first."""
        try:
            s = self._session
            if s is not None and self._core is None and self._ptr:
                with s._guard():
                    yielded = self._ptr and self._yielded_now()
                if yielded:
                    self.cancel()
                    self._pump_until_done()
        except BaseException:
            pass
        self.close()

    def start_task(self, on_output: Optional[OutputCallback] = None,
                   on_input: Optional[InputCallback] = None) -> Task:
        """Start this run (state 'new') in the background, as a task of its
        session, and return the Task; this Run is then the task's run
        (Task.run). LimitError when the session holds its maximum of tasks;
        the run then stays 'new'."""
        s = self._session_of_new()
        with s._guard():
            sp = s._live()
            rp = self._new_ptr()
            if on_output is not None:
                self._set_callback(on_output)
            if on_input is not None:
                self._set_input_callback(on_input)
            out = ctypes.c_void_p()
            _check(_lib.shexec_run_start_task(ctypes.byref(out), rp), sp)
            tp = out.value
            core = _TaskCore(tp, rp, self.command)
            core.id = _lib.shexec_task_id(tp).decode("ascii", "replace")
            # the callbacks now live as long as the C task, not this object
            core.cb, core.cfunc, core.icfunc = self._cb, self._cfunc, self._icfunc
            if core.cb is not None:
                core.cb.run_of = _task_run_finder(s, core)
            self._ptr = None
            self._cfunc = None
            self._icfunc = None
            self._attach(core)
            s._task_cores[tp] = core
            task = s._task_object(tp, core)
            feed, self._feed = self._feed, None
            if feed:
                task.write(feed)
        return task

    # -- completion ----------------------------------------------------------

    def _snapshot(self, ptr):
        self._results = dict((k, read(ptr)) for k, read in _RESULTS.items())
        if self._yield_id is None:
            self._yield_id = self._results["yield_task"]
        # a yielded run that ended: what was new then stays readable once
        # (read_new()); a live one let go of leaves it to its task's readers
        if self._results["yielded"] != YIELD_NONE and _finished(self._lib, ptr):
            for st, name in _STREAM_NAMES.items():
                self._results["new_" + name] = _read_out(self._lib.shexec_run_read_new, ptr, st)
        if self._tool and _finished(self._lib, ptr):
            out = ctypes.c_void_p()
            rc = self._lib.shexec_tool_result(ctypes.byref(out), ptr)
            try:
                result = _take_json(out.value)
                self._tool_result = result if rc == OK else _error(rc)
            except Exception as e:
                self._tool_result = e

    def _sync(self):
        """True when the run finished (or was closed). A foreground run's
        results are then copied and its C run freed."""
        core = self._core
        if core is not None:
            s = self._session
            with s._guard():
                return bool(_finished(_lib, _task_run_ptr(s, core)))
        if not self._ptr:
            return True
        s = self._session
        if s._forked():
            raise ClosedError(ESTATE, "the run belongs to the parent process (fork)")
        with s._guard():
            ptr = self._ptr
            if not ptr:
                return True
            if not _finished(self._lib, ptr):
                return False
            self._snapshot(ptr)
            self._release(ptr)
        return True

    def _release(self, ptr):
        self._ptr = None
        cb, cfuncs, s = self._cb, (self._cfunc, self._icfunc), self._session
        if cb is not None:
            cb.ptr = None
            cb.fn = None      # no more calls; drop the user's closures
            cb.input_fn = None
            cb.run_of = None
        self._cfunc = None
        self._icfunc = None
        self._session = None
        s._free_run_ptr(ptr, cfuncs)

    def _yielded_now(self):
        """True when the foreground C run was moved to the background; notes
        the task's id (call with the lock held, the run live)."""
        ptr = self._ptr
        if not self._lib.shexec_run_yielded(ptr, None):
            return False
        if self._yield_id is None:
            self._yield_id = _yield_task_id(ptr)
        return True

    def _pump_until_done(self, timeout_ms=None, stop_at_yield=False):
        """Pump until the run finished (True) or timeout_ms passed (False);
        with stop_at_yield, also until it was moved to the background
        (True)."""
        deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0
        while not self._sync():
            s = self._session
            if s is None:     # finished by another thread meanwhile
                continue
            if not self._started:
                raise StateError(ESTATE, "the run has not been started")
            # a yield comes at the end of a loop round, not as an end: shorter
            # slices notice it soon
            slice_ms = _YIELD_SLICE_MS if stop_at_yield else _SLICE_MS
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                slice_ms = max(1, min(slice_ms, int(left * 1000) + 1))
            with s._guard():
                if self._core is None:
                    if not self._ptr:
                        continue
                    if self._yielded_now() and stop_at_yield:
                        return True
                sp = s._live()
                _check(s._pump_call(_lib.shexec_session_wait, sp, slice_ms), sp)
        return True

    def _raise_callback_error(self):
        cb = self._core.cb if self._core is not None else self._cb
        if cb is not None and cb.error is not None:
            err, cb.error = cb.error, None
            raise err

    # -- the live handle -------------------------------------------------------

    def wait(self, timeout_ms: Optional[float] = None) -> bool:
        """Pump the session until this run finished (True) or timeout_ms
        passed (False). Re-raises an exception of its output callback (for
        a task's run, as soon as it is pending)."""
        done = self._pump_until_done(timeout_ms)
        if done or self._core is not None:
            self._raise_callback_error()
        return done

    @property
    def done(self) -> bool:
        """True once the run finished (its results are final)."""
        return self._sync()

    def _live_call(self, fn, *args):
        """fn(C run, *args) on the live run, checked; PipeError once ended."""
        s = self._session
        if s is None:
            raise PipeError(EPIPE, "the command has ended")
        with s._guard():
            if self._core is not None:
                rp = _task_run_ptr(s, self._core)
            else:
                rp = self._ptr
                if not rp:
                    raise PipeError(EPIPE, "the command has ended")
            return _check(fn(rp, *args), s._ptr)

    def cancel(self) -> None:
        """SIGTERM the run's process group now, SIGKILL after the grace
        period; it ends as the loop is pumped (state 'cancelled'; 'killed'
        for a task's run, as Task.kill())."""
        if self._core is None and self._sync():
            return
        s = self._session
        with s._guard():
            if self._core is not None:
                _check(_lib.shexec_run_cancel(_task_run_ptr(s, self._core)), s._ptr)
            elif self._ptr:
                _check(_lib.shexec_run_cancel(self._ptr), s._ptr)

    def send_signal(self, sig: Union[str, int]) -> None:
        """Send a signal to the running command's processes (its process
        group, or every process of its cgroup): a name ("SIGINT", "INT")
        or a number (signal.SIGINT) of SIGHUP, SIGINT, SIGQUIT, SIGKILL,
        SIGUSR1, SIGUSR2, SIGTERM, SIGCONT, SIGSTOP. SIGINT is a
        terminal's Ctrl+C (Run.interrupted then says so). Nothing of the
        timeout or cancel changes: a command that dies of it ends
        'signaled'. InvalidArgumentError for another signal, StateError
        when the command is not running (not started, or ended)."""
        n = signal_number(sig)
        if self._core is None and self._started and self._sync():
            raise StateError(ESTATE, "the command has finished: no signal was sent")
        s = self._session
        if s is None:
            raise StateError(ESTATE, "the command has finished: no signal was sent")
        with s._guard():
            if self._core is not None:
                rp = _task_run_ptr(s, self._core)
            else:
                rp = self._ptr
                if not rp:
                    raise StateError(ESTATE, "the command has finished: no signal was sent")
            _check(_lib.shexec_run_send_signal(rp, n), s._ptr)

    def write(self, data: Data) -> None:
        """Queue input for the command (stdin=True, or a pty). LimitError
        when what it has not read yet would pass the session's bound on
        queued input: nothing was queued, write it again once it read."""
        b = _to_bytes(data, "input")
        if self._core is None and self._sync():
            raise PipeError(EPIPE, "the command has ended")
        self._live_call(_lib.shexec_run_write, b, len(b))

    def type_input(self, data: Data) -> None:
        """Type input as a person at a terminal (what a model writes): on a
        pty as write(); on pipes each "\\x03" (^C) is a SIGINT to the
        command instead of a byte of its input (also without stdin=True),
        the text around it queued in order (shexec_run_type_input())."""
        b = _to_bytes(data, "input")
        if self._core is None and self._sync():
            raise PipeError(EPIPE, "the command has ended")
        self._live_call(_lib.shexec_run_type_input, b, len(b))

    def close_stdin(self) -> None:
        """EOF after the queued input (^D on a terminal)."""
        if self._core is None and self._sync():
            raise PipeError(EPIPE, "the command has ended")
        self._live_call(_lib.shexec_run_close_stdin)

    def set_pty_size(self, cols: int, rows: int) -> None:
        """Resize the running command's terminal (a pty run), as a window
        is resized: its foreground process group gets SIGWINCH. StateError
        for a run on pipes; PipeError once it has ended."""
        c = _uint(cols, "columns", _U32_MAX)
        r = _uint(rows, "rows", _U32_MAX)
        if self._core is None and self._sync():
            raise PipeError(EPIPE, "the command has ended")
        self._live_call(_lib.shexec_run_set_pty_size, c, r)

    def close(self) -> None:
        """Free the C run; a running command is terminated and reaped first
        (one moved to the background is only let go of: it goes on as its
        task, and this Run keeps what it had read). Idempotent; the results
        of a finished run stay readable. Does nothing for a task's run (free
        the Task)."""
        if self._core is not None or not getattr(self, "_ptr", None):
            return
        if self._session._forked():   # the parent's run: forget it, never signal it
            self._ptr = None
            self._session = None
            self._results = None      # and what it would have reported
            return
        if not self._sync():
            s = self._session
            with s._guard():
                ptr = self._ptr
                if ptr:
                    self._snapshot(ptr)
                    if self._started and self._results["yielded"] == YIELD_NONE:
                        self._results["state"] = "cancelled"
                    self._release(ptr)

    free = close

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_core", None) is not None:
            return        # a task's run goes with its task
        ptr = getattr(self, "_ptr", None)
        if not ptr:
            return
        try:
            self._release(ptr)
        except Exception:
            pass

    # -- results ---------------------------------------------------------------

    def _result(self, name):
        read = _RESULTS[name]
        core = self._core
        if core is not None:
            s = self._session
            with s._guard():
                return read(_task_run_ptr(s, core))
        if not self._sync():
            s = self._session
            if s is not None:
                with s._guard():
                    ptr = self._ptr
                    if ptr:
                        return read(ptr)
            # finished by another thread meanwhile: the copy is there
        if self._results is None:
            raise ClosedError(ESTATE, "the run belongs to the parent process (fork)")
        return self._results[name]

    @property
    def state(self) -> str:
        return self._result("state")

    @property
    def exit_code(self) -> int:
        """Exit status once exited, else -1 (always -1 for adopted leftovers)."""
        return self._result("exit_code")

    returncode = exit_code

    @property
    def signal(self) -> int:
        return self._result("signal")

    @property
    def interrupted(self) -> bool:
        """True once a SIGINT reached the command (send_signal("SIGINT"),
        or a ^C typed on pipes or at a terminal), however it then ended:
        state, exit_code and signal say how."""
        return self._result("interrupted")

    @property
    def ok(self) -> bool:
        """True when the command exited with status 0."""
        return self.state == "exited" and self.exit_code == 0

    @property
    def stdout(self) -> bytes:
        """Captured stdout (bytes; so far, while running)."""
        return self._result("stdout")

    @property
    def stderr(self) -> bytes:
        return self._result("stderr")

    @property
    def text(self) -> str:
        """stdout decoded as UTF-8 with errors='replace'."""
        return self.stdout.decode("utf-8", "replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    @property
    def stdout_truncated(self) -> bool:
        return self._result("stdout_truncated")

    @property
    def stderr_truncated(self) -> bool:
        return self._result("stderr_truncated")

    @property
    def truncated(self) -> bool:
        """True when either stream was cut by the output limit."""
        return self.stdout_truncated or self.stderr_truncated

    @property
    def stdout_total(self) -> int:
        return self._result("stdout_total")

    @property
    def stderr_total(self) -> int:
        return self._result("stderr_total")

    @property
    def stdout_counts(self) -> Dict[str, int]:
        """What the output limit kept of stdout and what stdout carried:
        {"kept_chars", "kept_bytes", "total_chars", "total_bytes"}, as the
        truncation notice counts them (a character is a UTF-8 sequence, or
        an invalid byte on its own), of the output as captured (after ANSI
        stripping and redaction). So far while the command runs; all 0
        before the start. The kept counts leave out the notice."""
        return dict(self._result("stdout_counts"))   # a copy, as for cost

    @property
    def stderr_counts(self) -> Dict[str, int]:
        """What the output limit kept of stderr and what it carried (see
        stdout_counts)."""
        return dict(self._result("stderr_counts"))

    @property
    def stdout_spill(self) -> Dict[str, Any]:
        """What became of stdout's spill file (Session.set_spill_dir):
        {"state", "path", "bytes", "error"}. state SPILL_NONE (no spill dir,
        or the stream stayed within its limit), SPILL_WRITING (still
        running), SPILL_WHOLE (the file holds all of it), SPILL_CAPPED (its
        first `bytes` bytes: file_max or the session's budget), SPILL_FAILED
        (`error` is the errno; no file), SPILL_REMOVED (removed since, to
        make room). The state is the one when the run's results were taken:
        a finished run's file is removed with its session all the same."""
        return dict(self._result("stdout_spill"))   # a copy, as for cost

    @property
    def stderr_spill(self) -> Dict[str, Any]:
        """What became of stderr's spill file (see stdout_spill)."""
        return dict(self._result("stderr_spill"))

    @property
    def stdout_redactions(self) -> int:
        """How many secrets were hidden in stdout (redact_value, redact_env,
        redact_shapes, the run's redact_values)."""
        return self._result("stdout_redactions")

    @property
    def stderr_redactions(self) -> int:
        """How many secrets were hidden in stderr."""
        return self._result("stderr_redactions")

    @property
    def duration_ms(self) -> int:
        return self._result("duration_ms")

    @property
    def pid(self) -> int:
        """The command's shell pid, also its process group id (0 before the
        start). It stays after the run ended, when the id may already be
        another process's: stop the command with cancel(), never by pid."""
        return self._result("pid")

    @property
    def timeout_ms(self) -> int:
        """The timeout in force in ms (0: none). Before the start: what a
        foreground start would give (the session default, or this run's,
        clamped to the session maximum)."""
        return self._result("timeout_ms")

    @property
    def leftovers(self) -> str:
        return self._result("leftovers")

    @property
    def leftover_task(self) -> Optional[str]:
        return self._result("leftover_task")

    @property
    def notice(self) -> str:
        return self._result("notice")

    @property
    def cost(self) -> Dict[str, Any]:
        """What the command cost once it finished: {"source", "user_usec",
        "system_usec", "peak_bytes"}. source 'cgroup' counts every process
        of the command's cgroup (set_containment), 'rusage' the shell and
        the children it waited for (not what it left running), 'none' (all
        0) before the end. CPU times in microseconds; peak_bytes is the
        peak memory, 0 when unknown."""
        return dict(self._result("cost"))   # a copy: the snapshot stays as it was

    @property
    def limits_hit(self) -> List[str]:
        """The names of the limits the command ran into once it finished
        (Session.set_limit, the `limits` argument), in the order 'memory',
        'swap', 'pids', 'cpu': 'memory' when the out-of-memory killer ended
        one of its processes at the memory limit, 'pids' when a fork failed
        at the process limit. [] when none, or before the end. The notice
        says the same in words."""
        return list(self._result("limits_hit"))   # a copy, as for cost

    @property
    def task_id(self) -> Optional[str]:
        """The id of the task this run was started as, or goes on as since it
        was moved to the background (see yielded), or None. Take it with
        Session.take_task()."""
        if self._core is not None:
            return self._core.id
        if self._yield_id is None and (self._ptr or self._results is not None):
            self._yield_id = self._result("yield_task")
        return self._yield_id

    @property
    def yielded(self) -> str:
        """Whether the command was moved to the background, and why:
        YIELD_NONE ('none'), YIELD_TIME (yield_ms passed), YIELD_TIMEOUT
        (its timeout passed, with background_on_timeout), YIELD_IDLE (its
        idle timeout passed, with IDLE_YIELD) or YIELD_INPUT (it waits for
        input, with yield_ms). A string, as state: compare it with
        YIELD_NONE rather than test its truth."""
        return self._result("yielded")

    @property
    def deadline(self) -> str:
        """Which deadline ended a 'timed_out' run: DEADLINE_TIMEOUT (its
        timeout, or the background_on_timeout cap) or DEADLINE_IDLE (its
        idle timeout); DEADLINE_NONE otherwise."""
        return self._result("deadline")

    @property
    def input_wait(self) -> str:
        """Whether the command waits for input: INPUT_WAITING (one of its
        processes is blocked reading its terminal or stdin pipe; found
        after Session.input_look_ms of silence), INPUT_NO (not found so,
        or not looked at yet; output or input since clears it), or
        INPUT_UNKNOWN (this system cannot tell)."""
        return self._result("input")[0]

    @property
    def prompt(self) -> Optional[bytes]:
        """While it waits for input: the last line of its output so far,
        unfinished (bytes, usually the question; at most 256 bytes); None
        otherwise."""
        return self._result("input")[1]

    @property
    def prompt_text(self) -> Optional[str]:
        """prompt decoded as UTF-8 with errors='replace' (None when not
        waiting)."""
        p = self.prompt
        return None if p is None else p.decode("utf-8", "replace")

    @property
    def echo_off(self) -> bool:
        """True while it waits for input at a terminal that does not echo (a
        password prompt)."""
        return self._result("input")[2]

    @property
    def quiet_ms(self) -> int:
        """How long the command has printed nothing, in ms: since its last
        output was read (by any pump of the session), or its start; for a
        run that ended, until its end."""
        return self._result("quiet_ms")

    def read_new(self, stream: Stream = "stdout") -> bytes:
        """Only the output that came since the previous read of what is
        new, for a run moved to the background (see yielded) or a task's
        run: what Task.read() of its task gives (the two share the mark),
        without taking the task. The first read starts where stdout at the
        yield stopped; a UTF-8 character is never split between reads.
        b"" for a run never moved to the background. Once a yielded run
        has finished and its results were taken, what was new then is
        given once."""
        st = _stream(stream)
        s = self._session
        if self._core is not None:
            with s._guard():
                return _read_out(_lib.shexec_run_read_new, _task_run_ptr(s, self._core), st)
        if s is not None:
            with s._guard():
                ptr = self._ptr
                if ptr:
                    return _read_out(_lib.shexec_run_read_new, ptr, st)
        results = self._results
        if results is None:
            return b""
        key = "new_" + _STREAM_NAMES[st]
        data = results.get(key, b"")
        results[key] = b""
        return data

    def tool_result(self) -> Dict[str, Any]:
        """The bash tool's JSON result (a dict, as call_tool() returns it) of
        this finished foreground run from Session.tool_prepare(); its "cwd"
        is the session's when the run's results were collected. StateError
        for a run not finished, a task's run, or a run not made by
        tool_prepare()."""
        if not self._tool or self._core is not None:
            raise StateError(ESTATE, "only a foreground run from Session.tool_prepare() "
                                     "has a tool result")
        if not self._sync() or self._tool_result is None:
            raise StateError(ESTATE, "the run has not finished")
        if isinstance(self._tool_result, BaseException):
            raise self._tool_result
        return self._tool_result

    def __repr__(self) -> str:
        try:
            st = self.state
        except ShexecError as e:
            return "<shexec.Run %r dead: %s>" % (self.command, e.message)
        extra = " exit_code=%d" % self.exit_code if st == "exited" else ""
        if self._core is not None:
            extra += " task=%s" % self._core.id
        elif self._yield_id is not None:
            extra += " yielded=%s task=%s" % (self.yielded, self._yield_id)
        return "<shexec.Run %r state=%s%s>" % (self.command, st, extra)


# --------------------------------------------------------------------------
# Task
# --------------------------------------------------------------------------

class _TaskCore(object):
    """What the session keeps per C task: the pointers (None once freed),
    the callback the C side may call while the task exists, and a weak
    reference to the Run object reading its run."""
    __slots__ = ("ptr", "run", "id", "command", "cb", "cfunc", "icfunc", "dead", "view",
                 "__weakref__")

    def __init__(self, ptr, run, command):
        self.ptr = ptr
        self.run = run
        self.id = ""
        self.command = command
        self.cb = None
        self.cfunc = None
        self.icfunc = None
        self.dead = None
        self.view = None

    def mark_dead(self, why):
        self.ptr = None
        self.run = None
        self.dead = why
        if self.cb is not None:
            self.cb.ptr = None
            self.cb.run_of = None

    def release(self):
        self.cfunc = None
        self.icfunc = None


def _task_run_finder(session, core):
    """How a task's input callback finds the Run it is given: the task's
    Run object, made again (as take_task() would) if it was dropped. Holds
    the session weakly: the session holds the core."""
    session_ref = weakref.ref(session)

    def find():
        run = core.view() if core.view is not None else None
        if run is None and core.ptr is not None:
            s = session_ref()
            if s is not None:
                run = s._task_object(core.ptr, core).run
        return run

    return find


class Task(object):
    """A background command owned by its session (Session.start_task(),
    Run.start_task(), Session.take_task()): a run started in the
    background. Its run, Task.run, holds its settings and results (state,
    exit code, output, input, cancel); the properties and methods below
    that read or feed the command are shortcuts to it, and what only a task
    has is here: its id, read() (only what is new) and read_counts(),
    watch() (until quiet, ended or asking), kill(), free(), tool_result()
    (the task tools' JSON result of it).
    Dropping the object does not stop the task; free() / close() / the
    `with` block does. After the session closed or the task was freed,
    every method but .id raises ClosedError (Task.run's too)."""

    def __init__(self, session: Session, core: _TaskCore) -> None:
        self._session = session   # keeps the session alive while we are
        self._core = core
        run = core.view() if core.view is not None else None
        self._run = run if run is not None else Run._of_task(session, core)

    @property
    def id(self) -> str:
        """The task's id: "t" and 12 hex digits."""
        return self._core.id

    @property
    def command(self) -> Optional[Data]:
        return self._core.command

    @property
    def session(self) -> Session:
        return self._session

    @property
    def run(self) -> Run:
        """The task's Run: state, exit_code, stdout, stderr, pid,
        timeout_ms, ..., write(), cancel() (the same as kill())."""
        return self._run

    @property
    def alive(self) -> bool:
        """False once the task was freed or its session closed."""
        return self._core.ptr is not None

    def _call(self, fn, *args):
        s = self._session
        with s._guard():
            _task_run_ptr(s, self._core)    # raises when dead
            return fn(self._core.ptr, *args)

    @property
    def state(self) -> str:
        return self._run.state

    @property
    def done(self) -> bool:
        return self._run.done

    @property
    def exit_code(self) -> int:
        """Exit status once exited, else -1 (always -1 for adopted leftovers)."""
        return self._run.exit_code

    @property
    def signal(self) -> int:
        return self._run.signal

    @property
    def interrupted(self) -> bool:
        """True once a SIGINT reached the task (Run.interrupted)."""
        return self._run.interrupted

    @property
    def duration_ms(self) -> int:
        return self._run.duration_ms

    @property
    def cost(self) -> Dict[str, Any]:
        """CPU time and peak memory once the task finished (Run.cost)."""
        return self._run.cost

    @property
    def limits_hit(self) -> List[str]:
        """The limits the task ran into once it finished (Run.limits_hit)."""
        return self._run.limits_hit

    @property
    def deadline(self) -> str:
        """Which deadline ended a 'timed_out' task (Run.deadline)."""
        return self._run.deadline

    @property
    def input_wait(self) -> str:
        """Whether the task waits for input: INPUT_* (Run.input_wait)."""
        return self._run.input_wait

    @property
    def prompt(self) -> Optional[bytes]:
        """What it asks while it waits for input, bytes, else None
        (Run.prompt)."""
        return self._run.prompt

    @property
    def prompt_text(self) -> Optional[str]:
        return self._run.prompt_text

    @property
    def echo_off(self) -> bool:
        """True while it waits for input with echo off (Run.echo_off)."""
        return self._run.echo_off

    def output(self, stream: Stream = "stdout") -> bytes:
        """All output of the stream so far (bounded, as for runs)."""
        return self._run._result(_STREAM_NAMES[_stream(stream)])

    def read(self, stream: Stream = "stdout") -> bytes:
        """Only the output that arrived since the previous read(), and mark
        it read."""
        return self._call(lambda tp: _read_out(_lib.shexec_task_read, tp, _stream(stream)))

    def read_counts(self, stream: Stream = "stdout") -> Dict[str, int]:
        """What the last read() of the stream kept and covered:
        {"kept_chars", "kept_bytes", "total_chars", "total_bytes"} of that
        chunk (more total than kept when the limit cut it: its notice gives
        the same numbers). All 0 before the first read."""
        st = _stream(stream)

        def counts(tp):
            kc, kb, tc, tb = _u64(), _u64(), _u64(), _u64()
            _lib.shexec_task_read_counts(tp, st, ctypes.byref(kc), ctypes.byref(kb),
                                         ctypes.byref(tc), ctypes.byref(tb))
            return {"kept_chars": kc.value, "kept_bytes": kb.value,
                    "total_chars": tc.value, "total_bytes": tb.value}
        return self._call(counts)

    @property
    def quiet_ms(self) -> int:
        """How long the task has printed nothing, in ms (Run.quiet_ms)."""
        return self._run.quiet_ms

    def watch(self, quiet_ms: int = 0, max_ms: Optional[float] = None) -> str:
        """Pump the session until the task has finished (WATCH_ENDED),
        waits for input (WATCH_INPUT), has printed nothing for quiet_ms
        (WATCH_QUIET), or max_ms has passed (WATCH_TIME; None: no limit),
        whichever comes first; a host follows a build or a server's log
        with it, then read()s what came. The quiet counts from the later of
        the task's last output and this call; quiet_ms 0: not watched for.
        max_ms 0: one round, taking in what is there. Re-raises an
        exception of its output callback. The wait is made in slices, so
        that Ctrl-C is seen, without changing when it returns."""
        quiet_ms = int(quiet_ms)
        if quiet_ms < 0 or quiet_ms > 0xFFFFFFFF:
            raise InvalidArgumentError(EINVAL, "quiet_ms out of range")
        if max_ms is not None and max_ms < 0:
            raise InvalidArgumentError(EINVAL, "max_ms must be >= 0")
        start = time.monotonic()
        deadline = None if max_ms is None else start + max_ms / 1000.0
        first = True
        while True:
            s = self._session
            with s._guard():
                _task_run_ptr(s, self._core)    # raises when dead
                tp, rp = self._core.ptr, self._core.run
                need = 0
                if quiet_ms:
                    # quiet so far, counted from this call: a slice that
                    # ended in quiet after output came is looked at again
                    since = int((time.monotonic() - start) * 1000)
                    need = quiet_ms - min(_lib.shexec_run_quiet_ms(rp), since)
                    if need <= 0 and not first:
                        return WATCH_QUIET
                    need = max(need, 1)
                left = None if deadline is None else int((deadline - time.monotonic()) * 1000)
                if left is not None and left <= 0 and not first:
                    return WATCH_TIME
                slice_ms = _SLICE_MS if left is None else max(0, min(_SLICE_MS, left))
                rc = s._pump_call(_lib.shexec_task_watch, tp, need, slice_ms)
                _check(rc, s._ptr)
            first = False
            self._run._raise_callback_error()
            why = _WATCH_NAMES.get(rc, WATCH_TIME)
            if why in (WATCH_ENDED, WATCH_INPUT):
                return why

    def output_total(self, stream: Stream = "stdout") -> int:
        return self._run._result(_STREAM_NAMES[_stream(stream)] + "_total")

    def truncated(self, stream: Stream = "stdout") -> bool:
        return self._run._result(_STREAM_NAMES[_stream(stream)] + "_truncated")

    def output_counts(self, stream: Stream = "stdout") -> Dict[str, int]:
        """What the output limit kept of the stream and what it carried
        (Run.stdout_counts)."""
        return dict(self._run._result(_STREAM_NAMES[_stream(stream)] + "_counts"))

    def spill(self, stream: Stream = "stdout") -> Dict[str, Any]:
        """What became of the stream's spill file (Run.stdout_spill)."""
        return dict(self._run._result(_STREAM_NAMES[_stream(stream)] + "_spill"))

    def redactions(self, stream: Stream = "stdout") -> int:
        """How many secrets were hidden in the stream so far."""
        return self._run._result(_STREAM_NAMES[_stream(stream)] + "_redactions")

    def tool_result(self, stdout: Data = b"", stderr: Data = b"",
                    status: Optional[str] = None) -> Dict[str, Any]:
        """The task as the task tools' JSON result (a dict, task_output's
        form: "task_id", "status", "stdout", "stderr", then "exit_code" and
        "state" once ended or "waiting_for_input" while running, "truncated",
        and "omitted", "full_output", "redacted" when they apply), with
        `stdout` and `stderr` (str or bytes, e.g. what read() returned) as
        its output: a host that shows a task's output its own way gives the
        model the same object the tools would. Nothing is read or freed:
        the task stays as it was. `status` None: "completed" once the
        command ended, else "running" (task_kill says "killed"). ClosedError
        once the task is gone (freed, its session closed, or read to its
        end by the tool layer), as for every method."""
        out = _to_bytes(stdout, "stdout")
        err = _to_bytes(stderr, "stderr")
        st = None if status is None else _cstr(status, "status")
        s = self._session
        with s._guard():
            _task_run_ptr(s, self._core)    # raises when dead
            json_out = ctypes.c_void_p()
            rc = _lib.shexec_tool_task_result(ctypes.byref(json_out), self._core.ptr, st,
                                              out, len(out), err, len(err))
            result = _take_json(json_out.value)
            _check(rc, s._ptr)
            return result

    def write(self, data: Data) -> None:
        """Queue input (the task needs stdin=True, or a pty). PipeError when
        stdin was not enabled, is closed, or the task ended; LimitError past
        the bound on input it has not read (nothing queued: write again)."""
        self._run.write(data)

    def close_stdin(self) -> None:
        self._run.close_stdin()

    def type_input(self, data: Data) -> None:
        """Type input as at a terminal: ^C ("\\x03") on pipes is a SIGINT
        (Run.type_input)."""
        self._run.type_input(data)

    def send_signal(self, sig: Union[str, int]) -> None:
        """Send a signal to the task's processes: "SIGINT" (Ctrl+C),
        "SIGTERM", ... (Run.send_signal). StateError once it has ended."""
        self._run.send_signal(sig)

    def set_pty_size(self, cols: int, rows: int) -> None:
        """Resize the task's terminal while it runs (Run.set_pty_size)."""
        self._run.set_pty_size(cols, rows)

    def kill(self) -> None:
        """SIGTERM the task's process group now, SIGKILL after the grace;
        it ends (state 'killed') as the loop is pumped."""
        s = self._session
        with s._guard():
            _check(self._call(lambda tp: _lib.shexec_run_cancel(_lib.shexec_task_run(tp))), s._ptr)

    @property
    def callback_error(self) -> Optional[BaseException]:
        """A pending exception raised by this task's output callback."""
        cb = self._core.cb
        return cb.error if cb is not None else None

    def wait(self, timeout_ms: Optional[float] = None) -> bool:
        """Pump the session until the task finished (True) or timeout_ms
        passed (False). Re-raises an exception of its output callback."""
        return self._run.wait(timeout_ms)

    def free(self) -> None:
        """Free the task (terminating and reaping it if still running).
        Idempotent; afterwards the object, and its run, are dead."""
        core = self._core
        if core.ptr is None:
            return
        s = self._session
        if s._forked():
            core.mark_dead("its session belongs to the parent process")
            return
        with s._guard():
            tp = core.ptr
            if tp is None:
                return
            if s._pumping:
                raise StateError(ESTATE, "a task cannot be freed from inside a callback")
            s._forget_task(core)
            core.mark_dead("it was freed")
            try:
                s._pump_call(_lib.shexec_task_free, tp)
            finally:
                core.release()

    close = free

    def __enter__(self) -> Task:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.free()

    def __repr__(self) -> str:
        if self._core.ptr is None:
            return "<shexec.Task %s dead: %s>" % (self._core.id, self._core.dead)
        return "<shexec.Task %s state=%s>" % (self._core.id, self.state)
