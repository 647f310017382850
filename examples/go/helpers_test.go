package shexec_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	shexec "github.com/shexec/shexec-go"
)

// newSession is a session closed when the test ends.
func newSession(t *testing.T, opts ...shexec.Option) *shexec.Session {
	t.Helper()
	s, err := shexec.New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// run runs a command that must run (whatever its exit).
func run(t *testing.T, s *shexec.Session, cmd string, opts ...shexec.RunOption) *shexec.Result {
	t.Helper()
	r, err := s.Run(context.Background(), cmd, opts...)
	if err != nil {
		t.Fatalf("Run(%q): %v", cmd, err)
	}
	return r
}

// alive reports whether a process exists and is not a zombie: a process
// that was killed stays a zombie until its parent (init, or whoever
// adopted it) reaps it, and that is gone as far as a command goes.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	st := s[i+2]
	return st != 'Z' && st != 'X'
}

// pidsIn reads the pids a command wrote into path, one per line.
func pidsIn(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the command wrote no pids: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			t.Fatalf("bad pid %q in %s", f, path)
		}
		pids = append(pids, n)
	}
	return pids
}

// assertGone fails for each pid still running.
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	for _, p := range pids {
		if alive(p) {
			t.Errorf("process %d is still running", p)
		}
	}
}

// tempFile is a path in a directory removed when the test ends.
func tempFile(t *testing.T, name string) string {
	return filepath.Join(t.TempDir(), name)
}

// eventually polls cond until it holds or d passed.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readUntil reads a task's stdout until want has arrived; returns all read.
func readUntil(t *testing.T, task *shexec.Task, want string) string {
	t.Helper()
	var got strings.Builder
	eventually(t, 10*time.Second, "task output "+strconv.Quote(want), func() bool {
		s, err := task.Read(shexec.Stdout)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		got.WriteString(s)
		return strings.Contains(got.String(), want)
	})
	return got.String()
}

// fdCount is how many descriptors the test process has open.
func fdCount(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

func quote(path string) string { return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'" }
