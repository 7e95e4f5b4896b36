package planner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
)

// Edit applies advanced-mode edits to a plan that has not started. The
// edits apply all together or not at all: any problem they cause is
// returned as one EINVALID error listing every problem, and the plan passed
// in is never modified. The result has a new revision, the edits recorded
// in its customizations, and status ready or invalid from what remains.
func (p *Planner) Edit(ctx context.Context, org string, plan *capstan.Plan, in *capstan.Intent, edits []capstan.PlanChange, actor string, now time.Time) (*capstan.Plan, error) {
	if !plan.Status.Editable() {
		return nil, capstan.Errorf(capstan.ECONFLICT, "%s is %s: a started plan changes only through a PlanPatch (invariant 4)", capstan.Named("plan", plan.ID), plan.Status)
	}
	if len(edits) == 0 {
		return nil, capstan.Errorf(capstan.EINVALID, "no edits given")
	}
	out := deepCopy(*plan)
	before := map[string]bool{}
	for _, pr := range Problems(plan) {
		before[pr] = true
	}
	var probs capstan.Problems
	r := &resolution{planner: p, org: org, intent: in}
	for i, e := range edits {
		if msg, err := r.apply(ctx, &out, e); err != nil {
			return nil, err
		} else if msg != "" {
			probs.Addf("edit %d (%s): %s", i+1, e.Op, msg)
		}
	}
	// Edits must not introduce new problems; ones the plan already had may remain.
	for _, pr := range Problems(&out) {
		if !before[pr] {
			probs = append(probs, pr)
		}
	}
	if err := probs.Err("plan edit rejected"); err != nil {
		return nil, err
	}
	out.Revision++
	for _, e := range edits {
		e.Actor, e.At, e.Revision = actor, now.UTC(), out.Revision
		out.Customizations.Changes = append(out.Customizations.Changes, e)
	}
	out.Problems = Problems(&out)
	return &out, Settle(&out)
}

// apply performs one edit on plan; msg is a client-facing problem.
func (r *resolution) apply(ctx context.Context, plan *capstan.Plan, e capstan.PlanChange) (msg string, err error) {
	switch e.Op {
	case capstan.EditAddNode:
		if e.Node == nil {
			return "add_node needs a node", nil
		}
		if plan.Node(e.Node.ID) != nil {
			return fmt.Sprintf("node %s already exists", e.Node.ID), nil
		}
		n := deepCopy(*e.Node)
		for _, a := range n.After {
			plan.Edges = append(plan.Edges, capstan.Edge{From: a, To: n.ID})
		}
		n.After = nil
		plan.Nodes = append(plan.Nodes, n)
	case capstan.EditRemoveNode:
		return removeNode(plan, e.NodeID), nil
	case capstan.EditReplaceNode:
		if e.Node == nil || plan.Node(e.NodeID) == nil {
			return fmt.Sprintf("replace_node needs an existing node_id and a node (node %q)", e.NodeID), nil
		}
		if e.Node.ID != e.NodeID {
			return fmt.Sprintf("replacement node id %s differs from %s: remove and add to rename", e.Node.ID, e.NodeID), nil
		}
		n := deepCopy(*e.Node)
		n.After = nil
		*plan.Node(e.NodeID) = n
	case capstan.EditAddEdge, capstan.EditRemoveEdge:
		return editEdge(plan, e), nil
	case capstan.EditSetParameters:
		if len(e.Parameters) == 0 {
			return "set_parameters needs parameters", nil
		}
		target := &plan.Parameters
		if e.NodeID != "" {
			n := plan.Node(e.NodeID)
			if n == nil {
				return fmt.Sprintf("node %s does not exist", e.NodeID), nil
			}
			target = &n.Parameters
		}
		if *target == nil {
			*target = map[string]any{}
		}
		for k, v := range e.Parameters {
			if v == nil {
				delete(*target, k)
			} else {
				(*target)[k] = v
			}
		}
	case capstan.EditOverrideBinding:
		return r.override(ctx, plan, e)
	default:
		return fmt.Sprintf("unknown edit %q", e.Op), nil
	}
	return "", nil
}

func removeNode(plan *capstan.Plan, id string) string {
	if plan.Node(id) == nil {
		return fmt.Sprintf("node %s does not exist", id)
	}
	for _, b := range plan.Bindings {
		if b.SubOperation != nil && b.SubOperation.NodeID == id && b.Status == capstan.BindingPendingSubOperation {
			return fmt.Sprintf("node %s creates the provider of %s: override that binding instead", id, b.ID)
		}
	}
	plan.Nodes = slices.DeleteFunc(plan.Nodes, func(n capstan.PlanNode) bool { return n.ID == id })
	plan.Edges = slices.DeleteFunc(plan.Edges, func(e capstan.Edge) bool { return e.From == id || e.To == id })
	for i := range plan.Nodes {
		plan.Nodes[i].Children = slices.DeleteFunc(plan.Nodes[i].Children, func(c string) bool { return c == id })
		if plan.Nodes[i].Type == capstan.NodeStage && len(plan.Nodes[i].Children) == 0 {
			return fmt.Sprintf("removing %s leaves stage %s empty: remove the stage too", id, plan.Nodes[i].ID)
		}
	}
	return ""
}

func editEdge(plan *capstan.Plan, e capstan.PlanChange) string {
	if e.Edge == nil {
		return e.Op + " needs an edge"
	}
	idx := slices.Index(plan.Edges, *e.Edge)
	if e.Op == capstan.EditAddEdge {
		if idx >= 0 {
			return fmt.Sprintf("edge %s -> %s already exists", e.Edge.From, e.Edge.To)
		}
		plan.Edges = append(plan.Edges, *e.Edge)
		return ""
	}
	if idx < 0 {
		return fmt.Sprintf("edge %s -> %s does not exist", e.Edge.From, e.Edge.To)
	}
	plan.Edges = slices.Delete(plan.Edges, idx, idx+1)
	return ""
}

// override rebinds a requirement to a provider the user names explicitly.
// The provider must still meet the constraints and policies.
func (r *resolution) override(ctx context.Context, plan *capstan.Plan, e capstan.PlanChange) (string, error) {
	b := plan.Binding(e.BindingID)
	if b == nil {
		return fmt.Sprintf("binding %s does not exist", e.BindingID), nil
	}
	if _, _, ok := capstan.SplitResourceKey(e.Provider); !ok {
		return fmt.Sprintf("provider %q is not a resource key (type/name)", e.Provider), nil
	}
	def, err := r.planner.Catalog.GetCapability(ctx, r.org, b.Requirement.Capability)
	if err != nil {
		return "", err
	}
	if b.Status == capstan.BindingFailed && b.Constraints == nil {
		return fmt.Sprintf("binding %s failed before its constraints were resolved (%s): fix the scenario or the intent, not the provider", b.ID, b.Reason), nil
	}
	nb := *b
	nb.Requirement.Strategy, nb.Requirement.Provider, nb.Explicit = capstan.StrategyExplicit, e.Provider, true
	nb.Candidates, nb.Provider, nb.SubOperation = nil, nil, nil
	nb.OmittedCandidates, nb.OmittedReasons = 0, nil
	if nb.Constraints == nil {
		nb.Constraints = map[string]any{}
	}
	resolved, _, err := r.bind(ctx, nb, def, nil)
	if err != nil {
		return "", err
	}
	if resolved.Status != capstan.BindingResolved {
		return resolved.Reason, nil
	}
	if b.SubOperation != nil && b.SubOperation.NodeID != "" {
		id := b.SubOperation.NodeID
		plan.Nodes = slices.DeleteFunc(plan.Nodes, func(n capstan.PlanNode) bool { return n.ID == id })
		plan.Edges = slices.DeleteFunc(plan.Edges, func(e capstan.Edge) bool { return e.From == id || e.To == id })
	}
	prefix := b.ID + "/"
	plan.Bindings = slices.DeleteFunc(plan.Bindings, func(x capstan.ResourceBinding) bool { return strings.HasPrefix(x.ID, prefix) })
	*plan.Binding(e.BindingID) = resolved
	return "", nil
}
