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
