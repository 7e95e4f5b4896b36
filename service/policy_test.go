package service_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
)

// governancePack ships CEL patch policies of each effect.
const governancePack = `
id: governance
version: 1.0.0
description: Patch policies of the platform team.
patch_policies:
  - id: staging-admins-may-drop-gates
    description: In staging a platform admin may take a gate out.
    when: 'patch.environment == "staging" && "platform_admin" in patch.author_roles'
    effect: allow
    allows: [keep-gate]
  - id: no-rebind-in-prod
    description: Providers of a running prod plan are not changed by a patch.
    when: 'patch.started && patch.environment == "prod" && "rebind" in patch.ops'
    effect: reject
  - id: parameters-need-two-dbas
    description: Changed parameters of a running plan need two DBAs.
    when: 'patch.started && "set_parameters" in patch.ops'
    effect: require
    roles: [dba]
    approvals: 2
  - id: smoke-tests-welcome
    description: Adding the pack's smoke test alone needs no second person.
    when: 'patch.changes == 1 && patch.templates == ["smoke-test"]'
    effect: approve
`

func TestPatchPolicies(t *testing.T) {
	svc, store := setup(t)
	_, err := svc.InstallPackYAML(testenv.Admin(testenv.Org), "governance.yaml", []byte(governancePack))
	require.NoError(t, err)

	// allow: a platform admin takes the gate out in staging; an sre may not.
	p := plan(t, svc, advanced("staging"))
	_, err = svc.EditPlan(as("sam", capstan.RoleSRE), p.ID, p.Version, []capstan.PlanChange{{Op: capstan.ChangeRemove, Node: "approve-rollout"}})
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err))
	edited, err := svc.EditPlan(as("pat", capstan.RolePlatformAdmin), p.ID, p.Version, []capstan.PlanChange{{Op: capstan.ChangeRemove, Node: "approve-rollout"}})
	require.NoError(t, err)
	require.Nil(t, edited.Node("approve-rollout"))

	op, _ := running(t, svc, store, "prod", map[string]capstan.NodeRunStatus{"prepare-namespace": capstan.NodeSucceeded})
	alice := as("alice", capstan.RoleOperator)
	// approve: the smoke test alone applies at once, even in prod.
	smoke, err := svc.ProposePlanPatch(alice, op.ID, 1, []capstan.PlanChange{{Op: capstan.ChangeInsertAfter, Node: "verify-tracing", Template: "smoke-test"}}, "smoke")
	require.NoError(t, err)
	require.Equal(t, capstan.PatchApplied, smoke.Status)
	require.Empty(t, smoke.Approvals)
	// require: two DBAs (besides the second person of prod).
	params, err := svc.ProposePlanPatch(alice, op.ID, 2, []capstan.PlanChange{{Op: capstan.ChangeSetParameters, Node: "helm-install", Parameters: map[string]any{"replicas": 3}}}, "more")
	require.NoError(t, err)
	require.Equal(t, capstan.PatchProposed, params.Status)
	var rules []string
	for _, r := range params.Approvals {
		rules = append(rules, r.Rule)
	}
	require.Equal(t, []string{"prod-second-person", "policy:parameters-need-two-dbas"}, rules)
	dba := func(id string) *capstan.PlanPatch {
		got, err := svc.DecidePlanPatch(as(id, "dba", capstan.RoleSRE), params.ID, true, "", params.Digest)
		require.NoError(t, err)
		return got
	}
	require.Equal(t, capstan.PatchProposed, dba("dora").Status, "one DBA of two")
	require.Equal(t, capstan.PatchApplied, dba("dave").Status)
	// reject: no rebind of a running prod plan, naming the policy.
	_, err = svc.ProposePlanPatch(alice, op.ID, 3, []capstan.PlanChange{{Op: capstan.ChangeRebind, Requirement: "secrets", Provider: "vault.instance/prod-vault"}}, "other vault")
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err))
	require.Contains(t, err.Error(), "[rejected-by-policy]")
	require.Contains(t, err.Error(), "no-rebind-in-prod")
}
