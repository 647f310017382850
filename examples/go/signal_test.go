package shexec_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	shexec "github.com/shexec/shexec-go"
)

const python = "/usr/bin/python3"

// readySleep says "ready" from the process the signal is for: forked
// already (a child bash forks as a signal comes starts without it, and bash
// waits for it).
const readySleep = "sh -c 'echo ready; exec sleep 60'"

// waitFor pumps until the task's stdout holds text (a minute at most).
func waitFor(t *testing.T, task *shexec.Task, text string) string {
	t.Helper()
	end := time.Now().Add(time.Minute)
	for {
		out, err := task.Output(shexec.Stdout)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, text) {
			return out
		}
		if time.Now().After(end) || task.Done() {
			t.Fatalf("no %q in %q", text, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startServer starts http.server as a task and waits until it serves: its
// "Serving" line, then a request answered on the loopback (only inside
// serve_forever() does a SIGINT take its KeyboardInterrupt path; the line
// is printed just before it).
func startServer(t *testing.T, s *shexec.Session) *shexec.Task {
	t.Helper()
	task, err := s.StartTask(python + " -u -m http.server 0 --bind 127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	out := waitFor(t, task, "Serving HTTP on")
	port := regexp.MustCompile(` port (\d+) `).FindStringSubmatch(out)
	if port == nil {
		t.Fatalf("no port in %q", out)
	}
	client := http.Client{Timeout: time.Minute}
	resp, err := client.Get("http://127.0.0.1:" + port[1] + "/")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body) // to its end: the request is over
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return task
}

func TestCtrlCToHTTPServer(t *testing.T) {
	if _, err := os.Stat(python); err != nil {
		t.Skip("needs " + python)
	}
	s := newSession(t)
	for _, typed := range []bool{false, true} {
		task := startServer(t, s)
		if task.Interrupted() {
			t.Fatal("interrupted before any signal")
		}
		var err error
		if typed {
			err = task.TypeInput([]byte("\x03")) // no WithStdinPipe: a ^C needs none
		} else {
			err = task.SendSignal(syscall.SIGINT)
		}
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		r, err := task.Wait(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Stdout, "Keyboard interrupt received, exiting.") {
			t.Fatalf("typed %v: %q %q", typed, r.Stdout, r.Stderr)
		}
		if r.State != shexec.StateExited || r.ExitCode != 0 || r.Signal != 0 || !r.Interrupted ||
			!task.Interrupted() {
			t.Fatalf("typed %v: %+v", typed, r)
		}
		// over: nothing is sent
		if err := task.SendSignal(syscall.SIGINT); !errors.Is(err, shexec.ErrState) {
			t.Fatalf("a signal to a finished task: %v", err)
		}
		task.Close()
	}
}

func TestTaskEndedByCtrlCSaysSignal2(t *testing.T) {
	s := newSession(t)
	task, err := s.StartTask(readySleep)
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	waitFor(t, task, "ready")
	sig, err := shexec.ParseSignal("int")
	if err != nil || sig != syscall.SIGINT {
		t.Fatalf("ParseSignal(int) = %v, %v", sig, err)
	}
	if err := task.SendSignal(sig); err != nil {
		t.Fatal(err)
	}
	r, err := task.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.State != shexec.StateSignaled || r.Signal != syscall.SIGINT || r.ExitCode != -1 || !r.Interrupted {
		t.Fatalf("%+v", r)
	}
}

func TestBadSignalsRefused(t *testing.T) {
	for _, bad := range []string{"", "SIGSEGV", "TSTP", "2", "INT\x00"} {
		if _, err := shexec.ParseSignal(bad); !errors.Is(err, shexec.ErrInvalid) {
			t.Fatalf("ParseSignal(%q): %v", bad, err)
		}
	}
	for name, want := range map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SigTerm": syscall.SIGTERM,
		"usr1": syscall.SIGUSR1, "STOP": syscall.SIGSTOP} {
		if got, err := shexec.ParseSignal(name); err != nil || got != want {
			t.Fatalf("ParseSignal(%q) = %v, %v", name, got, err)
		}
	}
	s := newSession(t)
	task, err := s.StartTask("trap 'echo usr1; exit 7' USR1; echo ready; while :; do sleep 0.1; done")
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	waitFor(t, task, "ready")
	for _, bad := range []syscall.Signal{0, syscall.SIGSEGV, syscall.SIGTSTP, syscall.SIGCHLD, 999} {
		if err := task.SendSignal(bad); !errors.Is(err, shexec.ErrInvalid) {
			t.Fatalf("SendSignal(%d): %v", bad, err)
		}
	}
	if task.Done() {
		t.Fatal("a refused signal ended the task")
	}
	if err := task.SendSignal(syscall.SIGUSR1); err != nil { // its trap; no interrupt
		t.Fatal(err)
	}
	r, err := task.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.State != shexec.StateExited || r.ExitCode != 7 || r.Interrupted || r.Stdout != "ready\nusr1\n" {
		t.Fatalf("%+v", r)
	}
	if err := task.TypeInput([]byte("\x03")); !errors.Is(err, shexec.ErrPipe) {
		t.Fatalf("typing at a finished task: %v", err)
	}
}
