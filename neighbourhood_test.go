package capstan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDrawNeighbourhood(t *testing.T) {
	res := func(typ, name, env string, rels ...Relationship) *Resource {
		return &Resource{Meta: Meta{ID: name}, Type: typ, Name: name, Environment: env, Relationships: rels}
	}
	k := res("kubernetes.cluster", "k", "prod")
	a := res("vault.instance", "a", "prod", Relationship{Type: RelRunsOn, Target: "kubernetes.cluster/k"})
	b := res("grafana.instance", "b", "prod", Relationship{Type: RelDependsOn, Target: "vault.instance/a"}, Relationship{Type: RelRunsOn, Target: "kubernetes.cluster/k"})
	c := res("minio.instance", "c", "staging", Relationship{Type: RelUses, Target: "kubernetes.cluster/k"})
	d := res("tempo.instance", "d", "prod", Relationship{Type: RelRunsOn, Target: "grafana.instance/b"})
	walked := []Dependency{{Resource: a}, {Resource: b}, {Resource: c}, {Resource: d}}
	// Nodes come nearest first, ties by key (grafana.instance/b,
	// kubernetes.cluster/k, minio.instance/c, tempo.instance/d,
	// vault.instance/a).
	for _, tc := range []struct {
		name    string
		dir     Direction
		depth   int
		filter  GraphFilter
		page    GraphPage
		nodes   []string
		edges   []string
		omitted []ResourceCount
	}{
		{"what depends on it, two hops", Incoming, 2, GraphFilter{}, GraphPage{First: 10},
			[]string{"0 k", "1 b", "1 c", "1 a", "2 d"},
			[]string{"b depends_on a", "b runs_on k", "a runs_on k", "c uses k", "d runs_on b"}, []ResourceCount{}},
		{"one hop", Incoming, 1, GraphFilter{}, GraphPage{First: 10},
			[]string{"0 k", "1 b", "1 c", "1 a"}, []string{"b depends_on a", "b runs_on k", "a runs_on k", "c uses k"}, []ResourceCount{}},
		{"only runs_on", Incoming, 3, GraphFilter{Relationships: []RelationshipType{RelRunsOn}}, GraphPage{First: 10},
			[]string{"0 k", "1 b", "1 a", "2 d"}, []string{"b runs_on k", "a runs_on k", "d runs_on b"}, []ResourceCount{}},
		{"only prod: the staging minio is not drawn", Incoming, 3, GraphFilter{Environments: []string{"prod"}}, GraphPage{First: 10},
			[]string{"0 k", "1 b", "1 a", "2 d"}, []string{"b depends_on a", "b runs_on k", "a runs_on k", "d runs_on b"}, []ResourceCount{}},
		{"no grafana: the tempo behind it is out of reach", Incoming, 3, GraphFilter{Types: []string{"vault.instance", "tempo.instance", "minio.instance"}}, GraphPage{First: 10},
			[]string{"0 k", "1 c", "1 a"}, []string{"a runs_on k", "c uses k"}, []ResourceCount{}},
		{"past the page, counted by type", Incoming, 3, GraphFilter{}, GraphPage{First: 2},
			[]string{"0 k", "1 b"}, []string{"b runs_on k"}, []ResourceCount{{"minio.instance", 1}, {"tempo.instance", 1}, {"vault.instance", 1}}},
		{"the next page links to the pages before, once", Incoming, 3, GraphFilter{}, GraphPage{First: 2, After: "grafana.instance/b"},
			[]string{"1 c", "1 a"}, []string{"b depends_on a", "a runs_on k", "c uses k"}, []ResourceCount{{"tempo.instance", 1}}},
		{"the last page", Incoming, 3, GraphFilter{}, GraphPage{First: 2, After: "vault.instance/a"},
			[]string{"2 d"}, []string{"d runs_on b"}, []ResourceCount{}},
		{"what the tempo depends on", Outgoing, 3, GraphFilter{}, GraphPage{First: 10},
			nil, nil, nil}, // filled below: rooted at d
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := k
			if tc.dir == Outgoing {
				root = d
				tc.nodes = []string{"0 d", "1 b", "2 k", "2 a"}
				tc.edges = []string{"b depends_on a", "b runs_on k", "a runs_on k", "d runs_on b"}
				tc.omitted = []ResourceCount{}
			}
			n, err := DrawNeighbourhood(root, tc.dir, tc.depth, append(walked, Dependency{Resource: k}), tc.filter, tc.page)
			require.NoError(t, err)
			var nodes, edges []string
			for _, g := range n.Nodes {
				nodes = append(nodes, fmt.Sprintf("%d %s", g.Depth, g.Resource.Name))
			}
			for _, e := range n.Edges {
				edges = append(edges, fmt.Sprintf("%s %s %s", e.Holder[len(e.Holder)-1:], e.Relationship, e.Target[len(e.Target)-1:]))
			}
			require.Equal(t, tc.nodes, nodes)
			require.ElementsMatch(t, tc.edges, edges)
			require.Equal(t, tc.omitted, n.Omitted)
			total := 0
			for _, o := range tc.omitted {
				total += o.Count
			}
			require.Equal(t, total, n.OmittedTotal())
			require.Equal(t, total > 0, n.HasMore)
		})
	}
	both, err := DrawNeighbourhood(b, Both, 1, []Dependency{{Resource: a}, {Resource: k}, {Resource: d}}, GraphFilter{}, GraphPage{First: 10})
	require.NoError(t, err)
	var names []string
	for _, g := range both.Nodes {
		names = append(names, g.Resource.Name)
	}
	require.Equal(t, []string{"b", "k", "d", "a"}, names, "both ways: what it depends on and what depends on it")
	_, err = DrawNeighbourhood(b, Both, 1, nil, GraphFilter{}, GraphPage{First: 10, After: "minio.instance/c"})
	require.Equal(t, EINVALID, ErrorCode(err), "a cursor from another neighbourhood")
	require.Error(t, CheckNeighbourhood("sideways", 1, GraphPage{First: 1}))
	require.Error(t, CheckNeighbourhood(Both, 0, GraphPage{First: 1}))
	require.Error(t, CheckNeighbourhood(Both, 1, GraphPage{First: MaxGraphBudget + 1}))
	require.Error(t, CheckNeighbourhood(Both, 1, GraphPage{First: 0}))
	require.NoError(t, CheckNeighbourhood(Both, MaxGraphDepth, GraphPage{First: MaxGraphBudget}))
}
