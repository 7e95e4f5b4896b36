// Package dag checks and orders plan graphs with dominikbraun/graph.
//
// A stage is modelled as two vertices, its start and its end: edges into the
// stage reach its start, which precedes every child; every child precedes
// the stage's end, which precedes whatever depends on the stage. So a child
// that waits for its own stage is a cycle, as it would deadlock at run time.
package dag

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dominikbraun/graph"

	"github.com/capstan-dev/capstan"
)

func start(id string) string { return id + "#start" }
func end(id string) string   { return id + "#end" }

// Build returns the vertex graph of nodes and edges, or every problem found:
// each edge that would close a cycle is reported with the cycle's path.
func build(nodes []capstan.PlanNode, edges []capstan.Edge) (graph.Graph[string, string], []string) {
	g := graph.New(graph.StringHash, graph.Directed(), graph.PreventCycles())
	stages := map[string]bool{}
	known := map[string]bool{}
	for _, n := range nodes {
		known[n.ID] = true
		_ = g.AddVertex(start(n.ID))
		if n.Type == capstan.NodeStage {
			stages[n.ID] = true
			_ = g.AddVertex(end(n.ID))
			_ = g.AddEdge(start(n.ID), end(n.ID))
		}
	}
	vEnd := func(id string) string {
		if stages[id] {
			return end(id)
		}
		return start(id)
	}
	var problems []string
	add := func(from, to, what string) {
		err := g.AddEdge(from, to)
		switch {
		case err == nil, errors.Is(err, graph.ErrEdgeAlreadyExists):
		case errors.Is(err, graph.ErrEdgeCreatesCycle):
			path, _ := graph.ShortestPath(g, to, from)
			problems = append(problems, fmt.Sprintf("%s closes a cycle: %s", what, describe(append(path, to))))
		default:
			problems = append(problems, fmt.Sprintf("%s: %v", what, err))
		}
	}
	for _, n := range nodes {
		for _, c := range n.Children {
			if known[c] && c != n.ID {
				add(start(n.ID), start(c), fmt.Sprintf("stage %s containing %s", n.ID, c))
				add(vEnd(c), end(n.ID), fmt.Sprintf("stage %s containing %s", n.ID, c))
			}
		}
	}
	for _, e := range capstan.AllEdges(nodes, edges) {
		if known[e.From] && known[e.To] && e.From != e.To {
			add(vEnd(e.From), start(e.To), fmt.Sprintf("edge %s -> %s", e.From, e.To))
		}
	}
	return g, problems
}

// describe turns a vertex path into node ids: a -> b -> a.
func describe(path []string) string {
	var out []string
	for _, v := range path {
		id := strings.TrimSuffix(strings.TrimSuffix(v, "#start"), "#end")
		if len(out) == 0 || out[len(out)-1] != id {
			out = append(out, id)
		}
	}
	return strings.Join(out, " -> ")
}

// Check returns every cycle problem of the graph (empty when it is a DAG).
func Check(nodes []capstan.PlanNode, edges []capstan.Edge) []string {
	_, problems := build(nodes, edges)
	return problems
}

// Order returns node ids in a stable topological order (ties broken by id),
// or the cycle problems.
func Order(nodes []capstan.PlanNode, edges []capstan.Edge) ([]string, error) {
	g, problems := build(nodes, edges)
	if len(problems) > 0 {
		return nil, &capstan.Error{Code: capstan.EINVALID, Message: "plan graph is not a DAG: " + problems[0], Details: problems}
	}
	order, err := graph.StableTopologicalSort(g, func(a, b string) bool { return a < b })
	if err != nil {
		return nil, capstan.Wrap("dag.Order", err)
	}
	var ids []string
	for _, v := range order {
		if id, ok := strings.CutSuffix(v, "#start"); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
