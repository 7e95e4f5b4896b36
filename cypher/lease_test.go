package cypher_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
)

// claim takes or extends one lease for holder and reports whether holder
// has it, with the lease as it is.
func claim(t *testing.T, s interface {
	ClaimLeases(context.Context, string, []string, time.Duration) ([]capstan.LeaseHolder, error)
}, holder, key string, ttl time.Duration) (bool, capstan.LeaseHolder) {
	t.Helper()
	got, err := s.ClaimLeases(context.Background(), holder, []string{key}, ttl)
	require.NoError(t, err)
	require.Len(t, got, 1)
	return got[0].ID == holder, got[0]
}

// TestShardLeases: one holder at a time per key; the holder extends its
// own lease; another takes it once it is released or has expired; keys
// are independent.
func TestShardLeases(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	a, b := "a-"+capstan.NewID(), "b-"+capstan.NewID()
	require.NoError(t, clearLease(ctx))

	held, cur := claim(t, s, a, "shard-00", time.Minute)
	require.True(t, held)
	require.Equal(t, a, cur.ID)
	require.Equal(t, "shard-00", cur.Key)
	require.WithinDuration(t, time.Now().Add(time.Minute), cur.Until, 5*time.Second)

	held, cur = claim(t, s, b, "shard-00", time.Minute)
	require.False(t, held, "a holds it")
	require.Equal(t, a, cur.ID, "the answer names the holder")
	held, _ = claim(t, s, b, "shard-01", time.Minute)
	require.True(t, held, "another key is another lease")

	held, _ = claim(t, s, a, "shard-00", time.Minute)
	require.True(t, held, "the holder extends it")

	require.NoError(t, s.ReleaseLeases(ctx, b, []string{"shard-00"}), "releasing a lease one does not hold does nothing")
	held, _ = claim(t, s, b, "shard-00", time.Minute)
	require.False(t, held)
	require.NoError(t, s.ReleaseLeases(ctx, a, []string{"shard-00"}))
	held, _ = claim(t, s, b, "shard-00", 200*time.Millisecond)
	require.True(t, held, "released: the next takes it at once")

	untilExpired(t, s, "shard-00")
	held, _ = claim(t, s, a, "shard-00", time.Minute)
	require.True(t, held, "expired: the next takes it")

	all, now, err := s.ExecutorLeases(ctx)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), now, 5*time.Second)
	require.Len(t, all, 2)

	_, err = s.ClaimLeases(ctx, "", []string{"shard-00"}, time.Minute)
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
}

// TestShardLeaseOneWinner: holders racing for the same free leases (in
// any order): each lease has exactly one winner, and none deadlocks.
func TestShardLeaseOneWinner(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, clearLease(ctx))
	const n = 8
	keys := []string{"shard-00", "shard-01", "shard-02", "shard-03"}
	won := make(chan map[string]string, n)
	for i := range n {
		s := open(t)
		holder := "racer-" + capstan.NewID() + "-" + string(rune('a'+i))
		mine := append([]string(nil), keys...)
		if i%2 == 1 {
			slices.Reverse(mine)
		}
		go func() {
			got, err := s.ClaimLeases(ctx, holder, mine, time.Minute)
			out := map[string]string{}
			for _, l := range got {
				if err == nil && l.ID == holder {
					out[l.Key] = holder
				}
			}
			won <- out
		}()
	}
	winners := map[string]int{}
	for range n {
		for k := range <-won {
			winners[k]++
		}
	}
	require.Equal(t, map[string]int{"shard-00": 1, "shard-01": 1, "shard-02": 1, "shard-03": 1}, winners)
	require.NoError(t, clearLease(ctx))
}

// TestExecutorMembers: members announce themselves for a term, are
// listed in order while they renew, and are gone once they leave or
// expire.
func TestExecutorMembers(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, clearLease(ctx))
	a, b := "a-"+capstan.NewID(), "b-"+capstan.NewID()
	// b's term is long enough for a's join to find it on a busy machine,
	// and short enough to wait out.
	members, err := s.JoinExecutors(ctx, b, 2*time.Second)
	require.NoError(t, err)
	require.Equal(t, []string{b}, members)
	members, err = s.JoinExecutors(ctx, a, time.Minute)
	require.NoError(t, err)
	require.Equal(t, []string{a, b}, members, "sorted")
	require.Eventually(t, func() bool { // by the database's clock
		members, err = s.JoinExecutors(ctx, a, time.Minute)
		return err == nil && slices.Equal(members, []string{a})
	}, 10*time.Second, 50*time.Millisecond, "b expired: %v %v", members, err)
	require.NoError(t, s.LeaveExecutors(ctx, a))
	members, err = s.JoinExecutors(ctx, b, time.Minute)
	require.NoError(t, err)
	require.Equal(t, []string{b}, members, "a left")
	_, err = s.JoinExecutors(ctx, "", time.Minute)
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	require.NoError(t, clearLease(ctx))
}

// clearLease removes the lease node, as on a new database.
func clearLease(ctx context.Context) error {
	driver, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	if err != nil {
		return err
	}
	defer driver.Close(ctx)
	_, err = neo4j.ExecuteQuery(ctx, driver, `MATCH (l) WHERE l:ExecutorLease OR l:ExecutorMember DETACH DELETE l`, nil, neo4j.EagerResultTransformer)
	return err
}

// TestFencedWrites: every grant of the lease to another holder gives it
// a new fencing token; an operation write under an old grant is refused
// (typed, in the write's own transaction), on the single-statement path
// (a step this store wrote last) and the locked one alike; writes under
// the current grant, and writes carrying no fence (a person's), pass.
func TestFencedWrites(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, clearLease(ctx))
	t.Cleanup(func() { _ = clearLease(ctx) })
	a, b := "a-"+capstan.NewID(), "b-"+capstan.NewID()
	held, first := claim(t, s, a, "shard-05", 200*time.Millisecond)
	require.True(t, held)
	_, again := claim(t, s, a, "shard-05", time.Minute)
	require.Equal(t, first.Token, again.Token, "a renewal is the same grant")
	asA := &capstan.Fence{Key: "shard-05", Holder: a, Token: first.Token}

	org := "fence-" + capstan.NewID()[12:]
	op := startedOperation(t, s, org)
	step := func(fence *capstan.Fence, typ string) error {
		return s.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: op, Fence: fence, Events: []capstan.OperationEvent{{Type: typ, Actor: "executor"}}})
	}
	require.NoError(t, step(asA, "a.1"), "the holder writes")
	require.NoError(t, step(asA, "a.2"), "again, on the single-statement path")

	claim(t, s, a, "shard-05", time.Millisecond) // a's last renewal, and then a stalls past it
	untilExpired(t, s, "shard-05")
	err := step(asA, "a.expired")
	require.True(t, capstan.IsFenced(err), "a lease that ran out fences its holder's writes, before anyone takes it: %v", err)
	require.Contains(t, capstan.ErrorMessage(err), "ran out at")
	held, second := claim(t, s, b, "shard-05", time.Minute) // b takes it
	require.True(t, held)
	require.Equal(t, first.Token+1, second.Token, "a grant to another holder is a new token")

	err = step(asA, "a.late")
	require.True(t, capstan.IsFenced(err), "the deposed holder's write is refused: %v", err)
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))
	require.Contains(t, capstan.ErrorMessage(err), b)
	startChild := func(fence *capstan.Fence) (*capstan.Operation, error) {
		plan := readyPlan(t, s, org)
		child := &capstan.Operation{IntentID: plan.IntentID, PlanID: plan.ID, PlanRevision: 1, Action: "install", Status: capstan.OperationPending,
			Actor: "alice", ParentID: op.ID, IdempotencyKey: op.ID + "/n/1"}
		return child, s.StartOperation(ctx, org, child, plan, nil, []capstan.OperationEvent{{Type: "operation.created", Actor: "alice"}}, fence)
	}
	late, err := startChild(asA)
	require.True(t, capstan.IsFenced(err), "the deposed holder starts no child: %v", err)
	_, err = s.GetOperationByKey(ctx, org, late.IdempotencyKey)
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err), "nothing of the refused start is written")
	plan, err := s.GetPlan(ctx, org, late.PlanID)
	require.NoError(t, err)
	require.Equal(t, capstan.PlanReady, plan.Status, "its plan is not moved to running")
	_, err = startChild(&capstan.Fence{Key: "shard-05", Holder: b, Token: second.Token})
	require.NoError(t, err, "the new holder starts it")
	require.NoError(t, step(&capstan.Fence{Key: "shard-05", Holder: b, Token: second.Token}, "b.1"), "the new holder writes")
	require.NoError(t, step(nil, "person.1"), "a write without a fence (a person's, through the API) is not an executor's")
	err = step(asA, "a.later")
	require.True(t, capstan.IsFenced(err), "still refused after b wrote (the locked path): %v", err)

	events, err := s.ListEvents(ctx, org, op.ID, 0, 100)
	require.NoError(t, err)
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	require.Equal(t, []string{"operation.created", "a.1", "a.2", "b.1", "person.1"}, types, "nothing of a's after b's grant")

	// Released and taken again by the same holder: a new grant too.
	require.NoError(t, s.ReleaseLeases(ctx, b, []string{"shard-05"}))
	_, third := claim(t, s, b, "shard-05", time.Minute)
	require.Equal(t, second.Token+1, third.Token)
	other := &capstan.Fence{Key: "shard-06", Holder: b, Token: third.Token}
	require.True(t, capstan.IsFenced(step(other, "b.other-shard")), "a grant of one shard is no grant of another")
	require.NoError(t, op.Move(capstan.OperationCancelled))
	require.NoError(t, step(nil, "operation.cancelled"))
}

// untilExpired waits until the lease's end is past by the database's
// clock, the one its holders are judged by.
func untilExpired(t *testing.T, s *cypher.Store, key string) {
	t.Helper()
	require.Eventually(t, func() bool {
		all, now, err := s.ExecutorLeases(context.Background())
		require.NoError(t, err)
		for _, l := range all {
			if l.Key == key {
				return now.After(l.Until)
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "the lease %s never ran out", key)
}
