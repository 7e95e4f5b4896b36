package service

import (
	"context"
	"strings"

	"github.com/capstan-dev/capstan"
)

// The read methods scope every lookup to the caller's organization.

// Resource returns a resource by id.
func (s *Service) Resource(ctx context.Context, id string) (*capstan.Resource, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.GetResource(ctx, org, id)
}

// ResourceByKey returns a resource by type/name key.
func (s *Service) ResourceByKey(ctx context.Context, key string) (*capstan.Resource, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.GetResourceByKey(ctx, org, key)
}

// Resources returns a page of resources and the total.
func (s *Service) Resources(ctx context.Context, f capstan.ResourceFilter) ([]*capstan.Resource, int, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, 0, err
	}
	return s.Store.ListResources(ctx, org, f)
}

// Dependencies walks a resource's relationships.
func (s *Service) Dependencies(ctx context.Context, id string, dir capstan.Direction, depth int) (*capstan.Resource, []capstan.Dependency, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, nil, err
	}
	if depth < 1 || depth > 10 {
		return nil, nil, capstan.Errorf(capstan.EINVALID, "depth must be between 1 and 10, got %d", depth)
	}
	if dir != capstan.Outgoing && dir != capstan.Incoming {
		return nil, nil, capstan.Errorf(capstan.EINVALID, "a dependency walk goes OUTGOING or INCOMING, not %s", dir)
	}
	root, err := s.Store.GetResource(ctx, org, id)
	if err != nil {
		return nil, nil, err
	}
	deps, err := s.Store.Dependencies(ctx, org, id, dir, depth, capstan.MaxWalkResources)
	return root, deps, err
}

// MaxConcurrentGraphWalks bounds the walks (resourceGraph, impact,
// paths) one server runs at once: each may read a large part of the
// catalog, and one request may ask for twenty.
const MaxConcurrentGraphWalks = 4

// graphSlot takes one of the server's graph walk slots, or answers
// UNAVAILABLE when all are taken; the caller calls the release it
// returns.
func (s *Service) graphSlot() (func(), error) {
	s.graphOnce.Do(func() { s.graphSlots = make(chan struct{}, MaxConcurrentGraphWalks) })
	select {
	case s.graphSlots <- struct{}{}:
		return func() { <-s.graphSlots }, nil
	default:
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "%d graph walks are running on this server: ask again when one ends", MaxConcurrentGraphWalks)
	}
}

// ResourceGraph draws a page of a resource's neighbourhood: its walks in
// the direction asked, drawn through the filter.
func (s *Service) ResourceGraph(ctx context.Context, id string, dir capstan.Direction, depth int, f capstan.GraphFilter, page capstan.GraphPage) (*capstan.Neighbourhood, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	if err := capstan.CheckNeighbourhood(dir, depth, page); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	release, err := s.graphSlot()
	if err != nil {
		return nil, err
	}
	defer release()
	root, err := s.Store.GetResource(ctx, org, id)
	if err != nil {
		return nil, err
	}
	var reached []capstan.Dependency
	for _, way := range []capstan.Direction{capstan.Outgoing, capstan.Incoming} {
		if dir != capstan.Both && dir != way {
			continue
		}
		walked, err := s.Store.Dependencies(ctx, org, id, way, depth, capstan.MaxWalkResources)
		if err != nil {
			return nil, err
		}
		reached = append(reached, walked...)
	}
	return capstan.DrawNeighbourhood(root, dir, depth, reached, f, page)
}

// Impact weighs what depends on a resource, up to MaxImpactDepth hops:
// what breaks if it fails.
func (s *Service) Impact(ctx context.Context, id string) (*capstan.Impact, error) {
	release, err := s.graphSlot()
	if err != nil {
		return nil, err
	}
	defer release()
	root, deps, err := s.Dependencies(ctx, id, capstan.Incoming, capstan.MaxImpactDepth)
	if err != nil {
		return nil, err
	}
	return capstan.WeighImpact(root, deps), nil
}

// Paths finds the shortest paths between two resources.
func (s *Service) Paths(ctx context.Context, q capstan.PathQuery) ([]capstan.ResourcePath, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	release, err := s.graphSlot()
	if err != nil {
		return nil, err
	}
	defer release()
	return s.Store.Paths(ctx, org, q)
}

// ResourceTypes lists resource types.
func (s *Service) ResourceTypes(ctx context.Context) ([]*capstan.ResourceType, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.ListResourceTypes(ctx, org)
}

// Capabilities lists capability definitions, optionally of one category.
func (s *Service) Capabilities(ctx context.Context, category string) ([]*capstan.CapabilityDefinition, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	all, err := s.Store.ListCapabilities(ctx, org)
	if err != nil || category == "" {
		return all, err
	}
	var out []*capstan.CapabilityDefinition
	for _, d := range all {
		if d.Category == category {
			out = append(out, d)
		}
	}
	return out, nil
}

// Capability returns a capability definition by key.
func (s *Service) Capability(ctx context.Context, key string) (*capstan.CapabilityDefinition, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.GetCapability(ctx, org, key)
}

// Packs lists installed packs.
func (s *Service) Packs(ctx context.Context) ([]*capstan.ScenarioPack, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.ListPacks(ctx, org)
}

// Pack returns an installed pack by id@version.
func (s *Service) Pack(ctx context.Context, ref string) (*capstan.ScenarioPack, error) {
	all, err := s.Packs(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range all {
		if p.Ref() == ref {
			return p, nil
		}
	}
	return nil, capstan.Errorf(capstan.ENOTFOUND, "pack %s not found", ref)
}

// Scenarios lists scenarios.
func (s *Service) Scenarios(ctx context.Context, f capstan.ScenarioFilter) ([]*capstan.Scenario, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.ListScenarios(ctx, org, f)
}

// Scenario returns a scenario by id@version or its newest version.
func (s *Service) Scenario(ctx context.Context, ref string) (*capstan.Scenario, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.GetScenario(ctx, org, ref)
}

// Intent returns an intent by id.
func (s *Service) Intent(ctx context.Context, id string) (*capstan.Intent, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.GetIntent(ctx, org, id)
}

// Intents returns a page of intents and the total.
func (s *Service) Intents(ctx context.Context, f capstan.IntentFilter) ([]*capstan.Intent, int, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, 0, err
	}
	return s.Store.ListIntents(ctx, org, f)
}

// Plan returns a plan by id.
func (s *Service) Plan(ctx context.Context, id string) (*capstan.Plan, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.GetPlan(ctx, org, id)
}

// Plans returns an intent's plans, oldest first.
func (s *Service) Plans(ctx context.Context, intentID string) ([]*capstan.Plan, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.ListPlans(ctx, org, intentID)
}

// Operation returns an operation by id.
func (s *Service) Operation(ctx context.Context, id string) (*capstan.Operation, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.GetOperation(ctx, org, id)
}

// Operations returns a page of operations and the total.
func (s *Service) Operations(ctx context.Context, f capstan.OperationFilter) ([]*capstan.Operation, int, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, 0, err
	}
	return s.Store.ListOperations(ctx, org, f)
}

// OperationRecords returns what an operation produced.
func (s *Service) OperationRecords(ctx context.Context, id string) (*capstan.OperationRecords, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.OperationRecords(ctx, org, id)
}

// Timeline returns up to limit events of an operation after a sequence.
func (s *Service) Timeline(ctx context.Context, id string, after int64, limit int) ([]capstan.OperationEvent, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.ListEvents(ctx, org, id, after, limit)
}

// BoundBinding is one binding of a plan that binds a resource.
type BoundBinding struct {
	Plan    *capstan.Plan
	Binding *capstan.ResourceBinding
}

// ProviderBindings returns up to limit (1–100) bindings of the caller's
// organization's plans that bind resource resourceID as a provider, newest
// plan first, each with its plan.
func (s *Service) ProviderBindings(ctx context.Context, resourceID string, limit int) ([]BoundBinding, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	if limit < 0 || limit > 100 {
		return nil, capstan.Errorf(capstan.EINVALID, "first must be between 0 and 100, got %d", limit)
	}
	if limit == 0 {
		return []BoundBinding{}, nil
	}
	found, err := s.Store.ListProviderBindings(ctx, org, resourceID, limit)
	if err != nil {
		return nil, err
	}
	plans := map[string]*capstan.Plan{}
	out := make([]BoundBinding, 0, len(found))
	for _, f := range found {
		p := plans[f.PlanID]
		if p == nil {
			if p, err = s.Store.GetPlan(ctx, org, f.PlanID); err != nil {
				return nil, err
			}
			plans[f.PlanID] = p
		}
		for i := range p.Bindings {
			if p.Bindings[i].ID == f.Binding {
				out = append(out, BoundBinding{Plan: p, Binding: &p.Bindings[i]})
			}
		}
	}
	return out, nil
}

// ServedBy returns the bindings of the plan that serves resource r as a
// consumer: the plan its last operation ran when that plan bound any
// requirement, else the plan of the operation that created it (a
// repair binds nothing). None for a resource no operation made.
func (s *Service) ServedBy(ctx context.Context, r *capstan.Resource) ([]BoundBinding, error) {
	org, err := Org(ctx)
	if err != nil {
		return nil, err
	}
	var ops []string
	if r.LastOperationID != "" {
		ops = append(ops, r.LastOperationID)
	}
	if gid, ok := strings.CutPrefix(r.Source, "operation:"); ok {
		if _, id, err := capstan.ParseGlobalID(gid, capstan.KindOperation); err == nil && id != r.LastOperationID {
			ops = append(ops, id)
		}
	}
	for _, id := range ops {
		op, err := s.Store.GetOperation(ctx, org, id)
		if capstan.ErrorCode(err) == capstan.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, err
		}
		p, err := s.Store.GetPlan(ctx, org, op.PlanID)
		if capstan.ErrorCode(err) == capstan.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, err
		}
		if len(p.Bindings) == 0 {
			continue
		}
		out := make([]BoundBinding, len(p.Bindings))
		for i := range p.Bindings {
			out[i] = BoundBinding{Plan: p, Binding: &p.Bindings[i]}
		}
		return out, nil
	}
	return []BoundBinding{}, nil
}

// PlanTarget says what an operation of plan does to the resource its
// intent names, as that resource stands now (nil when it names none).
func (s *Service) PlanTarget(ctx context.Context, plan *capstan.Plan) (*capstan.PlanTarget, error) {
	in, err := s.Intent(ctx, plan.IntentID)
	if err != nil {
		return nil, err
	}
	key := in.TargetKey()
	if key == "" {
		return nil, nil
	}
	r, err := s.ResourceByKey(ctx, key)
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		r, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	t := capstan.TargetOf(in.Action, key, r)
	return &t, nil
}
