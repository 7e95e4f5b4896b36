package cypher

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
)

// TestCancelledIsTheContextsError: a statement that failed because its
// context ended reports the context's error (mapped to UNAVAILABLE), not
// the driver's connection error (which would be INTERNAL and logged as a
// failure); errors of our own and failures under a live context stay.
func TestCancelledIsTheContextsError(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	readCancelled := errors.New("Reading from connection has been canceled: context canceled") // the driver's, without Unwrap
	conflict := capstan.Errorf(capstan.ECONFLICT, "stale")
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want error
	}{
		{"no error", ended, nil, nil},
		{"driver error, live context", live, readCancelled, readCancelled},
		{"driver error, ended context", ended, readCancelled, context.Canceled},
		{"our own error, ended context", ended, conflict, conflict},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, cancelled(c.ctx, c.err))
		})
	}
	var logged testenv.SyncBuffer
	s := &Store{log: slog.New(slog.NewTextHandler(&logged, nil))}
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(s.mapErr(ended, "op", readCancelled)))
	require.Empty(t, logged.String(), "a caller that went away is not Neo4j's failure")
	timedOut := &neo4j.ConnectivityError{Inner: errors.New("i/o timeout")}
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(s.mapErr(live, "cypher.CreatePlan", timedOut)))
	require.Contains(t, logged.String(), "neo4j unavailable", "the client's UNAVAILABLE has its cause in the log")
	require.Contains(t, logged.String(), "op=cypher.CreatePlan")
	require.Contains(t, logged.String(), "i/o timeout")
	said := logged.String()
	s.mapErr(live, "cypher.GetPlan", timedOut)
	require.Equal(t, said, logged.String(), "once until a call succeeds: an outage fails every call")
	require.NoError(t, s.mapErr(live, "cypher.GetPlan", nil))
	s.mapErr(live, "cypher.GetPlan", timedOut)
	require.Contains(t, logged.String(), "op=cypher.GetPlan", "said again after a success")
}
