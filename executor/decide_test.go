package executor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
)

func TestNextAttempt(t *testing.T) {
	policy := capstan.RetryPolicy{InitialInterval: "2s", BackoffCoefficient: 2, MaximumInterval: "5s", MaximumAttempts: 4, NonRetryableErrors: []string{"exit:3"}, OnExhausted: "wait"}
	tests := []struct {
		name    string
		policy  capstan.RetryPolicy
		attempt int
		kind    string
		want    executor.RetryDecision
	}{
		{"first retry", policy, 1, "exit:1", executor.RetryDecision{Retry: true, Wait: 2 * time.Second, Reason: "retrying"}},
		{"backoff", policy, 2, "exit:1", executor.RetryDecision{Retry: true, Wait: 4 * time.Second, Reason: "retrying"}},
		{"capped", policy, 3, "exit:1", executor.RetryDecision{Retry: true, Wait: 5 * time.Second, Reason: "retrying"}},
		{"exhausted", policy, 4, "exit:1", executor.RetryDecision{Exhausted: true, OnExhausted: "wait", Reason: "no attempts left"}},
		{"a host that cannot isolate jobs", policy, 1, local.ErrKindUnisolated, executor.RetryDecision{Exhausted: true, OnExhausted: "wait", Reason: "the host cannot isolate jobs, and another attempt would not change that"}},
		{"a playbook that would run on the controller", policy, 1, job.ErrKindPlaybook, executor.RetryDecision{Exhausted: true, OnExhausted: "wait", Reason: "the playbook would run on the controller, and another attempt would run the same playbook"}},
		{"a cluster's RBAC refused the step", policy, 1, job.ErrKindForbidden, executor.RetryDecision{Exhausted: true, OnExhausted: "wait", Reason: "the cluster refused the step (forbidden), and another attempt would meet the same refusal"}},
		{"a cluster's admission found the object invalid", policy, 1, job.ErrKindInvalid, executor.RetryDecision{Exhausted: true, OnExhausted: "wait", Reason: "the cluster refused the step (invalid), and another attempt would meet the same refusal"}},
		{"another field manager owns the field", policy, 1, job.ErrKindConflict, executor.RetryDecision{Exhausted: true, OnExhausted: "wait", Reason: "the cluster refused the step (conflict), and another attempt would meet the same refusal"}},
		{"not retryable", policy, 1, "exit:3", executor.RetryDecision{Exhausted: true, OnExhausted: "wait", Reason: "error exit:3 is not retryable"}},
		{"no policy means one attempt", capstan.RetryPolicy{}, 1, "x", executor.RetryDecision{Exhausted: true, OnExhausted: "fail", Reason: "no attempts left"}},
		{"defaults", capstan.RetryPolicy{MaximumAttempts: 3}, 2, "x", executor.RetryDecision{Retry: true, Wait: 2 * time.Second, Reason: "retrying"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, executor.NextAttempt(tt.policy, tt.attempt, tt.kind))
		})
	}
}

func TestReadyNodes(t *testing.T) {
	plan := &capstan.Plan{
		Nodes: []capstan.PlanNode{
			{ID: "pre", Type: capstan.NodeJob}, {ID: "s", Type: capstan.NodeStage, Children: []string{"c1", "c2"}},
			{ID: "c1", Type: capstan.NodeJob}, {ID: "c2", Type: capstan.NodeJob}, {ID: "post", Type: capstan.NodeJob},
		},
		Edges: []capstan.Edge{{From: "pre", To: "s"}, {From: "c1", To: "c2"}, {From: "s", To: "post"}},
	}
	st := func(kv ...string) map[string]capstan.NodeRunStatus {
		m := map[string]capstan.NodeRunStatus{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = capstan.NodeRunStatus(kv[i+1])
		}
		return m
	}
	tests := []struct {
		name   string
		status map[string]capstan.NodeRunStatus
		want   []string
	}{
		{"start", st(), []string{"pre"}},
		{"stage opens", st("pre", "succeeded"), []string{"c1"}},
		{"inside the stage", st("pre", "succeeded", "c1", "succeeded"), []string{"c2"}},
		{"running blocks", st("pre", "succeeded", "c1", "running"), nil},
		{"stage done", st("pre", "succeeded", "c1", "succeeded", "c2", "skipped"), []string{"post"}},
		{"failure blocks", st("pre", "failed"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, executor.ReadyNodes(plan, tt.status))
		})
	}
}
