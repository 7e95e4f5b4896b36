package cypher_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/catalog"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/packs"
	"github.com/capstan-dev/capstan/service"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/storetest"
)

func BenchmarkCandidates(b *testing.B) {
	storetest.BenchmarkCandidates(b, func(b *testing.B) capstan.Store { return open(b) })
}

// BenchmarkCrowdedProvider searches a provider thousands of workloads use.
func BenchmarkCrowdedProvider(b *testing.B) {
	storetest.BenchmarkCrowdedProvider(b, func(b *testing.B) capstan.Store { return open(b) })
}

// BenchmarkPlanIntentSeed plans the seed's example on Neo4j over the demo
// catalog. Target: <= 100 ms.
func BenchmarkPlanIntentSeed(b *testing.B) {
	s := open(b)
	org := "plan-" + capstan.NewID()[12:]
	svc := service.New(s, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := capstan.WithActor(context.Background(), &capstan.Actor{ID: "b", OrganizationID: org, Roles: []string{capstan.RoleAdmin}})
	require.NoError(b, svc.InstallPacks(ctx, org, packs.FS, packs.Order))
	require.NoError(b, svc.SeedDemoCatalog(ctx, org, catalog.Demo))
	in, err := svc.CreateIntent(ctx, testenv.SeedIntent())
	require.NoError(b, err)
	b.ResetTimer()
	for b.Loop() {
		p, err := svc.PlanIntent(ctx, in.ID)
		if err != nil || p.Status != capstan.PlanReady {
			b.Fatalf("plan: %v %v", err, p)
		}
	}
}

// BenchmarkOperationStep is one executor commit of a chain on Neo4j.
func BenchmarkOperationStep(b *testing.B) { storetest.BenchmarkOperationStep(b, open(b)) }

// floorWarmUp is how many untimed writes BenchmarkManagedWriteFloor makes
// (a hundred at make test's small size).
func floorWarmUp() int {
	if testenv.BenchSmall() {
		return 100
	}
	return 3000
}

// BenchmarkManagedWriteFloor measures this machine's Neo4j instead of
// Capstan: one managed write transaction (ExecuteWrite) that creates one
// bare node, p50/p99. A node of a chain needs at least one such write
// before its job may run, so no executor on this server can run a chain
// faster per node than this.
func BenchmarkManagedWriteFloor(b *testing.B) {
	ctx := context.Background()
	driver, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	require.NoError(b, err)
	defer driver.Close(ctx)
	sess := driver.NewSession(ctx, neo4j.SessionConfig{})
	defer sess.Close(ctx)
	run := "floor-" + capstan.NewID()[12:]
	write := func() error {
		_, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
			res, err := tx.Run(ctx, "CREATE (:WriteFloor {run: $run})", map[string]any{"run": run})
			if err != nil {
				return nil, err
			}
			return res.Consume(ctx)
		})
		return err
	}
	// Untimed first: a server just started runs its first few thousand
	// transactions at two to three times its warm cost (JIT).
	for range floorWarmUp() {
		require.NoError(b, write())
	}
	storetest.Measure(b, write)
	_, err = neo4j.ExecuteQuery(ctx, driver, "MATCH (n:WriteFloor {run: $run}) DELETE n", map[string]any{"run": run}, neo4j.EagerResultTransformer)
	require.NoError(b, err)
}

// BenchmarkPatch500 is testenv.BenchmarkPatch on Neo4j. Target: <= 50 ms.
func BenchmarkPatch500(b *testing.B) {
	testenv.BenchmarkPatch(b, open(b), "patch-"+capstan.NewID()[12:])
}

// BenchmarkImport imports the synthetic catalog of 10,000 resources (with
// their capabilities, profiles and relationships) into a new organization
// in one call, then again over itself (every resource updated). Target:
// >= 10,000 resources/s.
func BenchmarkImport(b *testing.B) {
	rs := testenv.SyntheticCatalog(testenv.BenchResources(10000))
	s := open(b)
	ctx := context.Background()
	require.NoError(b, s.Ping(ctx)) // the schema is applied on first use: not an import's time
	var org string
	for _, phase := range []string{"create", "update"} {
		b.Run(phase, func(b *testing.B) {
			for b.Loop() {
				if phase == "create" {
					b.StopTimer()
					org = testenv.NewOrg()
					b.StartTimer()
				}
				res, err := s.ImportResources(ctx, org, rs)
				require.NoError(b, err)
				require.Equal(b, len(rs), res.Created+res.Updated)
			}
			b.ReportMetric(float64(b.N*len(rs))/b.Elapsed().Seconds(), "resources/s")
		})
	}
}

// BenchmarkImportFloor measures this machine's Neo4j instead of Capstan:
// one transaction that creates 10,000 bare nodes with one uniquely
// constrained property each, from one UNWIND. An import that writes the
// same resources with their properties, capabilities and relationships
// cannot run faster.
func BenchmarkImportFloor(b *testing.B) {
	ctx := context.Background()
	driver, err := neo4j.NewDriverWithContext(server.URI, neo4j.BasicAuth(server.User, server.Password, ""))
	require.NoError(b, err)
	defer driver.Close(ctx)
	_, err = neo4j.ExecuteQuery(ctx, driver, "CREATE CONSTRAINT import_floor_uid IF NOT EXISTS FOR (n:ImportFloor) REQUIRE n.uid IS UNIQUE", nil, neo4j.EagerResultTransformer)
	require.NoError(b, err)
	n := testenv.BenchResources(10000)
	run := testenv.NewOrg()
	for i := 0; b.Loop(); i++ {
		rows := make([]any, n)
		for j := range rows {
			rows[j] = fmt.Sprintf("%s|%d|%d", run, i, j)
		}
		_, err := neo4j.ExecuteQuery(ctx, driver, "UNWIND $rows AS row CREATE (:ImportFloor {uid: row})", map[string]any{"rows": rows}, neo4j.EagerResultTransformer)
		require.NoError(b, err)
		b.StopTimer()
		_, err = neo4j.ExecuteQuery(ctx, driver, "MATCH (n:ImportFloor) DELETE n", nil, neo4j.EagerResultTransformer)
		require.NoError(b, err)
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "nodes/s")
}

// BenchmarkTailRead is one read of an idle replica's timeline tailer (a
// process polls it every 50 ms: live.DefaultTailEvery): which operations a
// commit touched in the last five seconds, when none was. Its floor,
// BenchmarkTailReadFloor, is the cheapest read there is, `RETURN
// timestamp()` in an auto-commit transaction.
func BenchmarkTailRead(b *testing.B) {
	s := open(b)
	ctx := context.Background()
	_, now, err := s.TouchedOperations(ctx, 0)
	require.NoError(b, err)
	for b.Loop() {
		if _, _, err := s.TouchedOperations(ctx, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTailReadFloor(b *testing.B) {
	ctx := context.Background()
	driver, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	require.NoError(b, err)
	defer driver.Close(ctx)
	sess := driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeRead})
	defer sess.Close(ctx)
	for b.Loop() {
		res, err := sess.Run(ctx, "RETURN timestamp() AS now", nil)
		if err == nil {
			_, err = res.Consume(ctx)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImportModelFloor measures this machine's Neo4j writing what an
// import of the synthetic catalog writes, in raw Cypher with every row
// built beforehand, on labels of its own: each resource a node with the
// properties a :Resource has (its JSON among them) under two unique
// constraints, and its PROVIDES edges (with their properties, under a
// relationship index) to profiles that exist. "lean" leaves out the JSON
// of the node and of the edges, "nodes" the edges too: what they cost;
// "grouped" is lean with the edges made by a second statement, grouped by
// the profile they end at (measured: slower than lean, 5,933 against
// 6,673 a second: batching the edges by profile buys nothing).
func BenchmarkImportModelFloor(b *testing.B) {
	ctx := context.Background()
	driver, err := neo4j.NewDriverWithContext(server.URI, neo4j.BasicAuth(server.User, server.Password, ""))
	require.NoError(b, err)
	defer driver.Close(ctx)
	for _, q := range []string{
		"CREATE CONSTRAINT model_floor_uid IF NOT EXISTS FOR (n:ModelFloor) REQUIRE n.uid IS UNIQUE",
		"CREATE CONSTRAINT model_floor_ukey IF NOT EXISTS FOR (n:ModelFloor) REQUIRE n.ukey IS UNIQUE",
		"CREATE CONSTRAINT model_floor_profile IF NOT EXISTS FOR (n:ModelFloorProfile) REQUIRE n.uid IS UNIQUE",
		"CREATE INDEX model_floor_provides IF NOT EXISTS FOR ()-[p:MODEL_FLOOR_PROVIDES]-() ON (p.profile, p.key)",
		"UNWIND range(0, 63) AS i MERGE (:ModelFloorProfile {uid: 'profile-' + i})",
	} {
		_, err := neo4j.ExecuteQuery(ctx, driver, q, nil, neo4j.EagerResultTransformer)
		require.NoError(b, err)
	}
	rs := testenv.SyntheticCatalog(testenv.BenchResources(10000))
	const q = `UNWIND $rows AS row
CREATE (r:ModelFloor {ukey: row.ukey}) SET r += row.props
WITH r, row UNWIND row.provides AS p
MATCH (pf:ModelFloorProfile {uid: p.profile}) USING INDEX SEEK pf:ModelFloorProfile(uid)
CREATE (r)-[e:MODEL_FLOOR_PROVIDES]->(pf) SET e = p.props`
	const qEdges = `UNWIND $groups AS g
MATCH (pf:ModelFloorProfile {uid: g.profile}) USING INDEX SEEK pf:ModelFloorProfile(uid)
CALL (pf, g) {
  UNWIND g.edges AS x
  MATCH (r:ModelFloor {ukey: x.ukey}) USING INDEX SEEK r:ModelFloor(ukey)
  CREATE (r)-[e:MODEL_FLOOR_PROVIDES]->(pf) SET e = x.props
}`
	for _, variant := range []string{"full", "lean", "nodes", "grouped"} {
		b.Run(variant, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				rows := modelFloorRows(rs, testenv.NewOrg(), variant)
				groups := groupByProfile(rows)
				b.StartTimer()
				if variant == "grouped" {
					session := driver.NewSession(ctx, neo4j.SessionConfig{})
					_, err := session.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
						if _, err := tx.Run(ctx, q, map[string]any{"rows": rows}); err != nil {
							return nil, err
						}
						_, err := tx.Run(ctx, qEdges, map[string]any{"groups": groups})
						return nil, err
					})
					session.Close(ctx)
					require.NoError(b, err)
				} else {
					_, err := neo4j.ExecuteQuery(ctx, driver, q, map[string]any{"rows": rows}, neo4j.EagerResultTransformer)
					require.NoError(b, err)
				}
				b.StopTimer()
				_, err = neo4j.ExecuteQuery(ctx, driver, "MATCH (n:ModelFloor) DETACH DELETE n", nil, neo4j.EagerResultTransformer)
				require.NoError(b, err)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.N*len(rs))/b.Elapsed().Seconds(), "resources/s")
		})
	}
}

func modelFloorRows(rs []*capstan.Resource, org string, variant string) []any {
	lean := variant != "full"
	rows := make([]any, len(rs))
	for i, r := range rs {
		data, _ := json.Marshal(r)
		props := map[string]any{"uid": org + "|" + capstan.NewID(), "id": capstan.NewID(), "org": org, "key": r.Key(), "type": r.Type, "name": r.Name,
			"environment": r.Environment, "lifecycle": string(r.LifecycleStatus), "health": string(r.HealthStatus),
			"version": int64(1), "created": time.Now().Format(time.RFC3339Nano)}
		if !lean {
			props["json"] = string(data)
		}
		var provides []any
		for j, pc := range r.ProvidedCapabilities {
			pj, _ := json.Marshal(pc)
			profile := fmt.Sprintf("profile-%d", (i+j)%64)
			pp := map[string]any{"key": r.Key(), "profile": profile}
			if !lean {
				pp["json"] = string(pj)
			}
			provides = append(provides, map[string]any{"profile": profile, "props": pp})
		}
		if variant == "nodes" || variant == "grouped" {
			if variant == "grouped" {
				for _, p := range provides {
					p.(map[string]any)["ukey"] = org + "|" + r.Key()
				}
			}
			rows[i] = map[string]any{"ukey": org + "|" + r.Key(), "props": props, "provides": []any{}, "grouped": provides}
			continue
		}
		rows[i] = map[string]any{"ukey": org + "|" + r.Key(), "props": props, "provides": provides}
	}
	return rows
}

// groupByProfile regroups the rows' edges by the profile they end at.
func groupByProfile(rows []any) []any {
	by := map[string][]any{}
	for _, row := range rows {
		for _, p := range asList(row.(map[string]any)["grouped"]) {
			e := p.(map[string]any)
			by[e["profile"].(string)] = append(by[e["profile"].(string)], e)
		}
	}
	out := make([]any, 0, len(by))
	for profile, edges := range by {
		out = append(out, map[string]any{"profile": profile, "edges": edges})
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// BenchmarkGraphWalks measures the graph explorer's walks on a catalog of
// CAPSTAN_BENCH_RESOURCES resources (default 1,000,000) in Neo4j, beside
// two floors: the same walks over an in-memory adjacency, and bare
// Cypher traversals of the same shape that return counts only (no
// resource is read or decoded).
func BenchmarkGraphWalks(b *testing.B) {
	s := open(b)
	g := storetest.LoadGraphCatalog(b, s, 1_000_000)
	storetest.BenchmarkGraphWalks(b, s, g)
	b.Run("floor", func(b *testing.B) { storetest.BenchmarkGraphWalkFloor(b, g) })
	ctx := context.Background()
	driver, err := neo4j.NewDriverWithContext(server.URI, neo4j.BasicAuth(server.User, server.Password, ""))
	require.NoError(b, err)
	defer driver.Close(ctx)
	id := func(key string) string {
		r, err := s.GetResourceByKey(ctx, g.Org, key)
		require.NoError(b, err)
		return g.Org + "|" + r.ID
	}
	const rels = ":RUNS_ON|DEPENDS_ON|USES|CONNECTS_TO|PART_OF"
	bare := map[string]struct {
		query  string
		params map[string]any
		want   int64
	}{
		"neighbourhood-depth3-first500": {"MATCH (r:Resource {uid: $u})-[" + rels + "*1..3]-(x:Resource) RETURN count(DISTINCT x) AS n", map[string]any{"u": id(g.Shape.Hood)}, 1110},
		"impact-of-the-hub":             {"MATCH (r:Resource {uid: $u})<-[" + rels + "*1..10]-(x:Resource) RETURN count(DISTINCT x) AS n", map[string]any{"u": id(g.Shape.Hub)}, int64(g.Shape.Dependents)},
		"3-shortest-paths-6-hops":       {"MATCH p = SHORTEST 3 (a:Resource {uid: $a})-[" + rels + "]->{1,6}(z:Resource {uid: $z}) RETURN count(p) AS n", map[string]any{"a": id(g.Shape.From), "z": id(g.Shape.To)}, 3},
	}
	for _, name := range []string{"neighbourhood-depth3-first500", "impact-of-the-hub", "3-shortest-paths-6-hops"} {
		q := bare[name]
		b.Run("cypher-floor/"+name, func(b *testing.B) {
			storetest.Measure(b, func() error {
				res, err := neo4j.ExecuteQuery(ctx, driver, q.query, q.params, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithReadersRouting())
				if err != nil {
					return err
				}
				if n, _ := res.Records[0].Get("n"); n != q.want {
					return fmt.Errorf("%s counted %v, want %d", name, n, q.want)
				}
				return nil
			})
		})
	}
}
