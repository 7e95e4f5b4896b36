package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// The cases of this file hold an operation's step and what follows it
// (its intent, its plan, the resources it changes) to one transaction.

// startedWithIntent starts an operation with its intent moved to
// executing and returns the three as stored.
func startedWithIntent(t *testing.T, s capstan.Store) (*capstan.Operation, *capstan.Plan, *capstan.Intent) {
	t.Helper()
	op, plan := startedPlan(t, s, "")
	in, err := s.GetIntent(ctx, orgA, op.IntentID)
	require.NoError(t, err)
	in.Status = capstan.IntentExecuting
	require.NoError(t, s.StartOperation(ctx, orgA, op, plan, in, []capstan.OperationEvent{event("operation.created")}, nil))
	return op, plan, in
}

func testStartOperationWritesItsIntent(t *testing.T, s capstan.Store) {
	op, plan, in := startedWithIntent(t, s)
	stored, err := s.GetIntent(ctx, orgA, in.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.IntentExecuting, stored.Status)
	require.Equal(t, stored.Version, in.Version, "the intent's new version is set on it")
	require.NotEmpty(t, op.ID)
	require.Equal(t, capstan.PlanRunning, plan.Status)

	// A stale intent refuses the whole start.
	op2, plan2 := startedPlan(t, s, "")
	in2, err := s.GetIntent(ctx, orgA, op2.IntentID)
	require.NoError(t, err)
	in2.Version--
	requireStale(t, s.StartOperation(ctx, orgA, op2, plan2, in2, nil, nil), "intent")
	_, total, err := s.ListOperations(ctx, orgA, capstan.OperationFilter{PlanID: plan2.ID})
	require.NoError(t, err)
	require.Zero(t, total, "no operation of the refused start")
	storedPlan, err := s.GetPlan(ctx, orgA, plan2.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PlanReady, storedPlan.Status, "the plan is not frozen by a refused start")
}

// conclusion is the final step of an operation that created its resource:
// the operation succeeds, its plan completes, its intent completes, and
// the resource it created (and one that now uses it) commit with it.
func conclusion(t *testing.T, s capstan.Store) (*capstan.OperationChange, *capstan.Resource) {
	t.Helper()
	op, plan, in := startedWithIntent(t, s)
	consumer := resource("tempo.instance", "t-"+op.ID[len(op.ID)-6:], "prod")
	require.NoError(t, s.CreateResource(ctx, orgA, consumer))
	require.NoError(t, op.Move(capstan.OperationRunning))
	require.NoError(t, op.Move(capstan.OperationSucceeded))
	require.NoError(t, plan.Move(capstan.PlanCompleted))
	require.NoError(t, in.Move(capstan.IntentCompleted))
	created := resource("minio.instance", "m-"+op.ID[len(op.ID)-6:], "prod", provides("object_storage.s3", map[string]any{"environment": "prod"}, nil))
	created.LifecycleStatus, created.LastOperationID = capstan.LifecycleActive, op.ID
	used := *consumer
	used.Relationships = []capstan.Relationship{{Type: capstan.RelUses, Target: created.Key()}}
	return &capstan.OperationChange{Operation: op, Intent: in, Plan: plan, Resources: []*capstan.Resource{created, &used},
		Events: []capstan.OperationEvent{event("operation.succeeded")}}, &used
}

func testOperationChangeCommitsWhatFollows(t *testing.T, s capstan.Store) {
	installTestPack(t, s, orgA)
	ch, used := conclusion(t, s)
	before, err := s.FindCandidates(ctx, orgA, capstan.CandidateQuery{Capability: "object_storage.s3"})
	require.NoError(t, err)
	require.Zero(t, before.Considered)
	require.NoError(t, s.ApplyOperationChange(ctx, orgA, ch))
	created := ch.Resources[0]
	require.NotEmpty(t, created.ID, "a created resource gets its id")

	in, err := s.GetIntent(ctx, orgA, ch.Intent.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.IntentCompleted, in.Status)
	require.Equal(t, in.Version, ch.Intent.Version)
	plan, err := s.GetPlan(ctx, orgA, ch.Plan.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PlanCompleted, plan.Status)
	require.Equal(t, plan.Version, ch.Plan.Version)
	got, err := s.GetResourceByKey(ctx, orgA, created.Key())
	require.NoError(t, err)
	require.Equal(t, capstan.LifecycleActive, got.LifecycleStatus)
	require.Equal(t, ch.Operation.ID, got.LastOperationID)
	deps, err := s.Dependencies(ctx, orgA, got.ID, capstan.Incoming, 1, 10)
	require.NoError(t, err)
	require.Len(t, deps, 1, "the consumer uses what the operation created: the explorer sees it both ways")
	require.Equal(t, used.Key(), deps[0].Resource.Key())
	require.Equal(t, capstan.RelUses, deps[0].Relationship)
	found, err := s.FindCandidates(ctx, orgA, capstan.CandidateQuery{Capability: "object_storage.s3"})
	require.NoError(t, err)
	require.Equal(t, 1, found.Considered, "a created resource is a candidate like any other")
}

func testOperationChangeIsAtomic(t *testing.T, s capstan.Store) {
	for _, c := range []struct {
		name, code string
		spoil      func(ch *capstan.OperationChange)
	}{
		{"stale intent", capstan.ECONFLICT, func(ch *capstan.OperationChange) { ch.Intent.Version-- }},
		{"stale plan", capstan.ECONFLICT, func(ch *capstan.OperationChange) { ch.Plan.Version-- }},
		{"stale resource", capstan.ECONFLICT, func(ch *capstan.OperationChange) { ch.Resources[1].Version-- }},
		{"created resource's key taken", capstan.ECONFLICT, func(ch *capstan.OperationChange) {
			require.NoError(t, s.CreateResource(ctx, orgA, resource(ch.Resources[0].Type, ch.Resources[0].Name, "dev")))
		}},
		{"relationship to nothing", capstan.EINVALID, func(ch *capstan.OperationChange) {
			ch.Resources[1].Relationships = append(ch.Resources[1].Relationships, capstan.Relationship{Type: capstan.RelRunsOn, Target: "kubernetes.cluster/nowhere"})
		}},
		{"another operation's intent", capstan.EINVALID, func(ch *capstan.OperationChange) { ch.Intent.ID = "someone-else" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch, used := conclusion(t, s)
			opVersion, usedVersion := ch.Operation.Version, used.Version
			c.spoil(ch)
			err := s.ApplyOperationChange(ctx, orgA, ch)
			require.Equal(t, c.code, capstan.ErrorCode(err), "%v", err)

			op, err := s.GetOperation(ctx, orgA, ch.Operation.ID)
			require.NoError(t, err)
			require.Equal(t, opVersion, op.Version, "the operation is as it was")
			require.Equal(t, capstan.OperationPending, op.Status)
			events, err := s.ListEvents(ctx, orgA, op.ID, 0, 10)
			require.NoError(t, err)
			require.Len(t, events, 1, "no event of the refused step")
			plan, err := s.GetPlan(ctx, orgA, op.PlanID)
			require.NoError(t, err)
			require.Equal(t, capstan.PlanRunning, plan.Status)
			in, err := s.GetIntent(ctx, orgA, op.IntentID)
			require.NoError(t, err)
			require.Equal(t, capstan.IntentExecuting, in.Status)
			consumer, err := s.GetResource(ctx, orgA, used.ID)
			require.NoError(t, err)
			require.Equal(t, usedVersion, consumer.Version)
			require.Empty(t, consumer.Relationships)
			if c.name != "created resource's key taken" {
				_, err = s.GetResourceByKey(ctx, orgA, ch.Resources[0].Key())
				require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err), "the created resource is not there")
			}
		})
	}
}

func testCreatePlanSupersedes(t *testing.T, s capstan.Store) {
	in := newIntent()
	require.NoError(t, s.CreateIntent(ctx, orgA, in))
	first := newPlan(in.ID)
	require.NoError(t, s.CreatePlan(ctx, orgA, first, in, nil))
	require.NoError(t, first.Move(capstan.PlanSuperseded))
	second := newPlan(in.ID)
	require.NoError(t, s.CreatePlan(ctx, orgA, second, in, first))
	stored, err := s.GetPlan(ctx, orgA, first.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PlanSuperseded, stored.Status)
	require.Equal(t, stored.Version, first.Version)

	// A stale replaced plan refuses the new one.
	third := newPlan(in.ID)
	second.Status = capstan.PlanSuperseded
	second.Version--
	requireStale(t, s.CreatePlan(ctx, orgA, third, in, second), "plan")
	plans, err := s.ListPlans(ctx, orgA, in.ID)
	require.NoError(t, err)
	require.Len(t, plans, 2, "the refused plan is not stored")
	got, err := s.GetIntent(ctx, orgA, in.ID)
	require.NoError(t, err)
	require.Equal(t, second.ID, got.LatestPlanID)
}
