// Package job is the contract between the executor's engine and what
// acts for it: a Job and its Result, the Runner that runs it, the Target
// host a remote runner or probe reaches, the ProbeTarget a probe runs
// against and the secret store they read. The engine (executor), the
// local runners and sandbox (executor/local), the remote ones
// (executor/remote), the probes (executor/probe) and the assessor
// (observe) meet here, and none of them imports another's package for it.
package job

import (
	"context"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/secret"
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
	// Desired is the desired state the operation works towards (the
	// scenario's, or the resource's own for a repair): a kubernetes
	// reapply reads its applied objects. Read-only.
	Desired map[string]any
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
func (j Job) Timeout() time.Duration { return DurationOr(j.Spec.Timeout, DefaultTimeout) }

// Secrets is the secret store as the executor uses it (secret.Vault).
type Secrets interface {
	Get(ctx context.Context, org, name string) ([]byte, error)
	Put(ctx context.Context, org, name string, value []byte) error
	Redactor(ctx context.Context, org string) (*secret.Redactor, error)
}

// SecretValue is the value a secret:<name> reference (named by what,
// for errors) refers to, read from secrets (org's).
func SecretValue(ctx context.Context, secrets Secrets, org, what, ref string) (string, error) {
	name, ok := secret.ParseRef(ref)
	if !ok {
		return "", capstan.Errorf(capstan.EINVALID, "%s refers to %q, which is not a secret name", what, ref)
	}
	if secrets == nil {
		return "", capstan.Errorf(capstan.EUNAVAILABLE, "%s refers to secret %q, but this server has no secret store", what, name)
	}
	value, err := secrets.Get(ctx, org, name)
	if err != nil {
		return "", err
	}
	return string(value), nil
}

// EnvName is a name as an environment variable's: upper case, every
// byte but a letter or digit an underscore (CAPSTAN_PARAM_<NAME>).
func EnvName(k string) string {
	b := []byte(k)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 32
		case (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'):
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

// DurationOr is s as a positive duration, or def when it is not one (a
// spec's timeout, retry interval or simulated duration).
func DurationOr(s string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d
	}
	return def
}

// WithinDeadline is ctx, ended also when d closes unmoved: what a runner
// acting from the server's own process (kubernetes, helm) acts within,
// so that a replica stalled past its lease does no more once it runs
// again. The cancel function ends and waits for the goroutine that
// watches d.
func WithinDeadline(ctx context.Context, d Deadline) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if d == nil {
		return ctx, cancel
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			moved := d.Moved()
			left, bounded := d.Remaining()
			if !bounded {
				<-ctx.Done()
				return
			}
			if left <= 0 {
				cancel()
				return
			}
			t := time.NewTimer(left)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-moved:
				t.Stop()
			case <-t.C:
			}
		}
	}()
	return ctx, func() { cancel(); <-done }
}

// Closed reports whether d has passed: no side effect may start then.
func Closed(d Deadline) bool {
	if d == nil {
		return false
	}
	left, bounded := d.Remaining()
	return bounded && left <= 0
}
