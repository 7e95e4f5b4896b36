package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/service"
)

func as(id string, roles ...string) context.Context {
	return capstan.WithActor(context.Background(), &capstan.Actor{ID: id, OrganizationID: testenv.Org, Roles: roles})
}

// running starts the seed plan in env (no executor: the test moves the
// node runs itself) with prepare-namespace and create-bucket done and
// helm-install failed... as far as the runs go: the validator judges the
// runs, not how they came to be.
func running(t *testing.T, svc *service.Service, store capstan.Store, env string, runs map[string]capstan.NodeRunStatus) (*capstan.Operation, *capstan.Plan) {
	t.Helper()
	p := plan(t, svc, advanced(env))
	require.Equal(t, capstan.PlanReady, p.Status, "%v", p.Problems)
	op, err := svc.StartOperation(as("alice", capstan.RoleOperator), p.ID, "")
	require.NoError(t, err)
	require.NoError(t, op.Move(capstan.OperationRunning))
	ch := &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{{Type: "operation.running", Actor: "executor"}}}
	for node, s := range runs {
		ch.NodeRuns = append(ch.NodeRuns, capstan.OperationNodeRun{NodeID: node, Status: s, Attempts: 1})
	}
	require.NoError(t, store.ApplyOperationChange(context.Background(), testenv.Org, ch))
	stored, err := store.GetPlan(context.Background(), testenv.Org, p.ID)
	require.NoError(t, err)
	return op, stored
}

func eventTypes(t *testing.T, store capstan.Store, opID string) []string {
	evs, err := store.ListEvents(context.Background(), testenv.Org, opID, 0, 1000)
	require.NoError(t, err)
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func TestPlanPatchLifecycle(t *testing.T) {
	svc, store := setup(t)
	op, p := running(t, svc, store, "staging", map[string]capstan.NodeRunStatus{"prepare-namespace": capstan.NodeSucceeded,
		"create-bucket": capstan.NodeFailed})
	alice := as("alice", capstan.RoleOperator)

	// Refused whole, nothing stored: a finished node, an unknown template.
	_, err := svc.ProposePlanPatch(alice, op.ID, 1, []capstan.PlanChange{{Op: capstan.ChangeRemove, Node: "prepare-namespace"},
		{Op: capstan.ChangeInsertAfter, Node: "create-bucket", Template: "rm-rf"}}, "clean up")
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err), "removing a job drops its evidence: a governance refusal")
	require.Contains(t, err.Error(), "[history]")
	require.Contains(t, err.Error(), "[keep-evidence]")
	require.Contains(t, err.Error(), "[template]")
	none, err := svc.OperationPatches(alice, op.ID)
	require.NoError(t, err)
	require.Empty(t, none)
	_, err = svc.ProposePlanPatch(as("vic", capstan.RoleViewer), op.ID, 1, []capstan.PlanChange{{Op: capstan.ChangeRetry, Node: "create-bucket"}}, "x")
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err))
	_, err = svc.ProposePlanPatch(alice, op.ID, 7, []capstan.PlanChange{{Op: capstan.ChangeRetry, Node: "create-bucket"}}, "x")
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "made on a revision that is not the plan's")

	// A retry of the failed bucket touches the gate's upstream: the gate's
	// roles decide. The proposer, a viewer and an analyzer may not.
	retry, err := svc.ProposePlanPatch(alice, op.ID, 1, []capstan.PlanChange{{Op: capstan.ChangeRetry, Node: "create-bucket"},
		{Op: capstan.ChangeInsertAfter, Node: "create-bucket", Template: "smoke-test", NodeID: "bucket-smoke"}}, "the bucket API was down")
	require.NoError(t, err)
	require.Equal(t, capstan.PatchProposed, retry.Status)
	require.Equal(t, []capstan.ApprovalRule{{Rule: "gate:approve-rollout", Roles: []string{"sre", "platform_admin"}, Approvals: 1,
		Reason: "the patch changes gate approve-rollout or what it waits for, so the gate's approvers decide"}}, retry.Approvals)
	require.Equal(t, capstan.PatchDigest(p.Digest, retry.Changes), retry.Digest)
	stored, err := svc.Operation(alice, op.ID)
	require.NoError(t, err)
	require.Equal(t, []string{retry.ID}, stored.OpenPatches)
	waiting, total, err := store.ListOperations(context.Background(), testenv.Org, capstan.OperationFilter{AwaitingPatch: true})
	require.NoError(t, err)
	require.Equal(t, 1, total)
	require.Equal(t, op.ID, waiting[0].ID)

	for _, c := range []struct {
		ctx  context.Context
		code string
	}{
		{alice, capstan.EFORBIDDEN},
		{as("vic", capstan.RoleViewer), capstan.EFORBIDDEN},
		{as("ai-agent:rules", capstan.RolePlatformAdmin), capstan.EFORBIDDEN},
	} {
		_, err := svc.DecidePlanPatch(c.ctx, retry.ID, true, "", retry.Digest)
		require.Equal(t, c.code, capstan.ErrorCode(err), "%v", err)
	}
	_, err = svc.DecidePlanPatch(as("bob", capstan.RoleSRE), retry.ID, true, "", "sha256:something-else")
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "a decision binds to the digest the decider saw")

	applied, err := svc.DecidePlanPatch(as("bob", capstan.RoleSRE), retry.ID, true, "go", retry.Digest)
	require.NoError(t, err)
	require.Equal(t, capstan.PatchApplied, applied.Status)
	require.Equal(t, 2, applied.AppliedRevision)
	stored, err = svc.Operation(alice, op.ID)
	require.NoError(t, err)
	require.Equal(t, 2, stored.PlanRevision, "the operation runs on the new revision")
	require.Empty(t, stored.OpenPatches)
	recs, err := store.OperationRecords(context.Background(), testenv.Org, op.ID)
	require.NoError(t, err)
	for _, r := range recs.NodeRuns {
		if r.NodeID == "create-bucket" {
			require.Equal(t, capstan.NodePending, r.Status, "the retried node waits again for what it now follows")
		}
	}
	require.Subset(t, eventTypes(t, store, op.ID), []string{"patch.proposed", "patch.decided", "patch.applied", "plan.revised", "node.reset"})
	d, err := svc.PatchDiff(alice, applied)
	require.NoError(t, err)
	require.Equal(t, "bucket-smoke", d.NodesAdded[0].ID)

	// A revert is a new patch of the inverse, through the same approval.
	revert, err := svc.RevertPlanPatch(alice, applied.ID, "not needed after all")
	require.NoError(t, err)
	require.Equal(t, applied.ID, revert.Reverts)
	require.Equal(t, []capstan.PlanChange{{Op: capstan.ChangeRemove, Node: "bucket-smoke", Reason: "revert"}}, revert.Changes)
	wd, err := svc.WithdrawPlanPatch(as("carol", capstan.RoleSRE), revert.ID, "")
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err), "%v", wd)
	wd, err = svc.WithdrawPlanPatch(alice, revert.ID, "keep it")
	require.NoError(t, err)
	require.Equal(t, capstan.PatchWithdrawn, wd.Status)
	_, err = svc.DecidePlanPatch(as("bob", capstan.RoleSRE), revert.ID, true, "", revert.Digest)
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))
}

// Two patches on one base, the first approved by two people at once
// (testenv.TwoPatchesOnOneBase, run on Neo4j by the cypher tests).
func TestTwoPatchesOnOneBase(t *testing.T) {
	testenv.TwoPatchesOnOneBase(t, testenv.Store(t), testenv.NewOrg())
}

// A patch whose node started after it was proposed no longer applies: the
// decision finds it stale (Terraform refuses a stale saved plan alike).
func TestPatchBecomesStaleWhenItsNodeStarts(t *testing.T) {
	svc, store := setup(t)
	op, _ := running(t, svc, store, "prod", map[string]capstan.NodeRunStatus{"prepare-namespace": capstan.NodeSucceeded})
	alice := as("alice", capstan.RoleOperator)
	p, err := svc.ProposePlanPatch(alice, op.ID, 1, []capstan.PlanChange{{Op: capstan.ChangeSetParameters, Node: "create-bucket", Parameters: map[string]any{"size": "1Ti"}}}, "bigger")
	require.NoError(t, err)
	cur, err := store.GetOperation(context.Background(), testenv.Org, op.ID)
	require.NoError(t, err)
	require.NoError(t, store.ApplyOperationChange(context.Background(), testenv.Org, &capstan.OperationChange{Operation: cur,
		NodeRuns: []capstan.OperationNodeRun{{NodeID: "create-bucket", Status: capstan.NodeRunning, Attempts: 1}},
		Events:   []capstan.OperationEvent{{Type: "node.running", Actor: "executor"}}}))
	_, err = svc.DecidePlanPatch(as("bob", capstan.RoleSRE), p.ID, true, "", p.Digest)
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))
	require.Contains(t, err.Error(), "no longer applies")
	got, err := svc.PlanPatch(alice, p.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PatchStale, got.Status)
	require.Empty(t, got.Decisions, "its approval lapsed with it")
}

// A patch that changes what a waiting gate's approvers saw dismisses
// their decisions and the gate waits again (a review dismissed by new
// commits).
func TestPatchDismissesGateDecisions(t *testing.T) {
	svc, store := setup(t)
	op, p := running(t, svc, store, "staging", map[string]capstan.NodeRunStatus{"prepare-namespace": capstan.NodeSucceeded,
		"create-bucket": capstan.NodeSucceeded, "approve-rollout": capstan.NodeWaitingApproval})
	cur, err := store.GetOperation(context.Background(), testenv.Org, op.ID)
	require.NoError(t, err)
	spec := *p.Node("approve-rollout").Gate
	spec.Approvals = 2
	seen := capstan.UpstreamDigest(p, "approve-rollout")
	require.NoError(t, store.ApplyOperationChange(context.Background(), testenv.Org, &capstan.OperationChange{Operation: cur,
		Gates:  []capstan.Gate{{NodeID: "approve-rollout", Spec: spec, Status: capstan.GateWaiting, Decisions: []capstan.GateDecision{{Actor: "carol", Role: "sre", Approve: true, Digest: seen}}}},
		Events: []capstan.OperationEvent{{Type: "gate.decided", Actor: "carol"}}}))

	patch, err := svc.ProposePlanPatch(as("alice", capstan.RoleOperator), op.ID, 1, []capstan.PlanChange{
		{Op: capstan.ChangeInsertBefore, Node: "approve-rollout", Template: "smoke-test", NodeID: "bucket-smoke"}}, "smoke the bucket before anyone approves")
	require.NoError(t, err)
	require.Equal(t, "gate:approve-rollout", patch.Approvals[0].Rule)
	applied, err := svc.DecidePlanPatch(as("bob", capstan.RoleSRE), patch.ID, true, "", patch.Digest)
	require.NoError(t, err)
	require.Equal(t, capstan.PatchApplied, applied.Status)

	recs, err := store.OperationRecords(context.Background(), testenv.Org, op.ID)
	require.NoError(t, err)
	require.Len(t, recs.Gates, 1)
	require.True(t, recs.Gates[0].Decisions[0].Dismissed, "carol approved what the gate waited for before the patch")
	for _, r := range recs.NodeRuns {
		if r.NodeID == "approve-rollout" {
			require.Equal(t, capstan.NodePending, r.Status, "the gate waits for the inserted node, then for decisions again")
		}
	}
	require.Contains(t, eventTypes(t, store, op.ID), "gate.approval_invalidated")
	require.Equal(t, "", service.GateOutcome(recs.Gates[0], "alice", false), "a dismissed approval does not count")
}

// TestAnAnalyzerNeverPutsASecretIntoAPlan: a model's patch that sets a
// secret: reference (the analyzer's own API key, handed to the job that
// re-runs) is refused and recorded on the timeline
// (analysis.proposal_refused); the same change by a person is judged as
// any other.
func TestAnAnalyzerNeverPutsASecretIntoAPlan(t *testing.T) {
	svc, store := setup(t)
	op, p := running(t, svc, store, "staging", map[string]capstan.NodeRunStatus{"prepare-namespace": capstan.NodeSucceeded,
		"create-bucket": capstan.NodeFailed})
	ctx := context.Background()
	for _, changes := range [][]capstan.PlanChange{
		{{Op: capstan.ChangeSetParameters, Node: "helm-install", Parameters: map[string]any{"api_key": "secret:analyzer-api-key"}}},
		{{Op: capstan.ChangeSetParameters, Node: "helm-install", Parameters: map[string]any{"values": map[string]any{"token": " secret:db-password"}}}},
		{{Op: capstan.ChangeRetry, Node: "create-bucket"}, {Op: capstan.ChangeSetParameters, Parameters: map[string]any{"x": []any{"secret:other"}}}},
	} {
		err := svc.ProposeFromAnalysis(ctx, testenv.Org, op.ID, p.Revision, "create-bucket",
			capstan.Analysis{Analyzer: "ai-agent:model", Kind: capstan.AnalysisPatch, Diagnosis: "needs the key", ProposedPatch: changes}, nil)
		require.NoError(t, err, "refused, recorded")
	}
	patches, err := store.ListPlanPatches(ctx, testenv.Org, op.ID)
	require.NoError(t, err)
	require.Empty(t, patches, "nothing reached PROPOSED")
	evs, err := store.ListEvents(ctx, testenv.Org, op.ID, 0, 1000)
	require.NoError(t, err)
	refused := 0
	for _, e := range evs {
		if e.Type == "analysis.proposal_refused" {
			refused++
			require.Contains(t, fmt.Sprint(e.Payload["problems"]), "an analyzer never puts a secret into a plan")
		}
	}
	require.Equal(t, 3, refused)

	_, err = svc.ProposePlanPatch(as("sam", capstan.RoleSRE), op.ID, p.Revision, []capstan.PlanChange{{Op: capstan.ChangeSetParameters, Node: "helm-install",
		Parameters: map[string]any{"api_key": "secret:analyzer-api-key"}}}, "a person may")
	require.NoError(t, err)
}

// TestAFailedAnalysisIsOnTheTimeline: the analysis of a failed node that
// gave nothing to propose — the model server's refusal, a rate limit, an
// outage, a spent budget — says why on the operation's timeline, even
// once the operation ended.
func TestAFailedAnalysisIsOnTheTimeline(t *testing.T) {
	svc, store := setup(t)
	op, _ := running(t, svc, store, "staging", map[string]capstan.NodeRunStatus{"create-bucket": capstan.NodeFailed})
	ctx := context.Background()
	for _, err := range []error{
		capstan.Errorf(capstan.EINVALID, "the model's answer does not hold its schema"),
		capstan.Errorf(capstan.ERATELIMITED, "the analyzer's token budget of operation x is spent"),
		capstan.Errorf(capstan.EUNAVAILABLE, "the model server did not answer"),
	} {
		require.NoError(t, svc.AnalysisFailed(ctx, testenv.Org, op.ID, "create-bucket", "ai-agent:model", err))
	}
	evs, err := store.ListEvents(ctx, testenv.Org, op.ID, 0, 1000)
	require.NoError(t, err)
	var reasons []string
	for _, e := range evs {
		if e.Type == "analysis.failed" {
			require.Equal(t, "ai-agent:model", e.Actor)
			require.Equal(t, "create-bucket", e.Payload["node"])
			reasons = append(reasons, fmt.Sprint(e.Payload["problems"]))
		}
	}
	require.Len(t, reasons, 3)
	require.Contains(t, reasons[0], "INVALID: the model's answer does not hold its schema")
	require.Contains(t, reasons[1], "RATE_LIMITED")
	require.Contains(t, reasons[2], "UNAVAILABLE")
}

// TestAnAnalyzerNeverRebindsToASecret: an analyzer's rebind of a
// requirement to a provider whose attributes hold a secret: reference
// (the job would read it, resolved, in its binding's attributes) is
// refused like a secret it sets itself.
func TestAnAnalyzerNeverRebindsToASecret(t *testing.T) {
	svc, store := setup(t)
	op, p := running(t, svc, store, "staging", map[string]capstan.NodeRunStatus{"create-bucket": capstan.NodeFailed})
	ctx := context.Background()
	require.NotEmpty(t, p.Bindings)
	b := p.Bindings[0]
	_, err := store.ImportResources(ctx, testenv.Org, []*capstan.Resource{{Type: "vault.instance", Name: "holder", Environment: "staging",
		LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
		ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: b.Requirement.Capability, Attributes: map[string]any{"root_token": "secret:vault-root"}}}}})
	require.NoError(t, err)
	err = svc.ProposeFromAnalysis(ctx, testenv.Org, op.ID, p.Revision, "create-bucket", capstan.Analysis{Analyzer: "ai-agent:model", Kind: capstan.AnalysisPatch,
		Diagnosis: "use the other one", ProposedPatch: []capstan.PlanChange{{Op: capstan.ChangeRebind, Requirement: b.ID, Provider: "vault.instance/holder"}}}, nil)
	require.NoError(t, err, "refused, recorded")
	evs, err := store.ListEvents(ctx, testenv.Org, op.ID, 0, 1000)
	require.NoError(t, err)
	found := false
	for _, e := range evs {
		if e.Type == "analysis.proposal_refused" && strings.Contains(fmt.Sprint(e.Payload["problems"]), "hands the job secret:vault-root") {
			found = true
		}
	}
	require.True(t, found, "the refusal is on the timeline")
}
