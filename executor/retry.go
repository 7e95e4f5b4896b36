// Package executor will run plans as operations: one goroutine owns each
// running operation's state, jobs run on a bounded worker pool, and every
// state change is persisted before it is acted on. This file and ready.go
// hold its pure decisions, table-tested without I/O; the loop and the
// runners come with the executor issue.
package executor

import (
	"math"
	"slices"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
)

// Retry defaults, as Temporal's.
const (
	DefaultInitialInterval    = time.Second
	DefaultBackoffCoefficient = 2.0
	DefaultMaximumAttempts    = 1
)

// RetryDecision is what to do after a failed attempt.
type RetryDecision struct {
	Retry bool
	// Wait is the delay before the next attempt when Retry.
	Wait time.Duration
	// Exhausted is true when no attempt is left; OnExhausted says what then
	// (wait: needs attention, fail: the node fails).
	Exhausted   bool
	OnExhausted string
	Reason      string
}

// NextAttempt decides, after attempt number `attempt` (1-based) failed with
// an error of kind errKind, whether and when to try again. The interval is
// InitialInterval * BackoffCoefficient^(attempt-1), capped by
// MaximumInterval; MaximumAttempts counts every attempt (0 means unlimited,
// as in Temporal; an unset policy means one attempt).
func NextAttempt(p capstan.RetryPolicy, attempt int, errKind string) RetryDecision {
	onExhausted := p.OnExhausted
	if onExhausted == "" {
		onExhausted = "fail"
	}
	switch errKind {
	case local.ErrKindUnisolated:
		return RetryDecision{Exhausted: true, OnExhausted: onExhausted, Reason: "the host cannot isolate jobs, and another attempt would not change that"}
	case job.ErrKindHostKey:
		return RetryDecision{Exhausted: true, OnExhausted: onExhausted, Reason: "the target presented a host key that is not pinned: another attempt would trust it no more"}
	case job.ErrKindTarget:
		return RetryDecision{Exhausted: true, OnExhausted: onExhausted, Reason: "the target cannot be resolved from the catalog, and another attempt would not change that"}
	case job.ErrKindPlaybook:
		return RetryDecision{Exhausted: true, OnExhausted: onExhausted, Reason: "the playbook would run on the controller, and another attempt would run the same playbook"}
	case job.ErrKindForbidden, job.ErrKindInvalid, job.ErrKindConflict:
		return RetryDecision{Exhausted: true, OnExhausted: onExhausted, Reason: "the cluster refused the step (" + errKind + "), and another attempt would meet the same refusal"}
	}
	if slices.Contains(p.NonRetryableErrors, errKind) {
		return RetryDecision{Exhausted: true, OnExhausted: onExhausted, Reason: "error " + errKind + " is not retryable"}
	}
	maxAttempts := p.MaximumAttempts
	if maxAttempts == 0 && p.InitialInterval == "" && p.BackoffCoefficient == 0 && p.MaximumInterval == "" {
		maxAttempts = DefaultMaximumAttempts // no retry policy at all: one attempt
	}
	if maxAttempts > 0 && attempt >= maxAttempts {
		return RetryDecision{Exhausted: true, OnExhausted: onExhausted, Reason: "no attempts left"}
	}
	initial := job.DurationOr(p.InitialInterval, DefaultInitialInterval)
	coef := p.BackoffCoefficient
	if coef == 0 {
		coef = DefaultBackoffCoefficient
	}
	wait := float64(initial) * math.Pow(coef, float64(attempt-1))
	maxInterval := job.DurationOr(p.MaximumInterval, 100*initial)
	if wait > float64(maxInterval) {
		wait = float64(maxInterval)
	}
	return RetryDecision{Retry: true, Wait: time.Duration(wait), Reason: "retrying"}
}
