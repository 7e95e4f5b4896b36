package cypher_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/catalog"
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/packs"
	"github.com/capstan-dev/capstan/service"
)

// TestQueryPlans PROFILEs the traversals the planner and the graph
// explorer depend on, on the demo data, and fails on a plan that scans all
// nodes or builds a cartesian product, or on a database notification about
// unbounded paths or cartesian products.
func TestQueryPlans(t *testing.T) {
	ctx := context.Background()
	store := open(t)
	org := "profile-" + capstan.NewID()[12:]
	svc := service.New(store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	admin := capstan.WithActor(ctx, &capstan.Actor{ID: "p", OrganizationID: org, Roles: []string{capstan.RoleAdmin}})
	require.NoError(t, svc.InstallPacks(admin, org, packs.FS, packs.Order))
	require.NoError(t, svc.SeedDemoCatalog(admin, org, catalog.Demo))
	cluster, err := store.GetResourceByKey(ctx, org, "kubernetes.cluster/prod-k8s")
	require.NoError(t, err)
	uid := func(parts ...string) string { return org + "|" + strings.Join(parts, "|") }

	queries := map[string]struct {
		query  string
		params map[string]any
	}{
		"candidates": {cypher.QueryCandidates, map[string]any{"want": uid("object_storage.s3"), "lifecycles": []string{"active"}, "checks": []any{
			map[string]any{"key": "environment", "want": "prod", "mode": "eq", "s": "s:environment", "a": "a:environment"},
			map[string]any{"key": "min_capacity_gb", "want": 100, "mode": "min", "s": "s:min_capacity_gb", "a": "a:min_capacity_gb"},
			map[string]any{"key": "region", "want": "eu-central", "mode": "eq", "s": "s:region", "a": "a:region"},
		}, "keep": 10, "upto": 20, "skip": 0, "owner": uid("tempo.instance/prod-tempo"), "consumers": capstan.MaxConsumers + 1}},
		"candidates through implication": {cypher.QueryCandidates, map[string]any{"want": uid("workload.runtime"), "lifecycles": []string{"active"}, "checks": []any{}, "keep": 10, "upto": 20, "skip": 0, "owner": uid("tempo.instance/prod-tempo"), "consumers": capstan.MaxConsumers + 1}},
		"candidates by name": {cypher.QueryCandidatesScan, map[string]any{"want": uid("object_storage.s3"), "lifecycles": []string{"active"}, "checks": []any{
			map[string]any{"key": "name", "want": "minio-prod", "mode": "eq", "s": "s:name", "a": "a:name"},
		}, "keep": 10, "upto": 20, "skip": 0, "owner": uid("tempo.instance/prod-tempo"), "consumers": capstan.MaxConsumers + 1}},
		"candidates of one provider": {cypher.QueryCandidatesOf, map[string]any{"want": uid("object_storage.s3"), "lifecycles": []string{"active"}, "checks": []any{},
			"keep": 10, "upto": 20, "skip": 0, "owner": uid("tempo.instance/prod-tempo"), "consumers": capstan.MaxConsumers + 1, "provider": uid("minio.instance/minio-prod")}},
		"topology":            {cypher.QueryTopology, map[string]any{"uid": uid(cluster.ID), "depth": 4}},
		"dependencies":        {cypher.QueryDependencies, map[string]any{"uids": []string{uid(cluster.ID)}}},
		"dependents":          {cypher.QueryDependents, map[string]any{"uids": []string{uid(cluster.ID)}}},
		"scenarios providing": {cypher.QueryScenariosProviding, map[string]any{"cap": uid("object_storage.s3")}},
		"resources": {cypher.QueryListResources, map[string]any{"prefix": uid(""), "type": "", "env": "prod", "lifecycle": "", "health": []string{},
			"cap": uid("object_storage.s3"), "after": uid(""), "limit": 10}},
	}
	driver, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	require.NoError(t, err)
	defer driver.Close(ctx)
	for name, q := range queries {
		t.Run(name, func(t *testing.T) {
			res, err := neo4j.ExecuteQuery(ctx, driver, "PROFILE "+q.query, q.params, neo4j.EagerResultTransformer)
			require.NoError(t, err)
			require.NotEmpty(t, res.Records, "the query finds something on the demo data")
			require.Empty(t, violations(res.Summary))
			var ops []string
			walk(res.Summary.Profile(), &ops)
			switch q.query {
			case cypher.QueryCandidates:
				require.Contains(t, strings.Join(ops, " "), "DirectedRelationshipIndexSeek",
					"providers are read through the provides_profile_key index, not expanded one by one")
			case cypher.QueryListResources:
				require.Contains(t, strings.Join(ops, " "), "NodeUniqueIndexSeekByRange",
					"an organization's resources are read in key order through resource_ukey: %v", ops)
			}
		})
	}
	// The check itself catches what it looks for.
	bad, err := neo4j.ExecuteQuery(ctx, driver, "PROFILE MATCH (a), (b) MATCH p = (a)-[*]->(b) RETURN count(p)", nil, neo4j.EagerResultTransformer)
	require.NoError(t, err)
	found := strings.Join(violations(bad.Summary), " ")
	require.Contains(t, found, "AllNodesScan")
	require.Contains(t, found, "CartesianProduct")
}

// violations lists plan operators and notifications the store's queries
// must never produce.
func violations(s neo4j.ResultSummary) []string {
	var out, ops []string
	if p := s.Profile(); p != nil {
		walk(p, &ops)
	}
	for _, op := range ops {
		if strings.Contains(op, "AllNodesScan") || strings.Contains(op, "CartesianProduct") {
			out = append(out, "operator "+op)
		}
	}
	for _, n := range s.Notifications() {
		if strings.Contains(n.Code(), "UnboundedVariableLengthPattern") || strings.Contains(n.Code(), "CartesianProduct") {
			out = append(out, "notification "+n.Code()+": "+n.Description())
		}
	}
	return out
}

func walk(p neo4j.ProfiledPlan, ops *[]string) {
	*ops = append(*ops, p.Operator())
	for _, c := range p.Children() {
		walk(c, ops)
	}
}

// TestKeyLookupsSeek PROFILEs every statement that finds resources or
// profiles from a list of keys, with two other organizations' catalogs
// beside the one it reads: each must seek the unique index for every
// key. A plan that scanned it instead once made a re-import of 3,000
// resources take 10 s (27,000,000 db hits). Writes run in a transaction
// that is rolled back.
func TestKeyLookupsSeek(t *testing.T) {
	ctx := context.Background()
	store := open(t)
	rs := testenv.SyntheticCatalog(300)
	var org string
	for range 3 {
		org = testenv.NewOrg()
		_, err := store.ImportResources(ctx, org, rs)
		require.NoError(t, err)
	}
	driver, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	require.NoError(t, err)
	defer driver.Close(ctx)
	var ukeys []string
	for _, r := range rs[:50] {
		ukeys = append(ukeys, org+"|"+r.Key())
	}
	found, err := neo4j.ExecuteQuery(ctx, driver, `MATCH (r:Resource {ukey: $k})-[p:PROVIDES]->() RETURN p.profile AS profile LIMIT 1`,
		map[string]any{"k": ukeys[0]}, neo4j.EagerResultTransformer)
	require.NoError(t, err)
	require.NotEmpty(t, found.Records, "the first resource provides something")
	profile, _ := found.Records[0].Get("profile")
	for name, q := range cypher.KeyLookups(ukeys, profile.(string)) {
		t.Run(name, func(t *testing.T) {
			session := driver.NewSession(ctx, neo4j.SessionConfig{})
			defer session.Close(ctx)
			tx, err := session.BeginTransaction(ctx)
			require.NoError(t, err)
			defer tx.Rollback(ctx)
			res, err := tx.Run(ctx, "PROFILE "+q.Query, q.Params)
			require.NoError(t, err)
			summary, err := res.Consume(ctx)
			require.NoError(t, err)
			var ops []string
			walk(summary.Profile(), &ops)
			joined := strings.Join(ops, " ")
			require.NotContains(t, joined, "NodeIndexScan", "a key lookup scans the index: %v", ops)
			require.Contains(t, joined, "IndexSeek", "%v", ops)
			require.Empty(t, violations(summary))
		})
	}
}
