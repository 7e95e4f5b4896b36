package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/server"
)

// TestPermissionsAgreeWithMutations: what the API says a caller may do
// (Viewer.permissions, Gate.viewerMayApprove/viewerMayReject) is what the
// mutations then do, refusal message included — a client that hides or
// disables by these fields never offers a button that fails, nor hides
// one that works.
func TestPermissionsAgreeWithMutations(t *testing.T) {
	const starter, sre, viewer = "perm-admin-0123456789", "perm-sre-0123456789", "perm-viewer-0123456789"
	store := testenv.Store(t)
	svc := testenv.Demo(t, store)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ex := executor.New(executor.Config{Store: store, Dir: t.TempDir(), JobDir: t.TempDir(), Log: log, Hooks: svc,
		Runners: map[string]job.Runner{"sim": local.SimRunner{Instant: true}, "shell": local.ShellRunner{}}})
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, ex.Start(ctx))
	t.Cleanup(func() { cancel(); ex.Stop() })
	testenv.Wakes(svc).Listen(ex.Wake)
	tokens, err := server.NewTokens([]server.Token{
		{Token: starter, Actor: "alice", Organization: testenv.Org, Roles: []string{capstan.RoleAdmin}},
		{Token: sre, Actor: "bob", Organization: testenv.Org, Roles: []string{capstan.RoleSRE}},
		{Token: viewer, Actor: "victor", Organization: testenv.Org, Roles: []string{capstan.RoleViewer}},
	})
	require.NoError(t, err)
	ts := httptest.NewServer(server.Handler(server.Config{Service: svc, Tokens: tokens, Log: log}))
	t.Cleanup(ts.Close)

	// Role-only actions: the viewer may take none, the admin every one.
	for token, allowed := range map[string]bool{starter: true, viewer: false} {
		r := post(t, ts, token, `{ viewer { permissions { action allowed reason } } }`, nil)
		require.Empty(t, r.Errors)
		perms := get(r.Data, "viewer", "permissions").([]any)
		require.Len(t, perms, len(capstan.ActionRoles))
		for _, p := range perms {
			require.Equal(t, allowed, get(p, "allowed"), "%v", p)
			require.Equal(t, allowed, get(p, "reason") == nil, "a refusal says why: %v", p)
		}
	}
	refused := post(t, ts, viewer, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance"}) { id } }`, nil)
	require.Equal(t, "FORBIDDEN", refused.code())
	asViewer := post(t, ts, viewer, `{ viewer { permissions { action reason } } }`, nil)
	require.Equal(t, "CREATE_INTENT", get(asViewer.Data, "viewer", "permissions", 0, "action"))
	require.Equal(t, refused.Errors[0].Message, get(asViewer.Data, "viewer", "permissions", 0, "reason"), "the same words as the mutation")

	// A production operation alice started waits at its gate.
	created := post(t, ts, starter, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", scenario: "minio.install@1.0.0", desiredResult: {name: "perm-minio"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`, nil)
	require.Empty(t, created.Errors)
	planned := post(t, ts, starter, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": get(created.Data, "createIntent", "id")})
	require.Empty(t, planned.Errors)
	planID := get(planned.Data, "planIntent", "id")
	const planVerdicts = `query($id: ID!) { plan(id: $id) { viewerMayStart { allowed reason } viewerMayEdit { allowed reason } } }`
	verdicts := post(t, ts, starter, planVerdicts, map[string]any{"id": planID})
	require.Equal(t, true, get(verdicts.Data, "plan", "viewerMayStart", "allowed"))
	require.Equal(t, true, get(verdicts.Data, "plan", "viewerMayEdit", "allowed"))
	verdicts = post(t, ts, viewer, planVerdicts, map[string]any{"id": planID})
	require.Equal(t, false, get(verdicts.Data, "plan", "viewerMayStart", "allowed"))
	viewerStart := post(t, ts, viewer, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": planID})
	require.Equal(t, viewerStart.Errors[0].Message, get(verdicts.Data, "plan", "viewerMayStart", "reason"))
	started := post(t, ts, starter, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": planID})
	require.Empty(t, started.Errors)
	verdicts = post(t, ts, starter, planVerdicts, map[string]any{"id": planID})
	again := post(t, ts, starter, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": planID})
	require.Equal(t, "CONFLICT", again.code())
	require.Equal(t, again.Errors[0].Message, get(verdicts.Data, "plan", "viewerMayStart", "reason"), "a started plan does not start again, in the same words")
	require.Equal(t, false, get(verdicts.Data, "plan", "viewerMayEdit", "allowed"), "a started plan changes only through a patch")
	op := get(started.Data, "startOperation", "id")
	const gates = `query($id: ID!) { operation(id: $id) { status gates { node status viewerMayApprove { action allowed reason } viewerMayReject { allowed reason } } } }`
	gateOf := func(token string) map[string]any {
		r := post(t, ts, token, gates, map[string]any{"id": op})
		require.Empty(t, r.Errors)
		if gs := get(r.Data, "operation", "gates").([]any); len(gs) > 0 {
			return gs[0].(map[string]any)
		}
		return map[string]any{}
	}
	require.Eventually(t, func() bool { return get(gateOf(starter), "status") == "WAITING" }, 20*time.Second, 20*time.Millisecond)
	decide := func(token string, approve bool) gqlResponse {
		return post(t, ts, token, `mutation($op: ID!, $n: String!, $a: Boolean!) { decideGate(input: {operation: $op, node: $n, approve: $a}) { status } }`,
			map[string]any{"op": op, "n": get(gateOf(starter), "node"), "a": approve})
	}

	g := gateOf(starter)
	require.Equal(t, "DECIDE_GATE", get(g, "viewerMayApprove", "action"))
	require.Equal(t, false, get(g, "viewerMayApprove", "allowed"), "the starter of a prod operation does not approve it")
	require.Contains(t, get(g, "viewerMayApprove", "reason"), "started this operation")
	require.Equal(t, true, get(g, "viewerMayReject", "allowed"), "the starter may still reject")
	denied := decide(starter, true)
	require.Equal(t, "FORBIDDEN", denied.code())
	require.Equal(t, denied.Errors[0].Message, get(g, "viewerMayApprove", "reason"))

	g = gateOf(viewer)
	require.Equal(t, false, get(g, "viewerMayApprove", "allowed"))
	require.Equal(t, false, get(g, "viewerMayReject", "allowed"))
	require.True(t, strings.Contains(get(g, "viewerMayApprove", "reason").(string), "needs one of the roles"), "%v", g)
	denied = decide(viewer, false)
	require.Equal(t, "FORBIDDEN", denied.code())
	require.Equal(t, denied.Errors[0].Message, get(g, "viewerMayReject", "reason"))

	g = gateOf(sre)
	require.Equal(t, true, get(g, "viewerMayApprove", "allowed"), "%v", g)
	require.Equal(t, true, get(g, "viewerMayReject", "allowed"))
	require.Empty(t, decide(sre, true).Errors)
	g = gateOf(sre)
	require.Equal(t, false, get(g, "viewerMayApprove", "allowed"), "decided: nothing left to decide")
	require.NotEmpty(t, get(g, "viewerMayApprove", "reason"))
}

// TestResourceSearch finds resources by a part of their key or name,
// ignoring case.
func TestResourceSearch(t *testing.T) {
	ts := startServer(t)
	const q = `query($s: String) { resources(filter: {search: $s}, first: 100) { totalCount edges { node { key name } } } }`
	all := post(t, ts, adminToken, q, nil)
	require.Empty(t, all.Errors)
	r := post(t, ts, adminToken, q, map[string]any{"s": "PROD-K8"})
	require.Empty(t, r.Errors)
	edges := get(r.Data, "resources", "edges").([]any)
	require.NotEmpty(t, edges)
	require.Less(t, len(edges), len(get(all.Data, "resources", "edges").([]any)))
	for _, e := range edges {
		key, name := get(e, "node", "key").(string), get(e, "node", "name").(string)
		require.True(t, strings.Contains(strings.ToLower(key+" "+name), "prod-k8"), "%s %s", key, name)
	}
	none := post(t, ts, adminToken, q, map[string]any{"s": "no-such-thing-anywhere"})
	require.Equal(t, float64(0), get(none.Data, "resources", "totalCount"))
	long := post(t, ts, adminToken, q, map[string]any{"s": strings.Repeat("A", 201)})
	require.Equal(t, "INVALID", long.code(), "a search longer than any key is refused before it scans anything")
}
