package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/capstan-dev/capstan"
)

// Job is one attempt of a job node.
type Job struct {
	OperationID string
	NodeID      string
	Attempt     int
	// Dir is the operation's sandbox directory, where the job runs.
	Dir  string
	Spec capstan.RunSpec
	// Env carries parameters and upstream artifacts: CAPSTAN_PARAM_<NAME>
	// and CAPSTAN_ARTIFACT_<NAME>. Values never enter the command string.
	Env map[string]string
	// Outputs is the directory where the job writes the artifacts its
	// contract declares (Artifacts), one file per artifact name.
	Outputs   string
	Artifacts []capstan.ArtifactSpec
	// Target is the host a remote runner acts on (the spec's target
	// requirement, resolved); nil for a local job.
	Target *Target
	// Deadline is the window the job's executor may act in (Window):
	// when it closes unmoved, a watchdog that needs nothing of the
	// executor kills the job, on the server or on its host. Nil or
	// unbounded: none.
	Deadline Deadline
}

// Deadline is how long a job may still run: a Window as runners see it.
type Deadline interface {
	// Remaining is how long from now; bounded is false for no end.
	Remaining() (left time.Duration, bounded bool)
	// Moved is closed when the end moves.
	Moved() <-chan struct{}
}

// leaseKilled is the result of a job its watchdog killed.
func leaseKilled(j Job, out []byte) Result {
	return Result{ExitCode: -1, Output: out, ErrKind: ErrKindLease,
		Err: fmt.Errorf("job %s: killed by its watchdog: the executor's lease ran out before it was renewed", j.NodeID)}
}

// ErrKindLease is the error kind of a job its watchdog killed: its
// executor's lease ran out before the executor renewed it.
const ErrKindLease = "lease"

// Result is the outcome of a job attempt. A zero exit code is not success:
// the node succeeds only when its evidence passes (invariant 5).
type Result struct {
	ExitCode int
	Output   []byte
	// ErrKind classifies a failure for the retry policy: exit:N, timeout,
	// cancelled, runner.
	ErrKind string
	Err     error
	// Evidence is what the runner itself observed (an ansible play's
	// recap), recorded beside the probes'.
	Evidence []capstan.Evidence
}

// Runner runs jobs of one kind (shell, http, sim).
type Runner interface {
	Run(ctx context.Context, j Job) Result
}

// MaxOutput bounds the diagnostics kept from a job's stdout and stderr.
const MaxOutput = 64 << 10

// DefaultTimeout bounds a job without its own timeout.
const DefaultTimeout = 10 * time.Minute

// Timeout is how long an attempt of the job may run: its spec's timeout,
// or DefaultTimeout. Every runner bounds its attempts by it.
func (j Job) Timeout() time.Duration { return parseOr(j.Spec.Timeout, DefaultTimeout) }

// ShellRunner runs a job's script with bash in its own process group, so
// a timeout or a cancel kills every process it started; with a Sandbox,
// confined by it (sandbox.go).
type ShellRunner struct {
	// Dir is the working directory (a sandbox for demos).
	Dir string
	// Sandbox confines the job (nil: the server's user, no limits).
	Sandbox *Sandbox
}

// diskCheckEvery is how often a sandboxed job's disk use is measured.
const diskCheckEvery = 250 * time.Millisecond

// Run runs the script.
func (r ShellRunner) Run(ctx context.Context, j Job) Result {
	dir := r.Dir
	if j.Dir != "" {
		dir = j.Dir
	}
	return RunScript(ctx, r.Sandbox, j, j.Spec.Script, dir, j.Outputs, j.Env)
}

// RunScript runs script with bash as an attempt of j: confined by sb (nil:
// as the server's user, for the executor's own tests), in dir with outputs
// (its sandbox and outputs, which the disk quota measures) and env (its
// own variables, host paths: rewritten to where the job sees them),
// bounded by j's timeout, its output by MaxOutput. Every runner that runs
// a process on the server runs it through here.
func RunScript(ctx context.Context, sb *Sandbox, j Job, script, dir, outputs string, env map[string]string) Result {
	j.Outputs = outputs
	timeout := j.Timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	job, err := sb.command(script, dir, j.Outputs, env)
	if capstan.ErrorCode(err) == capstan.EUNAVAILABLE {
		return Result{ExitCode: -1, ErrKind: ErrKindUnisolated, Err: err}
	}
	if err != nil {
		return Result{ExitCode: -1, ErrKind: "runner", Err: err}
	}
	defer job.release()
	cmd := job.cmd
	// A process the job left holding its output pipe (outside the process
	// group, without a PID namespace) must not keep Wait, and the worker,
	// waiting.
	cmd.WaitDelay = 2 * time.Second
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return Result{ExitCode: -1, ErrKind: "runner", Err: err}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	wd, err := startWatchdog(cmd.Process.Pid, j.Deadline)
	if err != nil {
		kill(cmd, done)
		return Result{ExitCode: -1, ErrKind: "runner", Err: fmt.Errorf("job %s: %w", j.NodeID, err)}
	}
	defer wd.end()
	var quota <-chan time.Time
	if sb != nil {
		tick := time.NewTicker(diskCheckEvery)
		defer tick.Stop()
		quota = tick.C
	}
	for {
		select {
		case err = <-done:
			if wd.end() {
				return leaseKilled(j, out.Bytes())
			}
			return exited(j, out.Bytes(), err)
		case <-quota:
			used, hidden := diskUsage(sb.cfg.DiskQuota, dir, j.Outputs)
			if used <= sb.cfg.DiskQuota {
				continue
			}
			kill(cmd, done)
			why := fmt.Sprintf("passed its disk quota of %d bytes", sb.cfg.DiskQuota)
			if hidden != "" {
				why = "holds a directory its disk quota cannot measure (" + filepath.Base(hidden) + ")"
			}
			return Result{ExitCode: -1, Output: out.Bytes(), ErrKind: "disk_quota",
				Err: fmt.Errorf("job %s: the operation's sandbox %s", j.NodeID, why)}
		case <-ctx.Done():
			kill(cmd, done)
			kind := "timeout"
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				kind = "cancelled"
			}
			return Result{ExitCode: -1, Output: out.Bytes(), ErrKind: kind, Err: fmt.Errorf("job %s: %s", j.NodeID, kind)}
		}
	}
}

// kill ends a job's process group (in a PID namespace, the job is its
// init: every process it left dies with it) and waits for it.
func kill(cmd *exec.Cmd, done <-chan error) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

// exited classifies how a job's process ended.
func exited(j Job, output []byte, err error) Result {
	res := Result{Output: output}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		res.ExitCode = exit.ExitCode()
		res.ErrKind = fmt.Sprintf("exit:%d", res.ExitCode)
		res.Err = fmt.Errorf("job %s exited %d", j.NodeID, res.ExitCode)
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ErrKind = "signal:" + ws.Signal().String()
			res.Err = fmt.Errorf("job %s was killed by %s (a limit of its sandbox?)", j.NodeID, ws.Signal())
		}
	} else if err != nil {
		res.ExitCode, res.ErrKind, res.Err = -1, "runner", err
	}
	return res
}

// jobPath is the PATH a job (and a command probe) runs with.
const jobPath = "/usr/local/bin:/usr/bin:/bin"

// jobEnviron is a job's whole environment: an allow-list — a PATH, its
// sandbox as HOME and TMPDIR, a locale — and its own variables
// (parameters, bindings, inputs). Nothing of the server's environment
// (tokens, the Neo4j password, cloud credentials) reaches a job. The rest
// of the sandbox (user, limits, namespaces) is issue 23's.
func jobEnviron(dir string, own map[string]string) []string {
	base := []string{"PATH=" + jobPath, "LANG=C.UTF-8", "LC_ALL=C.UTF-8"}
	if dir != "" {
		base = append(base, "HOME="+dir, "TMPDIR="+dir)
	}
	safe := make(map[string]string, len(own))
	for k, v := range own {
		if !interpreterVariable(k) {
			safe[k] = v
		}
	}
	return append(base, envList(safe)...)
}

// interpreterVariable reports a variable that makes bash, the dynamic
// loader or python run code of its choosing (BASH_ENV, BASH_FUNC_x%%,
// SHELLOPTS with PS4, LD_PRELOAD, PYTHONSTARTUP …): a job's variables
// never carry one. The sandbox's prologue runs as root in the job's
// namespaces with the job's environment.
func interpreterVariable(k string) bool {
	switch k {
	case "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "CDPATH", "GLOBIGNORE", "PATH", "HOME", "TMPDIR":
		return true
	}
	for _, prefix := range []string{"BASH_", "LD_", "PYTHON", "PERL5", "RUBY", "NODE_", "GCONV_", "LOCPATH", "MALLOC_"} {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

func envList(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + m[k]
	}
	return out
}

// limitedBuffer keeps the first MaxOutput bytes and counts the rest. It
// is an io.Writer and nothing more: embedding bytes.Buffer would promote
// ReadFrom, which io.Copy (and so exec.Cmd's pipe copier and the http
// runner) prefers to Write, and the bound would never be applied.
type limitedBuffer struct {
	kept    []byte
	dropped int64
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	room := MaxOutput - len(b.kept)
	if room <= 0 {
		b.dropped += int64(len(p))
		return len(p), nil
	}
	if len(p) > room {
		b.dropped += int64(len(p) - room)
		b.kept = append(b.kept, p[:room]...)
		return len(p), nil
	}
	b.kept = append(b.kept, p...)
	return len(p), nil
}

// Bytes returns the kept output with a note of what was dropped.
func (b *limitedBuffer) Bytes() []byte {
	out := append([]byte(nil), b.kept...)
	if b.dropped > 0 {
		out = append(out, fmt.Sprintf("\n[capstan: %d more bytes dropped]\n", b.dropped)...)
	}
	return out
}

// SimRunner plays scripted outcomes for demos and tests: outcome number
// `attempt` of the spec (the last one repeats), after the spec's duration.
type SimRunner struct {
	// Instant skips the durations (tests).
	Instant bool
}

// Run plays the outcome.
func (r SimRunner) Run(ctx context.Context, j Job) Result {
	if d := parseOr(j.Spec.Duration, 0); d > 0 && !r.Instant {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return Result{ExitCode: -1, ErrKind: "cancelled", Err: ctx.Err()}
		}
	}
	outcome := "succeed"
	if n := len(j.Spec.Outcomes); n > 0 {
		outcome = j.Spec.Outcomes[min(j.Attempt, n)-1]
	}
	switch outcome {
	case "fail":
		return Result{ExitCode: 1, Output: []byte("sim: failed\n"), ErrKind: "exit:1", Err: errors.New("sim: failed")}
	case "fail_retryable":
		return Result{ExitCode: 75, Output: []byte("sim: temporary failure\n"), ErrKind: "exit:75", Err: errors.New("sim: temporary failure")}
	case "hang":
		<-ctx.Done()
		return Result{ExitCode: -1, ErrKind: "cancelled", Err: ctx.Err()}
	}
	for _, a := range j.Artifacts { // a simulated job writes what it declares
		if j.Outputs != "" {
			_ = os.WriteFile(filepath.Join(j.Outputs, a.Name), []byte("sim:"+a.Name+"\n"), 0o600)
		}
	}
	return Result{Output: []byte("sim: ok\n")}
}
