package cypher_test

import (
	"context"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// TestExecutorLease: one holder at a time; the holder extends its own
// lease; another takes it once it is released or has expired.
func TestExecutorLease(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	a, b := "a-"+capstan.NewID(), "b-"+capstan.NewID()
	require.NoError(t, clearLease(ctx))

	held, cur, err := s.AcquireExecutorLease(ctx, a, time.Minute)
	require.NoError(t, err)
	require.True(t, held)
	require.Equal(t, a, cur.ID)
	require.WithinDuration(t, time.Now().Add(time.Minute), cur.Until, 5*time.Second)

	held, cur, err = s.AcquireExecutorLease(ctx, b, time.Minute)
	require.NoError(t, err)
	require.False(t, held, "a holds it")
	require.Equal(t, a, cur.ID, "the answer names the holder")

	held, _, err = s.AcquireExecutorLease(ctx, a, time.Minute)
	require.NoError(t, err)
	require.True(t, held, "the holder extends it")

	require.NoError(t, s.ReleaseExecutorLease(ctx, b), "releasing a lease one does not hold does nothing")
	held, _, err = s.AcquireExecutorLease(ctx, b, time.Minute)
	require.NoError(t, err)
	require.False(t, held)
	require.NoError(t, s.ReleaseExecutorLease(ctx, a))
	held, _, err = s.AcquireExecutorLease(ctx, b, 200*time.Millisecond)
	require.NoError(t, err)
	require.True(t, held, "released: the next takes it at once")

	time.Sleep(400 * time.Millisecond)
	held, _, err = s.AcquireExecutorLease(ctx, a, time.Minute)
	require.NoError(t, err)
	require.True(t, held, "expired: the next takes it")
	require.NoError(t, s.ReleaseExecutorLease(ctx, a))

	_, _, err = s.AcquireExecutorLease(ctx, "", time.Minute)
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
}

// TestExecutorLeaseOneWinner: holders racing for a free lease: exactly one
// gets it.
func TestExecutorLeaseOneWinner(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, clearLease(ctx))
	const n = 8
	won := make(chan bool, n)
	for i := range n {
		s := open(t)
		holder := "racer-" + capstan.NewID() + "-" + string(rune('a'+i))
		go func() {
			held, _, err := s.AcquireExecutorLease(ctx, holder, time.Minute)
			won <- err == nil && held
		}()
	}
	winners := 0
	for range n {
		if <-won {
			winners++
		}
	}
	require.Equal(t, 1, winners)
	require.NoError(t, clearLease(ctx))
}

// clearLease removes the lease node, as on a new database.
func clearLease(ctx context.Context) error {
	driver, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	if err != nil {
		return err
	}
	defer driver.Close(ctx)
	_, err = neo4j.ExecuteQuery(ctx, driver, `MATCH (l:ExecutorLease) DETACH DELETE l`, nil, neo4j.EagerResultTransformer)
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
	held, first, err := s.AcquireExecutorLease(ctx, a, 200*time.Millisecond)
	require.NoError(t, err)
	require.True(t, held)
	_, again, err := s.AcquireExecutorLease(ctx, a, 200*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, first.Token, again.Token, "a renewal is the same grant")
	asA := capstan.WithFence(ctx, capstan.Fence{Holder: a, Token: first.Token})

	org := "fence-" + capstan.NewID()[12:]
	op := startedOperation(t, s, org)
	step := func(ctx context.Context, typ string) error {
		return s.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{{Type: typ, Actor: "executor"}}})
	}
	require.NoError(t, step(asA, "a.1"), "the holder writes")
	require.NoError(t, step(asA, "a.2"), "again, on the single-statement path")

	time.Sleep(400 * time.Millisecond) // a stalls past its lease; b takes it
	held, second, err := s.AcquireExecutorLease(ctx, b, time.Minute)
	require.NoError(t, err)
	require.True(t, held)
	require.Equal(t, first.Token+1, second.Token, "a grant to another holder is a new token")

	err = step(asA, "a.late")
	require.True(t, capstan.IsFenced(err), "the deposed holder's write is refused: %v", err)
	require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err))
	require.Contains(t, capstan.ErrorMessage(err), b)
	require.NoError(t, step(capstan.WithFence(ctx, capstan.Fence{Holder: b, Token: second.Token}), "b.1"), "the new holder writes")
	require.NoError(t, step(ctx, "person.1"), "a write without a fence (a person's, through the API) is not an executor's")
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
	require.NoError(t, s.ReleaseExecutorLease(ctx, b))
	_, third, err := s.AcquireExecutorLease(ctx, b, time.Minute)
	require.NoError(t, err)
	require.Equal(t, second.Token+1, third.Token)
	require.NoError(t, op.Move(capstan.OperationCancelled))
	require.NoError(t, step(ctx, "operation.cancelled"))
}
