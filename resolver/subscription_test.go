package resolver

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/service"
)

// busyStore answers UNAVAILABLE to the first reads of an operation, as a
// Neo4j whose connections a burst of subscriptions has taken does.
type busyStore struct {
	capstan.Store
	busy atomic.Int32
}

func (s *busyStore) GetOperation(ctx context.Context, org, id string) (*capstan.Operation, error) {
	if s.busy.Add(-1) >= 0 {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "neo4j is not reachable; try again")
	}
	return &capstan.Operation{Meta: capstan.Meta{ID: id, OrganizationID: org}, Status: capstan.OperationRunning}, nil
}

// TestASubscriptionWaitsForABusyStore: a subscription whose operation
// cannot be read at once (UNAVAILABLE twice) starts once it can; an id
// that is not an operation's is refused at once.
func TestASubscriptionWaitsForABusyStore(t *testing.T) {
	store := &busyStore{Store: testenv.Store(t)}
	store.busy.Store(2)
	r := &Resolver{Service: service.New(store, slog.New(slog.NewTextHandler(io.Discard, nil))), Broker: live.NewBroker(0)}
	ctx := testenv.Admin(testenv.Org)
	_, op, err := r.liveOperation(ctx, capstan.GlobalID(kindOperation, "op-1"))
	require.NoError(t, err, "the subscription ended while the store was busy")
	require.Equal(t, "op-1", op.ID)
	require.EqualValues(t, -1, store.busy.Load(), "read three times")

	_, _, err = r.liveOperation(ctx, capstan.GlobalID(capstan.KindResource, "r-1"))
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "not an operation's id: %v", err)
}
