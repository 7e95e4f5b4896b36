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
// the same database does not start.
func TestNeo4jOutageIsSurvived(t *testing.T) {
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
	p.waitReady(t, 90*time.Second)
	id := p.gql(t, createIntent, map[string]any{"n": "on-neo4j"})["createIntent"].(map[string]any)["id"]
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { status bindings { key status provider { resourceKey } subOperation { scenario } } } }`, map[string]any{"id": id})
	require.Equal(t, "READY", plan["planIntent"].(map[string]any)["status"])

	// A second process on the same database does not run its operations
	// beside this one: it waits two terms of its lease for a holder that
	// might have died, then exits saying why.
	second := launch(t, t.TempDir(), "--store", "neo4j", "--neo4j-uri", db.URI, "--executor-lease", "1s")
	select {
	case <-second.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("a second process on the same database kept running:\n%s", second.output())
	}
	require.Equal(t, 1, second.cmd.ProcessState.ExitCode(), second.output())
	require.Contains(t, second.output(), "one database has one executor at a time")
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
