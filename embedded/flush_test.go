package embedded_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/embedded"
)

// TestTheMemtableIsBoundedWhileAFlushRuns: with a flush stalled before
// its commit (a disk slower than the steps), steps of 4 KiB events go on
// until the memtable reaches its bound; the batch past it waits for the
// flush, holding the memtable within one batch of the bound, and every
// step is acknowledged and read back once the flush goes on.
func TestTheMemtableIsBoundedWhileAFlushRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const limit, payload = 64 << 10, 4 << 10
	release, waiting := make(chan struct{}), make(chan int, 1)
	s, err := embedded.Open(t.TempDir(), embedded.FlushAt(1), embedded.MemMax(limit), embedded.StallFlushes(release, waiting))
	require.NoError(t, err)
	op := startChildOperation(t, s)
	const steps = 100
	var writer sync.WaitGroup
	writer.Go(func() {
		for i := range steps {
			require.NoError(t, s.ApplyOperationChange(ctx, "acme", &capstan.OperationChange{Operation: op,
				Events: []capstan.OperationEvent{{Type: "operation.progress", Actor: "executor",
					Payload: map[string]any{"step": i, "note": strings.Repeat("x", payload)}}}}))
		}
	})
	held := <-waiting
	require.GreaterOrEqual(t, held, limit, "a batch waited before the bound")
	require.Less(t, held, limit+2*payload, "the memtable grew past its bound by more than a batch")
	close(release)
	writer.Wait()
	events, err := s.ListEvents(ctx, "acme", op.ID, 0, 0)
	require.NoError(t, err)
	require.Len(t, events, int(op.Version))
	require.EqualValues(t, steps+1, op.Version)
	require.NoError(t, s.Close())
}
