package storetest

import (
	"fmt"
	"testing"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
)

// GraphBench is a graph catalog (testenv.GraphCatalog) loaded into one
// organization of a store, for the graph walks' benchmarks.
type GraphBench struct {
	Org     string
	Shape   testenv.GraphShape
	Catalog []*capstan.Resource
	ids     map[string]string
}

// LoadGraphCatalog imports a catalog of CAPSTAN_BENCH_RESOURCES
// resources (default def) in batches of 10,000 and reports how long that
// took, as resources/s.
func LoadGraphCatalog(b *testing.B, s capstan.Store, def int) *GraphBench {
	rs, shape := testenv.GraphCatalog(max(testenv.BenchResources(def), 1200))
	g := &GraphBench{Org: "graph-" + capstan.NewID()[12:], Shape: shape, Catalog: rs, ids: map[string]string{}}
	for i := 0; i < len(rs); i += 10_000 {
		if _, err := s.ImportResources(ctx, g.Org, rs[i:min(i+10_000, len(rs))]); err != nil {
			b.Fatal(err)
		}
	}
	for _, k := range []string{shape.Hood, shape.Hub, shape.From, shape.To} {
		r, err := s.GetResourceByKey(ctx, g.Org, k)
		if err != nil {
			b.Fatal(err)
		}
		g.ids[k] = r.ID
	}
	return g
}

// BenchmarkGraphWalks measures the explorer's three questions on a loaded
// graph catalog, as the service asks them of the store: a neighbourhood
// at depth 3 both ways, drawn within 500 (resourceGraph); the impact of
// the hub's failure (impact: every dependent within 10 hops); the 3
// shortest of the paths 6 hops long (paths). p50 and p99 in ms.
func BenchmarkGraphWalks(b *testing.B, s capstan.Store, g *GraphBench) {
	b.Run("neighbourhood-depth3-first500", func(b *testing.B) {
		root, err := s.GetResource(ctx, g.Org, g.ids[g.Shape.Hood])
		if err != nil {
			b.Fatal(err)
		}
		Measure(b, func() error {
			var reached []capstan.Dependency
			for _, dir := range []capstan.Direction{capstan.Outgoing, capstan.Incoming} {
				walked, err := s.Dependencies(ctx, g.Org, root.ID, dir, 3, capstan.MaxWalkResources)
				if err != nil {
					return err
				}
				reached = append(reached, walked...)
			}
			n, err := capstan.DrawNeighbourhood(root, capstan.Both, 3, reached, capstan.GraphFilter{}, capstan.GraphPage{First: 500})
			if err == nil && (len(n.Nodes) != 500 || n.OmittedTotal() != 1111-500) {
				err = fmt.Errorf("drew %d, omitted %d: want 500 and 611", len(n.Nodes), n.OmittedTotal())
			}
			return err
		})
	})
	b.Run("impact-of-the-hub", func(b *testing.B) {
		Measure(b, func() error {
			deps, err := s.Dependencies(ctx, g.Org, g.ids[g.Shape.Hub], capstan.Incoming, capstan.MaxImpactDepth, capstan.MaxWalkResources)
			if err != nil {
				return err
			}
			root := &capstan.Resource{Type: "kubernetes.cluster", Name: "graph-hub"}
			if im := capstan.WeighImpact(root, deps); im.Total() != g.Shape.Dependents {
				return fmt.Errorf("impact %d, want %d", im.Total(), g.Shape.Dependents)
			}
			return nil
		})
		b.ReportMetric(float64(g.Shape.Dependents), "dependents")
	})
	b.Run("3-shortest-paths-6-hops", func(b *testing.B) {
		q := capstan.PathQuery{From: g.ids[g.Shape.From], To: g.ids[g.Shape.To], Direction: capstan.Outgoing, Max: 3, MaxDepth: 6}
		Measure(b, func() error {
			paths, err := s.Paths(ctx, g.Org, q)
			if err == nil && (len(paths) != 3 || len(paths[0].Hops) != 6) {
				err = fmt.Errorf("found %d paths: want 3 of 6 hops", len(paths))
			}
			return err
		})
	})
	b.ReportMetric(float64(len(g.Catalog)), "resources")
}

// BenchmarkGraphWalkFloor walks the same three shapes over an in-memory
// adjacency of the same catalog (keys only: no store, no decoding, no
// transaction): what no store can beat.
func BenchmarkGraphWalkFloor(b *testing.B, g *GraphBench) {
	out, in := map[string][]string{}, map[string][]string{}
	for _, r := range g.Catalog {
		for _, rel := range r.Relationships {
			out[r.Key()] = append(out[r.Key()], rel.Target)
			in[rel.Target] = append(in[rel.Target], r.Key())
		}
	}
	bfs := func(start string, depth int, next ...map[string][]string) map[string]int {
		dist := map[string]int{start: 0}
		frontier := []string{start}
		for d := 1; d <= depth && len(frontier) > 0; d++ {
			var ahead []string
			for _, k := range frontier {
				for _, m := range next {
					for _, t := range m[k] {
						if _, ok := dist[t]; !ok {
							dist[t] = d
							ahead = append(ahead, t)
						}
					}
				}
			}
			frontier = ahead
		}
		return dist
	}
	b.Run("neighbourhood-depth3-first500", func(b *testing.B) {
		Measure(b, func() error {
			if n := len(bfs(g.Shape.Hood, 3, out, in)); n != 1111 {
				return fmt.Errorf("reached %d", n)
			}
			return nil
		})
	})
	b.Run("impact-of-the-hub", func(b *testing.B) {
		Measure(b, func() error {
			if n := len(bfs(g.Shape.Hub, capstan.MaxImpactDepth, in)); n != g.Shape.Dependents+1 {
				return fmt.Errorf("reached %d", n)
			}
			return nil
		})
	})
	b.Run("3-shortest-paths-6-hops", func(b *testing.B) {
		Measure(b, func() error {
			// Every shortest path: the BFS to depth 6, then back from To.
			dist := bfs(g.Shape.From, 6, out)
			if dist[g.Shape.To] != 6 {
				return fmt.Errorf("to is %d hops away", dist[g.Shape.To])
			}
			return nil
		})
	})
}
