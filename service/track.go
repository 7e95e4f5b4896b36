package service

import (
	"context"
	"maps"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
)

// targetKey names the resource an intent's operation creates or changes:
// its target type and the name it asks for ("" when it names none).
func targetKey(in *capstan.Intent) string {
	name, _ := in.DesiredResult["name"].(string)
	if name == "" || !capstan.ValidKey(in.TargetResourceType) {
		return ""
	}
	return capstan.ResourceKey(in.TargetResourceType, name)
}

// BeginChange points the operation's resource at the operation and moves
// its lifecycle (provisioning, updating, repairing, deleting). An install
// of a resource that does not exist creates it, provisioning, with the
// capabilities its scenario will provide and the workload it runs on; it
// is no candidate for anyone until it is active. Repeating it after a
// restart changes nothing. Another operation still changing the same
// resource is a conflict.
func (s *Service) BeginChange(ctx context.Context, org string, op *capstan.Operation) error {
	return onFreshState(func() error { return s.beginChange(ctx, org, op) })
}

func (s *Service) beginChange(ctx context.Context, org string, op *capstan.Operation) error {
	if op.ResourceKey == "" {
		return nil
	}
	r, err := s.Store.GetResourceByKey(ctx, org, op.ResourceKey)
	found := err == nil
	if err != nil && capstan.ErrorCode(err) != capstan.ENOTFOUND {
		return err
	}
	if found && r.ActiveOperationID == op.ID {
		return nil
	}
	if found && r.ActiveOperationID != "" {
		if other, err := s.Store.GetOperation(ctx, org, r.ActiveOperationID); err == nil && !other.Status.Terminal() {
			return capstan.Errorf(capstan.ECONFLICT, "resource %s is being changed by operation %s", r.Key(), other.ID)
		}
	}
	var current capstan.LifecycleStatus
	if found {
		current = r.LifecycleStatus
	}
	to, err := capstan.ChangeLifecycle(op.Action, current, found)
	if err != nil {
		return err
	}
	if found {
		r.LifecycleStatus, r.ActiveOperationID = to, op.ID
		return s.Store.UpdateResource(ctx, org, r)
	}
	r, err = s.newResource(ctx, org, op)
	if err != nil {
		return err
	}
	r.LifecycleStatus = to
	err = s.Store.CreateResource(ctx, org, r)
	if capstan.ErrorCode(err) == capstan.ECONFLICT {
		// Created since it was read: decide again on what is stored now.
		return &capstan.Error{Code: capstan.ECONFLICT, Message: "resource " + r.Key() + " was created by someone else", Err: capstan.ErrStale}
	}
	return err
}

// newResource describes the resource an install creates.
func (s *Service) newResource(ctx context.Context, org string, op *capstan.Operation) (*capstan.Resource, error) {
	plan, err := s.Store.GetPlan(ctx, org, op.PlanID)
	if err != nil {
		return nil, err
	}
	in, err := s.Store.GetIntent(ctx, org, op.IntentID)
	if err != nil {
		return nil, err
	}
	sc, err := s.Store.GetScenario(ctx, org, plan.ScenarioRef)
	if err != nil {
		return nil, err
	}
	typ, name, _ := strings.Cut(op.ResourceKey, "/")
	r := &capstan.Resource{Type: typ, Name: name, Environment: in.Environment(), HealthStatus: capstan.HealthUnknown,
		ActiveOperationID: op.ID, Source: "operation:" + op.ID}
	scope := map[string]any{}
	for _, k := range []string{"environment", "region"} {
		if v, ok := in.Constraints[k]; ok {
			scope[k] = v
		}
	}
	for _, pc := range sc.Provides {
		r.ProvidedCapabilities = append(r.ProvidedCapabilities, capstan.ProvidedCapability{Capability: pc.Capability, Scope: maps.Clone(scope), Attributes: maps.Clone(pc.Attributes)})
	}
	for _, b := range plan.Bindings {
		if b.Requirement.Workload && b.Provider != nil && !strings.Contains(b.ID, "/") {
			r.Relationships = append(r.Relationships, capstan.Relationship{Type: capstan.RelRunsOn, Target: b.Provider.ResourceKey})
		}
	}
	return r, nil
}

// EndChange concludes the operation's change of its resource: the final
// lifecycle and health for the outcome, the observed state from the
// operation's evidence, and the operation as the resource's last one.
// Repeating it after a restart changes nothing.
func (s *Service) EndChange(ctx context.Context, org string, op *capstan.Operation, outcome capstan.OperationStatus, pending []capstan.Evidence) error {
	return onFreshState(func() error { return s.endChange(ctx, org, op, outcome, pending) })
}

func (s *Service) endChange(ctx context.Context, org string, op *capstan.Operation, outcome capstan.OperationStatus, pending []capstan.Evidence) error {
	if op.ResourceKey == "" {
		return nil
	}
	r, err := s.Store.GetResourceByKey(ctx, org, op.ResourceKey)
	if err != nil {
		if capstan.ErrorCode(err) == capstan.ENOTFOUND {
			return nil // never begun: the operation ended before it started
		}
		return err
	}
	if r.ActiveOperationID != op.ID {
		return nil // already concluded, or never begun
	}
	recs, err := s.Store.OperationRecords(ctx, org, op.ID)
	if err != nil {
		return err
	}
	r.LifecycleStatus, r.HealthStatus = capstan.EndLifecycle(r.LifecycleStatus, outcome)
	r.ActiveOperationID, r.LastOperationID = "", op.ID
	r.ObservedState = observedState(r.ObservedState, append(recs.Evidence, pending...), s.Now().UTC())
	return s.Store.UpdateResource(ctx, org, r)
}

// observedState merges the latest result of every evidence item into the
// resource's observed state: evidence.<item> = passed|failed|…
func observedState(old map[string]any, evidence []capstan.Evidence, now time.Time) map[string]any {
	out := maps.Clone(old)
	if out == nil {
		out = map[string]any{}
	}
	items := map[string]any{}
	if prev, ok := out["evidence"].(map[string]any); ok {
		maps.Copy(items, prev)
	}
	for _, e := range evidence {
		items[e.Item] = e.Result
	}
	out["evidence"] = items
	out["observed_at"] = now.Format(time.RFC3339)
	return out
}
