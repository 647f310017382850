// Package shexec is the Go binding of libshexec, a C library that runs
// shell commands for agent hosts: each command in its own process group
// (or cgroup), its whole process tree ended at a timeout (SIGTERM, a grace,
// SIGKILL), the working directory carried from one command to the next,
// output bounded with a notice of what was left out, and background tasks,
// all driven by one poll() loop per session. include/shexec.h is the
// manual; this package follows it closely.
//
//	s, err := shexec.New()
//	if err != nil { ... }
//	defer s.Close()
//	r, err := s.Run(ctx, "cd /tmp && ls | head -3", shexec.WithTimeout(10*time.Second))
//	// r.Stdout, r.ExitCode, r.State, r.TimedOut ...; s.Cwd() is now "/tmp"
//	t, err := s.StartTask("make test", shexec.WithStdout(os.Stdout))
//	res, err := t.Wait(ctx)
//
// # Errors
//
// A refused call returns an *Error carrying the library's code (EINVAL,
// ENOCWD, ELIMIT, ...) and its detail; errors.Is matches it against the
// sentinels ErrInvalid, ErrNoCwd, ErrLimit, ErrNoTask, ... by code. What a
// command does (a non-zero exit, a timeout, a signal) is data in its
// Result, not an error.
//
// # Contexts
//
// Run watches its context: when it is done, the command's process tree is
// ended as a timeout ends it and Run returns the partial result with an
// error wrapping ctx.Err(). To watch it, Run pumps the library's loop
// (shexec_session_wait) in slices of a few tens of milliseconds and looks
// at ctx.Done() between them; a command that ends is seen at once.
//
// # Goroutines
//
// A session is meant for one goroutine at a time. A mutex inside makes
// misuse safe: calls from several goroutines are serialized, never
// interleaved inside the library. Output callbacks (WithOutput, and the
// writers of WithStdout and WithStderr) run inside the loop while the
// session is locked, on the goroutine that pumps it: they must not call
// the Session or its Tasks, which would deadlock; cancel Run's context to
// stop a command from a callback.
//
// Callbacks cross from C to Go through a runtime/cgo.Handle (an integer
// the library passes back as its opaque user pointer) and one exported
// trampoline: no Go pointer is ever stored in C memory.
//
// # Building
//
// The package links the library of the source tree it sits in
// (../../include, ../../build, with an rpath) unless told otherwise:
// CGO_CFLAGS and CGO_LDFLAGS are searched first, -tags shexec_pkgconfig
// takes the flags from an installed shexec.pc, and -tags shexec_external
// gives only -lshexec (the rest from CGO_CFLAGS/CGO_LDFLAGS or the
// system's default paths). See README.md.
package shexec
