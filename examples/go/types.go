package shexec

/*
#include <stdlib.h>
#include <shexec.h>
*/
import "C"

import (
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// ParseSignal reads a signal's name as a model or a user writes it:
// "SIGINT", "INT" or "int" (shexec_signal_from_name). ErrInvalid for a name
// that is none of SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2,
// SIGTERM, SIGCONT, SIGSTOP.
func ParseSignal(name string) (syscall.Signal, error) {
	unknown := invalid("parse signal", "unknown signal "+strconv.Quote(name)+": SIGINT, SIGTERM, "+
		"SIGHUP, SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2, SIGSTOP or SIGCONT")
	if strings.IndexByte(name, 0) >= 0 {
		return 0, unknown
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	n := C.shexec_signal_from_name(cname)
	if n < 0 {
		return 0, unknown
	}
	return syscall.Signal(n), nil
}

// Stream names an output stream.
type Stream int

// The two output streams (SHEXEC_STDOUT, SHEXEC_STDERR). With a pty, both
// arrive on Stdout.
const (
	Stdout Stream = C.SHEXEC_STDOUT
	Stderr Stream = C.SHEXEC_STDERR
)

func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	}
	return "stream(" + strconv.Itoa(int(s)) + ")"
}

// State is how a command stands or ended (SHEXEC_STATE_*). Every state
// after StateRunning is final.
type State int

// The states of a command.
const (
	StateNew       State = C.SHEXEC_STATE_NEW       // created, not started
	StateRunning   State = C.SHEXEC_STATE_RUNNING   // started, not finished
	StateExited    State = C.SHEXEC_STATE_EXITED    // the shell exited: see ExitCode
	StateSignaled  State = C.SHEXEC_STATE_SIGNALED  // a signal ended it (from elsewhere, or Task.SendSignal)
	StateTimedOut  State = C.SHEXEC_STATE_TIMED_OUT // its timeout expired; its tree was ended
	StateCancelled State = C.SHEXEC_STATE_CANCELLED // cancelled (its context was done)
	StateKilled    State = C.SHEXEC_STATE_KILLED    // a task ended by Task.Kill or Close
)

var stateNames = [...]string{"new", "running", "exited", "signaled", "timed_out", "cancelled", "killed"}

func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// Finished reports whether the state is final.
func (s State) Finished() bool { return s > StateRunning }

// Unit is what an output limit counts.
type Unit int

// Output limit units (SHEXEC_UNIT_*).
const (
	Chars Unit = C.SHEXEC_UNIT_CHARS // UTF-8 code points; an invalid byte counts as one
	Bytes Unit = C.SHEXEC_UNIT_BYTES
)

// Keep is which part of a stream an output limit keeps.
type Keep int

// What an output limit keeps (SHEXEC_KEEP_*).
const (
	KeepHead     Keep = C.SHEXEC_KEEP_HEAD      // the first `limit` units
	KeepHeadTail Keep = C.SHEXEC_KEEP_HEAD_TAIL // the first and the last limit/2 units

	// KeepWithinLimit, or'ed into KeepHead or KeepHeadTail, makes the limit
	// hold the truncation notice and the head/tail marker too (the kept
	// text is cut to leave them room); without it they come on top.
	KeepWithinLimit Keep = C.SHEXEC_KEEP_WITHIN_LIMIT
)

// LeftoverPolicy is what happens to processes a command leaves running
// when its shell exits (shexec_session_set_on_leftovers).
type LeftoverPolicy int

// The leftover policies.
const (
	AdoptLeftovers LeftoverPolicy = C.SHEXEC_ON_LEFTOVERS_ADOPT // the default: they become a task
	KillLeftovers  LeftoverPolicy = C.SHEXEC_ON_LEFTOVERS_KILL  // SIGKILL them when the shell exits
)

// Leftovers is what became of the processes a command left running.
type Leftovers int

// What became of leftovers (SHEXEC_LEFTOVERS_*).
const (
	LeftoversNone    Leftovers = C.SHEXEC_LEFTOVERS_NONE    // none were left
	LeftoversAdopted Leftovers = C.SHEXEC_LEFTOVERS_ADOPTED // a task of the session: Result.LeftoverTask
	LeftoversKilled  Leftovers = C.SHEXEC_LEFTOVERS_KILLED  // killed (policy, or no task slot)
)

func (l Leftovers) String() string {
	switch l {
	case LeftoversNone:
		return "none"
	case LeftoversAdopted:
		return "adopted"
	case LeftoversKilled:
		return "killed"
	}
	return "leftovers(" + strconv.Itoa(int(l)) + ")"
}

// ContainMode is how a session holds its commands' processes.
type ContainMode int

// Containment modes (SHEXEC_CONTAIN_*).
const (
	ContainGroup  ContainMode = C.SHEXEC_CONTAIN_GROUP  // a process group each
	ContainCgroup ContainMode = C.SHEXEC_CONTAIN_CGROUP // a cgroup v2 each
)

func (m ContainMode) String() string {
	if m == ContainCgroup {
		return "cgroup"
	}
	return "group"
}

// Truncation says which streams the output limit cut.
type Truncation struct {
	Stdout, Stderr bool
}

// Any reports whether either stream was cut.
func (t Truncation) Any() bool { return t.Stdout || t.Stderr }

// Lines says how many lines each stream carried in all, kept or not: its
// newlines, and one more when it does not end with one.
type Lines struct {
	Stdout, Stderr uint64
}

// Result is a finished command (or, from Task.Wait, a finished task).
// A non-zero exit, a timeout or a signal is data here, not an error.
type Result struct {
	Stdout string // what the command wrote, bounded by the output limit (with its notice)
	Stderr string

	State    State          // how it ended
	ExitCode int            // 0-255 when State is StateExited, else -1
	Signal   syscall.Signal // the signal that ended the shell, else 0 (after a timeout: see shexec_run_signal)
	TimedOut bool           // State == StateTimedOut
	// Interrupted: a SIGINT reached the command (Task.SendSignal, a ^C
	// typed), however it ended: State, ExitCode and Signal say how.
	Interrupted bool

	Truncated Truncation // which streams the output limit cut
	Lines     Lines      // how many lines each stream carried
	Cwd       string     // the session's working directory after the command
	Notice    string     // what the library declined to do (a cwd report not taken, ...), or ""

	Duration time.Duration // wall time from start to end
	Timeout  time.Duration // the timeout in force (after the session maximum capped it); 0: none
	Pid      int           // the shell's pid (and process group id)

	Leftovers    Leftovers // what became of processes it left running
	LeftoverTask string    // the id of the task that adopted them (Session.Task), or ""
}
