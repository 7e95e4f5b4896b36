package cypher

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
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
	s := &Store{}
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(s.mapErr(ended, "op", readCancelled)))
}
