package service_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/service"
)

// TestTwoStartsOfOneChildStartOne: loops that each find a sub_operation
// node running with no child recorded (a deposed owner and its
// successor) start the child at the same moment: each gets the same
// operation, and none fails its node (issue 44).
func TestTwoStartsOfOneChildStartOne(t *testing.T) {
	svc, store := setup(t)
	parent, node := seedParent(t, svc)

	const starts = 4
	ids, errs := make([]string, starts), make([]error, starts)
	var wg sync.WaitGroup
	for i := range starts {
		wg.Go(func() { ids[i], errs[i] = svc.StartChild(context.Background(), testenv.Org, parent, node, 1, nil) })
	}
	wg.Wait()
	for i := range starts {
		require.NoError(t, errs[i], "start %d", i)
		require.Equal(t, ids[0], ids[i], "start %d", i)
	}
	child, err := store.GetOperation(context.Background(), testenv.Org, ids[0])
	require.NoError(t, err)
	require.Equal(t, parent.ID, child.ParentID)
	require.Equal(t, service.ChildKey(parent.ID, node.ID, 1), child.IdempotencyKey)

	// The node's next attempt (a patch reset it) starts a child of its
	// own; its repeat finds that one.
	second, err := svc.StartChild(context.Background(), testenv.Org, parent, node, 2, nil)
	require.NoError(t, err)
	require.NotEqual(t, ids[0], second, "another attempt, another child")
	again, err := svc.StartChild(context.Background(), testenv.Org, parent, node, 2, nil)
	require.NoError(t, err)
	require.Equal(t, second, again)
}

// TestAChildAnOlderReleaseStartedIsFound: a release before the attempt
// was in a child's key keyed it parent/node; a node it left running finds
// that child again for its first attempt, and only for it.
func TestAChildAnOlderReleaseStartedIsFound(t *testing.T) {
	svc, _ := setup(t)
	ctx := testenv.Admin(testenv.Org)
	parent, node := seedParent(t, svc)
	other := plan(t, svc, testenv.SeedIntent())
	old, err := svc.StartOperation(ctx, other.ID, parent.ID+"/"+node.ID) // as the older release keyed it
	require.NoError(t, err)

	found, err := svc.StartChild(context.Background(), testenv.Org, parent, node, 1, nil)
	require.NoError(t, err)
	require.Equal(t, old.ID, found, "the first attempt's child, under the older key")
	next, err := svc.StartChild(context.Background(), testenv.Org, parent, node, 2, nil)
	require.NoError(t, err)
	require.NotEqual(t, old.ID, next, "the older key names no later attempt's child")
}

// seedParent starts the seed's operation and returns it with its
// sub_operation node (the seed's plan creates its bucket in one).
func seedParent(t *testing.T, svc *service.Service) (*capstan.Operation, *capstan.PlanNode) {
	t.Helper()
	seed := plan(t, svc, testenv.SeedIntent())
	parent, err := svc.StartOperation(testenv.Admin(testenv.Org), seed.ID, "")
	require.NoError(t, err)
	for i := range seed.Nodes {
		if seed.Nodes[i].SubOperation != nil {
			return parent, &seed.Nodes[i]
		}
	}
	t.Fatal("the seed's plan creates its bucket in a sub-operation")
	return nil, nil
}
