package shexec

import (
	"io"
	"time"
)

// Option configures a new session (New). Each is the setter of the same
// name applied in order; the first error makes New fail.
type Option func(*Session) error

// Dir starts the session in dir instead of the host's working directory.
func Dir(dir string) Option { return func(s *Session) error { return s.SetCwd(dir) } }

// Shell sets the program that runs each command (see Session.SetShell).
func Shell(argv ...string) Option { return func(s *Session) error { return s.SetShell(argv...) } }

// Env sets a variable for every command (see Session.Setenv).
func Env(name, value string) Option {
	return func(s *Session) error { return s.Setenv(name, value) }
}

// InheritEnv chooses whether commands start from the host's environment
// (true, the default) or an empty one.
func InheritEnv(inherit bool) Option {
	return func(s *Session) error { return s.SetEnvInherit(inherit) }
}

// Timeouts sets the default and the maximum command timeout (see
// Session.SetTimeouts).
func Timeouts(def, max time.Duration) Option {
	return func(s *Session) error { return s.SetTimeouts(def, max) }
}

// KillGrace sets the time between SIGTERM and SIGKILL (see Session.SetKillGrace).
func KillGrace(d time.Duration) Option { return func(s *Session) error { return s.SetKillGrace(d) } }

// OutputLimit sets how much of each stream a command keeps (see
// Session.SetOutputLimit).
func OutputLimit(limit uint64, unit Unit, keep Keep) Option {
	return func(s *Session) error { return s.SetOutputLimit(limit, unit, keep) }
}

// MaxTasks sets how many tasks the session holds at once (see Session.SetMaxTasks).
func MaxTasks(n int) Option { return func(s *Session) error { return s.SetMaxTasks(n) } }

// LeftoversDrain sets how long what a command left running is read as its
// output after its shell exits (see Session.SetLeftoversDrain).
func LeftoversDrain(d time.Duration) Option {
	return func(s *Session) error { return s.SetLeftoversDrain(d) }
}

// OnLeftovers sets what happens to processes a command leaves running.
func OnLeftovers(p LeftoverPolicy) Option {
	return func(s *Session) error { return s.SetOnLeftovers(p) }
}

// Containment sets where commands' cgroups are made: "auto" (the default),
// a cgroup2 directory, or "off" (process groups only).
func Containment(parent string) Option {
	return func(s *Session) error { return s.SetContainment(parent) }
}

// AgentEnv applies the agent environment preset (see Session.ApplyAgentEnv).
func AgentEnv() Option { return func(s *Session) error { return s.ApplyAgentEnv() } }

// PersistEnv keeps the shell's state (exports, variables, functions) from
// one command to the next (see Session.SetPersistEnv).
func PersistEnv() Option { return func(s *Session) error { return s.SetPersistEnv(true) } }

// RunOption configures one command (Session.Run or Session.StartTask).
type RunOption func(*runConfig)

type envVar struct {
	name  string
	value *string // nil: remove it
}

type runConfig struct {
	timeout    time.Duration
	hasTimeout bool
	cwd        *string
	env        []envVar
	pty        bool
	ansiStrip  bool
	limit      *[3]uint64 // limit, unit, keep
	stdinPipe  bool
	input      []byte
	hasInput   bool
	stdout     io.Writer
	stderr     io.Writer
	output     func(Stream, []byte)
}

// WithTimeout sets the command's timeout (rounded up to whole
// milliseconds). A foreground command's is capped at the session's maximum
// (Session.SetTimeouts; Result.Timeout tells the one in force); a task's is
// not capped. Zero or negative is refused (ErrInvalid). Without it a
// command has the session's default timeout and a task none.
func WithTimeout(d time.Duration) RunOption {
	return func(c *runConfig) { c.timeout, c.hasTimeout = d, true }
}

// WithCwd runs the command in dir (relative: to the session's cwd) without
// moving the session's cwd.
func WithCwd(dir string) RunOption { return func(c *runConfig) { c.cwd = &dir } }

// WithEnv sets a variable for this command only.
func WithEnv(name, value string) RunOption {
	return func(c *runConfig) { c.env = append(c.env, envVar{name, &value}) }
}

// WithoutEnv removes a variable from this command's environment.
func WithoutEnv(name string) RunOption {
	return func(c *runConfig) { c.env = append(c.env, envVar{name, nil}) }
}

// WithPTY runs the command on a pseudo-terminal: stdout and stderr arrive
// merged on Stdout, input written is typed at the terminal.
func WithPTY() RunOption { return func(c *runConfig) { c.pty = true } }

// WithANSIStrip removes escape sequences and resolves \r overwrites.
func WithANSIStrip() RunOption { return func(c *runConfig) { c.ansiStrip = true } }

// WithOutputLimit sets this command's output limit in place of the session's.
func WithOutputLimit(limit uint64, unit Unit, keep Keep) RunOption {
	return func(c *runConfig) { c.limit = &[3]uint64{limit, uint64(unit), uint64(keep)} }
}

// WithInput gives the command data on its stdin, then end of file
// (instead of /dev/null).
func WithInput(data []byte) RunOption {
	return func(c *runConfig) {
		c.input, c.hasInput = append([]byte(nil), data...), true
	}
}

// WithStdinPipe gives a task a stdin pipe left open for Task.Write and
// Task.CloseStdin.
func WithStdinPipe() RunOption { return func(c *runConfig) { c.stdinPipe = true } }

// WithStdout streams the command's stdout to w as it is produced, chunk by
// chunk and in order (the bytes before truncation: all of them). The
// result keeps its bounded copy too. An error from w ends the command
// (SIGTERM, grace, SIGKILL) and Run returns it.
func WithStdout(w io.Writer) RunOption { return func(c *runConfig) { c.stdout = w } }

// WithStderr streams the command's stderr to w, as WithStdout does stdout.
func WithStderr(w io.Writer) RunOption { return func(c *runConfig) { c.stderr = w } }

// WithOutput calls fn with each chunk of either stream as it is produced,
// each stream's chunks in order. fn runs inside the session's loop with the
// session locked: it must not call the Session or its Tasks (that would
// deadlock); to stop the command from fn, cancel Run's context. A panic in
// fn ends the command and is raised again by Run (or Task.Wait) once it
// ended.
func WithOutput(fn func(Stream, []byte)) RunOption {
	return func(c *runConfig) { c.output = fn }
}

func (c *runConfig) sink() *sink {
	if c.stdout == nil && c.stderr == nil && c.output == nil {
		return nil
	}
	return &sink{stdout: c.stdout, stderr: c.stderr, fn: c.output}
}
