package service

import (
	"context"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/planner"
)

// RevertPlanPatch proposes the inverse of an applied patch as a new patch,
// through the same validation and approval as any other.
func (s *Service) RevertPlanPatch(ctx context.Context, patchID, reason string) (*capstan.PlanPatch, error) {
	a, err := requireAction(ctx, capstan.ActionRevertPatch)
	if err != nil {
		return nil, err
	}
	org := a.OrganizationID
	p, err := s.Store.GetPlanPatch(ctx, org, patchID)
	if err != nil {
		return nil, err
	}
	if p.Status != capstan.PatchApplied {
		return nil, capstan.Errorf(capstan.ECONFLICT, "%s is %s: only an applied patch is reverted", capstan.Named("plan patch", p.ID), p.Status)
	}
	before, err := s.Store.GetPlanRevision(ctx, org, p.PlanID, p.AppliedRevision-1)
	if err != nil {
		return nil, err
	}
	after, err := s.Store.GetPlanRevision(ctx, org, p.PlanID, p.AppliedRevision)
	if err != nil {
		return nil, err
	}
	changes := planner.Inverse(before, after)
	if len(changes) == 0 {
		return nil, capstan.Errorf(capstan.EINVALID, "%s changed only node runs (retry, skip): history is not reverted", capstan.Named("plan patch", p.ID))
	}
	plan, err := s.Store.GetPlan(ctx, org, p.PlanID)
	if err != nil {
		return nil, err
	}
	restorable, reverting := revertOf(before, after)
	return s.Propose(ctx, org, proposal{author: a.ID, roles: a.Roles, mayAuthor: mayAuthorJobs(a), opID: p.OperationID, base: plan.Revision, changes: changes,
		reason: reason, reverts: p.ID, restorable: restorable, reverting: reverting})
}

// revertOf is what a revert of the patch that made after from before may
// do beyond any change: restore before's nodes, remove the nodes it added.
func revertOf(before, after *capstan.PlanRevision) ([]capstan.PlanNode, map[string]bool) {
	reverting := map[string]bool{}
	for _, n := range capstan.Diff(before, after).NodesAdded {
		reverting[n.ID] = true
	}
	return before.Nodes, reverting
}

// revertContext is revertOf for the applied patch a revert names.
func (s *Service) revertContext(ctx context.Context, org, patchID string) ([]capstan.PlanNode, map[string]bool, error) {
	p, err := s.Store.GetPlanPatch(ctx, org, patchID)
	if err != nil {
		return nil, nil, err
	}
	before, err := s.Store.GetPlanRevision(ctx, org, p.PlanID, p.AppliedRevision-1)
	if err != nil {
		return nil, nil, err
	}
	after, err := s.Store.GetPlanRevision(ctx, org, p.PlanID, p.AppliedRevision)
	if err != nil {
		return nil, nil, err
	}
	restorable, reverting := revertOf(before, after)
	return restorable, reverting, nil
}

// PlanPatch returns a patch of the caller's organization.
func (s *Service) PlanPatch(ctx context.Context, id string) (*capstan.PlanPatch, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.GetPlanPatch(ctx, org, id)
}

// OperationPatches returns an operation's patches, oldest first.
func (s *Service) OperationPatches(ctx context.Context, opID string) ([]*capstan.PlanPatch, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.ListPlanPatches(ctx, org, opID)
}

// PlanRevisions returns every revision of a plan, oldest first.
func (s *Service) PlanRevisions(ctx context.Context, planID string) ([]*capstan.PlanRevision, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.Store.GetPlan(ctx, org, planID); err != nil {
		return nil, err
	}
	return s.Store.ListPlanRevisions(ctx, org, planID)
}

// PlanRevision returns one revision of a plan.
func (s *Service) PlanRevision(ctx context.Context, planID string, revision int) (*capstan.PlanRevision, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.GetPlanRevision(ctx, org, planID, revision)
}

// PlanDiff compares two revisions of a plan.
func (s *Service) PlanDiff(ctx context.Context, planID string, from, to int) (*capstan.PlanDiff, error) {
	a, err := s.PlanRevision(ctx, planID, from)
	if err != nil {
		return nil, err
	}
	b, err := s.PlanRevision(ctx, planID, to)
	if err != nil {
		return nil, err
	}
	return capstan.Diff(a, b), nil
}

// PatchDiff is what a patch changes: between the revisions it joined once
// applied; before that, between its base and what it would make of it
// (nil when it no longer applies).
func (s *Service) PatchDiff(ctx context.Context, p *capstan.PlanPatch) (*capstan.PlanDiff, error) {
	if p.Status == capstan.PatchApplied {
		return s.PlanDiff(ctx, p.PlanID, p.AppliedRevision-1, p.AppliedRevision)
	}
	if p.Status != capstan.PatchProposed {
		return nil, nil
	}
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	base, err := s.Store.GetPlanRevision(ctx, org, p.PlanID, p.BaseRevision)
	if err != nil {
		return nil, err
	}
	sc, err := s.scene(ctx, org, p.OperationID)
	if err != nil {
		return nil, err
	}
	if sc.plan.Revision != p.BaseRevision {
		return nil, nil
	}
	res, err := s.rejudge(ctx, org, sc, p)
	if err != nil {
		return nil, nil // it no longer applies: there is nothing it would make
	}
	next := *res.Plan
	next.Revision = p.BaseRevision + 1
	return capstan.Diff(base, capstan.Snapshot(&next, base.Digest)), nil
}

// NodeTemplates returns the node templates of the installed packs by name.
func (s *Service) NodeTemplates(ctx context.Context) (map[string]*capstan.NodeTemplate, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	pc, err := s.packContext(ctx, org)
	if err != nil {
		return nil, err
	}
	return pc.templates, nil
}
