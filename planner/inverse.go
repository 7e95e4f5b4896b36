package planner

import (
	"reflect"
	"slices"

	"github.com/capstan-dev/capstan"
)

// Inverse returns the changes that take a plan from revision to back to
// revision from (a revert is a new patch of these changes, judged and
// approved like any other). Node runs are history: a retry or a skip is
// not undone.
func Inverse(from, to *capstan.PlanRevision) []capstan.PlanChange {
	d := capstan.Diff(from, to)
	var out []capstan.PlanChange
	old := map[string]capstan.PlanNode{}
	for _, n := range from.Nodes {
		old[n.ID] = n
	}
	added := map[string]bool{}
	for i := len(d.NodesAdded) - 1; i >= 0; i-- {
		added[d.NodesAdded[i].ID] = true
		out = append(out, capstan.PlanChange{Op: capstan.ChangeRemove, Node: d.NodesAdded[i].ID, Reason: "revert"})
	}
	for _, c := range d.NodesChanged {
		n := old[c.ID]
		if n.Type == capstan.NodeStage && childrenOnly(c) {
			continue // removing and inserting nodes keep a stage's children
		}
		out = append(out, capstan.PlanChange{Op: capstan.ChangeReplace, Node: c.ID, Spec: &n, Reason: "revert"})
	}
	removed := map[string]bool{}
	for _, n := range d.NodesRemoved {
		removed[n.ID] = true
	}
	placedBy := map[capstan.Edge]bool{}
	for _, n := range d.NodesRemoved {
		spec := n
		c := capstan.PlanChange{Op: capstan.ChangeInsertAfter, Spec: &spec, NodeID: n.ID, Reason: "revert"}
		for _, e := range from.Edges {
			if e.To == n.ID && !removed[e.From] {
				c.Node = e.From
				placedBy[e] = true
				break
			}
		}
		if c.Node == "" {
			for _, e := range from.Edges {
				if e.From == n.ID && !removed[e.To] {
					c.Op, c.Node = capstan.ChangeInsertBefore, e.To
					placedBy[e] = true
					break
				}
			}
		}
		if c.Node != "" {
			out = append(out, c)
		}
	}
	for _, e := range d.EdgesAdded {
		if !added[e.From] && !added[e.To] {
			out = append(out, capstan.PlanChange{Op: capstan.ChangeRemoveEdge, Edge: &e, Reason: "revert"})
		}
	}
	for _, e := range d.EdgesRemoved {
		if !placedBy[e] && !bridged(to.Edges, e, added) {
			out = append(out, capstan.PlanChange{Op: capstan.ChangeAddEdge, Edge: &e, Reason: "revert"})
		}
	}
	if len(d.Parameters) > 0 {
		params := map[string]any{}
		for k := range to.Parameters {
			params[k] = nil
		}
		for k, v := range from.Parameters {
			params[k] = v
		}
		for k, v := range params {
			if reflect.DeepEqual(v, to.Parameters[k]) && v != nil {
				delete(params, k)
			}
		}
		out = append(out, capstan.PlanChange{Op: capstan.ChangeSetParameters, Parameters: params, Reason: "revert"})
	}
	for _, c := range d.BindingsChanged {
		i := slices.IndexFunc(from.Bindings, func(b capstan.ResourceBinding) bool { return b.ID == c.ID })
		if i >= 0 && from.Bindings[i].Provider != nil {
			out = append(out, capstan.PlanChange{Op: capstan.ChangeRebind, Requirement: c.ID, Provider: from.Bindings[i].Provider.ResourceKey, Reason: "revert"})
		}
	}
	return out
}

// bridged reports whether edges lead from e.From to e.To through added
// nodes only: removing those nodes joins the two again.
func bridged(edges []capstan.Edge, e capstan.Edge, added map[string]bool) bool {
	seen := map[string]bool{}
	stack := []string{e.From}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, x := range edges {
			if x.From != n {
				continue
			}
			if x.To == e.To && n != e.From {
				return true
			}
			if added[x.To] && !seen[x.To] {
				seen[x.To] = true
				stack = append(stack, x.To)
			}
		}
	}
	return false
}

func childrenOnly(d capstan.EntityDiff) bool {
	for _, f := range d.Fields {
		if f.Path != "children" {
			return false
		}
	}
	return true
}
