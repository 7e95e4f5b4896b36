package server_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/gqlws"
)

// Subscribers of one operation share each event's encoding when their
// selections are the same, while catching up as well as live; each must still receive exactly its own
// selection, under its own id, from its own cursor.
func TestSubscribersGetTheirOwnSelectionOfSharedEvents(t *testing.T) {
	env := startLive(t, 0)
	op := env.startMinio(t)
	waitForStatus(t, env, op, "WAITING")
	const timed = `subscription($op: ID!, $t: Boolean!) { e: operationEvents(operation: $op) { cursor node { sequence at @include(if: $t) } } }`

	one, two := env.dial(t, adminToken), env.dial(t, adminToken)
	require.NoError(t, one.Subscribe("all", eventsSubscription, map[string]any{"op": op}))
	require.NoError(t, one.Subscribe("from-2", eventsSubscription, map[string]any{"op": op, "after": eventCursor(2)}))
	require.NoError(t, one.Subscribe("timed", timed, map[string]any{"op": op, "t": true}))
	require.NoError(t, two.Subscribe("all", eventsSubscription, map[string]any{"op": op}))
	require.NoError(t, two.Subscribe("untimed", timed, map[string]any{"op": op, "t": false}))
	stored := len(env.storedEvents(t, op))
	got := map[string][]map[string]any{}
	// read reads until n results have come, or until ends subscriptions completed.
	read := func(c *gqlws.Conn, prefix string, n, ends int) {
		for n > 0 || ends > 0 {
			m, err := c.Next()
			require.NoError(t, err)
			if m.Type == "complete" {
				ends--
				continue
			}
			n--
			require.Equal(t, "next", m.Type, "%s", m.Payload)
			var payload struct{ Data map[string]map[string]any }
			require.NoError(t, json.Unmarshal(m.Payload, &payload))
			got[prefix+m.ID] = append(got[prefix+m.ID], payload.Data["operationEvents"], payload.Data["e"])
		}
	}
	read(one, "one/", 3*stored-2, 0) // the replay
	read(two, "two/", 2*stored, 0)
	env.approve(t, op) // live events, shared between the subscribers
	waitForStatus(t, env, op, "SUCCEEDED")
	read(one, "one/", 0, 3)
	read(two, "two/", 0, 2)
	total := len(env.storedEvents(t, op))

	check := func(name string, first int, field string, keys ...string) {
		t.Helper()
		pairs := got[name]
		require.Len(t, pairs, 2*(total-first+1), name)
		for i := 0; i < len(pairs); i += 2 {
			edge := pairs[i]
			if field == "e" {
				require.Nil(t, edge, "%s: the alias is the subscriber's own", name)
				edge = pairs[i+1]
			}
			node := edge["node"].(map[string]any)
			require.EqualValues(t, first+i/2, node["sequence"], "%s: in order, each once", name)
			require.EqualValues(t, len(keys), len(node), "%s: %v", name, node)
			for _, k := range keys {
				require.Contains(t, node, k, name)
			}
		}
	}
	check("one/all", 1, "operationEvents", "sequence", "type")
	check("two/all", 1, "operationEvents", "sequence", "type")
	check("one/from-2", 3, "operationEvents", "sequence", "type")
	check("one/timed", 1, "e", "sequence", "at")
	check("two/untimed", 1, "e", "sequence")
	// The events came from the broker, shared: the live ones as they were
	// published, the replayed ones from its recent events (live/recent.go).
	// A feed that sees a live event ahead of the last it sent (two commits
	// published out of order) fills the gap from the store, and encodes
	// what it read there alone: under load some events go that way.
	made, reused, alone := env.broker.Encodings.Made.Load(), env.broker.Encodings.Reused.Load(), env.broker.Encodings.Alone.Load()
	t.Logf("%d events, five subscriptions: %d encodings made, %d reused, %d alone", total, made, reused, alone)
	require.Equal(t, int64(5*total-2), made+reused+alone,
		"every event sent was encoded, reused or read alone (five subscriptions, one from cursor 2)")
	require.LessOrEqual(t, made, int64(3*total), "each event encoded at most once per selection (3 here)")
	require.GreaterOrEqual(t, reused, int64(2*total-2)-alone, "every event not read alone was shared by its selection's subscribers")
	require.Positive(t, reused)
}
