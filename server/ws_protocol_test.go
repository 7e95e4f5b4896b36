package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	gorilla "github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/server"
)

// rawDial opens a graphql-transport-ws connection without initialising it.
func rawDial(t *testing.T, env *liveEnv, header http.Header) (*gorilla.Conn, *http.Response, error) {
	t.Helper()
	d := gorilla.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}
	ws, resp, err := d.Dial("ws"+strings.TrimPrefix(env.ts.URL, "http")+"/graphql", header)
	if err == nil {
		t.Cleanup(func() { ws.Close() })
	}
	return ws, resp, err
}

func initialised(t *testing.T, env *liveEnv) *gorilla.Conn {
	t.Helper()
	ws, _, err := rawDial(t, env, nil)
	require.NoError(t, err)
	require.NoError(t, ws.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + adminToken}}))
	var ack struct{ Type string }
	require.NoError(t, ws.ReadJSON(&ack))
	require.Equal(t, "connection_ack", ack.Type)
	return ws
}

// closeCode reads until the server closes and returns its close code.
func closeCode(t *testing.T, ws *gorilla.Conn) int {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			var ce *gorilla.CloseError
			require.ErrorAs(t, err, &ce, "the server closes with a code")
			return ce.Code
		}
	}
}

func TestWebSocketProtocolViolationsCloseWithTheirCodes(t *testing.T) {
	env := startLive(t, 0, func(c *server.Config) { c.InitTimeout = 200 * time.Millisecond })

	silent, _, err := rawDial(t, env, nil)
	require.NoError(t, err)
	require.Equal(t, 4408, closeCode(t, silent), "no connection_init in time")

	early, _, err := rawDial(t, env, nil)
	require.NoError(t, err)
	require.NoError(t, early.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "{ __typename }"}}))
	require.Equal(t, 4401, closeCode(t, early), "subscribe before connection_init")

	twice := initialised(t, env)
	require.NoError(t, twice.WriteJSON(map[string]any{"type": "connection_init"}))
	require.Equal(t, 4429, closeCode(t, twice))

	dup := initialised(t, env)
	sub := map[string]any{"id": "a", "type": "subscribe", "payload": map[string]any{"query": "subscription { operations { id } }"}}
	require.NoError(t, dup.WriteJSON(sub))
	require.NoError(t, dup.WriteJSON(sub))
	require.Equal(t, 4409, closeCode(t, dup), "a second subscriber with the same id")

	garbage := initialised(t, env)
	require.NoError(t, garbage.WriteMessage(gorilla.TextMessage, []byte("{not json")))
	require.Equal(t, 4400, closeCode(t, garbage))

	big := initialised(t, env)
	require.NoError(t, big.WriteMessage(gorilla.TextMessage, []byte(`{"type":"ping","payload":"`+strings.Repeat("x", server.MaxMessageBytes)+`"}`)))
	require.Equal(t, gorilla.CloseMessageTooBig, closeCode(t, big))
}

func TestWebSocketOrigins(t *testing.T) {
	env := startLive(t, 0, func(c *server.Config) { c.AllowedOrigins = []string{"*.example.com"} })
	_, resp, err := rawDial(t, env, http.Header{"Origin": {"https://evil.test"}})
	require.Error(t, err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "a browser page from another site may not connect")
	_, _, err = rawDial(t, env, http.Header{"Origin": {"https://dash.example.com"}})
	require.NoError(t, err, "an allowed origin")
	_, _, err = rawDial(t, env, http.Header{"Origin": {env.ts.URL}})
	require.NoError(t, err, "the server's own origin")
}

func TestWebSocketQueriesPingAndClientComplete(t *testing.T) {
	env := startLive(t, 0)
	ws := initialised(t, env)
	type msg struct {
		Type    string
		ID      string
		Payload map[string]any
	}
	read := func() msg {
		var m msg
		require.NoError(t, ws.SetReadDeadline(time.Now().Add(5*time.Second)))
		require.NoError(t, ws.ReadJSON(&m))
		return m
	}

	require.NoError(t, ws.WriteJSON(map[string]any{"type": "ping"}))
	require.Equal(t, "pong", read().Type)

	require.NoError(t, ws.WriteJSON(map[string]any{"id": "q", "type": "subscribe", "payload": map[string]any{"query": "{ __typename }"}}))
	next := read()
	require.Equal(t, msg{Type: "next", ID: "q", Payload: map[string]any{"data": map[string]any{"__typename": "Query"}}}, next, "a query over the socket")
	require.Equal(t, msg{Type: "complete", ID: "q"}, read())

	require.NoError(t, ws.WriteJSON(map[string]any{"id": "bad", "type": "subscribe", "payload": map[string]any{"query": "subscription { nope }"}}))
	invalid := read()
	require.Equal(t, "bad", invalid.ID)
	require.Contains(t, []string{"next", "error"}, invalid.Type, "an invalid document is answered with its errors")

	require.NoError(t, ws.WriteJSON(map[string]any{"id": "s", "type": "subscribe", "payload": map[string]any{"query": "subscription { operations { id } }"}}))
	require.Eventually(t, func() bool { return env.broker.Subscribers() == 1 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, ws.WriteJSON(map[string]any{"id": "s", "type": "complete"}))
	require.Eventually(t, func() bool { return env.broker.Subscribers() == 0 }, 5*time.Second, 5*time.Millisecond, "a completed subscription stops following")
	env.startMinio(t) // an operation changes: nothing more arrives for "s"
	require.NoError(t, ws.WriteJSON(map[string]any{"type": "ping"}))
	for {
		m := read()
		require.NotEqual(t, "s", m.ID, "nothing after the client's complete: %+v", m)
		if m.Type == "pong" {
			break
		}
	}
}

// Keep-alive: each connection gets a WebSocket ping frame and its
// protocol's own keep-alive message (ping, or ka for the legacy one).
func TestKeepaliveReachesBothProtocols(t *testing.T) {
	env := startLive(t, 0, func(c *server.Config) { c.PingInterval = 200 * time.Millisecond })
	for proto, want := range map[string]string{"graphql-transport-ws": "ping", "graphql-ws": "ka"} {
		d := gorilla.Dialer{Subprotocols: []string{proto}, HandshakeTimeout: 5 * time.Second}
		ws, _, err := d.Dial("ws"+strings.TrimPrefix(env.ts.URL, "http")+"/graphql", nil)
		require.NoError(t, err)
		frames := make(chan struct{}, 16)
		ws.SetPingHandler(func(string) error { frames <- struct{}{}; return nil })
		require.NoError(t, ws.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + adminToken}}))
		_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		var types []string
		for len(types) < 3 {
			var m struct{ Type string }
			require.NoError(t, ws.ReadJSON(&m), proto) // ping frames are handled while reading
			types = append(types, m.Type)
		}
		require.Equal(t, []string{"connection_ack", want, want}, types, proto)
		require.GreaterOrEqual(t, len(frames), 2, "%s: a ping frame with each keep-alive message", proto)
		ws.Close()
	}
}
