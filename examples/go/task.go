package shexec

/*
#include <shexec.h>
*/
import "C"

import (
	"context"
	"fmt"
	"runtime/cgo"
	"syscall"
	"time"
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

// TypeInput types p as a person at a terminal would (what a model writes):
// on a pty as Write; on pipes each 0x03 byte (^C) is a SIGINT to the
// command instead of a byte of its input (also without WithStdinPipe), the
// text around it queued in order (shexec_run_type_input). ErrPipe once the
// task ended; ErrLimit as Write (nothing typed, no signal sent).
func (t *Task) TypeInput(p []byte) error {
	const op = "type at task"
	_, c, err := t.lock(op)
	if err != nil {
		return err
	}
	defer t.s.mu.Unlock()
	var data unsafe.Pointer
	if len(p) > 0 {
		data = unsafe.Pointer(&p[0])
	}
	if rc := C.shexec_run_type_input(c.run, data, C.size_t(len(p))); rc < 0 {
		return t.s.fail(rc, op)
	}
	return nil
}

// SendSignal sends sig to the task's processes (its process group, or every
// process of its cgroup), and to nothing else: syscall.SIGINT is a
// terminal's Ctrl+C. Allowed: SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGUSR1,
// SIGUSR2, SIGTERM, SIGCONT, SIGSTOP (ParseSignal reads their names); another
// is ErrInvalid. It changes nothing of the timeout or Kill: a task that dies
// of it ends StateSignaled with that signal. ErrState once the task ended.
func (t *Task) SendSignal(sig syscall.Signal) error {
	return t.runCall("signal task", func(run *C.shexec_run) C.int {
		return C.shexec_run_send_signal(run, C.int(sig))
	})
}

// Interrupted reports whether a SIGINT reached the task (SendSignal of
// syscall.SIGINT, or a ^C typed), however it then ended. A task that is
// gone says false.
func (t *Task) Interrupted() bool {
	_, c, err := t.lock("task interrupted")
	if err != nil {
		return false
	}
	defer t.s.mu.Unlock()
	return C.shexec_run_interrupted(c.run) != 0
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

// WatchReason says why Task.Watch returned (SHEXEC_WATCH_*).
type WatchReason int

// The reasons Task.Watch returns for.
const (
	WatchEnded WatchReason = C.SHEXEC_WATCH_ENDED // the task has finished
	WatchQuiet WatchReason = C.SHEXEC_WATCH_QUIET // it printed nothing for the quiet time
	WatchInput WatchReason = C.SHEXEC_WATCH_INPUT // it waits for input
	WatchTime  WatchReason = C.SHEXEC_WATCH_TIME  // the longest wait passed first
)

func (w WatchReason) String() string {
	switch w {
	case WatchEnded:
		return "ended"
	case WatchQuiet:
		return "quiet"
	case WatchInput:
		return "input"
	case WatchTime:
		return "time"
	}
	return fmt.Sprintf("watch(%d)", int(w))
}

// ceilMs is d in whole milliseconds, rounded up, within a C uint32_t.
func ceilMs(d time.Duration) C.uint32_t {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > 0xFFFFFFFF {
		ms = 0xFFFFFFFF
	}
	if ms < 0 {
		ms = 0
	}
	return C.uint32_t(ms)
}

// Watch follows the task: it pumps the session's loop until the task has
// finished (WatchEnded), waits for input (WatchInput), has printed nothing
// for quiet (WatchQuiet; counted from the later of its last output and the
// call; 0: not watched for), or max has passed (WatchTime; max <= 0: no
// limit), whichever comes first, as shexec_task_watch() does. A host
// following a build or a server's log ("no new output for N seconds") calls
// it, then Reads what came. If ctx is done first, Watch returns ctx.Err().
// Between short waits the session is free for other goroutines, without
// changing when Watch returns. A panic of the task's WithOutput callback is
// raised again once the task has ended.
func (t *Task) Watch(ctx context.Context, quiet, max time.Duration) (WatchReason, error) {
	const op = "watch task"
	if ctx == nil {
		ctx = context.Background()
	}
	start := time.Now()
	for first := true; ; first = false {
		_, c, err := t.lock(op)
		if err != nil {
			return 0, err
		}
		var need C.uint32_t
		if quiet > 0 {
			// quiet so far, counted from the call: a slice that ended in
			// quiet after output came is looked at again
			q := time.Duration(C.shexec_run_quiet_ms(c.run)) * time.Millisecond
			if since := time.Since(start); since < q {
				q = since
			}
			if q >= quiet && !first {
				t.s.mu.Unlock()
				return WatchQuiet, nil
			}
			if need = ceilMs(quiet - q); need == 0 {
				need = 1
			}
		}
		slice := C.uint32_t(pumpSliceMs)
		if max > 0 {
			left := max - time.Since(start)
			if left <= 0 && !first {
				t.s.mu.Unlock()
				return WatchTime, nil
			}
			if l := ceilMs(left); l < slice {
				slice = l
			}
		}
		rc := C.shexec_task_watch(c.ptr, need, slice)
		var werr error
		if rc < 0 {
			werr = t.s.fail(rc, op)
		}
		k := c.sink
		t.s.mu.Unlock()
		if werr != nil {
			return 0, werr
		}
		why := WatchReason(rc)
		if why == WatchEnded && k != nil && k.panicked { // as Wait: the callback's panic, at the end
			panic(k.value)
		}
		if why == WatchEnded || why == WatchInput {
			return why, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		default:
		}
	}
}

// Quiet says how long the task has printed nothing: since the output the
// loop last read of it, or its start; once it ended, until its end.
func (t *Task) Quiet() (time.Duration, error) {
	_, c, err := t.lock("task quiet")
	if err != nil {
		return 0, err
	}
	defer t.s.mu.Unlock()
	return time.Duration(C.shexec_run_quiet_ms(c.run)) * time.Millisecond, nil
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
