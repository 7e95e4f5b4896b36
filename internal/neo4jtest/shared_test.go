package neo4jtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// blocked reports whether another open of the URI's lock file (as another
// process would do) must wait.
func blocked(t *testing.T, uri string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	f, err := lockFile(ctx, uri)
	if err == nil {
		f.Close()
		return false
	}
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	return true
}

// TestTurnsOnASharedServer: a process holds its turn on a shared server
// from its first Start to its last Close; meanwhile every other process
// waits, and then it may go.
func TestTurnsOnASharedServer(t *testing.T) {
	uri := "bolt://127.0.0.1:1/" + t.Name() + time.Now().String()
	require.False(t, blocked(t, uri), "nobody holds it yet")

	first, err := takeTurn(context.Background(), uri)
	require.NoError(t, err)
	second, err := takeTurn(context.Background(), uri) // a second Start in the same process shares the turn
	require.NoError(t, err)
	require.True(t, blocked(t, uri), "another process waits")

	require.NoError(t, first())
	require.NoError(t, first(), "giving back twice counts once")
	require.True(t, blocked(t, uri), "still held by the second Start")
	require.NoError(t, second())
	require.False(t, blocked(t, uri), "the last Close gives the turn back")
}
