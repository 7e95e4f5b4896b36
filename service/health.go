package service

import (
	"context"
	"maps"
	"strings"

	"github.com/capstan-dev/capstan"
)

// Assessor runs a health assessment of a resource now (observe.Assessor).
type Assessor interface {
	Assess(ctx context.Context, org, key, by string) (*capstan.Resource, error)
}

// AssessResource assesses a resource's health now, for the caller: its
// type's observe probes run on the host it runs on, and what they see is
// compared with its desired state (observe.Assessor).
func (s *Service) AssessResource(ctx context.Context, id string) (*capstan.Resource, error) {
	a, err := requireAction(ctx, capstan.ActionAssessResource)
	if err != nil {
		return nil, err
	}
	r, err := s.Store.GetResource(ctx, a.OrganizationID, id)
	if err != nil {
		return nil, err
	}
	if s.Assessor == nil {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "this server does not assess resources (it runs no executor)")
	}
	return s.Assessor.Assess(ctx, a.OrganizationID, r.Key(), a.ID)
}

// PauseAssessments stops (paused) or resumes the scheduled assessments of
// a resource; a pause needs a note saying why (3 to 500 characters),
// kept with who paused and when.
func (s *Service) PauseAssessments(ctx context.Context, id string, paused bool, note string) (*capstan.Resource, error) {
	a, err := requireAction(ctx, capstan.ActionPauseAssessments)
	if err != nil {
		return nil, err
	}
	note = strings.TrimSpace(note)
	if paused && (len(note) < 3 || len(note) > 500) {
		return nil, capstan.Errorf(capstan.EINVALID, "a pause needs a note of 3 to 500 characters saying why")
	}
	if err := s.refuseSecretValues(ctx, a.OrganizationID, "the pause's note", note); err != nil {
		return nil, err
	}
	err = onFreshState(func() error { // a concurrent assessment's write wins the race: pause on what it wrote
		r, err := s.Store.GetResource(ctx, a.OrganizationID, id)
		if err != nil {
			return err
		}
		r.AssessmentPaused = nil
		if paused {
			r.AssessmentPaused = &capstan.AssessmentPause{By: a.ID, At: s.Now().UTC(), Note: note}
		}
		return s.Store.UpdateResource(ctx, a.OrganizationID, r)
	})
	if err != nil {
		return nil, err
	}
	return s.Store.GetResource(ctx, a.OrganizationID, id)
}

// RepairResource creates and plans the intent that repairs a resource:
// the repair scenario of its type, in the context (constraints, chosen
// providers) of the intent whose operation last changed it. The plan is
// reviewed, approved and started like any other: nothing is repaired
// until a person starts it (SPEC §12: never silently).
func (s *Service) RepairResource(ctx context.Context, id string) (*capstan.Plan, error) {
	a, err := requireAction(ctx, capstan.ActionCreateIntent)
	if err != nil {
		return nil, err
	}
	org := a.OrganizationID
	r, err := s.Store.GetResource(ctx, org, id)
	if err != nil {
		return nil, err
	}
	if r.ActiveOperationID != "" {
		return nil, capstan.Errorf(capstan.ECONFLICT, "resource %s is being changed by %s", r.Key(), capstan.Named("operation", capstan.OperationGID(r.ActiveOperationID)))
	}
	scs, err := s.Store.ListScenarios(ctx, org, capstan.ScenarioFilter{Action: "repair", TargetResourceType: r.Type})
	if err != nil {
		return nil, err
	}
	if len(scs) == 0 {
		return nil, capstan.Errorf(capstan.EINVALID, "resource type %s has no repair scenario in the installed packs", r.Type)
	}
	in := IntentInput{Action: "repair", TargetResourceType: r.Type, DesiredResult: map[string]any{"name": r.Name},
		Constraints: map[string]any{}}
	if r.Environment != "" {
		in.Constraints["environment"] = r.Environment
	}
	if r.LastOperationID != "" {
		last, err := s.Store.GetOperation(ctx, org, r.LastOperationID)
		if err != nil {
			return nil, err
		}
		prev, err := s.Store.GetIntent(ctx, org, last.IntentID)
		if err != nil {
			return nil, err
		}
		maps.Copy(in.Constraints, prev.Constraints)
		in.Providers = maps.Clone(prev.Providers)
	}
	intent, err := s.CreateIntent(ctx, in)
	if err != nil {
		return nil, err
	}
	return s.PlanIntent(ctx, intent.ID)
}

// unresolvedDrift reads the resources op's plan binds (and op's own,
// unless op is the repair of its drift) and says which have unresolved
// drift (capstan.UnresolvedDrift).
func (s *Service) unresolvedDrift(ctx context.Context, org string, plan *capstan.Plan, op *capstan.Operation) ([]string, error) {
	own := op.ResourceKey
	if op.Action == "repair" {
		own = ""
	}
	rs, err := s.Store.GetResourcesByKey(ctx, org, capstan.BoundResources(plan, own))
	if err != nil {
		return nil, err
	}
	return capstan.UnresolvedDrift(rs), nil
}
