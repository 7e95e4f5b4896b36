package service_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/service"
)

func TestEditPlanBeforeStart(t *testing.T) {
	svc, store := setup(t)
	ctx := testenv.Admin(testenv.Org)
	p := plan(t, svc, testenv.SeedIntent())

	smoke := &capstan.PlanNode{ID: "smoke-test", Type: capstan.NodeVerification, Title: "Smoke test", Probes: []capstan.Probe{{Name: "ok", Type: "sim"}}, After: []string{"verify-tracing"}}
	edited, err := svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{
		{Op: capstan.EditAddNode, Node: smoke},
		{Op: capstan.EditSetParameters, NodeID: "helm-install", Parameters: map[string]any{"replicas": 3}},
		{Op: capstan.EditSetParameters, Parameters: map[string]any{"namespace": "tracing"}},
		{Op: capstan.EditRemoveNode, NodeID: "approve-rollout"},
		{Op: capstan.EditAddEdge, Edge: &capstan.Edge{From: "create-bucket", To: "helm-install"}},
	})
	require.NoError(t, err)
	require.Equal(t, 2, edited.Revision)
	require.Equal(t, capstan.PlanReady, edited.Status)
	require.Len(t, edited.Customizations.Changes, 5)
	require.Equal(t, "alice", edited.Customizations.Changes[0].Actor)
	require.Equal(t, "tempo.install@1.2.0", edited.Customizations.BaseTemplate)
	require.Nil(t, edited.Node("approve-rollout"))
	require.Equal(t, 3, edited.Node("helm-install").Parameters["replicas"])
	require.Contains(t, edited.Edges, capstan.Edge{From: "verify-tracing", To: "smoke-test"})

	stored, err := store.GetPlan(ctx, testenv.Org, p.ID)
	require.NoError(t, err)
	require.Equal(t, edited.Version, stored.Version)
	require.Equal(t, float64(3), stored.Node("helm-install").Parameters["replicas"])

	// A stale version is a conflict; nothing changes.
	_, err = svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.EditRemoveNode, NodeID: "smoke-test"}})
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))

	// Edits that break the graph are rejected whole, with every problem.
	_, err = svc.EditPlan(ctx, p.ID, stored.Version, []capstan.PlanChange{
		{Op: capstan.EditAddEdge, Edge: &capstan.Edge{From: "smoke-test", To: "prepare-namespace"}},
		{Op: capstan.EditRemoveNode, NodeID: "no-such-node"},
		{Op: capstan.EditRemoveNode, NodeID: "create-object-storage"},
		{Op: "explode"},
	})
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	details := capstan.ErrorDetails(err)
	require.Len(t, details, 4, "%v", details)
	require.Contains(t, details[0], "node no-such-node does not exist")
	require.Contains(t, details[1], "creates the provider of object-storage")
	require.Contains(t, details[2], `unknown edit "explode"`)
	require.Contains(t, details[3], "closes a cycle")
	unchanged, err := store.GetPlan(ctx, testenv.Org, p.ID)
	require.NoError(t, err)
	require.Equal(t, stored.Version, unchanged.Version)
}

func TestOverrideBindingRecordsTheUsersChoice(t *testing.T) {
	svc, _ := setup(t)
	ctx := testenv.Admin(testenv.Org)
	p := plan(t, svc, testenv.SeedIntent())

	// The shared storage fails the dedicated-in-prod policy even when chosen explicitly.
	_, err := svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.EditOverrideBinding, BindingID: "object-storage", Provider: "minio.instance/shared-prod-storage"}})
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	require.Contains(t, err.Error(), "prod-object-storage-dedicated")

	edited, err := svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.EditOverrideBinding, BindingID: "secrets", Provider: "vault.instance/prod-vault"}})
	require.NoError(t, err)
	b := edited.Binding("secrets")
	require.True(t, b.Explicit)
	require.Equal(t, capstan.StrategyExplicit, b.Requirement.Strategy)
	require.Equal(t, "vault.instance/prod-vault", b.Requirement.Provider)
	require.Equal(t, "override_binding", edited.Customizations.Changes[0].Op)
}

func TestOverrideFixesAnInvalidPlan(t *testing.T) {
	svc, _ := setup(t)
	ctx := testenv.Admin(testenv.Org)
	p := plan(t, svc, service.IntentInput{Action: "install", TargetResourceType: "thing.fresh",
		Constraints: map[string]any{"environment": "prod", "cluster": "prod-k8s"}})
	require.Equal(t, capstan.PlanInvalid, p.Status)
	edited, err := svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.EditOverrideBinding, BindingID: "secrets", Provider: "vault.instance/prod-vault"}})
	require.NoError(t, err)
	require.Equal(t, capstan.PlanReady, edited.Status)
	require.Empty(t, edited.Problems)
	in, err := svc.Intent(ctx, p.IntentID)
	require.NoError(t, err)
	require.Equal(t, capstan.IntentPlanned, in.Status, "the intent is planned together with its plan")
}

func TestEditRespectsRolesAndFrozenPlans(t *testing.T) {
	svc, store := setup(t)
	ctx := testenv.Admin(testenv.Org)
	p := plan(t, svc, testenv.SeedIntent())
	viewer := capstan.WithActor(ctx, &capstan.Actor{ID: "v", OrganizationID: testenv.Org, Roles: []string{capstan.RoleViewer}})
	_, err := svc.EditPlan(viewer, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.EditRemoveNode, NodeID: "approve-rollout"}})
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err))

	// Simulate a started plan: direct edits are refused (invariant 4).
	p.Status = capstan.PlanRunning
	require.NoError(t, store.UpdatePlan(ctx, testenv.Org, p, nil))
	_, err = svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.EditRemoveNode, NodeID: "approve-rollout"}})
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))
	require.Contains(t, err.Error(), "PlanPatch")
}
