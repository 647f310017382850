package shexec

/*
#include <shexec.h>
*/
import "C"

import (
	"strconv"
	"strings"
)

// Code is a result code of the library: OK (0) or one of the negative
// SHEXEC_E* values of shexec.h. The values never change (append-only).
type Code int

// The library's result codes, mirroring SHEXEC_OK and SHEXEC_E*.
const (
	OK      Code = C.SHEXEC_OK      // success
	EINVAL  Code = C.SHEXEC_EINVAL  // an argument is invalid (empty, NUL byte, bad name)
	ENOMEM  Code = C.SHEXEC_ENOMEM  // out of memory
	ENOCWD  Code = C.SHEXEC_ENOCWD  // the working directory is missing or not a directory
	ESPAWN  Code = C.SHEXEC_ESPAWN  // the shell could not be executed
	ESYS    Code = C.SHEXEC_ESYS    // a system call failed (descriptors exhausted, fork failed)
	ESTATE  Code = C.SHEXEC_ESTATE  // the handle is in the wrong state for this call
	E2BIG   Code = C.SHEXEC_E2BIG   // the command or environment is too long for the kernel
	ELIMIT  Code = C.SHEXEC_ELIMIT  // a documented bound is reached (tasks, variables, queued input)
	ENOTASK Code = C.SHEXEC_ENOTASK // no task has that id
	EPIPE   Code = C.SHEXEC_EPIPE   // input cannot be written (no stdin pipe, closed, ended)
	ENOTOOL Code = C.SHEXEC_ENOTOOL // no tool of that name, or it is not enabled
)

var codeNames = map[Code]string{
	OK: "SHEXEC_OK", EINVAL: "SHEXEC_EINVAL", ENOMEM: "SHEXEC_ENOMEM",
	ENOCWD: "SHEXEC_ENOCWD", ESPAWN: "SHEXEC_ESPAWN", ESYS: "SHEXEC_ESYS",
	ESTATE: "SHEXEC_ESTATE", E2BIG: "SHEXEC_E2BIG", ELIMIT: "SHEXEC_ELIMIT",
	ENOTASK: "SHEXEC_ENOTASK", EPIPE: "SHEXEC_EPIPE", ENOTOOL: "SHEXEC_ENOTOOL",
}

// String gives the code's C name, e.g. "SHEXEC_ELIMIT".
func (c Code) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return "SHEXEC_E(" + strconv.Itoa(int(c)) + ")"
}

// Description is the library's English text for the code (shexec_strerror).
func (c Code) Description() string {
	return C.GoString(C.shexec_strerror(C.int(c)))
}

// Error is a failed call: the library's code and its detail. Every error
// this package returns for a refused call is an *Error (use errors.As), and
// errors.Is matches it against the sentinels below by code:
//
//	if errors.Is(err, shexec.ErrLimit) { ... }   // the session holds its maximum of tasks
type Error struct {
	Code Code   // the SHEXEC_E* code
	Msg  string // the detail (shexec_session_errmsg), else the code's description
	Op   string // what was being done, e.g. "start task"

	closed bool // the Go handle is gone (ErrClosed)
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("shexec: ")
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	b.WriteString(" (")
	b.WriteString(e.Code.String())
	b.WriteString(")")
	return b.String()
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, ErrNoTask) holds for every SHEXEC_ENOTASK whatever its
// message. ErrClosed matches only errors about a closed session or a freed
// task (which are also ErrState).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t == nil {
		return false
	}
	if t.closed && !e.closed {
		return false
	}
	return t.Code == e.Code
}

func sentinel(c Code) *Error {
	return &Error{Code: c, Msg: c.Description()}
}

// Sentinels for errors.Is, one per code.
var (
	ErrInvalid = sentinel(EINVAL)
	ErrNoMem   = sentinel(ENOMEM)
	ErrNoCwd   = sentinel(ENOCWD)
	ErrSpawn   = sentinel(ESPAWN)
	ErrSys     = sentinel(ESYS)
	ErrState   = sentinel(ESTATE)
	ErrTooBig  = sentinel(E2BIG)
	ErrLimit   = sentinel(ELIMIT)
	ErrNoTask  = sentinel(ENOTASK)
	ErrPipe    = sentinel(EPIPE)
	ErrNoTool  = sentinel(ENOTOOL)

	// ErrClosed: the session was closed, or the task freed. It is an
	// ESTATE error, so errors.Is(err, ErrState) holds for it too.
	ErrClosed = &Error{Code: ESTATE, Msg: "the session is closed", closed: true}
)

func closedError(op, why string) error {
	return &Error{Code: ESTATE, Op: op, Msg: why, closed: true}
}

func invalid(op, msg string) error {
	return &Error{Code: EINVAL, Op: op, Msg: msg}
}
