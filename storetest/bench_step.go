package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// BenchmarkOperationStep measures one executor commit of a chain: a node
// ends with its evidence and the next node starts, with their three
// timeline events (ApplyOperationChange, durable). Stores run it from
// their own benchmarks.
func BenchmarkOperationStep(b *testing.B, s capstan.Store) {
	org := "bench-" + capstan.NewID()[12:]
	op, plan := startedPlanIn(b, s, org, "")
	op.Status = capstan.OperationRunning
	require.NoError(b, s.StartOperation(ctx, org, op, plan, nil, []capstan.OperationEvent{event("operation.created")}, nil))
	now := time.Now().UTC()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		done, next := fmt.Sprintf("n%06d", i), fmt.Sprintf("n%06d", i+1)
		ch := &capstan.OperationChange{Operation: op,
			NodeRuns: []capstan.OperationNodeRun{
				{NodeID: done, Status: capstan.NodeSucceeded, Attempts: 1, StartedAt: &now, FinishedAt: &now},
				{NodeID: next, Status: capstan.NodeRunning, Attempts: 1, StartedAt: &now}},
			Evidence: []capstan.Evidence{{ProducedBy: done, Item: "ok", Result: capstan.EvidencePassed, Source: map[string]any{"type": "sim"}, ObservedAt: now}},
			Events: []capstan.OperationEvent{
				{Type: "evidence.recorded", Actor: "executor", Payload: map[string]any{"node": done, "item": "ok", "result": "passed"}},
				{Type: "node.succeeded", Actor: "executor", Payload: map[string]any{"node": done, "attempt": 1}},
				{Type: "node.running", Actor: "executor", Payload: map[string]any{"node": next, "attempt": 1}}},
		}
		if err := s.ApplyOperationChange(ctx, org, ch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// Ended, so an executor on the same database does not resume it.
	require.NoError(b, op.Move(capstan.OperationSucceeded))
	require.NoError(b, s.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: op,
		Events: []capstan.OperationEvent{{Type: "operation.succeeded", Actor: "executor"}}}))
}
