package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/backup"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/server"
)

// TestBackupsAreForAdminsOneAtATime checks /admin/backup's guards: a
// token, the admin role, one backup at a time, and a failure before
// the first byte answered as a typed error.
func TestBackupsAreForAdminsOneAtATime(t *testing.T) {
	const viewer = "backup-viewer-token-0123456789"
	tokens, err := server.NewTokens([]server.Token{
		{Token: adminToken, Actor: "alice", Organization: testenv.Org, Roles: []string{capstan.RoleAdmin}},
		{Token: viewer, Actor: "vic", Organization: testenv.Org, Roles: []string{capstan.RoleViewer}},
	})
	require.NoError(t, err)
	entered, release := make(chan string, 1), make(chan struct{})
	fail, torn := false, 0
	write := func(ctx context.Context, org string, w io.Writer) error {
		if fail {
			return capstan.Errorf(capstan.EUNAVAILABLE, "the store is down")
		}
		if torn > 0 {
			torn--
			w.Write([]byte("half a dump"))
			return &capstan.Error{Code: capstan.EUNAVAILABLE, Err: fmt.Errorf("%w: resource x is missing", backup.ErrTorn)}
		}
		entered <- org
		<-release
		_, err := w.Write([]byte("backup of " + org))
		return err
	}
	svc := testenv.Demo(t, testenv.Store(t))
	ts := httptest.NewServer(server.Handler(server.Config{Service: svc, Tokens: tokens, Log: slog.New(slog.DiscardHandler), Backup: write}))
	defer ts.Close()
	get := func(bearer string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/admin/backup", nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	code := func(body string) string {
		var e struct {
			Errors []struct{ Extensions map[string]any }
		}
		require.NoError(t, json.Unmarshal([]byte(body), &e), body)
		return e.Errors[0].Extensions["code"].(string)
	}

	resp, body := get("")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, capstan.EUNAUTHENTICATED, code(body))
	resp, body = get(viewer)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, capstan.EFORBIDDEN, code(body))

	first := make(chan string)
	go func() {
		resp, body := get(adminToken)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "application/gzip", resp.Header.Get("Content-Type"))
		require.Contains(t, resp.Header.Get("Content-Disposition"), "capstan-"+testenv.Org+"-")
		first <- body
	}()
	require.Equal(t, testenv.Org, <-entered, "the backup is of the token's organization")
	resp, body = get(adminToken)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "one backup at a time")
	require.Equal(t, capstan.ERATELIMITED, code(body))
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
	close(release)
	require.Equal(t, "backup of "+testenv.Org, <-first)

	// A dump that read a write half-way is taken again; what the client
	// gets is the whole last one.
	torn = 2
	release = make(chan struct{})
	go func(release chan struct{}) { <-entered; release <- struct{}{} }(release)
	resp, body = get(adminToken)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "backup of "+testenv.Org, body)

	req, _ := http.NewRequest(http.MethodHead, ts.URL+"/admin/backup", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	head, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	head.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, head.StatusCode, "HEAD takes no backup")

	fail = true
	resp, body = get(adminToken)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, capstan.EUNAVAILABLE, code(body))
	require.Empty(t, resp.Header.Get("Content-Disposition"))
}
