package shexec_test

// The seed scenarios of the bash tool, as the C suites and the other
// bindings run them, here against the Go binding:
// what a model host sees when it runs commands through a session.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	shexec "github.com/shexec/shexec-go"
)

func TestSeedSimpleCommand(t *testing.T) {
	s := newSession(t)
	r := run(t, s, "echo hello")
	if r.Stdout != "hello\n" || r.ExitCode != 0 {
		t.Fatalf("stdout %q exit %d", r.Stdout, r.ExitCode)
	}
}

func TestSeedExitCode(t *testing.T) {
	s := newSession(t)
	if r := run(t, s, "exit 42"); r.ExitCode != 42 || r.State != shexec.StateExited {
		t.Fatalf("exit %d state %v", r.ExitCode, r.State)
	}
}

func TestSeedStderr(t *testing.T) {
	s := newSession(t)
	r := run(t, s, "echo error >&2")
	if r.Stderr != "error\n" || r.Stdout != "" {
		t.Fatalf("stdout %q stderr %q", r.Stdout, r.Stderr)
	}
}

func TestSeedCdPersists(t *testing.T) {
	s := newSession(t)
	run(t, s, "cd /tmp")
	if r := run(t, s, "pwd"); r.Stdout != "/tmp\n" || s.Cwd() != "/tmp" {
		t.Fatalf("pwd %q cwd %q", r.Stdout, s.Cwd())
	}
}

// The library's own record of the cwd never shows in the output: stdout is
// exactly what the command wrote.
func TestSeedSentinelStripped(t *testing.T) {
	s := newSession(t)
	for _, c := range []struct{ cmd, out string }{
		{"cd /usr && echo hi", "hi\n"},
		{"printf 'no newline'", "no newline"},
		{"cd /tmp", ""},
		{"echo x; cd /; echo y", "x\ny\n"},
	} {
		r := run(t, s, c.cmd)
		if r.Stdout != c.out || r.Stderr != "" {
			t.Fatalf("%q: stdout %q stderr %q, want %q", c.cmd, r.Stdout, r.Stderr, c.out)
		}
	}
	if s.Cwd() != "/" {
		t.Fatalf("cwd %q", s.Cwd())
	}
}

// Marker text a command prints itself is output, never a cwd report: the
// nonce-less __SHEXEC_CWD__ form, a NUL-terminated record of another
// nonce, and the old ___SHEXEC_CWD___: form stay in stdout byte for byte,
// and the session's cwd does not move.
func TestSeedOldSentinelNotParsed(t *testing.T) {
	s := newSession(t, shexec.Dir("/tmp"))
	cmd := `echo "___SHEXEC_CWD___:/etc"; echo __SHEXEC_CWD__/etc; ` +
		`printf '__SHEXEC_CWD__/usr\000'; printf '__SHEXEC_CWD_0123456789abcdef__/usr\000'; echo end`
	want := "___SHEXEC_CWD___:/etc\n__SHEXEC_CWD__/etc\n__SHEXEC_CWD__/usr\x00" +
		"__SHEXEC_CWD_0123456789abcdef__/usr\x00end\n"
	r := run(t, s, cmd)
	if r.Stdout != want {
		t.Fatalf("stdout %q, want %q", r.Stdout, want)
	}
	if s.Cwd() != "/tmp" || r.Cwd != "/tmp" {
		t.Fatalf("cwd moved to %q", s.Cwd())
	}
}

func TestSeedCwdKeptAfterTimeout(t *testing.T) {
	s := newSession(t)
	run(t, s, "cd /tmp")
	r := run(t, s, "cd /usr; sleep 30", shexec.WithTimeout(300*time.Millisecond))
	if !r.TimedOut || s.Cwd() != "/tmp" {
		t.Fatalf("timed out %v cwd %q", r.TimedOut, s.Cwd())
	}
	if r := run(t, s, "pwd"); r.Stdout != "/tmp\n" {
		t.Fatalf("pwd %q", r.Stdout)
	}
}

// A workdir for one command: it runs there, the session stays.
func TestSeedWorkdir(t *testing.T) {
	s := newSession(t, shexec.Dir("/tmp"))
	if r := run(t, s, "pwd", shexec.WithCwd("/usr")); r.Stdout != "/usr\n" {
		t.Fatalf("pwd %q", r.Stdout)
	}
	if r := run(t, s, "cd /etc; pwd", shexec.WithCwd("/usr")); r.Stdout != "/etc\n" || s.Cwd() != "/tmp" {
		t.Fatalf("pwd %q cwd %q: a run elsewhere moved the session", r.Stdout, s.Cwd())
	}
	if err := s.SetCwd("/"); err != nil {
		t.Fatal(err)
	}
	if r := run(t, s, "pwd", shexec.WithCwd("usr")); r.Stdout != "/usr\n" {
		t.Fatalf("relative workdir: pwd %q", r.Stdout)
	}
}

// A timeout in milliseconds, and its cap: a foreground run's timeout is
// clamped to the session maximum (shexec_session_set_timeouts_ms), which
// Result.Timeout tells; a default above the maximum is refused.
func TestSeedTimeoutAndCap(t *testing.T) {
	s := newSession(t)
	start := time.Now()
	r := run(t, s, "sleep 5", shexec.WithTimeout(300*time.Millisecond))
	if !r.TimedOut || r.Timeout != 300*time.Millisecond || time.Since(start) > 4*time.Second {
		t.Fatalf("timed out %v timeout %v after %v", r.TimedOut, r.Timeout, time.Since(start))
	}
	if d, m := s.Timeouts(); d != 120*time.Second || m != 600*time.Second {
		t.Fatalf("default timeouts %v %v", d, m)
	}
	if err := s.SetTimeouts(2*time.Second, time.Second); !errors.Is(err, shexec.ErrInvalid) {
		t.Fatalf("default above the maximum: %v", err)
	}
	if err := s.SetTimeouts(200*time.Millisecond, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	r = run(t, s, "sleep 10", shexec.WithTimeout(time.Hour))
	el := time.Since(start)
	if !r.TimedOut || r.Timeout != 500*time.Millisecond || el < 450*time.Millisecond || el > 5*time.Second {
		t.Fatalf("capped: timed out %v timeout %v after %v", r.TimedOut, r.Timeout, el)
	}
	if r := run(t, s, "sleep 10"); !r.TimedOut || r.Timeout != 200*time.Millisecond {
		t.Fatalf("default: timed out %v timeout %v", r.TimedOut, r.Timeout)
	}
}

// At a timeout the command gets SIGTERM first: its trap's cleanup runs.
func TestSeedSigtermTrapCleanup(t *testing.T) {
	s := newSession(t)
	f := tempFile(t, "cleanup")
	r := run(t, s, "trap 'echo cleanup > "+quote(f)+"' TERM; sleep 30", shexec.WithTimeout(500*time.Millisecond))
	if !r.TimedOut {
		t.Fatalf("state %v", r.State)
	}
	b, err := os.ReadFile(f)
	if err != nil || string(b) != "cleanup\n" {
		t.Fatalf("the trap's file: %q %v", b, err)
	}
}

const notice50k = "\n[output truncated: kept the first 30000 characters (%d bytes) of 50000 (%d bytes, 1 lines); " +
	"20000 characters (%d bytes) omitted]\n"

// 50,000 characters against the default limit of 30,000: the first 30,000
// are kept, and the notice says exactly what was left out.
func TestSeedTruncation(t *testing.T) {
	s := newSession(t)
	if l, u, k := s.OutputLimit(); l != 30000 || u != shexec.Chars || k != shexec.KeepHead {
		t.Fatalf("default limit %d %v %v", l, u, k)
	}
	r := run(t, s, `head -c 50000 /dev/zero | tr '\0' a`)
	want := strings.Repeat("a", 30000) + fmt.Sprintf(notice50k, 30000, 50000, 20000)
	if !r.Truncated.Stdout || r.Truncated.Stderr || r.Stdout != want {
		t.Fatalf("truncated %+v, %d bytes, ends %q", r.Truncated, len(r.Stdout), tail(r.Stdout))
	}
	// characters, not bytes: 50,000 two-byte characters
	r = run(t, s, `yes é | head -n 50000 | tr -d '\n'`)
	want = strings.Repeat("é", 30000) + fmt.Sprintf(notice50k, 60000, 100000, 40000)
	if !r.Truncated.Stdout || r.Stdout != want {
		t.Fatalf("%d bytes, ends %q", len(r.Stdout), tail(r.Stdout))
	}
}

func TestSeedStderrTruncatedIndependently(t *testing.T) {
	s := newSession(t)
	r := run(t, s, `head -c 50000 /dev/zero | tr '\0' e >&2; echo small`)
	if !r.Truncated.Stderr || r.Truncated.Stdout || r.Stdout != "small\n" {
		t.Fatalf("truncated %+v stdout %q", r.Truncated, r.Stdout)
	}
	if want := strings.Repeat("e", 30000) + fmt.Sprintf(notice50k, 30000, 50000, 20000); r.Stderr != want {
		t.Fatalf("stderr ends %q", tail(r.Stderr))
	}
}

func TestSeedBackgroundReturnsAtOnce(t *testing.T) {
	s := newSession(t)
	start := time.Now()
	task, err := s.StartTask("sleep 2; echo late")
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	if el := time.Since(start); el > time.Second {
		t.Fatalf("StartTask took %v", el)
	}
	if st := task.State(); st != shexec.StateRunning {
		t.Fatalf("state %v", st)
	}
}

func TestSeedBackgroundDoesNotMoveCwd(t *testing.T) {
	s := newSession(t, shexec.Dir("/tmp"))
	task, err := s.StartTask("cd /usr; pwd")
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	r, err := task.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Stdout != "/usr\n" || s.Cwd() != "/tmp" {
		t.Fatalf("task pwd %q, session cwd %q", r.Stdout, s.Cwd())
	}
}

// Ten tasks at once by default: the eleventh start is ErrLimit; closing
// one gives its slot back.
func TestSeedTaskLimit(t *testing.T) {
	s := newSession(t)
	var tasks []*shexec.Task
	for i := 0; i < 10; i++ {
		task, err := s.StartTask("sleep 30")
		if err != nil {
			t.Fatalf("task %d: %v", i+1, err)
		}
		tasks = append(tasks, task)
	}
	_, err := s.StartTask("sleep 30")
	var e *shexec.Error
	if !errors.Is(err, shexec.ErrLimit) || !errors.As(err, &e) || e.Code != shexec.ELIMIT {
		t.Fatalf("the 11th task: %v", err)
	}
	tasks[0].Close()
	task, err := s.StartTask("true")
	if err != nil {
		t.Fatalf("after a Close: %v", err)
	}
	task.Close()
	for _, task := range tasks[1:] {
		task.Close()
	}
}

func TestSeedTaskStatus(t *testing.T) {
	s := newSession(t)
	task, err := s.StartTask("sleep 0.3; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	if task.State() != shexec.StateRunning || task.Done() {
		t.Fatalf("running task: %v", task.State())
	}
	eventually(t, 10*time.Second, "the task's end", task.Done)
	if st := task.State(); st != shexec.StateExited {
		t.Fatalf("finished task: %v", st)
	}
	r, err := task.Wait(context.Background())
	if err != nil || r.ExitCode != 3 {
		t.Fatalf("result %v %+v", err, r)
	}
}

// A read returns only what is new since the previous read.
func TestSeedSingleRead(t *testing.T) {
	s := newSession(t)
	task, err := s.StartTask("echo first; read x; echo second", shexec.WithStdinPipe())
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	if got := readUntil(t, task, "first\n"); got != "first\n" {
		t.Fatalf("first read %q", got)
	}
	if got, _ := task.Read(shexec.Stdout); got != "" {
		t.Fatalf("second read %q, want nothing new", got)
	}
	task.Write([]byte("go\n"))
	if _, err := task.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := task.Read(shexec.Stdout); got != "second\n" {
		t.Fatalf("read after the end %q", got)
	}
	if all, _ := task.Output(shexec.Stdout); all != "first\nsecond\n" {
		t.Fatalf("all output %q", all)
	}
}

func TestSeedUnknownTask(t *testing.T) {
	s := newSession(t)
	_, err := s.Task("tnope")
	var e *shexec.Error
	if !errors.Is(err, shexec.ErrNoTask) || !errors.As(err, &e) || !strings.Contains(e.Msg, "tnope") {
		t.Fatalf("err %v", err)
	}
}

// A task's timeout is its safety net: it ends timed out. A task's timeout
// is not capped by the session maximum.
func TestSeedTaskSafetyNetTimeout(t *testing.T) {
	s := newSession(t)
	task, err := s.StartTask("sleep 30", shexec.WithTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := task.Wait(ctx)
	if err != nil || !r.TimedOut || r.State != shexec.StateTimedOut {
		t.Fatalf("err %v result %+v", err, r)
	}

	if err := s.SetTimeouts(100*time.Millisecond, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	task2, err := s.StartTask("sleep 0.5; echo ok", shexec.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer task2.Close()
	r, err = task2.Wait(ctx)
	if err != nil || r.State != shexec.StateExited || r.Stdout != "ok\n" || r.Timeout != 5*time.Second {
		t.Fatalf("err %v result %+v", err, r)
	}
}

func TestSeedEmptyCommand(t *testing.T) {
	s := newSession(t)
	r, err := s.Run(context.Background(), "")
	if !errors.Is(err, shexec.ErrInvalid) || r != nil {
		t.Fatalf("Run(\"\"): %v %+v", err, r)
	}
	if _, err := s.StartTask(""); !errors.Is(err, shexec.ErrInvalid) {
		t.Fatalf("StartTask(\"\"): %v", err)
	}
	if r := run(t, s, "echo still fine"); r.Stdout != "still fine\n" {
		t.Fatalf("after: %q", r.Stdout)
	}
}

func tail(s string) string {
	if len(s) > 200 {
		return s[len(s)-200:]
	}
	return s
}
