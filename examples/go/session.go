package shexec

/*
#include <stdint.h>
#include <stdlib.h>
#include <shexec.h>

extern void shexecGoOutput(uintptr_t handle, int stream, char *data, size_t len);

// The library's output callback for every Go run: `user` is a cgo.Handle,
// an integer, passed through C as the opaque pointer and back.
static void shx_go_output(void *user, int stream, const char *data, size_t len)
{
	shexecGoOutput((uintptr_t)user, stream, (char *)data, len);
}

// The handle is turned into the `user` pointer here, in C: a uintptr_t
// made into an unsafe.Pointer on the Go side is what `go vet` rightly
// flags as a possible misuse.
static int shx_go_set_output(shexec_run *run, uintptr_t handle)
{
	return shexec_run_set_output_fn(run, handle ? shx_go_output : NULL, (void *)handle);
}

// The command by pointer and length: no copy, and a NUL inside it is the
// library's to refuse (SHEXEC_EINVAL) instead of cutting the command short.
static int shx_go_run_new(shexec_run **out, shexec_session *s, _GoString_ command)
{
	return shexec_run_new_bytes(out, s, _GoStringPtr(command), _GoStringLen(command));
}
*/
import "C"

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/cgo"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// pumpSliceMs is how long one shexec_session_wait lasts while a context
// that can be cancelled is watched (Run), or while a Task.Wait lets other
// goroutines in between slices.
//
// Why slices rather than the session's descriptors and a self-pipe in our
// own poll(): the library's own wait stays the one loop (nothing to keep
// in step with shexec_session_pollfds/process, no extra descriptor per
// session, no goroutine per call to turn ctx.Done() into a write), a run
// that ends is seen at once (shexec_session_wait returns when something
// finishes), and the price is small and bounded: a cancellation is noticed
// within one slice, and a long command costs 40 short cgo calls a second.
// A context that can never be cancelled (Done() == nil) is waited for
// without slices.
const pumpSliceMs = 25

// Version is the library's version, "MAJOR.MINOR.PATCH".
func Version() string { return C.GoString(C.shexec_version()) }

// Session is one persistent shell session: its working directory follows
// the commands (a `cd` in one is where the next starts), and it holds the
// environment policy, the limits, the background tasks and the loop that
// drives them.
//
// A session is meant for one goroutine at a time, as the library's session
// is for one thread at a time. Misuse is safe: a mutex inside serializes
// every call, so commands from several goroutines run one after another
// (each sees the cwd the previous one left), never at once. Run holds the
// session for its whole command; Task.Wait lets other calls in between its
// short waits, so another goroutine can Kill, Read or Close meanwhile.
//
// Close ends everything the session still runs. A Session dropped without
// Close is closed when the garbage collector finds it unreachable, but
// only then: call Close.
type Session struct {
	mu    sync.Mutex
	ptr   *C.shexec_session            // nil once closed
	tasks map[*C.shexec_task]*taskCore // the tasks the host holds
}

// New creates a session. Defaults (shexec.h): the host's cwd, /bin/bash
// (else /bin/sh), the host's environment minus the deny list, a 2-minute
// default and 10-minute maximum timeout, 30,000 characters of output per
// stream, 10 tasks, leftovers adopted as tasks, and each command in a
// cgroup of its own where one can be made.
func New(opts ...Option) (*Session, error) {
	var p *C.shexec_session
	if rc := C.shexec_session_new(&p); rc != C.SHEXEC_OK {
		return nil, &Error{Code: Code(rc), Op: "new session", Msg: Code(rc).Description()}
	}
	s := &Session{ptr: p, tasks: make(map[*C.shexec_task]*taskCore)}
	// Tasks point to their session but the session only to their cores,
	// so no cycle keeps a forgotten session from its finalizer.
	runtime.SetFinalizer(s, (*Session).Close)
	for _, o := range opts {
		if err := o(s); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close ends every command and task the session still runs (SIGTERM, the
// kill grace, SIGKILL), frees them and the session. Tasks of the session
// are dead afterwards (their methods give ErrClosed). Idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr == nil {
		return nil
	}
	runtime.SetFinalizer(s, nil)
	cores := make([]*taskCore, 0, len(s.tasks))
	for _, c := range s.tasks {
		cores = append(cores, c)
		c.kill("its session was closed")
	}
	p := s.ptr
	s.ptr = nil
	s.tasks = nil
	// Callbacks may still be called while the free ends the commands: the
	// handles go only after it returned.
	C.shexec_session_free(p)
	for _, c := range cores {
		c.release()
	}
	return nil
}

// live returns the C session, or ErrClosed; the caller holds s.mu.
func (s *Session) live(op string) (*C.shexec_session, error) {
	if s.ptr == nil {
		return nil, closedError(op, "the session is closed")
	}
	return s.ptr, nil
}

// fail makes the *Error of a failed call from its code and the session's
// detail; the caller holds s.mu (errmsg is valid until the next call).
func (s *Session) fail(rc C.int, op string) error {
	msg := ""
	if s.ptr != nil {
		msg = C.GoString(C.shexec_session_errmsg(s.ptr))
	}
	if msg == "" {
		msg = Code(rc).Description()
	}
	return &Error{Code: Code(rc), Op: op, Msg: msg}
}

// call runs one setter-like C call under the lock and turns its code into
// an error.
func (s *Session) call(op string, fn func(p *C.shexec_session) C.int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.live(op)
	if err != nil {
		return err
	}
	if rc := fn(p); rc < 0 {
		return s.fail(rc, op)
	}
	return nil
}

// cstring copies s into C memory for a NUL-terminated argument; a NUL
// inside would silently cut it short, so it is refused as EINVAL. Free the
// result with C.free.
func cstring(s, what, op string) (*C.char, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, invalid(op, what+" contains a NUL byte")
	}
	return C.CString(s), nil
}

func cfree(p *C.char) {
	if p != nil {
		C.free(unsafe.Pointer(p))
	}
}

// millis turns a duration into the library's milliseconds, rounded up (a
// positive duration never becomes 0) and capped at the uint32 range.
func millis(d time.Duration) C.uint32_t {
	if d <= 0 {
		return 0
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > math.MaxUint32 {
		ms = math.MaxUint32
	}
	return C.uint32_t(ms)
}

func fromMillis(ms C.uint32_t) time.Duration { return time.Duration(ms) * time.Millisecond }

// ---------------------------------------------------------------------------
// Settings

// Cwd is the session's working directory (absolute); "" once closed.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr == nil {
		return ""
	}
	return C.GoString(C.shexec_session_cwd(s.ptr))
}

// SetCwd sets the directory the next commands start in (relative: to the
// current cwd). ErrNoCwd when it is missing or not a directory.
func (s *Session) SetCwd(dir string) error {
	cs, err := cstring(dir, "the directory", "set cwd")
	if err != nil {
		return err
	}
	defer cfree(cs)
	return s.call("set cwd", func(p *C.shexec_session) C.int { return C.shexec_session_set_cwd(p, cs) })
}

// SetShell sets the program that runs each command: the shell and its
// leading arguments (the library appends -c, the command and $0), e.g.
// SetShell("/bin/dash"). A name is looked up in the host's PATH now
// (ErrSpawn when not found). No arguments: the default (/bin/bash when
// executable, else /bin/sh).
func (s *Session) SetShell(argv ...string) error {
	const op = "set shell"
	if len(argv) == 0 {
		return s.call(op, func(p *C.shexec_session) C.int {
			return C.shexec_session_set_shell(p, nil, C.SHEXEC_WRAPPER_LOCAL)
		})
	}
	arr := (**C.char)(C.calloc(C.size_t(len(argv)+1), C.size_t(unsafe.Sizeof(uintptr(0)))))
	elems := unsafe.Slice(arr, len(argv)+1)
	defer func() {
		for _, e := range elems {
			cfree(e)
		}
		C.free(unsafe.Pointer(arr))
	}()
	for i, a := range argv {
		cs, err := cstring(a, "an argument", op)
		if err != nil {
			return err
		}
		elems[i] = cs
	}
	return s.call(op, func(p *C.shexec_session) C.int {
		return C.shexec_session_set_shell(p, arr, C.SHEXEC_WRAPPER_LOCAL)
	})
}

// Setenv sets name to value for every later command.
func (s *Session) Setenv(name, value string) error {
	return s.setenv(name, &value)
}

// Unsetenv removes name (also an inherited one) from every later command.
func (s *Session) Unsetenv(name string) error { return s.setenv(name, nil) }

func (s *Session) setenv(name string, value *string) error {
	const op = "setenv"
	cn, err := cstring(name, "the variable name", op)
	if err != nil {
		return err
	}
	defer cfree(cn)
	var cv *C.char
	if value != nil {
		if cv, err = cstring(*value, "the value", op); err != nil {
			return err
		}
		defer cfree(cv)
	}
	return s.call(op, func(p *C.shexec_session) C.int { return C.shexec_session_setenv(p, cn, cv) })
}

// Getenv reads a variable of the environment the next command starts with.
func (s *Session) Getenv(name string) (string, bool) {
	if strings.IndexByte(name, 0) >= 0 {
		return "", false
	}
	cn := C.CString(name)
	defer cfree(cn)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr == nil {
		return "", false
	}
	v := C.shexec_session_getenv(s.ptr, cn)
	if v == nil {
		return "", false
	}
	return C.GoString(v), true
}

// SetEnvInherit chooses whether commands start from the host's environment
// (true, the default) or from an empty one.
func (s *Session) SetEnvInherit(inherit bool) error {
	return s.call("set env inherit", func(p *C.shexec_session) C.int {
		return C.shexec_session_set_env_inherit(p, cbool(inherit))
	})
}

// EnvDeny adds a glob to the deny list: matching variables are removed.
func (s *Session) EnvDeny(glob string) error {
	cg, err := cstring(glob, "the glob", "env deny")
	if err != nil {
		return err
	}
	defer cfree(cg)
	return s.call("env deny", func(p *C.shexec_session) C.int { return C.shexec_session_env_deny(p, cg) })
}

// EnvAllow adds a glob to the allow list: matching variables are kept even
// when denied.
func (s *Session) EnvAllow(glob string) error {
	cg, err := cstring(glob, "the glob", "env allow")
	if err != nil {
		return err
	}
	defer cfree(cg)
	return s.call("env allow", func(p *C.shexec_session) C.int { return C.shexec_session_env_allow(p, cg) })
}

// ApplyAgentEnv sets the agent environment preset: pagers that do not
// page, no terminal prompts from git, DEBIAN_FRONTEND=noninteractive, ...
// and, for pipe commands, NO_COLOR=1 and TERM=dumb (see shexec.h).
func (s *Session) ApplyAgentEnv() error {
	return s.call("apply agent env", func(p *C.shexec_session) C.int { return C.shexec_session_apply_agent_env(p) })
}

// SetPersistEnv keeps what a command leaves in its shell (exports, and
// with bash its variables and functions) for the next commands.
func (s *Session) SetPersistEnv(on bool) error {
	return s.call("set persist env", func(p *C.shexec_session) C.int {
		return C.shexec_session_set_persist_env(p, cbool(on))
	})
}

// SetTimeouts sets the default and the maximum command timeout. A larger
// WithTimeout is capped at max. ErrInvalid for zero values or def > max.
func (s *Session) SetTimeouts(def, max time.Duration) error {
	return s.call("set timeouts", func(p *C.shexec_session) C.int {
		return C.shexec_session_set_timeouts_ms(p, millis(def), millis(max))
	})
}

// Timeouts reads the default and the maximum command timeout.
func (s *Session) Timeouts() (def, max time.Duration) {
	var d, m C.uint32_t
	s.mu.Lock()
	C.shexec_session_timeouts_ms(s.ptr, &d, &m) // a closed session reads the defaults
	s.mu.Unlock()
	return fromMillis(d), fromMillis(m)
}

// SetKillGrace sets the time between SIGTERM and SIGKILL when a command is
// ended (timeout, cancel, kill, close); 0 sends SIGKILL right after SIGTERM.
func (s *Session) SetKillGrace(d time.Duration) error {
	return s.call("set kill grace", func(p *C.shexec_session) C.int {
		return C.shexec_session_set_kill_grace_ms(p, millis(d))
	})
}

// KillGrace reads the kill grace.
func (s *Session) KillGrace() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fromMillis(C.shexec_session_kill_grace_ms(s.ptr))
}

// SetLeftoversDrain sets how long, after a command's shell exits, what it
// left running is read as the command's output: until it ends or prints
// nothing for d (default 100 ms, at most 2 s; ten times that in all), then
// it is adopted. The lines of `echo word &` or `seq 3 > >(tac)` are then the
// command's, and a server's first lines. 0: the command ends at its
// shell's exit. ErrInvalid above 2 s.
func (s *Session) SetLeftoversDrain(d time.Duration) error {
	return s.call("set leftovers drain", func(p *C.shexec_session) C.int {
		return C.shexec_session_set_leftovers_drain_ms(p, millis(d))
	})
}

// LeftoversDrain reads the drain of leftovers' output.
func (s *Session) LeftoversDrain() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fromMillis(C.shexec_session_leftovers_drain_ms(s.ptr))
}

// SetOutputLimit sets how much of each stream a command keeps (stdout and
// stderr apart): limit in unit, keep KeepHead or KeepHeadTail, with
// KeepWithinLimit or'ed in for a limit that holds the notice too. What is
// left out is named by a notice in the text (see shexec.h).
func (s *Session) SetOutputLimit(limit uint64, unit Unit, keep Keep) error {
	return s.call("set output limit", func(p *C.shexec_session) C.int {
		return C.shexec_session_set_output_limit(p, C.uint64_t(limit), C.int(unit), C.int(keep))
	})
}

// OutputLimit reads the session's output limit (keep with KeepWithinLimit
// when it was set so).
func (s *Session) OutputLimit() (limit uint64, unit Unit, keep Keep) {
	var l C.uint64_t
	var u, k C.int
	s.mu.Lock()
	C.shexec_session_output_limit(s.ptr, &l, &u, &k)
	s.mu.Unlock()
	return uint64(l), Unit(u), Keep(k)
}

// SetMaxTasks sets how many tasks the session holds at once (10 by
// default). A task holds its slot from its start until it is closed.
func (s *Session) SetMaxTasks(n int) error {
	if n < 0 || n > math.MaxUint32 {
		return invalid("set max tasks", fmt.Sprintf("%d tasks is out of range", n))
	}
	return s.call("set max tasks", func(p *C.shexec_session) C.int {
		return C.shexec_session_set_max_tasks(p, C.uint32_t(n))
	})
}

// MaxTasks reads how many tasks the session holds at once.
func (s *Session) MaxTasks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(C.shexec_session_max_tasks(s.ptr))
}

// SetOnLeftovers sets what happens to processes a command leaves running.
func (s *Session) SetOnLeftovers(p LeftoverPolicy) error {
	return s.call("set on leftovers", func(sp *C.shexec_session) C.int {
		return C.shexec_session_set_on_leftovers(sp, C.int(p))
	})
}

// OnLeftovers reads the leftover policy.
func (s *Session) OnLeftovers() LeftoverPolicy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return LeftoverPolicy(C.shexec_session_on_leftovers(s.ptr))
}

// SetContainment sets where each command's cgroup is made: "auto", an
// absolute cgroup2 directory, or "off" (process groups only). Only while
// the session runs nothing (ErrState otherwise).
func (s *Session) SetContainment(parent string) error {
	cp, err := cstring(parent, "the parent", "set containment")
	if err != nil {
		return err
	}
	defer cfree(cp)
	return s.call("set containment", func(p *C.shexec_session) C.int {
		return C.shexec_session_set_containment(p, cp)
	})
}

// Containment says how the session holds its commands' processes, and its
// cgroup directory or why there is none.
func (s *Session) Containment() (ContainMode, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ptr == nil {
		return ContainGroup, "closed"
	}
	var detail *C.char
	m := C.shexec_session_containment(s.ptr, &detail)
	return ContainMode(m), C.GoString(detail)
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// ---------------------------------------------------------------------------
// Commands

// newRun creates and configures a C run; the caller holds s.mu. On error
// nothing is left.
func (s *Session) newRun(p *C.shexec_session, command string, c *runConfig, op string) (*C.shexec_run, error) {
	var r *C.shexec_run
	if rc := C.shx_go_run_new(&r, p, command); rc < 0 {
		return nil, s.fail(rc, op)
	}
	if err := s.configure(r, c, op); err != nil {
		C.shexec_run_free(r)
		return nil, err
	}
	return r, nil
}

func (s *Session) configure(r *C.shexec_run, c *runConfig, op string) error {
	check := func(rc C.int) error {
		if rc < 0 {
			return s.fail(rc, op)
		}
		return nil
	}
	if c.hasTimeout {
		if err := check(C.shexec_run_set_timeout_ms(r, millis(c.timeout))); err != nil {
			return err
		}
	}
	if c.cwd != nil {
		cs, err := cstring(*c.cwd, "the directory", op)
		if err != nil {
			return err
		}
		err = check(C.shexec_run_set_cwd(r, cs))
		cfree(cs)
		if err != nil {
			return err
		}
	}
	for _, v := range c.env {
		cn, err := cstring(v.name, "the variable name", op)
		if err != nil {
			return err
		}
		var cv *C.char
		if v.value != nil {
			if cv, err = cstring(*v.value, "the value", op); err != nil {
				cfree(cn)
				return err
			}
		}
		err = check(C.shexec_run_setenv(r, cn, cv))
		cfree(cn)
		cfree(cv)
		if err != nil {
			return err
		}
	}
	if c.pty {
		if err := check(C.shexec_run_set_pty(r, C.SHEXEC_PTY_ON)); err != nil {
			return err
		}
	}
	if c.ansiStrip {
		if err := check(C.shexec_run_set_ansi(r, C.SHEXEC_ANSI_STRIP)); err != nil {
			return err
		}
	}
	if c.limit != nil {
		l := c.limit
		if err := check(C.shexec_run_set_output_limit(r, C.uint64_t(l[0]), C.int(l[1]), C.int(l[2]))); err != nil {
			return err
		}
	}
	if c.stdinPipe || c.hasInput {
		if err := check(C.shexec_run_set_stdin(r, 1)); err != nil {
			return err
		}
	}
	return nil
}

// attach registers k as r's output callback; the returned handle is to be
// deleted once r can no longer call it.
// prepare makes the run of a command, configured as c says, with its output
// sink attached (the handle h the callbacks carry); s.mu is held. On error
// nothing is left behind.
func (s *Session) prepare(command string, c *runConfig, op string) (*C.shexec_session, *C.shexec_run, *sink, cgo.Handle, error) {
	p, err := s.live(op)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	r, err := s.newRun(p, command, c, op)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	k := c.sink()
	h, err := s.attach(r, k, op)
	if err != nil {
		C.shexec_run_free(r)
		return nil, nil, nil, 0, err
	}
	return p, r, k, h, nil
}

func (s *Session) attach(r *C.shexec_run, k *sink, op string) (cgo.Handle, error) {
	if k == nil {
		return 0, nil
	}
	k.run = r
	h := cgo.NewHandle(k)
	if rc := C.shx_go_set_output(r, C.uintptr_t(h)); rc < 0 {
		h.Delete()
		return 0, s.fail(rc, op)
	}
	return h, nil
}

// feed queues the input of WithInput and closes stdin after it (the
// command then reads end of file); with WithStdinPipe alone stdin stays
// open.
func (s *Session) feed(r *C.shexec_run, c *runConfig, op string) error {
	if !c.hasInput {
		return nil
	}
	if len(c.input) > 0 {
		if rc := C.shexec_run_write(r, unsafe.Pointer(&c.input[0]), C.size_t(len(c.input))); rc < 0 {
			return s.fail(rc, op)
		}
	}
	if c.stdinPipe {
		return nil
	}
	if rc := C.shexec_run_close_stdin(r); rc < 0 {
		return s.fail(rc, op)
	}
	return nil
}

func finished(r *C.shexec_run) bool { return C.shexec_run_state(r) > C.SHEXEC_STATE_RUNNING }

func output(r *C.shexec_run, stream Stream) string {
	var n C.size_t
	p := C.shexec_run_output(r, C.int(stream), &n)
	if p == nil || n == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)))
}

// resultOf reads a run's results into Go memory; the caller holds s.mu.
func (s *Session) resultOf(r *C.shexec_run) *Result {
	st := State(C.shexec_run_state(r))
	res := &Result{
		Stdout:   output(r, Stdout),
		Stderr:   output(r, Stderr),
		State:    st,
		ExitCode: int(C.shexec_run_exit_code(r)),
		Signal:   syscall.Signal(C.shexec_run_signal(r)),
		TimedOut: st == StateTimedOut,
		Truncated: Truncation{
			Stdout: C.shexec_run_truncated(r, C.SHEXEC_STDOUT) != 0,
			Stderr: C.shexec_run_truncated(r, C.SHEXEC_STDERR) != 0,
		},
		Lines: Lines{
			Stdout: uint64(C.shexec_run_output_lines(r, C.SHEXEC_STDOUT)),
			Stderr: uint64(C.shexec_run_output_lines(r, C.SHEXEC_STDERR)),
		},
		Notice:   C.GoString(C.shexec_run_notice(r)),
		Duration: time.Duration(C.shexec_run_duration_ms(r)) * time.Millisecond,
		Timeout:  fromMillis(C.shexec_run_timeout_ms(r)),
		Pid:      int(C.shexec_run_pid(r)),
	}
	res.Interrupted = C.shexec_run_interrupted(r) != 0
	if s.ptr != nil {
		res.Cwd = C.GoString(C.shexec_session_cwd(s.ptr))
	}
	var id *C.char
	res.Leftovers = Leftovers(C.shexec_run_leftovers(r, &id))
	if id != nil {
		res.LeftoverTask = C.GoString(id)
	}
	return res
}

// Run runs command in the session and waits for it to end. A non-zero
// exit, a timeout or a signal is data in the Result; an error means
// nothing ran (an *Error: ErrInvalid for an empty command, ErrNoCwd,
// ErrSpawn, ...), or that the command was ended early:
//
//   - ctx done: the command's process tree is ended (SIGTERM, the kill
//     grace, SIGKILL, as shexec_run_cancel does) and Run returns what it
//     produced until then (State StateCancelled) with an *EndedError
//     wrapping ctx.Err(): errors.Is(err, context.Canceled) or
//     context.DeadlineExceeded. A command that finished before the
//     cancellation was seen returns its result and no error.
//   - a WithStdout/WithStderr writer failed: the command is ended the
//     same way, and the *EndedError wraps the writer's error.
//
// The session is held for the whole command: other calls on it from other
// goroutines wait until Run returns.
func (s *Session) Run(ctx context.Context, command string, opts ...RunOption) (*Result, error) {
	const op = "run"
	if ctx == nil {
		ctx = context.Background()
	}
	var c runConfig
	for _, o := range opts {
		o(&c)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, r, k, h, err := s.prepare(command, &c, op)
	if err != nil {
		return nil, err
	}
	// From here C may call back with h: it is deleted after the free.
	defer func() {
		if h != 0 {
			h.Delete()
		}
	}()
	if rc := C.shexec_run_start(r); rc < 0 {
		err := s.fail(rc, op)
		C.shexec_run_free(r)
		return nil, err
	}
	if err := s.feed(r, &c, op); err != nil {
		C.shexec_run_free(r) // ends it: SIGTERM, grace, SIGKILL
		return nil, err
	}

	done := ctx.Done()
	cancelled := false
	for !finished(r) {
		slice := C.int32_t(-1)
		if done != nil && !cancelled {
			slice = pumpSliceMs
		}
		if rc := C.shexec_session_wait(p, slice); rc < 0 {
			err := s.fail(rc, op)
			C.shexec_run_free(r)
			return nil, err
		}
		if done != nil && !cancelled && !finished(r) {
			select {
			case <-done:
				// SIGTERM now, SIGKILL after the grace: the run ends in
				// the next slices, its cleanup output captured.
				C.shexec_run_cancel(r)
				cancelled = true
			default:
			}
		}
	}
	res := s.resultOf(r)
	C.shexec_run_free(r)
	if k != nil && k.panicked {
		panic(k.value)
	}
	if cancelled {
		return res, &EndedError{Reason: "its context is done", Err: ctx.Err(), Result: res}
	}
	if k != nil && k.err != nil {
		return res, &EndedError{Reason: "writing its output failed", Err: k.err, Result: res}
	}
	return res, nil
}

// EndedError is Run's error when the command did not end by itself: its
// context was done, or a writer of its output failed, and the library
// ended its process tree. It wraps the cause (errors.Is(err,
// context.Canceled)) and carries what the command produced until then,
// the Result Run also returns.
type EndedError struct {
	Reason string  // why it was ended, in words
	Err    error   // ctx.Err(), or the writer's error
	Result *Result // the command's result (State StateCancelled, unless it ended first)
}

func (e *EndedError) Error() string {
	return "shexec: command ended early: " + e.Reason + ": " + e.Err.Error()
}

// Unwrap gives the cause: ctx.Err() or the writer's error.
func (e *EndedError) Unwrap() error { return e.Err }

// StartTask starts command in the background as a task of the session and
// returns at once. A task never moves the session's cwd, has no timeout
// unless WithTimeout gives one (not capped by the session maximum), and
// holds one of the session's task slots (MaxTasks) until Task.Close:
// ErrLimit when none is free. Its output is read whenever the session's
// loop is pumped: by Task.Wait, Task.Read, Task.State, and any Run.
func (s *Session) StartTask(command string, opts ...RunOption) (*Task, error) {
	const op = "start task"
	var c runConfig
	for _, o := range opts {
		o(&c)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, r, k, h, err := s.prepare(command, &c, op)
	if err != nil {
		return nil, err
	}
	var tp *C.shexec_task
	if rc := C.shexec_run_start_task(&tp, r); rc < 0 {
		err := s.fail(rc, op)
		C.shexec_run_free(r) // not started: still ours
		if h != 0 {
			h.Delete()
		}
		return nil, err
	}
	core := s.adopt(tp)
	core.sink, core.handle = k, h
	if err := s.feed(r, &c, op); err != nil {
		s.freeTask(core, "its input could not be written")
		return nil, err
	}
	return &Task{s: s, c: core}, nil
}

// Task finds a task of the session by id: one StartTask started, or the
// leftovers a command left (Result.LeftoverTask). From then on it is the
// host's: it keeps its slot until Task.Close. ErrNoTask for an unknown id.
func (s *Session) Task(id string) (*Task, error) {
	const op = "task"
	cid, err := cstring(id, "the task id", op)
	if err != nil {
		return nil, err
	}
	defer cfree(cid)
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.live(op)
	if err != nil {
		return nil, err
	}
	var tp *C.shexec_task
	if rc := C.shexec_session_take_task(&tp, p, cid); rc < 0 {
		return nil, s.fail(rc, op)
	}
	return &Task{s: s, c: s.adopt(tp)}, nil
}

// adopt returns the core of a task the host now holds; the caller holds s.mu.
func (s *Session) adopt(tp *C.shexec_task) *taskCore {
	if c, ok := s.tasks[tp]; ok {
		return c
	}
	c := &taskCore{ptr: tp, run: C.shexec_task_run(tp), id: C.GoString(C.shexec_task_id(tp))}
	s.tasks[tp] = c
	return c
}

// freeTask frees a task (ending it if it runs); the caller holds s.mu.
func (s *Session) freeTask(c *taskCore, why string) {
	tp := c.ptr
	if tp == nil {
		return
	}
	delete(s.tasks, tp)
	c.kill(why)
	C.shexec_task_free(tp)
	c.release()
}

// pumpNow runs one round of the loop without waiting, so that what a
// task wrote or how it ended since the last pump is seen; the caller
// holds s.mu.
func (s *Session) pumpNow(p *C.shexec_session, op string) error {
	if rc := C.shexec_session_wait(p, 0); rc < 0 {
		return s.fail(rc, op)
	}
	return nil
}
