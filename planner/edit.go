package planner

import (
	"context"
	"fmt"
	"slices"

	"github.com/capstan-dev/capstan"
)

// Rebind resolves every rebind of a change set the way planning resolves
// a requirement the user names a provider for: the provider must meet the
// requirement's constraints and the policies, and the new binding carries
// its candidates and reasons. A provider that does not qualify is a
// Rebinding with a Problem, judged with the rest of the set.
func (p *Planner) Rebind(ctx context.Context, org string, base *capstan.Plan, in *capstan.Intent, changes []capstan.PlanChange) (map[int]Rebinding, error) {
	out := map[int]Rebinding{}
	if len(changes) > MaxChanges {
		return out, nil // ApplyChanges refuses the set whole
	}
	r := &resolution{planner: p, org: org, intent: in}
	for i, c := range changes {
		if c.Op != capstan.ChangeRebind || len(c.CheckShape()) > 0 {
			continue
		}
		b := base.Binding(c.Requirement)
		if b == nil {
			continue // the validator names it
		}
		rb, err := r.rebind(ctx, b, c.Provider)
		if err != nil {
			return nil, err
		}
		out[i] = rb
	}
	return out, nil
}

// Revise makes the next revision from an accepted change set: the result's
// content, one revision up, its changes stamped and recorded, its digest.
// Before start the status follows the plan's problems (Settle).
func Revise(base *capstan.Plan, res ChangeResult, changes []capstan.PlanChange, src capstan.RevisionSource) (*capstan.Plan, error) {
	out := res.Plan
	out.Revision = base.Revision + 1
	stamped := make([]capstan.PlanChange, len(changes))
	for i, c := range changes {
		c.Actor, c.At, c.Revision = src.Actor, src.At.UTC(), out.Revision
		stamped[i] = c
	}
	src.Changes = stamped
	out.Revised = src
	out.Customizations.Changes = append(slices.Clone(base.Customizations.Changes), stamped...)
	out.Digest = capstan.ContentOf(out).Digest()
	if base.Status.Editable() {
		out.Problems = Problems(out)
		return out, Settle(out)
	}
	return out, nil
}

// rebind resolves a requirement anew with the provider the user names.
func (r *resolution) rebind(ctx context.Context, b *capstan.ResourceBinding, provider string) (Rebinding, error) {
	def, err := r.planner.Catalog.GetCapability(ctx, r.org, b.Requirement.Capability)
	if err != nil {
		return Rebinding{}, err
	}
	if b.Status == capstan.BindingFailed && b.Constraints == nil {
		return Rebinding{Problem: fmt.Sprintf("binding %s failed before its constraints were resolved (%s): fix the scenario or the intent, not the provider", b.ID, b.Reason)}, nil
	}
	nb := *b
	nb.Requirement.Strategy, nb.Requirement.Provider, nb.Explicit = capstan.StrategyExplicit, provider, true
	nb.Requirement.CreateWith = "" // a chosen provider is not created
	nb.Candidates, nb.Provider, nb.SubOperation = nil, nil, nil
	nb.OmittedCandidates, nb.OmittedReasons = 0, nil
	if nb.Constraints == nil {
		nb.Constraints = map[string]any{}
	}
	resolved, _, err := r.bind(ctx, nb, def, nil)
	if err != nil {
		return Rebinding{}, err
	}
	if resolved.Status != capstan.BindingResolved {
		return Rebinding{Problem: resolved.Reason}, nil
	}
	return Rebinding{Binding: resolved}, nil
}
