package embedded_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/embedded"
)

// TestAPathSearchStopsAtItsBound: ten layers of four resources, each
// depending on all four of the next, hold 4^9 partial paths at nine hops
// from the first; a search for a resource none of them reaches passes
// capstan.PathSearchBudget and stops, typed, instead of holding them.
func TestAPathSearchStopsAtItsBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := embedded.Open(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	var rs []*capstan.Resource
	for layer := range 10 {
		for i := range 4 {
			r := &capstan.Resource{Type: "compute.node", Name: fmt.Sprintf("l%d-%d", layer, i), Environment: "prod",
				LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy}
			if layer < 9 {
				for j := range 4 {
					r.Relationships = append(r.Relationships, capstan.Relationship{Type: capstan.RelDependsOn, Target: fmt.Sprintf("compute.node/l%d-%d", layer+1, j)})
				}
			}
			rs = append(rs, r)
		}
	}
	alone := &capstan.Resource{Type: "compute.node", Name: "alone", Environment: "prod", LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy}
	_, err = s.ImportResources(ctx, "acme", append(rs, alone))
	require.NoError(t, err)

	q := capstan.PathQuery{From: rs[0].ID, To: alone.ID, Direction: capstan.Outgoing, Max: 1, MaxDepth: capstan.MaxPathDepth}
	_, err = s.Paths(ctx, "acme", q)
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	require.Contains(t, err.Error(), "passed its bound")
	q.MaxDepth = 5 // 4^5 partial paths: within the bound
	paths, err := s.Paths(ctx, "acme", q)
	require.NoError(t, err)
	require.Empty(t, paths)
	q.To = rs[7*4].ID // in the eighth layer: 4^6 paths of seven hops, the first kept
	q.MaxDepth = 7
	paths, err = s.Paths(ctx, "acme", q)
	require.NoError(t, err)
	require.Len(t, paths, 1)
	require.Len(t, paths[0].Hops, 7)
	for i, r := range paths[0].Resources[1:] {
		require.Equal(t, fmt.Sprintf("compute.node/l%d-0", i+1), r.Key(), "ties go to the smallest keys")
	}
}
