package service

import (
	"context"
	"maps"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/planner"
)

// IntentInput is what a caller says when creating an intent.
type IntentInput struct {
	Action             string
	TargetResourceType string
	DesiredResult      map[string]any
	Constraints        map[string]any
	Providers          map[string]string
	Scenario           string
	Mode               string
}

// CreateIntent stores a submitted intent for the caller.
func (s *Service) CreateIntent(ctx context.Context, in IntentInput) (*capstan.Intent, error) {
	a, err := requireAction(ctx, capstan.ActionCreateIntent)
	if err != nil {
		return nil, err
	}
	mode := in.Mode
	if mode == "" {
		mode = capstan.ModeSimple
	}
	i := &capstan.Intent{
		Actor: a.ID, Action: in.Action, TargetResourceType: in.TargetResourceType,
		DesiredResult: maps.Clone(in.DesiredResult), Constraints: maps.Clone(in.Constraints),
		Providers: maps.Clone(in.Providers), Scenario: in.Scenario, Mode: mode, Status: capstan.IntentDraft,
	}
	if err := i.Move(capstan.IntentSubmitted); err != nil {
		return nil, err
	}
	for what, v := range map[string]any{"desiredResult": i.DesiredResult, "constraints": i.Constraints, "providers": i.Providers} {
		if err := s.refuseSecretValues(ctx, a.OrganizationID, "the intent's "+what, v); err != nil {
			return nil, err
		}
	}
	if err := s.Store.CreateIntent(ctx, a.OrganizationID, i); err != nil {
		return nil, err
	}
	return i, nil
}

// PlanIntent resolves the intent into a new plan and stores it with the
// intent's new status in one transaction. An invalid plan is stored too,
// with every reason; the intent then stays submitted.
func (s *Service) PlanIntent(ctx context.Context, intentID string) (*capstan.Plan, error) {
	a, err := requireAction(ctx, capstan.ActionPlanIntent)
	if err != nil {
		return nil, err
	}
	org := a.OrganizationID
	in, err := s.Store.GetIntent(ctx, org, intentID)
	if err != nil {
		return nil, err
	}
	switch in.Status {
	case capstan.IntentSubmitted:
	case capstan.IntentPlanned:
		if err := in.Move(capstan.IntentSubmitted); err != nil {
			return nil, err
		}
	default:
		return nil, capstan.Errorf(capstan.ECONFLICT, "%s is %s and cannot be planned", capstan.Named("intent", in.ID), in.Status)
	}
	plan, err := s.resolve(ctx, org, in)
	if err != nil {
		return nil, err
	}
	if plan.Status == capstan.PlanReady {
		if err := in.Move(capstan.IntentPlanned); err != nil {
			return nil, err // cannot fail: the intent was moved to submitted above
		}
	}
	replaced, err := s.supersede(ctx, org, in)
	if err != nil {
		return nil, err
	}
	if err := s.Store.CreatePlan(ctx, org, plan, in, replaced); err != nil {
		return nil, err
	}
	return plan, nil
}

// supersede returns the intent's latest plan moved to superseded, for the
// new plan to replace in the same transaction; nil when it has none. Only
// a plan that never started is superseded (a started one ends with its
// operation).
func (s *Service) supersede(ctx context.Context, org string, in *capstan.Intent) (*capstan.Plan, error) {
	if in.LatestPlanID == "" {
		return nil, nil
	}
	old, err := s.Store.GetPlan(ctx, org, in.LatestPlanID)
	if err != nil {
		return nil, err
	}
	if !old.Status.Editable() {
		return nil, nil // it started: it ends with its operation, not by a new plan
	}
	if err := old.Move(capstan.PlanSuperseded); err != nil {
		return nil, capstan.Errorf(capstan.ECONFLICT, "%s is %s and cannot be replaced by a new plan", capstan.Named("plan", old.ID), old.Status)
	}
	return old, nil
}

// DryRunPlan resolves the intent into a plan without storing anything.
func (s *Service) DryRunPlan(ctx context.Context, intentID string) (*capstan.Plan, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	in, err := s.Store.GetIntent(ctx, org, intentID)
	if err != nil {
		return nil, err
	}
	return s.resolve(ctx, org, in)
}

// resolve chooses the intent's scenario and plans it. The intent's action
// must be one its resource type allows (ResourceType.allowedActions).
func (s *Service) resolve(ctx context.Context, org string, in *capstan.Intent) (*capstan.Plan, error) {
	types, err := s.Store.ListResourceTypes(ctx, org)
	if err != nil {
		return nil, err
	}
	if err := capstan.CheckAction(types, in.TargetResourceType, in.Action); err != nil {
		return nil, err
	}
	pl, err := s.planner(ctx, org)
	if err != nil {
		return nil, err
	}
	sc, err := pl.ChooseScenario(ctx, org, in)
	if err != nil {
		return nil, err
	}
	return pl.Plan(ctx, org, in, sc)
}

// EditPlan applies one batch of changes to a plan that has not started,
// as its next revision (Editable says when): the same vocabulary and rules as a PlanPatch
// (planner.ApplyChanges), judged all at once. version is the plan version
// the caller read (ECONFLICT when stale).
func (s *Service) EditPlan(ctx context.Context, planID string, version int64, edits []capstan.PlanChange) (*capstan.Plan, error) {
	a, err := requireAction(ctx, capstan.ActionEditPlan)
	if err != nil {
		return nil, err
	}
	org := a.OrganizationID
	plan, err := s.Store.GetPlan(ctx, org, planID)
	if err != nil {
		return nil, err
	}
	if plan.Version != version {
		return nil, capstan.Errorf(capstan.ECONFLICT, "%s is at version %d, the edit was made on %d: reload and retry", capstan.Named("plan", planID), plan.Version, version)
	}
	in, err := s.Store.GetIntent(ctx, org, plan.IntentID)
	if err != nil {
		return nil, err
	}
	if err := Editable(plan); err != nil {
		return nil, err
	}
	pc, err := s.packContext(ctx, org)
	if err != nil {
		return nil, err
	}
	edits = planner.PinTemplates(edits, pc.templates)
	cs, _, err := s.changeSet(ctx, org, changerOf(a), plan, in, edits)
	if err != nil {
		return nil, err
	}
	res := planner.ApplyChanges(cs)
	if err := res.Err("plan edit rejected"); err != nil {
		return nil, err
	}
	edited, err := planner.Revise(plan, res, edits, capstan.RevisionSource{Actor: a.ID, At: s.Now(), Kind: capstan.RevisionEdit})
	if err != nil {
		return nil, err
	}
	// An edit that makes the latest plan ready plans the intent, atomically.
	var planned *capstan.Intent
	if edited.Status == capstan.PlanReady && in.Status == capstan.IntentSubmitted && in.LatestPlanID == edited.ID {
		if err := in.Move(capstan.IntentPlanned); err != nil {
			return nil, err
		}
		planned = in
	}
	if err := s.Store.UpdatePlan(ctx, org, edited, planned); err != nil {
		return nil, err
	}
	return edited, nil
}
