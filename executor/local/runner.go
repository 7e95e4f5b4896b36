package local

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
	"github.com/capstan-dev/capstan/executor/job"
)

// leaseKilled is the result of a job its watchdog killed.
func leaseKilled(j job.Job, out []byte) job.Result {
	return job.Result{ExitCode: -1, Output: out, ErrKind: job.ErrKindLease,
		Err: fmt.Errorf("job %s: killed by its watchdog: the executor's lease ran out before it was renewed", j.NodeID)}
}

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
func (r ShellRunner) Run(ctx context.Context, j job.Job) job.Result {
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
func RunScript(ctx context.Context, sb *Sandbox, j job.Job, script, dir, outputs string, env map[string]string) job.Result {
	j.Outputs = outputs
	timeout := j.Timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sj, err := sb.command(script, dir, j.Outputs, env)
	if capstan.ErrorCode(err) == capstan.EUNAVAILABLE {
		return job.Result{ExitCode: -1, ErrKind: ErrKindUnisolated, Err: err}
	}
	if err != nil {
		return job.Result{ExitCode: -1, ErrKind: "runner", Err: err}
	}
	defer sj.release()
	cmd := sj.cmd
	// A process the job left holding its output pipe (outside the process
	// group, without a PID namespace) must not keep Wait, and the worker,
	// waiting.
	cmd.WaitDelay = 2 * time.Second
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return job.Result{ExitCode: -1, ErrKind: "runner", Err: err}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	wd, err := startWatchdog(cmd.Process.Pid, j.Deadline)
	if err != nil {
		kill(cmd, done)
		return job.Result{ExitCode: -1, ErrKind: "runner", Err: fmt.Errorf("job %s: %w", j.NodeID, err)}
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
			return job.Result{ExitCode: -1, Output: out.Bytes(), ErrKind: "disk_quota",
				Err: fmt.Errorf("job %s: the operation's sandbox %s", j.NodeID, why)}
		case <-ctx.Done():
			kill(cmd, done)
			kind := "timeout"
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				kind = "cancelled"
			}
			return job.Result{ExitCode: -1, Output: out.Bytes(), ErrKind: kind, Err: fmt.Errorf("job %s: %s", j.NodeID, kind)}
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
func exited(j job.Job, output []byte, err error) job.Result {
	res := job.Result{Output: output}
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
	room := job.MaxOutput - len(b.kept)
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
func (r SimRunner) Run(ctx context.Context, j job.Job) job.Result {
	if d := job.DurationOr(j.Spec.Duration, 0); d > 0 && !r.Instant {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return job.Result{ExitCode: -1, ErrKind: "cancelled", Err: ctx.Err()}
		}
	}
	outcome := "succeed"
	if n := len(j.Spec.Outcomes); n > 0 {
		outcome = j.Spec.Outcomes[min(j.Attempt, n)-1]
	}
	switch outcome {
	case "fail":
		return job.Result{ExitCode: 1, Output: []byte("sim: failed\n"), ErrKind: "exit:1", Err: errors.New("sim: failed")}
	case "fail_retryable":
		return job.Result{ExitCode: 75, Output: []byte("sim: temporary failure\n"), ErrKind: "exit:75", Err: errors.New("sim: temporary failure")}
	case "hang":
		<-ctx.Done()
		return job.Result{ExitCode: -1, ErrKind: "cancelled", Err: ctx.Err()}
	}
	for _, a := range j.Artifacts { // a simulated job writes what it declares
		if j.Outputs != "" {
			_ = os.WriteFile(filepath.Join(j.Outputs, a.Name), []byte("sim:"+a.Name+"\n"), 0o600)
		}
	}
	return job.Result{Output: []byte("sim: ok\n")}
}
