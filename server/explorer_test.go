package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/server"
)

// TestResourceBoundBy lists the plans that bind a resource as a provider:
// newest first, bounded by first, never another organization's.
func TestResourceBoundBy(t *testing.T) {
	ts := startServer(t)
	var plans []any
	for range 2 {
		created := post(t, ts, adminToken, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", scenario: "minio.install@1.0.0", desiredResult: {name: "bound"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`, nil)
		require.Empty(t, created.Errors)
		planned := post(t, ts, adminToken, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id bindings { key provider { resourceKey } } } }`, map[string]any{"id": get(created.Data, "createIntent", "id")})
		require.Empty(t, planned.Errors)
		plans = append(plans, get(planned.Data, "planIntent", "id"))
	}
	const q = `query($n: Int) { resource(key: "kubernetes.cluster/prod-k8s") { boundBy(first: $n) { plan { id } binding { key provider { resourceKey } } } } }`
	r := post(t, ts, adminToken, q, nil)
	require.Empty(t, r.Errors)
	bound := get(r.Data, "resource", "boundBy").([]any)
	require.Len(t, bound, 2)
	require.Equal(t, plans[1], get(bound[0], "plan", "id"), "newest plan first")
	require.Equal(t, plans[0], get(bound[1], "plan", "id"))
	require.Equal(t, "kubernetes.cluster/prod-k8s", get(bound[0], "binding", "provider", "resourceKey"))
	one := post(t, ts, adminToken, q, map[string]any{"n": 1})
	require.Len(t, get(one.Data, "resource", "boundBy").([]any), 1)
	dflt := post(t, ts, adminToken, `{ resource(key: "kubernetes.cluster/prod-k8s") { boundBy(first: null) { plan { id } } } }`, nil)
	require.Len(t, get(dflt.Data, "resource", "boundBy").([]any), 2, "an explicit null takes the default")
	bad := post(t, ts, adminToken, q, map[string]any{"n": 101})
	require.Equal(t, "INVALID", bad.code())
	other := post(t, ts, otherToken, `{ resource(key: "kubernetes.cluster/other-k8s") { boundBy { plan { id } } } }`, nil)
	require.Empty(t, other.Errors)
	require.Empty(t, get(other.Data, "resource", "boundBy"), "another organization's plans never show")
}

// TestAWalkPastItsLimitIsRefusedTyped: impact of a hub that more than
// MaxWalkResources resources run on is INVALID with extensions.limit
// "graphWalk" (never read whole), and so are its neighbourhood and its
// dependencies (storetest's testDependencies shows exactly the limit
// passes on both stores).
func TestAWalkPastItsLimitIsRefusedTyped(t *testing.T) {
	store := testenv.Store(t)
	svc := testenv.Demo(t, store)
	hub := &capstan.Resource{Type: "kubernetes.cluster", Name: "crowded-hub", Environment: "prod", LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy}
	rs := []*capstan.Resource{hub}
	for i := range capstan.MaxWalkResources + 1 {
		rs = append(rs, &capstan.Resource{Type: "app.instance", Name: fmt.Sprintf("on-hub-%06d", i), Environment: "prod", LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
			Relationships: []capstan.Relationship{{Type: capstan.RelRunsOn, Target: hub.Key()}}})
	}
	for i := 0; i < len(rs); i += 10_000 {
		_, err := store.ImportResources(context.Background(), testenv.Org, rs[i:min(i+10_000, len(rs))])
		require.NoError(t, err)
	}
	tokens, err := server.NewTokens([]server.Token{{Token: adminToken, Actor: "alice", Organization: testenv.Org, Roles: []string{capstan.RoleAdmin}}})
	require.NoError(t, err)
	ts := httptest.NewServer(server.Handler(server.Config{Service: svc, Tokens: tokens, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(ts.Close)
	id := get(post(t, ts, adminToken, `{ resource(key: "kubernetes.cluster/crowded-hub") { id } }`, nil).Data, "resource", "id")
	for _, q := range []string{
		`query($id: ID!) { impact(resource: $id) { total } }`,
		`query($id: ID!) { resourceGraph(root: $id, direction: INCOMING, depth: 1) { omittedTotal } }`,
		`query($id: ID!) { dependencies(resource: $id, direction: INCOMING, depth: 1) { depth } }`,
	} {
		r := post(t, ts, adminToken, q, map[string]any{"id": id})
		require.Equal(t, "INVALID", r.code(), q)
		require.Equal(t, "graphWalk", r.Errors[0].Extensions["limit"], q)
		require.Contains(t, r.Errors[0].Message, "more than 50000 resources")
	}
}
