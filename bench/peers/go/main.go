// Command peer is the Go contender of the libshexec benchmark (bench/main.c
// runs it as build/bench/peer-go): it runs one measurement the way a Go
// agent host runs commands, and prints one line "RESULT key=value ..." for
// the driver to parse. Anything wrong (a start that fails, a non-zero exit)
// ends it with a message and a non-zero status, and the driver stops.
//
//	peer version
//	peer spawn osexec|shexec SHELL N HOST_MIB [BUDGET_S]
//	                    sequential agent-style runs of `true`: through
//	                    os/exec (exec.CommandContext with a 120 s timeout, its
//	                    own process group, stdout and stderr captured), or
//	                    through the Go binding (one session, Run with a
//	                    120 s timeout)
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	shexec "github.com/shexec/shexec-go"
)

const agentTimeout = 120 * time.Second

func result(kv string) { fmt.Println("RESULT " + kv) }

func die(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "peer-go: "+format+"\n", args...)
	os.Exit(1)
}

// runOSExec runs cmd as Go agent hosts do: exec.CommandContext with a
// timeout, the shell in a process group of its own (so a timeout can end
// the group), both streams captured.
func runOSExec(shell, cmd string) error {
	ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, shell, "-c", cmd)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("`%s` failed: %v (stderr %q)", cmd, err, stderr.String())
	}
	return nil
}

// holdMemory allocates mib MiB and writes a byte in every page, so the
// host is as large as one with a heap in use when it spawns.
func holdMemory(mib int) []byte {
	if mib <= 0 {
		return nil
	}
	b := make([]byte, mib<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	return b
}

func spawn(args []string) {
	if len(args) < 4 || len(args) > 5 {
		die("usage: spawn osexec|shexec SHELL N HOST_MIB [BUDGET_S]")
	}
	mode, shell := args[0], args[1]
	n, err := strconv.Atoi(args[2])
	if err != nil || n < 1 {
		die("bad N %q", args[2])
	}
	mib, err := strconv.Atoi(args[3])
	if err != nil || mib < 0 {
		die("bad HOST_MIB %q", args[3])
	}
	budget := 0.0
	if len(args) == 5 {
		if budget, err = strconv.ParseFloat(args[4], 64); err != nil || budget < 0 {
			die("bad BUDGET_S %q", args[4])
		}
	}

	var one func() error
	switch mode {
	case "osexec":
		one = func() error { return runOSExec(shell, "true") }
	case "shexec":
		// one session, as a host keeps one per agent; on process groups
		// like the bench's own sessions (row 1c prices cgroups)
		s, err := shexec.New(shexec.Shell(shell), shexec.Containment("off"))
		if err != nil {
			die("%v", err)
		}
		defer s.Close()
		ctx := context.Background()
		one = func() error {
			r, err := s.Run(ctx, "true", shexec.WithTimeout(agentTimeout))
			if err != nil {
				return err
			}
			if r.State != shexec.StateExited || r.ExitCode != 0 {
				return fmt.Errorf("`true` ended %v, exit %d", r.State, r.ExitCode)
			}
			return nil
		}
	default:
		die("unknown spawn mode %q", mode)
	}

	ballast := holdMemory(mib)
	// a budget (seconds) ends the loop early: a slow spawner still gives a rate
	t0 := time.Now()
	for i := 0; i < 10; i++ {
		if err := one(); err != nil {
			die("%v", err)
		}
		if budget > 0 && time.Since(t0).Seconds() > budget/4 {
			break
		}
	}
	t0 = time.Now()
	done := 0
	for done < n {
		if err := one(); err != nil {
			die("%v", err)
		}
		done++
		if budget > 0 && done >= 3 && time.Since(t0).Seconds() > budget {
			break
		}
	}
	dt := time.Since(t0).Seconds()
	runtime.KeepAlive(ballast)
	result(fmt.Sprintf("runs_per_s=%.3f runs=%d", float64(done)/dt, done))
}

func main() {
	if len(os.Args) < 2 {
		die("usage: peer version | peer spawn MODE SHELL N HOST_MIB [BUDGET_S]")
	}
	switch os.Args[1] {
	case "version":
		result("version=" + runtime.Version())
	case "spawn":
		spawn(os.Args[2:])
	default:
		die("unknown test %q", os.Args[1])
	}
}
