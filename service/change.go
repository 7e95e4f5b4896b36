package service

import (
	"context"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/planner"
)

// JobAuthorRoles may write a node that runs a script, a command or a URL
// into a change instead of inserting a pack's node template (SPEC §10).
var JobAuthorRoles = []string{capstan.RolePlatformAdmin}

// changeSet gathers what the change validator needs to judge changes to
// plan by actor: the installed node templates, the plan's scenario (is it
// editable, which parameters), the intent's environment and mode, and the
// planner's resolution of every rebind.
func (s *Service) changeSet(ctx context.Context, org, actor string, mayAuthor bool, plan *capstan.Plan, in *capstan.Intent, changes []capstan.PlanChange) (planner.ChangeSet, error) {
	cs := planner.ChangeSet{Base: plan, Changes: changes, Author: actor, MayAuthorJobs: mayAuthor, Environment: in.Environment()}
	templates, err := s.nodeTemplates(ctx, org)
	if err != nil {
		return cs, err
	}
	cs.Templates = templates
	sc, err := s.Store.GetScenario(ctx, org, plan.ScenarioRef)
	switch {
	case capstan.ErrorCode(err) == capstan.ENOTFOUND:
		cs.ParametersOnly = true // the scenario is gone: nothing says the plan is editable
	case err != nil:
		return cs, err
	default:
		cs.ParametersOnly, cs.EditableParameters = !sc.Editable, sc.EditableParameters
	}
	if in.Mode != capstan.ModeAdvanced {
		cs.ParametersOnly = true
	}
	pl, err := s.planner(ctx, org)
	if err != nil {
		return cs, err
	}
	cs.Rebound, err = pl.Rebind(ctx, org, plan, in, changes)
	return cs, err
}

// nodeTemplates returns the node templates of the installed packs by
// name, each from the newest version of the packs that publish it.
func (s *Service) nodeTemplates(ctx context.Context, org string) (map[string]*capstan.NodeTemplate, error) {
	packs, err := s.Store.ListPacks(ctx, org)
	if err != nil {
		return nil, err
	}
	out := map[string]*capstan.NodeTemplate{}
	version := map[string]string{}
	for _, p := range packs {
		for i := range p.NodeTemplates {
			t := &p.NodeTemplates[i]
			if v, ok := version[t.Name]; ok && capstan.CompareSemver(p.Version, v) <= 0 {
				continue
			}
			c := *t
			c.Pack = p.Ref()
			out[t.Name], version[t.Name] = &c, p.Version
		}
	}
	return out, nil
}

// mayAuthorJobs reports whether a person may bring inline run specs.
func mayAuthorJobs(a *capstan.Actor) bool { return a.HasRole(JobAuthorRoles...) }
