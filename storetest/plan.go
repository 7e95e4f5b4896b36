package storetest

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/catalog"
	"github.com/capstan-dev/capstan/packs"
	"github.com/capstan-dev/capstan/service"
)

func newIntent() *capstan.Intent {
	return &capstan.Intent{Actor: "alice", Action: "install", TargetResourceType: "tempo.instance",
		Constraints: map[string]any{"environment": "prod"}, Mode: capstan.ModeSimple, Status: capstan.IntentSubmitted}
}

func newPlan(intentID string) *capstan.Plan {
	return &capstan.Plan{IntentID: intentID, ScenarioRef: "minio.install@1.0.0", Status: capstan.PlanReady, Revision: 1,
		Customizations: capstan.Customizations{BaseTemplate: "minio.install@1.0.0"},
		Nodes:          []capstan.PlanNode{{ID: "verify", Type: capstan.NodeVerification, Title: "Verify", Probes: []capstan.Probe{{Name: "up", Type: "sim"}}}},
		Bindings: []capstan.ResourceBinding{{ID: "cluster", Status: capstan.BindingResolved, Reason: "only one",
			Provider: &capstan.BoundProvider{ResourceID: "r1", ResourceKey: "kubernetes.cluster/c1", Capability: "kubernetes.cluster"}}}}
}

func testIntentAndPlan(t *testing.T, s capstan.Store) {
	in := newIntent()
	require.NoError(t, s.CreateIntent(ctx, orgA, in))
	require.Equal(t, int64(1), in.Version)
	plan := newPlan(in.ID)
	require.NoError(t, in.Move(capstan.IntentPlanned))
	require.NoError(t, s.CreatePlan(ctx, orgA, plan, in, nil))
	require.Equal(t, int64(2), in.Version)
	require.Equal(t, plan.ID, in.LatestPlanID)

	got, err := s.GetPlan(ctx, orgA, plan.ID)
	require.NoError(t, err)
	require.Equal(t, "kubernetes.cluster/c1", got.Bindings[0].Provider.ResourceKey)
	stored, err := s.GetIntent(ctx, orgA, in.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.IntentPlanned, stored.Status)

	stale := *got
	got.Revision = 2
	require.NoError(t, s.UpdatePlan(ctx, orgA, got, nil))
	stale.Revision = 3
	requireStale(t, s.UpdatePlan(ctx, orgA, &stale, nil), "a plan update from an old version")

	// A plan update may carry its intent, in the same transaction.
	fresh, err := s.GetPlan(ctx, orgA, plan.ID)
	require.NoError(t, err)
	staleIntent := *in
	staleIntent.Version--
	requireStale(t, s.UpdatePlan(ctx, orgA, fresh, &staleIntent), "a plan update carrying an old intent")
	unchanged, err := s.GetPlan(ctx, orgA, plan.ID)
	require.NoError(t, err)
	require.Equal(t, fresh.Version, unchanged.Version, "nothing is written when the intent is stale")

	second := newPlan(in.ID)
	require.NoError(t, s.CreatePlan(ctx, orgA, second, in, nil))
	plans, err := s.ListPlans(ctx, orgA, in.ID)
	require.NoError(t, err)
	require.Len(t, plans, 2)
	require.Equal(t, plan.ID, plans[0].ID)

	list, total, err := s.ListIntents(ctx, orgA, capstan.IntentFilter{Status: capstan.IntentPlanned})
	require.NoError(t, err)
	require.Equal(t, 1, total)
	require.Equal(t, in.ID, list[0].ID)
	_, total, err = s.ListIntents(ctx, orgA, capstan.IntentFilter{Status: capstan.IntentDraft})
	require.NoError(t, err)
	require.Zero(t, total)

	bad := newIntent()
	bad.Mode = "loud"
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(s.CreateIntent(ctx, orgA, bad)))
}

func testCreatePlanAtomic(t *testing.T, s capstan.Store) {
	in := newIntent()
	require.NoError(t, s.CreateIntent(ctx, orgA, in))
	stale := *in
	in.Constraints = map[string]any{"environment": "staging"}
	require.NoError(t, s.UpdateIntent(ctx, orgA, in))

	err := s.CreatePlan(ctx, orgA, newPlan(stale.ID), &stale, nil)
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))
	plans, err := s.ListPlans(ctx, orgA, in.ID)
	require.NoError(t, err)
	require.Empty(t, plans, "the plan is not written when its intent update fails")

	invalid := newPlan(in.ID)
	invalid.Bindings[0].Reason = ""
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(s.CreatePlan(ctx, orgA, invalid, in, nil)))
	got, err := s.GetIntent(ctx, orgA, in.ID)
	require.NoError(t, err)
	require.Equal(t, in.Version, got.Version, "nor is the intent")
}

// testSeedExample plans the seed's example on the store: every store must
// give the same plan and the same explanations.
func testSeedExample(t *testing.T, s capstan.Store) {
	svc := service.New(s, slog.New(slog.NewTextHandler(io.Discard, nil)))
	admin := capstan.WithActor(ctx, &capstan.Actor{ID: "alice", OrganizationID: orgA, Roles: []string{capstan.RoleAdmin}})
	require.NoError(t, svc.InstallPacks(admin, orgA, packs.FS, packs.Order))
	require.NoError(t, svc.SeedDemoCatalog(admin, orgA, catalog.Demo))
	in, err := svc.CreateIntent(admin, service.IntentInput{
		Action: "install", TargetResourceType: "tempo.instance", Scenario: packs.SimulatedTempoInstall,
		DesiredResult: map[string]any{"name": "prod-tempo", "version": "2.x"},
		Constraints:   map[string]any{"environment": "prod", "cluster": "prod-k8s"},
	})
	require.NoError(t, err)
	plan, err := svc.PlanIntent(admin, in.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PlanReady, plan.Status, "%v", plan.Problems)

	got := map[string]string{}
	for _, b := range plan.Bindings {
		got[b.ID] = string(b.Status) + " | " + b.Reason
		for _, c := range b.Candidates {
			got[b.ID+" <- "+c.Ref] = c.Reason
		}
	}
	require.Equal(t, SeedExplanations, got)
}

func testProviderBindings(t *testing.T, s capstan.Store) {
	_, err := s.ImportResources(ctx, orgA, []*capstan.Resource{resource("kubernetes.cluster", "c1", "prod", provides("kubernetes.cluster", nil, nil))})
	require.NoError(t, err)
	cluster, err := s.GetResourcesByKey(ctx, orgA, []string{"kubernetes.cluster/c1"})
	require.NoError(t, err)
	require.NotNil(t, cluster[0])
	in := newIntent()
	require.NoError(t, s.CreateIntent(ctx, orgA, in))
	require.NoError(t, in.Move(capstan.IntentPlanned))
	var plans []string
	for range 2 {
		p := newPlan(in.ID)
		p.Bindings[0].Provider.ResourceID = cluster[0].ID
		require.NoError(t, s.CreatePlan(ctx, orgA, p, in, nil))
		plans = append(plans, p.ID)
	}
	got, err := s.ListProviderBindings(ctx, orgA, cluster[0].ID, 10)
	require.NoError(t, err)
	require.Equal(t, []capstan.ProviderBinding{{PlanID: plans[1], Binding: "cluster"}, {PlanID: plans[0], Binding: "cluster"}}, got, "newest plan first")
	one, err := s.ListProviderBindings(ctx, orgA, cluster[0].ID, 1)
	require.NoError(t, err)
	require.Len(t, one, 1)
	foreign, err := s.ListProviderBindings(ctx, orgB, cluster[0].ID, 10)
	require.NoError(t, err)
	require.Empty(t, foreign, "another organization sees none")
	none, err := s.ListProviderBindings(ctx, orgA, "no-such-resource", 10)
	require.NoError(t, err)
	require.Empty(t, none)

	// A plan rebound to another provider no longer binds the first.
	_, err = s.ImportResources(ctx, orgA, []*capstan.Resource{resource("kubernetes.cluster", "c2", "prod", provides("kubernetes.cluster", nil, nil))})
	require.NoError(t, err)
	other, err := s.GetResourcesByKey(ctx, orgA, []string{"kubernetes.cluster/c2"})
	require.NoError(t, err)
	newest, err := s.GetPlan(ctx, orgA, plans[1])
	require.NoError(t, err)
	newest.Bindings[0].Provider.ResourceID, newest.Bindings[0].Provider.ResourceKey = other[0].ID, other[0].Key()
	require.NoError(t, s.UpdatePlan(ctx, orgA, newest, nil))
	got, err = s.ListProviderBindings(ctx, orgA, cluster[0].ID, 10)
	require.NoError(t, err)
	require.Equal(t, []capstan.ProviderBinding{{PlanID: plans[0], Binding: "cluster"}}, got, "the rebound plan is gone")
	got, err = s.ListProviderBindings(ctx, orgA, other[0].ID, 10)
	require.NoError(t, err)
	require.Equal(t, []capstan.ProviderBinding{{PlanID: plans[1], Binding: "cluster"}}, got)
}
