package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// startedPlan stores an intent and a ready plan and returns an operation
// about to start it, with the plan moved to running.
func startedPlan(t *testing.T, s capstan.Store, key string) (*capstan.Operation, *capstan.Plan) {
	t.Helper()
	return startedPlanIn(t, s, orgA, key)
}

// startedPlanIn is startedPlan in organization org.
func startedPlanIn(t testing.TB, s capstan.Store, org, key string) (*capstan.Operation, *capstan.Plan) {
	t.Helper()
	in := newIntent()
	require.NoError(t, s.CreateIntent(ctx, org, in))
	plan := newPlan(in.ID)
	require.NoError(t, s.CreatePlan(ctx, org, plan, in, nil))
	require.NoError(t, plan.Move(capstan.PlanRunning))
	op := &capstan.Operation{IntentID: in.ID, PlanID: plan.ID, PlanRevision: plan.Revision, Action: "install",
		Status: capstan.OperationPending, Actor: "alice", IdempotencyKey: key}
	return op, plan
}

func event(typ string) capstan.OperationEvent {
	return capstan.OperationEvent{Type: typ, Actor: "executor", Payload: map[string]any{"what": typ}}
}

func testStartOperation(t *testing.T, s capstan.Store) {
	op, plan := startedPlan(t, s, "start-1")
	planVersion := plan.Version
	events := []capstan.OperationEvent{event("operation.created"), event("plan.frozen")}
	require.NoError(t, s.StartOperation(ctx, orgA, op, plan, nil, events, nil))
	require.NotEmpty(t, op.ID)
	require.Equal(t, int64(1), op.Version)
	require.Equal(t, planVersion+1, plan.Version)
	require.Equal(t, []int64{1, 2}, []int64{events[0].Sequence, events[1].Sequence})

	stored, err := s.GetPlan(ctx, orgA, plan.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PlanRunning, stored.Status, "the plan is frozen with the start")
	byKey, err := s.GetOperationByKey(ctx, orgA, "start-1")
	require.NoError(t, err)
	require.Equal(t, op.ID, byKey.ID)

	again, plan2 := startedPlan(t, s, "start-1")
	err = s.StartOperation(ctx, orgA, again, plan2, nil, []capstan.OperationEvent{event("operation.created")}, nil)
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "an idempotency key starts one operation")
	_, total, err := s.ListOperations(ctx, orgA, capstan.OperationFilter{PlanID: plan2.ID})
	require.NoError(t, err)
	require.Zero(t, total, "nothing of the refused start is written")

	stale, plan3 := startedPlan(t, s, "start-3")
	plan3.Version--
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(s.StartOperation(ctx, orgA, stale, plan3, nil, nil, nil)))
	_, err = s.GetOperationByKey(ctx, orgA, "start-3")
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))

	_, err = s.GetOperation(ctx, orgB, op.ID)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err), "operations are scoped to their organization")
	_, err = s.ListEvents(ctx, orgB, op.ID, 0, 10)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
}

func testOperationChanges(t *testing.T, s capstan.Store) {
	op, plan := startedPlan(t, s, "")
	require.NoError(t, s.StartOperation(ctx, orgA, op, plan, nil, []capstan.OperationEvent{event("operation.created")}, nil))
	require.NoError(t, op.Move(capstan.OperationRunning))
	ch := &capstan.OperationChange{Operation: op,
		NodeRuns: []capstan.OperationNodeRun{{NodeID: "verify", Status: capstan.NodeRunning, Attempts: 1}},
		Gates:    []capstan.Gate{{NodeID: "approve", Status: "waiting", Spec: capstan.GateSpec{Type: "approval", Reason: "r", RequiredRoles: []string{"sre"}}}},
		Events:   []capstan.OperationEvent{event("operation.running"), event("node.running")},
	}
	require.NoError(t, s.ApplyOperationChange(ctx, orgA, ch))
	require.Equal(t, int64(2), op.Version)
	require.Equal(t, []int64{2, 3}, []int64{ch.Events[0].Sequence, ch.Events[1].Sequence})

	stale := *op
	stale.Version = 1
	err := s.ApplyOperationChange(ctx, orgA, &capstan.OperationChange{Operation: &stale,
		NodeRuns: []capstan.OperationNodeRun{{NodeID: "verify", Status: capstan.NodeFailed}}, Events: []capstan.OperationEvent{event("lost")}})
	requireStale(t, err, "an operation change from an old version")

	ch2 := &capstan.OperationChange{Operation: op,
		NodeRuns:      []capstan.OperationNodeRun{{NodeID: "verify", Status: capstan.NodeVerifying, Attempts: 1}},
		Evidence:      []capstan.Evidence{{ProducedBy: "verify", Item: "up", Result: capstan.EvidencePassed, Source: map[string]any{"type": "sim"}}},
		Artifacts:     []capstan.Artifact{{Type: "report", Name: "log", Sensitivity: capstan.SensitivityInternal, StorageRef: "file:log", ProducedBy: "verify"}},
		Interventions: []capstan.Intervention{{Type: "manually_fixed", Actor: "bob", TargetNode: "verify", Note: "restarted"}},
		Events:        []capstan.OperationEvent{event("evidence.recorded")},
	}
	require.NoError(t, s.ApplyOperationChange(ctx, orgA, ch2))
	require.NotEmpty(t, ch2.Evidence[0].ID)

	recs, err := s.OperationRecords(ctx, orgA, op.ID)
	require.NoError(t, err)
	require.Len(t, recs.NodeRuns, 1, "node runs are upserted by node")
	require.Equal(t, capstan.NodeVerifying, recs.NodeRuns[0].Status)
	require.Equal(t, op.ID, recs.NodeRuns[0].OperationID)
	require.Len(t, recs.Gates, 1)
	require.Len(t, recs.Evidence, 1)
	require.Equal(t, capstan.EvidencePassed, recs.Evidence[0].Result)
	require.Len(t, recs.Artifacts, 1)
	require.Len(t, recs.Interventions, 1)

	some, err := s.OperationRecords(ctx, orgA, op.ID, capstan.RecordArtifact, capstan.RecordGate)
	require.NoError(t, err)
	require.Equal(t, recs.Artifacts, some.Artifacts, "a read of some kinds reads them as a read of all does")
	require.Equal(t, recs.Gates, some.Gates)
	require.Empty(t, some.NodeRuns, "and only them")
	require.Empty(t, some.Evidence)
	require.Empty(t, some.Interventions)
	_, err = s.OperationRecords(ctx, orgA, op.ID, "7-secrets")
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "a kind of record there is not: %v", err)
	_, err = s.OperationRecords(ctx, orgB, op.ID, capstan.RecordGate)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err), "records are scoped to their organization")

	events, err := s.ListEvents(ctx, orgA, op.ID, 0, 100)
	require.NoError(t, err)
	require.Equal(t, []string{"operation.created", "operation.running", "node.running", "evidence.recorded"}, eventTypes(events))
	for i, e := range events {
		require.Equal(t, int64(i+1), e.Sequence, "gap-free sequence")
		require.False(t, e.At.IsZero())
	}
	after, err := s.ListEvents(ctx, orgA, op.ID, 2, 1)
	require.NoError(t, err)
	require.Equal(t, []string{"node.running"}, eventTypes(after), "replay from a cursor")

	unfinished, err := s.UnfinishedOperations(ctx)
	require.NoError(t, err)
	require.True(t, containsOp(unfinished, orgA, op.ID))
	require.NoError(t, op.Move(capstan.OperationSucceeded))
	require.NoError(t, s.ApplyOperationChange(ctx, orgA, &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{event("operation.succeeded")}}))
	unfinished, err = s.UnfinishedOperations(ctx)
	require.NoError(t, err)
	require.False(t, containsOp(unfinished, orgA, op.ID), "a finished operation is not resumed")
	list, total, err := s.ListOperations(ctx, orgA, capstan.OperationFilter{Status: capstan.OperationSucceeded})
	require.NoError(t, err)
	require.Equal(t, 1, total)
	require.Equal(t, op.ID, list[0].ID)

	bad := &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{{Type: "anonymous"}}}
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(s.ApplyOperationChange(ctx, orgA, bad)), "every event is attributable")
}

func testConcurrentOperationSteps(t *testing.T, s capstan.Store) {
	op, plan := startedPlan(t, s, "")
	require.NoError(t, s.StartOperation(ctx, orgA, op, plan, nil, nil, nil))
	const writers = 6
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := 0; i < writers; i++ {
		c := *op
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = s.ApplyOperationChange(ctx, orgA, &capstan.OperationChange{Operation: &c, Events: []capstan.OperationEvent{event("step"), event("step")}})
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			requireStale(t, err, "a concurrent operation change")
		}
	}
	require.Equal(t, 1, ok)
	events, err := s.ListEvents(ctx, orgA, op.ID, 0, 100)
	require.NoError(t, err)
	require.Len(t, events, 2, "only the winner's events exist")
	require.Equal(t, []int64{1, 2}, []int64{events[0].Sequence, events[1].Sequence})
}

func eventTypes(es []capstan.OperationEvent) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Type
	}
	return out
}

func containsOp(ops []capstan.OperationRef, org, id string) bool {
	for _, o := range ops {
		if o.OrganizationID == org && o.ID == id {
			return true
		}
	}
	return false
}

func testListOperationsFilters(t *testing.T, s capstan.Store) {
	var ids []string
	var created []time.Time
	for i, res := range []string{"db/a", "db/b", "db/a"} {
		op, plan := startedPlan(t, s, "")
		op.ResourceKey = res
		require.NoError(t, s.StartOperation(ctx, orgA, op, plan, nil, []capstan.OperationEvent{event("operation.created")}, nil))
		ids, created = append(ids, op.ID), append(created, op.CreatedAt)
		if i < 2 {
			time.Sleep(5 * time.Millisecond) // distinct start times
		}
	}
	list := func(f capstan.OperationFilter) []string {
		t.Helper()
		ops, total, err := s.ListOperations(ctx, orgA, f)
		require.NoError(t, err)
		out := []string{}
		for _, o := range ops {
			out = append(out, o.ID)
		}
		require.Len(t, out, total)
		return out
	}
	require.Equal(t, []string{ids[0], ids[2]}, list(capstan.OperationFilter{ResourceKey: "db/a"}))
	require.Equal(t, []string{ids[1], ids[2]}, list(capstan.OperationFilter{CreatedAfter: created[0]}))
	require.Equal(t, []string{ids[0]}, list(capstan.OperationFilter{CreatedBefore: created[1]}))
	require.Equal(t, []string{ids[2]}, list(capstan.OperationFilter{ResourceKey: "db/a", CreatedAfter: created[1]}))
	require.Empty(t, list(capstan.OperationFilter{ResourceKey: "db/c"}))
	ops, _, err := s.ListOperations(ctx, orgB, capstan.OperationFilter{ResourceKey: "db/a"})
	require.NoError(t, err)
	require.Empty(t, ops, "scoped to the organization")
}

// testManyOperationsStepAtOnce: steps of many operations committed at the
// same moment (a store may commit them together) all land, each in its
// own operation's timeline, gap-free and in order; one stale step among
// them fails alone.
func testManyOperationsStepAtOnce(t *testing.T, s capstan.Store) {
	const ops, steps = 16, 5
	started := make([]*capstan.Operation, ops)
	for i := range started {
		op, plan := startedPlan(t, s, "")
		require.NoError(t, s.StartOperation(ctx, orgA, op, plan, nil, nil, nil))
		started[i] = op
	}
	stale := *started[0] // at its start's version, which the steps below move on from
	require.NoError(t, s.ApplyOperationChange(ctx, orgA, &capstan.OperationChange{Operation: started[0], Events: []capstan.OperationEvent{event("step")}}))
	var wg sync.WaitGroup
	errs := make([]error, ops)
	for i, op := range started {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := steps
			if i == 0 {
				n-- // its first step is made already
			}
			for range n {
				if err := s.ApplyOperationChange(ctx, orgA, &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{event("step")}}); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Add(1)
	var staleErr error
	go func() {
		defer wg.Done()
		staleErr = s.ApplyOperationChange(ctx, orgA, &capstan.OperationChange{Operation: &stale, Events: []capstan.OperationEvent{event("late")}})
	}()
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	requireStale(t, staleErr, "a step at an old version among the others")
	for _, op := range started {
		events, err := s.ListEvents(ctx, orgA, op.ID, 0, 100)
		require.NoError(t, err)
		require.Len(t, events, steps)
		for i, e := range events {
			require.Equal(t, int64(i+1), e.Sequence)
			require.Equal(t, "step", e.Type)
		}
	}
}
