package storetest

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// revise returns p with one more node at the next revision, as
// planner.Revise would make it.
func revise(p *capstan.Plan, node string) *capstan.Plan {
	c := *p
	c.Nodes = append(append([]capstan.PlanNode(nil), p.Nodes...), capstan.PlanNode{ID: node, Type: capstan.NodeVerification, Title: node,
		Probes: []capstan.Probe{{Name: node, Type: "sim"}}})
	c.Revision++
	c.Revised = capstan.RevisionSource{Actor: "alice", Kind: capstan.RevisionPatch}
	c.Digest = capstan.ContentOf(&c).Digest()
	return &c
}

func testPlanRevisions(t *testing.T, s capstan.Store) {
	in := newIntent()
	require.NoError(t, s.CreateIntent(ctx, orgA, in))
	plan := newPlan(in.ID)
	require.NoError(t, s.CreatePlan(ctx, orgA, plan, in, nil))
	first := capstan.ContentOf(plan).Digest()
	require.Equal(t, first, plan.Digest, "the store gives a new plan its revision's digest")

	r1, err := s.GetPlanRevision(ctx, orgA, plan.ID, 1)
	require.NoError(t, err)
	require.Equal(t, first, r1.Digest)
	require.Empty(t, r1.Parent)
	require.Equal(t, plan.Nodes, r1.Nodes)

	// A write at the same revision (a status, a followed binding) makes no revision.
	require.NoError(t, plan.Move(capstan.PlanInvalid))
	plan.Problems = []string{"x"}
	require.NoError(t, s.UpdatePlan(ctx, orgA, plan, nil))
	second := revise(plan, "smoke")
	require.NoError(t, s.UpdatePlan(ctx, orgA, second, nil))
	r2, err := s.GetPlanRevision(ctx, orgA, plan.ID, 2)
	require.NoError(t, err)
	require.Equal(t, second.Digest, r2.Digest)
	require.Equal(t, first, r2.Parent, "a revision names the one it was made from")
	require.Equal(t, "alice", r2.Source.Actor)
	require.Len(t, r2.Nodes, 2)

	list, err := s.ListPlanRevisions(ctx, orgA, plan.ID)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, []int{1, 2}, []int{list[0].Revision, list[1].Revision})
	again, err := s.GetPlanRevision(ctx, orgA, plan.ID, 1)
	require.NoError(t, err)
	require.Equal(t, r1, again, "an earlier revision never changes")

	// Refused: a digest that is not the content's, a revision that skips
	// one, a change to a revision's content under its old digest.
	bad := revise(second, "other")
	bad.Digest = first
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(s.UpdatePlan(ctx, orgA, bad, nil)))
	skip := revise(revise(second, "a"), "b")
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(s.UpdatePlan(ctx, orgA, skip, nil)))
	changed := *second
	changed.Nodes = changed.Nodes[:1]
	changed.Digest = capstan.ContentOf(&changed).Digest()
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(s.UpdatePlan(ctx, orgA, &changed, nil)), "revision 2 is what it is")
	_, err = s.GetPlanRevision(ctx, orgA, plan.ID, 3)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
	_, err = s.GetPlanRevision(ctx, orgB, plan.ID, 1)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err), "another organization sees no revision")
	other, err := s.ListPlanRevisions(ctx, orgB, plan.ID)
	require.NoError(t, err)
	require.Empty(t, other)
}

// startedWithPatch starts an operation and proposes a patch on it.
func startedWithPatch(t *testing.T, s capstan.Store) (*capstan.Operation, *capstan.Plan, *capstan.PlanPatch) {
	t.Helper()
	op, plan := startedPlan(t, s, "")
	require.NoError(t, s.StartOperation(ctx, orgA, op, plan, nil, []capstan.OperationEvent{event("operation.created")}, nil))
	changes := []capstan.PlanChange{{Op: capstan.ChangeInsertAfter, Node: "verify", Template: "smoke"}}
	p := capstan.PlanPatch{OperationID: op.ID, PlanID: plan.ID, BaseRevision: 1, BaseDigest: plan.Digest, Author: "alice", Reason: "r",
		Changes: changes, Digest: capstan.PatchDigest(plan.Digest, changes), Status: capstan.PatchProposed}
	ch := &capstan.OperationChange{Operation: op, Patches: []capstan.PlanPatch{p}, Events: []capstan.OperationEvent{event("patch.proposed")}}
	require.NoError(t, s.ApplyOperationChange(ctx, orgA, ch))
	require.NotEmpty(t, ch.Patches[0].ID)
	require.Equal(t, int64(1), ch.Patches[0].Version)
	return op, plan, &ch.Patches[0]
}

func testPlanPatches(t *testing.T, s capstan.Store) {
	op, plan, p := startedWithPatch(t, s)
	got, err := s.GetPlanPatch(ctx, orgA, p.ID)
	require.NoError(t, err)
	require.Equal(t, p.Digest, got.Digest)
	list, err := s.ListPlanPatches(ctx, orgA, op.ID)
	require.NoError(t, err)
	require.Len(t, list, 1)
	_, err = s.GetPlanPatch(ctx, orgB, p.ID)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err), "another organization sees no patch")

	// Applying is one step: the next revision, the operation on it, the
	// patch applied, its events. A stale part refuses all of it.
	next := revise(plan, "smoke")
	applied := *p
	applied.Status, applied.AppliedRevision = capstan.PatchApplied, 2
	stale := applied
	stale.Version = 0
	op2 := *op
	op2.PlanRevision = 2
	err = s.ApplyOperationChange(ctx, orgA, &capstan.OperationChange{Operation: &op2, Plan: next, Patches: []capstan.PlanPatch{stale},
		Events: []capstan.OperationEvent{event("patch.applied")}})
	requireStale(t, err, "a patch written from an old version")
	stored, err := s.GetPlan(ctx, orgA, plan.ID)
	require.NoError(t, err)
	require.Equal(t, 1, stored.Revision, "nothing of the refused step is written")
	_, err = s.GetPlanRevision(ctx, orgA, plan.ID, 2)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
	evs, err := s.ListEvents(ctx, orgA, op.ID, 0, 100)
	require.NoError(t, err)
	require.Len(t, evs, 2)

	op3 := *op
	op3.PlanRevision = 2
	ch := &capstan.OperationChange{Operation: &op3, Plan: next, Patches: []capstan.PlanPatch{applied}, Events: []capstan.OperationEvent{event("patch.applied")}}
	require.NoError(t, s.ApplyOperationChange(ctx, orgA, ch))
	require.Equal(t, int64(2), ch.Patches[0].Version)
	stored, err = s.GetPlan(ctx, orgA, plan.ID)
	require.NoError(t, err)
	require.Equal(t, 2, stored.Revision)
	require.Equal(t, next.Digest, stored.Digest)
	storedOp, err := s.GetOperation(ctx, orgA, op.ID)
	require.NoError(t, err)
	require.Equal(t, 2, storedOp.PlanRevision)
	got, err = s.GetPlanPatch(ctx, orgA, p.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PatchApplied, got.Status)
	r2, err := s.GetPlanRevision(ctx, orgA, plan.ID, 2)
	require.NoError(t, err)
	require.Equal(t, plan.Digest, r2.Parent)
}

// Two steps that move one patch at once: one commits, the other is a
// stale conflict, and the patch records one decision.
func testConcurrentPatchDecisions(t *testing.T, s capstan.Store) {
	op, _, p := startedWithPatch(t, s)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, who := range []string{"bob", "carol"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, q := *op, *p
			q.Decisions = append(q.Decisions, capstan.PatchDecision{Actor: who, Approve: true, Digest: q.Digest})
			errs[i] = s.ApplyOperationChange(ctx, orgA, &capstan.OperationChange{Operation: &o, Patches: []capstan.PlanPatch{q},
				Events: []capstan.OperationEvent{event("patch.decided")}})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			requireStale(t, err, "the losing decision")
		}
	}
	require.Equal(t, 1, ok)
	got, err := s.GetPlanPatch(ctx, orgA, p.ID)
	require.NoError(t, err)
	require.Len(t, got.Decisions, 1)
}
