package storetest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// testPaths: the shortest paths between two resources of chain()'s
// catalog, in each direction, ordered and cut the same way by both
// stores, with their bounds and errors.
func testPaths(t *testing.T, s capstan.Store) {
	rs := chain(t, s)
	paths := func(from, to string, dir capstan.Direction, max, depth int) []string {
		t.Helper()
		got, err := s.Paths(ctx, orgA, capstan.PathQuery{From: rs[from].ID, To: rs[to].ID, Direction: dir, Max: max, MaxDepth: depth})
		require.NoError(t, err)
		return describePaths(got)
	}
	require.Equal(t, []string{
		"tempo.instance/t1 -runs_on-> kubernetes.cluster/c1 -runs_on-> compute.node/n1",
		"tempo.instance/t1 -depends_on-> vault.instance/v1 -runs_on-> kubernetes.cluster/c1 -runs_on-> compute.node/n1",
	}, paths("app", "node", capstan.Outgoing, 3, 10), "why the app depends on the node: shortest first")
	require.Len(t, paths("app", "node", capstan.Outgoing, 1, 10), 1)
	require.Empty(t, paths("app", "node", capstan.Outgoing, 3, 1), "no path within one hop")
	require.Empty(t, paths("node", "app", capstan.Outgoing, 3, 10), "the node depends on nothing")
	require.Equal(t, []string{
		"compute.node/n1 <-runs_on- kubernetes.cluster/c1 <-runs_on- tempo.instance/t1",
		"compute.node/n1 <-runs_on- kubernetes.cluster/c1 <-runs_on- vault.instance/v1 <-depends_on- tempo.instance/t1",
	}, paths("node", "app", capstan.Incoming, 3, 10), "what depends on the node, down to the app")
	require.Equal(t, []string{
		"tempo.instance/t1 -depends_on-> vault.instance/v1",
		"tempo.instance/t1 -runs_on-> kubernetes.cluster/c1 <-runs_on- vault.instance/v1",
	}, paths("app", "vault", capstan.Both, 5, 10), "how the app and vault are linked")

	for name, q := range map[string]capstan.PathQuery{
		"same ends":  {From: rs["app"].ID, To: rs["app"].ID, Direction: capstan.Outgoing, Max: 1, MaxDepth: 3},
		"direction":  {From: rs["app"].ID, To: rs["node"].ID, Direction: "sideways", Max: 1, MaxDepth: 3},
		"no paths":   {From: rs["app"].ID, To: rs["node"].ID, Direction: capstan.Outgoing, Max: 0, MaxDepth: 3},
		"paths":      {From: rs["app"].ID, To: rs["node"].ID, Direction: capstan.Outgoing, Max: capstan.MaxPaths + 1, MaxDepth: 3},
		"depth":      {From: rs["app"].ID, To: rs["node"].ID, Direction: capstan.Outgoing, Max: 1, MaxDepth: capstan.MaxPathDepth + 1},
		"empty from": {To: rs["node"].ID, Direction: capstan.Outgoing, Max: 1, MaxDepth: 3},
	} {
		_, err := s.Paths(ctx, orgA, q)
		require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), name)
	}
	_, err := s.Paths(ctx, orgA, capstan.PathQuery{From: rs["app"].ID, To: "missing", Direction: capstan.Outgoing, Max: 1, MaxDepth: 3})
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err))
	_, err = s.Paths(ctx, orgB, capstan.PathQuery{From: rs["app"].ID, To: rs["node"].ID, Direction: capstan.Outgoing, Max: 1, MaxDepth: 3})
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err), "another organization's resources are not found")
}

// describePaths writes each path as its resources' keys joined by its
// hops, an arrow pointing from a relationship's holder to its target.
func describePaths(paths []capstan.ResourcePath) []string {
	var out []string
	for _, p := range paths {
		var b strings.Builder
		b.WriteString(p.Resources[0].Key())
		for i, h := range p.Hops {
			if h.Holder == p.Resources[i].Key() {
				b.WriteString(" -" + string(h.Relationship) + "-> ")
			} else {
				b.WriteString(" <-" + string(h.Relationship) + "- ")
			}
			b.WriteString(p.Resources[i+1].Key())
		}
		out = append(out, b.String())
	}
	return out
}
