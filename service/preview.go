package service

import (
	"context"

	"github.com/capstan-dev/capstan"
)

// Previewer previews what a plan's kubernetes steps would change on
// their clusters now (kube.PlanPreviewer): a server-side dry run of each
// object, nothing written.
type Previewer interface {
	PreviewPlan(ctx context.Context, org string, plan *capstan.Plan, resource string) []capstan.ObjectPreview
}

// MaxConcurrentPreviews bounds the plan previews the server runs at
// once: each reaches clusters (up to kube.MaxPreviewObjects dry runs).
const MaxConcurrentPreviews = 4

// PreviewPlan is what plan's kubernetes steps would change now, object
// by object. It reaches the clusters under Capstan's identity, so it is
// asked by someone who may plan (PLAN_INTENT), never more than
// MaxConcurrentPreviews at once on a server (UNAVAILABLE beyond: ask
// again), and not at all without a previewer (UNAVAILABLE).
func (s *Service) PreviewPlan(ctx context.Context, plan *capstan.Plan) ([]capstan.ObjectPreview, error) {
	a, err := requireAction(ctx, capstan.ActionPlanIntent)
	if err != nil {
		return nil, err
	}
	if s.Previewer == nil {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "this server previews no cluster change")
	}
	s.previewOnce.Do(func() { s.previewSlots = make(chan struct{}, MaxConcurrentPreviews) })
	select {
	case s.previewSlots <- struct{}{}:
		defer func() { <-s.previewSlots }()
	default:
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "%d plan previews are running on this server: ask again when one ends", MaxConcurrentPreviews)
	}
	in, err := s.Store.GetIntent(ctx, a.OrganizationID, plan.IntentID)
	if err != nil {
		return nil, err
	}
	return s.Previewer.PreviewPlan(ctx, a.OrganizationID, plan, in.TargetKey()), nil
}
