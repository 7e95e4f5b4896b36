package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/gqlws"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/live"
	"github.com/capstan-dev/capstan/server"
)

// sseEvent is one event of a GraphQL over SSE stream.
type sseEvent struct {
	name string // next or complete
	data json.RawMessage
}

// sseSubscribe posts a GraphQL request asking for an event stream and
// returns its events as they arrive (the channel closes with the body).
func sseSubscribe(t *testing.T, env *liveEnv, token, query string, vars map[string]any) (*http.Response, <-chan sseEvent) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.ts.URL+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	events := make(chan sseEvent, 1024)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				e.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data:"):
				e.data = json.RawMessage(strings.TrimSpace(strings.TrimPrefix(line, "data:")))
			case line == "" && e.name != "":
				events <- e
				e = sseEvent{}
			}
		}
	}()
	return resp, events
}

// nextSSE returns the next event, failing after 10 s.
func nextSSE(t *testing.T, events <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case e, ok := <-events:
		require.True(t, ok, "the stream closed without complete")
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
		return sseEvent{}
	}
}

// readSSEEvents reads timeline edges until n of them or the stream's
// complete; it returns them and the last event read.
func readSSEEvents(t *testing.T, events <-chan sseEvent, n int) ([]eventEdge, sseEvent) {
	t.Helper()
	var got []eventEdge
	for n < 0 || len(got) < n {
		e := nextSSE(t, events)
		if e.name != "next" {
			return got, e
		}
		var r struct {
			Data   eventEdge
			Errors []map[string]any
		}
		require.NoError(t, json.Unmarshal(e.data, &r))
		require.Empty(t, r.Errors, "%s", e.data)
		got = append(got, r.Data)
	}
	return got, sseEvent{}
}

func TestSSEStreamsAnOperationsTimeline(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	env := startLive(t, 0)
	op := env.startMinio(t)
	waitForStatus(t, env, op, "WAITING")

	resp, events := sseSubscribe(t, env, adminToken, eventsSubscription, map[string]any{"op": op})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	stored := env.storedEvents(t, op)
	replayed, _ := readSSEEvents(t, events, len(stored))
	requireContiguous(t, replayed, 1)

	env.approve(t, op)
	rest, end := readSSEEvents(t, events, -1)
	require.Equal(t, "complete", end.name, "the stream completes after the operation's final change")
	all := append(replayed, rest...)
	requireContiguous(t, all, 1)
	require.Len(t, all, len(env.storedEvents(t, op)), "every stored event, each once")
	_, open := <-events
	require.False(t, open, "the response ends after complete")
	env.ts.CloseClientConnections()
}

func TestSSEResumesFromACursor(t *testing.T) {
	env := startLive(t, 0)
	op := env.startMinio(t)
	waitForStatus(t, env, op, "WAITING")
	stored := env.storedEvents(t, op)
	require.Greater(t, len(stored), 2)
	after := stored[1].Sequence
	_, events := sseSubscribe(t, env, adminToken, eventsSubscription, map[string]any{"op": op, "after": eventCursor(after)})
	got, _ := readSSEEvents(t, events, len(stored)-2)
	requireContiguous(t, got, after+1)
}

func TestSSERefusesWithoutTokenAndAnswersQueries(t *testing.T) {
	env := startLive(t, 0)
	resp, _ := sseSubscribe(t, env, "", `subscription { operations { id } }`, nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	op := env.startMinio(t)
	_, events := sseSubscribe(t, env, otherToken, eventsSubscription, map[string]any{"op": op})
	e := nextSSE(t, events)
	require.Equal(t, "next", e.name)
	require.Contains(t, string(e.data), capstan.ENOTFOUND, "another organization's operation does not exist for the caller")
	require.Equal(t, "complete", nextSSE(t, events).name)

	_, events = sseSubscribe(t, env, adminToken, `query { __typename }`, nil)
	e = nextSSE(t, events)
	require.JSONEq(t, `{"data":{"__typename":"Query"}}`, string(e.data))
	require.Equal(t, "complete", nextSSE(t, events).name)
}

func TestSSERevokedTokenEndsTheStreamWithUnauthenticated(t *testing.T) {
	env := startLive(t, 0)
	_, events := sseSubscribe(t, env, adminToken, `subscription { operations { id } }`, nil)
	require.Eventually(t, func() bool { return env.broker.Subscribers() == 1 }, 5*time.Second, 5*time.Millisecond)
	fresh, err := server.NewTokens([]server.Token{{Token: sreToken, Actor: "bob", Organization: testenv.Org, Roles: []string{capstan.RoleSRE}}})
	require.NoError(t, err)
	env.tokens.Replace(fresh) // alice's token is gone
	e := nextSSE(t, events)
	require.Equal(t, "next", e.name)
	require.Contains(t, string(e.data), capstan.EUNAUTHENTICATED)
	require.Equal(t, "complete", nextSSE(t, events).name)
}

func TestSSEShutdownCompletesTheStream(t *testing.T) {
	env := startLive(t, 0)
	op := env.startMinio(t)
	waitForStatus(t, env, op, "WAITING")
	_, events := sseSubscribe(t, env, adminToken, eventsSubscription, map[string]any{"op": op})
	stored := env.storedEvents(t, op)
	readSSEEvents(t, events, len(stored))
	env.broker.Close()
	require.Equal(t, "complete", nextSSE(t, events).name)
	_, open := <-events
	require.False(t, open, "the response ends")
	require.Equal(t, 0, env.broker.Subscribers())
}

func TestSSESlowConsumerGetsOverflowWithItsCursor(t *testing.T) {
	env := startLive(t, 8)
	op := env.startMinio(t)
	waitForStatus(t, env, op, "WAITING")
	stored := env.storedEvents(t, op)
	_, events := sseSubscribe(t, env, adminToken, eventsSubscription, map[string]any{"op": op})
	replayed, _ := readSSEEvents(t, events, len(stored))
	// The feed is live once its replay ends: only then does the burst
	// reach it through the publish (a replaying feed that falls behind
	// reads the store again, which has none of these events).
	require.Eventually(t, func() bool { return env.broker.Replays.Load() == 0 }, 10*time.Second, time.Millisecond)

	// A burst far faster than the stream writes (synthetic events: only
	// the broker sees them).
	opID, org := localOperationID(t, op), testenv.Org
	current, err := env.store.GetOperation(context.Background(), org, opID)
	require.NoError(t, err)
	for i := 1; i <= 20000; i++ {
		env.broker.Publish(live.Message{Org: org, Operation: *current, Events: []capstan.OperationEvent{
			{Sequence: int64(len(stored) + i), Type: "synthetic", Actor: "test"}}})
	}
	all := replayed
	for {
		e := nextSSE(t, events)
		require.Equal(t, "next", e.name, "the stream says why it ends before complete")
		var r struct {
			Data   eventEdge
			Errors []gqlws.Error
		}
		require.NoError(t, json.Unmarshal(e.data, &r))
		if len(r.Errors) == 0 {
			all = append(all, r.Data)
			continue
		}
		require.Equal(t, "OVERFLOW", r.Errors[0].Code())
		require.Equal(t, all[len(all)-1].OperationEvents.Cursor, r.Errors[0].Extensions["cursor"], "resume from the last event received")
		break
	}
	requireContiguous(t, all, 1)
	require.Less(t, len(all), len(stored)+20000, "the burst did overflow")
	require.Equal(t, "complete", nextSSE(t, events).name)
}
