package embedded_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/embedded"
)

// TestProviderIndexIsBuiltForOldDatabases: a database written before the
// provider index opens with the index built from its plans.
func TestProviderIndexIsBuiltForOldDatabases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := embedded.Open(dir)
	require.NoError(t, err)
	in := &capstan.Intent{Actor: "alice", Action: "install", TargetResourceType: "tempo.instance", Mode: capstan.ModeSimple, Status: capstan.IntentSubmitted}
	require.NoError(t, s.CreateIntent(ctx, "acme", in))
	require.NoError(t, in.Move(capstan.IntentPlanned))
	plan := &capstan.Plan{IntentID: in.ID, ScenarioRef: "minio.install@1.0.0", Status: capstan.PlanReady, Revision: 1,
		Customizations: capstan.Customizations{BaseTemplate: "minio.install@1.0.0"},
		Nodes:          []capstan.PlanNode{{ID: "verify", Type: capstan.NodeVerification, Title: "Verify", Probes: []capstan.Probe{{Name: "up", Type: "sim"}}}},
		Bindings: []capstan.ResourceBinding{{ID: "cluster", Status: capstan.BindingResolved, Reason: "only one",
			Provider: &capstan.BoundProvider{ResourceID: "r1", ResourceKey: "kubernetes.cluster/c1", Capability: "kubernetes.cluster"}}}}
	require.NoError(t, s.CreatePlan(ctx, "acme", plan, in, nil))
	require.NoError(t, embedded.DropProviderIndex(s))
	require.NoError(t, s.Close())

	s, err = embedded.Open(dir)
	require.NoError(t, err)
	defer s.Close()
	got, err := s.ListProviderBindings(ctx, "acme", "r1", 10)
	require.NoError(t, err)
	require.Equal(t, []capstan.ProviderBinding{{PlanID: plan.ID, Binding: "cluster"}}, got)
}
