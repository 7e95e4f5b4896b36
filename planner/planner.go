// Package planner turns an intent into a plan: it resolves every capability
// requirement of the chosen scenario (and, recursively, of every scenario
// chosen to create a missing provider), explains each decision, and builds
// the DAG. The store answers the questions (candidates, topology); every
// decision on those answers is a pure function of this package.
package planner

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/policy"
)

// Catalog is what the planner asks the store.
type Catalog interface {
	FindCandidates(ctx context.Context, org string, q capstan.CandidateQuery) (capstan.CandidateResult, error)
	TopologyValue(ctx context.Context, org, resourceID, key string, maxDepth int) (capstan.TopologyHit, error)
	GetCapability(ctx context.Context, org, key string) (*capstan.CapabilityDefinition, error)
	ListScenarios(ctx context.Context, org string, f capstan.ScenarioFilter) ([]*capstan.Scenario, error)
	GetScenario(ctx context.Context, org, ref string) (*capstan.Scenario, error)
}

// Limits bound the planner's walks.
const (
	MaxSubOperationDepth = 4
	TopologyDepth        = 4
)

// Planner resolves intents into plans.
type Planner struct {
	Catalog  Catalog
	Policies policy.Set
	// Production declares the production environments (the zero value:
	// capstan.DefaultProductionEnvironments).
	Production capstan.ProductionEnvironments
}

// ChooseScenario returns the scenario an intent asks for: the pinned one,
// or the newest scenario for its action and target type.
func (p *Planner) ChooseScenario(ctx context.Context, org string, in *capstan.Intent) (*capstan.Scenario, error) {
	if in.Scenario != "" {
		return p.Catalog.GetScenario(ctx, org, in.Scenario)
	}
	all, err := p.Catalog.ListScenarios(ctx, org, capstan.ScenarioFilter{Action: in.Action, TargetResourceType: in.TargetResourceType})
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, capstan.Errorf(capstan.ENOTFOUND, "no installed scenario does %s for %s", in.Action, in.TargetResourceType)
	}
	best := all[0]
	for _, s := range all[1:] {
		if s.ID < best.ID || (s.ID == best.ID && capstan.CompareSemver(s.Version, best.Version) > 0) {
			best = s
		}
	}
	return best, nil
}

// Plan resolves the scenario's requirements for the intent and builds the
// plan. A plan that cannot be carried out comes back with status invalid and
// every reason in Problems; an error means the planner could not ask its
// questions (store unavailable), never that the plan is bad.
func (p *Planner) Plan(ctx context.Context, org string, in *capstan.Intent, sc *capstan.Scenario) (*capstan.Plan, error) {
	plan := &capstan.Plan{
		IntentID: in.ID, ScenarioRef: sc.Ref(), Status: capstan.PlanDraft, Revision: 1,
		Customizations: capstan.Customizations{BaseTemplate: sc.Ref()},
	}
	if err := plan.Move(capstan.PlanResolving); err != nil {
		return nil, err
	}
	r := &resolution{planner: p, org: org, intent: in}
	bindings, err := r.scenario(ctx, sc, "", nil, []string{sc.Ref()})
	if err != nil {
		return nil, err
	}
	plan.Bindings = bindings
	plan.Nodes, plan.Edges = BuildGraph(sc, bindings)
	if err := r.pinSubOperations(ctx, plan); err != nil {
		return nil, err
	}
	plan.Problems = Problems(plan)
	return plan, Settle(plan)
}

// Settle moves a resolving (or edited) plan to ready or invalid from its problems.
func Settle(plan *capstan.Plan) error {
	to := capstan.PlanReady
	if len(plan.Problems) > 0 {
		to = capstan.PlanInvalid
	}
	if plan.Status == to {
		return nil
	}
	return plan.Move(to)
}

// resolution is the state of one planning run.
type resolution struct {
	planner *Planner
	org     string
	intent  *capstan.Intent
	// found memoizes candidate searches: a sub-operation often asks the
	// same question as its parent (the same cluster).
	found map[string]capstan.CandidateResult
}

// findCandidates asks the store once per distinct question in a run.
func (r *resolution) findCandidates(ctx context.Context, q capstan.CandidateQuery) (capstan.CandidateResult, error) {
	key, err := json.Marshal(q)
	if err != nil {
		return capstan.CandidateResult{}, capstan.Wrap("planner.findCandidates", err)
	}
	if res, ok := r.found[string(key)]; ok {
		return res, nil
	}
	res, err := r.planner.Catalog.FindCandidates(ctx, r.org, q)
	if err != nil {
		return res, err
	}
	if r.found == nil {
		r.found = map[string]capstan.CandidateResult{}
	}
	r.found[string(key)] = res
	return res, nil
}

// scenario resolves every requirement of sc; prefix is the binding path of
// sc inside the plan, stack the scenario refs being resolved (for cycles),
// inherited the bindings a template sub_operation hands down.
func (r *resolution) scenario(ctx context.Context, sc *capstan.Scenario, prefix string, inherited map[string]*capstan.ResourceBinding, stack []string) ([]capstan.ResourceBinding, error) {
	var out []capstan.ResourceBinding
	var workload *capstan.ResourceBinding
	for _, req := range workloadFirst(sc.Requires) {
		id := prefix + req.ID
		if b := inherited[req.ID]; b != nil {
			nb := *b
			nb.ID, nb.Parent, nb.Scenario, nb.Requirement = id, strings.TrimSuffix(prefix, "/"), sc.Ref(), req
			nb.Reason = fmt.Sprintf("inherited from the parent's binding %s: %s", b.ID, b.Reason)
			nb.Candidates = nil
			out = append(out, nb)
			continue
		}
		b, children, err := r.requirement(ctx, sc, req, id, workload, stack)
		if err != nil {
			return nil, err
		}
		b.Parent = strings.TrimSuffix(prefix, "/")
		out = append(out, b)
		out = append(out, children...)
		if req.Workload {
			wb := b
			workload = &wb
		}
	}
	return out, nil
}

func workloadFirst(reqs []capstan.CapabilityRequirement) []capstan.CapabilityRequirement {
	out := make([]capstan.CapabilityRequirement, 0, len(reqs))
	for _, q := range reqs {
		if q.Workload {
			out = append(out, q)
		}
	}
	for _, q := range reqs {
		if !q.Workload {
			out = append(out, q)
		}
	}
	return out
}

// requirement resolves one requirement into its binding plus the bindings of
// a sub-operation's own requirements.
func (r *resolution) requirement(ctx context.Context, sc *capstan.Scenario, req capstan.CapabilityRequirement, id string, workload *capstan.ResourceBinding, stack []string) (capstan.ResourceBinding, []capstan.ResourceBinding, error) {
	b := capstan.ResourceBinding{ID: id, Scenario: sc.Ref(), Requirement: req, Status: capstan.BindingUnresolved}
	if explicit, ok := r.intent.Providers[id]; ok {
		b.Requirement.Strategy, b.Requirement.Provider, b.Explicit = capstan.StrategyExplicit, explicit, true
		b.Requirement.CreateWith = "" // a chosen provider is not created
	}
	def, err := r.planner.Catalog.GetCapability(ctx, r.org, req.Capability)
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return r.fail(b, "unknown capability %s", req.Capability), nil, nil
	}
	if err != nil {
		return b, nil, err
	}
	if err := b.Requirement.Validate(def); err != nil {
		return r.fail(b, "%s", strings.Join(capstan.ErrorDetails(err), "; ")), nil, nil
	}
	env := r.intent.Environment()
	if missing := req.MissingInProd(def); r.planner.Production.Is(env) && len(missing) > 0 {
		return r.fail(b, "a %s requirement of %s must set %s: the capability requires it in production (invariant 12)", env, req.Capability, strings.Join(missing, ", ")), nil, nil
	}
	constraints, msg, err := r.resolveConstraints(ctx, req, workload)
	if err != nil {
		return b, nil, err
	}
	if msg != "" {
		return r.fail(b, "%s", msg), nil, nil
	}
	b.Constraints = constraints
	return r.bind(ctx, b, def, stack)
}

func (r *resolution) fail(b capstan.ResourceBinding, format string, args ...any) capstan.ResourceBinding {
	b.Status = capstan.BindingFailed
	b.Reason = fmt.Sprintf(format, args...)
	return b
}

// resolveConstraints replaces ${intent.x} and same-as-workload references
// with values; msg says why one could not be resolved.
func (r *resolution) resolveConstraints(ctx context.Context, req capstan.CapabilityRequirement, workload *capstan.ResourceBinding) (map[string]any, string, error) {
	out := maps.Clone(req.Constraints)
	if out == nil {
		out = map[string]any{}
	}
	for _, k := range sortedKeys(req.Constraints) {
		v := req.Constraints[k]
		if name, ok := capstan.IntentRef(v); ok {
			val, found := r.intent.Constraints[name]
			if !found {
				val, found = r.intent.DesiredResult[name]
			}
			if !found {
				return nil, fmt.Sprintf("constraint %s refers to intent.%s, which the intent does not set", k, name), nil
			}
			out[k] = val
			continue
		}
		if v != capstan.RefSameAsWorkload {
			continue
		}
		switch {
		case req.Workload:
			return nil, fmt.Sprintf("constraint %s: the workload requirement cannot refer to itself", k), nil
		case workload == nil:
			return nil, fmt.Sprintf("constraint %s is same-as-workload but the scenario has no workload requirement", k), nil
		case workload.Status == capstan.BindingResolved:
		case workload.Status == capstan.BindingPendingSubOperation:
			if val, ok := workload.Constraints[k]; ok {
				out[k] = val
				continue
			}
			return nil, fmt.Sprintf("constraint %s is same-as-workload but the workload's provider will only be created by %s", k, workload.SubOperation.Scenario), nil
		default:
			return nil, fmt.Sprintf("constraint %s is same-as-workload but the workload requirement %s is not resolved", k, workload.ID), nil
		}
		hit, err := r.planner.Catalog.TopologyValue(ctx, r.org, workload.Provider.ResourceID, k, TopologyDepth)
		if err != nil {
			return nil, "", err
		}
		if !hit.Found {
			return nil, fmt.Sprintf("constraint %s is same-as-workload but neither %s nor what it runs on declares %s", k, workload.Provider.ResourceKey, k), nil
		}
		out[k] = hit.Value
	}
	return out, "", nil
}
