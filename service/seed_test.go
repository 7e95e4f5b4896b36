package service_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
)

func TestSeedExamplePlansTheInterestingWay(t *testing.T) {
	store := testenv.Store(t)
	svc := testenv.Demo(t, store)
	ctx := testenv.Admin(testenv.Org)

	in, err := svc.CreateIntent(ctx, testenv.SeedIntent())
	require.NoError(t, err)
	plan, err := svc.PlanIntent(ctx, in.ID)
	require.NoError(t, err)
	out, _ := json.MarshalIndent(plan.Bindings, "", "  ")
	require.Equal(t, capstan.PlanReady, plan.Status, "problems: %v\n%s", plan.Problems, out)
	require.Equal(t, "tempo.install@1.3.0", plan.ScenarioRef)

	cluster := plan.Binding("cluster")
	require.Equal(t, capstan.BindingResolved, cluster.Status)
	require.Equal(t, "kubernetes.cluster/prod-k8s", cluster.Provider.ResourceKey)

	storage := plan.Binding("object-storage")
	require.Equal(t, capstan.BindingPendingSubOperation, storage.Status, storage.Reason)
	require.Equal(t, "minio.install@1.0.0", storage.SubOperation.Scenario)
	require.Equal(t, "eu-central", storage.Constraints["region"], "same-as-workload resolves through the cluster")
	verdicts := map[string]capstan.CandidateVerdict{}
	for _, c := range storage.Candidates {
		verdicts[c.Ref] = c
	}
	require.Contains(t, verdicts["minio.instance/shared-prod-storage"].Reason, "prod-object-storage-dedicated")
	require.Contains(t, verdicts["s3.bucket/archive-us-east"].Reason, "region: want eu-central, got us-east")
	require.Contains(t, verdicts["minio.instance/old-prod-storage"].Reason, "lifecycle: want active, got deleted")
	require.True(t, verdicts["minio.install@1.0.0"].Selected)

	nested := plan.Binding("object-storage/cluster")
	require.NotNil(t, nested, "the sub-operation's own requirements are bound")
	require.Equal(t, "kubernetes.cluster/prod-k8s", nested.Provider.ResourceKey)

	secrets := plan.Binding("secrets")
	require.Equal(t, capstan.BindingResolved, secrets.Status)
	require.Equal(t, "vault.instance/prod-vault", secrets.Provider.ResourceKey)

	node := plan.Node("create-object-storage")
	require.NotNil(t, node)
	require.Equal(t, capstan.NodeSubOperation, node.Type)
	require.Contains(t, plan.Edges, capstan.Edge{From: "create-object-storage", To: "create-bucket"})

	got, err := store.GetIntent(ctx, testenv.Org, in.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.IntentPlanned, got.Status)
	require.Equal(t, plan.ID, got.LatestPlanID)
}

// TestCancellingAPendingOperationEndsItsIntentAndPlan: an operation
// cancelled before the executor began it (none runs here) ends cancelled,
// and its intent and plan follow in the same commit.
func TestCancellingAPendingOperationEndsItsIntentAndPlan(t *testing.T) {
	svc, store := setup(t)
	ctx := testenv.Admin(testenv.Org)
	in, err := svc.CreateIntent(ctx, testenv.SeedIntent())
	require.NoError(t, err)
	plan, err := svc.PlanIntent(ctx, in.ID)
	require.NoError(t, err)
	op, err := svc.StartOperation(ctx, plan.ID, "")
	require.NoError(t, err)
	require.Equal(t, capstan.OperationPending, op.Status)
	got, err := store.GetIntent(context.Background(), testenv.Org, in.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.IntentExecuting, got.Status, "the start moves the intent")

	op, err = svc.CancelOperation(ctx, op.ID, "changed my mind")
	require.NoError(t, err)
	require.Equal(t, capstan.OperationCancelled, op.Status)
	got, err = store.GetIntent(context.Background(), testenv.Org, in.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.IntentCancelled, got.Status)
	gotPlan, err := store.GetPlan(context.Background(), testenv.Org, plan.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PlanCancelled, gotPlan.Status)
}

// TestAnIdempotencyKeyStartsOnePlan: the same key with the same plan
// returns the operation it started, never a second; the same key with
// another plan is CONFLICT naming what it started, and starts nothing.
func TestAnIdempotencyKeyStartsOnePlan(t *testing.T) {
	svc, store := setup(t)
	ctx := testenv.Admin(testenv.Org)
	ready := func() *capstan.Plan {
		in, err := svc.CreateIntent(ctx, testenv.SeedIntent())
		require.NoError(t, err)
		plan, err := svc.PlanIntent(ctx, in.ID)
		require.NoError(t, err)
		return plan
	}
	first := ready()
	op, err := svc.StartOperation(ctx, first.ID, "k")
	require.NoError(t, err)
	again, err := svc.StartOperation(ctx, first.ID, "k")
	require.NoError(t, err)
	require.Equal(t, op.ID, again.ID, "a retry of the same start")

	second := ready()
	_, err = svc.StartOperation(ctx, second.ID, "k")
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), `idempotency key "k" started `+capstan.Named("operation", op.ID))
	_, total, err := store.ListOperations(context.Background(), testenv.Org, capstan.OperationFilter{PlanID: second.ID})
	require.NoError(t, err)
	require.Zero(t, total)
}
