package neo4jtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// busy reports whether a turn on the pool must wait.
func busy(t *testing.T, uris ...string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, release, err := takeTurn(ctx, uris)
	if err == nil {
		require.NoError(t, release())
		return false
	}
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	return true
}

// TestTurnsOnSharedServers: a turn on a shared server is one caller's,
// in this process or another, from Start to Close; a pool gives each
// caller a free server, and the next waits until one is given back.
func TestTurnsOnSharedServers(t *testing.T) {
	a := "bolt://127.0.0.1:1/" + t.Name() + time.Now().String()
	b := a + "-b"
	require.False(t, busy(t, a), "nobody holds it yet")

	first, release1, err := takeTurn(context.Background(), []string{a, b})
	require.NoError(t, err)
	require.Equal(t, a, first)
	require.True(t, busy(t, a), "a second caller of this process waits for that server")
	second, release2, err := takeTurn(context.Background(), []string{a, b})
	require.NoError(t, err)
	require.Equal(t, b, second, "the pool's free one")
	require.True(t, busy(t, a, b), "both are taken")

	require.NoError(t, release1())
	require.NoError(t, release1(), "giving back twice counts once")
	require.False(t, busy(t, a, b))
	require.NoError(t, release2())
	require.False(t, busy(t, b), "the last Close gives the turn back")
}

func TestSettingsReachTheServerAsEachStartWayTakesThem(t *testing.T) {
	set := []string{"dbms.cypher.min_replan_interval=1h", "internal.cypher.expression_engine=INTERPRETED"}
	require.Equal(t, "dbms.cypher.min_replan_interval=1h;internal.cypher.expression_engine=INTERPRETED", scriptConfig(set))
	require.Equal(t, map[string]string{
		"NEO4J_AUTH": "none",
		"NEO4J_dbms_cypher_min__replan__interval":  "1h",
		"NEO4J_internal_cypher_expression__engine": "INTERPRETED",
	}, dockerEnv(set))
}
