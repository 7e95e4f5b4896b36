package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
)

// fillProvided fills the placeholders of what a succeeded operation's
// scenario says its resource provides (capstan.FillProvided): the
// address of the host it bound, the secret references of the keys it
// generated. An attribute that cannot be filled stays unset, and an
// event says why; the operation's outcome stands.
func (l *loop) fillProvided(ctx context.Context, ch *capstan.OperationChange, r *capstan.Resource, plan *capstan.Plan, arts []capstan.Artifact) error {
	if ch.Operation.Status != capstan.OperationSucceeded || plan == nil || plan.ScenarioRef == "" {
		return nil
	}
	sc, err := l.e.cfg.Store.GetScenario(ctx, l.org, plan.ScenarioRef)
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	lookup := l.providedLookup(ctx, plan, arts)
	for _, pc := range sc.Provides {
		if !hasUnfilled(pc.Attributes) {
			continue
		}
		filled, problems := capstan.FillProvided(pc.Attributes, lookup.find)
		if err := lookup.err; err != nil {
			return err // the store failed: the conclusion is tried again
		}
		for i := range r.ProvidedCapabilities {
			if r.ProvidedCapabilities[i].Capability != pc.Capability {
				continue
			}
			attrs := r.ProvidedCapabilities[i].Attributes
			if attrs == nil {
				attrs = map[string]any{}
			}
			for k, v := range filled {
				if capstan.Unfilled(pc.Attributes[k]) {
					attrs[k] = v
				}
			}
			r.ProvidedCapabilities[i].Attributes = attrs
		}
		for _, p := range problems {
			ch.Events = append(ch.Events, l.event(event.Resource{What: "attribute_unfilled", Resource: r.Key(),
				Reason: pc.Capability + "." + p}))
		}
	}
	return nil
}

func hasUnfilled(attrs map[string]any) bool {
	for _, v := range attrs {
		if capstan.Unfilled(v) {
			return true
		}
	}
	return false
}

func (l *loop) providedLookup(ctx context.Context, plan *capstan.Plan, arts []capstan.Artifact) *providedLookup {
	return &providedLookup{ctx: ctx, l: l, plan: plan, arts: arts}
}

// providedLookup answers placeholders from the plan's bindings and the
// operation's artifacts; a store failure is kept in err (the fill is
// then abandoned and tried again).
type providedLookup struct {
	ctx  context.Context
	l    *loop
	plan *capstan.Plan
	arts []capstan.Artifact
	err  error
}

func (p *providedLookup) find(ref capstan.ProvidedRef) (string, error) {
	if ref.Artifact != "" {
		for i := len(p.arts) - 1; i >= 0; i-- { // the latest attempt's
			a := p.arts[i]
			if a.Name != ref.Artifact {
				continue
			}
			if a.Sensitivity != capstan.SensitivitySecret || !strings.HasPrefix(a.StorageRef, "secret:") {
				return "", fmt.Errorf("artifact %s is not a secret kept in the secret store", a.Name)
			}
			return a.StorageRef, nil
		}
		return "", fmt.Errorf("the operation produced no artifact %s", ref.Artifact)
	}
	b := p.plan.Binding(ref.Binding)
	if b == nil || b.Status != capstan.BindingResolved || b.Provider == nil {
		return "", fmt.Errorf("binding %s is not resolved", ref.Binding)
	}
	r, err := p.l.e.cfg.Store.GetResourceByKey(p.ctx, p.l.org, b.Provider.ResourceKey)
	if err != nil {
		if p.err == nil && capstan.ErrorCode(err) != capstan.ENOTFOUND {
			p.err = err
		}
		return "", fmt.Errorf("binding %s: %s", ref.Binding, capstan.ErrorMessage(err))
	}
	for _, pc := range r.ProvidedCapabilities {
		if v, ok := pc.Attributes[ref.Attribute].(string); ok && v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("%s provides no attribute %s", r.Key(), ref.Attribute)
}
