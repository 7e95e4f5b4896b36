package testenv

import (
	"fmt"

	"github.com/capstan-dev/capstan"
)

// GraphShape names the resources of a GraphCatalog the graph benchmarks
// start from.
type GraphShape struct {
	// Hood has 10 resources running on it, 10 on each of those and 10 on
	// each of those again: 1,110 within three hops, past a 500 budget.
	Hood string
	// Hub is what Dependents resources run on.
	Hub        string
	Dependents int
	// From reaches To in 6 hops along PathsAt parallel chains (what From
	// depends on): PathsAt shortest paths.
	From, To string
	PathsAt  int
}

// GraphCatalog is a catalog of n resources (at least 1,200) for the graph
// benchmarks: a neighbourhood, a hub that min(10,000, n/100) resources
// run on, two resources 6 hops apart by 4 chains, and SyntheticCatalog's
// resources for the rest.
func GraphCatalog(n int) ([]*capstan.Resource, GraphShape) {
	sh := GraphShape{Hood: "kubernetes.cluster/graph-hood", Hub: "kubernetes.cluster/graph-hub", Dependents: min(10000, max(n/100, 10)),
		From: "app.instance/graph-from", To: "app.instance/graph-to", PathsAt: 4}
	res := func(typ, name string, rels ...capstan.Relationship) *capstan.Resource {
		return &capstan.Resource{Type: typ, Name: name, Environment: "prod", LifecycleStatus: capstan.LifecycleActive,
			HealthStatus: capstan.HealthHealthy, Relationships: rels}
	}
	on := func(key string) capstan.Relationship {
		return capstan.Relationship{Type: capstan.RelRunsOn, Target: key}
	}
	out := []*capstan.Resource{res("kubernetes.cluster", "graph-hood"), res("kubernetes.cluster", "graph-hub")}
	for i := range 10 {
		l1 := res("app.instance", fmt.Sprintf("hood-%d", i), on(sh.Hood))
		out = append(out, l1)
		for j := range 10 {
			l2 := res("app.instance", fmt.Sprintf("hood-%d-%d", i, j), on(l1.Key()))
			out = append(out, l2)
			for k := range 10 {
				out = append(out, res("app.instance", fmt.Sprintf("hood-%d-%d-%d", i, j, k), on(l2.Key())))
			}
		}
	}
	for i := range sh.Dependents {
		out = append(out, res("app.instance", fmt.Sprintf("hub-dep-%d", i), on(sh.Hub)))
	}
	out = append(out, res("app.instance", "graph-to"))
	var from []capstan.Relationship
	for c := range sh.PathsAt {
		next := sh.To
		for h := 5; h >= 1; h-- {
			r := res("app.instance", fmt.Sprintf("chain-%d-%d", c, h), capstan.Relationship{Type: capstan.RelDependsOn, Target: next})
			out = append(out, r)
			next = r.Key()
		}
		from = append(from, capstan.Relationship{Type: capstan.RelDependsOn, Target: next})
	}
	out = append(out, res("app.instance", "graph-from", from...))
	if rest := n - len(out); rest > 0 {
		out = append(out, SyntheticCatalog(rest)...)
	}
	return out, sh
}
