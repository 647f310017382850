package shexec

/*
#include <shexec.h>
*/
import "C"

import (
	"context"
	"fmt"
	"runtime/cgo"
	"unsafe"
)

// taskCore is what the session keeps of a task the host holds: the C
// pointers (nil once freed), and the output callback's handle. It points
// nowhere else, so the session's map of them makes no cycle with Task.
type taskCore struct {
	ptr    *C.shexec_task // nil once freed
	run    *C.shexec_run
	id     string
	sink   *sink
	handle cgo.Handle
	dead   string // why it is gone
	last   State  // its state when it went: a running one is killed
}

// kill marks the core gone, before its C task is freed.
func (c *taskCore) kill(why string) {
	if c.run != nil {
		c.last = State(C.shexec_run_state(c.run))
		if !c.last.Finished() {
			c.last = StateKilled
		}
	}
	c.ptr, c.run, c.dead = nil, nil, why
}

// release deletes the callback's handle once C can no longer call it.
func (c *taskCore) release() {
	if c.handle != 0 {
		c.handle.Delete()
		c.handle = 0
	}
}

// Task is a command running in the background, owned by its session
// (Session.StartTask, or Session.Task for an id). Its methods lock the
// session, like the session's own: they may be called from any goroutine.
// Dropping a Task does not stop it; Close does.
type Task struct {
	s *Session
	c *taskCore
}

// ID is the task's id: "t" and 12 hex digits, unique in its session.
func (t *Task) ID() string { return t.c.id }

// lock takes the session and returns the live task, or the error saying
// why it is gone (ErrClosed).
func (t *Task) lock(op string) (*C.shexec_session, *taskCore, error) {
	t.s.mu.Lock()
	c := t.c
	if c.ptr == nil || t.s.ptr == nil {
		t.s.mu.Unlock()
		why := c.dead
		if why == "" {
			why = "its session was closed"
		}
		return nil, nil, closedError(op, "the task is gone: "+why)
	}
	return t.s.ptr, c, nil
}

// Read returns what the stream produced since the last Read of it (bounded
// by the output limit, with its notice), and marks it read. It first pumps
// the session's loop once without waiting, so output written since the last
// call is there.
func (t *Task) Read(stream Stream) (string, error) {
	const op = "read task"
	p, c, err := t.lock(op)
	if err != nil {
		return "", err
	}
	defer t.s.mu.Unlock()
	if err := t.s.pumpNow(p, op); err != nil {
		return "", err
	}
	if c.ptr == nil { // freed by nothing but Close, which needs the lock
		return "", closedError(op, "the task is gone")
	}
	var n C.size_t
	data := C.shexec_task_read(c.ptr, C.int(stream), &n)
	if data == nil || n == 0 {
		return "", nil
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(data)), int(n))), nil
}

// Output returns all the stream produced so far (bounded by the output
// limit), whatever Read took.
func (t *Task) Output(stream Stream) (string, error) {
	const op = "task output"
	p, c, err := t.lock(op)
	if err != nil {
		return "", err
	}
	defer t.s.mu.Unlock()
	if err := t.s.pumpNow(p, op); err != nil {
		return "", err
	}
	return output(c.run, stream), nil
}

// Write queues p for the task's stdin (it needs WithStdinPipe, or WithPTY):
// it never blocks, and the bytes are written as the command reads them
// while the loop is pumped. ErrPipe when stdin was not enabled, is closed,
// or the task ended; ErrLimit (0 bytes taken) when the input the task has
// not read yet would pass the session's bound on queued input: write p
// again once it has read. Task is an io.Writer.
func (t *Task) Write(p []byte) (int, error) {
	const op = "write task"
	_, c, err := t.lock(op)
	if err != nil {
		return 0, err
	}
	defer t.s.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	if rc := C.shexec_run_write(c.run, unsafe.Pointer(&p[0]), C.size_t(len(p))); rc < 0 {
		return 0, t.s.fail(rc, op)
	}
	return len(p), nil
}

// CloseStdin closes the task's stdin once the queued input is written: the
// command then reads end of file (^D on a pty).
func (t *Task) CloseStdin() error {
	return t.runCall("close task stdin", func(run *C.shexec_run) C.int { return C.shexec_run_close_stdin(run) })
}

// SetPtySize resizes the task's terminal while it runs (a task started
// WithPty), as a window is resized: its foreground process group gets
// SIGWINCH. ErrState for a task on pipes or one that has ended.
func (t *Task) SetPtySize(cols, rows uint32) error {
	return t.runCall("resize task terminal", func(run *C.shexec_run) C.int {
		return C.shexec_run_set_pty_size(run, C.uint32_t(cols), C.uint32_t(rows))
	})
}

// Kill ends the task's process tree: SIGTERM now, SIGKILL after the kill
// grace. It returns at once; the task ends (StateKilled) as the loop is
// pumped: Wait for it. A finished task is left as it is.
func (t *Task) Kill() error {
	return t.runCall("kill task", func(run *C.shexec_run) C.int { return C.shexec_run_cancel(run) })
}

// runCall makes one call of the C library on the task's run under the
// session's lock; a negative status is the error.
func (t *Task) runCall(op string, call func(*C.shexec_run) C.int) error {
	_, c, err := t.lock(op)
	if err != nil {
		return err
	}
	defer t.s.mu.Unlock()
	if rc := call(c.run); rc < 0 {
		return t.s.fail(rc, op)
	}
	return nil
}

// State pumps the loop once without waiting and says how the task stands.
// A task that is gone (closed, or its session closed) keeps the state it
// had then, StateKilled if it was still running.
func (t *Task) State() State {
	p, c, err := t.lock("task state")
	if err != nil {
		t.s.mu.Lock()
		defer t.s.mu.Unlock()
		if t.c.last == StateNew {
			return StateKilled
		}
		return t.c.last
	}
	defer t.s.mu.Unlock()
	_ = t.s.pumpNow(p, "task state")
	return State(C.shexec_run_state(c.run))
}

// Done pumps the loop once without waiting and reports whether the task
// has finished (or is gone).
func (t *Task) Done() bool { return t.State().Finished() }

// Wait pumps the session's loop until the task has finished and returns
// its result: all its output (bounded), how it ended, its exit code. If ctx
// is done first, Wait returns ctx.Err() and the task goes on (Kill ends
// it). Between short waits (pumpSliceMs) the session is free for other
// goroutines, so one may Kill or Read the task while another Waits.
// A panic of the task's WithOutput callback is raised again here; an error
// of its writers is returned with the result.
func (t *Task) Wait(ctx context.Context) (*Result, error) {
	const op = "wait task"
	if ctx == nil {
		ctx = context.Background()
	}
	done := ctx.Done()
	for {
		p, c, err := t.lock(op)
		if err != nil {
			return nil, err
		}
		if finished(c.run) {
			res := t.s.resultOf(c.run)
			k := c.sink
			t.s.mu.Unlock()
			if k != nil {
				if k.panicked {
					panic(k.value)
				}
				if k.err != nil {
					return res, fmt.Errorf("shexec: task ended: writing its output failed: %w", k.err)
				}
			}
			return res, nil
		}
		rc := C.shexec_session_wait(p, pumpSliceMs)
		var werr error
		if rc < 0 {
			werr = t.s.fail(rc, op)
		}
		t.s.mu.Unlock()
		if werr != nil {
			return nil, werr
		}
		select {
		case <-done:
			return nil, ctx.Err()
		default:
		}
	}
}

// Close frees the task, ending it first if it still runs (SIGTERM, the
// kill grace, SIGKILL), and gives back its slot. Idempotent; a closed task's
// methods give ErrClosed.
func (t *Task) Close() error {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	t.s.freeTask(t.c, "it was closed")
	return nil
}
