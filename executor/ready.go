package executor

import (
	"github.com/capstan-dev/capstan"
)

// done reports whether a node run no longer blocks its dependents.
func done(s capstan.NodeRunStatus) bool {
	return s == capstan.NodeSucceeded || s == capstan.NodeSkipped
}

// ReadyNodes returns, in plan order, the pending nodes whose every upstream
// node is done (SPEC §7). A node inside a stage also waits for what the
// stage waits for; a stage is done when all its children are. The executor
// asks the same index only about the nodes a change may have made ready.
func ReadyNodes(p *capstan.Plan, status map[string]capstan.NodeRunStatus) []string {
	x := newIndex(p)
	of := func(id string) capstan.NodeRunStatus { return status[id] }
	var out []string
	for _, n := range p.Nodes {
		if x.ready(n.ID, of) {
			out = append(out, n.ID)
		}
	}
	return out
}
