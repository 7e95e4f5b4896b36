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

// TestFederationEntities: Capstan is a Federation v2 subgraph. _service
// gives its SDL with the entities' keys; _entities resolves references in
// the caller's organization, and one to another organization's object,
// to nothing, or of another kind resolves to null with no error at all;
// a batch past MaxEntityReferences is refused, typed; the references
// size the cost.
func TestFederationEntities(t *testing.T) {
	ts := startServer(t)
	shut := post(t, ts, adminToken, `{ _service { sdl } }`, nil)
	require.Equal(t, "FORBIDDEN", shut.code(), "_service follows introspection: off here")
	require.Contains(t, shut.Errors[0].Message, "--introspection on")
	store := testenv.Store(t)
	open := httptest.NewServer(server.Handler(server.Config{Service: testenv.Demo(t, store), Tokens: mustTokens(t), Introspection: true, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(open.Close)
	sdl := post(t, open, adminToken, `{ _service { sdl } }`, nil)
	require.Empty(t, sdl.Errors)
	text := get(sdl.Data, "_service", "sdl").(string)
	for _, want := range []string{`type Resource implements Node @key(fields: "key")`, `type Operation implements Node @key(fields: "id")`,
		`type Intent implements Node @key(fields: "id")`, `type Plan implements Node @key(fields: "id")`, `@link(url: "https://specs.apollo.dev/federation/v2.3"`} {
		require.Contains(t, text, want)
	}

	otherIntent := get(post(t, ts, otherToken, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", desiredResult: {name: "x"}, constraints: {environment: "staging"}}) { id } }`, nil).Data, "createIntent", "id")
	mine := get(post(t, ts, adminToken, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", desiredResult: {name: "y"}, constraints: {environment: "staging"}}) { id } }`, nil).Data, "createIntent", "id")
	const q = `query($reps: [_Any!]!) { _entities(representations: $reps) { __typename ... on Resource { key environment } ... on Intent { id actor } } }`
	r := post(t, ts, adminToken, q, map[string]any{"reps": []any{
		map[string]any{"__typename": "Resource", "key": "kubernetes.cluster/prod-k8s"},
		map[string]any{"__typename": "Resource", "key": "kubernetes.cluster/other-k8s"}, // the other organization's
		map[string]any{"__typename": "Intent", "id": mine},
		map[string]any{"__typename": "Intent", "id": otherIntent},
		map[string]any{"__typename": "Intent", "id": "not-an-id"},
		map[string]any{"__typename": "Plan", "id": mine}, // an intent's id as a plan's
		map[string]any{"__typename": "Resource", "key": "kubernetes.cluster/nowhere"},
	}})
	require.Empty(t, r.Errors, "no error text confirms or denies another organization's objects")
	got := get(r.Data, "_entities").([]any)
	require.Len(t, got, 7)
	require.Equal(t, map[string]any{"__typename": "Resource", "key": "kubernetes.cluster/prod-k8s", "environment": "prod"}, got[0])
	require.Equal(t, map[string]any{"__typename": "Intent", "id": mine, "actor": "alice"}, got[2])
	for _, i := range []int{1, 3, 4, 5, 6} {
		require.Nil(t, got[i], "reference %d", i)
	}
	// The other organization sees its own.
	theirs := post(t, ts, otherToken, q, map[string]any{"reps": []any{map[string]any{"__typename": "Resource", "key": "kubernetes.cluster/other-k8s"}}})
	require.Empty(t, theirs.Errors)
	require.Equal(t, "kubernetes.cluster/other-k8s", get(theirs.Data, "_entities", 0, "key"))

	reps := make([]any, 101)
	for i := range reps {
		reps[i] = map[string]any{"__typename": "Resource", "key": fmt.Sprintf("kubernetes.cluster/k%d", i)}
	}
	tooMany := post(t, ts, adminToken, q, map[string]any{"reps": reps})
	require.Equal(t, "INVALID", tooMany.code())
	require.Equal(t, "ENTITIES_LIMIT", tooMany.Errors[0].Extensions["reason"])
	unauthenticated := post(t, ts, "", q, map[string]any{"reps": reps[:1]})
	require.Equal(t, "UNAUTHENTICATED", unauthenticated.code())
}

func mustTokens(t *testing.T) *server.Tokens {
	tokens, err := server.NewTokens([]server.Token{{Token: adminToken, Actor: "alice", Organization: testenv.Org, Roles: []string{capstan.RoleAdmin}}})
	require.NoError(t, err)
	return tokens
}
