package service_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/service"
)

// advanced is the seed intent in advanced mode, in environment env.
func advanced(env string) service.IntentInput {
	in := testenv.SeedIntent()
	in.Mode = capstan.ModeAdvanced
	in.Constraints = map[string]any{"environment": env, "cluster": env + "-k8s"}
	return in
}

func TestEditPlanBeforeStart(t *testing.T) {
	svc, store := setup(t)
	ctx := testenv.Admin(testenv.Org)
	p := plan(t, svc, advanced("prod"))
	require.Equal(t, 1, p.Revision)
	require.NotEmpty(t, p.Digest)

	edited, err := svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{
		{Op: capstan.ChangeInsertAfter, Node: "verify-tracing", Template: "smoke-test"},
		{Op: capstan.ChangeSetParameters, Node: "helm-install", Parameters: map[string]any{"replicas": 3}},
		{Op: capstan.ChangeSetParameters, Parameters: map[string]any{"namespace": "tracing"}},
		{Op: capstan.ChangeAddEdge, Edge: &capstan.Edge{From: "create-bucket", To: "helm-install"}},
	})
	require.NoError(t, err)
	require.Equal(t, 2, edited.Revision)
	require.Equal(t, capstan.PlanReady, edited.Status)
	require.Len(t, edited.Customizations.Changes, 4)
	require.Equal(t, "alice", edited.Customizations.Changes[0].Actor)
	require.Equal(t, "tempo.install@1.3.0", edited.Customizations.BaseTemplate)
	require.Equal(t, 3, edited.Node("helm-install").Parameters["replicas"])
	require.Contains(t, edited.Edges, capstan.Edge{From: "verify-tracing", To: "smoke-test"})
	require.Equal(t, "kubernetes@1.5.0/smoke-test", edited.Node("smoke-test").Template)

	stored, err := store.GetPlan(ctx, testenv.Org, p.ID)
	require.NoError(t, err)
	require.Equal(t, edited.Version, stored.Version)
	require.Equal(t, float64(3), stored.Node("helm-install").Parameters["replicas"])

	// Both revisions stay readable, and their diff says what the edit did.
	revs, err := svc.PlanRevisions(ctx, p.ID)
	require.NoError(t, err)
	require.Len(t, revs, 2)
	require.Equal(t, p.Digest, revs[0].Digest)
	require.Equal(t, p.Digest, revs[1].Parent)
	require.Equal(t, capstan.RevisionEdit, revs[1].Source.Kind)
	d, err := svc.PlanDiff(ctx, p.ID, 1, 2)
	require.NoError(t, err)
	require.Len(t, d.NodesAdded, 1)
	require.Equal(t, "smoke-test", d.NodesAdded[0].ID)
	require.Contains(t, d.EdgesAdded, capstan.Edge{From: "create-bucket", To: "helm-install"})
	require.Equal(t, []capstan.FieldDiff{{Path: "parameters.replicas", Old: nil, New: float64(3)}}, d.NodesChanged[0].Fields)
	require.Equal(t, "helm-install", d.NodesChanged[0].ID)

	// A stale version is a conflict; nothing changes.
	_, err = svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.ChangeRemove, Node: "smoke-test"}})
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))

	// Changes that break the graph are rejected whole, with every problem.
	_, err = svc.EditPlan(ctx, p.ID, stored.Version, []capstan.PlanChange{
		{Op: capstan.ChangeAddEdge, Edge: &capstan.Edge{From: "smoke-test", To: "prepare-namespace"}},
		{Op: capstan.ChangeRemove, Node: "no-such-node"},
		{Op: capstan.ChangeRemove, Node: "create-object-storage"},
		{Op: "explode"},
	})
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	details := capstan.ErrorDetails(err)
	require.Len(t, details, 4, "%v", details)
	require.Contains(t, details[0], "the plan has no node no-such-node")
	require.Contains(t, details[1], "creates the provider of object-storage")
	require.Contains(t, details[2], `op "explode" is not one of`)
	require.Contains(t, details[3], "closes a cycle")
	unchanged, err := store.GetPlan(ctx, testenv.Org, p.ID)
	require.NoError(t, err)
	require.Equal(t, stored.Version, unchanged.Version)
	revs, err = svc.PlanRevisions(ctx, p.ID)
	require.NoError(t, err)
	require.Len(t, revs, 2, "a refused change set leaves no revision")
}

func TestRebindRecordsTheUsersChoice(t *testing.T) {
	svc, _ := setup(t)
	ctx := testenv.Admin(testenv.Org)
	p := plan(t, svc, advanced("prod"))

	// The shared storage fails the dedicated-in-prod policy even when chosen explicitly.
	_, err := svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.ChangeRebind, Requirement: "object-storage", Provider: "minio.instance/shared-prod-storage"}})
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	require.Contains(t, err.Error(), "prod-object-storage-dedicated")

	edited, err := svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.ChangeRebind, Requirement: "secrets", Provider: "vault.instance/prod-vault"}})
	require.NoError(t, err)
	b := edited.Binding("secrets")
	require.True(t, b.Explicit)
	require.Equal(t, capstan.StrategyExplicit, b.Requirement.Strategy)
	require.Equal(t, "vault.instance/prod-vault", b.Requirement.Provider)
	require.NotEmpty(t, b.Candidates, "the new binding has its candidates and reasons")
	require.Equal(t, capstan.ChangeRebind, edited.Customizations.Changes[0].Op)
}

func TestRebindFixesAnInvalidPlan(t *testing.T) {
	svc, _ := setup(t)
	ctx := testenv.Admin(testenv.Org)
	p := plan(t, svc, service.IntentInput{Action: "install", TargetResourceType: "thing.fresh", Mode: capstan.ModeAdvanced,
		Constraints: map[string]any{"environment": "prod", "cluster": "prod-k8s"}})
	require.Equal(t, capstan.PlanInvalid, p.Status)
	edited, err := svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.ChangeRebind, Requirement: "secrets", Provider: "vault.instance/prod-vault"}})
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
	p := plan(t, svc, advanced("prod"))
	viewer := capstan.WithActor(ctx, &capstan.Actor{ID: "v", OrganizationID: testenv.Org, Roles: []string{capstan.RoleViewer}})
	_, err := svc.EditPlan(viewer, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.ChangeSetParameters, Parameters: map[string]any{"a": 1}}})
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err))

	// Simulate a started plan: direct edits are refused (invariant 4).
	p.Status = capstan.PlanRunning
	require.NoError(t, store.UpdatePlan(ctx, testenv.Org, p, nil))
	_, err = svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.ChangeSetParameters, Parameters: map[string]any{"a": 1}}})
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))
	require.Contains(t, err.Error(), "PlanPatch")
}

// TestChangeGovernanceMatrix: role x change kind x environment -> allowed
// or refused with the rule that refuses it (docs/GOVERNANCE.md).
func TestChangeGovernanceMatrix(t *testing.T) {
	inlineShell := &capstan.PlanNode{ID: "debug", Type: capstan.NodeJob, Title: "Debug", Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "shell", Script: "env"}}}
	inlineSim := &capstan.PlanNode{ID: "pause", Type: capstan.NodeJob, Title: "Pause", Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim", Duration: "1s"}}}
	weakGate := &capstan.PlanNode{ID: "approve-rollout", Type: capstan.NodeGate, Title: "Approve",
		Gate: &capstan.GateSpec{Type: "manual", Reason: "x", RequiredRoles: []string{capstan.RoleViewer}}}
	kinds := []struct {
		name   string
		change capstan.PlanChange
		// refused gives the rule that refuses role in env ("" allows).
		refused func(role, env string) string
	}{
		{"set parameters", capstan.PlanChange{Op: capstan.ChangeSetParameters, Node: "helm-install", Parameters: map[string]any{"replicas": 2}},
			func(string, string) string { return "" }},
		{"insert a pack's template", capstan.PlanChange{Op: capstan.ChangeInsertAfter, Node: "verify-tracing", Template: "smoke-test"},
			func(string, string) string { return "" }},
		{"insert an inline sim job", capstan.PlanChange{Op: capstan.ChangeInsertAfter, Node: "verify-tracing", Spec: inlineSim},
			func(string, string) string { return "" }},
		{"insert an inline shell job", capstan.PlanChange{Op: capstan.ChangeInsertAfter, Node: "verify-tracing", Spec: inlineShell},
			func(role, env string) string {
				switch {
				case role != capstan.RolePlatformAdmin:
					return capstan.RuleInlineCode
				case env == "prod":
					return capstan.RuleInlineCodeProd
				}
				return ""
			}},
		{"remove the gate", capstan.PlanChange{Op: capstan.ChangeRemove, Node: "approve-rollout"},
			func(string, string) string { return capstan.RuleKeepGate }},
		{"lower the gate's roles", capstan.PlanChange{Op: capstan.ChangeReplace, Node: "approve-rollout", Spec: weakGate},
			func(string, string) string { return capstan.RuleKeepGateRoles }},
		{"replace the sub-operation", capstan.PlanChange{Op: capstan.ChangeReplace, Node: "create-object-storage",
			Spec: &capstan.PlanNode{ID: "create-object-storage", Type: capstan.NodeJob, Title: "x", Job: &capstan.JobContract{Run: capstan.RunSpec{Runner: "sim"}}}},
			func(string, string) string { return capstan.RuleKeepSubOp }},
		{"remove the verification", capstan.PlanChange{Op: capstan.ChangeRemove, Node: "verify-tracing"},
			func(string, string) string { return capstan.RuleKeepEvidence }},
	}
	svc, _ := setup(t)
	for _, env := range []string{"staging", "prod"} {
		for _, role := range []string{capstan.RoleOperator, capstan.RoleSRE, capstan.RolePlatformAdmin} {
			ctx := capstan.WithActor(context.Background(), &capstan.Actor{ID: "u-" + role, OrganizationID: testenv.Org, Roles: []string{role}})
			for _, k := range kinds {
				if k.name == "replace the sub-operation" && env != "prod" {
					continue // outside prod an existing bucket qualifies: there is no sub-operation
				}
				t.Run(fmt.Sprintf("%s/%s/%s", env, role, k.name), func(t *testing.T) {
					p := plan(t, svc, advanced(env))
					_, err := svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{k.change})
					want := k.refused(role, env)
					if want == "" {
						require.NoError(t, err)
						return
					}
					require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err), "%v", err)
					require.Contains(t, err.Error(), "["+want+"]")
				})
			}
		}
	}
}

// A simple-mode intent (and a scenario that is not editable) takes only
// the parameters its scenario declares editable.
func TestSimpleModeTakesParametersOnly(t *testing.T) {
	svc, _ := setup(t)
	ctx := testenv.Admin(testenv.Org)
	p := plan(t, svc, testenv.SeedIntent())
	_, err := svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.ChangeInsertAfter, Node: "verify-tracing", Template: "smoke-test"}})
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err))
	require.Contains(t, err.Error(), "[parameters-only]")
	_, err = svc.EditPlan(ctx, p.ID, p.Version, []capstan.PlanChange{{Op: capstan.ChangeSetParameters, Parameters: map[string]any{"image": "evil"}}})
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err))
}
