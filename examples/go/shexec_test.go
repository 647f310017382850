package shexec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	shexec "github.com/shexec/shexec-go"
)

func TestVersion(t *testing.T) {
	v := shexec.Version()
	if len(strings.Split(v, ".")) != 3 {
		t.Fatalf("Version() = %q, want MAJOR.MINOR.PATCH", v)
	}
}

func TestEcho(t *testing.T) {
	s := newSession(t)
	r := run(t, s, "echo hello")
	if r.Stdout != "hello\n" || r.Stderr != "" {
		t.Fatalf("stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	if r.State != shexec.StateExited || r.ExitCode != 0 || r.Signal != 0 || r.TimedOut {
		t.Fatalf("state %v exit %d signal %v timed out %v", r.State, r.ExitCode, r.Signal, r.TimedOut)
	}
	if r.Pid <= 0 || r.Truncated.Any() || r.Notice != "" {
		t.Fatalf("pid %d truncated %+v notice %q", r.Pid, r.Truncated, r.Notice)
	}
}

func TestExit42(t *testing.T) {
	s := newSession(t)
	r := run(t, s, "exit 42")
	if r.State != shexec.StateExited || r.ExitCode != 42 {
		t.Fatalf("state %v exit %d", r.State, r.ExitCode)
	}
}

func TestStderr(t *testing.T) {
	s := newSession(t)
	r := run(t, s, "echo out; echo err >&2")
	if r.Stdout != "out\n" || r.Stderr != "err\n" {
		t.Fatalf("stdout %q stderr %q", r.Stdout, r.Stderr)
	}
}

func TestCdPersists(t *testing.T) {
	s := newSession(t)
	if r := run(t, s, "cd /tmp"); r.Cwd != "/tmp" {
		t.Fatalf("Result.Cwd = %q", r.Cwd)
	}
	if got := s.Cwd(); got != "/tmp" {
		t.Fatalf("Cwd() = %q, want /tmp", got)
	}
	if r := run(t, s, "pwd"); r.Stdout != "/tmp\n" {
		t.Fatalf("pwd = %q", r.Stdout)
	}
	if err := s.SetCwd("/usr"); err != nil {
		t.Fatal(err)
	}
	if r := run(t, s, "pwd"); r.Stdout != "/usr\n" {
		t.Fatalf("pwd after SetCwd = %q", r.Stdout)
	}
}

// A timeout ends the whole tree, a grandchild in a subshell included, and
// keeps what the command wrote before.
func TestTimeoutKillsTree(t *testing.T) {
	s := newSession(t)
	f := tempFile(t, "pids")
	cmd := fmt.Sprintf("echo partial; sleep 300 & echo $! >> %[1]s; "+
		"sh -c 'sleep 300 & echo $! >> %[1]s; wait' & echo $! >> %[1]s; wait", quote(f))
	start := time.Now()
	r := run(t, s, cmd, shexec.WithTimeout(500*time.Millisecond))
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("the timeout took %v", el)
	}
	if !r.TimedOut || r.State != shexec.StateTimedOut || r.ExitCode != -1 || r.Signal != syscall.SIGTERM {
		t.Fatalf("timed out %v state %v exit %d signal %v", r.TimedOut, r.State, r.ExitCode, r.Signal)
	}
	if r.Stdout != "partial\n" {
		t.Fatalf("partial output %q", r.Stdout)
	}
	pids := pidsIn(t, f)
	if len(pids) != 3 {
		t.Fatalf("pids %v", pids)
	}
	assertGone(t, pids)
}

// A done context ends the command's tree, and Run gives what it produced
// with an error wrapping ctx.Err().
func TestContextCancelEndsTree(t *testing.T) {
	s := newSession(t)
	f := tempFile(t, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	r, err := s.Run(ctx, "echo started; sleep 300 & echo $! > "+quote(f)+"; wait")
	el := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled wrapped", err)
	}
	var ended *shexec.EndedError
	if !errors.As(err, &ended) || ended.Result != r {
		t.Fatalf("err is not an *EndedError carrying the result: %#v", err)
	}
	if r == nil || r.State != shexec.StateCancelled || r.Stdout != "started\n" {
		t.Fatalf("result %+v", r)
	}
	if el < 150*time.Millisecond || el > 10*time.Second {
		t.Fatalf("Run returned after %v", el)
	}
	assertGone(t, pidsIn(t, f))
	// the session goes on
	if r := run(t, s, "echo next"); r.Stdout != "next\n" {
		t.Fatalf("next run: %q", r.Stdout)
	}
}

func TestContextDeadline(t *testing.T) {
	s := newSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r, err := s.Run(ctx, "sleep 300")
	if !errors.Is(err, context.DeadlineExceeded) || r == nil || r.State != shexec.StateCancelled {
		t.Fatalf("err %v result %+v", err, r)
	}
	// a context done before the start: nothing runs
	r, err = s.Run(ctx, "echo never")
	if !errors.Is(err, context.DeadlineExceeded) || r != nil {
		t.Fatalf("done context: err %v result %+v", err, r)
	}
}

// LEFTOVERS (shexec.h): a run completes when its shell exits; processes
// left in its group are adopted as a task of the session (the default) or
// killed (KillLeftovers).
func TestLeftoversDrained(t *testing.T) {
	s := newSession(t, shexec.LeftoversDrain(time.Second))
	r := run(t, s, "{ sleep 0.05; echo late; } &")
	if r.Stdout != "late\n" || r.Leftovers != shexec.LeftoversNone {
		t.Fatalf("stdout %q leftovers %v", r.Stdout, r.Leftovers)
	}
}

func TestLeftoversAdopted(t *testing.T) {
	s := newSession(t)
	start := time.Now()
	r := run(t, s, "sleep 300 & echo $!")
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("`sleep 300 &` took %v: it should return at once", el)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(r.Stdout))
	if err != nil {
		t.Fatalf("stdout %q", r.Stdout)
	}
	if r.State != shexec.StateExited || r.ExitCode != 0 {
		t.Fatalf("state %v exit %d", r.State, r.ExitCode)
	}
	if r.Leftovers != shexec.LeftoversAdopted || r.LeftoverTask == "" {
		t.Fatalf("leftovers %v task %q", r.Leftovers, r.LeftoverTask)
	}
	if !alive(pid) {
		t.Fatalf("the adopted sleep %d is not running", pid)
	}
	task, err := s.Task(r.LeftoverTask)
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	if task.ID() != r.LeftoverTask || task.Done() {
		t.Fatalf("task %q done %v", task.ID(), task.Done())
	}
	if err := task.Kill(); err != nil {
		t.Fatal(err)
	}
	tr, err := task.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tr.State != shexec.StateKilled || tr.ExitCode != -1 {
		t.Fatalf("killed leftovers: state %v exit %d", tr.State, tr.ExitCode)
	}
	assertGone(t, []int{pid})
}

func TestLeftoversKilled(t *testing.T) {
	s := newSession(t, shexec.OnLeftovers(shexec.KillLeftovers))
	if p := s.OnLeftovers(); p != shexec.KillLeftovers {
		t.Fatalf("OnLeftovers() = %v", p)
	}
	r := run(t, s, "sleep 300 & echo $!")
	pid, _ := strconv.Atoi(strings.TrimSpace(r.Stdout))
	if r.Leftovers != shexec.LeftoversKilled || r.LeftoverTask != "" {
		t.Fatalf("leftovers %v task %q", r.Leftovers, r.LeftoverTask)
	}
	// SIGKILL is sent as the shell exits; the kernel ends the process
	// right after
	eventually(t, 3*time.Second, "the leftover's end", func() bool { return !alive(pid) })
}

// Leftovers nobody took are ended by Close.
func TestCloseEndsLeftovers(t *testing.T) {
	s, err := shexec.New()
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(context.Background(), "sleep 300 & echo $!")
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(r.Stdout))
	if !alive(pid) {
		t.Fatal("the leftover is not running")
	}
	s.Close()
	assertGone(t, []int{pid})
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestTaskStartReadWriteWait(t *testing.T) {
	s := newSession(t)
	task, err := s.StartTask("cat; echo bye", shexec.WithStdinPipe())
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	if !strings.HasPrefix(task.ID(), "t") || len(task.ID()) != 13 {
		t.Fatalf("id %q", task.ID())
	}
	if _, err := io.WriteString(task, "hello\n"); err != nil {
		t.Fatal(err)
	}
	if got := readUntil(t, task, "hello\n"); got != "hello\n" {
		t.Fatalf("read %q", got)
	}
	if task.Done() || task.State() != shexec.StateRunning {
		t.Fatalf("cat ended before its stdin was closed: %v", task.State())
	}
	if err := task.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	r, err := task.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.State != shexec.StateExited || r.ExitCode != 0 || r.Stdout != "hello\nbye\n" {
		t.Fatalf("result %+v", r)
	}
	if s, _ := task.Read(shexec.Stdout); s != "bye\n" {
		t.Fatalf("second read %q, want only what is new", s)
	}
	if _, err := task.Write([]byte("late")); !errors.Is(err, shexec.ErrPipe) {
		t.Fatalf("write after the end: %v", err)
	}
}

func TestTaskKill(t *testing.T) {
	s := newSession(t)
	task, err := s.StartTask("echo $$; sleep 300")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readUntil(t, task, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Kill(); err != nil {
		t.Fatal(err)
	}
	r, err := task.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.State != shexec.StateKilled || !task.Done() {
		t.Fatalf("state %v", r.State)
	}
	assertGone(t, []int{pid})
	if err := task.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Read(shexec.Stdout); !errors.Is(err, shexec.ErrClosed) || !errors.Is(err, shexec.ErrState) {
		t.Fatalf("read after Close: %v", err)
	}
	if st := task.State(); st != shexec.StateKilled {
		t.Fatalf("state after Close %v", st)
	}
}

// Wait in one goroutine, Kill from another: Wait lets others in between
// its slices. A Wait whose context ends leaves the task running.
func TestTaskWaitAndKillFromAnotherGoroutine(t *testing.T) {
	s := newSession(t)
	task, err := s.StartTask("sleep 300")
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := task.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait: %v", err)
	}
	if task.Done() {
		t.Fatal("a Wait that gave up ended the task")
	}
	time.AfterFunc(100*time.Millisecond, func() { task.Kill() })
	r, err := task.Wait(context.Background())
	if err != nil || r.State != shexec.StateKilled {
		t.Fatalf("Wait: %v %+v", err, r)
	}
}

func TestTaskOutputCallback(t *testing.T) {
	s := newSession(t)
	var out bytes.Buffer
	task, err := s.StartTask("for i in 1 2 3; do echo $i; sleep 0.05; done", shexec.WithStdout(&out))
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	r, err := task.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "1\n2\n3\n" || r.Stdout != out.String() {
		t.Fatalf("streamed %q result %q", out.String(), r.Stdout)
	}
}

// Streaming to an io.Writer: the same bytes as the captured stdout, in order.
func TestStreamingWriter(t *testing.T) {
	s := newSession(t)
	var out, errw bytes.Buffer
	r := run(t, s, "for i in $(seq 1 3000); do echo line $i; [ $((i % 500)) = 0 ] && echo e$i >&2; done",
		shexec.WithStdout(&out), shexec.WithStderr(&errw))
	if out.String() != r.Stdout || errw.String() != r.Stderr {
		t.Fatalf("streamed %d/%d bytes, captured %d/%d", out.Len(), errw.Len(), len(r.Stdout), len(r.Stderr))
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3000 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, l := range lines {
		if l != "line "+strconv.Itoa(i+1) {
			t.Fatalf("line %d is %q: out of order", i+1, l)
		}
	}
	if errw.String() != "e500\ne1000\ne1500\ne2000\ne2500\ne3000\n" {
		t.Fatalf("stderr %q", errw.String())
	}
}

// WithOutput sees both streams, each in order; chunks may be kept.
func TestOutputCallback(t *testing.T) {
	s := newSession(t)
	var chunks [3][][]byte
	r := run(t, s, "echo a; echo b >&2; echo c", shexec.WithOutput(func(st shexec.Stream, b []byte) {
		chunks[st] = append(chunks[st], b)
	}))
	if got := string(bytes.Join(chunks[shexec.Stdout], nil)); got != "a\nc\n" || got != r.Stdout {
		t.Fatalf("stdout chunks %q", got)
	}
	if got := string(bytes.Join(chunks[shexec.Stderr], nil)); got != "b\n" {
		t.Fatalf("stderr chunks %q", got)
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

// A writer that fails ends the command; Run returns its error. (The
// default kill grace: a child bash forks as the SIGTERM comes gets it from
// the library too, so the cancel does not wait for the SIGKILL.)
func TestFailingWriterEndsCommand(t *testing.T) {
	s := newSession(t)
	w := &failingWriter{}
	start := time.Now()
	r, err := s.Run(context.Background(), "echo x; sleep 300", shexec.WithStdout(w))
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err %v", err)
	}
	if r == nil || r.State != shexec.StateCancelled || time.Since(start) > 10*time.Second || w.n != 1 {
		t.Fatalf("result %+v after %v, %d writes", r, time.Since(start), w.n)
	}
}

// A panic in a callback ends the command and is raised by Run once it ended.
func TestCallbackPanic(t *testing.T) {
	s := newSession(t)
	f := tempFile(t, "pid")
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v, want boom", p)
			}
		}()
		s.Run(context.Background(), "echo $$ > "+quote(f)+"; echo x; sleep 300",
			shexec.WithOutput(func(shexec.Stream, []byte) { panic("boom") }))
		t.Fatal("Run did not panic")
	}()
	assertGone(t, pidsIn(t, f))
	if r := run(t, s, "echo after"); r.Stdout != "after\n" {
		t.Fatalf("after the panic: %q", r.Stdout)
	}
}

func TestErrorsWrapTheLibraryCode(t *testing.T) {
	s := newSession(t)
	err := s.SetCwd("/nonexistent/dir")
	var e *shexec.Error
	if !errors.As(err, &e) || e.Code != shexec.ENOCWD || e.Msg == "" || !errors.Is(err, shexec.ErrNoCwd) {
		t.Fatalf("SetCwd: %#v", err)
	}
	if errors.Is(err, shexec.ErrInvalid) || errors.Is(err, shexec.ErrClosed) {
		t.Fatalf("ENOCWD matched another code: %v", err)
	}
	if !strings.Contains(err.Error(), "SHEXEC_ENOCWD") {
		t.Fatalf("message %q", err.Error())
	}
	if _, err := s.Run(context.Background(), "true", shexec.WithCwd("/nonexistent/dir")); !errors.Is(err, shexec.ErrNoCwd) {
		t.Fatalf("WithCwd: %v", err)
	}
	if _, err := s.Task("tnope"); !errors.Is(err, shexec.ErrNoTask) {
		t.Fatalf("Task: %v", err)
	}
	if err := s.SetTimeouts(0, time.Second); !errors.Is(err, shexec.ErrInvalid) {
		t.Fatalf("SetTimeouts(0): %v", err)
	}
	if _, err := s.Run(context.Background(), "echo a\x00b"); !errors.Is(err, shexec.ErrInvalid) {
		t.Fatalf("NUL in the command: %v", err)
	}
	if err := s.Setenv("A=B", "x"); !errors.Is(err, shexec.ErrInvalid) {
		t.Fatalf("bad name: %v", err)
	}
	// a name is looked up in PATH at once; a path is found missing when a
	// command is to run
	if err := s.SetShell("no-such-shell-for-shexec"); !errors.Is(err, shexec.ErrSpawn) {
		t.Fatalf("SetShell(a missing name): %v", err)
	}
	if err := s.SetShell("/nonexistent/shell"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "true"); !errors.Is(err, shexec.ErrSpawn) {
		t.Fatalf("Run with a missing shell: %v", err)
	}
	if err := s.SetShell(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "true", shexec.WithTimeout(0)); !errors.Is(err, shexec.ErrInvalid) {
		t.Fatalf("WithTimeout(0): %v", err)
	}
	task, err := s.StartTask("sleep 300")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := task.Write([]byte("x")); !errors.Is(err, shexec.ErrPipe) {
		t.Fatalf("write without a stdin pipe: %v", err)
	}
	s.Close()
	if _, err := s.Run(context.Background(), "true"); !errors.Is(err, shexec.ErrClosed) || !errors.Is(err, shexec.ErrState) {
		t.Fatalf("Run after Close: %v", err)
	}
	if _, err := task.Wait(context.Background()); !errors.Is(err, shexec.ErrClosed) {
		t.Fatalf("Wait after Close: %v", err)
	}
	if err := task.Close(); err != nil {
		t.Fatalf("Close of a task of a closed session: %v", err)
	}
	if s.Cwd() != "" {
		t.Fatalf("Cwd of a closed session %q", s.Cwd())
	}
}

// A limit that holds the notice: 600 characters (or bytes) in all, the
// notice and the head/tail marker included; the lines each stream had.
func TestOutputLimitWithin(t *testing.T) {
	s := newSession(t)
	const cmd = `for i in $(seq 3000); do echo "$i é€😀"; done`
	for _, unit := range []shexec.Unit{shexec.Chars, shexec.Bytes} {
		for _, keep := range []shexec.Keep{shexec.KeepHead, shexec.KeepHeadTail} {
			if err := s.SetOutputLimit(600, unit, keep|shexec.KeepWithinLimit); err != nil {
				t.Fatal(err)
			}
			if _, _, k := s.OutputLimit(); k != keep|shexec.KeepWithinLimit {
				t.Fatalf("keep %v", k)
			}
			r := run(t, s, cmd)
			size := utf8.RuneCountInString(r.Stdout)
			if unit == shexec.Bytes {
				size = len(r.Stdout)
			}
			if size > 600 || size <= 590 || !utf8.ValidString(r.Stdout) ||
				!strings.Contains(r.Stdout, "[output truncated: kept the first ") {
				t.Fatalf("%v %v: %d: %q", unit, keep, size, r.Stdout)
			}
			if r.Lines.Stdout != 3000 || r.Lines.Stderr != 0 {
				t.Fatalf("lines %+v", r.Lines)
			}
		}
	}
	// per command, and the default: the notice on top
	if err := s.SetOutputLimit(600, shexec.Chars, shexec.KeepHead); err != nil {
		t.Fatal(err)
	}
	r := run(t, s, cmd, shexec.WithOutputLimit(600, shexec.Bytes, shexec.KeepHead|shexec.KeepWithinLimit))
	if len(r.Stdout) > 600 {
		t.Fatalf("%d bytes", len(r.Stdout))
	}
	if r = run(t, s, cmd); utf8.RuneCountInString(r.Stdout) <= 700 {
		t.Fatalf("without the flag: %d characters", utf8.RuneCountInString(r.Stdout))
	}
}

// A running task's terminal resized: SIGWINCH, and the new size.
func TestTaskSetPtySize(t *testing.T) {
	s := newSession(t)
	task, err := s.StartTask(`trap 'echo WINCH $(stty size)' WINCH; echo ready; sleep 20 & wait $!; kill $!`,
		shexec.WithPTY())
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	readUntil(t, task, "ready\n")
	time.Sleep(100 * time.Millisecond) // `wait` is waiting
	if err := task.SetPtySize(0, 30); !errors.Is(err, shexec.ErrInvalid) {
		t.Fatalf("0 columns: %v", err)
	}
	if err := task.SetPtySize(100, 30); err != nil {
		t.Fatal(err)
	}
	r, err := task.Wait(context.Background())
	if err != nil || r.Stdout != "ready\nWINCH 30 100\n" {
		t.Fatalf("%+v %v", r, err)
	}
	if err := task.SetPtySize(80, 24); !errors.Is(err, shexec.ErrState) {
		t.Fatalf("after the end: %v", err)
	}
	pipes, err := s.StartTask("sleep 20")
	if err != nil {
		t.Fatal(err)
	}
	defer pipes.Close()
	if err := pipes.SetPtySize(80, 24); !errors.Is(err, shexec.ErrState) {
		t.Fatalf("on pipes: %v", err)
	}
}

func TestSettings(t *testing.T) {
	s := newSession(t, shexec.Dir("/"), shexec.Timeouts(3*time.Second, 7*time.Second),
		shexec.KillGrace(time.Second), shexec.OutputLimit(100, shexec.Bytes, shexec.KeepHeadTail),
		shexec.MaxTasks(3), shexec.Env("SHEXEC_GO_TEST", "v1"), shexec.Shell("/bin/sh"))
	if d, m := s.Timeouts(); d != 3*time.Second || m != 7*time.Second {
		t.Fatalf("timeouts %v %v", d, m)
	}
	if g := s.KillGrace(); g != time.Second {
		t.Fatalf("kill grace %v", g)
	}
	if d := s.LeftoversDrain(); d != 100*time.Millisecond {
		t.Fatalf("leftovers drain %v", d)
	}
	if err := s.SetLeftoversDrain(2001 * time.Millisecond); !errors.Is(err, shexec.ErrInvalid) {
		t.Fatalf("a drain above 2 s: %v", err)
	}
	if l, u, k := s.OutputLimit(); l != 100 || u != shexec.Bytes || k != shexec.KeepHeadTail {
		t.Fatalf("output limit %v %v %v", l, u, k)
	}
	if n := s.MaxTasks(); n != 3 {
		t.Fatalf("max tasks %d", n)
	}
	if v, ok := s.Getenv("SHEXEC_GO_TEST"); !ok || v != "v1" {
		t.Fatalf("getenv %q %v", v, ok)
	}
	if m, detail := s.Containment(); detail == "" || (m != shexec.ContainGroup && m != shexec.ContainCgroup) {
		t.Fatalf("containment %v %q", m, detail)
	}
	r := run(t, s, `echo "$SHEXEC_GO_TEST $RUN_VAR ${HOME:-nohome}"; pwd`,
		shexec.WithEnv("RUN_VAR", "r1"), shexec.WithoutEnv("HOME"))
	if r.Stdout != "v1 r1 nohome\n/\n" || r.Timeout != 3*time.Second {
		t.Fatalf("stdout %q timeout %v", r.Stdout, r.Timeout)
	}
	if err := s.Unsetenv("SHEXEC_GO_TEST"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Getenv("SHEXEC_GO_TEST"); ok {
		t.Fatal("Unsetenv left the variable")
	}
	if r := run(t, s, "cat", shexec.WithInput([]byte("fed\n"))); r.Stdout != "fed\n" {
		t.Fatalf("input %q", r.Stdout)
	}
	if r := run(t, s, "test -t 1 && echo tty; echo err >&2", shexec.WithPTY()); r.Stdout != "tty\r\nerr\r\n" && r.Stdout != "tty\nerr\n" {
		t.Fatalf("pty %q", r.Stdout)
	}
}

// Several goroutines on one session: calls serialize (each command sees
// the cwd the previous one left), and -race finds nothing.
func TestConcurrentUse(t *testing.T) {
	s := newSession(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				want := fmt.Sprintf("%d-%d", g, i)
				r, err := s.Run(context.Background(), "echo "+want)
				if err != nil {
					errs <- err
					return
				}
				if r.Stdout != want+"\n" {
					errs <- fmt.Errorf("stdout %q want %q", r.Stdout, want)
				}
				_ = s.Cwd()
				if err := s.Setenv("G"+strconv.Itoa(g), want); err != nil {
					errs <- err
				}
				if i == 2 {
					task, err := s.StartTask("echo task " + want)
					if err != nil {
						errs <- err
						return
					}
					tr, err := task.Wait(context.Background())
					if err != nil || tr.Stdout != "task "+want+"\n" {
						errs <- fmt.Errorf("task: %v %+v", err, tr)
					}
					task.Close()
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Sessions, runs, tasks, callbacks and leftovers give back every
// descriptor they took.
func TestNoFdLeak(t *testing.T) {
	once := func() {
		s, err := shexec.New()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var buf bytes.Buffer
		run(t, s, "echo hi; echo err >&2", shexec.WithStdout(&buf))
		run(t, s, "sleep 300 &")
		task, err := s.StartTask("cat", shexec.WithStdinPipe())
		if err != nil {
			t.Fatal(err)
		}
		task.Write([]byte("x"))
		task.CloseStdin()
		if _, err := task.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		task.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		s.Run(ctx, "sleep 300")
		cancel()
		run(t, s, "sleep 5", shexec.WithTimeout(20*time.Millisecond))
	}
	once() // the runtime's and the library's first-use descriptors
	before := fdCount(t)
	for i := 0; i < 5; i++ {
		once()
	}
	if after := fdCount(t); after != before {
		t.Fatalf("%d descriptors open before, %d after", before, after)
	}
}

func TestTaskWatch(t *testing.T) {
	s := newSession(t)
	task, err := s.StartTask("echo a; sleep 0.4; echo b; sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	ctx := context.Background()
	t0 := time.Now()
	why, err := task.Watch(ctx, 800*time.Millisecond, 20*time.Second)
	if err != nil || why != shexec.WatchQuiet {
		t.Fatalf("watch: %v %v", why, err)
	}
	// b came at ~0.4 s: quiet 0.8 s after it, not 0.8 s after the call
	if took := time.Since(t0); took < 1100*time.Millisecond || took > 8*time.Second {
		t.Fatalf("quiet after %v", took)
	}
	if got, _ := task.Read(shexec.Stdout); got != "a\nb\n" {
		t.Fatalf("read %q", got)
	}
	if q, _ := task.Quiet(); q < 800*time.Millisecond {
		t.Fatalf("quiet %v", q)
	}
	// silent before the call: the quiet counts from the call
	t0 = time.Now()
	if why, err := task.Watch(ctx, 500*time.Millisecond, 0); err != nil || why != shexec.WatchQuiet ||
		time.Since(t0) < 450*time.Millisecond {
		t.Fatalf("watch again: %v %v after %v", why, err, time.Since(t0))
	}

	busy, err := s.StartTask("while :; do echo x; sleep 0.1; done")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	t0 = time.Now()
	if why, err := busy.Watch(ctx, 600*time.Millisecond, time.Second); err != nil || why != shexec.WatchTime ||
		time.Since(t0) < 950*time.Millisecond {
		t.Fatalf("busy: %v %v after %v", why, err, time.Since(t0))
	}
	short, err := s.StartTask("sleep 0.3; exit 4")
	if err != nil {
		t.Fatal(err)
	}
	defer short.Close()
	if why, err := short.Watch(ctx, 5*time.Second, 20*time.Second); err != nil || why != shexec.WatchEnded {
		t.Fatalf("short: %v %v", why, err)
	}
	if why.String() != "quiet" || shexec.WatchEnded.String() != "ended" {
		t.Fatalf("names %v %v", why, shexec.WatchEnded)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := busy.Watch(cctx, time.Minute, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if _, err := os.ReadFile("/proc/self/syscall"); err == nil {
		asks, err := s.StartTask("read x; echo got $x", shexec.WithStdinPipe())
		if err != nil {
			t.Fatal(err)
		}
		defer asks.Close()
		if why, err := asks.Watch(ctx, 0, 20*time.Second); err != nil || why != shexec.WatchInput {
			t.Fatalf("asks: %v %v", why, err)
		}
		if _, err := io.WriteString(asks, "y\n"); err != nil {
			t.Fatal(err)
		}
		if why, err := asks.Watch(ctx, 0, 20*time.Second); err != nil || why != shexec.WatchEnded {
			t.Fatalf("answered: %v %v", why, err)
		}
		if got, _ := asks.Read(shexec.Stdout); got != "got y\n" {
			t.Fatalf("read %q", got)
		}
	}
}
