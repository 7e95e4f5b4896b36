package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/packs"
	"github.com/capstan-dev/capstan/server"
	"github.com/capstan-dev/capstan/service"
)

const (
	adminToken  = "admin-token-0123456789"
	viewerToken = "viewer-token-0123456789"
	otherToken  = "other-org-token-0123456789"
	// secondSRE is operationServer's second approver: in prod an
	// analyzer's patch needs two people.
	secondSRE = "second-sre-token-0123456789"
)

// startServer serves the full HTTP surface over a real socket.
func startServer(t *testing.T) *httptest.Server {
	t.Helper()
	store := testenv.Store(t)
	svc := testenv.Demo(t, store)
	ctx := testenv.Admin("other")
	require.NoError(t, svc.SeedDemoCatalog(ctx, "other", []byte("clusters: [{name: other-k8s, environment: prod}]")))
	tokens, err := server.NewTokens([]server.Token{
		{Token: adminToken, Actor: "alice", Organization: testenv.Org, Roles: []string{capstan.RoleAdmin}},
		{Token: viewerToken, Actor: "victor", Organization: testenv.Org, Roles: []string{capstan.RoleViewer}},
		{Token: sreToken, Actor: "bob", Organization: testenv.Org, Roles: []string{capstan.RoleSRE}},
		{Token: otherToken, Actor: "mallory", Organization: "other", Roles: []string{capstan.RoleAdmin}},
	})
	require.NoError(t, err)
	ts := httptest.NewServer(server.Handler(server.Config{Service: svc, Tokens: tokens, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(ts.Close)
	return ts
}

type gqlResponse struct {
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
	status int
}

func (r gqlResponse) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

func post(t *testing.T, ts *httptest.Server, token, query string, vars map[string]any) gqlResponse {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out gqlResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	out.status = resp.StatusCode
	return out
}

// get walks a decoded JSON value by keys and indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

const createSeedIntent = `mutation($in: CreateIntentInput!) { createIntent(input: $in) { id status actor } }`

func seedIntentVars() map[string]any {
	return map[string]any{"in": map[string]any{
		"action": "install", "targetResourceType": "tempo.instance", "scenario": packs.SimulatedTempoInstall,
		"desiredResult": map[string]any{"name": "prod-tempo", "version": "2.x"},
		"constraints":   map[string]any{"environment": "prod", "cluster": "prod-k8s"},
	}}
}

const planQuery = `mutation($id: ID!) { planIntent(input: {intent: $id}) {
  id status scenarioRef revision version order problems
  summary { currentPhase steps needsAttention bindings }
  bindings { key parent status reason explicit
    provider { resourceKey resource { key name } }
    subOperation { scenario nodeKey }
    candidates { kind ref accepted selected reason resource { key } checks { key passed reason } policies { policy passed reason } } }
  nodes { key type title job { run { runner } controls { retry { maximumAttempts } } } gate { requiredRoles } subOperation { scenario requirement } }
  capabilityGraph { vertices { key kind } edges { from to label } }
  intent { id status latestPlan { id } }
} }`

func TestSeedWalkthroughOverHTTP(t *testing.T) {
	ts := startServer(t)
	created := post(t, ts, adminToken, createSeedIntent, seedIntentVars())
	require.Empty(t, created.Errors)
	require.Equal(t, "SUBMITTED", get(created.Data, "createIntent", "status"))
	require.Equal(t, "alice", get(created.Data, "createIntent", "actor"))
	intentID := get(created.Data, "createIntent", "id").(string)

	planned := post(t, ts, adminToken, planQuery, map[string]any{"id": intentID})
	require.Empty(t, planned.Errors)
	plan := get(planned.Data, "planIntent").(map[string]any)
	require.Equal(t, "READY", plan["status"])
	require.Equal(t, "tempo.install@1.3.0", plan["scenarioRef"])
	require.Equal(t, "PLANNED", get(plan, "intent", "status"))
	require.Equal(t, plan["id"], get(plan, "intent", "latestPlan", "id"))
	require.Equal(t, []any{"cluster: use kubernetes.cluster/prod-k8s", "object-storage: create with minio.install@1.0.0", "secrets: use vault.instance/prod-vault"},
		get(plan, "summary", "bindings"))

	bindings := map[string]map[string]any{}
	for _, b := range plan["bindings"].([]any) {
		bindings[b.(map[string]any)["key"].(string)] = b.(map[string]any)
	}
	require.Equal(t, "prod-k8s", get(bindings["cluster"], "provider", "resource", "name"))
	require.Equal(t, "PENDING_SUB_OPERATION", bindings["object-storage"]["status"])
	require.Equal(t, "create-object-storage", get(bindings["object-storage"], "subOperation", "nodeKey"))
	require.Equal(t, "object-storage", bindings["object-storage/cluster"]["parent"])
	require.Equal(t, "vault.instance/prod-vault", get(bindings["secrets"], "provider", "resourceKey"))
	require.Equal(t, "create-object-storage", get(plan, "order", 0))

	// The plan is reachable again through node(id) with the same answer.
	again := post(t, ts, adminToken, `query($id: ID!) { node(id: $id) { id ... on Plan { status bindings { key reason } } } }`, map[string]any{"id": plan["id"]})
	require.Empty(t, again.Errors)
	require.Equal(t, "READY", get(again.Data, "node", "status"))
}

func TestQueriesOverHTTP(t *testing.T) {
	ts := startServer(t)
	page := post(t, ts, adminToken, `{ resources(first: 3, filter: {environment: "prod"}) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id key lifecycleStatus relationships { type targetKey target { key } } providedCapabilities { capability definition { key category } } } } } }`, nil)
	require.Empty(t, page.Errors)
	require.Equal(t, float64(14), get(page.Data, "resources", "totalCount"))
	require.Equal(t, true, get(page.Data, "resources", "pageInfo", "hasNextPage"))
	require.Len(t, get(page.Data, "resources", "edges"), 3)
	cursor := get(page.Data, "resources", "pageInfo", "endCursor")
	next := post(t, ts, adminToken, `query($after: String) { resources(first: 100, after: $after, filter: {environment: "prod"}) { edges { node { key } } pageInfo { hasNextPage hasPreviousPage } } }`, map[string]any{"after": cursor})
	require.Empty(t, next.Errors)
	require.Len(t, get(next.Data, "resources", "edges"), 11)
	require.Equal(t, true, get(next.Data, "resources", "pageInfo", "hasPreviousPage"))

	cluster := post(t, ts, adminToken, `{ resource(key: "kubernetes.cluster/prod-k8s") { id key relationships { type target { key } } } }`, nil)
	require.Empty(t, cluster.Errors)
	require.Len(t, get(cluster.Data, "resource", "relationships"), 4)
	clusterID := get(cluster.Data, "resource", "id")

	deps := post(t, ts, adminToken, `query($id: ID!) { dependencies(resource: $id, direction: INCOMING, depth: 2) { root { key } edges { from to relationship depth } } }`, map[string]any{"id": clusterID})
	require.Empty(t, deps.Errors)
	var froms []string
	for _, e := range get(deps.Data, "dependencies", "edges").([]any) {
		froms = append(froms, e.(map[string]any)["from"].(string))
	}
	require.ElementsMatch(t, []string{"minio.instance/shared-prod-storage", "vault.instance/prod-vault", "vault.instance/scratch-vault", "grafana.instance/grafana-prod"}, froms)

	// Why grafana depends on the vault, and how the two are linked: each
	// path's resources carry ids the API accepts.
	ends := post(t, ts, adminToken, `{ g: resource(key: "grafana.instance/grafana-prod") { id } v: resource(key: "vault.instance/prod-vault") { id } }`, nil)
	require.Empty(t, ends.Errors)
	linked := post(t, ts, adminToken, `query($from: ID!, $to: ID!) {
	  why: paths(from: $from, to: $to) { resources { key } hops { from to relationship } }
	  linked: paths(from: $from, to: $to, direction: BOTH, max: 2, depth: 3) { resources { id key } hops { from to relationship } }
	}`, map[string]any{"from": get(ends.Data, "g", "id"), "to": get(ends.Data, "v", "id")})
	require.Empty(t, linked.Errors)
	require.Len(t, get(linked.Data, "why"), 1)
	require.Equal(t, map[string]any{"from": "grafana.instance/grafana-prod", "to": "vault.instance/prod-vault", "relationship": "DEPENDS_ON"}, get(linked.Data, "why", 0, "hops", 0))
	require.Len(t, get(linked.Data, "linked"), 2)
	require.Equal(t, "kubernetes.cluster/prod-k8s", get(linked.Data, "linked", 1, "resources", 1, "key"))
	require.Equal(t, map[string]any{"from": "vault.instance/prod-vault", "to": "kubernetes.cluster/prod-k8s", "relationship": "RUNS_ON"}, get(linked.Data, "linked", 1, "hops", 1), "a hop may point back along the path")
	viaID := post(t, ts, adminToken, `query($id: ID!) { node(id: $id) { ... on Resource { key } } }`, map[string]any{"id": get(linked.Data, "linked", 1, "resources", 1, "id")})
	require.Equal(t, "kubernetes.cluster/prod-k8s", get(viaID.Data, "node", "key"))

	// Its neighbourhood as a graph, a page at a time: the rest counted.
	nb := post(t, ts, adminToken, `query($id: ID!) {
	  all: resourceGraph(root: $id, direction: INCOMING, depth: 1) { root { key } nodes { depth resource { id key } } edges { from to relationship } omittedTotal }
	  two: resourceGraph(root: $id, direction: INCOMING, depth: 1, first: 2) { nodes { resource { key } } edges { from to } omitted { value count } omittedTotal pageInfo { hasNextPage hasPreviousPage endCursor } }
	  vaults: resourceGraph(root: $id, direction: BOTH, depth: 2, filter: {types: ["vault.instance"]}) { nodes { depth resource { key } } }
	  dependsOn: resourceGraph(root: $id, direction: INCOMING, depth: 3, filter: {relationships: [DEPENDS_ON]}) { nodes { resource { key } } }
	}`, map[string]any{"id": clusterID})
	require.Empty(t, nb.Errors)
	require.Len(t, get(nb.Data, "all", "nodes"), 5, "prod-k8s and the four that run on it")
	require.Equal(t, map[string]any{"depth": float64(0), "resource": map[string]any{"id": clusterID, "key": "kubernetes.cluster/prod-k8s"}}, get(nb.Data, "all", "nodes", 0), "the root first")
	require.Contains(t, get(nb.Data, "all", "edges"), map[string]any{"from": "grafana.instance/grafana-prod", "to": "vault.instance/prod-vault", "relationship": "DEPENDS_ON"}, "every relationship among them, not only the walk's")
	require.Equal(t, float64(0), get(nb.Data, "all", "omittedTotal"))
	require.Len(t, get(nb.Data, "two", "nodes"), 2)
	require.Equal(t, float64(3), get(nb.Data, "two", "omittedTotal"))
	require.NotEmpty(t, get(nb.Data, "two", "omitted"))
	require.Equal(t, true, get(nb.Data, "two", "pageInfo", "hasNextPage"))
	rest := post(t, ts, adminToken, `query($id: ID!, $after: String) { resourceGraph(root: $id, direction: INCOMING, depth: 1, first: 2, after: $after) {
	  nodes { cursor resource { key } } edges { from to } omittedTotal pageInfo { hasNextPage hasPreviousPage endCursor } } }`,
		map[string]any{"id": clusterID, "after": get(nb.Data, "two", "pageInfo", "endCursor")})
	require.Empty(t, rest.Errors)
	require.Len(t, get(rest.Data, "resourceGraph", "nodes"), 2, "the next page")
	require.Equal(t, float64(1), get(rest.Data, "resourceGraph", "omittedTotal"))
	require.Equal(t, true, get(rest.Data, "resourceGraph", "pageInfo", "hasPreviousPage"))
	pageEdges := len(get(nb.Data, "two", "edges").([]any)) + len(get(rest.Data, "resourceGraph", "edges").([]any))
	last := post(t, ts, adminToken, `query($id: ID!, $after: String) { resourceGraph(root: $id, direction: INCOMING, depth: 1, first: 2, after: $after) { edges { from } pageInfo { hasNextPage } } }`,
		map[string]any{"id": clusterID, "after": get(rest.Data, "resourceGraph", "nodes", 1, "cursor")})
	require.Empty(t, last.Errors)
	require.Equal(t, false, get(last.Data, "resourceGraph", "pageInfo", "hasNextPage"))
	pageEdges += len(get(last.Data, "resourceGraph", "edges").([]any))
	require.Len(t, get(nb.Data, "all", "edges"), pageEdges, "the pages' edges add up to the whole graph's, each once")
	require.Equal(t, []any{
		map[string]any{"depth": float64(0), "resource": map[string]any{"key": "kubernetes.cluster/prod-k8s"}},
		map[string]any{"depth": float64(1), "resource": map[string]any{"key": "vault.instance/prod-vault"}},
		map[string]any{"depth": float64(1), "resource": map[string]any{"key": "vault.instance/scratch-vault"}},
	}, get(nb.Data, "vaults", "nodes"))
	require.Len(t, get(nb.Data, "dependsOn", "nodes"), 1, "nothing depends on the cluster itself")

	// What breaks if prod-k8s fails: counted, and listed a page at a time
	// with the resources list's cursors.
	impact := post(t, ts, adminToken, `query($id: ID!) { impact(resource: $id) { root { key } total byType { value count } byEnvironment { value count }
	  operating { key } dependents(first: 2) { totalCount pageInfo { hasNextPage endCursor } edges { node { key } } } } }`, map[string]any{"id": clusterID})
	require.Empty(t, impact.Errors)
	total := get(impact.Data, "impact", "total")
	require.Equal(t, float64(4), total, "the minio, both vaults and grafana run on it")
	require.Equal(t, map[string]any{"value": "vault.instance", "count": float64(2)}, get(impact.Data, "impact", "byType", 0), "most first")
	require.Equal(t, total, get(impact.Data, "impact", "dependents", "totalCount"))
	require.Equal(t, "grafana.instance/grafana-prod", get(impact.Data, "impact", "dependents", "edges", 0, "node", "key"), "by key")
	more := post(t, ts, adminToken, `query($id: ID!, $after: String) { impact(resource: $id) { dependents(first: 5, after: $after) { edges { node { key } } pageInfo { hasNextPage } } } }`,
		map[string]any{"id": clusterID, "after": get(impact.Data, "impact", "dependents", "pageInfo", "endCursor")})
	require.Empty(t, more.Errors)
	require.Len(t, get(more.Data, "impact", "dependents", "edges"), 2)
	require.Equal(t, false, get(more.Data, "impact", "dependents", "pageInfo", "hasNextPage"))

	lists := post(t, ts, adminToken, `{
	  resourceTypes { totalCount edges { node { id key allowedActions } } }
	  capabilities(category: "storage") { totalCount edges { node { key constraints { name type requiredInProd enum } } } }
	  scenarioPacks(first: 2) { totalCount pageInfo { hasNextPage } edges { node { id key version ref digest scenarios { key } } } }
	  scenarios(filter: {provides: "object_storage.s3"}) { totalCount edges { node { id ref pack requires { key capability strategy constraints } plan { nodes { key type } } } } }
	  viewer { actor organization roles }
	}`, nil)
	require.Empty(t, lists.Errors)
	require.Equal(t, float64(9), get(lists.Data, "resourceTypes", "totalCount"))
	require.Equal(t, float64(1), get(lists.Data, "capabilities", "totalCount"))
	require.Equal(t, float64(10), get(lists.Data, "scenarioPacks", "totalCount"), "two versions of tempo, minio and postgres: the simulated ones stay")
	require.Equal(t, "minio.install@1.0.0", get(lists.Data, "scenarios", "edges", 0, "node", "ref"))
	require.Equal(t, "demo", get(lists.Data, "viewer", "organization"))

	// Every global id resolves back to its entity.
	for _, path := range [][]any{{"resourceTypes", "edges", 0, "node", "id"}, {"scenarioPacks", "edges", 0, "node", "id"}, {"scenarios", "edges", 0, "node", "id"}} {
		id := get(lists.Data, path...)
		n := post(t, ts, adminToken, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id})
		require.Empty(t, n.Errors)
		require.Equal(t, id, get(n.Data, "node", "id"))
	}
}

func TestErrorsAreTyped(t *testing.T) {
	ts := startServer(t)
	tests := []struct {
		name, token, query string
		vars               map[string]any
		code               string
		contains           string
	}{
		{"no token", "", `{ viewer { actor } }`, nil, capstan.EUNAUTHENTICATED, "bearer token"},
		{"bad token", "nope-nope-nope-nope", `{ viewer { actor } }`, nil, capstan.EUNAUTHENTICATED, "bearer token"},
		{"syntax error", adminToken, `{ viewer { `, nil, capstan.EINVALID, ""},
		{"unknown field", adminToken, `{ viewer { password } }`, nil, capstan.EINVALID, "password"},
		{"bad enum", adminToken, `{ resources(filter: {lifecycleStatus: SLEEPING}) { totalCount } }`, nil, capstan.EINVALID, ""},
		{"not an id", adminToken, `{ intent(id: "garbage") { id } }`, nil, capstan.EINVALID, "not a Capstan id"},
		{"wrong id kind", adminToken, `query($id: ID!) { plan(id: $id) { id } }`, map[string]any{"id": "SW50ZW50Ong"}, capstan.EINVALID, "not a Plan"},
		{"page too big", adminToken, `{ resources(first: 100000) { totalCount } }`, nil, capstan.EINVALID, "first"},
		{"bad cursor", adminToken, `{ resources(after: "zzz") { totalCount } }`, nil, capstan.EINVALID, "cursor"},
		{"depth", adminToken, `{ dependencies(resource: "UmVzb3VyY2U6eA", depth: 99) { depth } }`, nil, capstan.EINVALID, "depth"},
		{"missing resource", adminToken, `{ dependencies(resource: "UmVzb3VyY2U6eA") { depth } }`, nil, capstan.ENOTFOUND, "not found"},
		{"walk both ways", adminToken, `{ dependencies(resource: "UmVzb3VyY2U6eA", direction: BOTH) { depth } }`, nil, capstan.EINVALID, "OUTGOING or INCOMING"},
		{"too many paths", adminToken, `{ paths(from: "UmVzb3VyY2U6eA", to: "UmVzb3VyY2U6eQ", max: 11) { hops { from } } }`, nil, capstan.EINVALID, "paths must be 1 to 10"},
		{"paths too deep", adminToken, `{ paths(from: "UmVzb3VyY2U6eA", to: "UmVzb3VyY2U6eQ", depth: 0) { hops { from } } }`, nil, capstan.EINVALID, "hops must be 1 to 10"},
		{"idempotency key too long", adminToken, `mutation($key: String!) { startOperation(input: {plan: "UGxhbjp4", idempotencyKey: $key}) { id } }`, map[string]any{"key": strings.Repeat("k", 40000)}, capstan.EINVALID, "idempotency key of 40000 bytes"},
		{"graph page", adminToken, `{ resourceGraph(root: "UmVzb3VyY2U6eA", first: 0) { depth } }`, nil, capstan.EINVALID, "first must be 1 to 1000"},
		{"graph cursor", adminToken, `{ resourceGraph(root: "UmVzb3VyY2U6eA", after: "bm9wZQ") { depth } }`, nil, capstan.EINVALID, "not a cursor from this API"},
		{"graph depth", adminToken, `{ resourceGraph(root: "UmVzb3VyY2U6eA", depth: 11) { depth } }`, nil, capstan.EINVALID, "depth must be 1 to 10"},
		{"graph filter", adminToken, `query($types: [String!]) { resourceGraph(root: "UmVzb3VyY2U6eA", filter: {types: $types}) { depth } }`, map[string]any{"types": make([]string, 51)}, capstan.EINVALID, "at most 50 types"},
		{"graph of nothing", adminToken, `{ resourceGraph(root: "UmVzb3VyY2U6eA") { depth } }`, nil, capstan.ENOTFOUND, "not found"},
		{"path to nowhere", adminToken, `{ paths(from: "UmVzb3VyY2U6eA", to: "UmVzb3VyY2U6eQ") { hops { from } } }`, nil, capstan.ENOTFOUND, "not found"},
		{"viewer cannot write", viewerToken, createSeedIntent, seedIntentVars(), capstan.EFORBIDDEN, "roles"},
		{"bad intent", adminToken, createSeedIntent, map[string]any{"in": map[string]any{"action": "Install Now", "targetResourceType": "tempo.instance"}}, capstan.EINVALID, "action"},
		{"malformed catalog", adminToken, `mutation($d: String!) { importCatalog(input: {document: $d}) { created } }`, map[string]any{"d": "clusters: [ {name: "}, capstan.EINVALID, "YAML"},
		{"catalog wrong types", adminToken, `mutation($d: String!) { importCatalog(input: {document: $d}) { created } }`, map[string]any{"d": "clusters: [{name: 5}]"}, capstan.EINVALID, "catalog"},
		{"catalog unknown table", adminToken, `mutation($d: String!) { importCatalog(input: {document: $d}) { created } }`, map[string]any{"d": "vms: []"}, capstan.EINVALID, "vms"},
		{"malformed pack", adminToken, `mutation($d: String!) { installScenarioPack(input: {document: $d}) { ref } }`, map[string]any{"d": "id: x\nversion: [\n"}, capstan.EINVALID, "malformed YAML"},
		{"pack unknown capability", adminToken, `mutation($d: String!) { installScenarioPack(input: {document: $d, name: "p.yaml"}) { ref } }`, map[string]any{"d": unknownCapabilityPack}, capstan.EINVALID, "p.yaml:8: scenario bad.install@1.0.0: requirement db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, ts, tt.token, tt.query, tt.vars)
			require.NotEmpty(t, r.Errors, "want an error")
			require.Equal(t, tt.code, r.code(), "errors: %+v", r.Errors)
			require.Contains(t, r.Errors[0].Message, tt.contains)
			require.NotContains(t, strings.ToLower(r.Errors[0].Message), "panic")
		})
	}
}

const unknownCapabilityPack = `id: bad
version: 1.0.0
scenarios:
  - id: bad.install
    action: install
    target_resource_type: bad
    requires:
      - {id: db, capability: nope.db, strategy: existing}
    plan:
      nodes:
        - {id: a, type: verification, title: A, probes: [{name: p, type: sim}]}
`

func TestOversizedBodyIsRejected(t *testing.T) {
	ts := startServer(t)
	huge := strings.Repeat("x", server.MaxBodyBytes+10)
	r := post(t, ts, adminToken, `mutation($d: String!) { importCatalog(input: {document: $d}) { created } }`, map[string]any{"d": huge})
	require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
	require.Equal(t, capstan.EINVALID, r.code())
}

func TestOrganizationsNeverSeeEachOther(t *testing.T) {
	ts := startServer(t)
	created := post(t, ts, adminToken, createSeedIntent, seedIntentVars())
	intentID := get(created.Data, "createIntent", "id")
	cluster := post(t, ts, adminToken, `{ resource(key: "kubernetes.cluster/prod-k8s") { id } }`, nil)
	clusterID := get(cluster.Data, "resource", "id")

	r := post(t, ts, otherToken, `query($i: ID!, $c: ID!) { intent(id: $i) { id } node(id: $c) { id } resource(key: "kubernetes.cluster/prod-k8s") { id } intents { totalCount } resources { totalCount } }`,
		map[string]any{"i": intentID, "c": clusterID})
	require.Empty(t, r.Errors)
	require.Nil(t, get(r.Data, "intent"))
	require.Nil(t, get(r.Data, "node"))
	require.Nil(t, get(r.Data, "resource"))
	require.Equal(t, float64(0), get(r.Data, "intents", "totalCount"))
	require.Equal(t, float64(1), get(r.Data, "resources", "totalCount"))
	planned := post(t, ts, otherToken, planQuery, map[string]any{"id": intentID})
	require.Equal(t, capstan.ENOTFOUND, planned.code())
}

func TestHealthAndPlayground(t *testing.T) {
	ts := startServer(t)
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/": 200, "/nope": 404} {
		resp, err := http.Get(ts.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, path)
	}
}

// TestInProcess runs GraphQL through gqlgen's in-process client, without a
// socket, as resolver-level tests do.
func TestInProcess(t *testing.T) {
	store := testenv.Store(t)
	svc := testenv.Demo(t, store)
	h := server.GraphQL(server.Config{Service: svc, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	withActor := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(testenv.Admin(testenv.Org)))
	})
	c := client.New(withActor)
	var resp struct {
		CreateIntent struct{ ID, Status string }
	}
	c.MustPost(`mutation { createIntent(input: {action: "add_node", targetResourceType: "kubernetes.cluster", constraints: {environment: "prod", cluster: "prod-k8s"}}) { id status } }`, &resp)
	require.Equal(t, "SUBMITTED", resp.CreateIntent.Status)
	var planned struct {
		PlanIntent struct {
			Status   string
			Bindings []struct {
				Key      string
				Provider struct{ ResourceKey string }
			}
		}
	}
	c.MustPost(`mutation($id: ID!) { planIntent(input: {intent: $id}) { status bindings { key provider { resourceKey } } } }`, &planned, client.Var("id", resp.CreateIntent.ID))
	require.Equal(t, "READY", planned.PlanIntent.Status)
	require.Equal(t, "cluster", planned.PlanIntent.Bindings[0].Key)
	require.Equal(t, "kubernetes.cluster/prod-k8s", planned.PlanIntent.Bindings[0].Provider.ResourceKey)
	require.Equal(t, "host", planned.PlanIntent.Bindings[1].Key)
	require.Equal(t, "compute.node/prod-cp-1", planned.PlanIntent.Bindings[1].Provider.ResourceKey, "eu-central prod hosts; ties break by key")
}

func TestEditPlanOverHTTP(t *testing.T) {
	ts := startServer(t)
	vars := seedIntentVars()
	vars["in"].(map[string]any)["mode"] = "ADVANCED"
	created := post(t, ts, adminToken, createSeedIntent, vars)
	require.Empty(t, created.Errors)
	planned := post(t, ts, adminToken, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id version digest } }`, map[string]any{"id": get(created.Data, "createIntent", "id")})
	require.Empty(t, planned.Errors)
	planID, version := get(planned.Data, "planIntent", "id"), get(planned.Data, "planIntent", "version")
	const edit = `mutation($plan: ID!, $version: Int!, $changes: [PlanChangeInput!]!) {
	  editPlan(input: {plan: $plan, version: $version, changes: $changes}) {
	    revision version digest status nodes { key type template } customizations { baseTemplate changes { op actor revision node at } }
	    revisions { revision digest parent kind actor changes { op } } } }`
	r := post(t, ts, adminToken, edit, map[string]any{"plan": planID, "version": version, "changes": []any{
		map[string]any{"op": "SET_PARAMETERS", "node": "helm-install", "parameters": map[string]any{"replicas": 3}},
		map[string]any{"op": "INSERT_AFTER", "node": "verify-tracing", "template": "smoke-test"},
		map[string]any{"op": "REBIND", "requirement": "secrets", "provider": "vault.instance/prod-vault"},
	}})
	require.Empty(t, r.Errors)
	require.Equal(t, float64(2), get(r.Data, "editPlan", "revision"))
	require.Len(t, get(r.Data, "editPlan", "customizations", "changes"), 3)
	require.Equal(t, "alice", get(r.Data, "editPlan", "customizations", "changes", 0, "actor"))
	require.Len(t, get(r.Data, "editPlan", "revisions"), 2)
	require.Equal(t, get(planned.Data, "planIntent", "digest"), get(r.Data, "editPlan", "revisions", 1, "parent"))
	require.Equal(t, "EDIT", get(r.Data, "editPlan", "revisions", 1, "kind"))

	diff := post(t, ts, adminToken, `query($plan: ID!) { planDiff(plan: $plan, from: 1, to: 2) {
	  nodesAdded { key template } nodesChanged { key fields { path old new } } bindingsChanged { key fields { path } } edgesAdded { from to } } }`,
		map[string]any{"plan": planID})
	require.Empty(t, diff.Errors)
	require.Equal(t, "smoke-test", get(diff.Data, "planDiff", "nodesAdded", 0, "key"))
	require.Equal(t, "parameters.replicas", get(diff.Data, "planDiff", "nodesChanged", 0, "fields", 0, "path"))
	require.Equal(t, float64(3), get(diff.Data, "planDiff", "nodesChanged", 0, "fields", 0, "new"))
	require.Equal(t, "secrets", get(diff.Data, "planDiff", "bindingsChanged", 0, "key"))

	stale := post(t, ts, adminToken, edit, map[string]any{"plan": planID, "version": version, "changes": []any{
		map[string]any{"op": "REMOVE", "node": "smoke-test"}}})
	require.Equal(t, capstan.ECONFLICT, stale.code())

	badNode := post(t, ts, adminToken, edit, map[string]any{"plan": planID, "version": get(r.Data, "editPlan", "version"), "changes": []any{
		map[string]any{"op": "INSERT_AFTER", "node": "verify-tracing", "spec": map[string]any{"id": "x", "type": "job", "title": "X", "status": "running"}}}})
	require.Equal(t, capstan.EINVALID, badNode.code())
	require.Contains(t, badNode.Errors[0].Message, "node")

	// An sre may not bring code, nor take the gate out: FORBIDDEN naming the rule.
	sre := post(t, ts, sreToken, edit, map[string]any{"plan": planID, "version": get(r.Data, "editPlan", "version"), "changes": []any{
		map[string]any{"op": "REMOVE", "node": "approve-rollout"},
		map[string]any{"op": "INSERT_AFTER", "node": "verify-tracing", "spec": map[string]any{"id": "sh", "type": "job", "title": "Sh",
			"job": map[string]any{"run": map[string]any{"runner": "shell", "script": "cat /etc/passwd"}}}}}})
	require.Equal(t, capstan.EFORBIDDEN, sre.code(), "%v", sre.Errors)
	details := sre.Errors[0].Extensions["details"].([]any)
	require.Len(t, details, 2, "%v", details)
	require.Contains(t, details[0], "[keep-gate]")
	require.Contains(t, details[1], "[inline-code]")
}

// operationServer serves the demo over HTTP with a running executor.
func operationServer(t *testing.T) (*service.Service, *httptest.Server) {
	store := testenv.Store(t)
	svc := testenv.Demo(t, store)
	ex := executor.New(executor.Config{Store: store, Dir: t.TempDir(), JobDir: t.TempDir(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Hooks: svc,
		Runners: map[string]job.Runner{"sim": local.SimRunner{Instant: true}, "shell": local.ShellRunner{}}})
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, ex.Start(ctx))
	t.Cleanup(func() { cancel(); ex.Stop() })
	testenv.Wakes(svc).Listen(ex.Wake)
	tokens, err := server.NewTokens([]server.Token{
		{Token: adminToken, Actor: "alice", Organization: testenv.Org, Roles: []string{capstan.RoleOperator}},
		{Token: viewerToken, Actor: "bob", Organization: testenv.Org, Roles: []string{capstan.RoleSRE}},
		{Token: secondSRE, Actor: "carol", Organization: testenv.Org, Roles: []string{capstan.RoleSRE}},
		{Token: otherToken, Actor: "olga", Organization: "other", Roles: []string{capstan.RoleAdmin}},
	})
	require.NoError(t, err)
	ts := httptest.NewServer(server.Handler(server.Config{Service: svc, Tokens: tokens, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(ts.Close)
	return svc, ts
}

func TestOperationOverHTTP(t *testing.T) {
	_, ts := operationServer(t)
	created := post(t, ts, adminToken, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", scenario: "minio.install@1.0.0", desiredResult: {name: "demo-minio"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`, nil)
	require.Empty(t, created.Errors)
	planned := post(t, ts, adminToken, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status } }`, map[string]any{"id": get(created.Data, "createIntent", "id")})
	require.Equal(t, "READY", get(planned.Data, "planIntent", "status"))
	const start = `mutation($plan: ID!) { startOperation(input: {plan: $plan, idempotencyKey: "demo-1"}) { id status } }`
	started := post(t, ts, adminToken, start, map[string]any{"plan": get(planned.Data, "planIntent", "id")})
	require.Empty(t, started.Errors)
	opID := get(started.Data, "startOperation", "id")
	again := post(t, ts, adminToken, start, map[string]any{"plan": get(planned.Data, "planIntent", "id")})
	require.Equal(t, opID, get(again.Data, "startOperation", "id"))

	const query = `query($id: ID!) { operation(id: $id) { status nodeRuns { node status attempts } gates { node status decisions { actor approve } }
	  evidence { producedBy item result } timeline(first: 500) { edges { cursor node { sequence type actor } } } } }`
	waitStatus := func(want string) map[string]any {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			r := post(t, ts, adminToken, query, map[string]any{"id": opID})
			require.Empty(t, r.Errors)
			if get(r.Data, "operation", "status") == want {
				return r.Data
			}
			time.Sleep(20 * time.Millisecond)
		}
		r := post(t, ts, adminToken, query, map[string]any{"id": opID})
		t.Fatalf("operation never became %s: %v", want, r.Data)
		return nil
	}
	waitStatus("WAITING")
	decided := post(t, ts, viewerToken, `mutation($op: ID!) { decideGate(input: {operation: $op, node: "approve-prod-storage", approve: true, comment: "ok"}) { status decisions { actor role } } }`, map[string]any{"op": opID})
	require.Empty(t, decided.Errors)
	require.Equal(t, "APPROVED", get(decided.Data, "decideGate", "status"))
	done := waitStatus("SUCCEEDED")
	edges := get(done, "operation", "timeline", "edges").([]any)
	for i, e := range edges {
		require.Equal(t, float64(i+1), get(e, "node", "sequence"))
	}
	more := post(t, ts, adminToken, `query($id: ID!, $after: String) { operation(id: $id) { timeline(after: $after, first: 2) { edges { node { sequence } } pageInfo { hasNextPage } } } }`,
		map[string]any{"id": opID, "after": get(edges[2], "cursor")})
	require.Empty(t, more.Errors)
	require.Equal(t, float64(4), get(more.Data, "operation", "timeline", "edges", 0, "node", "sequence"), "replay from a cursor")

	// The operation created its resource, and is found by it.
	res := post(t, ts, adminToken, `{ resource(key: "minio.instance/demo-minio") { id lifecycleStatus activeOperation { id } lastOperation { id status } } }`, nil)
	require.Empty(t, res.Errors)
	require.Equal(t, "ACTIVE", get(res.Data, "resource", "lifecycleStatus"))
	require.Equal(t, opID, get(res.Data, "resource", "lastOperation", "id"), "a typed reference, by the id the API takes")
	require.Nil(t, get(res.Data, "resource", "activeOperation"))
	const byResource = `query($r: ID!, $after: Time) { operations(filter: {resource: $r, createdAfter: $after}) { totalCount edges { node { id resource { key } } } } }`
	found := post(t, ts, adminToken, byResource, map[string]any{"r": get(res.Data, "resource", "id")})
	require.Empty(t, found.Errors)
	require.Equal(t, float64(1), get(found.Data, "operations", "totalCount"))
	require.Equal(t, opID, get(found.Data, "operations", "edges", 0, "node", "id"))
	require.Equal(t, "minio.instance/demo-minio", get(found.Data, "operations", "edges", 0, "node", "resource", "key"))
	later := post(t, ts, adminToken, byResource, map[string]any{"r": get(res.Data, "resource", "id"), "after": time.Now().Add(time.Minute).Format(time.RFC3339)})
	require.Equal(t, float64(0), get(later.Data, "operations", "totalCount"))
	bad := post(t, ts, adminToken, byResource, map[string]any{"r": "not-an-id"})
	require.Equal(t, "INVALID", bad.code())

	// The capability graph the planner resolved, from both ends: what
	// serves the new MinIO, and which plans and operations bound the
	// cluster, each with its requirement and reason.
	bindings := post(t, ts, adminToken, `{
	  minio: resource(key: "minio.instance/demo-minio") { servedBy { plan { id } binding { key reason requirement { capability } provider { resourceKey } } operations { id } } }
	  cluster: resource(key: "kubernetes.cluster/prod-k8s") { boundBy { binding { key reason } operations(first: 1) { id status } } }
	  catalog: resource(key: "vault.instance/prod-vault") { servedBy { binding { key } } }
	}`, nil)
	require.Empty(t, bindings.Errors)
	served := get(bindings.Data, "minio", "servedBy").([]any)
	require.NotEmpty(t, served)
	require.Equal(t, get(planned.Data, "planIntent", "id"), get(served[0], "plan", "id"))
	require.Equal(t, []any{map[string]any{"id": opID}}, get(served[0], "operations"))
	var onCluster map[string]any
	for _, b := range served {
		if get(b, "binding", "provider", "resourceKey") == "kubernetes.cluster/prod-k8s" {
			onCluster = b.(map[string]any)
		}
	}
	require.NotNil(t, onCluster, "the cluster serves its workload capability")
	require.NotEmpty(t, get(onCluster, "binding", "reason"))
	require.NotEmpty(t, get(onCluster, "binding", "requirement", "capability"))
	bound := get(bindings.Data, "cluster", "boundBy", 0)
	require.Equal(t, []any{map[string]any{"id": opID, "status": "SUCCEEDED"}}, get(bound, "operations"), "the provider's side names the operation")
	require.Empty(t, get(bindings.Data, "catalog", "servedBy"), "a resource no operation made has no plan serving it")
	tooMany := post(t, ts, adminToken, `{ resource(key: "kubernetes.cluster/prod-k8s") { boundBy { operations(first: 101) { id } } } }`, nil)
	require.Equal(t, "INVALID", tooMany.code())
}

// TestAnalysesOverHTTP reads an ai_analysis node's structured output.
func TestAnalysesOverHTTP(t *testing.T) {
	svc, ts := operationServer(t)
	admin := capstan.WithActor(context.Background(), &capstan.Actor{ID: "root", OrganizationID: testenv.Org, Roles: []string{capstan.RoleAdmin}})
	_, err := svc.InstallPackYAML(admin, "diagnose.yaml", []byte(diagnosePack))
	require.NoError(t, err)
	created := post(t, ts, adminToken, `mutation { createIntent(input: {action: "repair", targetResourceType: "diagnosed", constraints: {environment: "dev"}}) { id } }`, nil)
	require.Empty(t, created.Errors)
	planned := post(t, ts, adminToken, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status } }`, map[string]any{"id": get(created.Data, "createIntent", "id")})
	require.Equal(t, "READY", get(planned.Data, "planIntent", "status"))
	started := post(t, ts, adminToken, `mutation($plan: ID!) { startOperation(input: {plan: $plan}) { id } }`, map[string]any{"plan": get(planned.Data, "planIntent", "id")})
	require.Empty(t, started.Errors)
	const query = `query($id: ID!) { operation(id: $id) { status analyses { node analyzer kind question diagnosis recommendation
	  findings { node source detail ref } proposedPatch { op } observedAt } } }`
	op := any(map[string]any{})
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && get(op, "status") != "SUCCEEDED"; time.Sleep(20 * time.Millisecond) {
		r := post(t, ts, adminToken, query, map[string]any{"id": get(started.Data, "startOperation", "id")})
		require.Empty(t, r.Errors)
		op = get(r.Data, "operation")
	}
	require.Equal(t, "SUCCEEDED", get(op, "status"))
	require.Equal(t, "diagnose", get(op, "analyses", 0, "node"))
	require.Equal(t, "DIAGNOSIS", get(op, "analyses", 0, "kind"))
	require.Equal(t, "What is broken?", get(op, "analyses", 0, "question"))
	require.Equal(t, "artifact diagnostics: FATAL: quota exceeded", get(op, "analyses", 0, "diagnosis"))
	require.Equal(t, "collect", get(op, "analyses", 0, "findings", 0, "node"))
	require.Empty(t, get(op, "analyses", 0, "proposedPatch"))
}

const diagnosePack = `id: diagnosecheck
version: 1.0.0
capabilities:
  - {key: diagnosed.cap, category: test}
scenarios:
  - id: diagnosed.repair
    action: repair
    target_resource_type: diagnosed
    plan:
      nodes:
        - id: collect
          type: job
          title: Collect diagnostics
          job:
            run: {runner: shell, script: 'echo "FATAL: quota exceeded"'}
            outputs:
              artifacts: [{name: diagnostics, type: diagnostics.bundle, sensitivity: internal}]
              evidence: [{name: collected, type: command, script: 'true'}]
        - id: diagnose
          type: ai_analysis
          title: Diagnose
          after: [collect]
          analysis: {question: "What is broken?", inputs: [diagnostics]}
`

// TestPlanPatchOverHTTP: a patch on a running prod operation, proposed by
// one person and approved by another over GraphQL, joins the run: the
// operation continues on revision 2 and its inserted node runs.
func TestPlanPatchOverHTTP(t *testing.T) {
	_, ts := operationServer(t)
	created := post(t, ts, adminToken, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", scenario: "minio.install@1.0.0", mode: ADVANCED, desiredResult: {name: "demo-minio"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`, nil)
	require.Empty(t, created.Errors)
	planned := post(t, ts, adminToken, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status revision } }`, map[string]any{"id": get(created.Data, "createIntent", "id")})
	require.Equal(t, "READY", get(planned.Data, "planIntent", "status"))
	started := post(t, ts, adminToken, `mutation($plan: ID!) { startOperation(input: {plan: $plan}) { id } }`, map[string]any{"plan": get(planned.Data, "planIntent", "id")})
	require.Empty(t, started.Errors)
	opID := get(started.Data, "startOperation", "id")
	status := func() map[string]any {
		r := post(t, ts, adminToken, `query($id: ID!) { operation(id: $id) { status planRevision progress { patchesAwaitingApproval }
		  nodeRuns { node status revision } timeline(first: 500) { edges { node { type payload } } } } }`, map[string]any{"id": opID})
		require.Empty(t, r.Errors)
		return r.Data
	}
	waitFor := func(want string) map[string]any {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if d := status(); get(d, "operation", "status") == want {
				return d
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("operation never became %s", want)
		return nil
	}
	waitFor("WAITING") // at the prod storage gate

	const propose = `mutation($op: ID!, $changes: [PlanChangeInput!]!) { proposePlanPatch(input: {operation: $op, baseRevision: 1, changes: $changes, reason: "smoke the bucket"}) {
	  id status digest author approvals { rule roles approvals } outstanding { rule approvals } diff { nodesAdded { key } } } }`
	p := post(t, ts, adminToken, propose, map[string]any{"op": opID, "changes": []any{
		map[string]any{"op": "INSERT_AFTER", "node": "verify-s3", "template": "smoke-test"}}})
	require.Empty(t, p.Errors)
	patch := get(p.Data, "proposePlanPatch").(map[string]any)
	require.Equal(t, "PROPOSED", patch["status"])
	require.Equal(t, "prod-second-person", get(patch, "outstanding", 0, "rule"))
	require.Equal(t, "smoke-test", get(patch, "diff", "nodesAdded", 0, "key"))
	require.Equal(t, float64(1), get(status(), "operation", "progress", "patchesAwaitingApproval"))
	awaiting := post(t, ts, adminToken, `{ operations(filter: {awaitingPatch: true}) { totalCount edges { node { id } } } }`, nil)
	require.Equal(t, float64(1), get(awaiting.Data, "operations", "totalCount"))

	const decide = `mutation($p: ID!, $d: String!) { decidePlanPatch(input: {patch: $p, approve: true, digest: $d}) { status appliedRevision decisions { actor digest } } }`
	self := post(t, ts, adminToken, decide, map[string]any{"p": patch["id"], "d": patch["digest"]})
	require.Equal(t, capstan.EFORBIDDEN, self.code(), "the proposer never decides")
	ok := post(t, ts, viewerToken, decide, map[string]any{"p": patch["id"], "d": patch["digest"]})
	require.Empty(t, ok.Errors)
	require.Equal(t, "APPLIED", get(ok.Data, "decidePlanPatch", "status"))
	require.Equal(t, float64(2), get(ok.Data, "decidePlanPatch", "appliedRevision"))
	byNode := post(t, ts, adminToken, `query($id: ID!) { node(id: $id) { ... on PlanPatch { status plan { revision revisions { revision kind patch { id } } } } } }`, map[string]any{"id": patch["id"]})
	require.Empty(t, byNode.Errors)
	require.Equal(t, float64(2), get(byNode.Data, "node", "plan", "revision"))
	require.Equal(t, patch["id"], get(byNode.Data, "node", "plan", "revisions", 1, "patch", "id"))

	gate := post(t, ts, viewerToken, `mutation($op: ID!) { decideGate(input: {operation: $op, node: "approve-prod-storage", approve: true}) { status } }`, map[string]any{"op": opID})
	require.Empty(t, gate.Errors)
	done := waitFor("SUCCEEDED")
	require.Equal(t, float64(2), get(done, "operation", "planRevision"))
	runs := map[string]any{}
	for _, r := range get(done, "operation", "nodeRuns").([]any) {
		runs[get(r, "node").(string)] = r
	}
	require.Equal(t, "SUCCEEDED", get(runs["smoke-test"], "status"), "the inserted node ran")
	require.Equal(t, float64(2), get(runs["smoke-test"], "revision"))
	require.Equal(t, float64(1), get(runs["render-values"], "revision"))
	var types []string
	for _, e := range get(done, "operation", "timeline", "edges").([]any) {
		types = append(types, get(e, "node", "type").(string))
	}
	require.Subset(t, types, []string{"patch.proposed", "patch.decided", "patch.applied", "plan.revised"})
}

// A proposal whose node starts meanwhile becomes STALE by itself (the
// executor asks the service to judge proposals again when nodes move).
func TestPatchGoesStaleWhenItsNodeStarts(t *testing.T) {
	_, ts := operationServer(t)
	created := post(t, ts, adminToken, `mutation { createIntent(input: {action: "install", targetResourceType: "minio.instance", scenario: "minio.install@1.0.0", mode: ADVANCED, desiredResult: {name: "m"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }`, nil)
	planned := post(t, ts, adminToken, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }`, map[string]any{"id": get(created.Data, "createIntent", "id")})
	started := post(t, ts, adminToken, `mutation($plan: ID!) { startOperation(input: {plan: $plan}) { id } }`, map[string]any{"plan": get(planned.Data, "planIntent", "id")})
	require.Empty(t, started.Errors)
	opID := get(started.Data, "startOperation", "id")
	deadline := time.Now().Add(20 * time.Second)
	for get(post(t, ts, adminToken, `query($id: ID!) { operation(id: $id) { status } }`, map[string]any{"id": opID}).Data, "operation", "status") != "WAITING" {
		require.True(t, time.Now().Before(deadline))
		time.Sleep(20 * time.Millisecond)
	}
	p := post(t, ts, adminToken, `mutation($op: ID!) { proposePlanPatch(input: {operation: $op, baseRevision: 1, reason: "more replicas",
	  changes: [{op: SET_PARAMETERS, node: "helm-install", parameters: {replicas: 3}}]}) { id status } }`, map[string]any{"op": opID})
	require.Empty(t, p.Errors)
	patchID := get(p.Data, "proposePlanPatch", "id")
	gate := post(t, ts, viewerToken, `mutation($op: ID!) { decideGate(input: {operation: $op, node: "approve-prod-storage", approve: true}) { status } }`, map[string]any{"op": opID})
	require.Empty(t, gate.Errors)
	for {
		r := post(t, ts, adminToken, `query($id: ID!) { planPatch(id: $id) { status closedReason } }`, map[string]any{"id": patchID})
		require.Empty(t, r.Errors)
		if get(r.Data, "planPatch", "status") == "STALE" {
			// helm-install started (or, as fast as sim jobs run, the whole operation ended)
			require.Regexp(t, "helm-install|the operation is succeeded", get(r.Data, "planPatch", "closedReason"))
			return
		}
		require.True(t, time.Now().Before(deadline), "the patch never went stale")
		time.Sleep(20 * time.Millisecond)
	}
}

func TestResolverBudgetBoundsWhatTheCostUnderestimates(t *testing.T) {
	store := testenv.Store(t)
	svc := testenv.Demo(t, store)
	tokens, err := server.NewTokens([]server.Token{{Token: adminToken, Actor: "alice", Organization: testenv.Org, Roles: []string{capstan.RoleAdmin}}})
	require.NoError(t, err)
	limits := server.DefaultLimits
	limits.MaxResolverCalls = 5
	ts := httptest.NewServer(server.Handler(server.Config{Service: svc, Tokens: tokens, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Limits: limits}))
	defer ts.Close()
	small := post(t, ts, adminToken, `{ viewer { actor } }`, nil)
	require.Empty(t, small.Errors)
	big := post(t, ts, adminToken, `{ resources(first: 30) { edges { node { key relationships { target { key } } } } } }`, nil)
	require.NotEmpty(t, big.Errors)
	require.Equal(t, "INVALID", big.code())
	require.Contains(t, big.Errors[0].Message, "resolved more than 5 fields")
	again := post(t, ts, adminToken, `{ viewer { actor } }`, nil)
	require.Empty(t, again.Errors, "each query has its own budget")
}
