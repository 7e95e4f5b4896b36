package main_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/neo4jtest"
)

// TestNeo4jOutageIsSurvived runs the real server on a real Neo4j that this
// test stops and restarts: Capstan starts while Neo4j is down and reports
// not ready, becomes ready when Neo4j comes up, answers UNAVAILABLE during
// an outage, and resumes afterwards with nothing lost; a second process on
// the same database runs beside it as a replica.
func TestNeo4jOutageIsSurvived(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := neo4jtest.StartOwn(ctx)
	require.NoError(t, err, "Neo4j is part of the test suite")
	t.Cleanup(func() { db.Close() })
	require.NoError(t, db.Stop())

	p := launch(t, t.TempDir(), "--store", "neo4j", "--neo4j-uri", db.URI)
	require.Equal(t, 503, p.readyz(t), "not ready while Neo4j is down")
	_, errs := p.try(t, `{ resources { totalCount } }`, nil)
	require.Equal(t, "UNAVAILABLE", errs[0]["extensions"].(map[string]any)["code"])

	require.NoError(t, db.Restart(ctx))
	p.waitReady(t, 3*time.Minute) // a cold Neo4j of its own: the schema and packs take it a minute under the suite's load
	id := p.gql(t, createIntent, map[string]any{"n": "on-neo4j"})["createIntent"].(map[string]any)["id"]
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { status bindings { key status provider { resourceKey } subOperation { scenario } } } }`, map[string]any{"id": id})
	require.Equal(t, "READY", plan["planIntent"].(map[string]any)["status"])

	// A second process on the same database is a replica: it serves,
	// and takes its share of the shards; stopped, it gives them back.
	second := start(t, t.TempDir(), "--store", "neo4j", "--neo4j-uri", db.URI)
	require.Equal(t, "PLANNED", second.gql(t, `query($id: ID!) { intent(id: $id) { status } }`, map[string]any{"id": id})["intent"].(map[string]any)["status"])
	require.Eventually(t, func() bool { return len(shards(t, second)) > 0 }, 30*time.Second, 100*time.Millisecond, "the second takes shards")
	second.stop(t)
	require.Eventually(t, func() bool { return len(shards(t, p)) == 16 }, 30*time.Second, 100*time.Millisecond, "the first has them all again")
	require.Equal(t, 200, p.readyz(t), "the first runs on")

	require.NoError(t, db.Stop())
	_, errs = p.try(t, `query($id: ID!) { intent(id: $id) { status } }`, map[string]any{"id": id})
	require.NotEmpty(t, errs)
	require.Equal(t, "UNAVAILABLE", errs[0]["extensions"].(map[string]any)["code"], "%v", errs)
	require.Equal(t, 503, p.readyz(t))

	require.NoError(t, db.Restart(ctx))
	p.waitReady(t, 90*time.Second)
	got := p.gql(t, `query($id: ID!) { intent(id: $id) { status latestPlan { status } } }`, map[string]any{"id": id})
	require.Equal(t, "PLANNED", got["intent"].(map[string]any)["status"])

	p.stop(t)
}
