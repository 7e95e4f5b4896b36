package resolver

import (
	"context"
	"sort"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/graph/model"
)

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func derefAll[T any](ps []*T) []T {
	out := make([]T, len(ps))
	for i, p := range ps {
		out[i] = *p
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// nilIfNotFound turns a not-found error into a null result, as GraphQL
// single-entity queries expect.
func nilIfNotFound[T any](v *T, err error) (*T, error) {
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return nil, nil
	}
	return v, err
}

func packOrderKey(p *capstan.ScenarioPack) string { return p.Ref() }

func scenarioOrderKey(s *capstan.Scenario) string { return s.Ref() }

func constraintSpecs(d *capstan.CapabilityDefinition) []model.ConstraintSpec {
	out := []model.ConstraintSpec{}
	for name, s := range d.ConstraintSchema {
		cs := model.ConstraintSpec{Name: name, Type: s.Type, Enum: s.Enum, RequiredInProd: s.RequiredInProd}
		if s.Match != "" {
			cs.Match = &s.Match
		}
		if s.Description != "" {
			cs.Description = &s.Description
		}
		out = append(out, cs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (r *Resolver) desiredResult(ctx context.Context, p *capstan.Plan) map[string]any {
	in, err := r.Service.Intent(ctx, p.IntentID)
	if err != nil {
		return nil
	}
	return in.DesiredResult
}
