package planner

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/policy"
)

// bind chooses a provider (or a scenario to create one) for a binding whose
// constraints are resolved.
func (r *resolution) bind(ctx context.Context, b capstan.ResourceBinding, def *capstan.CapabilityDefinition, stack []string) (capstan.ResourceBinding, []capstan.ResourceBinding, error) {
	strategy := b.Requirement.Strategy
	considered := 0
	if strategy != capstan.StrategyCreate {
		var err error
		if considered, err = r.judgePages(ctx, &b, def); err != nil {
			return b, nil, err
		}
	}
	if strategy == capstan.StrategyExplicit {
		return r.bindExplicit(b), nil, nil
	}
	if best := Rank(b.Candidates); best >= 0 {
		c := &b.Candidates[best]
		b.Status = capstan.BindingResolved
		b.Provider = &capstan.BoundProvider{ResourceID: c.ResourceID, ResourceKey: c.Ref, Capability: c.Capability}
		b.Reason = fmt.Sprintf("%s provides %s%s and meets every constraint and policy; %s%s", c.Ref, def.Key, viaText(c.Via), acceptedText(b.Candidates, considered), rankedBelowText(b.RankedBelow))
		return b, nil, nil
	}
	if strategy == capstan.StrategyExisting {
		return r.fail(b, "no existing provider of %s qualifies (%d considered) and strategy existing does not allow creating one", def.Key, considered), nil, nil
	}
	return r.bindSubOperation(ctx, b, def, stack, considered)
}

// judgePages judges the store's candidates a page at a time, in rank
// order: the next page of passing candidates is read only while policies
// rejected every one so far, so a large catalog costs one page. It returns
// how many providers the store considered.
func (r *resolution) judgePages(ctx context.Context, b *capstan.ResourceBinding, def *capstan.CapabilityDefinition) (int, error) {
	q := capstan.CandidateQuery{Capability: def.Key, Constraints: b.Constraints, Lifecycles: b.Requirement.Lifecycles, Owner: r.intent.TargetKey()}
	if b.Requirement.Strategy == capstan.StrategyExplicit {
		q.Provider = b.Requirement.Provider
	}
	for {
		found, err := r.findCandidates(ctx, q)
		if err != nil {
			return 0, err
		}
		page := r.judgeResources(*b, found.Candidates)
		passing, accepted := 0, false
		for _, v := range page {
			if failedChecks(v.Checks) == "" {
				passing++
				accepted = accepted || v.Accepted
			}
			if q.SkipPassing == 0 || failedChecks(v.Checks) == "" { // later pages repeat the misses
				b.Candidates = append(b.Candidates, v)
			}
		}
		if q.SkipPassing == 0 {
			b.OmittedCandidates, b.OmittedReasons = found.Omitted, found.OmittedBy
		}
		q.SkipPassing += passing
		if accepted || passing == 0 || q.SkipPassing >= found.Passing {
			b.RankedBelow = found.Passing - q.SkipPassing
			return found.Considered, nil
		}
	}
}

// judgeResources turns store candidates into verdicts: constraint checks
// first, then policies on those that pass.
func (r *resolution) judgeResources(b capstan.ResourceBinding, cands []capstan.Candidate) []capstan.CandidateVerdict {
	out := make([]capstan.CandidateVerdict, 0, len(cands))
	for _, c := range cands {
		v := capstan.CandidateVerdict{
			Kind: capstan.CandidateResource, Ref: c.Resource.Key(), ResourceID: c.Resource.ID,
			Capability: c.Capability, Via: c.Via, Lifecycle: c.Resource.LifecycleStatus, Checks: c.Checks,
		}
		if failed := failedChecks(c.Checks); failed != "" {
			v.Reason = "rejected: " + failed
			out = append(out, v)
			continue
		}
		v.Policies = r.resourcePolicies(b, &c)
		if failed := failedPolicies(v.Policies); failed != "" {
			v.Reason = "rejected by policy " + failed
			out = append(out, v)
			continue
		}
		v.Accepted = true
		out = append(out, v)
	}
	return out
}

func (r *resolution) bindExplicit(b capstan.ResourceBinding) capstan.ResourceBinding {
	want := b.Requirement.Provider
	for i := range b.Candidates {
		c := &b.Candidates[i]
		if c.Ref != want {
			if c.Reason == "" {
				c.Reason = "not chosen: the user named " + want
			}
			continue
		}
		if !c.Accepted {
			return r.fail(b, "explicit provider %s does not qualify: %s", want, c.Reason)
		}
		c.Selected, c.Rank, c.Reason = true, 1, "selected: chosen explicitly by the user and meets every constraint and policy"
		b.Status = capstan.BindingResolved
		b.Provider = &capstan.BoundProvider{ResourceID: c.ResourceID, ResourceKey: c.Ref, Capability: c.Capability}
		b.Reason = fmt.Sprintf("%s was chosen explicitly by the user; it provides %s%s and meets every constraint and policy", want, b.Requirement.Capability, viaText(c.Via))
		return b
	}
	return r.fail(b, "explicit provider %s does not provide %s", want, b.Requirement.Capability)
}

// bindSubOperation binds to a scenario that creates a provider and resolves
// that scenario's own requirements.
func (r *resolution) bindSubOperation(ctx context.Context, b capstan.ResourceBinding, def *capstan.CapabilityDefinition, stack []string, considered int) (capstan.ResourceBinding, []capstan.ResourceBinding, error) {
	scenarios, err := r.planner.Catalog.ListScenarios(ctx, r.org, capstan.ScenarioFilter{Provides: def.Key})
	if err != nil {
		return b, nil, err
	}
	for _, sc := range creators(newestPerID(scenarios), scenarios, b.Requirement.CreateWith) {
		b.Candidates = append(b.Candidates, r.judgeScenario(b, def, sc, stack))
	}
	best := Rank(b.Candidates)
	if best < 0 {
		why := "no scenario provides it"
		if cw := b.Requirement.CreateWith; cw != "" && len(b.Candidates) == countKind(b.Candidates, capstan.CandidateResource) {
			why = "create_with " + cw + " names no installed scenario that provides it"
		}
		if n := countKind(b.Candidates, capstan.CandidateScenario); n > 0 {
			why = fmt.Sprintf("none of the %d scenarios that provide it qualifies", n)
		}
		return r.fail(b, "no existing provider of %s qualifies and %s", def.Key, why), nil, nil
	}
	c := &b.Candidates[best]
	sc, err := r.planner.Catalog.GetScenario(ctx, r.org, c.Ref)
	if err != nil {
		return b, nil, err
	}
	b.Status = capstan.BindingPendingSubOperation
	b.SubOperation = &capstan.SubOperationBinding{Scenario: sc.Ref(), ExpectedCapability: def.Key, Attributes: sc.ProvidesCapability(def.Key).Attributes}
	if b.Requirement.Strategy == capstan.StrategyCreate {
		b.Reason = fmt.Sprintf("strategy create: %s will create a new provider of %s", sc.Ref(), def.Key)
	} else {
		b.Reason = fmt.Sprintf("no existing provider qualified (%d considered); %s will create one that meets the constraints and policies", considered, sc.Ref())
	}
	if len(stack) > MaxSubOperationDepth {
		return r.fail(b, "sub-operations nest deeper than %d: %s", MaxSubOperationDepth, strings.Join(stack, " -> ")), nil, nil
	}
	children, err := r.scenario(ctx, sc, b.ID+"/", nil, append(stack, sc.Ref()))
	return b, children, err
}

func (r *resolution) judgeScenario(b capstan.ResourceBinding, def *capstan.CapabilityDefinition, sc *capstan.Scenario, stack []string) capstan.CandidateVerdict {
	v := capstan.CandidateVerdict{Kind: capstan.CandidateScenario, Ref: sc.Ref(), Capability: def.Key}
	for _, s := range stack {
		if id, _ := capstan.SplitRef(s); id == sc.ID {
			v.Reason = "rejected: cycle " + strings.Join(append(append([]string(nil), stack...), sc.Ref()), " -> ")
			return v
		}
	}
	pc := sc.ProvidesCapability(def.Key)
	// What the scenario declares must meet the constraints; what it does not
	// declare is created as the requirement asks.
	attrs := maps.Clone(b.Constraints)
	if attrs == nil {
		attrs = map[string]any{}
	}
	for _, k := range sortedKeys(b.Constraints) {
		got, declared := pc.Lookup(k)
		if !declared {
			v.Checks = append(v.Checks, capstan.ConstraintCheck{Key: k, Want: b.Constraints[k], Got: b.Constraints[k], Passed: true,
				Reason: fmt.Sprintf("%s: created with %v as required", k, b.Constraints[k])})
			continue
		}
		spec, _ := def.Spec(k)
		v.Checks = append(v.Checks, capstan.CheckConstraint(k, spec, b.Constraints[k], got, true))
	}
	maps.Copy(attrs, pc.Attributes)
	if failed := failedChecks(v.Checks); failed != "" {
		v.Reason = "rejected: " + failed
		return v
	}
	env, _ := b.Constraints["environment"].(string)
	v.Policies = r.planner.Policies.Evaluate(def.Key, policy.Input{
		Intent: r.intentVars(), Requirement: requirementVars(b),
		Provider: providerVars(capstan.CandidateScenario, sc.Ref(), sc.TargetResourceType, "", env, string(capstan.LifecyclePlanned), nil, attrs, nil, false),
	})
	if failed := failedPolicies(v.Policies); failed != "" {
		v.Reason = "rejected by policy " + failed
		return v
	}
	v.Accepted = true
	return v
}

// creators are the scenarios a requirement may create its provider
// with: every newest, or only the one its create_with names (a ref
// picks that version among all).
func creators(newest, all []*capstan.Scenario, createWith string) []*capstan.Scenario {
	if createWith == "" {
		return newest
	}
	from := newest
	if strings.Contains(createWith, "@") {
		from = all
	}
	for _, sc := range from {
		if sc.ID == createWith || sc.Ref() == createWith {
			return []*capstan.Scenario{sc}
		}
	}
	return nil
}

func newestPerID(scs []*capstan.Scenario) []*capstan.Scenario {
	var out []*capstan.Scenario
	for _, s := range scs {
		if n := len(out); n > 0 && out[n-1].ID == s.ID {
			if capstan.CompareSemver(s.Version, out[n-1].Version) > 0 {
				out[n-1] = s
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

func countKind(vs []capstan.CandidateVerdict, kind string) int {
	n := 0
	for _, v := range vs {
		if v.Kind == kind {
			n++
		}
	}
	return n
}

func viaText(via []string) string {
	if len(via) == 0 {
		return ""
	}
	return " (through " + strings.Join(via, " implies ") + ")"
}

func acceptedText(vs []capstan.CandidateVerdict, considered int) string {
	n := 0
	for _, v := range vs {
		if v.Accepted {
			n++
		}
	}
	return fmt.Sprintf("%d of %d candidates accepted, ranked first", n, considered)
}

func rankedBelowText(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d more meet every constraint and rank below", n)
}

func (r *resolution) intentVars() map[string]any {
	return map[string]any{
		"action": r.intent.Action, "target": r.intent.TargetResourceType, "target_key": r.intent.TargetKey(), "environment": r.intent.Environment(),
		"production":  r.planner.Production.Is(r.intent.Environment()),
		"constraints": orEmpty(r.intent.Constraints), "desired_result": orEmpty(r.intent.DesiredResult),
	}
}

// resourcePolicies judges an existing resource c for binding b against
// every policy of its capability.
func (r *resolution) resourcePolicies(b capstan.ResourceBinding, c *capstan.Candidate) []capstan.PolicyVerdict {
	pc := c.Resource.Provides(c.Capability)
	return r.planner.Policies.Evaluate(b.Requirement.Capability, policy.Input{
		Intent: r.intentVars(), Requirement: requirementVars(b),
		Provider: providerVars(capstan.CandidateResource, c.Resource.Key(), c.Resource.Type, c.Resource.Name,
			c.Resource.Environment, string(c.Resource.LifecycleStatus), pc.Scope, pc.Attributes, c.Consumers, c.MoreConsumers),
	})
}

func requirementVars(b capstan.ResourceBinding) map[string]any {
	return map[string]any{"id": b.ID, "capability": b.Requirement.Capability, "constraints": orEmpty(b.Constraints)}
}

func providerVars(kind, key, typ, name, env, lifecycle string, scope, attrs map[string]any, consumers []string, more bool) map[string]any {
	if consumers == nil {
		consumers = []string{}
	}
	return map[string]any{
		"kind": kind, "key": key, "type": typ, "name": name, "environment": env, "lifecycle": lifecycle,
		"scope": orEmpty(scope), "attributes": orEmpty(attrs), "consumers": consumers, "more_consumers": more,
	}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
