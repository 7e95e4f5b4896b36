package service

import (
	"context"
	"slices"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/planner"
	"github.com/capstan-dev/capstan/policy"
)

// JobAuthorRoles may write a node that runs a script, a command or a URL
// into a change instead of inserting a pack's node template (SPEC §10).
var JobAuthorRoles = []string{capstan.RolePlatformAdmin}

// changeSet gathers what the change validator needs to judge changes to
// plan by actor: the installed node templates, the plan's scenario (is it
// editable, which parameters), the intent's environment and mode, the
// packs' patch policies that hold for the set (their allows and rejects
// go in; their approvals and requirements come back for a patch), and the
// planner's resolution of every rebind.
func (s *Service) changeSet(ctx context.Context, org string, by changer, plan *capstan.Plan, in *capstan.Intent, changes []capstan.PlanChange) (planner.ChangeSet, []policy.PatchVerdict, error) {
	cs := planner.ChangeSet{Base: plan, Changes: changes, Author: by.id, MayAuthorJobs: by.mayAuthor, Environment: in.Environment(),
		Production: s.Production.Is(in.Environment())}
	if err := s.refuseSecretsInChanges(ctx, org, changes); err != nil {
		return cs, nil, err
	}
	pc, err := s.packContext(ctx, org)
	if err != nil {
		return cs, nil, err
	}
	cs.Templates = pc.templates
	if mode, ok := pc.scenarios[plan.ScenarioRef]; ok {
		cs.ParametersOnly, cs.EditableParameters = !mode.editable, mode.parameters
	} else {
		cs.ParametersOnly = true // the scenario is gone: nothing says the plan is editable
	}
	if in.Mode != capstan.ModeAdvanced {
		cs.ParametersOnly = true
	}
	verdicts := pc.patches.Evaluate(patchVars(by, plan, in, s.Production.Is(in.Environment()), changes), map[string]any{"action": in.Action, "target": in.TargetResourceType,
		"environment": in.Environment(), "production": s.Production.Is(in.Environment()), "mode": in.Mode})
	allowed := map[string]bool{}
	for _, v := range verdicts {
		switch v.Policy.Effect {
		case capstan.PatchAllow:
			for _, r := range v.Policy.Allows {
				allowed[r] = true
			}
		case capstan.PatchReject:
			why := "patch policy " + v.Policy.ID + " (" + v.Policy.Pack + "): " + v.Policy.Description
			if v.Err != nil {
				why = v.Err.Error()
			}
			cs.Refusals = append(cs.Refusals, why)
		}
	}
	if len(allowed) > 0 {
		cs.Allows = func(rule string) bool { return allowed[rule] }
	}
	pl, err := s.planner(ctx, org)
	if err != nil {
		return cs, nil, err
	}
	cs.Rebound, err = pl.Rebind(ctx, org, plan, in, changes)
	return cs, verdicts, err
}

// changer is who proposes a change set.
type changer struct {
	id        string
	roles     []string
	mayAuthor bool
}

func changerOf(a *capstan.Actor) changer {
	return changer{id: a.ID, roles: a.Roles, mayAuthor: mayAuthorJobs(a)}
}

// packContext is what change sets need from an organization's packs:
// node templates, compiled patch policies, and each scenario's edit mode.
// Packs never change under their ref, so it is read again only when the
// installed refs differ.
type packContext struct {
	refs      string
	templates map[string]*capstan.NodeTemplate
	patches   policy.PatchSet
	scenarios map[string]scenarioMode
}

type scenarioMode struct {
	editable   bool
	parameters []string
}

func (s *Service) packContext(ctx context.Context, org string) (*packContext, error) {
	refs, err := s.Store.ListPackRefs(ctx, org)
	if err != nil {
		return nil, err
	}
	key := strings.Join(refs, "\x00")
	s.mu.Lock()
	pc := s.packCtx[org]
	s.mu.Unlock()
	if pc != nil && pc.refs == key {
		return pc, nil
	}
	packs, err := s.Store.ListPacks(ctx, org)
	if err != nil {
		return nil, err
	}
	pc = &packContext{refs: key, templates: nodeTemplates(packs), scenarios: map[string]scenarioMode{}}
	var ps []capstan.PatchPolicy
	for _, p := range capstan.NewestPacks(packs) {
		for _, pp := range p.PatchPolicies {
			pp.Pack = p.Ref()
			ps = append(ps, pp)
		}
	}
	if pc.patches, err = policy.CompilePatches(ps); err != nil {
		return nil, err
	}
	for _, p := range packs {
		for _, sc := range p.Scenarios {
			pc.scenarios[sc.Ref()] = scenarioMode{editable: sc.Editable, parameters: sc.EditableParameters}
		}
	}
	s.mu.Lock()
	if s.packCtx == nil || len(s.packCtx) > 1024 {
		s.packCtx = map[string]*packContext{}
	}
	s.packCtx[org] = pc
	s.mu.Unlock()
	return pc, nil
}

// patchVars is what patch policies see of a change set.
func patchVars(by changer, plan *capstan.Plan, in *capstan.Intent, production bool, changes []capstan.PlanChange) map[string]any {
	ops, nodes, types, templates := []any{}, []any{}, []any{}, []any{}
	inline := false
	seen := map[string]bool{}
	addNode := func(id string) {
		if id == "" || seen[id] {
			return
		}
		seen[id] = true
		nodes = append(nodes, id)
		if n := plan.Node(id); n != nil {
			types = append(types, string(n.Type))
		}
	}
	for _, c := range changes {
		ops = append(ops, c.Op)
		addNode(c.Node)
		if c.Edge != nil {
			addNode(c.Edge.From)
			addNode(c.Edge.To)
		}
		if c.Template != "" {
			templates = append(templates, c.Template)
		}
		inline = inline || c.Spec != nil
	}
	roles := []any{}
	for _, r := range by.roles {
		roles = append(roles, r)
	}
	return map[string]any{"author": by.id, "author_is_agent": capstan.IsAgent(by.id), "author_roles": roles, "environment": in.Environment(), "production": production,
		"ops": ops, "nodes": nodes, "node_types": types, "templates": templates, "inline": inline, "changes": len(changes),
		"started": !plan.Status.Editable()}
}

// policyApprovals applies the patch policies' verdicts to a patch's
// default approval rules: approve waives the second person and the gate
// approvals (never a person for an analyzer's patch), require adds a rule.
func policyApprovals(rules []capstan.ApprovalRule, verdicts []policy.PatchVerdict) []capstan.ApprovalRule {
	out := rules
	for _, v := range verdicts {
		if v.Policy.Effect == capstan.PatchApprove {
			out = slices.DeleteFunc(slices.Clone(out), func(r capstan.ApprovalRule) bool { return r.Rule != "agent-needs-person" })
		}
	}
	for _, v := range verdicts {
		if v.Policy.Effect == capstan.PatchRequire {
			out = append(out, capstan.ApprovalRule{Rule: "policy:" + v.Policy.ID, Roles: v.Policy.Roles, Approvals: v.Policy.Approvals,
				Reason: v.Policy.Description + " (" + v.Policy.Pack + ")"})
		}
	}
	return out
}

// nodeTemplates returns the node templates of the installed packs by
// name, each from the newest version of the packs that publish it.
func nodeTemplates(packs []*capstan.ScenarioPack) map[string]*capstan.NodeTemplate {
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
	return out
}

// mayAuthorJobs reports whether a person may bring inline run specs.
func mayAuthorJobs(a *capstan.Actor) bool { return a.HasRole(JobAuthorRoles...) }
