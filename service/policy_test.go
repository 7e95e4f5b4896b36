package service_test

import (
	"context"
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

// TestAStartJudgesItsProvidersAgain: two prod Tempos planned while a
// dedicated MinIO was free both bind it; once the first workload uses it,
// the second plan's start is CONFLICT naming the binding, the provider and
// the policy — it never starts on storage another workload holds — while
// a plan whose providers still qualify starts.
func TestAStartJudgesItsProvidersAgain(t *testing.T) {
	svc, store := setup(t)
	ctx := testenv.Admin(testenv.Org)
	free := &capstan.Resource{Type: "minio.instance", Name: "free-dedicated", Environment: "prod", LifecycleStatus: capstan.LifecycleActive,
		HealthStatus: capstan.HealthHealthy, Relationships: []capstan.Relationship{{Type: capstan.RelRunsOn, Target: "kubernetes.cluster/prod-k8s"}},
		ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "object_storage.s3", Scope: map[string]any{"environment": "prod", "region": "eu-central"},
			Attributes: map[string]any{"encryption": "required", "access_mode": "dedicated", "min_capacity_gb": 500}}}}
	_, err := store.ImportResources(context.Background(), testenv.Org, []*capstan.Resource{free})
	require.NoError(t, err)
	tempo := func(name string) *capstan.Plan {
		in := testenv.SeedIntent()
		in.DesiredResult = map[string]any{"name": name, "version": "2.x"}
		p := plan(t, svc, in)
		require.Equal(t, capstan.PlanReady, p.Status, "%v", p.Problems)
		for _, b := range p.Bindings {
			if b.ID == "object-storage" {
				require.NotNil(t, b.Provider, "%+v", b)
				require.Equal(t, free.Key(), b.Provider.ResourceKey, "the free dedicated MinIO is chosen")
			}
		}
		return p
	}
	first, second := tempo("tempo-a"), tempo("tempo-b")

	// tempo-a's workload now uses the MinIO (as its operation's first step does).
	user := &capstan.Resource{Type: "tempo.instance", Name: "tempo-a", Environment: "prod", LifecycleStatus: capstan.LifecycleProvisioning,
		HealthStatus: capstan.HealthUnknown, Relationships: []capstan.Relationship{{Type: capstan.RelUses, Target: free.Key()}}}
	_, err = store.ImportResources(context.Background(), testenv.Org, []*capstan.Resource{user})
	require.NoError(t, err)

	_, err = svc.StartOperation(ctx, second.ID, "")
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "object-storage: minio.instance/free-dedicated now fails policy prod-object-storage-dedicated: Production object storage must be dedicated to one workload: it already serves tempo.instance/tempo-a.")
	require.Contains(t, err.Error(), "plan the intent again")
	_, total, err := store.ListOperations(context.Background(), testenv.Org, capstan.OperationFilter{PlanID: second.ID})
	require.NoError(t, err)
	require.Zero(t, total, "nothing started")

	op, err := svc.StartOperation(ctx, first.ID, "")
	require.NoError(t, err, "tempo-a's own MinIO still qualifies for tempo-a")
	require.NotEmpty(t, op.ID)
}
