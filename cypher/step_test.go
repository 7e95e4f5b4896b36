package cypher_test

import (
	"context"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
)

// TestStepAfterAnotherWriter: a store writes an operation's steps in one
// statement while it knows the operation's version; when another process
// (here another Store) wrote in between, its stale step is still a
// conflict, and a fresh one commits with a gap-free timeline.
func TestStepAfterAnotherWriter(t *testing.T) {
	ctx := context.Background()
	a, b := open(t), open(t)
	org := "step-" + capstan.NewID()[12:]
	op := startedOperation(t, a, org)

	step := func(s capstan.Store, o *capstan.Operation, typ string) error {
		return s.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: o, Events: []capstan.OperationEvent{{Type: typ, Actor: "executor"}}})
	}
	require.NoError(t, step(a, op, "a.1")) // a knows the operation: one statement
	stale := *op
	fresh, err := b.GetOperation(ctx, org, op.ID)
	require.NoError(t, err)
	require.NoError(t, step(b, fresh, "b.1"))
	lost := &capstan.OperationChange{Operation: &stale, NodeRuns: []capstan.OperationNodeRun{{NodeID: "n", Status: capstan.NodeRunning}}}
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(a.ApplyOperationChange(ctx, org, lost)), "a's step is stale although a wrote the version it knows")
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(step(a, &stale, "a.lost")))
	again, err := a.GetOperation(ctx, org, op.ID)
	require.NoError(t, err)
	require.NoError(t, step(a, again, "a.2"))
	require.NoError(t, step(a, again, "a.3"))

	events, err := b.ListEvents(ctx, org, op.ID, 0, 100)
	require.NoError(t, err)
	var types []string
	for i, e := range events {
		require.Equal(t, int64(i+1), e.Sequence, "gap-free")
		types = append(types, e.Type)
	}
	require.Equal(t, []string{"operation.created", "a.1", "b.1", "a.2", "a.3"}, types)
	final, err := b.GetOperation(ctx, org, op.ID)
	require.NoError(t, err)
	require.Equal(t, int64(5), final.Version)
	require.Equal(t, op.CreatedAt.UnixMilli(), final.CreatedAt.UnixMilli(), "a step never moves the creation time")
	// Ended, so executors of other tests on this database leave it alone.
	require.NoError(t, final.Move(capstan.OperationCancelled))
	require.NoError(t, step(b, final, "operation.cancelled"))
}

// startedOperation stores an intent, a plan of one manual intervention
// and a pending operation of it.
func startedOperation(t *testing.T, s capstan.Store, org string) *capstan.Operation {
	plan := readyPlan(t, s, org)
	op := &capstan.Operation{IntentID: plan.IntentID, PlanID: plan.ID, PlanRevision: 1, Action: "install", Status: capstan.OperationPending, Actor: "alice"}
	require.NoError(t, s.StartOperation(context.Background(), org, op, plan, nil, []capstan.OperationEvent{{Type: "operation.created", Actor: "alice"}}, nil))
	return op
}

// readyPlan stores an intent and its ready plan of one manual node, and
// returns the plan moved to running, for a start to store.
func readyPlan(t *testing.T, s capstan.Store, org string) *capstan.Plan {
	ctx := context.Background()
	in := &capstan.Intent{Actor: "alice", Action: "install", TargetResourceType: "thing", Mode: capstan.ModeSimple, Status: capstan.IntentSubmitted}
	require.NoError(t, s.CreateIntent(ctx, org, in))
	plan := &capstan.Plan{IntentID: in.ID, ScenarioRef: "s@1.0.0", Status: capstan.PlanReady, Revision: 1,
		Nodes:          []capstan.PlanNode{{ID: "n", Type: capstan.NodeManualIntervention, Title: "n", Intervention: &capstan.InterventionSpec{Instructions: "do it"}}},
		Customizations: capstan.Customizations{BaseTemplate: "s@1.0.0"}}
	require.NoError(t, s.CreatePlan(ctx, org, plan, in, nil))
	require.NoError(t, plan.Move(capstan.PlanRunning))
	return plan
}

// TestOperationReadsSeekTheirKeys: an operation's timeline and records are
// read through the uniqueness constraints that key them, (op, seq) and
// (op, kind, key), which are also the only indexes a step writes to.
func TestOperationReadsSeekTheirKeys(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	org := "seek-" + capstan.NewID()[12:]
	op := startedOperation(t, s, org)
	require.NoError(t, s.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: op,
		NodeRuns: []capstan.OperationNodeRun{{NodeID: "n", Status: capstan.NodeWaitingIntervention}},
		Events:   []capstan.OperationEvent{{Type: "node.waiting", Actor: "executor"}}}))
	driver, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	require.NoError(t, err)
	defer driver.Close(ctx)
	opUID := org + "|" + op.ID
	for name, q := range map[string]struct {
		query  string
		params map[string]any
	}{
		"timeline": {cypher.QueryEvents, map[string]any{"op": opUID, "after": 0, "limit": 10}},
		"records":  {cypher.QueryOperationRecords, map[string]any{"op": opUID, "kinds": []string{capstan.RecordNodeRun, capstan.RecordGate}}},
		"one kind": {cypher.QueryOperationRecords, map[string]any{"op": opUID, "kinds": []string{capstan.RecordNodeRun}}},
	} {
		res, err := neo4j.ExecuteQuery(ctx, driver, "PROFILE "+q.query, q.params, neo4j.EagerResultTransformer)
		require.NoError(t, err, name)
		require.NotEmpty(t, res.Records, name)
		var ops []string
		walk(res.Summary.Profile(), &ops)
		require.Contains(t, strings.Join(ops, " "), "NodeUniqueIndexSeek", "%s reads through its constraint's index: %v", name, ops)
		require.NotContains(t, strings.Join(ops, " "), "Scan", "%s: %v", name, ops)
	}
	require.NoError(t, op.Move(capstan.OperationCancelled))
	require.NoError(t, s.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: op,
		Events: []capstan.OperationEvent{{Type: "operation.cancelled", Actor: "executor"}}}))
}
