package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/gqlws"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/server"
)

// TestNotReadyRefusesChanges: until the server is ready (its executor
// runs), queries are answered, while mutations and subscriptions are
// UNAVAILABLE; once ready, they work.
func TestNotReadyRefusesChanges(t *testing.T) {
	svc := testenv.Demo(t, testenv.Store(t))
	tokens, err := server.NewTokens([]server.Token{{Token: adminToken, Actor: "alice", Organization: testenv.Org, Roles: []string{capstan.RoleAdmin}}})
	require.NoError(t, err)
	var ready atomic.Bool
	ts := httptest.NewServer(server.Handler(server.Config{Service: svc, Tokens: tokens, Ready: ready.Load, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(ts.Close)
	mutation := createSeedIntent

	r := post(t, ts, adminToken, `{ resources(first: 1) { totalCount } }`, nil)
	require.Empty(t, r.Errors, "queries are answered")
	r = post(t, ts, adminToken, `query { resources(first: 1) { totalCount } }`, nil)
	require.Empty(t, r.Errors, "queries are answered")
	r = post(t, ts, adminToken, mutation, seedIntentVars())
	require.Equal(t, capstan.EUNAVAILABLE, r.code(), "%+v", r.Errors)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := gqlws.Dial(ctx, ts.URL+"/graphql", adminToken)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.Subscribe("1", `subscription { operations { id status } }`, nil))
	m, err := c.Next()
	require.NoError(t, err)
	var ge gqlws.Error
	require.ErrorAs(t, gqlws.Data(m, &struct{}{}), &ge)
	require.Equal(t, capstan.EUNAVAILABLE, ge.Code())

	ready.Store(true)
	r = post(t, ts, adminToken, mutation, seedIntentVars())
	require.Empty(t, r.Errors, "ready: changes are taken")
}
