package executor

import (
	"sort"

	"github.com/capstan-dev/capstan"
)

// planIndex answers the executor's questions about a plan's graph without
// scanning the plan: nodes by id, what each waits on, what waits on it.
type planIndex struct {
	nodes      map[string]*capstan.PlanNode
	order      map[string]int
	upstream   map[string][]string
	downstream map[string][]string
	children   map[string][]string
	parent     map[string]string
	// leaves counts the nodes that run (every node but stages).
	leaves int
}

func newIndex(p *capstan.Plan) *planIndex {
	x := &planIndex{nodes: map[string]*capstan.PlanNode{}, order: map[string]int{}, upstream: map[string][]string{},
		downstream: map[string][]string{}, children: map[string][]string{}, parent: map[string]string{}}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		x.nodes[n.ID], x.order[n.ID] = n, i
		if n.Type != capstan.NodeStage {
			x.leaves++
		}
		for _, c := range n.Children {
			x.parent[c] = n.ID
			x.children[n.ID] = append(x.children[n.ID], c)
		}
	}
	for _, e := range p.Edges {
		x.upstream[e.To] = append(x.upstream[e.To], e.From)
		x.downstream[e.From] = append(x.downstream[e.From], e.To)
	}
	return x
}

// isDone reports whether a node no longer blocks what waits on it; a stage
// is done when all its children are.
func (x *planIndex) isDone(id string, status func(string) capstan.NodeRunStatus) bool {
	if kids, ok := x.children[id]; ok {
		for _, c := range kids {
			if !x.isDone(c, status) {
				return false
			}
		}
		return true
	}
	return done(status(id))
}

// ready reports whether a pending node may start: everything it waits on
// is done, including what its enclosing stages wait on (SPEC §7).
func (x *planIndex) ready(id string, status func(string) capstan.NodeRunStatus) bool {
	n := x.nodes[id]
	if n == nil || n.Type == capstan.NodeStage {
		return false
	}
	if s := status(id); s != "" && s != capstan.NodePending {
		return false
	}
	for at := id; at != ""; at = x.parent[at] {
		for _, d := range x.upstream[at] {
			if !x.isDone(d, status) {
				return false
			}
		}
	}
	return true
}

// affected lists the nodes whose readiness may change when id is done:
// what waits on it (every node inside a stage that waits on it), and, as
// its stage may be done now, what waits on the stage.
func (x *planIndex) affected(id string) []string {
	var out []string
	var leavesOf func(string)
	leavesOf = func(n string) {
		if kids, ok := x.children[n]; ok {
			for _, c := range kids {
				leavesOf(c)
			}
			return
		}
		out = append(out, n)
	}
	for at := id; at != ""; at = x.parent[at] {
		for _, d := range x.downstream[at] {
			leavesOf(d)
		}
	}
	return out
}

// inOrder sorts node ids in plan order.
func (x *planIndex) inOrder(ids []string) []string {
	sort.Slice(ids, func(i, j int) bool { return x.order[ids[i]] < x.order[ids[j]] })
	return ids
}
