package planner

import (
	"context"
	"fmt"
	"strings"

	"github.com/capstan-dev/capstan"
)

// Recheck judges again, against the store as it is now, the policies
// each provider of the plan's own resolved bindings passed when it was
// planned: a provider may have changed since — another workload may now
// use a dedicated one, a plan made before it took it. A plan starts only
// on providers that pass now; one that fails is CONFLICT naming each
// binding and policy, and planning the intent again chooses anew.
func (p *Planner) Recheck(ctx context.Context, org string, plan *capstan.Plan, in *capstan.Intent) error {
	r := &resolution{planner: p, org: org, intent: in, found: map[string]capstan.CandidateResult{}}
	var failed []string
	for _, b := range plan.Bindings {
		if b.Parent != "" || b.Status != capstan.BindingResolved || b.Provider == nil || b.Provider.ResourceKey == "" {
			continue // a sub-operation's requirement is planned when it starts
		}
		res, err := p.Catalog.FindCandidates(ctx, org, capstan.CandidateQuery{Capability: b.Requirement.Capability, Constraints: b.Constraints,
			Lifecycles: b.Requirement.Lifecycles, Provider: b.Provider.ResourceKey, Owner: in.TargetKey(), MaxRejected: -1})
		if err != nil {
			return err
		}
		var c *capstan.Candidate
		for i := range res.Candidates {
			if res.Candidates[i].Resource.Key() == b.Provider.ResourceKey {
				c = &res.Candidates[i]
			}
		}
		if c == nil {
			failed = append(failed, fmt.Sprintf("%s: %s no longer provides %s", b.ID, b.Provider.ResourceKey, b.Requirement.Capability))
			continue
		}
		if why := failedPolicies(r.resourcePolicies(b, c)); why != "" {
			failed = append(failed, fmt.Sprintf("%s: %s now fails policy %s", b.ID, b.Provider.ResourceKey, why))
		}
	}
	if len(failed) > 0 {
		return capstan.Errorf(capstan.ECONFLICT, "%s was made on providers that no longer qualify (%s): plan the intent again",
			capstan.Named("plan", plan.ID), strings.Join(failed, "; "))
	}
	return nil
}
