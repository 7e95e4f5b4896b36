package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTransportRefusalsAreTyped: what no transport serves, or serves
// badly, is refused at once with a typed error, and a bad body is never
// repeated back.
func TestTransportRefusalsAreTyped(t *testing.T) {
	ts := startServer(t)
	send := func(method, contentType, body string) (int, map[string]any, int) {
		req, err := http.NewRequest(method, ts.URL+"/graphql", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		client := &http.Client{Timeout: 5 * time.Second}
		resp, err := client.Do(req)
		require.NoError(t, err, "answered at once")
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
		return resp.StatusCode, out, len(raw)
	}
	code := func(out map[string]any) any { return get(out, "errors", 0, "extensions", "code") }

	huge := `{"query":"{viewer{actor}}","x":"` + strings.Repeat("A", 1<<20) // unterminated
	status, out, n := send(http.MethodPost, "application/json", huge)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "INVALID", code(out))
	require.Less(t, n, 1000, "the body is not repeated back")

	status, out, _ = send(http.MethodPost, "text/plain", `{"query":"{viewer{actor}}"}`)
	require.Equal(t, http.StatusUnsupportedMediaType, status)
	require.Equal(t, "INVALID", code(out))

	status, out, _ = send(http.MethodPut, "application/json", `{"query":"{viewer{actor}}"}`)
	require.Equal(t, http.StatusMethodNotAllowed, status)
	require.Equal(t, "INVALID", code(out))

	_, out, _ = send(http.MethodPost, "application/json", `{"query":"subscription { operations { id } }"}`)
	require.Equal(t, "INVALID", code(out), "a subscription over plain POST is refused, not held open")
	require.Contains(t, get(out, "errors", 0, "message"), "WebSocket")

	status, out, _ = send(http.MethodPost, "application/json; charset=utf-8", `{"query":"{ viewer { actor } }"}`)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "alice", get(out, "data", "viewer", "actor"))
}

// TestBearerSchemeIgnoresCase: "bearer", "BEARER" and "Bearer" name the
// same scheme (RFC 9110); another scheme or none is refused.
func TestBearerSchemeIgnoresCase(t *testing.T) {
	ts := startServer(t)
	for header, ok := range map[string]bool{
		"Bearer " + adminToken: true, "bearer " + adminToken: true, "BEARER " + adminToken: true,
		"Basic " + adminToken: false, adminToken: false, "Bearer": false,
	} {
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/graphql", strings.NewReader(`{"query":"{ viewer { actor } }"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", header)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, ok, resp.StatusCode == http.StatusOK, "%q: %d", header, resp.StatusCode)
	}
}
