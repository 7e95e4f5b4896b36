package service

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/capstan-dev/capstan"
)

// StartChild starts the child operation of a sub_operation node: a child
// intent for the chosen scenario (an audit object like any intent), with
// the providers the parent's plan already resolved for the child's own
// requirements given explicitly, planned and started. The child's
// idempotency key (parent/node) makes this safe to repeat after a crash.
func (s *Service) StartChild(ctx context.Context, org string, parent *capstan.Operation, node *capstan.PlanNode) (string, error) {
	key := parent.ID + "/" + node.ID
	if op, err := s.Store.GetOperationByKey(ctx, org, key); err == nil {
		return op.ID, nil
	}
	plan, err := s.Store.GetPlan(ctx, org, parent.PlanID)
	if err != nil {
		return "", err
	}
	pin, err := s.Store.GetIntent(ctx, org, parent.IntentID)
	if err != nil {
		return "", err
	}
	sc, err := s.Store.GetScenario(ctx, org, node.SubOperation.Scenario)
	if err != nil {
		return "", err
	}
	prefix := node.ID + "/"
	if b := plan.Binding(node.SubOperation.Requirement); b != nil && node.SubOperation.Requirement != "" {
		prefix = b.ID + "/"
	}
	providers := map[string]string{}
	for _, b := range plan.Bindings {
		if rest, ok := strings.CutPrefix(b.ID, prefix); ok && !strings.Contains(rest, "/") && b.Provider != nil {
			providers[rest] = b.Provider.ResourceKey
		}
	}
	ctx = capstan.WithActor(ctx, &capstan.Actor{ID: parent.Actor, OrganizationID: org, Roles: []string{capstan.RoleOperator}})
	in := &capstan.Intent{Actor: parent.Actor, Action: sc.Action, TargetResourceType: sc.TargetResourceType,
		DesiredResult: map[string]any{"parent_operation": parent.ID, "node": node.ID},
		Constraints:   maps.Clone(pin.Constraints), Providers: providers, Scenario: sc.Ref(), Mode: capstan.ModeSimple, Status: capstan.IntentDraft}
	if err := in.Move(capstan.IntentSubmitted); err != nil {
		return "", err
	}
	if err := s.Store.CreateIntent(ctx, org, in); err != nil {
		return "", err
	}
	child, err := s.PlanIntent(ctx, in.ID)
	if err != nil {
		return "", err
	}
	if child.Status != capstan.PlanReady {
		return "", capstan.Errorf(capstan.EINVALID, "the child plan of %s is %s: %s", sc.Ref(), child.Status, strings.Join(child.Problems, "; "))
	}
	op, err := s.startPlan(ctx, org, parent.Actor, child, in, key, parent.ID)
	if err != nil {
		return "", err
	}
	return op.ID, nil
}

// ChildSucceeded records the resource a succeeded child operation created,
// with the capabilities its scenario provides, in the scope its binding
// asked for, pointing at the child as its last operation (invariant 1).
func (s *Service) ChildSucceeded(ctx context.Context, org string, parent *capstan.Operation, node *capstan.PlanNode, child *capstan.Operation) (string, error) {
	plan, err := s.Store.GetPlan(ctx, org, parent.PlanID)
	if err != nil {
		return "", err
	}
	cin, err := s.Store.GetIntent(ctx, org, child.IntentID)
	if err != nil {
		return "", err
	}
	sc, err := s.Store.GetScenario(ctx, org, cin.Scenario)
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s-%s", node.ID, child.ID[len(child.ID)-8:])
	if existing, err := s.Store.GetResourceByKey(ctx, org, capstan.ResourceKey(sc.TargetResourceType, name)); err == nil {
		return existing.Key(), nil
	}
	scope := map[string]any{}
	if b := plan.Binding(node.SubOperation.Requirement); b != nil {
		for _, k := range []string{"environment", "region"} {
			if v, ok := b.Constraints[k]; ok {
				scope[k] = v
			}
		}
	}
	r := &capstan.Resource{Type: sc.TargetResourceType, Name: name, Environment: cin.Environment(),
		LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy, LastOperationID: child.ID, Source: "operation:" + child.ID}
	for _, pc := range sc.Provides {
		r.ProvidedCapabilities = append(r.ProvidedCapabilities, capstan.ProvidedCapability{Capability: pc.Capability, Scope: maps.Clone(scope), Attributes: maps.Clone(pc.Attributes)})
	}
	if cp, err := s.Store.GetPlan(ctx, org, child.PlanID); err == nil {
		for _, b := range cp.Bindings {
			if b.Requirement.Workload && b.Provider != nil {
				r.Relationships = append(r.Relationships, capstan.Relationship{Type: capstan.RelRunsOn, Target: b.Provider.ResourceKey})
			}
		}
	}
	if err := s.Store.CreateResource(ctx, org, r); err != nil {
		return "", err
	}
	return r.Key(), nil
}
