package executor

import (
	"slices"

	"github.com/capstan-dev/capstan"
)

// done reports whether a node run no longer blocks its dependents.
func done(s capstan.NodeRunStatus) bool {
	return s == capstan.NodeSucceeded || s == capstan.NodeSkipped
}

// ReadyNodes returns, in plan order, the pending nodes whose every upstream
// node is done (SPEC §7). A node inside a stage also waits for what the
// stage waits for; a stage is done when all its children are.
func ReadyNodes(p *capstan.Plan, status map[string]capstan.NodeRunStatus) []string {
	upstream := map[string][]string{}
	for _, e := range p.Edges {
		upstream[e.To] = append(upstream[e.To], e.From)
	}
	parent := map[string]string{}
	children := map[string][]string{}
	for _, n := range p.Nodes {
		for _, c := range n.Children {
			parent[c] = n.ID
			children[n.ID] = append(children[n.ID], c)
		}
	}
	var isDone func(id string) bool
	isDone = func(id string) bool {
		if kids, ok := children[id]; ok {
			return !slices.ContainsFunc(kids, func(c string) bool { return !isDone(c) })
		}
		return done(status[id])
	}
	var waitsOn func(id string) []string
	waitsOn = func(id string) []string {
		deps := upstream[id]
		if par, ok := parent[id]; ok {
			deps = append(slices.Clone(deps), waitsOn(par)...)
		}
		return deps
	}
	var out []string
	for _, n := range p.Nodes {
		if n.Type == capstan.NodeStage {
			continue
		}
		if s := status[n.ID]; s != "" && s != capstan.NodePending {
			continue
		}
		if !slices.ContainsFunc(waitsOn(n.ID), func(d string) bool { return !isDone(d) }) {
			out = append(out, n.ID)
		}
	}
	return out
}
