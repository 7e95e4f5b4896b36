package testenv

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func actor(org, id string, roles ...string) context.Context {
	return capstan.WithActor(context.Background(), &capstan.Actor{ID: id, OrganizationID: org, Roles: roles})
}

// TwoPatchesOnOneBase runs, on any store, the races of governed change:
// two patches proposed on one base revision of a running prod operation,
// the first approved by two people at once. Each approval counts once
// (the one that lost the race is a CONFLICT that recorded nothing), the
// first patch applies as revision 2, and the second becomes STALE: its
// approval would apply nothing.
func TwoPatchesOnOneBase(t *testing.T, store capstan.Store, org string) {
	svc := DemoIn(t, store, org)
	alice := actor(org, "alice", capstan.RoleOperator)
	in := SeedIntent()
	in.Mode = capstan.ModeAdvanced
	i, err := svc.CreateIntent(alice, in)
	require.NoError(t, err)
	p, err := svc.PlanIntent(alice, i.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PlanReady, p.Status, "%v", p.Problems)
	op, err := svc.StartOperation(alice, p.ID, "")
	require.NoError(t, err)
	propose := func(id string) *capstan.PlanPatch {
		pt, err := svc.ProposePlanPatch(alice, op.ID, 1, []capstan.PlanChange{{Op: capstan.ChangeInsertAfter, Node: "verify-tracing", Template: "smoke-test", NodeID: id}}, id)
		require.NoError(t, err)
		require.Equal(t, capstan.PatchProposed, pt.Status)
		return pt
	}
	one, two := propose("smoke-1"), propose("smoke-2")

	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := map[string]error{}
	for _, who := range []string{"bob", "carol"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.DecidePlanPatch(actor(org, who, capstan.RoleSRE), one.ID, true, "", one.Digest)
			mu.Lock()
			errs[who] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	got, err := svc.PlanPatch(alice, one.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PatchApplied, got.Status)
	require.Equal(t, 2, got.AppliedRevision)
	seen := map[string]int{}
	for _, d := range got.Decisions {
		seen[d.Actor]++
	}
	for who, err := range errs {
		if err == nil {
			require.Equal(t, 1, seen[who], "%s's approval counts once", who)
		} else {
			require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "%v", err)
			require.Zero(t, seen[who], "a decision that lost the race recorded nothing")
		}
	}
	stale, err := svc.PlanPatch(alice, two.ID)
	require.NoError(t, err)
	require.Equal(t, capstan.PatchStale, stale.Status)
	_, err = svc.DecidePlanPatch(actor(org, "bob", capstan.RoleSRE), two.ID, true, "", two.Digest)
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))
	plan, err := store.GetPlan(context.Background(), org, p.ID)
	require.NoError(t, err)
	require.Equal(t, 2, plan.Revision)
	require.NotNil(t, plan.Node("smoke-1"))
	require.Nil(t, plan.Node("smoke-2"), "the stale patch changed nothing")
	cur, err := store.GetOperation(context.Background(), org, op.ID)
	require.NoError(t, err)
	require.Equal(t, 2, cur.PlanRevision)
	require.Empty(t, cur.OpenPatches)
}
