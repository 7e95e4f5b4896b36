package events_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/resolver/events"
)

func TestOfGivesEachKindItsType(t *testing.T) {
	tests := []struct {
		kind string
		want any
	}{
		{"operation.created", &events.OperationStatusEvent{}},
		{"operation.failed", &events.OperationStatusEvent{}},
		{"node.running", &events.NodeEvent{}},
		{"node.retry_requested", &events.NodeEvent{}},
		{"gate.decided", &events.GateEvent{}},
		{"gate.approval_invalidated", &events.GateEvent{}},
		{"patch.applied", &events.PatchEvent{}},
		{"plan.revised", &events.PlanRevisedEvent{}},
		{"evidence.recorded", &events.EvidenceEvent{}},
		{"resource.concluded", &events.ResourceEvent{}},
		{"binding.resolved", &events.BindingEvent{}},
		{"intervention.recorded", &events.InterventionEvent{}},
		{"analysis.proposal_refused", &events.AnalysisEvent{}},
		{"analysis.failed", &events.AnalysisEvent{}},
		{"secret.revealed", &events.SecretRevealedEvent{}},
		{"suboperation.started", &events.OtherEvent{}},
		{"something.new", &events.OtherEvent{}},
	}
	for _, tc := range tests {
		got := events.Of(capstan.OperationEvent{Type: tc.kind})
		require.Equal(t, reflect.TypeOf(tc.want), reflect.TypeOf(got), tc.kind)
		require.Equal(t, tc.kind, got.Raw().Type)
	}
}

// decoded is a payload as a store gives it back: JSON numbers.
func decoded(t *testing.T, m map[string]any) map[string]any {
	data, err := json.Marshal(m)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

func TestTypedFieldsReadThePayload(t *testing.T) {
	node := events.Of(capstan.OperationEvent{Type: "node.failed", Payload: decoded(t, map[string]any{"node": "deploy", "attempt": 2, "revision": 3, "reason": "exit 1"})}).(*events.NodeEvent)
	require.Equal(t, "deploy", node.Node())
	require.Equal(t, capstan.NodeFailed, *node.RunStatus())
	require.Equal(t, 2, *node.Attempt())
	require.Equal(t, 3, *node.Revision())
	require.Equal(t, "exit 1", *node.Reason())
	require.Nil(t, events.Of(capstan.OperationEvent{Type: "node.retry_requested"}).(*events.NodeEvent).RunStatus(), "not a status")

	op := events.Of(capstan.OperationEvent{Type: "operation.created", Payload: map[string]any{"plan": "UGxhbjox", "revision": 1}}).(*events.OperationStatusEvent)
	require.Nil(t, op.OperationStatus())
	require.Equal(t, "UGxhbjox", op.PlanID())
	require.Equal(t, capstan.OperationSucceeded, *events.Of(capstan.OperationEvent{Type: "operation.succeeded"}).(*events.OperationStatusEvent).OperationStatus())

	gate := events.Of(capstan.OperationEvent{Type: "gate.decided", Payload: map[string]any{"node": "approve", "approve": true, "role": "sre", "digest": "abc"}}).(*events.GateEvent)
	require.True(t, *gate.Approve())
	require.Equal(t, "sre", *gate.Role())
	require.Nil(t, gate.RunStatus(), "a decision that does not close the gate moves no run")
	require.Equal(t, capstan.NodeSucceeded, *events.Of(capstan.OperationEvent{Type: "gate.approved"}).(*events.GateEvent).RunStatus())
	timedOut := func(outcome string) *capstan.NodeRunStatus {
		return events.Of(capstan.OperationEvent{Type: "gate.timed_out", Payload: map[string]any{"node": "g", "outcome": outcome}}).(*events.GateEvent).RunStatus()
	}
	require.Equal(t, capstan.NodeFailed, *timedOut("rejected"), "the executor's gate.timed_out names its outcome")
	require.Equal(t, capstan.NodeSucceeded, *timedOut("approved"))
	require.Nil(t, timedOut(""), "no outcome, no status")
	require.Equal(t, capstan.NodeWaitingApproval, *events.Of(capstan.OperationEvent{Type: "gate.waiting", Payload: map[string]any{"node": "g"}}).(*events.GateEvent).RunStatus())

	res := events.Of(capstan.OperationEvent{Type: "resource.concluded", Payload: map[string]any{"resource": "tempo.instance/t", "lifecycle": "active", "health": "healthy", "outcome": "succeeded"}}).(*events.ResourceEvent)
	require.Equal(t, capstan.LifecycleActive, *res.Lifecycle())
	require.Equal(t, capstan.HealthHealthy, *res.Health())
	require.Equal(t, capstan.OperationSucceeded, *res.Outcome())
	bogus := events.Of(capstan.OperationEvent{Type: "resource.changing", Payload: map[string]any{"lifecycle": "exploded", "health": 7}}).(*events.ResourceEvent)
	require.Nil(t, bogus.Lifecycle(), "a value outside the enum is no value, never an invalid enum")
	require.Nil(t, bogus.Health())

	at := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	rev := events.Of(capstan.OperationEvent{Type: "secret.revealed", Payload: map[string]any{"artifact": "QXJ0", "reason": "rotate", "expires_at": at.Format(time.RFC3339)}}).(*events.SecretRevealedEvent)
	require.Equal(t, at, *rev.ExpiresAt())
	iv := events.Of(capstan.OperationEvent{Type: "intervention.recorded", Payload: decoded(t, map[string]any{"node": "fix", "verify": []string{"a", "b"}})}).(*events.InterventionEvent)
	require.Equal(t, []string{"a", "b"}, iv.Verify())
	require.Equal(t, 1, events.Version)
}
