package service_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
)

// TestTwoStartsOfOneChildStartOne: loops that each find a sub_operation
// node running with no child recorded (a deposed owner and its
// successor) start the child at the same moment: each gets the same
// operation, and none fails its node (issue 44).
func TestTwoStartsOfOneChildStartOne(t *testing.T) {
	svc, store := setup(t)
	ctx := testenv.Admin(testenv.Org)
	seed := plan(t, svc, testenv.SeedIntent())
	parent, err := svc.StartOperation(ctx, seed.ID, "")
	require.NoError(t, err)
	var node *capstan.PlanNode
	for i := range seed.Nodes {
		if seed.Nodes[i].SubOperation != nil {
			node = &seed.Nodes[i]
		}
	}
	require.NotNil(t, node, "the seed's plan creates its bucket in a sub-operation")

	const starts = 4
	ids, errs := make([]string, starts), make([]error, starts)
	var wg sync.WaitGroup
	for i := range starts {
		wg.Go(func() { ids[i], errs[i] = svc.StartChild(context.Background(), testenv.Org, parent, node) })
	}
	wg.Wait()
	for i := range starts {
		require.NoError(t, errs[i], "start %d", i)
		require.Equal(t, ids[0], ids[i], "start %d", i)
	}
	child, err := store.GetOperation(context.Background(), testenv.Org, ids[0])
	require.NoError(t, err)
	require.Equal(t, parent.ID, child.ParentID)
}
